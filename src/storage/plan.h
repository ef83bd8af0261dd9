/*
 * plan.h - what each node of a shared NVMe/TCP volume needs, as text:
 * the files 'sparkctl storage plan' prints and installs.  Pure: no I/O.
 *
 * A plan is a struct storage_conf (storage_conf.h) with every node's
 * access; the files of one node are those of the conf whose node names
 * it (storage_plan_for_node()):
 *
 *   /etc/nvme/discovery.conf                      one line for the target
 *   /etc/modules-load.d/sparkctl-nvme-tcp.conf    nvme-tcp at boot
 *   /etc/systemd/system/<unit>                    connects at boot
 *   /etc/fstab                                    one line, by UUID
 *   /etc/sparkctl/storage.d/<mount>.json          the plan (storage_conf_to_json())
 */
#ifndef SPARKCTL_STORAGE_PLAN_H
#define SPARKCTL_STORAGE_PLAN_H

#include "sparkctl.h"
#include "lib/strbuf.h"
#include "storage/storage_conf.h"

#define STORAGE_PLAN_DISCOVERY_DIR  "etc/nvme"
#define STORAGE_PLAN_DISCOVERY_NAME "discovery.conf"
#define STORAGE_PLAN_MODULES_DIR    "etc/modules-load.d"
#define STORAGE_PLAN_MODULES_NAME   "sparkctl-nvme-tcp.conf"
#define STORAGE_PLAN_UNIT_DIR	    "etc/systemd/system"
#define STORAGE_PLAN_FSTAB_DIR	    "etc"
#define STORAGE_PLAN_FSTAB_NAME	    "fstab"
/* The reconnect policy of the unit's 'nvme connect': -l (seconds) and -c (seconds). */
#define STORAGE_PLAN_CTRL_LOSS_TMO  600
#define STORAGE_PLAN_RECONNECT_S    10

/* What the command line asks for; the strings are borrowed. */
struct storage_plan_request {
	const char *target; /* ADDR, ADDR:PORT, [IPV6] or [IPV6]:PORT; a bare IPv6 too */
	const char *nqn, *mount;
	const char *fs;	   /* NULL: ext4 */
	const char *uuid;  /* NULL: not known yet (printing only) */
	const char *iface; /* NULL: the route decides */
	const char *const *nodes;
	size_t nr_nodes;
	/* The writers named (--writer, each use); none: the first node, unless ro_all. */
	const char *const *writers;
	size_t nr_writers;
	bool ro_all;
};

/*
 * Split ADDR[:PORT] (brackets around an IPv6 address, needed with a
 * port) into *address (allocated) and *port (STORAGE_DEFAULT_PORT when
 * none).  -EINVAL with a message in err.
 */
int storage_plan_parse_target(const char *target, char **address, unsigned *port,
			      struct strbuf *err);
/*
 * Check req and make the plan in conf (node NULL): -EINVAL with a
 * one-line message in err for anything invalid, -EDOM for two writers or
 * a writer that is not a node (conf is then empty).
 */
int storage_plan_make(const struct storage_plan_request *req, struct storage_conf *conf,
		      struct strbuf *err);
/* The plan as node name keeps it (conf->node = name): a copy into out. */
void storage_plan_for_node(const struct storage_conf *plan, const char *name,
			   struct storage_conf *out);

/* "--transport=tcp --traddr=ADDR --trsvcid=PORT[ --host-iface=IF]\n". */
void storage_plan_discovery_line(const struct storage_conf *conf, struct strbuf *out);
/* The modules-load.d file: nvme-tcp, loaded at boot. */
void storage_plan_modules_load(struct strbuf *out);
/* The systemd unit conf->unit. */
void storage_plan_unit(const struct storage_conf *conf, struct strbuf *out);
/* This node's fstab line (with its access), "\n"-terminated; mount escaped as fstab does. */
void storage_plan_fstab_line(const struct storage_conf *conf, struct strbuf *out);

/*
 * The merges --write makes, of the text old (NULL or "": none) into out:
 * every other line kept as it was; a line for the same traddr and
 * trsvcid (discovery.conf) or the same mount point (fstab) replaced, in
 * its place, by the plan's line; else the plan's line appended.  Returns
 * the number of lines replaced.
 */
int storage_plan_merge_discovery(const char *old, const struct storage_conf *conf,
				 struct strbuf *out);
int storage_plan_merge_fstab(const char *old, const struct storage_conf *conf, struct strbuf *out);

#endif
