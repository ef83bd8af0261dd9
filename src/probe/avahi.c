#include "sparkctl.h"

#include "lib/parse.h"
#include "probe/avahi.h"

/* The states whose title names the host: "STATE [NAME]". */
static const char *const named_states[] = { "running [", "registering [" };

int avahi_title_parse(const char *cmdline, size_t len, struct strbuf *out)
{
	size_t prefix = strlen(AVAHI_TITLE_PREFIX);
	/* argv[0]: the title; what follows is NULs, or bytes setproctitle left there */
	size_t tlen = strnlen(cmdline, len);

	strbuf_reset(out);
	while (tlen && cmdline[tlen - 1] == ' ')
		tlen--;
	if (tlen < prefix || memcmp(cmdline, AVAHI_TITLE_PREFIX, prefix) != 0)
		return -ENOENT;
	const char *state = cmdline + prefix;
	size_t slen = tlen - prefix;
	for (size_t i = 0; i < ARRAY_SIZE(named_states); i++) {
		size_t n = strlen(named_states[i]);
		if (slen <= n + 1 || memcmp(state, named_states[i], n) != 0 ||
		    state[slen - 1] != ']')
			continue;
		const char *name = state + n;
		size_t nlen = slen - n - 1;
		for (size_t k = 0; k < nlen; k++)
			if ((unsigned char)name[k] <= ' ' || name[k] == 0x7f || name[k] == '[' ||
			    name[k] == ']')
				return 0;
		strbuf_add(out, name, nlen);
		return 1;
	}
	return 0;
}

/* "123" of a proc/ entry: the pid, or 0 when the entry is not a process. */
static uint64_t proc_entry_pid(const char *name)
{
	uint64_t pid;

	if (!*name || strspn(name, "0123456789") != strlen(name) || parse_u64(name, &pid) < 0 ||
	    pid > INT32_MAX)
		return 0;
	return pid;
}

/*
 * Whether process pid is in the network namespace self_ns (the link's
 * text, NULL when unknown): true where it cannot be told.
 */
static bool same_netns(const struct rootfs *quiet, uint64_t pid, const char *self_ns)
{
	struct strbuf path = STRBUF_INIT, ns = STRBUF_INIT;
	bool same = true;

	if (self_ns) {
		strbuf_addf(&path, "proc/%" PRIu64 "/ns/net", pid);
		if (rootfs_readlink(quiet, path.buf, &ns) == 0)
			same = streq(ns.buf, self_ns);
	}
	strbuf_release(&path);
	strbuf_release(&ns);
	return same;
}

/* The lowest pid whose title names the host (in this namespace), or 0. */
static uint64_t find_daemon(const struct rootfs *quiet)
{
	struct strvec names = STRVEC_INIT;
	struct strbuf path = STRBUF_INIT, cmdline = STRBUF_INIT, name = STRBUF_INIT;
	struct strbuf self_ns = STRBUF_INIT;
	bool ns_known = rootfs_readlink(quiet, "proc/self/ns/net", &self_ns) == 0;
	uint64_t best = 0;

	if (rootfs_list_dirs(quiet, "proc", &names) <= 0)
		goto out;
	for (size_t i = 0; i < names.nr && i < AVAHI_PROC_SCAN_MAX; i++) {
		uint64_t pid = proc_entry_pid(names.v[i]);
		if (!pid || (best && pid >= best))
			continue;
		strbuf_reset(&path);
		strbuf_addf(&path, "proc/%" PRIu64 "/cmdline", pid);
		/* a process that ended, or a longer cmdline than a title's, is not one */
		if (rootfs_read_file(quiet, path.buf, AVAHI_CMDLINE_MAX, &cmdline) < 0 ||
		    avahi_title_parse(cmdline.buf, cmdline.len, &name) <= 0)
			continue;
		if (same_netns(quiet, pid, ns_known ? self_ns.buf : NULL))
			best = pid;
	}
out:
	strvec_clear(&names);
	strbuf_release(&path);
	strbuf_release(&cmdline);
	strbuf_release(&name);
	strbuf_release(&self_ns);
	return best;
}

int avahi_host_name_read(const struct host_reader *rd, struct strbuf *out)
{
	/* Every process's cmdline is looked at, none recorded: a capture keeps avahi's only. */
	struct rootfs quiet = *rd->root;
	struct strbuf path = STRBUF_INIT, cmdline = STRBUF_INIT;
	uint64_t pid;
	int r = 0;

	quiet.recorder = NULL;
	strbuf_reset(out);
	pid = find_daemon(&quiet);
	if (!pid)
		goto out;
	strbuf_addf(&path, "proc/%" PRIu64 "/cmdline", pid);
	r = reader_file(rd, path.buf, AVAHI_CMDLINE_MAX, &cmdline);
	/* it may have ended, or changed its title, since */
	if (r > 0)
		r = avahi_title_parse(cmdline.buf, cmdline.len, out) > 0 ? 1 : 0;
out:
	strbuf_release(&path);
	strbuf_release(&cmdline);
	return r;
}

bool avahi_cmdline_path(const char *rel)
{
	size_t digits;

	if (strncmp(rel, "proc/", 5) != 0)
		return false;
	digits = strspn(rel + 5, "0123456789");
	return digits && streq(rel + 5 + digits, "/cmdline");
}
