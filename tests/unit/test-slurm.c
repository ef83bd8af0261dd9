/*
 * Unit tests of the Slurm configuration (slurm/slurm_conf.h): --mem-reserve,
 * RealMemory's reserve, Gres of the GPUs found, the controller and its
 * address, what is refused; on the fixture trees' inventories.
 */
#include "sparkctl.h"

#include "test_util.h"

#include "slurm/slurm_conf.h"

static void mem_reserve(void **state)
{
	struct slurm_mem_reserve r;

	(void)state;
	assert_int_equal(slurm_mem_reserve_parse("8G", &r), 0);
	assert_int_equal(r.kind, SLURM_RESERVE_MIB);
	assert_int_equal(r.value, 8192);
	assert_int_equal(slurm_mem_reserve_parse("1.5GiB", &r), 0);
	assert_int_equal(r.value, 1536);
	assert_int_equal(slurm_mem_reserve_parse("512", &r), 0);
	assert_int_equal(r.value, 512);
	assert_int_equal(slurm_mem_reserve_parse("2048k", &r), 0);
	assert_int_equal(r.value, 2);
	assert_int_equal(slurm_mem_reserve_parse("1T", &r), 0);
	assert_int_equal(r.value, 1048576);
	assert_int_equal(slurm_mem_reserve_parse("0", &r), 0);
	assert_int_equal(r.value, 0);
	assert_int_equal(slurm_mem_reserve_parse("5%", &r), 0);
	assert_int_equal(r.kind, SLURM_RESERVE_RATIO);
	assert_int_equal(r.value, 5000);
	assert_int_equal(slurm_mem_reserve_parse("99.5%", &r), 0);
	assert_int_equal(r.value, 99500);
	static const char *const bad[] = { "",
					   "G",
					   "8Q",
					   "-1G",
					   "100%",
					   "8 G",
					   "1.2345G",
					   "5%%",
					   "8G8",
					   "1e3",
					   "99999999999999999999" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if (slurm_mem_reserve_parse(bad[i], &r) != -EINVAL)
			fail_msg("'%s' was taken", bad[i]);
}

/* The configuration of invs[0..n) with o, expecting r. */
static int build(struct inventory *invs, size_t n, const struct slurm_conf_options *o,
		 struct slurm_conf *c, struct strbuf *err)
{
	const struct inventory *p[4];

	for (size_t i = 0; i < n; i++)
		p[i] = &invs[i];
	strbuf_reset(err);
	return slurm_conf_build(p, n, o, c, err);
}

static void rename_node(struct inventory *inv, const char *name)
{
	free(inv->sys.hostname);
	inv->sys.hostname = xstrdup(name);
}

/* Two GB10s: one NodeName line; the reserve of unified memory; the controller's address. */
static void spark_pair(void **state)
{
	struct inventory invs[2];
	struct slurm_conf_options o = { 0 };
	struct slurm_conf c;
	struct strbuf err = STRBUF_INIT, text = STRBUF_INIT;

	(void)state;
	load_fixture("spark-1cable", &invs[0]);
	load_fixture("spark-gid-drift", &invs[1]);
	rename_node(&invs[0], "spark-01.lab");
	o.controller = "spark-02.lab";
	assert_int_equal(build(invs, 2, &o, &c, &err), 0);
	assert_int_equal(c.controller, 1);
	assert_string_equal(c.controller_addr, "192.168.1.52");
	assert_string_equal(c.plan, "pair");
	slurm_conf_nodes_text(&c, &text);
	assert_non_null(strstr(text.buf, "\nSlurmctldHost=spark-02(192.168.1.52)\n"));
	/* MemTotal 125327 MiB: 10% is 12532, above 8 GiB. */
	assert_non_null(strstr(text.buf, "\nNodeName=spark-[01-02] CPUs=20 Boards=1 "
					 "SocketsPerBoard=1 CoresPerSocket=20 ThreadsPerCore=1 "
					 "RealMemory=112795 Gres=gpu:gb10:1 "
					 "Features=fabric_pair,rails_2\n"));
	slurm_conf_release(&c);
	/* A reserve of its own; the controller by a name that is not there. */
	o = (struct slurm_conf_options){ .reserve = { SLURM_RESERVE_MIB, 1000 } };
	assert_int_equal(build(invs, 2, &o, &c, &err), 0);
	assert_string_equal(c.nodes[0].name, "spark-01");
	assert_non_null(strstr(c.nodes[0].desc, " RealMemory=124327 "));
	slurm_conf_release(&c);
	o.controller = "spark-0";
	assert_int_equal(build(invs, 2, &o, &c, &err), -EDOM);
	assert_string_equal(err.buf,
			    "--controller: 'spark-0' is not among the nodes (spark-01, spark-02)");
	slurm_conf_release(&c);
	o = (struct slurm_conf_options){ .partition = "a,b" };
	assert_int_equal(build(invs, 2, &o, &c, &err), -EDOM);
	slurm_conf_release(&c);
	for (size_t i = 0; i < 2; i++)
		inventory_release(&invs[i]);
	strbuf_release(&err);
	strbuf_release(&text);
}

/*
 * A node without a GPU nor a default route: no Gres, no GresTypes, 2% kept,
 * the controller named alone; refused: two nodes of one name, no CPUs, a
 * reserve that leaves nothing.
 */
static void no_gpu(void **state)
{
	struct inventory invs[2];
	struct slurm_conf_options o = { 0 };
	struct slurm_conf c;
	struct strbuf err = STRBUF_INIT, text = STRBUF_INIT;

	(void)state;
	load_fixture("spark-ofed", &invs[0]);
	for (size_t i = 0; i < invs[0].gpu.nr_gpus; i++) {
		free(invs[0].gpu.gpus[i].name);
		free(invs[0].gpu.gpus[i].uuid);
		free(invs[0].gpu.gpus[i].pci_bus_id);
	}
	free(invs[0].gpu.gpus);
	invs[0].gpu.gpus = NULL;
	invs[0].gpu.nr_gpus = 0;
	for (size_t i = 0; i < invs[0].nr_netdevs; i++)
		invs[0].netdevs[i].default_route = TRI_NO;
	assert_int_equal(build(invs, 1, &o, &c, &err), 0);
	assert_null(c.controller_addr);
	assert_false(c.gpus);
	slurm_conf_nodes_text(&c, &text);
	assert_non_null(strstr(text.buf, "\nSlurmctldHost=spark-dgx-1\n"));
	assert_null(strstr(text.buf, "\nGresTypes="));
	assert_null(strstr(text.buf, "Gres="));
	/* 2% of 125327 MiB is 2506. */
	assert_non_null(strstr(text.buf, " RealMemory=122821 Features="));
	strbuf_reset(&text);
	slurm_conf_gres_text(&c, &text);
	assert_string_equal(text.buf, SLURM_CONF_MARKER ": the GPUs of each node.\n"
							"# No node has a GPU.\n");
	slurm_conf_release(&c);

	load_fixture("spark-ofed", &invs[1]);
	assert_int_equal(build(invs, 2, &o, &c, &err), -EINVAL);
	assert_string_equal(err.buf, "two nodes are named spark-dgx-1 (nodes 1 and 2)");
	slurm_conf_release(&c);
	invs[1].sys.cpu.cpus = INV_UNKNOWN;
	rename_node(&invs[1], "b");
	assert_int_equal(build(invs, 2, &o, &c, &err), -EINVAL);
	assert_true(starts_with(err.buf, "b: the inventory has no CPU topology"));
	slurm_conf_release(&c);
	rename_node(&invs[1], "a b");
	assert_int_equal(build(invs, 2, &o, &c, &err), -EINVAL);
	assert_string_equal(err.buf, "the host name 'a b' cannot be a Slurm node name");
	slurm_conf_release(&c);
	o.reserve = (struct slurm_mem_reserve){ SLURM_RESERVE_MIB, 125327 };
	assert_int_equal(build(invs, 1, &o, &c, &err), -EINVAL);
	slurm_conf_release(&c);
	for (size_t i = 0; i < 2; i++)
		inventory_release(&invs[i]);
	strbuf_release(&err);
	strbuf_release(&text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mem_reserve),
		cmocka_unit_test(spark_pair),
		cmocka_unit_test(no_gpu),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
