/*
 * Unit tests of the exporter's pure parts: the Prometheus text writer,
 * counter parsing, the --listen parser, the sysfs collectors on a small
 * tree written here, the web-config parser, the basic-auth check, and the
 * connection table's deadline and room-making (on socket pairs).
 */
#include "sparkctl.h"

#include <arpa/inet.h>
#include <math.h>
#include <sys/socket.h>

#include "test_util.h"

#include "exporter/basic_auth.h"
#include "exporter/collect.h"
#include "exporter/conn_table.h"
#include "exporter/http.h"
#include "exporter/metrics.h"
#include "exporter/web_config.h"
#include "lib/xalloc.h"

static char tree[] = "/tmp/sparkctl-exporter-XXXXXX";

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(tree))
		return -1;
	char *cmd = xasprintf(
		"cd %s && D=devices/pci0000:00/0000:00:01.0 && P=sys/$D && "
		"mkdir -p $P/infiniband/mlx5_0/ports/1/counters "
		"$P/infiniband/mlx5_0/ports/1/hw_counters "
		"$P/infiniband/mlx5_0/ports/1/gid_attrs/ndevs $P/net/eth0/statistics "
		"sys/class/infiniband sys/class/net sys/class/thermal/thermal_zone0 "
		"sys/class/thermal/cooling_device0 sys/class/hwmon/hwmon1 proc && "
		"ln -s ../../$D/infiniband/mlx5_0 sys/class/infiniband/mlx5_0 && "
		"ln -s ../../$D/net/eth0 sys/class/net/eth0 && "
		"cd $P/infiniband/mlx5_0 && echo MT_0000000838 > board_id && echo 28.45.4028 > "
		"fw_ver "
		"&& echo MT4129 > hca_type && cd ports/1 && echo '4: ACTIVE' > state && "
		"echo '5: LinkUp' > phys_state && echo '200 Gb/sec (4X HDR)' > rate && "
		"echo Ethernet > link_layer && echo eth0 > gid_attrs/ndevs/0 && "
		"echo 1000 > counters/port_xmit_data && echo 250 > counters/port_rcv_data && "
		"echo 'N/A (no PMA)' > counters/symbol_error && echo 3 > counters/link_downed && "
		"echo 7 > hw_counters/out_of_sequence && echo 10 > hw_counters/lifespan && "
		"echo 5 > hw_counters/cc_rx_cnp_pkts && echo 4294967295 > hw_counters/np_cnp_sent "
		"&& "
		"cd %s && cd $P/net/eth0 && echo 9000 > mtu && echo 1 > carrier && echo 200000 > "
		"speed "
		"&& echo up > operstate && echo 123 > statistics/rx_bytes && "
		"echo 456 > statistics/tx_bytes && cd %s && "
		"echo acpitz > sys/class/thermal/thermal_zone0/type && "
		"echo 45500 > sys/class/thermal/thermal_zone0/temp && "
		"echo nvme > sys/class/hwmon/hwmon1/name && "
		"echo -1250 > sys/class/hwmon/hwmon1/temp1_input && "
		"echo 'Composite \"A\"' > sys/class/hwmon/hwmon1/temp1_label && "
		"printf 'MemTotal:  1000 kB\\nMemAvailable:  600 kB\\n' > proc/meminfo",
		tree, tree, tree);
	sh(cmd);
	free(cmd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	remove_tree(tree);
	return 0;
}

