/* Unit tests of lib/host_text.c on the kernel's exact formats. */
#include "sparkctl.h"

#include "test_util.h"

#include "lib/host_text.h"
#include "lib/xalloc.h"

static void port_state(void **state)
{
	int code;
	char *name = NULL;

	(void)state;
	assert_int_equal(parse_port_state("4: ACTIVE", &code, &name), 0);
	assert_int_equal(code, 4);
	assert_string_equal(name, "ACTIVE");
	free(name);
	assert_int_equal(parse_port_state("7: Phy Test", &code, &name), 0);
	assert_int_equal(code, 7);
	assert_string_equal(name, "Phy Test");
	free(name);
	assert_int_equal(parse_port_state("4: PortConfigurationTraining", &code, &name), 0);
	free(name);
	/* Not the kernel's format. */
	assert_int_equal(parse_port_state("ACTIVE", &code, &name), -EINVAL);
	assert_int_equal(parse_port_state("4:ACTIVE", &code, &name), -EINVAL);
	assert_int_equal(parse_port_state("4: ", &code, &name), -EINVAL);
	assert_int_equal(parse_port_state(": ACTIVE", &code, &name), -EINVAL);
	assert_int_equal(parse_port_state("x: ACTIVE", &code, &name), -EINVAL);
	assert_int_equal(parse_port_state("999: ACTIVE", &code, &name), -EINVAL);
	assert_int_equal(parse_port_state("4: ACT\x01IVE", &code, &name), -EINVAL);
	assert_int_equal(parse_port_state("", &code, &name), -EINVAL);
}

static void port_rate(void **state)
{
	int64_t mbps;

	(void)state;
	assert_int_equal(parse_port_rate("200 Gb/sec (2X NDR)", &mbps), 0);
	assert_int_equal(mbps, 200000);
	assert_int_equal(parse_port_rate("40 Gb/sec (4X QDR)", &mbps), 0);
	assert_int_equal(mbps, 40000);
	assert_int_equal(parse_port_rate("2.5 Gb/sec (1X SDR)", &mbps), 0);
	assert_int_equal(mbps, 2500);
	assert_int_equal(parse_port_rate("400 Gb/sec (4X NDR)", &mbps), 0);
	assert_int_equal(mbps, 400000);
	assert_int_equal(parse_port_rate("fast", &mbps), -EINVAL);
	assert_int_equal(parse_port_rate("200 Mb/sec (2X NDR)", &mbps), -EINVAL);
	assert_int_equal(parse_port_rate("-200 Gb/sec", &mbps), -EINVAL);
	assert_int_equal(parse_port_rate(" Gb/sec", &mbps), -EINVAL);
	assert_int_equal(parse_port_rate("99999999999999999999 Gb/sec", &mbps), -EINVAL);
}

static void gids(void **state)
{
	uint8_t raw[16];
	char text[40], v4[16];

	(void)state;
	assert_int_equal(parse_gid("0000:0000:0000:0000:0000:ffff:0a64:b801", raw), 0);
	assert_true(gid_ipv4(raw, v4));
	assert_string_equal(v4, "10.100.184.1");
	format_gid(raw, text);
	assert_string_equal(text, "0000:0000:0000:0000:0000:ffff:0a64:b801");

	assert_int_equal(parse_gid("fe80:0000:0000:0000:4ebb:47ff:fe82:0e6a", raw), 0);
	assert_false(gid_ipv4(raw, v4));
	assert_false(gid_is_zero(raw));
	format_gid(raw, text);
	assert_string_equal(text, "fe80:0000:0000:0000:4ebb:47ff:fe82:0e6a");

	assert_int_equal(parse_gid("0000:0000:0000:0000:0000:0000:0000:0000", raw), 0);
	assert_true(gid_is_zero(raw));
	/* Other text forms of IPv6 are accepted too. */
	assert_int_equal(parse_gid("::ffff:192.168.177.11", raw), 0);
	assert_true(gid_ipv4(raw, v4));
	assert_string_equal(v4, "192.168.177.11");

	assert_int_equal(parse_gid("", raw), -EINVAL);
	assert_int_equal(parse_gid("fe80:0000", raw), -EINVAL);
	assert_int_equal(parse_gid("zzzz:0000:0000:0000:0000:0000:0000:0000", raw), -EINVAL);
	assert_int_equal(parse_gid("0000:0000:0000:0000:0000:0000:0000:0000:0000", raw), -EINVAL);
}

