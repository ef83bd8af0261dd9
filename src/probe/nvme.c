#include "sparkctl.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/parse.h"
#include "lib/xalloc.h"
#include "probe/nvme.h"
#include "probe/probe_internal.h"
#include "storage/storage_conf.h"

/* ---- parsers ----------------------------------------------------------------- */

void nvme_address_release(struct nvme_address *a)
{
	free_and_null(&a->traddr);
	free_and_null(&a->trsvcid);
	free_and_null(&a->src_addr);
	free_and_null(&a->host_traddr);
	free_and_null(&a->host_iface);
}

static char **address_slot(struct nvme_address *a, const char *key, size_t len)
{
	static const struct {
		const char *key;
		size_t offset;
	} slots[] = {
		{ "traddr", offsetof(struct nvme_address, traddr) },
		{ "trsvcid", offsetof(struct nvme_address, trsvcid) },
		{ "src_addr", offsetof(struct nvme_address, src_addr) },
		{ "host_traddr", offsetof(struct nvme_address, host_traddr) },
		{ "host_iface", offsetof(struct nvme_address, host_iface) },
	};

	for (size_t i = 0; i < ARRAY_SIZE(slots); i++)
		if (strlen(slots[i].key) == len && !memcmp(slots[i].key, key, len))
			return (char **)((char *)a + slots[i].offset);
	return NULL;
}

int nvme_address_parse(const char *text, struct nvme_address *a)
{
	const char *p = text;

	memset(a, 0, sizeof(*a));
	while (*p) {
		size_t len = strcspn(p, ",\n");
		const char *eq = memchr(p, '=', len);
		if (!eq || eq == p) {
			nvme_address_release(a);
			return -EINVAL;
		}
		char **slot = address_slot(a, p, (size_t)(eq - p));
		/* The first of a repeated key counts. */
		if (slot && !*slot)
			*slot = xstrndup(eq + 1, len - (size_t)(eq - p) - 1);
		p += len;
		p += strspn(p, ",\n");
	}
	return 0;
}

#define DIGITS "0123456789"

int nvme_namespace_device(const char *entry, struct strbuf *out)
{
	const char *p = entry + 4, *instance_end;
	size_t n;

	if (strncmp(entry, "nvme", 4) != 0 || !(n = strspn(p, DIGITS)))
		return -EINVAL;
	instance_end = p += n;
	/* A path of a multipath namespace: nvme<subsystem>c<controller>n<nsid>. */
	if (*p == 'c') {
		if (!(n = strspn(p + 1, DIGITS)))
			return -EINVAL;
		p += 1 + n;
	}
	if (*p != 'n' || !(n = strspn(p + 1, DIGITS)) || p[1 + n])
		return -EINVAL;
	strbuf_reset(out);
	strbuf_add(out, entry, (size_t)(instance_end - entry));
	strbuf_addstr(out, p);
	return 0;
}

void mount_line_release(struct mount_line *m)
{
	free_and_null(&m->spec);
	free_and_null(&m->dir);
	free_and_null(&m->fs);
	free_and_null(&m->options);
}

/* A field of a mount table, its octal escapes (\040 for a space) undone. */
static char *unescape_field(const char *s, size_t len)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\' && i + 3 < len && s[i + 1] >= '0' && s[i + 1] <= '3' &&
		    s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
			strbuf_addch(&sb, (s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 +
						  (s[i + 3] - '0'));
			i += 3;
		} else {
			strbuf_addch(&sb, s[i]);
		}
	}
	return strbuf_detach(&sb, NULL);
}

/* Split one line (len bytes) into at most 4 fields; the number found. */
static size_t split_fields(const char *line, size_t len, const char *field[4], size_t flen[4])
{
	size_t n = 0, i = 0;

	while (n < 4) {
		while (i < len && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i == len)
			break;
		field[n] = line + i;
		while (i < len && line[i] != ' ' && line[i] != '\t')
			i++;
		flen[n] = (size_t)(line + i - field[n]);
		n++;
	}
	return n;
}

