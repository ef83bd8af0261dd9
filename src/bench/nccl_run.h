/*
 * nccl_run.h - one rank of 'sparkctl bench nccl': load CUDA and NCCL, join
 * the other ranks (rendezvous.h), sweep the sizes of each collective,
 * time, check, and (rank 0) print the nccl-tests table.
 */
#ifndef SPARKCTL_NCCL_RUN_H
#define SPARKCTL_NCCL_RUN_H

#include "sparkctl.h"
#include "bench/nccl_perf.h"
#include "lib/strbuf.h"

/* Where bench nccl checks the results: --check-on. */
enum nccl_check_on {
	NCCL_CHECK_AUTO, /* on the GPU, else on the host with a note */
	NCCL_CHECK_GPU,	 /* on the GPU or not at all (exit 3) */
	NCCL_CHECK_HOST, /* on the host: copies and the CPU, as a reference */
};

struct nccl_bench_opts {
	enum perf_coll colls[PERF_NR_COLLS];
	size_t nr_colls;
	uint64_t min_bytes, max_bytes;
	bool max_given;	 /* -e given: refused above the memory bound unless force */
	uint64_t factor; /* > 1: multiply; else add step */
	uint64_t step;
	unsigned iters;	  /* fixed mode: timed operations per half-row */
	unsigned warmup;  /* per size, doubling, before the sweep */
	double precision; /* > 0: adaptive mode, relative 95% half-width */
	enum perf_dtype dtype;
	enum perf_redop redop;
	int root;
	bool check;
	enum nccl_check_on check_on; /* where the check runs */
	bool cputime;		     /* the table's time columns: the host's time to issue (-C 1) */
	bool force;
	enum perf_bind bind;
	const char *host_root; /* the host's sysfs and procfs: "/", or a tree for tests */
	unsigned timeout_ms;   /* a collective, or a rendezvous step */
	const char *json_path; /* NULL: none; "-": stdout instead of the table */
	const char *version;   /* sparkctl's, for the header */
};

/* A rank's steps, for SPARKCTL_BENCH_STEPS=1 (where a run's time goes). */
enum nccl_step {
	NCCL_STEP_LIBRARIES, /* CUDA and NCCL loaded, the context made, the kernels compiled */
	NCCL_STEP_BUFFERS,   /* the ranks agreed on the memory bound; buffers allocated */
	NCCL_STEP_COMM,	     /* the communicator made */
	NCCL_STEP_SWEEP,     /* every collective timed and checked, the report written */
	NCCL_STEP_DESTROYED, /* the communicator destroyed (or left to the process's end) */
	NCCL_STEP_END,	     /* everything released (or left) */
	NCCL_NR_STEPS,
};

struct nccl_bench_rank {
	int rank, world_size;
	double *step_seconds;	/* NULL, or NCCL_NR_STEPS: when each step ended, from the start */
	int device;		/* CUDA ordinal; -1: the local rank */
	int listen_fd;		/* rank 0: its rendezvous socket, or -1 to bind rendezvous */
	const char *rendezvous; /* "HOST:PORT" */
	bool destroy;		/* release the GPU, NCCL and CUDA before returning, even after a run
				   that ended well (SPARKCTL_BENCH_DESTROY=1) */
};

/* What every rank tells rank 0 about itself, fixed-size for rdv_gather(). */
struct nccl_rank_info {
	int32_t pid, device, pci_domain, pci_bus, pci_device;
	char name[96];	/* the GPU's */
	char path[480]; /* the path NCCL took, in words (perf_nccl_path_describe()) */
	char cpus[128]; /* the CPUs it runs on, a kernel CPU list */
};

enum nccl_bench_status {
	NCCL_BENCH_OK,
	NCCL_BENCH_ERROR,
	NCCL_BENCH_UNAVAILABLE, /* no GPU, no NCCL, not enough devices */
	NCCL_BENCH_WRONG,	/* it ran, and some values were wrong */
	NCCL_BENCH_TIMEOUT,	/* a collective did not finish: aborted */
	NCCL_BENCH_BAD_SIZE,	/* -e above the memory bound without --force */
};

/*
 * Run this rank.  out gets the table (rank 0).  Returns the status; a
 * one-line reason in err when it is not OK (or not WRONG).
 *
 * After a run that ended well (OK or WRONG), unless me->destroy, the
 * communicator, the GPU's memory, the context and the libraries are left
 * live for the end of the process: ncclCommDestroy alone waits up to half a
 * second for NCCL's proxy threads to wake, and the kernel frees all of it
 * at exit as for any process.  The caller must then end the process
 * without the libraries' exit handlers (which would tear down CUDA under
 * NCCL's running threads): nccl_bench_left_live() says so.
 */
enum nccl_bench_status nccl_bench_run(const struct nccl_bench_opts *opts,
				      const struct nccl_bench_rank *me, FILE *out,
				      struct strbuf *err);
bool nccl_bench_left_live(void);

#endif
