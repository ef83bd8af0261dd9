/*
 * health.h - sparkctl doctor --slurm-health: Slurm's HealthCheckProgram
 * (docs/slurm.md, "Health").
 *
 * The decisions are pure: what 'scontrol show node NAME -o' says of the
 * node, the reason a failed check gives, and, from both, what to do.
 * NHC's rule holds: a node that someone else drained (a reason that does
 * not start with "sparkctl:") is never resumed, and never drained again
 * over their reason.  slurm_node_show() and slurm_node_update() run
 * scontrol (proc/run.h, bounded by a timeout).
 */
#ifndef SPARKCTL_SLURM_HEALTH_H
#define SPARKCTL_SLURM_HEALTH_H

#include "sparkctl.h"
#include "check/check.h"
#include "lib/strbuf.h"

/* Every reason sparkctl gives starts so: the mark of a drain that is its own to lift. */
#define SLURM_HEALTH_MARK	"sparkctl:"
/* The longest reason given, in bytes: a line of sinfo -R, not the whole finding. */
#define SLURM_HEALTH_REASON_MAX 120
/* The longest node name taken (Slurm's hostnames). */
#define SLURM_NODE_NAME_MAX	64

/* A node as one line of 'scontrol show node NAME -o' shows it. */
struct slurm_node_show {
	char *name;   /* NodeName= */
	char *state;  /* State=: "IDLE+DRAIN", "MIXED", "DOWN+NOT_RESPONDING" */
	char *reason; /* Reason=, without its " [user@time]" tail; NULL when none */
	bool drain;   /* a DRAIN flag in State (draining or drained) */
	bool down;    /* State's base is DOWN */
};

/*
 * Parse the first line of text.  Returns 0, or -EINVAL when it is not a
 * node's line (no NodeName= first, or no State=); out is then empty.
 */
int slurm_node_show_parse(const char *text, size_t len, struct slurm_node_show *out);
void slurm_node_show_release(struct slurm_node_show *n);

/* Whether name can be a Slurm node name: 1..64 of [A-Za-z0-9._-], not starting with '-'. */
bool slurm_node_name_valid(const char *name);

/*
 * The reason for the node's failed checks into out (replaced):
 * "sparkctl: CHECK-ID MESSAGE" of the first FAIL, " (+N more)" when
 * there are others; at most SLURM_HEALTH_REASON_MAX bytes of printable
 * ASCII without quotes or backslashes (cut with "...").  Returns the
 * number of FAIL findings (0: out is empty).
 */
size_t slurm_health_reason(const struct findings *f, struct strbuf *out);

enum slurm_health_action {
	SLURM_HEALTH_OK,	   /* passes, not drained by sparkctl: nothing to do */
	SLURM_HEALTH_DRAIN,	   /* fails: drain it with the reason (or a new reason) */
	SLURM_HEALTH_STAY_DRAINED, /* fails, drained by sparkctl for the same reason */
	SLURM_HEALTH_RESUME,	   /* passes, drained by sparkctl: resume it */
	SLURM_HEALTH_NOT_OURS,	   /* someone else's reason: left as it is, passing or not */
};

/* What to do, given the reason of the failures (NULL or "" when none) and the node. */
enum slurm_health_action slurm_health_decide(const char *fail_reason,
					     const struct slurm_node_show *node);

/*
 * 'scontrol show node NAME -o' into out.  Returns 0; -ENOENT when there is
 * no scontrol; -ETIMEDOUT; -EHOSTUNREACH when scontrol fails (slurmctld
 * unreachable, an unknown node: err has scontrol's first line); -EINVAL
 * for a line that cannot be parsed.
 */
int slurm_node_show(const char *node, unsigned timeout_ms, struct slurm_node_show *out,
		    struct strbuf *err);
/*
 * 'scontrol update nodename=NAME state=drain reason=REASON' (reason
 * non-NULL) or 'state=resume' (NULL).  The reason is one argument, never
 * through a shell.  Returns as slurm_node_show().
 */
int slurm_node_update(const char *node, const char *reason, unsigned timeout_ms,
		      struct strbuf *err);

#endif
