/* ssh.c - ssh argument vectors and POSIX shell quoting. */
#include "sparkctl.h"

#include <dirent.h>
#include <time.h>

#include "lib/atomic_file.h"
#include "lib/xalloc.h"
#include "proc/run.h"
#include "remote/ssh.h"

#define SSH_CONNECT_TIMEOUT_DEFAULT 5

void shell_quote(struct strbuf *out, const char *word)
{
	/* Inside single quotes every byte is literal; only ' itself needs '\''. */
	strbuf_addch(out, '\'');
	for (const char *p = word; *p; p++) {
		if (*p == '\'')
			strbuf_addstr(out, "'\\''");
		else
			strbuf_addch(out, *p);
	}
	strbuf_addch(out, '\'');
}

/*
 * ssh reads "-o" values with its config-line parser, which splits at
 * whitespace and interprets quotes and backslashes, so such a directory
 * cannot be passed through intact.
 */
static bool control_dir_ok(const char *dir)
{
	if (!*dir)
		return false;
	for (const unsigned char *p = (const unsigned char *)dir; *p; p++)
		if (*p <= 0x20 || *p == 0x7f || *p == '"' || *p == '\'' || *p == '\\')
			return false;
	return true;
}

int ssh_command(struct strvec *out, const char *host, const struct ssh_options *o,
		const char *const *remote_argv)
{
	static const struct ssh_options defaults;
	struct strbuf sb = STRBUF_INIT;

	if (!o)
		o = &defaults;
	/* A leading '-' could still be read as an option by a wrapper that ignores "--". */
	if (!host || !*host || host[0] == '-')
		return -EINVAL;
	/* Without a command ssh would start a login shell. */
	if (!remote_argv || !remote_argv[0])
		return -EINVAL;
	if (o->control_dir && !control_dir_ok(o->control_dir))
		return -EINVAL;
	/* ssh itself would fail only when it first sets up the master. */
	if (o->control_dir && strlen(o->control_dir) > SSH_CONTROL_DIR_MAX)
		return -ENAMETOOLONG;

	strvec_push(out, o->program ? o->program : "ssh");
	strvec_push(out, "-o");
	strvec_push(out, "BatchMode=yes");
	strvec_push(out, "-o");
	strvec_pushf(out, "ConnectTimeout=%u",
		     o->connect_timeout ? o->connect_timeout : SSH_CONNECT_TIMEOUT_DEFAULT);
	if (o->control_dir) {
		strvec_push(out, "-o");
		strvec_push(out, "ControlMaster=auto");
		/* ssh expands %-tokens in ControlPath: a literal '%' of the directory is "%%". */
		strvec_push(out, "-o");
		strbuf_addstr(&sb, "ControlPath=");
		for (const char *p = o->control_dir; *p; p++) {
			if (*p == '%')
				strbuf_addch(&sb, '%');
			strbuf_addch(&sb, *p);
		}
		strbuf_addstr(&sb, "/%C");
		strvec_push_nodup(out, strbuf_detach(&sb, NULL));
		strvec_push(out, "-o");
		strvec_push(out, "ControlPersist=60");
	}
	if (o->kex) {
		strvec_push(out, "-o");
		strvec_pushf(out, "KexAlgorithms=%s", o->kex);
	}
	if (o->extra_options) {
		for (size_t i = 0; i < o->extra_options->nr; i++) {
			strvec_push(out, "-o");
			strvec_push(out, o->extra_options->v[i]);
		}
	}
	strvec_push(out, "--");
	strvec_push(out, host);
	/*
	 * ssh joins its command arguments with spaces and hands the result to
	 * the remote login shell: one argument, quoted here, says exactly that.
	 */
	for (size_t i = 0; remote_argv[i]; i++) {
		if (i)
			strbuf_addch(&sb, ' ');
		shell_quote(&sb, remote_argv[i]);
	}
	strvec_push_nodup(out, strbuf_detach(&sb, NULL));
	return 0;
}

