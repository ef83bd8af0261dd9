/*
 * test-proc.c - the process layer: the event loop (proc/loop.h) and child
 * processes (proc/child.h), with real processes and pipes.
 */
#include "sparkctl.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "lib/clock.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "probe/cgroups.h"
#include "proc/child.h"
#include "proc/contain.h"
#include "proc/loop.h"
#include "test_util.h"

/* ---- the loop ------------------------------------------------------------ */

struct order {
	char seen[16];
	size_t n;
};

static void mark(struct loop *loop, void *data)
{
	struct order *o = data;
	(void)loop;
	o->seen[o->n++] = 'x';
}

struct named_timer {
	struct loop_timer t;
	struct order *order;
	char name;
};

static void fire_named(struct loop *loop, void *data)
{
	struct named_timer *nt = data;
	(void)loop;
	nt->order->seen[nt->order->n++] = nt->name;
}

/* Timers fire in time order, each once per arming; the loop ends when none is left. */
static void test_timers_in_order(void **state)
{
	struct loop loop;
	struct order o = { 0 };
	struct named_timer t[3] = { { .order = &o, .name = 'c' },
				    { .order = &o, .name = 'a' },
				    { .order = &o, .name = 'b' } };
	uint64_t start = monotonic_ms();

	(void)state;
	loop_init(&loop);
	for (size_t i = 0; i < 3; i++)
		loop_timer_init(&t[i].t, fire_named, &t[i]);
	loop_timer_arm(&loop, &t[0].t, start + 60);
	loop_timer_arm(&loop, &t[1].t, start + 20);
	loop_timer_arm(&loop, &t[2].t, start + 40);
	assert_int_equal(loop_run(&loop), 0);
	assert_string_equal(o.seen, "abc");
	assert_true(monotonic_ms() >= start + 60);
	loop_release(&loop);
}

/* A cancelled timer never fires; re-arming moves a timer, it does not add one. */
static void test_timer_cancel_and_rearm(void **state)
{
	struct loop loop;
	struct order o = { 0 };
	struct loop_timer a, b;

	(void)state;
	loop_init(&loop);
	loop_timer_init(&a, mark, &o);
	loop_timer_init(&b, mark, &o);
	loop_timer_arm_in(&loop, &a, 10);
	loop_timer_arm_in(&loop, &a, 20);
	loop_timer_arm_in(&loop, &b, 5);
	loop_timer_cancel(&loop, &b);
	assert_int_equal(loop_run(&loop), 0);
	assert_string_equal(o.seen, "x");
	loop_release(&loop);
}

struct reader {
	struct strbuf got;
	int fd;
	bool eof;
};

static void read_all(struct loop *loop, int fd, short revents, void *data)
{
	struct reader *r = data;
	char buf[64];
	ssize_t n = read(fd, buf, sizeof(buf));

	(void)revents;
	if (n > 0) {
		strbuf_add(&r->got, buf, (size_t)n);
		return;
	}
	r->eof = true;
	loop_unwatch_fd(loop, fd);
}

/* A descriptor is called back while readable; unwatching it ends the loop. */
static void test_fd_until_eof(void **state)
{
	struct loop loop;
	struct reader r = { .got = STRBUF_INIT };
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "hello", 5), 5);
	close(p[1]);
	loop_init(&loop);
	loop_watch_fd(&loop, p[0], POLLIN, read_all, &r);
	assert_int_equal(loop_run(&loop), 0);
	assert_true(r.eof);
	assert_string_equal(r.got.buf, "hello");
	close(p[0]);
	strbuf_release(&r.got);
	loop_release(&loop);
}

struct closer {
	int fds[2]; /* two read ends, both readable */
	int calls;
};

/* The first callback unwatches and closes the other descriptor of the round. */
static void close_other(struct loop *loop, int fd, short revents, void *data)
{
	struct closer *c = data;
	int other = fd == c->fds[0] ? c->fds[1] : c->fds[0];

	(void)revents;
	c->calls++;
	loop_unwatch_fd(loop, fd);
	loop_unwatch_fd(loop, other);
}

