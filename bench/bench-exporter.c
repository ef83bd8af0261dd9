/*
 * bench-exporter - how long one scrape of 'sparkctl exporter' takes:
 * collecting every metric and rendering the text, as the server does for
 * each GET /metrics (target: median under 2 ms on an 8-GPU, 8-HCA node).
 *
 * Both ways the exporter reads: as the server does (RDMA counter files kept
 * open between scrapes and reread) and as --once does (every file opened
 * anew).  Reads the captured tree ROOT and, unless NVML cannot be loaded, the GPUs
 * of the libnvidia-ml.so.1 on the loader path (meson's 'bench-exporter'
 * target points it at the stand-in, SPARKCTL_FAKE_GPU=h100x8).  Prints
 * min, median, p95 and max over RUNS scrapes after a few warm-up ones,
 * and the size of the text.  A benchmark: it prints figures and never
 * fails on them.
 *
 *   bench-exporter ROOT [RUNS]
 */
#include "sparkctl.h"

#include <time.h>

#include "exporter/collect.h"
#include "exporter/gpu_metrics.h"
#include "lib/parse.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct exporter_source src = { 0 };
	struct rootfs root;
	struct strbuf err = STRBUF_INIT, out = STRBUF_INIT;
	uint32_t runs = 500;
	double *ms;
	size_t bytes = 0, lines = 0;

	if (argc < 2 || argc > 3 || (argc == 3 && (parse_u32(argv[2], &runs) < 0 || !runs))) {
		fprintf(stderr, "usage: bench-exporter ROOT [RUNS]\n");
		return 2;
	}
	if (rootfs_open(&root, argv[1]) < 0) {
		fprintf(stderr, "bench-exporter: cannot open %s\n", argv[1]);
		return 1;
	}
	src.root = &root;
	if (exporter_gpu_open(&src.gpu, false, &err) < 0) {
		printf("no NVML (%s): GPU metrics left out\n", err.buf);
		src.gpu = NULL;
	}
	ms = calloc(runs, sizeof(*ms));
	if (!ms)
		return 1;
	for (int cached = 1; cached >= 0; cached--) {
		src.cache = cached ? reader_cache_new() : NULL;
		for (uint32_t i = 0; i < runs + 10; i++) {
			struct metric_set set = METRIC_SET_INIT;
			double t0 = now_ms();

			strbuf_reset(&out);
			exporter_collect(&src, &set);
			metric_set_render(&set, &out);
			metric_set_release(&set);
			if (i >= 10)
				ms[i - 10] = now_ms() - t0;
		}
		reader_cache_free(src.cache);
		bytes = out.len;
		lines = 0;
		for (size_t i = 0; i < out.len; i++)
			lines += out.buf[i] == '\n';
		qsort(ms, runs, sizeof(*ms), cmp_double);
		if (cached)
			printf("scrape of %s with %zu GPUs: %zu bytes, %zu lines\n", argv[1],
			       src.gpu ? exporter_gpu_count(src.gpu) : 0, bytes, lines);
		printf("  %-28s %u scrapes: min %.3f ms, median %.3f ms, p95 %.3f ms, max %.3f "
		       "ms\n",
		       cached ? "server (counters kept open)" : "--once (every file opened)", runs,
		       ms[0], ms[runs / 2], ms[runs * 95 / 100], ms[runs - 1]);
	}
	printf("  (target: median under 2 ms for the server)\n");
	free(ms);
	exporter_gpu_close(src.gpu);
	rootfs_close(&root);
	strbuf_release(&out);
	strbuf_release(&err);
	return 0;
}