/* Families are written once each, in first-sample order, with their samples together. */
static void writer_exact(void **state)
{
	struct metric_set set = METRIC_SET_INIT;
	struct strbuf out = STRBUF_INIT;
	const struct metric_label a[2] = { { "device", "mlx5_0" }, { "port", "1" } };
	const struct metric_label b[2] = { { "device", "mlx5_1" }, { "port", NULL } };

	(void)state;
	assert_int_equal(metric_add_u64(&set, "x_bytes_total", "Bytes", METRIC_COUNTER, a, 2, 7),
			 0);
	assert_int_equal(metric_add_double(&set, "y_ratio", "A ratio", METRIC_GAUGE, NULL, 0, 0.37),
			 0);
	assert_int_equal(
		metric_add_u64(&set, "x_bytes_total", "ignored", METRIC_COUNTER, b, 2, UINT64_MAX),
		0);
	assert_int_equal(metric_add_double(&set, "z", "Specials", METRIC_GAUGE, a, 1, NAN), 0);
	assert_int_equal(metric_add_double(&set, "z", "", METRIC_GAUGE, b, 1, -INFINITY), 0);
	assert_int_equal(metric_add_double(&set, "z", "", METRIC_GAUGE, NULL, 0, 1e-7), 0);
	metric_set_render(&set, &out);
	assert_string_equal(out.buf, "# HELP x_bytes_total Bytes\n"
				     "# TYPE x_bytes_total counter\n"
				     "x_bytes_total{device=\"mlx5_0\",port=\"1\"} 7\n"
				     "x_bytes_total{device=\"mlx5_1\"} 18446744073709551615\n"
				     "# HELP y_ratio A ratio\n"
				     "# TYPE y_ratio gauge\n"
				     "y_ratio 0.37\n"
				     "# HELP z Specials\n"
				     "# TYPE z gauge\n"
				     "z{device=\"mlx5_0\"} NaN\n"
				     "z{device=\"mlx5_1\"} -Inf\n"
				     "z 1e-07\n");
	metric_set_release(&set);
	strbuf_release(&out);
}

static void writer_escaping(void **state)
{
	struct metric_set set = METRIC_SET_INIT;
	struct strbuf out = STRBUF_INIT;
	const struct metric_label l[1] = { { "label", "a\\b \"q\"\nz" } };

	(void)state;
	assert_int_equal(metric_add_double(&set, "e", "back\\slash \"quotes\"\nnext", METRIC_GAUGE,
					   l, 1, 2.5),
			 0);
	metric_set_render(&set, &out);
	/* HELP escapes \ and newline only; label values also the double quote. */
	assert_string_equal(out.buf, "# HELP e back\\\\slash \"quotes\"\\nnext\n"
				     "# TYPE e gauge\n"
				     "e{label=\"a\\\\b \\\"q\\\"\\nz\"} 2.5\n");
	metric_set_release(&set);
	strbuf_release(&out);
}

static void writer_rejects(void **state)
{
	struct metric_set set = METRIC_SET_INIT;
	const struct metric_label ok[1] = { { "gpu", "0" } };
	const struct metric_label reserved[1] = { { "__name__", "x" } };
	const struct metric_label colon[1] = { { "a:b", "x" } };
	const struct metric_label twice[2] = { { "gpu", "0" }, { "gpu", "1" } };
	struct metric_label many[METRIC_MAX_LABELS + 1];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(many); i++)
		many[i] = (struct metric_label){ "l", "v" };
	assert_int_equal(metric_add_u64(&set, "1abc", "", METRIC_GAUGE, NULL, 0, 1), -EINVAL);
	assert_int_equal(metric_add_u64(&set, "a-b", "", METRIC_GAUGE, NULL, 0, 1), -EINVAL);
	assert_int_equal(metric_add_u64(&set, "", "", METRIC_GAUGE, NULL, 0, 1), -EINVAL);
	assert_int_equal(metric_add_u64(&set, "m", "", METRIC_GAUGE, reserved, 1, 1), -EINVAL);
	assert_int_equal(metric_add_u64(&set, "m", "", METRIC_GAUGE, colon, 1, 1), -EINVAL);
	assert_int_equal(metric_add_u64(&set, "m", "", METRIC_GAUGE, twice, 2, 1), -EINVAL);
	assert_int_equal(metric_add_u64(&set, "m", "", METRIC_GAUGE, many, ARRAY_SIZE(many), 1),
			 -EINVAL);
	assert_int_equal(metric_add_u64(&set, "m", "", METRIC_GAUGE, ok, 1, 1), 0);
	assert_int_equal(metric_add_u64(&set, "m", "", METRIC_GAUGE, ok, 1, 2), -EEXIST);
	assert_int_equal(metric_add_u64(&set, "m", "", METRIC_COUNTER, NULL, 0, 1), -EINVAL);
	assert_int_equal(set.nr, 1);
	assert_int_equal(set.families[0].nr, 1);
	assert_true(metric_name_valid("ns:recorded_rule"));
	assert_false(metric_label_name_valid("ns:x"));
	metric_set_release(&set);
}

