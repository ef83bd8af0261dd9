/*
 * Unit tests of 'sparkctl top': the sample (collected on a fixture, read
 * back, and what a node may send that is not one), the model
 * (rates from counter deltas, resets, flags, unified memory) and the
 * layout, on exact text.
 */
#include "sparkctl.h"

#include <math.h>

#include "test_util.h"

#include "lib/json.h"
#include "lib/rootfs.h"
#include "lib/xalloc.h"
#include "top/model.h"
#include "top/sample.h"
#include "view/top_view.h"

/* The sample in text (JSON, as 'agent status' prints it) into s. */
static void parse_ok(const char *text, struct top_sample *s)
{
	struct strbuf err = STRBUF_INIT;
	json_t *doc = NULL;

	if (json_load_buffer(text, strlen(text), "sample", &doc, &err) < 0 ||
	    top_sample_parse(doc, s, &err) < 0)
		fail_msg("parse failed: %s", err.buf);
	json_decref(doc);
	strbuf_release(&err);
}

/* A sample that is JSON but not a usable one: -EINVAL and why, by key. */
static void parse_bad(const char *text, const char *why)
{
	struct top_sample s;
	struct strbuf err = STRBUF_INIT;
	json_t *doc = NULL;

	if (json_load_buffer(text, strlen(text), "sample", &doc, &err) < 0)
		fail_msg("not JSON: %s", err.buf);
	assert_int_equal(top_sample_parse(doc, &s, &err), -EINVAL);
	assert_string_equal(err.buf, why);
	assert_int_equal(s.nr_ports, 0);
	assert_int_equal(s.nr_gpus, 0);
	json_decref(doc);
	strbuf_release(&err);
}

#define EMPTY "\"gpus\":[],\"ports\":[],\"netdevs\":[]"

#define PORT(dev, netdev, rate, counters)                                                          \
	"{\"rdma_device\":\"" dev "\",\"port\":1,\"netdev\":\"" netdev "\",\"state\":\"ACTIVE\","  \
	"\"rate_gbps\":" rate ",\"counters\":{" counters "}}"

/* What top_sample_collect() writes, top_sample_parse() reads: a captured Spark. */
static void sample_round_trip(void **state ATTR_UNUSED)
{
	struct rootfs root = { .dirfd = -1 };
	struct top_sample_source src = { .root = &root };
	struct top_sample s;
	struct strbuf err = STRBUF_INIT;
	json_t *doc;

	assert_int_equal(rootfs_open(&root, FIXTURES_DIR "/spark-1cable"), 0);
	doc = top_sample_collect(&src);
	assert_int_equal(top_sample_parse(doc, &s, &err), 0);
	assert_int_equal(s.gpu_state, TOP_GPU_NO_NVML);
	assert_true(s.has_mem && s.mem_total == 131415797760ULL);
	/* four RDMA ports, then every netdev (lo too: the model leaves it out) */
	assert_true(s.nr_ports > 4);
	assert_true(s.ports[0].rdma && !s.ports[4].rdma);
	assert_string_equal(s.ports[0].name, "roceP2p1s0f0/1");
	assert_true(s.ports[1].line_gbps == 200);
	/* the data counters count 4-byte words: bytes here */
	const struct top_counter *c =
		top_sample_counter(&s.ports[3], "port_data_transmitted_bytes");
	assert_non_null(c);
	assert_true(c->value % 4 == 0);
	assert_non_null(top_sample_counter(&s.ports[3], "out_of_sequence_packets_received"));
	top_sample_release(&s);
	json_decref(doc);
	src.gpu_disabled = true;
	doc = top_sample_collect(&src);
	assert_string_equal(json_string_value(json_object_get(doc, "gpu_state")), "off");
	json_decref(doc);
	rootfs_close(&root);
	strbuf_release(&err);
}

