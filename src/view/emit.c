/*
 * emit.c - the report emitter: text into a strbuf, or a jansson document.
 */
#include "sparkctl.h"

#include "view/color.h"
#include "view/emit.h"

/* A report's call sequence is wrong: fail loudly, in tests first. */
ATTR_NORETURN static void misuse(const char *what)
{
	fprintf(stderr, "sparkctl: emitter misuse: %s\n", what);
	abort();
}

void emit_init(struct emitter *e, enum emit_mode mode, struct strbuf *out, bool color)
{
	memset(e, 0, sizeof(*e));
	e->mode = mode;
	e->out = out;
	e->color = color && mode == EMIT_TEXT;
	if (mode == EMIT_JSON) {
		e->stack[0] = json_object();
		e->depth = 1;
	}
}

json_t *emit_document(const struct emitter *e)
{
	return e->mode == EMIT_JSON ? json_incref(e->stack[0]) : NULL;
}

void emit_finish(struct emitter *e, struct strbuf *out)
{
	if (e->mode == EMIT_JSON)
		json_to_strbuf(e->stack[0], out);
	emit_release(e);
}

void emit_release(struct emitter *e)
{
	if (e->in_table)
		table_release(&e->table);
	if (e->mode == EMIT_JSON)
		json_decref(e->stack[0]);
	memset(e, 0, sizeof(*e));
}

static json_t *top(const struct emitter *e)
{
	return e->stack[e->depth - 1];
}

/* Put value into the current container: under key in an object, appended in an array. */
static void put(struct emitter *e, const char *key, json_t *value)
{
	json_t *c = top(e);

	if (json_is_array(c))
		jpush(c, value);
	else if (key)
		jset(c, key, value);
	else
		misuse("a value without a key in an object");
}

/* Open the container made by fresh() under key; an existing one of its kind is reused. */
static void open_container(struct emitter *e, const char *key, json_t *(*fresh)(void),
			   bool is_array)
{
	json_t *c;

	if (e->mode != EMIT_JSON)
		return;
	if (e->depth == EMIT_DEPTH)
		misuse("containers nested too deep");
	c = key && json_is_object(top(e)) ? json_object_get(top(e), key) : NULL;
	if (!c || json_is_array(c) != is_array) {
		c = fresh();
		put(e, key, json_incref(c));
		json_decref(c);
	}
	e->stack[e->depth++] = c;
}

void emit_object_open(struct emitter *e, const char *key)
{
	open_container(e, key, json_object, false);
}

void emit_array_open(struct emitter *e, const char *key)
{
	open_container(e, key, json_array, true);
}

void emit_close(struct emitter *e)
{
	if (e->mode != EMIT_JSON)
		return;
	if (e->depth <= 1)
		misuse("close without an open container");
	e->depth--;
}

void emit_value(struct emitter *e, const char *key, json_t *value, const char *text)
{
	if (e->mode == EMIT_JSON) {
		/* In an array a value needs no key; in an object, no key means text only. */
		if (key || json_is_array(top(e)))
			put(e, key, value);
		else
			json_decref(value);
		return;
	}
	json_decref(value);
	if (!text)
		return;
	if (e->in_table)
		misuse("text inside a table row: use emit_cell()");
	strbuf_add_printable(e->out, text, strlen(text), PRINTABLE_LINES);
}

void emit_text(struct emitter *e, const char *fmt, ...)
{
	struct strbuf text = STRBUF_INIT;
	va_list ap;

	if (e->mode != EMIT_TEXT)
		return;
	if (e->in_table)
		misuse("text inside a table");
	va_start(ap, fmt);
	strbuf_vaddf(&text, fmt, ap);
	va_end(ap);
	strbuf_add_printable(e->out, text.buf, text.len, PRINTABLE_LINES);
	strbuf_release(&text);
}

/* The emitter's own escape sequences: the only ones that reach the text unescaped. */
static void add_color(struct emitter *e, const char *color)
{
	if (e->mode != EMIT_TEXT || !e->color || !color)
		return;
	if (e->in_table)
		misuse("text inside a table");
	strbuf_addstr(e->out, color);
}

