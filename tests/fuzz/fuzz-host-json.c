/*
 * fuzz-host-json - a capture's .sparkctl/host.json, as probe/host.c reads
 * it: json_load_buffer() then host_facts_from_json() into an inventory.
 *
 * When it loads, host_facts_to_json() of the result must load again and
 * write the identical text, so that a capture of a capture records the
 * same host facts.
 */
#include "sparkctl.h"

#include "fuzz.h"
#include "inventory/inventory.h"
#include "inventory/inventory_json.h"
#include "lib/json.h"
#include "lib/strbuf.h"

/* Read text into inv as probe_host_captured() does; 0 on success. */
static int load(const char *text, size_t len, struct inventory *inv, struct strbuf *err)
{
	json_t *doc = NULL;
	int r = json_load_buffer(text, len, "host.json", &doc, err);

	if (r == 0)
		r = host_facts_from_json(inv, doc, err);
	json_decref(doc);
	return r;
}

static void to_text(const struct inventory *inv, struct strbuf *out)
{
	json_t *j = host_facts_to_json(inv);

	json_to_strbuf(j, out);
	json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf err = STRBUF_INIT, first = STRBUF_INIT, second = STRBUF_INIT;
	struct inventory inv, again;

	/* A failed load may leave facts behind: the probe keeps them, so release both. */
	inventory_init(&inv);
	inventory_init(&again);
	if (load((const char *)data, size, &inv, &err) < 0)
		goto out;
	to_text(&inv, &first);
	if (load(first.buf, first.len, &again, &err) < 0) {
		fprintf(stderr, "the written host facts do not load: %s\n%s", err.buf, first.buf);
		abort();
	}
	to_text(&again, &second);
	if (!streq(first.buf, second.buf)) {
		fprintf(stderr,
			"the round trip changed the host facts:\n--- first\n%s--- second\n%s",
			first.buf, second.buf);
		abort();
	}
out:
	inventory_release(&inv);
	inventory_release(&again);
	strbuf_release(&err);
	strbuf_release(&first);
	strbuf_release(&second);
	return 0;
}
