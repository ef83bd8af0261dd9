/*
 * Unit tests of bench/link_parse_perftest.c and link_parse_iperf3.c:
 * perftest's ib_write_bw / ib_write_lat tables of several versions
 * (rendered from perftest's format strings),
 * iperf3 -J reports (captured on loopback), the unit conversions, the
 * error lines, and malformed input.  The fixtures and where they come from:
 * tests/fixtures/linkbench/README.md.
 */
#include "sparkctl.h"

#include <math.h>

#include "test_util.h"

#include "bench/link_parse.h"
#include "lib/xalloc.h"

#define FIXTURE(name) FIXTURES_DIR "/linkbench/" name

/* perftest's MiB/sec (and MB/sec) to Gb/s: 2^20 bytes, 8 bits, 10^9. */
static double mib(double v)
{
	return v * 1048576.0 * 8.0 / 1e9;
}

#define assert_near(a, b) assert_true(fabs((a) - (b)) < 1e-9)

static void read_fixture(const char *path, struct strbuf *sb)
{
	strbuf_reset(sb);
	int r = strbuf_read_path(sb, path, 1 << 20);
	if (r < 0)
		fail_msg("cannot read %s: %s", path, strerror(-r));
}

static void bw_fixture(const char *path, struct perftest_bw *bw)
{
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;

	read_fixture(path, &text);
	int r = perftest_parse_bw(text.buf, bw, &err);
	if (r < 0)
		fail_msg("%s: %s", path, err.buf);
	assert_string_equal(err.buf, "");
	strbuf_release(&text);
	strbuf_release(&err);
}

static void lat_fixture(const char *path, struct perftest_lat *lat)
{
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;

	read_fixture(path, &text);
	int r = perftest_parse_lat(text.buf, lat, &err);
	if (r < 0)
		fail_msg("%s: %s", path, err.buf);
	strbuf_release(&text);
	strbuf_release(&err);
}

/* The status of parsing a fixture that must fail, and the message in err. */
static int bw_fixture_error(const char *path, struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT;
	struct perftest_bw bw;

	read_fixture(path, &text);
	strbuf_reset(err);
	int r = perftest_parse_bw(text.buf, &bw, err);
	assert_true(r < 0);
	assert_null(bw.rows);
	assert_true(err->len > 0);
	strbuf_release(&text);
	return r;
}

static void assert_plain_row(const struct perftest_bw_row *row)
{
	assert_true(isnan(row->port_gbps[0]) && isnan(row->port_gbps[1]));
	assert_true(isnan(row->port_mpps[0]) && isnan(row->port_mpps[1]));
	assert_true(isnan(row->cpu_util_pct));
	assert_int_equal(row->sl, -1);
}

static void test_units(void **state)
{
	(void)state;
	/* 1 MiB/s = 8388608 bit/s */
	assert_near(mib(1.0), 0.008388608);
	/* 11243.82 MB/sec (perftest's MB = 2^20 bytes) = 94.3206 Gb/s, not 89.95 */
	assert_near(mib(11243.82), 11243.82 * 0.008388608);
	assert_true(fabs(mib(11243.82) - 94.32) < 0.01);
}

static void test_bw_44_mbs(void **state)
{
	(void)state;
	struct perftest_bw bw;

	bw_fixture(FIXTURE("ib_write_bw-4.4-0.8-mbs.txt"), &bw);
	assert_int_equal(bw.nr_rows, 1);
	assert_string_equal(bw.unit, "MB/sec");
	assert_int_equal(bw.rows[0].bytes, 65536);
	assert_int_equal(bw.rows[0].iterations, 5000);
	assert_near(bw.rows[0].peak_gbps, mib(11262.89));
	assert_near(bw.rows[0].avg_gbps, mib(11243.82));
	assert_near(bw.rows[0].msg_rate_mpps, 0.179901);
	assert_plain_row(&bw.rows[0]);
	assert_int_equal(bw.headline.bytes, 65536);
	assert_near(bw.headline.avg_gbps, mib(11243.82));
	assert_true(bw.closed);
	assert_string_equal(bw.error, "");
	perftest_bw_release(&bw);
	assert_null(bw.rows);
}

static void test_bw_44_gbits(void **state)
{
	(void)state;
	struct perftest_bw bw;

	bw_fixture(FIXTURE("ib_write_bw-4.4-0.8-gbits.txt"), &bw);
	assert_int_equal(bw.nr_rows, 1);
	assert_string_equal(bw.unit, "Gb/sec");
	assert_near(bw.headline.peak_gbps, 94.48);
	assert_near(bw.headline.avg_gbps, 94.32);
	assert_near(bw.headline.msg_rate_mpps, 0.179901);
	assert_true(bw.closed);
	perftest_bw_release(&bw);
}

