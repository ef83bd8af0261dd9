/*
 * child.c - the only code in sparkctl that creates processes.
 *
 * Children start through posix_spawn() (a vfork-like clone: cheap even
 * from a large process), except those that must die with this process:
 * PR_SET_PDEATHSIG has no spawn attribute, so they are forked, and the
 * forked child calls async-signal-safe functions only (the caller may have
 * threads, from the GPU libraries).  Either way the program is found in
 * PATH before the start, so "not found" is an error of child_start() and
 * never a child that exits 127, and an exec that fails in a forked child
 * sends its errno back through a close-on-exec pipe.  A child for a cgroup
 * is made in it by clone3(CLONE_INTO_CGROUP): moving a running process
 * into a cgroup waits for an RCU grace period (10-20 ms), being born there
 * does not.
 */
#include "sparkctl.h"

#include <signal.h>
#include <spawn.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "lib/xalloc.h"
#include "proc/child.h"

extern char **environ;

#if defined(__GLIBC__)
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34)
#define HAVE_ADDCLOSEFROM 1
#endif
#endif

/* Where execvp() looks when PATH is not set. */
#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

void child_init(struct child *c)
{
	memset(c, 0, sizeof(*c));
	strvec_init(&c->args);
	strvec_init(&c->env);
	strvec_init(&c->wrap);
	c->in_fd = c->out_fd = c->err_fd = c->pidfd = c->cgroup_fd = -1;
}

void child_close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void child_release(struct child *c)
{
	if (c->in == CHILD_IO_PIPE)
		child_close_fd(&c->in_fd);
	if (c->out == CHILD_IO_PIPE)
		child_close_fd(&c->out_fd);
	if (c->err == CHILD_IO_PIPE)
		child_close_fd(&c->err_fd);
	child_close_fd(&c->pidfd);
	strvec_clear(&c->args);
	strvec_clear(&c->env);
	strvec_clear(&c->wrap);
	free(c->program);
	c->program = NULL;
}

/* The value of NAME in a list of "K=V" entries, or NULL. */
static const char *env_value(char *const *envp, const char *name)
{
	size_t len = strlen(name);

	for (; *envp; envp++)
		if (!strncmp(*envp, name, len) && (*envp)[len] == '=')
			return *envp + len + 1;
	return NULL;
}

/*
 * The file execve() runs for name, as execvp() finds it: name itself when
 * it holds a '/', else the first executable regular file of that name in
 * path.  NULL with *why -ENOENT (nowhere) or -EACCES (found, not runnable).
 */
