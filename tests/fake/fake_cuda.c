/*
 * fake_cuda.c - a stand-in libcuda.so.1 (the CUDA driver API) for the tests.
 *
 * Exports the driver API functions sparkctl resolves, answering for the
 * machine SPARKCTL_FAKE_GPU names (fake_gpu.h).  Device queries need cuInit
 * first, as in the real library.  A CUdevice is not its ordinal here (the
 * real library makes them equal), so that code passing one for the other
 * gets CUDA_ERROR_INVALID_DEVICE instead of working by accident.
 *
 * Enough of the rest for sparkctl bench nccl to run against the stand-in
 * libnccl.so.2 (fake_nccl.c) on one rank, with device memory in host
 * memory:
 *
 *   - primary contexts: cuDevicePrimaryCtxRetain counts references and
 *     cuDevicePrimaryCtxRelease_v2 takes them back; cuCtxSetCurrent makes
 *     one current to the calling thread (each thread has its own).  The
 *     memory and stream calls need a current context whose primary context
 *     is retained, or they fail with CUDA_ERROR_INVALID_CONTEXT, as in the
 *     real library.
 *   - cuMemAlloc_v2 hands out host memory (aligned to 256 bytes) as the
 *     CUdeviceptr.  cuMemFree_v2 of anything else is CUDA_ERROR_INVALID_VALUE,
 *     and so are copies and memsets that leave one allocation.
 *   - cuMemGetInfo_v2: the total is the GPU's memory (128 GiB for the GB10,
 *     which has none of its own), the free memory that less what is
 *     allocated.  SPARKCTL_FAKE_CUDA_FREE_MIB=N makes the free memory N MiB
 *     less what is allocated; an allocation larger than the free memory
 *     fails with CUDA_ERROR_OUT_OF_MEMORY.
 *   - streams carry no work of their own: the copies are synchronous.  The
 *     stand-in libnccl marks a stream busy for a while or hung, through the
 *     hooks of fake_gpu.h.  cuStreamQuery of a busy or hung stream answers
 *     CUDA_ERROR_NOT_READY; cuStreamSynchronize waits out a busy one, and
 *     on a hung one fails at once with CUDA_ERROR_LAUNCH_TIMEOUT instead of
 *     blocking forever, as do cuMemFree_v2 and the last
 *     cuDevicePrimaryCtxRelease_v2 (which synchronize in the real library).
 *     NULL, CU_STREAM_LEGACY and CU_STREAM_PER_THREAD are the current
 *     context's default stream.
 *   - events: cuEventRecord takes the time the stream's work ends (now if
 *     it is idle); cuEventQuery is ready from then on, and one recorded
 *     behind a hung collective never while its stream hangs; cuEventElapsedTime of two ready
 *     events is the difference in milliseconds, else CUDA_ERROR_NOT_READY
 *     (CUDA_ERROR_INVALID_HANDLE for one never recorded).
 *
 * Allocations, streams and primary context references still held when the
 * library is unloaded (at the latest, at exit) are reported on stderr,
 * which the tests require to be empty.
 *
 * Built with FAKE_BROKEN, it lacks cuDeviceGetAttribute, which sparkctl
 * requires.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_gpu.h"
#include "bench/nccl_perf.h"

#ifdef HAVE_CUDA_H
/* The real declarations: the compiler checks the definitions below against them. */
#include <cuda.h>
#else
/* The subset of cuda.h defined here, with its names. */
typedef enum cudaError_enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_INVALID_CONTEXT = 201,
	CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
	CUDA_ERROR_INVALID_SOURCE = 300,
	CUDA_ERROR_INVALID_HANDLE = 400,
	CUDA_ERROR_NOT_FOUND = 500,
	CUDA_ERROR_NOT_READY = 600,
	CUDA_ERROR_LAUNCH_TIMEOUT = 702,
	CUDA_ERROR_UNKNOWN = 999,
} CUresult;

typedef int CUdevice_v1;
typedef CUdevice_v1 CUdevice;

#if defined(_WIN64) || defined(__LP64__)
typedef unsigned long long CUdeviceptr_v2;
#else
typedef unsigned int CUdeviceptr_v2;
#endif
typedef CUdeviceptr_v2 CUdeviceptr;

typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;

#define CU_STREAM_LEGACY     ((CUstream)0x1)
#define CU_STREAM_PER_THREAD ((CUstream)0x2)

typedef enum CUstream_flags_enum {
	CU_STREAM_DEFAULT = 0x0,
	CU_STREAM_NON_BLOCKING = 0x1,
} CUstream_flags;

