/* Unit tests of remote/hosts.c, remote/ssh.c and proc/run.c, with real processes. */
#include "sparkctl.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "test_util.h"

#include "lib/xalloc.h"
#include "proc/run.h"
#include "remote/hosts.h"
#include "remote/lookup.h"
#include "remote/session.h"
#include "remote/ssh.h"

/* ---- helpers ---- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Open descriptors of this process (the listing's own included, the same each time). */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* run_jobs() left no child of ours behind, reaped or not. */
static void assert_no_children(void)
{
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

/* After a job's group was killed, none of its processes may remain, not even a zombie. */
static void assert_group_gone(pid_t pgid)
{
	assert_true(pgid > 0);
	assert_int_equal(kill(-pgid, 0), -1);
	assert_int_equal(errno, ESRCH);
}

static void job_argv(struct run_job *job, ...)
{
	va_list ap;
	const char *s;

	strvec_clear(&job->argv);
	va_start(ap, job);
	while ((s = va_arg(ap, const char *)))
		strvec_push(&job->argv, s);
	va_end(ap);
}

/* Parse spec into a fresh list and compare the names with the NULL-terminated rest. */
static void expect_hosts(const char *spec, ...)
{
	struct host_list list = { 0 };
	struct strbuf err = STRBUF_INIT;
	va_list ap;
	const char *s;
	size_t i = 0;

	if (host_list_parse(spec, &list, &err) < 0)
		fail_msg("'%s': %s", spec, err.buf);
	va_start(ap, spec);
	while ((s = va_arg(ap, const char *))) {
		assert_true(i < list.nr);
		assert_string_equal(list.hosts[i].name, s);
		assert_int_equal(list.hosts[i].slots, 0);
		i++;
	}
	va_end(ap);
	assert_int_equal(list.nr, i);
	assert_string_equal(err.buf, "");
	host_list_release(&list);
	strbuf_release(&err);
}

/* spec must fail with exactly message, and leave a list already holding "keep" as it was. */
static void expect_spec_error(const char *spec, const char *message)
{
	struct host_list list = { 0 };
	struct strbuf err = STRBUF_INIT;

	assert_int_equal(host_list_parse("keep", &list, &err), 0);
	assert_int_equal(host_list_parse(spec, &list, &err), -EINVAL);
	assert_string_equal(err.buf, message);
	assert_int_equal(list.nr, 1);
	assert_string_equal(list.hosts[0].name, "keep");
	host_list_release(&list);
	strbuf_release(&err);
}

static void expect_file_error(const char *text, const char *message)
{
	struct host_list list = { 0 };
	struct strbuf err = STRBUF_INIT;

	assert_int_equal(host_list_parse_file_text(text, "hf", &list, &err), -EINVAL);
	assert_string_equal(err.buf, message);
	assert_int_equal(list.nr, 0);
	host_list_release(&list);
	strbuf_release(&err);
}

/* ---- hosts ---- */

static void host_names(void **state)
{
	(void)state;
	expect_hosts("spark1", "spark1", NULL);
	expect_hosts("a,b.example.com,user@c,10.0.0.1,::1,fe80::1%eth0,under_score", "a",
		     "b.example.com", "user@c", "10.0.0.1", "::1", "fe80::1%eth0", "under_score",
		     NULL);
	expect_hosts("spark[1-4]", "spark1", "spark2", "spark3", "spark4", NULL);
	expect_hosts("node[01-12]", "node01", "node02", "node03", "node04", "node05", "node06",
		     "node07", "node08", "node09", "node10", "node11", "node12", NULL);
	expect_hosts("gpu[1,3,5-7]", "gpu1", "gpu3", "gpu5", "gpu6", "gpu7", NULL);
	expect_hosts("r[1-2]-ib", "r1-ib", "r2-ib", NULL);
	expect_hosts("n[8-10]", "n8", "n9", "n10", NULL);
	expect_hosts("x[001-3]", "x001", "x002", "x003", NULL);
	expect_hosts("x[5]", "x5", NULL);
	expect_hosts("x[0]", "x0", NULL);
	expect_hosts("[1-2].lan", "1.lan", "2.lan", NULL);
	expect_hosts("bob@spark[1-2].lan,c", "bob@spark1.lan", "bob@spark2.lan", "c", NULL);
	expect_hosts("a,gpu[1,2],b", "a", "gpu1", "gpu2", "b", NULL);
	/* Slurm's hostlists: several ranges in a name, the last varying fastest. */
	expect_hosts("spark[01-04,07]", "spark01", "spark02", "spark03", "spark04", "spark07",
		     NULL);
	expect_hosts("rack[1-2]n[1-3]", "rack1n1", "rack1n2", "rack1n3", "rack2n1", "rack2n2",
		     "rack2n3", NULL);
	expect_hosts("r[1,3]s[08-09]-ib,x", "r1s08-ib", "r1s09-ib", "r3s08-ib", "r3s09-ib", "x",
		     NULL);
	expect_hosts("a[1-2]b[3]c[4-5]", "a1b3c4", "a1b3c5", "a2b3c4", "a2b3c5", NULL);

	/* 253 characters is the longest name. */
	char name[300];
	memset(name, 'a', 253);
	name[253] = '\0';
	expect_hosts(name, name, NULL);
}

static void host_name_errors(void **state)
{
	(void)state;
	expect_spec_error("", "empty host list");
	expect_spec_error("a,,b", "empty host name in the list 'a,,b'");
	expect_spec_error("a,", "empty host name in the list 'a,'");
	expect_spec_error(",a", "empty host name in the list ',a'");
	expect_spec_error("-oProxyCommand=x",
			  "invalid host name '-oProxyCommand=x': starts with '-'");
	expect_spec_error("-x", "invalid host name '-x': starts with '-'");
	expect_spec_error("a b",
			  "invalid host name 'a b': contains whitespace or a control character");
	expect_spec_error(
		"a\tb", "invalid host name 'a\\x09b': contains whitespace or a control character");
	expect_spec_error(
		"a\x1b"
		"b",
		"invalid host name 'a\\x1bb': contains whitespace or a control character");
	/* Printable UTF-8 is shown as it is; a byte that is not UTF-8 is escaped. */
	expect_spec_error("h\xc3\xa9", "invalid host name 'h\xc3\xa9': contains a non-ASCII byte");
	expect_spec_error("h\xff", "invalid host name 'h\\xff': contains a non-ASCII byte");
	expect_spec_error("a@b@c", "invalid host name 'a@b@c': contains more than one '@'");
	expect_spec_error("@b", "invalid host name '@b': empty user name before '@'");
	expect_spec_error("a@", "invalid host name 'a@': empty host name after '@'");
	expect_spec_error("a@-b", "invalid host name 'a@-b': host part starts with '-'");
	expect_spec_error("a]b", "invalid host name 'a]b': contains ']'");

	/* Every shell metacharacter, and the characters that are syntax in lists and hostfiles. */
	for (const char *p = ";&|`$()<>\\'\"*?{}~#="; *p; p++) {
		struct strbuf spec = STRBUF_INIT, msg = STRBUF_INIT;
		strbuf_addf(&spec, "a%cb", *p);
		strbuf_addf(&msg, "invalid host name 'a%cb': contains '%c'", *p, *p);
		expect_spec_error(spec.buf, msg.buf);
		strbuf_release(&spec);
		strbuf_release(&msg);
	}

	char name[300];
	memset(name, 'a', 254);
	name[254] = '\0';
	struct strbuf msg = STRBUF_INIT;
	strbuf_addf(&msg, "invalid host name '%s': longer than 253 characters", name);
	expect_spec_error(name, msg.buf);
	strbuf_release(&msg);
}

static void host_range_errors(void **state)
{
	(void)state;
	expect_spec_error("spark[3-1]", "invalid host range 'spark[3-1]': reversed range 3-1");
	expect_spec_error("spark[1,5-2]", "invalid host range 'spark[1,5-2]': reversed range 5-2");
	expect_spec_error("spark[]", "invalid host range 'spark[]': empty range");
	expect_spec_error("spark[1,,2]",
			  "invalid host range 'spark[1,,2]': empty item in the range");
	expect_spec_error("spark[1,]", "invalid host range 'spark[1,]': empty item in the range");
	expect_spec_error("spark[a-b]", "invalid host range 'spark[a-b]': expected numbers such as "
					"[1-4] or [01,03,05-07]");
	expect_spec_error("spark[-3]", "invalid host range 'spark[-3]': expected numbers such as "
				       "[1-4] or [01,03,05-07]");
	expect_spec_error("spark[1-2-3]", "invalid host range 'spark[1-2-3]': expected numbers "
					  "such as [1-4] or [01,03,05-07]");
	expect_spec_error("spark[ 1]", "invalid host range 'spark[ 1]': expected numbers such as "
				       "[1-4] or [01,03,05-07]");
	expect_spec_error("spark[1-2", "invalid host range 'spark[1-2': no ']' after '['");
	expect_spec_error("a[[1-2]]", "invalid host range 'a[[1-2]]': a range inside a range");
	expect_spec_error("a[1]]", "invalid host range 'a[1]]': ']' without '['");
	expect_spec_error("a[1]b[2", "invalid host range 'a[1]b[2': no ']' after '['");
	expect_spec_error("a[1-2]b[x]", "invalid host range 'a[1-2]b[x]': expected numbers such "
					"as [1-4] or [01,03,05-07]");
	/* The product of the ranges is bounded before anything is expanded. */
	expect_spec_error("r[1-100]n[1-100]",
			  "invalid host range 'r[1-100]n[1-100]': names more than 4096 hosts");
	expect_spec_error(
		"a[1-2]b[1-2]c[1-2]a[1-2]b[1-2]c[1-2]d[1-2]e[1-2]f[1-2]g[1-2]h[1-2]i[1-2]j[1-2]",
		"invalid host range "
		"'a[1-2]b[1-2]c[1-2]a[1-2]b[1-2]c[1-2]d[1-2]e[1-2]f[1-2]g[1-2]h[1-2]i[1-2]j[1-2]': "
		"names more than 4096 hosts");
	/* Two ranges that make the same name. */
	expect_spec_error("a[1-2]1,a11", "duplicate host 'a11'");
	expect_spec_error("s[99999999999999999999]",
			  "invalid host range 's[99999999999999999999]': number too large");
	/* Huge ranges are refused before anything is expanded. */
	expect_spec_error("s[1-5000]",
			  "invalid host range 's[1-5000]': names more than 4096 hosts");
	expect_spec_error("s[0-18446744073709551615]",
			  "invalid host range 's[0-18446744073709551615]': names more than 4096 "
			  "hosts");
	expect_spec_error("s[1-4000,1-4000]",
			  "invalid host range 's[1-4000,1-4000]': names more than 4096 hosts");
	/* The bad name of an expansion is named. */
	expect_spec_error("a;[1-2]", "invalid host name 'a;1': contains ';'");
	expect_spec_error("-[1-2]", "invalid host name '-1': starts with '-'");
}

static void host_duplicates_and_bounds(void **state)
{
	struct host_list list = { 0 };
	struct strbuf err = STRBUF_INIT;

	(void)state;
	expect_spec_error("a,b,a", "duplicate host 'a'");
	expect_spec_error("spark1,spark[1-2]", "duplicate host 'spark1'");
	expect_spec_error("gpu[1,1]", "duplicate host 'gpu1'");
	expect_spec_error("gpu[1-3,2]", "duplicate host 'gpu2'");
	/* One node under two users, or in two spellings, is still one node. */
	expect_spec_error("alice@n1,bob@N1",
			  "duplicate host 'bob@N1' (the same node as 'alice@n1')");
	expect_spec_error("keep,x", "duplicate host 'keep'");

	/* Lists append, and duplicates are found across calls. */
	assert_int_equal(host_list_parse("a,b", &list, &err), 0);
	assert_int_equal(host_list_parse("c", &list, &err), 0);
	assert_int_equal(list.nr, 3);
	assert_string_equal(list.hosts[2].name, "c");
	assert_int_equal(host_list_parse("d,b", &list, &err), -EINVAL);
	assert_string_equal(err.buf, "duplicate host 'b'");
	assert_int_equal(list.nr, 3);
	host_list_release(&list);
	assert_null(list.hosts);
	assert_int_equal(list.nr, 0);
	strbuf_reset(&err);

	/* HOST_LIST_MAX names fit; one more does not. */
	assert_int_equal(host_list_parse("h[1-4096]", &list, &err), 0);
	assert_int_equal(list.nr, HOST_LIST_MAX);
	assert_string_equal(list.hosts[4095].name, "h4096");
	assert_int_equal(host_list_parse("x", &list, &err), -EINVAL);
	assert_string_equal(err.buf, "more than 4096 hosts");
	strbuf_reset(&err);
	assert_int_equal(host_list_parse("y[1-2]", &list, &err), -EINVAL);
	assert_string_equal(
		err.buf, "invalid host range 'y[1-2]': the list would hold more than 4096 hosts");
	assert_int_equal(list.nr, HOST_LIST_MAX);
	host_list_release(&list);
	strbuf_reset(&err);

	/* Plain names count too, with a bounded cost for a hostile list. */
	struct strbuf spec = STRBUF_INIT;
	for (int i = 0; i < 5000; i++)
		strbuf_addf(&spec, "%sn%d", i ? "," : "", i);
	assert_int_equal(host_list_parse(spec.buf, &list, &err), -EINVAL);
	assert_string_equal(err.buf, "more than 4096 hosts");
	assert_int_equal(list.nr, 0);
	host_list_release(&list);
	strbuf_release(&spec);
	strbuf_release(&err);
}

static void host_local(void **state)
{
	(void)state;
	assert_true(host_is_local("localhost"));
	assert_true(host_is_local("127.0.0.1"));
	assert_true(host_is_local("::1"));
	assert_false(host_is_local("LOCALHOST"));
	assert_false(host_is_local("localhost.localdomain"));
	assert_false(host_is_local("127.0.0.2"));
	assert_false(host_is_local("user@localhost"));
	assert_false(host_is_local("spark1"));
	assert_false(host_is_local(""));
}

static void hostfile_text(void **state)
{
	struct host_list list = { 0 };
	struct strbuf err = STRBUF_INIT;
	const char *text = "# the cluster\n"
			   "spark1\n"
			   "spark2 slots=2\n"
			   "  spark3\t  slots=4   # four GPUs\n"
			   "\t\n"
			   "\n"
			   "spark4# no space before the comment\n"
			   "user@spark5 slots=1\r\n"
			   "spark6 slots=1024"; /* no final newline */

	(void)state;
	assert_int_equal(host_list_parse_file_text(text, "hf", &list, &err), 0);
	assert_string_equal(err.buf, "");
	assert_int_equal(list.nr, 6);
	const char *names[] = { "spark1", "spark2", "spark3", "spark4", "user@spark5", "spark6" };
	const unsigned slots[] = { 0, 2, 4, 0, 1, 1024 };
	for (size_t i = 0; i < 6; i++) {
		assert_string_equal(list.hosts[i].name, names[i]);
		assert_int_equal(list.hosts[i].slots, slots[i]);
	}
	/* A hostfile adds to what -H gave, and duplicates across the two are found. */
	assert_int_equal(host_list_parse_file_text("spark7\nspark2\n", "more", &list, &err),
			 -EINVAL);
	assert_string_equal(err.buf, "more:2: duplicate host 'spark2'");
	assert_int_equal(list.nr, 6);
	host_list_release(&list);
	strbuf_reset(&err);

	/* Empty and comment-only files name no host. */
	assert_int_equal(host_list_parse_file_text("", "hf", &list, &err), 0);
	host_list_release(&list);
	strbuf_release(&err);
}

/* Open MPI's, MPICH's and DeepSpeed's forms, side by side in one file. */
/* -H or --hostfile, one of them, with the command's fallback: every failure worded once. */
static void hosts_from_options(void **state)
{
	struct host_list l = { 0 };
	struct strbuf err = STRBUF_INIT;
	char path[] = "/tmp/sparkctl-test-hostsXXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd); /* an empty hostfile */
	assert_int_equal(host_list_from_options("a", path, "none", NULL, &l, &err), -EINVAL);
	assert_string_equal(err.buf, "-H and --hostfile cannot be combined");
	strbuf_reset(&err);
	assert_int_equal(host_list_from_options(NULL, NULL, "none", NULL, &l, &err), -EINVAL);
	assert_string_equal(
		err.buf,
		"which nodes? -H HOST,..., --hostfile FILE, or a cluster file (sparkctl join)");
	strbuf_reset(&err);
	assert_int_equal(host_list_from_options(NULL, path, "none", NULL, &l, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "no hosts in '"));
	strbuf_reset(&err);
	assert_int_equal(host_list_from_options("bad[", NULL, "none", NULL, &l, &err), -EINVAL);
	assert_true(err.len > 0);
	host_list_release(&l);
	strbuf_reset(&err);
	assert_int_equal(host_list_from_options(NULL, NULL, "none", "localhost", &l, &err), 0);
	assert_int_equal(l.nr, 1);
	assert_string_equal(l.hosts[0].name, "localhost");
	host_list_release(&l);
	assert_int_equal(host_list_from_options("n[1-3]", NULL, "none", "localhost", &l, &err), 0);
	assert_int_equal(l.nr, 3);
	host_list_release(&l);
	unlink(path);
	strbuf_release(&err);
}

/* The hostlist of names, parsed back: the same set. */
static void assert_compresses(const char *const *names, size_t n, const char *want)
{
	struct host_list l = { 0 };
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;

	host_list_compress(names, n, &out);
	assert_string_equal(out.buf, want);
	if (n && host_list_parse(out.buf, &l, &err) < 0)
		fail_msg("%s: %s", out.buf, err.buf);
	for (size_t i = 0; i < n; i++) {
		bool found = false;
		for (size_t k = 0; k < l.nr && !found; k++)
			found = streq(l.hosts[k].name, names[i]);
		if (!found)
			fail_msg("%s is not in %s", names[i], out.buf);
	}
	host_list_release(&l);
	strbuf_release(&out);
	strbuf_release(&err);
}

/* Slurm hostlists made from names: ranges, padding kept, other names as they are. */
static void host_compress(void **state)
{
	const char *four[] = { "spark-03", "spark-01", "spark-02", "spark-07" };
	const char *mixed[] = { "gpu9", "gpu10", "gpu11", "login", "gpu08", "n1", "n01", "gpu11" };
	const char *rack[] = { "rack1n1", "rack1n2", "rack2n1" };
	const char *one[] = { "spark" };
	const char *pad[] = { "x001", "x002", "x010", "x009" };

	(void)state;
	assert_compresses(four, 4, "spark-[01-03,07]");
	assert_compresses(mixed, 8, "gpu[08,9-11],login,n[1,01]");
	assert_compresses(rack, 3, "rack1n[1-2],rack2n1");
	assert_compresses(one, 1, "spark");
	assert_compresses(pad, 4, "x[001-002,009-010]");
	assert_compresses(NULL, 0, "");
}

/* Inside a Slurm allocation its nodes come before the cluster file; -H still wins. */
static void hosts_from_slurm(void **state)
{
	struct host_list l = { 0 };
	struct strbuf err = STRBUF_INIT;

	(void)state;
	setenv("SLURM_JOB_NODELIST", "spark-[01-02],gpu[1-2]n[1-2]", 1);
	/* Without a job id it is not an allocation. */
	unsetenv("SLURM_JOB_ID");
	assert_int_equal(host_list_from_options(NULL, NULL, "none", "localhost", &l, &err), 0);
	assert_int_equal(l.nr, 1);
	assert_string_equal(l.hosts[0].name, "localhost");
	host_list_release(&l);
	setenv("SLURM_JOB_ID", "42", 1);
	assert_int_equal(host_list_from_options(NULL, NULL, "none", NULL, &l, &err), 0);
	assert_int_equal(l.nr, 6);
	assert_string_equal(l.hosts[0].name, "spark-01");
	assert_string_equal(l.hosts[2].name, "gpu1n1");
	assert_string_equal(l.hosts[5].name, "gpu2n2");
	host_list_release(&l);
	/* The default of the commands that check this node without one (doctor, top). */
	assert_int_equal(host_list_default("none", &l, &err), 1);
	assert_int_equal(l.nr, 6);
	host_list_release(&l);
	assert_int_equal(host_list_from_options("n1", NULL, "none", NULL, &l, &err), 0);
	assert_int_equal(l.nr, 1);
	assert_string_equal(l.hosts[0].name, "n1");
	host_list_release(&l);
	setenv("SLURM_JOB_NODELIST", "spark-[02-01]", 1);
	assert_int_equal(host_list_from_options(NULL, NULL, "none", NULL, &l, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "(in SLURM_JOB_NODELIST)"));
	assert_int_equal(l.nr, 0);
	unsetenv("SLURM_JOB_ID");
	/* Outside an allocation, and without a cluster file: none. */
	assert_int_equal(host_list_default("none", &l, &err), 0);
	assert_int_equal(l.nr, 0);
	unsetenv("SLURM_JOB_NODELIST");
	strbuf_release(&err);
}

/* Without -H or --hostfile, the cluster file's nodes (with their users); -H still wins. */
static void hosts_from_cluster_file(void **state)
{
	struct host_list l = { 0 };
	struct strbuf err = STRBUF_INIT;
	char path[] = "/tmp/sparkctl-test-clusterXXXXXX";
	const char *text =
		"{\"schema_version\":1,\"plan\":\"pair\",\"nodes\":["
		"{\"name\":\"spark1\",\"user\":\"ops\",\"mgmt_addresses\":[\"10.0.0.1\"]},"
		"{\"name\":\"spark2\",\"id\":null,\"user\":null}]}";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(host_list_from_options(NULL, NULL, path, "localhost", &l, &err), 0);
	assert_int_equal(l.nr, 2);
	assert_string_equal(l.hosts[0].name, "ops@spark1");
	assert_string_equal(l.hosts[1].name, "spark2");
	host_list_release(&l);
	assert_int_equal(host_list_from_options("n1", NULL, path, "localhost", &l, &err), 0);
	assert_int_equal(l.nr, 1);
	assert_string_equal(l.hosts[0].name, "n1");
	host_list_release(&l);
	/* A cluster file that is named but missing is an error, not the fallback. */
	unlink(path);
	assert_int_equal(host_list_from_options(NULL, NULL, path, "localhost", &l, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "cannot read '"));
	assert_int_equal(l.nr, 0);
	strbuf_release(&err);
}

static void hostfile_forms(void **state)
{
	struct host_list list = { 0 };
	struct strbuf err = STRBUF_INIT;
	const char *text = "# Open MPI\n"
			   "spark1 slots=2 max_slots=4\n"
			   "spark2 max_slots=3 slots=1   # either order\n"
			   "spark3 max-slots=8\n"
			   "\n"
			   "# MPICH\n"
			   "spark4:2\n"
			   "user@spark5:3 # a user too\n"
			   "# DeepSpeed\n"
			   "worker-6 slots=8\n"
			   "::1\n"
			   "fe80::1\n";
	const char *names[] = { "spark1",      "spark2",   "spark3", "spark4",
				"user@spark5", "worker-6", "::1",    "fe80::1" };
	const unsigned slots[] = { 2, 1, 0, 2, 3, 8, 0, 0 };
	const unsigned max_slots[] = { 4, 3, 8, 0, 0, 0, 0, 0 };

	(void)state;
	assert_int_equal(host_list_parse_file_text(text, "hf", &list, &err), 0);
	assert_string_equal(err.buf, "");
	assert_int_equal(list.nr, ARRAY_SIZE(names));
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		assert_string_equal(list.hosts[i].name, names[i]);
		assert_int_equal(list.hosts[i].slots, slots[i]);
		assert_int_equal(list.hosts[i].max_slots, max_slots[i]);
	}
	/* "spark4:2" is spark4: a later plain "spark4" is a duplicate. */
	assert_int_equal(host_list_parse_file_text("spark4\n", "more", &list, &err), -EINVAL);
	assert_string_equal(err.buf, "more:1: duplicate host 'spark4'");
	host_list_release(&list);
	strbuf_reset(&err);

	/* Empty and comment-only files name no host. */
	assert_int_equal(host_list_parse_file_text("", "hf", &list, &err), 0);
	assert_int_equal(host_list_parse_file_text("# nothing\n\n   \n", "hf", &list, &err), 0);
	assert_int_equal(list.nr, 0);
	host_list_release(&list);
	strbuf_release(&err);
}

