/* Unit tests of the inventory's JSON codec: identity on every fixture, schema errors. */
#include "sparkctl.h"

#include "test_util.h"

#include "inventory/inventory_json.h"
#include "lib/xalloc.h"

static const char *const fixtures[] = {
	"spark-1cable", "spark-2cable", "spark-ring", "spark-ofed", "spark-gid-drift", "ib-server",
};

static char *dump(const struct inventory *inv)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *j = inventory_to_json(inv);

	json_to_strbuf(j, &sb);
	json_decref(j);
	return strbuf_detach(&sb, NULL);
}

/* to_json(from_json(to_json(x))) == to_json(x) for every fixture. */
static void identity(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(fixtures); i++) {
		struct inventory a, b;
		struct strbuf err = STRBUF_INIT;
		json_t *doc;

		load_fixture(fixtures[i], &a);
		char *text = dump(&a);
		assert_int_equal(json_load_buffer(text, strlen(text), "x", &doc, &err), 0);
		inventory_init(&b);
		if (inventory_from_json(&b, doc, &err) < 0)
			fail_msg("%s: %s", fixtures[i], err.buf);
		char *again = dump(&b);
		assert_string_equal(text, again);
		assert_int_equal(a.nr_rdma, b.nr_rdma);
		assert_int_equal(a.gpu.nr_gpus, b.gpu.nr_gpus);
		free(text);
		free(again);
		json_decref(doc);
		inventory_release(&a);
		inventory_release(&b);
		strbuf_release(&err);
	}
}

/* Load text as an inventory; return the error message (empty on success). */
static char *load_error(const char *text)
{
	struct inventory inv;
	struct strbuf err = STRBUF_INIT;
	json_t *doc = NULL;

	inventory_init(&inv);
	if (json_load_buffer(text, strlen(text), "in.json", &doc, &err) == 0)
		inventory_from_json(&inv, doc, &err);
	json_decref(doc);
	inventory_release(&inv);
	return strbuf_detach(&err, NULL);
}

static void expect_error(const char *text, const char *message)
{
	char *err = load_error(text);

	if (!strstr(err, message))
		fail_msg("for %s\nexpected an error containing '%s', got '%s'", text, message, err);
	free(err);
}

static void schema_errors(void **state)
{
	(void)state;
	expect_error("{}", "schema_version: missing");
	expect_error("{\"schema_version\": 99}", "schema_version 99 is newer");
	expect_error("{\"schema_version\": \"1\"}", "schema_version: expected a non-negative");
	expect_error("{\"schema_version\": 1, \"rdma_devices\": {}}",
		     "rdma_devices: expected an array");
	expect_error("{\"schema_version\": 1, \"rdma_devices\": [{\"name\": 7}]}",
		     "rdma_devices[0].name: expected a string");
	expect_error("{\"schema_version\": 1, \"rdma_devices\": [{\"name\": \"d\", \"ports\": "
		     "[{\"port\": 1, \"gids\": [{\"index\": 0, \"gid\": \"nope\"}]}]}]}",
		     "rdma_devices[0].ports[0].gids[0].gid: expected a GID");
	expect_error("{\"schema_version\": 1, \"rdma_devices\": [{\"name\": \"d\", \"ports\": "
		     "[{\"port\": 0}]}]}",
		     "rdma_devices[0].ports[0].port: expected a port number");
	expect_error("{\"schema_version\": 1, \"netdevs\": [{\"name\": \"e\", \"ipv4\": "
		     "[{\"address\": \"300.1.1.1\", \"prefix_len\": 24}]}]}",
		     "netdevs[0].ipv4: expected entries");
	expect_error("{\"schema_version\": 1, \"system\": {\"modules\": {\"mlx5_ib\": \"yes\"}}}",
		     "system.modules.mlx5_ib: expected \"loaded\"");
	expect_error("{\"schema_version\": 1, \"system\": {\"limits\": {\"memlock_soft\": \"x\"}}}",
		     "system.limits.memlock_soft: expected a number of bytes");
	expect_error("{\"schema_version\": 1, \"gpu\": {\"devices\": [{\"index\": -1}]}}",
		     "gpu.devices[0].index: expected a non-negative integer");
	expect_error("{\"schema_version\": 1, \"gpu\": {\"nvml\": {\"available\": \"yes\"}}}",
		     "gpu.nvml.available: expected true, false or null");
	expect_error("[1, 2]", "expected a JSON object");
	expect_error("{\"schema_version\": 1,,}", "in.json:1:");
	expect_error("{\"schema_version\": 1, \"schema_version\": 1}", "duplicate");
}