int mount_table_find(const char *table, size_t len, const char *dir, struct mount_line *m)
{
	const char *p = table, *end = table + len;
	int found = 0;

	memset(m, 0, sizeof(*m));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t llen = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *field[4];
		size_t flen[4], skip = 0;

		while (skip < llen && (p[skip] == ' ' || p[skip] == '\t'))
			skip++;
		if (skip < llen && p[skip] != '#' && memchr(p, '\0', llen) == NULL &&
		    split_fields(p, llen, field, flen) >= 3) {
			char *d = unescape_field(field[1], flen[1]);
			/* A trailing slash names the same directory. */
			size_t dl = strlen(d);
			while (dl > 1 && d[dl - 1] == '/')
				d[--dl] = '\0';
			if (streq(d, dir)) {
				mount_line_release(m);
				m->spec = unescape_field(field[0], flen[0]);
				m->dir = d;
				d = NULL;
				m->fs = xstrndup(field[2], flen[2]);
				m->options = split_fields(p, llen, field, flen) == 4
						     ? xstrndup(field[3], flen[3])
						     : xstrdup("defaults");
				found = 1;
			}
			free(d);
		}
		p += llen + 1;
	}
	return found;
}

bool mount_has_option(const char *options, const char *opt)
{
	size_t n = strlen(opt);

	for (const char *p = options; p && *p;) {
		size_t len = strcspn(p, ",");
		if (len == n && !memcmp(p, opt, n))
			return true;
		p += len + (p[len] == ',');
	}
	return false;
}

void by_uuid_target_path(const char *link_target, struct strbuf *out)
{
	struct strbuf path = STRBUF_INIT;
	const char *p = link_target;

	strbuf_reset(out);
	if (*p != '/')
		strbuf_addstr(&path, "/dev/disk/by-uuid/");
	strbuf_addstr(&path, p);
	/* Resolve "." and ".." lexically, as the kernel would without symlinks on the way. */
	p = path.buf;
	while (*p) {
		size_t len;
		p += strspn(p, "/");
		len = strcspn(p, "/");
		if (len == 0 || (len == 1 && p[0] == '.')) {
			/* nothing */
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			char *slash = strrchr(out->buf, '/');
			strbuf_setlen(out, slash ? (size_t)(slash - out->buf) : 0);
		} else {
			strbuf_addch(out, '/');
			strbuf_add(out, p, len);
		}
		p += len;
	}
	if (!out->len)
		strbuf_addch(out, '/');
	strbuf_release(&path);
}

int nvme_hostnqn_parse(const char *text, size_t len, struct strbuf *out)
{
	size_t n = 0;

	strbuf_reset(out);
	while (n < len && text[n] != '\n' && text[n] != '\0')
		n++;
	strbuf_add(out, text, n);
	strbuf_trim(out);
	return out->len ? 0 : -EINVAL;
}

/* ---- the probe ----------------------------------------------------------------- */

#define NVME_CLASS "sys/class/nvme"

