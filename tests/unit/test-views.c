/*
 * test-views.c - the report emitter (view/emit.h) and the views built on
 * it: text and JSON from the same calls.
 */
#include "sparkctl.h"

#include "inventory/inventory_json.h"
#include "test_util.h"
#include "view/emit.h"
#include "view/topo_view.h"

static void emit_sample(struct emitter *e)
{
	static const char *const headers[] = { "NAME", ">SIZE" };

	emit_int(e, "schema_version", NULL, 1);
	emit_str(e, "host", "host %s\n", "spark1");
	emit_text(e, "-- text only --\n");
	emit_value(e, "time", jint(42), NULL);
	emit_table_open(e, "files", headers, 2, 80);
	for (int i = 0; i < 2; i++) {
		emit_row_open(e);
		emit_cell(e, "name", jstr(i ? "b" : "a"), i ? "b" : "a");
		emit_cellf(e, "size_bytes", jint(i ? 2048 : 7), "%d B", i ? 2048 : 7);
		emit_row_close(e);
	}
	emit_table_close(e);
	/* Two lists added to in turn. */
	for (int i = 0; i < 2; i++) {
		emit_array_open(e, "nodes");
		emit_str(e, NULL, "node %s\n", i ? "n1" : "n0");
		emit_close(e);
		emit_array_open(e, "events");
		emit_value(e, NULL, i ? json_null() : jint(5), i ? NULL : "event 5\n");
		emit_close(e);
	}
	emit_value(e, "ratio", jreal(0.5), "0.50\n");
	emit_bool(e, "up", true, "up\n", "down\n");
}

static void text_and_json(void **state)
{
	struct strbuf out = STRBUF_INIT;
	struct emitter e;
	json_t *doc, *want;
	json_error_t jerr;

	(void)state;
	emit_init(&e, EMIT_TEXT, &out, false);
	emit_sample(&e);
	assert_null(emit_document(&e));
	emit_release(&e);
	assert_string_equal(out.buf, "host spark1\n"
				     "-- text only --\n"
				     "NAME    SIZE\n"
				     "a        7 B\n"
				     "b     2048 B\n"
				     "node n0\n"
				     "event 5\n"
				     "node n1\n"
				     "0.50\n"
				     "up\n");

	emit_init(&e, EMIT_JSON, NULL, false);
	emit_sample(&e);
	doc = emit_document(&e);
	emit_release(&e);
	want = json_loads("{\"schema_version\": 1, \"host\": \"spark1\", \"time\": 42,"
			  " \"files\": [{\"name\": \"a\", \"size_bytes\": 7},"
			  "             {\"name\": \"b\", \"size_bytes\": 2048}],"
			  " \"nodes\": [\"n0\", \"n1\"], \"events\": [5, null],"
			  " \"ratio\": 0.5, \"up\": true}",
			  0, &jerr);
	assert_non_null(want);
	assert_true(json_equal(doc, want));
	/* The order of the keys is the order of the calls. */
	assert_string_equal(json_object_iter_key(json_object_iter(doc)), "schema_version");
	json_decref(want);
	json_decref(doc);
	strbuf_release(&out);
}

static void colors_only_in_text(void **state)
{
	struct strbuf out = STRBUF_INIT;
	struct emitter e;

	(void)state;
	emit_init(&e, EMIT_TEXT, &out, true);
	emit_str_color(&e, "status", "\033[31m", "%s", "FAIL");
	emit_release(&e);
	assert_string_equal(out.buf, "\033[31mFAIL\033[0m");
	strbuf_reset(&out);
	emit_init(&e, EMIT_TEXT, &out, false);
	emit_str_color(&e, "status", "\033[31m", "%s", "FAIL");
	emit_release(&e);
	assert_string_equal(out.buf, "FAIL");
	strbuf_release(&out);
}

/*
 * Values from outside reach the text escaped (newlines too), the report's
 * own text keeps its lines, and only the emitter's colours are escape
 * sequences; the JSON has the values exactly.
 */