static void minimal_document(void **state)
{
	char *err;

	(void)state;
	/* Every section is optional: an old or partial inventory still loads. */
	err = load_error("{\"schema_version\": 1}");
	assert_string_equal(err, "");
	free(err);
}

/* Unknown facts stay unknown through the round trip: null in, null out. */
static void unknown_values(void **state)
{
	struct inventory inv;
	struct strbuf err = STRBUF_INIT;
	const char *text = "{\"schema_version\": 1, \"netdevs\": [{\"name\": \"e\", \"mtu\": null, "
			   "\"carrier\": null}], \"system\": {\"limits\": {\"memlock_soft\": "
			   "\"unlimited\", \"memlock_hard\": 65536}}}";
	json_t *doc;

	(void)state;
	inventory_init(&inv);
	assert_int_equal(json_load_buffer(text, strlen(text), "x", &doc, &err), 0);
	assert_int_equal(inventory_from_json(&inv, doc, &err), 0);
	assert_int_equal(inv.netdevs[0].mtu, INV_UNKNOWN);
	assert_int_equal(inv.netdevs[0].carrier, TRI_UNKNOWN);
	assert_int_equal(inv.sys.memlock_soft, INV_UNLIMITED);
	assert_int_equal(inv.sys.memlock_hard, 65536);
	char *out = dump(&inv);
	assert_non_null(strstr(out, "\"memlock_soft\": \"unlimited\""));
	assert_non_null(strstr(out, "\"mtu\": null"));
	free(out);
	json_decref(doc);
	inventory_release(&inv);
	strbuf_release(&err);
}

/*
 * Version 2 renamed keys to carry their units (docs/json.md): a saved
 * version 1 inventory reads as it did, and is written in version 2's keys.
 */
static void version_1_keys(void **state)
{
	struct inventory inv;
	struct strbuf err = STRBUF_INIT;
	const char *v1 = "{\"schema_version\": 1, \"netdevs\": [{\"name\": \"e\", "
			 "\"speed_mbps\": 200000}, {\"name\": \"f\", \"speed_mbps\": null}], "
			 "\"system\": {\"memory\": {\"mem_total_bytes\": 1024, "
			 "\"mem_available_bytes\": 512}}}";
	const char *v2 = "{\"schema_version\": 2, \"netdevs\": [{\"name\": \"e\", "
			 "\"speed_gbps\": 2.5}]}";
	json_t *doc;

	(void)state;
	inventory_init(&inv);
	assert_int_equal(json_load_buffer(v1, strlen(v1), "v1", &doc, &err), 0);
	assert_int_equal(inventory_from_json(&inv, doc, &err), 0);
	assert_int_equal(inv.netdevs[0].speed_mbps, 200000);
	assert_int_equal(inv.netdevs[1].speed_mbps, INV_UNKNOWN);
	assert_int_equal(inv.sys.mem_total, 1024);
	assert_int_equal(inv.sys.mem_available, 512);
	char *out = dump(&inv);
	assert_non_null(strstr(out, "\"schema_version\": 2"));
	assert_non_null(strstr(out, "\"speed_gbps\": 200.0"));
	assert_non_null(strstr(out, "\"memory_total_bytes\": 1024"));
	assert_null(strstr(out, "speed_mbps"));
	assert_null(strstr(out, "mem_total_bytes"));
	free(out);
	json_decref(doc);
	inventory_release(&inv);

	inventory_init(&inv);
	assert_int_equal(json_load_buffer(v2, strlen(v2), "v2", &doc, &err), 0);
	assert_int_equal(inventory_from_json(&inv, doc, &err), 0);
	assert_int_equal(inv.netdevs[0].speed_mbps, 2500);
	json_decref(doc);
	inventory_release(&inv);
	char *bad = load_error("{\"schema_version\": 2, \"netdevs\": [{\"name\": \"e\", "
			       "\"speed_gbps\": \"fast\"}]}");
	assert_string_equal(
		bad, "netdevs[0].speed_gbps: expected a non-negative number of Gb/s or null");
	free(bad);
	strbuf_release(&err);
}