static void hostfile_errors(void **state)
{
	(void)state;
	expect_file_error("a\nb foo=bar\n",
			  "hf:2: unknown field 'foo=bar' (expected slots=N or max_slots=N)");
	expect_file_error("slots=x\n", "hf:1: expected a host name before 'slots=x'");
	expect_file_error("a slots=x", "hf:1: slots must be a number from 1 to 1024, not 'x'");
	expect_file_error("a slots=", "hf:1: slots must be a number from 1 to 1024, not ''");
	expect_file_error("a slots=0", "hf:1: slots must be a number from 1 to 1024, not '0'");
	expect_file_error("a slots=-1", "hf:1: slots must be a number from 1 to 1024, not '-1'");
	expect_file_error("a slots=1025",
			  "hf:1: slots must be a number from 1 to 1024, not '1025'");
	expect_file_error("a slots=2 b",
			  "hf:1: unknown field 'b' (expected slots=N or max_slots=N)");
	expect_file_error("a slots=2 slots=3", "hf:1: slots given twice");
	expect_file_error("a b", "hf:1: unknown field 'b' (expected slots=N or max_slots=N)");
	expect_file_error("a slots=1 max_slots=2 x y",
			  "hf:1: expected 'HOST [slots=N] [max_slots=N]' or 'HOST:N'");
	/* Open MPI's max_slots. */
	expect_file_error("a max_slots=x",
			  "hf:1: max_slots must be a number from 1 to 1024, not 'x'");
	expect_file_error("a max_slots=0",
			  "hf:1: max_slots must be a number from 1 to 1024, not '0'");
	expect_file_error("a max_slots=2 max-slots=3", "hf:1: max_slots given twice");
	expect_file_error("a slots=4 max_slots=2", "hf:1: slots=4 is more than max_slots=2");
	expect_file_error("a Slots=2",
			  "hf:1: unknown field 'Slots=2' (expected slots=N or max_slots=N)");
	expect_file_error("a slots",
			  "hf:1: unknown field 'slots' (expected slots=N or max_slots=N)");
	/* MPICH's host:N. */
	expect_file_error("a:",
			  "hf:1: the count after ':' must be a number from 1 to 1024, not ''");
	expect_file_error("ok\na:x\n",
			  "hf:2: the count after ':' must be a number from 1 to 1024, not 'x'");
	expect_file_error("a:0",
			  "hf:1: the count after ':' must be a number from 1 to 1024, not '0'");
	expect_file_error("a:2000",
			  "hf:1: the count after ':' must be a number from 1 to 1024, not '2000'");
	expect_file_error(":2", "hf:1: empty host name");
	expect_file_error(
		"a:2 slots=2",
		"hf:1: expected 'HOST [slots=N] [max_slots=N]' or 'HOST:N', not both forms");
	expect_file_error("s:2:3", "hf:1: expected 'HOST [slots=N] [max_slots=N]' or 'HOST:N', "
				   "not 's:2:3' (more than one ':' outside an IPv6 address)");
	expect_file_error("a\nb:2\na:1\n", "hf:3: duplicate host 'a'");
	expect_file_error("a\n\n# c\na\n", "hf:4: duplicate host 'a'");
	expect_file_error("ok\na;b\n", "hf:2: invalid host name 'a;b': contains ';'");
	expect_file_error("spark[1-2]\n", "hf:1: invalid host name 'spark[1-2]': contains '['");
	expect_file_error("a,b\n", "hf:1: invalid host name 'a,b': contains ','");
	expect_file_error("x\n-oProxyCommand=y\n",
			  "hf:2: expected a host name before '-oProxyCommand=y'");
	expect_file_error("x\n-p 22\n", "hf:2: invalid host name '-p': starts with '-'");
	expect_file_error("x\ny\x01z\n", "hf:2: invalid host name 'y\\x01z': contains whitespace "
					 "or a control character");
}

