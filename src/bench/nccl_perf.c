#include "sparkctl.h"

#include <math.h>

#include "bench/nccl_perf.h"

static const struct perf_coll_info colls[PERF_NR_COLLS] = {
	[PERF_ALL_REDUCE] = { "all_reduce", "all_reduce_perf", true, false },
	[PERF_ALL_GATHER] = { "all_gather", "all_gather_perf", false, false },
	[PERF_REDUCE_SCATTER] = { "reduce_scatter", "reduce_scatter_perf", true, false },
	[PERF_BROADCAST] = { "broadcast", "broadcast_perf", false, true },
	[PERF_REDUCE] = { "reduce", "reduce_perf", true, true },
	[PERF_ALLTOALL] = { "alltoall", "alltoall_perf", false, false },
	[PERF_SENDRECV] = { "sendrecv", "sendrecv_perf", false, false },
};

const struct perf_coll_info *perf_coll_info(enum perf_coll coll)
{
	return &colls[coll];
}

int perf_coll_from_name(const char *name, enum perf_coll *ret)
{
	for (size_t i = 0; i < PERF_NR_COLLS; i++)
		if (streq(name, colls[i].name)) {
			*ret = (enum perf_coll)i;
			return 0;
		}
	return -EINVAL;
}

double perf_busbw_factor(enum perf_coll coll, int nranks)
{
	double n = nranks;

	switch (coll) {
	case PERF_ALL_REDUCE:
		return 2.0 * (n - 1) / n;
	case PERF_ALL_GATHER:
	case PERF_REDUCE_SCATTER:
	case PERF_ALLTOALL:
		return (n - 1) / n;
	case PERF_BROADCAST:
	case PERF_REDUCE:
	case PERF_SENDRECV:
	case PERF_NR_COLLS:
		break;
	}
	return 1.0;
}

static const char *const redops[PERF_NR_REDOPS] = { "sum", "prod", "max", "min", "avg" };

const char *perf_redop_name(enum perf_redop op)
{
	return redops[op];
}

int perf_redop_from_name(const char *name, enum perf_redop *ret)
{
	for (size_t i = 0; i < PERF_NR_REDOPS; i++)
		if (streq(name, redops[i])) {
			*ret = (enum perf_redop)i;
			return 0;
		}
	return -EINVAL;
}

void perf_layout(enum perf_coll coll, size_t bytes, size_t elt_size, int nranks,
		 struct perf_layout *ret)
{
	size_t count = bytes / elt_size;
	size_t n = (size_t)nranks;
	/* Per-rank chunks in whole 16-byte units, as nccl-tests sizes them. */
	size_t chunk = (count / n) & ~(16 / elt_size - 1);

	memset(ret, 0, sizeof(*ret));
	switch (coll) {
	case PERF_ALL_GATHER:
		ret->param_count = chunk;
		ret->send_count = chunk;
		ret->recv_count = chunk * n;
		ret->send_inplace = chunk;
		break;
	case PERF_REDUCE_SCATTER:
		ret->param_count = chunk;
		ret->send_count = chunk * n;
		ret->recv_count = chunk;
		ret->recv_inplace = chunk;
		break;
	case PERF_ALLTOALL:
		ret->param_count = chunk;
		ret->send_count = chunk * n;
		ret->recv_count = chunk * n;
		break;
	case PERF_ALL_REDUCE:
	case PERF_BROADCAST:
	case PERF_REDUCE:
	case PERF_SENDRECV:
	case PERF_NR_COLLS:
		ret->param_count = count;
		ret->send_count = count;
		ret->recv_count = count;
		break;
	}
	ret->size_bytes =
		(ret->send_count > ret->recv_count ? ret->send_count : ret->recv_count) * elt_size;
}

