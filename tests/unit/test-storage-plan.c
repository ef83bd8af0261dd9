/* Unit tests of storage/plan.c: the request, each node's files, the merges. */
#include "sparkctl.h"

#include "test_util.h"

#include "lib/json.h"
#include "storage/plan.h"

#define UUID "0b6e4a52-4f0c-4c4e-9d5e-1f2a3b4c5d6e"
#define NQN  "nqn.2026-01.org.example:shared"

static const char *const two_nodes[] = { "spark1", "spark2" };

static struct storage_plan_request request(void)
{
	return (struct storage_plan_request){
		.target = "198.18.1.1",
		.nqn = NQN,
		.mount = "/mnt/shared",
		.uuid = UUID,
		.nodes = two_nodes,
		.nr_nodes = 2,
	};
}

/* req's plan as node name keeps it (asserting it is made). */
static void node_conf(const struct storage_plan_request *req, const char *name,
		      struct storage_conf *conf)
{
	struct storage_conf plan;
	struct strbuf err = STRBUF_INIT;

	if (storage_plan_make(req, &plan, &err) < 0)
		fail_msg("plan refused: %s", err.buf);
	storage_plan_for_node(&plan, name, conf);
	storage_conf_release(&plan);
	strbuf_release(&err);
}

static void target_forms(void **state)
{
	static const struct {
		const char *text, *address;
		unsigned port;
	} good[] = {
		{ "198.18.1.1", "198.18.1.1", 4420 },
		{ "198.18.1.1:4421", "198.18.1.1", 4421 },
		{ "[fd00::1]:4421", "fd00::1", 4421 },
		{ "[fd00::1]", "fd00::1", 4420 },
		{ "fd00::1", "fd00::1", 4420 },
		{ "target.lan:9", "target.lan", 9 },
		{ "::ffff:198.18.1.1", "::ffff:198.18.1.1", 4420 },
	};
	static const char *const bad[] = {
		"",	    "198.18.1.1:", "198.18.1.1:0",   "198.18.1.1:65536",
		"[fd00::1", "[fd00::1]x",  "[198.18.1.1]:1", "fd00::g",
		"-a:1",	    "a b",
	};
	struct strbuf err = STRBUF_INIT;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		char *address = NULL;
		unsigned port = 0;
		if (storage_plan_parse_target(good[i].text, &address, &port, &err) < 0)
			fail_msg("'%s' refused: %s", good[i].text, err.buf);
		assert_string_equal(address, good[i].address);
		assert_int_equal(port, good[i].port);
		free(address);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char *address = NULL;
		unsigned port = 0;
		strbuf_reset(&err);
		if (storage_plan_parse_target(bad[i], &address, &port, &err) != -EINVAL)
			fail_msg("'%s' accepted", bad[i]);
		assert_null(address);
		assert_true(starts_with(err.buf, "--target '"));
	}
	strbuf_release(&err);
}

/* The writer: the first node by default, --writer's node, none with --ro-all. */
static void writers(void **state)
{
	struct storage_plan_request req = request();
	const char *b[] = { "spark2" };
	struct storage_conf plan;
	struct strbuf err = STRBUF_INIT;

	(void)state;
	assert_int_equal(storage_plan_make(&req, &plan, &err), 0);
	assert_int_equal(plan.nodes[0].access, STORAGE_ACCESS_RW);
	assert_int_equal(plan.nodes[1].access, STORAGE_ACCESS_RO);
	assert_null(plan.node);
	assert_string_equal(plan.unit, "sparkctl-nvme-mnt-shared.service");
	storage_conf_release(&plan);
	req.writers = b;
	req.nr_writers = 1;
	assert_int_equal(storage_plan_make(&req, &plan, &err), 0);
	assert_int_equal(plan.nodes[0].access, STORAGE_ACCESS_RO);
	assert_int_equal(plan.nodes[1].access, STORAGE_ACCESS_RW);
	storage_conf_release(&plan);
	req.nr_writers = 0;
	req.ro_all = true;
	assert_int_equal(storage_plan_make(&req, &plan, &err), 0);
	assert_int_equal(plan.nodes[0].access, STORAGE_ACCESS_RO);
	assert_int_equal(plan.nodes[1].access, STORAGE_ACCESS_RO);
	storage_conf_release(&plan);
	strbuf_release(&err);
}

