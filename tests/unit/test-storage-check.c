/*
 * Unit tests of probe/nvme.c (the parsers of sysfs addresses, namespace
 * entries, mount tables and fstab, by-uuid links, hostnqn; the probe on a
 * tree) and of the inventory's storage section read back from JSON.
 */
#include "sparkctl.h"

#include "test_util.h"

#include "inventory/inventory_json.h"
#include "lib/json.h"
#include "probe/nvme.h"
#include "storage/storage_conf.h"

static void address_strings(void **state)
{
	struct nvme_address a;

	(void)state;
	assert_int_equal(
		nvme_address_parse("traddr=198.18.1.1,trsvcid=4420,src_addr=198.18.1.2\n", &a), 0);
	assert_string_equal(a.traddr, "198.18.1.1");
	assert_string_equal(a.trsvcid, "4420");
	assert_string_equal(a.src_addr, "198.18.1.2");
	assert_null(a.host_traddr);
	assert_null(a.host_iface);
	nvme_address_release(&a);
	/* Bound connections add host_traddr and host_iface; unknown keys are ignored. */
	assert_int_equal(nvme_address_parse("traddr=fe80::1,trsvcid=4421,host_traddr=198.18.1.2,"
					    "host_iface=enp1s0f1np1,src_addr=198.18.1.2,new_key=x",
					    &a),
			 0);
	assert_string_equal(a.traddr, "fe80::1");
	assert_string_equal(a.host_iface, "enp1s0f1np1");
	assert_string_equal(a.host_traddr, "198.18.1.2");
	nvme_address_release(&a);
	/* A loop controller's address is empty. */
	assert_int_equal(nvme_address_parse("", &a), 0);
	assert_null(a.traddr);
	assert_int_equal(nvme_address_parse("traddr", &a), -EINVAL);
	assert_int_equal(nvme_address_parse("=x,traddr=1", &a), -EINVAL);
	assert_null(a.traddr);
}

static void namespace_entries(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	assert_int_equal(nvme_namespace_device("nvme1n1", &sb), 0);
	assert_string_equal(sb.buf, "nvme1n1");
	assert_int_equal(nvme_namespace_device("nvme1c2n13", &sb), 0);
	assert_string_equal(sb.buf, "nvme1n13");
	assert_int_equal(nvme_namespace_device("nvme10c10n1", &sb), 0);
	assert_string_equal(sb.buf, "nvme10n1");
	static const char *const not_namespaces[] = {
		"nvme1",     "nvme",  "nvme1n",	  "nvme1c1",  "nvme1cn1",
		"nvme1n1p1", "power", "nvmex1n1", "nvme1n1 ", "hwmon2",
	};
	for (size_t i = 0; i < ARRAY_SIZE(not_namespaces); i++)
		assert_int_equal(nvme_namespace_device(not_namespaces[i], &sb), -EINVAL);
	strbuf_release(&sb);
}

static void mount_tables(void **state)
{
	static const char mounts[] = "/dev/nvme0n1p2 / ext4 rw,relatime 0 0\n"
				     "/dev/nvme1n1 /mnt/shared ext4 ro,noatime 0 0\n"
				     "tmpfs /mnt/with\\040space tmpfs rw 0 0\n"
				     "/dev/nvme2n1 /mnt/shared xfs rw,noatime 0 0\n"
				     "/dev/sda1 /mnt/shared2 ext4 rw 0 0";
	struct mount_line m;

	(void)state;
	/* The last mount at a point is the one on top. */
	assert_int_equal(mount_table_find(mounts, strlen(mounts), "/mnt/shared", &m), 1);
	assert_string_equal(m.spec, "/dev/nvme2n1");
	assert_string_equal(m.fs, "xfs");
	assert_string_equal(m.options, "rw,noatime");
	mount_line_release(&m);
	assert_int_equal(mount_table_find(mounts, strlen(mounts), "/mnt/with space", &m), 1);
	assert_string_equal(m.spec, "tmpfs");
	mount_line_release(&m);
	/* A line without a newline at the end counts; a prefix of a mount point does not. */
	assert_int_equal(mount_table_find(mounts, strlen(mounts), "/mnt/shared2", &m), 1);
	mount_line_release(&m);
	assert_int_equal(mount_table_find(mounts, strlen(mounts), "/mnt", &m), 0);
	assert_null(m.spec);
	assert_int_equal(mount_table_find("", 0, "/", &m), 0);
}