int perf_parse_size(const char *s, uint64_t *ret)
{
	uint64_t whole = 0, frac_num = 0, frac_den = 1, unit = 1;
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (whole > (UINT64_C(1) << 62) / 10)
			return -ERANGE;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (frac_den >= UINT64_C(1000000000))
				return -EINVAL;
			frac_num = frac_num * 10 + (uint64_t)(*p - '0');
			frac_den *= 10;
		}
	}
	switch (*p) {
	case 'K':
	case 'k':
		unit = UINT64_C(1) << 10;
		p++;
		break;
	case 'M':
	case 'm':
		unit = UINT64_C(1) << 20;
		p++;
		break;
	case 'G':
	case 'g':
		unit = UINT64_C(1) << 30;
		p++;
		break;
	default:
		break;
	}
	/* "64KiB" and "64KB" read as 64K too; anything else is an error. */
	if (unit > 1 && (streq(p, "iB") || streq(p, "B")))
		p += strlen(p);
	else if (unit == 1 && streq(p, "B"))
		p++;
	if (*p)
		return -EINVAL;
	if (whole > (UINT64_C(1) << 62) / unit)
		return -ERANGE;
	uint64_t v = whole * unit + frac_num * unit / frac_den;
	if (v == 0)
		return -EINVAL;
	if (v > (UINT64_C(1) << 62))
		return -ERANGE;
	*ret = v;
	return 0;
}

uint64_t perf_sweep_next(uint64_t cur, uint64_t factor, uint64_t step)
{
	uint64_t next = factor > 1 ? cur * factor : cur + step;

	/* Past the top instead of wrapping: the caller's "<= max" ends the sweep. */
	if (next <= cur)
		return UINT64_MAX;
	return next;
}

void perf_format_number(char *buf, size_t size, double value, int width)
{
	static const int decimals[] = { 2, 1, 0 };

	for (size_t i = 0; i < ARRAY_SIZE(decimals); i++) {
		int n = snprintf(buf, size, "%*.*f", width, decimals[i], value);
		if (n >= 0 && n <= width && (size_t)n < size)
			return;
	}
	snprintf(buf, size, "%*.*e", width, width >= 7 ? 1 : 0, value);
}

void perf_bandwidth(enum perf_coll coll, uint64_t size_bytes, int nranks, double time_us,
		    double *algbw, double *busbw)
{
	double sec = time_us / 1e6;

	*algbw = sec > 0 ? (double)size_bytes / 1e9 / sec : 0;
	*busbw = *algbw * perf_busbw_factor(coll, nranks);
}

void perf_check_init(struct perf_check *c, enum perf_coll coll, enum perf_dtype t,
		     enum perf_redop redop, int nranks, int rank, int root, size_t chunk,
		     unsigned seed)
{
	bool reduces = perf_coll_info(coll)->has_redop;
	enum perf_redop pattern = reduces ? redop : PERF_MAX;

	*c = (struct perf_check){
		.type = t,
		.pattern = pattern,
		.nranks = nranks,
		.seed = seed,
		.span = perf_input_span(pattern, t, nranks),
		.source = PERF_CHECK_REDUCED,
		.chunk = chunk,
		.tol = reduces ? perf_value_tolerance(redop, t) : 0,
	};
	switch (coll) {
	case PERF_ALL_REDUCE:
	case PERF_REDUCE:
		break;
	case PERF_REDUCE_SCATTER:
		c->base = (uint64_t)rank * chunk;
		break;
	case PERF_BROADCAST:
		c->source = PERF_CHECK_ONE_RANK;
		c->src_rank = root;
		break;
	case PERF_SENDRECV:
		c->source = PERF_CHECK_ONE_RANK;
		c->src_rank = (rank + nranks - 1) % nranks;
		break;
	case PERF_ALL_GATHER:
		c->source = PERF_CHECK_BLOCKS;
		break;
	case PERF_ALLTOALL:
		c->source = PERF_CHECK_BLOCKS;
		c->base = (uint64_t)rank * chunk;
		break;
	case PERF_NR_COLLS:
		break;
	}
}

bool perf_adaptive_loop(double op_us, unsigned iters)
{
	return op_us > 0 && op_us * iters >= PERF_ADAPTIVE_MIN_FIXED_US;
}

void perf_loop_add(struct perf_loop *l, double op_us)
{
	if (l->m++ == 0) {
		l->first_us = op_us;
		return;
	}
	l->sum += op_us;
	l->sumsq += op_us * op_us;
}

double perf_loop_time(const struct perf_loop *l)
{
	return l->m ? (l->first_us + l->sum) / l->m : 0;
}

void perf_loop_shares(const struct perf_loop *l, double shares[2])
{
	unsigned n = l->m ? l->m - 1 : 0;
	double mean, var;

	shares[0] = shares[1] = INFINITY;
	if (n < PERF_ADAPTIVE_MIN_OPS)
		return;
	mean = l->sum / n;
	if (!(mean > 0))
		return;
	var = fmax(0, (l->sumsq - l->sum * mean) / (n - 1));
	shares[0] = perf_t95(n - 1) * sqrt(var / n) / mean;
	shares[1] = fmax(0, l->first_us - mean) / (l->first_us + l->sum);
}

