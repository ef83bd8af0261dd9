/*
 * nvmet.c - the operations that make or tear down an nvmet target in
 * configfs, and performing them (see nvmet.h).
 */
#include "sparkctl.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/parse.h"
#include "lib/xalloc.h"
#include "proc/run.h"
#include "remote/ssh.h"
#include "storage/nvmet.h"
#include "storage/storage_conf.h"

/* The most an NQN may hold (NVMe base specification, NVMF_NQN_SIZE - 1). */
#define NQN_MAX		    223
/* modprobe's output kept for a message. */
#define MODPROBE_OUTPUT_MAX 4096
#define MODPROBE_TIMEOUT_MS 60000

void nvmet_ops_init(struct nvmet_ops *ops)
{
	ops->v = NULL;
	ops->nr = 0;
}

void nvmet_ops_release(struct nvmet_ops *ops)
{
	for (size_t i = 0; i < ops->nr; i++) {
		free(ops->v[i].path);
		free(ops->v[i].value);
		free(ops->v[i].undo);
	}
	free(ops->v);
	nvmet_ops_init(ops);
}

static void push(struct nvmet_ops *ops, enum nvmet_op_kind kind, char *path, const char *value,
		 const char *undo)
{
	struct nvmet_op *op = ARRAY_PUSH(ops->v, ops->nr);

	op->kind = kind;
	op->path = path;
	op->value = xstrdup_or_null(value);
	op->undo = xstrdup_or_null(undo);
}

bool nvmet_nqn_usable(const char *nqn)
{
	/* Valid, and one configfs directory name: no '/'. */
	return nvme_nqn_valid(nqn) && !strchr(nqn, '/');
}

static int port_number(const char *s, unsigned *port)
{
	uint32_t v;

	if (parse_u32(s, &v) < 0 || v == 0 || v > 65535)
		return -EINVAL;
	*port = v;
	return 0;
}

int nvmet_split_addr_port(const char *s, unsigned default_port, char **addr, unsigned *port,
			  struct strbuf *err)
{
	const char *colon = strrchr(s, ':');
	char *a = NULL;
	int r = 0;

	*port = default_port;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || (close[1] && close[1] != ':'))
			goto bad;
		a = xstrndup(s + 1, (size_t)(close - s - 1));
		if (close[1] == ':' && port_number(close + 2, port) < 0)
			goto bad_port;
	} else if (colon && colon == strchr(s, ':')) {
		a = xstrndup(s, (size_t)(colon - s));
		if (port_number(colon + 1, port) < 0)
			goto bad_port;
	} else {
		a = xstrdup(s);
	}
	if (!*a)
		goto bad;
	*addr = a;
	return 0;
bad_port:
	strbuf_addf(err, "'%s': the port must be a number from 1 to 65535", s);
	r = -EINVAL;
	goto out;
bad:
	strbuf_addf(err, "'%s' is not ADDR[:PORT] ([IPv6]:PORT)", s);
	r = -EINVAL;
out:
	free(a);
	return r;
}

int nvmet_parse_size_mib(const char *s, uint64_t *mib)
{
	static const struct {
		const char *suffix;
		uint64_t mib;
	} units[] = { { "", 1 },       { "M", 1 },	     { "MiB", 1 },	    { "G", 1024 },
		      { "GiB", 1024 }, { "T", 1024 * 1024 }, { "TiB", 1024 * 1024 } };
	size_t digits = strspn(s, "0123456789");
	uint64_t n;

	if (!digits || parse_u64_n(s, digits, &n) < 0 || n == 0)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (!streq(s + digits, units[i].suffix))
			continue;
		if (n > UINT32_MAX / units[i].mib)
			return -EINVAL;
		*mib = n * units[i].mib;
		return 0;
	}
	return -EINVAL;
}

void nvmet_null_blk_name(const char *nqn, struct strbuf *name)
{
	uint32_t hash = 2166136261u; /* FNV-1a: stable across runs and hosts */

	for (const unsigned char *p = (const unsigned char *)nqn; *p; p++)
		hash = (hash ^ *p) * 16777619u;
	strbuf_addf(name, NVMET_NULLB_PREFIX "%08x", hash);
}

