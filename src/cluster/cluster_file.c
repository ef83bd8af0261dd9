/* cluster_file.c - reading, checking and writing the cluster file. */
#include "sparkctl.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <strings.h>
#include <sys/stat.h>

#include "cluster/cluster_file.h"
#include "lib/atomic_file.h"
#include "lib/json.h"
#include "inventory/derive.h"
#include "lib/xalloc.h"

/* The largest cluster file read (a bound on user-controlled input). */
#define CLUSTER_FILE_SIZE_MAX ((size_t)4 << 20)
/* The longest DNS name, as host lists bound names. */
#define NAME_LEN_MAX	      253
#define SYSTEM_PATH	      "/etc/sparkctl/cluster.json"

/* ---- validators ---- */

/* A DNS name or an address: letters, digits, '.', '-', '_' and ':' (IPv6), not '-' first. */
bool cluster_node_name_valid(const char *name)
{
	size_t len = strlen(name);

	if (!len || len > NAME_LEN_MAX || name[0] == '-')
		return false;
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr(".-_:", *p))
			return false;
	return true;
}

/* A POSIX user name (portable set), not '-' first. */
bool cluster_user_valid(const char *user)
{
	size_t len = strlen(user);

	if (!len || len > 32 || user[0] == '-')
		return false;
	for (const char *p = user; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr(".-_", *p))
			return false;
	return true;
}

bool cluster_address_valid(const char *address)
{
	unsigned char buf[sizeof(struct in6_addr)];

	return inet_pton(AF_INET, address, buf) == 1 || inet_pton(AF_INET6, address, buf) == 1 ||
	       cluster_node_name_valid(address);
}

bool cluster_node_id_valid(const char *id)
{
	if (strlen(id) != 32)
		return false;
	for (const char *p = id; *p; p++)
		if (!isdigit((unsigned char)*p) && !(*p >= 'a' && *p <= 'f'))
			return false;
	return true;
}

bool cluster_plan_valid(const char *plan)
{
	return streq(plan, "pair") || streq(plan, "switch") || streq(plan, "ring");
}

/* ---- where ---- */

const char *cluster_file_origin_text(enum cluster_file_origin origin)
{
	switch (origin) {
	case CLUSTER_FILE_FROM_OPTION:
		return "--cluster";
	case CLUSTER_FILE_FROM_ENV:
		return "$SPARKCTL_CLUSTER";
	case CLUSTER_FILE_FROM_USER:
		return "the user's cluster file";
	case CLUSTER_FILE_FROM_SYSTEM:
		return "the system's cluster file";
	case CLUSTER_FILE_FROM_NOWHERE:
		break;
	}
	return "no cluster file";
}

static int user_path(struct strbuf *path)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");

	/* The XDG base directory spec: a relative value is ignored. */
	if (xdg && xdg[0] == '/')
		strbuf_addf(path, "%s/sparkctl/cluster.json", xdg);
	else if (home && home[0] == '/')
		strbuf_addf(path, "%s/.config/sparkctl/cluster.json", home);
	else
		return -ENOENT;
	return 0;
}

static bool file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

int cluster_file_locate(const char *option, struct cluster_file_location *loc)
{
	const char *env = getenv("SPARKCTL_CLUSTER");

	strbuf_init(&loc->path, 0);
	loc->exists = false;
	if (option || (env && *env)) {
		const char *given = option ? option : env;
		loc->origin = option ? CLUSTER_FILE_FROM_OPTION : CLUSTER_FILE_FROM_ENV;
		if (!streq(given, CLUSTER_FILE_NONE)) {
			strbuf_addstr(&loc->path, given);
			loc->exists = file_exists(given);
		}
		return 0;
	}
	if (user_path(&loc->path) == 0 && file_exists(loc->path.buf)) {
		loc->origin = CLUSTER_FILE_FROM_USER;
		loc->exists = true;
		return 0;
	}
	if (file_exists(SYSTEM_PATH)) {
		strbuf_reset(&loc->path);
		strbuf_addstr(&loc->path, SYSTEM_PATH);
		loc->origin = CLUSTER_FILE_FROM_SYSTEM;
		loc->exists = true;
		return 0;
	}
	loc->origin = CLUSTER_FILE_FROM_NOWHERE;
	return loc->path.len ? 0 : -ENOENT;
}

void cluster_file_location_release(struct cluster_file_location *loc)
{
	strbuf_release(&loc->path);
}

/* ---- the data ---- */

void cluster_file_init(struct cluster_file *cf)
{
	memset(cf, 0, sizeof(*cf));
}

static void node_release(struct cluster_node *n)
{
	free(n->name);
	free(n->id);
	free(n->user);
	strvec_clear(&n->mgmt_addresses);
	strvec_clear(&n->fabric_addresses);
}

