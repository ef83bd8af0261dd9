/* Unit tests of the cluster checks on synthetic probe results: pings and clocks. */
#include "sparkctl.h"

#include "test_util.h"

#include "check/check.h"
#include "cluster/cluster_file.h"
#include "lib/xalloc.h"

static void two_nodes(struct doctor_cluster *c)
{
	memset(c, 0, sizeof(*c));
	for (int i = 0; i < 2; i++) {
		struct doctor_node *n = ARRAY_PUSH(c->nodes, c->nr_nodes);
		n->host = xasprintf("node%d", i);
		load_fixture("spark-1cable", &n->inv);
		free(n->inv.sys.hostname);
		n->inv.sys.hostname = xasprintf("spark-0%d", i + 1);
		n->inspected = true;
	}
}

static const struct finding *only(const struct findings *f, const char *id, size_t *count)
{
	const struct finding *last = NULL;

	*count = 0;
	for (size_t i = 0; i < f->nr; i++)
		if (streq(f->items[i].check_id, id)) {
			last = &f->items[i];
			(*count)++;
		}
	return last;
}

static void run_one(struct doctor_cluster *c, const char *id, struct findings *f)
{
	struct check_selection sel;
	struct strvec ids = STRVEC_INIT, none = STRVEC_INIT;
	struct strbuf err = STRBUF_INIT;

	strvec_push(&ids, id);
	assert_int_equal(check_select(&sel, &ids, &none, &err), 0);
	run_cluster_checks(&sel, c, f);
	check_selection_release(&sel);
	strvec_clear(&ids);
	strbuf_release(&err);
}

static void ping_results(void **state)
{
	struct doctor_cluster c;
	struct findings f = { 0 };
	size_t n;

	(void)state;
	two_nodes(&c);
	c.probed = true;
	struct link_probe *ok = ARRAY_PUSH(c.links, c.nr_links);
	ok->from = 0;
	ok->to = 1;
	ok->from_if = xstrdup("enp1s0f1np1");
	ok->to_addr = xstrdup("192.168.177.12");
	ok->mtu = 9000;
	ok->ok = true;
	struct link_probe *bad = ARRAY_PUSH(c.links, c.nr_links);
	bad->from = 0;
	bad->to = 1;
	bad->from_if = xstrdup("enP2p1s0f1np1");
	bad->to_addr = xstrdup("192.168.178.12");
	bad->mtu = 9000;
	bad->detail = xstrdup("2 packets transmitted, 0 received, 100% packet loss");
	run_one(&c, "cluster.ping", &f);
	only(&f, "cluster.ping", &n);
	assert_int_equal(n, 2);
	assert_int_equal(f.items[0].status, CHECK_PASS);
	assert_int_equal(f.items[1].status, CHECK_FAIL);
	assert_non_null(strstr(f.items[1].message, "spark-01 enP2p1s0f1np1 -> spark-02 "
						   "192.168.178.12: no reply to a don't-fragment "
						   "ping of 9000 bytes: 2 packets"));
	assert_non_null(f.items[1].fix);
	findings_release(&f);

	/* Offline (no probes): SKIP, never a guess. */
	c.probed = false;
	run_one(&c, "cluster.ping", &f);
	assert_int_equal(f.nr, 1);
	assert_int_equal(f.items[0].status, CHECK_SKIP);
	findings_release(&f);
	doctor_cluster_release(&c);
}

static void clocks(void **state)
{
	struct doctor_cluster c;
	struct findings f = { 0 };

	(void)state;
	two_nodes(&c);
	run_one(&c, "cluster.clock", &f);
	assert_int_equal(f.items[0].status, CHECK_SKIP);
	findings_release(&f);
	c.nodes[0].has_clock = true;
	c.nodes[0].clock_offset = 0.004;
	c.nodes[1].has_clock = true;
	c.nodes[1].clock_offset = -0.2;
	run_one(&c, "cluster.clock", &f);
	assert_int_equal(f.nr, 1);
	assert_int_equal(f.items[0].status, CHECK_PASS);
	findings_release(&f);
	c.nodes[1].clock_offset = -1.5;
	run_one(&c, "cluster.clock", &f);
	assert_int_equal(f.nr, 1);
	assert_int_equal(f.items[0].status, CHECK_FAIL);
	assert_non_null(strstr(f.items[0].message, "spark-02's clock is 1.50 s behind"));
	findings_release(&f);
	doctor_cluster_release(&c);
}

static void unreachable(void **state)
{
	struct doctor_cluster c;
	struct findings f = { 0 };
	size_t n;

	(void)state;
	two_nodes(&c);
	c.nodes[1].inspected = false;
	c.nodes[1].error = xstrdup("ssh: connect to host node1 port 22: Connection refused");
	run_one(&c, "cluster.ssh", &f);
	const struct finding *x = only(&f, "cluster.ssh", &n);
	assert_int_equal(n, 2);
	assert_int_equal(x->status, CHECK_FAIL);
	assert_non_null(strstr(x->message, "node1 could not be inspected: ssh: connect"));
	findings_release(&f);
	/* Checks that compare nodes skip with one node left. */
	run_one(&c, "cluster.versions", &f);
	assert_int_equal(f.items[0].status, CHECK_SKIP);
	findings_release(&f);
	doctor_cluster_release(&c);
}