static void sample_forms(void **state ATTR_UNUSED)
{
	struct top_sample s;

	/* unknown keys are left alone; absent or null figures are unknown */
	parse_ok("{\"gpu_state\":\"ok\",\"hostname\":\"x\",\"doctor\":{\"a\":[1]},"
		 "\"gpus\":[{\"index\":3,\"name\":null,\"utilization_ratio\":null}],"
		 "\"memory_total_bytes\":100,\"memory_available_bytes\":200,"
		 "\"ports\":[{\"rdma_device\":\"mlx5_0\",\"port\":1,\"counters\":{}}],"
		 "\"netdevs\":[{\"name\":\"eth0\",\"speed_gbps\":25,\"counters\":{\"x\":0}}]}",
		 &s);
	assert_int_equal(s.nr_gpus, 1);
	assert_int_equal(s.gpus[0].index, 3);
	assert_null(s.gpus[0].name);
	assert_false(s.gpus[0].has_util || s.gpus[0].has_mem_used || s.gpus[0].unified_memory);
	/* available beyond the total: no memory figure rather than a wrong one */
	assert_false(s.has_mem);
	assert_string_equal(s.ports[0].name, "mlx5_0/1");
	assert_null(s.ports[0].netdev);
	assert_true(s.ports[0].line_gbps == 0);
	assert_string_equal(s.ports[1].name, "eth0");
	assert_true(s.ports[1].line_gbps == 25);
	assert_true(top_sample_counter(&s.ports[1], "x")->value == 0);
	assert_null(top_sample_counter(&s.ports[1], "y"));
	top_sample_release(&s);
}

/* What a node may send that is not a sample: an error by key, never a crash. */
static void sample_errors(void **state ATTR_UNUSED)
{
	struct top_sample s;
	struct strbuf err = STRBUF_INIT;
	json_t *arr = json_array();
	assert_int_equal(top_sample_parse(arr, &s, &err), -EINVAL);
	assert_string_equal(err.buf, "not a JSON object");
	json_decref(arr);
	strbuf_release(&err);
	parse_bad("{" EMPTY "}", "gpu_state: expected \"ok\", \"no_nvml\" or \"off\"");
	parse_bad("{\"gpu_state\":\"on\"," EMPTY "}",
		  "gpu_state: expected \"ok\", \"no_nvml\" or \"off\"");
	parse_bad("{\"gpu_state\":\"ok\",\"ports\":[],\"netdevs\":[]}", "gpus: missing");
	parse_bad("{\"gpu_state\":\"ok\",\"gpus\":{},\"ports\":[],\"netdevs\":[]}",
		  "gpus: expected an array");
	parse_bad("{\"gpu_state\":\"ok\",\"gpus\":[7],\"ports\":[],\"netdevs\":[]}",
		  "gpus[0]: expected an object");
	parse_bad("{\"gpu_state\":\"ok\",\"gpus\":[{\"index\":\"0\"}],\"ports\":[],\"netdevs\":[]}",
		  "gpus[0].index: expected an integer from 0 to 65535");
	parse_bad("{\"gpu_state\":\"ok\",\"gpus\":[{\"index\":-1}],\"ports\":[],\"netdevs\":[]}",
		  "gpus[0].index: expected an integer from 0 to 65535");
	parse_bad("{\"gpu_state\":\"ok\",\"gpus\":[{\"index\":0},{\"index\":1,"
		  "\"utilization_ratio\":37}],\"ports\":[],\"netdevs\":[]}",
		  "gpus[1].utilization_ratio: out of range");
	parse_bad("{\"gpu_state\":\"ok\",\"gpus\":[{\"index\":0,\"power_watts\":\"9\"}],"
		  "\"ports\":[],\"netdevs\":[]}",
		  "gpus[0].power_watts: expected a number or null");
	parse_bad("{\"gpu_state\":\"ok\",\"gpus\":[{\"index\":0,\"memory_used_bytes\":1.5}],"
		  "\"ports\":[],\"netdevs\":[]}",
		  "gpus[0].memory_used_bytes: expected a non-negative integer or null");
	parse_bad("{\"gpu_state\":\"ok\",\"gpus\":[{\"index\":0,\"unified_memory\":1}],"
		  "\"ports\":[],\"netdevs\":[]}",
		  "gpus[0].unified_memory: expected true or false");
	parse_bad("{\"gpu_state\":\"off\",\"gpus\":[],\"memory_total_bytes\":-1,\"ports\":[],"
		  "\"netdevs\":[]}",
		  "memory_total_bytes: expected a non-negative integer or null");
	parse_bad("{\"gpu_state\":\"off\",\"gpus\":[],\"ports\":[{\"port\":1,\"counters\":{}}],"
		  "\"netdevs\":[]}",
		  "ports[0].rdma_device: missing");
	parse_bad("{\"gpu_state\":\"off\",\"gpus\":[],\"ports\":[{\"rdma_device\":\"d\","
		  "\"port\":70000,\"counters\":{}}],\"netdevs\":[]}",
		  "ports[0].port: expected an integer from 0 to 65535");
	parse_bad("{\"gpu_state\":\"off\",\"gpus\":[],\"ports\":[{\"rdma_device\":\"d\","
		  "\"port\":1}],\"netdevs\":[]}",
		  "ports[0].counters: expected an object");
	/* the sender's counter name is not repeated: it may be anything */
	parse_bad("{\"gpu_state\":\"off\",\"gpus\":[],\"ports\":[],\"netdevs\":[{\"name\":\"e\","
		  "\"counters\":{\"\\u001b[2J\":\"1\"}}]}",
		  "netdevs[0].counters: a value that is not a count");
	parse_bad("{\"gpu_state\":\"off\",\"gpus\":[],\"ports\":[],\"netdevs\":[{\"name\":\"e\","
		  "\"speed_gbps\":-1,\"counters\":{}}]}",
		  "netdevs[0].speed_gbps: out of range");
	parse_bad("{\"gpu_state\":\"off\",\"gpus\":[],\"ports\":[],\"netdevs\":[{\"name\":5,"
		  "\"counters\":{}}]}",
		  "netdevs[0].name: expected a string or null");
	parse_bad("{\"gpu_state\":\"off\",\"gpus\":[],\"ports\":[]}", "netdevs: missing");
	/* one name, two sets of counters: no rate could say which */
	parse_bad("{\"gpu_state\":\"off\",\"gpus\":[],\"ports\":[" PORT("d", "n", "1", "") "," PORT(
			  "d", "m", "2", "") "],\"netdevs\":[]}",
		  "ports[1]: a second port of that device and number");
	parse_bad("{\"gpu_state\":\"off\",\"gpus\":[],\"ports\":[],\"netdevs\":["
		  "{\"name\":\"e\",\"counters\":{}},{\"name\":\"e\",\"counters\":{}}]}",
		  "netdevs[1]: a second netdev of that name");
	/* a netdev may have an RDMA port's name: they are apart */
	struct top_sample two;
	parse_ok("{\"gpu_state\":\"off\",\"gpus\":[],\"ports\":[" PORT(
			 "d", "n", "1", "") "],\"netdevs\":[{\"name\":\"d/1\",\"counters\":{}}]}",
		 &two);
	assert_int_equal(two.nr_ports, 2);
	top_sample_release(&two);
	struct strbuf many = STRBUF_INIT;
	strbuf_addstr(&many, "{\"gpu_state\":\"ok\",\"gpus\":[");
	for (int i = 0; i <= TOP_SAMPLE_MAX_GPUS; i++)
		strbuf_addf(&many, "%s{\"index\":%d}", i ? "," : "", i);
	strbuf_addstr(&many, "],\"ports\":[],\"netdevs\":[]}");
	parse_bad(many.buf, "gpus: more than 256");
	strbuf_release(&many);
}

