/*
 * procs.c - finding and ending processes through /proc.
 */
#include "sparkctl.h"

#include <signal.h>
#include <sys/utsname.h>

#include "lib/parse.h"
#include "lib/rootfs.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "probe/procs.h"

/* /proc/PID/environ and cmdline are bounded by the kernel's ARG_MAX; stat is short. */
#define PROC_FILE_MAX (4u << 20)

/* The live kernel's files: processes are about now, never a captured tree. */
static int open_host(struct rootfs *host)
{
	return rootfs_open(host, "/");
}

/* Read proc/<rel> whole into out (reset first).  Returns 0 or -errno. */
static int read_proc_file(const struct rootfs *host, const char *rel, size_t max,
			  struct strbuf *out)
{
	char path[64];
	int r;

	strbuf_reset(out);
	if ((size_t)snprintf(path, sizeof(path), "proc/%s", rel) >= sizeof(path))
		return -ENAMETOOLONG;
	r = rootfs_read_file(host, path, max, out);
	return r < 0 ? r : 0;
}

/* read_proc_file() on a root of its own. */
static int read_live_proc_file(const char *rel, size_t max, struct strbuf *out)
{
	struct rootfs host;
	int r = open_host(&host);

	strbuf_reset(out);
	if (r == 0)
		r = read_proc_file(&host, rel, max, out);
	rootfs_close(&host);
	return r;
}

static int parse_pid_field(const char *s, size_t len, pid_t *ret)
{
	uint64_t v;
	if (parse_u64_n(s, len, &v) < 0 || v > INT32_MAX)
		return -EINVAL;
	*ret = (pid_t)v;
	return 0;
}

int proc_stat_parse(const char *text, struct proc_entry *out)
{
	const char *open = strchr(text, '('), *close = strrchr(text, ')');
	const char *p;
	pid_t *fields[] = { &out->ppid, &out->pgid, &out->sid };

	if (!open || !close || close < open || open == text || open[-1] != ' ' ||
	    parse_pid_field(text, (size_t)(open - text - 1), &out->pid) < 0)
		return -EINVAL;
	p = close + 1;
	if (p[0] != ' ' || !p[1] || p[2] != ' ')
		return -EINVAL;
	out->state = p[1];
	p += 3;
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		size_t len = strspn(p, "0123456789");
		/* ppid is 0 for init and kernel threads; pgid and sid may be 0 for the latter */
		if (len == 0 || parse_pid_field(p, len, fields[i]) < 0 || (p[len] != ' '))
			return -EINVAL;
		p += len + 1;
	}
	/*
	 * starttime, field 22, 15 fields on (tty_nr and tpgid may be negative);
	 * 0 ("unknown") where the line is cut short.
	 */
	out->start_ticks = 0;
	for (int field = 7; field < 22 && p; field++) {
		p = strchr(p, ' ');
		p = p ? p + 1 : NULL;
	}
	if (p) {
		uint64_t v;
		size_t len = strspn(p, "0123456789");
		if (len && parse_u64_n(p, len, &v) == 0)
			out->start_ticks = v;
	}
	return 0;
}

int proc_entry_read(pid_t pid, struct proc_entry *out)
{
	struct strbuf text = STRBUF_INIT;
	char rel[32];
	int r;

	snprintf(rel, sizeof(rel), "%d/stat", (int)pid);
	r = read_live_proc_file(rel, PROC_FILE_MAX, &text);
	if (r == 0)
		r = proc_stat_parse(text.buf, out);
	strbuf_release(&text);
	return r;
}

void procs_started_since(const struct proc_table *t, uint64_t start_ticks, struct proc_table *out)
{
	out->v = NULL;
	out->nr = 0;
	for (size_t i = 0; i < t->nr; i++)
		if (t->v[i].start_ticks >= start_ticks || t->v[i].start_ticks == 0)
			*ARRAY_PUSH(out->v, out->nr) = t->v[i];
}

