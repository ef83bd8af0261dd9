/* Unit tests of storage/storage_conf.c: the plans in storage.d, NQNs, unit names. */
#include "sparkctl.h"

#include "test_util.h"

#include "lib/json.h"
#include "lib/rootfs.h"
#include "lib/xalloc.h"
#include "storage/storage_conf.h"

#define UUID "0b6e4a52-4f0c-4c4e-9d5e-1f2a3b4c5d6e"

static const char good_text[] =
	"{\"schema_version\":1,"
	"\"target\":{\"address\":\"198.18.1.1\",\"port\":4421},"
	"\"nqn\":\"nqn.2026-01.org.example:shared\","
	"\"mount\":\"/mnt/shared\",\"fs\":\"xfs\",\"uuid\":\"" UUID "\","
	"\"interface\":\"enp1s0f1np1\",\"unit\":\"sparkctl-nvme-mnt-shared.service\","
	"\"node\":\"spark2\","
	"\"nodes\":[{\"name\":\"spark1\",\"access\":\"rw\"},{\"name\":\"spark2\",\"access\":\"ro\"}"
	"]}";

static int parse(const char *text, struct storage_conf *conf, struct strbuf *err)
{
	strbuf_reset(err);
	return storage_conf_parse(conf, text, strlen(text), "F", err);
}

static void conf_round_trip(void **state)
{
	struct storage_conf conf, again;
	struct strbuf err = STRBUF_INIT, out = STRBUF_INIT, out2 = STRBUF_INIT;

	(void)state;
	assert_int_equal(parse(good_text, &conf, &err), 0);
	assert_string_equal(conf.target_address, "198.18.1.1");
	assert_int_equal(conf.target_port, 4421);
	assert_string_equal(conf.nqn, "nqn.2026-01.org.example:shared");
	assert_int_equal(conf.fs, STORAGE_FS_XFS);
	assert_string_equal(conf.interface, "enp1s0f1np1");
	assert_int_equal(conf.nr_nodes, 2);
	const struct storage_node *me = storage_conf_this_node(&conf);
	assert_non_null(me);
	assert_string_equal(me->name, "spark2");
	assert_int_equal(me->access, STORAGE_ACCESS_RO);
	assert_int_equal(conf.nodes[0].access, STORAGE_ACCESS_RW);

	json_t *j = storage_conf_to_json(&conf);
	json_to_strbuf(j, &out);
	json_decref(j);
	assert_int_equal(parse(out.buf, &again, &err), 0);
	j = storage_conf_to_json(&again);
	json_to_strbuf(j, &out2);
	json_decref(j);
	assert_string_equal(out.buf, out2.buf);
	storage_conf_release(&conf);
	storage_conf_release(&again);
	strbuf_release(&err);
	strbuf_release(&out);
	strbuf_release(&out2);
}

/* No port and a null interface: NVMe/TCP's port, the route's interface. */
static void conf_defaults(void **state)
{
	const char *text = "{\"schema_version\":1,\"target\":{\"address\":\"fd00::1\"},"
			   "\"nqn\":\"nqn.x\",\"mount\":\"/srv/data\",\"fs\":\"ext4\","
			   "\"uuid\":\"" UUID "\",\"interface\":null,"
			   "\"unit\":\"sparkctl-nvme-srv-data.service\",\"node\":\"a\","
			   "\"nodes\":[{\"name\":\"a\",\"access\":\"rw\"}]}";
	struct storage_conf conf;
	struct strbuf err = STRBUF_INIT;

	(void)state;
	assert_int_equal(parse(text, &conf, &err), 0);
	assert_int_equal(conf.target_port, STORAGE_DEFAULT_PORT);
	assert_null(conf.interface);
	assert_int_equal(conf.fs, STORAGE_FS_EXT4);
	storage_conf_release(&conf);
	strbuf_release(&err);
}

/* Replace the first occurrence of from in good_text with to. */
static char *good_with(const char *from, const char *to)
{
	const char *at = strstr(good_text, from);
	assert_non_null(at);
	return xasprintf("%.*s%s%s", (int)(at - good_text), good_text, to, at + strlen(from));
}