static void test_unwatch_during_round(void **state)
{
	struct loop loop;
	struct closer c = { 0 };
	int a[2], b[2];

	(void)state;
	assert_int_equal(pipe(a), 0);
	assert_int_equal(pipe(b), 0);
	assert_int_equal(write(a[1], "1", 1), 1);
	assert_int_equal(write(b[1], "2", 1), 1);
	c.fds[0] = a[0];
	c.fds[1] = b[0];
	loop_init(&loop);
	loop_watch_fd(&loop, a[0], POLLIN, close_other, &c);
	loop_watch_fd(&loop, b[0], POLLIN, close_other, &c);
	assert_int_equal(loop_run(&loop), 0);
	assert_int_equal(c.calls, 1);
	for (int i = 0; i < 2; i++) {
		close(a[i]);
		close(b[i]);
	}
	loop_release(&loop);
}

static void got_signal(struct loop *loop, const struct signalfd_siginfo *si, void *data)
{
	int *sig = data;
	*sig = (int)si->ssi_signo;
	loop_stop(loop);
}

/* A watched signal arrives as a callback, and the old mask is back after the loop. */
static void test_signals(void **state)
{
	struct loop loop;
	sigset_t mask, now;
	int sig = 0;

	(void)state;
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	loop_init(&loop);
	assert_int_equal(loop_watch_signals(&loop, &mask, got_signal, &sig), 0);
	kill(getpid(), SIGUSR1);
	/* Only the signal is watched: loop_run() would return at once, so wait a round. */
	while (!sig)
		assert_int_equal(loop_run_once(&loop, 1000), 0);
	assert_int_equal(sig, SIGUSR1);
	loop_release(&loop);
	sigprocmask(SIG_SETMASK, NULL, &now);
	assert_false(sigismember(&now, SIGUSR1));
}

/*
 * loop_run_until() returns at its deadline while something is still
 * waited for, makes no round once the deadline is past, and returns at
 * once when nothing is left to wait for.
 */
static void test_run_until(void **state)
{
	struct loop loop;
	struct order o = { 0 };
	struct reader r = { .got = STRBUF_INIT };
	struct loop_timer late;
	uint64_t start, took;
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	loop_init(&loop);
	loop_watch_fd(&loop, p[0], POLLIN, read_all, &r);
	loop_timer_init(&late, mark, &o);
	loop_timer_arm_in(&loop, &late, 60000);
	start = monotonic_ms();
	assert_int_equal(loop_run_until(&loop, start + 50), 0);
	took = monotonic_ms() - start;
	assert_true(took >= 50 && took < 30000);
	assert_int_equal(o.n, 0);

	assert_int_equal(write(p[1], "x", 1), 1);
	assert_int_equal(loop_run_until(&loop, start), 0);
	assert_int_equal(r.got.len, 0);

	loop_unwatch_fd(&loop, p[0]);
	loop_timer_cancel(&loop, &late);
	start = monotonic_ms();
	assert_int_equal(loop_run_until(&loop, start + 60000), 0);
	assert_true(monotonic_ms() - start < 30000);
	loop_release(&loop);
	close(p[0]);
	close(p[1]);
	strbuf_release(&r.got);
}

/* ---- children ------------------------------------------------------------ */

static void test_run_command_status(void **state)
{
	(void)state;
	assert_int_equal(child_run_command((const char *const[]){ "true", NULL }), 0);
	assert_int_equal(child_run_command((const char *const[]){ "sh", "-c", "exit 7", NULL }), 7);
	assert_int_equal(child_run_command((const char *const[]){ "sh", "-c", "kill -9 $$", NULL }),
			 128 + SIGKILL);
	assert_int_equal(
		child_run_command((const char *const[]){ "sparkctl-no-such-program", NULL }),
		-ENOENT);
	assert_int_equal(child_run_command((const char *const[]){ "/etc/passwd", NULL }), -EACCES);
}

struct capture {
	struct child c;
	struct reader out, err;
	int status;
	bool ended;
};

static void child_done(struct loop *loop, struct child *c, void *data)
{
	struct capture *cap = data;

	(void)loop;
	cap->ended = true;
	cap->status = child_finish(c);
}

/* Pipes, the environment, the working directory, and the exit through the loop. */
static void start_and_capture(struct capture *cap, bool fork_path)
{
	struct loop loop;

	cap->out = (struct reader){ .got = STRBUF_INIT };
	cap->err = (struct reader){ .got = STRBUF_INIT };
	cap->c.out = cap->c.err = CHILD_IO_PIPE;
	cap->c.die_with_parent = fork_path;
	assert_int_equal(child_start(&cap->c), 0);
	loop_init(&loop);
	loop_watch_fd(&loop, cap->c.out_fd, POLLIN, read_all, &cap->out);
	loop_watch_fd(&loop, cap->c.err_fd, POLLIN, read_all, &cap->err);
	loop_watch_child(&loop, &cap->c, child_done, cap);
	assert_int_equal(loop_run(&loop), 0);
	loop_release(&loop);
	assert_true(cap->ended && cap->out.eof && cap->err.eof);
}

