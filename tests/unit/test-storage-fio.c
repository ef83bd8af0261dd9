/*
 * Unit tests of storage/fio.c (fio's reports as fio 3.33 writes them,
 * captured on tmpfs; fio's command line; the payload ceiling and the
 * verdict) and of probe/block_path.c on sysfs trees made here.
 */
#include "sparkctl.h"

#include <math.h>
#include <sys/sysmacros.h>

#include "test_util.h"

#include "lib/rootfs.h"
#include "probe/block_path.h"
#include "storage/fio.h"

#define FIXTURE(name) FIXTURES_DIR "/storage/" name

static void read_fixture(const char *path, struct strbuf *sb)
{
	if (strbuf_read_path(sb, path, (size_t)1 << 20) < 0)
		fail_msg("cannot read %s", path);
}

static bool near(double a, double b)
{
	return fabs(a - b) <= 1e-6 * fmax(1, fabs(b));
}

static void parse_fixture(const char *name, bool writes, struct fio_result *r)
{
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;

	read_fixture(name, &text);
	fio_result_init(r);
	if (fio_result_parse(text.buf, text.len, writes, r, &err) < 0)
		fail_msg("%s: %s", name, err.buf);
	strbuf_release(&text);
	strbuf_release(&err);
}

static void test_seq_read(void **state)
{
	(void)state;
	struct fio_result r;

	parse_fixture(FIXTURE("fio-tmpfs-seq-read.json"), false, &r);
	assert_string_equal(r.version, "fio-3.33");
	assert_int_equal(r.error, 0);
	assert_true(near(r.bw_bytes, 2796202666));
	assert_true(near(r.iops, 2666.666667));
	assert_int_equal(r.io_bytes, 67108864);
	assert_int_equal(r.runtime_ms, 24);
	assert_true(near(r.clat_p50_us, 9240.576));
	assert_true(near(r.clat_p99_us, 22675.456));
	assert_true(near(r.clat_mean_us, 9372.780921875));
	fio_result_release(&r);

	/* The write side of a read job moved nothing and has no latency. */
	parse_fixture(FIXTURE("fio-tmpfs-seq-read.json"), true, &r);
	assert_int_equal(r.io_bytes, 0);
	assert_true(r.bw_bytes == 0);
	assert_true(r.clat_p99_us < 0);
	fio_result_release(&r);
}

static void test_seq_write_and_latency(void **state)
{
	(void)state;
	struct fio_result r;

	parse_fixture(FIXTURE("fio-tmpfs-seq-write.json"), true, &r);
	assert_true(near(r.bw_bytes, 3947580235));
	assert_int_equal(r.io_bytes, 67108864);
	assert_true(near(r.clat_p99_us, 15138.816));
	fio_result_release(&r);

	parse_fixture(FIXTURE("fio-tmpfs-lat-qd1.json"), false, &r);
	assert_true(near(r.iops, 455111.111111));
	assert_true(near(r.clat_p50_us, 0.205));
	assert_true(near(r.clat_p99_us, 0.868));
	fio_result_release(&r);
}

/* A full filesystem: fio's error lines come first on stdout, then the report with error 28. */
static void test_enospc(void **state)
{
	(void)state;
	struct fio_result r;

	parse_fixture(FIXTURE("fio-enospc-seq-write.json"), true, &r);
	assert_int_equal(r.error, ENOSPC);
	assert_int_equal(r.io_bytes, 8388608);
	fio_result_release(&r);
}

/* Without group_reporting each job is its own: they add up, the slowest job's runtime counts. */
static void test_jobs_add_up(void **state)
{
	(void)state;
	static const char text[] =
		"{\"fio version\":\"fio-3.33\",\"jobs\":["
		"{\"error\":0,\"read\":{\"io_bytes\":100,\"bw_bytes\":1000,\"iops\":10.5,"
		"\"runtime\":7,\"clat_ns\":{\"mean\":2000,\"N\":3,\"percentile\":{\"50.000000\":"
		"1000,"
		"\"99.000000\":5000}}}},"
		"{\"error\":5,\"read\":{\"io_bytes\":50,\"bw_bytes\":500,\"iops\":4.5,\"runtime\":"
		"9}}]}";
	struct fio_result r;
	struct strbuf err = STRBUF_INIT;

	fio_result_init(&r);
	assert_int_equal(fio_result_parse(text, strlen(text), false, &r, &err), 0);
	assert_int_equal(r.io_bytes, 150);
	assert_true(near(r.bw_bytes, 1500));
	assert_true(near(r.iops, 15));
	assert_int_equal(r.runtime_ms, 9);
	assert_int_equal(r.error, EIO);
	assert_true(near(r.clat_p50_us, 1));
	assert_true(near(r.clat_p99_us, 5));
	fio_result_release(&r);
	strbuf_release(&err);
}

