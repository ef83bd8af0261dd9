#include "sparkctl.h"

#include <ctype.h>

#include "discover/node_id.h"
#include "lib/host_text.h"
#include "lib/xalloc.h"
#include "probe/avahi.h"
#include "probe/cpu_topology.h"
#include "probe/hostname.h"
#include "probe/meminfo.h"
#include "probe/probe.h"
#include "probe/probe_internal.h"

static void probe_os_release(struct probe_ctx *ctx)
{
	struct strbuf text = STRBUF_INIT;
	const char *path = "etc/os-release";
	int r = rootfs_read_file(ctx->root, path, ROOTFS_VALUE_MAX, &text);

	if (r == -ENOENT) {
		path = "usr/lib/os-release";
		r = rootfs_read_file(ctx->root, path, ROOTFS_VALUE_MAX, &text);
	}
	if (r < 0) {
		probe_read_failed(ctx, path, r);
	} else {
		struct inv_system *s = &ctx->inv->sys;
		parse_os_release(text.buf, "ID", &s->os_id);
		parse_os_release(text.buf, "VERSION_ID", &s->os_version_id);
		parse_os_release(text.buf, "PRETTY_NAME", &s->os_pretty_name);
	}
	strbuf_release(&text);
}

static void probe_nvidia_driver(struct probe_ctx *ctx)
{
	const char *path = "proc/driver/nvidia/version";
	struct strbuf text = STRBUF_INIT;
	int r = rootfs_read_file(ctx->root, path, ROOTFS_VALUE_MAX, &text);

	if (r < 0) {
		probe_read_failed(ctx, path, r);
	} else if (parse_nvidia_version(text.buf, &ctx->inv->sys.nvidia_driver,
					&ctx->inv->sys.nvidia_open_module) < 0) {
		probe_bad_content(ctx, path, text.buf);
	}
	strbuf_release(&text);
}

static void probe_modules(struct probe_ctx *ctx)
{
	const char *path = "proc/modules";
	struct strbuf text = STRBUF_INIT, sysmod = STRBUF_INIT;
	struct inv_system *s = &ctx->inv->sys;
	int r = rootfs_read_file(ctx->root, path, ROOTFS_FILE_MAX, &text);

	if (r < 0)
		probe_read_failed(ctx, path, r);
	for (size_t i = 0; inventory_watched_modules[i]; i++) {
		const char *name = inventory_watched_modules[i];
		struct inv_module *m = ARRAY_PUSH(s->modules, s->nr_modules);
		m->name = name;
		if (r < 0) {
			m->state = MODULE_UNKNOWN;
		} else if (modules_contains(text.buf, name)) {
			m->state = MODULE_LOADED;
		} else {
			/* Built into the kernel: not in /proc/modules, but in /sys/module. */
			strbuf_reset(&sysmod);
			strbuf_addf(&sysmod, "sys/module/%s", name);
			m->state = rootfs_exists(ctx->root, sysmod.buf) ? MODULE_BUILTIN
									: MODULE_ABSENT;
		}
	}
	strbuf_release(&text);
	strbuf_release(&sysmod);
}

/* Record which watched modules a file loads at boot (one name per line, '#' or ';' comments). */
static void scan_load_file(struct probe_ctx *ctx, const char *rel)
{
	struct strbuf text = STRBUF_INIT;
	struct inv_system *s = &ctx->inv->sys;

	if (rootfs_read_file(ctx->root, rel, ROOTFS_VALUE_MAX, &text) < 0) {
		strbuf_release(&text);
		return;
	}
	for (char *line = text.buf; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		line[strcspn(line, "#; \t")] = '\0';
		for (size_t i = 0; i < s->nr_modules && *line; i++) {
			/* modprobe treats '-' and '_' alike in module names. */
			const char *m = s->modules[i].name;
			size_t k = 0;
			while (m[k] && line[k] &&
			       (m[k] == line[k] || (m[k] == '_' && line[k] == '-')))
				k++;
			if (!m[k] && !line[k] && !s->modules[i].load_file)
				s->modules[i].load_file = xasprintf("/%s", rel);
		}
		line = nl ? nl + 1 : NULL;
	}
	strbuf_release(&text);
}

