/*
 * launcher_state.h - the launcher's state, shared by launcher.c (the
 * agents, their lines, the loop) and launcher_end.c (ending the job, its
 * deadlines).  Internal to src/launch/.
 */
#ifndef SPARKCTL_LAUNCHER_STATE_H
#define SPARKCTL_LAUNCHER_STATE_H

#include "sparkctl.h"
#include "launch/launcher.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "proc/child.h"
#include "proc/loop.h"

/* How long the agents may take to report ready, beyond ssh's connect timeout. */
#define READY_SLACK_MS	     30000
/* After asking the agents to end the job: SIGKILL request, then hang up on them. */
#define END_KILL_AFTER_MS    5000
#define END_HANGUP_AFTER_MS  10000
/* After the hang-up, SIGKILL to the agents (and reapers) still there. */
#define HANGUP_KILL_AFTER_MS 5000
/* The stderr lines of a starting node kept to be said once (ssh's are a few). */
#define HELD_ERR_MAX	     64
/* How long a finished node's output pipes may stay open. */
#define PIPE_CLOSE_WAIT_MS   1000

enum node_state {
	NODE_STARTING, /* connecting, reading the spec, setting up */
	NODE_READY,    /* R received */
	NODE_RUNNING,  /* G sent */
	NODE_DONE,     /* D received: nothing of the job is left there */
};

struct launcher;

struct node {
	struct launcher *l;
	const struct launch_node *n;
	size_t index;
	unsigned rank_base;
	enum node_state state;
	struct child agent; /* the ssh client or the local agent; its pipes, -1 once closed */
	struct loop_timer pipe_wait; /* its agent exited: how long its pipes may stay open */
	struct strbuf tx;	     /* control lines not yet written */
	struct strbuf rx, erx;	     /* partial lines from its stdout and stderr */
	char sent;		     /* the strongest end request sent: 0, 'T' or 'K' */
	bool failed;		     /* said F */
	char *last_err;		     /* its last line on stderr (ssh's reason) */
	/*
	 * Its stderr lines while it starts, said once: as warnings when it is
	 * ready, or with its failure (the last one is the reason given).
	 */
	struct strvec held_err;
};

/* Under srun: the one child that carries every task's lines (launcher_srun.c). */
struct srun_state {
	struct child child;	     /* srun; its stdin reaches every task */
	struct strbuf tx, rx, erx;   /* lines to it; partial lines from it */
	struct strbuf line;	     /* a task's line joined from its pieces */
	struct loop_timer pipe_wait; /* it exited: how long its pipes may stay open */
	char sent;		     /* the strongest end request sent: 0, 'T' or 'K' */
	struct strvec held;	     /* srun's own lines while the tasks start */
	char *last_err;		     /* srun's last line of its own */
	char *last_error;	     /* and its last "error:" line */
	int refused;		     /* -errno: srun ran no task (srun.h) */
};

struct launcher {
	const struct launch_options *o;
	struct launch_result *res;
	struct node *nodes;
	size_t nr;
	struct loop loop;
	uint64_t started_ms, ready_wait_ms;
	struct loop_timer ready;    /* every node must be ready by then */
	struct loop_timer timeout;  /* --job-timeout, from the go */
	struct loop_timer stall;    /* --stall, from the last output */
	struct loop_timer end_kill; /* ending: SIGKILL requested from the agents */
	struct loop_timer hangup;   /* ending: the agents are hung up on */
	struct loop_timer ping;	    /* each LAUNCH_PING_MS: 'P' to every agent (not srun's) */
	bool all_go;
	bool ending;
	bool kill_requested; /* end_kill fired */
	int hangup_sig;	     /* 0, SIGTERM once hung up, SIGKILL after HANGUP_KILL_AFTER_MS */
	int interrupts;
	bool out_broken;	   /* our stdout is gone: the ranks' output is dropped */
	struct strbuf out, errout; /* to write before the next wait */
	int *logs;		   /* one fd per unit, or NULL */
	struct child **reapers;	   /* 'agent reap' for nodes whose agent died */
	size_t nr_reapers;
	struct srun_state *srun; /* under srun, else NULL */
};

/* "sparkctl launch: ..." on stderr, before the next wait. */
void launcher_notice(struct launcher *l, const char *fmt, ...) ATTR_PRINTF(2, 3);
/* A notice that is not an error (a node's warning, advice, what ssh said): none with -q. */
void launcher_warning(struct launcher *l, const char *fmt, ...) ATTR_PRINTF(2, 3);
/* Close one of the node's pipes, which the loop stops watching first. */
void node_close_pipe(struct node *nd, int *fd);
bool node_agent_running(const struct node *nd);
/* Act on one protocol line of the node's agent, and on one of its stderr. */
void launcher_agent_line(struct launcher *l, struct node *nd, char *line, size_t len);
void launcher_agent_stderr_line(struct launcher *l, struct node *nd, char *line, size_t len);
/* Hand the complete lines of buf to fn; keep an unfinished one (all at_eof). */
void launcher_split_lines(struct launcher *l, struct node *nd, struct strbuf *buf, bool at_eof,
			  void (*fn)(struct launcher *, struct node *, char *, size_t));
/*
 * Read what fd has (a bounded number of reads, so that no pipe starves the
 * others) into buf and hand its complete lines to fn; at the end of the
 * pipe (or a read error) the rest as a last line.  Returns true there: the
 * caller closes fd.
 */
bool launcher_read_lines(struct launcher *l, struct node *nd, int fd, struct strbuf *buf,
			 void (*fn)(struct launcher *, struct node *, char *, size_t));

/* launcher_srun.c: the tasks of one srun step in place of one agent per node */
void srun_init(struct launcher *l);
void srun_release(struct launcher *l);
/* Start srun, the spec queued for every task. */
int srun_start(struct launcher *l, struct strbuf *err);
/* Queue a line for every task ("G ...", 'T', 'K': each end request once). */
void srun_send(struct launcher *l, const char *line);
void srun_send_control(struct launcher *l, char what);
/* End the step: the request to the tasks, or srun stopped while they start. */
void srun_end_job(struct launcher *l, char how);
/* Hung up: srun's input closed, and the signal. */
void srun_hang_up(struct launcher *l, int sig);
void srun_before_wait(struct launcher *l);
bool srun_finished(const struct launcher *l);
/* srun's lines it held while the tasks started, said once all are ready. */
void srun_say_held(struct launcher *l);

/* launcher_end.c */
/* Queue the control line what ('T' or 'K') to the node's agent, once. */
void node_send_control(struct node *nd, char what);
/*
 * End the job on every node: 'T' (SIGTERM, then SIGKILL after the grace)
 * or 'K' (SIGKILL now).  A node still starting has no ranks yet: its ssh
 * client is stopped instead.  The first call sets the end's deadlines.
 */
void launcher_end_job(struct launcher *l, char how);
/* How the job ended and the exit status; the first reason stands. */
void launcher_set_end(struct launcher *l, enum launch_end end, int status);
/* A node could not be reached, set up, or was lost: the job ends. */
void node_failed(struct launcher *l, struct node *nd);
/* The job's timers, with their callbacks (armed by launcher.c). */
void launcher_timers_init(struct launcher *l);

#endif
