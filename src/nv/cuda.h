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

enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_NO_DEVICE = 100,
};

enum cu_device_attribute {
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
};

/*
 * Load the library and call cuInit(0).  -ENOENT when the library or a
 * symbol is missing, -EIO when cuInit fails (no device, driver mismatch),
 * with the reason in err.
 */
int cuda_open(struct cuda *cuda, struct strbuf *err);
void cuda_close(struct cuda *cuda);
const char *cuda_strerror(const struct cuda *cuda, cu_result r);

#endif
