/*
 * parse.h - strict number parsing.
 *
 * Each function accepts exactly one number that is the whole string: no
 * leading or trailing spaces, no sign where none is allowed, no empty
 * string.  They return 0 and write *ret on success, -EINVAL for text that
 * is not such a number and -ERANGE when it does not fit; *ret is left
 * untouched on failure.  Use these, never atoi()/strtol() at call sites.
 */
#ifndef SPARKCTL_PARSE_H
#define SPARKCTL_PARSE_H

#include "sparkctl.h"

int parse_u64(const char *s, uint64_t *ret);
int parse_u32(const char *s, uint32_t *ret);
/* An optional '-' followed by decimal digits. */
int parse_i64(const char *s, int64_t *ret);
int parse_int(const char *s, int *ret);
/* Hexadecimal digits with an optional "0x" prefix. */
int parse_u64_hex(const char *s, uint64_t *ret);
/*
 * A decimal number with up to three fraction digits, in thousandths:
 * "32.0" -> 32000, "2.5" -> 2500, "8" -> 8000.
 */
int parse_milli(const char *s, uint64_t *ret);
/* As parse_u64() but on the first len bytes of s only. */
int parse_u64_n(const char *s, size_t len, uint64_t *ret);

#endif
