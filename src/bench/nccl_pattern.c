/*
 * nccl_pattern.c - the data of bench nccl's result check: what each rank
 * sends, what each collective should leave on each rank, and how a value
 * is held in each element type.  The model of the check kernels
 * (nccl_check.ptx), which do the same on the GPU; the host check and the
 * stand-in driver of the tests use it as it is.  Pure: no I/O, no
 * allocation, so that the stand-in can build it too.
 */
#include "sparkctl.h"

#include <math.h>

#include "bench/nccl_perf.h"

static const struct {
	const char *name;
	size_t size;
} dtypes[PERF_NR_DTYPES] = {
	[PERF_INT8] = { "int8", 1 },	 [PERF_UINT8] = { "uint8", 1 },
	[PERF_INT32] = { "int32", 4 },	 [PERF_UINT32] = { "uint32", 4 },
	[PERF_INT64] = { "int64", 8 },	 [PERF_UINT64] = { "uint64", 8 },
	[PERF_HALF] = { "half", 2 },	 [PERF_FLOAT] = { "float", 4 },
	[PERF_DOUBLE] = { "double", 8 }, [PERF_BFLOAT16] = { "bfloat16", 2 },
};

const char *perf_dtype_name(enum perf_dtype t)
{
	return dtypes[t].name;
}

size_t perf_dtype_size(enum perf_dtype t)
{
	return dtypes[t].size;
}

int perf_dtype_from_name(const char *name, enum perf_dtype *ret)
{
	for (size_t i = 0; i < PERF_NR_DTYPES; i++)
		if (streq(name, dtypes[i].name)) {
			*ret = (enum perf_dtype)i;
			return 0;
		}
	return -EINVAL;
}

/* Largest integer each type holds exactly (signed int8: 127). */
static double exact_bound(enum perf_dtype t)
{
	switch (t) {
	case PERF_INT8:
		return 127;
	case PERF_UINT8:
		return 255;
	case PERF_HALF:
		return 2048;
	case PERF_BFLOAT16:
		return 256;
	default:
		return 1 << 20;
	}
}

