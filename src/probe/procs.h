/*
 * procs.h - finding and ending processes through /proc.
 *
 * For 'sparkctl launch': the processes of a job are found by what they
 * cannot shed by double-forking - their ancestry (the agent is a child
 * subreaper, so orphans come back to it), their session id, and the
 * SPARKCTL_JOB_ID variable in every rank's environment - never by
 * matching names.  And the process that holds a TCP port, to say who it
 * is, and this program's own path.  These read /proc of the running
 * kernel through a root opened on "/" (lib/rootfs.h), never a captured
 * tree: they are about live processes, not about the host's description.
 * None prints.
 */
#ifndef SPARKCTL_PROBE_PROCS_H
#define SPARKCTL_PROBE_PROCS_H

#include "sparkctl.h"
#include "lib/strbuf.h"

struct proc_entry {
	pid_t pid, ppid, pgid, sid;
	char state;	      /* 'R', 'S', ..., 'Z' for a zombie */
	uint64_t start_ticks; /* when it started, in clock ticks after boot; 0 if unknown */
};

/* A snapshot of every process. */
struct proc_table {
	struct proc_entry *v;
	size_t nr;
};

struct proc_list {
	pid_t *pids;
	size_t nr;
};

/*
 * Parse the text of /proc/PID/stat ("pid (comm) state ppid pgrp session
 * ..."; comm may hold spaces and parentheses).  -EINVAL if malformed.
 */
int proc_stat_parse(const char *text, struct proc_entry *out);

/*
 * The inode of the socket listening on TCP port in the text of
 * /proc/net/tcp or /proc/net/tcp6: 1 and *ret_inode when found, 0 when
 * not, -EINVAL for text that is not such a table.
 */
int tcp_table_find_listener(const char *text, unsigned port, unsigned long *ret_inode);

/*
 * The processes of t that started at or after start_ticks (and those whose
 * start is unknown): a process cannot carry a job's marks from before the
 * job, so the environments of older ones need not be read.
 */
void procs_started_since(const struct proc_table *t, uint64_t start_ticks, struct proc_table *out);

/* One process's entry: 0, or -errno (-ENOENT: it is gone). */
int proc_entry_read(pid_t pid, struct proc_entry *out);

/* Every process now (those that vanish while being read are left out). */
int proc_table_scan(struct proc_table *t);
void proc_table_release(struct proc_table *t);

/*
 * Selections from a snapshot, appended to out; zombies are left out (they
 * are already dead and cannot be signalled away).
 */
void procs_descendants(const struct proc_table *t, pid_t root, struct proc_list *out);
void procs_in_session(const struct proc_table *t, pid_t sid, struct proc_list *out);
/*
 * The processes whose initial environment (/proc/PID/environ) holds every
 * "NAME=VALUE" entry of the NULL-terminated list exactly; those that
 * cannot be read (another user's, without privileges) are skipped.
 */
void procs_with_env(const struct proc_table *t, const char *const *entries, struct proc_list *out);

/* Add pid unless it is there already. */
void proc_list_add(struct proc_list *l, pid_t pid);
bool proc_list_has(const struct proc_list *l, pid_t pid);
void proc_list_release(struct proc_list *l);

/* The value of NAME in process pid's initial environment (allocated), or NULL. */
char *proc_env_value(pid_t pid, const char *name);

/*
 * Process pid's command line, its arguments joined by spaces and cut to
 * max bytes (allocated), or NULL when it cannot be read.
 */
char *proc_cmdline(pid_t pid, size_t max);

/*
 * The process that listens on TCP port (IPv4 or IPv6, any address) in
 * this network namespace.  Returns 1 with *ret_pid set; 1 with *ret_pid 0
 * when the port is held but its owner cannot be seen (another user's
 * process, without privileges); 0 when nothing listens on it.
 */
int tcp_port_owner(unsigned port, pid_t *ret_pid);

/*
 * Send sig to every process of the list except the caller; one that is
 * gone already is not an error.  Returns the number signalled.
 */
size_t procs_signal(const struct proc_list *l, int sig);

/*
 * Who a process is, beyond its pid, which is reused: when it started, on
 * which boot of which host, in which pid namespace.  Written into a mark
 * (a capture's partial tree), it lets a later process tell whether the one
 * that made the mark still runs.
 */
struct proc_identity {
	pid_t pid;
	uint64_t start_ticks; /* clock ticks after boot (/proc/PID/stat) */
	char boot_id[64];     /* /proc/sys/kernel/random/boot_id */
	char pid_ns[64];      /* the link /proc/self/ns/pid: "pid:[4026531836]" */
	char host[72];	      /* the host name (uname) */
};

/* This process's identity: 0 or -errno. */
int proc_identity_self(struct proc_identity *id);
/*
 * Whether the process id describes still runs: 1 when it does, 0 when it
 * has ended (no such process, its pid taken by a later one, a zombie, or
 * the host rebooted since), -EXDEV when this process cannot tell (another
 * host, another pid namespace), another negative errno when /proc cannot
 * be read.  Only 0 means "ended".
 */
int proc_identity_running(const struct proc_identity *id);

/* The absolute path of this program (proc/self/exe, symlinks resolved) into out: 0 or -errno. */
int proc_self_path(struct strbuf *out);
/*
 * This program's executable, whole (at most max bytes), into out (reset
 * first): what 'sparkctl deploy' copies to the nodes.  0 or -errno
 * (-EFBIG when larger than max).
 */
int proc_self_image(struct strbuf *out, size_t max);
/* The same, allocated; "sparkctl" (looked up in PATH) where it cannot be read. */
char *proc_self_path_or_name(void);

#endif
