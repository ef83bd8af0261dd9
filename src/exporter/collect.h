/*
 * collect.h - the collectors of 'sparkctl exporter'.
 *
 * Each collector maps what probe's readers (probe/reader.h) return for
 * one part of the host below a root (lib/rootfs.h, so a captured tree
 * replays a machine) to a metric set (exporter/metrics.h),
 * synchronously, at scrape time.  A part the host lacks (no RDMA device,
 * no thermal zone) adds nothing and is no error, nor is a file that
 * vanishes while it is listed (rootfs_absent()); a file that cannot be
 * read, or content that is not in the kernel's format, makes the
 * collector report failure (sparkctl_scrape_collector_success 0) but the
 * rest still counts.
 *
 * Metric names follow Prometheus conventions (base units in the name,
 * _total for counters) with node_exporter's label names (device, port,
 * zone, chip, sensor), under the prefix "sparkctl_".
 */
#ifndef SPARKCTL_EXPORTER_COLLECT_H
#define SPARKCTL_EXPORTER_COLLECT_H

#include "sparkctl.h"
#include "exporter/metrics.h"
#include "lib/rootfs.h"
#include "probe/reader.h"

struct exporter_gpu;

/* What one scrape reads. */
struct exporter_source {
	const struct rootfs *root;
	struct exporter_gpu *gpu;   /* NULL: no GPU metrics (no NVML, or --no-gpu) */
	bool gpu_disabled;	    /* --no-gpu: not even sparkctl_gpu_nvml_up */
	struct reader_cache *cache; /* files kept open between scrapes (probe/reader.h), or NULL */
};

/*
 * Collect everything into set: every collector, then the exporter's own
 * metrics (build info, each collector's success, the scrape's duration).
 * Returns 0, or the first collector's error (the set is complete anyway).
 */
int exporter_collect(const struct exporter_source *src, struct metric_set *set);

/* One collector, every file opened afresh. */
int collect_rdma(const struct rootfs *root, struct metric_set *set);
int collect_netdev(const struct rootfs *root, struct metric_set *set);
int collect_thermal(const struct rootfs *root, struct metric_set *set);
int collect_hwmon(const struct rootfs *root, struct metric_set *set);
int collect_aer(const struct rootfs *root, struct metric_set *set);
int collect_meminfo(const struct rootfs *root, struct metric_set *set);

/*
 * A counter file's text (trailing whitespace removed): a decimal number.
 * -ENODATA for the "N/A (no PMA)" of ports without a performance
 * management agent, -EINVAL for anything else.
 */
int exporter_parse_counter(const char *text, uint64_t *ret);

/* How a file of ports/P/counters or ports/P/hw_counters becomes a metric. */
struct rdma_counter {
	const char *file;   /* the sysfs file */
	const char *metric; /* without the "sparkctl_rdma_" prefix */
	const char *help;
	unsigned scale; /* multiply the value by this (4: the data counters count 32-bit words) */
};
/* The counter of file in counters/ (hw false) or hw_counters/ (hw true), or NULL. */
const struct rdma_counter *rdma_counter_find(const char *file, bool hw);

#endif