int proc_table_scan(struct proc_table *t)
{
	struct strbuf text = STRBUF_INIT;
	struct strvec names = STRVEC_INIT;
	struct rootfs host;
	int r = open_host(&host);

	t->v = NULL;
	t->nr = 0;
	if (r == 0)
		r = rootfs_list(&host, "proc", &names);
	for (size_t i = 0; r >= 0 && i < names.nr; i++) {
		struct proc_entry e;
		char rel[32];
		pid_t pid;

		if (parse_pid_field(names.v[i], strlen(names.v[i]), &pid) < 0)
			continue;
		snprintf(rel, sizeof(rel), "%d/stat", pid);
		if (read_proc_file(&host, rel, 4096, &text) < 0 ||
		    proc_stat_parse(text.buf, &e) < 0)
			continue; /* gone meanwhile */
		*ARRAY_PUSH(t->v, t->nr) = e;
	}
	rootfs_close(&host);
	strvec_clear(&names);
	strbuf_release(&text);
	return r < 0 ? r : 0;
}

void proc_table_release(struct proc_table *t)
{
	free(t->v);
	t->v = NULL;
	t->nr = 0;
}

void proc_list_add(struct proc_list *l, pid_t pid)
{
	if (!proc_list_has(l, pid))
		*ARRAY_PUSH(l->pids, l->nr) = pid;
}

bool proc_list_has(const struct proc_list *l, pid_t pid)
{
	for (size_t i = 0; i < l->nr; i++)
		if (l->pids[i] == pid)
			return true;
	return false;
}

void proc_list_release(struct proc_list *l)
{
	free(l->pids);
	l->pids = NULL;
	l->nr = 0;
}

void procs_descendants(const struct proc_table *t, pid_t root, struct proc_list *out)
{
	struct proc_list found = { 0 };

	proc_list_add(&found, root);
	/* Breadth-first over the parent links: found grows while it is walked. */
	for (size_t k = 0; k < found.nr; k++)
		for (size_t i = 0; i < t->nr; i++)
			if (t->v[i].ppid == found.pids[k] && t->v[i].pid != root)
				proc_list_add(&found, t->v[i].pid);
	for (size_t k = 1; k < found.nr; k++)
		for (size_t i = 0; i < t->nr; i++)
			if (t->v[i].pid == found.pids[k] && t->v[i].state != 'Z')
				proc_list_add(out, found.pids[k]);
	proc_list_release(&found);
}

void procs_in_session(const struct proc_table *t, pid_t sid, struct proc_list *out)
{
	for (size_t i = 0; i < t->nr; i++)
		if (t->v[i].sid == sid && t->v[i].state != 'Z')
			proc_list_add(out, t->v[i].pid);
}

/* The value of name in a NUL-separated environment block, or NULL. */
static const char *environ_lookup(const struct strbuf *env, const char *name)
{
	size_t nlen = strlen(name);
	for (size_t off = 0; off < env->len;) {
		const char *entry = env->buf + off;
		size_t len = strnlen(entry, env->len - off);
		if (len > nlen && !memcmp(entry, name, nlen) && entry[nlen] == '=')
			return entry + nlen + 1;
		off += len + 1;
	}
	return NULL;
}

static int read_environ(const struct rootfs *host, pid_t pid, struct strbuf *out)
{
	char rel[32];
	snprintf(rel, sizeof(rel), "%d/environ", pid);
	return read_proc_file(host, rel, PROC_FILE_MAX, out);
}

/* True when the environment block holds every entry ("NAME=VALUE") exactly. */
static bool environ_has_all(const struct strbuf *env, const char *const *entries)
{
	for (size_t i = 0; entries[i]; i++) {
		const char *eq = strchr(entries[i], '=');
		char *name;
		const char *v;
		bool match;

		if (!eq)
			return false;
		name = xstrndup(entries[i], (size_t)(eq - entries[i]));
		v = environ_lookup(env, name);
		match = v && streq(v, eq + 1);
		free(name);
		if (!match)
			return false;
	}
	return true;
}

void procs_with_env(const struct proc_table *t, const char *const *entries, struct proc_list *out)
{
	struct strbuf env = STRBUF_INIT;
	struct rootfs host;

	if (open_host(&host) < 0)
		return;
	for (size_t i = 0; i < t->nr; i++) {
		if (t->v[i].state == 'Z' || read_environ(&host, t->v[i].pid, &env) < 0)
			continue;
		if (environ_has_all(&env, entries))
			proc_list_add(out, t->v[i].pid);
	}
	rootfs_close(&host);
	strbuf_release(&env);
}

char *proc_env_value(pid_t pid, const char *name)
{
	struct strbuf env = STRBUF_INIT;
	struct rootfs host;
	const char *v;
	char *ret = NULL;

	if (open_host(&host) == 0 && read_environ(&host, pid, &env) == 0 &&
	    (v = environ_lookup(&env, name)))
		ret = xstrdup(v);
	rootfs_close(&host);
	strbuf_release(&env);
	return ret;
}