static void fstab_lines(void **state)
{
	static const char fstab[] = "# /etc/fstab: static file system information.\n"
				    "#UUID=0 /mnt/shared ext4 defaults 0 0\n"
				    "\n"
				    "UUID=6d1c / ext4 errors=remount-ro 0 1\n"
				    "\tUUID=0b3c6a52  /mnt/shared/\text4  _netdev,nofail,noatime\n"
				    "/dev/sdb1 /mnt/short ext4\n";
	struct mount_line m;

	(void)state;
	assert_int_equal(mount_table_find(fstab, strlen(fstab), "/mnt/shared", &m), 1);
	assert_string_equal(m.spec, "UUID=0b3c6a52");
	assert_string_equal(m.dir, "/mnt/shared");
	assert_string_equal(m.options, "_netdev,nofail,noatime");
	assert_true(mount_has_option(m.options, "nofail"));
	assert_true(mount_has_option(m.options, "_netdev"));
	assert_false(mount_has_option(m.options, "netdev"));
	assert_false(mount_has_option(m.options, "ro"));
	mount_line_release(&m);
	/* fstab's options field may be left out: "defaults". */
	assert_int_equal(mount_table_find(fstab, strlen(fstab), "/mnt/short", &m), 1);
	assert_string_equal(m.options, "defaults");
	mount_line_release(&m);
	assert_false(mount_has_option("nofail_x,x_nofail", "nofail"));
	assert_true(mount_has_option("ro", "ro"));
	assert_false(mount_has_option("", "ro"));
}

static void by_uuid_links(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	by_uuid_target_path("../../nvme1n1", &sb);
	assert_string_equal(sb.buf, "/dev/nvme1n1");
	by_uuid_target_path("/dev/nvme2n1", &sb);
	assert_string_equal(sb.buf, "/dev/nvme2n1");
	by_uuid_target_path("./../../../../../nvme1n1", &sb);
	assert_string_equal(sb.buf, "/nvme1n1");
	strbuf_release(&sb);
}

static void hostnqn_files(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	static const char text[] = "nqn.2014-08.org.nvmexpress:uuid:1b4e28ba \nsecond line\n";

	(void)state;
	assert_int_equal(nvme_hostnqn_parse(text, strlen(text), &sb), 0);
	assert_string_equal(sb.buf, "nqn.2014-08.org.nvmexpress:uuid:1b4e28ba");
	assert_int_equal(nvme_hostnqn_parse("\n", 1, &sb), -EINVAL);
	assert_int_equal(nvme_hostnqn_parse("", 0, &sb), -EINVAL);
	strbuf_release(&sb);
}

/* The probe on a tree of tests/fixtures/storage-tree.sh, and its JSON read back. */
static void probe_tree(void **state)
{
	char dir[] = "/tmp/sparkctl-storage-XXXXXX";
	struct probe_options opts = { 0 };
	struct inventory inv, again;
	struct strbuf err = STRBUF_INIT;
	char *cmd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	cmd = xasprintf("MODELS=1 '%s/storage-tree.sh' '%s/spark-1cable' '%s/t' spark-02 ro nqn.x",
			FIXTURES_DIR, FIXTURES_DIR, dir);
	sh(cmd);
	free(cmd);
	cmd = xasprintf("%s/t", dir);
	opts.root = cmd;
	inventory_init(&inv);
	assert_int_equal(probe_inventory(&opts, &inv, &err), 0);
	const struct inv_storage *st = inv.storage;
	assert_non_null(st);
	assert_string_equal(st->hostnqn, "nqn.x");
	/* The PCIe drive is not a fabric controller. */
	assert_int_equal(st->nr_controllers, 2);
	assert_string_equal(st->controllers[0].name, "nvme1");
	assert_string_equal(st->controllers[0].src_addr, "192.168.177.11");
	assert_int_equal(st->controllers[0].trsvcid, 4420);
	assert_int_equal(st->controllers[0].namespaces.nr, 1);
	assert_string_equal(st->controllers[0].namespaces.v[0], "nvme1n1");
	/* Two plans, one volume each, by mount point: /mnt/models before /mnt/shared. */
	assert_int_equal(st->nr_volumes, 2);
	const struct inv_storage_volume *models = &st->volumes[0], *shared = &st->volumes[1];
	assert_string_equal(models->file, "/etc/sparkctl/storage.d/mnt-models.json");
	assert_string_equal(models->conf->mount, "/mnt/models");
	assert_string_equal(models->uuid_device, "/dev/nvme2n1");
	assert_int_equal(models->mount.mounted, TRI_YES);
	assert_string_equal(models->mount.device, "/dev/nvme2n1");
	assert_int_equal(models->fstab.present, TRI_YES);
	assert_non_null(strstr(models->fstab.spec, "7f1e2d3c"));
	assert_string_equal(shared->file, "/etc/sparkctl/storage.d/mnt-shared.json");
	assert_non_null(shared->conf);
	assert_null(shared->conf_error);
	assert_string_equal(shared->conf->node, "spark-02");
	assert_string_equal(shared->uuid_device, "/dev/nvme1n1");
	assert_int_equal(shared->mount.mounted, TRI_YES);
	assert_string_equal(shared->mount.device, "/dev/nvme1n1");
	assert_string_equal(shared->mount.access, "ro");
	assert_int_equal(shared->fstab.present, TRI_YES);
	/* A tree is not asked over the network. */
	assert_int_equal(shared->target_reachable, TRI_UNKNOWN);
	assert_int_equal(models->target_reachable, TRI_UNKNOWN);

	/* Written and read back: the same section. */
	json_t *doc = inventory_to_json(&inv), *doc2;
	inventory_init(&again);
	assert_int_equal(inventory_from_json(&again, doc, &err), 0);
	doc2 = inventory_to_json(&again);
	assert_true(json_equal(doc, doc2));
	assert_int_equal(again.storage->nr_volumes, 2);
	assert_string_equal(again.storage->volumes[1].conf->mount, "/mnt/shared");
	assert_int_equal(again.storage->volumes[1].conf->nodes[1].access, STORAGE_ACCESS_RO);
	json_decref(doc2);
	/* null reads back as no section; a section of the wrong type is an error. */
	jset(doc, "storage", json_null());
	inventory_release(&again);
	assert_int_equal(inventory_from_json(&again, doc, &err), 0);
	assert_null(again.storage);
	inventory_release(&again);
	jset(doc, "storage", json_integer(1));
	strbuf_reset(&err);
	assert_int_equal(inventory_from_json(&again, doc, &err), -EINVAL);
	assert_string_equal(err.buf, "storage: expected an object or null");
	inventory_release(&again);
	json_decref(doc);

	inventory_release(&inv);
	strbuf_release(&err);
	remove_tree(dir);
	free(cmd);
}

