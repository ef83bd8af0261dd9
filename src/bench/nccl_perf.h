/*
 * nccl_perf.h - what 'sparkctl bench nccl' computes, apart from running
 * it: the collectives and their buffer sizes, bus-bandwidth factors, the
 * size sweep, nccl-tests' number cells, the check data, the CPU binding's
 * choice and the path in NCCL's log.  Pure functions; the run is in
 * nccl_run.c, the table and the JSON in view/nccl_view.c.
 */
#ifndef SPARKCTL_NCCL_PERF_H
#define SPARKCTL_NCCL_PERF_H

#include "sparkctl.h"

#include <sched.h>
#include "lib/strbuf.h"

enum perf_coll {
	PERF_ALL_REDUCE,
	PERF_ALL_GATHER,
	PERF_REDUCE_SCATTER,
	PERF_BROADCAST,
	PERF_REDUCE,
	PERF_ALLTOALL,
	PERF_SENDRECV,
	PERF_NR_COLLS,
};

struct perf_coll_info {
	const char *name;      /* all_reduce: the --op name */
	const char *test_name; /* all_reduce_perf: nccl-tests' program */
	bool has_redop;
	bool has_root;
};

const struct perf_coll_info *perf_coll_info(enum perf_coll coll);
/* -EINVAL for an unknown name. */
int perf_coll_from_name(const char *name, enum perf_coll *ret);
/*
 * busbw = algbw * factor: what each rank's link must carry for the
 * collective, comparable across rank counts (nccl-tests' PERFORMANCE.md).
 */
double perf_busbw_factor(enum perf_coll coll, int nranks);

/* The data types, numbered as ncclDataType_t. */
enum perf_dtype {
	PERF_INT8 = 0,
	PERF_UINT8 = 1,
	PERF_INT32 = 2,
	PERF_UINT32 = 3,
	PERF_INT64 = 4,
	PERF_UINT64 = 5,
	PERF_HALF = 6,
	PERF_FLOAT = 7,
	PERF_DOUBLE = 8,
	PERF_BFLOAT16 = 9,
	PERF_NR_DTYPES = 10,
};
const char *perf_dtype_name(enum perf_dtype t);
size_t perf_dtype_size(enum perf_dtype t);
int perf_dtype_from_name(const char *name, enum perf_dtype *ret);

/* The reduction operations, numbered as ncclRedOp_t. */
enum perf_redop {
	PERF_SUM = 0,
	PERF_PROD = 1,
	PERF_MAX = 2,
	PERF_MIN = 3,
	PERF_AVG = 4,
	PERF_NR_REDOPS = 5,
};
const char *perf_redop_name(enum perf_redop op);
int perf_redop_from_name(const char *name, enum perf_redop *ret);

/*
 * The buffers of one collective at one size, as nccl-tests lays them out:
 * per-rank chunks of all_gather, reduce_scatter and alltoall are rounded
 * down to 16 bytes.  Counts are in elements.
 */
struct perf_layout {
	size_t param_count;  /* the count argument of the NCCL call */
	size_t send_count;   /* elements of the send buffer */
	size_t recv_count;   /* elements of the receive buffer */
	size_t send_inplace; /* in place: send = recv + rank * this (elements) */
	size_t recv_inplace; /* in place: recv = send + rank * this (elements) */
	size_t size_bytes;   /* the size column: the larger of the two buffers */
};
void perf_layout(enum perf_coll coll, size_t bytes, size_t elt_size, int nranks,
		 struct perf_layout *ret);

/*
 * A size with an optional binary suffix: "8", "64K", "128M", "1G",
 * "1.5M".  -EINVAL when malformed or 0, -ERANGE above 2^62.
 */
int perf_parse_size(const char *s, uint64_t *ret);
/* The size after cur in a sweep: cur * factor when factor > 1, else cur + step. */
uint64_t perf_sweep_next(uint64_t cur, uint64_t factor, uint64_t step);

/*
 * nccl-tests' number cell: value in width characters with 2, 1 or 0
 * decimals, whichever fits first, else in exponent form.  buf has room
 * for width + 1.
 */
void perf_format_number(char *buf, size_t size, double value, int width);

