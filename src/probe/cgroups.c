/*
 * cgroups.c - reading the cgroup v2 hierarchy of the live kernel.
 */
#include "sparkctl.h"

#include "lib/parse.h"
#include "lib/rootfs.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "probe/cgroups.h"

/* mountinfo and cgroup.procs of a busy cgroup are the largest files read here. */
#define CGROUP_FILE_MAX (4u << 20)

/*
 * mountinfo escapes space, tab, newline and backslash in paths as \ooo;
 * undo it in place.
 */
static void unescape_octal(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

int cgroup2_mount_parse(const char *mountinfo, char **ret_mount, char **ret_root)
{
	const char *line = mountinfo;

	/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER */
	while (line && *line) {
		const char *end = strchr(line, '\n');
		char *copy = xstrndup(line, end ? (size_t)(end - line) : strlen(line));
		char *field[5] = { 0 }, *save = NULL, *tok, *dash;
		size_t n = 0;

		dash = strstr(copy, " - ");
		if (dash && !strncmp(dash + 3, "cgroup2 ", 8)) {
			*dash = '\0';
			for (tok = strtok_r(copy, " ", &save); tok && n < 5;
			     tok = strtok_r(NULL, " ", &save))
				field[n++] = tok;
			if (n == 5 && field[3][0] == '/' && field[4][0] == '/') {
				unescape_octal(field[3]);
				unescape_octal(field[4]);
				*ret_root = xstrdup(field[3]);
				*ret_mount = xstrdup(field[4]);
				free(copy);
				return 1;
			}
		}
		free(copy);
		line = end ? end + 1 : NULL;
	}
	return 0;
}

int cgroup2_path_parse(const char *proc_cgroup, char **ret_path)
{
	const char *line = proc_cgroup;

	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		if (len >= 4 && !strncmp(line, "0::/", 4)) {
			*ret_path = xstrndup(line + 3, len - 3);
			return 1;
		}
		line = end ? end + 1 : NULL;
	}
	return 0;
}

/* The live kernel's file rel (no leading '/') into out. */
static int read_host_file(const char *rel, struct strbuf *out)
{
	struct rootfs host;
	int r = rootfs_open(&host, "/");

	strbuf_reset(out);
	if (r == 0)
		r = rootfs_read_file(&host, rel, CGROUP_FILE_MAX, out);
	rootfs_close(&host);
	return r < 0 ? r : 0;
}

/* An absolute path as the relative path a root opened on "/" takes. */
static const char *below_slash(const char *path)
{
	while (*path == '/')
		path++;
	return *path ? path : ".";
}

int cgroup_self_read(struct cgroup_self *out)
{
	struct strbuf text = STRBUF_INIT;
	char *mount = NULL, *root = NULL, *path = NULL;
	size_t root_len;
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = read_host_file("proc/self/mountinfo", &text)) < 0 ||
	    (r = cgroup2_mount_parse(text.buf, &mount, &root)) <= 0)
		goto out;
	if ((r = read_host_file("proc/self/cgroup", &text)) < 0 ||
	    (r = cgroup2_path_parse(text.buf, &path)) <= 0)
		goto out;
	/* A mount that shows part of the hierarchy: the path is below that part. */
	root_len = streq(root, "/") ? 0 : strlen(root);
	if (root_len &&
	    (strncmp(path, root, root_len) || (path[root_len] && path[root_len] != '/'))) {
		r = 0; /* this process's cgroup is not visible through the mount */
		goto out;
	}
	out->mount = mount;
	out->path = xasprintf("%s%s", streq(mount, "/") ? "" : mount,
			      streq(path + root_len, "/") ? "" : path + root_len);
	mount = NULL;
	r = 1;
out:
	free(mount);
	free(root);
	free(path);
	strbuf_release(&text);
	return r;
}

void cgroup_self_release(struct cgroup_self *cg)
{
	free(cg->mount);
	free(cg->path);
	memset(cg, 0, sizeof(*cg));
}

bool systemd_booted(void)
{
	struct rootfs host;
	bool yes = false;

	if (rootfs_open(&host, "/") == 0)
		yes = rootfs_exists(&host, "run/systemd/system");
	rootfs_close(&host);
	return yes;
}

/* Add the pids of one cgroup.procs text. */
static void add_pids(const char *text, struct proc_list *out)
{
	const char *p = text;

	while (*p) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		uint64_t v;
		if (len && parse_u64_n(p, len, &v) == 0 && v > 0 && v <= INT32_MAX)
			proc_list_add(out, (pid_t)v);
		if (!end)
			break;
		p = end + 1;
	}
}

static int procs_below(const struct rootfs *host, const char *rel, unsigned depth,
		       struct proc_list *out)
{
	struct strbuf text = STRBUF_INIT, sub = STRBUF_INIT;
	struct strvec dirs = STRVEC_INIT;
	int r;

	strbuf_addf(&sub, "%s/cgroup.procs", rel);
	r = rootfs_read_file(host, sub.buf, CGROUP_FILE_MAX, &text);
	if (r >= 0)
		add_pids(text.buf, out);
	if (r >= 0 && depth < CGROUP_FIND_DEPTH && (r = rootfs_list_dirs(host, rel, &dirs)) >= 0)
		for (size_t i = 0; i < dirs.nr; i++) {
			strbuf_reset(&sub);
			strbuf_addf(&sub, "%s/%s", rel, dirs.v[i]);
			procs_below(host, sub.buf, depth + 1, out);
		}
	strbuf_release(&text);
	strbuf_release(&sub);
	strvec_clear(&dirs);
	return r < 0 ? r : 0;
}

int cgroup_procs_read(const char *dir, struct proc_list *out)
{
	struct rootfs host;
	int r = rootfs_open(&host, "/");

	if (r == 0)
		r = procs_below(&host, below_slash(dir), 0, out);
	rootfs_close(&host);
	return r;
}

static void find_below(const struct rootfs *host, const char *rel, unsigned depth,
		       bool (*match)(const char *name, const void *data), const void *data,
		       struct strvec *out)
{
	struct strvec dirs = STRVEC_INIT;
	struct strbuf sub = STRBUF_INIT;

	if (rootfs_list_dirs(host, rel, &dirs) < 0)
		return;
	for (size_t i = 0; i < dirs.nr; i++) {
		strbuf_reset(&sub);
		strbuf_addf(&sub, "%s/%s", rel, dirs.v[i]);
		if (match(dirs.v[i], data))
			strvec_pushf(out, "/%s", sub.buf);
		else if (depth + 1 < CGROUP_FIND_DEPTH)
			find_below(host, sub.buf, depth + 1, match, data, out);
	}
	strvec_clear(&dirs);
	strbuf_release(&sub);
}

int cgroup_find(const char *mount, bool (*match)(const char *name, const void *data),
		const void *data, struct strvec *out)
{
	struct rootfs host;
	int r = rootfs_open(&host, "/");

	if (r == 0)
		find_below(&host, below_slash(mount), 0, match, data, out);
	rootfs_close(&host);
	return r;
}
