/*
 * Unit tests of 'sparkctl top': the Prometheus text parser, the model
 * (rates from counter deltas, resets, flags, unified memory) and the
 * layout, on exact text.
 */
#include "sparkctl.h"

#include <math.h>

#include "test_util.h"

#include "exporter/metrics.h"
#include "lib/xalloc.h"
#include "top/model.h"
#include "top/promtext.h"
#include "view/top_view.h"

static void parse_ok(const char *text, struct metric_set *set)
{
	struct strbuf err = STRBUF_INIT;

	if (promtext_parse(text, strlen(text), set, &err) < 0)
		fail_msg("parse failed: %s", err.buf);
	strbuf_release(&err);
}

static void parse_bad(const char *text, const char *why)
{
	struct metric_set set = METRIC_SET_INIT;
	struct strbuf err = STRBUF_INIT;

	assert_int_equal(promtext_parse(text, strlen(text), &set, &err), -EINVAL);
	assert_string_equal(err.buf, why);
	strbuf_release(&err);
	metric_set_release(&set);
}

/* What the writer writes, the parser reads back: the same text again. */
static void parse_round_trip(void **state ATTR_UNUSED)
{
	struct metric_set a = METRIC_SET_INIT, b = METRIC_SET_INIT;
	struct strbuf ta = STRBUF_INIT, tb = STRBUF_INIT;
	const struct metric_label l[] = { { "device", "a\"b\\c\nd" }, { "port", "1" } };

	assert_int_equal(metric_add_u64(&a, "x_total", "Help with \\ and\nnewline", METRIC_COUNTER,
					l, 2, UINT64_MAX),
			 0);
	assert_int_equal(metric_add_double(&a, "y", "", METRIC_GAUGE, NULL, 0, 0.125), 0);
	assert_int_equal(metric_add_double(&a, "z", "z", METRIC_GAUGE, l, 1, -2.5e-7), 0);
	metric_set_render(&a, &ta);
	parse_ok(ta.buf, &b);
	metric_set_render(&b, &tb);
	assert_string_equal(ta.buf, tb.buf);
	assert_true(b.families[0].samples[0].is_uint);
	assert_true(b.families[0].samples[0].u == UINT64_MAX);
	assert_int_equal(b.families[0].type, METRIC_COUNTER);
	metric_set_release(&a);
	metric_set_release(&b);
	strbuf_release(&ta);
	strbuf_release(&tb);
}

static void parse_forms(void **state ATTR_UNUSED)
{
	struct metric_set set = METRIC_SET_INIT;
	struct strbuf v = STRBUF_INIT;

	parse_ok("# a comment\n\n  \n# TYPE u untyped\nu{a=\"1\",} 3 1700000000000\n"
		 "n NaN\np +Inf\nm -Inf\nf 1.5e3\nbig 18446744073709551616\nlast 7",
		 &set);
	assert_int_equal(set.nr, 7);
	assert_string_equal(set.families[0].samples[0].labels, "{a=\"1\"}");
	assert_true(isnan(set.families[1].samples[0].d));
	assert_true(isinf(set.families[2].samples[0].d) && set.families[2].samples[0].d > 0);
	assert_true(isinf(set.families[3].samples[0].d) && set.families[3].samples[0].d < 0);
	assert_true(set.families[4].samples[0].d == 1500);
	/* beyond 64 bits: a float */
	assert_false(set.families[5].samples[0].is_uint);
	assert_true(set.families[6].samples[0].u == 7);
	metric_set_release(&set);

	assert_int_equal(metric_labels_get("{a=\"x\\\"y\",b=\"\"}", "a", &v), 0);
	assert_string_equal(v.buf, "x\"y");
	strbuf_reset(&v);
	assert_int_equal(metric_labels_get("{a=\"x\\\"y\",b=\"\"}", "b", &v), 0);
	assert_string_equal(v.buf, "");
	assert_int_equal(metric_labels_get("{a=\"x\"}", "c", &v), -ENOENT);
	assert_int_equal(metric_labels_get("", "c", &v), -ENOENT);
	assert_int_equal(metric_labels_get("{a=\"x\"", "a", &v), -EINVAL);
	assert_int_equal(metric_labels_get("{a=\"x\"}junk", "a", &v), -EINVAL);
	strbuf_release(&v);
}