/*
 * Adaptive iterations (--precision): fixed mode's loop, only as long as it
 * needs to be.  Where fixed mode's loop of iters operations would last
 * PERF_ADAPTIVE_MIN_FIXED_US or more (shorter ones run it as it is), the
 * operations go back to back, PERF_ADAPTIVE_AHEAD of them issued ahead,
 * with an event after each, so the loop never drains until it stops.  Its
 * figure after m operations is fixed mode's for m: the time from the
 * loop's start to the end of the mth, over m.  It stops when, on every
 * rank:
 *  - the 95% confidence half-width (Student's t) of the mean time of the
 *    operations after the first, PERF_ADAPTIVE_MIN_OPS of them or more, is
 *    within the precision of that mean; and
 *  - the first operation's excess over that mean (the loop's start: the
 *    first launch, NCCL's threads waking, a network's pipeline filling)
 *    weighs at most PERF_ADAPTIVE_START_SHARE of the loop's time, so that
 *    the figure is within that of fixed mode's, whose loop carries the
 *    same start over iters operations;
 * or when it has issued iters operations, which then all count.
 */
#define PERF_ADAPTIVE_MIN_FIXED_US 20000.0
#define PERF_ADAPTIVE_MIN_OPS	   3
#define PERF_ADAPTIVE_START_SHARE  0.005
#define PERF_ADAPTIVE_AHEAD	   3

/* Whether a loop of iters operations of op_us each is long enough to adapt. */
bool perf_adaptive_loop(double op_us, unsigned iters);

/* The times of an adaptive loop's operations so far. */
struct perf_loop {
	unsigned m;	   /* operations ended */
	double first_us;   /* the first's, from the loop's start */
	double sum, sumsq; /* the others' */
};
void perf_loop_add(struct perf_loop *l, double op_us);
/* The figure so far: per operation, from the loop's start (0 before any). */
double perf_loop_time(const struct perf_loop *l);
/*
 * How far the loop is from its end, as shares of its figures: [0] the
 * half-width over the mean (INFINITY with fewer than PERF_ADAPTIVE_MIN_OPS
 * after the first), [1] the first operation's excess over the loop's time.
 * The ranks take the largest of each before perf_loop_done() decides.
 */
void perf_loop_shares(const struct perf_loop *l, double shares[2]);
bool perf_loop_done(const double shares[2], double precision);
/* Student's t for a two-sided 95% interval with df degrees of freedom (df 0: infinity). */
double perf_t95(unsigned df);

/* One half of a row: out-of-place or in-place. */
struct perf_result {
	double time_us;	    /* per operation, averaged over the ranks */
	double cpu_time_us; /* the host's time to issue one, averaged over the ranks */
	double algbw;	    /* GB/s, 1e9 bytes */
	double busbw;
	int64_t wrong;	/* wrong elements over all ranks; -1 when not checked */
	unsigned iters; /* timed operations */
};

struct perf_row {
	uint64_t size;
	uint64_t count;
	const char *type;
	const char *redop;
	int root;
	struct perf_result out_of_place, in_place;
	bool cputime; /* the time columns show cpu_time_us (nccl-tests' -C 1) */
};

/* algbw and busbw of one result from its time. */
void perf_bandwidth(enum perf_coll coll, uint64_t size_bytes, int nranks, double time_us,
		    double *algbw, double *busbw);

/*
 * Check data.  The value rank contributes at element i: small integers
 * chosen so that every reduction of op over nranks is exact in every type
 * whatever order NCCL adds in (a sum stays below 2^8 for bfloat16, a
 * product is at most 2).  Collectives that do not reduce use PERF_MAX's
 * pattern.
 */
double perf_input_value(enum perf_redop op, enum perf_dtype t, int nranks, int rank, uint64_t i,
			unsigned seed);
/* The modulus of op's values (0 for prod, whose values are 1 and 2). */
uint64_t perf_input_span(enum perf_redop op, enum perf_dtype t, int nranks);
/* op of every rank's perf_input_value() at element i. */
double perf_reduced_value(enum perf_redop op, enum perf_dtype t, int nranks, uint64_t i,
			  unsigned seed);
/* Element i of a buffer of type t, as a double and back (exact for the values above). */
void perf_store(enum perf_dtype t, void *buf, size_t i, double v);
double perf_load(enum perf_dtype t, const void *buf, size_t i);
/* How far a right value may be off: 0 (exact), except avg of floating types (NCCL pre-divides). */
double perf_value_tolerance(enum perf_redop op, enum perf_dtype t);
/* Whether got is right. */
bool perf_value_ok(enum perf_redop op, enum perf_dtype t, double got, double want);

