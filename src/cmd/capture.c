/*
 * sparkctl capture - write a replayable tree of what sparkctl reads.
 *
 * The probe runs with a recorder attached; every file it read, every
 * symlink and directory it went through, is then recreated under DIR with
 * the same layout (sysfs symlinks included), so that
 * 'sparkctl topo --root DIR' sees exactly what the live probe saw.  What
 * is not a file goes to DIR/.sparkctl/ (docs/capture.md).  The tree is
 * built in a temporary directory beside DIR and renamed into place at the
 * end: DIR is complete or absent, never half-written.  That partial tree
 * carries a mark naming the capture that writes it; SIGINT, SIGTERM and
 * SIGHUP remove it before the command dies of the signal, and a later
 * capture removes those whose capture was killed outright.
 */
#include "sparkctl.h"

#include <dirent.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "cmd/cmd.h"
#include "inventory/inventory_json.h"
#include "lib/parse.h"
#include "lib/rootfs.h"
#include "lib/xalloc.h"
#include "probe/avahi.h"
#include "probe/probe.h"
#include "probe/procs.h"

/* Symlinks followed while resolving one path before giving up (as the kernel's 40). */
#define MAX_LINK_HOPS 40

/* DIR.partial-XXXXXX (mkdtemp()'s six characters), and the mark inside. */
#define PARTIAL_INFIX	   ".partial-"
#define PARTIAL_MARK	   ".sparkctl-capture-partial"
#define PARTIAL_MARK_FIRST "sparkctl capture: partial tree"
#define PARTIAL_MARK_MAX   4096

