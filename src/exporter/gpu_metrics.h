/*
 * gpu_metrics.h - the exporter's GPU metrics, from NVML (loaded with dlopen).
 *
 * exporter_gpu_open() loads NVML, lists the GPUs once and, where the
 * driver supports Xid events, starts a thread that waits on an NVML
 * event set and counts each Xid per GPU and code (behind a mutex): a
 * counter per Xid, never the "last Xid" gauge that cannot show a repeat.
 * exporter_gpu_collect() queries each GPU at scrape time; a query the
 * GPU does not support adds nothing (GB10: no framebuffer memory size,
 * no power limit), so no series ever carries a made-up value.
 */
#ifndef SPARKCTL_GPU_METRICS_H
#define SPARKCTL_GPU_METRICS_H

#include "sparkctl.h"
#include "exporter/metrics.h"
#include "lib/strbuf.h"

struct exporter_gpu;

/*
 * Load NVML and start watching Xid events (watch_xid).  -ENOENT (no
 * library) or -EIO (init failed), with the reason in err.
 */
int exporter_gpu_open(struct exporter_gpu **ret, bool watch_xid, struct strbuf *err);
/* Stop the Xid thread, shut NVML down.  NULL is fine. */
void exporter_gpu_close(struct exporter_gpu *g);
/* The number of GPUs NVML listed. */
size_t exporter_gpu_count(const struct exporter_gpu *g);
/* The name NVML gives GPU i ("NVIDIA GB10"), NULL beyond the count. */
const char *exporter_gpu_name(const struct exporter_gpu *g, size_t i);
/* Add the GPU metrics.  Returns 0 or the first error (-EIO for a failed NVML query). */
int exporter_gpu_collect(struct exporter_gpu *g, struct metric_set *set);

#endif
