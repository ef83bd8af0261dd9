/*
 * ipv4.h - IPv4 addresses and CIDR blocks as numbers.
 */
#ifndef SPARKCTL_IPV4_H
#define SPARKCTL_IPV4_H

#include "sparkctl.h"

struct cidr {
	uint32_t addr;	 /* host byte order; host bits may be set (an interface address) */
	unsigned prefix; /* 0..32 */
};

/* "a.b.c.d" (strict dotted quad). */
int ipv4_parse(const char *s, uint32_t *ret);
/* "a.b.c.d/len". */
int cidr_parse(const char *s, struct cidr *ret);
/* Dotted-quad text of addr; buf >= 16 bytes. */
void ipv4_format(uint32_t addr, char buf[16]);
/* "a.b.c.d/len"; buf >= 19 bytes. */
void cidr_format(const struct cidr *c, char buf[19]);

uint32_t cidr_mask(unsigned prefix);
/* The network of c (host bits cleared). */
struct cidr cidr_network(const struct cidr *c);
bool cidr_contains(const struct cidr *net, uint32_t addr);
/* True when the two blocks share any address. */
bool cidr_overlaps(const struct cidr *a, const struct cidr *b);
/* The smallest block containing both. */
struct cidr cidr_cover(const struct cidr *a, const struct cidr *b);

#endif
