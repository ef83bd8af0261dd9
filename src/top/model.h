/*
 * model.h - what 'sparkctl top' shows of one node, from two samples.
 *
 * A sample is what top/sample.h reads back from the JSON a node's
 * 'agent status' prints (or the same sampler here).  top_model_update()
 * turns the previous and the current sample and the seconds between them
 * into figures: per GPU utilisation, power, temperature and memory; per
 * fabric port TX/RX rates from byte-counter deltas, with a short history,
 * and the error or congestion counters that moved.  Pure: no I/O, so it
 * is unit-tested on exact figures (tests/unit/test-top.c).
 */
#ifndef SPARKCTL_TOP_MODEL_H
#define SPARKCTL_TOP_MODEL_H

#include "sparkctl.h"
#include "lib/json.h"
#include "top/sample.h"

/* The schema_version of 'top --json' (docs/schemas/top.schema.json). */
#define TOP_SCHEMA_VERSION 1

/* Samples of history kept per port (more than the widest graph shows). */
#define TOP_HISTORY 64

struct top_gpu {
	int64_t index; /* NVML index */
	char *name;
	bool has_util, has_power, has_temp, has_mem;
	double util;	/* 0..1 */
	double power_w; /* watts */
	double temp_c;	/* Celsius */
	/* bytes; on unified memory (GB10) the system's: MemTotal - MemAvailable of MemTotal */
	uint64_t mem_used, mem_total;
	bool unified_memory;
};

/* A counter of loss, errors or congestion that moved between two samples. */
struct top_flag {
	char *counter; /* its name in the sample's counters{} */
	double increase;
};

struct top_port {
	char *name;   /* "DEV/PORT" of an RDMA port, or a netdev's name */
	char *netdev; /* an RDMA port's netdev, or NULL */
	char *state;  /* "ACTIVE", "DOWN" ... (RDMA) or "up" / "down" (netdev) */
	bool rdma;
	bool has_rate;		 /* false on the first sample and after a counter reset */
	double tx_gbps, rx_gbps; /* 10^9 bit/s */
	double line_gbps;	 /* the link's rate, 0 when unknown */
	/* max(TX, RX) in Gb/s of each update, oldest first; negative: no rate then */
	double hist[TOP_HISTORY];
	size_t hist_nr;
	struct top_flag *flags; /* the error/congestion counters that moved, in sample order */
	size_t nr_flags;
};

struct top_model {
	enum top_gpu_state gpu_state;
	struct top_gpu *gpus;
	size_t nr_gpus;
	bool has_mem; /* /proc/meminfo */
	uint64_t mem_total, mem_available;
	struct top_port *ports; /* RDMA ports by device and port, then netdevs by name */
	size_t nr_ports;
	double seconds; /* between the two samples of the last update */
};

#define TOP_MODEL_INIT                                                                             \
	{                                                                                          \
		TOP_GPU_OFF, NULL, 0, false, 0, 0, NULL, 0, 0                                      \
	}

/*
 * Rebuild m from cur, with rates over seconds since prev (prev NULL or
 * seconds <= 0: no rates).  A port's history carries over from the
 * previous update of m by its name.
 */
void top_model_update(struct top_model *m, const struct top_sample *prev,
		      const struct top_sample *cur, double seconds);
void top_model_release(struct top_model *m);

/*
 * The JSON form of the nodes' models (one view of 'top --json',
 * docs/schemas/top.schema.json): hosts[i] with errors[i] (NULL: none) and
 * models[i].
 */
json_t *top_models_json(const char *const *hosts, const char *const *errors,
			const struct top_model *const *models, size_t nr, double interval);

#endif