char *child_find_program(const char *name, const char *path, int *why)
{
	*why = -ENOENT;
	if (!*name)
		return NULL;
	if (strchr(name, '/'))
		return xstrdup(name);
	for (const char *dir = path ? path : DEFAULT_PATH; dir;) {
		const char *colon = strchr(dir, ':');
		size_t len = colon ? (size_t)(colon - dir) : strlen(dir);
		/* An empty entry is the working directory. */
		char *cand = len ? xasprintf("%.*s/%s", (int)len, dir, name) : xstrdup(name);
		struct stat st;

		if (stat(cand, &st) == 0) {
			if (S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
				return cand;
			*why = -EACCES;
		}
		free(cand);
		dir = colon ? colon + 1 : NULL;
	}
	return NULL;
}

/* The child's environment: environ with c->env set on top, or c->env alone. */
static void build_env(const struct child *c, struct strvec *out)
{
	if (!c->clean_env)
		for (char **e = environ; e && *e; e++) {
			const char *eq = strchr(*e, '=');
			bool replaced = false;
			for (size_t i = 0; eq && i < c->env.nr && !replaced; i++)
				replaced = !strncmp(c->env.v[i], *e, (size_t)(eq - *e) + 1);
			if (!replaced)
				strvec_push(out, *e);
		}
	for (size_t i = 0; i < c->env.nr; i++)
		strvec_push(out, c->env.v[i]);
}

/*
 * A pipe whose ends are both above 2: when this process runs with stdin,
 * stdout or stderr closed, pipe2() can return 0..2, and the child's dup2()
 * onto 0..2 would then overwrite one end with another.
 */
static int make_pipe(int fds[2])
{
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	for (int i = 0; i < 2; i++) {
		if (fds[i] > 2)
			continue;
		int fd = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
		int r = fd < 0 ? -errno : 0;
		close(fds[i]);
		fds[i] = fd;
		if (r < 0) {
			child_close_fd(&fds[0]);
			child_close_fd(&fds[1]);
			return r;
		}
	}
	return 0;
}

static int set_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

/* The three descriptors as the child gets them, prepared before the start. */
struct stdio_plan {
	int fd[3];     /* what becomes 0, 1, 2; -1: inherit */
	int ours[3];   /* our end of each pipe, -1 if none */
	int theirs[3]; /* their end of each pipe (or /dev/null), closed after the start */
	int report[2]; /* forked children: the exec error goes back here */
	char *program; /* what execve() runs: the program, or the wrapper */
	char *found;   /* the program (args.v[0] looked up in PATH) */
	struct strvec argv;
	struct strvec env;
};

static void plan_release(struct stdio_plan *p)
{
	for (int i = 0; i < 3; i++) {
		child_close_fd(&p->ours[i]);
		child_close_fd(&p->theirs[i]);
	}
	child_close_fd(&p->report[0]);
	child_close_fd(&p->report[1]);
	free(p->program);
	free(p->found);
	strvec_clear(&p->argv);
	strvec_clear(&p->env);
}

static int plan_stream(struct stdio_plan *p, int n, enum child_io io, int given)
{
	int fds[2], r;

	switch (io) {
	case CHILD_IO_INHERIT:
		return 0;
	case CHILD_IO_FD:
		if (given < 0)
			return -EBADF;
		p->fd[n] = given;
		return 0;
	case CHILD_IO_NULL:
		p->theirs[n] = open("/dev/null", (n == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
		if (p->theirs[n] < 0)
			return -errno;
		/* Above 2, for the same reason as the pipes'. */
		if (p->theirs[n] <= 2) {
			int fd = fcntl(p->theirs[n], F_DUPFD_CLOEXEC, 3);
			close(p->theirs[n]);
			p->theirs[n] = fd;
			if (fd < 0)
				return -errno;
		}
		p->fd[n] = p->theirs[n];
		return 0;
	case CHILD_IO_PIPE:
		if ((r = make_pipe(fds)) < 0)
			return r;
		/* stdin: we write fds[1]; stdout and stderr: we read fds[0]. */
		p->ours[n] = n == 0 ? fds[1] : fds[0];
		p->theirs[n] = n == 0 ? fds[0] : fds[1];
		p->fd[n] = p->theirs[n];
		return set_nonblock(p->ours[n]);
	}
	return -EINVAL;
}

/* What posix_spawn() cannot do needs a fork. */
static bool forks(const struct child *c)
{
	return c->die_with_parent || c->cgroup_fd >= 0;
}

static int plan_make(const struct child *c, struct stdio_plan *p)
{
	const enum child_io io[3] = { c->in, c->out, c->err };
	const int given[3] = { c->in_fd, c->out_fd, c->err_fd };
	int r;

	for (int i = 0; i < 3; i++)
		p->fd[i] = p->ours[i] = p->theirs[i] = -1;
	p->report[0] = p->report[1] = -1;
	strvec_init(&p->env);
	strvec_init(&p->argv);
	p->program = p->found = NULL;
	if (!c->args.nr)
		return -EINVAL;
	build_env(c, &p->env);
	p->found = child_find_program(c->args.v[0], env_value(p->env.v, "PATH"), &r);
	if (!p->found)
		return r;
	if (c->wrap.nr) {
		p->program = child_find_program(c->wrap.v[0], env_value(p->env.v, "PATH"), &r);
		if (!p->program)
			return r;
		for (size_t i = 0; i < c->wrap.nr; i++)
			strvec_push(&p->argv, c->wrap.v[i]);
		strvec_push(&p->argv, p->found);
	} else {
		p->program = xstrdup(p->found);
		strvec_push(&p->argv, c->args.v[0]);
	}
	for (size_t i = 1; i < c->args.nr; i++)
		strvec_push(&p->argv, c->args.v[i]);
	for (int i = 0; i < 3; i++)
		if ((r = plan_stream(p, i, io[i], given[i])) < 0)
			return r;
	if (forks(c) && (r = make_pipe(p->report)) < 0)
		return r;
	return 0;
}

static int spawn(const struct child *c, const struct stdio_plan *p, pid_t *ret_pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, defaults;
	short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
	int e;

	if ((e = posix_spawn_file_actions_init(&fa)) != 0)
		return -e;
	if ((e = posix_spawnattr_init(&attr)) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return -e;
	}
	/* dup2() clears close-on-exec on the copy; every other descriptor closes at exec. */
	for (int i = 0; i < 3 && !e; i++)
		if (p->fd[i] >= 0)
			e = posix_spawn_file_actions_adddup2(&fa, p->fd[i], i);
	if (!e && c->dir)
		e = posix_spawn_file_actions_addchdir_np(&fa, c->dir);
#ifdef HAVE_ADDCLOSEFROM
	/* Nor does it get descriptors this process left inheritable. */
	if (!e)
		e = posix_spawn_file_actions_addclosefrom_np(&fa, STDERR_FILENO + 1);
#endif
	sigemptyset(&none);
	sigemptyset(&defaults);
	sigaddset(&defaults, SIGPIPE);
	if (c->group == CHILD_OWN_GROUP)
		flags |= POSIX_SPAWN_SETPGROUP;
	else if (c->group == CHILD_OWN_SESSION)
		flags |= POSIX_SPAWN_SETSID;
	if (!e)
		e = posix_spawnattr_setflags(&attr, flags);
	if (!e)
		e = posix_spawnattr_setpgroup(&attr, 0);
	if (!e)
		e = posix_spawnattr_setsigmask(&attr, &none);
	if (!e)
		e = posix_spawnattr_setsigdefault(&attr, &defaults);
	/* glibc reports a failed exec or file action itself, and reaps the child. */
	if (!e)
		e = posix_spawn(ret_pid, p->program, &fa, &attr, p->argv.v, p->env.v);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	return -e;
}

/* A kernel before 5.7 has no CLONE_INTO_CGROUP: the child moves itself ("0": the writer). */
static int enter_cgroup(int cgroup_fd)
{
	int fd = openat(cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, "0", 1);
	close(fd);
	return n == 1 ? 0 : -1;
}

/* The forked child's side: async-signal-safe calls only. */
static ATTR_NORETURN void exec_forked(const struct child *c, const struct stdio_plan *p,
				      pid_t parent, bool move_to_cgroup)
{
	sigset_t none;
	int e;

	if (c->group == CHILD_OWN_SESSION)
		setsid();
	else if (c->group == CHILD_OWN_GROUP)
		setpgid(0, 0);
	if (c->die_with_parent) {
		prctl(PR_SET_PDEATHSIG, c->death_signal ? c->death_signal : SIGKILL);
		/* The parent died before the line above: nobody would kill us. */
		if (getppid() != parent)
			_exit(127);
	}
	if (move_to_cgroup && enter_cgroup(c->cgroup_fd) < 0) {
		errno = ECHILD;
		goto fail;
	}
	for (int i = 0; i < 3; i++) {
		if (p->fd[i] < 0)
			continue;
		if (p->fd[i] == i ? fcntl(i, F_SETFD, 0) < 0 : dup2(p->fd[i], i) < 0)
			goto fail;
	}
	if (c->dir && chdir(c->dir) < 0)
		goto fail;
	/* Marked, not closed: the report pipe must stay open until the exec. */
	close_range(STDERR_FILENO + 1, ~0U, CLOSE_RANGE_CLOEXEC);
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve(p->program, p->argv.v, p->env.v);
fail:
	e = errno;
	if (write(p->report[1], &e, sizeof(e)) < 0)
		_exit(127);
	_exit(e == ENOENT ? 127 : 126);
}

/* clone3()'s arguments up to .cgroup (CLONE_ARGS_SIZE_VER2), as <linux/sched.h> has them. */
struct clone3_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
		set_tid_size, cgroup;
};
#define CLONE3_INTO_CGROUP 0x200000000ULL

/*
 * fork() into the cgroup: the child's pid in the parent, 0 in the child,
 * -1 with errno.  ENOSYS where the kernel cannot (the caller forks).
 */
static pid_t fork_into_cgroup(int cgroup_fd)
{
#ifdef SYS_clone3
	struct clone3_args args = { .flags = CLONE3_INTO_CGROUP,
				    .exit_signal = SIGCHLD,
				    .cgroup = (uint64_t)cgroup_fd };
	long pid = syscall(SYS_clone3, &args, sizeof(args));

	/* Before 5.7 the flag is unknown (EINVAL, E2BIG for the size); before 5.3, clone3 is. */
	if (pid < 0 && (errno == EINVAL || errno == E2BIG))
		errno = ENOSYS;
	return (pid_t)pid;
#else
	(void)cgroup_fd;
	errno = ENOSYS;
	return -1;
#endif
}

static int fork_child(const struct child *c, struct stdio_plan *p, pid_t *ret_pid)
{
	pid_t parent = getpid(), pid = -1;
	bool move_to_cgroup = false;
	int child_errno = 0;
	ssize_t n;

	if (c->cgroup_fd >= 0) {
		pid = fork_into_cgroup(c->cgroup_fd);
		if (pid < 0 && errno != ENOSYS)
			return errno == EAGAIN || errno == ENOMEM ? -errno : -ECHILD;
		move_to_cgroup = pid < 0;
	}
	if (pid < 0)
		pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		exec_forked(c, p, parent, move_to_cgroup);
	child_close_fd(&p->report[1]);
	do {
		n = read(p->report[0], &child_errno, sizeof(child_errno));
	} while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(child_errno) && child_errno) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		return -child_errno;
	}
	*ret_pid = pid;
	return 0;
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	/* Close-on-exec by definition.  Fails on kernels before 5.3 or under seccomp. */
	long fd = syscall(SYS_pidfd_open, pid, 0);
	if (fd >= 0)
		return (int)fd;
#else
	(void)pid;
#endif
	return -1;
}

