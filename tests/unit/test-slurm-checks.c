/*
 * Unit tests of doctor -H's Slurm checks (check/check_slurm.c) on
 * synthetic inventories and munge results, of what the probe reads of
 * slurm.conf (slurm/conf_scan.h), and of sha256_hex() on known vectors.
 */
#include "sparkctl.h"

#include "test_util.h"

#include "check/check.h"
#include "lib/sha256.h"
#include "lib/xalloc.h"
#include "slurm/conf_scan.h"

/* ---- sha256_hex: FIPS 180-2's vectors --------------------------------------- */

static void sha256_vectors(void **state)
{
	static const struct {
		const char *in, *hex;
	} v[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	};
	char hex[SHA256_HEX_LEN + 1];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
		assert_int_equal(sha256_hex(v[i].in, strlen(v[i].in), hex), 0);
		assert_string_equal(hex, v[i].hex);
	}
}

/* ---- conf_scan -------------------------------------------------------------- */

/* Included files, from a table of path -> text. */
static const char *const includes[][2] = {
	{ "/etc/slurm/nodes.conf", "NodeName=DEFAULT RealMemory=4000\n"
				   "nodename=spark-[01-04,07] CPUs=20   # RealMemory=1\n"
				   "NodeName=spark-05 RealMemory=9000\n" },
	{ "/abs/more.conf", "NodeName=gpu[1-2]n[1-2] realmemory=\"777\"\n" },
};

static int read_table(void *data, const char *path, struct strbuf *out)
{
	(void)data;
	for (size_t i = 0; i < ARRAY_SIZE(includes); i++)
		if (streq(path, includes[i][0])) {
			strbuf_addstr(out, includes[i][1]);
			return 1;
		}
	return 0;
}

static const char conf_text[] = "# a comment\n"
				"ClusterName=lab\n"
				"SlurmctldHost=spark-01(198.18.0.10)\n"
				"SlurmctldHost=spark-02\n"
				"AuthType=auth/munge\n"
				"AuthInfo=cred_expire=60,socket=/run/munge/other.socket\n"
				"NodeName=DEFAULT RealMemory=100\n"
				"NodeName=spark-09\n"
				"Include nodes.conf\n"
				"include /abs/more.conf\n"
				"Include missing.conf\n"
				"NodeName=bad RealMemory=lots\n"
				"NodeName=spark-[01-\n";

static void scan(const char *node, struct slurm_conf_scan *s)
{
	slurm_conf_scan_init(s, node, read_table, NULL);
	slurm_conf_scan_text(s, "/etc/slurm/slurm.conf", conf_text);
}

static void conf_scan_reads_nodes(void **state)
{
	struct slurm_conf_scan s;

	(void)state;
	scan("spark-07", &s);
	assert_string_equal(s.controller, "spark-01");
	assert_string_equal(s.munge_socket, "/run/munge/other.socket");
	assert_true(s.listed);
	/* From the NodeName=DEFAULT of the included file, not the comment's 1. */
	assert_int_equal(s.real_memory_mib, 4000);
	/* Include missing.conf and RealMemory=lots are named, with file and line. */
	assert_int_equal(s.problems.nr, 3);
	assert_non_null(strstr(s.problems.v[0], "/etc/slurm/slurm.conf:11: Include"));
	assert_non_null(strstr(s.problems.v[0], "/etc/slurm/missing.conf"));
	assert_non_null(strstr(s.problems.v[1], ":12: RealMemory is not a number"));
	assert_non_null(strstr(s.problems.v[2], ":13: NodeName is not a hostlist: 'spark-[01-'"));
	slurm_conf_scan_release(&s);

	scan("spark-05", &s);
	assert_true(s.listed);
	assert_int_equal(s.real_memory_mib, 9000);
	slurm_conf_scan_release(&s);

	/* The default before the Include. */
	scan("spark-09", &s);
	assert_true(s.listed);
	assert_int_equal(s.real_memory_mib, 100);
	slurm_conf_scan_release(&s);

	/* Two bracket groups, a quoted value, keys in any case. */
	scan("gpu2n1", &s);
	assert_true(s.listed);
	assert_int_equal(s.real_memory_mib, 777);
	slurm_conf_scan_release(&s);

	/* spark-06 is not in spark-[01-04,07]. */
	scan("spark-06", &s);
	assert_false(s.listed);
	assert_int_equal(s.real_memory_mib, -1);
	slurm_conf_scan_release(&s);
}