static const struct nvmet_port_state *port_of_address(const struct nvmet_state *st,
						      const char *traddr, unsigned trsvcid)
{
	char svc[16];

	snprintf(svc, sizeof(svc), "%u", trsvcid);
	for (size_t i = 0; i < st->nr_ports; i++)
		if (streq(st->ports[i].traddr, traddr) && streq(st->ports[i].trsvcid, svc) &&
		    (!*st->ports[i].trtype || streq(st->ports[i].trtype, "tcp")))
			return &st->ports[i];
	return NULL;
}

static const struct nvmet_port_state *port_of_id(const struct nvmet_state *st, unsigned id)
{
	char s[16];

	snprintf(s, sizeof(s), "%u", id);
	for (size_t i = 0; i < st->nr_ports; i++)
		if (streq(st->ports[i].id, s))
			return &st->ports[i];
	return NULL;
}

static void describe_port_use(const struct nvmet_port_state *p, struct strbuf *err)
{
	if (!p->subsystems.nr) {
		strbuf_addstr(err, "no subsystem");
		return;
	}
	strbuf_addstr(err, "subsystem ");
	strbuf_addstr_printable(err, p->subsystems.v[0]);
}

/* The request against what is there: 0, or why it cannot be made. */
static int check_request(const struct nvmet_request *req, const struct nvmet_state *st,
			 unsigned *port_id, struct strbuf *err)
{
	const struct nvmet_port_state *p;
	unsigned char bin[16];

	if (!nvmet_nqn_usable(req->nqn)) {
		strbuf_addstr(err, "not an NQN (" NVME_NQN_RULE ", no '/'): ");
		strbuf_addstr_printable(err, req->nqn);
		return -EINVAL;
	}
	if (inet_pton(AF_INET, req->traddr, bin) != 1 &&
	    inet_pton(AF_INET6, req->traddr, bin) != 1) {
		strbuf_addstr(err, "--listen: not an IPv4 or IPv6 address: ");
		strbuf_addstr_printable(err, req->traddr);
		return -EINVAL;
	}
	for (size_t i = 0; req->allow_hosts && i < req->allow_hosts->nr; i++) {
		if (nvmet_nqn_usable(req->allow_hosts->v[i]))
			continue;
		strbuf_addstr(err, "--allow-host: not a host NQN: ");
		strbuf_addstr_printable(err, req->allow_hosts->v[i]);
		return -EINVAL;
	}
	if (st->subsystem_present) {
		strbuf_addstr(err, "subsystem ");
		strbuf_addstr_printable(err, req->nqn);
		strbuf_addstr(err, " exists already (--remove tears it down)");
		return -EEXIST;
	}
	if ((p = port_of_address(st, req->traddr, req->trsvcid)) != NULL) {
		strbuf_addf(err, "%s:%u is served already by nvmet port ", req->traddr,
			    req->trsvcid);
		strbuf_addstr_printable(err, p->id);
		strbuf_addstr(err, " (");
		describe_port_use(p, err);
		strbuf_addstr(err, ")");
		return -EADDRINUSE;
	}
	*port_id = req->port_id;
	if (*port_id && (p = port_of_id(st, *port_id)) != NULL) {
		strbuf_addf(err, "nvmet port %u is used already (", *port_id);
		describe_port_use(p, err);
		strbuf_addf(err, ", %s:%s); choose another --port-id", p->traddr, p->trsvcid);
		return -EEXIST;
	}
	for (*port_id = *port_id ? *port_id : 1; port_of_id(st, *port_id); (*port_id)++)
		;
	return 0;
}

