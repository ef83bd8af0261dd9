/*
 * topo_view.h - the 'sparkctl topo' view, as a pure function of an inventory.
 */
#ifndef SPARKCTL_TOPO_VIEW_H
#define SPARKCTL_TOPO_VIEW_H

#include "sparkctl.h"
#include "inventory/inventory.h"
#include "lib/strbuf.h"
#include "view/emit.h"

/*
 * The view of inv: a header line, the RDMA ports (a table within width
 * columns where it can) and their twin pairs, the GPUs, one line of driver
 * and software facts.  In JSON every value it shows is under the key of
 * the inventory (docs/inventory.md) that holds it.
 */
void topo_emit(const struct inventory *inv, size_t width, struct emitter *e);
/* The text of topo_emit(), appended to out. */
void topo_render(const struct inventory *inv, size_t width, struct strbuf *out);

#endif