static void gid_types(void **state)
{
	(void)state;
	assert_int_equal(gid_type_version("IB/RoCE v1"), 1);
	assert_int_equal(gid_type_version("RoCE v1"), 1);
	assert_int_equal(gid_type_version("RoCE v2"), 2);
	assert_int_equal(gid_type_version("RoCE v3"), 0);
	assert_int_equal(gid_type_version(""), 0);
	assert_int_equal(gid_type_version(NULL), 0);
}

static void link_speed(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(parse_link_speed("32.0 GT/s PCIe", &v), 0);
	assert_int_equal(v, 32000);
	assert_int_equal(parse_link_speed("2.5 GT/s PCIe", &v), 0);
	assert_int_equal(v, 2500);
	assert_int_equal(parse_link_speed("8 GT/s", &v), 0); /* before Linux 5.2 */
	assert_int_equal(v, 8000);
	assert_int_equal(parse_link_speed("Unknown", &v), -EINVAL);
	assert_int_equal(parse_link_speed("32.0 GT/s PCIx", &v), -EINVAL);
	assert_int_equal(parse_link_speed("32.0", &v), -EINVAL);
	assert_int_equal(parse_link_speed("1.2345 GT/s", &v), -EINVAL);
}

static const char aer_text[] = "Undefined 0\nDLP 0\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 2\n"
			       "TOTAL_ERR_FATAL 3\n";