static void conf_refusals(void **state)
{
	static const struct {
		const char *from, *to, *message;
	} cases[] = {
		{ "\"access\":\"ro\"", "\"access\":\"rw\"",
		  "F: nodes: two read-write nodes ('spark1' and 'spark2'); ext4 and xfs allow one "
		  "writer" },
		{ "\"node\":\"spark2\"", "\"node\":\"spark3\"",
		  "F: node: not one of nodes[] ('spark3')" },
		{ "nqn.2026", "nqn 2026",
		  "F: nqn: not an NQN (1 to 223 printable bytes without spaces) ('nqn "
		  "2026-01.org.example:shared')" },
		{ "\"/mnt/shared\"", "\"mnt/shared\"",
		  "F: mount: not an absolute, normalized path ('mnt/shared')" },
		{ "\"xfs\"", "\"btrfs\"", "F: fs: expected \"ext4\" or \"xfs\" ('btrfs')" },
		{ "0b6e4a52-", "0b6e4a5z-", "F: uuid: not a filesystem UUID" },
		{ "4421", "70000", "F: target.port: expected a port number (1-65535)" },
		{ "mnt-shared.service", "mnt-other.service",
		  "F: unit: not the unit of the mount point ('sparkctl-nvme-mnt-other.service')" },
		{ "\"access\":\"ro\"", "\"access\":\"rx\"",
		  "F: nodes[1].access: expected \"ro\" or \"rw\" ('rx')" },
		{ "{\"name\":\"spark2\"", "{\"name\":\"spark1\"",
		  "F: nodes[1].name: listed twice" },
		{ "\"schema_version\":1", "\"schema_version\":2",
		  "F: schema_version 2 (this sparkctl reads 1)" },
		{ "\"nqn\":", "\"nqm\":", "F: nqn: missing" },
		{ "\"enp1s0f1np1\"", "7", "F: interface: expected a string" },
	};
	struct strbuf err = STRBUF_INIT;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct storage_conf conf;
		char *text = good_with(cases[i].from, cases[i].to);
		assert_int_equal(parse(text, &conf, &err), -EINVAL);
		if (strncmp(err.buf, cases[i].message, strlen(cases[i].message)) != 0)
			fail_msg("case %zu: got '%s', want '%s'", i, err.buf, cases[i].message);
		/* A refused file leaves nothing behind. */
		assert_null(conf.nqn);
		assert_int_equal(conf.nr_nodes, 0);
		free(text);
	}
	strbuf_release(&err);
}

static void nqn_syntax(void **state)
{
	char longest[NVME_NQN_MAX + 2];

	(void)state;
	assert_true(nvme_nqn_valid("nqn.2014-08.org.nvmexpress:uuid:0b6e4a52"));
	assert_true(nvme_nqn_valid("nqn.2014-08.org.nvmexpress.discovery"));
	/* Names targets give their subsystems outside the specification's form. */
	assert_true(nvme_nqn_valid("raid5-data"));
	assert_true(nvme_nqn_valid("testnqn"));
	assert_true(nvme_nqn_valid("nqn."));
	assert_false(nvme_nqn_valid("nqn.2014-08.org example"));
	assert_false(nvme_nqn_valid("nqn.2014-08.org\texample"));
	assert_false(nvme_nqn_valid("nqn.2014-08.org\x7f"));
	assert_false(nvme_nqn_valid(""));
	memcpy(longest, "nqn.", 4);
	memset(longest + 4, 'a', NVME_NQN_MAX - 4);
	longest[NVME_NQN_MAX] = '\0';
	assert_true(nvme_nqn_valid(longest));
	longest[NVME_NQN_MAX] = 'a';
	longest[NVME_NQN_MAX + 1] = '\0';
	assert_false(nvme_nqn_valid(longest));
}

static void unit_is(const char *mount, const char *want)
{
	struct strbuf out = STRBUF_INIT;

	assert_int_equal(storage_unit_name(mount, &out), 0);
	assert_string_equal(out.buf, want);
	strbuf_release(&out);
}

