/*
 * session.h - running sparkctl and other commands on the nodes, for the
 * commands that work across a cluster (doctor, status, top, bench link):
 * SSH with multiplexed connections that end with the command, or directly
 * for this machine's names; the nodes' inventories gathered in parallel.
 */
#ifndef SPARKCTL_SESSION_H
#define SPARKCTL_SESSION_H

#include "sparkctl.h"
#include "lib/strvec.h"
#include "remote/ssh.h"

struct doctor_cluster;
struct run_job;

struct remote_session {
	struct ssh_options ssh;
	char control_dir[SSH_CONTROL_DIR_MAX + 1];
	char *sparkctl;	     /* this program, or --remote-sparkctl's path */
	bool sparkctl_given; /* --remote-sparkctl: that path alone, no lookup */
	char *kex;	     /* rs->ssh.kex: remote_session_fast_kex()'s list, or NULL */
	struct strvec
		hosts; /* the nodes reached over SSH, whose masters remote_session_close() ends */
	/* Given: remote_gather_inventories() asks for this job user's ids (topo --slurm-user). */
	const char *slurm_user;
};

/*
 * SSH as $SPARKCTL_SSH or ssh; remote_sparkctl NULL: this program's own
 * path.  multiplex: one master connection per node, which
 * remote_session_close() ends.
 */
void remote_session_init(struct remote_session *rs, const char *remote_sparkctl, bool multiplex);
/*
 * Before the first remote_session_argv(): the key exchange of ssh_fast_kex()
 * for the nodes among hosts that are reached over SSH (curve25519 first),
 * kept per host in the shared control directory as launch keeps it.
 */
void remote_session_fast_kex(struct remote_session *rs, const char *const *hosts, size_t n);
/* The argv that runs argv_remote on host (appended to out); -EINVAL for a bad host name. */
int remote_session_argv(struct remote_session *rs, const char *host, const char *const *argv_remote,
			struct strvec *out);
/*
 * The argv that runs sparkctl with args (NULL-terminated) on host: this
 * program here; elsewhere the node's sparkctl as remote_sparkctl_words()
 * finds it (remote/lookup.h), or --remote-sparkctl's path.
 */
int remote_session_sparkctl_argv(struct remote_session *rs, const char *host,
				 const char *const *args, struct strvec *out);
/*
 * Every node's inventory, by 'sparkctl topo --json' on each, at most
 * fanout at once: a node is inspected, or has an error that says why not.
 */
void remote_gather_inventories(struct remote_session *rs, struct doctor_cluster *c, unsigned fanout,
			       unsigned timeout_ms);
/* End the master connection to every node reached (nothing outlives the command); free rs. */
void remote_session_close(struct remote_session *rs);

/*
 * Why a command run on host (run_jobs, timeout_ms) did not succeed -
 * not started, timed out, no sparkctl there (remote_sparkctl_missing()),
 * or its first line of error and exit status - allocated; NULL when it
 * exited 0.
 */
char *remote_failure(const struct run_job *j, const char *host, unsigned timeout_ms);

/*
 * The first line of text as a terminal shows it (ssh_line_as_shown(): no CR),
 * at most 200 bytes, for messages: escaped for the terminal
 * (strbuf_add_printable); allocated.
 */
char *remote_first_line(const char *text);

#endif
