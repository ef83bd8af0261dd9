/*
 * hosts.h - the nodes a command runs on: -H lists and hostfiles.
 *
 * -H takes comma-separated names with bracket ranges, as Slurm's hostlists:
 * "spark[1-4]" (spark1 .. spark4), "node[01-08]" (zero padding kept),
 * "gpu[1,3,5-7]", and several in one name, the last varying fastest:
 * "rack[1-2]n[1-2]" (rack1n1, rack1n2, rack2n1, rack2n2).  A hostfile has one host per line, with
 * '#' comments and blank lines, in Open MPI's form "host [slots=N] [max_slots=N]" (also
 * max-slots=N), DeepSpeed's "host slots=N" (the same) or MPICH's "host:N"
 * (N slots; a name with two colons is an IPv6 address).  Anything else on a
 * line is refused with "FILE:LINE: ...".  Names that
 * start with '-' (they would be read as ssh options), or hold whitespace,
 * control characters or shell metacharacters, are refused, as are
 * duplicates.  Pure: no I/O except host_list_load_file().
 */
#ifndef SPARKCTL_HOSTS_H
#define SPARKCTL_HOSTS_H

#include "sparkctl.h"
#include "lib/strbuf.h"

/* The most hosts one list may name (a bound on user-controlled input). */
#define HOST_LIST_MAX 4096

struct host_entry {
	char *name;
	unsigned slots;	    /* from "slots=N" or "host:N", 0 when not given */
	unsigned max_slots; /* from "max_slots=N", 0 when not given */
};

struct host_list {
	struct host_entry *hosts;
	size_t nr;
};

/*
 * Append the hosts of a -H specification to list.  Returns 0, or -EINVAL
 * with a one-line message naming the bad part in err.
 */
int host_list_parse(const char *spec, struct host_list *list, struct strbuf *err);

/* Parse the text of a hostfile (name is used in messages: "FILE:LINE: ..."). */
int host_list_parse_file_text(const char *text, const char *name, struct host_list *list,
			      struct strbuf *err);
/* Read and parse a hostfile; -ENOENT etc. with "cannot read 'F': ..." in err. */
int host_list_load_file(const char *path, struct host_list *list, struct strbuf *err);

/*
 * The nodes a command's -H spec or --hostfile names (one of them, not both);
 * with neither, inside a Slurm allocation (SLURM_JOB_ID and
 * SLURM_JOB_NODELIST both set) the allocation's nodes, expanded from
 * SLURM_JOB_NODELIST's hostlist; else the nodes of the cluster file in
 * effect (cluster is --cluster, or NULL: cluster/cluster_file.h tells which
 * file), as "user@name" where the file gives a user; with no cluster file,
 * those of fallback ("localhost"), or an error when it is NULL.  An empty
 * list is an error too.  Every failure is the command line's (usage):
 * -EINVAL with a one-line message in err.
 */
int host_list_from_options(const char *spec, const char *hostfile, const char *cluster,
			   const char *fallback, struct host_list *list, struct strbuf *err);
/*
 * Append the nodes of the cluster file in effect (cluster: --cluster or
 * NULL): 1 when a cluster file gave them, 0 when no cluster file is in
 * effect, -EINVAL with a message in err when it cannot be read or is empty.
 */
int host_list_from_cluster(const char *cluster, struct host_list *list, struct strbuf *err);
/*
 * The default nodes of a command given neither -H nor --hostfile: inside a
 * Slurm allocation (SLURM_JOB_ID and SLURM_JOB_NODELIST set) its nodes,
 * else the cluster file's (host_list_from_cluster()).  1 when either gave
 * them, 0 when neither applies, -EINVAL with a message in err.
 */
int host_list_default(const char *cluster, struct host_list *list, struct strbuf *err);

/*
 * The hosts names[0..n) as one Slurm hostlist, appended to out: names that
 * differ only in a number at their end are collapsed into bracket ranges
 * ("spark-01,spark-02,spark-03,spark-07" -> "spark-[01-03,07]"), a number's
 * zero padding kept; others stay as they are.  Sorted by the text before
 * the number, then the number.  host_list_parse() expands it back to the
 * same names (a name given twice appears once).
 */
void host_list_compress(const char *const *names, size_t n, struct strbuf *out);

/* True for localhost, 127.0.0.1 and ::1: run without SSH. */
bool host_is_local(const char *name);

void host_list_release(struct host_list *list);

#endif