static void push_null_blk(struct nvmet_ops *ops, const char *name, uint64_t mib)
{
	char size[32];

	snprintf(size, sizeof(size), "%" PRIu64, mib);
	push(ops, NVMET_OP_MKDIR, xasprintf("%s/%s", NULLB_CONFIGFS_DIR, name), NULL, NULL);
	push(ops, NVMET_OP_WRITE, xasprintf("%s/%s/size", NULLB_CONFIGFS_DIR, name), size, NULL);
	push(ops, NVMET_OP_WRITE, xasprintf("%s/%s/blocksize", NULLB_CONFIGFS_DIR, name), "512",
	     NULL);
	push(ops, NVMET_OP_WRITE, xasprintf("%s/%s/memory_backed", NULLB_CONFIGFS_DIR, name), "1",
	     NULL);
	push(ops, NVMET_OP_WRITE, xasprintf("%s/%s/power", NULLB_CONFIGFS_DIR, name), "1", "0");
	push(ops, NVMET_OP_WAIT_DEVICE, xasprintf("dev/%s", name), NULL, NULL);
}

static void push_subsystem(struct nvmet_ops *ops, const struct nvmet_request *req,
			   const struct nvmet_state *st, const char *device)
{
	const char *nqn = req->nqn;
	size_t hosts = req->allow_hosts ? req->allow_hosts->nr : 0;

	push(ops, NVMET_OP_MKDIR, xasprintf("%s/subsystems/%s", NVMET_CONFIGFS_DIR, nqn), NULL,
	     NULL);
	push(ops, NVMET_OP_WRITE,
	     xasprintf("%s/subsystems/%s/attr_allow_any_host", NVMET_CONFIGFS_DIR, nqn),
	     hosts ? "0" : "1", NULL);
	for (size_t i = 0; i < hosts; i++) {
		const char *h = req->allow_hosts->v[i];

		if (!strvec_contains(&st->hosts, h))
			push(ops, NVMET_OP_MKDIR, xasprintf("%s/hosts/%s", NVMET_CONFIGFS_DIR, h),
			     NULL, NULL);
		push(ops, NVMET_OP_SYMLINK,
		     xasprintf("%s/subsystems/%s/allowed_hosts/%s", NVMET_CONFIGFS_DIR, nqn, h),
		     NULL, NULL);
		ops->v[ops->nr - 1].value = xasprintf("/%s/hosts/%s", NVMET_CONFIGFS_DIR, h);
	}
	push(ops, NVMET_OP_MKDIR,
	     xasprintf("%s/subsystems/%s/namespaces/" NVMET_NSID, NVMET_CONFIGFS_DIR, nqn), NULL,
	     NULL);
	push(ops, NVMET_OP_WRITE,
	     xasprintf("%s/subsystems/%s/namespaces/" NVMET_NSID "/device_path", NVMET_CONFIGFS_DIR,
		       nqn),
	     device, NULL);
	push(ops, NVMET_OP_WRITE,
	     xasprintf("%s/subsystems/%s/namespaces/" NVMET_NSID "/enable", NVMET_CONFIGFS_DIR,
		       nqn),
	     "1", "0");
}

static void push_port(struct nvmet_ops *ops, const struct nvmet_request *req, unsigned id)
{
	char svc[16];
	unsigned char bin[16];
	const char *adrfam = inet_pton(AF_INET, req->traddr, bin) == 1 ? "ipv4" : "ipv6";

	snprintf(svc, sizeof(svc), "%u", req->trsvcid);
	push(ops, NVMET_OP_MKDIR, xasprintf("%s/ports/%u", NVMET_CONFIGFS_DIR, id), NULL, NULL);
	push(ops, NVMET_OP_WRITE, xasprintf("%s/ports/%u/addr_trtype", NVMET_CONFIGFS_DIR, id),
	     "tcp", NULL);
	push(ops, NVMET_OP_WRITE, xasprintf("%s/ports/%u/addr_adrfam", NVMET_CONFIGFS_DIR, id),
	     adrfam, NULL);
	push(ops, NVMET_OP_WRITE, xasprintf("%s/ports/%u/addr_traddr", NVMET_CONFIGFS_DIR, id),
	     req->traddr, NULL);
	push(ops, NVMET_OP_WRITE, xasprintf("%s/ports/%u/addr_trsvcid", NVMET_CONFIGFS_DIR, id),
	     svc, NULL);
	/* The link enables the port: the kernel listens from here on. */
	push(ops, NVMET_OP_SYMLINK,
	     xasprintf("%s/ports/%u/subsystems/%s", NVMET_CONFIGFS_DIR, id, req->nqn), NULL, NULL);
	ops->v[ops->nr - 1].value = xasprintf("/%s/subsystems/%s", NVMET_CONFIGFS_DIR, req->nqn);
}

