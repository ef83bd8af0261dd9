/*
 * check-kernels.c - bench nccl's check kernels (src/bench/nccl_check.ptx)
 * against their model (src/bench/nccl_pattern.c), on whatever libcuda.so.1
 * the loader finds: a GPU's driver, or the stand-in of tests/fake.
 *
 * For every element type, pattern, rank count and source:
 *   - sparkctl_fill writes, byte for byte, what perf_check_fill() writes, on
 *     every rank;
 *   - sparkctl_check counts 0 on the right output and exactly the elements
 *     changed after a few are changed, as perf_check_count() does;
 * and once over a large buffer that the grid strides through many times.
 *
 *   check-kernels           the checks; exit 0, 1 on a mismatch, 77 (skip)
 *                           without a CUDA driver and GPU, unless
 *                           SPARKCTL_REQUIRE_GPU=1
 *   check-kernels --bench   also the figures behind the choice of checking on
 *                           the GPU: the kernels' time on 1 GiB against the
 *                           copies any host check needs and the host model
 */
#include "sparkctl.h"

#include <math.h>
#include <time.h>

#include "bench/nccl_check.h"

#define SMALL_COUNT 4099 /* odd, and more than one 256-thread block */
#define LARGE_COUNT ((size_t)40 << 20)
#define BENCH_BYTES ((size_t)1 << 30)

static struct cuda cuda;
static struct nccl_kernels kernels;
static cu_stream stream;
static unsigned failures, combinations;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("check-kernels: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	failures++;
}

