/*
 * Unit tests of bench/nccl_perf.c: the collectives' layouts and bus
 * bandwidth factors, sizes and sweeps, the nccl-tests table byte for byte,
 * the check data, and reading NCCL's log for the path it took.
 */
#include "sparkctl.h"

#include <math.h>

#include "test_util.h"

#include "bench/nccl_perf.h"
#include "view/nccl_view.h"
#include "lib/json.h"

static void test_busbw_factors(void **state)
{
	(void)state;
	static const int ranks[] = { 1, 2, 3, 4, 8, 16 };
	for (size_t i = 0; i < ARRAY_SIZE(ranks); i++) {
		double n = ranks[i];
		assert_true(perf_busbw_factor(PERF_ALL_REDUCE, ranks[i]) == 2 * (n - 1) / n);
		assert_true(perf_busbw_factor(PERF_ALL_GATHER, ranks[i]) == (n - 1) / n);
		assert_true(perf_busbw_factor(PERF_REDUCE_SCATTER, ranks[i]) == (n - 1) / n);
		assert_true(perf_busbw_factor(PERF_ALLTOALL, ranks[i]) == (n - 1) / n);
		assert_true(perf_busbw_factor(PERF_BROADCAST, ranks[i]) == 1);
		assert_true(perf_busbw_factor(PERF_REDUCE, ranks[i]) == 1);
		assert_true(perf_busbw_factor(PERF_SENDRECV, ranks[i]) == 1);
	}
	/* Two ranks: all_reduce's busbw is its algbw. */
	double alg, bus;
	perf_bandwidth(PERF_ALL_REDUCE, 1000000000, 2, 1e6, &alg, &bus);
	assert_true(alg == 1.0 && bus == 1.0);
	perf_bandwidth(PERF_ALL_REDUCE, 8589934592ULL, 8, 31234.5, &alg, &bus);
	assert_true(fabs(alg - 275.0143) < 1e-4 && fabs(bus - alg * 1.75) < 1e-9);
}

static void test_layouts(void **state)
{
	(void)state;
	struct perf_layout l;

	/* 8 bytes of float over 2 ranks: a per-rank chunk of 1 float rounds down to 0. */
	perf_layout(PERF_ALL_GATHER, 8, 4, 2, &l);
	assert_int_equal(l.param_count, 0);
	assert_int_equal(l.size_bytes, 0);
	/* 1024 bytes of float over 3 ranks: 256 / 3 = 85, down to 84 (16-byte units). */
	perf_layout(PERF_ALL_GATHER, 1024, 4, 3, &l);
	assert_int_equal(l.param_count, 84);
	assert_int_equal(l.send_count, 84);
	assert_int_equal(l.recv_count, 252);
	assert_int_equal(l.send_inplace, 84);
	assert_int_equal(l.size_bytes, 1008);
	perf_layout(PERF_REDUCE_SCATTER, 1024, 4, 3, &l);
	assert_int_equal(l.param_count, 84);
	assert_int_equal(l.send_count, 252);
	assert_int_equal(l.recv_count, 84);
	assert_int_equal(l.recv_inplace, 84);
	assert_int_equal(l.size_bytes, 1008);
	perf_layout(PERF_ALLTOALL, 1 << 20, 2, 8, &l);
	assert_int_equal(l.param_count, 65536);
	assert_int_equal(l.send_count, 1 << 19);
	assert_int_equal(l.size_bytes, 1 << 20);
	/* int8: chunks of 16 elements. */
	perf_layout(PERF_ALL_GATHER, 100, 1, 2, &l);
	assert_int_equal(l.param_count, 48);
	perf_layout(PERF_ALL_REDUCE, 1000, 8, 4, &l);
	assert_int_equal(l.param_count, 125);
	assert_int_equal(l.size_bytes, 1000);
	perf_layout(PERF_SENDRECV, 6, 4, 2, &l); /* a partial element is not sent */
	assert_int_equal(l.param_count, 1);
	assert_int_equal(l.size_bytes, 4);
}

