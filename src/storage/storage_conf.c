/* storage_conf.c - the plans each node keeps (/etc/sparkctl/storage.d/NAME.json) and their names.
 */
#include "sparkctl.h"

#include <ctype.h>

#include "cluster/cluster_file.h"
#include "lib/json.h"
#include "lib/xalloc.h"
#include "storage/storage_conf.h"

/* The most a plan may hold: a few nodes' names, far below this. */
#define STORAGE_CONF_SIZE_MAX ((size_t)1 << 20)
/* IFNAMSIZ less its NUL. */
#define IFACE_NAME_MAX	      15

/* ---- names ---- */

bool nvme_nqn_valid(const char *nqn)
{
	size_t len = strlen(nqn);

	if (len == 0 || len > NVME_NQN_MAX)
		return false;
	for (const char *p = nqn; *p; p++)
		if (*p <= ' ' || *p > '~')
			return false;
	return true;
}

bool storage_uuid_valid(const char *uuid)
{
	static const size_t dashes[] = { 8, 13, 18, 23 };
	size_t d = 0;

	if (strlen(uuid) != 36)
		return false;
	for (size_t i = 0; i < 36; i++) {
		if (d < ARRAY_SIZE(dashes) && i == dashes[d]) {
			if (uuid[i] != '-')
				return false;
			d++;
		} else if (!isxdigit((unsigned char)uuid[i])) {
			return false;
		}
	}
	return true;
}