/* A DGX Spark's sample: two RDMA ports, a Wi-Fi netdev, lo, a netdev of an RDMA port. */
static void spark_sample(struct top_sample *s, uint64_t tx, uint64_t rx, uint64_t oos, uint64_t cnp,
			 uint64_t wifi_rx, uint64_t wifi_errs, uint64_t pkts)
{
	char *text = xasprintf(
		"{\"gpu_state\":\"ok\","
		"\"gpus\":[{\"index\":0,\"name\":\"NVIDIA GB10\",\"utilization_ratio\":0.37,"
		"\"power_watts\":11.25,\"temperature_celsius\":45,\"memory_used_bytes\":null,"
		"\"memory_total_bytes\":null,\"unified_memory\":true}],"
		"\"memory_total_bytes\":137438953472,\"memory_available_bytes\":103079215104,"
		"\"ports\":[" PORT(
			"rocep1s0f1", "enp1s0f1np1", "200",
			"\"port_data_transmitted_bytes\":%" PRIu64 ","
			"\"port_data_received_bytes\":%" PRIu64 ","
			"\"port_packets_transmitted\":%" PRIu64 ","
			"\"out_of_sequence_packets_received\":%" PRIu64 ","
			"\"np_cnp_packets_sent\":%" PRIu64) "," PORT("roceP2p1s0f1",
								     "enP2p1s0f1np1", "null",
								     "\"port_data_"
								     "transmitted_"
								     "bytes\":0,"
								     "\"port_data_"
								     "received_"
								     "bytes\":0") "],"
										  "\"netdevs\":[{"
										  "\"name\":\"lo\","
										  "\"counters\":{"
										  "\"receive_"
										  "bytes\":5}},"
										  "{\"name\":"
										  "\"enp1s0f1np1\","
										  "\"state\":"
										  "\"up\","
										  "\"counters\":{"
										  "\"receive_"
										  "bytes\":5}},"
										  "{\"name\":"
										  "\"enP7s7\","
										  "\"state\":"
										  "\"up\","
										  "\"counters\":{"
										  "\"receive_"
										  "bytes\":%" PRIu64
										  ","
										  "\"transmit_"
										  "bytes\":0,"
										  "\"receive_"
										  "errs\":%" PRIu64
										  "}}]}",
		tx, rx, pkts, oos, cnp, wifi_rx, wifi_errs);
	parse_ok(text, s);
	free(text);
}

