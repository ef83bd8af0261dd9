/*
 * Unit tests of doctor --slurm-health's decisions (slurm/health.h): the
 * line of 'scontrol show node NAME -o' as Slurm 22.05 prints it, the
 * reason of the failed checks, and what is done for every state of the
 * node (NHC's rule: another's drain is never lifted nor overwritten).
 */
#include "sparkctl.h"

#include "test_util.h"

#include "slurm/health.h"

/* Lines as slurmctld 22.05 answered in tests/cli/t1310-slurm-health.sh. */
static const char idle_line[] =
	"NodeName=node0 Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=1 CPUTot=1 "
	"CPULoad=1.68 AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) "
	"NodeAddr=198.18.0.1 NodeHostName=node0 Version=22.05.8 OS=Linux 6.18.44 #1 SMP "
	"PREEMPT_DYNAMIC @0  RealMemory=1 AllocMem=0 FreeMem=22621 Sockets=1 Boards=1 State=IDLE "
	"ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=test  "
	"BootTime=2026-11-26T15:55:39 SlurmdStartTime=2026-11-27T05:08:57 "
	"LastBusyTime=2026-11-27T05:08:57 CfgTRES=cpu=1,mem=1M,billing=1 AllocTRES= CapWatts=n/a "
	"CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s\n";
static const char drained_line[] =
	"NodeName=node0 Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 Sockets=1 Boards=1 "
	"State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A "
	"Partitions=test  ExtSensorsTemp=n/s Reason=sparkctl: x \"y\" z State=IDLE "
	"[root@2026-11-27T05:08:57]\n";

static void parse_lines(void **state)
{
	struct slurm_node_show n;

	(void)state;
	assert_int_equal(slurm_node_show_parse(idle_line, strlen(idle_line), &n), 0);
	assert_string_equal(n.name, "node0");
	assert_string_equal(n.state, "IDLE");
	assert_null(n.reason);
	assert_false(n.drain);
	assert_false(n.down);
	slurm_node_show_release(&n);

	/* The reason is free text: a State= inside it is not the node's. */
	assert_int_equal(slurm_node_show_parse(drained_line, strlen(drained_line), &n), 0);
	assert_string_equal(n.state, "IDLE+DRAIN");
	assert_string_equal(n.reason, "sparkctl: x \"y\" z State=IDLE");
	assert_true(n.drain);
	slurm_node_show_release(&n);

	static const char down[] = "NodeName=n1 State=DOWN+DRAIN+NOT_RESPONDING Reason=Not "
				   "responding [slurm@2026-01-01T00:00:00]";
	assert_int_equal(slurm_node_show_parse(down, strlen(down), &n), 0);
	assert_true(n.drain);
	assert_true(n.down);
	assert_string_equal(n.reason, "Not responding");
	slurm_node_show_release(&n);

	static const char draining[] = "NodeName=n1 State=MIXED+DRAIN Reason=[a] x";
	assert_int_equal(slurm_node_show_parse(draining, strlen(draining), &n), 0);
	assert_true(n.drain);
	assert_false(n.down);
	/* No " [user@time]" tail: the whole text. */
	assert_string_equal(n.reason, "[a] x");
	slurm_node_show_release(&n);

	static const char downish[] = "NodeName=n1 State=DOWNWARD Reason=";
	assert_int_equal(slurm_node_show_parse(downish, strlen(downish), &n), 0);
	assert_false(n.down);
	assert_null(n.reason);
	slurm_node_show_release(&n);

	static const char *const bad[] = {
		"",
		"Node node9 not found",
		"NodeName=n1 Arch=x86_64",
		"NodeName= State=IDLE",
		"NodeName=n1 Reason=x State=IDLE",
		" NodeName=n1 State=IDLE",
		"NodeName=n1 XState=IDLE",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(slurm_node_show_parse(bad[i], strlen(bad[i]), &n), -EINVAL);
		assert_null(n.name);
		assert_null(n.state);
	}
	/* Only the first line counts. */
	static const char two[] = "NodeName=n1 Arch=x\nState=IDLE";
	assert_int_equal(slurm_node_show_parse(two, strlen(two), &n), -EINVAL);
}

static void node_names(void **state)
{
	(void)state;
	assert_true(slurm_node_name_valid("spark-01"));
	assert_true(slurm_node_name_valid("node0.lab_a"));
	assert_false(slurm_node_name_valid(""));
	assert_false(slurm_node_name_valid("-node"));
	assert_false(slurm_node_name_valid("node0 state=down"));
	assert_false(slurm_node_name_valid("node[0-1]"));
	assert_false(slurm_node_name_valid("n\"0"));
	char longname[SLURM_NODE_NAME_MAX + 2];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_false(slurm_node_name_valid(longname));
	longname[SLURM_NODE_NAME_MAX] = '\0';
	assert_true(slurm_node_name_valid(longname));
}