int child_start(struct child *c)
{
	struct stdio_plan p;
	int *ours[3] = { &c->in_fd, &c->out_fd, &c->err_fd };
	const enum child_io io[3] = { c->in, c->out, c->err };
	pid_t pid = 0;
	int r;

	c->pid = 0;
	c->exited = c->reaped = false;
	c->wstatus = 0;
	r = plan_make(c, &p);
	free(c->program);
	c->program = p.found ? xstrdup(p.found) : NULL;
	if (r == 0)
		r = forks(c) ? fork_child(c, &p, &pid) : spawn(c, &p, &pid);
	if (r == 0) {
		c->pid = pid;
		c->pidfd = open_pidfd(pid);
		for (int i = 0; i < 3; i++)
			if (io[i] == CHILD_IO_PIPE) {
				*ours[i] = p.ours[i];
				p.ours[i] = -1;
			}
	}
	plan_release(&p);
	return r;
}

bool child_check_exit(struct child *c)
{
	siginfo_t si;

	if (c->exited || !c->pid)
		return c->exited;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0) {
		if (si.si_pid != c->pid)
			return false;
		c->exited = true;
		/* The status as waitpid() will give it, known before the reap. */
		if (si.si_code == CLD_EXITED)
			c->wstatus = W_EXITCODE(si.si_status, 0);
		else
			c->wstatus = W_EXITCODE(0, si.si_status) |
				     (si.si_code == CLD_DUMPED ? WCOREFLAG : 0);
	} else if (errno == ECHILD) {
		/* Reaped behind our back (SIGCHLD ignored): its status is lost. */
		c->exited = c->reaped = true;
		c->wstatus = -1;
	}
	return c->exited;
}