static void test_child_pipes_env_dir(void **state)
{
	(void)state;
	for (int fork_path = 0; fork_path < 2; fork_path++) {
		struct capture cap;
		child_init(&cap.c);
		strvec_pushl(&cap.c.args, "sh", "-c",
			     "echo \"$SPARKCTL_TEST_VAR\"; pwd; read x || echo eof; echo err >&2; "
			     "exit 3",
			     NULL);
		strvec_push(&cap.c.env, "SPARKCTL_TEST_VAR=one two");
		cap.c.dir = "/";
		cap.c.in = CHILD_IO_NULL;
		start_and_capture(&cap, fork_path);
		assert_string_equal(cap.out.got.buf, "one two\n/\neof\n");
		assert_string_equal(cap.err.got.buf, "err\n");
		assert_int_equal(cap.status, 3);
		child_release(&cap.c);
		strbuf_release(&cap.out.got);
		strbuf_release(&cap.err.got);
	}
}

/* A clean environment holds only what was given; a program is found in its PATH. */
static void test_child_clean_env(void **state)
{
	struct capture cap;

	(void)state;
	setenv("SPARKCTL_TEST_LEAK", "1", 1);
	child_init(&cap.c);
	strvec_pushl(&cap.c.args, "env", NULL);
	strvec_pushl(&cap.c.env, "PATH=/usr/bin:/bin", "A=1", NULL);
	cap.c.clean_env = true;
	start_and_capture(&cap, false);
	assert_string_equal(cap.out.got.buf, "PATH=/usr/bin:/bin\nA=1\n");
	child_release(&cap.c);
	strbuf_release(&cap.out.got);
	strbuf_release(&cap.err.got);
	unsetenv("SPARKCTL_TEST_LEAK");
}

/* A forked child whose directory does not exist: an error of the start, nothing left. */
static void test_child_bad_dir(void **state)
{
	for (int fork_path = 0; fork_path < 2; fork_path++) {
		struct child c;
		child_init(&c);
		strvec_push(&c.args, "true");
		c.dir = "/nonexistent-sparkctl-dir";
		c.die_with_parent = fork_path;
		assert_int_equal(child_start(&c), -ENOENT);
		assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
		assert_int_equal(errno, ECHILD);
		child_release(&c);
	}
	(void)state;
}

/*
 * program tells a program not found from one found that could not run: a
 * script whose interpreter is missing fails with -ENOENT too.
 */
static void test_child_program(void **state)
{
	char script[] = "/tmp/sparkctl-test-XXXXXX";
	int fd = mkstemp(script);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "#!/nonexistent-sparkctl-interpreter\n", 36), 36);
	close(fd);
	assert_int_equal(chmod(script, 0755), 0);
	for (int fork_path = 0; fork_path < 2; fork_path++) {
		struct child c;
		child_init(&c);
		strvec_push(&c.args, "sparkctl-no-such-program");
		c.die_with_parent = fork_path;
		assert_int_equal(child_start(&c), -ENOENT);
		assert_null(c.program);
		strvec_clear(&c.args);
		strvec_push(&c.args, script);
		assert_int_equal(child_start(&c), -ENOENT);
		assert_string_equal(c.program, script);
		strvec_clear(&c.args);
		strvec_push(&c.args, "true");
		assert_int_equal(child_start(&c), 0);
		assert_non_null(c.program);
		assert_non_null(strstr(c.program, "/true"));
		assert_int_equal(child_finish(&c), 0);
		child_release(&c);
		assert_null(c.program);
	}
	unlink(script);
}

/* pid exists and is not a zombie. */
static bool process_alive(pid_t pid)
{
	char path[64], buf[512];
	bool alive = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f && fgets(buf, sizeof(buf), f))
		alive = !strstr(buf, ") Z ");
	if (f)
		fclose(f);
	return alive;
}

