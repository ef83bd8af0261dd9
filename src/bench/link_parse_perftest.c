/*
 * link_parse_perftest.c - perftest's result tables (ib_write_bw, ib_write_lat).
 */
#include "sparkctl.h"

#include <math.h>

#include "bench/link_parse.h"
#include "lib/parse.h"
#include "lib/xalloc.h"

/*
 * perftest (linux-rdma/perftest) prints its results as a table:
 *
 *  ---------------------------------------------------------------------------------------
 *   #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 *   65536      5000             93.04              92.88                0.177155
 *  ---------------------------------------------------------------------------------------
 *
 * The header names the columns, and the variants add or move some: #sl
 * (QoS), per-port bandwidth and message rate (--report-per-port),
 * CPU_Util[%] (--cpu_util), the latency columns of ib_*_lat and their
 * duration-mode pair "t_avg[usec]  tps average".  So the header is read
 * into a list of columns, and each row is read against it.
 *
 * Everything else is ignored: the test description, the QP addresses,
 * WARNING lines, and whatever stderr put in between ("Conflicting CPU
 * frequency values detected", once per row when perftest measures the
 * clock again).  Error lines are ranked to explain a failed run.
 */

enum col {
	COL_UNKNOWN,
	COL_BYTES,
	COL_SL,
	COL_ITERS,
	COL_BW_PEAK,
	COL_BW_AVG,
	COL_MSG_RATE,
	COL_PORT1_BW,
	COL_PORT1_RATE,
	COL_PORT2_BW,
	COL_PORT2_RATE,
	COL_CPU_UTIL,
	COL_T_MIN,
	COL_T_MAX,
	COL_T_TYPICAL,
	COL_T_AVG,
	COL_T_STDEV,
	COL_T_P99,
	COL_T_P999,
	COL_TPS,
	NR_COLS,
};

static const struct {
	const char *name; /* the header cell without its "[unit]" */
	enum col col;
	bool bandwidth; /* a bandwidth unit in brackets */
} col_names[] = {
	{ "#bytes", COL_BYTES, false },		{ "#sl", COL_SL, false },
	{ "#iterations", COL_ITERS, false },	{ "BW peak", COL_BW_PEAK, true },
	{ "BW average", COL_BW_AVG, true },	{ "MsgRate", COL_MSG_RATE, false },
	{ "BW Port1", COL_PORT1_BW, true },	{ "MsgRate Port1", COL_PORT1_RATE, false },
	{ "BW Port2", COL_PORT2_BW, true },	{ "MsgRate Port2", COL_PORT2_RATE, false },
	{ "CPU_Util", COL_CPU_UTIL, false },	{ "t_min", COL_T_MIN, false },
	{ "t_max", COL_T_MAX, false },		{ "t_typical", COL_T_TYPICAL, false },
	{ "t_avg", COL_T_AVG, false },		{ "t_stdev", COL_T_STDEV, false },
	{ "99% percentile", COL_T_P99, false }, { "99.9% percentile", COL_T_P999, false },
	{ "tps average", COL_TPS, false },
};

/*
 * perftest's bandwidth units.  print_report_bw() in src/perftest_parameters.c
 * divides bytes per second by
 *	format_factor = (user_param->report_fmt == MBS) ? 0x100000 : 125000000;
 * so "Gb/sec" (--report_gbits) is 10^9 bits, and the default unit is 2^20
 * bytes, whatever its label says: it was "MB/sec" until commit 1d202bb
 * ("Display proper unit for MiB/sec results", 2024-03-19, first released in
 * 24.07.0-0.44), "MiB/sec" since, with the same factor.  Before commit
 * 22fc42c (2013-03-05, which added --report_gbits) the factor was a literal
 * 0x100000.  MB/sec never meant 10^6 bytes.
 */
#define MIB_TO_GBITS ((double)(1 << 20) * 8 / 1e9)

static const struct {
	const char *unit;
	double to_gbps;
} bw_units[] = {
	{ "Gb/sec", 1.0 },
	{ "MiB/sec", MIB_TO_GBITS },
	{ "MB/sec", MIB_TO_GBITS },
};

/* Rows and headers are short; a longer line is neither. */
#define TABLE_LINE_MAX 1024
#define MAX_COLS       24

struct table {
	enum col col[MAX_COLS];
	double to_gbps[MAX_COLS]; /* bandwidth columns */
	size_t nr;
	bool has[NR_COLS];
	char unit[16]; /* of BW average */
};

/* One row, by column; NAN (or -1) where the table has no such column. */
struct raw_row {
	uint64_t bytes, iters;
	int sl;
	double v[NR_COLS];
};