int ssh_control_dir_make(char dir[SSH_CONTROL_DIR_MAX + 1])
{
	static const char name[] = "/sparkctl-ssh-XXXXXX";
	const char *tmpdir = getenv("TMPDIR");

	if (!tmpdir || !*tmpdir || strlen(tmpdir) + sizeof(name) - 1 > SSH_CONTROL_DIR_MAX)
		tmpdir = "/tmp";
	snprintf(dir, SSH_CONTROL_DIR_MAX + 1, "%s%s", tmpdir, name);
	return mkdtemp(dir) ? 0 : -errno;
}

int ssh_control_dir_shared(char dir[SSH_CONTROL_DIR_MAX + 1])
{
	const char *env = getenv("SPARKCTL_SSH_CONTROL_DIR");
	const char *runtime = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	int n;

	if (env && *env)
		n = snprintf(dir, SSH_CONTROL_DIR_MAX + 1, "%s", env);
	else if (runtime && *runtime == '/')
		n = snprintf(dir, SSH_CONTROL_DIR_MAX + 1, "%s/sparkctl-ssh", runtime);
	else
		n = snprintf(dir, SSH_CONTROL_DIR_MAX + 1, "/tmp/sparkctl-ssh-%u",
			     (unsigned)geteuid());
	if (n < 0 || n > SSH_CONTROL_DIR_MAX)
		return -ENAMETOOLONG;
	if (!control_dir_ok(dir))
		return -EINVAL;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	/* Whoever can write here could hand us their own master: it must be ours alone. */
	if (lstat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		return -EPERM;
	return 0;
}

static void remove_dir_contents(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)))
		if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
}

void ssh_control_dir_remove(const char *dir)
{
	for (int tries = 0; tries < 40 && rmdir(dir) < 0 && errno == ENOTEMPTY; tries++) {
		struct timespec pause = { 0, 25 * 1000 * 1000 };
		nanosleep(&pause, NULL);
	}
	remove_dir_contents(dir);
	rmdir(dir);
}

bool ssh_recovered_master_line(const char *line)
{
	/* OpenSSH's mux client, before it falls back to a connection of its own. */
	if (starts_with(line, "mux_client_"))
		return true;
	return starts_with(line, "ControlSocket ") &&
	       strstr(line, " already exists, disabling multiplexing");
}

size_t ssh_line_as_shown(const char **line, size_t len)
{
	const char *p = *line;
	size_t start;

	while (len && p[len - 1] == '\r')
		len--;
	start = len;
	while (start && p[start - 1] != '\r')
		start--;
	*line = p + start;
	return len - start;
}

/* The value of "kexalgorithms" in 'ssh -G' output (allocated), or NULL. */
static char *g_value(const char *text, const char *key)
{
	size_t n = strlen(key);

	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		if (len > n && !strncmp(line, key, n) && line[n] == ' ')
			return xstrndup(line + n + 1, len - n - 1);
		line = end ? end + 1 : NULL;
	}
	return NULL;
}

static bool is_curve25519(const char *kex)
{
	return streq(kex, "curve25519-sha256") || streq(kex, "curve25519-sha256@libssh.org");
}

