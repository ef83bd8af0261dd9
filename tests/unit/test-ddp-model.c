/*
 * Unit tests of bench/ddp_model.c: percentiles, throughput, speedup and
 * efficiency, the all-reduce's bus bandwidth, the prediction for more
 * nodes, the memory a run needs and the model shapes.
 */
#include "sparkctl.h"

#include <math.h>

#include "test_util.h"

#include "bench/ddp_model.h"

static void near(double a, double b)
{
	assert_true(fabs(a - b) < 1e-9 * (fabs(b) + 1));
}

static void test_percentile(void **state)
{
	(void)state;
	double one[] = { 7 };
	double v[] = { 5, 1, 4, 2, 3 };
	double ten[] = { 10, 9, 8, 7, 6, 5, 4, 3, 2, 1 };
	double r;

	assert_int_equal(ddp_percentile(one, 1, 50, &r), 0);
	near(r, 7);
	assert_int_equal(ddp_percentile(one, 1, 95, &r), 0);
	near(r, 7);
	/* Sorted in place; the median of an odd count is the middle value. */
	assert_int_equal(ddp_percentile(v, 5, 50, &r), 0);
	near(r, 3);
	near(v[0], 1);
	near(v[4], 5);
	assert_int_equal(ddp_percentile(v, 5, 0, &r), 0);
	near(r, 1);
	assert_int_equal(ddp_percentile(v, 5, 100, &r), 0);
	near(r, 5);
	/* Between ranks, linearly (numpy): p50 of 1..10 is 5.5, p95 is 9.55. */
	assert_int_equal(ddp_percentile(ten, 10, 50, &r), 0);
	near(r, 5.5);
	assert_int_equal(ddp_percentile(ten, 10, 95, &r), 0);
	near(r, 9.55);
	assert_int_equal(ddp_percentile(ten, 0, 50, &r), -EINVAL);
	assert_int_equal(ddp_percentile(ten, 10, 101, &r), -EINVAL);
	assert_int_equal(ddp_percentile(ten, 10, NAN, &r), -EINVAL);
}

static struct ddp_measure measure(unsigned nodes, double step, double comm, double compute)
{
	return (struct ddp_measure){ .nodes = nodes,
				     .ranks = nodes,
				     .batch_per_rank = 32,
				     .step_p50_us = step,
				     .step_p95_us = step * 1.1,
				     .comm_us = comm,
				     .compute_us = compute,
				     .grad_bytes = 400e6 };
}

static void test_figures(void **state)
{
	(void)state;
	/* The seed's figures: 45 min an epoch on one node, 24 on two. */
	struct ddp_measure one = measure(1, 45e6, 0, 45e6), two = measure(2, 48e6, 3e6, 45e6);
	struct ddp_figures f;

	assert_int_equal(ddp_figures(&one, &one, &f), 0);
	near(f.samples_per_second, 32 / 45.0);
	near(f.speedup, 1);
	near(f.efficiency_ratio, 1);
	near(f.busbw_gbytes_per_second, 0);

	/* Weak scaling: twice the samples per step in 48/45 the time. */
	assert_int_equal(ddp_figures(&two, &one, &f), 0);
	near(f.samples_per_second, 64 / 48.0);
	near(f.speedup, 2 * 45 / 48.0);
	near(f.speedup, 1.875);
	near(f.efficiency_ratio, 0.9375);
	/* The speedup is the ratio of the throughputs. */
	near(f.speedup, f.samples_per_second / (32 / 45.0));
	near(f.comm_ratio, 3.0 / 48);
	/* compute + comm = step: nothing else lost, no overlap. */
	near(f.other_us, 0);
	/* 1 - 45/48 lost: the 3 s of comm of 48; nothing else. */
	near(f.lost_comm_ratio, 3.0 / 48);
	near(f.lost_other_ratio, 0);
	near(f.lost_comm_ratio + f.lost_other_ratio, 1 - f.efficiency_ratio);
	/* 2 ranks: each sends 2(2-1)/2 = 1 x 400 MB in 3 s: 0.1333 GB/s. */
	near(f.busbw_gbytes_per_second, 400e6 / 3e6 / 1000);

	/* Overlap shows as a negative rest; a loss outside both as a positive one. */
	two.compute_us = 46e6;
	assert_int_equal(ddp_figures(&two, &one, &f), 0);
	near(f.other_us, -1e6);
	two.compute_us = 44e6;
	assert_int_equal(ddp_figures(&two, &one, &f), 0);
	near(f.other_us, 1e6);
	/* A slower step with the same comm: the loss is the rest's. */
	two.step_p50_us = 50e6;
	assert_int_equal(ddp_figures(&two, &one, &f), 0);
	near(f.lost_comm_ratio, 3.0 / 50);
	near(f.lost_other_ratio, 1 - 45.0 / 50 - 3.0 / 50);
	two.step_p50_us = 48e6;

	two.step_p50_us = 0;
	assert_int_equal(ddp_figures(&two, &one, &f), -EINVAL);
}

