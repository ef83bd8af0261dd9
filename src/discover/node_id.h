/*
 * node_id.h - this node's cluster id: /etc/sparkctl/node-id below a root,
 * 32 lowercase hex characters and a newline, mode 0644.
 *
 * Generated from getrandom(2), never from /etc/machine-id: DGX Sparks
 * ship with the same machine-id, so it cannot tell two of them apart.
 * 'sparkctl publish' advertises it as the TXT id= of _sparkctl._tcp, and
 * 'sparkctl discover' dedupes the hosts it finds by it.
 */
#ifndef SPARKCTL_NODE_ID_H
#define SPARKCTL_NODE_ID_H

#include "sparkctl.h"
#include "lib/rootfs.h"
#include "lib/strbuf.h"

#define NODE_ID_DIR  "etc/sparkctl"
#define NODE_ID_FILE "node-id"
#define NODE_ID_LEN  32

/* True for 32 lowercase hex characters (without the newline). */
bool node_id_valid(const char *s);

/*
 * The id of the node below root into out (without the newline): -ENOENT
 * when there is none, -EINVAL when the file does not hold an id, another
 * -errno when it cannot be read.
 */
int node_id_read(const struct rootfs *root, struct strbuf *out);

/*
 * The id, created (atomically, 0644, /etc/sparkctl made 0755) when there
 * is none: 1 when it was created, 0 when it was there, -errno with a
 * message in err (-EINVAL for a file that is not an id: left alone).
 */
int node_id_ensure(const struct rootfs *root, struct strbuf *out, struct strbuf *err);

#endif
