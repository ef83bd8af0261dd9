/*
 * cuda.h - the CUDA driver API (libcuda.so.1), loaded at run time.
 *
 * Only the driver API is used, through our own declarations; no CUDA
 * toolkit is needed to build.  The attribute numbers are those of the
 * CUdevice_attribute enum of cuda.h (checked by tests/abi/check-abi.c).
 */
#ifndef SPARKCTL_CUDA_H
#define SPARKCTL_CUDA_H

#include "sparkctl.h"
#include "lib/strbuf.h"

#define CUDA_SONAME "libcuda.so.1"

typedef int cu_result;
typedef int cu_device;
typedef unsigned long long cu_deviceptr;
typedef struct CUctx_st *cu_context;
/* The same handle as the runtime's cudaStream_t, which NCCL takes. */
typedef struct CUstream_st *cu_stream;
typedef struct CUmod_st *cu_module;
typedef struct CUfunc_st *cu_function;
typedef struct CUevent_st *cu_event;

enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_NOT_READY = 600,
};

/* cuModuleLoadDataEx's options (CUjit_option): where the JIT writes why it failed. */
enum {
	CU_JIT_OPTION_ERROR_LOG_BUFFER = 5,
	CU_JIT_OPTION_ERROR_LOG_BUFFER_SIZE = 6,
};

/* cuStreamCreate's flag: no implicit synchronisation with the legacy stream. */
enum {
	CU_STREAM_FLAG_NON_BLOCKING = 0x1
};

enum cu_device_attribute {
	CU_ATTR_MULTIPROCESSOR_COUNT = 16,
	CU_ATTR_INTEGRATED = 18,
	CU_ATTR_PCI_BUS_ID = 33,
	CU_ATTR_PCI_DEVICE_ID = 34,
	CU_ATTR_PCI_DOMAIN_ID = 50,
	CU_ATTR_COMPUTE_CAPABILITY_MAJOR = 75,
	CU_ATTR_COMPUTE_CAPABILITY_MINOR = 76,
	CU_ATTR_GPU_DIRECT_RDMA_SUPPORTED = 116,
	CU_ATTR_DMA_BUF_SUPPORTED = 124,
};

struct cuda {
	void *handle;
	cu_result (*init)(unsigned flags);
	cu_result (*driver_get_version)(int *version);
	cu_result (*device_get_count)(int *count);
	cu_result (*device_get)(cu_device *dev, int ordinal);
	cu_result (*device_get_attribute)(int *value, int attr, cu_device dev);
	cu_result (*device_get_name)(char *name, int len, cu_device dev);
	cu_result (*device_get_pci_bus_id)(char *bus_id, int len, cu_device dev);
	cu_result (*get_error_string)(cu_result r, const char **str);

	/* Memory and streams, for bench nccl (cuda_open(..., true, ...)). */
	cu_result (*primary_ctx_retain)(cu_context *ctx, cu_device dev);
	cu_result (*primary_ctx_release)(cu_device dev);
	cu_result (*ctx_set_current)(cu_context ctx);
	cu_result (*mem_alloc)(cu_deviceptr *ptr, size_t size);
	cu_result (*mem_free)(cu_deviceptr ptr);
	cu_result (*mem_get_info)(size_t *free, size_t *total);
	cu_result (*memcpy_htod)(cu_deviceptr dst, const void *src, size_t size);
	cu_result (*memcpy_dtoh)(void *dst, cu_deviceptr src, size_t size);
	cu_result (*memset_d8)(cu_deviceptr dst, unsigned char value, size_t size);
	cu_result (*stream_create)(cu_stream *stream, unsigned flags);
	cu_result (*stream_destroy)(cu_stream stream);
	cu_result (*stream_query)(cu_stream stream);
	cu_result (*stream_synchronize)(cu_stream stream);
	/* Events: when each operation of bench nccl's adaptive loop ended, on the GPU's clock. */
	cu_result (*event_create)(cu_event *event, unsigned flags);
	cu_result (*event_record)(cu_event event, cu_stream stream);
	cu_result (*event_query)(cu_event event);
	cu_result (*event_elapsed_time)(float *ms, cu_event start, cu_event end);
	cu_result (*event_destroy)(cu_event event);

	/*
	 * Kernels from PTX, for bench nccl's check; optional: without them
	 * the check runs on the host.
	 */
	cu_result (*module_load_data_ex)(cu_module *module, const void *image, unsigned n_options,
					 int *options, void **values);
	cu_result (*module_get_function)(cu_function *fn, cu_module module, const char *name);
	cu_result (*module_unload)(cu_module module);
	cu_result (*launch_kernel)(cu_function fn, unsigned grid_x, unsigned grid_y,
				   unsigned grid_z, unsigned block_x, unsigned block_y,
				   unsigned block_z, unsigned shared_bytes, cu_stream stream,
				   void **params, void **extra);
};

/*
 * Load the library and call cuInit(0); with compute, the memory and stream
 * functions are required too.  -ENOENT when the library or a symbol is
 * missing, -EIO when cuInit fails (no device, driver mismatch), with the
 * reason in err.
 */
int cuda_open(struct cuda *cuda, bool compute, struct strbuf *err);
void cuda_close(struct cuda *cuda);
const char *cuda_strerror(const struct cuda *cuda, cu_result r);

#endif
