/*
 * inventory-doc - docs/inventory.md with its field tables generated from
 * the inventory's descriptors (src/inventory/schema.c).
 *
 *   inventory-doc < docs/inventory.md
 *
 * Copies the document to standard output; after each line
 * "<!-- fields: NAME -->" the table that follows (its lines starting
 * with '|') is replaced by the table of the descriptor NAME.  Fails when
 * a marker names no table, a table has no marker, or a row has no doc.
 * t0140-inventory-doc.sh diffs the output against the file.
 */
#include "sparkctl.h"

#include "inventory/codec.h"
#include "lib/strbuf.h"

#define MARKER "<!-- fields: "

/* The descriptors that have a table of their own, found from the inventory's. */
struct tables {
	const struct inv_desc *desc[32];
	bool written[32];
	size_t nr;
};

static void find_tables(const struct inv_desc *d, struct tables *t)
{
	if (d->table) {
		for (size_t i = 0; i < t->nr; i++)
			if (t->desc[i] == d)
				return;
		if (t->nr == ARRAY_SIZE(t->desc))
			abort();
		t->desc[t->nr++] = d;
	}
	for (size_t i = 0; i < d->nr_fields; i++)
		if (d->fields[i].desc)
			find_tables(d->fields[i].desc, t);
}

static const char *type_name(const struct inv_field *f)
{
	bool required = f->flags & INV_REQUIRED;

	if (f->flags & INV_MBPS_AS_GBPS)
		return "number/null";
	switch (f->type) {
	case INV_STRING:
		return required ? "string" : "string/null";
	case INV_INT:
	case INV_INT32:
		return required ? "integer" : "integer/null";
	case INV_UINT:
	case INV_CONST:
		return "integer";
	case INV_TRI:
		return "bool/null";
	case INV_LIMIT:
		return "integer/`\"unlimited\"`/null";
	case INV_ENUM:
		return "string/null";
	case INV_GID:
		return "string";
	case INV_STRVEC:
		return "array of string";
	case INV_OBJECT:
		return "object";
	case INV_OPTIONAL:
		return "object/null";
	case INV_ARRAY:
		return "array";
	case INV_DERIVED_STRING:
		return "string/null";
	case INV_DERIVED_INT:
		return "integer/null";
	case INV_DERIVED_TRI:
		return "bool/null";
	case INV_DERIVED_BOOL:
		return "bool";
	case INV_MAP:
	case INV_INLINE:
	case INV_NAME:
	case INV_TAG:
		break;
	}
	return NULL;
}

static bool is_derived(const struct inv_field *f)
{
	return f->type == INV_DERIVED_STRING || f->type == INV_DERIVED_INT ||
	       f->type == INV_DERIVED_TRI || f->type == INV_DERIVED_BOOL;
}

/* The key of f below prefix: "os.id", "gids[].index", "sysctl[\"net.core.rmem_max\"]". */
static void key_path(struct strbuf *out, const char *prefix, const char *key)
{
	strbuf_addstr(out, prefix);
	if (strchr(key, '.'))
		strbuf_addf(out, "[\"%s\"]", key);
	else
		strbuf_addf(out, "%s%s", *prefix ? "." : "", key);
}

static int write_rows(const struct inv_desc *d, const char *prefix, struct strbuf *out);

/* Row f after row prev (NULL for the first) of its object. */
static int write_row(const struct inv_field *f, const struct inv_field *prev, const char *prefix,
		     struct strbuf *out)
{
	struct strbuf key = STRBUF_INIT;
	int r = 0;

	key_path(&key, prefix, f->key);
	if (!f->doc) {
		fprintf(stderr, "inventory-doc: the row '%s' has no doc\n", key.buf);
		r = -1;
		goto out;
	}
	strbuf_addf(out, "| `%s` | ", key.buf);
	if (f->type == INV_MAP) {
		const char *value = type_name(&f->desc->fields[f->value]);
		size_t len = strlen(value);
		/* A map that leaves null values out has none. */
		if ((f->flags & INV_OMIT_NULL) && len > 5 && streq(value + len - 5, "/null"))
			len -= 5;
		strbuf_addf(out, "object of %.*s", (int)len, value);
	} else {
		strbuf_addstr(out, type_name(f));
	}
	strbuf_addf(out, " | %s", is_derived(f) ? "*derived*: " : "");
	if (f->keys && prev && prev->keys == f->keys) {
		strbuf_addstr(out, "for each of those: ");
	} else if (f->keys) {
		strbuf_addstr(out, "for each of `");
		for (size_t i = 0; f->keys[i]; i++)
			strbuf_addf(out, "%s%s", i ? " " : "", f->keys[i]);
		strbuf_addstr(out, "`: ");
	}
	strbuf_addf(out, "%s |\n", f->doc);
	/* The fields of nested objects and entries follow, unless they have their own table. */
	if ((f->type == INV_OBJECT || f->type == INV_OPTIONAL || f->type == INV_ARRAY) &&
	    !f->desc->table) {
		if (f->type == INV_ARRAY)
			strbuf_addstr(&key, "[]");
		r = write_rows(f->desc, key.buf, out);
	}
out:
	strbuf_release(&key);
	return r;
}

static int write_rows(const struct inv_desc *d, const char *prefix, struct strbuf *out)
{
	for (size_t i = 0; i < d->nr_fields; i++) {
		const struct inv_field *f = &d->fields[i];
		int r = 0;
		if (f->type == INV_INLINE)
			r = write_rows(f->desc, prefix, out);
		else if (f->type != INV_NAME && f->type != INV_TAG)
			r = write_row(f, i ? f - 1 : NULL, prefix, out);
		if (r < 0)
			return r;
	}
	return 0;
}

static int write_table(struct tables *t, const char *name, struct strbuf *out)
{
	for (size_t i = 0; i < t->nr; i++) {
		if (streq(t->desc[i]->table, name)) {
			t->written[i] = true;
			strbuf_addstr(out, "| key | type | meaning |\n|---|---|---|\n");
			return write_rows(t->desc[i], "", out);
		}
	}
	fprintf(stderr, "inventory-doc: no descriptor has the table '%s'\n", name);
	return -1;
}

int main(void)
{
	struct strbuf in = STRBUF_INIT, out = STRBUF_INIT;
	struct tables t = { .nr = 0 };
	bool skipping = false;
	int r = strbuf_read_fd(&in, STDIN_FILENO, (size_t)1 << 20);

	find_tables(&inv_schema_inventory, &t);
	for (size_t at = 0, len; r >= 0 && at < in.len; at += len + 1) {
		char *line = in.buf + at;
		len = strcspn(line, "\n"); /* the last line may have no newline */
		line[len] = '\0';
		if (skipping && line[0] == '|')
			continue;
		skipping = false;
		strbuf_add(&out, line, len);
		strbuf_addch(&out, '\n');
		if (starts_with(line, MARKER) && strstr(line, " -->")) {
			char *name = line + strlen(MARKER);
			*strstr(name, " -->") = '\0';
			r = write_table(&t, name, &out);
			skipping = true;
		}
	}
	for (size_t i = 0; r >= 0 && i < t.nr; i++) {
		if (!t.written[i]) {
			fprintf(stderr, "inventory-doc: no '%s%s -->' for the table\n", MARKER,
				t.desc[i]->table);
			r = -1;
		}
	}
	if (r >= 0)
		fputs(out.buf, stdout);
	strbuf_release(&in);
	strbuf_release(&out);
	return r >= 0 ? 0 : 1;
}
