/*
 * sparkctl capture - write a replayable tree of what sparkctl reads.
 *
 * The probe runs with a recorder attached; every file it read, every
 * symlink and directory it went through, is then recreated under DIR with
 * the same layout (sysfs symlinks included), so that
 * 'sparkctl topo --root DIR' sees exactly what the live probe saw.  What
 * is not a file goes to DIR/.sparkctl/ (docs/capture.md).  The tree is
 * built in a temporary directory beside DIR and renamed into place at the
 * end: DIR is complete or absent, never half-written.
 */
#include "sparkctl.h"

#include <dirent.h>
#include <sys/socket.h>

#include "cmd/cmd.h"
#include "inventory/inventory_json.h"
#include "lib/xalloc.h"
#include "probe/probe.h"

/* Symlinks followed while resolving one path before giving up (as the kernel's 40). */
#define MAX_LINK_HOPS 40

struct mirror {
	int src; /* the probed root */
	int dst; /* the tree being written */
};

static void join(const struct strvec *comps, struct strbuf *out)
{
	strbuf_reset(out);
	for (size_t i = 0; i < comps->nr; i++)
		strbuf_addf(out, "%s%s", i ? "/" : "", comps->v[i]);
	if (!comps->nr)
		strbuf_addch(out, '.');
}

static void pop(struct strvec *comps)
{
	if (comps->nr) {
		free(comps->v[--comps->nr]);
		comps->v[comps->nr] = NULL;
	}
}