void child_reaped(struct child *c, int wstatus)
{
	c->exited = c->reaped = true;
	c->wstatus = wstatus;
	child_close_fd(&c->pidfd);
}

int child_finish(struct child *c)
{
	int st = 0;
	pid_t r;

	if (!c->reaped && c->pid > 0) {
		do {
			r = waitpid(c->pid, &st, 0);
		} while (r < 0 && errno == EINTR);
		child_reaped(c, r == c->pid ? st : -1);
	}
	child_close_fd(&c->pidfd);
	return child_status(c, NULL);
}

int child_status(const struct child *c, bool *signaled)
{
	if (signaled)
		*signaled = false;
	if (!c->exited || c->wstatus == -1)
		return -1;
	if (WIFEXITED(c->wstatus))
		return WEXITSTATUS(c->wstatus);
	if (WIFSIGNALED(c->wstatus)) {
		if (signaled)
			*signaled = true;
		return 128 + WTERMSIG(c->wstatus);
	}
	return -1;
}

int child_signal(const struct child *c, int sig)
{
	if (!c->pid || c->reaped)
		return -ESRCH;
	if (kill(c->group == CHILD_SAME_GROUP ? c->pid : -c->pid, sig) < 0)
		return -errno;
	return 0;
}

int child_run_command(const char *const *argv)
{
	struct child c;
	int r;

	child_init(&c);
	for (; *argv; argv++)
		strvec_push(&c.args, *argv);
	r = child_start(&c);
	if (r == 0)
		r = child_finish(&c);
	/* Its status lost (SIGCHLD ignored by this process): no number to give. */
	if (r == -1)
		r = -ECHILD;
	child_release(&c);
	return r;
}
