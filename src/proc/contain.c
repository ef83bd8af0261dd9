/*
 * contain.c - a job's part on a node in cgroups of its own: made, found
 * by name, ended and removed.
 */
#include "sparkctl.h"

#include <signal.h>
#include <sys/stat.h>

#include "lib/xalloc.h"
#include "probe/cgroups.h"
#include "proc/child.h"
#include "proc/contain.h"

static const char *const mode_names[] = {
	[CONTAIN_AUTO] = "auto",
	[CONTAIN_CGROUP] = "cgroup",
	[CONTAIN_SYSTEMD] = "systemd",
	[CONTAIN_MARKS] = "marks",
};

const char *contain_mode_name(enum contain_mode m)
{
	return (size_t)m < ARRAY_SIZE(mode_names) ? mode_names[m] : "?";
}

int contain_mode_parse(const char *s, enum contain_mode *ret)
{
	for (size_t i = 0; i < ARRAY_SIZE(mode_names); i++)
		if (streq(s, mode_names[i])) {
			*ret = (enum contain_mode)i;
			return 0;
		}
	return -EINVAL;
}

/* "sparkctl-JOB-nNODE": the cgroup, and the prefix of the scopes' names. */
static char *job_name(const char *job_id, unsigned node)
{
	return xasprintf("sparkctl-%s-n%u", job_id, node);
}

/* With CONTAIN_ANY_NODE: the prefix up to the node's number. */
static char *find_prefix(const char *job_id, unsigned node)
{
	return node == CONTAIN_ANY_NODE ? xasprintf("sparkctl-%s-n", job_id)
					: job_name(job_id, node);
}

/* Run argv with nothing in or out: its status, or -errno when it cannot start. */
static int run_quietly(const char *const *argv)
{
	struct child c;
	int r;

	child_init(&c);
	for (size_t i = 0; argv[i]; i++)
		strvec_push(&c.args, argv[i]);
	c.in = c.out = c.err = CHILD_IO_NULL;
	r = child_start(&c);
	if (r == 0)
		r = child_finish(&c);
	child_release(&c);
	return r;
}

/*
 * Whether systemd makes scopes for this user: a real one, started and
 * collected, rather than a guess from files (the user's manager may not
 * run, the bus may be out of reach).
 */
static int try_systemd(struct job_container *jc, struct strbuf *why)
{
	char *unit;
	int r;

	if (!systemd_booted()) {
		strbuf_addstr(why, "systemd is not the init system");
		return -ENOENT;
	}
	jc->systemd_user = geteuid() != 0;
	unit = xasprintf("sparkctl-%s-n%u-check.scope", jc->job_id, jc->node);
	r = run_quietly((const char *const[]){
		"systemd-run", jc->systemd_user ? "--user" : "--system", "--scope", "--quiet",
		"--collect", "--unit", unit, "--", "true", NULL });
	free(unit);
	if (r == 0)
		return 0;
	if (r < 0)
		strbuf_addf(why, "cannot run systemd-run: %s", strerror(-r));
	else
		strbuf_addf(why, "'systemd-run %s--scope' failed (status %d)",
			    jc->systemd_user ? "--user " : "", r);
	/*
	 * The likeliest cause for a user, and one systemd-run's status does
	 * not tell: it finds the user's manager through these, which a login
	 * (pam_systemd) sets and su, sudo or cron do not.
	 */
	if (jc->systemd_user && !getenv("XDG_RUNTIME_DIR") && !getenv("DBUS_SESSION_BUS_ADDRESS"))
		strbuf_addf(why,
			    ": XDG_RUNTIME_DIR is not set (a login sets it), and without it "
			    "the user's manager is not found (XDG_RUNTIME_DIR=/run/user/%u "
			    "where the user has one)",
			    (unsigned)geteuid());
	return -EPERM;
}

/*
 * A cgroup of sparkctl's own below this process's cgroup, open for struct
 * child, whose cgroup.procs this user may write (as placing a child needs).
 */
