/*
 * nccl_check.c - the check kernels (nccl_check.ptx) through the driver:
 * loaded from PTX, which the driver compiles for the GPU at hand, and
 * launched with the parameters in the order the PTX declares them.
 */
#include "sparkctl.h"

#include "bench/nccl_check.h"

#define BLOCK_THREADS 256u
#define BLOCKS_PER_SM 8u
#define JIT_LOG_BYTES 2048u

int nccl_kernels_load(const struct cuda *cuda, cu_device dev, struct nccl_kernels *k,
		      struct strbuf *err)
{
	char log[JIT_LOG_BYTES] = "";
	int options[] = { CU_JIT_OPTION_ERROR_LOG_BUFFER, CU_JIT_OPTION_ERROR_LOG_BUFFER_SIZE };
	void *values[] = { log, (void *)(uintptr_t)sizeof(log) };
	int sms = 0;
	cu_result cr;

	memset(k, 0, sizeof(*k));
	if (!cuda->module_load_data_ex || !cuda->module_get_function || !cuda->module_unload ||
	    !cuda->launch_kernel) {
		strbuf_addstr(err, "the CUDA driver has no cuModuleLoadDataEx or cuLaunchKernel");
		return -ENOTSUP;
	}
	cr = cuda->module_load_data_ex(&k->module, nccl_check_ptx, ARRAY_SIZE(options), options,
				       values);
	if (cr != CUDA_SUCCESS) {
		log[sizeof(log) - 1] = '\0';
		strbuf_addf(err, "the CUDA driver did not compile the check kernels: %s%s%.*s",
			    cuda_strerror(cuda, cr), *log ? ": " : "", (int)strcspn(log, "\n"),
			    log);
		k->module = NULL;
		return -ENOTSUP;
	}
	if ((cr = cuda->module_get_function(&k->fill, k->module, "sparkctl_fill")) !=
		    CUDA_SUCCESS ||
	    (cr = cuda->module_get_function(&k->check, k->module, "sparkctl_check")) !=
		    CUDA_SUCCESS) {
		strbuf_addf(err, "cuModuleGetFunction failed: %s", cuda_strerror(cuda, cr));
		goto fail;
	}
	if (cuda->device_get_attribute(&sms, CU_ATTR_MULTIPROCESSOR_COUNT, dev) != CUDA_SUCCESS ||
	    sms <= 0)
		sms = 16;
	k->max_blocks = (unsigned)sms * BLOCKS_PER_SM;
	return 0;
fail:
	nccl_kernels_unload(cuda, k);
	return -ENOTSUP;
}

void nccl_kernels_unload(const struct cuda *cuda, struct nccl_kernels *k)
{
	if (k->counter)
		cuda->mem_free(k->counter);
	if (k->module)
		cuda->module_unload(k->module);
	memset(k, 0, sizeof(*k));
}

static unsigned grid_for(const struct nccl_kernels *k, size_t count)
{
	size_t blocks = (count + BLOCK_THREADS - 1) / BLOCK_THREADS;

	return blocks < k->max_blocks ? (unsigned)blocks : k->max_blocks;
}

cu_result nccl_kernels_fill(const struct cuda *cuda, const struct nccl_kernels *k, cu_stream stream,
			    cu_deviceptr buf, size_t count, const struct perf_check *c, int rank)
{
	uint64_t count64 = count, span = c->span;
	uint32_t type = (uint32_t)c->type, pattern = (uint32_t)c->pattern;
	uint32_t nranks = (uint32_t)c->nranks, me = (uint32_t)rank, seed = c->seed;
	/* In the order of sparkctl_fill's parameters. */
	void *params[] = { &buf, &count64, &type, &pattern, &nranks, &me, &seed, &span };

	if (count == 0)
		return CUDA_SUCCESS;
	return cuda->launch_kernel(k->fill, grid_for(k, count), 1, 1, BLOCK_THREADS, 1, 1, 0,
				   stream, params, NULL);
}

cu_result nccl_kernels_count(const struct cuda *cuda, struct nccl_kernels *k, cu_stream stream,
			     cu_deviceptr buf, size_t count, const struct perf_check *c)
{
	uint64_t count64 = count, span = c->span, chunk = c->chunk, base = c->base;
	uint32_t type = (uint32_t)c->type, pattern = (uint32_t)c->pattern;
	uint32_t nranks = (uint32_t)c->nranks, seed = c->seed, source = (uint32_t)c->source;
	uint32_t src_rank = (uint32_t)c->src_rank;
	uint64_t zero = 0;
	double tol = c->tol;
	cu_deviceptr counter;
	/* In the order of sparkctl_check's parameters. */
	void *params[] = { &buf,  &count64, &counter,  &type,  &pattern, &nranks, &seed,
			   &span, &source,  &src_rank, &chunk, &base,	 &tol };
	cu_result cr = CUDA_SUCCESS;

	/* Allocated here, once the buffers are: the memory bound counts only them. */
	if (!k->counter && (cr = cuda->mem_alloc(&k->counter, sizeof(uint64_t))) != CUDA_SUCCESS) {
		k->counter = 0;
		return cr;
	}
	counter = k->counter;
	cr = cuda->memcpy_htod(k->counter, &zero, sizeof(zero));
	if (cr != CUDA_SUCCESS || count == 0)
		return cr;
	return cuda->launch_kernel(k->check, grid_for(k, count), 1, 1, BLOCK_THREADS, 1, 1, 0,
				   stream, params, NULL);
}

cu_result nccl_kernels_wrong(const struct cuda *cuda, const struct nccl_kernels *k, uint64_t *wrong)
{
	return cuda->memcpy_dtoh(wrong, k->counter, sizeof(*wrong));
}