static void text_escapes_controls(void **state)
{
	static const char *const headers[] = { "DEV", "NOTE" };
	static const char hostile[] = "a\033]0;T\007\xc2\x9b"
				      "b\n\xff";
	struct strbuf out = STRBUF_INIT;
	struct emitter e;
	json_t *doc;

	(void)state;
	for (int m = 0; m < 2; m++) {
		emit_init(&e, m ? EMIT_JSON : EMIT_TEXT, &out, true);
		emit_str_color(&e, "host", "\033[31m", "[%s]\n", hostile);
		emit_text(&e, "note\t%s\n", "x\033[2Jy");
		emit_value(&e, "v", jstr(hostile), "v=\033c\n");
		emit_table_open(&e, "rows", headers, 2, 80);
		emit_row_open(&e);
		emit_cell(&e, "dev", jstr(hostile), hostile);
		emit_cellf(&e, NULL, NULL, "<%s>", "\177");
		emit_row_close(&e);
		emit_table_close(&e);
		doc = emit_document(&e);
		emit_release(&e);
		if (!m)
			continue;
		assert_string_equal(json_string_value(json_object_get(doc, "host")),
				    "a\033]0;T\007\xc2\x9b"
				    "b\n\xef\xbf\xbd");
		json_decref(doc);
	}
	assert_string_equal(out.buf, "\033[31m[a\\x1b]0;T\\x07\\xc2\\x9bb\\x0a\\xff]\n\033[0m"
				     "note\tx\\x1b[2Jy\n"
				     "v=\\x1bc\n"
				     "DEV                             NOTE\n"
				     "a\\x1b]0;T\\x07\\xc2\\x9bb\\x0a\\xff  <\\x7f>\n");
	strbuf_release(&out);
}

/* Every key of v (objects inside arrays included) is added to keys. */
static void collect_keys(const json_t *v, json_t *keys)
{
	const char *key;
	json_t *member;
	size_t i;

	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, member)
		{
			json_object_set_new(keys, key, json_true());
			collect_keys(member, keys);
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, member) collect_keys(member, keys);
	}
}

/*
 * What topo shows is in 'topo --json' (the inventory) under the same key:
 * every key of the view's JSON is a key of the inventory, but for the
 * view's own lists.
 */
static void topo_view_keys_are_inventory_keys(void **state)
{
	static const char *const fixtures[] = { "spark-1cable", "spark-2cable",	   "spark-ring",
						"spark-ofed",	"spark-gid-drift", "ib-server" };
	static const char *const own[] = { "ports", "gpus", "twins", "label" };

	(void)state;
	for (size_t f = 0; f < ARRAY_SIZE(fixtures); f++) {
		struct inventory inv;
		struct emitter e;
		json_t *view, *inv_json, *view_keys = json_object(), *inv_keys = json_object();
		const char *key;
		json_t *member;

		load_fixture(fixtures[f], &inv);
		emit_init(&e, EMIT_JSON, NULL, false);
		topo_emit(&inv, 80, &e);
		view = emit_document(&e);
		emit_release(&e);
		inv_json = inventory_to_json(&inv);
		collect_keys(view, view_keys);
		collect_keys(inv_json, inv_keys);
		json_object_foreach(view_keys, key, member)
		{
			bool ok = json_object_get(inv_keys, key) != NULL;
			for (size_t k = 0; k < ARRAY_SIZE(own); k++)
				ok = ok || streq(key, own[k]);
			if (!ok)
				fail_msg("%s: the topo view's key '%s' is not in the inventory",
					 fixtures[f], key);
		}
		assert_true(json_array_size(json_object_get(view, "ports")) > 0);
		json_decref(view);
		json_decref(inv_json);
		json_decref(view_keys);
		json_decref(inv_keys);
		inventory_release(&inv);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text_and_json),
		cmocka_unit_test(colors_only_in_text),
		cmocka_unit_test(text_escapes_controls),
		cmocka_unit_test(topo_view_keys_are_inventory_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