/* Its own group: child_signal() reaches what the child started, too. */
static void test_child_signal_group(void **state)
{
	struct child c;
	char line[32] = { 0 };
	pid_t grandchild;

	(void)state;
	child_init(&c);
	strvec_pushl(&c.args, "sh", "-c", "sleep 60 & echo $!; wait", NULL);
	c.out = CHILD_IO_PIPE;
	c.group = CHILD_OWN_GROUP;
	assert_int_equal(child_start(&c), 0);
	/* The pipe is non-blocking: wait for the line. */
	for (size_t n = 0; !strchr(line, '\n');) {
		ssize_t r = read(c.out_fd, line + n, sizeof(line) - 1 - n);
		if (r > 0)
			n += (size_t)r;
		else
			usleep(1000);
	}
	grandchild = (pid_t)strtol(line, NULL, 10);
	assert_int_equal(getpgid(grandchild), c.pid);
	assert_int_equal(child_signal(&c, SIGKILL), 0);
	assert_int_equal(child_finish(&c), 128 + SIGKILL);
	assert_int_equal(child_signal(&c, SIGKILL), -ESRCH);
	/* The grandchild went with its group (init may take a moment to reap it). */
	for (int i = 0; i < 500 && process_alive(grandchild); i++)
		usleep(10000);
	assert_false(process_alive(grandchild));
	child_release(&c);
}

/*
 * A wrapper runs the program by its full path, with the program's own
 * arguments after its words; "not found" is still about the program.
 */
static void test_child_wrap(void **state)
{
	(void)state;
	for (int fork_path = 0; fork_path < 2; fork_path++) {
		struct capture cap;
		child_init(&cap.c);
		strvec_pushl(&cap.c.wrap, "sh", "-c", "echo \"$0|$*\"", NULL);
		strvec_pushl(&cap.c.args, "true", "a b", "c", NULL);
		strvec_push(&cap.c.env, "PATH=/bin");
		start_and_capture(&cap, fork_path);
		assert_string_equal(cap.out.got.buf, "/bin/true|a b c\n");
		assert_string_equal(cap.c.program, "/bin/true");
		child_release(&cap.c);
		strbuf_release(&cap.out.got);
		strbuf_release(&cap.err.got);

		child_init(&cap.c);
		strvec_pushl(&cap.c.wrap, "sh", "-c", "exit 0", NULL);
		strvec_pushl(&cap.c.args, "no-such-program-here", NULL);
		cap.c.die_with_parent = fork_path;
		assert_int_equal(child_start(&cap.c), -ENOENT);
		assert_null(cap.c.program);
		child_release(&cap.c);
	}
}

/*
 * A child for a cgroup is born in it (its /proc/self/cgroup says so); a
 * directory that is not a cgroup is -ECHILD and nothing runs.  Needs a
 * cgroup v2 hierarchy this user may write below its own cgroup.
 */
