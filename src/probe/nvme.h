/*
 * nvme.h - the shared volumes over NVMe/TCP as a node has them: their plans
 * (/etc/sparkctl/storage.d/NAME.json), the fabric controllers in sysfs, the host
 * NQN, the planned mount point in the mount table and in /etc/fstab, and
 * the link /dev/disk/by-uuid/UUID.  The parsers are pure (tested and
 * fuzzed); probe_storage() reads the files below the root.
 */
#ifndef SPARKCTL_PROBE_NVME_H
#define SPARKCTL_PROBE_NVME_H

#include "sparkctl.h"
#include "lib/strbuf.h"

/* The most of /proc/self/mounts and /etc/fstab read. */
#define NVME_TABLE_MAX	       (1 << 20)
/* How long the probe waits for a TCP connection to the target. */
#define NVME_TARGET_TIMEOUT_MS 2000

/*
 * A controller's sysfs "address": comma-separated KEY=VALUE pairs,
 * "traddr=198.18.1.1,trsvcid=4420,src_addr=198.18.1.2" (kernel 6.1 adds
 * src_addr for TCP; host_traddr= and host_iface= when the connection was
 * bound).  Unknown keys are ignored; an absent key stays NULL.
 */
struct nvme_address {
	char *traddr;
	char *trsvcid;
	char *src_addr;
	char *host_traddr;
	char *host_iface;
};

void nvme_address_release(struct nvme_address *a);
/* -EINVAL for a pair without '=' or an empty key (a is then released). */
int nvme_address_parse(const char *text, struct nvme_address *a);

/*
 * The block device of a namespace entry of a controller's directory:
 * "nvme1n1" as is, the multipath path "nvme1c2n1" as its head "nvme1n1";
 * -EINVAL for another name (not a namespace).
 */
int nvme_namespace_device(const char *entry, struct strbuf *out);

/* One line of a mount table (/proc/self/mounts) or of /etc/fstab. */
struct mount_line {
	char *spec;    /* the device: "/dev/nvme1n1", "UUID=..." */
	char *dir;     /* the mount point, \040-style escapes undone */
	char *fs;      /* "ext4" */
	char *options; /* "rw,noatime" */
};

void mount_line_release(struct mount_line *m);
/*
 * The line of table (a mount table or fstab: comments and blank lines are
 * skipped) whose mount point is dir; the last such line, which for a mount
 * table is the mount on top.  1 with *m filled, 0 when none.
 */
int mount_table_find(const char *table, size_t len, const char *dir, struct mount_line *m);
/* Whether the comma-separated options include opt exactly. */
bool mount_has_option(const char *options, const char *opt);

/*
 * The target of a /dev/disk/by-uuid link as a path: "../../nvme1n1" ->
 * "/dev/nvme1n1" (relative targets are taken from /dev/disk/by-uuid).
 */
void by_uuid_target_path(const char *link_target, struct strbuf *out);

/* /etc/nvme/hostnqn's first line, trimmed; -EINVAL when it is empty. */
int nvme_hostnqn_parse(const char *text, size_t len, struct strbuf *out);

struct rootfs;
struct strvec;
/*
 * The block devices of controller ctrl's namespaces ("/dev/nvme1n1"),
 * sorted, from sys/class/nvme/CTRL below root: the count, 0 when it has
 * none (yet: the kernel scans them after the path is live), -errno when the
 * controller's directory cannot be listed (-ENOENT: no such controller).
 */
int nvme_controller_devices(const struct rootfs *root, const char *ctrl, struct strvec *devices);

/*
 * What is at mount point dir (absolute) below root: the names it holds
 * (sorted; none when it does not exist), and whether the mount table
 * (proc/self/mounts, or proc/mounts) has something mounted there (false
 * where no table can be read).  0, or -errno (-ENOTDIR: dir is no
 * directory).
 */
int mount_point_state(const struct rootfs *root, const char *dir, struct strvec *entries,
		      bool *mounted);

struct probe_ctx;
/* inv->storage: NULL when no plan and no fabric controller is found. */
void probe_storage(struct probe_ctx *ctx);

#endif