static void hostfile_load(void **state)
{
	char path[] = "/tmp/sparkctl-hostfile-XXXXXX";
	struct host_list list = { 0 };
	struct strbuf err = STRBUF_INIT;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "a slots=2\nb\n", 12), 12);
	assert_int_equal(host_list_load_file(path, &list, &err), 0);
	assert_int_equal(list.nr, 2);
	assert_int_equal(list.hosts[0].slots, 2);
	assert_string_equal(list.hosts[1].name, "b");
	host_list_release(&list);

	/* Errors name the file and the line. */
	assert_int_equal(write(fd, "c x\n", 4), 4);
	assert_int_equal(host_list_load_file(path, &list, &err), -EINVAL);
	struct strbuf want = STRBUF_INIT;
	strbuf_addf(&want, "%s:3: unknown field 'x' (expected slots=N or max_slots=N)", path);
	assert_string_equal(err.buf, want.buf);
	assert_int_equal(list.nr, 0);
	strbuf_reset(&err);

	/* A NUL byte would hide the rest of the file: refused. */
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(pwrite(fd, "a\0b\n", 4, 0), 4);
	assert_int_equal(host_list_load_file(path, &list, &err), -EINVAL);
	strbuf_reset(&want);
	strbuf_addf(&want, "%s: contains a NUL byte; not a hostfile", path);
	assert_string_equal(err.buf, want.buf);
	strbuf_reset(&err);
	close(fd);
	unlink(path);

	assert_int_equal(host_list_load_file("/nonexistent/hf", &list, &err), -ENOENT);
	assert_string_equal(err.buf, "cannot read '/nonexistent/hf': No such file or directory");
	strbuf_reset(&err);
	assert_int_equal(host_list_load_file("/tmp", &list, &err), -EISDIR);
	assert_string_equal(err.buf, "cannot read '/tmp': Is a directory");
	assert_int_equal(list.nr, 0);
	host_list_release(&list);
	strbuf_release(&want);
	strbuf_release(&err);
}

