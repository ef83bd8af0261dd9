#include "sparkctl.h"

#include "lib/parse.h"
#include "probe/sensors.h"

#define THERMAL_CLASS "sys/class/thermal"
#define HWMON_CLASS   "sys/class/hwmon"

/* A millidegree file as degrees: 1 when read. */
static int read_millis(const struct host_reader *rd, const char *rel, struct strbuf *v, double *ret)
{
	int64_t n;
	int r = reader_value(rd, rel, v);

	if (r <= 0)
		return r;
	if (parse_i64(v->buf, &n) < 0)
		return reader_bad_content(rd, rel, v->buf);
	*ret = (double)n / 1000.0;
	return 1;
}

int thermal_read_zones(const struct host_reader *rd,
		       void (*fn)(void *data, const struct thermal_zone *z), void *data)
{
	struct strvec zones = STRVEC_INIT;
	struct strbuf path = STRBUF_INIT, type = STRBUF_INIT, v = STRBUF_INIT;
	int r = reader_list(rd, THERMAL_CLASS, &zones);

	for (size_t i = 0; i < zones.nr; i++) {
		struct thermal_zone z = { .name = zones.v[i] };

		if (!starts_with(z.name, "thermal_zone"))
			continue;
		strbuf_reset(&path);
		strbuf_addf(&path, THERMAL_CLASS "/%s/type", z.name);
		if (reader_value(rd, path.buf, &type) > 0)
			z.type = type.buf;
		strbuf_reset(&path);
		strbuf_addf(&path, THERMAL_CLASS "/%s/temp", z.name);
		if (read_millis(rd, path.buf, &v, &z.celsius) > 0)
			fn(data, &z);
	}
	strvec_clear(&zones);
	strbuf_release(&path);
	strbuf_release(&type);
	strbuf_release(&v);
	return r;
}

/* The temperature sensors of one chip: its files temp*_input. */
static void hwmon_chip(const struct host_reader *rd, const char *chip, const struct hwmon_fns *fns,
		       void *data)
{
	struct strvec files = STRVEC_INIT;
	struct strbuf path = STRBUF_INIT, v = STRBUF_INIT, label = STRBUF_INIT;
	struct strbuf sensor = STRBUF_INIT;

	strbuf_addf(&path, HWMON_CLASS "/%s/name", chip);
	fns->chip(data, chip, reader_value(rd, path.buf, &v) > 0 ? v.buf : NULL);
	strbuf_reset(&path);
	strbuf_addf(&path, HWMON_CLASS "/%s", chip);
	reader_list(rd, path.buf, &files);
	for (size_t i = 0; i < files.nr; i++) {
		const char *f = files.v[i];
		size_t n = strlen(f);
		struct hwmon_sensor s = { .chip = chip };

		if (!starts_with(f, "temp") || n < 11 || !streq(f + n - 6, "_input"))
			continue;
		strbuf_reset(&sensor);
		strbuf_add(&sensor, f, n - 6);
		s.name = sensor.buf;
		strbuf_reset(&path);
		strbuf_addf(&path, HWMON_CLASS "/%s/%s", chip, f);
		s.has_celsius = read_millis(rd, path.buf, &v, &s.celsius) > 0;
		strbuf_reset(&path);
		strbuf_addf(&path, HWMON_CLASS "/%s/%s_label", chip, sensor.buf);
		if (reader_value(rd, path.buf, &label) > 0)
			s.label = label.buf;
		fns->sensor(data, &s);
	}
	strvec_clear(&files);
	strbuf_release(&path);
	strbuf_release(&v);
	strbuf_release(&label);
	strbuf_release(&sensor);
}

int hwmon_read_chips(const struct host_reader *rd, const struct hwmon_fns *fns, void *data)
{
	struct strvec chips = STRVEC_INIT;
	int r = reader_list(rd, HWMON_CLASS, &chips);

	for (size_t i = 0; i < chips.nr; i++)
		hwmon_chip(rd, chips.v[i], fns, data);
	strvec_clear(&chips);
	return r;
}