void cluster_file_release(struct cluster_file *cf)
{
	for (size_t i = 0; i < cf->nr; i++)
		node_release(&cf->nodes[i]);
	free(cf->nodes);
	free(cf->plan);
	cluster_file_init(cf);
}

struct cluster_node *cluster_file_find(const struct cluster_file *cf, const char *name)
{
	for (size_t i = 0; i < cf->nr; i++)
		if (strcasecmp(cf->nodes[i].name, name) == 0)
			return &cf->nodes[i];
	return NULL;
}

char *cluster_node_host(const struct cluster_node *node)
{
	struct strbuf host = STRBUF_INIT;

	if (node->user)
		strbuf_addf(&host, "%s@", node->user);
	strbuf_addstr(&host, node->name);
	return strbuf_detach(&host, NULL);
}

/* ---- reading ---- */

static int field_error(struct strbuf *err, const char *name, const char *ctx, const char *what,
		       const char *value)
{
	strbuf_addf(err, "%s: %s: %s", name, ctx, what);
	if (value) {
		strbuf_addstr(err, " ('");
		strbuf_addstr_printable(err, value);
		strbuf_addstr(err, "')");
	}
	return -EINVAL;
}

/* An optional string member: NULL when missing or null. */
static int get_opt_str(const json_t *obj, const char *name, const char *ctx, const char *key,
		       char **ret, struct strbuf *err)
{
	const json_t *v = json_object_get(obj, key);

	*ret = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		struct strbuf where = STRBUF_INIT;
		strbuf_addf(&where, "%s.%s", ctx, key);
		field_error(err, name, where.buf, "expected a string or null", NULL);
		strbuf_release(&where);
		return -EINVAL;
	}
	*ret = xstrdup(json_string_value(v));
	return 0;
}

static int get_addresses(const json_t *obj, const char *name, const char *ctx, const char *key,
			 struct strvec *out, struct strbuf *err)
{
	const json_t *arr = json_object_get(obj, key);
	struct strbuf where = STRBUF_INIT;
	int r = 0;

	if (!arr || json_is_null(arr))
		goto out;
	if (!json_is_array(arr)) {
		strbuf_addf(&where, "%s.%s", ctx, key);
		r = field_error(err, name, where.buf, "expected an array of addresses", NULL);
		goto out;
	}
	for (size_t i = 0; i < json_array_size(arr); i++) {
		const json_t *v = json_array_get(arr, i);
		strbuf_reset(&where);
		strbuf_addf(&where, "%s.%s[%zu]", ctx, key, i);
		if (!json_is_string(v)) {
			r = field_error(err, name, where.buf, "expected a string", NULL);
			goto out;
		}
		const char *s = json_string_value(v);
		if (!cluster_address_valid(s)) {
			r = field_error(err, name, where.buf, "not an address or host name", s);
			goto out;
		}
		if (strvec_contains(out, s)) {
			r = field_error(err, name, where.buf, "listed twice", s);
			goto out;
		}
		strvec_push(out, s);
	}
out:
	strbuf_release(&where);
	return r;
}

static int parse_node(struct cluster_file *cf, const json_t *obj, const char *name, size_t index,
		      struct strbuf *err)
{
	struct cluster_node node = { .mgmt_addresses = STRVEC_INIT,
				     .fabric_addresses = STRVEC_INIT };
	struct strbuf ctx = STRBUF_INIT, where = STRBUF_INIT;
	int r;

	strbuf_addf(&ctx, "nodes[%zu]", index);
	if (!json_is_object(obj)) {
		r = field_error(err, name, ctx.buf, "expected an object", NULL);
		goto out;
	}
	strbuf_addf(&where, "%s.name", ctx.buf);
	if ((r = get_opt_str(obj, name, ctx.buf, "name", &node.name, err)) < 0)
		goto out;
	if (!node.name) {
		r = field_error(err, name, where.buf, "missing", NULL);
		goto out;
	}
	if (!cluster_node_name_valid(node.name)) {
		r = field_error(err, name, where.buf, "not a host name", node.name);
		goto out;
	}
	if (cluster_file_find(cf, node.name)) {
		r = field_error(err, name, where.buf, "a second node of that name", node.name);
		goto out;
	}
	if ((r = get_opt_str(obj, name, ctx.buf, "id", &node.id, err)) < 0)
		goto out;
	strbuf_reset(&where);
	strbuf_addf(&where, "%s.id", ctx.buf);
	if (node.id && !cluster_node_id_valid(node.id)) {
		r = field_error(err, name, where.buf, "not 32 lowercase hex digits", node.id);
		goto out;
	}
	if ((r = get_opt_str(obj, name, ctx.buf, "user", &node.user, err)) < 0)
		goto out;
	strbuf_reset(&where);
	strbuf_addf(&where, "%s.user", ctx.buf);
	if (node.user && !cluster_user_valid(node.user)) {
		r = field_error(err, name, where.buf, "not a user name", node.user);
		goto out;
	}
	if ((r = get_addresses(obj, name, ctx.buf, "mgmt_addresses", &node.mgmt_addresses, err)) <
		    0 ||
	    (r = get_addresses(obj, name, ctx.buf, "fabric_addresses", &node.fabric_addresses,
			       err)) < 0)
		goto out;
	*ARRAY_PUSH(cf->nodes, cf->nr) = node;
	memset(&node, 0, sizeof(node));
out:
	node_release(&node);
	strbuf_release(&ctx);
	strbuf_release(&where);
	return r;
}

