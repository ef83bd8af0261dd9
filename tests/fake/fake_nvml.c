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
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
	NVML_ERROR_TIMEOUT = 10,
	NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
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

typedef struct nvmlMemory_v2_st {
	unsigned int version;
	unsigned long long total;
	unsigned long long reserved;
	unsigned long long free;
	unsigned long long used;
} nvmlMemory_v2_t;
#define nvmlMemory_v2			      ((unsigned int)(sizeof(nvmlMemory_v2_t) | (2U << 24U)))

typedef struct nvmlUtilization_st {
	unsigned int gpu;
	unsigned int memory;
} nvmlUtilization_t;

typedef enum nvmlTemperatureSensors_enum {
	NVML_TEMPERATURE_GPU = 0,
} nvmlTemperatureSensors_t;

typedef struct {
	unsigned int version;
	nvmlTemperatureSensors_t sensorType;
	int temperature;
} nvmlTemperature_v1_t;
typedef nvmlTemperature_v1_t nvmlTemperature_t;
#define nvmlTemperature_v1		      ((unsigned int)(sizeof(nvmlTemperature_v1_t) | (1 << 24U)))

typedef enum nvmlClockType_enum {
	NVML_CLOCK_GRAPHICS = 0,
	NVML_CLOCK_SM = 1,
	NVML_CLOCK_MEM = 2,
	NVML_CLOCK_VIDEO = 3,
} nvmlClockType_t;

#define nvmlEventTypeXidCriticalError 0x0000000000000008LL

typedef struct nvmlEventSet_st *nvmlEventSet_t;

typedef struct nvmlEventData_st {
	nvmlDevice_t device;
	unsigned long long eventType;
	unsigned long long eventData;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlEventData_t;

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization);
nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t *temperature);
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
				      unsigned int *temp);
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power);
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit);
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy);
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock);
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
						    unsigned long long *clocksEventReasons);
nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device, unsigned long long *eventTypes);
nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long eventTypes,
				      nvmlEventSet_t set);
nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set);
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms);
nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set);
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
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory);
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor);
#endif

#define MAX_DEVICES	     16
/* An idle GPU's framebuffer: the driver's reserve, and what contexts allocated. */
#define FAKE_RESERVED_BYTES  (1ULL << 28)
#define FAKE_ALLOCATED_BYTES (1ULL << 28)

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
	/* v1's "used" counts the driver's reserve too. */
	memory->used = FAKE_RESERVED_BYTES + FAKE_ALLOCATED_BYTES;
	memory->total = gpu->memory_bytes;
	memory->free = gpu->memory_bytes - memory->used;
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
	const struct fake_gpu *gpu = gpu_of(device);

	if (!init_count)
		return NVML_ERROR_UNINITIALIZED;
	if (!gpu || !memory)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (memory->version != nvmlMemory_v2)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	if (!gpu->memory_bytes)
		return NVML_ERROR_NOT_SUPPORTED;
	memory->total = gpu->memory_bytes;
	memory->reserved = FAKE_RESERVED_BYTES;
	memory->used = FAKE_ALLOCATED_BYTES;
	memory->free = gpu->memory_bytes - FAKE_RESERVED_BYTES - FAKE_ALLOCATED_BYTES;
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

/* The GPU's NVML index (device is valid). */
static unsigned index_of(nvmlDevice_t device)
{
	return (unsigned)(device - devices);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
						       nvmlUtilization_t *utilization)
{
	const struct fake_gpu *gpu = gpu_of(device);

	if (!init_count)
		return NVML_ERROR_UNINITIALIZED;
	if (!gpu || !utilization)
		return NVML_ERROR_INVALID_ARGUMENT;
	utilization->gpu = gpu->util_gpu + index_of(device);
	utilization->memory = gpu->util_memory;
	return NVML_SUCCESS;
}

