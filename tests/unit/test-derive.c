/* Unit tests of inventory/derive.c: twins, NCCL's GID pick, RoCE MTU, fabric ports. */
#include "sparkctl.h"

#include <sys/socket.h>

#include "test_util.h"

#include "config/netplan_gen.h"
#include "inventory/derive.h"
#include "lib/host_text.h"
#include "lib/xalloc.h"

static const struct inv_rdma_dev *dev(const struct inventory *inv, const char *name)
{
	const struct inv_rdma_dev *d = inventory_rdma(inv, name);
	if (!d)
		fail_msg("no RDMA device %s", name);
	return d;
}

static const char *twin_name(const struct inventory *inv, const char *name)
{
	const struct inv_rdma_dev *t = rdma_twin(inv, dev(inv, name));
	return t ? t->name : "(none)";
}

static void twins_spark(void **state)
{
	struct inventory inv;
	char label[16];

	(void)state;
	load_fixture("spark-1cable", &inv);
	assert_string_equal(twin_name(&inv, "rocep1s0f1"), "roceP2p1s0f1");
	assert_string_equal(twin_name(&inv, "roceP2p1s0f1"), "rocep1s0f1");
	assert_string_equal(twin_name(&inv, "rocep1s0f0"), "roceP2p1s0f0");
	assert_string_equal(rdma_twin_label(&inv, dev(&inv, "rocep1s0f1"), label), "p1");
	inventory_release(&inv);
}

static void twins_ofed_names(void **state)
{
	struct inventory inv;

	(void)state;
	/* mlx5_0 and mlx5_2 are the halves of port 0: the names say nothing. */
	load_fixture("spark-ofed", &inv);
	assert_string_equal(twin_name(&inv, "mlx5_0"), "mlx5_2");
	assert_string_equal(twin_name(&inv, "mlx5_1"), "mlx5_3");
	assert_string_equal(twin_name(&inv, "mlx5_3"), "mlx5_1");
	inventory_release(&inv);
}

static void twins_none_on_server(void **state)
{
	struct inventory inv;

	(void)state;
	load_fixture("ib-server", &inv);
	for (size_t i = 0; i < inv.nr_rdma; i++)
		assert_null(rdma_twin(&inv, &inv.rdma[i]));
	inventory_release(&inv);
}

/* Twins without the netdev facts: same system image GUID and PCI function. */
static void twins_fallbacks(void **state)
{
	struct inventory inv;

	(void)state;
	load_fixture("spark-1cable", &inv);
	for (size_t i = 0; i < inv.nr_rdma; i++) {
		free_and_null(&inv.rdma[i].phys_port_name);
		free_and_null(&inv.rdma[i].phys_switch_id);
	}
	assert_string_equal(twin_name(&inv, "rocep1s0f1"), "roceP2p1s0f1");
	assert_string_equal(twin_name(&inv, "rocep1s0f0"), "roceP2p1s0f0");
	/* Different adapters are never twins. */
	free(inv.rdma[0].sys_image_guid);
	inv.rdma[0].sys_image_guid = xstrdup("1111:2222:3333:4444");
	assert_null(rdma_twin(&inv, &inv.rdma[0]));
	inventory_release(&inv);
}

/* A third candidate makes the pairing ambiguous: no twin rather than a guess. */
static void twins_ambiguous(void **state)
{
	struct inventory inv;

	(void)state;
	load_fixture("spark-1cable", &inv);
	struct inv_rdma_dev *d = &inv.rdma[0];
	for (size_t i = 0; i < inv.nr_rdma; i++)
		if (streq(inv.rdma[i].name, "rocep1s0f0"))
			d = &inv.rdma[i];
	assert_string_equal(d->name, "rocep1s0f0");
	/* Move rocep1s0f0 to a third domain and port p1. */
	free(d->pci_address);
	d->pci_address = xstrdup("0004:01:00.1");
	free(d->phys_port_name);
	d->phys_port_name = xstrdup("p1");
	assert_null(rdma_twin(&inv, dev(&inv, "rocep1s0f1")));
	inventory_release(&inv);
}

static int pick(const struct inventory *inv, const char *name)
{
	struct nccl_gid_params p;

	nccl_gid_params_from_inventory(&p, inv);
	return nccl_gid_pick(&dev(inv, name)->ports[0], &p);
}

static void set_env(struct inventory *inv, const char *key, const char *value)
{
	struct inv_setting *s = ARRAY_PUSH(inv->sys.environment, inv->sys.nr_environment);
	s->key = xstrdup(key);
	s->value = xstrdup(value);
}

