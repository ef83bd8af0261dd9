/*
 * topo_view.h - the 'sparkctl topo' table, as a pure function of an inventory.
 */
#ifndef SPARKCTL_TOPO_VIEW_H
#define SPARKCTL_TOPO_VIEW_H

#include "sparkctl.h"
#include "inventory/inventory.h"
#include "lib/strbuf.h"

/* Append the readable view of inv (fits in width columns where it can) to out. */
void topo_render(const struct inventory *inv, size_t width, struct strbuf *out);

#endif
