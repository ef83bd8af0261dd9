/*
 * nccl_rank.h - one rank of 'sparkctl bench nccl', as the files that run
 * it share it: nccl_run.c (setting up, the sweep, the end), nccl_measure.c
 * (issuing, timing and checking operations) and nccl_bind.c (the rank's
 * CPUs and the memory it may use).  Internal: nccl_run.h is the API.
 */
#ifndef SPARKCTL_NCCL_RANK_H
#define SPARKCTL_NCCL_RANK_H

#include "sparkctl.h"
#include "bench/nccl_check.h"
#include "bench/nccl_run.h"
#include "bench/rendezvous.h"
#include "lib/clock.h"
#include "lib/rootfs.h"
#include "lib/strbuf.h"
#include "nv/cuda.h"
#include "nv/nccl.h"

struct nccl_report;

/* The GPU this rank drives, and what NCCL runs on it. */
struct nccl_gpu {
	struct cuda cuda;
	struct nccl nccl;
	int ordinal; /* CUDA's device number */
	cu_device dev;
	cu_context ctx;
	bool ctx_retained;
	cu_stream stream;
	/*
	 * The adaptive loop's, made at its first use: a ring of one per
	 * operation in flight and one more.
	 */
	cu_event events[PERF_ADAPTIVE_AHEAD + 1];
	unsigned nr_events;
	nccl_comm comm;
	cu_deviceptr sendbuf, recvbuf;
	uint64_t max_bytes;	     /* the largest size of the sweep, after the memory bound */
	struct nccl_kernels kernels; /* the check's, when check_on_gpu */
	bool check_on_gpu;
	void *host_in, *host_out; /* the check's data, on the host, when not on the GPU */
	struct strbuf check_note; /* why the check runs on the host after all */
};

/* The ranks together: the rendezvous, and what each told rank 0. */
struct nccl_team {
	struct rdv *rdv;
	int rank, n;
	struct nccl_rank_info info;
	struct nccl_rank_info *infos; /* rank 0: every rank's */
	const char **hostnames;	      /* rank 0: every rank's, owned by rdv */
};

struct bench {
	const struct nccl_bench_opts *o;
	struct strbuf *err; /* why this rank failed */
	struct nccl_gpu gpu;
	struct nccl_team team;
	struct nccl_report *report; /* rank 0's table and JSON; NULL on other ranks */
	struct rootfs host;	    /* o->host_root, for sysfs and procfs */
	bool host_open;
	char *log_path;		    /* NCCL's log, ours to read and remove */
	struct strbuf nccl_version; /* "2.28.9", for the report */
	unsigned seed;		    /* of the check data: one more per checked operation */
	bool timed_out;		    /* a collective did not finish: the communicator was aborted */
	uint64_t start_ns;	    /* monotonic, when the rank began */
	double *step_seconds;	    /* the caller's, or NULL */
};

/* Step s ended now. */
static inline void nccl_step_done(struct bench *b, enum nccl_step s)
{
	if (b->step_seconds)
		b->step_seconds[s] = (double)(monotonic_ns() - b->start_ns) / 1e9;
}

static inline void *devptr(cu_deviceptr base, size_t offset)
{
	return (void *)(uintptr_t)(base + offset);
}

/* nccl_run.c: failures as messages (-EIO), and every rank learning the first one. */
int nccl_cu_fail(struct bench *b, cu_result cr, const char *what);
int nccl_fail(struct bench *b, nccl_result r, const char *what);
void nccl_add_warning(struct bench *b);
int nccl_sync_default_stream(struct bench *b);
/*
 * Every rank reports how its step went (r); all learn the first failure,
 * so that no rank waits for one that has given up.  A failure elsewhere
 * becomes this rank's error.
 */
int nccl_agree(struct bench *b, int r);

/* nccl_measure.c */
/* Every size of the sweep, doubling, --warmup times each (as nccl-tests warms up). */
int nccl_warm_up(struct bench *b, enum perf_coll coll);
/*
 * One row of the table: both placements of coll at size bytes, timed,
 * checked with -c, averaged over the ranks.  *bad counts the halves with
 * wrong values.
 */
int nccl_measure_row(struct bench *b, enum perf_coll coll, uint64_t size, struct perf_row *row,
		     unsigned *bad);

/* nccl_bind.c */
/* --bind: the CPUs this rank runs on; the rank's info gets them, for the report. */
void nccl_bind_rank(struct bench *b);
/* The largest buffers this rank may have (free device memory, MemAvailable on unified memory). */
int nccl_memory_bound(struct bench *b, uint64_t *ret);

#endif