/* The files that load modules at boot: /etc/modules and the modules-load.d directories. */
static void probe_modules_load(struct probe_ctx *ctx)
{
	static const char *const dirs[] = { "etc/modules-load.d", "run/modules-load.d",
					    "usr/lib/modules-load.d" };
	struct strvec names = STRVEC_INIT;
	struct strbuf path = STRBUF_INIT;

	scan_load_file(ctx, "etc/modules");
	for (size_t d = 0; d < ARRAY_SIZE(dirs); d++) {
		if (rootfs_list(ctx->root, dirs[d], &names) < 0)
			continue;
		for (size_t i = 0; i < names.nr; i++) {
			size_t len = strlen(names.v[i]);
			if (len < 6 || strcmp(names.v[i] + len - 5, ".conf") != 0)
				continue;
			strbuf_reset(&path);
			strbuf_addf(&path, "%s/%s", dirs[d], names.v[i]);
			scan_load_file(ctx, path.buf);
		}
	}
	strvec_clear(&names);
	strbuf_release(&path);
}

static void probe_meminfo(struct probe_ctx *ctx)
{
	struct inv_system *s = &ctx->inv->sys;
	struct meminfo m;

	if (meminfo_read(&ctx->rd, &m) <= 0)
		return;
	s->mem_total = m.mem_total;
	s->mem_available = m.mem_available;
	/* CmaTotal is absent when the kernel has no CMA: that is 0, not unknown. */
	s->cma_total = m.cma_total < 0 ? 0 : m.cma_total;
}

static void probe_cpu(struct probe_ctx *ctx)
{
	struct cpu_topology t;

	if (cpu_read_topology(&ctx->rd, &t) <= 0)
		return;
	ctx->inv->sys.cpu = (struct inv_cpu){ .cpus = t.cpus,
					      .sockets = t.sockets,
					      .cores_per_socket = t.cores_per_socket,
					      .threads_per_core = t.threads_per_core };
}

/* /etc/machine-id: 32 hex digits (systemd writes them lowercase, others may not). */
static bool machine_id_valid(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!isxdigit((unsigned char)s[n]))
			return false;
	return n == 32;
}

/* An id file whose line valid() accepts, else NULL; a malformed one is a problem of the inventory.
 */
static char *probe_read_id(struct probe_ctx *ctx, const char *path, bool (*valid)(const char *))
{
	struct strbuf id = STRBUF_INIT;

	if (reader_value(&ctx->rd, path, &id) <= 0) {
		strbuf_release(&id);
		return NULL;
	}
	if (!valid(id.buf)) {
		reader_bad_content(&ctx->rd, path, id.buf);
		strbuf_release(&id);
		return NULL;
	}
	return strbuf_detach(&id, NULL);
}

void probe_system(struct probe_ctx *ctx)
{
	struct inv_system *s = &ctx->inv->sys;
	struct strbuf name = STRBUF_INIT;

	if (hostname_read(&ctx->rd, &name) > 0)
		s->hostname = strbuf_detach(&name, NULL);
	strbuf_release(&name);
	s->kernel = probe_read_str(ctx, "proc/sys/kernel/osrelease");
	s->node_id = probe_read_id(ctx, NODE_ID_DIR "/" NODE_ID_FILE, node_id_valid);
	s->machine_id = probe_read_id(ctx, "etc/machine-id", machine_id_valid);
	probe_os_release(ctx);
	probe_nvidia_driver(ctx);
	probe_modules(ctx);
	probe_modules_load(ctx);
	s->rmem_max = probe_read_int(ctx, "proc/sys/net/core/rmem_max");
	s->wmem_max = probe_read_int(ctx, "proc/sys/net/core/wmem_max");
	probe_meminfo(ctx);
	probe_cpu(ctx);
	if (avahi_host_name_read(&ctx->rd, &name) > 0)
		s->avahi_host_name = strbuf_detach(&name, NULL);
	strbuf_release(&name);
}

static void read_conf_file(struct probe_ctx *ctx, const char *file)
{
	struct strbuf text = STRBUF_INIT;
	struct inv_system *s = &ctx->inv->sys;
	int r = rootfs_read_file(ctx->root, file, ROOTFS_FILE_MAX, &text);

	if (r < 0) {
		probe_read_failed(ctx, file, r);
		strbuf_release(&text);
		return;
	}
	for (char *line = text.buf; line && *line;) {
		char *nl = strchr(line, '\n');
		char *key, *value;
		if (nl)
			*nl = '\0';
		if (parse_nccl_conf_line(line, &key, &value) == 0) {
			struct inv_setting *set = ARRAY_PUSH(s->nccl_conf, s->nr_nccl_conf);
			set->key = key;
			set->value = value;
			set->file = xasprintf("/%s", file[0] == '/' ? file + 1 : file);
		}
		line = nl ? nl + 1 : NULL;
	}
	strbuf_release(&text);
}

#define NM_CONNECTIONS "etc/NetworkManager/system-connections"

