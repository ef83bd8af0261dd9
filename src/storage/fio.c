/*
 * fio.c - fio's profiles, command line and JSON report (see fio.h).
 */
#include "sparkctl.h"

#include <math.h>

#include "lib/json.h"
#include "lib/xalloc.h"
#include "storage/fio.h"

/* The seed's profiles: 1 MiB at queue depth 32 times 4 jobs, 4 KiB random at 128, 4 KiB at 1. */
const struct fio_profile fio_profiles[] = {
	{ "seq-read", "read", 1 << 20, 32, 4, false, false },
	{ "seq-write", "write", 1 << 20, 32, 4, true, false },
	{ "rand4k-qd128", "randread", 4096, 128, 1, false, false },
	{ "lat-qd1", "randread", 4096, 1, 1, false, true },
};
const size_t fio_nr_profiles = ARRAY_SIZE(fio_profiles);

const struct fio_profile *fio_profile_find(const char *name)
{
	for (size_t i = 0; i < fio_nr_profiles; i++)
		if (streq(fio_profiles[i].name, name))
			return &fio_profiles[i];
	return NULL;
}

int fio_profiles_parse(const char *text, const struct fio_profile **list, size_t max,
		       struct strbuf *err)
{
	size_t n = 0;

	for (const char *p = text; *p;) {
		size_t len = strcspn(p, ",");
		char *name = xstrndup(p, len);
		const struct fio_profile *prof = fio_profile_find(name);
		bool seen = false;

		if (!prof) {
			strbuf_addf(err, "unknown profile '%s' (%s)", name, FIO_DEFAULT_PROFILES);
			free(name);
			return -EINVAL;
		}
		free(name);
		for (size_t i = 0; i < n; i++)
			seen |= list[i] == prof;
		if (!seen && n < max)
			list[n++] = prof;
		p += len + (p[len] == ',');
	}
	if (!n) {
		strbuf_addf(err, "no profile named (%s)", FIO_DEFAULT_PROFILES);
		return -EINVAL;
	}
	return (int)n;
}

void fio_args(const struct fio_profile *p, const char *file, uint64_t size, unsigned runtime_s,
	      bool direct, struct strvec *args)
{
	strvec_pushf(args, "--name=%s", p->name);
	strvec_pushf(args, "--filename=%s", file);
	strvec_pushf(args, "--size=%" PRIu64, size);
	strvec_pushf(args, "--rw=%s", p->rw);
	strvec_pushf(args, "--bs=%u", p->block_bytes);
	strvec_pushf(args, "--iodepth=%u", p->iodepth);
	strvec_pushf(args, "--numjobs=%u", p->numjobs);
	strvec_push(args, "--ioengine=libaio");
	strvec_pushf(args, "--direct=%d", direct ? 1 : 0);
	if (runtime_s)
		strvec_pushf(args, "--runtime=%u", runtime_s);
	/* One figure per profile, whatever numjobs is. */
	strvec_push(args, "--group_reporting");
	/* Threads of one process: ending fio ends every job, and no job outlives it. */
	strvec_push(args, "--thread");
	/*
	 * fio lays out (writes) a file too short for a read before it starts
	 * the clock; --unlink stays off: the file is removed by its creator.
	 */
	strvec_push(args, "--randrepeat=0");
	strvec_push(args, "--output-format=json");
}

void fio_result_init(struct fio_result *r)
{
	*r = (struct fio_result){ .clat_mean_us = -1, .clat_p50_us = -1, .clat_p99_us = -1 };
}

void fio_result_release(struct fio_result *r)
{
	free(r->version);
	fio_result_init(r);
}

/* A number of the object, or -1 when it has none. */
static double number_of(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	return json_is_number(v) ? json_number_value(v) : -1;
}

