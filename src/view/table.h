/*
 * table.h - plain-text tables with aligned columns.
 *
 * Cells are added row by row; table_render() sizes each column to its
 * widest cell and separates columns by two spaces, or by one when two
 * would not fit in max_width.  Right-aligned columns suit numbers.
 */
#ifndef SPARKCTL_TABLE_H
#define SPARKCTL_TABLE_H

#include "sparkctl.h"
#include "lib/strbuf.h"

#define TABLE_MAX_COLUMNS 16

struct table {
	size_t nr_columns;
	bool right[TABLE_MAX_COLUMNS]; /* right-align column i */
	char **cells;		       /* row-major, nr_rows * nr_columns */
	const char **colors;	       /* each cell's ANSI colour, or NULL */
	size_t nr_cells;
};

/* headers: nr column titles; a title starting with '>' is right-aligned (the '>' is dropped). */
void table_init(struct table *t, size_t nr, const char *const *headers);
/* Add one cell to the current row (rows fill left to right); NULL shows as "-". */
void table_cell(struct table *t, const char *text);
void table_cellf(struct table *t, const char *fmt, ...) ATTR_PRINTF(2, 3);
/*
 * A cell whose text is wrapped in the ANSI colour color (a string that
 * lives as long as the table; NULL: none).  The colour does not count in
 * the column's width.
 */
void table_cell_color(struct table *t, const char *color, const char *text);
void table_render(const struct table *t, size_t max_width, struct strbuf *out);
void table_release(struct table *t);

#endif