bool perf_loop_done(const double shares[2], double precision)
{
	return shares[0] <= precision && shares[1] <= PERF_ADAPTIVE_START_SHARE;
}

double perf_t95(unsigned df)
{
	static const double table[] = {
		12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23
	};

	if (df == 0)
		return INFINITY;
	/* Past the table, within 0.002 of the exact value. */
	return df <= ARRAY_SIZE(table) ? table[df - 1] : 1.96 + 2.5 / df;
}

int perf_parse_cpulist(const char *s, cpu_set_t *set)
{
	const char *p = s;

	CPU_ZERO(set);
	while (*p && *p != '\n') {
		char *end;
		unsigned long lo, hi;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		lo = strtoul(p, &end, 10);
		hi = lo;
		if (*end == '-') {
			p = end + 1;
			if (*p < '0' || *p > '9')
				return -EINVAL;
			hi = strtoul(p, &end, 10);
		}
		if (hi < lo)
			return -EINVAL;
		if (hi >= CPU_SETSIZE)
			return -ERANGE;
		for (unsigned long c = lo; c <= hi; c++)
			CPU_SET(c, set);
		p = end;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	return CPU_COUNT(set) ? 0 : -EINVAL;
}

void perf_format_cpulist(const cpu_set_t *set, struct strbuf *out)
{
	const char *sep = "";

	for (size_t c = 0; c < CPU_SETSIZE; c++) {
		size_t last = c;
		if (!CPU_ISSET(c, set))
			continue;
		while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
			last++;
		if (last > c)
			strbuf_addf(out, "%s%zu-%zu", sep, c, last);
		else
			strbuf_addf(out, "%s%zu", sep, c);
		sep = ",";
		c = last;
	}
}

static const char *const bind_names[] = {
	[PERF_BIND_NUMA] = "numa",
	[PERF_BIND_CORE] = "core",
	[PERF_BIND_NONE] = "none",
};

int perf_bind_from_name(const char *name, enum perf_bind *ret)
{
	for (size_t i = 0; i < ARRAY_SIZE(bind_names); i++) {
		if (streq(name, bind_names[i])) {
			*ret = (enum perf_bind)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *perf_bind_name(enum perf_bind bind)
{
	return bind_names[bind];
}

static long core_id(const int *core_of, size_t cpu)
{
	return core_of[cpu] >= 0 ? core_of[cpu] : (long)cpu;
}

/* Whether cpu is the first CPU of its core within allowed. */
static bool first_of_core(const cpu_set_t *allowed, const int *core_of, size_t cpu)
{
	for (size_t p = 0; p < cpu; p++)
		if (CPU_ISSET(p, allowed) && core_id(core_of, p) == core_id(core_of, cpu))
			return false;
	return true;
}

void perf_pick_core(const cpu_set_t *allowed, const int *core_of, const unsigned long *capacity,
		    unsigned index, cpu_set_t *out)
{
	size_t firsts[CPU_SETSIZE], cores = 0, pick;

	CPU_ZERO(out);
	/* The first CPU of every core, fastest first, in CPU order among equals. */
	for (size_t c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, allowed) || !first_of_core(allowed, core_of, c))
			continue;
		size_t at = cores++;
		while (at > 0 && capacity[firsts[at - 1]] < capacity[c]) {
			firsts[at] = firsts[at - 1];
			at--;
		}
		firsts[at] = c;
	}
	if (cores == 0)
		return;
	pick = firsts[index % cores];
	for (size_t c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, allowed) && core_id(core_of, c) == core_id(core_of, pick))
			CPU_SET(c, out);
}

/* The text after "key" on a line, or NULL. */
static const char *after(const char *line, const char *key)
{
	const char *p = strstr(line, key);

	return p ? p + strlen(key) : NULL;
}

static void append_word(char *dst, size_t size, const char *word, size_t len)
{
	size_t used = strlen(dst);

	/* Once per distinct word, space-separated, as much as fits. */
	for (const char *p = dst; *p;) {
		size_t wl = strcspn(p, " ");
		if (wl == len && memcmp(p, word, len) == 0)
			return;
		p += wl;
		p += strspn(p, " ");
	}
	if (used + (used ? 1 : 0) + len + 1 > size)
		return;
	if (used)
		dst[used++] = ' ';
	memcpy(dst + used, word, len);
	dst[used + len] = '\0';
}

void perf_parse_nccl_log(const char *log, struct perf_nccl_path *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->gdr = -1;
	ret->channels = -1;
	for (const char *line = log; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char buf[1024];
		const char *v;

		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
		memcpy(buf, line, len);
		buf[len] = '\0';
		line = end ? end + 1 : NULL;
		if (!strstr(buf, "NCCL INFO"))
			continue;
		if ((v = after(buf, "Using network "))) {
			size_t n = strcspn(v, " ");
			if (n < sizeof(ret->network)) {
				memcpy(ret->network, v, n);
				ret->network[n] = '\0';
			}
		} else if ((v = after(buf, "NET/IB : Using ")) ||
			   (v = after(buf, "NET/Socket : Using "))) {
			bool socket = strstr(buf, "NET/Socket") != NULL;
			/* "[0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>" */
			while (*v == '[') {
				const char *close = strchr(v, ']');
				if (!close)
					break;
				v = close + 1;
				size_t n = strcspn(v, " ;<");
				if (n && !(n == 2 && memcmp(v, "RO", 2) == 0)) {
					/* a Socket device is "lo:127.0.0.1": keep the name */
					size_t name = socket ? strcspn(v, ":") : n;
					append_word(ret->devices, sizeof(ret->devices), v,
						    name < n ? name : n);
				}
				v += n;
				v += strcspn(v, " ;"); /* past "<0>" */
				v += strspn(v, " ");
			}
		} else if (strstr(buf, "GPU Direct RDMA Enabled")) {
			ret->gdr = 1;
		} else if (strstr(buf, "GPU Direct RDMA Disabled") && ret->gdr != 1) {
			ret->gdr = 0;
		} else if ((v = after(buf, " via "))) {
			size_t n = strcspn(v, " ");
			/* NET/IB/0/GDRDMA: the device index says little; keep it whole */
			append_word(ret->transports, sizeof(ret->transports), v, n);
		} else if ((v = strstr(buf, " coll channels"))) {
			const char *p = v;
			while (p > buf && p[-1] >= '0' && p[-1] <= '9')
				p--;
			if (p < v)
				ret->channels = (int)strtol(p, NULL, 10);
		}
	}
}

/* Whether any channel's transport is NCCL's network ("NET/IB/0", "NET/Socket/1"). */
static bool uses_network(const char *transports)
{
	for (const char *p = transports; *p;) {
		if (strncmp(p, "NET/", 4) == 0)
			return true;
		p += strcspn(p, " ");
		p += strspn(p, " ");
	}
	return false;
}

void perf_nccl_path_describe(const struct perf_nccl_path *p, struct strbuf *out)
{
	size_t start = out->len;

	/*
	 * NCCL sets its network up even when every channel stays within the
	 * node (NVLink, PCIe, shared memory): say so, lest "network Socket"
	 * read as a fall back to TCP.
	 */
	if (p->transports[0] && !uses_network(p->transports)) {
		strbuf_addstr(out, "within the node: ");
		if (p->channels >= 0)
			strbuf_addf(out, "%d channels ", p->channels);
		strbuf_addf(out, "via %s", p->transports);
		if (p->network[0])
			strbuf_addf(out, " (network %s%s%s unused)", p->network,
				    p->devices[0] ? " " : "", p->devices);
		return;
	}
	if (p->network[0])
		strbuf_addf(out, "network %s", p->network);
	if (p->devices[0])
		strbuf_addf(out, "%s%s", out->len > start ? " " : "", p->devices);
	if (p->gdr >= 0)
		strbuf_addf(out, "%sGPUDirect RDMA %s", out->len > start ? ", " : "",
			    p->gdr ? "on" : "off");
	if (p->channels >= 0)
		strbuf_addf(out, "%s%d channels", out->len > start ? ", " : "", p->channels);
	if (p->transports[0])
		strbuf_addf(out, "%svia %s", out->len > start ? ", " : "", p->transports);
	if (out->len == start)
		strbuf_addstr(out, "unknown (NCCL said nothing about it)");
}
