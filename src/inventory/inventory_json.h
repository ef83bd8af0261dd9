/*
 * inventory_json.h - the inventory's JSON form (docs/inventory.md).
 *
 * inventory_to_json() writes every stored fact plus, for readers, the
 * derived ones (twin, fabric, nccl_gid_index, roce_mtu, ...).
 * inventory_from_json() reads the stored facts back and ignores the
 * derived ones, which are recomputed; so
 * to_json(from_json(to_json(x))) == to_json(x).
 */
#ifndef SPARKCTL_INVENTORY_JSON_H
#define SPARKCTL_INVENTORY_JSON_H

#include "sparkctl.h"
#include "inventory/inventory.h"
#include "lib/json.h"
#include "lib/strbuf.h"

json_t *inventory_to_json(const struct inventory *inv);

/*
 * Fill inv (initialised, empty) from doc.  On a schema violation returns
 * -EINVAL with "path.to.field: expected ..." in err; inv is then released.
 */
int inventory_from_json(struct inventory *inv, const json_t *doc, struct strbuf *err);

/* Load an inventory from a file ("-" for standard input). */
int inventory_load(struct inventory *inv, const char *path, struct strbuf *err);

/*
 * The facts of a host that are not files (architecture, home, environment,
 * memlock limits, NCCL and the GPUs): the content of a capture's
 * .sparkctl/host.json.
 */
json_t *host_facts_to_json(const struct inventory *inv);
int host_facts_from_json(struct inventory *inv, const json_t *doc, struct strbuf *err);

#endif
