/*
 * fuzz-inventory-json - the loader behind 'sparkctl topo --from'.
 *
 * The input is parsed and read as an inventory.  When that succeeds, the
 * inventory's JSON (stored and derived facts) must load again and write
 * the identical text: inventory_json.h promises
 * to_json(from_json(to_json(x))) == to_json(x), and 'topo --from' relies
 * on it.  The GID NCCL would pick under the environment the inventory
 * records is computed too, as a consumer of a loaded inventory would.
 */
#include "sparkctl.h"

#include "fuzz.h"
#include "inventory/derive.h"
#include "inventory/inventory.h"
#include "inventory/inventory_json.h"
#include "lib/json.h"
#include "lib/strbuf.h"

/* Load text into inv; 0 on success.  On failure inv is left empty. */
static int load(const char *text, size_t len, struct inventory *inv, struct strbuf *err)
{
	json_t *doc = NULL;
	int r = json_load_buffer(text, len, "fuzz", &doc, err);

	if (r == 0)
		r = inventory_from_json(inv, doc, err);
	json_decref(doc);
	return r;
}

static void to_text(const struct inventory *inv, struct strbuf *out)
{
	json_t *j = inventory_to_json(inv);

	json_to_strbuf(j, out);
	json_decref(j);
}

static void pick_gids(const struct inventory *inv)
{
	struct nccl_gid_params params;

	nccl_gid_params_from_inventory(&params, inv);
	for (size_t i = 0; i < inv->nr_rdma; i++) {
		const struct inv_rdma_dev *d = &inv->rdma[i];
		for (size_t j = 0; j < d->nr_ports; j++) {
			int pick = nccl_gid_pick(&d->ports[j], &params);
			FUZZ_CHECK(pick >= -1);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf err = STRBUF_INIT, first = STRBUF_INIT, second = STRBUF_INIT;
	struct inventory inv, again;

	inventory_init(&inv);
	inventory_init(&again);
	if (load((const char *)data, size, &inv, &err) < 0)
		goto out;
	pick_gids(&inv);
	to_text(&inv, &first);
	if (load(first.buf, first.len, &again, &err) < 0) {
		fprintf(stderr, "the written inventory does not load: %s\n%s", err.buf, first.buf);
		abort();
	}
	to_text(&again, &second);
	if (!streq(first.buf, second.buf)) {
		fprintf(stderr,
			"the round trip changed the inventory:\n--- first\n%s--- second\n%s",
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
