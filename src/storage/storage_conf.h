/*
 * storage_conf.h - the shared volumes a node is meant to have: what
 * 'sparkctl storage plan --write' saves on each node, one file per volume,
 * /etc/sparkctl/storage.d/<mount escaped>.json (/mnt/shared ->
 * mnt-shared.json, the unit's name without "sparkctl-nvme-" and
 * ".service"), and what 'storage check' and doctor hold the node to.
 *
 * The format is docs/schemas/storage.schema.json:
 *   {"schema_version":1,
 *    "target":{"address":"198.18.1.1","port":4420},
 *    "nqn":"nqn.2026-01.org.example:shared",
 *    "mount":"/mnt/shared", "fs":"ext4"|"xfs", "uuid":"<filesystem UUID>",
 *    "interface":"enp1s0f1np1"|null,        the initiator's interface (-f)
 *    "unit":"sparkctl-nvme-mnt-shared.service",
 *    "node":"spark1",                        this node's name in the plan
 *    "nodes":[{"name":"spark1","access":"rw"},{"name":"spark2","access":"ro"}]}
 * At most one node has "rw": the plan refuses more, and so does the parser.
 */
#ifndef SPARKCTL_STORAGE_CONF_H
#define SPARKCTL_STORAGE_CONF_H

#include <jansson.h>

#include "sparkctl.h"
#include "lib/rootfs.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

#define STORAGE_CONF_SCHEMA_VERSION 1
/* Below the root a node is read from: one file per volume. */
#define STORAGE_CONF_DIR	    "etc/sparkctl/storage.d"
#define STORAGE_CONF_SUFFIX	    ".json"
/* NVMe/TCP's IANA port (the I/O controllers and the discovery controller alike). */
#define STORAGE_DEFAULT_PORT	    4420

enum storage_fs {
	STORAGE_FS_EXT4,
	STORAGE_FS_XFS,
};

enum storage_access {
	STORAGE_ACCESS_RO,
	STORAGE_ACCESS_RW,
};

struct storage_node {
	char *name;
	enum storage_access access;
};

struct storage_conf {
	char *target_address; /* IPv4 or IPv6 literal, or a name */
	unsigned target_port;
	char *nqn;
	char *mount; /* absolute path */
	enum storage_fs fs;
	char *uuid;
	char *interface; /* NULL: the route decides */
	char *unit;	 /* the systemd unit that connects the volume */
	char *node;	 /* this node's name: one of nodes[] */
	struct storage_node *nodes;
	size_t nr_nodes;
};

void storage_conf_init(struct storage_conf *conf);
void storage_conf_release(struct storage_conf *conf);

/* "ext4"/"xfs", "ro"/"rw"; and back (-EINVAL for another name). */
const char *storage_fs_name(enum storage_fs fs);
int storage_fs_parse(const char *name, enum storage_fs *fs);
const char *storage_access_name(enum storage_access access);

/*
 * Parse the text of a plan (one volume's file); name prefixes every message
 * ("NAME: nodes[1].access: ..."). -EINVAL on a bad field, a node not
 * among nodes[], or more than one "rw" node (conf is then empty).
 */
int storage_conf_parse(struct storage_conf *conf, const char *text, size_t len, const char *name,
		       struct strbuf *err);
/* conf as the JSON above (a new reference). */
json_t *storage_conf_to_json(const struct storage_conf *conf);
/*
 * The name of the plan of the volume mounted at mount in STORAGE_CONF_DIR:
 * "mnt-shared.json" for /mnt/shared.  -EINVAL (out unchanged) where
 * storage_unit_name() refuses the mount point.
 */
int storage_conf_file_name(const char *mount, struct strbuf *out);
/*
 * The plans' file names in STORAGE_CONF_DIR below root ("*.json", not
 * hidden), sorted: their number, 0 when there is no such directory,
 * another -errno with a message in err.
 */
int storage_conf_list(const struct rootfs *root, struct strvec *names, struct strbuf *err);
/* Read and parse the plan STORAGE_CONF_DIR/name below root; messages name the file. */
int storage_conf_load_file(const struct rootfs *root, const char *name, struct storage_conf *conf,
			   struct strbuf *err);
/*
 * Every plan below root, sorted by mount point, in a new array *confs
 * (free with storage_conf_release_all()): 0, with *nr 0 when none is
 * planned; -errno with a message naming the file when one cannot be read
 * or parsed (nothing is then returned).
 */
int storage_conf_load_all(const struct rootfs *root, struct storage_conf **confs, size_t *nr,
			  struct strbuf *err);
void storage_conf_release_all(struct storage_conf *confs, size_t nr);
/*
 * The plan of the volume mounted at mount (NULL: as storage_conf_load()):
 * 0, -ENOENT when none is planned there (a message in err too), another
 * -errno with a message.
 */
int storage_conf_load_mount(const struct rootfs *root, const char *mount, struct storage_conf *conf,
			    struct strbuf *err);
/*
 * The only plan below root, for a command that wants one volume: 0,
 * -ENOENT when the node has none (no shared storage is planned there),
 * -E2BIG with "N volumes are planned (/mnt/a, /mnt/b): choose one with
 * --mount" when it has several, another -errno with a message in err.
 */
int storage_conf_load(const struct rootfs *root, struct storage_conf *conf, struct strbuf *err);
/* This node's entry of conf->nodes (conf->node), or NULL. */
const struct storage_node *storage_conf_this_node(const struct storage_conf *conf);

/*
 * A subsystem's or host's NQN as Linux takes it: 1 to NVME_NQN_MAX bytes of
 * printable ASCII without spaces (one word on nvme-cli's command line and
 * in configfs).  The NVMe specification's form is "nqn.YYYY-MM.domain:name",
 * but targets name subsystems as they like (a MikroTik ROSE "raid5-data",
 * Linux nvmet "testnqn"), and the kernel passes any such name on.
 */
#define NVME_NQN_MAX  223
#define NVME_NQN_RULE "1 to 223 printable bytes without spaces"
bool nvme_nqn_valid(const char *nqn);
/*
 * The systemd unit that connects the volume mounted at mount:
 * "sparkctl-nvme-" + the path escaped as 'systemd-escape --path' does
 * (slashes at both ends dropped, repeated ones merged, "/" -> "-", a
 * leading "." and every byte outside [A-Za-z0-9:_.] -> \xNN; "/" alone
 * is "-") + ".service": /mnt/shared -> sparkctl-nvme-mnt-shared.service.
 * -EINVAL (out unchanged) for a path that is not absolute or has a "."
 * or ".." component, as systemd refuses those.
 */
int storage_unit_name(const char *mount, struct strbuf *out);
/* A filesystem UUID as blkid prints it: 8-4-4-4-12 hex digits. */
bool storage_uuid_valid(const char *uuid);
/*
 * A mount point the plan can name: absolute, not "/", without "." or ".."
 * components, empty components or a trailing slash, and without control
 * characters (fstab escapes spaces and backslashes; a newline it cannot hold).
 */
bool storage_mount_valid(const char *mount);
/* A network interface name the kernel accepts: 1-15 bytes, no '/', ':' or whitespace. */
bool storage_iface_valid(const char *iface);

#endif
