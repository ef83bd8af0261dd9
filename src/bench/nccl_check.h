/*
 * nccl_check.h - bench nccl's result check on the GPU: the kernels of
 * nccl_check.ptx, loaded through the driver at run time, fill a rank's
 * input and count the wrong elements of its output where the data is,
 * with no copy through the host.  They compute what the model in
 * nccl_pattern.c computes (struct perf_check).
 */
#ifndef SPARKCTL_NCCL_CHECK_H
#define SPARKCTL_NCCL_CHECK_H

#include "sparkctl.h"
#include "bench/nccl_perf.h"
#include "lib/strbuf.h"
#include "nv/cuda.h"

/* The PTX text (nccl_check.ptx, embedded at build time), NUL-terminated. */
extern const char nccl_check_ptx[];

struct nccl_kernels {
	cu_module module;
	cu_function fill, check;
	cu_deviceptr
		counter; /* the wrong elements: 8 bytes of device memory, from the first count */
	unsigned max_blocks; /* a grid that fills the GPU; the kernels stride past it */
};

/*
 * Load the kernels for dev, in the current context.  -ENOTSUP when the
 * driver lacks the module calls, will not compile the PTX (too old for its
 * ISA version) or cannot set them up; why in err, with the JIT's own log.
 */
int nccl_kernels_load(const struct cuda *cuda, cu_device dev, struct nccl_kernels *k,
		      struct strbuf *err);
void nccl_kernels_unload(const struct cuda *cuda, struct nccl_kernels *k);

/* Queue on stream: rank's input, count elements of c->type at buf. */
cu_result nccl_kernels_fill(const struct cuda *cuda, const struct nccl_kernels *k, cu_stream stream,
			    cu_deviceptr buf, size_t count, const struct perf_check *c, int rank);
/*
 * Set the counter to 0 (a synchronous copy: before the stream's work), and
 * queue on stream the count of the wrong elements among count at buf.
 */
cu_result nccl_kernels_count(const struct cuda *cuda, struct nccl_kernels *k, cu_stream stream,
			     cu_deviceptr buf, size_t count, const struct perf_check *c);
/* The counter, once the stream is done. */
cu_result nccl_kernels_wrong(const struct cuda *cuda, const struct nccl_kernels *k,
			     uint64_t *wrong);

#endif