static void probe_controller(struct probe_ctx *ctx, struct inv_storage *st, const char *name)
{
	char *transport = probe_read_strf(ctx, NVME_CLASS "/%s/transport", name);
	struct nvme_address addr;
	struct strvec entries = STRVEC_INIT;
	struct strbuf dev = STRBUF_INIT, path = STRBUF_INIT;

	/* Local drives are not the fabric's. */
	if (!transport || streq(transport, "pcie")) {
		free(transport);
		return;
	}
	struct inv_nvme_ctrl *c = ARRAY_PUSH(st->controllers, st->nr_controllers);
	c->name = xstrdup(name);
	c->transport = transport;
	c->trsvcid = INV_UNKNOWN;
	strvec_init(&c->namespaces);
	c->state = probe_read_strf(ctx, NVME_CLASS "/%s/state", name);
	c->subsysnqn = probe_read_strf(ctx, NVME_CLASS "/%s/subsysnqn", name);
	char *text = probe_read_strf(ctx, NVME_CLASS "/%s/address", name);
	if (text && nvme_address_parse(text, &addr) == 0) {
		uint64_t port;
		c->traddr = addr.traddr;
		c->src_addr = addr.src_addr;
		c->host_iface = addr.host_iface;
		addr.traddr = addr.src_addr = addr.host_iface = NULL;
		if (addr.trsvcid && parse_u64(addr.trsvcid, &port) == 0 && port <= 65535)
			c->trsvcid = (int64_t)port;
		nvme_address_release(&addr);
	} else if (text) {
		strbuf_addf(&path, NVME_CLASS "/%s/address", name);
		probe_bad_content(ctx, path.buf, text);
	}
	free(text);
	strbuf_reset(&path);
	strbuf_addf(&path, NVME_CLASS "/%s", name);
	if (reader_list(&ctx->rd, path.buf, &entries) >= 0)
		for (size_t i = 0; i < entries.nr; i++)
			if (nvme_namespace_device(entries.v[i], &dev) == 0 &&
			    !strvec_contains(&c->namespaces, dev.buf))
				strvec_push(&c->namespaces, dev.buf);
	strvec_sort(&c->namespaces);
	strvec_clear(&entries);
	strbuf_release(&dev);
	strbuf_release(&path);
}

int nvme_controller_devices(const struct rootfs *root, const char *ctrl, struct strvec *devices)
{
	struct strvec entries = STRVEC_INIT;
	struct strbuf path = STRBUF_INIT, dev = STRBUF_INIT;
	int r;

	strbuf_addf(&path, NVME_CLASS "/%s", ctrl);
	if ((r = rootfs_list(root, path.buf, &entries)) < 0)
		goto out;
	for (size_t i = 0; i < entries.nr; i++) {
		if (nvme_namespace_device(entries.v[i], &dev) < 0)
			continue;
		strbuf_reset(&path);
		strbuf_addf(&path, "/dev/%s", dev.buf);
		if (!strvec_contains(devices, path.buf))
			strvec_push(devices, path.buf);
	}
	strvec_sort(devices);
	r = (int)devices->nr;
out:
	strvec_clear(&entries);
	strbuf_release(&path);
	strbuf_release(&dev);
	return r;
}

/* The mount table of this process's namespace; /proc/mounts in older trees. */
static int read_mount_table(const struct rootfs *root, const char **path, struct strbuf *out)
{
	int r;

	*path = "proc/self/mounts";
	r = rootfs_read_file(root, *path, NVME_TABLE_MAX, out);
	if (r < 0 && rootfs_absent(r)) {
		*path = "proc/mounts";
		r = rootfs_read_file(root, *path, NVME_TABLE_MAX, out);
	}
	return r;
}

int mount_point_state(const struct rootfs *root, const char *dir, struct strvec *entries,
		      bool *mounted)
{
	struct strbuf table = STRBUF_INIT;
	struct mount_line m;
	const char *path;
	int r = rootfs_list(root, dir[0] == '/' ? dir + 1 : dir, entries);

	*mounted = false;
	if (r < 0 && r != -ENOENT)
		return r;
	if (read_mount_table(root, &path, &table) >= 0 &&
	    mount_table_find(table.buf, table.len, dir, &m) == 1) {
		*mounted = true;
		mount_line_release(&m);
	}
	strvec_sort(entries);
	strbuf_release(&table);
	return 0;
}