int cluster_file_parse(struct cluster_file *cf, const char *text, size_t len, const char *name,
		       struct strbuf *err)
{
	json_t *doc = NULL;
	const json_t *v, *nodes;
	int r;

	cluster_file_init(cf);
	if ((r = json_load_buffer(text, len, name, &doc, err)) < 0)
		goto out;
	v = json_object_get(doc, "schema_version");
	if (!json_is_integer(v)) {
		r = field_error(err, name, "schema_version", "missing or not an integer", NULL);
		goto out;
	}
	if (json_integer_value(v) != CLUSTER_FILE_SCHEMA_VERSION) {
		strbuf_addf(err, "%s: schema_version: %lld is not %d (a newer sparkctl wrote it?)",
			    name, (long long)json_integer_value(v), CLUSTER_FILE_SCHEMA_VERSION);
		r = -EINVAL;
		goto out;
	}
	if ((r = get_opt_str(doc, name, "", "plan", &cf->plan, err)) < 0)
		goto out;
	if (cf->plan && !cluster_plan_valid(cf->plan)) {
		r = field_error(err, name, "plan", "not pair, switch, ring or null", cf->plan);
		goto out;
	}
	nodes = json_object_get(doc, "nodes");
	if (!json_is_array(nodes)) {
		r = field_error(err, name, "nodes", "missing or not an array", NULL);
		goto out;
	}
	if (json_array_size(nodes) > CLUSTER_FILE_NODES_MAX) {
		strbuf_addf(err, "%s: nodes: more than %d", name, CLUSTER_FILE_NODES_MAX);
		r = -EINVAL;
		goto out;
	}
	for (size_t i = 0; i < json_array_size(nodes); i++)
		if ((r = parse_node(cf, json_array_get(nodes, i), name, i, err)) < 0)
			goto out;
out:
	if (r < 0)
		cluster_file_release(cf);
	json_decref(doc);
	return r < 0 ? r : 0;
}

int cluster_file_load(struct cluster_file *cf, const char *path, struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT;
	int r;

	cluster_file_init(cf);
	if ((r = strbuf_read_path(&text, path, CLUSTER_FILE_SIZE_MAX)) < 0) {
		strbuf_addstr(err, "cannot read '");
		strbuf_addstr_printable(err, path);
		strbuf_addf(err, "': %s", strerror(-r));
		goto out;
	}
	r = cluster_file_parse(cf, text.buf, text.len, path, err);
out:
	strbuf_release(&text);
	return r;
}

/* ---- writing ---- */

static json_t *addresses_json(const struct strvec *sv)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < sv->nr; i++)
		jpush(arr, jstr(sv->v[i]));
	return arr;
}

/* The file's JSON document. */
static json_t *cluster_file_json(const struct cluster_file *cf)
{
	json_t *doc = json_object(), *nodes = json_array();

	jset(doc, "schema_version", jint(CLUSTER_FILE_SCHEMA_VERSION));
	jset(doc, "plan", cf->plan ? jstr(cf->plan) : json_null());
	for (size_t i = 0; i < cf->nr; i++) {
		const struct cluster_node *n = &cf->nodes[i];
		json_t *o = json_object();
		jset(o, "name", jstr(n->name));
		jset(o, "id", n->id ? jstr(n->id) : json_null());
		jset(o, "mgmt_addresses", addresses_json(&n->mgmt_addresses));
		jset(o, "fabric_addresses", addresses_json(&n->fabric_addresses));
		jset(o, "user", n->user ? jstr(n->user) : json_null());
		jpush(nodes, o);
	}
	jset(doc, "nodes", nodes);
	return doc;
}

void cluster_file_format(const struct cluster_file *cf, struct strbuf *out)
{
	json_t *doc = cluster_file_json(cf);

	json_to_strbuf(doc, out);
	if (!out->len || out->buf[out->len - 1] != '\n')
		strbuf_addch(out, '\n');
	json_decref(doc);
}