typedef enum CUdevice_attribute_enum {
	CU_DEVICE_ATTRIBUTE_INTEGRATED = 18,
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
CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuMemGetInfo_v2(size_t *free, size_t *total);
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N);
CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags);
CUresult cuStreamDestroy_v2(CUstream hStream);
CUresult cuStreamQuery(CUstream hStream);
CUresult cuStreamSynchronize(CUstream hStream);

typedef struct CUevent_st *CUevent;
CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags);
CUresult cuEventRecord(CUevent hEvent, CUstream hStream);
CUresult cuEventQuery(CUevent hEvent);
CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd);
CUresult cuEventDestroy_v2(CUevent hEvent);

typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef enum CUjit_option_enum {
	CU_JIT_ERROR_LOG_BUFFER = 5,
	CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
} CUjit_option;

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
			    CUjit_option *options, void **optionValues);
CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name);
CUresult cuModuleUnload(CUmodule hmod);
CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
			unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
			unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
			void **kernelParams, void **extra);
#endif

/* CUdevice of ordinal i. */
#define DEVICE_BASE 0x100

/* The most GPUs a machine of fake_gpu.c has. */
#define MAX_GPUS 8

/* What a GPU without memory of its own (the GB10) reports: its share of the unified memory. */
#define UNIFIED_MEMORY_BYTES (128ULL << 30)

#define ALLOC_ALIGN 256

static const struct fake_machine *machine;

static const struct fake_gpu *gpu_of(CUdevice dev)
{
	if (!machine || dev < DEVICE_BASE || (size_t)(dev - DEVICE_BASE) >= machine->nr_cuda_gpus)
		return NULL;
	return machine->cuda_gpus[dev - DEVICE_BASE];
}

/*
 * A stream: idle, busy until a time, or hung until the stand-in libnccl
 * releases it (fake_cuda_stream_release).
 */
struct CUstream_st {
	struct CUctx_st *ctx;
	bool hung;
	struct timespec busy_until; /* CLOCK_MONOTONIC; zero: idle */
	struct CUstream_st *next;   /* in streams, for those of cuStreamCreate */
};

/* An event: when the work before it on its stream ends. */
struct CUevent_st {
	struct CUctx_st *ctx;
	struct CUstream_st *stream; /* where it was last recorded; NULL: never */
	struct timespec at;	    /* the end of the work before it, CLOCK_MONOTONIC */
	bool behind_hang;	    /* recorded while its stream hung: not before the release */
	struct CUevent_st *next;    /* in events */
};

/* The primary context of a device. */
struct CUctx_st {
	CUdevice dev;
	unsigned refs;		/* cuDevicePrimaryCtxRetain less cuDevicePrimaryCtxRelease_v2 */
	size_t allocated;	/* bytes of its live allocations */
	struct CUstream_st def; /* its default stream */
};

struct allocation {
	uintptr_t base;
	size_t size;
	struct CUctx_st *ctx;
};

/* Everything below, but the current context, is shared by the threads under lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUctx_st primary[MAX_GPUS];
static struct CUstream_st *streams;
static struct CUevent_st *events;
static struct allocation *allocations;
static size_t nr_allocations, allocations_cap;

/* As in the real library, each thread has its own. */
static _Thread_local struct CUctx_st *current;

FAKE_EXPORT CUresult cuInit(unsigned int Flags)
{
	const struct fake_machine *m = fake_machine_from_env();

	if (Flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (!m)
		return CUDA_ERROR_UNKNOWN;
	if (m->cuda_no_device)
		return CUDA_ERROR_NO_DEVICE;
	if (m->nr_cuda_gpus > MAX_GPUS)
		return CUDA_ERROR_UNKNOWN;
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
	case CU_DEVICE_ATTRIBUTE_INTEGRATED:
		/* Integrated with host memory: the GPUs without memory of their own. */
		*pi = gpu->memory_bytes == 0;
		return CUDA_SUCCESS;
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

/* ---- Primary contexts ---- */

FAKE_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	struct CUctx_st *ctx;

	if (!machine)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!gpu_of(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	ctx = &primary[dev - DEVICE_BASE];
	pthread_mutex_lock(&lock);
	ctx->dev = dev;
	ctx->def.ctx = ctx;
	ctx->refs++;
	pthread_mutex_unlock(&lock);
	*pctx = ctx;
	return CUDA_SUCCESS;
}

/* Under lock: a stream of ctx hangs. */
static bool ctx_hung(const struct CUctx_st *ctx)
{
	if (ctx->def.hung)
		return true;
	for (const struct CUstream_st *s = streams; s; s = s->next)
		if (s->ctx == ctx && s->hung)
			return true;
	return false;
}

/*
 * The last reference destroys the context in the real library, which waits
 * for its work first: a hung stream would block forever.  What was
 * allocated in it is kept, to be reported as leaked.
 */
FAKE_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	struct CUctx_st *ctx;
	CUresult r = CUDA_SUCCESS;

	if (!machine)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!gpu_of(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	ctx = &primary[dev - DEVICE_BASE];
	pthread_mutex_lock(&lock);
	if (ctx->refs == 0)
		r = CUDA_ERROR_INVALID_CONTEXT;
	else if (ctx->refs == 1 && ctx_hung(ctx))
		r = CUDA_ERROR_LAUNCH_TIMEOUT;
	else if (--ctx->refs == 0)
		memset(&ctx->def, 0, sizeof(ctx->def));
	pthread_mutex_unlock(&lock);
	return r;
}

/* Only primary contexts exist here; NULL makes none current. */
FAKE_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
	struct CUctx_st *c = NULL;
	CUresult r = CUDA_SUCCESS;

	if (!machine)
		return CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; ctx && i < MAX_GPUS; i++)
		if (ctx == &primary[i] && primary[i].refs)
			c = &primary[i];
	if (ctx && !c)
		r = CUDA_ERROR_INVALID_CONTEXT;
	else
		current = c;
	pthread_mutex_unlock(&lock);
	return r;
}