static bool cu_ok(cu_result cr, const char *what)
{
	if (cr == CUDA_SUCCESS)
		return true;
	fail("%s: %s", what, cuda_strerror(&cuda, cr));
	return false;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Change element j of buf so that it is wrong by more than any tolerance. */
static void spoil(enum perf_dtype t, void *buf, size_t j)
{
	perf_store(t, buf, j, perf_load(t, buf, j) + 3);
}

/* One combination, count elements. */
static void check_one(const struct perf_check *c, size_t count, void *host, void *model,
		      cu_deviceptr dev)
{
	size_t bytes = count * perf_dtype_size(c->type);
	const size_t spoilt[] = { 0, count / 2, count - 1 };
	uint64_t wrong = 0;

	combinations++;
	for (int rank = 0; rank < c->nranks; rank++) {
		perf_check_fill(c, rank, model, count);
		if (!cu_ok(cuda.memset_d8(dev, 0xa5, bytes), "cuMemsetD8") ||
		    !cu_ok(cuda.stream_synchronize(NULL), "cuStreamSynchronize") ||
		    !cu_ok(nccl_kernels_fill(&cuda, &kernels, stream, dev, count, c, rank),
			   "sparkctl_fill") ||
		    !cu_ok(cuda.stream_synchronize(stream), "cuStreamSynchronize") ||
		    !cu_ok(cuda.memcpy_dtoh(host, dev, bytes), "cuMemcpyDtoH"))
			return;
		if (memcmp(host, model, bytes))
			fail("fill: type %d pattern %d nranks %d rank %d: not the model's bytes",
			     (int)c->type, (int)c->pattern, c->nranks, rank);
	}
	/* The right output, as the model has it. */
	for (size_t j = 0; j < count; j++)
		perf_store(c->type, model, j, perf_check_expected(c, j));
	for (int pass = 0; pass < 2; pass++) {
		uint64_t want = pass ? ARRAY_SIZE(spoilt) : 0;
		if (pass)
			for (size_t k = 0; k < ARRAY_SIZE(spoilt); k++)
				spoil(c->type, model, spoilt[k]);
		if (!cu_ok(cuda.memcpy_htod(dev, model, bytes), "cuMemcpyHtoD") ||
		    !cu_ok(nccl_kernels_count(&cuda, &kernels, stream, dev, count, c),
			   "sparkctl_check") ||
		    !cu_ok(cuda.stream_synchronize(stream), "cuStreamSynchronize") ||
		    !cu_ok(nccl_kernels_wrong(&cuda, &kernels, &wrong), "the counter"))
			return;
		if (wrong != want || perf_check_count(c, model, count) != want)
			fail("check: type %d pattern %d nranks %d source %d: %" PRIu64
			     " wrong, the model %" PRIu64 ", want %" PRIu64,
			     (int)c->type, (int)c->pattern, c->nranks, (int)c->source, wrong,
			     perf_check_count(c, model, count), want);
	}
}

static void check_all(void)
{
	static const int nranks[] = { 1, 2, 3, 8 };
	size_t max_bytes = LARGE_COUNT * sizeof(float);
	void *host = malloc(max_bytes), *model = malloc(max_bytes);
	cu_deviceptr dev = 0;

	if (!host || !model || !cu_ok(cuda.mem_alloc(&dev, max_bytes), "cuMemAlloc"))
		goto out;
	for (int t = 0; t < PERF_NR_DTYPES; t++)
		for (int p = 0; p < PERF_NR_REDOPS; p++)
			for (size_t n = 0; n < ARRAY_SIZE(nranks); n++)
				for (int src = PERF_CHECK_REDUCED; src <= PERF_CHECK_BLOCKS;
				     src++) {
					struct perf_check c = {
						.type = (enum perf_dtype)t,
						.pattern = (enum perf_redop)p,
						.nranks = nranks[n],
						.seed = 7u + (unsigned)n,
						.span = perf_input_span((enum perf_redop)p,
									(enum perf_dtype)t,
									nranks[n]),
						.source = (enum perf_check_source)src,
						.src_rank = nranks[n] - 1,
						.chunk = SMALL_COUNT / (size_t)nranks[n],
						.base = src == PERF_CHECK_REDUCED ? 1000 : 0,
						.tol = perf_value_tolerance((enum perf_redop)p,
									    (enum perf_dtype)t),
					};
					check_one(&c, SMALL_COUNT, host, model, dev);
				}
	/* Many times the grid: the kernels stride. */
	struct perf_check large = {
		.type = PERF_FLOAT,
		.pattern = PERF_SUM,
		.nranks = 2,
		.seed = 1,
		.span = perf_input_span(PERF_SUM, PERF_FLOAT, 2),
		.source = PERF_CHECK_REDUCED,
	};
	check_one(&large, LARGE_COUNT, host, model, dev);
out:
	if (dev)
		cuda.mem_free(dev);
	free(host);
	free(model);
}

/*
 * The figures for 1 GiB of float, all_reduce on 2 ranks: the kernels, and
 * what a host check must do at least (copy the input in and the output
 * out) and the model's own time per element on one core.
 */
static void bench(void)
{
	size_t count = BENCH_BYTES / sizeof(float);
	void *host = malloc(BENCH_BYTES);
	cu_deviceptr dev = 0;
	struct perf_check c = {
		.type = PERF_FLOAT,
		.pattern = PERF_SUM,
		.nranks = 2,
		.seed = 3,
		.span = perf_input_span(PERF_SUM, PERF_FLOAT, 2),
		.source = PERF_CHECK_REDUCED,
	};
	double t0, fill_s = 1e9, check_s = 1e9, htod_s = 1e9, dtoh_s = 1e9, model_s;
	uint64_t wrong;

	if (!host || !cu_ok(cuda.mem_alloc(&dev, BENCH_BYTES), "cuMemAlloc"))
		goto out;
	memset(host, 0, BENCH_BYTES);
	for (int round = 0; round < 3; round++) {
		t0 = now_s();
		if (!cu_ok(nccl_kernels_fill(&cuda, &kernels, stream, dev, count, &c, 0), "fill") ||
		    !cu_ok(cuda.stream_synchronize(stream), "sync"))
			goto out;
		fill_s = fmin(fill_s, now_s() - t0);
		t0 = now_s();
		if (!cu_ok(nccl_kernels_count(&cuda, &kernels, stream, dev, count, &c), "check") ||
		    !cu_ok(cuda.stream_synchronize(stream), "sync") ||
		    !cu_ok(nccl_kernels_wrong(&cuda, &kernels, &wrong), "counter"))
			goto out;
		check_s = fmin(check_s, now_s() - t0);
		t0 = now_s();
		if (!cu_ok(cuda.memcpy_htod(dev, host, BENCH_BYTES), "HtoD"))
			goto out;
		htod_s = fmin(htod_s, now_s() - t0);
		t0 = now_s();
		if (!cu_ok(cuda.memcpy_dtoh(host, dev, BENCH_BYTES), "DtoH"))
			goto out;
		dtoh_s = fmin(dtoh_s, now_s() - t0);
	}
	/* The model on one core, over 1/16 of the buffer, scaled. */
	t0 = now_s();
	perf_check_fill(&c, 0, host, count / 16);
	wrong = perf_check_count(&c, host, count / 16);
	model_s = (now_s() - t0) * 16;
	printf("check-kernels --bench: 1 GiB of float, all_reduce of 2 ranks (best of 3)\n");
	printf("  GPU: sparkctl_fill %.1f ms, sparkctl_check %.1f ms\n", fill_s * 1e3,
	       check_s * 1e3);
	printf("  host, the copies alone: in %.1f ms, out %.1f ms (pageable memory)\n",
	       htod_s * 1e3, dtoh_s * 1e3);
	printf("  host, the model on one core: %.0f ms (fill and count; %" PRIu64 " wrong)\n",
	       model_s * 1e3, wrong);
out:
	if (dev)
		cuda.mem_free(dev);
	free(host);
}

int main(int argc, char **argv)
{
	const char *require = getenv("SPARKCTL_REQUIRE_GPU");
	struct strbuf err = STRBUF_INIT;
	cu_context ctx;
	cu_device dev;
	int count = 0;

	if (cuda_open(&cuda, true, &err) < 0 || cuda.device_get_count(&count) != CUDA_SUCCESS ||
	    count < 1) {
		printf("check-kernels: no CUDA GPU (%s)\n", err.len ? err.buf : "no device");
		strbuf_release(&err);
		return require && streq(require, "1") ? 1 : 77;
	}
	if (!cu_ok(cuda.device_get(&dev, 0), "cuDeviceGet") ||
	    !cu_ok(cuda.primary_ctx_retain(&ctx, dev), "cuDevicePrimaryCtxRetain"))
		return 1;
	if (!cu_ok(cuda.ctx_set_current(ctx), "cuCtxSetCurrent") ||
	    !cu_ok(cuda.stream_create(&stream, CU_STREAM_FLAG_NON_BLOCKING), "cuStreamCreate"))
		goto out;
	if (nccl_kernels_load(&cuda, dev, &kernels, &err) < 0) {
		fail("%s", err.buf);
		goto out;
	}
	check_all();
	if (argc > 1 && streq(argv[1], "--bench"))
		bench();
	nccl_kernels_unload(&cuda, &kernels);
	printf("check-kernels: %u combinations, %u failure(s)\n", combinations, failures);
out:
	if (stream)
		cuda.stream_destroy(stream);
	cuda.primary_ctx_release(dev);
	strbuf_release(&err);
	cuda_close(&cuda);
	return failures ? 1 : 0;
}