static void expect_refused(const char *text, const char *message)
{
	struct fio_result r;
	struct strbuf err = STRBUF_INIT;

	fio_result_init(&r);
	assert_int_equal(fio_result_parse(text, strlen(text), false, &r, &err), -EINVAL);
	if (!strstr(err.buf, message))
		fail_msg("'%s': '%s' has no '%s'", text, err.buf, message);
	fio_result_release(&r);
	strbuf_release(&err);
}

static void test_not_fio(void **state)
{
	(void)state;
	expect_refused("", "no JSON report");
	expect_refused("fio: failed to open file\n", "no JSON report");
	expect_refused("{\"jobs\": []}", "no jobs");
	expect_refused("{\"jobs\": [{\"read\": {\"io_bytes\": 1}}]}", "jobs[0].read");
	expect_refused("{\"jobs\": [{\"read\": 3}]}", "not fio's figures");
	expect_refused("{\"jobs\": [", "fio's report");
}

static void test_profiles(void **state)
{
	(void)state;
	const struct fio_profile *list[4];
	struct strbuf err = STRBUF_INIT;

	assert_int_equal(fio_profiles_parse(FIO_DEFAULT_PROFILES, list, 4, &err), 4);
	assert_string_equal(list[0]->rw, "read");
	assert_int_equal(list[0]->block_bytes, 1 << 20);
	assert_int_equal(list[0]->iodepth, 32);
	assert_int_equal(list[0]->numjobs, 4);
	assert_true(list[1]->writes);
	assert_int_equal(list[2]->iodepth, 128);
	assert_int_equal(list[3]->iodepth, 1);
	assert_true(list[3]->latency);
	/* Named twice: once; in the order given. */
	assert_int_equal(fio_profiles_parse("lat-qd1,seq-read,lat-qd1", list, 4, &err), 2);
	assert_string_equal(list[0]->name, "lat-qd1");
	assert_int_equal(fio_profiles_parse("seq-read,nope", list, 4, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "'nope'"));
	strbuf_reset(&err);
	assert_int_equal(fio_profiles_parse("", list, 4, &err), -EINVAL);
	strbuf_release(&err);
}

static void test_args(void **state)
{
	(void)state;
	struct strvec args = STRVEC_INIT;

	fio_args(fio_profile_find("seq-write"), "/mnt/x/.sparkctl-bench-1-2", 16 << 20, 2, false,
		 &args);
	assert_true(strvec_contains(&args, "--filename=/mnt/x/.sparkctl-bench-1-2"));
	assert_true(strvec_contains(&args, "--rw=write"));
	assert_true(strvec_contains(&args, "--bs=1048576"));
	assert_true(strvec_contains(&args, "--iodepth=32"));
	assert_true(strvec_contains(&args, "--numjobs=4"));
	assert_true(strvec_contains(&args, "--direct=0"));
	assert_true(strvec_contains(&args, "--size=16777216"));
	assert_true(strvec_contains(&args, "--runtime=2"));
	assert_true(strvec_contains(&args, "--thread"));
	assert_true(strvec_contains(&args, "--group_reporting"));
	assert_true(strvec_contains(&args, "--output-format=json"));
	strvec_clear(&args);
}

static void test_ceiling_and_verdict(void **state)
{
	(void)state;
	double c9000 = fio_payload_ceiling_gbytes(100000, 9000);
	double c1500 = fio_payload_ceiling_gbytes(100000, 1500);

	/* 12.5 GB/s of line * 8960/9038 * 131072/131096. */
	assert_true(fabs(c9000 - 12.3898) < 0.001);
	assert_true(fabs(c1500 - 11.8640) < 0.001);
	assert_true(fabs(fio_payload_ceiling_gbytes(200000, 9000) - 2 * c9000) < 1e-9);
	assert_true(fio_payload_ceiling_gbytes(-1, 9000) == 0);
	assert_true(fio_payload_ceiling_gbytes(100000, -1) == 0);
	assert_true(fio_payload_ceiling_gbytes(100000, 68) == 0);

	assert_int_equal(fio_judge(11.2, c9000), FIO_VERDICT_OK);
	assert_int_equal(fio_judge(6.2, c9000), FIO_VERDICT_OK);
	assert_int_equal(fio_judge(6.1, c9000), FIO_VERDICT_LOW);
	assert_int_equal(fio_judge(0, c9000), FIO_VERDICT_LOW);
	assert_int_equal(fio_judge(3, 0), FIO_VERDICT_UNKNOWN);
	assert_int_equal(fio_judge(NAN, c9000), FIO_VERDICT_UNKNOWN);
	assert_string_equal(fio_verdict_name(FIO_VERDICT_OK), "ok");
	assert_string_equal(fio_verdict_name(FIO_VERDICT_LOW), "low");
	assert_string_equal(fio_verdict_name(FIO_VERDICT_UNKNOWN), "no line rate known");
}