/* The current context, under lock, or NULL with the error in *r. */
static struct CUctx_st *current_ctx(CUresult *r)
{
	if (!machine) {
		*r = CUDA_ERROR_NOT_INITIALIZED;
		return NULL;
	}
	/* Released since it was made current: destroyed, as in the real library. */
	if (!current || current->refs == 0) {
		*r = CUDA_ERROR_INVALID_CONTEXT;
		return NULL;
	}
	*r = CUDA_SUCCESS;
	return current;
}

/* ---- Memory ---- */

/* Under lock: the allocation holding [p, p + n), or NULL. */
static struct allocation *allocation_of(uintptr_t p, size_t n)
{
	for (size_t i = 0; i < nr_allocations; i++) {
		struct allocation *a = &allocations[i];

		if (p >= a->base && p - a->base <= a->size && n <= a->size - (p - a->base))
			return a;
	}
	return NULL;
}

static CUresult parse_free_mib(unsigned long long *bytes)
{
	const char *s = getenv("SPARKCTL_FAKE_CUDA_FREE_MIB");
	unsigned long long mib;
	char *end;

	if (!s)
		return CUDA_ERROR_NOT_READY; /* unset */
	if (*s < '0' || *s > '9')
		return CUDA_ERROR_INVALID_VALUE;
	mib = strtoull(s, &end, 10);
	if (*end || mib > (SIZE_MAX >> 20))
		return CUDA_ERROR_INVALID_VALUE;
	*bytes = mib << 20;
	return CUDA_SUCCESS;
}

/* Under lock: the free and total memory of ctx's GPU. */
static CUresult memory_of(const struct CUctx_st *ctx, size_t *free_bytes, size_t *total_bytes)
{
	const struct fake_gpu *gpu = gpu_of(ctx->dev);
	unsigned long long total = gpu ? gpu->memory_bytes : 0, free_env = 0;
	CUresult r = parse_free_mib(&free_env);

	if (total == 0)
		total = UNIFIED_MEMORY_BYTES;
	if (r == CUDA_ERROR_INVALID_VALUE)
		return r;
	if (r == CUDA_SUCCESS)
		*free_bytes = free_env > ctx->allocated ? (size_t)(free_env - ctx->allocated) : 0;
	else
		*free_bytes = total > ctx->allocated ? (size_t)(total - ctx->allocated) : 0;
	*total_bytes = (size_t)total;
	if (*total_bytes < *free_bytes)
		*total_bytes = *free_bytes;
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemGetInfo_v2(size_t *free, size_t *total)
{
	struct CUctx_st *ctx;
	size_t f = 0, t = 0;
	CUresult r;

	pthread_mutex_lock(&lock);
	ctx = current_ctx(&r);
	if (ctx)
		r = memory_of(ctx, &f, &t);
	pthread_mutex_unlock(&lock);
	if (r != CUDA_SUCCESS)
		return r;
	if (!free || !total)
		return CUDA_ERROR_INVALID_VALUE;
	*free = f;
	*total = t;
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	struct CUctx_st *ctx;
	size_t free_bytes = 0, total = 0, size;
	void *p = NULL;
	CUresult r;

	pthread_mutex_lock(&lock);
	ctx = current_ctx(&r);
	if (!ctx)
		goto out;
	r = CUDA_ERROR_INVALID_VALUE;
	if (!dptr || bytesize == 0)
		goto out;
	r = memory_of(ctx, &free_bytes, &total);
	if (r != CUDA_SUCCESS)
		goto out;
	r = CUDA_ERROR_OUT_OF_MEMORY;
	if (bytesize > free_bytes || bytesize > SIZE_MAX - ALLOC_ALIGN)
		goto out;
	if (nr_allocations == allocations_cap) {
		size_t cap = allocations_cap ? 2 * allocations_cap : 16;
		struct allocation *a = realloc(allocations, cap * sizeof(*a));

		if (!a)
			goto out;
		allocations = a;
		allocations_cap = cap;
	}
	size = (bytesize + ALLOC_ALIGN - 1) / ALLOC_ALIGN * ALLOC_ALIGN;
	p = aligned_alloc(ALLOC_ALIGN, size);
	if (!p)
		goto out;
	allocations[nr_allocations++] =
		(struct allocation){ .base = (uintptr_t)p, .size = bytesize, .ctx = ctx };
	ctx->allocated += bytesize;
	*dptr = (CUdeviceptr)(uintptr_t)p;
	r = CUDA_SUCCESS;
out:
	pthread_mutex_unlock(&lock);
	return r;
}

FAKE_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	struct allocation *a = NULL;
	struct CUctx_st *ctx;
	CUresult r;

	pthread_mutex_lock(&lock);
	ctx = current_ctx(&r);
	if (!ctx)
		goto out;
	for (size_t i = 0; i < nr_allocations; i++)
		if (allocations[i].base == (uintptr_t)dptr)
			a = &allocations[i];
	r = CUDA_ERROR_INVALID_VALUE;
	if (!a)
		goto out;
	/* The real library waits for the device first. */
	r = CUDA_ERROR_LAUNCH_TIMEOUT;
	if (ctx_hung(a->ctx))
		goto out;
	free((void *)a->base);
	a->ctx->allocated -= a->size;
	*a = allocations[--nr_allocations];
	r = CUDA_SUCCESS;
out:
	pthread_mutex_unlock(&lock);
	return r;
}

