/*
 * Unit tests of the host readers' common ground (probe/reader.h): which
 * errors are absence, the root a command reads, what a failure tells,
 * the cache of open files; and of the readers on a small tree written
 * here and on this process itself; avahi-daemon's process title.
 */
#include "sparkctl.h"

#include <sys/wait.h>

#include "test_util.h"

#include "lib/rootfs.h"
#include "probe/avahi.h"
#include "probe/cpu_topology.h"
#include "probe/meminfo.h"
#include "probe/netdevs.h"
#include "probe/procs.h"
#include "probe/reader.h"

static char tree[] = "/tmp/sparkctl-readers-XXXXXX";

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(tree))
		return -1;
	char *cmd =
		xasprintf("cd %s && mkdir -p sys/class/net/eth0/statistics proc && "
			  "cd sys/class/net/eth0 && echo 9000 > mtu && echo up > operstate && "
			  "echo 1 > carrier && echo -1 > speed && echo 5 > statistics/rx_bytes "
			  "&& mkfifo statistics/tx_bytes && cd %s && "
			  "printf 'MemTotal:  1000 kB\\nMemAvailable:  600 kB\\n' > proc/meminfo",
			  tree, tree);
	sh(cmd);
	free(cmd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	remove_tree(tree);
	return 0;
}

/* What fail() was told: "path err" or "path err 'content'", in order. */
static void record_failure(void *data, const char *path, int err, const char *content)
{
	struct strvec *told = data;

	if (content)
		strvec_pushf(told, "%s %d '%s'", path, err, content);
	else
		strvec_pushf(told, "%s %d", path, err);
}

/* Write the tree's files with the shell command cmd, run in the tree. */
static void in_tree(const char *cmd)
{
	char *full = xasprintf("cd %s && %s", tree, cmd);

	sh(full);
	free(full);
}

static void absence(void **state)
{
	static const int absent[] = { ENOENT, ENOTDIR,	  ENODEV,  ENXIO,
				      EINVAL, EOPNOTSUPP, ENODATA, EAGAIN };
	static const int failures[] = { EACCES, EPERM, EIO, EFBIG, ESPIPE, ELOOP, EISDIR, EMFILE };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(absent); i++)
		assert_true(rootfs_absent(-absent[i]));
	for (size_t i = 0; i < ARRAY_SIZE(failures); i++)
		assert_false(rootfs_absent(-failures[i]));
}

static void root_path(void **state)
{
	(void)state;
	unsetenv("SPARKCTL_ROOT");
	assert_string_equal(rootfs_root_path(NULL), "/");
	assert_string_equal(rootfs_root_path("/x"), "/x");
	assert_string_equal(rootfs_root_path(""), "/");
	setenv("SPARKCTL_ROOT", "/from-env", 1);
	assert_string_equal(rootfs_root_path(NULL), "/from-env");
	/* --root wins over the environment. */
	assert_string_equal(rootfs_root_path("/x"), "/x");
	setenv("SPARKCTL_ROOT", "", 1);
	assert_string_equal(rootfs_root_path(NULL), "/");
	unsetenv("SPARKCTL_ROOT");
}

static int keep_stat(void *data, const char *name, const char *text)
{
	struct strvec *seen = data;

	strvec_pushf(seen, "%s=%s", name, text);
	return streq(text, "bad") ? -EINVAL : 0;
}

