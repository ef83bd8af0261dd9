/* Unit tests of storage/nvmet.c: the configfs operations planned for a target and its teardown. */
#include "sparkctl.h"

#include "test_util.h"

#include "lib/xalloc.h"
#include "storage/nvmet.h"

#define NQN  "nqn.2026-01.org.example:shared"
#define HOST "nqn.2014-08.org.nvmexpress:uuid:1"
#define CFS  "sys/kernel/config/nvmet"

/* The operations as lines "KIND path [value]", for comparing whole plans. */
static void ops_lines(const struct nvmet_ops *ops, struct strbuf *out)
{
	static const char *const kinds[] = { "modprobe", "mkdir",  "write", "symlink",
					     "rmdir",	 "unlink", "wait" };

	strbuf_reset(out);
	for (size_t i = 0; i < ops->nr; i++)
		strbuf_addf(out, "%s %s%s%s\n", kinds[ops->v[i].kind], ops->v[i].path,
			    ops->v[i].value ? " " : "", ops->v[i].value ? ops->v[i].value : "");
}

static struct nvmet_port_state *add_port(struct nvmet_state *st, const char *id, const char *traddr,
					 const char *trsvcid, const char *subsystem)
{
	struct nvmet_port_state *p = ARRAY_PUSH(st->ports, st->nr_ports);

	p->id = xstrdup(id);
	p->trtype = xstrdup("tcp");
	p->traddr = xstrdup(traddr);
	p->trsvcid = xstrdup(trsvcid);
	strvec_init(&p->subsystems);
	if (subsystem)
		strvec_push(&p->subsystems, subsystem);
	return p;
}

static void plan_device(void **state)
{
	struct nvmet_state st;
	struct nvmet_ops ops;
	struct strbuf err = STRBUF_INIT, lines = STRBUF_INIT;
	struct nvmet_request req = {
		.nqn = NQN, .device = "/dev/nvme1n1", .traddr = "198.18.0.1", .trsvcid = 4420
	};

	(void)state;
	nvmet_state_init(&st);
	st.nvmet_present = st.nvmet_tcp_loaded = true;
	nvmet_ops_init(&ops);
	assert_int_equal(nvmet_plan_create(&req, &st, &ops, &err), 0);
	ops_lines(&ops, &lines);
	assert_string_equal(lines.buf, "mkdir " CFS "/subsystems/" NQN "\n"
				       "write " CFS "/subsystems/" NQN "/attr_allow_any_host 1\n"
				       "mkdir " CFS "/subsystems/" NQN "/namespaces/1\n"
				       "write " CFS "/subsystems/" NQN
				       "/namespaces/1/device_path /dev/nvme1n1\n"
				       "write " CFS "/subsystems/" NQN "/namespaces/1/enable 1\n"
				       "mkdir " CFS "/ports/1\n"
				       "write " CFS "/ports/1/addr_trtype tcp\n"
				       "write " CFS "/ports/1/addr_adrfam ipv4\n"
				       "write " CFS "/ports/1/addr_traddr 198.18.0.1\n"
				       "write " CFS "/ports/1/addr_trsvcid 4420\n"
				       "symlink " CFS "/ports/1/subsystems/" NQN " /" CFS
				       "/subsystems/" NQN "\n");
	/* Enabling is undone by disabling; a plain attribute is not written back. */
	assert_string_equal(ops.v[4].undo, "0");
	assert_null(ops.v[3].undo);
	nvmet_ops_release(&ops);
	nvmet_state_release(&st);
	strbuf_release(&err);
	strbuf_release(&lines);
}

