/*
 * Unit tests of storage/nvme_cli.c on nvme-cli 2.3's output as captured in the
 * VM (tests/fixtures/storage/), and an older form (tests/fixtures/nvme-cli/).
 */
#include "sparkctl.h"

#include "test_util.h"

#include "storage/nvme_cli.h"

#define NQN "nqn.2026-11.io.sparkctl:shared"

static void fixture(const char *name, struct strbuf *text)
{
	struct strbuf path = STRBUF_INIT;

	strbuf_reset(text);
	strbuf_addf(&path, "%s/%s", FIXTURES_DIR, name);
	assert_int_equal(strbuf_read_path(text, path.buf, 1 << 20), 0);
	strbuf_release(&path);
}

static void check_log(const struct nvme_discovery_log *log)
{
	assert_int_equal(log->genctr, 2);
	assert_int_equal(log->nr, 2);
	assert_string_equal(log->records[0].subtype, "current discovery subsystem");
	assert_string_equal(log->records[1].subtype, NVME_SUBTYPE_NVM);
	assert_string_equal(log->records[1].subnqn, NQN);
	assert_string_equal(log->records[1].traddr, "127.0.0.1");
	assert_string_equal(log->records[1].trsvcid, "4420");
	assert_string_equal(log->records[1].trtype, "tcp");
	assert_string_equal(log->records[1].adrfam, "ipv4");
	assert_int_equal(log->records[1].portid, 1);
	assert_true(nvme_discovery_offers(log, NQN));
	/* The discovery subsystem itself is not an offer. */
	assert_false(nvme_discovery_offers(log, "nqn.2014-08.org.nvmexpress.discovery"));
}

static void discover_json_and_text(void **state)
{
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT, nqns = STRBUF_INIT;
	struct nvme_discovery_log log;

	(void)state;
	nvme_discovery_log_init(&log);
	fixture("storage/discover.json", &text);
	assert_int_equal(nvme_discover_parse_json(text.buf, text.len, &log, &err), 0);
	check_log(&log);
	nvme_discovery_nqns(&log, &nqns);
	assert_string_equal(nqns.buf, NQN);
	nvme_discovery_log_release(&log);
	fixture("storage/discover.txt", &text);
	assert_int_equal(nvme_discover_parse_text(text.buf, text.len, &log, &err), 0);
	check_log(&log);
	nvme_discovery_log_release(&log);
	/* No NVM subsystem offered: said "none". */
	static const char none[] =
		"{\"genctr\":1,\"records\":[{\"subtype\":\"current discovery "
		"subsystem\",\"subnqn\":\"nqn.2014-08.org.nvmexpress.discovery\","
		"\"portid\":1}]}";
	assert_int_equal(nvme_discover_parse_json(none, strlen(none), &log, &err), 0);
	strbuf_reset(&nqns);
	nvme_discovery_nqns(&log, &nqns);
	assert_string_equal(nqns.buf, "none");
	nvme_discovery_log_release(&log);
	/* Refusals: not JSON, no records, a record of the wrong type, text without its header. */
	assert_int_equal(nvme_discover_parse_json("Failed", 6, &log, &err), -EINVAL);
	assert_int_equal(nvme_discover_parse_json("{\"genctr\":1}", 12, &log, &err), -EINVAL);
	strbuf_reset(&err);
	assert_int_equal(nvme_discover_parse_json("{\"records\":[{\"subnqn\":5}]}", 26, &log, &err),
			 -EINVAL);
	assert_string_equal(err.buf, "records[0].subnqn: expected a string");
	assert_int_equal(nvme_discover_parse_text("trtype: tcp\n", 12, &log, &err), -EINVAL);
	assert_int_equal(log.nr, 0);
	strbuf_release(&text);
	strbuf_release(&err);
	strbuf_release(&nqns);
}