static void test_bw_2304_all(void **state)
{
	(void)state;
	struct perftest_bw bw;

	/* -a: 23 sizes, a "Conflicting CPU frequency" line (stderr) before each row */
	bw_fixture(FIXTURE("ib_write_bw-23.04-all-mbs.txt"), &bw);
	assert_int_equal(bw.nr_rows, 23);
	assert_string_equal(bw.unit, "MB/sec");
	for (size_t i = 0; i < bw.nr_rows; i++) {
		assert_int_equal(bw.rows[i].bytes, UINT64_C(1) << (i + 1));
		assert_int_equal(bw.rows[i].iterations, 5000);
		assert_plain_row(&bw.rows[i]);
	}
	assert_near(bw.rows[0].peak_gbps, mib(17.62));
	assert_near(bw.rows[0].avg_gbps, mib(17.55));
	assert_near(bw.rows[0].msg_rate_mpps, 9.2);
	assert_near(bw.rows[10].avg_gbps, mib(11062.62));
	assert_near(bw.rows[10].msg_rate_mpps, 5.664062);
	assert_int_equal(bw.headline.bytes, 8388608);
	assert_near(bw.headline.peak_gbps, mib(11106.87));
	assert_near(bw.headline.avg_gbps, mib(11062.62));
	assert_near(bw.headline.msg_rate_mpps, 0.001383);
	assert_true(bw.closed);
	assert_string_equal(bw.error, "");
	perftest_bw_release(&bw);
}

static void test_bw_2304_duration(void **state)
{
	(void)state;
	struct perftest_bw bw;

	/* -D: peak not measured */
	bw_fixture(FIXTURE("ib_write_bw-23.04-duration-mbs.txt"), &bw);
	assert_int_equal(bw.nr_rows, 1);
	assert_int_equal(bw.headline.iterations, 1769834);
	assert_near(bw.headline.peak_gbps, 0.0);
	assert_near(bw.headline.avg_gbps, mib(11062.62));
	assert_near(bw.headline.msg_rate_mpps, 0.177002);
	perftest_bw_release(&bw);
}

static void test_bw_spark(void **state)
{
	(void)state;
	struct perftest_bw bw;

	/* The DGX Spark example (92.57 Gb/s at 65536 B), --run_infinitely, stopped with ^C */
	bw_fixture(FIXTURE("ib_write_bw-24.01-spark-run-infinitely-gbits.txt"), &bw);
	assert_int_equal(bw.nr_rows, 5);
	assert_string_equal(bw.unit, "Gb/sec");
	assert_false(bw.closed);
	assert_int_equal(bw.rows[0].iterations, 882805);
	assert_near(bw.rows[0].avg_gbps, 92.57);
	assert_near(bw.rows[3].avg_gbps, 92.56);
	assert_near(bw.rows[3].msg_rate_mpps, 0.176552);
	for (size_t i = 0; i < bw.nr_rows; i++) {
		assert_int_equal(bw.rows[i].bytes, 65536);
		assert_near(bw.rows[i].peak_gbps, 0.0);
	}
	/* the latest interval */
	assert_int_equal(bw.headline.bytes, 65536);
	assert_int_equal(bw.headline.iterations, 882821);
	assert_near(bw.headline.avg_gbps, 92.57);
	assert_near(bw.headline.msg_rate_mpps, 0.176555);
	perftest_bw_release(&bw);
}

static void test_bw_2604(void **state)
{
	(void)state;
	struct perftest_bw bw;

	bw_fixture(FIXTURE("ib_write_bw-26.04-mibs.txt"), &bw);
	assert_int_equal(bw.nr_rows, 1);
	assert_string_equal(bw.unit, "MiB/sec");
	assert_near(bw.headline.peak_gbps, mib(11091.23));
	assert_near(bw.headline.avg_gbps, mib(11072.16));
	assert_near(bw.headline.msg_rate_mpps, 0.177155);
	assert_true(bw.closed);
	perftest_bw_release(&bw);

	/* -a --report_gbits: below 0.1 Gb/s perftest prints 6 decimals (REPORT_FMT_EXT) */
	bw_fixture(FIXTURE("ib_write_bw-26.04-all-gbits.txt"), &bw);
	assert_int_equal(bw.nr_rows, 23);
	assert_near(bw.rows[0].peak_gbps, 0.049749);
	assert_near(bw.rows[0].avg_gbps, 0.0496);
	assert_near(bw.rows[1].avg_gbps, 0.0992);
	assert_near(bw.rows[2].avg_gbps, 0.20);
	assert_near(bw.rows[11].avg_gbps, 92.88);
	assert_near(bw.rows[11].msg_rate_mpps, 2.834473);
	assert_int_equal(bw.headline.bytes, 8388608);
	assert_near(bw.headline.peak_gbps, 93.16);
	assert_near(bw.headline.avg_gbps, 92.88);
	perftest_bw_release(&bw);

	/* the server's output: the client's report */
	bw_fixture(FIXTURE("ib_write_bw-26.04-server-gbits.txt"), &bw);
	assert_int_equal(bw.nr_rows, 1);
	assert_near(bw.headline.peak_gbps, 93.04);
	assert_near(bw.headline.avg_gbps, 92.88);
	perftest_bw_release(&bw);
}