static void test_ring(void **state)
{
	(void)state;
	near(ddp_ring_factor(1), 0);
	near(ddp_ring_factor(2), 1);
	near(ddp_ring_factor(4), 1.5);
	near(ddp_ring_factor(8), 1.75);
	/* nccl-tests' busbw: 1 GB over 8 ranks in 1 s is 1.75 GB/s. */
	near(ddp_busbw(1e9, 8, 1e6), 1.75);
	near(ddp_busbw(1e9, 1, 1e6), 0);
	near(ddp_busbw(1e9, 2, 0), 0);
}

static void test_predict(void **state)
{
	(void)state;
	/* 400 MB of gradients all-reduced in 4 s on 2 nodes: busbw 0.1 GB/s. */
	struct ddp_measure one = measure(1, 10e6, 0, 10e6), two = measure(2, 14e6, 4e6, 10e6);
	struct ddp_prediction p;

	/* Predicting the measured configuration gives it back. */
	assert_int_equal(ddp_predict(&one, &two, DDP_SCALING_WEAK, DDP_PLAN_SWITCH, 2, &p), 0);
	near(p.comm_us, 4e6);
	near(p.step_us, 14e6);
	near(p.efficiency_ratio, 10.0 / 14);

	/* 4 nodes: the ring sends 1.5x what it sends on 2: 6 s of comm. */
	assert_int_equal(ddp_predict(&one, &two, DDP_SCALING_WEAK, DDP_PLAN_SWITCH, 4, &p), 0);
	assert_int_equal(p.nodes, 4);
	near(p.comm_us, 6e6);
	near(p.compute_us, 10e6);
	near(p.step_us, 16e6);
	near(p.samples_per_second, 4 * 32 / 16.0);
	near(p.speedup, 4 * 10 / 16.0);
	near(p.efficiency_ratio, 10.0 / 16);

	/* 8 nodes: 1.75x: 7 s; efficiency 10/17, falling towards 10/18. */
	assert_int_equal(ddp_predict(&one, &two, DDP_SCALING_WEAK, DDP_PLAN_SWITCH, 8, &p), 0);
	near(p.comm_us, 7e6);
	near(p.efficiency_ratio, 10.0 / 17);

	/* Two ranks per node: 4 nodes are 8 ranks. */
	two.ranks = 4;
	assert_int_equal(ddp_predict(&one, &two, DDP_SCALING_WEAK, DDP_PLAN_SWITCH, 4, &p), 0);
	/* busbw from 4 ranks: 1.5 x 400 MB / 4 s; on 8 ranks 1.75 x 400 MB at that rate. */
	near(p.comm_us, 4e6 * 1.75 / 1.5);

	/*
	 * Overlap as measured: on 2 nodes 1.5 s of the 4 s all-reduce was
	 * hidden (step 12.5 s = 10 + 4 - 1.5).  On 4 nodes comm is 6 s and the
	 * same 1.5 s stays hidden: 10 + 6 - 1.5 = 14.5 s.
	 */
	two.ranks = 2;
	two.step_p50_us = 12.5e6;
	assert_int_equal(ddp_predict(&one, &two, DDP_SCALING_WEAK, DDP_PLAN_SWITCH, 4, &p), 0);
	near(p.rest_us, -1.5e6);
	near(p.comm_us, 6e6);
	near(p.step_us, 14.5e6);
	near(p.efficiency_ratio, 10.0 / 14.5);
	/* Time lost outside both (a slow rank: +1 s on 2 nodes) is carried too. */
	two.step_p50_us = 15e6;
	assert_int_equal(ddp_predict(&one, &two, DDP_SCALING_WEAK, DDP_PLAN_SWITCH, 4, &p), 0);
	near(p.step_us, 17e6);
	/*
	 * No overlap hides more than the shorter of the two: a 2-node run whose
	 * no_sync steps were slower than its full steps (step 7 s, rest -7 s:
	 * 10 + 6 - 7 = 9 s) predicts the longer of compute (10 s) and comm
	 * (6 s) on 4 nodes.
	 */
	two.step_p50_us = 7e6;
	assert_int_equal(ddp_predict(&one, &two, DDP_SCALING_WEAK, DDP_PLAN_SWITCH, 4, &p), 0);
	near(p.step_us, 10e6);
	two.step_p50_us = 14e6;

	/* Nothing to predict from: one rank, no comm time. */
	two.ranks = 1;
	assert_int_equal(ddp_predict(&one, &two, DDP_SCALING_WEAK, DDP_PLAN_SWITCH, 4, &p),
			 -EINVAL);
	two.ranks = 2;
	two.comm_us = 0;
	assert_int_equal(ddp_predict(&one, &two, DDP_SCALING_WEAK, DDP_PLAN_SWITCH, 4, &p),
			 -EINVAL);
}