/* Two nodes made from one image: the same machine-id, a failure naming both. */
static void machine_id_duplicate(void **state)
{
	struct doctor_cluster c;
	struct findings f = { 0 };
	size_t n;

	(void)state;
	two_nodes(&c);
	run_one(&c, "cluster.machine_id", &f);
	assert_int_equal(only(&f, "cluster.machine_id", &n)->status, CHECK_SKIP);
	findings_release(&f);
	for (int i = 0; i < 2; i++)
		c.nodes[i].inv.sys.machine_id = xstrdup("0123456789abcdef0123456789abcdef");
	run_one(&c, "cluster.machine_id", &f);
	const struct finding *x = only(&f, "cluster.machine_id", &n);
	assert_int_equal(n, 1);
	assert_int_equal(x->status, CHECK_FAIL);
	assert_non_null(strstr(x->message, "node0 and node1 have the same machine-id"));
	assert_non_null(strstr(x->fix, "systemd-machine-id-setup"));
	findings_release(&f);
	free(c.nodes[1].inv.sys.machine_id);
	c.nodes[1].inv.sys.machine_id = xstrdup("fedcba9876543210fedcba9876543210");
	run_one(&c, "cluster.machine_id", &f);
	assert_int_equal(only(&f, "cluster.machine_id", &n)->status, CHECK_PASS);
	findings_release(&f);
	doctor_cluster_release(&c);
}

/* The cluster file against the nodes: a node left out, another id, other fabric addresses. */
static void cluster_file_disagrees(void **state)
{
	struct doctor_cluster c;
	struct findings f = { 0 };
	struct cluster_file cf;
	struct strvec fabric = STRVEC_INIT;
	struct strbuf err = STRBUF_INIT;
	size_t n;

	(void)state;
	two_nodes(&c);
	run_one(&c, "cluster.file", &f);
	assert_int_equal(only(&f, "cluster.file", &n)->status, CHECK_SKIP);
	findings_release(&f);
	cluster_file_init(&cf);
	c.cluster_file = &cf;
	inventory_fabric_ipv4(&c.nodes[0].inv, &fabric);
	assert_true(fabric.nr > 0);
	assert_int_equal(cluster_file_put(&cf, "node0", NULL, NULL, &fabric, NULL, &err), 0);
	assert_int_equal(cluster_file_put(&cf, "node1", NULL, NULL, &fabric, NULL, &err), 0);
	run_one(&c, "cluster.file", &f);
	assert_int_equal(only(&f, "cluster.file", &n)->status, CHECK_PASS);
	findings_release(&f);
	/* node1 is not in it; node0's id differs. */
	assert_int_equal(cluster_file_remove(&cf, "node1"), 0);
	assert_int_equal(cluster_file_put(&cf, "node0", "0123456789abcdef0123456789abcdef", NULL,
					  &fabric, NULL, &err),
			 0);
	c.nodes[0].inv.sys.node_id = xstrdup("fedcba9876543210fedcba9876543210");
	run_one(&c, "cluster.file", &f);
	only(&f, "cluster.file", &n);
	assert_int_equal(n, 2);
	bool left_out = false, id = false;
	for (size_t i = 0; i < f.nr; i++) {
		assert_int_equal(f.items[i].status, CHECK_WARN);
		left_out |= strstr(f.items[i].message, "node1 is not in the cluster file") != NULL;
		id |= strstr(f.items[i].message, "node0: the cluster file has node id 0123") !=
		      NULL;
	}
	assert_true(left_out && id);
	findings_release(&f);
	/* Other fabric addresses. */
	strvec_clear(&fabric);
	strvec_push(&fabric, "10.9.9.9");
	assert_int_equal(cluster_file_put(&cf, "node0", NULL, NULL, &fabric, NULL, &err), 0);
	assert_int_equal(cluster_file_put(&cf, "node1", NULL, NULL, &fabric, NULL, &err), 0);
	run_one(&c, "cluster.file", &f);
	only(&f, "cluster.file", &n);
	assert_int_equal(n, 2);
	assert_non_null(
		strstr(f.items[0].message, "lists fabric addresses 10.9.9.9, the node has"));
	findings_release(&f);
	cluster_file_release(&cf);
	strvec_clear(&fabric);
	strbuf_release(&err);
	doctor_cluster_release(&c);
}

/* The key logins between the nodes: not probed is a skip, a failing pair is named. */
static void ssh_mesh_pairs(void **state)
{
	struct doctor_cluster c;
	struct findings f = { 0 };
	size_t n;

	(void)state;
	two_nodes(&c);
	run_one(&c, "cluster.ssh_mesh", &f);
	assert_int_equal(only(&f, "cluster.ssh_mesh", &n)->status, CHECK_SKIP);
	findings_release(&f);
	c.mesh = xcalloc(4, sizeof(*c.mesh));
	c.mesh[1] = 1; /* node0 -> node1 */
	c.mesh[2] = 0; /* node1 -> node0 */
	run_one(&c, "cluster.ssh_mesh", &f);
	const struct finding *x = only(&f, "cluster.ssh_mesh", &n);
	assert_int_equal(n, 1);
	assert_int_equal(x->status, CHECK_FAIL);
	assert_non_null(strstr(x->message, "node1 -> node0"));
	assert_null(strstr(x->message, "node0 -> node1"));
	assert_string_equal(x->fix, "sparkctl join node0 node1");
	findings_release(&f);
	c.mesh[2] = 1;
	run_one(&c, "cluster.ssh_mesh", &f);
	assert_int_equal(only(&f, "cluster.ssh_mesh", &n)->status, CHECK_PASS);
	findings_release(&f);
	doctor_cluster_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(machine_id_duplicate),
		cmocka_unit_test(ssh_mesh_pairs),
		cmocka_unit_test(cluster_file_disagrees),
		cmocka_unit_test(ping_results),
		cmocka_unit_test(clocks),
		cmocka_unit_test(unreachable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