int nvmet_plan_create(const struct nvmet_request *req, const struct nvmet_state *st,
		      struct nvmet_ops *ops, struct strbuf *err)
{
	struct strbuf nullb = STRBUF_INIT, device = STRBUF_INIT;
	unsigned port_id;
	int r = check_request(req, st, &port_id, err);

	if (r < 0)
		goto out;
	if (!req->device)
		nvmet_null_blk_name(req->nqn, &nullb);
	if (!req->device && strvec_contains(&st->nullb, nullb.buf)) {
		strbuf_addf(err, "null_blk device %s exists already (--remove tears it down)",
			    nullb.buf);
		r = -EEXIST;
		goto out;
	}
	/* nvmet-tcp too: the kernel's own request for it needs a modprobe it can run. */
	if (!st->nvmet_present || !st->nvmet_tcp_loaded)
		push(ops, NVMET_OP_MODPROBE, xstrdup(NVMET_TCP_MODULE_DIR), "nvmet-tcp", NULL);
	if (!req->device && !st->nullb_present)
		/* nr_devices=0: no nullb0 of the module's own beside ours. */
		push(ops, NVMET_OP_MODPROBE, xstrdup(NULLB_CONFIGFS_DIR), "null_blk nr_devices=0",
		     NULL);
	if (req->device) {
		strbuf_addstr(&device, req->device);
	} else {
		push_null_blk(ops, nullb.buf, req->null_blk_mib);
		strbuf_addf(&device, "/dev/%s", nullb.buf);
	}
	push_subsystem(ops, req, st, device.buf);
	push_port(ops, req, port_id);
out:
	strbuf_release(&nullb);
	strbuf_release(&device);
	return r;
}

void nvmet_plan_remove(const char *nqn, const struct nvmet_state *st, struct nvmet_ops *ops)
{
	if (!st->subsystem_present)
		return;
	for (size_t i = 0; i < st->nr_ports; i++) {
		const struct nvmet_port_state *p = &st->ports[i];

		if (!strvec_contains(&p->subsystems, nqn))
			continue;
		push(ops, NVMET_OP_UNLINK,
		     xasprintf("%s/ports/%s/subsystems/%s", NVMET_CONFIGFS_DIR, p->id, nqn), NULL,
		     NULL);
		if (p->subsystems.nr == 1)
			push(ops, NVMET_OP_RMDIR,
			     xasprintf("%s/ports/%s", NVMET_CONFIGFS_DIR, p->id), NULL, NULL);
	}
	for (size_t i = 0; i < st->nr_namespaces; i++) {
		const char *nsid = st->namespaces[i].nsid;

		push(ops, NVMET_OP_WRITE,
		     xasprintf("%s/subsystems/%s/namespaces/%s/enable", NVMET_CONFIGFS_DIR, nqn,
			       nsid),
		     "0", NULL);
		push(ops, NVMET_OP_RMDIR,
		     xasprintf("%s/subsystems/%s/namespaces/%s", NVMET_CONFIGFS_DIR, nqn, nsid),
		     NULL, NULL);
	}
	for (size_t i = 0; i < st->allowed_hosts.nr; i++) {
		const char *h = st->allowed_hosts.v[i];

		push(ops, NVMET_OP_UNLINK,
		     xasprintf("%s/subsystems/%s/allowed_hosts/%s", NVMET_CONFIGFS_DIR, nqn, h),
		     NULL, NULL);
		if (strvec_contains(&st->hosts, h) &&
		    !strvec_contains(&st->hosts_allowed_elsewhere, h))
			push(ops, NVMET_OP_RMDIR, xasprintf("%s/hosts/%s", NVMET_CONFIGFS_DIR, h),
			     NULL, NULL);
	}
	push(ops, NVMET_OP_RMDIR, xasprintf("%s/subsystems/%s", NVMET_CONFIGFS_DIR, nqn), NULL,
	     NULL);
	for (size_t i = 0; i < st->nr_namespaces; i++) {
		const char *dev = st->namespaces[i].device_path;
		const char *name = starts_with(dev, "/dev/") ? dev + 5 : "";

		if (!starts_with(name, NVMET_NULLB_PREFIX) || !strvec_contains(&st->nullb, name))
			continue;
		push(ops, NVMET_OP_WRITE, xasprintf("%s/%s/power", NULLB_CONFIGFS_DIR, name), "0",
		     NULL);
		push(ops, NVMET_OP_RMDIR, xasprintf("%s/%s", NULLB_CONFIGFS_DIR, name), NULL, NULL);
	}
}