static void test_plans(void **state)
{
	(void)state;
	/* 400 MB all-reduced in 4 s on 2 nodes (busbw 0.1 GB/s); compute 10 s. */
	struct ddp_measure one = measure(1, 10e6, 0, 10e6), two = measure(2, 14e6, 4e6, 10e6);
	struct ddp_prediction p;

	assert_string_equal(ddp_plan_name(DDP_PLAN_SWITCH), "switch");
	assert_string_equal(ddp_plan_name(DDP_PLAN_RING), "ring");
	/* A switch takes any count from 2; the ring plan is three Sparks, no more, no less. */
	assert_true(ddp_plan_allows(DDP_PLAN_SWITCH, 2));
	assert_true(ddp_plan_allows(DDP_PLAN_SWITCH, 10));
	assert_false(ddp_plan_allows(DDP_PLAN_SWITCH, 1));
	assert_true(ddp_plan_allows(DDP_PLAN_RING, 3));
	assert_false(ddp_plan_allows(DDP_PLAN_RING, 2));
	assert_false(ddp_plan_allows(DDP_PLAN_RING, 4));

	/*
	 * Switch, 10 nodes: each rank sends 2 x 9/10 = 1.8 x 400 MB = 720 MB
	 * at 0.1 GB/s: 7.2 s; step 17.2 s, 10 x 32 samples: 18.6 samples/s,
	 * 3.2 samples/s on one node: speedup 5.81, efficiency 58.1%.
	 */
	assert_int_equal(ddp_predict(&one, &two, DDP_SCALING_WEAK, DDP_PLAN_SWITCH, 10, &p), 0);
	assert_int_equal(p.nodes, 10);
	assert_int_equal(p.ranks, 10);
	near(p.busbw_gbytes_per_second, 0.1);
	near(p.comm_us, 7.2e6);
	near(p.step_us, 17.2e6);
	near(p.samples_per_second, 320 / 17.2);
	near(p.speedup, 5.8139534883720930);
	near(p.efficiency_ratio, 0.58139534883720930);

	/*
	 * Ring of 3: each link at half the port, 0.05 GB/s; each rank sends
	 * 2 x 2/3 x 400 MB = 533.3 MB: 10.667 s; step 20.667 s; efficiency
	 * 10 / 20.667 = 48.4%.
	 */
	assert_int_equal(ddp_predict(&one, &two, DDP_SCALING_WEAK, DDP_PLAN_RING, 3, &p), 0);
	near(p.busbw_gbytes_per_second, 0.05);
	near(p.comm_us, 10666666.666666667);
	near(p.step_us, 20666666.666666667);
	near(p.efficiency_ratio, 0.48387096774193548);
	/* The same 3 nodes on a switch: 5.333 s of comm. */
	assert_int_equal(ddp_predict(&one, &two, DDP_SCALING_WEAK, DDP_PLAN_SWITCH, 3, &p), 0);
	near(p.comm_us, 5333333.333333333);
	/* A ring of 2 or 4 is not a plan sparkctl cables. */
	assert_int_equal(ddp_predict(&one, &two, DDP_SCALING_WEAK, DDP_PLAN_RING, 4, &p), -ERANGE);
	assert_int_equal(ddp_predict(&one, &two, DDP_SCALING_WEAK, DDP_PLAN_RING, 2, &p), -ERANGE);
}

