/*
 * fake_gpu.h - the machines the stand-in NVIDIA libraries describe.
 *
 * The stand-in libnvidia-ml.so.1 and libcuda.so.1 (fake_nvml.c,
 * fake_cuda.c) answer from one description of the machine, chosen at run
 * time by SPARKCTL_FAKE_GPU:
 *
 *   gb10             one NVIDIA GB10 (DGX Spark): unified memory, so NVML
 *                    has no memory size; cc 12.1; neither GPUDirect RDMA
 *                    nor DMA-BUF
 *   h100x8           eight H100 80GB HBM3, which CUDA enumerates in another
 *                    order than NVML
 *   h100x8-mixed     h100x8, but the GPU at NVML index 5 has neither
 *                    GPUDirect RDMA nor DMA-BUF: a probe that pairs the CUDA
 *                    devices with the NVML ones by anything but the PCI bus
 *                    id puts the "no" on another row
 *   nvml-init-fails  nvmlInit_v2 fails (driver not loaded); CUDA sees a GB10
 *   cuda-no-device   cuInit fails with CUDA_ERROR_NO_DEVICE, as with
 *                    CUDA_VISIBLE_DEVICES=""; NVML sees a GB10
 *
 * The dynamic values the exporter reads (utilisation, temperature, power,
 * energy, clocks, clock event reasons) are the profile's, plus the GPU's
 * NVML index (power: index W more, energy: index kJ more), so that each GPU
 * of a machine has its own exact figures.  Xid events come from the file
 * SPARKCTL_FAKE_XID_FILE: each line "INDEX XID" appended to it is one
 * event of the GPU at that NVML index, delivered once by
 * nvmlEventSetWait_v2 to a set that registered that GPU for Xid events.
 *
 * Unset means gb10.  Any other value makes nvmlInit_v2 and cuInit fail
 * with their "unknown error", so that a misspelt profile cannot pass for a
 * machine without GPUs.
 *
 * These functions are hidden: each library carries its own copy.
 */
#ifndef SPARKCTL_FAKE_GPU_H
#define SPARKCTL_FAKE_GPU_H

#include <stdbool.h>
#include <stddef.h>

#define FAKE_HIDDEN __attribute__((visibility("hidden")))
#define FAKE_EXPORT __attribute__((visibility("default")))

#define FAKE_PCI_VENDOR_NVIDIA 0x10de

struct fake_gpu {
	const char *name;
	const char *uuid;
	unsigned domain, bus, device;	 /* PCI address; the function is 0 */
	unsigned pci_device_id;		 /* PCI device id, the vendor id is NVIDIA's */
	unsigned pci_subsystem_id;	 /* subsystem device id << 16 | subsystem vendor id */
	unsigned long long memory_bytes; /* 0: unified memory, NVML answers "not supported" */
	int cc_major, cc_minor;
	int gpudirect_rdma; /* CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED */
	int dma_buf;	    /* CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED */
	/* What the exporter reads; see above for the index offsets. */
	unsigned util_gpu, util_memory;	  /* percent */
	unsigned temperature;		  /* degrees Celsius */
	unsigned power_mw;		  /* milliwatts */
	unsigned power_limit_mw;	  /* 0: "not supported" (GB10) */
	unsigned long long energy_mj;	  /* millijoules since the driver loaded */
	unsigned clock_mhz[4];		  /* graphics, sm, memory, video; 0: not supported */
	unsigned long long clock_reasons; /* nvmlClocksEventReason* bits */
};

struct fake_machine {
	const char *profile;	    /* the SPARKCTL_FAKE_GPU value */
	bool nvml_not_loaded;	    /* nvmlInit_v2 fails: NVML_ERROR_DRIVER_NOT_LOADED */
	bool cuda_no_device;	    /* cuInit fails: CUDA_ERROR_NO_DEVICE */
	const char *driver_version; /* nvmlSystemGetDriverVersion */
	int cuda_version;	    /* cuDriverGetVersion, nvmlSystemGetCudaDriverVersion_v2 */
	const struct fake_gpu *const *nvml_gpus; /* in NVML's index order */
	size_t nr_nvml_gpus;
	const struct fake_gpu *const *cuda_gpus; /* in CUDA's ordinal order */
	size_t nr_cuda_gpus;
};

/* The machine SPARKCTL_FAKE_GPU names, or NULL for an unknown name. */
FAKE_HIDDEN const struct fake_machine *fake_machine_from_env(void);

/*
 * Hooks the stand-in libcuda.so.1 exports for the stand-in libnccl.so.2,
 * whose collectives run on libcuda's streams and memory.  sparkctl loads
 * both RTLD_LOCAL, so libnccl finds them with dlopen("libcuda.so.1",
 * RTLD_NOLOAD) and dlsym.  Each needs a current context and returns a
 * CUresult; stream is a CUstream (NULL for the default stream).
 *
 * fake_cuda_stream_enqueue: work goes onto stream.  busy_us > 0: the stream
 *     is busy for that many microseconds from now (cuStreamQuery answers
 *     CUDA_ERROR_NOT_READY); < 0: it hangs until fake_cuda_stream_release;
 *     0: nothing changes, the stream is only checked.
 * fake_cuda_stream_release: a hung stream becomes idle.
 * fake_cuda_check_range: CUDA_SUCCESS if [ptr, ptr + size) lies within one
 *     allocation of cuMemAlloc_v2, else CUDA_ERROR_INVALID_VALUE.
 */
typedef int fake_cuda_stream_enqueue_fn(void *stream, long long busy_us);
typedef int fake_cuda_stream_release_fn(void *stream);
typedef int fake_cuda_check_range_fn(const void *ptr, size_t size);
FAKE_EXPORT fake_cuda_stream_enqueue_fn fake_cuda_stream_enqueue;
FAKE_EXPORT fake_cuda_stream_release_fn fake_cuda_stream_release;
FAKE_EXPORT fake_cuda_check_range_fn fake_cuda_check_range;

#endif
