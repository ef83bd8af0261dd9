/* Unit tests of view/status_view.c: the cluster's screen from the nodes' answers. */
#include "sparkctl.h"

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
	status_render(nodes, 3, 1000 + 7200, false, &out);
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
	json_t *doc = status_json(nodes, 3);
	assert_int_equal(json_array_size(json_object_get(doc, "nodes")), 3);
	assert_true(json_is_false(
		json_object_get(json_array_get(json_object_get(doc, "nodes"), 2), "reachable")));
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