static void counters(void **state)
{
	uint64_t v = 0;
	const struct rdma_counter *c;

	(void)state;
	assert_int_equal(exporter_parse_counter("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(exporter_parse_counter("18446744073709551615", &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(exporter_parse_counter("N/A (no PMA)", &v), -ENODATA);
	assert_int_equal(exporter_parse_counter("", &v), -EINVAL);
	assert_int_equal(exporter_parse_counter("-1", &v), -EINVAL);
	assert_int_equal(exporter_parse_counter("12 ", &v), -EINVAL);
	assert_int_equal(exporter_parse_counter("0x10", &v), -EINVAL);
	assert_int_equal(exporter_parse_counter("18446744073709551616", &v), -EINVAL);

	c = rdma_counter_find("port_xmit_data", false);
	assert_non_null(c);
	assert_string_equal(c->metric, "port_data_transmitted_bytes_total");
	assert_int_equal(c->scale, 4); /* 32-bit words, never the link width */
	c = rdma_counter_find("port_xmit_packets", false);
	assert_int_equal(c->scale, 1);
	c = rdma_counter_find("np_cnp_sent", true);
	assert_string_equal(c->metric, "np_cnp_packets_sent_total");
	assert_string_equal(rdma_counter_find("local_ack_timeout_err", true)->metric,
			    "local_ack_timeout_errors_total");
	assert_null(rdma_counter_find("port_xmit_data", true));
	assert_null(rdma_counter_find("np_cnp_sent", false));
	assert_null(rdma_counter_find("lifespan", true));
}

static void listen_addresses(void **state)
{
	struct sockaddr_storage ss;
	struct strbuf out = STRBUF_INIT;
	socklen_t len = 0;

	(void)state;
	assert_int_equal(http_parse_listen("127.0.0.1:9877", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(len, sizeof(struct sockaddr_in));
	http_format_addr((struct sockaddr *)&ss, &out);
	assert_string_equal(out.buf, "127.0.0.1:9877");
	assert_int_equal(http_parse_listen("[::1]:0", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	strbuf_reset(&out);
	http_format_addr((struct sockaddr *)&ss, &out);
	assert_string_equal(out.buf, "[::1]:0");
	assert_int_equal(http_parse_listen("0.0.0.0:65535", &ss, &len), 0);
	assert_int_equal(http_parse_listen("localhost:80", &ss, &len), -EINVAL);
	assert_int_equal(http_parse_listen("127.0.0.1", &ss, &len), -EINVAL);
	assert_int_equal(http_parse_listen("127.0.0.1:65536", &ss, &len), -EINVAL);
	assert_int_equal(http_parse_listen("127.0.0.1:", &ss, &len), -EINVAL);
	assert_int_equal(http_parse_listen("127.0.0.1:-1", &ss, &len), -EINVAL);
	assert_int_equal(http_parse_listen(":80", &ss, &len), -EINVAL);
	assert_int_equal(http_parse_listen("::1:80", &ss, &len), -EINVAL);
	assert_int_equal(http_parse_listen("[::1]80", &ss, &len), -EINVAL);
	assert_int_equal(http_parse_listen("[127.0.0.1]:80", &ss, &len), -EINVAL);
	strbuf_release(&out);
}

/* Collect with fn from the tree and render it. */
static int collect(int (*fn)(const struct rootfs *, struct metric_set *), struct strbuf *out)
{
	struct metric_set set = METRIC_SET_INIT;
	struct rootfs root;
	int r;

	assert_int_equal(rootfs_open(&root, tree), 0);
	r = fn(&root, &set);
	strbuf_reset(out);
	metric_set_render(&set, out);
	metric_set_release(&set);
	rootfs_close(&root);
	return r;
}

/* The sample lines of text (no HELP/TYPE). */
static char *samples(const char *text)
{
	struct strbuf out = STRBUF_INIT;

	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p + 1) : strlen(p);
		if (*p != '#')
			strbuf_add(&out, p, n);
		p += n;
	}
	return strbuf_detach(&out, NULL);
}

/* fn collects from the tree without error, and exactly the samples want. */
static void samples_are(int (*fn)(const struct rootfs *, struct metric_set *), const char *want)
{
	struct strbuf out = STRBUF_INIT;
	char *s;

	assert_int_equal(collect(fn, &out), 0);
	s = samples(out.buf);
	assert_string_equal(s, want);
	free(s);
	strbuf_release(&out);
}

static void collect_rdma_tree(void **state)
{
	struct strbuf out = STRBUF_INIT;

	(void)state;
	samples_are(
		collect_rdma,
		"sparkctl_rdma_info{device=\"mlx5_0\",board_id=\"MT_0000000838\","
		"firmware_version=\"28.45.4028\",hca_type=\"MT4129\"} 1\n"
		"sparkctl_rdma_port_state_id{device=\"mlx5_0\",port=\"1\"} 4\n"
		"sparkctl_rdma_port_physical_state_id{device=\"mlx5_0\",port=\"1\"} 5\n"
		"sparkctl_rdma_port_rate_bytes_per_second{device=\"mlx5_0\",port=\"1\"} "
		"25000000000\n"
		"sparkctl_rdma_port_info{device=\"mlx5_0\",port=\"1\",link_layer=\"Ethernet\","
		"netdev=\"eth0\",state=\"ACTIVE\",phys_state=\"LinkUp\"} 1\n"
		"sparkctl_rdma_link_downed_total{device=\"mlx5_0\",port=\"1\"} 3\n"
		"sparkctl_rdma_port_data_received_bytes_total{device=\"mlx5_0\",port=\"1\"} 1000\n"
		"sparkctl_rdma_port_data_transmitted_bytes_total{device=\"mlx5_0\",port=\"1\"} "
		"4000\n"
		"sparkctl_rdma_port_hw_counter_total{device=\"mlx5_0\",port=\"1\","
		"counter=\"cc_rx_cnp_pkts\"} 5\n"
		"sparkctl_rdma_port_hw_counters_lifespan_seconds{device=\"mlx5_0\",port=\"1\"} "
		"0.01\n"
		"sparkctl_rdma_np_cnp_packets_sent_total{device=\"mlx5_0\",port=\"1\"} 4294967295\n"
		"sparkctl_rdma_out_of_sequence_packets_received_total{device=\"mlx5_0\",port=\"1\"}"
		" "
		"7\n");
	/* Content not in the kernel's format fails the collector, and the rest still counts. */
	char *cmd = xasprintf("cd %s/sys/class/infiniband/mlx5_0/ports/1 && "
			      "echo garbage > counters/link_downed",
			      tree);
	sh(cmd);
	free(cmd);
	assert_int_equal(collect(collect_rdma, &out), -EINVAL);
	assert_non_null(strstr(out.buf, "sparkctl_rdma_port_data_transmitted_bytes_total{device="
					"\"mlx5_0\",port=\"1\"} 4000\n"));
	assert_null(strstr(out.buf, "sparkctl_rdma_link_downed_total{"));
	cmd = xasprintf("echo 3 > %s/sys/class/infiniband/mlx5_0/ports/1/counters/link_downed",
			tree);
	sh(cmd);
	free(cmd);
	strbuf_release(&out);
}

static void collect_host_tree(void **state)
{
	struct strbuf out = STRBUF_INIT;

	(void)state;
	samples_are(collect_netdev, "sparkctl_network_mtu_bytes{device=\"eth0\"} 9000\n"
				    "sparkctl_network_carrier{device=\"eth0\"} 1\n"
				    "sparkctl_network_speed_bytes{device=\"eth0\"} 25000000000\n"
				    "sparkctl_network_up{device=\"eth0\"} 1\n"
				    "sparkctl_network_receive_bytes_total{device=\"eth0\"} 123\n"
				    "sparkctl_network_transmit_bytes_total{device=\"eth0\"} 456\n");
	samples_are(collect_thermal,
		    "sparkctl_thermal_zone_temp_celsius{zone=\"0\",type=\"acpitz\"} 45.5\n");
	samples_are(collect_hwmon,
		    "sparkctl_hwmon_chip_info{chip=\"hwmon1\",chip_name=\"nvme\"} 1\n"
		    "sparkctl_hwmon_temp_celsius{chip=\"hwmon1\",sensor=\"temp1\"} -1.25\n"
		    "sparkctl_hwmon_sensor_label{chip=\"hwmon1\",sensor=\"temp1\","
		    "label=\"Composite \\\"A\\\"\"} 1\n");
	samples_are(collect_meminfo, "sparkctl_memory_total_bytes 1024000\n"
				     "sparkctl_memory_available_bytes 614400\n");
	/* No PCI devices in this tree: nothing, and no error. */
	assert_int_equal(collect(collect_aer, &out), 0);
	assert_string_equal(out.buf, "");
	strbuf_release(&out);
}

/* Two bcrypt hashes made with libcrypt: of "s3cret" ($2y$, cost 4) and "other pass" ($2b$, 5). */
#define HASH_ALICE	"$2y$04$SparkctlTestSaltOfThe...lbex/mQmobWUBEwdsbNRmYp2oqb1i"
#define BOB_SALT_DIGEST "AnotherSaltForTheTeste88eyDDSiy3c/KlveScOjZ9XuWH89ooa"
#define HASH_BOB	"$2b$05$" BOB_SALT_DIGEST

static int parse_config(const char *text, const char *path, struct web_config *cfg,
			struct strbuf *err)
{
	strbuf_reset(err);
	return web_config_parse(text, strlen(text), path, cfg, err);
}

static void web_config_accepted(void **state)
{
	struct web_config cfg;
	struct strbuf err = STRBUF_INIT;

	(void)state;
	assert_int_equal(parse_config("---\r\n"
				      "# TLS and users\n"
				      "tls_server_config:   # the files\n"
				      "    cert_file: tls/server.crt\n"
				      "\n"
				      "    key_file: '/etc/key''s.pem'  # absolute\n"
				      "basic_auth_users:\n"
				      "  alice: " HASH_ALICE "\n"
				      "  \"bob\": \"" HASH_BOB "\"\n",
				      "/etc/sparkctl/web.yml", &cfg, &err),
			 0);
	assert_string_equal(cfg.cert_file, "/etc/sparkctl/tls/server.crt");
	assert_string_equal(cfg.key_file, "/etc/key's.pem");
	assert_int_equal(cfg.nr_users, 2);
	assert_string_equal(cfg.users[0].name, "alice");
	assert_string_equal(cfg.users[0].hash, HASH_ALICE);
	assert_string_equal(cfg.users[1].name, "bob");
	assert_string_equal(cfg.users[1].hash, HASH_BOB);
	web_config_release(&cfg);
	/* Users alone (plain HTTP with authentication); a file in the working directory. */
	assert_int_equal(
		parse_config("basic_auth_users:\n  a.b@c: " HASH_BOB, "web.yml", &cfg, &err), 0);
	assert_null(cfg.cert_file);
	assert_int_equal(cfg.nr_users, 1);
	web_config_release(&cfg);
	assert_int_equal(parse_config("tls_server_config:\n cert_file: c\n key_file: k\n",
				      "web.yml", &cfg, &err),
			 0);
	assert_string_equal(cfg.cert_file, "c");
	assert_int_equal(cfg.nr_users, 0);
	web_config_release(&cfg);
	strbuf_release(&err);
}

static void web_config_refused(void **state)
{
	static const struct {
		const char *text, *error;
	} cases[] = {
		{ "",
		  "w.yml: neither tls_server_config nor basic_auth_users: nothing to configure" },
		{ "# only a comment\n", "w.yml: neither tls_server_config nor basic_auth_users: "
					"nothing to configure" },
		{ "http_server_config:\n  http2: true\n",
		  "w.yml:1: unknown key 'http_server_config' (known: tls_server_config, "
		  "basic_auth_users)" },
		{ "tls_server_config:\n  cert_file: c\n  key_file: k\n  min_version: TLS13\n",
		  "w.yml:4: unknown key 'min_version' in tls_server_config (known: cert_file, "
		  "key_file)" },
		{ "tls_server_config:\n  cert_file: c\nbasic_auth_users:\n  a: " HASH_ALICE "\n",
		  "w.yml:1: tls_server_config needs both cert_file and key_file" },
		{ "tls_server_config:\n  key_file: k\n  key_file: k\n",
		  "w.yml:3: 'key_file' given twice" },
		{ "basic_auth_users:\n", "w.yml:1: basic_auth_users lists no user" },
		{ "basic_auth_users:\n  a: x\n", "w.yml:2: user 'a': the password must be a bcrypt "
						 "hash ($2y$..., e.g. from 'htpasswd -nBC 10 a')" },
		{ "basic_auth_users:\n  a: " HASH_ALICE "\n  a: " HASH_BOB "\n",
		  "w.yml:3: user 'a' given twice" },
		{ "basic_auth_users:\n  'a:b': " HASH_ALICE "\n",
		  "w.yml:2: 'a:b' cannot be a user name: it is empty or has a ':'" },
		{ "basic_auth_users:\n  a:\n", "w.yml:2: 'a' has no value" },
		{ "basic_auth_users:\n  a: ''\n", "w.yml:2: 'a' has no value" },
		{ "basic_auth_users: {}\n",
		  "w.yml:1: 'basic_auth_users' takes its keys on the lines below, indented" },
		{ "basic_auth_users:\n  - a\n", "w.yml:2: a list item where 'KEY: VALUE' belongs" },
		{ "basic_auth_users:\n  a: [x]\n",
		  "w.yml:2: '[' cannot begin a plain value here: quote the value" },
		{ "basic_auth_users:\n  a: x: y\n",
		  "w.yml:2: ': ' inside a value: quote the value" },
		{ "basic_auth_users:\n  a: 'x' y\n",
		  "w.yml:2: unexpected text after the value: 'y'" },
		{ "basic_auth_users:\n  a: \"x\n",
		  "w.yml:2: a quoted string that does not end on its "
		  "line" },
		{ "basic_auth_users:\n  a: \"\\n\"\n",
		  "w.yml:2: only \\\\ and \\\" may be escaped in "
		  "a double-quoted string" },
		{ "basic_auth_users:\n\ta: x\n", "w.yml:2: a tab: YAML indents with spaces only" },
		{ "tls_server_config:\n  cert_file: c\n    key_file: k\n",
		  "w.yml:3: indented unlike the line above (nothing nests deeper)" },
		{ "  cert_file: c\n", "w.yml:1: an indented line outside tls_server_config and "
				      "basic_auth_users" },
		{ "tls_server_config\n", "w.yml:1: expected 'KEY: VALUE'" },
		{ "tls_server_config:x\n", "w.yml:1: expected 'KEY: VALUE'" },
		{ "basic_auth_users:\n---\n", "w.yml:2: expected 'KEY: VALUE'" },
	};
	struct web_config cfg;
	struct strbuf err = STRBUF_INIT;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		assert_int_equal(parse_config(cases[i].text, "w.yml", &cfg, &err), -EINVAL);
		assert_string_equal(err.buf, cases[i].error);
		assert_null(cfg.cert_file);
		assert_int_equal(cfg.nr_users, 0);
	}
	/* A NUL byte inside the text. */
	strbuf_reset(&err);
	assert_int_equal(
		web_config_parse("basic_auth_users:\n  a\0b: x\n", 24, "w.yml", &cfg, &err),
		-EINVAL);
	assert_string_equal(err.buf, "w.yml:2: a NUL byte");
	strbuf_release(&err);
}

static void bcrypt_hashes(void **state)
{
	(void)state;
	assert_true(web_config_is_bcrypt(HASH_ALICE));
	assert_true(web_config_is_bcrypt(HASH_BOB));
	assert_true(web_config_is_bcrypt("$2a$31$" BOB_SALT_DIGEST));
	assert_false(web_config_is_bcrypt("$2x$04$" BOB_SALT_DIGEST));
	assert_false(web_config_is_bcrypt("$2b$03$" BOB_SALT_DIGEST));
	assert_false(web_config_is_bcrypt("$2b$32$" BOB_SALT_DIGEST));
	assert_false(web_config_is_bcrypt("$2b$1a$" BOB_SALT_DIGEST));
	assert_false(web_config_is_bcrypt(HASH_BOB "x"));
	assert_false(web_config_is_bcrypt(
		"$2b$05$AnotherSaltForTheTeste88eyDDSiy3c/KlveScOjZ9XuWH89oo!"));
	assert_false(web_config_is_bcrypt("$6$salt$hash"));
	assert_false(web_config_is_bcrypt(""));
}

static void basic_auth_users(void **state)
{
	struct web_config cfg;
	struct strbuf err = STRBUF_INIT;
	struct basic_auth *auth;

	(void)state;
	assert_int_equal(parse_config("basic_auth_users:\n  alice: " HASH_ALICE
				      "\n  bob: " HASH_BOB,
				      "w.yml", &cfg, &err),
			 0);
	auth = basic_auth_new(&cfg);
	web_config_release(&cfg);
	strbuf_release(&err);
	assert_non_null(auth);
	assert_true(basic_auth_check(auth, "alice", "s3cret"));
	/* Again: from what was remembered; a wrong one is still wrong after it. */
	assert_true(basic_auth_check(auth, "alice", "s3cret"));
	assert_false(basic_auth_check(auth, "alice", "s3cret "));
	assert_false(basic_auth_check(auth, "alice", ""));
	assert_false(basic_auth_check(auth, "alice", "other pass"));
	assert_true(basic_auth_check(auth, "bob", "other pass"));
	assert_false(basic_auth_check(auth, "bob", "s3cret"));
	assert_false(basic_auth_check(auth, "carol", "s3cret"));
	assert_false(basic_auth_check(auth, "Alice", "s3cret"));
	assert_true(basic_auth_check(auth, "alice", "s3cret"));
	basic_auth_free(auth);
}

/* A connection from 10.0.0.ADDR on one end of a socket pair; the other end is the client's. */
struct pair {
	int server, client;
	struct conn *conn;
};

static void pair_open(struct conn_table *t, struct pair *p, unsigned addr, uint64_t now)
{
	struct sockaddr_in in = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)(1000 + now)) };
	int fds[2];

	in.sin_addr.s_addr = htonl(0x0a000000 + addr);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
	p->server = fds[0];
	p->client = fds[1];
	p->conn = conn_table_open(t, p->server, (struct sockaddr *)&in, now);
}

