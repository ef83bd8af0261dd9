#include "sparkctl.h"

#include <sys/stat.h>

#include "cmd/cmd.h"
#include "inventory/inventory_json.h"
#include "lib/xalloc.h"
#include "probe/probe.h"
#include "probe/procs.h"

static void vreport(const char *cmd, const char *fmt, va_list ap) ATTR_PRINTF(2, 0);
/* Messages carry names and text from outside (files, nodes, ssh): escaped for the terminal. */
static void vreport(const char *cmd, const char *fmt, va_list ap)
{
	struct strbuf msg = STRBUF_INIT, line = STRBUF_INIT;

	strbuf_vaddf(&msg, fmt, ap);
	strbuf_addf(&line, "sparkctl %s: ", cmd);
	strbuf_add_printable(&line, msg.buf, msg.len, PRINTABLE_LINES);
	strbuf_addch(&line, '\n');
	fputs(line.buf, stderr);
	strbuf_release(&msg);
	strbuf_release(&line);
}

void cmd_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(cmd, fmt, ap);
	va_end(ap);
}

int cmd_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(cmd, fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try 'sparkctl %s --help'.\n", cmd);
	return SPARKCTL_EXIT_USAGE;
}

int inventory_source_load(const char *cmd, const struct inventory_source *src,
			  struct inventory *inv)
{
	struct strbuf err = STRBUF_INIT;
	int r;

	if (src->root && src->from) {
		cmd_usage_error(cmd, "--root and --from cannot be used together");
		return SPARKCTL_EXIT_USAGE;
	}
	if (src->from) {
		r = inventory_load(inv, src->from, &err);
	} else {
		struct probe_options opts = { .root = rootfs_root_path(src->root),
					      .no_nvidia_libraries = src->no_nvidia_libraries,
					      .storage_target = src->storage_target,
					      .slurm_user = src->slurm_user };
		r = probe_inventory(&opts, inv, &err);
	}
	if (r < 0) {
		cmd_error(cmd, "%s", err.buf);
		strbuf_release(&err);
		return SPARKCTL_EXIT_ERROR;
	}
	strbuf_release(&err);
	return SPARKCTL_EXIT_OK;
}

/* mkdir -p, the last component 0700. */
static int make_dirs(const char *path)
{
	char *copy = xstrdup(path);
	int r = 0;

	for (char *p = copy + 1; r == 0; p++) {
		bool last = *p == '\0';
		if (*p != '/' && !last)
			continue;
		*p = '\0';
		if (mkdir(copy, last ? 0700 : 0755) < 0 && errno != EEXIST)
			r = -errno;
		if (last)
			break;
		*p = '/';
	}
	free(copy);
	return r;
}

int cmd_state_path(const char *name, bool create, struct strbuf *path)
{
	const char *dir = getenv("SPARKCTL_STATE_DIR"), *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");

	strbuf_reset(path);
	if (dir && *dir)
		strbuf_addstr(path, dir);
	else if (xdg && *xdg == '/')
		strbuf_addf(path, "%s/sparkctl", xdg);
	else if (home && *home == '/')
		strbuf_addf(path, "%s/.local/state/sparkctl", home);
	else
		return -ENOENT;
	if (create) {
		int r = make_dirs(path->buf);
		if (r < 0)
			return r;
	}
	strbuf_addf(path, "/%s", name);
	return 0;
}