/* Absence is silent; a file that cannot be read is told, with its path. */
static void reads(void **state)
{
	static const char *const stats[] = { "rx_bytes", "tx_bytes", "rx_packets", NULL };
	struct strvec told = STRVEC_INIT, seen = STRVEC_INIT;
	struct rootfs root;
	struct host_reader rd = { .root = &root, .fail = record_failure, .data = &told };
	struct netdev_link link;
	struct meminfo m;
	char want[128];

	(void)state;
	assert_int_equal(rootfs_open(&root, tree), 0);
	assert_int_equal(netdev_read_link(&rd, "eth0", &link), 1);
	assert_int_equal(link.mtu, 9000);
	assert_string_equal(link.operstate, "up");
	assert_int_equal(link.carrier, TRI_YES);
	assert_int_equal(link.speed_mbps, INV_UNKNOWN);
	netdev_link_release(&link);
	assert_int_equal(netdev_read_link(&rd, "eth9", &link), 0);
	netdev_link_release(&link);
	assert_int_equal(told.nr, 0);

	/* rx_packets is absent, tx_bytes a FIFO. */
	assert_int_equal(netdev_read_statistics(&rd, "eth0", stats, keep_stat, &seen), 1);
	assert_int_equal(seen.nr, 1);
	assert_string_equal(seen.v[0], "rx_bytes=5");
	assert_int_equal(told.nr, 1);
	snprintf(want, sizeof(want), "sys/class/net/eth0/statistics/tx_bytes %d", -ESPIPE);
	assert_string_equal(told.v[0], want);

	/* Content the caller cannot parse is told with the content. */
	in_tree("echo bad > sys/class/net/eth0/statistics/rx_bytes");
	netdev_read_statistics(&rd, "eth0", stats, keep_stat, &seen);
	assert_int_equal(told.nr, 3);
	snprintf(want, sizeof(want), "sys/class/net/eth0/statistics/rx_bytes %d 'bad'", -EINVAL);
	assert_string_equal(told.v[1], want);

	assert_int_equal(meminfo_read(&rd, &m), 1);
	assert_int_equal(m.mem_total, 1024000);
	assert_int_equal(m.mem_available, 614400);
	assert_int_equal(m.cma_total, INV_UNKNOWN);
	assert_int_equal(told.nr, 3);
	strvec_clear(&seen);
	strvec_clear(&told);
	rootfs_close(&root);
}

/* A NUL byte in a value, and a meminfo without MemTotal, are content errors. */
static void bad_content(void **state)
{
	struct strvec told = STRVEC_INIT;
	struct rootfs root;
	struct host_reader rd = { .root = &root, .fail = record_failure, .data = &told };
	struct strbuf v = STRBUF_INIT;
	struct meminfo m;
	char want[128];

	(void)state;
	in_tree("printf 'a\\000b' > sys/class/net/eth0/address && "
		"printf 'MemFree: 1 kB\\nMemAvailable: 2 kB\\n' > proc/meminfo");
	assert_int_equal(rootfs_open(&root, tree), 0);
	assert_int_equal(reader_value(&rd, "sys/class/net/eth0/address", &v), -EINVAL);
	/* What the file has is filled in. */
	assert_int_equal(meminfo_read(&rd, &m), 1);
	assert_int_equal(m.mem_total, INV_UNKNOWN);
	assert_int_equal(m.mem_available, 2048);
	assert_int_equal(told.nr, 2);
	snprintf(want, sizeof(want), "sys/class/net/eth0/address %d '(contains a NUL byte)'",
		 -EINVAL);
	assert_string_equal(told.v[0], want);
	assert_true(starts_with(told.v[1], "proc/meminfo "));
	strbuf_release(&v);
	strvec_clear(&told);
	rootfs_close(&root);
}

/* Write cpu C's topology: package, core_id and siblings list (run in the tree). */
static void cpu_files(unsigned c, int package, int core_id, const char *siblings)
{
	char *cmd = xasprintf("d=sys/devices/system/cpu/cpu%u/topology && mkdir -p $d && "
			      "echo %d > $d/physical_package_id && echo %d > $d/core_id && "
			      "echo %s > $d/thread_siblings_list",
			      c, package, core_id, siblings);
	in_tree(cmd);
	free(cmd);
}

/*
 * The CPUs as slurmd counts them: cores by their siblings lists (core_id
 * repeats across the clusters of an arm64 device-tree system), offline
 * CPUs not counted; a bad list is a content error; no online file, absent.
 */