/* A bad plan is a volume with its error, beside the good one, which is still probed. */
static void probe_bad_plan(void **state)
{
	char dir[] = "/tmp/sparkctl-storage-XXXXXX";
	struct probe_options opts = { 0 };
	struct inventory inv;
	struct strbuf err = STRBUF_INIT;
	char *cmd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	cmd = xasprintf("MODELS=1 '%s/storage-tree.sh' '%s/spark-1cable' '%s/t' spark-02 rw && "
			"echo '{' > '%s/t/etc/sparkctl/storage.d/mnt-models.json' && "
			"echo x > '%s/t/etc/sparkctl/storage.d/mnt-shared.json.bak'",
			FIXTURES_DIR, FIXTURES_DIR, dir, dir, dir);
	sh(cmd);
	free(cmd);
	cmd = xasprintf("%s/t", dir);
	opts.root = cmd;
	inventory_init(&inv);
	assert_int_equal(probe_inventory(&opts, &inv, &err), 0);
	/* The good plan first (by mount point), the bad one after; a backup is no plan. */
	assert_int_equal(inv.storage->nr_volumes, 2);
	assert_string_equal(inv.storage->volumes[0].conf->mount, "/mnt/shared");
	assert_int_equal(inv.storage->volumes[0].mount.mounted, TRI_YES);
	assert_null(inv.storage->volumes[1].conf);
	assert_string_equal(inv.storage->volumes[1].file,
			    "/etc/sparkctl/storage.d/mnt-models.json");
	assert_non_null(strstr(inv.storage->volumes[1].conf_error,
			       "/etc/sparkctl/storage.d/mnt-models.json"));
	assert_int_equal(inv.storage->volumes[1].mount.mounted, TRI_UNKNOWN);
	inventory_release(&inv);
	strbuf_release(&err);
	remove_tree(dir);
	free(cmd);
}

/* A node without a plan and without fabric controllers has no section. */
static void probe_no_storage(void **state)
{
	struct inventory inv;

	(void)state;
	load_fixture("spark-1cable", &inv);
	assert_null(inv.storage);
	inventory_release(&inv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(address_strings),  cmocka_unit_test(namespace_entries),
		cmocka_unit_test(mount_tables),	    cmocka_unit_test(fstab_lines),
		cmocka_unit_test(by_uuid_links),    cmocka_unit_test(hostnqn_files),
		cmocka_unit_test(probe_tree),	    cmocka_unit_test(probe_bad_plan),
		cmocka_unit_test(probe_no_storage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