static void refused(const struct storage_plan_request *req, const char *want)
{
	struct storage_conf plan;
	struct strbuf err = STRBUF_INIT;

	assert_int_equal(storage_plan_make(req, &plan, &err), -EINVAL);
	if (!strstr(err.buf, want))
		fail_msg("got '%s', want '%s'", err.buf, want);
	assert_null(plan.nqn);
	assert_int_equal(plan.nr_nodes, 0);
	strbuf_release(&err);
}

static void refusals(void **state)
{
	const char *ab[] = { "spark1", "spark2" }, *comma[] = { "spark1,spark2" },
		   *other[] = { "spark3" };
	const char *const twice[] = { "a", "a" }, *const bad_name[] = { "-x" };
	struct storage_plan_request req;

	(void)state;
	req = request();
	req.writers = ab;
	req.nr_writers = 2;
	refused(&req, "two writers ('spark1' and 'spark2'): ext4 and xfs are not cluster "
		      "filesystems: two hosts mounting one read-write corrupt it");
	req.writers = comma;
	req.nr_writers = 1;
	refused(&req, "two writers ('spark1' and 'spark2')");
	req.writers = other;
	refused(&req, "--writer 'spark3' is not one of the nodes");
	req.ro_all = true;
	refused(&req, "--writer and --ro-all contradict each other");
	req = request();
	req.nodes = twice;
	refused(&req, "node 'a' is listed twice");
	req.nodes = bad_name;
	req.nr_nodes = 1;
	refused(&req, "node '-x' is not a host name");
	req.nr_nodes = 0;
	refused(&req, "no nodes");
	req = request();
	req.nqn = "nqn.a b";
	refused(&req, "--nqn 'nqn.a b' is not an NQN (1 to 223 printable bytes without spaces)");
	req = request();
	req.mount = "/mnt/shared/";
	refused(&req, "--mount '/mnt/shared/' is not an absolute path");
	req = request();
	req.mount = "/";
	refused(&req, "--mount '/' is not an absolute path");
	req = request();
	req.uuid = "0b6e4a52";
	refused(&req, "--uuid '0b6e4a52' is not a filesystem UUID");
	req = request();
	req.iface = "a/b";
	refused(&req, "--iface 'a/b' is not an interface name");
	req = request();
	req.fs = "btrfs";
	refused(&req, "--fs 'btrfs' is not ext4 or xfs");
}

static void discovery_lines(void **state)
{
	struct storage_plan_request req = request();
	struct storage_conf conf;
	struct strbuf out = STRBUF_INIT;

	(void)state;
	node_conf(&req, "spark1", &conf);
	storage_plan_discovery_line(&conf, &out);
	assert_string_equal(out.buf, "--transport=tcp --traddr=198.18.1.1 --trsvcid=4420\n");
	storage_conf_release(&conf);
	req.target = "[fd00::1]:4421";
	req.iface = "enp1s0f1np1";
	node_conf(&req, "spark1", &conf);
	strbuf_reset(&out);
	storage_plan_discovery_line(&conf, &out);
	assert_string_equal(out.buf, "--transport=tcp --traddr=fd00::1 --trsvcid=4421 "
				     "--host-iface=enp1s0f1np1\n");
	storage_conf_release(&conf);
	strbuf_release(&out);
}

static void unit_file(void **state)
{
	struct storage_plan_request req = request();
	struct storage_conf conf;
	struct strbuf out = STRBUF_INIT;

	(void)state;
	req.iface = "enp1s0f1np1";
	node_conf(&req, "spark2", &conf);
	storage_plan_unit(&conf, &out);
	assert_non_null(
		strstr(out.buf, "\n[Unit]\nDescription=NVMe/TCP volume " NQN " for /mnt/shared\n"));
	assert_non_null(strstr(out.buf, "\nWants=network-online.target\n"
					"After=network-online.target\n"));
	assert_non_null(strstr(out.buf, "\n[Service]\nType=oneshot\nRemainAfterExit=yes\n"
					"ExecCondition=/bin/sh -c '! grep -qsxF -e \"$$1\" "
					"/sys/class/nvme/nvme*/subsysnqn' sparkctl-nvme " NQN "\n"
					"ExecStartPre=/sbin/modprobe nvme-tcp\n"
					"ExecStart=/usr/sbin/nvme connect -t tcp -n " NQN
					" -a 198.18.1.1 -s 4420 -f enp1s0f1np1 -l 600 -c 10\n"
					"ExecStop=/usr/sbin/nvme disconnect -n " NQN "\n"));
	assert_non_null(strstr(out.buf, "\n[Install]\nWantedBy=multi-user.target\n"));
	/* Nothing of Debian's nvmf-autoconnect, and no ordering against every remote mount. */
	assert_null(strstr(out.buf, "connect-all"));
	assert_null(strstr(out.buf, "remote-fs-pre"));
	storage_conf_release(&conf);
	strbuf_release(&out);
}