void nvmet_ops_print(const struct nvmet_ops *ops, struct strbuf *out)
{
	for (size_t i = 0; i < ops->nr; i++) {
		const struct nvmet_op *op = &ops->v[i];
		struct strbuf path = STRBUF_INIT;

		strbuf_addf(&path, "/%s", op->path);
		switch (op->kind) {
		case NVMET_OP_MODPROBE:
			strbuf_addf(out, "modprobe %s", op->value);
			break;
		case NVMET_OP_MKDIR:
			strbuf_addstr(out, "mkdir ");
			shell_quote(out, path.buf);
			break;
		case NVMET_OP_WRITE:
			strbuf_addstr(out, "echo ");
			shell_quote(out, op->value);
			strbuf_addstr(out, " > ");
			shell_quote(out, path.buf);
			break;
		case NVMET_OP_SYMLINK:
			strbuf_addstr(out, "ln -s ");
			shell_quote(out, op->value);
			strbuf_addch(out, ' ');
			shell_quote(out, path.buf);
			break;
		case NVMET_OP_RMDIR:
			strbuf_addstr(out, "rmdir ");
			shell_quote(out, path.buf);
			break;
		case NVMET_OP_UNLINK:
			strbuf_addstr(out, "rm ");
			shell_quote(out, path.buf);
			break;
		case NVMET_OP_WAIT_DEVICE:
			strbuf_addstr(out, "until [ -b ");
			shell_quote(out, path.buf);
			strbuf_addstr(out, " ]; do sleep 0.1; done");
			break;
		}
		strbuf_addch(out, '\n');
		strbuf_release(&path);
	}
}

/* The directory of rel (opened for writing, created where create) and its last name. */
static int open_parent(const struct rootfs *root, const char *rel, bool create,
		       struct rootfs_dir *dir, const char **name)
{
	const char *slash = strrchr(rel, '/');
	char *parent = xstrndup(rel, slash ? (size_t)(slash - rel) : 0);
	int r;

	*name = slash ? slash + 1 : rel;
	r = rootfs_dir_open_for_write(root, parent, create ? 0755 : 0, dir);
	free(parent);
	return r;
}