/* Each component of an absolute path: not empty, not "." or "..". */
static bool path_components_normal(const char *path)
{
	const char *p = path + 1;

	while (*p) {
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		if (len == 0 || (len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		if (!slash)
			break;
		p = slash + 1;
		if (!*p) /* a trailing slash */
			return false;
	}
	return true;
}

bool storage_mount_valid(const char *mount)
{
	if (mount[0] != '/' || !mount[1] || strlen(mount) > PATH_MAX)
		return false;
	for (const char *p = mount; *p; p++)
		if ((unsigned char)*p < ' ' || *p == 0x7f)
			return false;
	return path_components_normal(mount);
}

bool storage_iface_valid(const char *iface)
{
	size_t len = strlen(iface);

	if (!len || len > IFACE_NAME_MAX || streq(iface, ".") || streq(iface, ".."))
		return false;
	for (const char *p = iface; *p; p++)
		if (*p == '/' || *p == ':' || isspace((unsigned char)*p) ||
		    (unsigned char)*p < ' ' || *p == 0x7f)
			return false;
	return true;
}

/* systemd's unit name escaping (unit_name_path_escape()) of the components of path. */
static void escape_path(const char *path, struct strbuf *out)
{
	bool first = true, at_start = true;

	for (const char *p = path; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '/') {
			/* Leading and repeated slashes vanish; one between components is '-'. */
			if (!at_start && p[1] && p[1] != '/')
				strbuf_addch(out, '-');
			continue;
		}
		at_start = false;
		if (isalnum(c) || c == ':' || c == '_' || (c == '.' && !first))
			strbuf_addch(out, c);
		else
			strbuf_addf(out, "\\x%02x", c);
		first = false;
	}
}

int storage_unit_name(const char *mount, struct strbuf *out)
{
	const char *p = mount;

	if (mount[0] != '/')
		return -EINVAL;
	/* "." and ".." components: systemd-escape --path refuses a path that is not normalized. */
	while (*p) {
		while (*p == '/')
			p++;
		size_t len = strcspn(p, "/");
		if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		p += len;
	}
	strbuf_addstr(out, "sparkctl-nvme-");
	if (strspn(mount, "/") == strlen(mount))
		strbuf_addch(out, '-');
	else
		escape_path(mount, out);
	strbuf_addstr(out, ".service");
	return 0;
}

const char *storage_fs_name(enum storage_fs fs)
{
	return fs == STORAGE_FS_XFS ? "xfs" : "ext4";
}

int storage_fs_parse(const char *name, enum storage_fs *fs)
{
	if (streq(name, "ext4"))
		*fs = STORAGE_FS_EXT4;
	else if (streq(name, "xfs"))
		*fs = STORAGE_FS_XFS;
	else
		return -EINVAL;
	return 0;
}

const char *storage_access_name(enum storage_access access)
{
	return access == STORAGE_ACCESS_RW ? "rw" : "ro";
}

/* ---- the data ---- */

void storage_conf_init(struct storage_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->target_port = STORAGE_DEFAULT_PORT;
}

void storage_conf_release(struct storage_conf *conf)
{
	free(conf->target_address);
	free(conf->nqn);
	free(conf->mount);
	free(conf->uuid);
	free(conf->interface);
	free(conf->unit);
	free(conf->node);
	for (size_t i = 0; i < conf->nr_nodes; i++)
		free(conf->nodes[i].name);
	free(conf->nodes);
	storage_conf_init(conf);
}

const struct storage_node *storage_conf_this_node(const struct storage_conf *conf)
{
	if (!conf->node)
		return NULL;
	for (size_t i = 0; i < conf->nr_nodes; i++)
		if (streq(conf->nodes[i].name, conf->node))
			return &conf->nodes[i];
	return NULL;
}

json_t *storage_conf_to_json(const struct storage_conf *conf)
{
	json_t *j = json_object(), *target = json_object(), *nodes = json_array();

	jset(j, "schema_version", jint(STORAGE_CONF_SCHEMA_VERSION));
	jset(target, "address", jstr(conf->target_address));
	jset(target, "port", jint(conf->target_port));
	jset(j, "target", target);
	jset(j, "nqn", jstr(conf->nqn));
	jset(j, "mount", jstr(conf->mount));
	jset(j, "fs", jstr(storage_fs_name(conf->fs)));
	jset(j, "uuid", jstr(conf->uuid));
	jset(j, "interface", jstr(conf->interface));
	jset(j, "unit", jstr(conf->unit));
	jset(j, "node", jstr(conf->node));
	for (size_t i = 0; i < conf->nr_nodes; i++) {
		json_t *n = json_object();
		jset(n, "name", jstr(conf->nodes[i].name));
		jset(n, "access", jstr(storage_access_name(conf->nodes[i].access)));
		jpush(nodes, n);
	}
	jset(j, "nodes", nodes);
	return j;
}

/* ---- reading ---- */

/* "NAME: FIELD: WHAT ('VALUE')", the value escaped: it comes from the file. */
static int field_error(struct strbuf *err, const char *name, const char *field, const char *what,
		       const char *value)
{
	strbuf_addstr_printable(err, name);
	strbuf_addf(err, ": %s: %s", field, what);
	if (value) {
		strbuf_addstr(err, " ('");
		strbuf_addstr_printable(err, value);
		strbuf_addstr(err, "')");
	}
	return -EINVAL;
}

/* A string member that must be there; the type error is prefixed with name. */
static int get_required_str(const json_t *obj, const char *name, const char *ctx, const char *key,
			    char **ret, struct strbuf *err)
{
	struct strbuf msg = STRBUF_INIT;
	int r = jget_str(obj, ctx, key, ret, &msg);

	if (r < 0) {
		strbuf_addstr_printable(err, name);
		strbuf_addf(err, ": %s", msg.buf);
	} else if (!*ret) {
		struct strbuf field = STRBUF_INIT;
		strbuf_addf(&field, "%s%s%s", ctx, *ctx ? "." : "", key);
		r = field_error(err, name, field.buf, "missing", NULL);
		strbuf_release(&field);
	}
	strbuf_release(&msg);
	return r;
}

static int parse_target(struct storage_conf *conf, const json_t *doc, const char *name,
			struct strbuf *err)
{
	const json_t *target = json_object_get(doc, "target"), *port;
	int r;

	if (!json_is_object(target))
		return field_error(err, name, "target", "expected an object", NULL);
	if ((r = get_required_str(target, name, "target", "address", &conf->target_address, err)) <
	    0)
		return r;
	if (!cluster_address_valid(conf->target_address))
		return field_error(err, name, "target.address", "not an address or host name",
				   conf->target_address);
	port = json_object_get(target, "port");
	if (!port || json_is_null(port))
		return 0; /* NVMe/TCP's own port */
	if (!json_is_integer(port) || json_integer_value(port) < 1 ||
	    json_integer_value(port) > 65535)
		return field_error(err, name, "target.port", "expected a port number (1-65535)",
				   NULL);
	conf->target_port = (unsigned)json_integer_value(port);
	return 0;
}

static int parse_names(struct storage_conf *conf, const json_t *doc, const char *name,
		       struct strbuf *err)
{
	struct strbuf unit = STRBUF_INIT, msg = STRBUF_INIT;
	char *fs = NULL;
	int r;

	if ((r = get_required_str(doc, name, "", "nqn", &conf->nqn, err)) < 0)
		goto out;
	if (!nvme_nqn_valid(conf->nqn)) {
		r = field_error(err, name, "nqn", "not an NQN (" NVME_NQN_RULE ")", conf->nqn);
		goto out;
	}
	if ((r = get_required_str(doc, name, "", "mount", &conf->mount, err)) < 0)
		goto out;
	if (!storage_mount_valid(conf->mount)) {
		r = field_error(err, name, "mount", "not an absolute, normalized path",
				conf->mount);
		goto out;
	}
	if ((r = get_required_str(doc, name, "", "fs", &fs, err)) < 0)
		goto out;
	if (storage_fs_parse(fs, &conf->fs) < 0) {
		r = field_error(err, name, "fs", "expected \"ext4\" or \"xfs\"", fs);
		goto out;
	}
	if ((r = get_required_str(doc, name, "", "uuid", &conf->uuid, err)) < 0)
		goto out;
	if (!storage_uuid_valid(conf->uuid)) {
		r = field_error(err, name, "uuid", "not a filesystem UUID", conf->uuid);
		goto out;
	}
	if ((r = jget_str(doc, "", "interface", &conf->interface, &msg)) < 0) {
		strbuf_addstr_printable(err, name);
		strbuf_addf(err, ": %s", msg.buf);
		goto out;
	}
	if (conf->interface && !storage_iface_valid(conf->interface)) {
		r = field_error(err, name, "interface", "not an interface name", conf->interface);
		goto out;
	}
	if ((r = get_required_str(doc, name, "", "unit", &conf->unit, err)) < 0)
		goto out;
	storage_unit_name(conf->mount, &unit);
	if (!streq(conf->unit, unit.buf)) {
		r = field_error(err, name, "unit", "not the unit of the mount point", conf->unit);
		goto out;
	}
out:
	free(fs);
	strbuf_release(&unit);
	strbuf_release(&msg);
	return r;
}

static int parse_node(struct storage_conf *conf, const json_t *obj, const char *name, size_t index,
		      struct strbuf *err)
{
	struct storage_node node = { 0 };
	struct strbuf ctx = STRBUF_INIT, field = STRBUF_INIT;
	char *access = NULL;
	int r;

	strbuf_addf(&ctx, "nodes[%zu]", index);
	if (!json_is_object(obj)) {
		r = field_error(err, name, ctx.buf, "expected an object", NULL);
		goto out;
	}
	if ((r = get_required_str(obj, name, ctx.buf, "name", &node.name, err)) < 0 ||
	    (r = get_required_str(obj, name, ctx.buf, "access", &access, err)) < 0)
		goto out;
	strbuf_addf(&field, "%s.name", ctx.buf);
	if (!cluster_node_name_valid(node.name)) {
		r = field_error(err, name, field.buf, "not a host name", node.name);
		goto out;
	}
	for (size_t i = 0; i < conf->nr_nodes; i++)
		if (streq(conf->nodes[i].name, node.name)) {
			r = field_error(err, name, field.buf, "listed twice", node.name);
			goto out;
		}
	strbuf_reset(&field);
	strbuf_addf(&field, "%s.access", ctx.buf);
	if (streq(access, "rw")) {
		node.access = STORAGE_ACCESS_RW;
	} else if (streq(access, "ro")) {
		node.access = STORAGE_ACCESS_RO;
	} else {
		r = field_error(err, name, field.buf, "expected \"ro\" or \"rw\"", access);
		goto out;
	}
	*ARRAY_PUSH(conf->nodes, conf->nr_nodes) = node;
	node.name = NULL;
out:
	free(node.name);
	free(access);
	strbuf_release(&ctx);
	strbuf_release(&field);
	return r;
}

static int parse_nodes(struct storage_conf *conf, const json_t *doc, const char *name,
		       struct strbuf *err)
{
	const json_t *nodes = json_object_get(doc, "nodes");
	const char *writer = NULL;
	int r;

	if (!json_is_array(nodes) || !json_array_size(nodes))
		return field_error(err, name, "nodes", "expected an array of at least one node",
				   NULL);
	for (size_t i = 0; i < json_array_size(nodes); i++) {
		if ((r = parse_node(conf, json_array_get(nodes, i), name, i, err)) < 0)
			return r;
		if (conf->nodes[i].access != STORAGE_ACCESS_RW)
			continue;
		/* ext4 and xfs are not cluster filesystems: two writers corrupt them. */
		if (writer) {
			strbuf_addstr_printable(err, name);
			strbuf_addstr(err, ": nodes: two read-write nodes ('");
			strbuf_addstr_printable(err, writer);
			strbuf_addstr(err, "' and '");
			strbuf_addstr_printable(err, conf->nodes[i].name);
			strbuf_addstr(err, "'); ext4 and xfs allow one writer");
			return -EINVAL;
		}
		writer = conf->nodes[i].name;
	}
	if ((r = get_required_str(doc, name, "", "node", &conf->node, err)) < 0)
		return r;
	if (!storage_conf_this_node(conf))
		return field_error(err, name, "node", "not one of nodes[]", conf->node);
	return 0;
}

int storage_conf_parse(struct storage_conf *conf, const char *text, size_t len, const char *name,
		       struct strbuf *err)
{
	json_t *doc = NULL;
	int64_t version;
	struct strbuf msg = STRBUF_INIT;
	int r;

	storage_conf_init(conf);
	if ((r = json_load_buffer(text, len, name, &doc, err)) < 0)
		goto out;
	if ((r = jget_int(doc, "", "schema_version", &version, &msg)) < 0) {
		strbuf_addstr_printable(err, name);
		strbuf_addf(err, ": %s", msg.buf);
		goto out;
	}
	if (version < 0) {
		r = field_error(err, name, "schema_version", "missing", NULL);
		goto out;
	}
	if (version != STORAGE_CONF_SCHEMA_VERSION) {
		strbuf_addstr_printable(err, name);
		strbuf_addf(err, ": schema_version %" PRId64 " (this sparkctl reads %d)", version,
			    STORAGE_CONF_SCHEMA_VERSION);
		r = -EINVAL;
		goto out;
	}
	if ((r = parse_target(conf, doc, name, err)) < 0 ||
	    (r = parse_names(conf, doc, name, err)) < 0 ||
	    (r = parse_nodes(conf, doc, name, err)) < 0)
		goto out;
out:
	if (r < 0)
		storage_conf_release(conf);
	json_decref(doc);
	strbuf_release(&msg);
	return r;
}

int storage_conf_file_name(const char *mount, struct strbuf *out)
{
	struct strbuf unit = STRBUF_INIT;
	const char *prefix = "sparkctl-nvme-", *suffix = ".service";
	int r;

	if ((r = storage_unit_name(mount, &unit)) < 0)
		goto out;
	strbuf_add(out, unit.buf + strlen(prefix), unit.len - strlen(prefix) - strlen(suffix));
	strbuf_addstr(out, STORAGE_CONF_SUFFIX);
out:
	strbuf_release(&unit);
	return r;
}

/* A plan's file: NAME.json, not hidden (atomic_replace's temporaries are) nor a backup. */
static bool is_conf_file(const char *name)
{
	size_t len = strlen(name), n = strlen(STORAGE_CONF_SUFFIX);

	return name[0] != '.' && len > n && streq(name + len - n, STORAGE_CONF_SUFFIX);
}

int storage_conf_list(const struct rootfs *root, struct strvec *names, struct strbuf *err)
{
	struct strvec all = STRVEC_INIT;
	int r;

	r = rootfs_list(root, STORAGE_CONF_DIR, &all);
	if (r == -ENOENT) {
		r = 0;
		goto out;
	}
	if (r < 0) {
		strbuf_addf(err, "cannot list /%s: %s", STORAGE_CONF_DIR, strerror(-r));
		goto out;
	}
	r = 0;
	for (size_t i = 0; i < all.nr; i++)
		if (is_conf_file(all.v[i])) {
			strvec_push(names, all.v[i]);
			r++;
		}
out:
	strvec_clear(&all);
	return r;
}

int storage_conf_load_file(const struct rootfs *root, const char *name, struct storage_conf *conf,
			   struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT, rel = STRBUF_INIT, shown = STRBUF_INIT;
	int r;

	storage_conf_init(conf);
	strbuf_addf(&rel, "%s/%s", STORAGE_CONF_DIR, name);
	strbuf_addf(&shown, "/%s", rel.buf);
	r = rootfs_read_file(root, rel.buf, STORAGE_CONF_SIZE_MAX, &text);
	if (r < 0) {
		strbuf_addstr(err, "cannot read ");
		strbuf_addstr_printable(err, shown.buf);
		strbuf_addf(err, ": %s", strerror(-r));
		goto out;
	}
	r = storage_conf_parse(conf, text.buf, text.len, shown.buf, err);
out:
	strbuf_release(&text);
	strbuf_release(&rel);
	strbuf_release(&shown);
	return r;
}

void storage_conf_release_all(struct storage_conf *confs, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		storage_conf_release(&confs[i]);
	free(confs);
}

static int by_mount(const void *a, const void *b)
{
	const struct storage_conf *x = a, *y = b;

	return strcmp(x->mount ? x->mount : "", y->mount ? y->mount : "");
}

int storage_conf_load_all(const struct rootfs *root, struct storage_conf **confs, size_t *nr,
			  struct strbuf *err)
{
	struct strvec names = STRVEC_INIT;
	struct storage_conf *all = NULL;
	size_t n = 0;
	int r;

	*confs = NULL;
	*nr = 0;
	if ((r = storage_conf_list(root, &names, err)) < 0 || names.nr == 0)
		goto out; /* none planned: *confs stays NULL */
	all = xcalloc(names.nr, sizeof(*all));
	for (n = 0; n < names.nr; n++)
		if ((r = storage_conf_load_file(root, names.v[n], &all[n], err)) < 0)
			goto out;
	qsort(all, n, sizeof(*all), by_mount);
	*confs = all;
	*nr = n;
	all = NULL;
	n = 0;
	r = 0;
out:
	storage_conf_release_all(all, n);
	strvec_clear(&names);
	return r;
}

int storage_conf_load_mount(const struct rootfs *root, const char *mount, struct storage_conf *conf,
			    struct strbuf *err)
{
	struct storage_conf *confs;
	size_t nr;
	int r;

	if (!mount)
		return storage_conf_load(root, conf, err);
	storage_conf_init(conf);
	if ((r = storage_conf_load_all(root, &confs, &nr, err)) < 0)
		return r;
	r = -ENOENT;
	for (size_t i = 0; i < nr; i++)
		if (confs[i].mount && streq(confs[i].mount, mount)) {
			*conf = confs[i];
			storage_conf_init(&confs[i]);
			r = 0;
			break;
		}
	if (r == -ENOENT)
		strbuf_addf(err, "no volume is planned at %s (%zu planned here)", mount, nr);
	storage_conf_release_all(confs, nr);
	return r;
}

int storage_conf_load(const struct rootfs *root, struct storage_conf *conf, struct strbuf *err)
{
	struct storage_conf *confs;
	size_t nr;
	int r;

	storage_conf_init(conf);
	if ((r = storage_conf_load_all(root, &confs, &nr, err)) < 0)
		return r;
	if (nr == 1) {
		*conf = confs[0];
		storage_conf_init(&confs[0]);
		r = 0;
	} else if (nr == 0) {
		r = -ENOENT;
	} else {
		strbuf_addf(err, "%zu volumes are planned (", nr);
		for (size_t i = 0; i < nr; i++) {
			strbuf_addstr(err, i ? ", " : "");
			strbuf_addstr_printable(err, confs[i].mount ? confs[i].mount : "?");
		}
		strbuf_addstr(err, "): choose one with --mount");
		r = -E2BIG;
	}
	storage_conf_release_all(confs, nr);
	return r;
}