static void test_bw_variants(void **state)
{
	(void)state;
	struct perftest_bw bw;

	bw_fixture(FIXTURE("ib_write_bw-26.04-duration-cpu-util-gbits.txt"), &bw);
	assert_int_equal(bw.nr_rows, 1);
	assert_int_equal(bw.headline.iterations, 885742);
	assert_near(bw.headline.avg_gbps, 92.88);
	assert_near(bw.headline.cpu_util_pct, 3.37);
	assert_true(isnan(bw.headline.port_gbps[0]));
	perftest_bw_release(&bw);

	bw_fixture(FIXTURE("ib_write_bw-26.04-per-port-duration-gbits.txt"), &bw);
	assert_int_equal(bw.nr_rows, 1);
	assert_near(bw.headline.avg_gbps, 184.81);
	assert_near(bw.headline.msg_rate_mpps, 0.352498);
	assert_near(bw.headline.port_gbps[0], 92.41);
	assert_near(bw.headline.port_mpps[0], 0.176258);
	assert_near(bw.headline.port_gbps[1], 92.40);
	assert_near(bw.headline.port_mpps[1], 0.176240);
	assert_true(isnan(bw.headline.cpu_util_pct));
	assert_true(bw.closed);
	perftest_bw_release(&bw);

	/* QoS (REPORT_FMT_QOS, 26.04): #sl in the second column, an empty line after the row */
	static const char qos[] =
		" #bytes    #sl      #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   "
		"MsgRate[Mpps]\n"
		" 65536      3           5000           93.04              92.88                "
		"    0.177155\n"
		"\n"
		"------------------------------------------------------------------------------"
		"---------\n";
	struct strbuf err = STRBUF_INIT;
	assert_int_equal(perftest_parse_bw(qos, &bw, &err), 0);
	assert_int_equal(bw.nr_rows, 1);
	assert_int_equal(bw.headline.sl, 3);
	assert_int_equal(bw.headline.iterations, 5000);
	assert_near(bw.headline.avg_gbps, 92.88);
	assert_near(bw.headline.msg_rate_mpps, 0.177155);
	perftest_bw_release(&bw);
	strbuf_release(&err);
}

static void test_bw_errors(void **state)
{
	(void)state;
	struct strbuf err = STRBUF_INIT;

	assert_int_equal(bw_fixture_error(FIXTURE("ib_write_bw-26.04-err-connect.txt"), &err),
			 -EIO);
	assert_string_equal(err.buf, "Couldn't connect to 192.168.200.12:18515");

	assert_int_equal(bw_fixture_error(FIXTURE("ib_write_bw-26.04-err-nodev.txt"), &err), -EIO);
	assert_string_equal(err.buf, "IB device mlx5_9 not found");

	assert_int_equal(bw_fixture_error(FIXTURE("ib_write_bw-4.4-0.8-err-nodevices.txt"), &err),
			 -EIO);
	assert_string_equal(err.buf, "Did not detect devices");

	assert_int_equal(bw_fixture_error(FIXTURE("ib_write_bw-26.04-err-rtr.txt"), &err), -EIO);
	assert_string_equal(err.buf, "Failed to modify QP 298 to RTR");

	/* not the stderr noise before it */
	assert_int_equal(bw_fixture_error(FIXTURE("ib_write_bw-26.04-err-context.txt"), &err),
			 -EIO);
	assert_string_equal(err.buf, "Couldn't get context for the device");

	/* a header, then a completion error: no row */
	assert_int_equal(bw_fixture_error(FIXTURE("ib_write_bw-26.04-err-completion.txt"), &err),
			 -EPROTO);
	assert_non_null(strstr(err.buf, "without a result row"));
	assert_non_null(
		strstr(err.buf, "Failed status-transport retry counter exceeded (12): wr_id 0"));

	/* the wrong parser */
	assert_int_equal(bw_fixture_error(FIXTURE("ib_write_lat-26.04.txt"), &err), -EPROTO);
	assert_string_equal(err.buf, "a latency table, not a bandwidth one");
	strbuf_release(&err);
}