static void list_subsys_forms(void **state)
{
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	struct nvme_subsys_list l;
	const struct nvme_subsystem *s;

	(void)state;
	nvme_subsys_list_init(&l);
	fixture("storage/list-subsys.json", &text);
	assert_int_equal(nvme_list_subsys_parse(text.buf, text.len, &l, &err), 0);
	assert_string_equal(l.hostnqn,
			    "nqn.2014-08.org.nvmexpress:uuid:5f1c2a9e-7d40-4b8e-9a51-0c3d6e2f8a17");
	s = nvme_subsys_find(&l, NQN);
	assert_non_null(s);
	assert_string_equal(s->name, "nvme-subsys0");
	assert_int_equal(s->nr_paths, 1);
	assert_string_equal(s->paths[0].name, "nvme0");
	assert_string_equal(s->paths[0].state, "live");
	assert_string_equal(s->paths[0].addr.traddr, "127.0.0.1");
	assert_string_equal(s->paths[0].addr.trsvcid, "4420");
	assert_string_equal(s->paths[0].addr.src_addr, "127.0.0.1");
	assert_null(s->paths[0].addr.host_iface);
	assert_int_equal(nvme_subsys_count_paths(s, "127.0.0.1", "4420", true), 1);
	assert_int_equal(nvme_subsys_count_paths(s, "127.0.0.1", "4421", true), 0);
	assert_int_equal(nvme_subsys_count_paths(s, "198.18.0.1", NULL, false), 0);
	assert_null(nvme_subsys_find(&l, "nqn.2026-01.org.example:other"));
	nvme_subsys_list_release(&l);
	/* Earlier versions: one object, the Paths in an entry after their subsystem. */
	fixture("nvme-cli/list-subsys-1.json", &text);
	assert_int_equal(nvme_list_subsys_parse(text.buf, text.len, &l, &err), 0);
	assert_int_equal(l.nr, 1);
	assert_string_equal(l.hostnqn, "");
	s = nvme_subsys_find(&l, NQN);
	assert_int_equal(s->nr_paths, 1);
	assert_string_equal(s->paths[0].addr.host_iface, "lo");
	assert_string_equal(s->paths[0].addr.host_traddr, "127.0.0.1");
	assert_int_equal(nvme_subsys_count_paths(s, "127.0.0.1", "4420", true), 0);
	assert_int_equal(nvme_subsys_count_paths(s, "127.0.0.1", "4420", false), 1);
	nvme_subsys_list_release(&l);
	/* Two paths to two ports; a path bound to a source address; the form with ANAState. */
	fixture("storage/wrong-iface-list-subsys-two-paths.json", &text);
	assert_int_equal(nvme_list_subsys_parse(text.buf, text.len, &l, &err), 0);
	s = nvme_subsys_find(&l, NQN);
	assert_int_equal(s->nr_paths, 2);
	assert_int_equal(nvme_subsys_count_paths(s, "198.18.0.2", "4420", true), 1);
	assert_int_equal(nvme_subsys_count_paths(s, NULL, NULL, true), 2);
	assert_int_equal(nvme_subsys_count_paths(s, "198.18.0.02", "4420", true), 0);
	nvme_subsys_list_release(&l);
	fixture("storage/wrong-iface-list-subsys-host-traddr.json", &text);
	assert_int_equal(nvme_list_subsys_parse(text.buf, text.len, &l, &err), 0);
	assert_string_equal(l.v[0].paths[0].addr.host_traddr, "198.18.0.2");
	assert_string_equal(l.v[0].paths[0].addr.src_addr, "198.18.0.2");
	nvme_subsys_list_release(&l);
	fixture("storage/list-subsys-ns.json", &text);
	assert_int_equal(nvme_list_subsys_parse(text.buf, text.len, &l, &err), 0);
	assert_int_equal(
		nvme_subsys_count_paths(nvme_subsys_find(&l, NQN), "127.0.0.1", "4420", true), 1);
	nvme_subsys_list_release(&l);
	/* Nothing connected: an empty array (2.3), or nothing at all. */
	fixture("storage/list-subsys-none.json", &text);
	assert_int_equal(nvme_list_subsys_parse(text.buf, text.len, &l, &err), 0);
	assert_int_equal(l.nr, 0);
	nvme_subsys_list_release(&l);
	assert_int_equal(nvme_list_subsys_parse("\n", 1, &l, &err), 0);
	assert_int_equal(l.nr, 0);
	nvme_subsys_list_release(&l);
	assert_int_equal(nvme_list_subsys_parse("[1]", 3, &l, &err), -EINVAL);
	strbuf_reset(&err);
	static const char bad_addr[] = "{\"Subsystems\":[{\"NQN\":\"nqn.a\",\"Paths\":[{\"Name\":"
				       "\"nvme0\",\"Address\":\"traddr\"}]}]}";
	assert_int_equal(nvme_list_subsys_parse(bad_addr, strlen(bad_addr), &l, &err), -EINVAL);
	assert_string_equal(err.buf, "Subsystems[0].Paths[0].Address: not key=value,...: traddr");
	strbuf_release(&text);
	strbuf_release(&err);
}

static void addresses(void **state)
{
	struct nvme_address a;

	(void)state;
	assert_int_equal(nvme_address_parse("traddr=fd00::1,trsvcid=4420,src_addr=fd00::2", &a), 0);
	assert_string_equal(a.traddr, "fd00::1");
	assert_string_equal(a.src_addr, "fd00::2");
	nvme_address_release(&a);
	assert_int_equal(
		nvme_address_parse("traddr=1.2.3.4,trsvcid=4420,host_iface=enp1s0f1np1", &a), 0);
	assert_string_equal(a.host_iface, "enp1s0f1np1");
	nvme_address_release(&a);
	assert_int_equal(nvme_address_parse("", &a), 0);
	assert_null(a.traddr);
	assert_int_equal(nvme_address_parse("traddr=1.2.3.4,junk", &a), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(discover_json_and_text),
		cmocka_unit_test(list_subsys_forms),
		cmocka_unit_test(addresses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