/* fmt is the report's own literal, applied to one value of the named type. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static void text_str(struct emitter *e, const char *fmt, const char *v)
{
	struct strbuf value = STRBUF_INIT;

	if (e->mode != EMIT_TEXT || !fmt)
		return;
	/* A value is one line: its newlines are escaped too, the format's are not. */
	strbuf_addstr_printable(&value, v);
	emit_text(e, fmt, value.buf);
	strbuf_release(&value);
}

static void text_i64(struct emitter *e, const char *fmt, int64_t v)
{
	if (e->mode == EMIT_TEXT && fmt)
		emit_text(e, fmt, v);
}

#pragma GCC diagnostic pop

void emit_str(struct emitter *e, const char *key, const char *fmt, const char *v)
{
	if (e->mode == EMIT_JSON)
		emit_value(e, key, jstr(v), NULL);
	else
		text_str(e, fmt, v ? v : "-");
}

void emit_str_color(struct emitter *e, const char *key, const char *color, const char *fmt,
		    const char *v)
{
	add_color(e, color);
	emit_str(e, key, fmt, v);
	add_color(e, color ? COLOR_RESET : NULL);
}

void emit_int(struct emitter *e, const char *key, const char *fmt, int64_t v)
{
	if (e->mode == EMIT_JSON)
		emit_value(e, key, jint(v), NULL);
	else
		text_i64(e, fmt, v);
}

void emit_bool(struct emitter *e, const char *key, bool v, const char *text_true,
	       const char *text_false)
{
	const char *text = v ? text_true : text_false;

	if (e->mode == EMIT_JSON)
		emit_value(e, key, jbool(v), NULL);
	else if (text)
		emit_text(e, "%s", text); /* the view's own words */
}

void emit_table_open(struct emitter *e, const char *key, const char *const *headers, size_t nr,
		     size_t width)
{
	if (e->mode == EMIT_JSON) {
		emit_array_open(e, key);
		return;
	}
	if (e->in_table)
		misuse("a table inside a table");
	table_init(&e->table, nr, headers);
	e->table_width = width;
	e->in_table = true;
}

void emit_row_open(struct emitter *e)
{
	if (e->mode == EMIT_JSON)
		emit_object_open(e, NULL);
	else if (!e->in_table)
		misuse("a row outside a table");
}

void emit_cell_color(struct emitter *e, const char *key, json_t *value, const char *color,
		     const char *text)
{
	struct strbuf cell = STRBUF_INIT;

	if (e->mode == EMIT_JSON) {
		emit_value(e, key, value, NULL);
		return;
	}
	json_decref(value);
	if (!e->in_table)
		misuse("a cell outside a table");
	if (text)
		strbuf_addstr_printable(&cell, text);
	table_cell_color(&e->table, e->color ? color : NULL, text ? cell.buf : NULL);
	strbuf_release(&cell);
}

void emit_cell(struct emitter *e, const char *key, json_t *value, const char *text)
{
	emit_cell_color(e, key, value, NULL, text);
}

void emit_cellf(struct emitter *e, const char *key, json_t *value, const char *fmt, ...)
{
	struct strbuf text = STRBUF_INIT;
	va_list ap;

	if (e->mode == EMIT_TEXT) {
		va_start(ap, fmt);
		strbuf_vaddf(&text, fmt, ap);
		va_end(ap);
	}
	emit_cell(e, key, value, text.buf);
	strbuf_release(&text);
}

void emit_row_close(struct emitter *e)
{
	emit_close(e);
}

void emit_table_close(struct emitter *e)
{
	if (e->mode == EMIT_JSON) {
		emit_close(e);
		return;
	}
	if (!e->in_table)
		misuse("closing a table that is not open");
	table_render(&e->table, e->table_width, e->out);
	table_release(&e->table);
	e->in_table = false;
}
