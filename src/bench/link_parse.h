/*
 * link_parse.h - reading what the link benchmarks print, for 'sparkctl
 * bench link': perftest's ib_write_bw / ib_write_lat result tables (RDMA)
 * and iperf3's -J report (TCP).  Pure functions on the captured text;
 * running the tools is someone else's job.
 *
 * Units are in the field names: _gbps is 10^9 bits per second (whatever
 * unit perftest printed), _mpps 10^6 messages per second, _us
 * microseconds.  A double that the output did not give is NAN.
 */
#ifndef SPARKCTL_LINK_PARSE_H
#define SPARKCTL_LINK_PARSE_H

#include "sparkctl.h"
#include "lib/strbuf.h"

/* The longest line kept from a tool's output (longer ones are cut). */
#define LINK_PARSE_LINE_MAX 256

/* One row of an ib_*_bw table: one message size (or one -D interval). */
struct perftest_bw_row {
	uint64_t bytes;	     /* message size */
	uint64_t iterations; /* messages counted */
	/*
	 * 0 when perftest did not measure it: duration mode (-D),
	 * --run_infinitely, more than 20000 iterations, send_bw's server.
	 */
	double peak_gbps;
	double avg_gbps;
	double msg_rate_mpps;
	/* --report-per-port (dual-port runs): each port's share; NAN otherwise */
	double port_gbps[2];
	double port_mpps[2];
	double cpu_util_pct; /* --cpu_util; NAN otherwise */
	int sl;		     /* the QoS variant's service level; -1 otherwise */
};

struct perftest_bw {
	struct perftest_bw_row *rows; /* in output order (-a: every size) */
	size_t nr_rows;
	/*
	 * The figure to report: the last row of the largest size (the
	 * largest of -a, the latest interval of --run_infinitely).
	 */
	struct perftest_bw_row headline;
	char unit[16]; /* as perftest printed it: "Gb/sec", "MiB/sec" or "MB/sec" */
	/* false when the output ended before perftest's closing dashed line */
	bool closed;
	/* the most telling error line seen, "" when none (a run cut short) */
	char error[LINK_PARSE_LINE_MAX];
};

/*
 * Parse the output (stdout, stderr interleaved or appended) of an ib_*_bw
 * run at full verbosity.  On success fills ret, which the caller releases
 * with perftest_bw_release().  Fails with
 *   -EIO	no result table: the run failed; err gets the most telling
 *		error line ("Couldn't connect to 10.0.0.2:18515")
 *   -EPROTO	a table without a usable row (err says why, with the error
 *		line when there is one), or a latency table
 * and ret holds no memory then.
 */
int perftest_parse_bw(const char *text, struct perftest_bw *ret, struct strbuf *err);
void perftest_bw_release(struct perftest_bw *bw);

/* One row of an ib_*_lat table. */
struct perftest_lat_row {
	uint64_t bytes;
	uint64_t iterations;
	/* one-way latency (perftest halves the round trip of write and send) */
	double t_min_us;
	double t_max_us;
	double t_typical_us; /* the median */
	double t_avg_us;
	double t_stdev_us;
	double t_p99_us;
	double t_p999_us;
	double tps;	     /* duration mode (-D): transactions per second; NAN otherwise */
	double cpu_util_pct; /* --cpu_util; NAN otherwise */
};

struct perftest_lat {
	struct perftest_lat_row *rows;
	size_t nr_rows;
	struct perftest_lat_row headline; /* the last row of the largest size */
	/* duration mode: only t_avg_us and tps; the others are NAN */
	bool duration;
	bool closed;
	char error[LINK_PARSE_LINE_MAX];
};

/* The same for ib_*_lat output; a bandwidth table is -EPROTO. */
int perftest_parse_lat(const char *text, struct perftest_lat *ret, struct strbuf *err);
void perftest_lat_release(struct perftest_lat *lat);

/* The summary of one iperf3 -J report. */
struct iperf3_result {
	char version[32];	 /* "iperf 3.12"; "" when absent */
	char protocol[8];	 /* "TCP", "UDP", "SCTP"; "" when absent */
	char remote_host[256];	 /* the peer's address; "" when absent */
	int remote_port;	 /* -1 when absent */
	int num_streams;	 /* -P; -1 when absent */
	bool reverse;		 /* -R: the server sent */
	double duration_s;	 /* -t, as asked; NAN when absent */
	double seconds;		 /* the measured interval of the goodput; NAN when absent */
	uint64_t received_bytes; /* by the receiving side, every stream */
	double received_gbps;	 /* goodput, the figure to report; NAN when absent */
	uint64_t sent_bytes;	 /* by the sending side */
	double sent_gbps;	 /* NAN when absent */
	int64_t retransmits;	 /* by the sender (TCP on Linux); -1 when absent */
};

/*
 * Parse the output of iperf3 -J (client or server side).  Text before the
 * first line that starts with '{' is skipped (warnings on stderr), and so
 * is anything after the object (iperf 3.16 and 3.17 print it twice,
 * esnet/iperf#1688).  Duplicate keys are accepted: 3.12 repeats some of
 * "start" once per stream with -P (esnet/iperf#1491).  The exit status of
 * iperf3 -J says nothing: 3.11 and later exit 0 after an error
 * (esnet/iperf#1405).  Fails with
 *   -EINVAL	no JSON object, or malformed JSON
 *   -EIO	iperf3 reported an error ("error" at the top level): err gets
 *		its message, ret whatever the partial report gave
 *   -EPROTO	no end.sum_received or end.sum_sent (a report cut short), a
 *		member of the wrong type, or a --bidir report (not supported)
 */
int iperf3_parse_json(const char *text, struct iperf3_result *ret, struct strbuf *err);

#endif