static void aer(void **state)
{
	int64_t v;

	(void)state;
	assert_int_equal(parse_aer_total(aer_text, "TOTAL_ERR_FATAL", &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(parse_aer_total(aer_text, "TOTAL_ERR_COR", &v), -EINVAL);
	assert_int_equal(parse_aer_total("TOTAL_ERR_FATAL x\n", "TOTAL_ERR_FATAL", &v), -EINVAL);
	assert_int_equal(parse_aer_total("", "TOTAL_ERR_FATAL", &v), -EINVAL);
}

static void meminfo(void **state)
{
	const char *text = "MemTotal:       128335740 kB\nMemAvailable:   121583928 kB\n"
			   "CmaTotal:              0 kB\nHugePages_Total:       0\n";
	int64_t v;

	(void)state;
	assert_int_equal(parse_meminfo(text, "MemTotal", &v), 0);
	assert_int_equal(v, 128335740LL * 1024);
	assert_int_equal(parse_meminfo(text, "CmaTotal", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(parse_meminfo(text, "MemFree", &v), -EINVAL);
	assert_int_equal(parse_meminfo(text, "HugePages_Total", &v), -EINVAL); /* no kB */
	/* "Mem" must not match "MemTotal". */
	assert_int_equal(parse_meminfo(text, "Mem", &v), -EINVAL);
	assert_int_equal(parse_meminfo("MemTotal: 99999999999999999999 kB\n", "MemTotal", &v),
			 -EINVAL);
}

static void modules(void **state)
{
	const char *text = "mlx5_ib 516096 0 - Live 0x0000000000000000\n"
			   "ib_uverbs 200704 2 rdma_ucm,mlx5_ib, Live 0x0000000000000000\n";

	(void)state;
	assert_true(modules_contains(text, "mlx5_ib"));
	assert_true(modules_contains(text, "ib_uverbs"));
	assert_false(modules_contains(text, "mlx5"));
	assert_false(modules_contains(text, "rdma_ucm")); /* only as a user of another */
	assert_false(modules_contains("", "mlx5_ib"));
}

static void os_release(void **state)
{
	const char *text = "PRETTY_NAME=\"Ubuntu 24.04.3 LTS\"\nID=ubuntu\nVERSION_ID=\"24.04\"\n"
			   "NAME='Debian \"x\"'\nQUOTED=\"a\\\"b\"\n";
	char *v = NULL;

	(void)state;
	assert_int_equal(parse_os_release(text, "PRETTY_NAME", &v), 0);
	assert_string_equal(v, "Ubuntu 24.04.3 LTS");
	free(v);
	assert_int_equal(parse_os_release(text, "ID", &v), 0);
	assert_string_equal(v, "ubuntu");
	free(v);
	assert_int_equal(parse_os_release(text, "NAME", &v), 0);
	assert_string_equal(v, "Debian \"x\"");
	free(v);
	assert_int_equal(parse_os_release(text, "QUOTED", &v), 0);
	assert_string_equal(v, "a\"b");
	free(v);
	assert_int_equal(parse_os_release(text, "VERSION", &v), -ENOENT);
}

static void nvidia_version(void **state)
{
	char *v = NULL;
	int open;

	(void)state;
	assert_int_equal(parse_nvidia_version("NVRM version: NVIDIA UNIX Open Kernel Module for "
					      "aarch64  580.95.05  Release Build  (dvs-builder@U22)"
					      "  Wed Sep 10 06:16:16 UTC 2025\nGCC version: x\n",
					      &v, &open),
			 0);
	assert_string_equal(v, "580.95.05");
	assert_int_equal(open, 1);
	free(v);
	assert_int_equal(parse_nvidia_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  "
					      "550.135  Fri Jan 10 20:00:00 UTC 2025\n",
					      &v, &open),
			 0);
	assert_string_equal(v, "550.135");
	assert_int_equal(open, 0);
	free(v);
	assert_int_equal(parse_nvidia_version("NVRM version: NVIDIA UNIX Open Kernel Module  "
					      "570.86.15  Release Build\n",
					      &v, &open),
			 0);
	assert_string_equal(v, "570.86.15");
	free(v);
	assert_int_equal(parse_nvidia_version("garbage\n", &v, &open), -EINVAL);
	assert_int_equal(parse_nvidia_version("NVRM version: NVIDIA Kernel Module  x\n", &v, &open),
			 -EINVAL);
	assert_int_equal(parse_nvidia_version("", &v, &open), -EINVAL);
}

static void nccl_conf(void **state)
{
	char *k = NULL, *v = NULL;

	(void)state;
	assert_int_equal(parse_nccl_conf_line("NCCL_IB_HCA=mlx5_0", &k, &v), 0);
	assert_string_equal(k, "NCCL_IB_HCA");
	assert_string_equal(v, "mlx5_0");
	free(k);
	free(v);
	/* As NCCL: the value is everything after the first '=', untrimmed. */
	assert_int_equal(parse_nccl_conf_line("NCCL_X= a=b ", &k, &v), 0);
	assert_string_equal(k, "NCCL_X");
	assert_string_equal(v, " a=b ");
	free(k);
	free(v);
	assert_int_equal(parse_nccl_conf_line("# NCCL_IB_HCA=mlx5_0", &k, &v), -ENOENT);
	assert_int_equal(parse_nccl_conf_line("no equals sign", &k, &v), -ENOENT);
	assert_int_equal(parse_nccl_conf_line("", &k, &v), -ENOENT);
}

static void add_name(const char *ifname, void *data)
{
	struct strbuf *sb = data;
	strbuf_addf(sb, "%s;", ifname);
}

static void default_routes(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	const char *text = "Iface\tDestination\tGateway "
			   "\tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
			   "enP7s7\t00000000\t0101A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
			   "enP7s7\t0001A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0\n"
			   "wlP9s9\t00000000\t0101A8C0\t0002\t0\t0\t600\t00000000\t0\t0\t0\n";

	(void)state;
	assert_int_equal(parse_default_routes(text, add_name, &sb), 0);
	assert_string_equal(sb.buf, "enP7s7;"); /* wlP9s9's route is not up */
	assert_int_equal(parse_default_routes("garbage", add_name, &sb), -EINVAL);
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(port_state), cmocka_unit_test(port_rate),
		cmocka_unit_test(gids),	      cmocka_unit_test(gid_types),
		cmocka_unit_test(link_speed), cmocka_unit_test(aer),
		cmocka_unit_test(meminfo),    cmocka_unit_test(modules),
		cmocka_unit_test(os_release), cmocka_unit_test(nvidia_version),
		cmocka_unit_test(nccl_conf),  cmocka_unit_test(default_routes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