static void cpu_topology(void **state)
{
	struct strvec told = STRVEC_INIT;
	struct rootfs root;
	struct host_reader rd = { .root = &root, .fail = record_failure, .data = &told };
	struct cpu_topology t;

	(void)state;
	assert_int_equal(rootfs_open(&root, tree), 0);
	assert_int_equal(cpu_read_topology(&rd, &t), 0);
	assert_int_equal(t.cpus, INV_UNKNOWN);
	/* Two sockets of two clusters of two cores, two threads each; cpu 16 offline. */
	for (unsigned c = 0; c < 16; c++) {
		char sib[32];
		unsigned core = c % 8;
		snprintf(sib, sizeof(sib), "%u,%u", core, core + 8);
		cpu_files(c, (int)(core / 4), (int)(core % 2), sib);
	}
	in_tree("echo 0-15 > sys/devices/system/cpu/online");
	assert_int_equal(cpu_read_topology(&rd, &t), 1);
	assert_int_equal(t.cpus, 16);
	assert_int_equal(t.sockets, 2);
	assert_int_equal(t.cores_per_socket, 4);
	assert_int_equal(t.threads_per_core, 2);
	/* Without siblings lists, core_id within the socket tells the cores. */
	in_tree("rm sys/devices/system/cpu/cpu*/topology/thread_siblings_list && "
		"for c in $(seq 0 15); do echo $((c % 4)) > "
		"sys/devices/system/cpu/cpu$c/topology/core_id; done && "
		"echo 0-3,8-11 > sys/devices/system/cpu/online");
	assert_int_equal(cpu_read_topology(&rd, &t), 1);
	assert_int_equal(t.cpus, 8);
	assert_int_equal(t.sockets, 1);
	assert_int_equal(t.cores_per_socket, 4);
	assert_int_equal(t.threads_per_core, 2);
	assert_int_equal(told.nr, 0);
	in_tree("echo 0-3, > sys/devices/system/cpu/online");
	assert_int_equal(cpu_read_topology(&rd, &t), -EINVAL);
	assert_int_equal(told.nr, 1);
	assert_true(starts_with(told.v[0], "sys/devices/system/cpu/online "));
	in_tree("echo 3-1 > sys/devices/system/cpu/online");
	assert_int_equal(cpu_read_topology(&rd, &t), -EINVAL);
	in_tree("echo 0 > sys/devices/system/cpu/online && "
		"echo 0-x > sys/devices/system/cpu/cpu0/topology/thread_siblings_list");
	assert_int_equal(cpu_read_topology(&rd, &t), -EINVAL);
	assert_int_equal(told.nr, 3);
	assert_true(strstr(told.v[2], "cpu0/topology/thread_siblings_list") != NULL);
	in_tree("rm -r sys/devices/system/cpu");
	strvec_clear(&told);
	rootfs_close(&root);
}

/* A cached directory is reread, sees new values, and goes at the sweep after a round without it. */
static void cache(void **state)
{
	static const char *const names[] = { "mtu", "carrier", NULL };
	struct rootfs root;
	struct host_reader rd = { .root = &root, .cache = reader_cache_new() };
	struct reader_dir d;
	struct strbuf v = STRBUF_INIT;
	const struct strvec *listed;

	(void)state;
	assert_int_equal(rootfs_open(&root, tree), 0);
	assert_int_equal(reader_dir_open(&rd, "sys/class/net/eth0", names, &d), 1);
	assert_int_equal(reader_dir_value(&d, "mtu", &v), 1);
	assert_string_equal(v.buf, "9000");
	/* Only the names it was opened with. */
	assert_int_equal(reader_dir_value(&d, "operstate", &v), 0);
	assert_int_equal(reader_dir_list(&d, &listed), 2);
	reader_dir_close(&d);
	reader_cache_sweep(rd.cache);

	in_tree("echo 1500 > sys/class/net/eth0/mtu");
	assert_int_equal(reader_dir_open(&rd, "sys/class/net/eth0", names, &d), 1);
	assert_int_equal(reader_dir_value(&d, "carrier", &v), 1);
	assert_string_equal(v.buf, "1");
	assert_int_equal(reader_dir_value(&d, "mtu", &v), 1);
	assert_string_equal(v.buf, "1500");
	reader_dir_close(&d);
	/* A round that does not read it closes it; the next one opens it again. */
	reader_cache_sweep(rd.cache);
	reader_cache_sweep(rd.cache);
	assert_int_equal(reader_dir_open(&rd, "sys/class/net/eth9", names, &d), 0);
	reader_dir_close(&d);
	assert_int_equal(reader_dir_open(&rd, "sys/class/net/eth0", names, &d), 1);
	assert_int_equal(reader_dir_value(&d, "mtu", &v), 1);
	assert_string_equal(v.buf, "1500");
	reader_dir_close(&d);
	reader_cache_free(rd.cache);
	strbuf_release(&v);
	rootfs_close(&root);
}

/* This process, through /proc of the live kernel. */
static void procs(void **state)
{
	struct strbuf path = STRBUF_INIT;
	struct proc_table t;
	char *want = realpath("/proc/self/exe", NULL);
	bool found = false;

	(void)state;
	assert_int_equal(proc_self_path(&path), 0);
	assert_string_equal(path.buf, want);
	assert_int_equal(proc_table_scan(&t), 0);
	for (size_t i = 0; i < t.nr; i++)
		if (t.v[i].pid == getpid())
			found = t.v[i].ppid == getppid() && t.v[i].sid == getsid(0);
	assert_true(found);
	proc_table_release(&t);
	free(want);
	strbuf_release(&path);
}