static void parse_errors(void **state ATTR_UNUSED)
{
	parse_bad("1x 1\n", "line 1: expected a metric name");
	parse_bad("x\n", "line 1: expected a space before the value");
	parse_bad("x \n", "line 1: no value");
	parse_bad("x 0x10\n", "line 1: invalid value");
	parse_bad("x infinity\n", "line 1: invalid value");
	parse_bad("x nan(1)\n", "line 1: invalid value");
	parse_bad("x 1e999\n", "line 1: invalid value");
	parse_bad("x 1 2 3\n", "line 1: unexpected text after the value");
	parse_bad("ok 1\nx{a=\"1\" 1\n", "line 2: expected ',' or '}' after a label value");
	parse_bad("x{a=1} 1\n", "line 1: expected '=\"' after a label name");
	parse_bad("x{a=\"\\t\"} 1\n", "line 1: invalid escape in a label value");
	parse_bad("x{a=\"1\n", "line 1: unterminated label value");
	parse_bad("x{__a=\"1\"} 1\n", "line 1: invalid label name");
	parse_bad("x{a=\"1\",a=\"2\"} 1\n", "line 1: repeated label");
	parse_bad("x{a=\"1\",b=\"2\",c=\"3\",d=\"4\",e=\"5\",f=\"6\",g=\"7\",h=\"8\",i=\"9\"} 1\n",
		  "line 1: too many labels");
	parse_bad("x 1\nx 2\n", "line 2: a second sample with the same labels");
	parse_bad("# TYPE x histogram\n",
		  "line 1: unsupported metric type (counter, gauge, untyped)");
	parse_bad("# TYPE x counter\n# TYPE x gauge\n", "line 2: a second TYPE for the metric");
	parse_bad("# HELP x a\n# HELP x b\n", "line 2: a second HELP for the metric");
	parse_bad("# HELP 9 a\n", "line 1: expected a metric name");
	parse_bad("# HELP x- a\n", "line 1: invalid metric name");
	parse_bad("x 1 12a\n", "line 1: unexpected text after the value");

	struct metric_set set = METRIC_SET_INIT;
	struct strbuf err = STRBUF_INIT;
	assert_int_equal(promtext_parse("x 1\0y 2", 7, &set, &err), -EINVAL);
	assert_string_equal(err.buf, "a NUL byte in the text");
	metric_set_release(&set);
	strbuf_release(&err);
}

#define PORT  "device=\"rocep1s0f1\",port=\"1\""
#define PORT2 "device=\"roceP2p1s0f1\",port=\"1\""
#define GPU0  "gpu=\"0\",uuid=\"GPU-0\""

/* A DGX Spark's sample: two RDMA ports, a Wi-Fi netdev, lo. */
static void spark_sample(struct metric_set *set, uint64_t tx, uint64_t rx, uint64_t oos,
			 uint64_t cnp, uint64_t wifi_rx, uint64_t wifi_errs, uint64_t pkts)
{
	char *text = xasprintf(
		"# TYPE sparkctl_gpu_nvml_up gauge\n"
		"sparkctl_gpu_nvml_up 1\n"
		"sparkctl_gpu_info{" GPU0 ",name=\"NVIDIA GB10\",memory_type=\"unified\"} 1\n"
		"sparkctl_gpu_utilization_ratio{" GPU0 "} 0.37\n"
		"sparkctl_gpu_power_watts{" GPU0 "} 11.25\n"
		"sparkctl_gpu_temperature_celsius{" GPU0 "} 45\n"
		"sparkctl_memory_total_bytes 137438953472\n"
		"sparkctl_memory_available_bytes 103079215104\n"
		"sparkctl_rdma_port_info{" PORT ",link_layer=\"Ethernet\",netdev=\"enp1s0f1np1\","
		"state=\"ACTIVE\",phys_state=\"LinkUp\"} 1\n"
		"sparkctl_rdma_port_info{" PORT2
		",link_layer=\"Ethernet\",netdev=\"enP2p1s0f1np1\","
		"state=\"ACTIVE\",phys_state=\"LinkUp\"} 1\n"
		"sparkctl_rdma_port_rate_bytes_per_second{" PORT "} 25000000000\n"
		"# TYPE sparkctl_rdma_port_data_transmitted_bytes_total counter\n"
		"sparkctl_rdma_port_data_transmitted_bytes_total{" PORT "} %" PRIu64 "\n"
		"sparkctl_rdma_port_data_transmitted_bytes_total{" PORT2 "} 0\n"
		"# TYPE sparkctl_rdma_port_data_received_bytes_total counter\n"
		"sparkctl_rdma_port_data_received_bytes_total{" PORT "} %" PRIu64 "\n"
		"sparkctl_rdma_port_data_received_bytes_total{" PORT2 "} 0\n"
		"# TYPE sparkctl_rdma_port_packets_transmitted_total counter\n"
		"sparkctl_rdma_port_packets_transmitted_total{" PORT "} %" PRIu64 "\n"
		"# TYPE sparkctl_rdma_out_of_sequence_packets_received_total counter\n"
		"sparkctl_rdma_out_of_sequence_packets_received_total{" PORT "} %" PRIu64 "\n"
		"# TYPE sparkctl_rdma_np_cnp_packets_sent_total counter\n"
		"sparkctl_rdma_np_cnp_packets_sent_total{" PORT "} %" PRIu64 "\n"
		"# TYPE sparkctl_network_receive_bytes_total counter\n"
		"sparkctl_network_receive_bytes_total{device=\"lo\"} 5\n"
		"sparkctl_network_receive_bytes_total{device=\"enp1s0f1np1\"} 5\n"
		"sparkctl_network_receive_bytes_total{device=\"enP7s7\"} %" PRIu64 "\n"
		"# TYPE sparkctl_network_transmit_bytes_total counter\n"
		"sparkctl_network_transmit_bytes_total{device=\"enP7s7\"} 0\n"
		"# TYPE sparkctl_network_receive_errs_total counter\n"
		"sparkctl_network_receive_errs_total{device=\"enP7s7\"} %" PRIu64 "\n"
		"sparkctl_network_up{device=\"enP7s7\"} 1\n",
		tx, rx, pkts, oos, cnp, wifi_rx, wifi_errs);
	parse_ok(text, set);
	free(text);
}

