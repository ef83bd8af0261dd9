/*
 * nvmet.h - a Linux NVMe/TCP target (nvmet) made through configfs, as a
 * list of operations: 'sparkctl storage target' plans them from the
 * request and what configfs holds (a pure function), shows them as the
 * shell commands that do the same (--print), performs them below a root
 * in order (--apply), undoing what it did when one fails, or tears a
 * target down (--remove).
 *
 * The operations, in order (paths below the root; see probe/nvmet_configfs.h):
 *   modprobe nvmet-tcp (and nvmet with it) [null_blk nr_devices=0]  (unless loaded)
 *   null_blk:   mkdir nullb/NAME, size (MiB), blocksize, memory_backed=1, power=1;
 *               wait for /dev/NAME
 *   subsystem:  mkdir subsystems/NQN, attr_allow_any_host; per --allow-host:
 *               mkdir hosts/H, ln -s hosts/H subsystems/NQN/allowed_hosts/H
 *   namespace:  mkdir subsystems/NQN/namespaces/1, device_path, enable=1
 *   port:       mkdir ports/N, addr_trtype=tcp, addr_adrfam, addr_traddr,
 *               addr_trsvcid; ln -s subsystems/NQN ports/N/subsystems/NQN
 * memory_backed matters: without it null_blk discards what is written and a
 * file system made on it cannot be mounted.
 */
#ifndef SPARKCTL_NVMET_H
#define SPARKCTL_NVMET_H

#include "sparkctl.h"
#include "lib/rootfs.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "probe/nvmet_configfs.h"

/* How long a device made through configfs may take to appear in /dev. */
#define NVMET_DEVICE_WAIT_MS 10000
/* The namespace every target exports. */
#define NVMET_NSID	     "1"
/* Prefix of the null_blk devices sparkctl makes (and alone tears down). */
#define NVMET_NULLB_PREFIX   "sparkctl_"

struct nvmet_request {
	const char *nqn;
	const char *device;		  /* --device: a block device (or file), or NULL */
	uint64_t null_blk_mib;		  /* --null-blk: its size, when device is NULL */
	const char *traddr;		  /* an IPv4 or IPv6 literal */
	unsigned trsvcid;		  /* the TCP port */
	unsigned port_id;		  /* nvmet's port; 0: the lowest free one */
	const struct strvec *allow_hosts; /* host NQNs; none: any host */
};

enum nvmet_op_kind {
	NVMET_OP_MODPROBE, /* value: the modules; path: what configfs has once loaded */
	NVMET_OP_MKDIR,
	NVMET_OP_WRITE,	  /* value into the attribute path; undo: written back on undo */
	NVMET_OP_SYMLINK, /* path -> value (the target as the host names it) */
	NVMET_OP_RMDIR,
	NVMET_OP_UNLINK,
	/* path: a device node the kernel makes (devtmpfs), waited for (no udev needed) */
	NVMET_OP_WAIT_DEVICE,
};

struct nvmet_op {
	enum nvmet_op_kind kind;
	char *path; /* relative to the root */
	char *value;
	char *undo;
};

struct nvmet_ops {
	struct nvmet_op *v;
	size_t nr;
};

void nvmet_ops_init(struct nvmet_ops *ops);
void nvmet_ops_release(struct nvmet_ops *ops);

/* nvme_nqn_valid() (storage_conf.h), and usable as a configfs name (no '/'). */
bool nvmet_nqn_usable(const char *nqn);
/*
 * "ADDR", "ADDR:PORT", "[V6]:PORT" or a bare IPv6 literal: the address
 * (allocated) and the port (default_port when none).  -EINVAL with a
 * message in err.
 */
int nvmet_split_addr_port(const char *s, unsigned default_port, char **addr, unsigned *port,
			  struct strbuf *err);
/* "64M", "1G", "512" (MiB), "2T": the size in MiB.  -EINVAL for anything else or 0. */
int nvmet_parse_size_mib(const char *s, uint64_t *mib);
/* The null_blk device made for nqn: NVMET_NULLB_PREFIX and a hash of the NQN (fits a disk name). */
void nvmet_null_blk_name(const char *nqn, struct strbuf *name);

/*
 * The operations that make req's target, given what configfs holds (st,
 * from probe_nvmet_state() for req->nqn).  -EINVAL: a bad request (an
 * NQN or address); -EEXIST: the subsystem exists, or the port id asked
 * for is taken; -EADDRINUSE: another port listens on the address; a
 * message in err, nothing planned.
 */
int nvmet_plan_create(const struct nvmet_request *req, const struct nvmet_state *st,
		      struct nvmet_ops *ops, struct strbuf *err);
/*
 * The operations that tear down subsystem nqn as st holds it: its port
 * links (and the ports left without a subsystem), its namespaces, the
 * hosts no other subsystem allows, the subsystem, then the null_blk
 * devices sparkctl made for it.  None when nothing of it is there.
 */
void nvmet_plan_remove(const char *nqn, const struct nvmet_state *st, struct nvmet_ops *ops);

/* The operations as shell commands, one a line, paths as on the host. */
void nvmet_ops_print(const struct nvmet_ops *ops, struct strbuf *out);

/*
 * Perform ops below root in order.  Attributes are written in place (a
 * configfs attribute cannot be replaced by rename).  On configfs rmdir
 * takes an item's attributes and default groups with it; on a plain
 * directory tree standing in for it, those are removed first.
 *
 * create: on a failure, what was done is undone in reverse order, and
 * -errno is returned with a message in err naming the operation.
 * Otherwise (a teardown): what is already gone is passed over, and a
 * failure stops there.  A MODPROBE that cannot run or fails is -ENODEV; a
 * device not there within NVMET_DEVICE_WAIT_MS is -ETIMEDOUT.
 * done (may be NULL): how many operations were performed.
 */
int nvmet_ops_apply(const struct rootfs *root, const struct nvmet_ops *ops, bool create,
		    size_t *done, struct strbuf *err);

#endif