/* ---- ssh ---- */

static void quoting(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	shell_quote(&sb, "abc");
	assert_string_equal(sb.buf, "'abc'");
	strbuf_reset(&sb);
	shell_quote(&sb, "");
	assert_string_equal(sb.buf, "''");
	strbuf_reset(&sb);
	shell_quote(&sb, "it's");
	assert_string_equal(sb.buf, "'it'\\''s'");
	strbuf_reset(&sb);
	/* It appends. */
	strbuf_addstr(&sb, "x=");
	shell_quote(&sb, "''");
	assert_string_equal(sb.buf, "x=''\\'''\\'''");
	strbuf_release(&sb);
}

static const char *const nasty_words[] = {
	"",
	"plain",
	"a b",
	"  leading and trailing  ",
	"it's",
	"''",
	"'",
	"\"double\"",
	"$HOME",
	"${HOME}",
	"$(echo injected)",
	"`echo injected`",
	"a;b|c&d",
	"a\nb\n",
	"\n",
	"tab\there",
	"back\\slash\\",
	"*",
	"~",
	"-n",
	"!",
	"#not a comment",
	"%s%d",
	"<in >out 2>&1",
	"\xc3\xa9t\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac",
	"\x01\x7f",
};

/* Every word survives quoting through a real POSIX shell, byte for byte. */
static void quoting_round_trip(void **state)
{
	size_t n = ARRAY_SIZE(nasty_words);
	struct run_job *jobs = xcalloc(n + 1, sizeof(*jobs));
	struct strbuf cmd = STRBUF_INIT, want = STRBUF_INIT;

	(void)state;
	for (size_t i = 0; i < n; i++) {
		run_job_init(&jobs[i]);
		strbuf_reset(&cmd);
		strbuf_addstr(&cmd, "printf %s ");
		shell_quote(&cmd, nasty_words[i]);
		job_argv(&jobs[i], "sh", "-c", cmd.buf, NULL);
	}
	/* A long word of nothing but quotes. */
	run_job_init(&jobs[n]);
	for (int i = 0; i < 5000; i++)
		strbuf_addstr(&want, "'\"");
	strbuf_reset(&cmd);
	strbuf_addstr(&cmd, "printf %s ");
	shell_quote(&cmd, want.buf);
	job_argv(&jobs[n], "sh", "-c", cmd.buf, NULL);

	assert_int_equal(run_jobs(jobs, n + 1, 8, 20000, 0), 0);
	for (size_t i = 0; i < n; i++) {
		if (jobs[i].status != 0 || !streq(jobs[i].out.buf, nasty_words[i]))
			fail_msg("word %zu: status %d, got '%s' (stderr '%s')", i, jobs[i].status,
				 jobs[i].out.buf, jobs[i].err.buf);
		assert_string_equal(jobs[i].err.buf, "");
	}
	assert_int_equal(jobs[n].status, 0);
	assert_string_equal(jobs[n].out.buf, want.buf);
	for (size_t i = 0; i <= n; i++)
		run_job_release(&jobs[i]);
	free(jobs);
	strbuf_release(&cmd);
	strbuf_release(&want);
	assert_no_children();
}

static void expect_argv(const struct strvec *sv, const char *const *want)
{
	size_t i;

	for (i = 0; want[i]; i++) {
		if (i >= sv->nr)
			fail_msg("argv has %zu elements, expected more ('%s')", sv->nr, want[i]);
		assert_string_equal(sv->v[i], want[i]);
	}
	assert_int_equal(sv->nr, i);
	assert_null(sv->v[i]);
}

static void ssh_argv(void **state)
{
	struct strvec sv = STRVEC_INIT, extra = STRVEC_INIT;
	struct ssh_options o = { 0 };
	const char *const cmd[] = { "nvidia-smi", "-L", NULL };

	(void)state;
	assert_int_equal(ssh_command(&sv, "spark1", &o, cmd), 0);
	const char *const want1[] = {
		"ssh", "-o",	 "BatchMode=yes",     "-o", "ConnectTimeout=5",
		"--",  "spark1", "'nvidia-smi' '-L'", NULL
	};
	expect_argv(&sv, want1);
	strvec_clear(&sv);

	/* NULL options are the defaults. */
	assert_int_equal(ssh_command(&sv, "spark1", NULL, cmd), 0);
	expect_argv(&sv, want1);
	strvec_clear(&sv);

	strvec_push(&extra, "StrictHostKeyChecking=accept-new");
	strvec_push(&extra, "ServerAliveInterval=15");
	o.program = "/opt/fake ssh";
	o.connect_timeout = 7;
	o.control_dir = "/run/user/1000/sparkctl";
	o.extra_options = &extra;
	const char *const cmd2[] = { "echo", "it's $HOME", "", NULL };
	assert_int_equal(ssh_command(&sv, "bob@spark2", &o, cmd2), 0);
	const char *const want2[] = { "/opt/fake ssh",
				      "-o",
				      "BatchMode=yes",
				      "-o",
				      "ConnectTimeout=7",
				      "-o",
				      "ControlMaster=auto",
				      "-o",
				      "ControlPath=/run/user/1000/sparkctl/%C",
				      "-o",
				      "ControlPersist=60",
				      "-o",
				      "StrictHostKeyChecking=accept-new",
				      "-o",
				      "ServerAliveInterval=15",
				      "--",
				      "bob@spark2",
				      "'echo' 'it'\\''s $HOME' ''",
				      NULL };
	expect_argv(&sv, want2);
	strvec_clear(&sv);

	/* ssh would expand a '%' of the directory as a token. */
	struct ssh_options o2 = { 0 };
	o2.control_dir = "/tmp/100%";
	assert_int_equal(ssh_command(&sv, "h", &o2, cmd), 0);
	assert_string_equal(sv.v[8], "ControlPath=/tmp/100%%/%C");
	strvec_clear(&sv);

	/* It appends to what out holds. */
	strvec_push(&sv, "exec");
	assert_int_equal(ssh_command(&sv, "h", NULL, cmd), 0);
	assert_string_equal(sv.v[0], "exec");
	assert_string_equal(sv.v[1], "ssh");
	assert_int_equal(sv.nr, 9);
	strvec_clear(&sv);
	strvec_clear(&extra);
}