static void model_rates_and_flags(void **state ATTR_UNUSED)
{
	struct top_sample a, b, c;
	struct top_model m = TOP_MODEL_INIT;

	spark_sample(&a, 1000, 2000, 5, 0, 0, 0, 10);
	top_model_update(&m, NULL, &a, 0);
	assert_int_equal(m.nr_ports, 3);
	assert_false(m.ports[0].has_rate);
	assert_int_equal(m.ports[0].hist_nr, 1);
	assert_true(m.ports[0].hist[0] < 0);

	/* 2 s later: 25 GB more sent (100 Gb/s), 12.5 GB received (50 Gb/s) */
	spark_sample(&b, 1000 + 25000000000ULL, 2000 + 12500000000ULL, 8, 2, 250000000, 1, 99);
	top_model_update(&m, &a, &b, 2);
	assert_int_equal(m.gpu_state, TOP_GPU_OK);
	assert_int_equal(m.nr_gpus, 1);
	assert_string_equal(m.gpus[0].name, "NVIDIA GB10");
	assert_true(m.gpus[0].has_util && m.gpus[0].util == 0.37);
	assert_true(m.gpus[0].power_w == 11.25 && m.gpus[0].temp_c == 45);
	/* unified memory: the system's, MemTotal - MemAvailable */
	assert_true(m.gpus[0].has_mem && m.gpus[0].unified_memory);
	assert_true(m.gpus[0].mem_total == 137438953472ULL);
	assert_true(m.gpus[0].mem_used == 137438953472ULL - 103079215104ULL);

	/* RDMA ports by name (sorted), then the netdevs that are no RDMA port's, not lo */
	assert_string_equal(m.ports[0].name, "roceP2p1s0f1/1");
	assert_string_equal(m.ports[1].name, "rocep1s0f1/1");
	assert_string_equal(m.ports[1].netdev, "enp1s0f1np1");
	assert_string_equal(m.ports[2].name, "enP7s7");
	assert_false(m.ports[2].rdma);

	const struct top_port *p = &m.ports[1];
	assert_true(p->has_rate);
	assert_true(p->tx_gbps == 100 && p->rx_gbps == 50);
	assert_true(p->line_gbps == 200);
	/* packets moved: no flag; loss and congestion did, named */
	assert_int_equal(p->nr_flags, 2);
	assert_string_equal(p->flags[0].counter, "out_of_sequence_packets_received");
	assert_true(p->flags[0].increase == 3);
	assert_string_equal(p->flags[1].counter, "np_cnp_packets_sent");
	assert_true(p->flags[1].increase == 2);
	assert_int_equal(p->hist_nr, 2);
	assert_true(p->hist[1] == 100);
	assert_int_equal(m.ports[0].nr_flags, 0);
	assert_true(m.ports[2].rx_gbps == 1 && m.ports[2].tx_gbps == 0);
	assert_int_equal(m.ports[2].nr_flags, 1);
	assert_string_equal(m.ports[2].flags[0].counter, "receive_errs");
	assert_string_equal(m.ports[2].state, "up");

	/* Counters that went down (a reset, a 32-bit wrap): no rate, no flag, never negative. */
	spark_sample(&c, 10, 20, 1, 0, 0, 0, 1);
	top_model_update(&m, &b, &c, 1);
	p = &m.ports[1];
	assert_false(p->has_rate);
	assert_int_equal(p->nr_flags, 0);
	assert_int_equal(p->hist_nr, 3);
	assert_true(p->hist[2] < 0);

	top_model_release(&m);
	top_sample_release(&a);
	top_sample_release(&b);
	top_sample_release(&c);
}