static void plan_null_blk_modules_hosts(void **state)
{
	struct nvmet_state st;
	struct nvmet_ops ops;
	struct strvec hosts = STRVEC_INIT;
	struct strbuf err = STRBUF_INIT, name = STRBUF_INIT, want = STRBUF_INIT;
	struct nvmet_request req = { .nqn = NQN,
				     .null_blk_mib = 64,
				     .traddr = "fd00::1",
				     .trsvcid = 4421,
				     .allow_hosts = &hosts,
				     .port_id = 0 };

	(void)state;
	nvmet_state_init(&st);
	strvec_push(&hosts, HOST);
	nvmet_ops_init(&ops);
	add_port(&st, "1", "198.18.0.1", "4420", "nqn.2026-01.org.example:other");
	add_port(&st, "2", "198.18.0.2", "4420", NULL);
	assert_int_equal(nvmet_plan_create(&req, &st, &ops, &err), 0);
	nvmet_null_blk_name(NQN, &name);
	assert_true(starts_with(name.buf, NVMET_NULLB_PREFIX));
	assert_true(name.len < 32); /* a disk name */
	/* Modules first (configfs lacks both), then the memory-backed device before its use. */
	assert_int_equal(ops.v[0].kind, NVMET_OP_MODPROBE);
	assert_string_equal(ops.v[0].value, "nvmet-tcp");
	assert_string_equal(ops.v[1].value, "null_blk nr_devices=0");
	strbuf_addf(&want, "sys/kernel/config/nullb/%s/memory_backed", name.buf);
	assert_string_equal(ops.v[5].path, want.buf);
	assert_string_equal(ops.v[5].value, "1");
	strbuf_reset(&want);
	strbuf_addf(&want, "sys/kernel/config/nullb/%s/power", name.buf);
	assert_string_equal(ops.v[6].path, want.buf);
	assert_string_equal(ops.v[6].undo, "0");
	/* The device is waited for before a namespace opens it. */
	strbuf_reset(&want);
	strbuf_addf(&want, "dev/%s", name.buf);
	assert_int_equal(ops.v[7].kind, NVMET_OP_WAIT_DEVICE);
	assert_string_equal(ops.v[7].path, want.buf);
	/* Only the listed host, and the next free port, of the IPv6 family. */
	assert_string_equal(ops.v[9].value, "0");
	assert_string_equal(ops.v[10].path, CFS "/hosts/" HOST);
	assert_int_equal(ops.v[11].kind, NVMET_OP_SYMLINK);
	assert_string_equal(ops.v[11].value, "/" CFS "/hosts/" HOST);
	strbuf_reset(&want);
	strbuf_addf(&want, "/dev/%s", name.buf);
	assert_string_equal(ops.v[13].value, want.buf);
	assert_string_equal(ops.v[15].path, CFS "/ports/3");
	assert_string_equal(ops.v[17].value, "ipv6");
	nvmet_ops_release(&ops);
	/* A host some subsystem already has is not made again. */
	strvec_push(&st.hosts, HOST);
	st.nvmet_present = st.nullb_present = st.nvmet_tcp_loaded = true;
	assert_int_equal(nvmet_plan_create(&req, &st, &ops, &err), 0);
	assert_int_equal(ops.v[0].kind, NVMET_OP_MKDIR);
	for (size_t i = 0; i < ops.nr; i++)
		assert_false(ops.v[i].kind == NVMET_OP_MKDIR &&
			     streq(ops.v[i].path, CFS "/hosts/" HOST));
	nvmet_ops_release(&ops);
	nvmet_state_release(&st);
	strvec_clear(&hosts);
	strbuf_release(&err);
	strbuf_release(&name);
	strbuf_release(&want);
}

static void plan_refusals(void **state)
{
	struct nvmet_state st;
	struct nvmet_ops ops;
	struct strbuf err = STRBUF_INIT;
	struct nvmet_request req = {
		.nqn = NQN, .device = "/dev/x", .traddr = "198.18.0.1", .trsvcid = 4420
	};

	(void)state;
	nvmet_state_init(&st);
	nvmet_ops_init(&ops);
	add_port(&st, "1", "198.18.0.1", "4420", "nqn.2026-01.org.example:other");
	assert_int_equal(nvmet_plan_create(&req, &st, &ops, &err), -EADDRINUSE);
	assert_string_equal(err.buf, "198.18.0.1:4420 is served already by nvmet port 1 "
				     "(subsystem nqn.2026-01.org.example:other)");
	assert_int_equal(ops.nr, 0);
	req.trsvcid = 4421;
	req.port_id = 1;
	strbuf_reset(&err);
	assert_int_equal(nvmet_plan_create(&req, &st, &ops, &err), -EEXIST);
	assert_true(starts_with(err.buf, "nvmet port 1 is used already"));
	req.port_id = 0;
	st.subsystem_present = true;
	strbuf_reset(&err);
	assert_int_equal(nvmet_plan_create(&req, &st, &ops, &err), -EEXIST);
	st.subsystem_present = false;
	req.nqn = "nqn with spaces";
	assert_int_equal(nvmet_plan_create(&req, &st, &ops, &err), -EINVAL);
	req.nqn = "nqn.2026-01.org.example/shared"; /* a configfs name has no '/' */
	assert_int_equal(nvmet_plan_create(&req, &st, &ops, &err), -EINVAL);
	req.nqn = NQN;
	req.traddr = "spark1";
	assert_int_equal(nvmet_plan_create(&req, &st, &ops, &err), -EINVAL);
	assert_int_equal(ops.nr, 0);
	nvmet_ops_release(&ops);
	nvmet_state_release(&st);
	strbuf_release(&err);
}

