/*
 * nccl_view.c - bench nccl's table and JSON report.
 *
 * Each piece is one function of an emitter, run once for the table (if
 * there is one) and once for the JSON (if wanted); the table's text is
 * written out after each piece, so that a long sweep shows its rows as
 * they come.
 */
#include "sparkctl.h"

#include "view/nccl_view.h"
#include "view/progress.h"

void nccl_report_init(struct nccl_report *rp, FILE *out, bool want_json)
{
	memset(rp, 0, sizeof(*rp));
	rp->out = out;
	rp->want_json = want_json;
	strbuf_init(&rp->text, 0);
	emit_init(&rp->table, EMIT_TEXT, &rp->text, false);
	emit_init(&rp->json, EMIT_JSON, NULL, false);
	emit_value(&rp->json, "schema_version", jint(NCCL_REPORT_SCHEMA_VERSION), NULL);
}

void nccl_report_release(struct nccl_report *rp)
{
	emit_release(&rp->table);
	emit_release(&rp->json);
	strbuf_release(&rp->text);
}

/*
 * Write out what the table emitter made.  The progress line (on stderr,
 * perhaps the same terminal) is erased first, so that no row holds a
 * piece of it; the sweep draws it again before the next size.
 */
static void flush(struct nccl_report *rp)
{
	if (rp->out && rp->text.len) {
		progress_hide();
		fputs(rp->text.buf, rp->out);
		fflush(rp->out);
	}
	strbuf_reset(&rp->text);
}

void nccl_report_note(struct nccl_report *rp, const char *fmt, ...)
{
	va_list ap;

	if (!rp->out)
		return;
	va_start(ap, fmt);
	strbuf_vaddf(&rp->text, fmt, ap);
	va_end(ap);
	flush(rp);
}

/* ---- the table ---- */

void nccl_table_header(struct emitter *e, bool cputime)
{
	const char *time = cputime ? "cputime" : "time";

	emit_text(e,
		  "# %10s  %12s  %8s  %6s  %6s           out-of-place                       "
		  "in-place          \n",
		  "", "", "", "", "");
	emit_text(e, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s \n",
		  "size", "count", "type", "redop", "root", time, "algbw", "busbw", "#wrong", time,
		  "algbw", "busbw", "#wrong");
	emit_text(e, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s \n",
		  "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
		  "(GB/s)", "");
}

/* One half of a row: the table shows the time (or the host's time to issue, -C 1). */
static void table_half(struct emitter *e, const char *key, const struct perf_result *r,
		       bool cputime)
{
	char num[16], time[24], algbw[24], busbw[24], wrong[24];

	perf_format_number(num, 8, cputime ? r->cpu_time_us : r->time_us, 7);
	snprintf(time, sizeof(time), "  %7s", num);
	perf_format_number(num, 7, r->algbw, 6);
	snprintf(algbw, sizeof(algbw), "  %6s", num);
	perf_format_number(num, 7, r->busbw, 6);
	snprintf(busbw, sizeof(busbw), "  %6s", num);
	if (r->wrong < 0)
		snprintf(wrong, sizeof(wrong), "    N/A");
	else
		snprintf(wrong, sizeof(wrong), "  %6g", (double)r->wrong);
	emit_object_open(e, key);
	emit_value(e, "time_us", jreal_rounded(r->time_us, 2), cputime ? NULL : time);
	emit_value(e, "cpu_time_us", jreal_rounded(r->cpu_time_us, 2), cputime ? time : NULL);
	emit_value(e, "algbw_gbytes_per_second", jreal_rounded(r->algbw, 2), algbw);
	emit_value(e, "busbw_gbytes_per_second", jreal_rounded(r->busbw, 2), busbw);
	emit_value(e, "wrong", jint_known(r->wrong), wrong);
	emit_value(e, "iterations", jint(r->iters), NULL);
	emit_close(e);
}

void nccl_table_row(struct emitter *e, const struct perf_row *row)
{
	emit_array_open(e, "results");
	emit_object_open(e, NULL);
	emit_int(e, "size_bytes", "%12" PRId64, (int64_t)row->size);
	emit_int(e, "count", "  %12" PRId64, (int64_t)row->count);
	emit_str(e, "type", "  %8s", row->type);
	emit_str(e, "redop", "  %6s", row->redop);
	emit_int(e, "root", "  %6" PRId64, row->root);
	table_half(e, "out_of_place", &row->out_of_place, row->cputime);
	table_half(e, "in_place", &row->in_place, row->cputime);
	emit_text(e, "\n");
	emit_close(e);
	emit_close(e);
}

