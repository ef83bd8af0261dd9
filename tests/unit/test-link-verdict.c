/*
 * Unit tests of bench/link_verdict.c: healthy, degraded and broken links,
 * with the cause and the doctor check each verdict points to.
 */
#include "sparkctl.h"

#include "test_util.h"

#include "bench/link_verdict.h"

static struct link_measure path(const char *name, bool ran, double gbps, double line)
{
	return (struct link_measure){ .name = name,
				      .ran = ran,
				      .gbps = gbps,
				      .line_gbps = line,
				      .mtu_a = 9000,
				      .mtu_b = 9000 };
}

static void test_tcp(void **state)
{
	(void)state;
	struct link_judgement j;
	struct link_measure m = path("enp1s0f1np1", true, 96.2, 200);

	/* The published untuned figure on a 200G Spark link is healthy. */
	link_judgement_init(&j);
	link_judge_tcp(&m, &j);
	assert_int_equal(j.verdict, LINK_HEALTHY);
	assert_true(j.expected_gbps == 80);
	assert_int_equal(j.cause.len, 0);
	link_judgement_release(&j);

	/* Half that, at MTU 1500: degraded, and the MTU is named first. */
	m.gbps = 40;
	m.mtu_a = m.mtu_b = 1500;
	link_judgement_init(&j);
	link_judge_tcp(&m, &j);
	assert_int_equal(j.verdict, LINK_DEGRADED);
	assert_string_equal(j.doctor_check, "net.mtu");
	assert_non_null(strstr(j.cause.buf, "MTU 1500"));
	assert_non_null(strstr(j.cause.buf, "40.0 Gb/s is below the 80.0 Gb/s expected"));
	link_judgement_release(&j);

	/* MTUs that differ. */
	m.mtu_b = 9000;
	m.mtu_a = 4000;
	link_judgement_init(&j);
	link_judge_tcp(&m, &j);
	assert_string_equal(j.doctor_check, "cluster.mtu");
	link_judgement_release(&j);

	/* The caller's expectation replaces the line rate, for broken too. */
	m = path("veth", true, 0.2, 200);
	m.expect_gbps = 1;
	link_judgement_init(&j);
	link_judge_tcp(&m, &j);
	assert_int_equal(j.verdict, LINK_DEGRADED);
	assert_string_equal(j.doctor_check, "link.speed");
	link_judgement_release(&j);
	m.gbps = 0.01;
	link_judgement_init(&j);
	link_judge_tcp(&m, &j);
	assert_int_equal(j.verdict, LINK_BROKEN);
	link_judgement_release(&j);

	/* No traffic at all. */
	m = path("veth", false, 0, 200);
	link_judgement_init(&j);
	link_judge_tcp(&m, &j);
	assert_int_equal(j.verdict, LINK_BROKEN);
	assert_string_equal(j.doctor_check, "cluster.ping");
	link_judgement_release(&j);

	/* Unknown line rate and no expectation: it ran, so it passes. */
	m = path("x", true, 1, 0);
	link_judgement_init(&j);
	link_judge_tcp(&m, &j);
	assert_int_equal(j.verdict, LINK_HEALTHY);
	assert_true(j.expected_gbps == 0);
	link_judgement_release(&j);
	assert_string_equal(link_verdict_name(LINK_BROKEN), "broken");
}

static void test_rdma(void **state)
{
	(void)state;
	struct link_judgement j;
	/* NVIDIA's figures for the two halves of one Spark port. */
	struct link_measure twins[2] = { path("rocep1s0f1", true, 92.57, 100),
					 path("roceP2p1s0f1", true, 97.28, 100) };

	link_judgement_init(&j);
	link_judge_rdma(twins, 2, &j);
	assert_int_equal(j.verdict, LINK_HEALTHY);
	assert_true(j.expected_gbps == 140);
	assert_null(j.doctor_check);
	link_judgement_release(&j);

	/* A NIC trained down to x1: about 13 Gb/s on one half. */
	twins[1].gbps = 13;
	link_judgement_init(&j);
	link_judge_rdma(twins, 2, &j);
	assert_int_equal(j.verdict, LINK_DEGRADED);
	assert_string_equal(j.doctor_check, "pci.link");
	assert_non_null(strstr(j.cause.buf, "roceP2p1s0f1: 13.0 Gb/s"));
	assert_non_null(strstr(j.cause.buf, "only 1 of 2 twins"));
	link_judgement_release(&j);

	/* One twin did not run: the port works at half its rate. */
	twins[1] = path("roceP2p1s0f1", false, 0, 100);
	link_judgement_init(&j);
	link_judge_rdma(twins, 2, &j);
	assert_int_equal(j.verdict, LINK_BROKEN);
	assert_string_equal(j.doctor_check, "fabric.twins");
	link_judgement_release(&j);

	/* Almost nothing passes. */
	twins[1] = path("roceP2p1s0f1", true, 0.5, 100);
	link_judgement_init(&j);
	link_judge_rdma(twins, 2, &j);
	assert_int_equal(j.verdict, LINK_BROKEN);
	assert_string_equal(j.doctor_check, "link.errors");
	link_judgement_release(&j);

	/* Slower, not broken: link.speed. */
	twins[1] = path("roceP2p1s0f1", true, 55, 100);
	twins[1].mtu_a = twins[1].mtu_b = 1024;
	link_judgement_init(&j);
	link_judge_rdma(twins, 2, &j);
	assert_int_equal(j.verdict, LINK_DEGRADED);
	assert_string_equal(j.doctor_check, "link.speed");
	assert_non_null(strstr(j.cause.buf, "MTU 1024"));
	link_judgement_release(&j);

	/* No twin pair at all. */
	link_judgement_init(&j);
	link_judge_rdma(NULL, 0, &j);
	assert_int_equal(j.verdict, LINK_BROKEN);
	assert_string_equal(j.doctor_check, "fabric.active");
	link_judgement_release(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp),
		cmocka_unit_test(test_rdma),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
