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
	assert_int_equal(ddp_predict(&one, &two, 2, &p), 0);
	near(p.comm_us, 4e6);
	near(p.step_us, 14e6);
	near(p.efficiency_ratio, 10.0 / 14);

	/* 4 nodes: the ring sends 1.5x what it sends on 2: 6 s of comm. */
	assert_int_equal(ddp_predict(&one, &two, 4, &p), 0);
	assert_int_equal(p.nodes, 4);
	near(p.comm_us, 6e6);
	near(p.compute_us, 10e6);
	near(p.step_us, 16e6);
	near(p.samples_per_second, 4 * 32 / 16.0);
	near(p.speedup, 4 * 10 / 16.0);
	near(p.efficiency_ratio, 10.0 / 16);

	/* 8 nodes: 1.75x: 7 s; efficiency 10/17, falling towards 10/18. */
	assert_int_equal(ddp_predict(&one, &two, 8, &p), 0);
	near(p.comm_us, 7e6);
	near(p.efficiency_ratio, 10.0 / 17);

	/* Two ranks per node: 4 nodes are 8 ranks. */
	two.ranks = 4;
	assert_int_equal(ddp_predict(&one, &two, 4, &p), 0);
	/* busbw from 4 ranks: 1.5 x 400 MB / 4 s; on 8 ranks 1.75 x 400 MB at that rate. */
	near(p.comm_us, 4e6 * 1.75 / 1.5);

	/* Nothing to predict from: one rank, no comm time. */
	two.ranks = 1;
	assert_int_equal(ddp_predict(&one, &two, 4, &p), -EINVAL);
	two.ranks = 2;
	two.comm_us = 0;
	assert_int_equal(ddp_predict(&one, &two, 4, &p), -EINVAL);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percentile), cmocka_unit_test(test_figures),
		cmocka_unit_test(test_ring),	   cmocka_unit_test(test_predict),
		cmocka_unit_test(test_memory),	   cmocka_unit_test(test_shape),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