struct mirror {
	int src;	   /* the probed root */
	struct rootfs dst; /* the tree being written: every write is resolved inside it */
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

/* The directory of rel in the tree being written, resolved inside it, and rel's last name. */
static int open_parent(const struct mirror *m, const char *rel, struct rootfs_dir *dir,
		       const char **ret_name)
{
	const char *slash = strrchr(rel, '/');
	char *parent = slash ? xstrndup(rel, (size_t)(slash - rel)) : xstrdup(".");
	int r = rootfs_dir_open_for_write(&m->dst, parent, 0, dir);

	*ret_name = slash ? slash + 1 : rel;
	free(parent);
	return r;
}

static int mirror_dir(const struct mirror *m, const char *rel)
{
	struct rootfs_dir dir;
	const char *name;
	int r = open_parent(m, rel, &dir, &name);

	if (r == 0 && mkdirat(dir.dirfd, name, 0755) < 0 && errno != EEXIST)
		r = -errno;
	rootfs_dir_close(&dir);
	return r;
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
	struct rootfs_dir dir;
	const char *name;
	r = open_parent(m, rel, &dir, &name);
	if (r == 0 && symlinkat(target, dir.dirfd, name) < 0 && errno != EEXIST)
		r = -errno;
	rootfs_dir_close(&dir);
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

static int write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

static int write_file(const struct mirror *m, const char *rel, const char *data, size_t len)
{
	struct rootfs_dir dir;
	const char *name;
	int fd, r = open_parent(m, rel, &dir, &name);

	if (r < 0)
		return r;
	fd = openat(dir.dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	r = fd < 0 ? -errno : 0;
	rootfs_dir_close(&dir);
	if (r < 0)
		return r;
	r = write_all(fd, data, len);
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
			if (nm_keyfile_path(rec->path)) {
				struct strbuf kept = STRBUF_INIT;
				nm_keyfile_redact(rec->data, rec->len, &kept);
				r = write_file(m, rel.buf, kept.buf, kept.len);
				strbuf_release(&kept);
				break;
			}
			if (avahi_cmdline_path(rec->path)) {
				size_t title = strnlen(rec->data, rec->len);
				r = write_file(m, rel.buf, rec->data,
					       title < rec->len ? title + 1 : title);
				break;
			}
			r = write_file(m, rel.buf, rec->data, rec->len);
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

static int write_json(const struct mirror *m, const char *rel, json_t *doc)
{
	struct strbuf text = STRBUF_INIT;

	json_to_strbuf(doc, &text);
	json_decref(doc);
	int r = write_file(m, rel, text.buf, text.len);
	strbuf_release(&text);
	return r;
}

static int write_meta(const struct mirror *m, const struct inventory *inv)
{
	int r;

	if ((r = mirror_dir(m, CAPTURE_META_DIR)) < 0)
		return r;
	if ((r = write_json(m, CAPTURE_HOST_JSON, host_facts_to_json(inv))) < 0 ||
	    (r = write_json(m, CAPTURE_ADDRESS_JSON, addresses_json(inv))) < 0)
		return r;
	/* The inventory as probed, to compare a replay against. */
	return write_json(m, CAPTURE_META_DIR "/inventory.json", inventory_to_json(inv));
}

/* ---- removing partial trees -------------------------------------------- */

static void remove_entry(int parent, const char *name, dev_t dev);

/*
 * Remove what the directory fd holds, by names relative to it: a symlink is
 * removed, never followed, and a directory on another filesystem (a mount
 * point) is not emptied.  keep, when set, is left in place (the mark of a
 * partial tree, removed last so that a tree whose removal was cut short is
 * still recognised).
 */
static void empty_dir(int fd, dev_t dev, const char *keep)
{
	int list_fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = list_fd >= 0 ? fdopendir(list_fd) : NULL;
	struct dirent *de;

	if (!d) {
		if (list_fd >= 0)
			close(list_fd);
		return;
	}
	while ((de = readdir(d)))
		if (!streq(de->d_name, ".") && !streq(de->d_name, "..") && !streq(de->d_name, keep))
			remove_entry(fd, de->d_name, dev);
	closedir(d);
}

static void remove_entry(int parent, const char *name, dev_t dev)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (fd < 0) {
		unlinkat(parent, name, 0); /* not a directory: a file or a symlink itself */
		return;
	}
	if (fstat(fd, &st) == 0 && st.st_dev == dev)
		empty_dir(fd, dev, NULL);
	close(fd);
	unlinkat(parent, name, AT_REMOVEDIR);
}

/* Remove the partial tree fd, which is parent/name: its mark last. */
static int remove_partial(int parent, const char *name, int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	empty_dir(fd, st.st_dev, PARTIAL_MARK);
	unlinkat(fd, PARTIAL_MARK, 0);
	return unlinkat(parent, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

static void format_mark(const struct proc_identity *id, struct strbuf *out)
{
	strbuf_addf(out,
		    PARTIAL_MARK_FIRST "\npid %ld\nstart %" PRIu64 "\nboot %s\npidns %s\nhost %s\n",
		    (long)id->pid, id->start_ticks, id->boot_id, id->pid_ns, id->host);
}

/* Set field to value: 0, -EINVAL when it does not fit or is set already. */
static int mark_field(char *field, size_t size, const char *value)
{
	if (*field || !*value || strlen(value) >= size)
		return -EINVAL;
	memcpy(field, value, strlen(value) + 1);
	return 0;
}

/* The capture named by a mark's text; -EINVAL when the text is not such a mark. */
static int parse_mark(char *text, struct proc_identity *id)
{
	char *save = NULL, *line = strtok_r(text, "\n", &save);
	bool have_pid = false, have_start = false;
	uint64_t v;
	int r = 0;

	memset(id, 0, sizeof(*id));
	if (!streq(line, PARTIAL_MARK_FIRST))
		return -EINVAL;
	while (r == 0 && (line = strtok_r(NULL, "\n", &save))) {
		char *value = strchr(line, ' ');
		if (!value)
			return -EINVAL;
		*value++ = '\0';
		if (streq(line, "pid") && !have_pid && parse_u64(value, &v) == 0 && v &&
		    v <= INT32_MAX) {
			id->pid = (pid_t)v;
			have_pid = true;
		} else if (streq(line, "start") && !have_start &&
			   parse_u64(value, &id->start_ticks) == 0 && id->start_ticks) {
			have_start = true;
		} else if (streq(line, "boot")) {
			r = mark_field(id->boot_id, sizeof(id->boot_id), value);
		} else if (streq(line, "pidns")) {
			r = mark_field(id->pid_ns, sizeof(id->pid_ns), value);
		} else if (streq(line, "host")) {
			r = mark_field(id->host, sizeof(id->host), value);
		} else {
			r = -EINVAL;
		}
	}
	if (r == 0 && (!have_pid || !have_start || !*id->boot_id || !*id->pid_ns || !*id->host))
		r = -EINVAL;
	return r;
}

/* The mark in the directory fd: its capture, or -EINVAL when fd holds no mark of sparkctl's. */
static int read_mark(int fd, struct proc_identity *id)
{
	int mark = openat(fd, PARTIAL_MARK, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	char text[PARTIAL_MARK_MAX + 1];
	struct stat st;
	ssize_t n;

	if (mark < 0)
		return -EINVAL;
	if (fstat(mark, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > PARTIAL_MARK_MAX) {
		close(mark);
		return -EINVAL;
	}
	do
		n = read(mark, text, sizeof(text) - 1);
	while (n < 0 && errno == EINTR);
	close(mark);
	if (n <= 0)
		return -EINVAL;
	text[n] = '\0';
	return parse_mark(text, id);
}

/* NAME.partial-XXXXXX, as mkdtemp() makes it. */
static bool is_partial_name(const char *name)
{
	size_t len = strlen(name), infix = strlen(PARTIAL_INFIX);

	if (len <= infix + 6 || memcmp(name + len - 6 - infix, PARTIAL_INFIX, infix) != 0)
		return false;
	for (size_t i = len - 6; i < len; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= '0' && name[i] <= '9')))
			return false;
	return true;
}

/*
 * Remove the partial trees beside out that captures killed outright left:
 * directories named NAME.partial-XXXXXX, of this user, whose mark names a
 * capture that has ended.  The mark is read, and the tree emptied, through
 * one descriptor of the directory.
 */
static void remove_stale_partials(const char *out)
{
	const char *slash = strrchr(out, '/');
	char *parent =
		slash ? xstrndup(out, slash == out ? 1 : (size_t)(slash - out)) : xstrdup(".");
	int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int list_fd = pfd >= 0 ? openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	DIR *d = list_fd >= 0 ? fdopendir(list_fd) : NULL;
	struct dirent *de;

	if (!d && list_fd >= 0)
		close(list_fd);
	while (d && (de = readdir(d))) {
		struct proc_identity owner;
		struct stat st;
		int fd;
		if (!is_partial_name(de->d_name))
			continue;
		fd = openat(pfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && st.st_uid == geteuid() && read_mark(fd, &owner) == 0 &&
		    proc_identity_running(&owner) == 0) {
			if (remove_partial(pfd, de->d_name, fd) == 0)
				cmd_error("capture",
					  "removed %s/%s, left by a capture that was killed (pid "
					  "%ld)",
					  parent, de->d_name, (long)owner.pid);
		}
		close(fd);
	}
	if (d)
		closedir(d);
	if (pfd >= 0)
		close(pfd);
	free(parent);
}

/* ---- stopping signals -------------------------------------------------- */

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };

/* The stop signal that arrived while the partial tree exists, or 0. */
static atomic_int stop_signal;

static void on_stop_signal(int sig)
{
	atomic_store(&stop_signal, sig);
}

struct saved_signals {
	struct sigaction old[ARRAY_SIZE(stop_signals)];
	bool caught[ARRAY_SIZE(stop_signals)];
};

/*
 * Catch the stop signals (in whichever thread they arrive; the libraries
 * the probe loaded may run threads of their own), so that the partial tree
 * is removed between two of its files.  One that is ignored stays ignored,
 * as whoever started sparkctl asked (nohup).
 */
static void catch_stop_signals(struct saved_signals *saved)
{
	struct sigaction sa = { .sa_handler = on_stop_signal, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(stop_signals); i++)
		sigaddset(&sa.sa_mask, stop_signals[i]);
	for (size_t i = 0; i < ARRAY_SIZE(stop_signals); i++) {
		saved->caught[i] = sigaction(stop_signals[i], NULL, &saved->old[i]) == 0 &&
				   saved->old[i].sa_handler != SIG_IGN &&
				   sigaction(stop_signals[i], &sa, NULL) == 0;
	}
}

static void restore_stop_signals(const struct saved_signals *saved)
{
	for (size_t i = 0; i < ARRAY_SIZE(stop_signals); i++)
		if (saved->caught[i])
			sigaction(stop_signals[i], &saved->old[i], NULL);
}

/*
 * End as the signal would have ended the command, now that nothing is left
 * behind: its default action, so that the parent sees the signal (a shell
 * reports 128 + its number).  Returns that status where the signal is
 * blocked.
 */
static int die_of_signal(int sig)
{
	struct sigaction sa = { .sa_handler = SIG_DFL };

	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	raise(sig);
	return 128 + sig;
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
	"or not at all: SIGINT and SIGTERM remove the partial tree, and a capture\n"
	"removes the partial trees that killed captures left beside OUTDIR.";

/*
 * Write what the probe read (rec) and the facts that are not files (inv)
 * as a tree at out, which appears whole or not at all: built beside it as
 * out.partial-XXXXXX, marked with this capture's identity, then renamed.
 * A stop signal on the way removes it; *ret_signal is then that signal.
 */
static int write_capture(const char *root, const struct rootfs_recorder *rec,
			 const struct inventory *inv, const char *out, int *ret_signal)
{
	struct strbuf tmp = STRBUF_INIT, mark = STRBUF_INIT;
	struct mirror m = { .src = -1, .dst = { .dirfd = -1 } };
	struct proc_identity self;
	struct saved_signals saved;
	int top = -1, r, ret = SPARKCTL_EXIT_ERROR;
	mode_t mask;

	*ret_signal = 0;
	/* Without /proc the tree is not marked, and cannot be told stale later. */
	if (proc_identity_self(&self) == 0)
		format_mark(&self, &mark);
	catch_stop_signals(&saved);
	remove_stale_partials(out);
	if (atomic_load(&stop_signal))
		goto out;
	strbuf_addf(&tmp, "%s" PARTIAL_INFIX "XXXXXX", out);
	if (!mkdtemp(tmp.buf)) {
		cmd_error("capture", "cannot create '%s': %s", tmp.buf, strerror(errno));
		goto out;
	}
	top = open(tmp.buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (top < 0 || (r = rootfs_open(&m.dst, tmp.buf)) < 0 ||
	    (mark.len && (r = write_file(&m, PARTIAL_MARK, mark.buf, mark.len)) < 0)) {
		cmd_error("capture", "cannot write '%s': %s", tmp.buf,
			  strerror(top < 0 ? errno : -r));
		goto fail;
	}
	m.src = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (m.src < 0) {
		cmd_error("capture", "cannot open '%s': %s", root, strerror(errno));
		goto fail;
	}
	for (size_t i = 0; i < rec->nr && !atomic_load(&stop_signal); i++) {
		if ((r = mirror_record(&m, &rec->records[i])) < 0) {
			cmd_error("capture", "cannot write '%s': %s", rec->records[i].path,
				  strerror(-r));
			goto fail;
		}
	}
	if (atomic_load(&stop_signal))
		goto fail;
	if ((r = write_meta(&m, inv)) < 0) {
		cmd_error("capture", "cannot write %s: %s", CAPTURE_META_DIR, strerror(-r));
		goto fail;
	}
	if (atomic_load(&stop_signal))
		goto fail;
	/* mkdtemp() made it 0700; the tree is as readable as its files. */
	mask = umask(0);
	umask(mask);
	/* rename() also replaces an empty directory, atomically. */
	if (fchmod(top, 0755 & ~mask) < 0 || fsync(top) < 0 || rename(tmp.buf, out) < 0) {
		cmd_error("capture", "cannot move the capture to '%s': %s", out, strerror(errno));
		goto fail;
	}
	/* The tree is out's now; a capture killed here leaves only this mark in it. */
	unlinkat(top, PARTIAL_MARK, 0);
	cmd_error("capture", "wrote %zu entries to %s", rec->nr, out);
	ret = SPARKCTL_EXIT_OK;
	goto out;
fail:
	if (top >= 0)
		remove_partial(AT_FDCWD, tmp.buf, top);
	else
		rmdir(tmp.buf);
out:
	restore_stop_signals(&saved);
	/* One that came after the rename finds the capture complete: it stands. */
	if (ret != SPARKCTL_EXIT_OK && (*ret_signal = atomic_load(&stop_signal)))
		cmd_error("capture", "stopped by %s; nothing was written to %s",
			  strsignal(*ret_signal), out);
	if (m.src >= 0)
		close(m.src);
	if (top >= 0)
		close(top);
	if (m.dst.dirfd >= 0)
		rootfs_close(&m.dst);
	strbuf_release(&tmp);
	strbuf_release(&mark);
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
	int n, sig = 0, ret = SPARKCTL_EXIT_ERROR;

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
		ret = write_capture(root, &rec, &inv, outdir.buf, &sig);
	inventory_release(&inv);
	rootfs_recorder_release(&rec);
	strbuf_release(&err);
	strbuf_release(&outdir);
	return sig ? die_of_signal(sig) : ret;
}

const struct cmd cmd_capture = {
	.name = "capture",
	.fn = run_capture,
	.summary = "write a replayable copy of the files sparkctl reads here",
	.usage = capture_usage,
	.description = capture_description,
	.exit_status = "0 the tree was written, 1 it could not be (no partial tree is left), 2 "
		       "usage; stopped by SIGINT, SIGTERM or SIGHUP, 128+N",
	.max_operands = CMD_OPERANDS_ANY,
};