static void ssh_argv_errors(void **state)
{
	struct strvec sv = STRVEC_INIT;
	struct ssh_options o = { 0 };
	const char *const cmd[] = { "true", NULL };
	const char *const empty[] = { NULL };

	(void)state;
	assert_int_equal(ssh_command(&sv, "", &o, cmd), -EINVAL);
	assert_int_equal(ssh_command(&sv, NULL, &o, cmd), -EINVAL);
	assert_int_equal(ssh_command(&sv, "-oProxyCommand=touch /tmp/x", &o, cmd), -EINVAL);
	assert_int_equal(ssh_command(&sv, "-", &o, cmd), -EINVAL);
	assert_int_equal(ssh_command(&sv, "h", &o, empty), -EINVAL);
	assert_int_equal(ssh_command(&sv, "h", &o, NULL), -EINVAL);
	o.control_dir = "/tmp/a b";
	assert_int_equal(ssh_command(&sv, "h", &o, cmd), -EINVAL);
	o.control_dir = "/tmp/\"a";
	assert_int_equal(ssh_command(&sv, "h", &o, cmd), -EINVAL);
	o.control_dir = "";
	assert_int_equal(ssh_command(&sv, "h", &o, cmd), -EINVAL);
	/* The socket path must fit a sockaddr_un. */
	char dir[SSH_CONTROL_DIR_MAX + 2];
	memset(dir, 'd', sizeof(dir) - 1);
	dir[0] = '/';
	dir[sizeof(dir) - 1] = '\0';
	o.control_dir = dir;
	assert_int_equal(ssh_command(&sv, "h", &o, cmd), -ENAMETOOLONG);
	assert_int_equal(sv.nr, 0);
	dir[sizeof(dir) - 2] = '\0';
	assert_int_equal(ssh_command(&sv, "h", &o, cmd), 0);
	/* DIR + "/" + 40 hex digits + "." + 16 characters: exactly 107 bytes. */
	assert_int_equal(strlen(dir) + 1 + 40 + 1 + 16, 107);
	assert_true(starts_with(sv.v[8], "ControlPath=/ddd"));
	assert_string_equal(sv.v[8] + strlen("ControlPath=") + strlen(dir), "/%C");
	strvec_clear(&sv);
	/* Nothing was appended by the failures. */
	assert_int_equal(sv.nr, 0);
	strvec_clear(&sv);
}

/* The remote argument of ssh_command(), run by sh -c as sshd would: the argv arrives intact. */
static void ssh_remote_round_trip(void **state)
{
	struct strvec sv = STRVEC_INIT;
	struct run_job job;
	struct strbuf want = STRBUF_INIT;
	const char *remote[ARRAY_SIZE(nasty_words) + 3];

	(void)state;
	remote[0] = "printf";
	remote[1] = "<%s>";
	for (size_t i = 0; i < ARRAY_SIZE(nasty_words); i++) {
		remote[i + 2] = nasty_words[i];
		strbuf_addf(&want, "<%s>", nasty_words[i]);
	}
	remote[ARRAY_SIZE(nasty_words) + 2] = NULL;
	assert_int_equal(ssh_command(&sv, "h", NULL, remote), 0);
	run_job_init(&job);
	job_argv(&job, "sh", "-c", sv.v[sv.nr - 1], NULL);
	assert_int_equal(run_jobs(&job, 1, 0, 20000, 0), 0);
	assert_int_equal(job.status, 0);
	assert_string_equal(job.out.buf, want.buf);
	run_job_release(&job);
	strvec_clear(&sv);
	strbuf_release(&want);
}

/* ---- the nodes' sparkctl lookup ---- */

static void sh_mkdir_p(const char *dir)
{
	char *cmd = xasprintf("mkdir -p '%s'", dir);

	sh(cmd);
	free(cmd);
}

static void sh_link_sh(const char *dir)
{
	char *link = xasprintf("%s/sh", dir);

	assert_int_equal(symlink("/bin/sh", link), 0);
	free(link);
}

/* An executable script at dir/name that prints what it is, then its arguments. */
static void stand_in(const char *dir, const char *name, const char *what)
{
	char *path = xasprintf("%s/%s", dir, name);
	char *text = xasprintf("#!/bin/sh\nprintf '%s'\nprintf '<%%s>' \"$@\"\n", what);
	FILE *f;

	assert_int_equal(mkdir(dir, 0700) == 0 || errno == EEXIST, 1);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, 0755), 0);
	free(text);
	free(path);
}

/*
 * Run the lookup as a node's login shell would: the ssh command's remote
 * string through sh -c, with PATH and HOME as given.
 */
static void run_lookup(struct run_job *job, const char *local, const char *override,
		       const char *path, const char *home, const char *const *args)
{
	struct strvec words = STRVEC_INIT, sv = STRVEC_INIT;
	char *old_path = xstrdup(getenv("PATH")), *old_home = xstrdup(getenv("HOME"));

	remote_sparkctl_words(&words, local, override);
	for (size_t i = 0; args[i]; i++)
		strvec_push(&words, args[i]);
	assert_int_equal(ssh_command(&sv, "node", NULL, (const char *const *)words.v), 0);
	run_job_init(job);
	job_argv(job, "/bin/sh", "-c", sv.v[sv.nr - 1], NULL);
	setenv("PATH", path, 1);
	setenv("HOME", home, 1);
	assert_int_equal(run_jobs(job, 1, 0, 20000, 0), 0);
	setenv("PATH", old_path, 1);
	setenv("HOME", old_home, 1);
	free(old_path);
	free(old_home);
	strvec_clear(&words);
	strvec_clear(&sv);
}

static void sparkctl_lookup(void **state)
{
	char tmp[] = "/tmp/sparkctl-lookup-XXXXXX";
	const char *args[ARRAY_SIZE(nasty_words) + 1];
	struct strbuf want = STRBUF_INIT;
	struct run_job job;
	char *local_dir, *local, *path_dir, *home, *home_bin, *empty;

	(void)state;
	assert_non_null(mkdtemp(tmp));
	local_dir = xasprintf("%s/it's a \"dir\" $(x)", tmp);
	local = xasprintf("%s/sparkctl", local_dir);
	path_dir = xasprintf("%s/path", tmp);
	home = xasprintf("%s/home", tmp);
	home_bin = xasprintf("%s/home/.local/bin", tmp);
	empty = xasprintf("%s/empty", tmp);
	/* PATH holds no sparkctl, but the sh the login shell starts the lookup with. */
	assert_int_equal(mkdir(empty, 0700), 0);
	assert_int_equal(mkdir(path_dir, 0700), 0);
	sh_link_sh(empty);
	sh_link_sh(path_dir);
	for (size_t i = 0; i < ARRAY_SIZE(nasty_words); i++) {
		args[i] = nasty_words[i];
		strbuf_addf(&want, "<%s>", nasty_words[i]);
	}
	args[ARRAY_SIZE(nasty_words)] = NULL;

	/* None anywhere: 127 and the line that says so. */
	mkdir(home, 0700);
	run_lookup(&job, local, NULL, empty, home, args);
	assert_int_equal(job.status, REMOTE_SPARKCTL_MISSING_STATUS);
	assert_true(remote_sparkctl_missing(job.status, job.err.buf));
	assert_string_equal(job.out.buf, "");
	run_job_release(&job);
	/* A command that is not found exits 127 too: only the line tells. */
	assert_false(remote_sparkctl_missing(127, "sh: 1: sparkctl: not found\n"));
	assert_false(remote_sparkctl_missing(1, REMOTE_SPARKCTL_MISSING_LINE "\n"));

	/* ~/.local/bin, then PATH, then this program's path: each wins over the ones after it. */
	sh_mkdir_p(home_bin);
	stand_in(home_bin, "sparkctl", "home");
	run_lookup(&job, local, NULL, empty, home, args);
	assert_int_equal(job.status, 0);
	assert_true(starts_with(job.out.buf, "home<"));
	assert_string_equal(job.out.buf + 4, want.buf);
	run_job_release(&job);

	stand_in(path_dir, "sparkctl", "path");
	run_lookup(&job, local, NULL, path_dir, home, args);
	assert_int_equal(job.status, 0);
	assert_true(starts_with(job.out.buf, "path<"));
	run_job_release(&job);

	stand_in(local_dir, "sparkctl", "local");
	run_lookup(&job, local, NULL, path_dir, home, args);
	assert_int_equal(job.status, 0);
	assert_true(starts_with(job.out.buf, "local<"));
	assert_string_equal(job.out.buf + 5, want.buf);
	run_job_release(&job);

	/* A file there that cannot be run is passed over. */
	assert_int_equal(chmod(local, 0644), 0);
	run_lookup(&job, local, NULL, path_dir, home, args);
	assert_true(starts_with(job.out.buf, "path<"));
	run_job_release(&job);

	/* --remote-sparkctl: that one alone, even where it is missing. */
	run_lookup(&job, local, home_bin, path_dir, home, args);
	assert_int_not_equal(job.status, 0);
	assert_false(remote_sparkctl_missing(job.status, job.err.buf));
	run_job_release(&job);

	{
		char *msg = remote_sparkctl_missing_message("node\x1b"
							    "1");
		assert_string_equal(msg,
				    "sparkctl is not installed on node\\x1b1 (sparkctl deploy -H "
				    "node\\x1b1)");
		free(msg);
	}
	remove_tree(tmp);
	strbuf_release(&want);
	free(local_dir);
	free(local);
	free(path_dir);
	free(home);
	free(home_bin);
	free(empty);
}