static void test_lat(void **state)
{
	(void)state;
	struct perftest_lat lat;

	lat_fixture(FIXTURE("ib_write_lat-4.4-0.8.txt"), &lat);
	assert_int_equal(lat.nr_rows, 1);
	assert_false(lat.duration);
	assert_true(lat.closed);
	assert_int_equal(lat.headline.bytes, 2);
	assert_int_equal(lat.headline.iterations, 1000);
	assert_near(lat.headline.t_min_us, 1.08);
	assert_near(lat.headline.t_max_us, 4.92);
	assert_near(lat.headline.t_typical_us, 1.11);
	assert_near(lat.headline.t_avg_us, 1.12);
	assert_near(lat.headline.t_stdev_us, 0.05);
	assert_near(lat.headline.t_p99_us, 1.24);
	assert_near(lat.headline.t_p999_us, 4.92);
	assert_true(isnan(lat.headline.tps));
	assert_true(isnan(lat.headline.cpu_util_pct));
	perftest_lat_release(&lat);

	lat_fixture(FIXTURE("ib_write_lat-23.04-all.txt"), &lat);
	assert_int_equal(lat.nr_rows, 23);
	for (size_t i = 0; i < lat.nr_rows; i++)
		assert_int_equal(lat.rows[i].bytes, UINT64_C(1) << (i + 1));
	assert_near(lat.rows[0].t_typical_us, 1.52);
	assert_near(lat.rows[21].t_avg_us, 363.12);
	assert_int_equal(lat.headline.bytes, 8388608);
	assert_near(lat.headline.t_min_us, 724.63);
	assert_near(lat.headline.t_max_us, 727.78);
	assert_near(lat.headline.t_typical_us, 724.68);
	assert_near(lat.headline.t_avg_us, 724.70);
	assert_near(lat.headline.t_stdev_us, 7.27);
	assert_near(lat.headline.t_p99_us, 724.89);
	assert_near(lat.headline.t_p999_us, 727.78);
	perftest_lat_release(&lat);

	/* "Disabling dynamic polling" before the description (26.04) */
	lat_fixture(FIXTURE("ib_write_lat-26.04.txt"), &lat);
	assert_int_equal(lat.nr_rows, 1);
	assert_near(lat.headline.t_min_us, 1.63);
	assert_near(lat.headline.t_typical_us, 1.70);
	assert_near(lat.headline.t_avg_us, 1.72);
	assert_near(lat.headline.t_p99_us, 1.94);
	assert_near(lat.headline.t_p999_us, 6.21);
	perftest_lat_release(&lat);

	lat_fixture(FIXTURE("ib_write_lat-26.04-duration.txt"), &lat);
	assert_int_equal(lat.nr_rows, 1);
	assert_true(lat.duration);
	assert_int_equal(lat.headline.bytes, 2);
	assert_int_equal(lat.headline.iterations, 1453779);
	assert_near(lat.headline.t_avg_us, 1.72);
	assert_near(lat.headline.tps, 290755.80);
	assert_true(isnan(lat.headline.t_min_us));
	assert_true(isnan(lat.headline.t_typical_us));
	assert_true(isnan(lat.headline.t_p999_us));
	perftest_lat_release(&lat);
}

static void test_lat_errors(void **state)
{
	(void)state;
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	struct perftest_lat lat;

	read_fixture(FIXTURE("ib_write_lat-26.04-err-connect.txt"), &text);
	assert_int_equal(perftest_parse_lat(text.buf, &lat, &err), -EIO);
	assert_string_equal(err.buf, "Couldn't connect to 192.168.200.12:18515");
	assert_null(lat.rows);

	read_fixture(FIXTURE("ib_write_bw-4.4-0.8-mbs.txt"), &text);
	strbuf_reset(&err);
	assert_int_equal(perftest_parse_lat(text.buf, &lat, &err), -EPROTO);
	assert_string_equal(err.buf, "a bandwidth table, not a latency one");
	strbuf_release(&text);
	strbuf_release(&err);
}