static void model_rates_and_flags(void **state ATTR_UNUSED)
{
	struct metric_set a = METRIC_SET_INIT, b = METRIC_SET_INIT, c = METRIC_SET_INIT;
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
	assert_true(m.gpus[0].has_util && m.gpus[0].util == 37);
	assert_true(m.gpus[0].power_w == 11.25 && m.gpus[0].temp_c == 45);
	/* unified memory: the system's, MemTotal - MemAvailable */
	assert_true(m.gpus[0].has_mem && m.gpus[0].mem_unified);
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
	metric_set_release(&a);
	metric_set_release(&b);
	metric_set_release(&c);
}

static void model_history_bounded(void **state ATTR_UNUSED)
{
	struct metric_set a = METRIC_SET_INIT;
	struct top_model m = TOP_MODEL_INIT;

	spark_sample(&a, 1, 1, 0, 0, 0, 0, 0);
	for (int i = 0; i < TOP_HISTORY + 10; i++)
		top_model_update(&m, &a, &a, 1);
	assert_int_equal(m.ports[0].hist_nr, TOP_HISTORY);
	assert_true(m.ports[0].hist[TOP_HISTORY - 1] == 0);
	top_model_release(&m);
	metric_set_release(&a);
}

static void model_no_gpu(void **state ATTR_UNUSED)
{
	struct metric_set a = METRIC_SET_INIT;
	struct top_model m = TOP_MODEL_INIT;

	/* NVML not loaded; memory_type unknown: no GPU, no made-up memory */
	parse_ok("sparkctl_gpu_nvml_up 0\n", &a);
	top_model_update(&m, NULL, &a, 0);
	assert_int_equal(m.gpu_state, TOP_GPU_NO_NVML);
	assert_int_equal(m.nr_gpus, 0);
	assert_int_equal(m.nr_ports, 0);
	metric_set_release(&a);
	parse_ok("sparkctl_gpu_nvml_up 1\n"
		 "sparkctl_gpu_info{" GPU0 ",name=\"X\"} 1\n"
		 "sparkctl_memory_total_bytes 100\nsparkctl_memory_available_bytes 50\n",
		 &a);
	top_model_update(&m, NULL, &a, 0);
	assert_false(m.gpus[0].has_mem);
	assert_false(m.gpus[0].has_util);
	metric_set_release(&a);
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
	struct metric_set a, b, c;
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
	metric_set_release(&f->a);
	metric_set_release(&f->b);
	metric_set_release(&f->c);
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
	struct metric_set a = METRIC_SET_INIT, b = METRIC_SET_INIT;
	struct strbuf ta = STRBUF_INIT, tb = STRBUF_INIT, out = STRBUF_INIT;
	struct top_model m = TOP_MODEL_INIT;
	struct top_view_node n = { "dgx-h100", NULL, &m };
	struct top_view_opts o = { .width = 100, .interval = 2, .sort = TOP_SORT_UTIL };

	strbuf_addstr(&ta, "sparkctl_gpu_nvml_up 1\n");
	for (int i = 0; i < 8; i++) {
		strbuf_addf(
			&ta,
			"sparkctl_gpu_info{gpu=\"%d\",uuid=\"U%d\",name=\"NVIDIA H100 80GB HBM3\"} "
			"1\n"
			"sparkctl_gpu_utilization_ratio{gpu=\"%d\",uuid=\"U%d\"} 0.%d\n"
			"sparkctl_gpu_temperature_celsius{gpu=\"%d\",uuid=\"U%d\"} %d\n"
			"sparkctl_gpu_memory_used_bytes{gpu=\"%d\",uuid=\"U%d\"} %d000000000\n"
			"sparkctl_gpu_memory_total_bytes{gpu=\"%d\",uuid=\"U%d\"} 85520809984\n",
			i, i, i, i, (i * 37) % 90 + 10, i, i, 30 + i, i, i, i + 1, i, i);
		strbuf_addf(
			&ta,
			"sparkctl_rdma_port_info{device=\"mlx5_%d\",port=\"1\",state=\"ACTIVE\"} "
			"1\n"
			"sparkctl_rdma_port_rate_bytes_per_second{device=\"mlx5_%d\",port=\"1\"} "
			"50000000000\n",
			i, i);
	}
	strbuf_addstr(&tb, ta.buf);
	for (int i = 0; i < 8; i++) {
		strbuf_addf(
			&ta,
			"sparkctl_rdma_port_data_transmitted_bytes_total{device=\"mlx5_%d\",port="
			"\"1\"} 0\n"
			"sparkctl_rdma_port_data_received_bytes_total{device=\"mlx5_%d\",port="
			"\"1\"} 0\n",
			i, i);
		strbuf_addf(
			&tb,
			"sparkctl_rdma_port_data_transmitted_bytes_total{device=\"mlx5_%d\",port="
			"\"1\"} %d\n"
			"sparkctl_rdma_port_data_received_bytes_total{device=\"mlx5_%d\",port="
			"\"1\"} %d\n",
			i, i * 6250000, i, 50000000 * i);
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
	metric_set_release(&a);
	metric_set_release(&b);
	strbuf_release(&ta);
	strbuf_release(&tb);
	strbuf_release(&out);
}

static void layout_nodes(void **state ATTR_UNUSED)
{
	struct spark_fixture f;
	struct top_model none = TOP_MODEL_INIT;
	struct strbuf out = STRBUF_INIT;
	struct metric_set s = METRIC_SET_INIT;
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
	parse_ok("sparkctl_gpu_nvml_up 0\n", &s);
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
	metric_set_release(&s);
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
		"{\"interval_ms\":500,\"nodes\":[{\"host\":\"spark1\",\"error\":null,"
		"\"seconds\":1.0,\"memory_total_bytes\":137438953472,"
		"\"memory_available_bytes\":103079215104,\"gpu_state\":\"ok\","
		"\"gpus\":[{\"index\":\"0\",\"name\":\"NVIDIA GB10\",\"utilization_percent\":37.0,"
		"\"power_watts\":11.25,\"temperature_celsius\":45.0,"
		"\"memory_used_bytes\":34359738368,\"memory_total_bytes\":137438953472,"
		"\"memory_unified\":true}],\"ports\":[{\"name\":\"roceP2p1s0f1/1\",\"rdma\":true,"
		"\"netdev\":\"enP2p1s0f1np1\",\"state\":\"ACTIVE\",\"tx_gbps\":0.0,\"rx_gbps\":0.0,"
		"\"line_gbps\":null,\"flags\":[]},{\"name\":\"rocep1s0f1/1\",\"rdma\":true,"
		"\"netdev\":\"enp1s0f1np1\",\"state\":\"ACTIVE\",\"tx_gbps\":100.0,"
		"\"rx_gbps\":40.0,\"line_gbps\":200.0,"
		"\"flags\":[{\"counter\":\"out_of_sequence_packets_received\","
		"\"increase\":3},{\"counter\":\"np_cnp_packets_sent\","
		"\"increase\":2}]},{\"name\":\"enP7s7\",\"rdma\":false,\"netdev\":null,"
		"\"state\":\"up\",\"tx_gbps\":0.0,\"rx_gbps\":1.0,\"line_gbps\":null,"
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
		cmocka_unit_test(parse_round_trip),
		cmocka_unit_test(parse_forms),
		cmocka_unit_test(parse_errors),
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