struct scan {
	struct table table;
	bool seen_table; /* a header was seen */
	bool in_table;	 /* between a header and its closing line */
	bool closed;	 /* the last table was closed */
	bool any;	 /* some text that is not white space */
	struct raw_row *rows;
	size_t nr_rows;
	int error_rank; /* of error[]; -1 when none */
	char error[LINK_PARSE_LINE_MAX];
	char generic[LINK_PARSE_LINE_MAX]; /* the first line that looks like an error */
	char last[LINK_PARSE_LINE_MAX];	   /* the last line that is not noise */
};

/*
 * perftest's error lines, the most telling first: the cause before its
 * consequences (" Unable to init the socket connection" follows "Couldn't
 * connect to HOST:PORT").  src/perftest_communication.c,
 * src/perftest_resources.c and the tests' main()s (src/write_bw.c ...).
 */
static const char *const error_lines[] = {
	"Couldn't connect to",
	"Failed status",
	"Failed to modify QP",
	"IB device ",
	"Did not detect devices",
	"No IB devices found",
	"Unable to find the Infiniband/RoCE device",
	"Couldn't get context for the device",
	"Did not get Message for",
	"Completion with error",
	"Unable to Connect the HCA's through the link",
	"Found Incompatibility issue with GID types",
	"Couldn't create IB resources",
	"Unable to init the socket connection",
	"Unable to create RDMA_CM resources",
	"Failed to create RDMA CM connection",
	"Failed to exchange data between server and clients",
	"Failed to complete run_iter",
	"Parser function exited with Error",
	"Test exited with Error",
};

static const char *const error_words[] = {
	"error", "fail", "unable", "couldn't", "can't", "cannot", "not found", "invalid",
};