static void reasons(void **state)
{
	/* The findings' messages are their own (char *). */
	static char ok[] = "ok", small[] = "small", mib[] = "8 MiB", none[] = "none",
		    twins[] = "mlx5_0 is \"up\"\nbut\tits twin\\ isn't \xe2\x80\x94 down";
	struct finding items[] = {
		{ .check_id = "rdma.devices", .status = CHECK_PASS, .message = ok },
		{ .check_id = "net.buffers", .status = CHECK_WARN, .message = small },
		{ .check_id = "fabric.twins", .status = CHECK_FAIL, .message = twins },
		{ .check_id = "limits.memlock", .status = CHECK_FAIL, .message = mib },
		{ .check_id = "sw.driver", .status = CHECK_FAIL, .message = none },
	};
	struct findings f = { .items = items, .nr = 2 };
	struct strbuf r = STRBUF_INIT;

	(void)state;
	assert_int_equal(slurm_health_reason(&f, &r), 0);
	assert_string_equal(r.buf, "");
	f.nr = 3;
	assert_int_equal(slurm_health_reason(&f, &r), 1);
	assert_string_equal(r.buf, "sparkctl: fabric.twins mlx5_0 is up but its twin isnt ? down");
	f.nr = 5;
	assert_int_equal(slurm_health_reason(&f, &r), 3);
	assert_string_equal(
		r.buf, "sparkctl: fabric.twins mlx5_0 is up but its twin isnt ? down (+2 more)");
	/* A long message is cut, the count of the others kept. */
	char *long_message = xmalloc(1001);
	memset(long_message, 'x', 1000);
	long_message[1000] = '\0';
	items[2].message = long_message;
	assert_int_equal(slurm_health_reason(&f, &r), 3);
	assert_int_equal(r.len, SLURM_HEALTH_REASON_MAX);
	assert_true(starts_with(r.buf, "sparkctl: fabric.twins xxx"));
	assert_non_null(strstr(r.buf, "xxx... (+2 more)"));
	free(long_message);
	strbuf_release(&r);
}

static void decisions(void **state)
{
	static const char fail[] = "sparkctl: fabric.twins port down";
	struct {
		const char *state, *reason, *fail;
		enum slurm_health_action want;
	} rows[] = {
		/* healthy */
		{ "IDLE", NULL, NULL, SLURM_HEALTH_OK },
		{ "MIXED", NULL, "", SLURM_HEALTH_OK },
		{ "IDLE+DRAIN", "sparkctl: fabric.twins port down", NULL, SLURM_HEALTH_RESUME },
		{ "ALLOCATED+DRAIN", "sparkctl: limits.memlock 8 MiB", NULL, SLURM_HEALTH_RESUME },
		{ "IDLE+DRAIN", "maintenance", NULL, SLURM_HEALTH_NOT_OURS },
		{ "IDLE+DRAIN", "sparkctl maintenance", NULL, SLURM_HEALTH_NOT_OURS },
		{ "DOWN+NOT_RESPONDING", "Not responding", NULL, SLURM_HEALTH_NOT_OURS },
		/* our reason but no longer drained: nothing left to lift */
		{ "DOWN", "sparkctl: fabric.twins port down", NULL, SLURM_HEALTH_OK },
		/* failing */
		{ "IDLE", NULL, fail, SLURM_HEALTH_DRAIN },
		{ "ALLOCATED", NULL, fail, SLURM_HEALTH_DRAIN },
		{ "IDLE+DRAIN", "sparkctl: fabric.twins port down", fail,
		  SLURM_HEALTH_STAY_DRAINED },
		{ "IDLE+DRAIN", "sparkctl: limits.memlock 8 MiB", fail, SLURM_HEALTH_DRAIN },
		{ "IDLE+DRAIN", "maintenance", fail, SLURM_HEALTH_NOT_OURS },
		{ "DOWN+NOT_RESPONDING", "Not responding", fail, SLURM_HEALTH_NOT_OURS },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct slurm_node_show n;
		char *line = xasprintf("NodeName=node0 State=%s%s%s", rows[i].state,
				       rows[i].reason ? " Reason=" : "",
				       rows[i].reason ? rows[i].reason : "");
		assert_int_equal(slurm_node_show_parse(line, strlen(line), &n), 0);
		if (slurm_health_decide(rows[i].fail, &n) != rows[i].want)
			fail_msg("row %zu: %s: decided %d, want %d", i, line,
				 (int)slurm_health_decide(rows[i].fail, &n), (int)rows[i].want);
		slurm_node_show_release(&n);
		free(line);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_lines),
		cmocka_unit_test(node_names),
		cmocka_unit_test(reasons),
		cmocka_unit_test(decisions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