/* Whether a TCP connection to address:port opens within the timeout; why not in *why. */
static int tcp_reachable(const char *address, unsigned port, char **why)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	char service[16];
	int fd = -1, r, err = 0;
	socklen_t elen = sizeof(err);

	snprintf(service, sizeof(service), "%u", port);
	r = getaddrinfo(address, service, &hints, &res);
	if (r != 0) {
		*why = xasprintf("cannot resolve %s: %s", address, gai_strerror(r));
		return TRI_NO;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		*why = xasprintf("socket: %s", strerror(errno));
		r = TRI_UNKNOWN;
		goto out;
	}
	if (connect(fd, res->ai_addr, res->ai_addrlen) < 0 && errno != EINPROGRESS) {
		err = errno;
	} else {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		r = poll(&pfd, 1, NVME_TARGET_TIMEOUT_MS);
		if (r == 0)
			err = ETIMEDOUT;
		else if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
			err = errno;
	}
	if (err)
		*why = xasprintf("%s", strerror(err));
	r = err ? TRI_NO : TRI_YES;
out:
	if (fd >= 0)
		close(fd);
	freeaddrinfo(res);
	return r;
}

/*
 * The mount table and fstab, read once for every volume: NULL when they
 * cannot be read (an absent fstab is an empty one).
 */
struct mount_tables {
	struct strbuf mounts, fstab;
	bool have_mounts, have_fstab;
};

static void read_mount_tables(struct probe_ctx *ctx, struct mount_tables *t)
{
	const char *mounts;
	int r = read_mount_table(ctx->root, &mounts, &t->mounts);

	if (r < 0)
		probe_read_failed(ctx, mounts, r);
	t->have_mounts = r >= 0;
	r = rootfs_read_file(ctx->root, "etc/fstab", NVME_TABLE_MAX, &t->fstab);
	if (r < 0 && !rootfs_absent(r))
		probe_read_failed(ctx, "etc/fstab", r);
	/* No fstab is an fstab without the line. */
	if (r < 0)
		strbuf_reset(&t->fstab);
	t->have_fstab = r >= 0 || rootfs_absent(r);
}

/* What the node has of the volume v's plan: its device by UUID, its mount and fstab line. */
static void probe_planned_mount(struct probe_ctx *ctx, const struct mount_tables *t,
				struct inv_storage_volume *v)
{
	const struct storage_conf *conf = v->conf;
	struct strbuf text = STRBUF_INIT, link = STRBUF_INIT;
	struct mount_line m;
	int r;

	if (conf->uuid) {
		strbuf_addf(&text, "dev/disk/by-uuid/%s", conf->uuid);
		r = rootfs_readlink(ctx->root, text.buf, &link);
		if (r == 0) {
			strbuf_reset(&text);
			by_uuid_target_path(link.buf, &text);
			v->uuid_device = xstrdup(text.buf);
		} else {
			probe_read_failed(ctx, text.buf, r);
		}
	}
	if (t->have_mounts && conf->mount) {
		v->mount.mounted = mount_table_find(t->mounts.buf, t->mounts.len, conf->mount, &m)
					   ? TRI_YES
					   : TRI_NO;
		if (v->mount.mounted == TRI_YES) {
			v->mount.device = m.spec;
			v->mount.fs = m.fs;
			v->mount.options = m.options;
			v->mount.access = xstrdup(mount_has_option(m.options, "ro") ? "ro" : "rw");
			free(m.dir);
		}
	}
	if (t->have_fstab && conf->mount) {
		v->fstab.present = mount_table_find(t->fstab.buf, t->fstab.len, conf->mount, &m)
					   ? TRI_YES
					   : TRI_NO;
		if (v->fstab.present == TRI_YES) {
			v->fstab.spec = m.spec;
			v->fstab.fs = m.fs;
			v->fstab.options = m.options;
			free(m.dir);
		}
	}
	strbuf_release(&text);
	strbuf_release(&link);
}

static struct inv_storage_volume *push_volume(struct inv_storage *st, const char *file)
{
	struct inv_storage_volume *v = ARRAY_PUSH(st->volumes, st->nr_volumes);

	v->file = xstrdup(file);
	v->mount.mounted = TRI_UNKNOWN;
	v->fstab.present = TRI_UNKNOWN;
	v->target_reachable = TRI_UNKNOWN;
	return v;
}