/*
 * The check of one collective's output on one rank, as the check kernels
 * (nccl_check.ptx) take it: element j should hold, by source,
 *   reduced:   pattern folded over every rank's value at base + j;
 *   one rank:  src_rank's value at base + j;
 *   blocks:    rank j / chunk's value at base + j % chunk.
 * The numbers are those of the kernels' parameters.
 */
enum perf_check_source {
	PERF_CHECK_REDUCED = 0,
	PERF_CHECK_ONE_RANK = 1,
	PERF_CHECK_BLOCKS = 2,
};

struct perf_check {
	enum perf_dtype type;
	enum perf_redop pattern; /* of the values; the reduction when reduced */
	int nranks;
	unsigned seed;
	uint64_t span; /* perf_input_span() of pattern */
	enum perf_check_source source;
	int src_rank;
	uint64_t chunk, base; /* in elements */
	double tol;	      /* perf_value_tolerance(), 0 when exact */
};

/*
 * The check of coll's output on rank (root: of broadcast and reduce; chunk:
 * the per-rank count of all_gather, reduce_scatter and alltoall).
 */
void perf_check_init(struct perf_check *c, enum perf_coll coll, enum perf_dtype t,
		     enum perf_redop redop, int nranks, int rank, int root, size_t chunk,
		     unsigned seed);
/* The value rank sends at element i. */
uint64_t perf_check_value(const struct perf_check *c, int rank, uint64_t i);
/* What element j of the output should hold, before the round trip through the type. */
double perf_check_expected(const struct perf_check *c, uint64_t j);
/* rank's input: count elements of c->type. */
void perf_check_fill(const struct perf_check *c, int rank, void *buf, size_t count);
/* The elements of an output of count elements that are wrong. */
uint64_t perf_check_count(const struct perf_check *c, const void *buf, size_t count);

/*
 * A kernel CPU list ("0-15,32-47\n", as sysfs local_cpulist has it) into
 * set.  -EINVAL when malformed, -ERANGE for a CPU beyond the set.
 */
int perf_parse_cpulist(const char *s, cpu_set_t *set);
/* set as a kernel CPU list, "0-3,8" (no newline); "" when empty. */
void perf_format_cpulist(const cpu_set_t *set, struct strbuf *out);

/* Where a rank runs: --bind. */
enum perf_bind {
	PERF_BIND_NUMA, /* the CPUs of its GPU's NUMA node (local_cpulist) */
	PERF_BIND_CORE, /* one physical core of those, one per local rank (the default) */
	PERF_BIND_NONE, /* wherever it was started */
};
int perf_bind_from_name(const char *name, enum perf_bind *ret);
const char *perf_bind_name(enum perf_bind bind);

/*
 * The index-th physical core (modulo their number) among the CPUs of
 * allowed, as mpirun's --bind-to core hands one to each local rank:
 * fastest first, so that a hybrid CPU's performance cores come before its
 * efficiency cores, then in CPU order.  core_of[cpu] names the core of each
 * CPU (the first CPU of its thread_siblings_list), -1 when unknown: a core
 * of its own.  capacity[cpu] is how fast a CPU can run in any unit, 0 when
 * unknown; a core is as fast as its first CPU.  *out is that core's CPUs
 * within allowed; empty when allowed is.
 */
void perf_pick_core(const cpu_set_t *allowed, const int *core_of, const unsigned long *capacity,
		    unsigned index, cpu_set_t *out);

/* Where NCCL's traffic went, read from its INFO log (NCCL_DEBUG=INFO, subsystems INIT,NET). */
struct perf_nccl_path {
	char network[16];    /* "IB", "Socket", or "" when NCCL named none */
	char devices[160];   /* "rocep1s0f1:1/RoCE roceP2p1s0f1:1/RoCE" or "lo" */
	int gdr;	     /* GPUDirect RDMA: 1 on, 0 off, -1 not said */
	char transports[96]; /* the channels' transports: "P2P/CUMEM", "NET/IB/0", "SHM" */
	int channels;	     /* collective channels, -1 not said */
};
void perf_parse_nccl_log(const char *log, struct perf_nccl_path *ret);
/*
 * One line: "network IB rocep1s0f1:1/RoCE, GPUDirect RDMA off, 2 channels,
 * via NET/IB/0"; when no channel takes the network, "within the node: 24
 * channels via P2P/CUMEM/read (network Socket eth0 unused)".
 */
void perf_nccl_path_describe(const struct perf_nccl_path *p, struct strbuf *out);

#endif
