/*
 * fake_cuda.c - a stand-in libcuda.so.1 (the CUDA driver API) for the tests.
 *
 * Exports the driver API functions sparkctl resolves, answering for the
 * machine SPARKCTL_FAKE_GPU names (fake_gpu.h).  Device queries need cuInit
 * first, as in the real library.  A CUdevice is not its ordinal here (the
 * real library makes them equal), so that code passing one for the other
 * gets CUDA_ERROR_INVALID_DEVICE instead of working by accident.
 *
 * Built with FAKE_BROKEN, it lacks cuDeviceGetAttribute, which sparkctl
 * requires.
 */
#include <stdio.h>

#include "fake_gpu.h"

#ifdef HAVE_CUDA_H
/* The real declarations: the compiler checks the definitions below against them. */
#include <cuda.h>
#else
/* The subset of cuda.h defined here, with its names. */
typedef enum cudaError_enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_UNKNOWN = 999,
} CUresult;

typedef int CUdevice_v1;
typedef CUdevice_v1 CUdevice;

typedef enum CUdevice_attribute_enum {
	CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
	CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
	CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
	CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 116,
	CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 124,
} CUdevice_attribute;

CUresult cuInit(unsigned int Flags);
CUresult cuDriverGetVersion(int *driverVersion);
CUresult cuDeviceGetCount(int *count);
CUresult cuDeviceGet(CUdevice *device, int ordinal);
CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev);
CUresult cuDeviceGetName(char *name, int len, CUdevice dev);
CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev);
CUresult cuGetErrorString(CUresult error, const char **pStr);
#endif

/* CUdevice of ordinal i. */
#define DEVICE_BASE 0x100

static const struct fake_machine *machine;

static const struct fake_gpu *gpu_of(CUdevice dev)
{
	if (!machine || dev < DEVICE_BASE || (size_t)(dev - DEVICE_BASE) >= machine->nr_cuda_gpus)
		return NULL;
	return machine->cuda_gpus[dev - DEVICE_BASE];
}

FAKE_EXPORT CUresult cuInit(unsigned int Flags)
{
	const struct fake_machine *m = fake_machine_from_env();

	if (Flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (!m)
		return CUDA_ERROR_UNKNOWN;
	if (m->cuda_no_device)
		return CUDA_ERROR_NO_DEVICE;
	machine = m;
	return CUDA_SUCCESS;
}

/* Needs no cuInit, as in the real library. */
FAKE_EXPORT CUresult cuDriverGetVersion(int *driverVersion)
{
	const struct fake_machine *m = fake_machine_from_env();

	if (!driverVersion)
		return CUDA_ERROR_INVALID_VALUE;
	*driverVersion = m ? m->cuda_version : 0;
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetCount(int *count)
{
	if (!machine)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = (int)machine->nr_cuda_gpus;
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
	if (!machine)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (ordinal < 0 || (size_t)ordinal >= machine->nr_cuda_gpus)
		return CUDA_ERROR_INVALID_DEVICE;
	*device = DEVICE_BASE + ordinal;
	return CUDA_SUCCESS;
}

#ifndef FAKE_BROKEN
FAKE_EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
	const struct fake_gpu *gpu = gpu_of(dev);

	if (!machine)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!gpu)
		return CUDA_ERROR_INVALID_DEVICE;
	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	switch (attrib) {
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
		*pi = (int)gpu->bus;
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
		*pi = (int)gpu->device;
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
		*pi = (int)gpu->domain;
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
		*pi = gpu->cc_major;
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
		*pi = gpu->cc_minor;
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED:
		*pi = gpu->gpudirect_rdma;
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED:
		*pi = gpu->dma_buf;
		return CUDA_SUCCESS;
	default:
		/* The real library knows many more; none is faked. */
		return CUDA_ERROR_INVALID_VALUE;
	}
}
#endif

/* Truncates to len, as the real library does. */
FAKE_EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	const struct fake_gpu *gpu = gpu_of(dev);

	if (!machine)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!gpu)
		return CUDA_ERROR_INVALID_DEVICE;
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(name, (size_t)len, "%s", gpu->name);
	return CUDA_SUCCESS;
}

/* CUDA's own form: a 4-digit domain ("000F:01:00.0"), unlike NVML's 8. */
FAKE_EXPORT CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
	const struct fake_gpu *gpu = gpu_of(dev);

	if (!machine)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!gpu)
		return CUDA_ERROR_INVALID_DEVICE;
	if (!pciBusId || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(pciBusId, (size_t)len, "%04X:%02X:%02X.0", gpu->domain, gpu->bus, gpu->device);
	return CUDA_SUCCESS;
}

/* The texts of the real library; an unknown code is an error, *pStr NULL. */
FAKE_EXPORT CUresult cuGetErrorString(CUresult error, const char **pStr)
{
	const char *s;

	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	switch (error) {
	case CUDA_SUCCESS:
		s = "no error";
		break;
	case CUDA_ERROR_INVALID_VALUE:
		s = "invalid argument";
		break;
	case CUDA_ERROR_NOT_INITIALIZED:
		s = "initialization error";
		break;
	case CUDA_ERROR_NO_DEVICE:
		s = "no CUDA-capable device is detected";
		break;
	case CUDA_ERROR_INVALID_DEVICE:
		s = "invalid device ordinal";
		break;
	case CUDA_ERROR_UNKNOWN:
		s = "unknown error";
		break;
	default:
		*pStr = NULL;
		return CUDA_ERROR_INVALID_VALUE;
	}
	*pStr = s;
	return CUDA_SUCCESS;
}