/* The next line of text, without "\n" or "\r\n"; *last when no newline ends it. */
static bool next_line(const char **pos, const char **line, size_t *len, bool *last)
{
	const char *p = *pos;
	const char *nl;
	size_t n;

	if (!p || !*p)
		return false;
	nl = strchr(p, '\n');
	n = nl ? (size_t)(nl - p) : strlen(p);
	*pos = nl ? nl + 1 : p + n;
	*last = !nl;
	while (n && p[n - 1] == '\r')
		n--;
	*line = p;
	*len = n;
	return true;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* s[0..len) without the white space around it, cut to fit dst. */
static void copy_trimmed(char *dst, size_t size, const char *s, size_t len)
{
	while (len && is_space(*s)) {
		s++;
		len--;
	}
	while (len && is_space(s[len - 1]))
		len--;
	if (len >= size)
		len = size - 1;
	memcpy(dst, s, len);
	dst[len] = '\0';
}

static bool is_noise(const char *t)
{
	return starts_with(t, "WARNING") || starts_with(t, "Warning") ||
	       strstr(t, "Conflicting CPU frequency") != NULL;
}

static bool is_dashes(const char *t)
{
	size_t n = strspn(t, "-");

	return n >= 10 && t[n] == '\0';
}

static int error_rank(const char *t)
{
	for (size_t i = 0; i < ARRAY_SIZE(error_lines); i++)
		if (strstr(t, error_lines[i]))
			return (int)i;
	return -1;
}

static bool looks_like_error(const char *t)
{
	for (size_t i = 0; i < ARRAY_SIZE(error_words); i++)
		if (strcasestr(t, error_words[i]))
			return true;
	return false;
}

/* Split t (modified) at white space into at most max tokens; returns their number, max + 1 when
 * more. */
static size_t split(char *t, char **tok, size_t max)
{
	size_t n = 0;

	for (char *p = t;;) {
		while (is_space(*p))
			p++;
		if (!*p)
			break;
		if (n == max)
			return max + 1;
		tok[n++] = p;
		while (*p && !is_space(*p))
			p++;
		if (*p)
			*p++ = '\0';
	}
	return n;
}

/* "#bytes ..." at the start of a trimmed line. */
static bool is_header(const char *t)
{
	return starts_with(t, "#bytes") && (t[6] == '\0' || is_space(t[6]));
}

static int add_column(struct table *tb, const char *cell, struct strbuf *err)
{
	const char *open = strchr(cell, '[');
	size_t name_len = open ? (size_t)(open - cell) : strlen(cell);
	enum col col = COL_UNKNOWN;
	double to_gbps = 1.0;
	bool bandwidth = false;

	if (tb->nr == MAX_COLS) {
		strbuf_addf(err, "a result table header with more than %d columns", MAX_COLS);
		return -EPROTO;
	}
	for (size_t i = 0; i < ARRAY_SIZE(col_names); i++)
		if (strlen(col_names[i].name) == name_len &&
		    memcmp(col_names[i].name, cell, name_len) == 0) {
			col = col_names[i].col;
			bandwidth = col_names[i].bandwidth;
			break;
		}
	if (bandwidth) {
		const char *close = open ? strchr(open, ']') : NULL;
		size_t unit_len = close ? (size_t)(close - open - 1) : 0;
		bool found = false;

		for (size_t i = 0; open && i < ARRAY_SIZE(bw_units); i++)
			if (strlen(bw_units[i].unit) == unit_len &&
			    memcmp(bw_units[i].unit, open + 1, unit_len) == 0) {
				to_gbps = bw_units[i].to_gbps;
				if (col == COL_BW_AVG)
					snprintf(tb->unit, sizeof(tb->unit), "%s",
						 bw_units[i].unit);
				found = true;
			}
		if (!found) {
			strbuf_addf(err, "unknown bandwidth unit in the result table: '%s'", cell);
			return -EPROTO;
		}
	}
	if (col != COL_UNKNOWN && tb->has[col]) {
		strbuf_addf(err, "the result table has two '%s' columns", cell);
		return -EPROTO;
	}
	tb->col[tb->nr] = col;
	tb->to_gbps[tb->nr] = to_gbps;
	tb->nr++;
	tb->has[col] = true;
	return 0;
}

/*
 * The header's cells.  Names hold single spaces ("BW peak[Gb/sec]",
 * "99% percentile[usec]", "tps average") and cells are apart by one space
 * or more (" #bytes #iterations    t_min[usec]"), so a cell ends at a word
 * that starts with '#' or ends with ']', or at the end of the line.
 */
static int parse_header(char *t, struct table *tb, struct strbuf *err)
{
	char *tok[MAX_COLS * 4];
	size_t n = split(t, tok, ARRAY_SIZE(tok));
	char cell[TABLE_LINE_MAX];
	size_t len = 0;
	int r;

	memset(tb, 0, sizeof(*tb));
	if (n > ARRAY_SIZE(tok)) {
		strbuf_addstr(err, "a result table header with too many words");
		return -EPROTO;
	}
	for (size_t i = 0; i < n; i++) {
		size_t tl = strlen(tok[i]);

		/* t fits in cell: the words and their separators come from it */
		if (len)
			cell[len++] = ' ';
		memcpy(cell + len, tok[i], tl);
		len += tl;
		cell[len] = '\0';
		if (tok[i][0] == '#' || tok[i][tl - 1] == ']' || i + 1 == n) {
			r = add_column(tb, cell, err);
			if (r < 0)
				return r;
			len = 0;
		}
	}
	if (!tb->has[COL_BYTES] || !tb->has[COL_ITERS]) {
		strbuf_addstr(err, "a result table header without #bytes and #iterations");
		return -EPROTO;
	}
	return 0;
}

/* Digits with at most one '.', nothing else (perftest prints %lu and %.Nf). */
static bool is_number(const char *s, bool *has_dot)
{
	size_t digits = 0, dots = 0;

	for (const char *p = s; *p; p++) {
		if (*p >= '0' && *p <= '9')
			digits++;
		else if (*p == '.')
			dots++;
		else
			return false;
	}
	*has_dot = dots == 1;
	return digits > 0 && dots <= 1;
}

static int parse_value(const char *s, double *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno == ERANGE || !isfinite(v))
		return -ERANGE;
	*ret = v;
	return 0;
}

/*
 * One line of a table: 1 and *row when it is a row, 0 when it is not (text
 * between the rows, or a last line cut short), -EPROTO when it is a
 * malformed one.
 */