/* One keyfile: the keys of [connection] and [ipv4] that say what it connects, and how. */
static void parse_nm_keyfile(char *text, struct inv_nm_profile *p)
{
	const char *section = "";

	p->autoconnect = 1;
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		char *eq = strchr(line, '=');
		if (line[0] == '[') {
			char *end = strchr(line, ']');
			if (end)
				*end = '\0';
			section = line + 1;
		} else if (eq && line[0] != '#') {
			*eq = '\0';
			const char *key = line, *value = eq + 1;
			if (streq(section, "connection") && streq(key, "id"))
				p->id = xstrdup(value);
			else if (streq(section, "connection") && streq(key, "interface-name"))
				p->interface_name = xstrdup(value);
			else if (streq(section, "connection") && streq(key, "autoconnect"))
				p->autoconnect = streq(value, "false") || streq(value, "0") ? 0 : 1;
			else if (streq(section, "ipv4") && streq(key, "method"))
				p->ipv4_method = xstrdup(value);
		}
		line = nl ? nl + 1 : NULL;
	}
}

/* The keys parse_nm_keyfile() reads: all a capture keeps of a keyfile. */
static bool nm_key_read(const char *section, const char *key, size_t len)
{
	static const char *const connection_keys[] = { "id", "interface-name", "autoconnect" };

	if (!strcmp(section, "ipv4"))
		return len == 6 && !strncmp(key, "method", 6);
	if (strcmp(section, "connection") != 0)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(connection_keys); i++)
		if (strlen(connection_keys[i]) == len && !strncmp(key, connection_keys[i], len))
			return true;
	return false;
}

bool nm_keyfile_path(const char *rel)
{
	return !strncmp(rel, NM_CONNECTIONS "/", strlen(NM_CONNECTIONS "/"));
}

void nm_keyfile_redact(const char *text, size_t len, struct strbuf *out)
{
	char section[32] = "";

	for (size_t at = 0; at < len;) {
		const char *line = text + at;
		size_t n = 0;
		while (at + n < len && line[n] != '\n')
			n++;
		at += n + 1;
		if (n && line[0] == '[') {
			size_t s = 1;
			while (s < n && line[s] != ']')
				s++;
			snprintf(section, sizeof(section), "%.*s", (int)(s - 1 < 31 ? s - 1 : 31),
				 line + 1);
			strbuf_add(out, line, n);
			strbuf_addch(out, '\n');
			continue;
		}
		const char *eq = memchr(line, '=', n);
		if (eq && nm_key_read(section, line, (size_t)(eq - line))) {
			strbuf_add(out, line, n);
			strbuf_addch(out, '\n');
		}
	}
}

/* Read as keyfiles, not through nmcli: the same under --root and in a capture. */
void probe_nm_profiles(struct probe_ctx *ctx)
{
	struct inv_system *s = &ctx->inv->sys;
	struct strvec names = STRVEC_INIT;
	struct strbuf path = STRBUF_INIT, text = STRBUF_INIT;

	if (reader_list(&ctx->rd, NM_CONNECTIONS, &names) <= 0)
		goto out;
	for (size_t i = 0; i < names.nr; i++) {
		size_t len = strlen(names.v[i]);
		if (len <= 13 || !streq(names.v[i] + len - 13, ".nmconnection"))
			continue;
		strbuf_reset(&path);
		strbuf_addf(&path, NM_CONNECTIONS "/%s", names.v[i]);
		strbuf_reset(&text);
		if (reader_file(&ctx->rd, path.buf, ROOTFS_FILE_MAX, &text) <= 0)
			continue;
		struct inv_nm_profile *p = ARRAY_PUSH(s->nm_profiles, s->nr_nm_profiles);
		memset(p, 0, sizeof(*p));
		p->file = xstrdup(names.v[i]);
		parse_nm_keyfile(text.buf, p);
	}
out:
	strvec_clear(&names);
	strbuf_release(&path);
	strbuf_release(&text);
}

void probe_nccl_conf(struct probe_ctx *ctx)
{
	const char *user = inventory_env(ctx->inv, "NCCL_CONF_FILE");

	/* NCCL's order: $NCCL_CONF_FILE, else ~/.nccl.conf; then /etc/nccl.conf. */
	if (user && *user) {
		read_conf_file(ctx, user);
	} else if (ctx->inv->sys.home && *ctx->inv->sys.home) {
		char *path = xasprintf("%s/.nccl.conf", ctx->inv->sys.home);
		read_conf_file(ctx, path);
		free(path);
	}
	read_conf_file(ctx, "etc/nccl.conf");
}