char *ssh_kex_curve25519_first(const char *ssh_g_output)
{
	char *list = g_value(ssh_g_output, "kexalgorithms"), *save = NULL;
	struct strvec all = STRVEC_INIT, sntrup = STRVEC_INIT;
	struct strbuf out = STRBUF_INIT;
	bool slow_first = false, have_curve = false;

	if (!list)
		return NULL;
	for (char *k = strtok_r(list, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
		bool slow = starts_with(k, "sntrup761x25519");
		if (is_curve25519(k))
			have_curve = true;
		else if (slow && !have_curve)
			slow_first = true;
		strvec_push(slow && !have_curve ? &sntrup : &all, k);
	}
	free(list);
	if (slow_first && have_curve) {
		/* all: the list without the sntrup761 methods that came before curve25519 */
		for (size_t i = 0; i < all.nr; i++) {
			strbuf_addf(&out, "%s%s", out.len ? "," : "", all.v[i]);
			if (is_curve25519(all.v[i]) &&
			    (i + 1 == all.nr || !is_curve25519(all.v[i + 1])))
				for (size_t k = 0; k < sntrup.nr; k++)
					strbuf_addf(&out, ",%s", sntrup.v[k]);
		}
	}
	strvec_clear(&all);
	strvec_clear(&sntrup);
	if (!out.len) {
		strbuf_release(&out);
		return NULL;
	}
	return strbuf_detach(&out, NULL);
}

/*
 * What 'ssh -G' said of host, kept in the control directory for as long as
 * a master lives there (ControlPersist), so that a launch over kept
 * connections does not ask again: "kex-HEX(host)", holding the list or
 * nothing (no change).  1 and *ret (allocated, NULL for no change) when
 * fresh, 0 when not there or old.
 */
#define KEX_CACHE_S 60

static char *kex_cache_name(const char *host)
{
	struct strbuf name = STRBUF_INIT;

	strbuf_addstr(&name, "kex-");
	strbuf_add_hex(&name, host, strlen(host));
	return strbuf_detach(&name, NULL);
}

static int kex_cache_read(const char *dir, const char *host, char **ret)
{
	char *name = kex_cache_name(host), buf[4096];
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd = -1, r = 0;
	struct stat st;
	ssize_t n;

	if (dfd >= 0)
		fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	    time(NULL) - st.st_mtime < KEX_CACHE_S && (n = read(fd, buf, sizeof(buf) - 1)) >= 0 &&
	    (size_t)n < sizeof(buf) - 1) {
		buf[n] = '\0';
		*ret = n ? xstrdup(buf) : NULL;
		r = 1;
	}
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	free(name);
	return r;
}

static void kex_cache_write(const char *dir, const char *host, const char *kex)
{
	char *name = kex_cache_name(host);
	struct strbuf err = STRBUF_INIT;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd >= 0) {
		atomic_replace(dfd, name, kex ? kex : "", kex ? strlen(kex) : 0, 0600, NULL, &err);
		close(dfd);
	}
	strbuf_release(&err);
	free(name);
}

char *ssh_fast_kex(const struct ssh_options *o, const char *const *hosts, size_t n)
{
	struct run_job *jobs = xcalloc(n ? n : 1, sizeof(*jobs));
	char **found = xcalloc(n ? n : 1, sizeof(*found)), *kex = NULL;
	size_t nr_jobs = 0, *job_host = xcalloc(n ? n : 1, sizeof(*job_host));
	bool same = n > 0;

	for (size_t i = 0; i < n; i++) {
		if (o->control_dir && kex_cache_read(o->control_dir, hosts[i], &found[i]) == 1)
			continue;
		run_job_init(&jobs[nr_jobs]);
		strvec_pushl(&jobs[nr_jobs].argv, o->program ? o->program : "ssh", "-G", "--",
			     hosts[i], NULL);
		job_host[nr_jobs++] = i;
	}
	if (nr_jobs && run_jobs(jobs, nr_jobs, 0, 5000, 1 << 20) < 0)
		same = false;
	for (size_t j = 0; j < nr_jobs && same; j++) {
		if (jobs[j].status != 0) {
			same = false; /* ssh could not tell: leave it to ssh */
			break;
		}
		found[job_host[j]] = ssh_kex_curve25519_first(jobs[j].out.buf);
		if (o->control_dir)
			kex_cache_write(o->control_dir, hosts[job_host[j]], found[job_host[j]]);
	}
	/* One list for all, and only where every host would change the same way. */
	for (size_t i = 0; i < n && same; i++)
		same = found[i] && streq(found[i], found[0]);
	if (same)
		kex = xstrdup(found[0]);
	for (size_t j = 0; j < nr_jobs; j++)
		run_job_release(&jobs[j]);
	for (size_t i = 0; i < n; i++)
		free(found[i]);
	free(found);
	free(job_host);
	free(jobs);
	return kex;
}