static void test_sizes(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int r;
		uint64_t v;
	} cases[] = {
		{ "8", 0, 8 },
		{ "1K", 0, 1024 },
		{ "64k", 0, 65536 },
		{ "64KiB", 0, 65536 },
		{ "64KB", 0, 65536 },
		{ "128M", 0, 128ULL << 20 },
		{ "1.5M", 0, 3ULL << 19 },
		{ "1G", 0, 1ULL << 30 },
		{ "16G", 0, 16ULL << 30 },
		{ "100B", 0, 100 },
		{ "0", -EINVAL, 0 },
		{ "", -EINVAL, 0 },
		{ "-8", -EINVAL, 0 },
		{ "8X", -EINVAL, 0 },
		{ "1T", -EINVAL, 0 },
		{ "1.", -EINVAL, 0 },
		{ ".5K", -EINVAL, 0 },
		{ "8 ", -EINVAL, 0 },
		{ "99999999999999999999", -ERANGE, 0 },
		{ "5000000000G", -ERANGE, 0 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		uint64_t v = 0;
		int r = perf_parse_size(cases[i].s, &v);
		if (r != cases[i].r || (r == 0 && v != cases[i].v))
			fail_msg("'%s': %d %" PRIu64 ", expected %d %" PRIu64, cases[i].s, r, v,
				 cases[i].r, cases[i].v);
	}
	assert_int_equal(perf_sweep_next(8, 2, 0), 16);
	assert_int_equal(perf_sweep_next(8, 1, 1000), 1008);
	assert_true(perf_sweep_next(UINT64_MAX / 2 + 1, 2, 0) == UINT64_MAX);
}