static void test_strong(void **state)
{
	(void)state;
	unsigned b;
	/*
	 * A global batch of 64: 64 per rank on 1 node in 20 s, 32 per rank on
	 * 2 nodes: compute 10 s, comm 4 s, step 14 s.
	 */
	struct ddp_measure one = measure(1, 20e6, 0, 20e6), two = measure(2, 14e6, 4e6, 10e6);
	struct ddp_figures f;
	struct ddp_prediction p;

	assert_string_equal(ddp_scaling_name(DDP_SCALING_WEAK), "weak");
	assert_string_equal(ddp_scaling_name(DDP_SCALING_STRONG), "strong");
	assert_int_equal(ddp_strong_batch(64, 4, &b), 0);
	assert_int_equal(b, 16);
	assert_int_equal(ddp_strong_batch(30, 4, &b), -EDOM);
	assert_int_equal(ddp_strong_batch(2, 4, &b), -EDOM);
	assert_int_equal(ddp_strong_batch(64, 0, &b), -EDOM);

	one.batch_per_rank = 64;
	two.batch_per_rank = 32;
	/* 64 samples in 14 s against 64 in 20 s: speedup 20/14, efficiency 10/14. */
	assert_int_equal(ddp_figures(&two, &one, &f), 0);
	near(f.samples_per_second, 64 / 14.0);
	near(f.speedup, 1.4285714285714286);
	near(f.efficiency_ratio, 0.71428571428571429);
	/* The ideal step is 10 s; the 4 s of comm are all that was lost. */
	near(f.lost_comm_ratio, 4 / 14.0);
	near(f.lost_other_ratio, 0);
	/* One rank's own comm of 1 s would be 0.5 s at half the batch: 3.5 s lost to comm. */
	one.comm_us = 1e6;
	assert_int_equal(ddp_figures(&two, &one, &f), 0);
	near(f.lost_comm_ratio, 3.5 / 14);
	near(f.lost_other_ratio, 0.5 / 14);
	one.comm_us = 0;

	/*
	 * 4 nodes on a switch: 16 per rank, compute 5 s; comm 1.5 x 400 MB at
	 * 0.1 GB/s, 6 s; step 11 s; 64 samples per step: speedup 20/11 = 1.818,
	 * efficiency 5/11 = 45.5%.
	 */
	assert_int_equal(ddp_predict(&one, &two, DDP_SCALING_STRONG, DDP_PLAN_SWITCH, 4, &p), 0);
	near(p.compute_us, 5e6);
	near(p.comm_us, 6e6);
	near(p.step_us, 11e6);
	near(p.samples_per_second, 64 / 11.0);
	near(p.speedup, 1.8181818181818182);
	near(p.efficiency_ratio, 0.45454545454545455);
	/* Weak scaling of the same runs would keep 10 s of compute. */
	assert_int_equal(ddp_predict(&one, &two, DDP_SCALING_WEAK, DDP_PLAN_SWITCH, 4, &p), 0);
	near(p.compute_us, 10e6);
}

static void test_memory(void **state)
{
	(void)state;
	/* 1M fp32 parameters: 16 MB of state; 1000 activations x 10 samples x 4 B x 2. */
	assert_int_equal(ddp_rank_bytes(1000000, 4, 1000, 10), 16000000 + 80000);
	assert_int_equal(ddp_rank_bytes(INT64_MAX / 2, 4, 1, 1), INT64_MAX);
	assert_true(ddp_fits(1000, 2, 4000, 0.25));
	assert_true(ddp_fits(1500, 2, 4000, 0.25));
	assert_false(ddp_fits(1501, 2, 4000, 0.25));
	assert_false(ddp_fits(1, 1, 0, 0.25));
}

