/*
 * nvml.h - NVIDIA Management Library, loaded at run time.
 *
 * Our own minimal declarations of the NVML ABI (no nvml.h needed to
 * build): the opaque handle, the return codes and the structs sparkctl
 * reads, checked against the real header by tests/abi/check-abi.c where
 * one is installed.  Symbols are resolved by their versioned names
 * (nvmlInit_v2, ...): the plain names are the old ABI kept for binary
 * compatibility.
 */
#ifndef SPARKCTL_NVML_H
#define SPARKCTL_NVML_H

#include "sparkctl.h"
#include "lib/strbuf.h"

#define NVML_SONAME "libnvidia-ml.so.1"

typedef int nvml_return;
typedef struct nvmlDevice_st *nvml_device;

enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_TIMEOUT = 10,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
	NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
};

/* Buffer sizes from nvml.h (the _V2 sizes are the largest). */
#define NVML_DRIVER_VERSION_SIZE 80
#define NVML_NAME_SIZE		 96
#define NVML_UUID_SIZE		 96

struct nvml_pci_info { /* nvmlPciInfo_t (v2/v3 layout, 68 bytes) */
	char bus_id_legacy[16];
	unsigned domain;
	unsigned bus;
	unsigned device;
	unsigned pci_device_id; /* device id << 16 | vendor id */
	unsigned pci_subsystem_id;
	char bus_id[32]; /* "00000000:01:00.0" */
};

struct nvml_memory { /* nvmlMemory_t (v1), bytes */
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
};

/*
 * nvmlMemory_v2_t: "used" without what the driver reserves, as nvidia-smi
 * shows it (v1's "used" counts the reserve too: about 480 MiB on an idle
 * H100).
 */
struct nvml_memory_v2 {
	unsigned version; /* NVML_MEMORY_V2 */
	unsigned long long total;
	unsigned long long reserved;
	unsigned long long free;
	unsigned long long used;
};
#define NVML_MEMORY_V2 ((unsigned)(sizeof(struct nvml_memory_v2) | (2U << 24)))

struct nvml_utilization { /* nvmlUtilization_t, percent over the driver's sample period */
	unsigned gpu;
	unsigned memory;
};

struct nvml_temperature { /* nvmlTemperature_v1_t */
	unsigned version; /* NVML_TEMPERATURE_V1 */
	int sensor_type;  /* NVML_TEMPERATURE_GPU */
	int temperature;  /* degrees Celsius */
};
#define NVML_TEMPERATURE_V1 ((unsigned)(sizeof(struct nvml_temperature) | (1U << 24)))

/* nvmlTemperatureSensors_t */
enum {
	NVML_TEMPERATURE_GPU = 0,
};

/* nvmlClockType_t */
enum {
	NVML_CLOCK_GRAPHICS = 0,
	NVML_CLOCK_SM = 1,
	NVML_CLOCK_MEM = 2,
	NVML_CLOCK_VIDEO = 3,
};

/* nvmlEventType: the one event sparkctl waits for. */
#define NVML_EVENT_TYPE_XID_CRITICAL_ERROR 0x8ULL

typedef struct nvmlEventSet_st *nvml_event_set;

struct nvml_event_data { /* nvmlEventData_t */
	nvml_device device;
	unsigned long long event_type;
	unsigned long long event_data; /* the Xid, for an Xid event (999: unknown) */
	unsigned gpu_instance_id;
	unsigned compute_instance_id;
};

struct nvml {
	void *handle;
	nvml_return (*init)(void);
	nvml_return (*shutdown)(void);
	const char *(*error_string)(nvml_return);
	nvml_return (*system_get_driver_version)(char *version, unsigned len);
	nvml_return (*system_get_cuda_driver_version)(int *version);
	nvml_return (*device_get_count)(unsigned *count);
	nvml_return (*device_get_handle_by_index)(unsigned index, nvml_device *dev);
	nvml_return (*device_get_name)(nvml_device dev, char *name, unsigned len);
	nvml_return (*device_get_uuid)(nvml_device dev, char *uuid, unsigned len);
	nvml_return (*device_get_pci_info)(nvml_device dev, struct nvml_pci_info *pci);
	nvml_return (*device_get_memory_info)(nvml_device dev, struct nvml_memory *mem);
	/* Optional (NVML 11.5 and later). */
	nvml_return (*device_get_memory_info_v2)(nvml_device dev, struct nvml_memory_v2 *mem);
	nvml_return (*device_get_cuda_compute_capability)(nvml_device dev, int *major, int *minor);
	/* Used by the exporter; all optional (NULL when the library lacks them). */
	nvml_return (*device_get_utilization_rates)(nvml_device dev, struct nvml_utilization *u);
	nvml_return (*device_get_temperature_v)(nvml_device dev, struct nvml_temperature *t);
	nvml_return (*device_get_temperature)(nvml_device dev, int sensor, unsigned *celsius);
	nvml_return (*device_get_power_usage)(nvml_device dev, unsigned *milliwatts);
	nvml_return (*device_get_enforced_power_limit)(nvml_device dev, unsigned *milliwatts);
	nvml_return (*device_get_total_energy_consumption)(nvml_device dev,
							   unsigned long long *millijoules);
	nvml_return (*device_get_clock_info)(nvml_device dev, int type, unsigned *mhz);
	nvml_return (*device_get_clocks_event_reasons)(nvml_device dev,
						       unsigned long long *reasons);
	nvml_return (*device_get_supported_event_types)(nvml_device dev, unsigned long long *types);
	nvml_return (*device_register_events)(nvml_device dev, unsigned long long types,
					      nvml_event_set set);
	nvml_return (*event_set_create)(nvml_event_set *set);
	nvml_return (*event_set_wait)(nvml_event_set set, struct nvml_event_data *data,
				      unsigned timeout_ms);
	nvml_return (*event_set_free)(nvml_event_set set);
};

/*
 * Load the library and call nvmlInit.  On failure returns -ENOENT (no
 * library or symbol) or -EIO (init failed) with the reason in err; nothing
 * stays loaded.
 */
int nvml_open(struct nvml *nvml, struct strbuf *err);
/* nvmlShutdown and unload.  Safe on a failed or closed struct. */
void nvml_close(struct nvml *nvml);
/* NVML's message for r, or a generic one. */
const char *nvml_strerror(const struct nvml *nvml, nvml_return r);

#endif
