#include "sparkctl.h"

#include "lib/parse.h"

int parse_u64_n(const char *s, size_t len, uint64_t *ret)
{
	uint64_t v = 0;

	if (len == 0)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*ret = v;
	return 0;
}

int parse_u64(const char *s, uint64_t *ret)
{
	return parse_u64_n(s, strlen(s), ret);
}

int parse_u32(const char *s, uint32_t *ret)
{
	uint64_t v;
	int r = parse_u64(s, &v);

	if (r < 0)
		return r;
	if (v > UINT32_MAX)
		return -ERANGE;
	*ret = (uint32_t)v;
	return 0;
}

int parse_i64(const char *s, int64_t *ret)
{
	bool neg = s[0] == '-';
	uint64_t v;
	int r = parse_u64(s + (neg ? 1 : 0), &v);

	if (r < 0)
		return r;
	if (neg) {
		if (v > (uint64_t)INT64_MAX + 1)
			return -ERANGE;
		*ret = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	} else {
		if (v > INT64_MAX)
			return -ERANGE;
		*ret = (int64_t)v;
	}
	return 0;
}

int parse_int(const char *s, int *ret)
{
	int64_t v;
	int r = parse_i64(s, &v);

	if (r < 0)
		return r;
	if (v < INT_MIN || v > INT_MAX)
		return -ERANGE;
	*ret = (int)v;
	return 0;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int parse_u64_hex(const char *s, uint64_t *ret)
{
	uint64_t v = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		int d = hex_digit(*s);
		if (d < 0)
			return -EINVAL;
		if (v >> 60)
			return -ERANGE;
		v = (v << 4) | (uint64_t)d;
	}
	*ret = v;
	return 0;
}

int parse_milli(const char *s, uint64_t *ret)
{
	const char *dot = strchr(s, '.');
	uint64_t whole, frac = 0;
	int r;

	r = parse_u64_n(s, dot ? (size_t)(dot - s) : strlen(s), &whole);
	if (r < 0)
		return r;
	if (dot) {
		size_t n = strlen(dot + 1);
		if (n == 0 || n > 3)
			return -EINVAL;
		r = parse_u64_n(dot + 1, n, &frac);
		if (r < 0)
			return r;
		for (; n < 3; n++)
			frac *= 10;
	}
	if (whole > (UINT64_MAX - frac) / 1000)
		return -ERANGE;
	*ret = whole * 1000 + frac;
	return 0;
}
