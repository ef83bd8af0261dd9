/*
 * node_agent.h - one node's part of 'sparkctl launch' ('sparkctl agent
 * launch', node_agent.c): start the node's ranks, pass their output on,
 * and leave nothing of the job behind; node 0's agent also chooses where
 * the ranks meet (node_master.c).  And what ends a job's leftovers by the
 * marks in their environment (node_cleanup.c).
 */
#ifndef SPARKCTL_NODE_AGENT_H
#define SPARKCTL_NODE_AGENT_H

#include "sparkctl.h"
#include "inventory/inventory.h"
#include "launch/protocol.h"
#include "lib/strbuf.h"

/*
 * The agent: read the spec from in_fd, run this node's part of
 * the job, speak the protocol on out_fd.  Returns its exit status: 0 when
 * the job ended here (whatever the ranks' statuses), 1 when it could not
 * be set up.
 */
int launch_agent_main(int in_fd, int out_fd);
/*
 * The same for one task of an srun step ('sparkctl agent srun-task'): the
 * spec on in_fd is every task's alike; the task's place in the job comes
 * from the variables srun sets (srun.h), and it runs that one rank (or
 * its node's torchrun).  Its part of the job - marks and cgroup - is the
 * task's own.
 */
int launch_agent_srun_main(int in_fd, int out_fd);

/*
 * End what is left of a node's part of a job whose agent died without
 * ending it ('sparkctl agent reap JOB NODE GRACE_MS', run by the launcher):
 * every process with both marks, SIGTERM then SIGKILL after grace_ms.
 * What a rank started that cleared its environment cannot be found.
 */
int launch_agent_reap(const char *job_id, unsigned node_rank, unsigned grace_ms);

/*
 * The port s asks for: free, or held by an earlier sparkctl job that
 * --kill-stale ends (announce() says so first).  -EADDRINUSE with the
 * holder named in err otherwise.
 */
int launch_claim_port(const struct launch_spec *s, void (*announce)(void *data, const char *msg),
		      void *data, struct strbuf *err);

/*
 * MASTER_ADDR, on node 0 (into out): the user's; loopback when the whole
 * job is on this host; else the fabric's bootstrap address (the one NCCL
 * and Gloo bootstrap over, or NULL); else the address the launcher reached
 * this node on; else the default route's of inv (may be NULL).  -ENOENT
 * with a message when none is there.
 */
int launch_master_addr(const struct launch_spec *s, const char *bootstrap,
		       const struct inventory *inv, char out[256], struct strbuf *err);
/* A TCP port that is free now, chosen by the kernel. */
int launch_free_port(unsigned *ret, struct strbuf *err);

#endif
