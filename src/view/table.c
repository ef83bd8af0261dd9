#include "sparkctl.h"

#include "lib/xalloc.h"
#include "view/color.h"
#include "view/table.h"

void table_init(struct table *t, size_t nr, const char *const *headers)
{
	memset(t, 0, sizeof(*t));
	if (nr > TABLE_MAX_COLUMNS)
		abort(); /* a programming error */
	t->nr_columns = nr;
	for (size_t i = 0; i < nr; i++) {
		t->right[i] = headers[i][0] == '>';
		table_cell(t, headers[i] + (t->right[i] ? 1 : 0));
	}
}

/* Add a cell that owns text. */
static void add_cell(struct table *t, char *text, const char *color)
{
	size_t nr = t->nr_cells;

	*ARRAY_PUSH(t->colors, nr) = color;
	*ARRAY_PUSH(t->cells, t->nr_cells) = text;
}

void table_cell(struct table *t, const char *text)
{
	table_cell_color(t, NULL, text);
}

void table_cell_color(struct table *t, const char *color, const char *text)
{
	add_cell(t, xstrdup(text ? text : "-"), color);
}

void table_cellf(struct table *t, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	add_cell(t, strbuf_detach(&sb, NULL), NULL);
}

/* Display width: count UTF-8 lead bytes, not continuation bytes. */
static size_t text_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

void table_render(const struct table *t, size_t max_width, struct strbuf *out)
{
	size_t width[TABLE_MAX_COLUMNS] = { 0 };
	size_t total = 0, gap = 2, line_start = out->len;

	for (size_t i = 0; i < t->nr_cells; i++) {
		size_t w = text_width(t->cells[i]);
		if (w > width[i % t->nr_columns])
			width[i % t->nr_columns] = w;
	}
	for (size_t c = 0; c < t->nr_columns; c++)
		total += width[c];
	if (total + 2 * (t->nr_columns - 1) > max_width)
		gap = 1;
	for (size_t i = 0; i < t->nr_cells; i++) {
		size_t c = i % t->nr_columns;
		size_t pad = width[c] - text_width(t->cells[i]);
		bool last = c + 1 == t->nr_columns;
		if (t->right[c])
			strbuf_addchars(out, ' ', pad);
		if (t->colors[i])
			strbuf_addf(out, "%s%s%s", t->colors[i], t->cells[i], COLOR_RESET);
		else
			strbuf_addstr(out, t->cells[i]);
		if (!last && !t->right[c])
			strbuf_addchars(out, ' ', pad);
		if (!last) {
			strbuf_addchars(out, ' ', gap);
			continue;
		}
		/* Empty or padded cells at the end of a row leave no blanks behind. */
		while (out->len > line_start && out->buf[out->len - 1] == ' ')
			strbuf_setlen(out, out->len - 1);
		strbuf_addch(out, '\n');
		line_start = out->len;
	}
}

void table_release(struct table *t)
{
	for (size_t i = 0; i < t->nr_cells; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->colors);
	memset(t, 0, sizeof(*t));
}