/* ---- run ---- */

static void run_status(void **state)
{
	struct run_job jobs[6];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(jobs); i++)
		run_job_init(&jobs[i]);
	job_argv(&jobs[0], "true", NULL);
	job_argv(&jobs[1], "false", NULL);
	job_argv(&jobs[2], "sh", "-c", "exit 3", NULL);
	/* No core file: the job kills itself with SIGSEGV. */
	job_argv(&jobs[3], "sh", "-c", "ulimit -c 0; kill -SEGV $$", NULL);
	job_argv(&jobs[4], "sh", "-c", "kill -TERM $$", NULL);
	job_argv(&jobs[5], "sh", "-c", "echo out; echo err >&2; echo out2; exit 0", NULL);
	assert_int_equal(run_jobs(jobs, ARRAY_SIZE(jobs), 0, 10000, 4096), 0);
	assert_int_equal(jobs[0].status, 0);
	assert_int_equal(jobs[1].status, 1);
	assert_int_equal(jobs[2].status, 3);
	assert_int_equal(jobs[3].status, 128 + SIGSEGV);
	assert_int_equal(jobs[3].status, 139);
	assert_int_equal(jobs[4].status, 128 + SIGTERM);
	assert_int_equal(jobs[5].status, 0);
	assert_string_equal(jobs[5].out.buf, "out\nout2\n");
	assert_string_equal(jobs[5].err.buf, "err\n");
	for (size_t i = 0; i < ARRAY_SIZE(jobs); i++) {
		assert_int_equal(jobs[i].spawn_error, 0);
		assert_false(jobs[i].timed_out);
		assert_false(jobs[i].truncated);
		assert_true(jobs[i].pid > 0);
		assert_true(jobs[i].seconds >= 0 && jobs[i].seconds < 10);
		if (i != 5) {
			assert_string_equal(jobs[i].out.buf, "");
		}
		run_job_release(&jobs[i]);
	}
	assert_no_children();
	/* No jobs: nothing to do. */
	assert_int_equal(run_jobs(NULL, 0, 0, 0, 0), 0);
}

static void run_own_process_group(void **state)
{
	struct run_job job;
	char want[64];

	(void)state;
	run_job_init(&job);
	/* Field 5 of /proc/self/stat is the process group. */
	job_argv(&job, "sh", "-c", "read -r a b c d e rest < /proc/$$/stat; echo $e", NULL);
	assert_int_equal(run_jobs(&job, 1, 0, 10000, 0), 0);
	assert_int_equal(job.status, 0);
	snprintf(want, sizeof(want), "%d\n", (int)job.pid);
	assert_string_equal(job.out.buf, want);
	assert_true(job.pid != getpgrp());
	run_job_release(&job);
}

static void run_large_output(void **state)
{
	struct run_job jobs[2];
	double t0 = now_s();

	(void)state;
	run_job_init(&jobs[0]);
	run_job_init(&jobs[1]);
	job_argv(&jobs[0], "head", "-c", "10000000", "/dev/zero", NULL);
	job_argv(&jobs[1], "sh", "-c",
		 "head -c 10000000 /dev/zero; head -c 10000000 /dev/zero >&2; echo done >&2", NULL);
	assert_int_equal(run_jobs(jobs, 2, 0, 60000, 65536), 0);
	/* The child was never blocked: it wrote everything and exited normally. */
	assert_int_equal(jobs[0].status, 0);
	assert_false(jobs[0].timed_out);
	assert_true(jobs[0].truncated);
	assert_int_equal(jobs[0].out.len, 65536);
	assert_int_equal(jobs[0].err.len, 0);
	assert_int_equal(jobs[1].status, 0);
	assert_true(jobs[1].truncated);
	assert_int_equal(jobs[1].out.len, 65536);
	assert_int_equal(jobs[1].err.len, 65536);
	assert_true(now_s() - t0 < 30);
	run_job_release(&jobs[0]);
	run_job_release(&jobs[1]);

	/* Output exactly at the bound is not truncated; 0 keeps everything. */
	run_job_init(&jobs[0]);
	run_job_init(&jobs[1]);
	job_argv(&jobs[0], "head", "-c", "1000", "/dev/zero", NULL);
	job_argv(&jobs[1], "head", "-c", "3000000", "/dev/zero", NULL);
	assert_int_equal(run_jobs(jobs, 1, 0, 60000, 1000), 0);
	assert_false(jobs[0].truncated);
	assert_int_equal(jobs[0].out.len, 1000);
	assert_int_equal(run_jobs(&jobs[1], 1, 0, 60000, 0), 0);
	assert_false(jobs[1].truncated);
	assert_int_equal(jobs[1].out.len, 3000000);
	run_job_release(&jobs[0]);
	run_job_release(&jobs[1]);
	assert_no_children();
}

static void run_input(void **state)
{
	const size_t big = 4 << 20; /* far beyond a pipe buffer */
	char *input = xmalloc(big + 1);
	struct run_job jobs[7];
	sigset_t mask_before, mask_after, pending;
	struct sigaction pipe_before, pipe_after;
	char want[32];

	(void)state;
	memset(input, 'x', big);
	input[big] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(jobs); i++)
		run_job_init(&jobs[i]);
	job_argv(&jobs[0], "cat", NULL);
	jobs[0].input = "hello\nworld\n";
	job_argv(&jobs[1], "wc", "-c", NULL);
	jobs[1].input = input;
	/* Never reads its stdin: the writer must neither block nor die of SIGPIPE. */
	job_argv(&jobs[2], "true", NULL);
	jobs[2].input = input;
	/* Reads a little, then keeps running without reading. */
	job_argv(&jobs[3], "sh", "-c", "head -c 10 >/dev/null; sleep 0.3; echo alive", NULL);
	jobs[3].input = input;
	job_argv(&jobs[4], "wc", "-c", NULL);
	jobs[4].input = "";
	/* No input: /dev/null, so a reader ends at once. */
	job_argv(&jobs[5], "cat", NULL);
	job_argv(&jobs[6], "sh", "-c", "cat; echo; cat", NULL);
	jobs[6].input = "once";

	sigemptyset(&mask_before);
	sigemptyset(&mask_after);
	sigprocmask(SIG_BLOCK, NULL, &mask_before);
	sigaction(SIGPIPE, NULL, &pipe_before);
	assert_int_equal(run_jobs(jobs, ARRAY_SIZE(jobs), 0, 20000, 0), 0);
	sigprocmask(SIG_BLOCK, NULL, &mask_after);
	sigaction(SIGPIPE, NULL, &pipe_after);
	/* The caller's signal state is as it was, with no SIGPIPE left pending. */
	for (int sig = 1; sig < SIGRTMIN; sig++)
		assert_int_equal(sigismember(&mask_before, sig), sigismember(&mask_after, sig));
	assert_true(pipe_before.sa_handler == pipe_after.sa_handler);
	sigpending(&pending);
	assert_false(sigismember(&pending, SIGPIPE));

	assert_int_equal(jobs[0].status, 0);
	assert_string_equal(jobs[0].out.buf, "hello\nworld\n");
	assert_int_equal(jobs[1].status, 0);
	snprintf(want, sizeof(want), "%zu\n", big);
	assert_string_equal(jobs[1].out.buf, want);
	assert_int_equal(jobs[2].status, 0);
	assert_int_equal(jobs[3].status, 0);
	assert_string_equal(jobs[3].out.buf, "alive\n");
	assert_int_equal(jobs[4].status, 0);
	assert_string_equal(jobs[4].out.buf, "0\n");
	assert_int_equal(jobs[5].status, 0);
	assert_string_equal(jobs[5].out.buf, "");
	assert_string_equal(jobs[6].out.buf, "once\n");
	for (size_t i = 0; i < ARRAY_SIZE(jobs); i++) {
		assert_false(jobs[i].timed_out);
		run_job_release(&jobs[i]);
	}
	free(input);
	assert_no_children();
}

/* With the caller's stdin closed, pipe ends land on fd 0: the child must still get the right ones.
 */
static void run_caller_stdin_closed(void **state)
{
	struct run_job job;
	int saved = dup(STDIN_FILENO);

	(void)state;
	assert_true(saved >= 0);
	run_job_init(&job);
	job_argv(&job, "cat", NULL);
	job.input = "through";
	close(STDIN_FILENO);
	int r = run_jobs(&job, 1, 0, 10000, 0);
	dup2(saved, STDIN_FILENO);
	close(saved);
	assert_int_equal(r, 0);
	assert_int_equal(job.status, 0);
	assert_string_equal(job.out.buf, "through");
	run_job_release(&job);
}