#if !defined(HAVE_NVML_H) || defined(nvmlTemperature_v1)
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device,
						   nvmlTemperature_t *temperature)
{
	const struct fake_gpu *gpu = gpu_of(device);

	if (!init_count)
		return NVML_ERROR_UNINITIALIZED;
	if (!gpu || !temperature || temperature->sensorType != NVML_TEMPERATURE_GPU)
		return NVML_ERROR_INVALID_ARGUMENT;
	/* The struct's version is how NVML tells its layouts apart. */
	if (temperature->version != nvmlTemperature_v1)
		return NVML_ERROR_INVALID_ARGUMENT;
	temperature->temperature = (int)(gpu->temperature + index_of(device));
	return NVML_SUCCESS;
}
#endif

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device,
						  nvmlTemperatureSensors_t sensorType,
						  unsigned int *temp)
{
	const struct fake_gpu *gpu = gpu_of(device);

	if (!init_count)
		return NVML_ERROR_UNINITIALIZED;
	if (!gpu || !temp || sensorType != NVML_TEMPERATURE_GPU)
		return NVML_ERROR_INVALID_ARGUMENT;
	*temp = gpu->temperature + index_of(device);
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
	const struct fake_gpu *gpu = gpu_of(device);

	if (!init_count)
		return NVML_ERROR_UNINITIALIZED;
	if (!gpu || !power)
		return NVML_ERROR_INVALID_ARGUMENT;
	*power = gpu->power_mw + 1000 * index_of(device);
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit)
{
	const struct fake_gpu *gpu = gpu_of(device);

	if (!init_count)
		return NVML_ERROR_UNINITIALIZED;
	if (!gpu || !limit)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!gpu->power_limit_mw)
		return NVML_ERROR_NOT_SUPPORTED;
	*limit = gpu->power_limit_mw;
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device,
							     unsigned long long *energy)
{
	const struct fake_gpu *gpu = gpu_of(device);

	if (!init_count)
		return NVML_ERROR_UNINITIALIZED;
	if (!gpu || !energy)
		return NVML_ERROR_INVALID_ARGUMENT;
	*energy = gpu->energy_mj + 1000000ULL * index_of(device);
	return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type,
						unsigned int *clock)
{
	const struct fake_gpu *gpu = gpu_of(device);

	if (!init_count)
		return NVML_ERROR_UNINITIALIZED;
	if (!gpu || !clock || (unsigned)type > NVML_CLOCK_VIDEO)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!gpu->clock_mhz[type])
		return NVML_ERROR_NOT_SUPPORTED;
	*clock = gpu->clock_mhz[type];
	return NVML_SUCCESS;
}

#if !defined(HAVE_NVML_H) || defined(nvmlClocksEventReasonGpuIdle)
FAKE_EXPORT nvmlReturn_t
nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *clocksEventReasons)
{
	const struct fake_gpu *gpu = gpu_of(device);

	if (!init_count)
		return NVML_ERROR_UNINITIALIZED;
	if (!gpu || !clocksEventReasons)
		return NVML_ERROR_INVALID_ARGUMENT;
	*clocksEventReasons = gpu->clock_reasons;
	return NVML_SUCCESS;
}
#endif

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device,
							  unsigned long long *eventTypes)
{
	if (!init_count)
		return NVML_ERROR_UNINITIALIZED;
	if (!gpu_of(device) || !eventTypes)
		return NVML_ERROR_INVALID_ARGUMENT;
	*eventTypes = nvmlEventTypeXidCriticalError;
	return NVML_SUCCESS;
}

/* An event set: what each GPU registered, and how far the Xid file was read. */
struct nvmlEventSet_st {
	unsigned long long types[MAX_DEVICES];
	long offset;
};

FAKE_EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
	if (!init_count)
		return NVML_ERROR_UNINITIALIZED;
	if (!set)
		return NVML_ERROR_INVALID_ARGUMENT;
	*set = calloc(1, sizeof(**set));
	return *set ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device,
						  unsigned long long eventTypes, nvmlEventSet_t set)
{
	if (!init_count)
		return NVML_ERROR_UNINITIALIZED;
	if (!gpu_of(device) || !set)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (eventTypes & ~(unsigned long long)nvmlEventTypeXidCriticalError)
		return NVML_ERROR_NOT_SUPPORTED;
	set->types[index_of(device)] |= eventTypes;
	return NVML_SUCCESS;
}

/* The next complete line "INDEX XID" of the Xid file past set->offset; 1 if there was one. */
static int next_xid(nvmlEventSet_t set, unsigned *index, unsigned long long *xid)
{
	const char *path = getenv("SPARKCTL_FAKE_XID_FILE");
	char line[128];
	FILE *f;
	int found = 0;

	if (!path || !(f = fopen(path, "r")))
		return 0;
	if (fseek(f, set->offset, SEEK_SET) == 0 && fgets(line, sizeof(line), f) &&
	    strchr(line, '\n')) {
		set->offset = ftell(f);
		found = sscanf(line, "%u %llu", index, xid) == 2 ? 1 : -1;
	}
	fclose(f);
	return found;
}

FAKE_EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data,
					     unsigned int timeoutms)
{
	const struct timespec tick = { 0, 10 * 1000 * 1000 };

	if (!init_count)
		return NVML_ERROR_UNINITIALIZED;
	if (!set || !data)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned waited = 0;; waited += 10) {
		unsigned index;
		unsigned long long xid;
		int r;

		while ((r = next_xid(set, &index, &xid)) != 0) {
			if (r < 0 || index >= nr_devices ||
			    !(set->types[index] & nvmlEventTypeXidCriticalError))
				continue;
			memset(data, 0, sizeof(*data));
			data->device = &devices[index];
			data->eventType = nvmlEventTypeXidCriticalError;
			data->eventData = xid;
			data->gpuInstanceId = 0xFFFFFFFF;
			data->computeInstanceId = 0xFFFFFFFF;
			return NVML_SUCCESS;
		}
		if (waited >= timeoutms)
			return NVML_ERROR_TIMEOUT;
		nanosleep(&tick, NULL);
	}
}

FAKE_EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
	if (!init_count)
		return NVML_ERROR_UNINITIALIZED;
	free(set);
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