/* Whether the client sees its connection ended (shut down by the table). */
static bool pair_cut(const struct pair *p)
{
	char c;

	return recv(p->client, &c, 1, MSG_DONTWAIT) == 0;
}

static void pair_close(struct conn_table *t, struct pair *p)
{
	conn_table_close(t, p->conn);
	close(p->server);
	close(p->client);
}

static void conn_room(void **state)
{
	struct conn_table t;
	struct pair p[8];

	(void)state;
	conn_table_init(&t, 4, 2, 1000);
	pair_open(&t, &p[0], 1, 10);
	pair_open(&t, &p[1], 1, 20);
	assert_false(pair_cut(&p[0]) || pair_cut(&p[1]));
	/* A third from address 1: the one of it that waited longest goes. */
	pair_open(&t, &p[2], 1, 30);
	assert_true(pair_cut(&p[0]));
	assert_false(pair_cut(&p[1]) || pair_cut(&p[2]));
	/* One being answered is never the one: the next in line goes. */
	conn_table_answering(&t, p[1].conn);
	pair_open(&t, &p[3], 1, 40);
	assert_true(pair_cut(&p[2]));
	assert_false(pair_cut(&p[1]) || pair_cut(&p[3]));
	/* None waits longer than the newcomer: it goes itself. */
	conn_table_answering(&t, p[3].conn);
	pair_open(&t, &p[4], 1, 50);
	assert_true(pair_cut(&p[4]));
	assert_false(pair_cut(&p[1]) || pair_cut(&p[3]));
	/* Over 4 in all: the longest waiting of any address; an answer restarts the wait. */
	conn_table_answered(&t, p[3].conn, 60);
	pair_open(&t, &p[5], 2, 70);
	pair_open(&t, &p[6], 3, 80);
	assert_false(pair_cut(&p[3]) || pair_cut(&p[5]) || pair_cut(&p[6]));
	pair_open(&t, &p[7], 4, 90);
	assert_true(pair_cut(&p[3]));
	assert_false(pair_cut(&p[1]) || pair_cut(&p[5]) || pair_cut(&p[6]) || pair_cut(&p[7]));
	assert_int_equal(t.cuts, 4);
	for (size_t i = 0; i < ARRAY_SIZE(p); i++)
		pair_close(&t, &p[i]);
	assert_null(t.head);
	conn_table_release(&t);
}