/* A caller that ignores SIGPIPE does not pass that on. */
static void run_sigpipe_default(void **state)
{
	struct run_job job;
	struct sigaction ign, old;

	(void)state;
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, &old);
	run_job_init(&job);
	job_argv(&job, "grep", "^SigIgn:", "/proc/self/status", NULL);
	int r = run_jobs(&job, 1, 0, 10000, 0);
	sigaction(SIGPIPE, &old, NULL);
	assert_int_equal(r, 0);
	assert_int_equal(job.status, 0);
	unsigned long long ignored = strtoull(job.out.buf + strlen("SigIgn:"), NULL, 16);
	assert_false(ignored & (1ull << (SIGPIPE - 1)));
	run_job_release(&job);
}

/*
 * A caller with SIGPIPE blocked: the SIGPIPE a dead reader causes is taken
 * back, and one that was already pending stays pending.
 */
static void run_sigpipe_blocked(void **state)
{
	char *input = xmalloc((1 << 20) + 1);
	sigset_t set, old, pending;
	struct run_job job;
	const struct timespec zero = { 0, 0 };

	(void)state;
	memset(input, 'y', 1 << 20);
	input[1 << 20] = '\0';
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &set, &old);
	run_job_init(&job);
	/* Closes its stdin, then lives on: the writer meets EPIPE. */
	job_argv(&job, "sh", "-c", "exec 0<&-; sleep 0.2", NULL);
	job.input = input;
	assert_int_equal(run_jobs(&job, 1, 0, 10000, 0), 0);
	assert_int_equal(job.status, 0);
	sigemptyset(&pending);
	sigpending(&pending);
	assert_false(sigismember(&pending, SIGPIPE));

	raise(SIGPIPE);
	assert_int_equal(run_jobs(&job, 1, 0, 10000, 0), 0);
	sigemptyset(&pending);
	sigpending(&pending);
	assert_true(sigismember(&pending, SIGPIPE));
	assert_int_equal(sigtimedwait(&set, NULL, &zero), SIGPIPE);
	sigprocmask(SIG_SETMASK, &old, NULL);
	run_job_release(&job);
	free(input);
}

static void run_timeout_kills_group(void **state)
{
	struct run_job jobs[3];
	double t0 = now_s(), elapsed;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(jobs); i++)
		run_job_init(&jobs[i]);
	/* The background sleep is in the job's group and holds its pipes. */
	job_argv(&jobs[0], "sh", "-c", "sleep 100 & sleep 100", NULL);
	/* Ignores SIGTERM (and so does its sleep): needs the SIGKILL a second later. */
	job_argv(&jobs[1], "sh", "-c", "trap '' TERM; echo started; sleep 100; echo not reached",
		 NULL);
	/* Finishes in time: not touched. */
	job_argv(&jobs[2], "sh", "-c", "sleep 0.1; echo fine", NULL);
	assert_int_equal(run_jobs(jobs, ARRAY_SIZE(jobs), 0, 300, 4096), 0);
	elapsed = now_s() - t0;

	assert_true(jobs[0].timed_out);
	assert_true(jobs[0].status == 128 + SIGTERM || jobs[0].status == 128 + SIGKILL);
	assert_true(jobs[0].seconds >= 0.29 && jobs[0].seconds < 1.0);
	assert_true(jobs[1].timed_out);
	assert_int_equal(jobs[1].status, 128 + SIGKILL);
	assert_string_equal(jobs[1].out.buf, "started\n");
	assert_true(jobs[1].seconds >= 1.25 && jobs[1].seconds < 2.5);
	assert_false(jobs[2].timed_out);
	assert_int_equal(jobs[2].status, 0);
	assert_string_equal(jobs[2].out.buf, "fine\n");
	/* Within the linger bound, however slow init is to reap orphans. */
	assert_true(elapsed < 8);
	assert_group_gone(jobs[0].pid);
	assert_group_gone(jobs[1].pid);
	for (size_t i = 0; i < ARRAY_SIZE(jobs); i++)
		run_job_release(&jobs[i]);
	assert_no_children();
}

/* A held stdin gets the input, then stays open until the job ends. */
static void run_hold_stdin(void **state)
{
	struct run_job jobs[2];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(jobs); i++)
		run_job_init(&jobs[i]);
	/* cat waits on stdin as long as it is open. */
	const char *script =
		"read x; echo got $x; exec 3<&0; cat <&3 > /dev/null & sleep 0.3; "
		"kill -0 $! 2> /dev/null && echo open || echo closed; kill $! 2> /dev/null; true";
	job_argv(&jobs[0], "sh", "-c", script, NULL);
	jobs[0].input = "hello\n";
	jobs[0].hold_stdin = true;
	job_argv(&jobs[1], "sh", "-c", script, NULL);
	jobs[1].input = "hello\n";
	assert_int_equal(run_jobs(jobs, 2, 0, 10000, 0), 0);
	assert_string_equal(jobs[0].out.buf, "got hello\nopen\n");
	assert_string_equal(jobs[1].out.buf, "got hello\nclosed\n");
	for (size_t i = 0; i < ARRAY_SIZE(jobs); i++)
		run_job_release(&jobs[i]);
	assert_no_children();
}

/*
 * Servers: one prints "ready" and waits for its stdin to end (as a hold
 * over SSH does), one exits by itself after its work, one never prints
 * it and ignores its stdin's end and SIGTERM, one cannot start.
 */
static void run_servers_lifecycle(void **state)
{
	struct run_job jobs[4];
	struct run_servers rs;
	int fds = count_fds();
	double t0;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(jobs); i++)
		run_job_init(&jobs[i]);
	job_argv(&jobs[0], "sh", "-c", "echo partial-ready; echo ready; cat > /dev/null; echo eof",
		 NULL);
	job_argv(&jobs[1], "sh", "-c", "printf 'banner\\nready\\n'; sleep 0.2; echo done; exit 7",
		 NULL);
	job_argv(&jobs[2], "sh", "-c", "trap '' TERM; echo starting; exec 0<&-; sleep 100", NULL);
	job_argv(&jobs[3], "/nonexistent/server", NULL);
	assert_int_equal(run_servers_start(&rs, jobs, ARRAY_SIZE(jobs)), 0);
	assert_int_equal(jobs[3].spawn_error, -ENOENT);

	t0 = now_s();
	assert_int_equal(run_servers_wait_line(&rs, "ready", 500), 2);
	/* It waited the whole timeout for the third. */
	assert_true(now_s() - t0 >= 0.45);
	assert_true(run_job_printed_line(&jobs[0], "ready"));
	assert_false(run_job_printed_line(&jobs[2], "ready"));
	/* Still running: its stdin is open. */
	assert_int_equal(jobs[0].status, -1);
	assert_int_equal(kill(jobs[0].pid, 0), 0);

	t0 = now_s();
	run_servers_end(&rs, 300, 300);
	assert_true(now_s() - t0 < 3.5);
	assert_int_equal(jobs[0].status, 0);
	assert_false(jobs[0].timed_out);
	assert_string_equal(jobs[0].out.buf, "partial-ready\nready\neof\n");
	assert_int_equal(jobs[1].status, 7);
	assert_string_equal(jobs[1].out.buf, "banner\nready\ndone\n");
	assert_true(jobs[2].timed_out);
	assert_int_equal(jobs[2].status, 128 + SIGKILL);
	assert_string_equal(jobs[2].out.buf, "starting\n");
	assert_int_equal(jobs[3].status, -1);
	assert_group_gone(jobs[0].pid);
	assert_group_gone(jobs[2].pid);
	assert_int_equal(count_fds(), fds);
	for (size_t i = 0; i < ARRAY_SIZE(jobs); i++)
		run_job_release(&jobs[i]);
	assert_no_children();
}

/* A server that ends before the caller waits for it is reaped, its output kept. */
static void run_servers_early_exit(void **state)
{
	struct run_job job;
	struct run_servers rs;

	(void)state;
	run_job_init(&job);
	job_argv(&job, "sh", "-c", "echo no port >&2; exit 3", NULL);
	assert_int_equal(run_servers_start(&rs, &job, 1), 0);
	assert_int_equal(run_servers_wait_line(&rs, "ready", 5000), 0);
	assert_int_equal(job.status, 3);
	assert_string_equal(job.err.buf, "no port\n");
	run_servers_end(&rs, 0, 0);
	assert_int_equal(job.status, 3);
	run_job_release(&job);
	assert_no_children();
}

static void run_parallel_bound(void **state)
{
	struct run_job jobs[6];
	double t0, elapsed;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(jobs); i++) {
		run_job_init(&jobs[i]);
		job_argv(&jobs[i], "sleep", "0.3", NULL);
	}
	t0 = now_s();
	assert_int_equal(run_jobs(jobs, ARRAY_SIZE(jobs), 2, 10000, 0), 0);
	elapsed = now_s() - t0;
	/* Three rounds of two. */
	assert_true(elapsed >= 0.9);
	assert_true(elapsed < 2.0);
	for (size_t i = 0; i < ARRAY_SIZE(jobs); i++) {
		assert_int_equal(jobs[i].status, 0);
		assert_true(jobs[i].seconds >= 0.29);
	}

	/* 0: all at once. */
	t0 = now_s();
	assert_int_equal(run_jobs(jobs, ARRAY_SIZE(jobs), 0, 10000, 0), 0);
	elapsed = now_s() - t0;
	assert_true(elapsed >= 0.3);
	assert_true(elapsed < 0.9);
	for (size_t i = 0; i < ARRAY_SIZE(jobs); i++)
		run_job_release(&jobs[i]);
	assert_no_children();
}

