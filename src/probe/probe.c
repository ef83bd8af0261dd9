#include "sparkctl.h"

#include "lib/parse.h"
#include "lib/xalloc.h"
#include "probe/probe.h"
#include "probe/nvme.h"
#include "probe/probe_internal.h"
#include "version.h"

void probe_read_failed(struct probe_ctx *ctx, const char *path, int err)
{
	if (rootfs_absent(err))
		return;
	if (err == -EFBIG)
		inventory_add_problem(ctx->inv, path, "larger than the size limit; not read");
	else if (err == -ESPIPE)
		inventory_add_problem(ctx->inv, path, "not a regular file; not read");
	else
		inventory_add_problem(ctx->inv, path, "%s", strerror(-err));
}

void probe_bad_content(struct probe_ctx *ctx, const char *path, const char *content)
{
	struct strbuf shown = STRBUF_INIT;

	/* Quote at most 40 bytes, with anything unprintable escaped. */
	strbuf_add_printable(&shown, content, strnlen(content, 40), 0);
	if (strlen(content) > 40)
		strbuf_addstr(&shown, "...");
	inventory_add_problem(ctx->inv, path, "unexpected content '%s'", shown.buf);
	strbuf_release(&shown);
}

/* The readers' failures, as problems. */
static void record_failure(void *data, const char *path, int err, const char *content)
{
	struct probe_ctx *ctx = data;

	if (content)
		probe_bad_content(ctx, path, content);
	else
		probe_read_failed(ctx, path, err);
}

char *probe_read_str(struct probe_ctx *ctx, const char *path)
{
	struct strbuf sb = STRBUF_INIT;

	if (reader_value(&ctx->rd, path, &sb) > 0)
		return strbuf_detach(&sb, NULL);
	strbuf_release(&sb);
	return NULL;
}

char *probe_read_strf(struct probe_ctx *ctx, const char *fmt, ...)
{
	struct strbuf path = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&path, fmt, ap);
	va_end(ap);
	char *v = probe_read_str(ctx, path.buf);
	strbuf_release(&path);
	return v;
}

int64_t probe_read_int(struct probe_ctx *ctx, const char *path)
{
	char *s = probe_read_str(ctx, path);
	uint64_t v;

	if (!s)
		return INV_UNKNOWN;
	if (parse_u64(s, &v) < 0 || v > INT64_MAX) {
		probe_bad_content(ctx, path, s);
		free(s);
		return INV_UNKNOWN;
	}
	free(s);
	return (int64_t)v;
}

char *probe_read_link_base(struct probe_ctx *ctx, const char *path)
{
	struct strbuf target = STRBUF_INIT;
	int r = rootfs_readlink(ctx->root, path, &target);
	char *base = NULL;

	if (r < 0) {
		probe_read_failed(ctx, path, r);
	} else {
		const char *slash = strrchr(target.buf, '/');
		const char *b = slash ? slash + 1 : target.buf;
		if (*b)
			base = xstrdup(b);
	}
	strbuf_release(&target);
	return base;
}

int probe_inventory(const struct probe_options *opts, struct inventory *inv, struct strbuf *err)
{
	struct rootfs root;
	struct probe_ctx ctx = { .root = &root,
				 .inv = inv,
				 .no_nvidia_libraries = opts->no_nvidia_libraries,
				 .storage_target = opts->storage_target,
				 .slurm_user = opts->slurm_user,
				 .rd = { .root = &root, .fail = record_failure } };
	int r = rootfs_open(&root, opts->root);

	if (r < 0) {
		strbuf_addf(err, "cannot use '%s' as the root: %s", opts->root, strerror(-r));
		return r;
	}
	root.recorder = opts->recorder;
	ctx.rd.data = &ctx;
	inv->sparkctl_version = xstrdup(SPARKCTL_VERSION);
	inv->source = xstrdup(root.is_host_root ? "live" : "root");
	inv->root = root.is_host_root ? NULL : xstrdup(opts->root);

	/* The host facts first: the environment decides which NCCL config files exist. */
	if (root.is_host_root)
		probe_host_live(&ctx);
	else
		probe_host_captured(&ctx);
	probe_system(&ctx);
	probe_nccl_conf(&ctx);
	probe_nm_profiles(&ctx);
	probe_netdevs(&ctx);
	if (root.is_host_root)
		probe_addresses_live(&ctx);
	else
		probe_addresses_captured(&ctx);
	probe_rdma(&ctx);
	probe_pci(&ctx);
	probe_storage(&ctx);
	probe_slurm(&ctx);

	rootfs_close(&root);
	return 0;
}