static void conn_deadline(void **state)
{
	struct conn_table t;
	struct pair p[3];

	(void)state;
	conn_table_init(&t, 10, 10, 100);
	assert_int_equal(conn_table_sweep(&t, 5), 105);
	pair_open(&t, &p[0], 1, 10);
	pair_open(&t, &p[1], 2, 50);
	pair_open(&t, &p[2], 3, 60);
	conn_table_answering(&t, p[2].conn);
	/* Nothing due yet: back at the first deadline. */
	assert_int_equal(conn_table_sweep(&t, 109), 110);
	assert_false(pair_cut(&p[0]));
	assert_int_equal(conn_table_sweep(&t, 110), 150);
	assert_true(pair_cut(&p[0]));
	assert_false(pair_cut(&p[1]) || pair_cut(&p[2]));
	/* Being answered: no deadline, however long; answered: a new one from then. */
	conn_table_answered(&t, p[1].conn, 140);
	assert_int_equal(conn_table_sweep(&t, 200), 240);
	assert_false(pair_cut(&p[1]) || pair_cut(&p[2]));
	conn_table_answered(&t, p[2].conn, 230);
	assert_int_equal(conn_table_sweep(&t, 240), 330);
	assert_true(pair_cut(&p[1]));
	assert_false(pair_cut(&p[2]));
	assert_int_equal(t.cuts, 2);
	for (size_t i = 0; i < ARRAY_SIZE(p); i++)
		pair_close(&t, &p[i]);
	conn_table_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(writer_exact),	      cmocka_unit_test(writer_escaping),
		cmocka_unit_test(writer_rejects),     cmocka_unit_test(counters),
		cmocka_unit_test(listen_addresses),   cmocka_unit_test(collect_rdma_tree),
		cmocka_unit_test(collect_host_tree),  cmocka_unit_test(web_config_accepted),
		cmocka_unit_test(web_config_refused), cmocka_unit_test(bcrypt_hashes),
		cmocka_unit_test(basic_auth_users),   cmocka_unit_test(conn_room),
		cmocka_unit_test(conn_deadline),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