static void model_history_bounded(void **state ATTR_UNUSED)
{
	struct top_sample a;
	struct top_model m = TOP_MODEL_INIT;

	spark_sample(&a, 1, 1, 0, 0, 0, 0, 0);
	for (int i = 0; i < TOP_HISTORY + 10; i++)
		top_model_update(&m, &a, &a, 1);
	assert_int_equal(m.ports[0].hist_nr, TOP_HISTORY);
	assert_true(m.ports[0].hist[TOP_HISTORY - 1] == 0);
	top_model_release(&m);
	top_sample_release(&a);
}

static void model_no_gpu(void **state ATTR_UNUSED)
{
	struct top_sample a;
	struct top_model m = TOP_MODEL_INIT;

	/* NVML not loaded; memory_type unknown: no GPU, no made-up memory */
	parse_ok("{\"gpu_state\":\"no_nvml\"," EMPTY "}", &a);
	top_model_update(&m, NULL, &a, 0);
	assert_int_equal(m.gpu_state, TOP_GPU_NO_NVML);
	assert_int_equal(m.nr_gpus, 0);
	assert_int_equal(m.nr_ports, 0);
	top_sample_release(&a);
	parse_ok("{\"gpu_state\":\"ok\",\"gpus\":[{\"index\":0,\"name\":\"X\"}],"
		 "\"memory_total_bytes\":100,\"memory_available_bytes\":50,"
		 "\"ports\":[],\"netdevs\":[]}",
		 &a);
	top_model_update(&m, NULL, &a, 0);
	assert_false(m.gpus[0].has_mem);
	assert_false(m.gpus[0].has_util);
	top_sample_release(&a);
	top_model_release(&m);
}

static void graph(void **state ATTR_UNUSED)
{
	struct top_port p = { .line_gbps = 200 };
	struct strbuf out = STRBUF_INIT;
	const double h[] = { -1, 0, 0.1, 25, 50, 100, 150, 175, 200, 400 };

	memcpy(p.hist, h, sizeof(h));
	p.hist_nr = ARRAY_SIZE(h);
	top_view_graph(&p, 12, &out);
	assert_string_equal(out.buf, "   .::-+#%@@");
	strbuf_reset(&out);
	top_view_graph(&p, 4, &out);
	assert_string_equal(out.buf, "#%@@");
	strbuf_reset(&out);
	/* no line rate: the highest figure shown is the top */
	p.line_gbps = 0;
	top_view_graph(&p, 3, &out);
	assert_string_equal(out.buf, "++@");
	strbuf_release(&out);
}

/* Compare, showing the whole text when it differs. */
static void same_text(const char *got, const char *want)
{
	if (strcmp(got, want) != 0) {
		fprintf(stderr, "--- got:\n%s--- want:\n%s---\n", got, want);
		fail_msg("the layout differs");
	}
}

struct spark_fixture {
	struct top_sample a, b, c;
	struct top_model m;
};

static void spark_model(struct spark_fixture *f)
{
	memset(f, 0, sizeof(*f));
	spark_sample(&f->a, 0, 0, 5, 0, 0, 0, 0);
	spark_sample(&f->b, 12500000000ULL, 2500000000ULL, 5, 0, 0, 0, 0);
	spark_sample(&f->c, 25000000000ULL, 7500000000ULL, 8, 2, 125000000, 1, 0);
	top_model_update(&f->m, NULL, &f->a, 0);
	top_model_update(&f->m, &f->a, &f->b, 1);
	top_model_update(&f->m, &f->b, &f->c, 1);
}

static void spark_release(struct spark_fixture *f)
{
	top_model_release(&f->m);
	top_sample_release(&f->a);
	top_sample_release(&f->b);
	top_sample_release(&f->c);
}