/* Whether the process an identity names still runs. */
static void identities(void **state)
{
	struct proc_identity self, other;
	int status;
	pid_t child;

	(void)state;
	assert_int_equal(proc_identity_self(&self), 0);
	assert_int_equal(self.pid, getpid());
	assert_true(self.start_ticks > 0);
	assert_int_equal(strlen(self.boot_id), 36);
	assert_true(starts_with(self.pid_ns, "pid:["));
	assert_int_equal(proc_identity_running(&self), 1);
	/* Its pid taken by a later process. */
	other = self;
	other.start_ticks++;
	assert_int_equal(proc_identity_running(&other), 0);
	/* Another boot of this host: ended. */
	other = self;
	other.boot_id[0] = other.boot_id[0] == '0' ? '1' : '0';
	assert_int_equal(proc_identity_running(&other), 0);
	/* Another host or pid namespace: cannot be told. */
	other = self;
	memcpy(other.host, "elsewhere", sizeof("elsewhere"));
	assert_int_equal(proc_identity_running(&other), -EXDEV);
	other = self;
	memcpy(other.pid_ns, "pid:[1]", sizeof("pid:[1]"));
	assert_int_equal(proc_identity_running(&other), -EXDEV);
	/* Another process: running, then a zombie, then reaped. */
	int id_pipe[2], go_pipe[2];
	char go;
	assert_int_equal(pipe(id_pipe), 0);
	assert_int_equal(pipe(go_pipe), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		close(go_pipe[1]);
		if (proc_identity_self(&other) < 0 ||
		    write(id_pipe[1], &other, sizeof(other)) != (ssize_t)sizeof(other))
			_exit(1);
		_exit(read(go_pipe[0], &go, 1) == 0 ? 0 : 1);
	}
	close(go_pipe[0]);
	assert_int_equal(read(id_pipe[0], &other, sizeof(other)), (ssize_t)sizeof(other));
	assert_int_equal(other.pid, child);
	assert_int_equal(proc_identity_running(&other), 1);
	close(go_pipe[1]);
	assert_int_equal(waitid(P_PID, (id_t)child, &(siginfo_t){ 0 }, WEXITED | WNOWAIT), 0);
	assert_int_equal(proc_identity_running(&other), 0);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_int_equal(status, 0);
	assert_int_equal(proc_identity_running(&other), 0);
	close(id_pipe[0]);
	close(id_pipe[1]);
}

/* avahi-daemon's process titles, as setproctitle leaves them: the title, then NULs. */
static void avahi_titles(void **state)
{
	static const struct {
		const char *cmdline;
		size_t len; /* 0: strlen */
		int want;
		const char *name;
	} cases[] = {
		{ "avahi-daemon: running [node1-2.local]\0\0\0", 41, 1, "node1-2.local" },
		{ "avahi-daemon: running [Spark-01.local]", 0, 1, "Spark-01.local" },
		{ "avahi-daemon: registering [node1.local]\0", 40, 1, "node1.local" },
		/* setproctitle that pads with blanks */
		{ "avahi-daemon: running [node1.local]   ", 0, 1, "node1.local" },
		{ "avahi-daemon: starting up\0\0", 27, 0, NULL },
		{ "avahi-daemon: chroot helper", 0, 0, NULL },
		{ "avahi-daemon: running []", 0, 0, NULL },
		{ "avahi-daemon: running [node1.local", 0, 0, NULL },
		{ "avahi-daemon: running [a b.local]", 0, 0, NULL },
		{ "avahi-daemon: running [a\x01.local]", 0, 0, NULL },
		/* the daemon before it set its title, and other programs */
		{ "/usr/sbin/avahi-daemon\0-s\0", 26, -ENOENT, NULL },
		{ "avahi-daemon:running [x.local]", 0, -ENOENT, NULL },
		{ "sshd: avahi-daemon: running [x.local]", 0, -ENOENT, NULL },
		{ "", 0, -ENOENT, NULL },
		/* only argv[0] is the title */
		{ "avahi\0-daemon: running [x.local]", 33, -ENOENT, NULL },
	};
	struct strbuf name = STRBUF_INIT;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].cmdline);
		strbuf_addstr(&name, "stale");
		assert_int_equal(avahi_title_parse(cases[i].cmdline, len, &name), cases[i].want);
		assert_string_equal(name.buf, cases[i].name ? cases[i].name : "");
	}
	/* the one command line a capture holds, cut to its title */
	assert_true(avahi_cmdline_path("proc/1187/cmdline"));
	assert_false(avahi_cmdline_path("proc/self/cmdline"));
	assert_false(avahi_cmdline_path("proc/1187/environ"));
	assert_false(avahi_cmdline_path("proc//cmdline"));
	assert_false(avahi_cmdline_path("x/proc/1/cmdline"));
	strbuf_release(&name);
}