char *proc_cmdline(pid_t pid, size_t max)
{
	struct strbuf text = STRBUF_INIT;
	char rel[32];

	snprintf(rel, sizeof(rel), "%d/cmdline", pid);
	if (read_live_proc_file(rel, PROC_FILE_MAX, &text) < 0 || text.len == 0) {
		strbuf_release(&text);
		return NULL;
	}
	while (text.len && text.buf[text.len - 1] == '\0')
		text.len--;
	for (size_t i = 0; i < text.len; i++)
		if (text.buf[i] == '\0' || text.buf[i] == '\n')
			text.buf[i] = ' ';
	strbuf_setlen(&text, text.len < max ? text.len : max);
	return strbuf_detach(&text, NULL);
}

int tcp_table_find_listener(const char *text, unsigned port, unsigned long *ret_inode)
{
	const char *line = strchr(text, '\n');

	if (!strstr(text, "local_address") || !line)
		return -EINVAL;
	for (line++; *line;) {
		const char *next = strchr(line, '\n');
		char local[64], remote[64], state[8];
		unsigned long inode;
		unsigned uid, timeout;
		const char *colon;
		uint64_t p;

		/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
		if (sscanf(line, "%*s %63s %63s %7s %*s %*s %*s %u %u %lu", local, remote, state,
			   &uid, &timeout, &inode) == 6 &&
		    (colon = strrchr(local, ':')) && parse_u64_hex(colon + 1, &p) == 0 &&
		    p == port && streq(state, "0A")) {
			*ret_inode = inode;
			return 1;
		}
		line = next ? next + 1 : line + strlen(line);
	}
	return 0;
}

/* True when pid has an open descriptor on the socket want ("socket:[INODE]"). */
static bool holds_socket(const struct rootfs *host, pid_t pid, const char *want)
{
	struct strvec fds = STRVEC_INIT;
	struct strbuf target = STRBUF_INIT;
	struct rootfs_dir dir;
	char rel[64];
	bool found = false;

	snprintf(rel, sizeof(rel), "proc/%d/fd", pid);
	if (rootfs_dir_open(host, rel, &dir) < 0)
		return false;
	rootfs_dir_list(&dir, &fds);
	for (size_t i = 0; i < fds.nr && !found; i++)
		found = rootfs_dir_readlink(&dir, fds.v[i], &target) == 0 &&
			streq(target.buf, want);
	rootfs_dir_close(&dir);
	strvec_clear(&fds);
	strbuf_release(&target);
	return found;
}

/* The process with an open descriptor on socket inode, or 0 if none can be seen. */
static pid_t socket_owner(unsigned long inode)
{
	char want[48];
	struct proc_table t;
	struct rootfs host;
	pid_t owner = 0;

	snprintf(want, sizeof(want), "socket:[%lu]", inode);
	if (open_host(&host) < 0)
		return 0;
	if (proc_table_scan(&t) == 0) {
		for (size_t i = 0; i < t.nr && !owner; i++)
			if (holds_socket(&host, t.v[i].pid, want))
				owner = t.v[i].pid;
		proc_table_release(&t);
	}
	rootfs_close(&host);
	return owner;
}

int tcp_port_owner(unsigned port, pid_t *ret_pid)
{
	static const char *const tables[] = { "net/tcp", "net/tcp6" };
	struct strbuf text = STRBUF_INIT;
	unsigned long inode = 0;
	int found = 0;

	for (size_t i = 0; i < ARRAY_SIZE(tables) && found <= 0; i++)
		if (read_live_proc_file(tables[i], 64u << 20, &text) == 0)
			found = tcp_table_find_listener(text.buf, port, &inode);
	strbuf_release(&text);
	if (found <= 0)
		return 0;
	*ret_pid = socket_owner(inode);
	return 1;
}

size_t procs_signal(const struct proc_list *l, int sig)
{
	pid_t self = getpid();
	size_t n = 0;

	for (size_t i = 0; i < l->nr; i++)
		if (l->pids[i] > 0 && l->pids[i] != self && kill(l->pids[i], sig) == 0)
			n++;
	return n;
}

