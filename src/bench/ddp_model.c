/*
 * ddp_model.c - the arithmetic of 'sparkctl bench ddp' (ddp_model.h).
 */
#include "sparkctl.h"

#include <math.h>

#include "bench/ddp_model.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int ddp_percentile(double *values, size_t n, double p, double *ret)
{
	double pos, frac;
	size_t lo;

	if (n == 0 || !(p >= 0 && p <= 100))
		return -EINVAL;
	qsort(values, n, sizeof(*values), cmp_double);
	pos = p / 100 * (double)(n - 1);
	lo = (size_t)floor(pos);
	frac = pos - (double)lo;
	*ret = lo + 1 < n ? values[lo] + frac * (values[lo + 1] - values[lo]) : values[lo];
	return 0;
}

double ddp_samples_per_second(unsigned ranks, unsigned batch_per_rank, double step_us)
{
	if (!(step_us > 0))
		return 0;
	return (double)ranks * batch_per_rank * 1e6 / step_us;
}

const char *ddp_scaling_name(enum ddp_scaling s)
{
	return s == DDP_SCALING_STRONG ? "strong" : "weak";
}

int ddp_strong_batch(unsigned global_batch, unsigned ranks, unsigned *per_rank)
{
	if (!ranks || global_batch < ranks || global_batch % ranks)
		return -EDOM;
	*per_rank = global_batch / ranks;
	return 0;
}

double ddp_ring_factor(unsigned ranks)
{
	return ranks < 2 ? 0 : 2.0 * (ranks - 1) / ranks;
}

double ddp_busbw(double bytes, unsigned ranks, double us)
{
	if (ranks < 2 || !(us > 0))
		return 0;
	/* bytes per us is 10^6 B/s: / 1000 for 10^9 B/s. */
	return ddp_ring_factor(ranks) * bytes / us / 1000;
}

int ddp_figures(const struct ddp_measure *m, const struct ddp_measure *base,
		struct ddp_figures *ret)
{
	double s1, sn, k;

	if (!m->nodes || !base->nodes || !m->batch_per_rank || !base->batch_per_rank)
		return -EINVAL;
	sn = ddp_samples_per_second(m->ranks, m->batch_per_rank, m->step_p50_us);
	s1 = ddp_samples_per_second(base->ranks, base->batch_per_rank, base->step_p50_us);
	if (!(sn > 0) || !(s1 > 0))
		return -EINVAL;
	ret->samples_per_second = sn;
	ret->speedup = sn / s1;
	ret->efficiency_ratio = sn / (m->nodes * s1);
	ret->comm_ratio = m->comm_us / m->step_p50_us;
	ret->other_us = m->step_p50_us - m->compute_us - m->comm_us;
	ret->busbw_gbytes_per_second = ddp_busbw(m->grad_bytes, m->ranks, m->comm_us);
	/* The work per rank against base's: 1 under weak scaling, 1/N under strong. */
	k = (double)m->batch_per_rank / base->batch_per_rank;
	ret->lost_comm_ratio = m == base ? 0 : (m->comm_us - k * base->comm_us) / m->step_p50_us;
	ret->lost_other_ratio = m == base ? 0 : 1 - ret->efficiency_ratio - ret->lost_comm_ratio;
	return 0;
}

const char *ddp_plan_name(enum ddp_fabric_plan plan)
{
	return plan == DDP_PLAN_RING ? "ring" : "switch";
}

bool ddp_plan_allows(enum ddp_fabric_plan plan, unsigned nodes)
{
	return plan == DDP_PLAN_RING ? nodes == DDP_RING_NODES : nodes >= 2;
}

double ddp_plan_link_ratio(enum ddp_fabric_plan plan)
{
	return plan == DDP_PLAN_RING ? DDP_RING_LINK_RATIO : 1;
}

int ddp_predict(const struct ddp_measure *base, const struct ddp_measure *multi,
		enum ddp_scaling scaling, enum ddp_fabric_plan plan, unsigned nodes,
		struct ddp_prediction *ret)
{
	unsigned per_node, ranks;
	double busbw, s1, samples;

	if (!nodes || !multi->nodes || multi->ranks < 2 || multi->ranks % multi->nodes)
		return -EINVAL;
	busbw = ddp_busbw(multi->grad_bytes, multi->ranks, multi->comm_us);
	s1 = ddp_samples_per_second(base->ranks, base->batch_per_rank, base->step_p50_us);
	if (!(busbw > 0) || !(s1 > 0) || !(multi->compute_us > 0))
		return -EINVAL;
	if (!ddp_plan_allows(plan, nodes))
		return -ERANGE;
	per_node = multi->ranks / multi->nodes;
	ranks = nodes * per_node;
	ret->nodes = nodes;
	ret->ranks = ranks;
	ret->busbw_gbytes_per_second = busbw * ddp_plan_link_ratio(plan);
	if (scaling == DDP_SCALING_STRONG) {
		/* The global batch spread over more ranks: each computes that much less. */
		samples = (double)multi->ranks * multi->batch_per_rank;
		ret->compute_us = multi->compute_us * multi->ranks / ranks;
	} else {
		samples = (double)ranks * multi->batch_per_rank;
		ret->compute_us = multi->compute_us;
	}
	ret->comm_us =
		ddp_ring_factor(ranks) * multi->grad_bytes / ret->busbw_gbytes_per_second / 1000;
	ret->rest_us = multi->step_p50_us - multi->compute_us - multi->comm_us;
	ret->step_us = ret->compute_us + ret->comm_us + ret->rest_us;
	if (ret->step_us < ret->compute_us || ret->step_us < ret->comm_us)
		ret->step_us = ret->compute_us > ret->comm_us ? ret->compute_us : ret->comm_us;
	ret->samples_per_second = samples * 1e6 / ret->step_us;
	ret->speedup = ret->samples_per_second / s1;
	ret->efficiency_ratio = ret->speedup / nodes;
	return 0;
}

