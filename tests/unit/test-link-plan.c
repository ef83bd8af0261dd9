/* Unit tests of bench/link_plan.c: paths between two captured DGX Sparks, and the tools' argv. */
#include "sparkctl.h"

#include <sys/socket.h>

#include "test_util.h"

#include "bench/link_plan.h"
#include "lib/xalloc.h"

/* Give netdev name of inv the address addr (its first IPv4 address). */
static void set_addr(struct inventory *inv, const char *name, const char *addr)
{
	for (size_t i = 0; i < inv->nr_netdevs; i++) {
		struct inv_netdev *nd = &inv->netdevs[i];
		if (!streq(nd->name, name))
			continue;
		assert_true(nd->nr_addrs > 0);
		assert_int_equal(nd->addrs[0].family, AF_INET);
		free(nd->addrs[0].address);
		nd->addrs[0].address = xstrdup(addr);
		return;
	}
	fail_msg("no netdev %s", name);
}

static struct inv_netdev *netdev(struct inventory *inv, const char *name)
{
	for (size_t i = 0; i < inv->nr_netdevs; i++)
		if (streq(inv->netdevs[i].name, name))
			return &inv->netdevs[i];
	fail_msg("no netdev %s", name);
	return NULL;
}

/* Two Sparks joined by one cable: node b is the capture with .12 addresses. */
static void two_sparks(struct inventory *a, struct inventory *b)
{
	load_fixture("spark-1cable", a);
	load_fixture("spark-1cable", b);
	set_addr(b, "enp1s0f1np1", "192.168.177.12");
	set_addr(b, "enP2p1s0f1np1", "192.168.178.12");
}

static void argv_is(const struct strvec *v, const char *want)
{
	struct strbuf got = STRBUF_INIT;
	for (size_t i = 0; i < v->nr; i++)
		strbuf_addf(&got, "%s%s", i ? " " : "", v->v[i]);
	assert_string_equal(got.buf, want);
	strbuf_release(&got);
}

static void one_cable(void **state)
{
	struct inventory a, b;
	struct link_plan p;

	(void)state;
	two_sparks(&a, &b);
	link_plan_build(&a, &b, &p);
	assert_false(p.infiniband);
	assert_int_equal(p.nr_paths, 2);
	assert_int_equal(p.nr_groups, 1);
	const struct link_path *x = &p.paths[0], *y = &p.paths[1];
	assert_string_equal(x->a_dev, "rocep1s0f1");
	assert_string_equal(x->b_dev, "rocep1s0f1");
	assert_string_equal(y->a_dev, "roceP2p1s0f1");
	assert_string_equal(y->b_dev, "roceP2p1s0f1");
	for (int i = 0; i < 2; i++) {
		const struct link_path *q = &p.paths[i];
		assert_int_equal(q->group, 0);
		assert_string_equal(q->label, "p1");
		assert_int_equal(q->a_port, 1);
		assert_int_equal(q->a_gid, 3);
		assert_int_equal(q->b_gid, 3);
		/* Each twin is half of the 200 Gb/s port; TCP goes by the netdev's speed. */
		assert_true(q->rdma_line_gbps == 100.0);
		assert_true(q->tcp_line_gbps == 200.0);
		assert_int_equal(q->a_mtu, 9000);
		assert_int_equal(q->b_mtu, 9000);
	}
	assert_string_equal(x->a_if, "enp1s0f1np1");
	assert_string_equal(x->a_addr, "192.168.177.11");
	assert_string_equal(x->b_addr, "192.168.177.12");
	assert_string_equal(y->b_if, "enP2p1s0f1np1");
	assert_string_equal(y->b_addr, "192.168.178.12");
	link_plan_release(&p);

	/* The slower end sets the line rate; the MTUs are each end's own. */
	netdev(&b, "enP2p1s0f1np1")->speed_mbps = 100000;
	netdev(&b, "enP2p1s0f1np1")->mtu = 1500;
	link_plan_build(&a, &b, &p);
	assert_true(p.paths[1].tcp_line_gbps == 100.0);
	assert_int_equal(p.paths[1].a_mtu, 9000);
	assert_int_equal(p.paths[1].b_mtu, 1500);
	link_plan_release(&p);
	inventory_release(&a);
	inventory_release(&b);
}

/* Paths exist only between rails on one subnet. */
static void subnets(void **state)
{
	struct inventory a, b;
	struct link_plan p;

	(void)state;
	two_sparks(&a, &b);
	set_addr(&b, "enP2p1s0f1np1", "10.9.9.9");
	link_plan_build(&a, &b, &p);
	assert_int_equal(p.nr_paths, 1);
	assert_int_equal(p.nr_groups, 1);
	assert_string_equal(p.paths[0].a_dev, "rocep1s0f1");
	link_plan_release(&p);

	set_addr(&b, "enp1s0f1np1", "10.9.9.10");
	link_plan_build(&a, &b, &p);
	assert_int_equal(p.nr_paths, 0);
	assert_int_equal(p.nr_groups, 0);
	link_plan_release(&p);
	inventory_release(&a);
	inventory_release(&b);
}

static void tool_argv(void **state)
{
	struct inventory a, b;
	struct link_plan p;
	struct link_tool_options o = {
		.duration_s = 7, .qps = 4, .size = 1048576, .streams = 16, .b_host = "spark2"
	};
	struct strvec v = STRVEC_INIT;

	(void)state;
	two_sparks(&a, &b);
	link_plan_build(&a, &b, &p);
	link_tool_server(LINK_TOOL_RDMA_BW, &p.paths[1], 18516, &o, &v);
	argv_is(&v,
		"ib_write_bw -d roceP2p1s0f1 -i1 -x3 -p18516 -q4 -s1048576 -D7 --report_gbits -F");
	strvec_clear(&v);
	link_tool_client(LINK_TOOL_RDMA_BW, &p.paths[1], 18516, &o, &v);
	argv_is(&v,
		"ib_write_bw -d roceP2p1s0f1 -i1 -x3 -p18516 -q4 -s1048576 -D7 --report_gbits -F "
		"192.168.178.12");
	strvec_clear(&v);
	link_tool_server(LINK_TOOL_RDMA_LAT, &p.paths[0], 18515, &o, &v);
	argv_is(&v, "ib_write_lat -d rocep1s0f1 -i1 -x3 -p18515 -F");
	strvec_clear(&v);
	link_tool_client(LINK_TOOL_RDMA_LAT, &p.paths[0], 18515, &o, &v);
	argv_is(&v, "ib_write_lat -d rocep1s0f1 -i1 -x3 -p18515 -F 192.168.177.12");
	strvec_clear(&v);
	link_tool_server(LINK_TOOL_TCP, &p.paths[0], 5201, &o, &v);
	argv_is(&v, "iperf3 -s -1 -p5201 -B 192.168.177.12");
	strvec_clear(&v);
	link_tool_client(LINK_TOOL_TCP, &p.paths[0], 5201, &o, &v);
	argv_is(&v, "iperf3 -c 192.168.177.12 -p5201 -B 192.168.177.11 -t7 -P16 -J");
	strvec_clear(&v);
	assert_string_equal(link_tool_package(LINK_TOOL_RDMA_LAT), "perftest");
	assert_string_equal(link_tool_package(LINK_TOOL_TCP), "iperf3");
	link_plan_release(&p);
	inventory_release(&a);
	inventory_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_cable),
		cmocka_unit_test(subnets),
		cmocka_unit_test(tool_argv),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