static void conf_scan_bounded_includes(void **state)
{
	struct slurm_conf_scan s;

	(void)state;
	/* A file that includes itself ends, with a problem, not a loop. */
	slurm_conf_scan_init(&s, "x", read_table, NULL);
	s.depth = SLURM_INCLUDE_DEPTH;
	slurm_conf_scan_text(&s, "/etc/slurm/slurm.conf", "Include nodes.conf\n");
	assert_int_equal(s.problems.nr, 1);
	assert_non_null(strstr(s.problems.v[0], "too deep"));
	slurm_conf_scan_release(&s);
}

/* ---- the checks ------------------------------------------------------------- */

/* n nodes, the first nr_slurm of them Slurm nodes alike. */
static void add_nodes(struct doctor_cluster *c, size_t n, size_t nr_slurm)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < n; i++) {
		struct doctor_node *dn = ARRAY_PUSH(c->nodes, c->nr_nodes);
		dn->host = xasprintf("node%zu", i);
		load_fixture("spark-1cable", &dn->inv);
		free(dn->inv.sys.hostname);
		dn->inv.sys.hostname = xasprintf("spark-0%zu", i + 1);
		dn->inspected = true;
		if (i >= nr_slurm)
			continue;
		struct inv_slurm *s = xcalloc(1, sizeof(*s));
		s->conf = xstrdup("/etc/slurm/slurm.conf");
		s->conf_sha256 =
			xstrdup("aaaa0000aaaa0000aaaa0000aaaa0000aaaa0000aaaa0000aaaa0000aaaa0000");
		s->controller = xstrdup("spark-01");
		s->node_name = xasprintf("spark-0%zu", i + 1);
		s->node_listed = TRI_YES;
		s->real_memory_bytes = (int64_t)100000 << 20;
		s->user = xstrdup("alice");
		s->uid = 1000;
		s->gid = 1000;
		s->user_source = xstrdup("passwd");
		dn->inv.slurm = s;
	}
}

static void run_one(struct doctor_cluster *c, const char *id, struct findings *f)
{
	struct check_selection sel;
	struct strvec ids = STRVEC_INIT, none = STRVEC_INIT;
	struct strbuf err = STRBUF_INIT;

	findings_release(f);
	strvec_push(&ids, id);
	assert_int_equal(check_select(&sel, &ids, &none, &err), 0);
	run_cluster_checks(&sel, c, f);
	check_selection_release(&sel);
	strvec_clear(&ids);
	strbuf_release(&err);
}

/* The one finding of status st whose message holds text, else fail. */
static const struct finding *find(const struct findings *f, enum check_status st, const char *text)
{
	for (size_t i = 0; i < f->nr; i++)
		if (f->items[i].status == st && strstr(f->items[i].message, text))
			return &f->items[i];
	for (size_t i = 0; i < f->nr; i++)
		fprintf(stderr, "  %s %s\n", check_status_name(f->items[i].status),
			f->items[i].message);
	fail_msg("no %s finding with '%s'", check_status_name(st), text);
	return NULL;
}

static size_t count(const struct findings *f, enum check_status st)
{
	size_t n = 0;

	for (size_t i = 0; i < f->nr; i++)
		n += f->items[i].status == st;
	return n;
}

static const char *const slurm_checks[] = { "slurm.munge", "slurm.uid", "slurm.conf_same",
					    "slurm.real_memory" };

