#include "sparkctl.h"

#include <pwd.h>
#include <sys/resource.h>
#include <sys/utsname.h>

#include "inventory/inventory_json.h"
#include "lib/xalloc.h"
#include "probe/probe.h"
#include "probe/probe_internal.h"

extern char **environ;

static int cmp_setting(const void *a, const void *b)
{
	return strcmp(((const struct inv_setting *)a)->key, ((const struct inv_setting *)b)->key);
}

static void probe_environment(struct inv_system *s)
{
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq)
			continue;
		char *key = xstrndup(*e, (size_t)(eq - *e));
		if (inventory_env_is_recorded(key)) {
			struct inv_setting *set = ARRAY_PUSH(s->environment, s->nr_environment);
			set->key = key;
			set->value = xstrdup(eq + 1);
		} else {
			free(key);
		}
	}
	if (s->nr_environment > 1)
		qsort(s->environment, s->nr_environment, sizeof(*s->environment), cmp_setting);
}

static int64_t limit_value(rlim_t v)
{
	if (v == RLIM_INFINITY)
		return INV_UNLIMITED;
	return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

void probe_host_live(struct probe_ctx *ctx)
{
	struct inv_system *s = &ctx->inv->sys;
	struct utsname u;
	struct rlimit rl;
	struct passwd pw, *res = NULL;
	char buf[4096];

	if (uname(&u) == 0)
		s->arch = xstrdup(u.machine);
	/* NCCL finds ~/.nccl.conf through the password database, not $HOME. */
	if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res) == 0 && res && res->pw_dir)
		s->home = xstrdup(res->pw_dir);
	probe_environment(s);
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
		s->memlock_soft = limit_value(rl.rlim_cur);
		s->memlock_hard = limit_value(rl.rlim_max);
	}
	if (ctx->no_nvidia_libraries)
		return;
	probe_nccl_live(ctx);
	probe_gpus_live(ctx);
}

void probe_host_captured(struct probe_ctx *ctx)
{
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	json_t *doc = NULL;
	int r = rootfs_read_file(ctx->root, CAPTURE_HOST_JSON, JSON_INPUT_MAX, &text);

	if (r == -ENOENT) {
		inventory_add_problem(
			ctx->inv, CAPTURE_HOST_JSON,
			"not in the tree: GPUs, NCCL, environment and limits are unknown");
		goto out;
	}
	if (r < 0) {
		probe_read_failed(ctx, CAPTURE_HOST_JSON, r);
		goto out;
	}
	if (json_load_buffer(text.buf, text.len, CAPTURE_HOST_JSON, &doc, &err) < 0 ||
	    host_facts_from_json(ctx->inv, doc, &err) < 0)
		inventory_add_problem(ctx->inv, CAPTURE_HOST_JSON, "%s", err.buf);
out:
	json_decref(doc);
	strbuf_release(&text);
	strbuf_release(&err);
}