/* What 'systemd-escape --path' (systemd 252) gives, between the prefix and the suffix. */
static void unit_names(void **state)
{
	struct strbuf out = STRBUF_INIT;

	(void)state;
	unit_is("/mnt/shared", "sparkctl-nvme-mnt-shared.service");
	unit_is("/", "sparkctl-nvme--.service");
	unit_is("//mnt//shared/", "sparkctl-nvme-mnt-shared.service");
	unit_is("/mnt/my-data", "sparkctl-nvme-mnt-my\\x2ddata.service");
	unit_is("/mnt/a b", "sparkctl-nvme-mnt-a\\x20b.service");
	unit_is("/.hidden/x.y", "sparkctl-nvme-\\x2ehidden-x.y.service");
	unit_is("/srv/a:b_c", "sparkctl-nvme-srv-a:b_c.service");
	unit_is("/mnt/\xc3\xa9", "sparkctl-nvme-mnt-\\xc3\\xa9.service");
	assert_int_equal(storage_unit_name("mnt/shared", &out), -EINVAL);
	assert_int_equal(storage_unit_name("/mnt/../etc", &out), -EINVAL);
	assert_int_equal(storage_unit_name("/mnt/./x", &out), -EINVAL);
	assert_int_equal(out.len, 0);
	strbuf_release(&out);
}

static void other_names(void **state)
{
	(void)state;
	assert_true(storage_uuid_valid(UUID));
	assert_true(storage_uuid_valid("0B6E4A52-4F0C-4C4E-9D5E-1F2A3B4C5D6E"));
	assert_false(storage_uuid_valid("0b6e4a52-4f0c-4c4e-9d5e-1f2a3b4c5d6"));
	assert_false(storage_uuid_valid("0b6e4a524f0c-4c4e-9d5e-1f2a3b4c5d6e0"));
	assert_false(storage_uuid_valid("0b6e4a52-4f0c-4c4e-9d5e-1f2a3b4c5d6g"));
	assert_true(storage_mount_valid("/mnt/shared"));
	assert_true(storage_mount_valid("/mnt/a b"));
	assert_false(storage_mount_valid("/"));
	assert_false(storage_mount_valid("mnt"));
	assert_false(storage_mount_valid("/mnt/"));
	assert_false(storage_mount_valid("/mnt//x"));
	assert_false(storage_mount_valid("/mnt/../x"));
	assert_false(storage_mount_valid("/mnt/a\nb"));
	assert_true(storage_iface_valid("enp1s0f1np1"));
	assert_true(storage_iface_valid("enP2p1s0f1np1"));
	assert_false(storage_iface_valid("a-name-of-16byt"
					 "e"));
	assert_false(storage_iface_valid("eth0:1"));
	assert_false(storage_iface_valid("eth 0"));
	assert_false(storage_iface_valid(""));
	assert_false(storage_iface_valid(".."));
}

/* A plan's file is named for its mount point as the unit is. */
static void conf_file_names(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	assert_int_equal(storage_conf_file_name("/mnt/shared", &sb), 0);
	assert_string_equal(sb.buf, "mnt-shared.json");
	strbuf_reset(&sb);
	assert_int_equal(storage_conf_file_name("/mnt/rosa-models", &sb), 0);
	assert_string_equal(sb.buf, "mnt-rosa\\x2dmodels.json");
	strbuf_reset(&sb);
	assert_int_equal(storage_conf_file_name("mnt/shared", &sb), -EINVAL);
	assert_int_equal(storage_conf_file_name("/mnt/../x", &sb), -EINVAL);
	assert_int_equal(sb.len, 0);
	strbuf_release(&sb);
}

/* Write text as the plan NAME in storage.d below dir. */
static void plant(const char *dir, const char *name, const char *text)
{
	char *cmd = xasprintf("mkdir -p %s/etc/sparkctl/storage.d && printf '%%s' '%s' > "
			      "%s/etc/sparkctl/storage.d/%s",
			      dir, text, dir, name);
	sh(cmd);
	free(cmd);
}

/*
 * Loaded below a root: none is -ENOENT; one is the plan; several are
 * all of them by mount point, one by its mount point, and no single one;
 * a bad file names its path.
 */
