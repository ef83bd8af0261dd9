/*
 * fake_nvml.c - a stand-in libnvidia-ml.so.1 for the tests.
 *
 * Exports the NVML functions sparkctl resolves, under their versioned
 * names, answering for the machine SPARKCTL_FAKE_GPU names (fake_gpu.h).
 * It keeps NVML's rules where sparkctl could break them: every call but
 * nvmlErrorString needs nvmlInit_v2 first, and an init that is not undone
 * by nvmlShutdown before the library is unloaded is reported on stderr,
 * which the tests require to be empty.
 *
 * Built with FAKE_BROKEN, it lacks nvmlDeviceGetCount_v2, which sparkctl
 * requires.
 */
#include <stdio.h>
#include <string.h>

#include "fake_gpu.h"

#ifdef HAVE_NVML_H
/* The real declarations: the compiler checks the definitions below against them. */
#include <nvml.h>
#else
/* The subset of nvml.h defined here, with its names. */
typedef enum nvmlReturn_enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_UNKNOWN = 999,
} nvmlReturn_t;

typedef struct nvmlDevice_st *nvmlDevice_t;

#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE    32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16

typedef struct nvmlPciInfo_st {
	char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId;
	unsigned int pciSubSystemId;
	char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

typedef struct nvmlMemory_st {
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
} nvmlMemory_t;

nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
const char *nvmlErrorString(nvmlReturn_t result);
nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length);
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor);
#endif

#define MAX_DEVICES 16

/* A handle points into devices[]; nothing else is a device. */
struct nvmlDevice_st {
	const struct fake_gpu *gpu;
};

static struct nvmlDevice_st devices[MAX_DEVICES];
static size_t nr_devices;
static const struct fake_machine *machine;
static int init_count; /* nvmlInit_v2 calls not yet undone by nvmlShutdown */

static const struct fake_gpu *gpu_of(nvmlDevice_t device)
{
	for (size_t i = 0; i < nr_devices; i++)
		if (device == &devices[i])
			return devices[i].gpu;
	return NULL;
}

/* Copy s to buf as NVML does: whole or not at all. */
static nvmlReturn_t copy_string(const char *s, char *buf, unsigned int length)
{
	if (!buf)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (strlen(s) >= length)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(buf, s, strlen(s) + 1);
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlInit_v2(void)
{
	const struct fake_machine *m = fake_machine_from_env();

	if (!m)
		return NVML_ERROR_UNKNOWN;
	if (m->nvml_not_loaded)
		return NVML_ERROR_DRIVER_NOT_LOADED;
	machine = m;
	nr_devices = 0;
	for (size_t i = 0; i < m->nr_nvml_gpus && i < MAX_DEVICES; i++)
		devices[nr_devices++].gpu = m->nvml_gpus[i];
	init_count++;
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlShutdown(void)
{
	if (!init_count)
		return NVML_ERROR_UNINITIALIZED;
	init_count--;
	return NVML_SUCCESS;
}

/* The texts of the real library. */
FAKE_EXPORT const char *nvmlErrorString(nvmlReturn_t result)
{
	switch (result) {
	case NVML_SUCCESS:
		return "Success";
	case NVML_ERROR_UNINITIALIZED:
		return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT:
		return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED:
		return "Not Supported";
	case NVML_ERROR_INSUFFICIENT_SIZE:
		return "Insufficient Size";
	case NVML_ERROR_DRIVER_NOT_LOADED:
		return "Driver Not Loaded";
	default:
		return "Unknown Error";
	}
}

FAKE_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
	if (!init_count)
		return NVML_ERROR_UNINITIALIZED;
	return copy_string(machine->driver_version, version, length);
}

FAKE_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion)
{
	if (!init_count)
		return NVML_ERROR_UNINITIALIZED;
	if (!cudaDriverVersion)
		return NVML_ERROR_INVALID_ARGUMENT;
	*cudaDriverVersion = machine->cuda_version;
	return NVML_SUCCESS;
}

#ifndef FAKE_BROKEN
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
	if (!init_count)
		return NVML_ERROR_UNINITIALIZED;
	if (!deviceCount)
		return NVML_ERROR_INVALID_ARGUMENT;
	*deviceCount = (unsigned int)nr_devices;
	return NVML_SUCCESS;
}
#endif

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	if (!init_count)
		return NVML_ERROR_UNINITIALIZED;
	if (index >= nr_devices || !device)
		return NVML_ERROR_INVALID_ARGUMENT;
	*device = &devices[index];
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
	const struct fake_gpu *gpu = gpu_of(device);

	if (!init_count)
		return NVML_ERROR_UNINITIALIZED;
	if (!gpu)
		return NVML_ERROR_INVALID_ARGUMENT;
	return copy_string(gpu->name, name, length);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
	const struct fake_gpu *gpu = gpu_of(device);

	if (!init_count)
		return NVML_ERROR_UNINITIALIZED;
	if (!gpu)
		return NVML_ERROR_INVALID_ARGUMENT;
	return copy_string(gpu->uuid, uuid, length);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	const struct fake_gpu *gpu = gpu_of(device);

	if (!init_count)
		return NVML_ERROR_UNINITIALIZED;
	if (!gpu || !pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(pci, 0, sizeof(*pci));
	/* NVML_DEVICE_PCI_BUS_ID_LEGACY_FMT and NVML_DEVICE_PCI_BUS_ID_FMT */
	snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:%02X.0", gpu->domain,
		 gpu->bus, gpu->device);
	snprintf(pci->busId, sizeof(pci->busId), "%08X:%02X:%02X.0", gpu->domain, gpu->bus,
		 gpu->device);
	pci->domain = gpu->domain;
	pci->bus = gpu->bus;
	pci->device = gpu->device;
	pci->pciDeviceId = (gpu->pci_device_id << 16) | FAKE_PCI_VENDOR_NVIDIA;
	pci->pciSubSystemId = gpu->pci_subsystem_id;
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
	const struct fake_gpu *gpu = gpu_of(device);

	if (!init_count)
		return NVML_ERROR_UNINITIALIZED;
	if (!gpu || !memory)
		return NVML_ERROR_INVALID_ARGUMENT;
	/* An integrated GPU has no framebuffer of its own to report. */
	if (!gpu->memory_bytes)
		return NVML_ERROR_NOT_SUPPORTED;
	/* What the driver reserves on an idle GPU. */
	memory->used = 1ULL << 29;
	memory->total = gpu->memory_bytes;
	memory->free = gpu->memory_bytes - memory->used;
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major,
							    int *minor)
{
	const struct fake_gpu *gpu = gpu_of(device);

	if (!init_count)
		return NVML_ERROR_UNINITIALIZED;
	if (!gpu || !major || !minor)
		return NVML_ERROR_INVALID_ARGUMENT;
	*major = gpu->cc_major;
	*minor = gpu->cc_minor;
	return NVML_SUCCESS;
}

__attribute__((destructor)) static void check_shutdown(void)
{
	if (init_count)
		fprintf(stderr,
			"libnvidia-ml.so.1 (sparkctl test stand-in): unloaded after %d "
			"nvmlInit_v2 without nvmlShutdown\n",
			init_count);
}