#define HDR_G " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
#define ROW_G " 65536      5000             93.04              92.88  \t\t     0.177155\n"
#define DASHES                                                                                     \
	"---------------------------------------------------------------------------------------"  \
	"\n"

static int bw_string(const char *text, struct strbuf *err)
{
	struct perftest_bw bw;

	strbuf_reset(err);
	int r = perftest_parse_bw(text, &bw, err);
	if (r == 0)
		perftest_bw_release(&bw);
	else
		assert_true(err->len > 0);
	return r;
}

static void test_bw_malformed(void **state)
{
	(void)state;
	struct strbuf err = STRBUF_INIT, big = STRBUF_INIT;
	struct perftest_bw bw;

	assert_int_equal(bw_string("", &err), -EIO);
	assert_string_equal(err.buf, "no output from perftest");
	assert_int_equal(bw_string("\n\n \n", &err), -EIO);
	assert_int_equal(perftest_parse_bw(NULL, &bw, &err), -EIO);
	/* an unknown failure: the line that looks like one */
	assert_int_equal(bw_string(DASHES " Something odd: cannot do it\n Bye\n", &err), -EIO);
	assert_string_equal(err.buf, "no result table in perftest's output: Something odd: cannot "
				     "do it");
	assert_int_equal(bw_string("hello\n", &err), -EIO);
	assert_non_null(strstr(err.buf, "ends with 'hello'"));
	/* WARNING and stderr noise never explain */
	assert_int_equal(bw_string(" WARNING: BW peak won't be measured in this run.\n", &err),
			 -EIO);
	assert_string_equal(err.buf, "no result table in perftest's output");

	/* the header only, or cut in the middle of the first row */
	assert_int_equal(bw_string(HDR_G, &err), -EPROTO);
	assert_string_equal(err.buf, "a result table without a result row");
	assert_int_equal(bw_string(HDR_G DASHES, &err), -EPROTO);
	assert_int_equal(bw_string(HDR_G " 65536      5000             93.0", &err), -EPROTO);
	/* a row cut short that is not the last line is malformed */
	assert_int_equal(bw_string(HDR_G " 65536      5000             93.04\n" DASHES, &err),
			 -EPROTO);
	assert_non_null(strstr(err.buf, "3 values under 5 columns"));
	assert_int_equal(bw_string(HDR_G ROW_G " 65536 5000 1 2 3 4\n", &err), -EPROTO);
	/* a last row cut short is dropped: the output ended there */
	assert_int_equal(perftest_parse_bw(HDR_G ROW_G " 65536      50", &bw, &err), 0);
	assert_int_equal(bw.nr_rows, 1);
	assert_false(bw.closed);
	perftest_bw_release(&bw);
	/* "\r\n" line ends (a terminal's) */
	assert_int_equal(perftest_parse_bw(" #bytes #iterations BW peak[Gb/sec] BW "
					   "average[Gb/sec] MsgRate[Mpps]\r\n 8 10 1.5 1.25 "
					   "0.5\r\n-----------\r\n",
					   &bw, &err),
			 0);
	assert_int_equal(bw.nr_rows, 1);
	assert_near(bw.headline.avg_gbps, 1.25);
	assert_true(bw.closed);
	perftest_bw_release(&bw);

	/* rows that are not numbers are not rows */
	assert_int_equal(bw_string(HDR_G " 65536 5000 abc 92.88 0.17\n" DASHES, &err), -EPROTO);
	assert_int_equal(bw_string(HDR_G " 65536 5000 -1 92.88 0.17\n" DASHES, &err), -EPROTO);
	assert_int_equal(bw_string(HDR_G " 65536 5000 nan 92.88 0.17\n" DASHES, &err), -EPROTO);
	assert_int_equal(bw_string(HDR_G " 65536 5000 1.2.3 92.88 0.17\n" DASHES, &err), -EPROTO);
	/* sizes are integers */
	assert_int_equal(bw_string(HDR_G " 65536.5 5000 1 92.88 0.17\n" DASHES, &err), -EPROTO);
	assert_non_null(strstr(err.buf, "bad value '65536.5'"));
	/* huge numbers */
	assert_int_equal(bw_string(HDR_G " 99999999999999999999999 5000 1 2 3\n" DASHES, &err),
			 -EPROTO);
	assert_non_null(strstr(err.buf, "bad value"));
	assert_int_equal(perftest_parse_bw(HDR_G " 18446744073709551615 18446744073709551615 "
						 "1 2 3\n",
					   &bw, &err),
			 0);
	assert_true(bw.headline.bytes == UINT64_MAX && bw.headline.iterations == UINT64_MAX);
	perftest_bw_release(&bw);
	strbuf_addstr(&big, HDR_G " 65536 5000 ");
	strbuf_addchars(&big, '9', 400);
	strbuf_addstr(&big, " 1 2\n");
	assert_int_equal(bw_string(big.buf, &err), -EPROTO);
	/* a very long line is noise */
	strbuf_reset(&big);
	strbuf_addstr(&big, HDR_G);
	strbuf_addchars(&big, '7', 100000);
	strbuf_addstr(&big, "\n" ROW_G DASHES);
	assert_int_equal(bw_string(big.buf, &err), 0);
	/* a long header is not one */
	strbuf_reset(&big);
	strbuf_addstr(&big, " #bytes #iterations ");
	strbuf_addchars(&big, 'x', 5000);
	strbuf_addstr(&big, "\n");
	assert_int_equal(bw_string(big.buf, &err), -EPROTO);
	strbuf_reset(&big);
	strbuf_addstr(&big, " #bytes #iterations");
	for (int i = 0; i < 40; i++)
		strbuf_addstr(&big, " #x");
	assert_int_equal(bw_string(big.buf, &err), -EPROTO);

	/* headers perftest never printed */
	assert_int_equal(bw_string(" #bytes     #iterations    BW peak[KB/sec]    BW "
				   "average[KB/sec]   MsgRate[Mpps]\n",
				   &err),
			 -EPROTO);
	assert_non_null(strstr(err.buf, "unknown bandwidth unit"));
	assert_int_equal(bw_string(" #bytes BW average[Gb/sec]\n", &err), -EPROTO);
	assert_int_equal(bw_string(" #bytes #iterations #bytes\n", &err), -EPROTO);
	assert_int_equal(bw_string(" #bytes #iterations BW peak[Gb/sec\n", &err), -EPROTO);
	assert_int_equal(bw_string(" #bytes #iterations foo[bar]\n 1 2 3\n", &err), -EPROTO);
	assert_string_equal(err.buf, "a result table without bandwidth columns");
	/* an unknown column is carried along */
	assert_int_equal(perftest_parse_bw(" #bytes #iterations BW peak[Gb/sec] BW "
					   "average[Gb/sec] MsgRate[Mpps] Extra[x]\n 8 10 1 2 3 "
					   "4\n",
					   &bw, &err),
			 0);
	assert_near(bw.headline.avg_gbps, 2.0);
	perftest_bw_release(&bw);

	/* garbage */
	assert_int_equal(bw_string("\x01\x02\xff\xfe#bytes\n\t\t\t", &err), -EIO);
	strbuf_release(&err);
	strbuf_release(&big);
}