static void conf_load(void **state)
{
	char dir[] = "/tmp/sparkctl-storage-conf-XXXXXX";
	struct rootfs root;
	struct storage_conf conf, *confs;
	struct strbuf err = STRBUF_INIT, other = STRBUF_INIT;
	size_t nr = 7;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(rootfs_open(&root, dir), 0);
	assert_int_equal(storage_conf_load(&root, &conf, &err), -ENOENT);
	assert_int_equal(storage_conf_load_mount(&root, "/mnt/shared", &conf, &err), -ENOENT);
	assert_string_equal(err.buf, "no volume is planned at /mnt/shared (0 planned here)");
	strbuf_reset(&err);
	assert_int_equal(storage_conf_load_all(&root, &confs, &nr, &err), 0);
	assert_int_equal(nr, 0);
	assert_int_equal(err.len, 0);

	plant(dir, "mnt-shared.json", good_text);
	assert_int_equal(storage_conf_load(&root, &conf, &err), 0);
	assert_string_equal(conf.node, "spark2");
	storage_conf_release(&conf);
	assert_int_equal(storage_conf_load_mount(&root, NULL, &conf, &err), 0);
	assert_string_equal(conf.mount, "/mnt/shared");
	storage_conf_release(&conf);
	assert_int_equal(storage_conf_load_mount(&root, "/mnt/other", &conf, &err), -ENOENT);
	assert_string_equal(err.buf, "no volume is planned at /mnt/other (1 planned here)");
	strbuf_reset(&err);

	/* A second volume, at /mnt/a; a backup and a temporary are not plans. */
	strbuf_addf(&other,
		    "sed 's|\"/mnt/shared\"|\"/mnt/a\"|; s|mnt-shared.service|mnt-a.service|' "
		    "%s/etc/sparkctl/storage.d/mnt-shared.json "
		    "> %s/etc/sparkctl/storage.d/mnt-a.json",
		    dir, dir);
	sh(other.buf);
	plant(dir, "mnt-shared.json.bak", "{");
	plant(dir, ".mnt-shared.json.tmp", "{");
	assert_int_equal(storage_conf_load(&root, &conf, &err), -E2BIG);
	assert_string_equal(err.buf, "2 volumes are planned (/mnt/a, /mnt/shared): choose one "
				     "with --mount");
	assert_null(conf.mount);
	strbuf_reset(&err);
	assert_int_equal(storage_conf_load_all(&root, &confs, &nr, &err), 0);
	assert_int_equal(nr, 2);
	assert_string_equal(confs[0].mount, "/mnt/a");
	assert_string_equal(confs[1].mount, "/mnt/shared");
	storage_conf_release_all(confs, nr);
	assert_int_equal(storage_conf_load_mount(&root, "/mnt/shared", &conf, &err), 0);
	assert_string_equal(conf.mount, "/mnt/shared");
	assert_int_equal(conf.nr_nodes, 2);
	storage_conf_release(&conf);

	/* A bad file fails them all, named. */
	plant(dir, "mnt-b.json", "{}");
	assert_int_equal(storage_conf_load_all(&root, &confs, &nr, &err), -EINVAL);
	assert_int_equal(nr, 0);
	assert_null(confs);
	assert_string_equal(err.buf, "/etc/sparkctl/storage.d/mnt-b.json: schema_version: missing");
	strbuf_reset(&err);
	assert_int_equal(storage_conf_load(&root, &conf, &err), -EINVAL);
	assert_string_equal(err.buf, "/etc/sparkctl/storage.d/mnt-b.json: schema_version: missing");
	rootfs_close(&root);
	remove_tree(dir);
	strbuf_release(&err);
	strbuf_release(&other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(conf_round_trip), cmocka_unit_test(conf_defaults),
		cmocka_unit_test(conf_refusals),   cmocka_unit_test(nqn_syntax),
		cmocka_unit_test(unit_names),	   cmocka_unit_test(other_names),
		cmocka_unit_test(conf_file_names), cmocka_unit_test(conf_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