void nccl_table_footer(struct emitter *e, const char *test_name, unsigned bad_tests,
		       double avg_busbw)
{
	char text[64];

	snprintf(text, sizeof(text), "# %-20s : %u %s\n", "Out of bounds values", bad_tests,
		 bad_tests ? "FAILED" : "OK");
	emit_value(e, "out_of_bounds", jint(bad_tests), text);
	snprintf(text, sizeof(text), "# %-20s : %g \n", "Avg bus bandwidth", avg_busbw);
	emit_value(e, "average_busbw_gbytes_per_second", jreal_rounded(avg_busbw, 3), text);
	emit_text(e, "#\n# Collective test concluded: %s\n", test_name);
}

/* ---- the run ---- */

static void emit_config(const struct nccl_report_run *run, struct emitter *e)
{
	const struct nccl_bench_opts *o = run->o;

	emit_object_open(e, "config");
	emit_value(e, "nranks", jint(run->nranks), NULL);
	emit_value(e, "minimum_bytes", jint((int64_t)o->min_bytes), NULL);
	emit_value(e, "maximum_bytes", jint((int64_t)run->max_bytes), NULL);
	if (o->factor > 1)
		emit_value(e, "step_factor", jint((int64_t)o->factor), NULL);
	else
		emit_value(e, "step_bytes", jint((int64_t)o->step), NULL);
	emit_value(e, "warmup_iters", jint(o->warmup), NULL);
	if (o->precision > 0)
		emit_value(e, "precision_ratio", jreal(o->precision), NULL);
	else
		emit_value(e, "iterations", jint(o->iters), NULL);
	emit_value(e, "datatype", jstr(perf_dtype_name(o->dtype)), NULL);
	emit_value(e, "redop", jstr(perf_redop_name(o->redop)), NULL);
	emit_value(e, "root", jint(o->root), NULL);
	emit_value(e, "validation", jbool(o->check), NULL);
	emit_value(e, "report_cputime", jbool(o->cputime), NULL);
	emit_value(e, "bind", jstr(perf_bind_name(o->bind)), NULL);
	emit_value(e, "op_timeout_seconds", jint(o->timeout_ms / 1000), NULL);
	emit_value(e, "allocator", jstr(run->allocator), NULL);
	emit_value(e, "check_on", jstr(run->check_on), NULL);
	if (run->check_note)
		emit_value(e, "check_note", jstr(run->check_note), NULL);
	emit_close(e);
}

static void emit_devices(const struct nccl_report_run *run, struct emitter *e)
{
	emit_text(e, "# Using devices\n");
	emit_array_open(e, "devices");
	for (int r = 0; r < run->nranks; r++) {
		const struct nccl_rank_info *ri = &run->ranks[r];
		char pci[32];
		snprintf(pci, sizeof(pci), "%04x:%02x:%02x.0", (unsigned)ri->pci_domain,
			 (unsigned)ri->pci_bus, (unsigned)ri->pci_device);
		emit_object_open(e, NULL);
		emit_int(e, "rank", "#  Rank %2" PRId64 " Group  0", r);
		emit_int(e, "pid", " Pid %6" PRId64, ri->pid);
		emit_str(e, "hostname", " on %10s", run->hostnames[r]);
		emit_int(e, "device", " device %2" PRId64, ri->device);
		emit_str(e, "pci", NULL, pci);
		emit_text(e, " [%04x:%02x:%02x]", (unsigned)ri->pci_domain, (unsigned)ri->pci_bus,
			  (unsigned)ri->pci_device);
		emit_str(e, "name", " %s\n", ri->name);
		emit_str(e, "cpus", NULL, ri->cpus);
		emit_close(e);
	}
	emit_close(e);
}

void nccl_report_start(struct nccl_report *rp, const struct nccl_report_run *run)
{
	struct emitter *e = &rp->json;

	if (!rp->want_json)
		return;
	emit_value(e, "sparkctl_version", jstr(run->o->version), NULL);
	emit_value(e, "nccl_version", jstr(run->nccl_version), NULL);
	emit_config(run, e);
	emit_devices(run, e);
	emit_array_open(e, "tests");
	emit_close(e);
}

/* nccl-tests' header: the versions, the settings of the sweep, the devices (text). */
static void table_preamble(const struct nccl_report_run *run, enum perf_coll coll,
			   struct emitter *e)
{
	const struct nccl_bench_opts *o = run->o;

