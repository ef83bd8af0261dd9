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
	nvml_return (*device_get_cuda_compute_capability)(nvml_device dev, int *major, int *minor);
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
