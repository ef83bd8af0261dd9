#include "sparkctl.h"

#include "inventory/codec.h"
#include "inventory/inventory_json.h"

json_t *inventory_to_json(const struct inventory *inv)
{
	return inv_fields_to_json(&inv_schema_inventory, inv, inv);
}

int inventory_from_json(struct inventory *inv, const json_t *doc, struct strbuf *err)
{
	const json_t *v = json_object_get(doc, "schema_version");
	int r = -EINVAL;

	if (v && !json_is_null(v) && (!json_is_integer(v) || json_integer_value(v) < 0))
		strbuf_addstr(err, "schema_version: expected a non-negative integer");
	else if (!json_is_integer(v))
		strbuf_addstr(err, "schema_version: missing; this is not a sparkctl inventory");
	else if (json_integer_value(v) > INVENTORY_SCHEMA_VERSION)
		strbuf_addf(err,
			    "schema_version %" JSON_INTEGER_FORMAT
			    " is newer than this sparkctl reads (%d)",
			    json_integer_value(v), INVENTORY_SCHEMA_VERSION);
	else
		r = inv_fields_from_json(&inv_schema_inventory, doc, inv, err);
	if (r < 0)
		inventory_release(inv);
	return r;
}

json_t *host_facts_to_json(const struct inventory *inv)
{
	return inv_fields_to_json(&inv_schema_host_facts, inv, inv);
}

int host_facts_from_json(struct inventory *inv, const json_t *doc, struct strbuf *err)
{
	return inv_fields_from_json(&inv_schema_host_facts, doc, inv, err);
}

int inventory_load(struct inventory *inv, const char *path, struct strbuf *err)
{
	json_t *doc;
	int r = json_load_path(path, &doc, err);

	if (r < 0)
		return r;
	r = inventory_from_json(inv, doc, err);
	if (r < 0 && !streq(path, "-")) {
		/* Name the file in front of the field path. */
		struct strbuf msg = STRBUF_INIT;
		strbuf_addstr_printable(&msg, path);
		strbuf_addf(&msg, ": %s", err->buf);
		strbuf_reset(err);
		strbuf_addstr(err, msg.buf);
		strbuf_release(&msg);
	}
	json_decref(doc);
	return r;
}