/* What systemd would expand or split in an Exec line is quoted; '%' doubled everywhere. */
static void unit_quoting(void **state)
{
	struct storage_plan_request req = request();
	struct storage_conf conf;
	struct strbuf out = STRBUF_INIT;

	(void)state;
	req.nqn = "nqn.x:$HOME%n\"\\";
	req.mount = "/mnt/100%";
	node_conf(&req, "spark1", &conf);
	storage_plan_unit(&conf, &out);
	assert_non_null(strstr(out.buf, "Description=NVMe/TCP volume nqn.x:$HOME%%n\"\\ for "
					"/mnt/100%%\n"));
	assert_non_null(strstr(out.buf, "connect -t tcp -n \"nqn.x:$$HOME%%n\\\"\\\\\" -a "));
	assert_non_null(strstr(out.buf, "disconnect -n \"nqn.x:$$HOME%%n\\\"\\\\\"\n"));
	storage_conf_release(&conf);
	strbuf_release(&out);
}

static void fstab_lines(void **state)
{
	struct storage_plan_request req = request();
	struct storage_conf conf;
	struct strbuf out = STRBUF_INIT;

	(void)state;
	node_conf(&req, "spark1", &conf);
	storage_plan_fstab_line(&conf, &out);
	assert_string_equal(out.buf, "UUID=" UUID " /mnt/shared ext4 _netdev,nofail,noatime,"
				     "x-systemd.requires=sparkctl-nvme-mnt-shared.service 0 0\n");
	storage_conf_release(&conf);
	node_conf(&req, "spark2", &conf);
	strbuf_reset(&out);
	storage_plan_fstab_line(&conf, &out);
	assert_string_equal(out.buf, "UUID=" UUID " /mnt/shared ext4 _netdev,nofail,noatime,"
				     "x-systemd.requires=sparkctl-nvme-mnt-shared.service,ro,"
				     "noload 0 0\n");
	storage_conf_release(&conf);
	req.fs = "xfs";
	req.mount = "/mnt/a b\\c";
	node_conf(&req, "spark2", &conf);
	strbuf_reset(&out);
	storage_plan_fstab_line(&conf, &out);
	assert_string_equal(out.buf, "UUID=" UUID " /mnt/a\\040b\\134c xfs _netdev,nofail,noatime,"
				     "x-systemd.requires=sparkctl-nvme-mnt-a\\x20b\\x5cc.service,"
				     "ro,norecovery 0 0\n");
	storage_conf_release(&conf);
	strbuf_release(&out);
}

static void merge_discovery(void **state)
{
	struct storage_plan_request req = request();
	struct storage_conf conf;
	struct strbuf out = STRBUF_INIT;
	const char *line = "--transport=tcp --traddr=198.18.1.1 --trsvcid=4420\n";

	(void)state;
	node_conf(&req, "spark1", &conf);
	assert_int_equal(storage_plan_merge_discovery(NULL, &conf, &out), 0);
	assert_string_equal(out.buf, line);
	/* Another port, another address, a comment, a discovery port by default: all kept. */
	const char *others = "# mine\n"
			     "--transport=tcp --traddr=198.18.1.1 --trsvcid=4421\n"
			     "--transport=tcp --traddr=198.18.1.2 --trsvcid=4420\n"
			     "-t tcp -a 198.18.1.1\n";
	strbuf_reset(&out);
	assert_int_equal(storage_plan_merge_discovery(others, &conf, &out), 0);
	assert_true(starts_with(out.buf, others));
	assert_string_equal(out.buf + strlen(others), line);
	/* The same controller, in either spelling and however often: one line, in place. */
	strbuf_reset(&out);
	assert_int_equal(storage_plan_merge_discovery("a\n-t tcp -a 198.18.1.1 -s 4420 -f x\nb\n"
						      "--traddr=198.18.1.1 --trsvcid=4420\n",
						      &conf, &out),
			 2);
	assert_string_equal(out.buf, "a\n--transport=tcp --traddr=198.18.1.1 --trsvcid=4420\nb\n");
	/* A last line without its newline gets one. */
	strbuf_reset(&out);
	storage_plan_merge_discovery("# x", &conf, &out);
	assert_string_equal(out.buf, "# x\n--transport=tcp --traddr=198.18.1.1 --trsvcid=4420\n");
	storage_conf_release(&conf);
	/* IPv6: the same address written another way is the same controller. */
	req.target = "[fd00::1]";
	node_conf(&req, "spark1", &conf);
	strbuf_reset(&out);
	assert_int_equal(
		storage_plan_merge_discovery("--traddr=fd00:0::0:1 --trsvcid=4420\n", &conf, &out),
		1);
	assert_string_equal(out.buf, "--transport=tcp --traddr=fd00::1 --trsvcid=4420\n");
	storage_conf_release(&conf);
	strbuf_release(&out);
}

