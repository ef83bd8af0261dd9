#include "sparkctl.h"

#include <dlfcn.h>

#include "lib/dl.h"
#include "nv/cuda.h"

int cuda_open(struct cuda *cuda, bool compute, struct strbuf *err)
{
	const struct dl_symbol syms[] = {
		{ { "cuInit" }, (void **)&cuda->init, true },
		{ { "cuDriverGetVersion" }, (void **)&cuda->driver_get_version, true },
		{ { "cuDeviceGetCount" }, (void **)&cuda->device_get_count, true },
		{ { "cuDeviceGet" }, (void **)&cuda->device_get, true },
		{ { "cuDeviceGetAttribute" }, (void **)&cuda->device_get_attribute, true },
		{ { "cuDeviceGetName" }, (void **)&cuda->device_get_name, false },
		{ { "cuDeviceGetPCIBusId" }, (void **)&cuda->device_get_pci_bus_id, false },
		{ { "cuGetErrorString" }, (void **)&cuda->get_error_string, false },
		/* Exported under the _v2 names that cuda.h maps the calls to. */
		{ { "cuDevicePrimaryCtxRetain" }, (void **)&cuda->primary_ctx_retain, compute },
		{ { "cuDevicePrimaryCtxRelease_v2" },
		  (void **)&cuda->primary_ctx_release,
		  compute },
		{ { "cuCtxSetCurrent" }, (void **)&cuda->ctx_set_current, compute },
		{ { "cuMemAlloc_v2" }, (void **)&cuda->mem_alloc, compute },
		{ { "cuMemFree_v2" }, (void **)&cuda->mem_free, compute },
		{ { "cuMemGetInfo_v2" }, (void **)&cuda->mem_get_info, compute },
		{ { "cuMemcpyHtoD_v2" }, (void **)&cuda->memcpy_htod, compute },
		{ { "cuMemcpyDtoH_v2" }, (void **)&cuda->memcpy_dtoh, compute },
		{ { "cuMemsetD8_v2" }, (void **)&cuda->memset_d8, compute },
		{ { "cuStreamCreate" }, (void **)&cuda->stream_create, compute },
		{ { "cuStreamDestroy_v2" }, (void **)&cuda->stream_destroy, compute },
		{ { "cuStreamQuery" }, (void **)&cuda->stream_query, compute },
		{ { "cuStreamSynchronize" }, (void **)&cuda->stream_synchronize, compute },
		{ { "cuEventCreate" }, (void **)&cuda->event_create, compute },
		{ { "cuEventRecord" }, (void **)&cuda->event_record, compute },
		{ { "cuEventQuery" }, (void **)&cuda->event_query, compute },
		{ { "cuEventElapsedTime_v2", "cuEventElapsedTime" },
		  (void **)&cuda->event_elapsed_time,
		  compute },
		{ { "cuEventDestroy_v2" }, (void **)&cuda->event_destroy, compute },
		{ { "cuModuleLoadDataEx" }, (void **)&cuda->module_load_data_ex, false },
		{ { "cuModuleGetFunction" }, (void **)&cuda->module_get_function, false },
		{ { "cuModuleUnload" }, (void **)&cuda->module_unload, false },
		{ { "cuLaunchKernel" }, (void **)&cuda->launch_kernel, false },
	};
	int r;

	memset(cuda, 0, sizeof(*cuda));
	r = dl_open(CUDA_SONAME, &cuda->handle, err);
	if (r < 0)
		return r;
	r = dl_resolve(cuda->handle, syms, ARRAY_SIZE(syms), err);
	if (r < 0)
		goto fail;
	cu_result cr = cuda->init(0);
	if (cr != CUDA_SUCCESS) {
		strbuf_addf(err, "cuInit failed: %s", cuda_strerror(cuda, cr));
		r = -EIO;
		goto fail;
	}
	return 0;
fail:
	dlclose(cuda->handle);
	memset(cuda, 0, sizeof(*cuda));
	return r;
}

void cuda_close(struct cuda *cuda)
{
	if (cuda->handle)
		dlclose(cuda->handle);
	memset(cuda, 0, sizeof(*cuda));
}

const char *cuda_strerror(const struct cuda *cuda, cu_result r)
{
	const char *s = NULL;

	if (cuda->get_error_string && cuda->get_error_string(r, &s) == CUDA_SUCCESS && s)
		return s;
	return r == CUDA_ERROR_NO_DEVICE ? "no CUDA-capable device" : "unknown CUDA error";
}
