/*
 * top_view.h - the screen of 'sparkctl top', as a pure function of the
 * nodes' models (top/model.h), the terminal's size, the sort order and
 * whether the view is paused.  The ncurses front end draws these lines
 * as they are, and --once prints them, so the layout is unit-tested on
 * exact text (tests/unit/test-top.c).  ASCII only.
 */
#ifndef SPARKCTL_TOP_VIEW_H
#define SPARKCTL_TOP_VIEW_H

#include "sparkctl.h"
#include "lib/strbuf.h"
#include "top/model.h"

enum top_sort {
	TOP_SORT_NAME,	  /* GPUs by index, ports by name */
	TOP_SORT_TRAFFIC, /* ports by TX + RX, busiest first */
	TOP_SORT_UTIL,	  /* GPUs by utilisation, busiest first */
	TOP_SORT_TEMP,	  /* GPUs by temperature, hottest first */
	TOP_SORT_COUNT,
};

const char *top_sort_name(enum top_sort s);
/* -EINVAL for a name that is not one of top_sort_name()'s. */
int top_sort_parse(const char *name, enum top_sort *ret);

/*
 * The history graph's characters, lowest to highest: ' ' no figure, '.'
 * nothing moved, then eight steps of the link's rate (or, when the rate
 * is unknown, of the highest figure shown).
 */
#define TOP_GRAPH_CHARS ".:-=+*#%@"

struct top_view_node {
	const char *host;
	const char *error; /* why it has no figures ("unreachable: ..."), or NULL */
	const struct top_model *model;
};

struct top_view_opts {
	size_t width;  /* columns; 0: no limit (plain output) */
	size_t height; /* lines; 0: no limit */
	enum top_sort sort;
	double interval; /* seconds */
	bool paused;
	bool keys; /* end with a line of the keys (the interactive view) */
};

/* Append the lines (each ending in '\n') to out. */
void top_view_render(const struct top_view_node *nodes, size_t nr, const struct top_view_opts *o,
		     struct strbuf *out);

/* The graph of the last width figures of p's history (width bytes) to out. */
void top_view_graph(const struct top_port *p, size_t width, struct strbuf *out);

#endif