static int parse_row(const struct table *tb, const char *line, size_t len, bool last,
		     struct raw_row *row, struct strbuf *err)
{
	char buf[TABLE_LINE_MAX], shown[LINK_PARSE_LINE_MAX];
	char *tok[MAX_COLS + 1];
	bool dot[MAX_COLS];
	size_t n;

	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, line, len);
	buf[len] = '\0';
	copy_trimmed(shown, sizeof(shown), line, len);
	n = split(buf, tok, MAX_COLS);
	if (n == 0 || n > MAX_COLS)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!is_number(tok[i], &dot[i]))
			return 0;
	if (n != tb->nr) {
		/* the output ended in the middle of a row */
		if (last && n < tb->nr)
			return 0;
		strbuf_addf(err, "a result row with %zu values under %zu columns: '%s'", n, tb->nr,
			    shown);
		return -EPROTO;
	}
	row->bytes = 0;
	row->iters = 0;
	row->sl = -1;
	for (size_t i = 0; i < NR_COLS; i++)
		row->v[i] = NAN;
	for (size_t i = 0; i < n; i++) {
		enum col c = tb->col[i];
		uint64_t u = 0;
		double v = 0;
		int r;

		if (c == COL_BYTES || c == COL_ITERS || c == COL_SL) {
			r = dot[i] ? -EINVAL : parse_u64(tok[i], &u);
			if (r == 0 && c == COL_SL && u > INT_MAX)
				r = -ERANGE;
		} else {
			r = parse_value(tok[i], &v);
		}
		if (r < 0) {
			strbuf_addf(err, "a result row with a bad value '%s': '%s'", tok[i], shown);
			return -EPROTO;
		}
		if (c == COL_BYTES)
			row->bytes = u;
		else if (c == COL_ITERS)
			row->iters = u;
		else if (c == COL_SL)
			row->sl = (int)u;
		else
			row->v[c] = v * tb->to_gbps[i];
	}
	return 1;
}

static void note_line(struct scan *sc, const char *t)
{
	int rank;

	if (!*t || is_noise(t))
		return;
	snprintf(sc->last, sizeof(sc->last), "%s", t);
	rank = error_rank(t);
	if (rank >= 0 && (sc->error_rank < 0 || rank < sc->error_rank)) {
		sc->error_rank = rank;
		snprintf(sc->error, sizeof(sc->error), "%s", t);
	}
	if (!sc->generic[0] && looks_like_error(t))
		snprintf(sc->generic, sizeof(sc->generic), "%s", t);
}

/* Read every table of text (-H and -U print one per size) into sc->rows. */
static int scan_perftest(const char *text, struct scan *sc, struct strbuf *err)
{
	const char *pos = text, *line;
	size_t len;
	bool last;

	memset(sc, 0, sizeof(*sc));
	sc->error_rank = -1;
	while (next_line(&pos, &line, &len, &last)) {
		char t[LINK_PARSE_LINE_MAX];
		int r;

		copy_trimmed(t, sizeof(t), line, len);
		if (*t)
			sc->any = true;
		if (is_header(t)) {
			char buf[TABLE_LINE_MAX];

			if (len >= sizeof(buf)) {
				strbuf_addstr(err, "a result table header too long to be one");
				return -EPROTO;
			}
			memcpy(buf, line, len);
			buf[len] = '\0';
			r = parse_header(buf, &sc->table, err);
			if (r < 0)
				return r;
			sc->seen_table = true;
			sc->in_table = true;
			sc->closed = false;
			continue;
		}
		if (sc->in_table && is_dashes(t)) {
			sc->in_table = false;
			sc->closed = true;
			continue;
		}
		if (sc->in_table) {
			struct raw_row row;

			r = parse_row(&sc->table, line, len, last, &row, err);
			if (r < 0)
				return r;
			if (r > 0) {
				*ARRAY_PUSH(sc->rows, sc->nr_rows) = row;
				continue;
			}
		}
		note_line(sc, t);
	}
	return 0;
}

/*
 * The failure of a scan without a usable table, in err; wrong_kind says
 * what is wrong with the table's columns, when something is.
 */
static int scan_failure(const struct scan *sc, const char *wrong_kind, struct strbuf *err)
{
	if (!sc->seen_table) {
		if (sc->error_rank >= 0)
			strbuf_addstr(err, sc->error);
		else if (sc->generic[0])
			strbuf_addf(err, "no result table in perftest's output: %s", sc->generic);
		else if (sc->last[0])
			strbuf_addf(err,
				    "no result table in perftest's output, which ends with '%s'",
				    sc->last);
		else if (sc->any)
			strbuf_addstr(err, "no result table in perftest's output");
		else
			strbuf_addstr(err, "no output from perftest");
		return -EIO;
	}
	if (wrong_kind) {
		strbuf_addstr(err, wrong_kind);
		return -EPROTO;
	}
	strbuf_addstr(err, "a result table without a result row");
	if (sc->error_rank >= 0 || sc->generic[0])
		strbuf_addf(err, ": %s", sc->error_rank >= 0 ? sc->error : sc->generic);
	return -EPROTO;
}

/*
 * A scan that found a table with the columns wanted (has_columns) and at
 * least one row; otherwise the failure, with why_not when the columns are
 * the wrong ones.
 */
static int table_usable(struct scan *sc, bool has_columns, const char *why_not, struct strbuf *err)
{
	if (!sc->seen_table)
		return scan_failure(sc, NULL, err);
	if (!has_columns)
		return scan_failure(sc, why_not, err);
	if (!sc->nr_rows)
		return scan_failure(sc, NULL, err);
	return 0;
}