/* One job's side: its figures added to r. */
static int add_side(const json_t *side, const char *ctx, struct fio_result *r, struct strbuf *err)
{
	const json_t *clat = json_object_get(side, "clat_ns");
	const json_t *pct = clat ? json_object_get(clat, "percentile") : NULL;
	double io = number_of(side, "io_bytes"), bw = number_of(side, "bw_bytes");
	double iops = number_of(side, "iops"), runtime = number_of(side, "runtime");
	double mean = clat ? number_of(clat, "mean") : -1;

	if (!json_is_object(side) || io < 0 || bw < 0 || iops < 0 || runtime < 0) {
		strbuf_addf(err, "%s: not fio's figures (io_bytes, bw_bytes, iops, runtime)", ctx);
		return -EINVAL;
	}
	r->io_bytes += (uint64_t)io;
	r->bw_bytes += bw;
	r->iops += iops;
	if ((uint64_t)runtime > r->runtime_ms)
		r->runtime_ms = (uint64_t)runtime;
	/* Latencies of the first job that has them: with group_reporting, the only one. */
	if (r->clat_mean_us < 0 && mean >= 0 && json_is_object(clat) && number_of(clat, "N") != 0) {
		r->clat_mean_us = mean / 1000;
		if (json_is_object(pct)) {
			double p50 = number_of(pct, "50.000000"), p99 = number_of(pct, "99.000000");
			r->clat_p50_us = p50 >= 0 ? p50 / 1000 : -1;
			r->clat_p99_us = p99 >= 0 ? p99 / 1000 : -1;
		}
	}
	return 0;
}

/* Where the document starts: the first line that opens an object. */
static const char *document_start(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (text[i] == '{' && (i == 0 || text[i - 1] == '\n'))
			return text + i;
	return NULL;
}

int fio_result_parse(const char *text, size_t len, bool writes, struct fio_result *r,
		     struct strbuf *err)
{
	const char *start = document_start(text, len);
	json_t *doc = NULL;
	const json_t *jobs, *version;
	int ret = -EINVAL;

	if (!start) {
		strbuf_addstr(err, "fio printed no JSON report");
		goto out;
	}
	if (json_load_buffer(start, len - (size_t)(start - text), "fio's report", &doc, err) < 0)
		goto out;
	jobs = json_object_get(doc, "jobs");
	if (!json_is_array(jobs) || !json_array_size(jobs)) {
		strbuf_addstr(err, "fio's report has no jobs");
		goto out;
	}
	version = json_object_get(doc, "fio version");
	if (json_is_string(version))
		r->version = xstrdup(json_string_value(version));
	for (size_t i = 0; i < json_array_size(jobs); i++) {
		const json_t *job = json_array_get(jobs, i);
		double error = number_of(job, "error");
		char ctx[64];

		snprintf(ctx, sizeof(ctx), "jobs[%zu].%s", i, writes ? "write" : "read");
		if (!r->error && error > 0 && error < 4096)
			r->error = (int)error;
		if (add_side(json_object_get(job, writes ? "write" : "read"), ctx, r, err) < 0)
			goto out;
	}
	ret = 0;
out:
	json_decref(doc);
	return ret;
}

double fio_payload_ceiling_gbytes(int64_t line_mbps, int64_t mtu)
{
	const double pdu_data = 131072, pdu_header = 24;

	if (line_mbps <= 0 || mtu < 576)
		return 0;
	return (double)line_mbps * 1e6 / 8 * (double)(mtu - 40) / (double)(mtu + 38) * pdu_data /
	       (pdu_data + pdu_header) / 1e9;
}

const char *fio_verdict_name(enum fio_verdict v)
{
	switch (v) {
	case FIO_VERDICT_OK:
		return "ok";
	case FIO_VERDICT_LOW:
		return "low";
	case FIO_VERDICT_UNKNOWN:
		break;
	}
	return "no line rate known";
}

enum fio_verdict fio_judge(double gbytes, double ceiling_gbytes)
{
	if (!(ceiling_gbytes > 0) || !(gbytes >= 0) || !isfinite(gbytes))
		return FIO_VERDICT_UNKNOWN;
	return gbytes >= FIO_HEALTHY_FRACTION * ceiling_gbytes ? FIO_VERDICT_OK : FIO_VERDICT_LOW;
}
