/* ssh.c - ssh argument vectors and POSIX shell quoting. */
#include "sparkctl.h"

#include <dirent.h>
#include <time.h>

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