static int try_cgroup(struct job_container *jc, struct strbuf *why)
{
	struct cgroup_self self;
	char *name = job_name(jc->job_id, jc->node), *procs;
	int r = cgroup_self_read(&self);

	if (r <= 0) {
		strbuf_addstr(why, r == 0 ? "no cgroup v2 hierarchy is mounted"
					  : "cannot read this process's cgroup");
		free(name);
		return r == 0 ? -ENOENT : r;
	}
	jc->dir = xasprintf("%s/%s", self.path, name);
	if (mkdir(jc->dir, 0755) < 0 && errno != EEXIST) {
		r = -errno;
		strbuf_addf(why, "cannot make cgroup %s: %s", jc->dir, strerror(errno));
		goto fail;
	}
	procs = xasprintf("%s/cgroup.procs", jc->dir);
	jc->dir_fd = open(jc->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r = jc->dir_fd < 0 ? -errno : access(procs, W_OK) < 0 ? -errno : 0;
	if (r < 0)
		strbuf_addf(why, "cannot use %s: %s", jc->dir, strerror(-r));
	free(procs);
	if (r < 0) {
		if (jc->dir_fd >= 0)
			close(jc->dir_fd);
		jc->dir_fd = -1;
		rmdir(jc->dir);
		goto fail;
	}
	cgroup_self_release(&self);
	free(name);
	return 0;
fail:
	free(jc->dir);
	jc->dir = NULL;
	cgroup_self_release(&self);
	free(name);
	return r;
}

static void remove_tree(const char *dir);

int job_container_open(struct job_container *jc, const char *job_id, unsigned node,
		       enum contain_mode want, struct strbuf *err)
{
	struct strbuf why = STRBUF_INIT;
	int r = 0;

	memset(jc, 0, sizeof(*jc));
	jc->job_id = xstrdup(job_id);
	jc->node = node;
	jc->dir_fd = -1;
	strbuf_init(&jc->note, 0);
	jc->how = want;
	if (want == CONTAIN_SYSTEMD)
		r = try_systemd(jc, &why);
	else if (want == CONTAIN_CGROUP)
		r = try_cgroup(jc, &why);
	if (r < 0) {
		strbuf_addf(err, "cannot contain the job in a %s: %s",
			    want == CONTAIN_SYSTEMD ? "systemd scope" : "cgroup", why.buf);
		strbuf_release(&why);
		return r;
	}
	if (want == CONTAIN_AUTO) {
		/* The note says why each way before the one used was passed over. */
		jc->how = CONTAIN_SYSTEMD;
		if (try_systemd(jc, &jc->note) < 0) {
			strbuf_reset(&why);
			jc->how = try_cgroup(jc, &why) == 0 ? CONTAIN_CGROUP : CONTAIN_MARKS;
			if (jc->how == CONTAIN_MARKS)
				strbuf_addf(&jc->note, "; %s", why.buf);
		}
	}
	strbuf_release(&why);
	return 0;
}

void job_container_wrap(const struct job_container *jc, unsigned unit_id, struct strvec *wrap)
{
	if (jc->how != CONTAIN_SYSTEMD)
		return;
	strvec_pushl(wrap, "systemd-run", jc->systemd_user ? "--user" : "--system", "--scope",
		     "--quiet", "--collect", NULL);
	strvec_pushf(wrap, "--unit=sparkctl-%s-n%u-%u.scope", jc->job_id, jc->node, unit_id);
	strvec_push(wrap, "--");
}

void job_container_close(struct job_container *jc)
{
	if (jc->dir_fd >= 0)
		close(jc->dir_fd);
	jc->dir_fd = -1;
	/* systemd collects its scopes (--collect); ours is known. */
	if (jc->how == CONTAIN_CGROUP && jc->dir)
		remove_tree(jc->dir);
	free(jc->dir);
	free(jc->job_id);
	strbuf_release(&jc->note);
	memset(jc, 0, sizeof(*jc));
	jc->dir_fd = -1;
}

struct name_match {
	char *prefix;  /* "sparkctl-JOB-nNODE", or "sparkctl-JOB-n" */
	bool any_node; /* a node's number follows the prefix */
	bool scopes;   /* also "PREFIX-ID.scope" */
};

static bool is_job_cgroup(const char *name, const void *data)
{
	const struct name_match *m = data;
	size_t n = strlen(m->prefix);

	if (strncmp(name, m->prefix, n))
		return false;
	if (m->any_node) {
		size_t digits = strspn(name + n, "0123456789");
		if (!digits)
			return false;
		n += digits;
	}
	if (!name[n])
		return true;
	/* The prefix of node 1 is the prefix of node 10's names too. */
	return m->scopes && name[n] == '-' && strlen(name) > n + 6 &&
	       streq(name + strlen(name) - 6, ".scope");
}

static int find_job(const char *job_id, unsigned node, bool scopes, struct strvec *out)
{
	struct name_match m = { .prefix = find_prefix(job_id, node),
				.any_node = node == CONTAIN_ANY_NODE,
				.scopes = scopes };
	struct cgroup_self self;
	int r = cgroup_self_read(&self);

	if (r > 0)
		r = cgroup_find(self.mount, is_job_cgroup, &m, out);
	cgroup_self_release(&self);
	free(m.prefix);
	return r;
}

int contain_find(const char *job_id, unsigned node, struct strvec *out)
{
	return find_job(job_id, node, true, out);
}

void contain_procs(const char *job_id, unsigned node, struct proc_list *out)
{
	struct strvec dirs = STRVEC_INIT;

	contain_find(job_id, node, &dirs);
	for (size_t i = 0; i < dirs.nr; i++)
		cgroup_procs_read(dirs.v[i], out);
	strvec_clear(&dirs);
}

/* Write "1" to dir/cgroup.kill (Linux 5.14): 0, or -errno. */
static int write_kill(const char *dir)
{
	char *path = xasprintf("%s/cgroup.kill", dir);
	int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;

	free(path);
	if (fd < 0)
		return -errno;
	if (write(fd, "1", 1) != 1)
		r = -errno;
	close(fd);
	return r;
}

static void kill_dir(const char *dir)
{
	struct proc_list l = { 0 };

	if (write_kill(dir) == 0)
		return;
	cgroup_procs_read(dir, &l);
	procs_signal(&l, SIGKILL);
	proc_list_release(&l);
}

void contain_kill(const char *job_id, unsigned node)
{
	struct strvec dirs = STRVEC_INIT;

	contain_find(job_id, node, &dirs);
	for (size_t i = 0; i < dirs.nr; i++)
		kill_dir(dirs.v[i]);
	strvec_clear(&dirs);
}

/* The agent knows its own cgroup; the scopes systemd made are looked for. */
void job_container_procs(const struct job_container *jc, struct proc_list *out)
{
	if (jc->how == CONTAIN_CGROUP)
		cgroup_procs_read(jc->dir, out);
	else if (jc->how == CONTAIN_SYSTEMD)
		contain_procs(jc->job_id, jc->node, out);
}

void job_container_kill(const struct job_container *jc)
{
	if (jc->how == CONTAIN_CGROUP)
		kill_dir(jc->dir);
	else if (jc->how == CONTAIN_SYSTEMD)
		contain_kill(jc->job_id, jc->node);
}

/* Remove dir and the cgroups below it, deepest first; a busy one stays. */
static bool any_name(const char *name, const void *data)
{
	(void)name;
	(void)data;
	return true;
}

static void remove_tree(const char *dir)
{
	struct strvec below = STRVEC_INIT;

	cgroup_find(dir, any_name, NULL, &below);
	for (size_t i = 0; i < below.nr; i++)
		remove_tree(below.v[i]);
	rmdir(dir);
	strvec_clear(&below);
}

void contain_remove(const char *job_id, unsigned node)
{
	struct strvec dirs = STRVEC_INIT;

	find_job(job_id, node, false, &dirs);
	for (size_t i = 0; i < dirs.nr; i++)
		remove_tree(dirs.v[i]);
	strvec_clear(&dirs);
}