static void test_shape(void **state)
{
	(void)state;
	struct ddp_shape s;

	/* 4 x (w^2 + w) = 4 x (500^2 + 500) = 1002000. */
	assert_int_equal(ddp_shape(DDP_MODEL_MLP, 1002000, &s), 0);
	assert_int_equal(s.width, 500);
	assert_int_equal(s.params, 1002000);
	assert_int_equal(ddp_shape(DDP_MODEL_MLP, 1001999, &s), 0);
	assert_int_equal(s.width, 499);
	assert_true(s.params <= 1001999);
	assert_int_equal(ddp_shape(DDP_MODEL_MLP, 7, &s), -EINVAL);
	/* 2 x (12 d^2 + 13 d) at d = 256: 1579520. */
	assert_int_equal(ddp_shape(DDP_MODEL_TRANSFORMER, 1579520, &s), 0);
	assert_int_equal(s.width, 256);
	assert_int_equal(s.params, 1579520);
	assert_int_equal(ddp_shape(DDP_MODEL_TRANSFORMER, 1579519, &s), 0);
	assert_int_equal(s.width, 248);
	assert_int_equal(ddp_shape(DDP_MODEL_TRANSFORMER, 1000, &s), -EINVAL);
}

static void test_nccl_compare(void **state)
{
	(void)state;
	/* bench nccl's table for one size, as 'sparkctl launch' relays rank 0's lines. */
	static const char out[] =
		"[0] # Collective test starting: all_reduce_perf\n"
		"[0] # 4194304 (a comment naming the size) 1 2 3 4 5 6 7 8 9 10.5 11\n"
		"[0] # nThread 1 nGpus 1 minBytes 4194304 maxBytes 4194304 step: 2(factor) warmup "
		"iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0\n"
		"[0] #  Rank  0 Group  0 Pid   4242 on node0 device  0 [0000:01:00] NVIDIA H100\n"
		"[0] #\n"
		"[0] #       size         count      type   redop    root     time   algbw   busbw "
		"#wrong     time   algbw   busbw #wrong\n"
		"[0]      4194304       2097152  bfloat16     sum      -1    91.20   45.99   68.99"
		"      0    90.10   46.55   69.83      0\n"
		"[0] # Out of bounds values : 0 OK\n"
		"[0] # Avg bus bandwidth    : 69.41\n";
	static const char na[] = "   4194304  2097152  bfloat16  sum  -1  91.2  45.99  68.99  0"
				 "  90.1  46.55  N/A  0\n";
	double bw = -1;

	/* The in-place busbw of the row of that size, not the average nor out of place. */
	assert_int_equal(ddp_nccl_row_busbw(out, 4194304, &bw), 0);
	near(bw, 69.83);
	/* A size that is no row's first column: 2097152 is a count there. */
	assert_int_equal(ddp_nccl_row_busbw(out, 2097152, &bw), -ENOENT);
	assert_int_equal(ddp_nccl_row_busbw(out, 8, &bw), -ENOENT);
	assert_int_equal(ddp_nccl_row_busbw(na, 4194304, &bw), -ENOENT);
	assert_int_equal(ddp_nccl_row_busbw("", 4194304, &bw), -ENOENT);

	/* 8 MB of gradients in 2 buckets: 4 MB each; 3 buckets of bf16 round down to 2 B. */
	assert_int_equal(ddp_bucket_bytes(8e6, 2, 4), 4000000);
	assert_int_equal(ddp_bucket_bytes(1000, 3, 2), 332);
	assert_int_equal(ddp_bucket_bytes(1000, 0, 4), 1000);
	assert_int_equal(ddp_bucket_bytes(3, 1, 4), 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percentile),   cmocka_unit_test(test_figures),
		cmocka_unit_test(test_ring),	     cmocka_unit_test(test_predict),
		cmocka_unit_test(test_memory),	     cmocka_unit_test(test_shape),
		cmocka_unit_test(test_plans),	     cmocka_unit_test(test_strong),
		cmocka_unit_test(test_nccl_compare),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
