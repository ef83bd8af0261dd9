#include "sparkctl.h"

#include <arpa/inet.h>
#include <ctype.h>

#include "lib/host_text.h"
#include "lib/parse.h"
#include "lib/xalloc.h"

int parse_port_state(const char *s, int *ret_code, char **ret_name)
{
	const char *colon = strchr(s, ':');
	uint64_t code;

	if (!colon || colon[1] != ' ' || !colon[2])
		return -EINVAL;
	if (parse_u64_n(s, (size_t)(colon - s), &code) < 0 || code > 255)
		return -EINVAL;
	for (const char *p = colon + 2; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != ' ' && *p != '_')
			return -EINVAL;
	*ret_code = (int)code;
	*ret_name = xstrdup(colon + 2);
	return 0;
}

/*
 * A decimal number (thousandths, see parse_milli) followed by a space and
 * unit; *ret_rest points after the unit.
 */
static int parse_milli_unit(const char *s, const char *unit, const char **ret_rest, uint64_t *ret)
{
	const char *sp = strchr(s, ' ');
	struct strbuf num = STRBUF_INIT;
	int r;

	if (!sp || !starts_with(sp + 1, unit))
		return -EINVAL;
	strbuf_add(&num, s, (size_t)(sp - s));
	r = parse_milli(num.buf, ret);
	strbuf_release(&num);
	if (r < 0)
		return -EINVAL;
	*ret_rest = sp + 1 + strlen(unit);
	return 0;
}

int parse_port_rate(const char *s, int64_t *ret_mbps)
{
	const char *rest;
	uint64_t milli;

	/* "%d%s Gb/sec (%dX%s)", where %s is "" or ".5" (kernel core/sysfs.c). */
	if (parse_milli_unit(s, "Gb/sec", &rest, &milli) < 0 || milli > (uint64_t)INT64_MAX)
		return -EINVAL;
	*ret_mbps = (int64_t)milli;
	return 0;
}

int parse_gid(const char *s, uint8_t ret_raw[16])
{
	struct in6_addr a;

	if (strlen(s) > INET6_ADDRSTRLEN)
		return -EINVAL;
	if (inet_pton(AF_INET6, s, &a) != 1)
		return -EINVAL;
	memcpy(ret_raw, a.s6_addr, 16);
	return 0;
}

void format_gid(const uint8_t raw[16], char buf[40])
{
	snprintf(buf, 40, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x",
		 raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7], raw[8], raw[9],
		 raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]);
}

bool gid_ipv4(const uint8_t raw[16], char buf[16])
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (memcmp(raw, mapped, sizeof(mapped)) != 0)
		return false;
	snprintf(buf, 16, "%u.%u.%u.%u", raw[12], raw[13], raw[14], raw[15]);
	return true;
}

bool gid_is_zero(const uint8_t raw[16])
{
	for (int i = 0; i < 16; i++)
		if (raw[i])
			return false;
	return true;
}

int gid_type_version(const char *type)
{
	if (!type)
		return 0;
	if (starts_with(type, "IB/RoCE v1") || starts_with(type, "RoCE v1"))
		return 1;
	if (starts_with(type, "RoCE v2"))
		return 2;
	return 0;
}

int parse_link_speed(const char *s, uint64_t *ret_milli_gts)
{
	const char *rest;

	/* "%s GT/s PCIe" since Linux 5.2, "%s GT/s" before; "Unknown" when unknown. */
	if (parse_milli_unit(s, "GT/s", &rest, ret_milli_gts) < 0 ||
	    (*rest && !streq(rest, " PCIe")))
		return -EINVAL;
	return 0;
}