uint64_t ddp_bucket_bytes(double grad_bytes, unsigned buckets, unsigned elem_bytes)
{
	double mean = buckets ? grad_bytes / buckets : grad_bytes;
	uint64_t elems;

	if (!elem_bytes || !(mean >= elem_bytes))
		return elem_bytes ? elem_bytes : 1;
	elems = (uint64_t)(mean / elem_bytes);
	return elems * elem_bytes;
}

/* The whitespace-separated words of line [p, end), at most max: a count. */
static size_t split_words(const char *p, const char *end, const char **words, size_t *lens,
			  size_t max)
{
	size_t n = 0;

	while (p < end && n < max) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p == end)
			break;
		words[n] = p;
		while (p < end && *p != ' ' && *p != '\t')
			p++;
		lens[n] = (size_t)(p - words[n]);
		n++;
	}
	return n;
}

static bool word_is(const char *w, size_t len, const char *s)
{
	return strlen(s) == len && !memcmp(w, s, len);
}

int ddp_nccl_row_busbw(const char *out, uint64_t bytes, double *ret)
{
	char size[32], num[32];
	const char *line = out;

	snprintf(size, sizeof(size), "%" PRIu64, bytes);
	while (*line) {
		const char *end = line + strcspn(line, "\n");
		const char *w[24];
		size_t len[24], n = split_words(line, end, w, len, ARRAY_SIZE(w));
		/*
		 * size count type redop root | time algbw busbw #wrong | time algbw
		 * busbw #wrong; never a comment (the header names the sizes too).
		 */
		bool comment = memchr(line, '#', (size_t)(end - line)) != NULL;
		for (size_t i = 0; !comment && i + 12 < n; i++) {
			char *stop;
			double v;
			if (!word_is(w[i], len[i], size) || !word_is(w[i + 3], len[i + 3], "sum") ||
			    len[i + 11] >= sizeof(num))
				continue;
			memcpy(num, w[i + 11], len[i + 11]);
			num[len[i + 11]] = '\0';
			errno = 0;
			v = strtod(num, &stop);
			if (!errno && *stop == '\0' && stop != num && v >= 0) {
				*ret = v;
				return 0;
			}
		}
		line = *end ? end + 1 : end;
	}
	return -ENOENT;
}

static int64_t sat_mul(int64_t a, int64_t b)
{
	if (a <= 0 || b <= 0)
		return 0;
	return a > INT64_MAX / b ? INT64_MAX : a * b;
}

static int64_t sat_add(int64_t a, int64_t b)
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

int64_t ddp_rank_bytes(int64_t params, unsigned elem_bytes, int64_t activation_elems,
		       unsigned batch)
{
	int64_t state = sat_mul(sat_mul(params, 4), elem_bytes);
	int64_t acts = sat_mul(sat_mul(sat_mul(activation_elems, batch), elem_bytes), 2);

	return sat_add(state, acts);
}

bool ddp_fits(int64_t rank_bytes, unsigned ranks, int64_t available, double margin)
{
	double need = (double)rank_bytes * ranks;

	return available > 0 && need <= (double)available * (1 - margin);
}

int ddp_shape(enum ddp_model_kind kind, int64_t params, struct ddp_shape *ret)
{
	double w;

	switch (kind) {
	case DDP_MODEL_MLP:
		/* layers x (w^2 + w) <= params */
		w = floor((-1 + sqrt(1 + 4.0 * (double)params / DDP_MLP_LAYERS)) / 2);
		if (w < 1)
			return -EINVAL;
		ret->width = (unsigned)w;
		ret->params = (int64_t)DDP_MLP_LAYERS * ((int64_t)w * (int64_t)w + (int64_t)w);
		/* each layer's output, and the ReLU's between them */
		ret->activation_elems = (int64_t)(2 * DDP_MLP_LAYERS) * (int64_t)w;
		return 0;
	case DDP_MODEL_TRANSFORMER:
		/*
		 * A layer: attention 4d^2 + 4d, feed-forward (4d) 8d^2 + 5d, two
		 * norms 4d: 12d^2 + 13d.  d a multiple of 8 (heads of 8 wide).
		 */
		w = floor((-13 + sqrt(169 + 48.0 * (double)params / DDP_TF_LAYERS)) / 24);
		w = floor(w / 8) * 8;
		if (w < 8)
			return -EINVAL;
		ret->width = (unsigned)w;
		ret->params =
			(int64_t)DDP_TF_LAYERS * (12 * (int64_t)w * (int64_t)w + 13 * (int64_t)w);
		/* per token and layer: about 16 d kept (qkv, attention out, 4d x 2 ff, norms) */
		ret->activation_elems = (int64_t)DDP_TF_LAYERS * DDP_TF_SEQ * 16 * (int64_t)w;
		return 0;
	}
	return -EINVAL;
}