static void layout_spark(void **state ATTR_UNUSED)
{
	struct spark_fixture f;
	struct strbuf out = STRBUF_INIT;
	struct top_view_node n = { "spark1", NULL, NULL };
	struct top_view_opts o = { .width = 0, .interval = 1 };

	spark_model(&f);
	n.model = &f.m;
	top_view_render(&n, 1, &o, &out);
	same_text(out.buf,
		  "sparkctl top  spark1  every 1.0 s  sort name\n"
		  "\n"
		  "[spark1]  memory 32.0/128.0 GiB used, 96.0 GiB available\n"
		  "GPU NAME        UTIL   POWER  TEMP  MEMORY\n"
		  "  0 NVIDIA GB10  37%  11.2 W  45 C  32.0/128.0 GiB unified\n"
		  "PORT           NETDEV        STATE  TX Gb/s RX Gb/s HISTORY          FLAGS\n"
		  "roceP2p1s0f1/1 enP2p1s0f1np1 ACTIVE    0.00    0.00               ..\n"
		  "rocep1s0f1/1   enp1s0f1np1   ACTIVE  100.00   40.00               ++ "
		  "out_of_sequence_packets_received +3, np_cnp_packets_sent +2\n"
		  "enP7s7         -             up        0.00    1.00               .@ "
		  "receive_errs +1\n");
	strbuf_reset(&out);

	o.width = 80;
	o.height = 24;
	o.keys = true;
	o.paused = true;
	o.sort = TOP_SORT_TRAFFIC;
	top_view_render(&n, 1, &o, &out);
	same_text(out.buf,
		  "sparkctl top  PAUSED  spark1  every 1.0 s  sort traffic\n"
		  "\n"
		  "[spark1]  memory 32.0/128.0 GiB used, 96.0 GiB available\n"
		  "GPU NAME        UTIL   POWER  TEMP  MEMORY\n"
		  "  0 NVIDIA GB10  37%  11.2 W  45 C  32.0/128.0 GiB unified\n"
		  "PORT           NETDEV        STATE  TX Gb/s RX Gb/s HISTORY          FLAGS\n"
		  "rocep1s0f1/1   enp1s0f1np1   ACTIVE  100.00   40.00               ++\n"
		  "  ! out_of_sequence_packets_received +3, np_cnp_packets_sent +2\n"
		  "enP7s7         -             up        0.00    1.00               .@\n"
		  "  ! receive_errs +1\n"
		  "roceP2p1s0f1/1 enP2p1s0f1np1 ACTIVE    0.00    0.00               ..\n"
		  "q quit  p pause  +/- interval  s sort\n");
	strbuf_reset(&out);

	/* narrow: no NETDEV column, no graph, lines cut */
	o.width = 50;
	o.height = 8;
	top_view_render(&n, 1, &o, &out);
	same_text(out.buf, "sparkctl top  PAUSED  spark1  every 1.0 s  sort tr\n"
			   "\n"
			   "[spark1]  memory 32.0/128.0 GiB used, 96.0 GiB ava\n"
			   "GPU NAME        UTIL   POWER  TEMP  MEMORY\n"
			   "  0 NVIDIA GB10  37%  11.2 W  45 C  32.0/128.0 GiB\n"
			   "PORT           STATE  TX Gb/s RX Gb/s FLAGS\n"
			   "... 5 more lines\n"
			   "q quit  p pause  +/- interval  s sort\n");
	strbuf_release(&out);
	spark_release(&f);
}