static void test_number_cells(void **state)
{
	(void)state;
	static const struct {
		double v;
		int width;
		const char *want;
	} cases[] = {
		{ 5.56, 7, "   5.56" },	    { 0.004, 6, "  0.00" },    { 31234.5, 7, "31234.5" },
		{ 275.02, 6, "275.02" },    { 1234.567, 6, "1234.6" }, { 123456.0, 6, "123456" },
		{ 1234567.0, 6, " 1e+06" }, { 1e9, 7, "1.0e+09" },     { 9999.999, 7, "10000.0" },
		{ 123456.7, 7, " 123457" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char buf[16];
		perf_format_number(buf, (size_t)cases[i].width + 1, cases[i].v, cases[i].width);
		if (!streq(buf, cases[i].want))
			fail_msg("%g in %d: '%s', expected '%s'", cases[i].v, cases[i].width, buf,
				 cases[i].want);
	}
}

/* The nccl-tests v2.19 header, rows and footer, byte for byte. */
static void test_table_golden(void **state)
{
	(void)state;
	struct strbuf out = STRBUF_INIT;
	struct perf_row row = {
		.size = 8,
		.count = 2,
		.type = "float",
		.redop = "sum",
		.root = -1,
		.out_of_place = { .time_us = 5.56, .wrong = 0 },
		.in_place = { .time_us = 5.82, .wrong = 0 },
	};
	const char *want = "#                                                              "
			   "out-of-place                       in-place          \n"
			   "#       size         count      type   redop    root     time   algbw  "
			   " busbw  #wrong     time   algbw   busbw  #wrong \n"
			   "#        (B)    (elements)                               (us)  (GB/s)  "
			   "(GB/s)             (us)  (GB/s)  (GB/s)         \n"
			   "           8             2     float     sum      -1     5.56    0.00  "
			   "  0.00       0     5.82    0.00    0.00       0\n"
			   "  8589934592    2147483648     float     sum      -1  31234.5  275.02  "
			   "481.29       0  31000.0  277.10  484.90       0\n"
			   "        1024           256     float    none      -1    10.00    0.10  "
			   "  0.10       0    10.00    0.10    0.10    N/A\n"
			   "# Out of bounds values : 0 OK\n"
			   "# Avg bus bandwidth    : 123.457 \n"
			   "#\n"
			   "# Collective test concluded: all_reduce_perf\n";

	struct emitter e;

	emit_init(&e, EMIT_TEXT, &out, false);
	nccl_table_header(&e, false);
	nccl_table_row(&e, &row);
	row.size = 8589934592ULL;
	row.count = 2147483648ULL;
	row.out_of_place =
		(struct perf_result){ .time_us = 31234.5, .algbw = 275.02, .busbw = 481.29 };
	row.in_place = (struct perf_result){ .time_us = 31000.0, .algbw = 277.1, .busbw = 484.9 };
	nccl_table_row(&e, &row);
	row = (struct perf_row){
		.size = 1024, .count = 256, .type = "float", .redop = "none", .root = -1
	};
	row.out_of_place = (struct perf_result){ .time_us = 10, .algbw = 0.1024, .busbw = 0.1024 };
	row.in_place = row.out_of_place;
	row.in_place.wrong = -1;
	nccl_table_row(&e, &row);
	nccl_table_footer(&e, "all_reduce_perf", 0, 123.4567);
	if (!streq(out.buf, want))
		fail_msg("table:\n%s\nexpected:\n%s", out.buf, want);
	strbuf_reset(&out);
	nccl_table_footer(&e, "all_gather_perf", 3, 0);
	assert_string_equal(out.buf, "# Out of bounds values : 3 FAILED\n"
				     "# Avg bus bandwidth    : 0 \n#\n"
				     "# Collective test concluded: all_gather_perf\n");
	emit_release(&e);
	strbuf_release(&out);
}

/* -C 1: nccl-tests' "cputime" heads the time columns, which show the time to issue. */
static void test_table_cputime(void **state)
{
	(void)state;
	struct strbuf out = STRBUF_INIT;
	struct perf_row row = {
		.size = 8,
		.count = 2,
		.type = "float",
		.redop = "sum",
		.root = -1,
		.out_of_place = { .time_us = 6.4, .cpu_time_us = 5.5, .wrong = 0 },
		.in_place = { .time_us = 6.3, .cpu_time_us = 5.25, .wrong = 0 },
		.cputime = true,
	};
	const char *want = "#                                                              "
			   "out-of-place                       in-place          \n"
			   "#       size         count      type   redop    root  cputime   algbw  "
			   " busbw  #wrong  cputime   algbw   busbw  #wrong \n"
			   "#        (B)    (elements)                               (us)  (GB/s)  "
			   "(GB/s)             (us)  (GB/s)  (GB/s)         \n"
			   "           8             2     float     sum      -1     5.50    0.00  "
			   "  0.00       0     5.25    0.00    0.00       0\n";

	struct emitter e;

	emit_init(&e, EMIT_TEXT, &out, false);
	nccl_table_header(&e, true);
	nccl_table_row(&e, &row);
	if (!streq(out.buf, want))
		fail_msg("table:\n%s\nexpected:\n%s", out.buf, want);
	emit_release(&e);
	strbuf_release(&out);
}

static void test_row_json(void **state)
{
	(void)state;
	struct perf_row row = {
		.size = 1024,
		.count = 256,
		.type = "float",
		.redop = "sum",
		.root = -1,
		.out_of_place = { .time_us = 10,
				  .cpu_time_us = 4.5,
				  .algbw = 0.1,
				  .busbw = 0.2,
				  .wrong = 0,
				  .iters = 20 },
		.in_place = { .time_us = 11, .algbw = 0.1, .busbw = 0.2, .wrong = -1, .iters = 20 },
	};
	struct strbuf s = STRBUF_INIT;
	struct emitter e;
	json_t *doc, *j;

	/* The same call as the table's row, in JSON: one entry of "results". */
	emit_init(&e, EMIT_JSON, NULL, false);
	nccl_table_row(&e, &row);
	doc = emit_document(&e);
	emit_release(&e);
	j = json_array_get(json_object_get(doc, "results"), 0);

	json_to_line(j, &s);
	assert_non_null(strstr(s.buf, "\"size_bytes\":1024"));
	assert_non_null(strstr(s.buf, "\"out_of_place\":{"));
	assert_true(json_integer_value(
			    json_object_get(json_object_get(j, "out_of_place"), "wrong")) == 0);
	assert_true(json_is_null(json_object_get(json_object_get(j, "in_place"), "wrong")));
	assert_true(json_real_value(json_object_get(json_object_get(j, "in_place"), "time_us")) ==
		    11.0);
	assert_true(json_real_value(json_object_get(json_object_get(j, "out_of_place"),
						    "cpu_time_us")) == 4.5);
	json_decref(doc);
	strbuf_release(&s);
}

/* Every reduction of the check data is exact in its type, for any rank count. */
static void test_check_values(void **state)
{
	(void)state;
	static const int ranks[] = { 1, 2, 3, 8, 64 };
	unsigned char buf[16];

	for (enum perf_dtype t = 0; t < PERF_NR_DTYPES; t++) {
		for (size_t k = 0; k < ARRAY_SIZE(ranks); k++) {
			int n = ranks[k];
			for (enum perf_redop op = 0; op < PERF_NR_REDOPS; op++) {
				for (uint64_t i = 0; i < 200; i++) {
					double want = perf_reduced_value(op, t, n, i, 7);
					double sum = 0;
					for (int r = 0; r < n; r++) {
						double v = perf_input_value(op, t, n, r, i, 7);
						perf_store(t, buf, 0, v);
						if (perf_load(t, buf, 0) != v)
							fail_msg("type %d: %g not held", t, v);
						sum += v;
					}
					if (op == PERF_SUM && want != sum)
						fail_msg("sum %g != %g", want, sum);
					if (op == PERF_PROD && want != 2 && n > 1)
						fail_msg("prod %g", want);
					if (op != PERF_AVG) {
						perf_store(t, buf, 0, want);
						if (perf_load(t, buf, 0) != want)
							fail_msg("type %d n %d op %d: %g not held",
								 t, n, op, want);
					}
				}
			}
		}
	}
	/* Different ranks and elements give different data. */
	assert_true(perf_input_value(PERF_MAX, PERF_FLOAT, 2, 0, 5, 1) !=
			    perf_input_value(PERF_MAX, PERF_FLOAT, 2, 1, 5, 1) ||
		    perf_input_value(PERF_MAX, PERF_FLOAT, 2, 0, 6, 1) !=
			    perf_input_value(PERF_MAX, PERF_FLOAT, 2, 1, 6, 1));
	/* half and bfloat16 round to nearest even. */
	perf_store(PERF_HALF, buf, 0, 2049);
	assert_true(perf_load(PERF_HALF, buf, 0) == 2048);
	perf_store(PERF_HALF, buf, 0, 0.5);
	assert_true(perf_load(PERF_HALF, buf, 0) == 0.5);
	perf_store(PERF_HALF, buf, 0, -3);
	assert_true(perf_load(PERF_HALF, buf, 0) == -3);
	perf_store(PERF_BFLOAT16, buf, 0, 257);
	assert_true(perf_load(PERF_BFLOAT16, buf, 0) == 256);
	assert_true(perf_value_ok(PERF_AVG, PERF_FLOAT, 1.0000001, 1.0));
	assert_false(perf_value_ok(PERF_AVG, PERF_FLOAT, 1.001, 1.0));
	assert_false(perf_value_ok(PERF_SUM, PERF_FLOAT, 1.0000001, 1.0));
	assert_true(perf_reduced_value(PERF_AVG, PERF_INT32, 3, 1, 1) ==
		    floor(perf_reduced_value(PERF_SUM, PERF_INT32, 3, 1, 1) / 3));
}

static void test_nccl_log(void **state)
{
	(void)state;
	struct perf_nccl_path p;
	struct strbuf s = STRBUF_INIT;
	const char *ib_log =
		"spark1:4242:4242 [0] NCCL INFO Bootstrap: Using enP7s7:192.168.1.10<0>\n"
		"spark1:4242:4242 [0] NCCL INFO NET/IB : Using [0]rocep1s0f1:1/RoCE "
		"[1]roceP2p1s0f1:1/RoCE [RO]; OOB enP2p1s0f1:10.10.10.1<0>\n"
		"spark1:4242:4242 [0] NCCL INFO Using network IB\n"
		"spark1:4242:4242 [0] NCCL INFO GPU Direct RDMA Disabled for HCA 0 'rocep1s0f1'\n"
		"spark1:4242:4242 [0] NCCL INFO GPU Direct RDMA Disabled for HCA 1 'roceP2p1s0f1'\n"
		"spark1:4242:4242 [0] NCCL INFO 2 coll channels, 2 collnet channels, 0 nvls "
		"channels, 2 p2p channels, 2 p2p channels per peer\n"
		"spark1:4242:4260 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via "
		"NET/IB/0\n"
		"spark1:4242:4260 [0] NCCL INFO Channel 01/0 : 1[0] -> 0[0] [receive] via "
		"NET/IB/1\n"
		"spark1:4242:4260 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0\n";
	perf_parse_nccl_log(ib_log, &p);
	assert_string_equal(p.network, "IB");
	assert_string_equal(p.devices, "rocep1s0f1:1/RoCE roceP2p1s0f1:1/RoCE");
	assert_int_equal(p.gdr, 0);
	assert_int_equal(p.channels, 2);
	assert_string_equal(p.transports, "NET/IB/0 NET/IB/1");
	perf_nccl_path_describe(&p, &s);
	assert_string_equal(s.buf, "network IB rocep1s0f1:1/RoCE roceP2p1s0f1:1/RoCE, GPUDirect "
				   "RDMA off, 2 channels, via NET/IB/0 NET/IB/1");

	const char *nvlink_log =
		"h:1:1 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0> [1]eth0:10.0.0.2<0>\n"
		"h:1:1 [0] NCCL INFO Using network Socket\n"
		"h:1:1 [0] NCCL INFO 24 coll channels, 24 collnet channels, 0 nvls channels, 32 "
		"p2p channels, 32 p2p channels per peer\n"
		"h:1:9 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
		"h:1:9 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
		"h:1:1 [0] NCCL WARN something else\n";
	perf_parse_nccl_log(nvlink_log, &p);
	assert_string_equal(p.network, "Socket");
	assert_string_equal(p.devices, "lo eth0");
	assert_int_equal(p.gdr, -1);
	assert_int_equal(p.channels, 24);
	assert_string_equal(p.transports, "P2P/CUMEM/read");
	/* NCCL set its network up, but no channel took it. */
	strbuf_reset(&s);
	perf_nccl_path_describe(&p, &s);
	assert_string_equal(s.buf, "within the node: 24 channels via P2P/CUMEM/read (network "
				   "Socket lo eth0 unused)");
	/* Across nodes with two GPUs each: the network is named as before. */
	snprintf(p.transports, sizeof(p.transports), "P2P/CUMEM/read NET/Socket/0");
	strbuf_reset(&s);
	perf_nccl_path_describe(&p, &s);
	assert_string_equal(s.buf, "network Socket lo eth0, 24 channels, via P2P/CUMEM/read "
				   "NET/Socket/0");

	perf_parse_nccl_log("", &p);
	strbuf_reset(&s);
	perf_nccl_path_describe(&p, &s);
	assert_string_equal(s.buf, "unknown (NCCL said nothing about it)");
	strbuf_release(&s);
}

/* perf_format_cpulist of set is want, and parses back to set. */
static void cpulist_is(const cpu_set_t *set, const char *want)
{
	struct strbuf out = STRBUF_INIT;
	cpu_set_t back;

	perf_format_cpulist(set, &out);
	assert_string_equal(out.buf, want);
	if (*want) {
		assert_int_equal(perf_parse_cpulist(out.buf, &back), 0);
		assert_true(CPU_EQUAL(&back, set));
	}
	strbuf_release(&out);
}

static void test_format_cpulist(void **state)
{
	(void)state;
	cpu_set_t set;

	CPU_ZERO(&set);
	cpulist_is(&set, "");
	CPU_SET(5, &set);
	cpulist_is(&set, "5");
	assert_int_equal(perf_parse_cpulist("0-3,8,10-11,1023", &set), 0);
	cpulist_is(&set, "0-3,8,10-11,1023");
}

/* perf_pick_core(allowed list, core_of, capacity, index) is want. */
static void core_is(const char *allowed, const int *core_of, const unsigned long *capacity,
		    unsigned index, const char *want)
{
	cpu_set_t a, got;

	assert_int_equal(perf_parse_cpulist(allowed, &a), 0);
	perf_pick_core(&a, core_of, capacity, index, &got);
	cpulist_is(&got, want);
}

static void test_pick_core(void **state)
{
	(void)state;
	static int smt[CPU_SETSIZE], unknown[CPU_SETSIZE];
	static unsigned long same[CPU_SETSIZE], hybrid[CPU_SETSIZE];

	/* Eight CPUs, two threads a core: 0 and 4, 1 and 5, 2 and 6, 3 and 7. */
	for (int c = 0; c < CPU_SETSIZE; c++) {
		smt[c] = c < 8 ? c % 4 : -1;
		unknown[c] = -1;
	}
	core_is("0-7", smt, same, 0, "0,4");
	core_is("0-7", smt, same, 1, "1,5");
	core_is("0-7", smt, same, 3, "3,7");
	core_is("0-7", smt, same, 5, "1,5"); /* more ranks than cores: round again */
	/* Within a narrower binding: cores 2 (CPUs 2, 6) and 3 (CPU 3 only). */
	core_is("2-3,6", smt, same, 0, "2,6");
	core_is("2-3,6", smt, same, 1, "3");
	/* Without topology every CPU is a core of its own. */
	core_is("4-6", unknown, same, 0, "4");
	core_is("4-6", unknown, same, 2, "6");
	core_is("4-6", unknown, same, 3, "4");

	/*
	 * A hybrid CPU as GB10's: two clusters of five efficiency cores
	 * (0-4, 10-14) and five performance cores (5-9, 15-19).  Ranks go
	 * on performance cores first, in CPU order; then the others.
	 */
	for (int c = 0; c < 20; c++)
		hybrid[c] = c % 10 < 5 ? 420 : 1024;
	core_is("0-19", unknown, hybrid, 0, "5");
	core_is("0-19", unknown, hybrid, 1, "6");
	core_is("0-19", unknown, hybrid, 5, "15");
	core_is("0-19", unknown, hybrid, 9, "19");
	core_is("0-19", unknown, hybrid, 10, "0");
	core_is("0-19", unknown, hybrid, 20, "5");
	/* Only efficiency cores allowed: the first of them. */
	core_is("0-4", unknown, hybrid, 0, "0");
	/* A core is as fast as its first CPU, with its siblings. */
	hybrid[3] = 2048;
	core_is("0-7", smt, hybrid, 0, "3,7");
	core_is("0-7", smt, hybrid, 1, "0,4");
}

static void test_bind_names(void **state)
{
	(void)state;
	enum perf_bind b;

	assert_int_equal(perf_bind_from_name("core", &b), 0);
	assert_int_equal(b, PERF_BIND_CORE);
	assert_string_equal(perf_bind_name(b), "core");
	assert_int_equal(perf_bind_from_name("numa", &b), 0);
	assert_int_equal(b, PERF_BIND_NUMA);
	assert_int_equal(perf_bind_from_name("none", &b), 0);
	assert_int_equal(b, PERF_BIND_NONE);
	assert_int_equal(perf_bind_from_name("socket", &b), -EINVAL);
	assert_int_equal(perf_bind_from_name("", &b), -EINVAL);
}

static void test_cpulist(void **state)
{
	(void)state;
	cpu_set_t set;

	assert_int_equal(perf_parse_cpulist("0-3,8,10-11\n", &set), 0);
	assert_int_equal(CPU_COUNT(&set), 7);
	assert_true(CPU_ISSET(0, &set) && CPU_ISSET(3, &set) && CPU_ISSET(8, &set));
	assert_false(CPU_ISSET(4, &set) || CPU_ISSET(9, &set));
	assert_int_equal(perf_parse_cpulist("5", &set), 0);
	assert_int_equal(CPU_COUNT(&set), 1);
	assert_int_equal(perf_parse_cpulist("", &set), -EINVAL);
	assert_int_equal(perf_parse_cpulist("3-1", &set), -EINVAL);
	assert_int_equal(perf_parse_cpulist("1-", &set), -EINVAL);
	assert_int_equal(perf_parse_cpulist("a", &set), -EINVAL);
	assert_int_equal(perf_parse_cpulist("1;2", &set), -EINVAL);
	assert_int_equal(perf_parse_cpulist("0-99999", &set), -ERANGE);
}

static void test_adaptive(void **state)
{
	struct perf_loop l = { 0 };
	double shares[2];

	(void)state;
	/* Fixed mode's loop where 20 operations take less than 20 ms. */
	assert_false(perf_adaptive_loop(10, 20));
	assert_false(perf_adaptive_loop(999, 20));
	assert_false(perf_adaptive_loop(0, 20));
	assert_true(perf_adaptive_loop(1000, 20));
	assert_false(perf_adaptive_loop(3000, 5));
	assert_true(perf_adaptive_loop(4000, 5));
	/* The figure is fixed mode's for the operations so far: the first's start counts. */
	assert_true(perf_loop_time(&l) == 0);
	perf_loop_add(&l, 1010);
	perf_loop_add(&l, 1000);
	assert_true(fabs(perf_loop_time(&l) - 1005) < 1e-9);
	/* No end before 3 operations after the first. */
	perf_loop_add(&l, 1001);
	perf_loop_shares(&l, shares);
	assert_true(isinf(shares[0]) && isinf(shares[1]));
	assert_false(perf_loop_done(shares, 0.02));
	perf_loop_add(&l, 999);
	perf_loop_shares(&l, shares);
	/* Steady: t(2) 4.30 x sd 1 / sqrt(3) over 1000; the start's 10 us over 4010 us. */
	assert_true(fabs(shares[0] - 4.30 / sqrt(3) / 1000) < 1e-6);
	assert_true(fabs(shares[1] - 10.0 / 4010) < 1e-9);
	assert_true(perf_loop_done(shares, 0.02));
	assert_false(perf_loop_done(shares, 0.002));
	/*
	 * A start that weighs: a network's first operation 400 us longer, on
	 * operations of 1.4 ms.  Steady, yet it goes on until the start is
	 * under 0.5% of the loop (the 57th operation), which fixed mode's 20
	 * stop first.
	 */
	l = (struct perf_loop){ 0 };
	perf_loop_add(&l, 1800);
	for (unsigned k = 0; k < 10; k++)
		perf_loop_add(&l, 1400);
	perf_loop_shares(&l, shares);
	assert_true(shares[0] == 0);
	assert_false(perf_loop_done(shares, 0.02));
	for (unsigned k = 0; k < 45; k++)
		perf_loop_add(&l, 1400);
	perf_loop_shares(&l, shares);
	assert_false(perf_loop_done(shares, 0.02));
	perf_loop_add(&l, 1400);
	perf_loop_shares(&l, shares);
	assert_true(perf_loop_done(shares, 0.02));
	/* Noisy operations go on. */
	l = (struct perf_loop){ 0 };
	for (unsigned k = 0; k < 6; k++)
		perf_loop_add(&l, k % 2 ? 50 : 150);
	perf_loop_shares(&l, shares);
	assert_false(perf_loop_done(shares, 0.02));
	/* Student's t, not the normal 1.96, for few batches. */
	assert_true(perf_t95(2) > 4.2 && perf_t95(2) < 4.4);
	assert_true(fabs(perf_t95(30) - 2.042) < 0.002);
	assert_true(isinf(perf_t95(0)));
}

static void test_names(void **state)
{
	(void)state;
	enum perf_coll c;
	enum perf_dtype t;
	enum perf_redop op;

	for (enum perf_coll i = 0; i < PERF_NR_COLLS; i++) {
		assert_int_equal(perf_coll_from_name(perf_coll_info(i)->name, &c), 0);
		assert_int_equal(c, i);
	}
	assert_int_equal(perf_coll_from_name("allreduce", &c), -EINVAL);
	assert_int_equal(perf_dtype_from_name("bfloat16", &t), 0);
	assert_int_equal(t, 9); /* ncclBfloat16 */
	assert_int_equal(perf_dtype_size(PERF_HALF), 2);
	assert_int_equal(perf_dtype_from_name("fp32", &t), -EINVAL);
	assert_int_equal(perf_redop_from_name("avg", &op), 0);
	assert_int_equal(op, 4); /* ncclAvg */
	assert_int_equal(perf_redop_from_name("mulsum", &op), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_busbw_factors),  cmocka_unit_test(test_layouts),
		cmocka_unit_test(test_sizes),	       cmocka_unit_test(test_number_cells),
		cmocka_unit_test(test_table_golden),   cmocka_unit_test(test_table_cputime),
		cmocka_unit_test(test_row_json),       cmocka_unit_test(test_check_values),
		cmocka_unit_test(test_nccl_log),       cmocka_unit_test(test_cpulist),
		cmocka_unit_test(test_format_cpulist), cmocka_unit_test(test_pick_core),
		cmocka_unit_test(test_bind_names),     cmocka_unit_test(test_names),
		cmocka_unit_test(test_adaptive),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
