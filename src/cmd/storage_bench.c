/*
 * sparkctl storage bench - fio on each shared path (and, for comparison,
 * a local NVMe path), with a verdict against the line rate of the network
 * the NVMe/TCP path takes; with -H, on each node in turn, then with
 * --concurrent on all at once: what the target gives them all.
 *
 * Files: only one that this command creates itself, PATH/.sparkctl-bench-
 * PID-RANDOM, opened O_CREAT|O_EXCL (an existing file is never touched),
 * handed to fio by --filename and removed at the end, on every failure and
 * on SIGINT, SIGTERM or SIGHUP (blocked from before the file exists, read
 * through the loop's signalfd; fio is ended first).
 */
#include "sparkctl.h"

#include <fcntl.h>
#include <math.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "bench/nccl_perf.h"
#include "cmd/cmd.h"
#include "lib/clock.h"
#include "lib/json.h"
#include "lib/xalloc.h"
#include "probe/block_path.h"
#include "proc/child.h"
#include "proc/loop.h"
#include "proc/run.h"
#include "remote/hosts.h"
#include "remote/session.h"
#include "storage/fio.h"
#include "storage/storage_conf.h"
#include "view/emit.h"
#include "view/progress.h"

#define STORAGE_BENCH_SCHEMA_VERSION 1
/* The default size: at most 1 GiB, and half of what is free beyond the margin. */
#define DEFAULT_SIZE_MAX	     ((uint64_t)1 << 30)
#define FREE_MARGIN_BYTES	     ((uint64_t)64 << 20)
#define DEFAULT_RUNTIME_S	     10
/* fio gets this long after SIGTERM before SIGKILL. */
#define FIO_KILL_AFTER_MS	     2000
#define FIO_OUTPUT_MAX		     ((size_t)4 << 20)
#define REMOTE_OUTPUT_MAX	     ((size_t)1 << 20)
#define MAX_PATHS		     16

static const char *const bench_usage[] = {
	"sparkctl storage bench [PATH...] [--profiles LIST] [--size SIZE] [--runtime S] "
	"[--local PATH] [-H HOSTS [--concurrent]] [--json | -o FILE]",
	NULL,
};

static const char bench_description[] =
	"Measure each PATH (default: the mounts of the volumes planned in\n"
	"/etc/sparkctl/storage.d) with fio:\n"
	"sequential read and write (1 MiB, queue depth 32, 4 jobs), 4 KiB random reads\n"
	"at queue depth 128, and the latency of 4 KiB reads at queue depth 1.  With\n"
	"--local PATH, a local disk is measured beside it for comparison.  Each path\n"
	"is named by its protocol (nvme-tcp, local nvme, ...), and an NVMe/TCP path is\n"
	"judged against the payload its interface's line rate can carry at its MTU.\n"
	"fio works on a file this command creates (PATH/.sparkctl-bench-PID-RANDOM)\n"
	"and removes, also when interrupted; no other file is touched.  With -H or\n"
	"--hostfile (or --cluster), 'sparkctl storage bench --json' runs on each node\n"
	"in turn, then with --concurrent on all at once, with the aggregate.";

struct bench_args {
	const char *profiles, *size, *local, *hosts, *hostfile, *cluster, *output, *remote_sparkctl;
	unsigned runtime;
	bool concurrent, json, quiet;
};

/* One path measured here. */
struct bench_path {
	char *path;
	const char *role;     /* "shared" or "local" */
	const char *protocol; /* "nvme-tcp", "local nvme", "nvme-rdma", "other" */
	char *device;	      /* "nvme1n1", NULL */
	char *iface;	      /* an NVMe/TCP path's interface, NULL */
	int64_t speed_mbps, mtu;
	double ceiling_gbytes;
	bool direct;
	uint64_t size;
	struct fio_result results[4];
	bool ran[4];
	enum fio_verdict verdict;
	double best_gbytes;
};

struct bench {
	const struct fio_profile *profiles[4];
	size_t nr_profiles;
	uint64_t size; /* 0: the default per path */
	unsigned runtime;
	struct bench_path paths[MAX_PATHS];
	size_t nr_paths;
	char *fio_version;
	struct storage_conf *plans; /* the volumes planned on this node (storage.d) */
	size_t nr_plans;
	struct strvec notes;
	bool progress;
	/* the run of one fio */
	struct loop loop;
	bool loop_ready;
	struct loop_timer progress_timer; /* draws view/progress.h's line while fio runs */
	int signal; /* the first of SIGINT, SIGTERM, SIGHUP received, 0 none */
};

/* ---- one fio ---------------------------------------------------------------------------- */

struct fio_run {
	struct bench *b;
	struct child child;
	struct strbuf out, err;
	struct loop_timer kill_timer;
	bool ended;
};