static void layout_h100x8(void **state ATTR_UNUSED)
{
	struct top_sample a, b;
	struct strbuf ta = STRBUF_INIT, tb = STRBUF_INIT, out = STRBUF_INIT;
	struct top_model m = TOP_MODEL_INIT;
	struct top_view_node n = { "dgx-h100", NULL, &m };
	struct top_view_opts o = { .width = 100, .interval = 2, .sort = TOP_SORT_UTIL };

	/* the same GPUs and ports in both; the counters of b moved */
	for (int k = 0; k < 2; k++) {
		struct strbuf *t = k ? &tb : &ta;
		strbuf_addstr(t, "{\"gpu_state\":\"ok\",\"gpus\":[");
		for (int i = 0; i < 8; i++)
			strbuf_addf(t,
				    "%s{\"index\":%d,\"name\":\"NVIDIA H100 80GB HBM3\","
				    "\"utilization_ratio\":0.%d,\"temperature_celsius\":%d,"
				    "\"memory_used_bytes\":%d000000000,"
				    "\"memory_total_bytes\":85520809984,\"unified_memory\":false}",
				    i ? "," : "", i, (i * 37) % 90 + 10, 30 + i, i + 1);
		strbuf_addstr(t, "],\"ports\":[");
		for (int i = 0; i < 8; i++)
			strbuf_addf(
				t,
				"%s{\"rdma_device\":\"mlx5_%d\",\"port\":1,\"state\":\"ACTIVE\","
				"\"rate_gbps\":400,\"counters\":{"
				"\"port_data_transmitted_bytes\":%d,"
				"\"port_data_received_bytes\":%d}}",
				i ? "," : "", i, k * i * 6250000, k * 50000000 * i);
		strbuf_addstr(t, "],\"netdevs\":[]}");
	}
	parse_ok(ta.buf, &a);
	parse_ok(tb.buf, &b);
	top_model_update(&m, NULL, &a, 0);
	top_model_update(&m, &a, &b, 2);
	top_view_render(&n, 1, &o, &out);
	same_text(out.buf,
		  "sparkctl top  dgx-h100  every 2.0 s  sort util\n"
		  "\n"
		  "[dgx-h100]\n"
		  "GPU NAME                  UTIL   POWER  TEMP  MEMORY\n"
		  "  7 NVIDIA H100 80GB HBM3  89%       -  37 C  7.5/79.6 GiB\n"
		  "  2 NVIDIA H100 80GB HBM3  84%       -  32 C  2.8/79.6 GiB\n"
		  "  4 NVIDIA H100 80GB HBM3  68%       -  34 C  4.7/79.6 GiB\n"
		  "  6 NVIDIA H100 80GB HBM3  52%       -  36 C  6.5/79.6 GiB\n"
		  "  1 NVIDIA H100 80GB HBM3  47%       -  31 C  1.9/79.6 GiB\n"
		  "  3 NVIDIA H100 80GB HBM3  31%       -  33 C  3.7/79.6 GiB\n"
		  "  5 NVIDIA H100 80GB HBM3  15%       -  35 C  5.6/79.6 GiB\n"
		  "  0 NVIDIA H100 80GB HBM3  10%       -  30 C  0.9/79.6 GiB\n"
		  "PORT     STATE  TX Gb/s RX Gb/s HISTORY                          FLAGS\n"
		  "mlx5_0/1 ACTIVE    0.00    0.00                                .\n"
		  "mlx5_1/1 ACTIVE    0.03    0.20                                :\n"
		  "mlx5_2/1 ACTIVE    0.05    0.40                                :\n"
		  "mlx5_3/1 ACTIVE    0.07    0.60                                :\n"
		  "mlx5_4/1 ACTIVE    0.10    0.80                                :\n"
		  "mlx5_5/1 ACTIVE    0.12    1.00                                :\n"
		  "mlx5_6/1 ACTIVE    0.15    1.20                                :\n"
		  "mlx5_7/1 ACTIVE    0.17    1.40                                :\n");
	top_model_release(&m);
	top_sample_release(&a);
	top_sample_release(&b);
	strbuf_release(&ta);
	strbuf_release(&tb);
	strbuf_release(&out);
}

static void layout_nodes(void **state ATTR_UNUSED)
{
	struct spark_fixture f;
	struct top_model none = TOP_MODEL_INIT;
	struct strbuf out = STRBUF_INIT;
	struct top_sample s;
	struct top_view_node n[3] = {
		{ "node0", NULL, NULL },
		{ "node1",
		  "unreachable: ssh: connect to host node1 port 22: No route to host "
		  "(exit status 255)",
		  &none },
		{ "node\033[2", NULL, &none },
	};
	struct top_view_opts o = { .width = 72, .height = 0, .interval = 0.5 };

	spark_model(&f);
	n[0].model = &f.m;
	parse_ok("{\"gpu_state\":\"no_nvml\"," EMPTY "}", &s);
	top_model_update(&none, NULL, &s, 0);
	top_view_render(n, 3, &o, &out);
	same_text(out.buf,
		  "sparkctl top  3 nodes  every 0.5 s  sort name\n"
		  "\n"
		  "[node0]  memory 32.0/128.0 GiB used, 96.0 GiB available\n"
		  "GPU NAME        UTIL   POWER  TEMP  MEMORY\n"
		  "  0 NVIDIA GB10  37%  11.2 W  45 C  32.0/128.0 GiB unified\n"
		  "PORT           NETDEV        STATE  TX Gb/s RX Gb/s HISTORY  FLAGS\n"
		  "roceP2p1s0f1/1 enP2p1s0f1np1 ACTIVE    0.00    0.00       ..\n"
		  "rocep1s0f1/1   enp1s0f1np1   ACTIVE  100.00   40.00       ++\n"
		  "  ! out_of_sequence_packets_received +3, np_cnp_packets_sent +2\n"
		  "enP7s7         -             up        0.00    1.00       .@\n"
		  "  ! receive_errs +1\n"
		  "\n"
		  "[node1]  unreachable: ssh: connect to host node1 port 22: No route to ho\n"
		  "\n"
		  "[node\\x1b[2]\n"
		  "GPU  none: NVML is not available\n"
		  "PORT none\n");
	strbuf_reset(&out);
	/* too short: what is cut is counted, the keys stay */
	o.height = 6;
	o.keys = true;
	top_view_render(n, 3, &o, &out);
	same_text(out.buf, "sparkctl top  3 nodes  every 0.5 s  sort name\n"
			   "\n"
			   "[node0]  memory 32.0/128.0 GiB used, 96.0 GiB available\n"
			   "GPU NAME        UTIL   POWER  TEMP  MEMORY\n"
			   "... 13 more lines\n"
			   "q quit  p pause  +/- interval  s sort\n");
	strbuf_release(&out);
	top_sample_release(&s);
	top_model_release(&none);
	spark_release(&f);
}