/* The index of the last row of the largest size. */
static size_t headline_index(const struct raw_row *rows, size_t nr)
{
	size_t best = 0;

	for (size_t i = 1; i < nr; i++)
		if (rows[i].bytes >= rows[best].bytes)
			best = i;
	return best;
}

static void bw_row(const struct raw_row *r, struct perftest_bw_row *ret)
{
	ret->bytes = r->bytes;
	ret->iterations = r->iters;
	ret->peak_gbps = r->v[COL_BW_PEAK];
	ret->avg_gbps = r->v[COL_BW_AVG];
	ret->msg_rate_mpps = r->v[COL_MSG_RATE];
	ret->port_gbps[0] = r->v[COL_PORT1_BW];
	ret->port_gbps[1] = r->v[COL_PORT2_BW];
	ret->port_mpps[0] = r->v[COL_PORT1_RATE];
	ret->port_mpps[1] = r->v[COL_PORT2_RATE];
	ret->cpu_util_pct = r->v[COL_CPU_UTIL];
	ret->sl = r->sl;
}

int perftest_parse_bw(const char *text, struct perftest_bw *ret, struct strbuf *err)
{
	struct scan sc;
	int r;

	memset(ret, 0, sizeof(*ret));
	r = scan_perftest(text, &sc, err);
	if (r == 0) {
		const struct table *tb = &sc.table;
		r = table_usable(
			&sc, tb->has[COL_BW_PEAK] && tb->has[COL_BW_AVG] && tb->has[COL_MSG_RATE],
			tb->has[COL_T_AVG] ? "a latency table, not a bandwidth one"
					   : "a result table without bandwidth columns",
			err);
	}
	if (r < 0) {
		free(sc.rows);
		return r;
	}
	ret->rows = xcalloc(sc.nr_rows, sizeof(*ret->rows));
	ret->nr_rows = sc.nr_rows;
	for (size_t i = 0; i < sc.nr_rows; i++)
		bw_row(&sc.rows[i], &ret->rows[i]);
	ret->headline = ret->rows[headline_index(sc.rows, sc.nr_rows)];
	snprintf(ret->unit, sizeof(ret->unit), "%s", sc.table.unit);
	ret->closed = sc.closed;
	snprintf(ret->error, sizeof(ret->error), "%s", sc.error);
	free(sc.rows);
	return 0;
}

void perftest_bw_release(struct perftest_bw *bw)
{
	free(bw->rows);
	bw->rows = NULL;
	bw->nr_rows = 0;
}

static void lat_row(const struct raw_row *r, struct perftest_lat_row *ret)
{
	ret->bytes = r->bytes;
	ret->iterations = r->iters;
	ret->t_min_us = r->v[COL_T_MIN];
	ret->t_max_us = r->v[COL_T_MAX];
	ret->t_typical_us = r->v[COL_T_TYPICAL];
	ret->t_avg_us = r->v[COL_T_AVG];
	ret->t_stdev_us = r->v[COL_T_STDEV];
	ret->t_p99_us = r->v[COL_T_P99];
	ret->t_p999_us = r->v[COL_T_P999];
	ret->tps = r->v[COL_TPS];
	ret->cpu_util_pct = r->v[COL_CPU_UTIL];
}

int perftest_parse_lat(const char *text, struct perftest_lat *ret, struct strbuf *err)
{
	struct scan sc;
	int r;

	memset(ret, 0, sizeof(*ret));
	r = scan_perftest(text, &sc, err);
	if (r == 0) {
		const struct table *tb = &sc.table;
		r = table_usable(&sc, tb->has[COL_T_AVG],
				 tb->has[COL_BW_AVG] ? "a bandwidth table, not a latency one"
						     : "a result table without latency columns",
				 err);
	}
	if (r < 0) {
		free(sc.rows);
		return r;
	}
	ret->rows = xcalloc(sc.nr_rows, sizeof(*ret->rows));
	ret->nr_rows = sc.nr_rows;
	for (size_t i = 0; i < sc.nr_rows; i++)
		lat_row(&sc.rows[i], &ret->rows[i]);
	ret->headline = ret->rows[headline_index(sc.rows, sc.nr_rows)];
	ret->duration = sc.table.has[COL_TPS];
	ret->closed = sc.closed;
	snprintf(ret->error, sizeof(ret->error), "%s", sc.error);
	free(sc.rows);
	return 0;
}

void perftest_lat_release(struct perftest_lat *lat)
{
	free(lat->rows);
	lat->rows = NULL;
	lat->nr_rows = 0;
}