/* The host address of [dptr, dptr + n) in one allocation, or NULL with the error in *r. */
static void *device_range(CUdeviceptr dptr, size_t n, CUresult *r)
{
	void *p = NULL;

	pthread_mutex_lock(&lock);
	if (current_ctx(r)) {
		*r = CUDA_ERROR_INVALID_VALUE;
		if (allocation_of((uintptr_t)dptr, n)) {
			p = (void *)(uintptr_t)dptr;
			*r = CUDA_SUCCESS;
		}
	}
	pthread_mutex_unlock(&lock);
	return p;
}

FAKE_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	CUresult r;
	void *dst = device_range(dstDevice, ByteCount, &r);

	if (!dst)
		return r;
	if (!srcHost)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(dst, srcHost, ByteCount);
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	CUresult r;
	const void *src = device_range(srcDevice, ByteCount, &r);

	if (!src)
		return r;
	if (!dstHost)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(dstHost, src, ByteCount);
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
	CUresult r;
	void *dst = device_range(dstDevice, N, &r);

	if (!dst)
		return r;
	memset(dst, uc, N);
	return CUDA_SUCCESS;
}

/* ---- Streams ---- */

FAKE_EXPORT CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	struct CUctx_st *ctx;
	struct CUstream_st *s = NULL;
	CUresult r;

	pthread_mutex_lock(&lock);
	ctx = current_ctx(&r);
	if (!ctx)
		goto out;
	r = CUDA_ERROR_INVALID_VALUE;
	if (!phStream || (Flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
		goto out;
	r = CUDA_ERROR_OUT_OF_MEMORY;
	s = calloc(1, sizeof(*s));
	if (!s)
		goto out;
	s->ctx = ctx;
	s->next = streams;
	streams = s;
	*phStream = s;
	r = CUDA_SUCCESS;
out:
	pthread_mutex_unlock(&lock);
	return r;
}

/* Under lock: the stream hStream stands for, or NULL with the error in *r. */
static struct CUstream_st *stream_of(CUstream hStream, CUresult *r)
{
	struct CUctx_st *ctx = current_ctx(r);

	if (!ctx)
		return NULL;
	if (!hStream || hStream == CU_STREAM_LEGACY || hStream == CU_STREAM_PER_THREAD)
		return &ctx->def;
	for (struct CUstream_st *s = streams; s; s = s->next)
		if (s == hStream)
			return s;
	*r = CUDA_ERROR_INVALID_HANDLE;
	return NULL;
}

/* Returns at once, as in the real library, even with work pending. */
FAKE_EXPORT CUresult cuStreamDestroy_v2(CUstream hStream)
{
	struct CUstream_st *s, **pp;
	CUresult r;

	pthread_mutex_lock(&lock);
	s = stream_of(hStream, &r);
	if (s && s == &s->ctx->def) {
		s = NULL;
		r = CUDA_ERROR_INVALID_HANDLE;
	}
	if (s) {
		for (pp = &streams; *pp != s; pp = &(*pp)->next)
			;
		*pp = s->next;
		free(s);
		r = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static struct timespec now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t;
}

static bool before(struct timespec a, struct timespec b)
{
	return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

FAKE_EXPORT CUresult cuStreamQuery(CUstream hStream)
{
	struct CUstream_st *s;
	CUresult r;

	pthread_mutex_lock(&lock);
	s = stream_of(hStream, &r);
	if (s)
		r = s->hung || before(now(), s->busy_until) ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
	pthread_mutex_unlock(&lock);
	return r;
}

FAKE_EXPORT CUresult cuStreamSynchronize(CUstream hStream)
{
	struct timespec until = { 0, 0 };
	struct CUstream_st *s;
	CUresult r;

	pthread_mutex_lock(&lock);
	s = stream_of(hStream, &r);
	if (s) {
		r = s->hung ? CUDA_ERROR_LAUNCH_TIMEOUT : CUDA_SUCCESS;
		until = s->busy_until;
	}
	pthread_mutex_unlock(&lock);
	if (r == CUDA_SUCCESS)
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
			;
	return r;
}

/* ---- Events ---- */

FAKE_EXPORT CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
	struct CUctx_st *ctx;
	struct CUevent_st *e;
	CUresult r;

	pthread_mutex_lock(&lock);
	ctx = current_ctx(&r);
	if (ctx && (!phEvent || Flags))
		r = CUDA_ERROR_INVALID_VALUE;
	else if (ctx && !(e = calloc(1, sizeof(*e))))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	else if (ctx) {
		e->ctx = ctx;
		e->next = events;
		events = e;
		*phEvent = e;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

/* Under lock: the event hEvent stands for, of the current context, or NULL with the error in *r. */
static struct CUevent_st *event_of(CUevent hEvent, CUresult *r)
{
	struct CUctx_st *ctx = current_ctx(r);

	if (!ctx)
		return NULL;
	for (struct CUevent_st *e = events; e; e = e->next)
		if (e == hEvent && e->ctx == ctx)
			return e;
	*r = CUDA_ERROR_INVALID_HANDLE;
	return NULL;
}

FAKE_EXPORT CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
{
	struct CUevent_st *e;
	struct CUstream_st *s = NULL;
	CUresult r;

	pthread_mutex_lock(&lock);
	e = event_of(hEvent, &r);
	if (e)
		s = stream_of(hStream, &r);
	if (s) {
		struct timespec t = now();

		e->stream = s;
		e->at = before(t, s->busy_until) ? s->busy_until : t;
		e->behind_hang = s->hung;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

/* Under lock: whether the work before e has ended. */
static bool event_ready(const struct CUevent_st *e)
{
	return !(e->behind_hang && e->stream->hung) && !before(now(), e->at);
}

FAKE_EXPORT CUresult cuEventQuery(CUevent hEvent)
{
	struct CUevent_st *e;
	CUresult r;

	pthread_mutex_lock(&lock);
	e = event_of(hEvent, &r);
	if (e && e->stream && !event_ready(e))
		r = CUDA_ERROR_NOT_READY;
	pthread_mutex_unlock(&lock);
	return r;
}

FAKE_EXPORT CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	struct CUevent_st *start, *end = NULL;
	CUresult r;

	pthread_mutex_lock(&lock);
	start = event_of(hStart, &r);
	if (start)
		end = event_of(hEnd, &r);
	if (end && (!start->stream || !end->stream))
		r = CUDA_ERROR_INVALID_HANDLE;
	else if (end && !pMilliseconds)
		r = CUDA_ERROR_INVALID_VALUE;
	else if (end && (!event_ready(start) || !event_ready(end)))
		r = CUDA_ERROR_NOT_READY;
	else if (end)
		*pMilliseconds = (float)((double)(end->at.tv_sec - start->at.tv_sec) * 1e3 +
					 (double)(end->at.tv_nsec - start->at.tv_nsec) / 1e6);
	pthread_mutex_unlock(&lock);
	return r;
}

FAKE_EXPORT CUresult cuEventDestroy_v2(CUevent hEvent)
{
	struct CUevent_st *e, **pp;
	CUresult r;

	pthread_mutex_lock(&lock);
	e = event_of(hEvent, &r);
	if (e) {
		for (pp = &events; *pp != e; pp = &(*pp)->next)
			;
		*pp = e->next;
		free(e);
	}
	pthread_mutex_unlock(&lock);
	return r;
}

/* ---- Modules and kernels: bench nccl's check ---- */

#define MAX_FUNCS  4
#define MAX_PARAMS 16

struct fake_param {
	char name[32];
	size_t size; /* bytes, from the PTX type */
};

struct CUfunc_st {
	char name[32];
	struct fake_param params[MAX_PARAMS];
	size_t nr_params;
};

struct CUmod_st {
	struct CUfunc_st funcs[MAX_FUNCS];
	size_t nr_funcs;
	struct CUmod_st *next; /* in modules */
};

static struct CUmod_st *modules;

static void jit_log(unsigned n, const CUjit_option *options, void **values, const char *msg)
{
	char *buf = NULL;
	size_t size = 0;

	for (unsigned i = 0; options && values && i < n; i++) {
		if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
			buf = values[i];
		else if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
			size = (size_t)(uintptr_t)values[i];
	}
	if (buf && size)
		snprintf(buf, size, "%s", msg);
}

/* ".param .u64 fill_buf," -> the parameter; false at the list's end or on a bad line. */
static bool parse_param(const char *line, struct fake_param *p)
{
	char type[8];
	int n = 0;

	if (sscanf(line, " .param .%7s %31[A-Za-z0-9_]%n", type, p->name, &n) != 2)
		return false;
	if (!strcmp(type, "u64") || !strcmp(type, "b64") || !strcmp(type, "s64") ||
	    !strcmp(type, "f64"))
		p->size = 8;
	else if (!strcmp(type, "u32") || !strcmp(type, "b32") || !strcmp(type, "s32") ||
		 !strcmp(type, "f32"))
		p->size = 4;
	else
		return false;
	return true;
}

/*
 * Each ".visible .entry NAME(" of text with its parameters, one a line, up
 * to the line with ")".  Returns false on anything else in the list.
 */
static bool parse_entries(const char *text, struct CUmod_st *m)
{
	const char *at = text;

	while ((at = strstr(at, ".visible .entry "))) {
		struct CUfunc_st *f;
		const char *name = at + strlen(".visible .entry ");
		size_t len = strcspn(name, "(\n");
		if (m->nr_funcs == MAX_FUNCS || name[len] != '(' || len >= sizeof(f->name))
			return false;
		f = &m->funcs[m->nr_funcs++];
		memcpy(f->name, name, len);
		at = strchr(name, '\n');
		while (at && *++at && *at != ')') {
			if (f->nr_params == MAX_PARAMS ||
			    !parse_param(at, &f->params[f->nr_params]))
				return false;
			f->nr_params++;
			at = strchr(at, '\n');
		}
		if (!at || *at != ')')
			return false;
	}
	return m->nr_funcs > 0;
}

/*
 * The image must be PTX text: ".version", ".target sm_", ".address_size 64",
 * and entries whose parameters are one a line.  SPARKCTL_FAKE_CUDA_NO_PTX=1
 * fails as a driver older than the PTX would.
 */
FAKE_EXPORT CUresult cuModuleLoadDataEx(CUmodule *module, const void *image,
					unsigned int numOptions, CUjit_option *options,
					void **optionValues)
{
	const char *text = image, *no_ptx = getenv("SPARKCTL_FAKE_CUDA_NO_PTX");
	struct CUmod_st *m;
	CUresult r;

	if (!module || !image)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	if (!current_ctx(&r))
		goto out;
	r = CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
	if (no_ptx && !strcmp(no_ptx, "1")) {
		jit_log(numOptions, options, optionValues,
			"ptxas application ptx input, line 1; fatal   : Unsupported .version");
		goto out;
	}
	r = CUDA_ERROR_INVALID_SOURCE;
	if (!strstr(text, "\n.version ") || !strstr(text, "\n.target sm_") ||
	    !strstr(text, "\n.address_size 64\n")) {
		jit_log(numOptions, options, optionValues, "not PTX text");
		goto out;
	}
	r = CUDA_ERROR_OUT_OF_MEMORY;
	m = calloc(1, sizeof(*m));
	if (!m)
		goto out;
	r = CUDA_ERROR_INVALID_SOURCE;
	if (!parse_entries(text, m)) {
		jit_log(numOptions, options, optionValues, "malformed .entry");
		free(m);
		goto out;
	}
	m->next = modules;
	modules = m;
	*module = m;
	r = CUDA_SUCCESS;
out:
	pthread_mutex_unlock(&lock);
	return r;
}

/* Under lock: whether m is a loaded module. */
static bool module_loaded(const struct CUmod_st *m)
{
	for (const struct CUmod_st *l = modules; l; l = l->next)
		if (l == m)
			return true;
	return false;
}

FAKE_EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	CUresult r = CUDA_ERROR_INVALID_HANDLE;

	if (!hfunc || !name)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	if (module_loaded(hmod)) {
		r = CUDA_ERROR_NOT_FOUND;
		for (size_t i = 0; i < hmod->nr_funcs; i++)
			if (!strcmp(hmod->funcs[i].name, name)) {
				*hfunc = &hmod->funcs[i];
				r = CUDA_SUCCESS;
			}
	}
	pthread_mutex_unlock(&lock);
	return r;
}

FAKE_EXPORT CUresult cuModuleUnload(CUmodule hmod)
{
	CUresult r = CUDA_ERROR_INVALID_HANDLE;

	pthread_mutex_lock(&lock);
	for (struct CUmod_st **pp = &modules; *pp; pp = &(*pp)->next)
		if (*pp == hmod) {
			*pp = hmod->next;
			free(hmod);
			r = CUDA_SUCCESS;
			break;
		}
	pthread_mutex_unlock(&lock);
	return r;
}

/* The launch's parameter of that name, as the PTX declares it; 0 and *ok false if none. */
static uint64_t param_bits(const struct CUfunc_st *f, void **params, const char *name, bool *ok)
{
	uint64_t v = 0;

	for (size_t i = 0; i < f->nr_params; i++)
		if (!strcmp(f->params[i].name, name)) {
			if (f->params[i].size == 4) {
				uint32_t v32;
				memcpy(&v32, params[i], 4);
				v = v32;
			} else {
				memcpy(&v, params[i], 8);
			}
			return v;
		}
	*ok = false;
	return 0;
}

/* The check of fill_/check_ parameters (prefix), in the model's terms. */
static bool check_of(const struct CUfunc_st *f, void **params, const char *prefix,
		     struct perf_check *c)
{
	char name[32];
	bool ok = true;
#define P(field)                                                                                   \
	(snprintf(name, sizeof(name), "%s_%s", prefix, field), param_bits(f, params, name, &ok))
	uint64_t type = P("type"), pattern = P("pattern");

	*c = (struct perf_check){
		.type = (enum perf_dtype)type,
		.pattern = (enum perf_redop)pattern,
		.nranks = (int)P("nranks"),
		.seed = (unsigned)P("seed"),
		.span = P("span"),
	};
	if (!strcmp(prefix, "check")) {
		uint64_t tol_bits = P("tol");
		c->source = (enum perf_check_source)P("source");
		c->src_rank = (int)P("src_rank");
		c->chunk = P("chunk");
		c->base = P("base");
		memcpy(&c->tol, &tol_bits, sizeof(c->tol));
	}
#undef P
	return ok && type < PERF_NR_DTYPES && pattern < PERF_NR_REDOPS && c->nranks > 0 &&
	       (c->pattern == PERF_PROD || c->span > 0) && c->source <= PERF_CHECK_BLOCKS &&
	       (c->source != PERF_CHECK_BLOCKS || c->chunk > 0);
}

/*
 * sparkctl_fill and sparkctl_check run at once, on the host, through the
 * model of nccl_pattern.c (what the PTX computes on a GPU).  Each parameter
 * is read by the name and size the PTX gives it, so a launch whose
 * parameters are not the PTX's reads wrong values and the check fails.
 */
FAKE_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
				    unsigned int gridDimZ, unsigned int blockDimX,
				    unsigned int blockDimY, unsigned int blockDimZ,
				    unsigned int sharedMemBytes, CUstream hStream,
				    void **kernelParams, void **extra)
{
	bool known = false, ok = true;
	struct perf_check c;
	CUresult r;

	(void)sharedMemBytes;
	if (!f || !kernelParams || extra || !gridDimX || !gridDimY || !gridDimZ || !blockDimX ||
	    !blockDimY || !blockDimZ)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	for (const struct CUmod_st *m = modules; m && !known; m = m->next)
		known = f >= m->funcs && f < m->funcs + m->nr_funcs;
	r = known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
	if (known)
		stream_of(hStream, &r);
	pthread_mutex_unlock(&lock);
	if (r != CUDA_SUCCESS)
		return r;
	if (!strcmp(f->name, "sparkctl_fill")) {
		uint64_t count = param_bits(f, kernelParams, "fill_count", &ok);
		uint64_t buf = param_bits(f, kernelParams, "fill_buf", &ok);
		int rank = (int)param_bits(f, kernelParams, "fill_rank", &ok);
		void *p;
		if (!check_of(f, kernelParams, "fill", &c) || !ok)
			return CUDA_ERROR_INVALID_VALUE;
		p = device_range(buf, count * perf_dtype_size(c.type), &r);
		if (p)
			perf_check_fill(&c, rank, p, count);
		return r;
	}
	if (!strcmp(f->name, "sparkctl_check")) {
		uint64_t count = param_bits(f, kernelParams, "check_count", &ok);
		uint64_t buf = param_bits(f, kernelParams, "check_buf", &ok);
		uint64_t wrong_at = param_bits(f, kernelParams, "check_wrong", &ok);
		uint64_t *wrong;
		const void *p;
		if (!check_of(f, kernelParams, "check", &c) || !ok)
			return CUDA_ERROR_INVALID_VALUE;
		p = device_range(buf, count * perf_dtype_size(c.type), &r);
		wrong = p ? device_range(wrong_at, sizeof(*wrong), &r) : NULL;
		if (wrong)
			*wrong += perf_check_count(&c, p, count);
		return r;
	}
	return CUDA_ERROR_INVALID_HANDLE;
}

/* ---- The hooks for the stand-in libnccl (fake_gpu.h) ---- */

FAKE_EXPORT int fake_cuda_stream_enqueue(void *stream, long long busy_us)
{
	struct CUstream_st *s;
	CUresult r;

	pthread_mutex_lock(&lock);
	s = stream_of(stream, &r);
	if (s && busy_us < 0) {
		s->hung = true;
	} else if (s && busy_us > 0) {
		/* Work on a stream runs in order: this starts when the last ends. */
		struct timespec t = now();

		if (before(t, s->busy_until))
			t = s->busy_until;
		t.tv_sec += (time_t)(busy_us / 1000000);
		t.tv_nsec += (long)(busy_us % 1000000) * 1000;
		if (t.tv_nsec >= 1000000000) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000;
		}
		if (before(s->busy_until, t))
			s->busy_until = t;
	}
	pthread_mutex_unlock(&lock);
	return (int)r;
}

FAKE_EXPORT int fake_cuda_stream_release(void *stream)
{
	struct CUstream_st *s;
	CUresult r;

	pthread_mutex_lock(&lock);
	s = stream_of(stream, &r);
	if (s)
		s->hung = false;
	pthread_mutex_unlock(&lock);
	return (int)r;
}

FAKE_EXPORT int fake_cuda_check_range(const void *ptr, size_t size)
{
	CUresult r;

	pthread_mutex_lock(&lock);
	if (current_ctx(&r))
		r = allocation_of((uintptr_t)ptr, size) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&lock);
	return (int)r;
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
	case CUDA_ERROR_OUT_OF_MEMORY:
		s = "out of memory";
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
	case CUDA_ERROR_INVALID_CONTEXT:
		s = "invalid device context";
		break;
	case CUDA_ERROR_INVALID_HANDLE:
		s = "invalid resource handle";
		break;
	case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
		s = "the provided PTX was compiled with an unsupported toolchain.";
		break;
	case CUDA_ERROR_INVALID_SOURCE:
		s = "device kernel image is invalid";
		break;
	case CUDA_ERROR_NOT_FOUND:
		s = "named symbol not found";
		break;
	case CUDA_ERROR_NOT_READY:
		s = "device not ready";
		break;
	case CUDA_ERROR_LAUNCH_TIMEOUT:
		s = "the launch timed out and was terminated";
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

__attribute__((destructor)) static void check_leaks(void)
{
	size_t nr_streams = 0, nr_events = 0, bytes = 0;

	for (const struct CUstream_st *s = streams; s; s = s->next)
		nr_streams++;
	for (const struct CUevent_st *e = events; e; e = e->next)
		nr_events++;
	for (size_t i = 0; i < nr_allocations; i++)
		bytes += allocations[i].size;
	if (nr_allocations)
		fprintf(stderr,
			"libcuda.so.1 (sparkctl test stand-in): unloaded with %zu allocation(s) "
			"(%zu bytes) not freed by cuMemFree_v2\n",
			nr_allocations, bytes);
	for (const struct CUmod_st *m = modules; m; m = m->next)
		fprintf(stderr, "libcuda.so.1 (sparkctl test stand-in): unloaded with a module not "
				"unloaded by cuModuleUnload\n");
	if (nr_streams)
		fprintf(stderr,
			"libcuda.so.1 (sparkctl test stand-in): unloaded with %zu stream(s) not "
			"destroyed by cuStreamDestroy_v2\n",
			nr_streams);
	if (nr_events)
		fprintf(stderr,
			"libcuda.so.1 (sparkctl test stand-in): unloaded with %zu event(s) not "
			"destroyed by cuEventDestroy_v2\n",
			nr_events);
	for (size_t i = 0; i < MAX_GPUS; i++)
		if (primary[i].refs)
			fprintf(stderr,
				"libcuda.so.1 (sparkctl test stand-in): unloaded with the primary "
				"context of device %zu retained %u time(s) more than released\n",
				i, primary[i].refs);
	/* Our own book-keeping goes with the library (dlclose unloads it). */
	free(allocations);
	allocations = NULL;
	nr_allocations = allocations_cap = 0;
}