/*
 * fio's reports from the storage test VM (tests/fixtures/storage/README):
 * fio 3.33 on ext4 over NVMe/TCP on 127.0.0.1, under QEMU TCG.
 */
static void test_vm_reports(void **state)
{
	(void)state;
	struct fio_result r;

	parse_fixture(FIXTURE("fio-seq-read.json"), false, &r);
	assert_string_equal(r.version, "fio-3.33");
	assert_int_equal(r.error, 0);
	assert_true(near(r.bw_bytes, 39670553));
	assert_int_equal(r.io_bytes, 84934656);
	assert_int_equal(r.runtime_ms, 2141);
	fio_result_release(&r);

	parse_fixture(FIXTURE("fio-seq-write.json"), true, &r);
	assert_true(near(r.bw_bytes, 105498478));
	assert_true(near(r.iops, 100.611189));
	fio_result_release(&r);

	parse_fixture(FIXTURE("fio-rand4k-qd128.json"), false, &r);
	assert_true(near(r.iops, 666.832918));
	assert_true(near(r.clat_p99_us, 299892.736));
	fio_result_release(&r);

	parse_fixture(FIXTURE("fio-lat-qd1.json"), false, &r);
	assert_true(near(r.clat_p50_us, 18.304));
	assert_true(near(r.clat_p99_us, 2441.216));
	assert_true(near(r.clat_mean_us, 87.773288716));
	fio_result_release(&r);
}

/* The VM's host tree: the namespace below its subsystem, the controller over TCP. */
static void test_vm_tree(void **state)
{
	(void)state;
	struct rootfs root;
	struct block_path bp;

	assert_int_equal(rootfs_open(&root, FIXTURES_DIR "/storage/root"), 0);
	block_path_init(&bp);
	assert_int_equal(block_path_read_disk(&root, "nvme0n1", &bp), 1);
	assert_string_equal(bp.controller, "nvme0");
	assert_string_equal(bp.transport, "tcp");
	assert_string_equal(bp.src_addr, "127.0.0.1");
	assert_string_equal(bp.traddr, "127.0.0.1");
	block_path_release(&bp);
	rootfs_close(&root);
}

/* ---- block_path on trees shaped as the kernel's sysfs ---- */

static char tree[] = "/tmp/sparkctl-test-block-XXXXXX";