	emit_text(e, "# sparkctl bench nccl %s nccl-library=%s cuda-driver=%d.%d\n", o->version,
		  run->nccl_version, run->cuda_driver / 1000, run->cuda_driver % 1000 / 10);
	emit_text(e, "# Collective test starting: %s\n", perf_coll_info(coll)->test_name);
	emit_text(e,
		  "# nThread 1 nGpus 1 minBytes %" PRIu64 " maxBytes %" PRIu64 " step: %" PRIu64
		  "(%s) warmup iters: %u iters: %u agg iters: 1 validation: %d graph: 0 unalign: "
		  "0\n",
		  o->min_bytes, run->max_bytes, o->factor > 1 ? o->factor : o->step,
		  o->factor > 1 ? "factor" : "bytes", o->warmup, o->precision > 0 ? 0 : o->iters,
		  o->check ? 1 : 0);
	if (run->check_on)
		emit_text(e, "# Check: on the %s%s%s%s\n",
			  streq(run->check_on, "gpu") ? "GPU" : "host", run->check_note ? " (" : "",
			  run->check_note ? run->check_note : "", run->check_note ? ")" : "");
	if (o->precision > 0)
		emit_text(e,
			  "# Adaptive iterations: where %u operations take 20 ms or more, the loop "
			  "stops once the 95%% confidence half-width of the time is within %g%% "
			  "and its start weighs under 0.5%%\n",
			  o->iters, o->precision * 100);
	emit_text(e, "#\n");
	emit_devices(run, e);
}

void nccl_report_test_begin(struct nccl_report *rp, const struct nccl_report_run *run,
			    enum perf_coll coll)
{
	const struct perf_coll_info *ci = perf_coll_info(coll);

	if (rp->out) {
		table_preamble(run, coll, &rp->table);
		flush(rp);
	}
	if (rp->want_json) {
		emit_array_open(&rp->json, "tests");
		emit_object_open(&rp->json, NULL);
		emit_value(&rp->json, "op", jstr(ci->name), NULL);
		emit_value(&rp->json, "test", jstr(ci->test_name), NULL);
	}
}

static void emit_paths(const struct nccl_report_run *run, struct emitter *e)
{
	bool same = true;

	for (int r = 1; r < run->nranks; r++)
		same = same && streq(run->ranks[r].path, run->ranks[0].path);
	emit_array_open(e, "nccl_path");
	for (int r = 0; r < run->nranks; r++) {
		struct strbuf line = STRBUF_INIT;
		if (!same)
			strbuf_addf(&line, "# NCCL path of rank %-2d : %s\n", r,
				    run->ranks[r].path);
		else if (r == 0)
			strbuf_addf(&line, "# NCCL path            : %s\n", run->ranks[r].path);
		emit_object_open(e, NULL);
		emit_int(e, "rank", NULL, r);
		emit_value(e, "summary", jstr(run->ranks[r].path), line.len ? line.buf : NULL);
		emit_close(e);
		strbuf_release(&line);
	}
	emit_close(e);
	emit_array_open(e, "results");
	emit_close(e);
	emit_text(e, "#\n");
	nccl_table_header(e, run->o->cputime);
}

void nccl_report_paths(struct nccl_report *rp, const struct nccl_report_run *run)
{
	if (rp->out) {
		emit_paths(run, &rp->table);
		flush(rp);
	}
	if (rp->want_json)
		emit_paths(run, &rp->json);
}

void nccl_report_row(struct nccl_report *rp, const struct perf_row *row)
{
	if (rp->out) {
		nccl_table_row(&rp->table, row);
		flush(rp);
	}
	if (rp->want_json)
		nccl_table_row(&rp->json, row);
}

void nccl_report_test_end(struct nccl_report *rp, enum perf_coll coll, unsigned bad_tests,
			  double avg_busbw)
{
	const char *name = perf_coll_info(coll)->test_name;

	if (rp->out) {
		nccl_table_footer(&rp->table, name, bad_tests, avg_busbw);
		flush(rp);
	}
	if (rp->want_json) {
		nccl_table_footer(&rp->json, name, bad_tests, avg_busbw);
		emit_close(&rp->json);
		emit_close(&rp->json);
	}
}

int nccl_report_finish(struct nccl_report *rp, unsigned bad_tests, const char *path,
		       struct strbuf *err)
{
	json_t *doc;
	int r;

	if (!rp->want_json)
		return 0;
	emit_value(&rp->json, "out_of_bounds", jint(bad_tests), NULL);
	emit_value(&rp->json, "ok", jbool(bad_tests == 0), NULL);
	doc = emit_document(&rp->json);
	/* -o FILE: replaced whole, or left as it was. */
	r = json_save(doc, path, err);
	json_decref(doc);
	return r;
}