int proc_self_path(struct strbuf *out)
{
	struct strbuf target = STRBUF_INIT;
	struct rootfs host;
	char *path = NULL;
	int r = open_host(&host);

	if (r == 0)
		r = rootfs_readlink(&host, "proc/self/exe", &target);
	/* The kernel's path may pass through symlinks of its own mount namespace. */
	if (r == 0 && !(path = realpath(target.buf, NULL)))
		r = -errno;
	if (r == 0) {
		strbuf_reset(out);
		strbuf_addstr(out, path);
	}
	free(path);
	rootfs_close(&host);
	strbuf_release(&target);
	return r;
}

int proc_self_image(struct strbuf *out, size_t max)
{
	struct strbuf path = STRBUF_INIT;
	int r = proc_self_path(&path);

	strbuf_reset(out);
	/* The root's openat2() refuses the magic link itself: its target, by name. */
	if (r == 0)
		r = strbuf_read_path(out, path.buf, max);
	strbuf_release(&path);
	return r;
}

char *proc_self_path_or_name(void)
{
	struct strbuf path = STRBUF_INIT;

	if (proc_self_path(&path) < 0) {
		strbuf_reset(&path);
		strbuf_addstr(&path, "sparkctl");
	}
	return strbuf_detach(&path, NULL);
}

/* Copy text into a fixed field of an identity; -ENAMETOOLONG when it does not fit. */
static int set_field(char *field, size_t size, const char *text)
{
	if (!*text || strlen(text) >= size)
		return -ENAMETOOLONG;
	memcpy(field, text, strlen(text) + 1);
	return 0;
}

/* The start of process pid into *ret_start, and its state: 0, or -ENOENT when it is gone. */
static int read_start(const struct rootfs *host, pid_t pid, uint64_t *ret_start, char *ret_state)
{
	struct strbuf text = STRBUF_INIT;
	struct proc_entry e;
	char rel[32];
	int r;

	snprintf(rel, sizeof(rel), "%d/stat", (int)pid);
	r = read_proc_file(host, rel, 4096, &text);
	if (r == 0 && (proc_stat_parse(text.buf, &e) < 0 || e.pid != pid || !e.start_ticks))
		r = -EINVAL;
	if (r == 0) {
		*ret_start = e.start_ticks;
		*ret_state = e.state;
	}
	strbuf_release(&text);
	return r == -ESRCH ? -ENOENT : r;
}

static int identity_of_self(const struct rootfs *host, struct proc_identity *id)
{
	struct strbuf text = STRBUF_INIT;
	struct utsname u;
	char state;
	int r;

	memset(id, 0, sizeof(*id));
	id->pid = getpid();
	r = read_start(host, id->pid, &id->start_ticks, &state);
	if (r == 0)
		r = rootfs_read_value(host, "proc/sys/kernel/random/boot_id", &text);
	if (r == 0)
		r = set_field(id->boot_id, sizeof(id->boot_id), text.buf);
	if (r == 0)
		r = rootfs_readlink(host, "proc/self/ns/pid", &text);
	if (r == 0)
		r = set_field(id->pid_ns, sizeof(id->pid_ns), text.buf);
	if (r == 0)
		r = uname(&u) < 0 ? -errno : set_field(id->host, sizeof(id->host), u.nodename);
	strbuf_release(&text);
	return r;
}

int proc_identity_self(struct proc_identity *id)
{
	struct rootfs host;
	int r = open_host(&host);

	if (r == 0)
		r = identity_of_self(&host, id);
	rootfs_close(&host);
	return r;
}

/* proc_identity_running() with this process's identity known. */
static int running(const struct rootfs *host, const struct proc_identity *self,
		   const struct proc_identity *id)
{
	uint64_t start;
	char state;
	int r;

	if (!streq(self->host, id->host))
		return -EXDEV;
	if (!streq(self->boot_id, id->boot_id))
		return 0; /* rebooted: whatever ran then has ended */
	if (!streq(self->pid_ns, id->pid_ns))
		return -EXDEV;
	r = read_start(host, id->pid, &start, &state);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	return start == id->start_ticks && state != 'Z';
}

int proc_identity_running(const struct proc_identity *id)
{
	struct proc_identity self;
	struct rootfs host;
	int r = open_host(&host);

	if (r == 0)
		r = identity_of_self(&host, &self);
	if (r == 0)
		r = running(&host, &self, id);
	rootfs_close(&host);
	return r;
}