static void run_spawn_failure(void **state)
{
	struct run_job jobs[4];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(jobs); i++)
		run_job_init(&jobs[i]);
	job_argv(&jobs[0], "/nonexistent/program", NULL);
	job_argv(&jobs[1], "sparkctl-test-no-such-program", "arg", NULL);
	/* The others still run. */
	job_argv(&jobs[2], "echo", "ran", NULL);
	/* An empty command. */
	assert_int_equal(run_jobs(jobs, ARRAY_SIZE(jobs), 1, 10000, 0), 0);
	assert_int_equal(jobs[0].spawn_error, -ENOENT);
	assert_int_equal(jobs[0].status, -1);
	assert_int_equal(jobs[0].pid, 0);
	assert_int_equal(jobs[1].spawn_error, -ENOENT);
	assert_int_equal(jobs[1].status, -1);
	assert_int_equal(jobs[2].spawn_error, 0);
	assert_int_equal(jobs[2].status, 0);
	assert_string_equal(jobs[2].out.buf, "ran\n");
	assert_int_equal(jobs[3].spawn_error, -EINVAL);
	assert_int_equal(jobs[3].status, -1);
	for (size_t i = 0; i < ARRAY_SIZE(jobs); i++)
		run_job_release(&jobs[i]);
	/* The failed children were reaped. */
	assert_no_children();
}

static void run_no_fd_leaks(void **state)
{
	struct run_job jobs[6];
	int before = count_fds();

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(jobs); i++)
		run_job_init(&jobs[i]);
	/* Runs while the others' pipes are open: it must see only 0, 1, 2 and its listing. */
	job_argv(&jobs[0], "ls", "/proc/self/fd", NULL);
	job_argv(&jobs[1], "sleep", "0.2", NULL);
	jobs[1].input = "unread";
	job_argv(&jobs[2], "sh", "-c", "sleep 100 & sleep 100", NULL);
	job_argv(&jobs[3], "/nonexistent/program", NULL);
	job_argv(&jobs[4], "cat", NULL);
	jobs[4].input = "x";
	job_argv(&jobs[5], "sh", "-c", "sleep 0.1 & echo bg", NULL);
	assert_int_equal(run_jobs(jobs, ARRAY_SIZE(jobs), 0, 400, 0), 0);
	assert_string_equal(jobs[0].out.buf, "0\n1\n2\n3\n");
	assert_true(jobs[2].timed_out);
	assert_int_equal(jobs[3].spawn_error, -ENOENT);
	assert_string_equal(jobs[4].out.buf, "x");
	assert_string_equal(jobs[5].out.buf, "bg\n");
	assert_int_equal(count_fds(), before);
	for (size_t i = 0; i < ARRAY_SIZE(jobs); i++)
		run_job_release(&jobs[i]);
	assert_no_children();
}

/* Results are reset when jobs run again. */
static void run_again(void **state)
{
	struct run_job job;

	(void)state;
	run_job_init(&job);
	assert_int_equal(job.status, -1);
	assert_int_equal(job.pid, 0);
	job_argv(&job, "sh", "-c", "echo a; echo b >&2; exit 4", NULL);
	assert_int_equal(run_jobs(&job, 1, 0, 10000, 0), 0);
	assert_int_equal(run_jobs(&job, 1, 0, 10000, 0), 0);
	assert_int_equal(job.status, 4);
	assert_string_equal(job.out.buf, "a\n");
	assert_string_equal(job.err.buf, "b\n");
	run_job_release(&job);
}

/* The lines ssh prints before it replaces a dead master are not a command's failure. */
static void ssh_dead_master_lines(void **state)
{
	char *line;

	(void)state;
	assert_true(ssh_recovered_master_line(
		"mux_client_request_session: read from master failed: Broken pipe\r"));
	assert_true(ssh_recovered_master_line(
		"ControlSocket /run/x/abc already exists, disabling multiplexing"));
	assert_false(
		ssh_recovered_master_line("ssh: connect to host n1 port 22: No route to host"));
	line = remote_first_line("mux_client_request_session: read from master failed: Broken "
				 "pipe\r\nbash: sparkctl: command not found\r\n");
	assert_string_equal(line, "bash: sparkctl: command not found");
	free(line);
	line = remote_first_line("mux_client_read_packet: read header failed: Broken pipe");
	assert_string_equal(line, "mux_client_read_packet: read header failed: Broken pipe");
	free(line);
}

/* A line as a terminal leaves it: what follows the last CR that is not at the end. */
static void ssh_line_shown(void **state)
{
	const char *cases[][2] = {
		{ "plain", "plain" },
		{ "ssh: no route\r", "ssh: no route" },
		{ "ssh: no route\r\r", "ssh: no route" },
		{ "10%\r50%\rdone", "done" },
		{ "10%\r50%\rdone\r", "done" },
		{ "\r", "" },
		{ "", "" },
	};
	char *line;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *p = cases[i][0];
		size_t n = ssh_line_as_shown(&p, strlen(p));
		assert_int_equal(n, strlen(cases[i][1]));
		assert_memory_equal(p, cases[i][1], n);
	}
	line = remote_first_line("ssh: connecting\rssh: Could not resolve hostname x: Name or "
				 "service not known\r\nmore\r\n");
	assert_string_equal(line, "ssh: Could not resolve hostname x: Name or service not known");
	free(line);
}

/* OpenSSH 9.0-9.8's default puts curve25519 first; nothing else moves. */
static void ssh_kex_order(void **state)
{
	char *k;

	(void)state;
	k = ssh_kex_curve25519_first(
		"user root\nkexalgorithms "
		"sntrup761x25519-sha512,sntrup761x25519-sha512@openssh.com,"
		"curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256\nport 22\n");
	assert_string_equal(k, "curve25519-sha256,curve25519-sha256@libssh.org,sntrup761x25519-"
			       "sha512,sntrup761x25519-sha512@openssh.com,ecdh-sha2-nistp256");
	free(k);
	/* A fast post-quantum method first stays first. */
	k = ssh_kex_curve25519_first("kexalgorithms mlkem768x25519-sha256,sntrup761x25519-sha512,"
				     "curve25519-sha256\n");
	assert_string_equal(k, "mlkem768x25519-sha256,curve25519-sha256,sntrup761x25519-sha512");
	free(k);
	/* Already first, or left out by the user's configuration: nothing to change. */
	assert_null(ssh_kex_curve25519_first(
		"kexalgorithms curve25519-sha256,sntrup761x25519-sha512\n"));
	assert_null(ssh_kex_curve25519_first("kexalgorithms sntrup761x25519-sha512\n"));
	assert_null(ssh_kex_curve25519_first(
		"kexalgorithms mlkem768x25519-sha256,curve25519-sha256\n"));
	assert_null(ssh_kex_curve25519_first("user root\n"));
}

int main(void)
{
	/* The same answers when the tests run inside a Slurm allocation. */
	unsetenv("SLURM_JOB_ID");
	unsetenv("SLURM_JOB_NODELIST");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(host_names),
		cmocka_unit_test(host_name_errors),
		cmocka_unit_test(host_range_errors),
		cmocka_unit_test(host_duplicates_and_bounds),
		cmocka_unit_test(host_local),
		cmocka_unit_test(hostfile_text),
		cmocka_unit_test(hosts_from_options),
		cmocka_unit_test(hosts_from_cluster_file),
		cmocka_unit_test(host_compress),
		cmocka_unit_test(hosts_from_slurm),
		cmocka_unit_test(hostfile_forms),
		cmocka_unit_test(hostfile_errors),
		cmocka_unit_test(hostfile_load),
		cmocka_unit_test(quoting),
		cmocka_unit_test(quoting_round_trip),
		cmocka_unit_test(ssh_argv),
		cmocka_unit_test(ssh_argv_errors),
		cmocka_unit_test(ssh_dead_master_lines),
		cmocka_unit_test(ssh_line_shown),
		cmocka_unit_test(ssh_kex_order),
		cmocka_unit_test(ssh_remote_round_trip),
		cmocka_unit_test(sparkctl_lookup),
		cmocka_unit_test(run_status),
		cmocka_unit_test(run_own_process_group),
		cmocka_unit_test(run_large_output),
		cmocka_unit_test(run_input),
		cmocka_unit_test(run_caller_stdin_closed),
		cmocka_unit_test(run_sigpipe_default),
		cmocka_unit_test(run_sigpipe_blocked),
		cmocka_unit_test(run_timeout_kills_group),
		cmocka_unit_test(run_parallel_bound),
		cmocka_unit_test(run_hold_stdin),
		cmocka_unit_test(run_servers_lifecycle),
		cmocka_unit_test(run_servers_early_exit),
		cmocka_unit_test(run_spawn_failure),
		cmocka_unit_test(run_no_fd_leaks),
		cmocka_unit_test(run_again),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
