/*
 * contain.h - keeping every process of a job where it can be found and
 * ended, whatever it does to its environment or its ancestry.
 *
 * A job's part on a node lives in cgroups named after it: one cgroup v2
 * directory "sparkctl-JOB-nNODE" below the agent's own cgroup, made by
 * sparkctl where it may write there (CONTAIN_CGROUP), or one systemd
 * scope per rank, "sparkctl-JOB-nNODE-ID.scope", where systemd is the
 * init system and delegates cgroups through transient units
 * (CONTAIN_SYSTEMD; 'systemd-run --user --scope' for a user other than
 * root).  Nothing a process does in user space takes it out of its
 * cgroup, and 'cgroup.kill' ends a whole cgroup at once.  Where neither
 * can be had, the job is found by the marks in its processes' environment
 * (CONTAIN_MARKS), which a process that clears its environment escapes.
 *
 * The cgroups are found again by name (contain_find()), so that 'agent
 * reap', run after an agent died, ends what it left.
 */
#ifndef SPARKCTL_PROC_CONTAIN_H
#define SPARKCTL_PROC_CONTAIN_H

#include "sparkctl.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "probe/procs.h"

enum contain_mode {
	CONTAIN_AUTO = 0, /* systemd where it runs, else a cgroup, else the marks */
	CONTAIN_CGROUP,
	CONTAIN_SYSTEMD,
	CONTAIN_MARKS,
};

/* "auto", "cgroup", "systemd", "marks" */
const char *contain_mode_name(enum contain_mode m);
int contain_mode_parse(const char *s, enum contain_mode *ret);

struct job_container {
	enum contain_mode how; /* CONTAIN_CGROUP, CONTAIN_SYSTEMD or CONTAIN_MARKS */
	char *job_id;
	unsigned node;
	char *dir;	    /* CONTAIN_CGROUP: the job's cgroup directory */
	int dir_fd;	    /* CONTAIN_CGROUP: the directory open, for struct child */
	bool systemd_user;  /* CONTAIN_SYSTEMD: through the user's manager */
	struct strbuf note; /* why a mode asked for or tried first was not used */
};

/*
 * Choose how the job's part on this node is contained and set it up.
 * CONTAIN_AUTO tries systemd, then a cgroup of sparkctl's own, then falls
 * back to the marks, saying why in jc->note; a mode asked for by name is
 * used or the call fails (-errno, the reason in err).
 */
int job_container_open(struct job_container *jc, const char *job_id, unsigned node,
		       enum contain_mode want, struct strbuf *err);
/*
 * What one unit's command runs through (struct child's wrap): under
 * systemd 'systemd-run --scope ... --', which execs the command in the
 * same process, so its pid, exit status and output are the command's own;
 * nothing otherwise.
 */
void job_container_wrap(const struct job_container *jc, unsigned unit_id, struct strvec *wrap);
/* Add the processes in the job's cgroups to out (none with CONTAIN_MARKS). */
void job_container_procs(const struct job_container *jc, struct proc_list *out);
/* SIGKILL them all at once (cgroup.kill, else one by one). */
void job_container_kill(const struct job_container *jc);
/* Remove the job's own cgroup once nothing lives in it; close what is open. */
void job_container_close(struct job_container *jc);

/* For the functions below: the job's cgroups of every node on this host. */
#define CONTAIN_ANY_NODE UINT_MAX

/* The cgroups of a job's part on a node (absolute paths into out). */
int contain_find(const char *job_id, unsigned node, struct strvec *out);
/* Add every process in the job's cgroups on this node to out. */
void contain_procs(const char *job_id, unsigned node, struct proc_list *out);
/* SIGKILL every process in them at once (cgroup.kill, else one by one). */
void contain_kill(const char *job_id, unsigned node);
/* Remove the empty cgroups of sparkctl's own ("sparkctl-JOB-nNODE", not the scopes). */
void contain_remove(const char *job_id, unsigned node);

#endif