static void gid_pick(void **state)
{
	struct inventory inv;

	(void)state;
	load_fixture("spark-1cable", &inv);
	assert_int_equal(pick(&inv, "rocep1s0f1"), 3);
	assert_int_equal(pick(&inv, "roceP2p1s0f1"), 3);
	inventory_release(&inv);

	/* An IPv6 address moves the IPv4 RoCE v2 GID to index 5 on one twin. */
	load_fixture("spark-gid-drift", &inv);
	assert_int_equal(pick(&inv, "rocep1s0f1"), 3);
	assert_int_equal(pick(&inv, "roceP2p1s0f1"), 5);
	inventory_release(&inv);

	load_fixture("ib-server", &inv);
	assert_int_equal(pick(&inv, "mlx5_0"), 0);
	inventory_release(&inv);
}

static void gid_pick_environment(void **state)
{
	struct inventory inv;

	(void)state;
	load_fixture("spark-gid-drift", &inv);
	set_env(&inv, "NCCL_IB_ROCE_VERSION_NUM", "1");
	assert_int_equal(pick(&inv, "roceP2p1s0f1"), 4);
	inventory_release(&inv);

	load_fixture("spark-gid-drift", &inv);
	set_env(&inv, "NCCL_IB_ADDR_FAMILY", "AF_INET6");
	/* The first valid IPv6 RoCE v2 GID: the ULA, not the link-local default. */
	assert_int_equal(pick(&inv, "roceP2p1s0f1"), 3);
	inventory_release(&inv);

	load_fixture("spark-gid-drift", &inv);
	set_env(&inv, "NCCL_IB_GID_INDEX", "3");
	assert_int_equal(pick(&inv, "roceP2p1s0f1"), 3); /* pinned, even though wrong */
	inventory_release(&inv);

	load_fixture("spark-1cable", &inv);
	set_env(&inv, "NCCL_IB_ADDR_RANGE", "10.0.0.0/8");
	/* No GID in range: NCCL stays on index 0. */
	assert_int_equal(pick(&inv, "rocep1s0f1"), 0);
	inventory_release(&inv);

	load_fixture("spark-1cable", &inv);
	set_env(&inv, "NCCL_IB_ADDR_RANGE", "192.168.177.0/24");
	assert_int_equal(pick(&inv, "rocep1s0f1"), 3);
	inventory_release(&inv);

	/* An empty value is ignored, as by NCCL; "0x2" is read as strtoll reads it. */
	load_fixture("spark-1cable", &inv);
	set_env(&inv, "NCCL_IB_GID_INDEX", "");
	assert_int_equal(pick(&inv, "rocep1s0f1"), 3);
	inventory_release(&inv);
	load_fixture("spark-1cable", &inv);
	set_env(&inv, "NCCL_IB_GID_INDEX", "0x2");
	assert_int_equal(pick(&inv, "rocep1s0f1"), 2);
	inventory_release(&inv);
}

static void gid_pick_without_ipv4(void **state)
{
	struct inventory inv;

	(void)state;
	/* A DOWN port has only its link-local defaults: NCCL would take index 0. */
	load_fixture("spark-1cable", &inv);
	assert_int_equal(pick(&inv, "rocep1s0f0"), 0);
	inventory_release(&inv);
}

static void roce_mtu(void **state)
{
	(void)state;
	assert_int_equal(roce_mtu_for_netdev_mtu(9000), 4096);
	assert_int_equal(roce_mtu_for_netdev_mtu(4192), 4096);
	assert_int_equal(roce_mtu_for_netdev_mtu(4191), 2048);
	assert_int_equal(roce_mtu_for_netdev_mtu(1500), 1024);
	assert_int_equal(roce_mtu_for_netdev_mtu(352), 256);
	assert_int_equal(roce_mtu_for_netdev_mtu(351), INV_UNKNOWN);
	assert_int_equal(roce_mtu_for_netdev_mtu(INV_UNKNOWN), INV_UNKNOWN);
}

static void fabric_ports(void **state)
{
	struct inventory inv;

	(void)state;
	load_fixture("spark-1cable", &inv);
	const struct inv_rdma_dev *up = dev(&inv, "rocep1s0f1"), *down = dev(&inv, "rocep1s0f0");
	assert_true(port_is_fabric(&inv, up, &up->ports[0]));
	assert_false(port_is_fabric(&inv, down, &down->ports[0]));
	assert_string_equal(rdma_port_netdev_name(up, &up->ports[0]), "enp1s0f1np1");
	assert_int_equal(port_rate_mbps(&up->ports[0]), 200000);
	inventory_release(&inv);

	load_fixture("spark-2cable", &inv);
	size_t fabric = 0;
	for (size_t i = 0; i < inv.nr_rdma; i++)
		fabric += port_is_fabric(&inv, &inv.rdma[i], &inv.rdma[i].ports[0]);
	assert_int_equal(fabric, 4);
	inventory_release(&inv);

	load_fixture("ib-server", &inv);
	assert_true(port_is_fabric(&inv, dev(&inv, "mlx5_3"), &dev(&inv, "mlx5_3")->ports[0]));
	inventory_release(&inv);
}

