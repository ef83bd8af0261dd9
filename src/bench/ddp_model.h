/*
 * ddp_model.h - the arithmetic of 'sparkctl bench ddp': percentiles of
 * step times, throughput, speedup and efficiency under weak or strong
 * scaling, the split of a step into gradient all-reduce and the rest, the
 * all-reduce's bus bandwidth, the prediction for more nodes under the
 * fabric plans sparkctl knows, the row of 'bench nccl' set beside it, and
 * the memory a run needs.
 * Pure functions: no I/O, unit-tested in tests/unit/test-ddp-model.c.
 */
#ifndef SPARKCTL_DDP_MODEL_H
#define SPARKCTL_DDP_MODEL_H

#include "sparkctl.h"

/*
 * The p-th percentile (0..100) of n values, interpolated linearly between
 * the two nearest ranks (numpy's default): sorts values in place.
 * Returns -EINVAL for n == 0 or p out of range.
 */
int ddp_percentile(double *values, size_t n, double p, double *ret);

/*
 * Weak scaling keeps the batch per rank (the global batch grows with the
 * ranks); strong scaling keeps the global batch (per rank: global / ranks).
 */
enum ddp_scaling {
	DDP_SCALING_WEAK,
	DDP_SCALING_STRONG,
};

const char *ddp_scaling_name(enum ddp_scaling s);

/*
 * Strong scaling: the batch per rank of a run of ranks for a global batch.
 * -EDOM where ranks do not divide it (or it is smaller than ranks).
 */
int ddp_strong_batch(unsigned global_batch, unsigned ranks, unsigned *per_rank);

/* What one configuration (nodes x ranks per node) measured; times in us. */
struct ddp_measure {
	unsigned nodes, ranks;	 /* ranks: in all (nodes x ranks per node) */
	unsigned batch_per_rank; /* samples per rank per step */
	double step_p50_us, step_p95_us;
	double comm_us;	   /* gradient all-reduce per step (p50), from the comm hook */
	double compute_us; /* a step without gradient all-reduce (p50, DDP's no_sync) */
	double grad_bytes; /* gradient bytes all-reduced per step */
};

/* What follows from a measure (and the 1-node one it is compared with). */
struct ddp_figures {
	double samples_per_second; /* ranks x batch / p50 step */
	double speedup;		   /* S_N / S_1 */
	double efficiency_ratio;   /* S_N / (N x S_1): N in nodes */
	double comm_ratio;	   /* comm / step */
	double other_us;	   /* step - compute - comm: > 0 lost outside both, < 0 overlap */
	double busbw_gbytes_per_second; /* ring all-reduce bus bandwidth (0 on one rank) */
	/*
	 * 1 - efficiency, split: the comm time over what base's comm would be
	 * at this run's work per rank, and the rest (compute, waiting for the
	 * slowest rank, overlap lost), as fractions of this step.  With k =
	 * this run's batch per rank over base's (1 under weak scaling, 1/N
	 * under strong), the ideal step is k x base's and efficiency is
	 * k x base's step / this step, so 1 - efficiency = (step - k step_1)
	 * / step: comm's share (comm - k comm_1) / step, the rest the other.
	 */
	double lost_comm_ratio, lost_other_ratio;
};

/* Samples per second at a p50 step time; 0 for a step time that is not positive. */
double ddp_samples_per_second(unsigned ranks, unsigned batch_per_rank, double step_us);

/*
 * The figures of m against base (the 1-node run; base == m for itself).
 * Returns -EINVAL where a time or throughput is not positive.
 */
int ddp_figures(const struct ddp_measure *m, const struct ddp_measure *base,
		struct ddp_figures *ret);

/* Ring all-reduce: the bytes each rank sends, 2(n-1)/n x bytes; 0 for n < 2. */
double ddp_ring_factor(unsigned ranks);

/* Bus bandwidth in 10^9 B/s of an all-reduce of bytes over ranks in us; 0 if none. */
double ddp_busbw(double bytes, unsigned ranks, double us);

/*
 * The fabric plans sparkctl knows (docs/configure.md), as the prediction
 * sees them: a switch puts every node on one fabric, each at the bus
 * bandwidth measured; a ring is three Sparks, each one's port 0 cabled to
 * the next one's port 1, where both ports of a node share what one port
 * carries alone, so each link runs at half the bandwidth measured on one
 * port (a pair or a switch).  A pair is 2 nodes: measured, not predicted.
 */