static void fio_read(struct loop *loop, int fd, short revents, void *data)
{
	struct fio_run *fr = data;
	struct strbuf *sb = fd == fr->child.out_fd ? &fr->out : &fr->err;
	int *fdp = fd == fr->child.out_fd ? &fr->child.out_fd : &fr->child.err_fd;
	char buf[8192];
	ssize_t n = read(fd, buf, sizeof(buf));

	(void)revents;
	if (n > 0) {
		if (sb->len < FIO_OUTPUT_MAX)
			strbuf_add(sb, buf, (size_t)n);
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	loop_unwatch_fd(loop, fd);
	child_close_fd(fdp);
}

static void fio_exited(struct loop *loop, struct child *child, void *data)
{
	struct fio_run *fr = data;

	(void)child;
	fr->ended = true;
	loop_timer_cancel(loop, &fr->kill_timer);
	loop_stop(loop);
}

static void fio_kill(struct loop *loop, void *data)
{
	struct fio_run *fr = data;

	(void)loop;
	child_signal(&fr->child, SIGKILL);
}

static void on_signal(struct loop *loop, const struct signalfd_siginfo *si, void *data)
{
	struct fio_run *fr = data;

	if (!fr->b->signal)
		fr->b->signal = (int)si->ssi_signo;
	if (!fr->ended && !fr->kill_timer.armed) {
		child_signal(&fr->child, SIGTERM);
		loop_timer_arm_in(loop, &fr->kill_timer, FIO_KILL_AFTER_MS);
	}
}

/* Read what *fd still holds, then close it (nothing waits: the writer is gone). */
static void drain(struct loop *loop, struct fio_run *fr, int *fd, struct strbuf *sb)
{
	char buf[8192];
	ssize_t n;

	(void)fr;
	if (*fd < 0)
		return;
	loop_unwatch_fd(loop, *fd);
	while ((n = read(*fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		if (n > 0 && sb->len < FIO_OUTPUT_MAX)
			strbuf_add(sb, buf, (size_t)n);
	child_close_fd(fd);
}

/*
 * Run fio with args to its end, its stdout in out: its status, -EINTR
 * when a signal came (fio was ended), -ENOENT when fio is not installed.
 */
static int fio_run(struct bench *b, const struct strvec *args, struct strbuf *out,
		   struct strbuf *err)
{
	struct fio_run fr = { .b = b, .out = STRBUF_INIT, .err = STRBUF_INIT };
	int r;

	child_init(&fr.child);
	strvec_push(&fr.child.args, "fio");
	for (size_t i = 0; i < args->nr; i++)
		strvec_push(&fr.child.args, args->v[i]);
	fr.child.in = CHILD_IO_NULL;
	fr.child.out = fr.child.err = CHILD_IO_PIPE;
	fr.child.group = CHILD_OWN_GROUP;
	fr.child.die_with_parent = true;
	loop_timer_init(&fr.kill_timer, fio_kill, &fr);
	b->loop.signal_data = &fr;
	if (b->signal) {
		r = -EINTR;
		goto out;
	}
	if ((r = child_start(&fr.child)) < 0) {
		strbuf_addf(err, "cannot run fio: %s", strerror(-r));
		goto out;
	}
	loop_watch_fd(&b->loop, fr.child.out_fd, POLLIN, fio_read, &fr);
	loop_watch_fd(&b->loop, fr.child.err_fd, POLLIN, fio_read, &fr);
	loop_watch_child(&b->loop, &fr.child, fio_exited, &fr);
	while (!fr.ended && (r = loop_run(&b->loop)) == 0)
		;
	/* What the pipes still hold once fio is gone. */
	drain(&b->loop, &fr, &fr.child.out_fd, &fr.out);
	drain(&b->loop, &fr, &fr.child.err_fd, &fr.err);
	loop_unwatch_child(&b->loop, &fr.child);
	loop_timer_cancel(&b->loop, &fr.kill_timer);
	r = child_finish(&fr.child);
	if (b->signal) {
		r = -EINTR;
		goto out;
	}
	strbuf_addstr(out, fr.out.buf);
	if (r != 0 && fr.err.len) {
		size_t n = strcspn(fr.err.buf, "\n");
		strbuf_add(err, fr.err.buf, n);
	}
out:
	b->loop.signal_data = NULL;
	child_release(&fr.child);
	strbuf_release(&fr.out);
	strbuf_release(&fr.err);
	return r;
}

/* ---- a path ----------------------------------------------------------------------------- */

static const char *protocol_of(const char *transport)
{
	if (!transport)
		return "other";
	if (streq(transport, "tcp"))
		return "nvme-tcp";
	if (streq(transport, "pcie"))
		return "local nvme";
	if (streq(transport, "rdma"))
		return "nvme-rdma";
	return "other";
}

/* Whether a and b name the same directory. */
static bool same_dir(const char *a, const char *b)
{
	struct stat sa, sb;

	return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* The interface the plan of the volume mounted at path names, or NULL (none, or no such plan). */
static const char *plan_interface(const struct bench *b, const char *path)
{
	for (size_t i = 0; i < b->nr_plans; i++)
		if (same_dir(path, b->plans[i].mount))
			return b->plans[i].interface;
	return NULL;
}
/* The device under bp's filesystem, its protocol and, for NVMe/TCP, its network. */
static void inspect_device(struct bench *b, struct bench_path *bp, dev_t dev)
{
	struct rootfs root;
	struct block_path blk;

	bp->protocol = "other";
	bp->speed_mbps = bp->mtu = -1;
	block_path_init(&blk);
	if (rootfs_open(&root, rootfs_root_path(NULL)) < 0)
		return;
	if (block_path_read(&root, dev, &blk) > 0) {
		bp->device = blk.disk ? xstrdup(blk.disk) : NULL;
		bp->protocol = protocol_of(blk.transport);
	}
	if (streq(bp->protocol, "nvme-tcp")) {
		const char *planned =
			streq(bp->role, "shared") ? plan_interface(b, bp->path) : NULL;

		if (planned)
			bp->iface = xstrdup(planned);
		else if (blk.src_addr)
			bp->iface = block_path_netdev_of_address(blk.src_addr);
		if (bp->iface)
			block_path_netdev_rate(&root, bp->iface, &bp->speed_mbps, &bp->mtu);
		bp->ceiling_gbytes = fio_payload_ceiling_gbytes(bp->speed_mbps, bp->mtu);
	}
	block_path_release(&blk);
	rootfs_close(&root);
}

/*
 * The size to use on bp: --size, else at most 1 GiB and half of what is
 * free beyond the margin.  -ENOSPC when it does not fit.
 */
static int size_for(const struct bench *b, struct bench_path *bp, struct strbuf *err)
{
	struct statvfs vfs;
	uint64_t free_bytes, margin, room;

	if (statvfs(bp->path, &vfs) < 0) {
		int e = errno;
		strbuf_addf(err, "%s: %s", bp->path, strerror(e));
		return -e;
	}
	free_bytes = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	/* Left free for everyone else: 5% of the filesystem, at most FREE_MARGIN_BYTES. */
	margin = (uint64_t)vfs.f_blocks * vfs.f_frsize / 20;
	margin = margin > FREE_MARGIN_BYTES ? FREE_MARGIN_BYTES : margin;
	room = free_bytes > margin ? free_bytes - margin : 0;
	bp->size = b->size ? b->size
			   : (room / 2 > DEFAULT_SIZE_MAX ? DEFAULT_SIZE_MAX
							  : room / 2 / (1 << 20) * (1 << 20));
	if (!bp->size || bp->size > room) {
		if (b->size)
			strbuf_addf(err, "%s: a test file of %" PRIu64 " bytes does not fit",
				    bp->path, b->size);
		else
			strbuf_addf(err, "%s: no room for a test file", bp->path);
		strbuf_addf(err, ": %" PRIu64 " bytes free, %" PRIu64 " of them kept free",
			    free_bytes, margin);
		return -ENOSPC;
	}
	return 0;
}

/* bp->path is a directory: its device and the size; -ENOTDIR (a usage error), -ENOSPC, -errno. */
static int prepare_path(struct bench *b, struct bench_path *bp, struct strbuf *err)
{
	struct stat st;

	if (stat(bp->path, &st) < 0) {
		int e = errno;
		strbuf_addf(err, "%s: %s", bp->path,
			    e == ENOENT || e == ENOTDIR ? "no such directory" : strerror(e));
		return -ENOTDIR;
	}
	if (!S_ISDIR(st.st_mode)) {
		strbuf_addf(err, "%s: not a directory", bp->path);
		return -ENOTDIR;
	}
	inspect_device(b, bp, st.st_dev);
	return size_for(b, bp, err);
}

/*
 * Create the test file in dir: a name no file has (O_EXCL, no symlink
 * followed), mode 0600.  Its path in name; -errno.
 */
static int create_file(const char *dir, struct strbuf *name, struct strbuf *err)
{
	int fd = -1, e = EEXIST;

	for (unsigned tries = 0; fd < 0 && e == EEXIST && tries < 8; tries++) {
		uint32_t rnd = 0;
		if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
			rnd = (uint32_t)monotonic_ms() ^ (uint32_t)tries;
		strbuf_reset(name);
		strbuf_addf(name, "%s%s.sparkctl-bench-%ld-%08x", dir,
			    dir[strlen(dir) - 1] == '/' ? "" : "/", (long)getpid(), rnd);
		fd = open(name->buf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		e = errno;
	}
	if (fd < 0) {
		strbuf_addf(err, "%s: cannot create a test file: %s", dir, strerror(e));
		return -e;
	}
	close(fd);
	return 0;
}

/* Whether the file takes O_DIRECT (tmpfs before Linux 6.6 and some FUSE filesystems do not). */
static bool takes_direct(const char *file)
{
	int fd = open(file, O_RDONLY | O_DIRECT | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return errno != EINVAL;
	close(fd);
	return true;
}

/* fio's failure on bp as one line. */
static void fio_failure(const struct bench_path *bp, const struct fio_profile *p, int error,
			const char *fio_err, struct strbuf *err)
{
	if (error == ENOSPC)
		strbuf_addf(err, "%s: the filesystem is full (No space left on device) during %s",
			    bp->path, p->name);
	else if (error)
		strbuf_addf(err, "%s: fio failed during %s: %s", bp->path, p->name,
			    strerror(error));
	else
		strbuf_addf(err, "%s: fio failed during %s%s%s", bp->path, p->name,
			    *fio_err ? ": " : "", fio_err);
}

/* One profile on file: its figures in bp->results[i]. */
static int run_profile(struct bench *b, struct bench_path *bp, size_t i, const char *file,
		       struct strbuf *err)
{
	const struct fio_profile *p = b->profiles[i];
	struct strvec args = STRVEC_INIT;
	struct strbuf out = STRBUF_INIT, fio_err = STRBUF_INIT, why = STRBUF_INIT;
	struct fio_result *res = &bp->results[i];
	int r;

	progress_set("storage bench: %s on %s", p->name, bp->path);
	fio_args(p, file, bp->size, b->runtime, bp->direct, &args);
	r = fio_run(b, &args, &out, &fio_err);
	if (r == -EINTR || r == -ENOENT) {
		if (r == -ENOENT)
			strbuf_addstr(err, "fio is not installed (Debian: apt-get install fio)");
		goto out;
	}
	if (r < 0) {
		strbuf_add(err, fio_err.buf, fio_err.len);
		goto out;
	}
	if (fio_result_parse(out.buf, out.len, p->writes, res, &why) < 0 || res->error || r != 0) {
		/* fio's own first line of error says more than the missing report. */
		fio_failure(bp, p, res->error, fio_err.len ? fio_err.buf : why.buf, err);
		r = res->error == ENOSPC ? -ENOSPC : -EIO;
		goto out;
	}
	if (!b->fio_version && res->version)
		b->fio_version = xstrdup(res->version);
	bp->ran[i] = true;
out:
	strvec_clear(&args);
	strbuf_release(&out);
	strbuf_release(&fio_err);
	strbuf_release(&why);
	return r;
}

/* Every profile on bp, in a file of its own, removed whatever happens. */
static int measure_path(struct bench *b, struct bench_path *bp, struct strbuf *err)
{
	struct strbuf file = STRBUF_INIT;
	int r;

	if ((r = create_file(bp->path, &file, err)) < 0)
		goto out;
	bp->direct = takes_direct(file.buf);
	if (!bp->direct)
		strvec_pushf(&b->notes, "%s refuses O_DIRECT: measured through the page cache",
			     bp->path);
	for (size_t i = 0; i < b->nr_profiles && r >= 0; i++)
		r = run_profile(b, bp, i, file.buf, err);
	unlink(file.buf);
	for (size_t i = 0; i < b->nr_profiles; i++)
		if (bp->ran[i] && !b->profiles[i]->latency &&
		    b->profiles[i]->block_bytes >= (1u << 20))
			bp->best_gbytes = fmax(bp->best_gbytes, bp->results[i].bw_bytes / 1e9);
	bp->verdict = fio_judge(bp->best_gbytes, bp->ceiling_gbytes);
out:
	strbuf_release(&file);
	return r;
}

/* ---- the report ------------------------------------------------------------------------- */

static json_t *real_or_null(double v, int decimals)
{
	return v >= 0 && isfinite(v) ? jreal_rounded(v, decimals) : json_null();
}

static json_t *run_to_json(const struct fio_profile *p, const struct fio_result *res)
{
	json_t *run = json_object();

	jset(run, "profile", jstr(p->name));
	jset(run, "side", jstr(p->writes ? "write" : "read"));
	jset(run, "gbytes_per_second", jreal_rounded(res->bw_bytes / 1e9, 3));
	jset(run, "iops", jint(llround(res->iops)));
	jset(run, "io_bytes", jint((int64_t)res->io_bytes));
	jset(run, "runtime_seconds", jreal_rounded((double)res->runtime_ms / 1000, 3));
	jset(run, "clat_mean_us", real_or_null(res->clat_mean_us, 1));
	jset(run, "clat_p50_us", real_or_null(res->clat_p50_us, 1));
	jset(run, "clat_p99_us", real_or_null(res->clat_p99_us, 1));
	return run;
}

/* The figure of profile name among bp's runs, or -1. */
static const struct fio_result *result_of(const struct bench *b, const struct bench_path *bp,
					  const char *name)
{
	for (size_t i = 0; i < b->nr_profiles; i++)
		if (bp->ran[i] && streq(b->profiles[i]->name, name))
			return &bp->results[i];
	return NULL;
}

static json_t *path_to_json(const struct bench *b, const struct bench_path *bp)
{
	const struct fio_result *rd = result_of(b, bp, "seq-read"),
				*wr = result_of(b, bp, "seq-write");
	const struct fio_result *rnd = result_of(b, bp, "rand4k-qd128"),
				*lat = result_of(b, bp, "lat-qd1");
	json_t *o = json_object(), *runs = json_array();

	jset(o, "path", jstr(bp->path));
	jset(o, "role", jstr(bp->role));
	jset(o, "protocol", jstr(bp->protocol));
	jset(o, "device", jstr(bp->device));
	jset(o, "interface", jstr(bp->iface));
	jset(o, "line_rate_gbps",
	     bp->speed_mbps > 0 ? jreal_rounded((double)bp->speed_mbps / 1000, 3) : json_null());
	jset(o, "mtu", jint_known(bp->mtu));
	jset(o, "ceiling_gbytes_per_second",
	     bp->ceiling_gbytes > 0 ? jreal_rounded(bp->ceiling_gbytes, 3) : json_null());
	jset(o, "direct", jbool(bp->direct));
	jset(o, "size_bytes", jint((int64_t)bp->size));
	jset(o, "read_gbytes_per_second", rd ? jreal_rounded(rd->bw_bytes / 1e9, 3) : json_null());
	jset(o, "write_gbytes_per_second", wr ? jreal_rounded(wr->bw_bytes / 1e9, 3) : json_null());
	jset(o, "rand4k_iops", rnd ? jint(llround(rnd->iops)) : json_null());
	jset(o, "lat_p50_us", lat ? real_or_null(lat->clat_p50_us, 1) : json_null());
	jset(o, "lat_p99_us", lat ? real_or_null(lat->clat_p99_us, 1) : json_null());
	jset(o, "ceiling_ratio",
	     bp->ceiling_gbytes > 0 ? jreal_rounded(bp->best_gbytes / bp->ceiling_gbytes, 3)
				    : json_null());
	jset(o, "verdict", jstr(fio_verdict_name(bp->verdict)));
	for (size_t i = 0; i < b->nr_profiles; i++)
		if (bp->ran[i])
			jpush(runs, run_to_json(b->profiles[i], &bp->results[i]));
	jset(o, "runs", runs);
	return o;
}

/* This node's document: what 'storage bench --json' prints. */
static json_t *local_document(const struct bench *b)
{
	json_t *doc = json_object(), *profiles = json_array(), *paths = json_array();
	json_t *notes = json_array();

	jset(doc, "schema_version", jint(STORAGE_BENCH_SCHEMA_VERSION));
	jset(doc, "fio_version", jstr(b->fio_version));
	for (size_t i = 0; i < b->nr_profiles; i++)
		jpush(profiles, jstr(b->profiles[i]->name));
	jset(doc, "profiles", profiles);
	jset(doc, "runtime_seconds", jint(b->runtime));
	for (size_t i = 0; i < b->nr_paths; i++)
		jpush(paths, path_to_json(b, &b->paths[i]));
	jset(doc, "paths", paths);
	for (size_t i = 0; i < b->notes.nr; i++)
		jpush(notes, jstr(b->notes.v[i]));
	jset(doc, "notes", notes);
	return doc;
}

/* A number of obj as text with decimals and unit, or NULL (shown "-") when null. */
static char *num_text(const json_t *obj, const char *key, int decimals, const char *unit)
{
	const json_t *v = json_object_get(obj, key);
	struct strbuf sb = STRBUF_INIT;

	if (!json_is_number(v))
		return NULL;
	strbuf_addf(&sb, "%.*f%s", decimals, json_number_value(v), unit);
	return strbuf_detach(&sb, NULL);
}

static const char *str_of(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

/* The verdict cell: "ok: 91% of 12.39 GB/s (IF, 100 Gb/s, MTU 9000)". */
static void verdict_cell(struct emitter *e, const json_t *p)
{
	struct strbuf sb = STRBUF_INIT;
	const json_t *ratio = json_object_get(p, "ceiling_ratio");
	const json_t *ceil = json_object_get(p, "ceiling_gbytes_per_second");

	strbuf_addstr(&sb, str_of(p, "verdict") ? str_of(p, "verdict") : "-");
	if (json_is_number(ratio) && json_is_number(ceil))
		strbuf_addf(&sb, ": %.0f%% of %.2f GB/s (%s, %.0f Gb/s, MTU %" PRId64 ")",
			    json_number_value(ratio) * 100, json_number_value(ceil),
			    str_of(p, "interface") ? str_of(p, "interface") : "-",
			    json_number_value(json_object_get(p, "line_rate_gbps")),
			    (int64_t)json_integer_value(json_object_get(p, "mtu")));
	emit_cell(e, "verdict", json_incref(json_object_get(p, "verdict")), sb.buf);
	strbuf_release(&sb);
}

/* Whether the row's cells show key already. */
static bool shown_key(const char *key, const char *const *keys, size_t n)
{
	if (streq(key, "node") || streq(key, "path") || streq(key, "protocol") ||
	    streq(key, "verdict"))
		return true;
	for (size_t i = 0; i < n; i++)
		if (streq(key, keys[i]))
			return true;
	return false;
}

/* One row of the table from a path object (node: the node it was measured on, or NULL). */
static void emit_path_row(struct emitter *e, const json_t *p, bool with_node)
{
	static const char *const keys[] = { "read_gbytes_per_second", "write_gbytes_per_second",
					    "rand4k_iops" };
	static const int decimals[] = { 2, 2, 0 };
	static const char *const units[] = { " GB/s", " GB/s", "" };
	char *p50 = num_text(p, "lat_p50_us", 0, ""), *p99 = num_text(p, "lat_p99_us", 0, "");
	struct strbuf lat = STRBUF_INIT;
	const char *k;
	json_t *v;

	emit_row_open(e);
	if (with_node)
		emit_cell(e, "node", jstr(str_of(p, "node")), str_of(p, "node"));
	emit_cell(e, "path", jstr(str_of(p, "path")), str_of(p, "path"));
	emit_cell(e, "protocol", jstr(str_of(p, "protocol")), str_of(p, "protocol"));
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		char *t = num_text(p, keys[i], decimals[i], units[i]);
		emit_cell(e, keys[i], json_incref(json_object_get(p, keys[i])), t);
		free(t);
	}
	if (p50 || p99)
		strbuf_addf(&lat, "%s / %s us", p50 ? p50 : "-", p99 ? p99 : "-");
	emit_cell(e, NULL, NULL, lat.len ? lat.buf : NULL);
	verdict_cell(e, p);
	/* The rest of the path's facts, in JSON only. */
	json_object_foreach((json_t *)p, k, v) if (!shown_key(k, keys, ARRAY_SIZE(keys)))
		emit_value(e, k, json_incref(v), NULL);
	emit_row_close(e);
	free(p50);
	free(p99);
	strbuf_release(&lat);
}

static void emit_paths(struct emitter *e, const char *key, const json_t *rows, bool with_node)
{
	static const char *const headers[] = { "NODE",		 "PATH",   "PROTOCOL",
					       ">READ",		 ">WRITE", ">4K QD128 IOPS",
					       ">QD1 P50 / P99", "VERDICT" };
	size_t i;
	const json_t *row;

	emit_table_open(e, key, with_node ? headers : headers + 1,
			with_node ? ARRAY_SIZE(headers) : ARRAY_SIZE(headers) - 1, 200);
	json_array_foreach(rows, i, row) emit_path_row(e, row, with_node);
	emit_table_close(e);
}

/* The notes of doc, as JSON and, after everything else, as text lines. */
static void emit_notes(struct emitter *e, const json_t *notes)
{
	size_t i;
	const json_t *n;

	emit_array_open(e, "notes");
	json_array_foreach(notes, i, n) emit_value(e, NULL, json_incref((json_t *)n), NULL);
	emit_close(e);
	json_array_foreach(notes, i, n) emit_str(e, NULL, "note: %s\n", json_string_value(n));
}

/* The head of a document: its version and what was run (JSON only). */
static void emit_head(struct emitter *e, const json_t *doc)
{
	static const char *const keys[] = { "schema_version", "fio_version", "profiles",
					    "runtime_seconds" };

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (json_object_get(doc, keys[i]))
			emit_value(e, keys[i], json_incref(json_object_get(doc, keys[i])), NULL);
}

static void emit_local_report(struct emitter *e, const json_t *doc)
{
	emit_head(e, doc);
	emit_paths(e, "paths", json_object_get(doc, "paths"), false);
	emit_notes(e, json_object_get(doc, "notes"));
}

/* doc as JSON on stdout (json), in output (a file), or as text on stdout. */
static int print_document(const json_t *doc, void (*fn)(struct emitter *, const json_t *),
			  const struct bench_args *a)
{
	bool json = a->json;
	const char *output = a->output;
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	struct emitter e;
	int r = 0;

	if (json || output) {
		json_t *d;
		emit_init(&e, EMIT_JSON, NULL, false);
		fn(&e, doc);
		d = emit_document(&e);
		emit_release(&e);
		r = json_save(d, json ? "-" : output, &err);
		json_decref(d);
		if (r < 0)
			cmd_error("storage bench", "%s", err.buf);
	}
	if (!json && r == 0) {
		/* -q: the table without its notes. */
		json_t *shown = json_copy((json_t *)doc);
		if (a->quiet)
			json_object_del(shown, "notes");
		emit_init(&e, EMIT_TEXT, &out, cmd_use_color());
		fn(&e, shown);
		emit_release(&e);
		fputs(out.buf, stdout);
		json_decref(shown);
	}
	strbuf_release(&out);
	strbuf_release(&err);
	return r;
}

/* ---- here ------------------------------------------------------------------------------- */

static void bench_release(struct bench *b)
{
	for (size_t i = 0; i < b->nr_paths; i++) {
		struct bench_path *bp = &b->paths[i];
		free(bp->path);
		free(bp->device);
		free(bp->iface);
		for (size_t j = 0; j < ARRAY_SIZE(bp->results); j++)
			fio_result_release(&bp->results[j]);
	}
	free(b->fio_version);
	storage_conf_release_all(b->plans, b->nr_plans);
	strvec_clear(&b->notes);
	if (b->loop_ready)
		loop_release(&b->loop);
}

static void add_path(struct bench *b, const char *path, const char *role)
{
	struct bench_path *bp = &b->paths[b->nr_paths++];

	*bp = (struct bench_path){
		.path = xstrdup(path), .role = role, .speed_mbps = -1, .mtu = -1
	};
	for (size_t j = 0; j < ARRAY_SIZE(bp->results); j++)
		fio_result_init(&bp->results[j]);
}

/* Catch SIGINT, SIGTERM and SIGHUP from now on: they end fio and leave no file behind. */
static int watch_signals(struct bench *b)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	loop_init(&b->loop);
	b->loop_ready = true;
	progress_timer_arm(&b->loop, &b->progress_timer);
	return loop_watch_signals(&b->loop, &mask, on_signal, NULL);
}

/* Measure every path here: an exit status, the error printed. */
static int bench_here(struct bench *b, const struct bench_args *a)
{
	struct strbuf err = STRBUF_INIT;
	int r = 0, ret = SPARKCTL_EXIT_OK;
	char *fio;
	int why;

	for (size_t i = 0; i < b->nr_paths && r == 0; i++)
		r = prepare_path(b, &b->paths[i], &err);
	if (r < 0) {
		ret = r == -ENOTDIR
			      ? cmd_usage_error("storage bench", "%s", err.buf)
			      : (cmd_error("storage bench", "%s", err.buf), SPARKCTL_EXIT_ERROR);
		goto out;
	}
	fio = child_find_program("fio", getenv("PATH"), &why);
	if (!fio) {
		cmd_error("storage bench", "fio is not installed (Debian: apt-get install fio)");
		ret = SPARKCTL_EXIT_UNAVAILABLE;
		goto out;
	}
	free(fio);
	progress_begin(b->progress, "storage bench: starting fio");
	if ((r = watch_signals(b)) < 0) {
		progress_end();
		cmd_error("storage bench", "cannot watch for signals: %s", strerror(-r));
		ret = SPARKCTL_EXIT_ERROR;
		goto out;
	}
	for (size_t i = 0; i < b->nr_paths && r == 0; i++)
		r = measure_path(b, &b->paths[i], &err);
	progress_end();
	if (b->signal) {
		cmd_error("storage bench", "stopped by signal %d: fio ended, test file removed",
			  b->signal);
		ret = 128 + b->signal;
	} else if (r < 0) {
		cmd_error("storage bench", "%s", err.buf);
		ret = r == -ENOENT ? SPARKCTL_EXIT_UNAVAILABLE : SPARKCTL_EXIT_ERROR;
	} else {
		json_t *doc;
		for (size_t i = 0; i < b->nr_profiles; i++)
			if (!b->profiles[i]->writes) {
				strvec_push(&b->notes,
					    "reads run on a file fio lays out (writes) first; "
					    "the layout is not timed");
				break;
			}
		doc = local_document(b);
		if (print_document(doc, emit_local_report, a) < 0)
			ret = SPARKCTL_EXIT_ERROR;
		for (size_t i = 0; i < b->nr_paths && ret == SPARKCTL_EXIT_OK; i++)
			if (b->paths[i].verdict == FIO_VERDICT_LOW)
				ret = SPARKCTL_EXIT_PROBLEMS;
		json_decref(doc);
	}
out:
	strbuf_release(&err);
	return ret;
}

/* ---- across nodes ----------------------------------------------------------------------- */

struct node_stage {
	const char *key; /* "paths" (one node at a time) or "concurrent" */
	json_t *rows;	 /* the path objects of every node, each with its "node" */
	json_t *errors;	 /* {"node": ..., "error": ...} */
	int worst;	 /* exit status */
};

/* The graver of two exit statuses: unavailable, then error, then problems. */
static int worse(int a, int b)
{
	static const int order[] = { SPARKCTL_EXIT_OK, SPARKCTL_EXIT_PROBLEMS, SPARKCTL_EXIT_ERROR,
				     SPARKCTL_EXIT_UNAVAILABLE };
	size_t ra = 0, rb = 0;

	for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
		ra = order[i] == a ? i : ra;
		rb = order[i] == b ? i : rb;
	}
	return ra >= rb ? a : b;
}

/* The command each node runs: this one's options, for its own paths. */
static void node_args(const struct bench_args *a, char **paths, size_t n, struct strvec *args)
{
	strvec_pushl(args, "storage", "bench", "--json", "--runtime", NULL);
	strvec_pushf(args, "%u", a->runtime);
	if (a->profiles)
		strvec_pushl(args, "--profiles", a->profiles, NULL);
	if (a->size)
		strvec_pushl(args, "--size", a->size, NULL);
	if (a->local)
		strvec_pushl(args, "--local", a->local, NULL);
	strvec_push(args, "--");
	for (size_t i = 0; i < n; i++)
		strvec_push(args, paths[i]);
}

/* One node's answer into the stage: its rows, or its error. */
static void collect_node(struct node_stage *st, const struct run_job *j, const char *host,
			 unsigned timeout_ms)
{
	struct strbuf err = STRBUF_INIT;
	char *why = remote_failure(j, host, timeout_ms);
	json_t *doc = NULL, *e;
	size_t i;
	const json_t *p;

	if (j->status == SPARKCTL_EXIT_PROBLEMS && j->out.len) {
		free(why); /* a low verdict: the figures are there */
		why = NULL;
		st->worst = worse(st->worst, SPARKCTL_EXIT_PROBLEMS);
	}
	if (!why && json_load_buffer(j->out.buf, j->out.len, host, &doc, &err) < 0)
		why = strbuf_detach(&err, NULL);
	if (why) {
		e = json_object();
		jset(e, "node", jstr(host));
		jset(e, "error", jstr(why));
		jpush(st->errors, e);
		st->worst = worse(st->worst, j->status == SPARKCTL_EXIT_UNAVAILABLE ||
							     j->status == 255 || j->status < 0
						     ? SPARKCTL_EXIT_UNAVAILABLE
						     : SPARKCTL_EXIT_ERROR);
		goto out;
	}
	json_array_foreach(json_object_get(doc, "paths"), i, p)
	{
		json_t *row = json_object();
		jset(row, "node", jstr(host));
		json_object_update(row, (json_t *)p);
		jpush(st->rows, row);
	}
out:
	free(why);
	json_decref(doc);
	strbuf_release(&err);
}

/* Run the command on every node, parallel at once (1: one after the other). */
static void run_stage(struct remote_session *rs, const struct host_list *hosts,
		      const struct strvec *args, unsigned parallel, unsigned timeout_ms,
		      struct node_stage *st)
{
	struct run_job *jobs = xcalloc(hosts->nr, sizeof(*jobs));
	struct strvec argv = STRVEC_INIT;

	/*
	 * Under a hold: a Ctrl-C or the death of this command closes each
	 * session's stdin, and the node's bench then ends fio and removes its
	 * test file instead of running on.
	 */
	strvec_pushl(&argv, "agent", "hold", "--self", "--", NULL);
	for (size_t i = 0; i < args->nr; i++)
		strvec_push(&argv, args->v[i]);
	st->rows = json_array();
	st->errors = json_array();
	for (size_t i = 0; i < hosts->nr; i++) {
		run_job_init(&jobs[i]);
		jobs[i].hold_stdin = true;
		remote_session_sparkctl_argv(rs, hosts->hosts[i].name, (const char *const *)argv.v,
					     &jobs[i].argv);
	}
	run_jobs(jobs, hosts->nr, parallel, timeout_ms, REMOTE_OUTPUT_MAX);
	for (size_t i = 0; i < hosts->nr; i++) {
		collect_node(st, &jobs[i], hosts->hosts[i].name, timeout_ms);
		run_job_release(&jobs[i]);
	}
	free(jobs);
	strvec_clear(&argv);
}

/* The sum over the nodes' shared paths of each profile's bandwidth and IOPS. */
static json_t *aggregate(const json_t *rows)
{
	json_t *sums = json_object(), *out = json_array();
	const char *name;
	json_t *sum;
	size_t i, k;
	const json_t *row, *run;

	json_array_foreach(rows, i, row)
	{
		if (!streq(str_of(row, "role"), "shared"))
			continue;
		json_array_foreach(json_object_get(row, "runs"), k, run)
		{
			const char *prof = str_of(run, "profile");
			json_t *s;
			if (!prof)
				continue;
			if (!(s = json_object_get(sums, prof))) {
				s = json_object();
				jset(s, "profile", jstr(prof));
				jset(s, "gbytes_per_second", json_real(0));
				jset(s, "iops", json_real(0));
				jset(s, "nodes", jint(0));
				jset(sums, prof, s);
			}
			json_real_set(json_object_get(s, "gbytes_per_second"),
				      json_real_value(json_object_get(s, "gbytes_per_second")) +
					      json_number_value(
						      json_object_get(run, "gbytes_per_second")));
			json_real_set(json_object_get(s, "iops"),
				      json_real_value(json_object_get(s, "iops")) +
					      json_number_value(json_object_get(run, "iops")));
			json_integer_set(json_object_get(s, "nodes"),
					 json_integer_value(json_object_get(s, "nodes")) + 1);
		}
	}
	json_object_foreach(sums, name, sum)
	{
		json_t *a = json_object();
		jset(a, "profile", jstr(name));
		jset(a, "gbytes_per_second",
		     jreal_rounded(json_real_value(json_object_get(sum, "gbytes_per_second")), 3));
		jset(a, "iops", jint(llround(json_real_value(json_object_get(sum, "iops")))));
		jset(a, "nodes", json_incref(json_object_get(sum, "nodes")));
		jpush(out, a);
	}
	json_decref(sums);
	return out;
}

static void emit_errors(struct emitter *e, const json_t *errors)
{
	size_t i;
	const json_t *err;

	emit_array_open(e, "errors");
	json_array_foreach(errors, i, err) emit_value(e, NULL, json_incref((json_t *)err), NULL);
	emit_close(e);
	json_array_foreach(errors, i, err)
	{
		emit_str(e, NULL, "%s: ", str_of(err, "node"));
		emit_str(e, NULL, "%s\n", str_of(err, "error"));
	}
}

static void emit_nodes_report(struct emitter *e, const json_t *doc)
{
	const json_t *conc = json_object_get(doc, "concurrent");
	size_t i;
	const json_t *agg;

	emit_head(e, doc);
	emit_text(e, "one node at a time:\n");
	emit_paths(e, "paths", json_object_get(doc, "paths"), true);
	emit_errors(e, json_object_get(doc, "errors"));
	if (!conc)
		return;
	emit_object_open(e, "concurrent");
	emit_text(e, "\nall nodes at once:\n");
	emit_paths(e, "paths", json_object_get(conc, "paths"), true);
	emit_errors(e, json_object_get(conc, "errors"));
	emit_array_open(e, "aggregate");
	json_array_foreach(json_object_get(conc, "aggregate"), i, agg)
	{
		emit_object_open(e, NULL);
		emit_str(e, "profile", "aggregate %s: ", str_of(agg, "profile"));
		emit_value(e, "gbytes_per_second",
			   json_incref(json_object_get(agg, "gbytes_per_second")), NULL);
		emit_value(e, "iops", json_incref(json_object_get(agg, "iops")), NULL);
		emit_int(e, "nodes", NULL, json_integer_value(json_object_get(agg, "nodes")));
		emit_text(e, "%.2f GB/s, %.0f IOPS over %" PRId64 " nodes\n",
			  json_number_value(json_object_get(agg, "gbytes_per_second")),
			  json_number_value(json_object_get(agg, "iops")),
			  (int64_t)json_integer_value(json_object_get(agg, "nodes")));
		emit_close(e);
	}
	emit_close(e);
	emit_close(e);
}

/* Every node in turn, then (--concurrent) all at once: an exit status. */
static int bench_nodes(const struct bench *b, const struct bench_args *a,
		       const struct host_list *hosts, char **paths, size_t nr_paths)
{
	struct remote_session rs;
	struct strvec args = STRVEC_INIT;
	struct node_stage one = { 0 }, all = { 0 };
	const char **names = xcalloc(hosts->nr, sizeof(*names));
	/* Each profile runs at most runtime, after a layout of at most 1 GiB: a generous bound. */
	unsigned timeout_ms = (unsigned)((b->nr_profiles * (a->runtime + 120) + 60) *
					 (nr_paths + (a->local ? 1 : 0) + 1) * 1000);
	json_t *doc = json_object(), *profiles = json_array();
	int ret;

	for (size_t i = 0; i < hosts->nr; i++)
		names[i] = hosts->hosts[i].name;
	node_args(a, paths, nr_paths, &args);
	remote_session_init(&rs, a->remote_sparkctl, true);
	remote_session_fast_kex(&rs, names, hosts->nr);
	progress_begin(b->progress, "storage bench: %zu nodes, one after the other", hosts->nr);
	run_stage(&rs, hosts, &args, 1, timeout_ms, &one);
	if (a->concurrent) {
		progress_set("storage bench: %zu nodes at once", hosts->nr);
		run_stage(&rs, hosts, &args, 0, timeout_ms, &all);
	}
	progress_end();
	remote_session_close(&rs);

	jset(doc, "schema_version", jint(STORAGE_BENCH_SCHEMA_VERSION));
	for (size_t i = 0; i < b->nr_profiles; i++)
		jpush(profiles, jstr(b->profiles[i]->name));
	jset(doc, "profiles", profiles);
	jset(doc, "runtime_seconds", jint(a->runtime));
	jset(doc, "paths", one.rows);
	jset(doc, "errors", one.errors);
	ret = one.worst;
	if (a->concurrent) {
		json_t *c = json_object();
		jset(c, "paths", all.rows);
		jset(c, "errors", all.errors);
		jset(c, "aggregate", aggregate(all.rows));
		jset(doc, "concurrent", c);
		ret = worse(ret, all.worst);
	}
	if (print_document(doc, emit_nodes_report, a) < 0)
		ret = worse(ret, SPARKCTL_EXIT_ERROR);
	json_decref(doc);
	strvec_clear(&args);
	free(names);
	return ret;
}

/* ---- the command ------------------------------------------------------------------------ */

/*
 * The planned volumes (storage.d): without a PATH, their mounts are the
 * paths; with PATHs, a plan only names the interface of its mount, when a
 * PATH is one.  An exit status.
 */
static int planned_paths(struct bench *b, bool given)
{
	struct strbuf err = STRBUF_INIT;
	struct rootfs root;
	int r = rootfs_open(&root, rootfs_root_path(NULL));

	if (r == 0) {
		r = storage_conf_load_all(&root, &b->plans, &b->nr_plans, &err);
		rootfs_close(&root);
	}
	if (r == -ENOENT) /* a root that is not there: nothing planned in it */
		r = 0;
	if (given) {
		r = SPARKCTL_EXIT_OK;
	} else if (r == 0 && b->nr_plans == 0) {
		r = cmd_usage_error("storage bench", "no PATH given, and no shared storage is "
						     "planned here (/etc/sparkctl/storage.d)");
	} else if (r < 0) {
		cmd_error("storage bench", "%s", err.len ? err.buf : strerror(-r));
		r = SPARKCTL_EXIT_ERROR;
	} else if (b->nr_plans + 1 > MAX_PATHS) {
		r = cmd_usage_error("storage bench",
				    "%zu volumes are planned here: give at most %d "
				    "of their mounts as PATHs",
				    b->nr_plans, MAX_PATHS - 1);
	} else {
		for (size_t i = 0; i < b->nr_plans; i++)
			add_path(b, b->plans[i].mount, "shared");
		r = SPARKCTL_EXIT_OK;
	}
	strbuf_release(&err);
	return r;
}

/* The options into b: an exit status (usage errors printed). */
static int check_args(const struct bench_args *a, int n, struct bench *b)
{
	struct strbuf err = STRBUF_INIT;
	int r;

	if (a->json && a->output)
		return cmd_usage_error("storage bench", "--json prints the JSON, -o writes it to a "
							"file: choose one");
	if (a->runtime < 1 || a->runtime > 3600)
		return cmd_usage_error("storage bench", "--runtime is 1 to 3600 seconds");
	if (a->concurrent && !a->hosts && !a->hostfile && !a->cluster)
		return cmd_usage_error("storage bench", "--concurrent runs on the nodes of -H, "
							"--hostfile or --cluster");
	if (a->size && (perf_parse_size(a->size, &b->size) < 0 || b->size < 4096))
		return cmd_usage_error("storage bench",
				       "bad --size '%s': 4K or more (K, M, G suffixes)", a->size);
	r = fio_profiles_parse(a->profiles ? a->profiles : FIO_DEFAULT_PROFILES, b->profiles,
			       ARRAY_SIZE(b->profiles), &err);
	if (r < 0) {
		r = cmd_usage_error("storage bench", "--profiles: %s", err.buf);
		strbuf_release(&err);
		return r;
	}
	b->nr_profiles = (size_t)r;
	b->runtime = a->runtime;
	if ((size_t)n + (a->local ? 1 : 0) > MAX_PATHS)
		return cmd_usage_error("storage bench", "at most %d paths", MAX_PATHS);
	return SPARKCTL_EXIT_OK;
}

/* The command once its options are parsed (argv[1..n] the paths): an exit status. */
static int bench_run(const struct bench_args *a, int n, char **argv)
{
	struct bench b = { 0 };
	struct host_list hosts = { 0 };
	struct strbuf err = STRBUF_INIT;
	int ret;

	if ((ret = check_args(a, n, &b)) != SPARKCTL_EXIT_OK)
		goto out;
	b.progress = !a->json && !a->quiet;
	if (a->hosts || a->hostfile || a->cluster) {
		if (host_list_from_options(a->hosts, a->hostfile, a->cluster, NULL, &hosts, &err) <
		    0) {
			ret = cmd_usage_error("storage bench", "%s", err.buf);
			goto out;
		}
		ret = bench_nodes(&b, a, &hosts, argv + 1, (size_t)n);
		goto out;
	}
	for (int i = 1; i <= n; i++)
		add_path(&b, argv[i], "shared");
	if ((ret = planned_paths(&b, n > 0)) != SPARKCTL_EXIT_OK)
		goto out;
	if (a->local)
		add_path(&b, a->local, "local");
	ret = bench_here(&b, a);
out:
	bench_release(&b);
	host_list_release(&hosts);
	strbuf_release(&err);
	return ret;
}

static int run_storage_bench(const struct cmd *cmd, int argc, char **argv)
{
	struct bench_args a = { .runtime = DEFAULT_RUNTIME_S };
	const struct opt opts[] = {
		OPT_STRING(0, "profiles", &a.profiles, "LIST",
			   "seq-read,seq-write,rand4k-qd128,lat-qd1 (the default: all)"),
		OPT_STRING(0, "size", &a.size, "SIZE",
			   "the test file's size (default: 1G, or half of what is free)"),
		OPT_UINT(0, "runtime", &a.runtime, "S",
			 "at most S seconds per profile (default 10)"),
		OPT_STRING(0, "local", &a.local, "PATH",
			   "also measure PATH, a local disk, for comparison"),
		OPT_STRING('H', "hosts", &a.hosts, "HOST,...",
			   "run on these nodes (ranges: spark[1-4]), one after the other"),
		OPT_STRING(0, "hostfile", &a.hostfile, "FILE", "the nodes, one per line"),
		OPT_STRING(0, "cluster", &a.cluster, "FILE", "the nodes of this cluster file"),
		OPT_BOOL(0, "concurrent", &a.concurrent,
			 "then on every node at once, with the aggregate bandwidth"),
		OPT_STRING(0, "remote-sparkctl", &a.remote_sparkctl, "PATH",
			   "sparkctl on the nodes (default: this program's path, then PATH, then "
			   "~/.local/bin/sparkctl)"),
		OPT_BOOL(0, "json", &a.json, "print the report as JSON, not as text"),
		OPT_STRING('o', "output", &a.output, "FILE", "write the report as JSON to FILE"),
		OPT_BOOL('q', "quiet", &a.quiet,
			 "only errors and the table: no progress, no notes"),
		OPT_HELP(),
		OPT_END(),
	};
	int n = cmd_parse(cmd, opts, argc, argv);

	if (n < 0)
		return cmd_parse_exit(n);
	return bench_run(&a, n, argv);
}

const struct cmd cmd_storage_bench = {
	.name = "bench",
	.title = "storage bench",
	.fn = run_storage_bench,
	.summary = "fio on each shared path, beside a local disk, with a verdict",
	.usage = bench_usage,
	.description = bench_description,
	.exit_status = "0 measured (every verdict ok or no line rate known), 1 fio failed (a full "
		       "filesystem, an I/O error) or the test file does not fit, 2 usage (a PATH "
		       "that is not a directory), 3 fio is not installed or a node could not be "
		       "reached, 4 a path below half of its line rate's payload, 128+N stopped by "
		       "signal N (the test file removed)",
	.max_operands = CMD_OPERANDS_ANY,
};