static void bdf(void **state)
{
	struct pci_bdf b;

	(void)state;
	assert_int_equal(parse_bdf("0002:01:00.1", &b), 0);
	assert_int_equal(b.domain, 2);
	assert_int_equal(b.bus, 1);
	assert_int_equal(b.function, 1);
	assert_int_equal(parse_bdf("000f:c1:1f.7", &b), 0);
	assert_int_equal(parse_bdf("0000:01:00", &b), -EINVAL);
	assert_int_equal(parse_bdf("0000:01:20.0", &b), -EINVAL);
	assert_int_equal(parse_bdf("0000:01:00.8", &b), -EINVAL);
	assert_int_equal(parse_bdf("1-1:1.0", &b), -EINVAL); /* a USB interface */
	assert_int_equal(parse_bdf("0000:01:00.1x", &b), -EINVAL);
}

/* Which interfaces of a plan another netplan file configures, and the lists it adds. */
static void netplan_overlaps(void **state)
{
	char name0[] = "enp1s0f1np1", name1[] = "enP2p1s0f1np1";
	struct inv_netdev nd[2] = { { .name = name0 }, { .name = name1 } };
	struct netplan_iface ifaces[2] = { { .netdev = &nd[0] }, { .netdev = &nd[1] } };
	struct netplan p = { .ifaces = ifaces, .nr_ifaces = 2 };
	struct netplan_overlap *o = NULL;
	size_t nr = 0;
	const char *text = "# enp1s0f1np1: only a comment\n"
			   "network:\n"
			   "  ethernets:\n"
			   "    \"enp1s0f1np1\":   # quoted\n"
			   "      dhcp4: true\n"
			   "      addresses: [10.0.0.1/24]\n"
			   "      nameservers:\n"
			   "        addresses: [10.0.0.53]\n"
			   "      routes:\n"
			   "        - to: default\n"
			   "          via: 10.0.0.254\n"
			   "    eno1:\n"
			   "      addresses: [10.1.0.1/24]\n"
			   "    rest:\n"
			   "      match:\n"
			   "        name: 'enP2*'\n"
			   "      mtu: 1500\n";

	(void)state;
	netplan_find_overlaps(&p, "/etc/netplan/10-a.yaml", false, text, &o, &nr);
	assert_int_equal(nr, 2);
	assert_string_equal(o[0].file, "/etc/netplan/10-a.yaml");
	assert_string_equal(o[0].iface, "enp1s0f1np1");
	assert_false(o[0].later);
	assert_false(o[0].by_match);
	/* Only the interface's own keys: not eno1's addresses, not the nameservers' list. */
	assert_string_equal(o[0].adds.buf, "addresses, nameservers, routes");
	assert_string_equal(o[1].iface, "enP2p1s0f1np1");
	assert_true(o[1].by_match);
	assert_string_equal(o[1].adds.buf, "");
	netplan_overlaps_release(o, nr);

	/* Names that only contain or resemble an interface's are other interfaces. */
	o = NULL;
	nr = 0;
	netplan_find_overlaps(&p, "/run/netplan/99.yaml", true,
			      "network:\n  ethernets:\n    enp1s0f1np10:\n      dhcp4: true\n"
			      "    x:\n      match:\n        name: enp1s0f0*\n"
			      "    enP2p1s0f1np1: {dhcp4: true}\n",
			      &o, &nr);
	assert_int_equal(nr, 1);
	assert_string_equal(o[0].iface, "enP2p1s0f1np1");
	assert_true(o[0].later);
	netplan_overlaps_release(o, nr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(twins_spark),
		cmocka_unit_test(twins_ofed_names),
		cmocka_unit_test(twins_none_on_server),
		cmocka_unit_test(twins_fallbacks),
		cmocka_unit_test(twins_ambiguous),
		cmocka_unit_test(gid_pick),
		cmocka_unit_test(gid_pick_environment),
		cmocka_unit_test(gid_pick_without_ipv4),
		cmocka_unit_test(roce_mtu),
		cmocka_unit_test(fabric_ports),
		cmocka_unit_test(bdf),
		cmocka_unit_test(netplan_overlaps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