/* Every prefix of every fixture parses or fails cleanly (run under the sanitizers). */
static void test_truncated(void **state)
{
	(void)state;
	static const char *const files[] = {
		"ib_write_bw-23.04-all-mbs.txt",
		"ib_write_bw-24.01-spark-run-infinitely-gbits.txt",
		"ib_write_bw-26.04-per-port-duration-gbits.txt",
		"ib_write_bw-26.04-duration-cpu-util-gbits.txt",
		"ib_write_bw-26.04-err-completion.txt",
		"ib_write_lat-26.04-duration.txt",
		"ib_write_lat-4.4-0.8.txt",
		"iperf3-3.12-loopback-P2.json",
		"iperf3-3.12-server-killed.json",
	};
	struct strbuf text = STRBUF_INIT, path = STRBUF_INIT, err = STRBUF_INIT;

	for (size_t f = 0; f < ARRAY_SIZE(files); f++) {
		strbuf_reset(&path);
		strbuf_addf(&path, "%s/linkbench/%s", FIXTURES_DIR, files[f]);
		read_fixture(path.buf, &text);
		for (size_t n = 0; n <= text.len; n++) {
			char *cut = xstrndup(text.buf, n);
			struct perftest_bw bw;
			struct perftest_lat lat;
			struct iperf3_result ip;

			strbuf_reset(&err);
			if (perftest_parse_bw(cut, &bw, &err) == 0) {
				assert_true(bw.nr_rows > 0);
				perftest_bw_release(&bw);
			}
			strbuf_reset(&err);
			if (perftest_parse_lat(cut, &lat, &err) == 0) {
				assert_true(lat.nr_rows > 0);
				perftest_lat_release(&lat);
			}
			strbuf_reset(&err);
			int r = iperf3_parse_json(cut, &ip, &err);
			assert_true(r == 0 || r == -EINVAL || r == -EIO || r == -EPROTO);
			free(cut);
		}
	}
	strbuf_release(&text);
	strbuf_release(&path);
	strbuf_release(&err);
}

