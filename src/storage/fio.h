/*
 * fio.h - what 'sparkctl storage bench' asks of fio, and what it reads
 * back: the profiles, fio's command line for one of them, the figures of
 * fio's JSON report (fio 3.33, --output-format=json), and the verdict of
 * a path's bandwidth against its network's line rate.  Pure: nothing
 * here runs fio or reads the host.
 *
 * fio's JSON (only what is read):
 *   {"fio version": "fio-3.33",
 *    "jobs": [{"jobname": "seq-read", "error": 0,
 *              "read"|"write": {"io_bytes": N, "bw_bytes": N, "iops": R,
 *                               "runtime": MS,
 *                               "clat_ns": {"mean": R, "percentile":
 *                                           {"50.000000": N, "99.000000": N}}}}]}
 * With group_reporting there is one job per profile.  fio prints its
 * errors ("fio: pid=..., err=28/...") on stdout before the document, so
 * the document is taken from the first line that opens it.
 */
#ifndef SPARKCTL_STORAGE_FIO_H
#define SPARKCTL_STORAGE_FIO_H

#include "sparkctl.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

/* One way of loading a path: the seed's four. */
struct fio_profile {
	const char *name;     /* "seq-read" */
	const char *rw;	      /* fio's rw= */
	unsigned block_bytes; /* bs= */
	unsigned iodepth;
	unsigned numjobs;
	bool writes;  /* its figures are fio's "write" side */
	bool latency; /* a latency profile: p50/p99 is its figure */
};

/* seq-read, seq-write, rand4k-qd128, lat-qd1, in that order. */
extern const struct fio_profile fio_profiles[];
extern const size_t fio_nr_profiles;
#define FIO_DEFAULT_PROFILES "seq-read,seq-write,rand4k-qd128,lat-qd1"

const struct fio_profile *fio_profile_find(const char *name);
/*
 * A comma-separated list of profile names into *list (each named once, in
 * the order given): the count, or -EINVAL with the unknown name in err.
 */
int fio_profiles_parse(const char *text, const struct fio_profile **list, size_t max,
		       struct strbuf *err);

/*
 * fio's arguments (after "fio") for profile p on file, size bytes, for
 * at most runtime_s seconds (0: until size is done), with O_DIRECT when
 * direct.  The jobs are threads of one fio process (--thread), so that
 * ending that process ends all of them.
 */
void fio_args(const struct fio_profile *p, const char *file, uint64_t size, unsigned runtime_s,
	      bool direct, struct strvec *args);

struct fio_result {
	char *version;	     /* "fio-3.33", NULL when missing */
	int error;	     /* the first job's error (an errno value), 0 none */
	uint64_t io_bytes;   /* moved, all jobs */
	double bw_bytes;     /* bytes per second, all jobs */
	double iops;	     /* all jobs */
	uint64_t runtime_ms; /* the longest job's */
	/* completion latency, microseconds; -1 unknown */
	double clat_mean_us, clat_p50_us, clat_p99_us;
};

void fio_result_init(struct fio_result *r);
void fio_result_release(struct fio_result *r);

/*
 * The figures of the read (writes false) or write side of fio's report in
 * text, summed over its jobs.  0 (error may be set: the caller says what
 * it means), or -EINVAL with the reason in err when there is no report
 * or it is not fio's.
 */
int fio_result_parse(const char *text, size_t len, bool writes, struct fio_result *r,
		     struct strbuf *err);

/*
 * The payload ceiling of NVMe/TCP over Ethernet, 10^9 B/s, for a line
 * rate of line_mbps (10^6 bit/s, /sys/class/net/IF/speed) at MTU mtu:
 *
 *   line_mbps * 10^6 / 8  *  (mtu - 40) / (mtu + 38)  *  D / (D + 24)
 *
 * Each frame of mtu bytes carries mtu - 40 bytes of TCP payload (IPv4 20
 * and TCP 20 bytes of headers) and costs mtu + 38 bytes on the wire
 * (Ethernet header 14, FCS 4, preamble 8, inter-frame gap 12); NVMe/TCP
 * adds a 24-byte data PDU header per D = 128 KiB of data (the usual
 * MAXH2CDATA; digests off).  100 Gb/s at MTU 9000: 12.39 GB/s; at MTU
 * 1500: 11.87 GB/s.  0 when line_mbps or mtu is unknown (<= 0) or the
 * MTU below IPv4's 576.
 */
double fio_payload_ceiling_gbytes(int64_t line_mbps, int64_t mtu);

/*
 * Healthy from this fraction of the ceiling: the best of a path's
 * sequential read and write, 1 MiB blocks at queue depth 32 times 4
 * jobs, which on a sound NVMe/TCP path stays near the line rate; under
 * half of it points at the path (MTU, interface, routing) or the target.
 */
#define FIO_HEALTHY_FRACTION 0.5

enum fio_verdict {
	FIO_VERDICT_OK,
	FIO_VERDICT_LOW,
	FIO_VERDICT_UNKNOWN, /* no line rate known, or no bandwidth measured */
};

/* "ok", "low", "no line rate known" */
const char *fio_verdict_name(enum fio_verdict v);
/* gbytes (10^9 B/s) against ceiling_gbytes (0: unknown). */
enum fio_verdict fio_judge(double gbytes, double ceiling_gbytes);

#endif
