/*
 * emit.h - one report, as text or as JSON, from the same calls.
 *
 * A report (topo, doctor, status, bench, launch's summary) is written once,
 * as a sequence of emit_*() calls that each carry a JSON key and the text
 * to show: in EMIT_TEXT mode the text goes to a strbuf (tables aligned by
 * view/table.h), in EMIT_JSON mode the values build a jansson document.
 * So a field shown in text is in the JSON under a stable key, and the two
 * cannot drift (the idea of iproute2's print_*(PRINT_ANY, key, fmt, value)).
 *
 *	emit_str(e, "host", "%s\n", host);		// both
 *	emit_text(e, "  (%zu ports)\n", n);		// text only
 *	emit_value(e, "time", jint(now), NULL);		// JSON only
 *	emit_table_open(e, "ports", headers, 3, 80);	// text: a table; JSON: "ports": [...]
 *	emit_row_open(e);
 *	emit_cell(e, "name", jstr(name), name);		// a column: JSON key and value, text
 *	...
 *	emit_row_close(e);
 *	emit_table_close(e);
 *
 * Containers (objects, arrays, table rows) exist in JSON only; text is
 * what the calls print.  Opening an array or object whose key the current
 * object already holds appends to it, so a report may add to two lists in
 * turn (doctor: a node, then its findings).  Every emit_*() that takes a
 * json_t takes its reference, also in text mode.  Misuse (closing what is
 * not open, a cell outside a row) is a programming error: it aborts.
 *
 * The text is safe on a terminal (strbuf_add_printable()): a string value
 * (emit_str(), a cell) is escaped whole, newlines included; the text of
 * emit_text() and emit_value() keeps its newlines and tabs and has every
 * other control escaped.  So a value from outside goes in as a value -
 * emit_str(e, NULL, fmt, v) for text only - not through emit_text()'s
 * format.  The colours of emit_str_color() are the only escape sequences.
 */
#ifndef SPARKCTL_EMIT_H
#define SPARKCTL_EMIT_H

#include "sparkctl.h"
#include "lib/json.h"
#include "lib/strbuf.h"
#include "view/table.h"

#define EMIT_DEPTH 16

enum emit_mode {
	EMIT_TEXT,
	EMIT_JSON,
};

struct emitter {
	enum emit_mode mode;
	bool color;		   /* text: ANSI colours from emit_*_color() */
	struct strbuf *out;	   /* text: where it goes */
	json_t *stack[EMIT_DEPTH]; /* JSON: the open containers, stack[0] the document */
	size_t depth;
	/* the open table (text) */
	struct table table;
	size_t table_width;
	bool in_table;
};

/* Text into out (with ANSI colours when color), or a JSON document (out unused, may be NULL). */
void emit_init(struct emitter *e, enum emit_mode mode, struct strbuf *out, bool color);
/* The JSON document (a new reference: the caller decrefs it); NULL in text mode. */
json_t *emit_document(const struct emitter *e);
void emit_release(struct emitter *e);
/*
 * The end of a report: in JSON mode the document's text (indented, with a
 * final newline) is added to out, which then holds the whole report in
 * either mode; the emitter is released.
 */
void emit_finish(struct emitter *e, struct strbuf *out);

static inline bool emit_is_json(const struct emitter *e)
{
	return e->mode == EMIT_JSON;
}

/* JSON containers: key NULL inside an array. */
void emit_object_open(struct emitter *e, const char *key);
void emit_array_open(struct emitter *e, const char *key);
void emit_close(struct emitter *e);

/*
 * The general field: JSON sets key to value (in an array: appends it; key
 * NULL in an object: value is dropped), text appends text (NULL: nothing).
 * Takes value's reference.
 */
void emit_value(struct emitter *e, const char *key, json_t *value, const char *text);

/*
 * Fields whose text is fmt applied to the value (fmt NULL: JSON only).
 * A NULL string is null in JSON, and "-" in the text.
 */
void emit_str(struct emitter *e, const char *key, const char *fmt, const char *v);
void emit_int(struct emitter *e, const char *key, const char *fmt, int64_t v);
void emit_bool(struct emitter *e, const char *key, bool v, const char *text_true,
	       const char *text_false);
/* emit_str() whose text is wrapped in the ANSI colour color when the emitter has colours. */
void emit_str_color(struct emitter *e, const char *key, const char *color, const char *fmt,
		    const char *v);

/* Text only. */
void emit_text(struct emitter *e, const char *fmt, ...) ATTR_PRINTF(2, 3);

/*
 * A table: in text, columns titled headers (view/table.h: '>' right-aligns)
 * rendered at emit_table_close() within width; in JSON, an array key of one
 * object per row.
 */
void emit_table_open(struct emitter *e, const char *key, const char *const *headers, size_t nr,
		     size_t width);
void emit_row_open(struct emitter *e);
/* One cell: JSON row[key] = value (key NULL: none), text the cell (NULL shows as "-"). */
void emit_cell(struct emitter *e, const char *key, json_t *value, const char *text);
void emit_cellf(struct emitter *e, const char *key, json_t *value, const char *fmt, ...)
	ATTR_PRINTF(4, 5);
/* emit_cell() whose text is wrapped in the ANSI colour color when the emitter has colours. */
void emit_cell_color(struct emitter *e, const char *key, json_t *value, const char *color,
		     const char *text);
void emit_row_close(struct emitter *e);
void emit_table_close(struct emitter *e);

#endif