static void no_slurm_says_nothing(void **state)
{
	struct doctor_cluster c;
	struct findings f = { 0 };

	(void)state;
	add_nodes(&c, 3, 0);
	c.probed = true;
	for (size_t i = 0; i < ARRAY_SIZE(slurm_checks); i++) {
		run_one(&c, slurm_checks[i], &f);
		assert_int_equal(f.nr, 0);
	}
	findings_release(&f);
	doctor_cluster_release(&c);
}

static void all_good_passes(void **state)
{
	struct doctor_cluster c;
	struct findings f = { 0 };

	(void)state;
	add_nodes(&c, 3, 3);
	c.probed = c.munge_probed = true;
	for (size_t i = 0; i < c.nr_nodes; i++)
		c.nodes[i].munge = 1;
	for (size_t i = 0; i < ARRAY_SIZE(slurm_checks); i++) {
		run_one(&c, slurm_checks[i], &f);
		assert_true(f.nr > 0);
		assert_int_equal(count(&f, CHECK_PASS), f.nr);
	}
	run_one(&c, "slurm.munge", &f);
	find(&f, CHECK_PASS, "a credential of spark-01 decodes on 3 Slurm nodes");
	run_one(&c, "slurm.uid", &f);
	find(&f, CHECK_PASS, "user alice is uid 1000 gid 1000 on 3 Slurm nodes");
	findings_release(&f);
	doctor_cluster_release(&c);
}

static void munge_failures(void **state)
{
	struct doctor_cluster c;
	struct findings f = { 0 };
	const struct finding *x;

	(void)state;
	/* node3 is no Slurm node: skipped, with why. */
	add_nodes(&c, 4, 3);

	run_one(&c, "slurm.munge", &f);
	find(&f, CHECK_SKIP, "not probed");
	find(&f, CHECK_SKIP, "spark-04: not a Slurm node");

	c.probed = c.munge_probed = true;
	c.nodes[0].munge = 1;
	c.nodes[1].munge = -1;
	c.nodes[1].munge_detail = xstrdup("Invalid credential (6)");
	c.nodes[2].munge = -1;
	c.nodes[2].munge_detail = xstrdup("Rewound credential (17)");
	run_one(&c, "slurm.munge", &f);
	x = find(&f, CHECK_FAIL,
		 "spark-02 cannot decode a munge credential of spark-01: Invalid credential");
	assert_non_null(strstr(x->fix, "copy /etc/munge/munge.key from spark-01 to spark-02"));
	assert_non_null(strstr(x->fix, "0400"));
	assert_non_null(strstr(x->fix, "systemctl restart munge"));
	x = find(&f, CHECK_FAIL, "spark-03 cannot decode a munge credential of spark-01: Rewound");
	assert_non_null(strstr(x->fix, "clocks"));
	assert_int_equal(count(&f, CHECK_PASS), 0);

	/* Nobody else decodes node0's credentials: node0's key may be the odd one. */
	free(c.nodes[2].munge_detail);
	c.nodes[2].munge_detail = xstrdup("unmunge: Error: Invalid credential");
	run_one(&c, "slurm.munge", &f);
	find(&f, CHECK_FAIL, "no other node decodes spark-01's credentials");
	assert_int_equal(count(&f, CHECK_FAIL), 3);

	free(c.nodes[2].munge_detail);
	c.nodes[2].munge_detail = xstrdup("unmunge is not installed (command not found)");
	run_one(&c, "slurm.munge", &f);
	x = find(&f, CHECK_FAIL,
		 "spark-03 cannot decode a munge credential of spark-01: unmunge "
		 "is not installed");
	assert_non_null(strstr(x->fix, "install munge on spark-03"));

	/* No credential made at all: the encoder is named. */
	c.munge_encode_error = xstrdup("munge: Error: Failed to access \"/x\": No such file");
	run_one(&c, "slurm.munge", &f);
	x = find(&f, CHECK_FAIL, "spark-01: no credential to try: 'munge -n' failed");
	assert_non_null(strstr(x->fix, "systemctl enable --now munge"));
	assert_int_equal(count(&f, CHECK_FAIL), 1);
	findings_release(&f);
	doctor_cluster_release(&c);
}

