/*
 * ssh.h - commands for other nodes, through the system ssh client.
 *
 * The system ssh honours the user's ~/.ssh/config, agents and ProxyJump.
 * Remote commands are built as argument vectors and quoted exactly once
 * for the remote shell, so every byte of every argument arrives intact.
 */
#ifndef SPARKCTL_SSH_H
#define SPARKCTL_SSH_H

#include "sparkctl.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

struct ssh_options {
	const char *program;	  /* "ssh" unless set ($SPARKCTL_SSH in tests and odd setups) */
	unsigned connect_timeout; /* seconds; 0 means 5 */
	const char *control_dir;  /* ControlMaster multiplexing sockets go here; NULL: none */
	const struct strvec *extra_options; /* more "-o KEY=VALUE" options, verbatim */
	const char *kex; /* "-o KexAlgorithms=..." (ssh_fast_kex()), or NULL: ssh's own */
};

/*
 * The longest control_dir: the master's socket is first created as
 * DIR/<40 hex digits of %C>.<16 random characters>, and a Unix socket
 * path holds at most 107 bytes.
 */
#define SSH_CONTROL_DIR_MAX 49

/*
 * Make a private directory for the control sockets: $TMPDIR/sparkctl-ssh-XXXXXX
 * when that is short enough, else under /tmp.  Returns 0 or -errno.
 */
int ssh_control_dir_make(char dir[SSH_CONTROL_DIR_MAX + 1]);
/*
 * The directory whose masters outlive one command (ControlPersist), so the
 * next command to the same node starts without a handshake:
 * $SPARKCTL_SSH_CONTROL_DIR, else $XDG_RUNTIME_DIR/sparkctl-ssh, else
 * /tmp/sparkctl-ssh-UID; created 0700 if missing.  Refused (-EPERM) unless
 * it is a directory of this user that no one else may enter; -ENAMETOOLONG
 * when the path is too long for ssh's socket names.
 */
int ssh_control_dir_shared(char dir[SSH_CONTROL_DIR_MAX + 1]);
/*
 * Remove it once the masters were told to exit (each removes its socket a
 * moment after '-O exit' returns, or as it ends with ControlPersist=no).
 */
void ssh_control_dir_remove(const char *dir);

/* Append word to out, quoted for a POSIX shell ('it'\''s'); empty words become ''. */
void shell_quote(struct strbuf *out, const char *word);

/*
 * Build the argv that runs remote_argv (NULL-terminated) on host:
 *   ssh -o BatchMode=yes -o ConnectTimeout=N [-o ControlMaster=auto
 *       -o ControlPath=DIR/%C -o ControlPersist=60] [extra] -- host 'w1' 'w2' ...
 * Returns -EINVAL for a host that starts with '-' or is empty.
 *
 * The remote words travel as one argument, each shell-quoted, joined by
 * spaces (ssh would join them anyway).  o may be NULL for the defaults.
 * The strings are appended to out, which is left untouched on failure.
 * Also -EINVAL for an empty remote_argv (ssh would start a login shell)
 * and for a control_dir that is empty or holds whitespace, quotes or
 * backslashes (ssh's option parser would split it); -ENAMETOOLONG for a
 * control_dir longer than SSH_CONTROL_DIR_MAX.  A '%' in control_dir is
 * passed as "%%".
 */
int ssh_command(struct strvec *out, const char *host, const struct ssh_options *o,
		const char *const *remote_argv);

/*
 * True for a line ssh prints when a kept master connection turned out to
 * be dead (the node's sshd restarted, the link was down): ssh then makes
 * a new connection by itself, so the line says nothing about the command.
 * ('ssh -O check' cannot tell: a master answers it without the server.)
 */
bool ssh_recovered_master_line(const char *line);

/*
 * A line of ssh's or a remote command's stderr (without its LF) as a
 * terminal leaves it on the screen: a CR sends the cursor back, so the
 * last part that is not empty is what one reads (ssh ends its own
 * messages with CR LF; progress meters rewrite one line).  Returns that
 * part's length and points *line at it; no CR is in it.
 */
size_t ssh_line_as_shown(const char **line, size_t len);

/*
 * The key exchange: OpenSSH 9.0-9.8 put sntrup761x25519 first, whose
 * Streamlined NTRU Prime key generation takes most of a new connection's
 * CPU time (about 70 ms of 200 on an x86 core).  Given the text of
 * 'ssh -G HOST', the same list with curve25519-sha256 (and its
 * @libssh.org name) moved before the sntrup761 methods, or NULL when
 * nothing is to change: no sntrup761 before curve25519, or no curve25519
 * at all (the configuration left it out).  Nothing else moves, and a faster
 * post-quantum method first (mlkem768x25519, OpenSSH 9.9) stays first.
 */
char *ssh_kex_curve25519_first(const char *ssh_g_output);
/*
 * Ask ssh (o->program) for the key exchange of each host ('ssh -G', no
 * connection): the reordered list when every host has the same one, for
 * "-o KexAlgorithms=..."; NULL otherwise, or when ssh cannot tell.
 */
char *ssh_fast_kex(const struct ssh_options *o, const char *const *hosts, size_t n);

#endif