static int write_attr(const struct rootfs *root, const char *rel, const char *value)
{
	struct rootfs_dir dir;
	const char *name;
	struct strbuf line = STRBUF_INIT;
	int fd = -1, r = open_parent(root, rel, false, &dir, &name);

	if (r < 0)
		return r;
	/* In place, as echo does: configfs attributes cannot be renamed over. */
	fd = openat(dir.dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	strbuf_addf(&line, "%s\n", value);
	/* One write: a configfs attribute takes its value from a single store. */
	ssize_t n = write(fd, line.buf, line.len);
	if (n < 0)
		r = -errno;
	else if ((size_t)n != line.len)
		r = -EIO;
	if (close(fd) < 0 && r == 0)
		r = -errno;
out:
	strbuf_release(&line);
	rootfs_dir_close(&dir);
	return r;
}

/*
 * What the kernel removes with an item on configfs, removed by hand on a
 * plain tree standing in for it: its files and its empty directories.
 * On configfs itself unlinking an attribute fails (EPERM), and so does this.
 */
static int clear_item(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *de;
	int r = 0;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	while (r == 0 && (de = readdir(d)) != NULL) {
		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		if (unlinkat(fd, de->d_name, de->d_type == DT_DIR ? AT_REMOVEDIR : 0) < 0)
			r = -errno;
	}
	closedir(d);
	return r;
}

static int remove_dir(const struct rootfs *root, const char *rel)
{
	struct rootfs_dir dir;
	const char *name;
	int r = open_parent(root, rel, false, &dir, &name);

	if (r < 0)
		return r;
	if (unlinkat(dir.dirfd, name, AT_REMOVEDIR) < 0) {
		r = -errno;
		if (r == -ENOTEMPTY && clear_item(dir.dirfd, name) == 0)
			r = unlinkat(dir.dirfd, name, AT_REMOVEDIR) < 0 ? -errno : 0;
	}
	rootfs_dir_close(&dir);
	return r;
}

static int make_entry(const struct rootfs *root, const struct nvmet_op *op)
{
	struct rootfs_dir dir;
	const char *name;
	/* Created parents stand in for the default groups configfs makes with an item. */
	int r = open_parent(root, op->path, true, &dir, &name);

	if (r < 0)
		return r;
	if (op->kind == NVMET_OP_MKDIR)
		r = mkdirat(dir.dirfd, name, 0755) < 0 ? -errno : 0;
	else if (op->kind == NVMET_OP_SYMLINK)
		r = symlinkat(op->value, dir.dirfd, name) < 0 ? -errno : 0;
	else
		r = unlinkat(dir.dirfd, name, 0) < 0 ? -errno : 0;
	rootfs_dir_close(&dir);
	return r;
}

static int run_modprobe(const struct rootfs *root, const struct nvmet_op *op, struct strbuf *err)
{
	struct run_job job;
	char *words = xstrdup(op->value), *save = NULL;
	int r;

	run_job_init(&job);
	strvec_push(&job.argv, "modprobe");
	for (char *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save))
		strvec_push(&job.argv, w);
	r = run_jobs(&job, 1, 1, MODPROBE_TIMEOUT_MS, MODPROBE_OUTPUT_MAX);
	if (r == 0 && job.spawn_error) {
		strbuf_addf(err, "modprobe %s: modprobe cannot run (%s); kmod is needed", op->value,
			    strerror(-job.spawn_error));
		r = -ENODEV;
	} else if (r == 0 && job.status != 0) {
		strbuf_rtrim(&job.err);
		strbuf_addf(err, "modprobe %s failed (status %d)", op->value, job.status);
		if (job.err.len) {
			strbuf_addstr(err, ": ");
			strbuf_addstr_printable(err, job.err.buf);
		}
		r = -ENODEV;
	} else if (r == 0 && !rootfs_exists(root, op->path)) {
		strbuf_addf(err, "modprobe %s: /%s is still missing", op->value, op->path);
		r = -ENODEV;
	}
	run_job_release(&job);
	free(words);
	return r;
}

static int modprobe(const struct rootfs *root, const struct nvmet_op *op, struct strbuf *err)
{
	int r = rootfs_exists(root, op->path) ? 0 : run_modprobe(root, op, err);

	/* Loaded, but nvmet's configfs directory shows only where configfs is mounted. */
	if (r == 0 && streq(op->path, NVMET_TCP_MODULE_DIR) &&
	    !rootfs_exists(root, NVMET_CONFIGFS_DIR)) {
		strbuf_addf(err, "no /%s: configfs is not mounted (mount -t configfs none /%s)",
			    NVMET_CONFIGFS_DIR, CONFIGFS_MOUNT_DIR);
		r = -ENODEV;
	}
	return r;
}