/* Whether rec holds a file record of path. */
static bool recorded_file(const struct rootfs_recorder *rec, const char *path)
{
	for (size_t i = 0; i < rec->nr; i++)
		if (rec->records[i].kind == ROOTFS_RECORD_FILE && streq(rec->records[i].path, path))
			return true;
	return false;
}

/*
 * The scan of proc/: the lowest pid whose title names the host, in this
 * network namespace where that can be told; only its cmdline is recorded
 * for a capture, and no other process's read is told as a failure.
 */
static void avahi_scan(void **state)
{
	struct strvec told = STRVEC_INIT;
	struct rootfs_recorder rec = { 0 };
	struct rootfs root;
	struct host_reader rd = { .root = &root, .fail = record_failure, .data = &told };
	struct strbuf name = STRBUF_INIT;

	(void)state;
	assert_int_equal(rootfs_open(&root, tree), 0);
	/* no process at all */
	assert_int_equal(avahi_host_name_read(&rd, &name), 0);
	in_tree("mkdir -p proc/1 proc/45 proc/77 proc/88 proc/300 proc/1000 proc/2000 proc/abc && "
		"printf '/sbin/init\\0splash\\0' > proc/1/cmdline && "
		"printf 'avahi-daemon: starting up\\0\\0' > proc/45/cmdline && "
		"head -c 8192 /dev/zero | tr '\\0' x > proc/77/cmdline && "
		"printf 'avahi-daemon: chroot helper\\0' > proc/300/cmdline && "
		"printf 'avahi-daemon: running [node1-3.local]\\0\\0' > proc/2000/cmdline && "
		"printf 'avahi-daemon: running [node1-2.local]\\0\\0' > proc/1000/cmdline && "
		"printf 'avahi-daemon: running [abc.local]\\0' > proc/abc/cmdline");
	assert_int_equal(avahi_host_name_read(&rd, &name), 1);
	assert_string_equal(name.buf, "node1-2.local");
	assert_int_equal(told.nr, 0);

	/* Another network namespace's daemon is not this node's; one that cannot be told counts. */
	in_tree("mkdir -p proc/self/ns proc/1000/ns proc/2000/ns && "
		"ln -s 'net:[4026531840]' proc/self/ns/net && "
		"ln -s 'net:[4026532001]' proc/1000/ns/net && "
		"ln -s 'net:[4026531840]' proc/2000/ns/net && "
		"mkdir proc/3000 && "
		"printf 'avahi-daemon: registering [node1-4.local]\\0' > proc/3000/cmdline");
	assert_int_equal(avahi_host_name_read(&rd, &name), 1);
	assert_string_equal(name.buf, "node1-3.local");
	in_tree("rm proc/2000/ns/net && ln -s 'net:[4026532002]' proc/2000/ns/net");
	assert_int_equal(avahi_host_name_read(&rd, &name), 1);
	assert_string_equal(name.buf, "node1-4.local");

	/* A capture keeps the daemon's cmdline alone. */
	root.recorder = &rec;
	assert_int_equal(avahi_host_name_read(&rd, &name), 1);
	assert_true(recorded_file(&rec, "proc/3000/cmdline"));
	for (size_t i = 0; i < rec.nr; i++)
		assert_true(rec.records[i].kind != ROOTFS_RECORD_FILE ||
			    streq(rec.records[i].path, "proc/3000/cmdline"));
	root.recorder = NULL;
	rootfs_recorder_release(&rec);

	/* No daemon holds a name. */
	in_tree("rm -r proc/1000 proc/2000 proc/3000");
	assert_int_equal(avahi_host_name_read(&rd, &name), 0);
	assert_string_equal(name.buf, "");
	assert_int_equal(told.nr, 0);
	in_tree("rm -r proc/1 proc/45 proc/77 proc/88 proc/300 proc/abc proc/self");
	strbuf_release(&name);
	strvec_clear(&told);
	rootfs_close(&root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(absence),    cmocka_unit_test(root_path),
		cmocka_unit_test(reads),      cmocka_unit_test(bad_content),
		cmocka_unit_test(cache),      cmocka_unit_test(procs),
		cmocka_unit_test(identities), cmocka_unit_test(avahi_titles),
		cmocka_unit_test(avahi_scan), cmocka_unit_test(cpu_topology),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
