#include "sparkctl.h"

#include "lib/ipv4.h"
#include "lib/parse.h"

int ipv4_parse(const char *s, uint32_t *ret)
{
	uint32_t addr = 0;
	const char *p = s;

	for (int i = 0; i < 4; i++) {
		size_t n = 0;
		uint64_t v;
		while (p[n] >= '0' && p[n] <= '9')
			n++;
		/* One to three digits, no leading zero (which some tools read as octal). */
		if (n == 0 || n > 3 || (n > 1 && p[0] == '0'))
			return -EINVAL;
		if (parse_u64_n(p, n, &v) < 0 || v > 255)
			return -EINVAL;
		addr = addr << 8 | (uint32_t)v;
		p += n;
		if (i < 3 && *p++ != '.')
			return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	*ret = addr;
	return 0;
}

int cidr_parse(const char *s, struct cidr *ret)
{
	const char *slash = strchr(s, '/');
	char addr[16];
	uint32_t len;

	if (!slash || (size_t)(slash - s) >= sizeof(addr))
		return -EINVAL;
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = '\0';
	if (ipv4_parse(addr, &ret->addr) < 0 || parse_u32(slash + 1, &len) < 0 || len > 32)
		return -EINVAL;
	ret->prefix = len;
	return 0;
}

void ipv4_format(uint32_t addr, char buf[16])
{
	snprintf(buf, 16, "%u.%u.%u.%u", addr >> 24, (addr >> 16) & 0xff, (addr >> 8) & 0xff,
		 addr & 0xff);
}

void cidr_format(const struct cidr *c, char buf[19])
{
	char a[16];

	ipv4_format(c->addr, a);
	snprintf(buf, 19, "%s/%u", a, c->prefix);
}

uint32_t cidr_mask(unsigned prefix)
{
	return prefix == 0 ? 0 : prefix >= 32 ? 0xffffffffu : ~((1u << (32 - prefix)) - 1);
}

struct cidr cidr_network(const struct cidr *c)
{
	struct cidr n = { c->addr & cidr_mask(c->prefix), c->prefix };
	return n;
}

bool cidr_contains(const struct cidr *net, uint32_t addr)
{
	uint32_t m = cidr_mask(net->prefix);
	return (net->addr & m) == (addr & m);
}

bool cidr_overlaps(const struct cidr *a, const struct cidr *b)
{
	/* Two blocks overlap exactly when the larger contains the other's network. */
	unsigned p = a->prefix < b->prefix ? a->prefix : b->prefix;
	uint32_t m = cidr_mask(p);
	return (a->addr & m) == (b->addr & m);
}

struct cidr cidr_cover(const struct cidr *a, const struct cidr *b)
{
	unsigned p = a->prefix < b->prefix ? a->prefix : b->prefix;

	while (p > 0 && (a->addr & cidr_mask(p)) != (b->addr & cidr_mask(p)))
		p--;
	struct cidr c = { a->addr & cidr_mask(p), p };
	return c;
}