static void host_facts(void **state)
{
	struct inventory a, b;
	struct strbuf err = STRBUF_INIT;

	(void)state;
	load_fixture("ib-server", &a);
	json_t *j = host_facts_to_json(&a);
	inventory_init(&b);
	assert_int_equal(host_facts_from_json(&b, j, &err), 0);
	assert_string_equal(b.sys.arch, "x86_64");
	assert_int_equal(b.gpu.nr_gpus, 8);
	assert_int_equal(b.sys.nccl_version_code, 22105);
	assert_string_equal(b.gpu.gpus[7].pci_bus_id, "00000000:DB:00.0");
	json_decref(j);
	inventory_release(&a);
	inventory_release(&b);
	strbuf_release(&err);
}

/*
 * host.json that fails to load: the probe keeps what was read before the
 * fault; a map entry that is bad is not added, and what an entry did not
 * get to read stays unknown.
 */
static void host_facts_partial(void **state)
{
	struct inventory inv;
	struct strbuf err = STRBUF_INIT;
	const char *env = "{\"environment\": {\"NCCL_A\": \"1\", \"NCCL_B\": 2}}";
	const char *gpu = "{\"gpu\": {\"devices\": [{\"index\": 3, \"name\": 5}]}}";
	json_t *doc;

	(void)state;
	inventory_init(&inv);
	assert_int_equal(json_load_buffer(env, strlen(env), "x", &doc, &err), 0);
	assert_int_equal(host_facts_from_json(&inv, doc, &err), -EINVAL);
	assert_string_equal(err.buf, "environment.NCCL_B: expected a string");
	assert_int_equal(inv.sys.nr_environment, 1);
	assert_string_equal(inv.sys.environment[0].value, "1");
	json_decref(doc);
	strbuf_reset(&err);
	assert_int_equal(json_load_buffer(gpu, strlen(gpu), "x", &doc, &err), 0);
	assert_int_equal(host_facts_from_json(&inv, doc, &err), -EINVAL);
	assert_string_equal(err.buf, "gpu.devices[0].name: expected a string");
	assert_int_equal(inv.gpu.nr_gpus, 1);
	assert_int_equal(inv.gpu.gpus[0].index, 3);
	assert_int_equal(inv.gpu.gpus[0].memory_total_bytes, INV_UNKNOWN);
	assert_int_equal(inv.gpu.gpus[0].unified_memory, TRI_UNKNOWN);
	assert_int_equal(inv.gpu.gpus[0].cc_major, -1);
	json_decref(doc);
	inventory_release(&inv);
	strbuf_release(&err);
}

/* Invalid UTF-8 in a probed string is written as U+FFFD, never as invalid JSON. */
static void invalid_utf8(void **state)
{
	struct inventory inv;

	(void)state;
	inventory_init(&inv);
	inv.sys.hostname = xstrdup("bad\xff\xfe-host\xc3");
	char *out = dump(&inv);
	assert_non_null(
		strstr(out, "\"hostname\": \"bad\xef\xbf\xbd\xef\xbf\xbd-host\xef\xbf\xbd\""));
	free(out);
	inventory_release(&inv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(identity),	      cmocka_unit_test(schema_errors),
		cmocka_unit_test(minimal_document),   cmocka_unit_test(unknown_values),
		cmocka_unit_test(version_1_keys),     cmocka_unit_test(host_facts),
		cmocka_unit_test(host_facts_partial), cmocka_unit_test(invalid_utf8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
