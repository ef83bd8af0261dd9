/*
 * The node's share of a Slurm cluster (inventory "slurm"): which
 * slurm.conf, its checksum, the controller, the munge socket, this node's
 * RealMemory, and the job user's ids - what doctor -H compares across the
 * nodes (check/check_slurm.c).  Every file is read below the root.
 */
#include "sparkctl.h"

#include <pwd.h>

#include "lib/parse.h"
#include "lib/sha256.h"
#include "lib/xalloc.h"
#include "probe/probe_internal.h"
#include "slurm/conf_scan.h"

#define SLURM_CONF_DEFAULT "/etc/slurm/slurm.conf"
#define PASSWD		   "etc/passwd"

/* The path below the root of an absolute path on the node. */
static const char *below_root(const char *path)
{
	while (*path == '/')
		path++;
	return path;
}

/* Included files, read below the root as slurm.conf is (conf_scan.h's reader). */
static int read_include(void *data, const char *path, struct strbuf *out)
{
	struct probe_ctx *ctx = data;
	int r = rootfs_read_file(ctx->root, below_root(path), ROOTFS_FILE_MAX, out);

	if (r < 0 && rootfs_absent(r))
		return 0;
	return r < 0 ? r : 1;
}

/* name's line of the passwd text: 1 with the ids, 0 when it has none. */
static int passwd_ids(const char *text, const char *name, int64_t *uid, int64_t *gid)
{
	size_t n = strlen(name);

	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");
		/* name:password:uid:gid:... */
		if (len > n && !strncmp(p, name, n) && p[n] == ':') {
			char *line = xstrndup(p, len), *f[4] = { 0 };
			char *q = line;
			uint32_t u, g;
			int r = 0;
			for (size_t i = 0; i < 4 && q; i++) {
				f[i] = q;
				q = strchr(q, ':');
				if (q)
					*q++ = '\0';
			}
			if (q && parse_u32(f[2], &u) == 0 && parse_u32(f[3], &g) == 0) {
				*uid = u;
				*gid = g;
				r = 1;
			}
			free(line);
			if (r)
				return 1;
		}
		p += len + (p[len] == '\n');
	}
	return 0;
}

/*
 * The job user's ids: from the node's etc/passwd below the root.  A user
 * that the file lacks may still come from a directory (LDAP, SSSD): that
 * is asked through NSS (getpwnam) only of the live host ("/"), whose NSS
 * it is; a captured tree has no NSS of its own.
 */
static void probe_user(struct probe_ctx *ctx, struct inv_slurm *sl)
{
	const char *user = ctx->slurm_user ? ctx->slurm_user : secure_getenv("USER");
	struct strbuf text = STRBUF_INIT;
	int r;

	if (!user || !*user)
		user = secure_getenv("LOGNAME");
	if (!user || !*user)
		return;
	sl->user = xstrdup(user);
	/* A name that passwd's fields cannot hold has no line there. */
	if (strpbrk(user, ":\n"))
		return;
	r = rootfs_read_file(ctx->root, PASSWD, ROOTFS_FILE_MAX, &text);
	if (r < 0)
		probe_read_failed(ctx, PASSWD, r);
	if (r >= 0 && passwd_ids(text.buf, user, &sl->uid, &sl->gid)) {
		sl->user_source = xstrdup("passwd");
	} else if (ctx->root->is_host_root) {
		struct passwd *pw = getpwnam(user);
		if (pw) {
			sl->uid = pw->pw_uid;
			sl->gid = pw->pw_gid;
			sl->user_source = xstrdup("nss");
		}
	}
	strbuf_release(&text);
}

void probe_slurm(struct probe_ctx *ctx)
{
	const char *env = inventory_env(ctx->inv, "SLURM_CONF");
	const char *path = env && *env ? env : SLURM_CONF_DEFAULT;
	const char *host = ctx->inv->sys.hostname;
	struct strbuf text = STRBUF_INIT;
	struct slurm_conf_scan scan;
	char hex[SHA256_HEX_LEN + 1], *node = NULL;
	struct inv_slurm *sl;
	int r;

	r = rootfs_read_file(ctx->root, below_root(path), ROOTFS_FILE_MAX, &text);
	if (r < 0 && rootfs_absent(r))
		goto out;
	sl = xcalloc(1, sizeof(*sl));
	sl->node_listed = TRI_UNKNOWN;
	sl->real_memory_bytes = sl->uid = sl->gid = INV_UNKNOWN;
	sl->conf = xstrdup(path);
	ctx->inv->slurm = sl;
	probe_user(ctx, sl);
	if (r < 0) {
		probe_read_failed(ctx, below_root(path), r);
		goto out;
	}
	if (sha256_hex(text.buf, text.len, hex) == 0)
		sl->conf_sha256 = xstrdup(hex);
	/* Slurm's NodeName is the short host name (slurmd's default). */
	if (host && *host) {
		node = xstrndup(host, strcspn(host, "."));
		sl->node_name = xstrdup(node);
	}
	slurm_conf_scan_init(&scan, node ? node : "", read_include, ctx);
	slurm_conf_scan_text(&scan, path, text.buf);
	sl->controller = xstrdup_or_null(scan.controller);
	sl->munge_socket = xstrdup_or_null(scan.munge_socket);
	if (node) {
		sl->node_listed = scan.listed ? TRI_YES : TRI_NO;
		if (scan.real_memory_mib >= 0)
			sl->real_memory_bytes = scan.real_memory_mib << 20;
	}
	for (size_t i = 0; i < scan.problems.nr; i++)
		inventory_add_problem(ctx->inv, below_root(path), "%s", scan.problems.v[i]);
	slurm_conf_scan_release(&scan);
out:
	free(node);
	strbuf_release(&text);
}