static int mirror_dir(const struct mirror *m, const char *rel)
{
	if (mkdirat(m->dst, rel, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * Recreate the symlink rel.  An absolute target is rewritten relative to the
 * link, so that the tree never points outside itself (/usr/lib/os-release
 * from etc/os-release becomes ../usr/lib/os-release).
 */
static int mirror_link(const struct mirror *m, const char *rel, const char *target)
{
	struct strbuf t = STRBUF_INIT;
	int r = 0;

	if (target[0] == '/') {
		for (const char *p = strchr(rel, '/'); p; p = strchr(p + 1, '/'))
			strbuf_addstr(&t, "../");
		while (*target == '/')
			target++;
		strbuf_addstr(&t, *target ? target : ".");
		target = t.buf;
	}
	if (symlinkat(target, m->dst, rel) < 0 && errno != EEXIST)
		r = -errno;
	strbuf_release(&t);
	return r;
}

/*
 * Resolve path, relative to the resolved components in *at, inside the
 * source root; recreate in the destination every directory and symlink met
 * on the way.  On return *at holds the symlink-free path.  The last
 * component is followed only when follow_last is set.
 */
static int mirror_resolve(const struct mirror *m, const char *path, bool follow_last,
			  struct strvec *at, int *hops)
{
	struct strbuf rel = STRBUF_INIT, target = STRBUF_INIT;
	char *copy = xstrdup(path), *save = NULL;
	int r = 0;

	if (path[0] == '/')
		strvec_clear(at);
	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		bool last = save == NULL || *save == '\0';
		struct stat st;

		if (streq(c, "."))
			continue;
		if (streq(c, "..")) {
			pop(at);
			continue;
		}
		strvec_push(at, c);
		if (last && !follow_last)
			break;
		join(at, &rel);
		if (fstatat(m->src, rel.buf, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue; /* gone since it was read: keep the path as it is */
			r = -errno;
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			if ((r = mirror_dir(m, rel.buf)) < 0)
				break;
		} else if (S_ISLNK(st.st_mode)) {
			char buf[PATH_MAX];
			ssize_t n = readlinkat(m->src, rel.buf, buf, sizeof(buf) - 1);
			if (n < 0) {
				r = -errno;
				break;
			}
			buf[n] = '\0';
			if ((r = mirror_link(m, rel.buf, buf)) < 0)
				break;
			if (++*hops > MAX_LINK_HOPS) {
				r = -ELOOP;
				break;
			}
			pop(at);
			if ((r = mirror_resolve(m, buf, true, at, hops)) < 0)
				break;
		}
	}
	free(copy);
	strbuf_release(&rel);
	strbuf_release(&target);
	return r;
}

static int write_file_at(int dirfd, const char *rel, const char *data, size_t len)
{
	int fd = openat(dirfd, rel, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	int r = 0;

	if (fd < 0)
		return -errno;
	while (len) {
		ssize_t n = write(fd, data, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		data += n;
		len -= (size_t)n;
	}
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

static int mirror_record(const struct mirror *m, const struct rootfs_record *rec)
{
	struct strvec at = STRVEC_INIT;
	struct strbuf rel = STRBUF_INIT;
	int hops = 0;
	int r = mirror_resolve(m, rec->path, rec->kind != ROOTFS_RECORD_LINK, &at, &hops);

	if (r == 0) {
		join(&at, &rel);
		switch (rec->kind) {
		case ROOTFS_RECORD_FILE:
			r = write_file_at(m->dst, rel.buf, rec->data, rec->len);
			break;
		case ROOTFS_RECORD_LINK:
			r = mirror_link(m, rel.buf, rec->data);
			break;
		case ROOTFS_RECORD_DIR:
			r = mirror_dir(m, rel.buf);
			break;
		}
	}
	strvec_clear(&at);
	strbuf_release(&rel);
	return r;
}

/* The addresses in the form of 'ip -j address show' (the keys sparkctl reads). */
static json_t *addresses_json(const struct inventory *inv)
{
	json_t *links = json_array();

	for (size_t i = 0; i < inv->nr_netdevs; i++) {
		const struct inv_netdev *n = &inv->netdevs[i];
		json_t *link = json_object(), *infos = json_array();
		if (n->ifindex >= 0)
			jset(link, "ifindex", jint(n->ifindex));
		jset(link, "ifname", jstr(n->name));
		for (size_t k = 0; k < n->nr_addrs; k++) {
			json_t *ai = json_object();
			jset(ai, "family", jstr(n->addrs[k].family == AF_INET ? "inet" : "inet6"));
			jset(ai, "local", jstr(n->addrs[k].address));
			jset(ai, "prefixlen", jint(n->addrs[k].prefix_len));
			jpush(infos, ai);
		}
		jset(link, "addr_info", infos);
		jpush(links, link);
	}
	return links;
}

static int write_json_at(int dirfd, const char *rel, json_t *doc)
{
	struct strbuf text = STRBUF_INIT;

	json_to_strbuf(doc, &text);
	json_decref(doc);
	int r = write_file_at(dirfd, rel, text.buf, text.len);
	strbuf_release(&text);
	return r;
}

static int write_meta(int dst, const struct inventory *inv)
{
	int r;

	if ((r = mirror_dir(&(struct mirror){ .dst = dst }, CAPTURE_META_DIR)) < 0)
		return r;
	if ((r = write_json_at(dst, CAPTURE_HOST_JSON, host_facts_to_json(inv))) < 0 ||
	    (r = write_json_at(dst, CAPTURE_ADDRESS_JSON, addresses_json(inv))) < 0)
		return r;
	/* The inventory as probed, to compare a replay against. */
	return write_json_at(dst, CAPTURE_META_DIR "/inventory.json", inventory_to_json(inv));
}

/* Remove the tree below dirfd's entry name (used on failure only; no symlinks followed). */
static void remove_tree(int parent, const char *name)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0) {
		DIR *d = fdopendir(fd);
		struct dirent *de;
		if (!d) {
			close(fd);
			return;
		}
		while ((de = readdir(d)))
			if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
				remove_tree(dirfd(d), de->d_name);
		closedir(d);
		unlinkat(parent, name, AT_REMOVEDIR);
	} else {
		unlinkat(parent, name, 0);
	}
}

static bool is_empty_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	bool empty = true;

	if (!d)
		return false;
	while (empty && (de = readdir(d)))
		empty = streq(de->d_name, ".") || streq(de->d_name, "..");
	closedir(d);
	return empty;
}

static const char *const capture_usage[] = {
	"sparkctl capture [--root DIR] OUTDIR",
	NULL,
};

static const char capture_description[] =
	"Write to OUTDIR every sysfs, procfs and /etc file sparkctl reads on this host,\n"
	"with the same layout, plus .sparkctl/host.json (GPUs, NCCL, environment,\n"
	"limits) and .sparkctl/ip-address.json (interface addresses).  Attach the\n"
	"tree to a bug report; 'sparkctl topo --root OUTDIR' replays this host.\n"
	"OUTDIR must not exist (or be an empty directory); it is written completely\n"
	"or not at all.";

/*
 * Write what the probe read (rec) and the facts that are not files (inv)
 * as a tree at out, which appears whole or not at all: built beside it as
 * out.partial-XXXXXX, then renamed.
 */
static int write_capture(const char *root, const struct rootfs_recorder *rec,
			 const struct inventory *inv, const char *out)
{
	struct strbuf tmp = STRBUF_INIT;
	struct mirror m = { -1, -1 };
	mode_t mask;
	int r, ret = SPARKCTL_EXIT_ERROR;

	strbuf_addf(&tmp, "%s.partial-XXXXXX", out);
	if (!mkdtemp(tmp.buf)) {
		cmd_error("capture", "cannot create '%s': %s", tmp.buf, strerror(errno));
		goto out;
	}
	m.src = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	m.dst = open(tmp.buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (m.src < 0 || m.dst < 0) {
		cmd_error("capture", "cannot open '%s': %s", m.src < 0 ? root : tmp.buf,
			  strerror(errno));
		goto fail;
	}
	for (size_t i = 0; i < rec->nr; i++) {
		if ((r = mirror_record(&m, &rec->records[i])) < 0) {
			cmd_error("capture", "cannot write '%s': %s", rec->records[i].path,
				  strerror(-r));
			goto fail;
		}
	}
	if ((r = write_meta(m.dst, inv)) < 0) {
		cmd_error("capture", "cannot write %s: %s", CAPTURE_META_DIR, strerror(-r));
		goto fail;
	}
	/* mkdtemp() made it 0700; the tree is as readable as its files. */
	mask = umask(0);
	umask(mask);
	/* rename() also replaces an empty directory, atomically. */
	if (fchmod(m.dst, 0755 & ~mask) < 0 || fsync(m.dst) < 0 || rename(tmp.buf, out) < 0) {
		cmd_error("capture", "cannot move the capture to '%s': %s", out, strerror(errno));
		goto fail;
	}
	cmd_error("capture", "wrote %zu entries to %s", rec->nr, out);
	ret = SPARKCTL_EXIT_OK;
	goto out;
fail:
	remove_tree(AT_FDCWD, tmp.buf);
out:
	if (m.src >= 0)
		close(m.src);
	if (m.dst >= 0)
		close(m.dst);
	strbuf_release(&tmp);
	return ret;
}

static int run_capture(const struct cmd *cmd, int argc, char **argv)
{
	const char *root = "/";
	const struct opt opts[] = {
		OPT_STRING(0, "root", &root, "DIR",
			   "capture the tree below DIR instead of this host"),
		OPT_HELP(),
		OPT_END(),
	};
	struct rootfs_recorder rec = { 0 };
	struct probe_options popts = { .recorder = &rec };
	struct strbuf err = STRBUF_INIT, outdir = STRBUF_INIT;
	struct inventory inv;
	int n, ret = SPARKCTL_EXIT_ERROR;

	n = cmd_parse(cmd, opts, argc, argv);
	if (n < 0)
		return cmd_parse_exit(n);
	if (n == 0)
		return cmd_usage_error("capture", "missing the output directory");
	if (n > 1)
		return cmd_usage_error("capture", "expected one output directory, not %d", n);
	/* "DIR/" names DIR: the temporary tree goes beside it, not inside. */
	strbuf_addstr(&outdir, argv[1]);
	while (outdir.len > 1 && outdir.buf[outdir.len - 1] == '/')
		strbuf_setlen(&outdir, outdir.len - 1);
	inventory_init(&inv);
	popts.root = root;
	if (access(outdir.buf, F_OK) == 0 && !is_empty_dir(outdir.buf))
		cmd_error("capture", "'%s' already exists; choose a new directory", outdir.buf);
	else if (probe_inventory(&popts, &inv, &err) < 0)
		cmd_error("capture", "%s", err.buf);
	else
		ret = write_capture(root, &rec, &inv, outdir.buf);
	inventory_release(&inv);
	rootfs_recorder_release(&rec);
	strbuf_release(&err);
	strbuf_release(&outdir);
	return ret;
}

const struct cmd cmd_capture = {
	.name = "capture",
	.fn = run_capture,
	.summary = "write a replayable copy of the files sparkctl reads here",
	.usage = capture_usage,
	.description = capture_description,
	.max_operands = CMD_OPERANDS_ANY,
};
