/*
 * sample.h - one sample of a node's live figures, as JSON, and read back.
 *
 * top_sample_collect() reads the node below a root once: its GPUs through
 * NVML, /proc/meminfo, every RDMA port with its counters and every netdev
 * with its statistics.  The object it returns is what 'sparkctl agent
 * status' prints (the inventory adds its own keys there) and what 'sparkctl
 * top' reads, here and, over SSH, from other nodes: one sampler, one shape
 * (docs/top.md, "The sample").
 *
 * top_sample_parse() reads such an object into a struct top_sample.  It
 * comes from another node, so it is checked: every key top uses must have
 * its type and range, ports and netdevs are unique by name, anything else
 * is an error naming the key; keys it does not know are ignored.  It is pure and bounded by its
 * input, so it is fuzzed (tests/fuzz/fuzz-top-sample.c).
 */
#ifndef SPARKCTL_TOP_SAMPLE_H
#define SPARKCTL_TOP_SAMPLE_H

#include "sparkctl.h"
#include "lib/json.h"
#include "lib/rootfs.h"
#include "lib/strbuf.h"

struct exporter_gpu;

enum top_gpu_state {
	TOP_GPU_OFF,	 /* no GPU figures asked for (--no-gpu) */
	TOP_GPU_NO_NVML, /* NVML could not be loaded or initialised */
	TOP_GPU_OK,
};

/* "ok", "no_nvml", "off": gpu_state in the sample and in 'top --json'. */
const char *top_gpu_state_name(enum top_gpu_state s);

/* What top_sample_collect() reads. */
struct top_sample_source {
	const struct rootfs *root;
	struct exporter_gpu *gpu; /* NULL: no NVML */
	bool gpu_disabled;	  /* --no-gpu: NVML left alone, gpu_state "off" */
};

/*
 * The sample as a JSON object: gpu_state, gpus[], memory_total_bytes,
 * memory_available_bytes, ports[] (RDMA) and netdevs[], each port and
 * netdev with its counters{}.  What cannot be read is null or left out.
 */
json_t *top_sample_collect(const struct top_sample_source *src);

/* A counter: its name in the sample's counters{}, and its value. */
struct top_counter {
	char *name;
	uint64_t value;
};

struct top_sample_gpu {
	int64_t index;
	char *name;
	bool has_util, has_power, has_temp, has_mem_used, has_mem_total;
	double util; /* 0..1 */
	double power_w, temp_c;
	uint64_t mem_used, mem_total;
	bool unified_memory;
};

struct top_sample_port {
	bool rdma;
	char *name;	  /* "DEV/PORT" of an RDMA port, or the netdev's name */
	char *netdev;	  /* an RDMA port's netdev, or NULL */
	char *state;	  /* "ACTIVE" ... (RDMA) or the operstate (netdev), or NULL */
	double line_gbps; /* 0 when unknown */
	struct top_counter *counters;
	size_t nr_counters;
};

struct top_sample {
	enum top_gpu_state gpu_state;
	struct top_sample_gpu *gpus;
	size_t nr_gpus;
	bool has_mem;
	uint64_t mem_total, mem_available;
	struct top_sample_port *ports; /* RDMA ports, then netdevs, in the sample's order */
	size_t nr_ports;
};

#define TOP_SAMPLE_INIT                                                                            \
	{                                                                                          \
		TOP_GPU_OFF, NULL, 0, false, 0, 0, NULL, 0                                         \
	}

/*
 * The most GPUs, and RDMA ports or netdevs, a sample may list: far above any
 * machine's, and they bound the model's work (ports are matched by name).
 */
#define TOP_SAMPLE_MAX_GPUS  256
#define TOP_SAMPLE_MAX_PORTS 4096

/*
 * Read doc (a sample, or a whole 'agent status' document) into out.
 * Returns 0, or -EINVAL with what is wrong, by key, in err (out is then
 * empty).
 */
int top_sample_parse(const json_t *doc, struct top_sample *out, struct strbuf *err);
void top_sample_release(struct top_sample *s);

/* The counter of p by name, or NULL. */
const struct top_counter *top_sample_counter(const struct top_sample_port *p, const char *name);

#endif