static uint64_t mix(uint64_t x)
{
	/* splitmix64's finaliser: neighbouring elements get unrelated values. */
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

uint64_t perf_input_span(enum perf_redop op, enum perf_dtype t, int nranks)
{
	switch (op) {
	case PERF_PROD:
		return 0;
	case PERF_SUM:
	case PERF_AVG: {
		/* Values 0..m with m * nranks within the exact range of t. */
		double m = exact_bound(t) / nranks;
		return m >= 8 ? 8 : m >= 1 ? (uint64_t)m + 1 : 1;
	}
	case PERF_MAX:
	case PERF_MIN:
	case PERF_NR_REDOPS:
		break;
	}
	return 100;
}

/* The value rank holds at element i, for a pattern and its span. */
static uint64_t input_of(enum perf_redop op, uint64_t span, int nranks, int rank, uint64_t i,
			 unsigned seed)
{
	if (op == PERF_PROD)
		/* One rank holds 2, the others 1: the product is 2 for any count. */
		return i % (uint64_t)nranks == (uint64_t)rank ? 2 : 1;
	return mix(i * UINT64_C(0x9e3779b97f4a7c15) +
		   (uint64_t)rank * UINT64_C(0x632be59bd9b4e019) + seed) %
	       span;
}

double perf_input_value(enum perf_redop op, enum perf_dtype t, int nranks, int rank, uint64_t i,
			unsigned seed)
{
	return (double)input_of(op, perf_input_span(op, t, nranks), nranks, rank, i, seed);
}

/* op folded over every rank's value at element i; avg divided (floored for integers). */
static double reduced_of(enum perf_redop op, enum perf_dtype t, uint64_t span, int nranks,
			 uint64_t i, unsigned seed)
{
	double acc = (double)input_of(op, span, nranks, 0, i, seed);

	for (int r = 1; r < nranks; r++) {
		double v = (double)input_of(op, span, nranks, r, i, seed);
		switch (op) {
		case PERF_SUM:
		case PERF_AVG:
			acc += v;
			break;
		case PERF_PROD:
			acc *= v;
			break;
		case PERF_MAX:
			acc = v > acc ? v : acc;
			break;
		case PERF_MIN:
			acc = v < acc ? v : acc;
			break;
		case PERF_NR_REDOPS:
			break;
		}
	}
	if (op == PERF_AVG) {
		bool integer = t <= PERF_UINT64;
		acc = integer ? floor(acc / nranks) : acc / nranks;
	}
	return acc;
}

double perf_reduced_value(enum perf_redop op, enum perf_dtype t, int nranks, uint64_t i,
			  unsigned seed)
{
	return reduced_of(op, t, perf_input_span(op, t, nranks), nranks, i, seed);
}

static uint16_t half_from_float(float f)
{
	uint32_t x, sign, mant;
	int exp;

	memcpy(&x, &f, sizeof(x));
	sign = (x >> 16) & 0x8000;
	exp = (int)((x >> 23) & 0xff) - 127 + 15;
	mant = x & 0x7fffff;
	if (exp >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (exp <= 0) {
		if (exp < -10)
			return (uint16_t)sign;
		mant |= 0x800000;
		uint32_t shift = (uint32_t)(14 - exp);
		uint32_t h = mant >> shift, rest = mant & ((1u << shift) - 1),
			 half = 1u << (shift - 1);
		if (rest > half || (rest == half && (h & 1)))
			h++;
		return (uint16_t)(sign | h);
	}
	uint32_t h = ((uint32_t)exp << 10) | (mant >> 13), rest = mant & 0x1fff;
	if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
		h++; /* may carry into the exponent, which is right */
	return (uint16_t)(sign | h);
}

static float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, x;
	float f;

	if (exp == 0) {
		/* Zero or subnormal: mant * 2^-24. */
		f = (float)mant / 16777216.0f;
		return sign ? -f : f;
	}
	if (exp == 31)
		x = sign | 0x7f800000 | (mant << 13);
	else
		x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
	memcpy(&f, &x, sizeof(f));
	return f;
}

static uint16_t bf16_from_float(float f)
{
	uint32_t x;

	memcpy(&x, &f, sizeof(x));
	x += 0x7fff + ((x >> 16) & 1); /* round to nearest even */
	return (uint16_t)(x >> 16);
}

static float bf16_to_float(uint16_t b)
{
	uint32_t x = (uint32_t)b << 16;
	float f;

	memcpy(&f, &x, sizeof(f));
	return f;
}

void perf_store(enum perf_dtype t, void *buf, size_t i, double v)
{
	switch (t) {
	case PERF_INT8:
		((int8_t *)buf)[i] = (int8_t)v;
		break;
	case PERF_UINT8:
		((uint8_t *)buf)[i] = (uint8_t)v;
		break;
	case PERF_INT32:
		((int32_t *)buf)[i] = (int32_t)v;
		break;
	case PERF_UINT32:
		((uint32_t *)buf)[i] = (uint32_t)v;
		break;
	case PERF_INT64:
		((int64_t *)buf)[i] = (int64_t)v;
		break;
	case PERF_UINT64:
		((uint64_t *)buf)[i] = (uint64_t)v;
		break;
	case PERF_HALF:
		((uint16_t *)buf)[i] = half_from_float((float)v);
		break;
	case PERF_FLOAT:
		((float *)buf)[i] = (float)v;
		break;
	case PERF_DOUBLE:
		((double *)buf)[i] = v;
		break;
	case PERF_BFLOAT16:
		((uint16_t *)buf)[i] = bf16_from_float((float)v);
		break;
	case PERF_NR_DTYPES:
		break;
	}
}

double perf_load(enum perf_dtype t, const void *buf, size_t i)
{
	switch (t) {
	case PERF_INT8:
		return ((const int8_t *)buf)[i];
	case PERF_UINT8:
		return ((const uint8_t *)buf)[i];
	case PERF_INT32:
		return ((const int32_t *)buf)[i];
	case PERF_UINT32:
		return ((const uint32_t *)buf)[i];
	case PERF_INT64:
		return (double)((const int64_t *)buf)[i];
	case PERF_UINT64:
		return (double)((const uint64_t *)buf)[i];
	case PERF_HALF:
		return half_to_float(((const uint16_t *)buf)[i]);
	case PERF_FLOAT:
		return ((const float *)buf)[i];
	case PERF_DOUBLE:
		return ((const double *)buf)[i];
	case PERF_BFLOAT16:
		return bf16_to_float(((const uint16_t *)buf)[i]);
	case PERF_NR_DTYPES:
		break;
	}
	return NAN;
}

double perf_value_tolerance(enum perf_redop op, enum perf_dtype t)
{
	if (op != PERF_AVG || t <= PERF_UINT64)
		return 0;
	/* Relative error of a sum of nranks pre-divided terms, with room. */
	return t == PERF_DOUBLE ? 1e-12 : t == PERF_FLOAT ? 1e-5 : 2e-2;
}

static bool value_ok(double tol, double got, double want)
{
	if (tol == 0)
		return got == want;
	return fabs(got - want) <= tol * (fabs(want) > 1 ? fabs(want) : 1);
}

bool perf_value_ok(enum perf_redop op, enum perf_dtype t, double got, double want)
{
	return value_ok(perf_value_tolerance(op, t), got, want);
}

uint64_t perf_check_value(const struct perf_check *c, int rank, uint64_t i)
{
	return input_of(c->pattern, c->span, c->nranks, rank, i, c->seed);
}

double perf_check_expected(const struct perf_check *c, uint64_t j)
{
	switch (c->source) {
	case PERF_CHECK_REDUCED:
		return reduced_of(c->pattern, c->type, c->span, c->nranks, c->base + j, c->seed);
	case PERF_CHECK_ONE_RANK:
		return (double)perf_check_value(c, c->src_rank, c->base + j);
	case PERF_CHECK_BLOCKS:
		return (double)perf_check_value(c, (int)(j / c->chunk), c->base + j % c->chunk);
	}
	return NAN;
}

void perf_check_fill(const struct perf_check *c, int rank, void *buf, size_t count)
{
	for (size_t i = 0; i < count; i++)
		perf_store(c->type, buf, i, (double)perf_check_value(c, rank, i));
}

uint64_t perf_check_count(const struct perf_check *c, const void *buf, size_t count)
{
	uint64_t wrong = 0;
	double held[1];

	for (size_t j = 0; j < count; j++) {
		/* Through the type, as the device holds it (half, bfloat16). */
		perf_store(c->type, held, 0, perf_check_expected(c, j));
		wrong += !value_ok(c->tol, perf_load(c->type, buf, j), perf_load(c->type, held, 0));
	}
	return wrong;
}