enum ddp_fabric_plan {
	DDP_PLAN_SWITCH,
	DDP_PLAN_RING,
};
#define DDP_NR_PLANS	    2
#define DDP_RING_NODES	    3
#define DDP_RING_LINK_RATIO 0.5

const char *ddp_plan_name(enum ddp_fabric_plan plan);
/* Whether the plan cables that many nodes: a switch 2 or more, a ring 3. */
bool ddp_plan_allows(enum ddp_fabric_plan plan, unsigned nodes);
/* The busbw of a link of the plan over the busbw measured on one port. */
double ddp_plan_link_ratio(enum ddp_fabric_plan plan);

/*
 * The prediction for nodes (same ranks per node as multi) from the 1-node
 * run base and the smallest multi-node run multi: compute per step as
 * measured in multi (strong scaling: times multi's ranks over the new
 * ranks, the batch per rank being that much smaller), the all-reduce of
 * the gradient bytes at multi's bus bandwidth times the plan's link ratio,
 * scaled by the ring factor, and the rest as measured in multi carried
 * over unchanged: step = compute + comm + rest, rest = multi's step -
 * compute - comm (negative: the all-reduce time DDP hid behind the
 * backward pass; positive: time lost outside both), the step at least the
 * longer of compute and comm, as no overlap hides more than that.  The
 * hidden time is kept as a time, not a share of comm: the backward pass
 * it hides behind does not grow with the nodes.  Samples per step:
 * ranks x multi's batch per rank (weak), multi's global batch (strong).
 * -ERANGE for a node count the plan does not cable, -EINVAL where there
 * is nothing to predict from.
 */
struct ddp_prediction {
	unsigned nodes, ranks;
	double busbw_gbytes_per_second; /* the plan's, for the all-reduce */
	double step_us, comm_us, compute_us;
	double rest_us; /* carried over from multi: step - compute - comm there */
	double samples_per_second, speedup, efficiency_ratio;
};

int ddp_predict(const struct ddp_measure *base, const struct ddp_measure *multi,
		enum ddp_scaling scaling, enum ddp_fabric_plan plan, unsigned nodes,
		struct ddp_prediction *ret);

/*
 * The size 'bench ddp' asks 'bench nccl' about: the mean bucket, gradient
 * bytes over the buckets all-reduced per step, rounded down to whole
 * elements of elem_bytes (at least one); all the bytes where no bucket was
 * counted.
 */
uint64_t ddp_bucket_bytes(double grad_bytes, unsigned buckets, unsigned elem_bytes);

/*
 * The in-place bus bandwidth (10^9 B/s) of the row for bytes in 'bench
 * nccl' output (nccl-tests' table: size count type redop root, then time
 * algbw busbw #wrong out of place and the same in place), whatever each
 * line starts with (a launcher's "[0] ").  DDP all-reduces each bucket in
 * place.  -ENOENT when no such row has a number there.
 */
int ddp_nccl_row_busbw(const char *out, uint64_t bytes, double *ret);

/*
 * Bytes one rank needs: weights, gradients, DDP's buckets (a copy of the
 * gradients) and the optimizer's momentum (4 copies of params x elem
 * bytes), plus the activations kept for the backward pass
 * (activation_elems per sample x batch x elem bytes x 2: forward and
 * gradient).  Saturates at INT64_MAX.
 */
int64_t ddp_rank_bytes(int64_t params, unsigned elem_bytes, int64_t activation_elems,
		       unsigned batch);

/*
 * Whether ranks of rank_bytes each fit in available bytes with a margin
 * (a fraction, 0..1, of available kept free).
 */
bool ddp_fits(int64_t rank_bytes, unsigned ranks, int64_t available, double margin);

/*
 * The model shapes for a parameter count: mlp, a stack of DDP_MLP_LAYERS
 * square layers of width w (params = layers x (w^2 + w)); transformer,
 * DDP_TF_LAYERS encoder layers of width d, a multiple of 8 (about 12 d^2
 * each), over DDP_TF_SEQ tokens.  The activations per sample that
 * ddp_rank_bytes() counts.  -EINVAL for a count too small for the model.
 */
#define DDP_MLP_LAYERS 4
#define DDP_TF_LAYERS  2
#define DDP_TF_SEQ     32
enum ddp_model_kind {
	DDP_MODEL_MLP,
	DDP_MODEL_TRANSFORMER
};
struct ddp_shape {
	unsigned width;
	int64_t params;		  /* what that width gives */
	int64_t activation_elems; /* per sample */
};
int ddp_shape(enum ddp_model_kind kind, int64_t params, struct ddp_shape *ret);

#endif