static void test_child_cgroup(void **state)
{
	struct cgroup_self self;
	struct capture cap;
	char *dir, *want;
	int fd;

	(void)state;
	if (cgroup_self_read(&self) <= 0)
		skip();
	dir = xasprintf("%s/sparkctl-unit-test-%d", self.path, (int)getpid());
	if (mkdir(dir, 0755) < 0) {
		free(dir);
		cgroup_self_release(&self);
		skip();
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	child_init(&cap.c);
	strvec_pushl(&cap.c.args, "sh", "-c", "grep '^0::' /proc/self/cgroup", NULL);
	cap.c.cgroup_fd = fd;
	start_and_capture(&cap, false);
	want = xasprintf("0::%s\n", dir + strlen(self.mount));
	assert_string_equal(cap.out.got.buf, want);
	free(want);
	child_release(&cap.c);
	strbuf_release(&cap.out.got);
	strbuf_release(&cap.err.got);
	close(fd);

	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	child_init(&cap.c);
	strvec_pushl(&cap.c.args, "sh", "-c", "echo ran", NULL);
	cap.c.cgroup_fd = fd;
	assert_int_equal(child_start(&cap.c), -ECHILD);
	child_release(&cap.c);
	close(fd);
	assert_int_equal(rmdir(dir), 0);
	free(dir);
	cgroup_self_release(&self);
}

static void test_cgroup_parsers(void **state)
{
	const char *mountinfo = "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
				"30 25 0:26 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
				"35 25 0:30 /user.slice /sys/fs/cgroup/uni\\040fied rw shared:9 - "
				"cgroup2 cgroup2 rw\n";
	char *mount = NULL, *root = NULL, *path = NULL;

	(void)state;
	assert_int_equal(cgroup2_mount_parse(mountinfo, &mount, &root), 1);
	assert_string_equal(mount, "/sys/fs/cgroup/uni fied");
	assert_string_equal(root, "/user.slice");
	free(mount);
	free(root);
	assert_int_equal(cgroup2_mount_parse("30 25 0:26 / /x rw - cgroup c rw\n", &mount, &root),
			 0);
	assert_int_equal(cgroup2_path_parse("4:memory:/a\n0::/user.slice/s-1.scope\n", &path), 1);
	assert_string_equal(path, "/user.slice/s-1.scope");
	free(path);
	assert_int_equal(cgroup2_path_parse("4:memory:/a\n", &path), 0);
}

/* Under systemd a unit runs through a scope named after the job, the node and the unit. */
static void test_contain_modes(void **state)
{
	struct job_container jc = { .how = CONTAIN_SYSTEMD,
				    .job_id = (char *)"0123456789abcdef",
				    .node = 3 };
	struct strvec wrap = STRVEC_INIT;
	enum contain_mode m;

	(void)state;
	for (enum contain_mode i = CONTAIN_AUTO; i <= CONTAIN_MARKS; i++) {
		assert_int_equal(contain_mode_parse(contain_mode_name(i), &m), 0);
		assert_int_equal(m, i);
	}
	assert_int_equal(contain_mode_parse("cgroups", &m), -EINVAL);
	job_container_wrap(&jc, 7, &wrap);
	assert_int_equal(wrap.nr, 7);
	assert_string_equal(wrap.v[0], "systemd-run");
	assert_string_equal(wrap.v[1], "--system");
	assert_string_equal(wrap.v[2], "--scope");
	assert_string_equal(wrap.v[5], "--unit=sparkctl-0123456789abcdef-n3-7.scope");
	assert_string_equal(wrap.v[6], "--");
	strvec_clear(&wrap);
	jc.systemd_user = true;
	job_container_wrap(&jc, 0, &wrap);
	assert_string_equal(wrap.v[1], "--user");
	strvec_clear(&wrap);
	jc.how = CONTAIN_CGROUP;
	job_container_wrap(&jc, 0, &wrap);
	assert_int_equal(wrap.nr, 0);
}

struct early_status {
	int status;
	bool signaled, zombie;
};

static void note_status(struct loop *loop, struct child *c, void *data)
{
	struct early_status *e = data;

	(void)loop;
	e->status = child_status(c, &e->signaled);
	e->zombie = kill(c->pid, 0) == 0 && !process_alive(c->pid);
}

/* The status is known once the exit is seen, while the child is still a zombie. */
static void test_child_status_before_reap(void **state)
{
	const char *scripts[] = { "exit 5", "kill -TERM $$" };
	const int want[] = { 5, 128 + SIGTERM };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(scripts); i++) {
		struct early_status e = { .status = -2 };
		struct child c;
		struct loop loop;

		child_init(&c);
		strvec_pushl(&c.args, "sh", "-c", scripts[i], NULL);
		assert_int_equal(child_start(&c), 0);
		assert_int_equal(child_status(&c, NULL), -1);
		loop_init(&loop);
		loop_watch_child(&loop, &c, note_status, &e);
		assert_int_equal(loop_run(&loop), 0);
		loop_release(&loop);
		assert_true(e.zombie);
		assert_int_equal(e.status, want[i]);
		assert_int_equal(e.signaled, i == 1);
		assert_false(c.reaped);
		assert_int_equal(child_finish(&c), want[i]);
		child_release(&c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timers_in_order),
		cmocka_unit_test(test_timer_cancel_and_rearm),
		cmocka_unit_test(test_fd_until_eof),
		cmocka_unit_test(test_unwatch_during_round),
		cmocka_unit_test(test_signals),
		cmocka_unit_test(test_run_until),
		cmocka_unit_test(test_run_command_status),
		cmocka_unit_test(test_child_pipes_env_dir),
		cmocka_unit_test(test_child_clean_env),
		cmocka_unit_test(test_child_bad_dir),
		cmocka_unit_test(test_child_program),
		cmocka_unit_test(test_child_signal_group),
		cmocka_unit_test(test_child_status_before_reap),
		cmocka_unit_test(test_child_wrap),
		cmocka_unit_test(test_child_cgroup),
		cmocka_unit_test(test_cgroup_parsers),
		cmocka_unit_test(test_contain_modes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
