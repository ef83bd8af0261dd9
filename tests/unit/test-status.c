/* Unit tests of view/status_view.c: the cluster's screen from the nodes' answers. */
#include "sparkctl.h"

#include <math.h>

#include "test_util.h"

#include "view/status_view.h"

static json_t *load(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);
	if (!j)
		fail_msg("bad test JSON: %s", e.text);
	return j;
}

/* The view in one mode: text into out, or the JSON document (returned). */
static json_t *emit_status(const struct status_node *nodes, size_t n, int64_t now, bool json,
			   struct strbuf *out)
{
	struct emitter e;
	json_t *doc;

	emit_init(&e, json ? EMIT_JSON : EMIT_TEXT, out, false);
	status_emit(nodes, n, now, &e);
	doc = emit_document(&e);
	emit_release(&e);
	return doc;
}

static void render(void **state)
{
	struct status_node nodes[3] = {
		{ .host = "spark1",
		  .doc = load(
			  "{\"gpus\": [{\"name\": \"NVIDIA GB10\", \"temperature_celsius\": 45.0,"
			  " \"utilization_ratio\": 0.37, \"power_watts\": 11.25}],"
			  " \"ports\": [{\"fabric\": true, \"state\": \"ACTIVE\", \"rate_gbps\": "
			  "200.0,"
			  " \"mtu\": 9000}, {\"fabric\": true, \"state\": \"ACTIVE\","
			  " \"rate_gbps\": 200.0, \"mtu\": 1500}, {\"fabric\": false,"
			  " \"state\": \"DOWN\", \"rate_gbps\": 40.0, \"mtu\": 1500}],"
			  " \"doctor\": {\"time\": 1000, \"summary\": {\"fail\": 2, \"warn\": "
			  "1}}}") },
		{ .host = "spark2",
		  .doc = load("{\"gpus\": [{\"name\": \"NVIDIA H100\", \"temperature_celsius\": 40,"
			      " \"utilization_ratio\": 0.5, \"power_watts\": 300}, {\"name\": "
			      "\"NVIDIA H100\","
			      " \"temperature_celsius\": 61, \"utilization_ratio\": 0.7,"
			      " \"power_watts\": null}], \"gpu_error\": null, \"ports\": [],"
			      " \"doctor\": null}") },
		{ .host = "spark3",
		  .error = (char *)"ssh: connect to host spark3 port 22: No route" },
	};
	struct strbuf out = STRBUF_INIT;

	(void)state;
	emit_status(nodes, 3, 1000 + 7200, false, &out);
	assert_string_equal(out.buf,
			    "NODE    STATE  GPU       TEMP  UTIL  POWER  FABRIC"
			    "                     DOCTOR\n"
			    "spark1  up     GB10      45 C   37%   11 W  2 up, 200G, MTU 9000/1500"
			    "  2 fail, 1 warn (2h ago)\n"
			    "spark2  up     2 x H100  61 C   60%  300 W  none up"
			    "                    never run\n"
			    "spark3  down   -            -     -      -  -"
			    "                          -\n"
			    "spark3: unreachable: ssh: connect to host spark3 port 22: No route\n");
	json_t *doc = emit_status(nodes, 3, 1000 + 7200, true, NULL);
	const json_t *arr = json_object_get(doc, "nodes");
	assert_int_equal(json_array_size(arr), 3);
	assert_true(json_is_false(json_object_get(json_array_get(arr, 2), "reachable")));
	/* Every figure of the text is in the JSON, beside the node's answer. */
	const json_t *s1 = json_object_get(json_array_get(arr, 0), "summary");
	const json_t *s2 = json_object_get(json_array_get(arr, 1), "summary");
	assert_true(json_object_get(json_array_get(arr, 0), "status") == nodes[0].doc);
	assert_string_equal(json_string_value(json_object_get(s1, "gpu_name")), "GB10");
	assert_int_equal(json_integer_value(json_object_get(s2, "gpus")), 2);
	assert_true(json_real_value(json_object_get(s2, "temperature_max_celsius")) == 61.0);
	assert_true(fabs(json_real_value(json_object_get(s2, "utilization_mean_ratio")) - 0.6) <
		    1e-9);
	assert_true(json_real_value(json_object_get(s2, "power_total_watts")) == 300.0);
	assert_int_equal(json_integer_value(json_object_get(s1, "fabric_ports_up")), 2);
	assert_int_equal(json_array_size(json_object_get(s1, "fabric_mtus")), 2);
	assert_int_equal(json_integer_value(json_object_get(s1, "doctor_fail")), 2);
	assert_int_equal(json_integer_value(json_object_get(s1, "doctor_age_seconds")), 7200);
	assert_true(json_is_null(json_object_get(s2, "doctor_fail")));
	json_decref(doc);
	strbuf_release(&out);
	json_decref(nodes[0].doc);
	json_decref(nodes[1].doc);
}

static void ages(void **state)
{
	char buf[24];

	(void)state;
	status_age(-5, buf);
	assert_string_equal(buf, "0s");
	status_age(119, buf);
	assert_string_equal(buf, "119s");
	status_age(120, buf);
	assert_string_equal(buf, "2m");
	status_age(7199, buf);
	assert_string_equal(buf, "119m");
	status_age(7200, buf);
	assert_string_equal(buf, "2h");
	status_age(3 * 86400, buf);
	assert_string_equal(buf, "3d");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(render),
		cmocka_unit_test(ages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
