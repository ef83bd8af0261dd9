/*
 * nccl_view.h - what 'sparkctl bench nccl' reports: nccl-tests' table
 * (v2.19 format, byte for byte, so that tools which parse nccl-tests'
 * output parse ours), streamed as the sweep goes, and the JSON report
 * (docs/bench.md), from the same calls.
 *
 * A run's report: nccl_report_start() once, then for each collective
 * nccl_report_test_begin(), nccl_report_paths() (the path NCCL took is
 * known after the warm-up), a nccl_report_row() per size,
 * nccl_report_test_end(); then nccl_report_finish().  The text goes to the
 * FILE as each call makes it; the JSON is kept until the finish.  The
 * header of each collective repeats the run's settings and devices, as
 * nccl-tests prints them; the JSON has them once.
 */
#ifndef SPARKCTL_NCCL_VIEW_H
#define SPARKCTL_NCCL_VIEW_H

#include "sparkctl.h"
#include "bench/nccl_run.h"
#include "view/emit.h"

/* The version of bench nccl's JSON (docs/schemas/bench-nccl.schema.json). */
#define NCCL_REPORT_SCHEMA_VERSION 1

/* The run as the report shows it (rank 0 knows all of it). */
struct nccl_report_run {
	const struct nccl_bench_opts *o;
	int nranks;
	uint64_t max_bytes;	  /* after the memory bound */
	const char *nccl_version; /* "2.28.9" */
	int cuda_driver;	  /* cuDriverGetVersion(): 13000 */
	const char *allocator;	  /* "ncclMemAlloc" or "cuMemAlloc" */
	const char *check_on;	  /* "gpu" or "host"; NULL without the check */
	const char *check_note;	  /* why on the host after all, or NULL */
	const struct nccl_rank_info *ranks;
	const char *const *hostnames; /* per rank */
};

struct nccl_report {
	FILE *out;	      /* the table, or NULL */
	struct strbuf text;   /* what the table emitter made, until it is written */
	struct emitter table; /* text */
	struct emitter json;  /* the JSON report, when one is wanted */
	bool want_json;
};

void nccl_report_init(struct nccl_report *rp, FILE *out, bool want_json);
void nccl_report_release(struct nccl_report *rp);

/* A line of the table's preamble only ("# Reducing maxBytes ..."). */
void nccl_report_note(struct nccl_report *rp, const char *fmt, ...) ATTR_PRINTF(2, 3);
/* The run's versions, settings and devices (JSON). */
void nccl_report_start(struct nccl_report *rp, const struct nccl_report_run *run);
/* A collective: its header with the settings and the devices (text), its entry (JSON). */
void nccl_report_test_begin(struct nccl_report *rp, const struct nccl_report_run *run,
			    enum perf_coll coll);
/* The path NCCL took on each rank: once when every rank took the same, else per rank. */
void nccl_report_paths(struct nccl_report *rp, const struct nccl_report_run *run);
void nccl_report_row(struct nccl_report *rp, const struct perf_row *row);
/* The footer: tests with wrong values (sizes x placements) and the mean busbw. */
void nccl_report_test_end(struct nccl_report *rp, enum perf_coll coll, unsigned bad_tests,
			  double avg_busbw);
/* Save the JSON report as path ('-': stdout), with the run's verdict.  -errno, err. */
int nccl_report_finish(struct nccl_report *rp, unsigned bad_tests, const char *path,
		       struct strbuf *err);

/* The pieces of the table, for one emitter (the unit tests print them alone). */
void nccl_table_header(struct emitter *e, bool cputime);
void nccl_table_row(struct emitter *e, const struct perf_row *row);
void nccl_table_footer(struct emitter *e, const char *test_name, unsigned bad_tests,
		       double avg_busbw);

#endif