static void plan_remove(void **state)
{
	struct nvmet_state st;
	struct nvmet_ops ops;
	struct nvmet_namespace_state *ns;
	struct strbuf lines = STRBUF_INIT, name = STRBUF_INIT, want = STRBUF_INIT;

	(void)state;
	nvmet_state_init(&st);
	nvmet_ops_init(&ops);
	/* Nothing there: nothing to do. */
	nvmet_plan_remove(NQN, &st, &ops);
	assert_int_equal(ops.nr, 0);
	nvmet_null_blk_name(NQN, &name);
	st.subsystem_present = true;
	add_port(&st, "1", "198.18.0.1", "4420", NQN);
	strvec_push(&add_port(&st, "2", "198.18.0.2", "4420", NQN)->subsystems, "nqn.x:y");
	ns = ARRAY_PUSH(st.namespaces, st.nr_namespaces);
	ns->nsid = xstrdup("1");
	ns->device_path = xasprintf("/dev/%s", name.buf);
	strvec_push(&st.nullb, name.buf);
	strvec_push(&st.allowed_hosts, HOST);
	strvec_push(&st.allowed_hosts, "nqn.h2");
	strvec_push(&st.hosts, HOST);
	strvec_push(&st.hosts, "nqn.h2");
	strvec_push(&st.hosts_allowed_elsewhere, "nqn.h2");
	nvmet_plan_remove(NQN, &st, &ops);
	ops_lines(&ops, &lines);
	strbuf_addf(&want,
		    "unlink " CFS "/ports/1/subsystems/" NQN "\n"
		    "rmdir " CFS "/ports/1\n"
		    "unlink " CFS "/ports/2/subsystems/" NQN "\n"
		    "write " CFS "/subsystems/" NQN "/namespaces/1/enable 0\n"
		    "rmdir " CFS "/subsystems/" NQN "/namespaces/1\n"
		    "unlink " CFS "/subsystems/" NQN "/allowed_hosts/" HOST "\n"
		    "rmdir " CFS "/hosts/" HOST "\n"
		    "unlink " CFS "/subsystems/" NQN "/allowed_hosts/nqn.h2\n"
		    "rmdir " CFS "/subsystems/" NQN "\n"
		    "write sys/kernel/config/nullb/%s/power 0\n"
		    "rmdir sys/kernel/config/nullb/%s\n",
		    name.buf, name.buf);
	assert_string_equal(lines.buf, want.buf);
	/* A device sparkctl did not make is left alone. */
	nvmet_ops_release(&ops);
	free(ns->device_path);
	ns->device_path = xstrdup("/dev/nullb0");
	strvec_push(&st.nullb, "nullb0");
	nvmet_plan_remove(NQN, &st, &ops);
	for (size_t i = 0; i < ops.nr; i++)
		assert_null(strstr(ops.v[i].path, "nullb/"));
	nvmet_ops_release(&ops);
	nvmet_state_release(&st);
	strbuf_release(&lines);
	strbuf_release(&name);
	strbuf_release(&want);
}

static void addresses_and_sizes(void **state)
{
	struct strbuf err = STRBUF_INIT;
	char *addr = NULL;
	unsigned port;
	uint64_t mib;

	(void)state;
	assert_int_equal(nvmet_split_addr_port("198.18.0.1", 4420, &addr, &port, &err), 0);
	assert_string_equal(addr, "198.18.0.1");
	assert_int_equal(port, 4420);
	free(addr);
	assert_int_equal(nvmet_split_addr_port("198.18.0.1:4421", 4420, &addr, &port, &err), 0);
	assert_int_equal(port, 4421);
	free(addr);
	assert_int_equal(nvmet_split_addr_port("[fd00::1]:4422", 4420, &addr, &port, &err), 0);
	assert_string_equal(addr, "fd00::1");
	assert_int_equal(port, 4422);
	free(addr);
	assert_int_equal(nvmet_split_addr_port("fd00::1", 4420, &addr, &port, &err), 0);
	assert_string_equal(addr, "fd00::1");
	assert_int_equal(port, 4420);
	free(addr);
	assert_int_equal(nvmet_split_addr_port("198.18.0.1:0", 4420, &addr, &port, &err), -EINVAL);
	assert_int_equal(nvmet_split_addr_port("[fd00::1", 4420, &addr, &port, &err), -EINVAL);
	assert_int_equal(nvmet_split_addr_port(":4420", 4420, &addr, &port, &err), -EINVAL);
	assert_int_equal(nvmet_parse_size_mib("64M", &mib), 0);
	assert_int_equal(mib, 64);
	assert_int_equal(nvmet_parse_size_mib("2G", &mib), 0);
	assert_int_equal(mib, 2048);
	assert_int_equal(nvmet_parse_size_mib("100", &mib), 0);
	assert_int_equal(mib, 100);
	assert_int_equal(nvmet_parse_size_mib("0M", &mib), -EINVAL);
	assert_int_equal(nvmet_parse_size_mib("1K", &mib), -EINVAL);
	assert_int_equal(nvmet_parse_size_mib("M", &mib), -EINVAL);
	assert_int_equal(nvmet_parse_size_mib("99999999999T", &mib), -EINVAL);
	strbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plan_device),
		cmocka_unit_test(plan_null_blk_modules_hosts),
		cmocka_unit_test(plan_refusals),
		cmocka_unit_test(plan_remove),
		cmocka_unit_test(addresses_and_sizes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