/* By mount point; a plan that could not be read (no mount point) after, by file. */
static int by_mount(const void *a, const void *b)
{
	const struct inv_storage_volume *x = a, *y = b;
	const char *mx = x->conf ? x->conf->mount : NULL, *my = y->conf ? y->conf->mount : NULL;

	if (!mx != !my)
		return mx ? -1 : 1;
	if (mx && strcmp(mx, my))
		return strcmp(mx, my);
	return strcmp(x->file, y->file);
}

/* Every plan in storage.d, good or bad, as a volume of st. */
static void probe_plans(struct probe_ctx *ctx, struct inv_storage *st)
{
	struct strvec names = STRVEC_INIT;
	struct strbuf err = STRBUF_INIT, file = STRBUF_INIT;
	struct storage_conf conf;
	int r;

	r = storage_conf_list(ctx->root, &names, &err);
	if (r < 0)
		push_volume(st, "/" STORAGE_CONF_DIR)->conf_error = strbuf_detach(&err, NULL);
	for (size_t i = 0; i < names.nr; i++) {
		strbuf_reset(&file);
		strbuf_reset(&err);
		strbuf_addf(&file, "/%s/%s", STORAGE_CONF_DIR, names.v[i]);
		struct inv_storage_volume *v = push_volume(st, file.buf);
		r = storage_conf_load_file(ctx->root, names.v[i], &conf, &err);
		if (r == 0) {
			v->conf = xmalloc(sizeof(*v->conf));
			*v->conf = conf;
		} else {
			v->conf_error = xstrdup(err.len ? err.buf : strerror(-r));
		}
	}
	if (st->nr_volumes > 1)
		qsort(st->volumes, st->nr_volumes, sizeof(*st->volumes), by_mount);
	strvec_clear(&names);
	strbuf_release(&err);
	strbuf_release(&file);
}

void probe_storage(struct probe_ctx *ctx)
{
	struct strbuf text = STRBUF_INIT, nqn = STRBUF_INIT;
	struct strvec names = STRVEC_INIT;
	struct inv_storage *st = xcalloc(1, sizeof(*st));
	struct mount_tables tables = { STRBUF_INIT, STRBUF_INIT, false, false };
	bool tables_read = false;
	int r;

	probe_plans(ctx, st);
	if (reader_list(&ctx->rd, NVME_CLASS, &names) >= 0)
		for (size_t i = 0; i < names.nr; i++)
			probe_controller(ctx, st, names.v[i]);
	if (!st->nr_volumes && !st->nr_controllers) {
		free(st->volumes);
		free(st->controllers);
		free(st);
		goto out;
	}
	ctx->inv->storage = st;
	r = rootfs_read_file(ctx->root, "etc/nvme/hostnqn", 4096, &text);
	if (r < 0)
		probe_read_failed(ctx, "etc/nvme/hostnqn", r);
	else if (nvme_hostnqn_parse(text.buf, text.len, &nqn) == 0)
		st->hostnqn = strbuf_detach(&nqn, NULL);
	for (size_t i = 0; i < st->nr_volumes; i++) {
		struct inv_storage_volume *v = &st->volumes[i];
		if (!v->conf)
			continue;
		if (!tables_read) {
			read_mount_tables(ctx, &tables);
			tables_read = true;
		}
		probe_planned_mount(ctx, &tables, v);
		/* Only a live probe speaks to the network: a tree has no network to ask. */
		if (ctx->storage_target && ctx->root->is_host_root && v->conf->target_address)
			v->target_reachable = tcp_reachable(v->conf->target_address,
							    v->conf->target_port, &v->target_error);
	}
out:
	strvec_clear(&names);
	strbuf_release(&text);
	strbuf_release(&nqn);
	strbuf_release(&tables.mounts);
	strbuf_release(&tables.fstab);
}
