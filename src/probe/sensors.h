/*
 * sensors.h - temperatures: thermal zones (sys/class/thermal) and hwmon
 * chips (sys/class/hwmon); reader.h says how reads answer and fail.
 */
#ifndef SPARKCTL_PROBE_SENSORS_H
#define SPARKCTL_PROBE_SENSORS_H

#include "sparkctl.h"
#include "probe/reader.h"

struct thermal_zone {
	const char *name; /* "thermal_zone0" */
	const char *type; /* "acpitz", or NULL where not known */
	double celsius;
};

/* fn for each thermal zone whose temperature could be read, in name order. */
int thermal_read_zones(const struct host_reader *rd,
		       void (*fn)(void *data, const struct thermal_zone *z), void *data);

struct hwmon_sensor {
	const char *chip;  /* "hwmon0" */
	const char *name;  /* "temp1" */
	bool has_celsius;  /* temp1_input could be read */
	double celsius;	   /* temp1_input */
	const char *label; /* temp1_label, or NULL */
};

struct hwmon_fns {
	/* Each chip, with its name file ("nvme"), or NULL where not known. */
	void (*chip)(void *data, const char *chip, const char *name);
	/* Each temperature sensor of the chip just given, in name order. */
	void (*sensor)(void *data, const struct hwmon_sensor *s);
};

int hwmon_read_chips(const struct host_reader *rd, const struct hwmon_fns *fns, void *data);

#endif