static int iperf3_fixture(const char *path, struct iperf3_result *ret, struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT;

	read_fixture(path, &text);
	strbuf_reset(err);
	int r = iperf3_parse_json(text.buf, ret, err);
	strbuf_release(&text);
	return r;
}

static void test_iperf3(void **state)
{
	(void)state;
	struct strbuf err = STRBUF_INIT;
	struct iperf3_result ip;

	/* -P 2; iperf 3.12 repeats three keys of "start" for the second stream */
	assert_int_equal(iperf3_fixture(FIXTURE("iperf3-3.12-loopback-P2.json"), &ip, &err), 0);
	assert_string_equal(err.buf, "");
	assert_string_equal(ip.version, "iperf 3.12");
	assert_string_equal(ip.protocol, "TCP");
	assert_string_equal(ip.remote_host, "127.0.0.1");
	assert_int_equal(ip.remote_port, 52731);
	assert_int_equal(ip.num_streams, 2);
	assert_false(ip.reverse);
	assert_near(ip.duration_s, 1.0);
	assert_near(ip.seconds, 1.000542);
	assert_int_equal(ip.received_bytes, 1440939979);
	assert_near(ip.received_gbps, 11521275300.786972 / 1e9);
	assert_int_equal(ip.sent_bytes, 1448345600);
	assert_near(ip.sent_gbps, 11585212381.540873 / 1e9);
	assert_int_equal(ip.retransmits, 39);

	/* -R: the server sent, and its retransmits are reported */
	assert_int_equal(iperf3_fixture(FIXTURE("iperf3-3.12-loopback-reverse.json"), &ip, &err),
			 0);
	assert_true(ip.reverse);
	assert_int_equal(ip.num_streams, 1);
	assert_int_equal(ip.remote_port, 52733);
	assert_near(ip.seconds, 1.00004);
	assert_int_equal(ip.received_bytes, 1497235456);
	assert_near(ip.received_gbps, 11977404551.817926 / 1e9);
	assert_near(ip.sent_gbps, 12005811014.04755 / 1e9);
	assert_int_equal(ip.retransmits, 11);

	/* no server: iperf3 -J exits 0 and says so in "error" */
	assert_int_equal(iperf3_fixture(FIXTURE("iperf3-3.12-refused.json"), &ip, &err), -EIO);
	assert_string_equal(err.buf, "unable to connect to server: Connection refused");
	assert_string_equal(ip.version, "iperf 3.12");
	assert_string_equal(ip.remote_host, "");
	assert_int_equal(ip.remote_port, -1);
	assert_int_equal(ip.num_streams, -1);
	assert_true(isnan(ip.received_gbps));
	assert_int_equal(ip.retransmits, -1);

	/* the server was killed a second into the test: an error and a partial report */
	assert_int_equal(iperf3_fixture(FIXTURE("iperf3-3.12-server-killed.json"), &ip, &err),
			 -EIO);
	assert_string_equal(err.buf, "the server has terminated");
	assert_int_equal(ip.num_streams, 1);
	assert_near(ip.received_gbps, 0.0);
	assert_near(ip.sent_gbps, 12607311224.210037 / 1e9);
	assert_int_equal(ip.retransmits, 12);
	strbuf_release(&err);
}

static int iperf3_string(const char *text, struct iperf3_result *ip, struct strbuf *err)
{
	strbuf_reset(err);
	int r = iperf3_parse_json(text, ip, err);
	if (r < 0)
		assert_true(err->len > 0);
	return r;
}

#define IPERF_END                                                                                  \
	"\"end\": {\"sum_sent\": {\"bytes\": 1000, \"bits_per_second\": 8e9, \"retransmits\": "    \
	"0, \"seconds\": 1},"                                                                      \
	"\"sum_received\": {\"bytes\": 999, \"bits_per_second\": 7992000000, \"seconds\": 1}}"