/* The text after "key" at the start of a line of text, or NULL. */
static const char *find_line_value(const char *text, const char *key)
{
	size_t klen = strlen(key);

	for (const char *line = text; line && *line;) {
		if (!strncmp(line, key, klen))
			return line + klen;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return NULL;
}

/* Parse the unsigned number that starts at p and ends at a space, newline or NUL. */
static int parse_number_field(const char *p, int64_t *ret)
{
	size_t n = 0;
	uint64_t v;

	while (p[n] && p[n] != '\n' && p[n] != ' ')
		n++;
	if (parse_u64_n(p, n, &v) < 0 || v > INT64_MAX)
		return -EINVAL;
	*ret = (int64_t)v;
	return 0;
}

int parse_aer_total(const char *text, const char *key, int64_t *ret)
{
	struct strbuf k = STRBUF_INIT;
	const char *v;

	strbuf_addf(&k, "%s ", key);
	v = find_line_value(text, k.buf);
	strbuf_release(&k);
	if (!v)
		return -EINVAL;
	return parse_number_field(v, ret);
}

int parse_meminfo(const char *text, const char *key, int64_t *ret_bytes)
{
	struct strbuf k = STRBUF_INIT;
	const char *v;
	int64_t kb;

	strbuf_addf(&k, "%s:", key);
	v = find_line_value(text, k.buf);
	strbuf_release(&k);
	if (!v)
		return -EINVAL;
	while (*v == ' ' || *v == '\t')
		v++;
	if (parse_number_field(v, &kb) < 0)
		return -EINVAL;
	while (*v >= '0' && *v <= '9')
		v++;
	if (strncmp(v, " kB", 3) != 0 || kb > INT64_MAX / 1024)
		return -EINVAL;
	*ret_bytes = kb * 1024;
	return 0;
}

bool modules_contains(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *line = text; line && *line;) {
		if (!strncmp(line, name, n) && line[n] == ' ')
			return true;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return false;
}

/* Unquote an os-release value (shell-like: "..." with \ escapes, or '...'). */
static char *os_release_unquote(const char *v, size_t len)
{
	struct strbuf out = STRBUF_INIT;

	if (len >= 2 && (v[0] == '"' || v[0] == '\'') && v[len - 1] == v[0]) {
		char q = v[0];
		for (size_t i = 1; i + 1 < len; i++) {
			if (q == '"' && v[i] == '\\' && i + 2 < len)
				i++;
			strbuf_addch(&out, v[i]);
		}
	} else {
		strbuf_add(&out, v, len);
	}
	return strbuf_detach(&out, NULL);
}

int parse_os_release(const char *text, const char *key, char **ret)
{
	size_t klen = strlen(key);

	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		if (len > klen && !strncmp(line, key, klen) && line[klen] == '=') {
			*ret = os_release_unquote(line + klen + 1, len - klen - 1);
			return 0;
		}
		line = end ? end + 1 : NULL;
	}
	return -ENOENT;
}

int parse_nvidia_version(const char *text, char **ret_version, int *ret_open)
{
	const char *end = strchr(text, '\n');
	size_t len = end ? (size_t)(end - text) : strlen(text);
	char *line = xstrndup(text, len);
	const char *p;
	int r = -EINVAL;

	/*
	 * "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.95.05  Release Build ..."
	 * "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.135  Fri Jan 10 ..."
	 */
	if (!starts_with(line, "NVRM version: "))
		goto out;
	p = strstr(line, "Kernel Module");
	if (!p)
		goto out;
	p += strlen("Kernel Module");
	while (*p == ' ')
		p++;
	if (starts_with(p, "for ")) {
		p += 4;
		while (*p && *p != ' ')
			p++;
		while (*p == ' ')
			p++;
	}
	size_t n = 0;
	while ((p[n] >= '0' && p[n] <= '9') || p[n] == '.')
		n++;
	if (n == 0 || !(p[0] >= '0' && p[0] <= '9'))
		goto out;
	*ret_version = xstrndup(p, n);
	*ret_open = strstr(line, "Open Kernel Module") ? 1 : 0;
	r = 0;
out:
	free(line);
	return r;
}

int parse_nccl_conf_line(const char *line, char **ret_key, char **ret_value)
{
	const char *eq;

	if (line[0] == '#')
		return -ENOENT;
	eq = strchr(line, '=');
	if (!eq)
		return -ENOENT;
	*ret_key = xstrndup(line, (size_t)(eq - line));
	*ret_value = xstrdup(eq + 1);
	return 0;
}

int parse_default_routes(const char *text, void (*fn)(const char *ifname, void *data), void *data)
{
	const char *line = strchr(text, '\n'); /* skip the header line */

	if (!starts_with(text, "Iface"))
		return -EINVAL;
	while (line && *++line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char *copy = xstrndup(line, len);
		char *fields[8] = { 0 };
		size_t nf = 0;
		char *save = NULL;
		for (char *t = strtok_r(copy, " \t", &save); t && nf < ARRAY_SIZE(fields);
		     t = strtok_r(NULL, " \t", &save))
			fields[nf++] = t;
		/* Iface Destination Gateway Flags RefCnt Use Metric Mask */
		uint64_t flags;
		if (nf == ARRAY_SIZE(fields) && streq(fields[1], "00000000") &&
		    streq(fields[7], "00000000") && parse_u64_hex(fields[3], &flags) == 0 &&
		    (flags & 0x1) /* RTF_UP */)
			fn(fields[0], data);
		free(copy);
		line = end;
	}
	return 0;
}