static void uid_differs(void **state)
{
	struct doctor_cluster c;
	struct findings f = { 0 };
	const struct finding *x;

	(void)state;
	add_nodes(&c, 3, 3);
	c.nodes[1].inv.slurm->uid = 1002;
	c.nodes[2].inv.slurm->uid = INV_UNKNOWN;
	c.nodes[2].inv.slurm->gid = INV_UNKNOWN;
	run_one(&c, "slurm.uid", &f);
	x = find(&f, CHECK_FAIL,
		 "user alice is uid 1002 gid 1000 on spark-02, but uid 1000 gid 1000 on spark-01");
	assert_non_null(strstr(x->fix, "on spark-02: sudo usermod -u 1000 -g 1000 alice"));
	x = find(&f, CHECK_FAIL, "spark-03 has no user alice");
	assert_non_null(strstr(x->fix, "useradd -u 1000 -g 1000 alice"));
	assert_int_equal(count(&f, CHECK_PASS), 0);
	findings_release(&f);
	doctor_cluster_release(&c);
}

static void conf_differs(void **state)
{
	struct doctor_cluster c;
	struct findings f = { 0 };
	const struct finding *x;

	(void)state;
	add_nodes(&c, 3, 3);
	/* The controller's copy is the odd one: the majority still decides. */
	free(c.nodes[0].inv.slurm->conf_sha256);
	c.nodes[0].inv.slurm->conf_sha256 =
		xstrdup("bbbb1111bbbb1111bbbb1111bbbb1111bbbb1111bbbb1111bbbb1111bbbb1111");
	c.probed = true;
	run_one(&c, "slurm.conf_same", &f);
	x = find(&f, CHECK_FAIL,
		 "slurm.conf on spark-01 (sha256 bbbb1111bbbb) differs from the majority's "
		 "(sha256 aaaa0000aaaa, on 2 nodes)");
	assert_non_null(strstr(x->fix, "for n in node0;"));
	assert_non_null(strstr(x->fix, "scontrol reconfigure"));
	assert_int_equal(count(&f, CHECK_FAIL), 1);
	findings_release(&f);
	doctor_cluster_release(&c);
}

static void real_memory_above(void **state)
{
	struct doctor_cluster c;
	struct findings f = { 0 };
	const struct finding *x;

	(void)state;
	add_nodes(&c, 3, 3);
	/* The fixture's MemTotal is 125327 MiB (unified memory: 10% kept back). */
	c.nodes[1].inv.slurm->real_memory_bytes = (int64_t)125328 << 20;
	c.nodes[2].inv.slurm->node_listed = TRI_NO;
	run_one(&c, "slurm.real_memory", &f);
	x = find(&f, CHECK_FAIL,
		 "spark-02: RealMemory 125328 MiB is above its MemTotal 125327 MiB");
	assert_non_null(strstr(x->fix, "RealMemory=112795 on spark-02's NodeName line"));
	assert_non_null(strstr(x->fix, "scontrol update nodename=spark-02 state=resume"));
	find(&f, CHECK_PASS, "spark-01: RealMemory 100000 MiB, of MemTotal 125327 MiB");
	find(&f, CHECK_SKIP, "spark-03: no NodeName line");
	/* Equal is enough. */
	c.nodes[1].inv.slurm->real_memory_bytes = (int64_t)125327 << 20;
	run_one(&c, "slurm.real_memory", &f);
	assert_int_equal(count(&f, CHECK_FAIL), 0);
	findings_release(&f);
	doctor_cluster_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sha256_vectors),
		cmocka_unit_test(conf_scan_reads_nodes),
		cmocka_unit_test(conf_scan_bounded_includes),
		cmocka_unit_test(no_slurm_says_nothing),
		cmocka_unit_test(all_good_passes),
		cmocka_unit_test(munge_failures),
		cmocka_unit_test(uid_differs),
		cmocka_unit_test(conf_differs),
		cmocka_unit_test(real_memory_above),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
