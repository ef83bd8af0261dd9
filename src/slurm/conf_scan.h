/*
 * conf_scan.h - what doctor -H compares of a node's slurm.conf: the
 * controller, the munge socket Slurm authenticates through, and this
 * node's RealMemory (docs/slurm.md, "Checks across the nodes").
 *
 * Read as slurm.conf is read: one "Key=Value ..." per line, keys in any
 * case, '#' starts a comment, values may be in double quotes.  A NodeName
 * line names its nodes by a Slurm hostlist ("spark-[01-04,07]"); a
 * NodeName=DEFAULT line sets what the lines after it leave out.
 * "Include FILE" is followed where it stands (a relative FILE is in
 * slurm.conf's directory), through the caller's reader, at most
 * SLURM_INCLUDE_DEPTH deep.  Pure but for that reader.
 */
#ifndef SPARKCTL_SLURM_CONF_SCAN_H
#define SPARKCTL_SLURM_CONF_SCAN_H

#include "sparkctl.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

#define SLURM_INCLUDE_DEPTH 4

/*
 * Read the file path (absolute, on the node) into out: 1, 0 when it does
 * not exist, a negative errno when it cannot be read.
 */
typedef int (*slurm_include_reader)(void *data, const char *path, struct strbuf *out);

struct slurm_conf_scan {
	const char *node;	 /* in: the NodeName looked for (not owned) */
	char *controller;	 /* the first SlurmctldHost's (or ControlMachine's) name */
	char *munge_socket;	 /* AuthInfo's socket=, NULL when not set */
	bool listed;		 /* a NodeName line names node */
	int64_t real_memory_mib; /* node's RealMemory, -1 when unset */
	struct strvec problems;	 /* "FILE:LINE: what" for what could not be used */
	/* while scanning */
	int64_t default_real_memory_mib;
	unsigned depth;
	slurm_include_reader read;
	void *read_data;
};

void slurm_conf_scan_init(struct slurm_conf_scan *s, const char *node, slurm_include_reader read,
			  void *read_data);
/* Scan the text of the file path (its directory resolves relative Includes). */
void slurm_conf_scan_text(struct slurm_conf_scan *s, const char *path, const char *text);
void slurm_conf_scan_release(struct slurm_conf_scan *s);

#endif