/* mkdir -p of path's parent directories, mode 0755. */
static int make_parents(const char *path, struct strbuf *err)
{
	char *dir = xstrdup(path);
	int r = 0;

	for (char *p = dir + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			r = -errno;
			strbuf_addstr(err, "cannot create '");
			strbuf_addstr_printable(err, dir);
			strbuf_addf(err, "': %s", strerror(errno));
			break;
		}
		*p = '/';
	}
	free(dir);
	return r;
}

int cluster_file_save(const struct cluster_file *cf, const char *path, struct strbuf *err)
{
	json_t *doc;
	int r = make_parents(path, err);

	if (r < 0)
		return r;
	/* Atomically, 0644, as every JSON file sparkctl writes. */
	doc = cluster_file_json(cf);
	r = json_save(doc, path, err);
	json_decref(doc);
	return r;
}

/* ---- editing ---- */

static int check_addresses(const struct strvec *sv, const char *what, struct strbuf *err)
{
	for (size_t i = 0; sv && i < sv->nr; i++)
		if (!cluster_address_valid(sv->v[i])) {
			strbuf_addf(err, "%s: not an address or host name: '", what);
			strbuf_addstr_printable(err, sv->v[i]);
			strbuf_addch(err, '\'');
			return -EINVAL;
		}
	return 0;
}

int cluster_file_put(struct cluster_file *cf, const char *name, const char *id,
		     const struct strvec *mgmt, const struct strvec *fabric, const char *user,
		     struct strbuf *err)
{
	struct cluster_node *n;

	if (!cluster_node_name_valid(name)) {
		strbuf_addstr(err, "not a host name: '");
		strbuf_addstr_printable(err, name);
		strbuf_addch(err, '\'');
		return -EINVAL;
	}
	if (id && !cluster_node_id_valid(id)) {
		strbuf_addstr(err, "a node id is 32 lowercase hex digits");
		return -EINVAL;
	}
	if (user && !cluster_user_valid(user)) {
		strbuf_addstr(err, "not a user name: '");
		strbuf_addstr_printable(err, user);
		strbuf_addch(err, '\'');
		return -EINVAL;
	}
	if (check_addresses(mgmt, "--mgmt", err) < 0 ||
	    check_addresses(fabric, "--fabric", err) < 0)
		return -EINVAL;
	n = cluster_file_find(cf, name);
	if (n) {
		node_release(n);
	} else {
		if (cf->nr >= CLUSTER_FILE_NODES_MAX) {
			strbuf_addf(err, "more than %d nodes", CLUSTER_FILE_NODES_MAX);
			return -EINVAL;
		}
		n = ARRAY_PUSH(cf->nodes, cf->nr);
	}
	memset(n, 0, sizeof(*n));
	n->name = xstrdup(name);
	n->id = id ? xstrdup(id) : NULL;
	n->user = user ? xstrdup(user) : NULL;
	strvec_init(&n->mgmt_addresses);
	strvec_init(&n->fabric_addresses);
	for (size_t i = 0; mgmt && i < mgmt->nr; i++)
		if (!strvec_contains(&n->mgmt_addresses, mgmt->v[i]))
			strvec_push(&n->mgmt_addresses, mgmt->v[i]);
	for (size_t i = 0; fabric && i < fabric->nr; i++)
		if (!strvec_contains(&n->fabric_addresses, fabric->v[i]))
			strvec_push(&n->fabric_addresses, fabric->v[i]);
	return 0;
}

int cluster_file_remove(struct cluster_file *cf, const char *name)
{
	struct cluster_node *n = cluster_file_find(cf, name);

	if (!n)
		return -ENOENT;
	node_release(n);
	size_t i = (size_t)(n - cf->nodes);
	memmove(n, n + 1, (cf->nr - i - 1) * sizeof(*n));
	cf->nr--;
	return 0;
}

void inventory_fabric_ipv4(const struct inventory *inv, struct strvec *out)
{
	for (size_t d = 0; d < inv->nr_rdma; d++)
		for (size_t p = 0; p < inv->rdma[d].nr_ports; p++) {
			const struct inv_rdma_dev *dev = &inv->rdma[d];
			const struct inv_port *port = &dev->ports[p];
			const struct inv_netdev *nd;
			if (!port_is_fabric(inv, dev, port) ||
			    !(nd = rdma_port_netdev(inv, dev, port)))
				continue;
			for (size_t a = 0; a < nd->nr_addrs; a++)
				if (nd->addrs[a].family == AF_INET &&
				    !strvec_contains(out, nd->addrs[a].address))
					strvec_push(out, nd->addrs[a].address);
		}
}
