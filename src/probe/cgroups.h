/*
 * cgroups.h - the cgroup v2 hierarchy as 'sparkctl launch' needs it: where
 * it is mounted, this process's own cgroup in it, the processes of a
 * cgroup and of every cgroup below it, and the cgroups of a name found
 * anywhere in it.  These read the live kernel (a root opened on "/"),
 * never a captured tree, and never print.
 */
#ifndef SPARKCTL_PROBE_CGROUPS_H
#define SPARKCTL_PROBE_CGROUPS_H

#include "sparkctl.h"
#include "lib/strvec.h"
#include "probe/procs.h"

/* How deep cgroup_find() looks (systemd's deepest scopes are at 5-6). */
#define CGROUP_FIND_DEPTH 12

struct cgroup_self {
	char *mount; /* where cgroup2 is mounted, e.g. "/sys/fs/cgroup" */
	char *path; /* this process's cgroup: mount + its path, e.g. "/sys/fs/cgroup/user.slice/..."
		     */
};

/*
 * The mount point of the first cgroup2 file system in the text of
 * /proc/self/mountinfo, and the root of the hierarchy it shows ("/"
 * unless a bind mount shows a part): 1, 0 when there is none.
 */
int cgroup2_mount_parse(const char *mountinfo, char **ret_mount, char **ret_root);
/* The cgroup v2 path ("0::PATH") in the text of /proc/self/cgroup: 1, 0 when none. */
int cgroup2_path_parse(const char *proc_cgroup, char **ret_path);

/* This process's cgroup v2: 1, 0 when the kernel has no cgroup2 mounted, -errno. */
int cgroup_self_read(struct cgroup_self *out);
void cgroup_self_release(struct cgroup_self *cg);

/* Whether the init system is systemd (it has /run/systemd/system, as sd_booted() says). */
bool systemd_booted(void);

/* Add the processes of the cgroup directory dir and of every cgroup below it to out. */
int cgroup_procs_read(const char *dir, struct proc_list *out);

/*
 * The cgroup directories below mount (to CGROUP_FIND_DEPTH) whose name
 * match() accepts, as absolute paths appended to out; not below a match.
 */
int cgroup_find(const char *mount, bool (*match)(const char *name, const void *data),
		const void *data, struct strvec *out);

#endif