static void test_iperf3_malformed(void **state)
{
	(void)state;
	struct strbuf err = STRBUF_INIT;
	struct iperf3_result ip;

	assert_int_equal(iperf3_string("", &ip, &err), -EINVAL);
	assert_int_equal(iperf3_parse_json(NULL, &ip, &err), -EINVAL);
	assert_int_equal(iperf3_string("iperf3: error - unable to connect", &ip, &err), -EINVAL);
	assert_string_equal(err.buf, "no JSON object in iperf3's output");
	assert_int_equal(iperf3_string("{", &ip, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "iperf3 output:"));
	assert_int_equal(iperf3_string("{\"end\": {\"sum_sent\": ", &ip, &err), -EINVAL);
	assert_int_equal(iperf3_string("[1, 2]", &ip, &err), -EINVAL);
	assert_int_equal(iperf3_string("{\"a\": 1e99999}", &ip, &err), -EINVAL);
	assert_int_equal(iperf3_string("{\"a\": 99999999999999999999999}", &ip, &err), -EINVAL);
	/* UDP with an unmeasurable loss: iperf3 printed -nan */
	assert_int_equal(iperf3_string("{\"end\": {\"sum\": {\"lost_percent\": -nan}}}", &ip, &err),
			 -EINVAL);

	assert_int_equal(iperf3_string("{}", &ip, &err), -EPROTO);
	assert_string_equal(err.buf, "no end.sum_received in the report");
	assert_int_equal(iperf3_string("{\"end\": 5}", &ip, &err), -EPROTO);
	assert_string_equal(err.buf, "end: expected an object");
	assert_int_equal(
		iperf3_string("{\"end\": {\"sum_received\": {\"bits_per_second\": 1}}}", &ip, &err),
		-EPROTO);
	assert_string_equal(err.buf, "no end.sum_sent in the report");
	assert_int_equal(
		iperf3_string("{\"end\": {\"sum_received\": {}, \"sum_sent\": {}}}", &ip, &err),
		-EPROTO);
	assert_int_equal(
		iperf3_string("{\"start\": {\"test_start\": {\"num_streams\": \"2\"}}," IPERF_END
			      "}",
			      &ip, &err),
		-EPROTO);
	assert_string_equal(err.buf, "start.test_start.num_streams: expected a non-negative "
				     "integer");
	assert_int_equal(iperf3_string("{\"start\": {\"test_start\": {\"bidir\": 1}}," IPERF_END
				       "}",
				       &ip, &err),
			 -EPROTO);
	assert_int_equal(iperf3_string("{\"error\": 5," IPERF_END "}", &ip, &err), -EPROTO);
	assert_string_equal(err.buf, "error: expected a message");
	assert_int_equal(iperf3_string("{\"error\": \"\"," IPERF_END "}", &ip, &err), -EPROTO);

	/* the smallest report */
	assert_int_equal(iperf3_string("{" IPERF_END "}", &ip, &err), 0);
	assert_near(ip.received_gbps, 7.992);
	assert_near(ip.sent_gbps, 8.0);
	assert_int_equal(ip.received_bytes, 999);
	assert_int_equal(ip.retransmits, 0);
	assert_int_equal(ip.num_streams, -1);
	assert_true(isnan(ip.duration_s));
	/* a warning before, the report twice (3.16, 3.17), an error line after (server side) */
	assert_int_equal(iperf3_string("warning: something\n{" IPERF_END "}\n{" IPERF_END "}\n"
				       "iperf3: error - no error\n",
				       &ip, &err),
			 0);
	assert_near(ip.received_gbps, 7.992);
	/* an error with a full report is still an error */
	assert_int_equal(
		iperf3_string("{\"error\": \"interrupt - the client has terminated\"," IPERF_END
			      "}",
			      &ip, &err),
		-EIO);
	assert_string_equal(err.buf, "interrupt - the client has terminated");
	assert_near(ip.received_gbps, 7.992);
	/* a port out of range, a negative retransmit count: unknown */
	assert_int_equal(
		iperf3_string("{\"start\": {\"connecting_to\": {\"host\": \"h\", \"port\": "
			      "70000}}, \"end\": {\"sum_sent\": {\"bits_per_second\": 1, "
			      "\"retransmits\": -1}, \"sum_received\": "
			      "{\"bits_per_second\": 1}}}",
			      &ip, &err),
		0);
	assert_string_equal(ip.remote_host, "h");
	assert_int_equal(ip.remote_port, -1);
	assert_int_equal(ip.retransmits, -1);
	strbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_bw_44_mbs),
		cmocka_unit_test(test_bw_44_gbits),
		cmocka_unit_test(test_bw_2304_all),
		cmocka_unit_test(test_bw_2304_duration),
		cmocka_unit_test(test_bw_spark),
		cmocka_unit_test(test_bw_2604),
		cmocka_unit_test(test_bw_variants),
		cmocka_unit_test(test_bw_errors),
		cmocka_unit_test(test_lat),
		cmocka_unit_test(test_lat_errors),
		cmocka_unit_test(test_bw_malformed),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_iperf3),
		cmocka_unit_test(test_iperf3_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