/* The device the kernel makes: devtmpfs may show it a moment after the write that made it. */
static int wait_device(const struct rootfs *root, const char *rel)
{
	uint64_t deadline = monotonic_ms() + NVMET_DEVICE_WAIT_MS;

	while (!rootfs_exists(root, rel)) {
		if (monotonic_ms() >= deadline)
			return -ETIMEDOUT;
		nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000000L }, NULL);
	}
	return 0;
}

static int perform(const struct rootfs *root, const struct nvmet_op *op, struct strbuf *err)
{
	switch (op->kind) {
	case NVMET_OP_MODPROBE:
		return modprobe(root, op, err);
	case NVMET_OP_WRITE:
		return write_attr(root, op->path, op->value);
	case NVMET_OP_RMDIR:
		return remove_dir(root, op->path);
	case NVMET_OP_MKDIR:
	case NVMET_OP_SYMLINK:
	case NVMET_OP_UNLINK:
		return make_entry(root, op);
	case NVMET_OP_WAIT_DEVICE:
		return wait_device(root, op->path);
	}
	return -EINVAL;
}

/* Undo op (done): best effort, the first failure noted in err. */
static void undo(const struct rootfs *root, const struct nvmet_op *op, struct strbuf *err)
{
	struct nvmet_op unlink_op = { .kind = NVMET_OP_UNLINK, .path = op->path };
	int r = 0;

	if (op->kind == NVMET_OP_MKDIR)
		r = remove_dir(root, op->path);
	else if (op->kind == NVMET_OP_SYMLINK)
		r = make_entry(root, &unlink_op);
	else if (op->kind == NVMET_OP_WRITE && op->undo)
		r = write_attr(root, op->path, op->undo);
	if (r < 0 && !strstr(err->buf, "; left behind"))
		strbuf_addf(err, "; left behind: /%s (%s)", op->path, strerror(-r));
}

static const char *op_verb(enum nvmet_op_kind kind)
{
	static const char *const verbs[] = {
		[NVMET_OP_MODPROBE] = "load modules", [NVMET_OP_MKDIR] = "mkdir",
		[NVMET_OP_WRITE] = "write",	      [NVMET_OP_SYMLINK] = "link",
		[NVMET_OP_RMDIR] = "rmdir",	      [NVMET_OP_UNLINK] = "unlink",
		[NVMET_OP_WAIT_DEVICE] = "wait for",
	};
	return verbs[kind];
}

int nvmet_ops_apply(const struct rootfs *root, const struct nvmet_ops *ops, bool create,
		    size_t *done, struct strbuf *err)
{
	size_t i;
	int r = 0;

	for (i = 0; i < ops->nr; i++) {
		const struct nvmet_op *op = &ops->v[i];
		size_t mark = err->len;

		r = perform(root, op, err);
		if (r == 0)
			continue;
		if (!create && (r == -ENOENT || (op->kind == NVMET_OP_RMDIR && r == -ENOTDIR))) {
			r = 0; /* gone already */
			continue;
		}
		if (err->len == mark && op->kind == NVMET_OP_WAIT_DEVICE) {
			strbuf_addf(err,
				    "/%s did not appear within %d s (is devtmpfs mounted on /dev?)",
				    op->path, NVMET_DEVICE_WAIT_MS / 1000);
		} else if (err->len == mark) {
			strbuf_addf(err, "%s /%s", op_verb(op->kind), op->path);
			if (op->kind == NVMET_OP_WRITE)
				strbuf_addf(err, " = %s", op->value);
			strbuf_addf(err, ": %s", strerror(-r));
			/* The link starts the listener: the port may be another program's. */
			if (r == -EADDRINUSE)
				strbuf_addstr(
					err,
					" (another program listens on that address and port?)");
		}
		break;
	}
	if (done)
		*done = i;
	if (r < 0 && create) {
		strbuf_addstr(err, "; undone what was made");
		while (i-- > 0)
			undo(root, &ops->v[i], err);
	}
	return r;
}
