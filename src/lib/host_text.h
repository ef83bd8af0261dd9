/*
 * host_text.h - pure parsers for the text of the host's files: sysfs, procfs, /etc.
 *
 * No I/O: each takes the file's text (as read, trailing newline removed
 * for one-value files) and returns 0 with the result, or -EINVAL when the
 * text is not in the kernel's format.  They are fuzzed
 * (tests/fuzz/fuzz-parsers.c) and unit-tested on the exact formats of
 * reference/spark-hardware.md.
 */
#ifndef SPARKCTL_HOST_TEXT_H
#define SPARKCTL_HOST_TEXT_H

#include "sparkctl.h"
#include "lib/strbuf.h"

/*
 * ports/P/state and ports/P/phys_state: "%d: %s" ("4: ACTIVE",
 * "7: Phy Test").  *ret_name is allocated.
 */
int parse_port_state(const char *s, int *ret_code, char **ret_name);

/* ports/P/rate: "200 Gb/sec (2X NDR)", "2.5 Gb/sec (1X SDR)" -> Mb/s. */
int parse_port_rate(const char *s, int64_t *ret_mbps);

/*
 * A GID as the kernel prints it ("%pI6": fe80:0000:...:4231), or any
 * other IPv6 text form.
 */
int parse_gid(const char *s, uint8_t ret_raw[16]);
/* The kernel's form of a GID: eight groups of four hex digits.  buf: >= 40 bytes. */
void format_gid(const uint8_t raw[16], char buf[40]);
/* True for an IPv4-mapped GID (::ffff:a.b.c.d); the address goes to buf (>= 16 bytes). */
bool gid_ipv4(const uint8_t raw[16], char buf[16]);
/* True for the all-zero GID of an empty table slot. */
bool gid_is_zero(const uint8_t raw[16]);

/*
 * gid_attrs/types/N as NCCL reads it: 1 for "IB/RoCE v1" or "RoCE v1",
 * 2 for "RoCE v2", 0 for anything else (NULL included).
 */
int gid_type_version(const char *type);

/* PCI current_link_speed: "32.0 GT/s PCIe", "8 GT/s" -> thousandths of GT/s. */
int parse_link_speed(const char *s, uint64_t *ret_milli_gts);

/* The value of the line "KEY N" in an AER counter file (aer_dev_fatal ...). */
int parse_aer_total(const char *text, const char *key, int64_t *ret);

/* The value of "Key:   N kB" in /proc/meminfo, in bytes. */
int parse_meminfo(const char *text, const char *key, int64_t *ret_bytes);

/* True when module name is listed in the text of /proc/modules. */
bool modules_contains(const char *text, const char *name);

/*
 * The value of KEY in an os-release file (quotes and backslash escapes
 * removed).  -ENOENT when the key is absent.  *ret is allocated.
 */
int parse_os_release(const char *text, const char *key, char **ret);

/*
 * /proc/driver/nvidia/version: the driver version and whether it is the
 * open kernel module.  *ret_version is allocated.
 */
int parse_nvidia_version(const char *text, char **ret_version, int *ret_open);

/*
 * One line of an NCCL configuration file, by NCCL's own rules: lines
 * starting with '#' and lines without '=' are skipped (-ENOENT); the key
 * is everything before the first '=', the value everything after it.
 */
int parse_nccl_conf_line(const char *line, char **ret_key, char **ret_value);

/*
 * The interfaces that carry an IPv4 default route, from /proc/net/route:
 * calls fn(ifname, data) for each.
 */
int parse_default_routes(const char *text, void (*fn)(const char *ifname, void *data), void *data);

#endif