static void model_json(void **state ATTR_UNUSED)
{
	struct spark_fixture f;
	struct top_model none = TOP_MODEL_INIT;
	struct strbuf out = STRBUF_INIT;
	const char *hosts[] = { "spark1", "spark2" };
	const char *errors[] = { NULL, "unreachable: no answer within 15 s" };
	const struct top_model *models[] = { NULL, &none };
	json_t *j;

	spark_model(&f);
	models[0] = &f.m;
	j = top_models_json(hosts, errors, models, 2, 0.5);
	json_to_line(j, &out);
	json_decref(j);
	same_text(
		out.buf,
		"{\"schema_version\":1,\"interval_seconds\":0.5,\"nodes\":[{\"host\":\"spark1\","
		"\"error\":null,"
		"\"sample_interval_seconds\":1.0,\"memory_total_bytes\":137438953472,"
		"\"memory_available_bytes\":103079215104,\"gpu_state\":\"ok\","
		"\"gpus\":[{\"index\":0,\"name\":\"NVIDIA GB10\",\"utilization_ratio\":0.37,"
		"\"power_watts\":11.25,\"temperature_celsius\":45.0,"
		"\"memory_used_bytes\":34359738368,\"memory_total_bytes\":137438953472,"
		"\"unified_memory\":true}],\"ports\":[{\"name\":\"roceP2p1s0f1/1\",\"rdma\":true,"
		"\"netdev\":\"enP2p1s0f1np1\",\"state\":\"ACTIVE\",\"tx_gbps\":0.0,\"rx_gbps\":0.0,"
		"\"rate_gbps\":null,\"flags\":[]},{\"name\":\"rocep1s0f1/1\",\"rdma\":true,"
		"\"netdev\":\"enp1s0f1np1\",\"state\":\"ACTIVE\",\"tx_gbps\":100.0,"
		"\"rx_gbps\":40.0,\"rate_gbps\":200.0,"
		"\"flags\":[{\"counter\":\"out_of_sequence_packets_received\","
		"\"increase\":3},{\"counter\":\"np_cnp_packets_sent\","
		"\"increase\":2}]},{\"name\":\"enP7s7\",\"rdma\":false,\"netdev\":null,"
		"\"state\":\"up\",\"tx_gbps\":0.0,\"rx_gbps\":1.0,\"rate_gbps\":null,"
		"\"flags\":[{\"counter\":\"receive_errs\",\"increase\":1}]}]},{\"host\":\"spark2\","
		"\"error\":\"unreachable: no answer within 15 s\"}]}");
	strbuf_release(&out);
	spark_release(&f);
}

static void sort_names(void **state ATTR_UNUSED)
{
	enum top_sort s;

	for (int i = 0; i < TOP_SORT_COUNT; i++) {
		assert_int_equal(top_sort_parse(top_sort_name((enum top_sort)i), &s), 0);
		assert_int_equal(s, i);
	}
	assert_int_equal(top_sort_parse("power", &s), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sample_round_trip),
		cmocka_unit_test(sample_forms),
		cmocka_unit_test(sample_errors),
		cmocka_unit_test(model_rates_and_flags),
		cmocka_unit_test(model_history_bounded),
		cmocka_unit_test(model_no_gpu),
		cmocka_unit_test(graph),
		cmocka_unit_test(layout_spark),
		cmocka_unit_test(layout_h100x8),
		cmocka_unit_test(layout_nodes),
		cmocka_unit_test(model_json),
		cmocka_unit_test(sort_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