static void merge_fstab(void **state)
{
	struct storage_plan_request req = request();
	struct storage_conf conf;
	struct strbuf out = STRBUF_INIT;
	const char *ours = "UUID=" UUID " /mnt/shared ext4 _netdev,nofail,noatime,x-systemd."
			   "requires=sparkctl-nvme-mnt-shared.service,ro,noload 0 0\n";

	(void)state;
	node_conf(&req, "spark2", &conf);
	const char *old = "# /etc/fstab\nUUID=1 / ext4 defaults 0 1\n"
			  "/dev/sdb1\t/mnt/shared/  ext4 defaults 0 2\n"
			  "tmpfs /mnt/shared2 tmpfs defaults 0 0\n"
			  "#UUID=2 /mnt/shared ext4 defaults 0 0\n"
			  "/dev/sdc1 /mnt/shared xfs defaults 0 0\n";
	assert_int_equal(storage_plan_merge_fstab(old, &conf, &out), 2);
	struct strbuf want = STRBUF_INIT;
	strbuf_addf(
		&want,
		"# /etc/fstab\nUUID=1 / ext4 defaults 0 1\n%s"
		"tmpfs /mnt/shared2 tmpfs defaults 0 0\n#UUID=2 /mnt/shared ext4 defaults 0 0\n",
		ours);
	assert_string_equal(out.buf, want.buf);
	/* Merging the result again changes nothing. */
	strbuf_reset(&want);
	strbuf_addstr(&want, out.buf);
	strbuf_reset(&out);
	assert_int_equal(storage_plan_merge_fstab(want.buf, &conf, &out), 1);
	assert_string_equal(out.buf, want.buf);
	storage_conf_release(&conf);
	/* A mount point with a space is found by its escaped form. */
	req.mount = "/mnt/a b";
	node_conf(&req, "spark2", &conf);
	strbuf_reset(&out);
	assert_int_equal(storage_plan_merge_fstab("x /mnt/a\\040b ext4 d 0 0\n", &conf, &out), 1);
	assert_true(starts_with(out.buf, "UUID=" UUID " /mnt/a\\040b ext4 "));
	storage_conf_release(&conf);
	strbuf_release(&out);
	strbuf_release(&want);
}

/* The plan --write installs reads back, on every node, as the plan it came from. */
static void storage_json_reads_back(void **state)
{
	struct storage_plan_request req = request();
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;

	(void)state;
	req.target = "[fd00::1]:4421";
	req.iface = "enp1s0f1np1";
	req.fs = "xfs";
	for (size_t i = 0; i < 2; i++) {
		struct storage_conf conf, back;
		node_conf(&req, two_nodes[i], &conf);
		json_t *j = storage_conf_to_json(&conf);
		strbuf_reset(&text);
		json_to_strbuf(j, &text);
		json_decref(j);
		if (storage_conf_parse(&back, text.buf, text.len, "storage.json", &err) < 0)
			fail_msg("%s", err.buf);
		assert_string_equal(back.node, two_nodes[i]);
		assert_string_equal(back.target_address, "fd00::1");
		assert_int_equal(back.target_port, 4421);
		assert_int_equal(back.fs, STORAGE_FS_XFS);
		assert_string_equal(back.interface, "enp1s0f1np1");
		assert_int_equal(storage_conf_this_node(&back)->access,
				 i == 0 ? STORAGE_ACCESS_RW : STORAGE_ACCESS_RO);
		storage_conf_release(&back);
		storage_conf_release(&conf);
	}
	strbuf_release(&text);
	strbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(target_forms), cmocka_unit_test(writers),
		cmocka_unit_test(refusals),	cmocka_unit_test(discovery_lines),
		cmocka_unit_test(unit_file),	cmocka_unit_test(unit_quoting),
		cmocka_unit_test(fstab_lines),	cmocka_unit_test(merge_discovery),
		cmocka_unit_test(merge_fstab),	cmocka_unit_test(storage_json_reads_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