static int make_tree(void **state)
{
	(void)state;
	char *cmd;

	assert_non_null(mkdtemp(tree));
	cmd = xasprintf(
		"cd '%s' && mkdir -p sys/dev/block sys/class/block "
		/* NVMe/TCP without native multipath: the disk's device is the controller */
		"sys/devices/virtual/nvme-fabrics/ctl/nvme1/nvme1n1 "
		/* local PCIe NVMe, multipath: the disk below its subsystem, a partition */
		"sys/devices/virtual/nvme-subsystem/nvme-subsys0/nvme0n1/nvme0n1p2 "
		"sys/devices/pci0000:00/0000:00:01.0/nvme/nvme0 "
		"sys/devices/pci0000:00/0000:00:02.0/virtio1/block/vda && "
		"echo tcp > sys/devices/virtual/nvme-fabrics/ctl/nvme1/transport && "
		"echo traddr=198.18.1.1,trsvcid=4420,src_addr=198.18.1.2 > "
		"sys/devices/virtual/nvme-fabrics/ctl/nvme1/address && "
		"echo pcie > sys/devices/pci0000:00/0000:00:01.0/nvme/nvme0/transport && "
		"echo 0000:00:01.0 > sys/devices/pci0000:00/0000:00:01.0/nvme/nvme0/address && "
		"ln -s ../../../pci0000:00/0000:00:01.0/nvme/nvme0 "
		"sys/devices/virtual/nvme-subsystem/nvme-subsys0/nvme0 && "
		"echo 2 > "
		"sys/devices/virtual/nvme-subsystem/nvme-subsys0/nvme0n1/nvme0n1p2/partition "
		"&& "
		"ln -s ../../devices/virtual/nvme-fabrics/ctl/nvme1/nvme1n1 sys/dev/block/259:1 && "
		"ln -s ../../devices/virtual/nvme-subsystem/nvme-subsys0/nvme0n1/nvme0n1p2 "
		"sys/dev/block/259:3 && "
		"ln -s ../../devices/pci0000:00/0000:00:02.0/virtio1/block/vda sys/dev/block/254:0 "
		"&& "
		"ln -s ../../devices/virtual/nvme-fabrics/ctl/nvme1/nvme1n1 "
		"sys/class/block/nvme1n1 && "
		"ln -s ../../nvme1 sys/devices/virtual/nvme-fabrics/ctl/nvme1/nvme1n1/device && "
		"ln -s ../../devices/virtual/nvme-subsystem/nvme-subsys0/nvme0n1 "
		"sys/class/block/nvme0n1 && "
		"ln -s ../../nvme-subsys0 "
		"sys/devices/virtual/nvme-subsystem/nvme-subsys0/nvme0n1/device && "
		"mkdir -p sys/class/net/eth9 && echo 100000 > sys/class/net/eth9/speed && "
		"echo 9000 > sys/class/net/eth9/mtu && mkdir -p sys/class/net/lo && "
		"echo 65536 > sys/class/net/lo/mtu",
		tree);
	sh(cmd);
	free(cmd);
	return 0;
}

static int drop_tree(void **state)
{
	(void)state;
	remove_tree(tree);
	return 0;
}

static void read_path(dev_t dev, struct block_path *bp, int want)
{
	struct rootfs root;

	assert_int_equal(rootfs_open(&root, tree), 0);
	block_path_init(bp);
	assert_int_equal(block_path_read(&root, dev, bp), want);
	rootfs_close(&root);
}

static void test_block_path(void **state)
{
	(void)state;
	struct block_path bp;
	struct rootfs root;
	int64_t speed, mtu;

	read_path(makedev(259, 1), &bp, 1);
	assert_string_equal(bp.disk, "nvme1n1");
	assert_string_equal(bp.controller, "nvme1");
	assert_string_equal(bp.transport, "tcp");
	assert_string_equal(bp.src_addr, "198.18.1.2");
	assert_string_equal(bp.traddr, "198.18.1.1");
	block_path_release(&bp);

	/* A partition of a multipath disk: the disk, then its subsystem's controller. */
	read_path(makedev(259, 3), &bp, 1);
	assert_string_equal(bp.disk, "nvme0n1");
	assert_string_equal(bp.controller, "nvme0");
	assert_string_equal(bp.transport, "pcie");
	assert_null(bp.src_addr);
	block_path_release(&bp);

	read_path(makedev(254, 0), &bp, 1);
	assert_string_equal(bp.disk, "vda");
	assert_null(bp.transport);
	block_path_release(&bp);

	/* tmpfs: no block device */
	read_path(makedev(0, 42), &bp, 0);
	assert_null(bp.disk);
	block_path_release(&bp);

	assert_int_equal(rootfs_open(&root, tree), 0);
	block_path_netdev_rate(&root, "eth9", &speed, &mtu);
	assert_true(speed == 100000 && mtu == 9000);
	block_path_netdev_rate(&root, "lo", &speed, &mtu);
	assert_true(speed == -1 && mtu == 65536);
	block_path_netdev_rate(&root, "nosuch", &speed, &mtu);
	assert_true(speed == -1 && mtu == -1);
	rootfs_close(&root);

	{
		char *lo = block_path_netdev_of_address("127.0.0.1");
		assert_non_null(lo);
		assert_string_equal(lo, "lo");
		free(lo);
		assert_null(block_path_netdev_of_address("198.51.100.77"));
		assert_null(block_path_netdev_of_address("not an address"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seq_read),
		cmocka_unit_test(test_seq_write_and_latency),
		cmocka_unit_test(test_enospc),
		cmocka_unit_test(test_jobs_add_up),
		cmocka_unit_test(test_not_fio),
		cmocka_unit_test(test_profiles),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_ceiling_and_verdict),
		cmocka_unit_test(test_vm_reports),
		cmocka_unit_test(test_vm_tree),
		cmocka_unit_test_setup_teardown(test_block_path, make_tree, drop_tree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
