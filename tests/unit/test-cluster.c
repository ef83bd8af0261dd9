/* Unit tests of cluster/cluster_file.c and cluster/join_plan.c (pure: no ssh). */
#include "sparkctl.h"

#include <sys/stat.h>

#include "test_util.h"

#include "cluster/cluster_file.h"
#include "cluster/join_plan.h"
#include "lib/xalloc.h"
#include "probe/probe.h"

/* Parse text; the message for a refused one in err. */
static int parse(const char *text, struct cluster_file *cf, struct strbuf *err)
{
	strbuf_reset(err);
	return cluster_file_parse(cf, text, strlen(text), "F", err);
}

static void file_round_trip(void **state)
{
	const char *text = "{\"schema_version\":1,\"plan\":\"ring\",\"nodes\":["
			   "{\"name\":\"spark1\",\"id\":\"0123456789abcdef0123456789abcdef\","
			   "\"mgmt_addresses\":[\"10.0.0.1\",\"fe80::1\"],\"fabric_addresses\":["
			   "\"192.168.100.1\"],"
			   "\"user\":\"ops\"},{\"name\":\"spark2\"}]}";
	struct cluster_file cf, again;
	struct strbuf err = STRBUF_INIT, out = STRBUF_INIT, out2 = STRBUF_INIT;

	(void)state;
	assert_int_equal(parse(text, &cf, &err), 0);
	assert_string_equal(cf.plan, "ring");
	assert_int_equal(cf.nr, 2);
	assert_string_equal(cf.nodes[0].id, "0123456789abcdef0123456789abcdef");
	assert_int_equal(cf.nodes[0].mgmt_addresses.nr, 2);
	assert_null(cf.nodes[1].id);
	assert_null(cf.nodes[1].user);
	char *host = cluster_node_host(&cf.nodes[0]);
	assert_string_equal(host, "ops@spark1");
	free(host);
	assert_non_null(cluster_file_find(&cf, "SPARK2"));
	cluster_file_format(&cf, &out);
	assert_int_equal(parse(out.buf, &again, &err), 0);
	cluster_file_format(&again, &out2);
	assert_string_equal(out.buf, out2.buf);
	assert_int_equal(cluster_file_remove(&again, "spark1"), 0);
	assert_int_equal(cluster_file_remove(&again, "spark1"), -ENOENT);
	assert_int_equal(again.nr, 1);
	assert_string_equal(again.nodes[0].name, "spark2");
	cluster_file_release(&cf);
	cluster_file_release(&again);
	strbuf_release(&err);
	strbuf_release(&out);
	strbuf_release(&out2);
}

/* Each bad field is named with its place. */
static void file_bad_fields(void **state)
{
	static const struct {
		const char *text, *message;
	} cases[] = {
		{ "{\"plan\":null,\"nodes\":[]}", "F: schema_version: missing or not an integer" },
		{ "{\"schema_version\":2,\"nodes\":[]}", "F: schema_version: 2 is not 1" },
		{ "{\"schema_version\":1,\"plan\":\"mesh\",\"nodes\":[]}",
		  "F: plan: not pair, switch, ring or null ('mesh')" },
		{ "{\"schema_version\":1}", "F: nodes: missing or not an array" },
		{ "{\"schema_version\":1,\"nodes\":[{\"name\":\"a\"},{\"name\":\"b\"},"
		  "{\"name\":\"-x\"}]}",
		  "F: nodes[2].name: not a host name ('-x')" },
		{ "{\"schema_version\":1,\"nodes\":[{}]}", "F: nodes[0].name: missing" },
		{ "{\"schema_version\":1,\"nodes\":[{\"name\":\"a\"},{\"name\":\"A\"}]}",
		  "F: nodes[1].name: a second node of that name ('A')" },
		{ "{\"schema_version\":1,\"nodes\":[{\"name\":\"a\",\"id\":\"ABC\"}]}",
		  "F: nodes[0].id: not 32 lowercase hex digits ('ABC')" },
		{ "{\"schema_version\":1,\"nodes\":[{\"name\":\"a\",\"user\":\"a b\"}]}",
		  "F: nodes[0].user: not a user name ('a b')" },
		{ "{\"schema_version\":1,\"nodes\":[{\"name\":\"a\",\"mgmt_addresses\":[\"1.2.3."
		  "4\","
		  "\"x;y\"]}]}",
		  "F: nodes[0].mgmt_addresses[1]: not an address or host name ('x;y')" },
		{ "{\"schema_version\":1,\"nodes\":[{\"name\":\"a\",\"fabric_addresses\":\"1.2.3."
		  "4\"}]}",
		  "F: nodes[0].fabric_addresses: expected an array of addresses" },
		{ "{\"schema_version\":1,\"nodes\":[{\"name\":7}]}",
		  "F: nodes[0].name: expected a string or null" },
	};
	struct strbuf err = STRBUF_INIT;
	struct cluster_file cf;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		assert_int_equal(parse(cases[i].text, &cf, &err), -EINVAL);
		if (!strstr(err.buf, cases[i].message))
			fail_msg("case %zu: '%s', expected '%s'", i, err.buf, cases[i].message);
		assert_int_equal(cf.nr, 0);
	}
	strbuf_release(&err);
}

/* Saved atomically with its directories; the precedence of the locations. */
static void file_save_and_locate(void **state)
{
	char dir[] = "/tmp/sparkctl-test-clusterXXXXXX";
	struct cluster_file cf, back;
	struct cluster_file_location loc;
	struct strbuf err = STRBUF_INIT, path = STRBUF_INIT;
	struct strvec mgmt = STRVEC_INIT;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	cluster_file_init(&cf);
	strvec_push(&mgmt, "10.0.0.1");
	assert_int_equal(cluster_file_put(&cf, "spark1", NULL, &mgmt, NULL, NULL, &err), 0);
	assert_int_equal(cluster_file_put(&cf, "bad name", NULL, NULL, NULL, NULL, &err), -EINVAL);
	strbuf_addf(&path, "%s/config/sparkctl/cluster.json", dir);
	char *config = xasprintf("%s/config", dir);
	setenv("XDG_CONFIG_HOME", config, 1);
	free(config);
	unsetenv("SPARKCTL_CLUSTER");
	/* Nothing yet: the user's file is where one goes. */
	assert_int_equal(cluster_file_locate(NULL, &loc), 0);
	assert_int_equal(loc.origin, CLUSTER_FILE_FROM_NOWHERE);
	assert_false(loc.exists);
	assert_string_equal(loc.path.buf, path.buf);
	cluster_file_location_release(&loc);
	assert_int_equal(cluster_file_save(&cf, path.buf, &err), 0);
	assert_int_equal(stat(path.buf, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(cluster_file_load(&back, path.buf, &err), 0);
	assert_int_equal(back.nr, 1);
	cluster_file_release(&back);
	assert_int_equal(cluster_file_locate(NULL, &loc), 0);
	assert_int_equal(loc.origin, CLUSTER_FILE_FROM_USER);
	assert_true(loc.exists);
	cluster_file_location_release(&loc);
	/* The environment beats it, the option beats both; "none" is none. */
	setenv("SPARKCTL_CLUSTER", "/nonexistent/c.json", 1);
	assert_int_equal(cluster_file_locate(NULL, &loc), 0);
	assert_int_equal(loc.origin, CLUSTER_FILE_FROM_ENV);
	assert_string_equal(loc.path.buf, "/nonexistent/c.json");
	assert_false(loc.exists);
	cluster_file_location_release(&loc);
	assert_int_equal(cluster_file_locate(path.buf, &loc), 0);
	assert_int_equal(loc.origin, CLUSTER_FILE_FROM_OPTION);
	assert_true(loc.exists);
	cluster_file_location_release(&loc);
	setenv("SPARKCTL_CLUSTER", "none", 1);
	assert_int_equal(cluster_file_locate(NULL, &loc), 0);
	assert_int_equal(loc.path.len, 0);
	cluster_file_location_release(&loc);
	unsetenv("SPARKCTL_CLUSTER");
	cluster_file_release(&cf);
	strvec_clear(&mgmt);
	strbuf_release(&err);
	strbuf_release(&path);
	remove_tree(dir);
}

/* ---- the join plan ---- */

#define KEY_A	  "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAAAA"
#define KEY_B	  "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBBBB"
#define KEY_H	  "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHHHH"
#define HOSTKEY_A "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIhostA"
#define HOSTKEY_B "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIhostB"

static void state_parse(void **state)
{
	const char *out = "dir yes\nkey yes\npub " KEY_A " root@a\n"
			  "file authorized_keys\n| " KEY_B " b\n| \n\nend\n"
			  "file config\n| Host x\n\nend\n"
			  "address 10.0.0.1\nhostkey " HOSTKEY_A "\ndone\n";
	struct join_state st;
	struct strbuf err = STRBUF_INIT;

	(void)state;
	assert_int_equal(join_state_parse(out, &st, &err), 0);
	assert_true(st.has_dir && st.has_key);
	assert_string_equal(st.pubkey, KEY_A " root@a");
	assert_string_equal(st.text[JOIN_AUTHORIZED_KEYS], KEY_B " b\n\n");
	assert_string_equal(st.text[JOIN_CONFIG], "Host x\n");
	assert_null(st.text[JOIN_KNOWN_HOSTS]);
	assert_string_equal(st.address, "10.0.0.1");
	assert_string_equal(st.host_key, HOSTKEY_A);
	join_state_release(&st);
	/* Cut short (no "done", or a file without "end"): refused. */
	assert_int_equal(join_state_parse("dir yes\nkey no\n", &st, &err), -EINVAL);
	assert_int_equal(join_state_parse("dir yes\nfile config\n| x\n", &st, &err), -EINVAL);
	strbuf_release(&err);
}

struct two {
	struct strvec aliases[2];
	struct join_member m[2];
	struct join_state st;
};

static void two_init(struct two *t)
{
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < 2; i++)
		strvec_init(&t->aliases[i]);
	strvec_pushl(&t->aliases[0], "a", "10.0.0.1", "192.168.100.1", NULL);
	strvec_pushl(&t->aliases[1], "b", "10.0.0.2", NULL);
	t->m[0] = (struct join_member){ "a", KEY_A " root@a", HOSTKEY_A, &t->aliases[0] };
	t->m[1] = (struct join_member){ "b", KEY_B " root@b", HOSTKEY_B, &t->aliases[1] };
}

static void two_release(struct two *t)
{
	for (int i = 0; i < 2; i++)
		strvec_clear(&t->aliases[i]);
	join_state_release(&t->st);
}

/* A fresh node: every file new; planned again on its result, nothing changes. */
static void plan_fresh_then_nothing(void **state)
{
	struct two t;
	struct join_side_plan plan, again;
	struct strbuf err = STRBUF_INIT;

	(void)state;
	two_init(&t);
	assert_int_equal(join_plan_side(t.m, 2, 0, &t.st, KEY_H " me", "CONF\n", "a", &plan, &err),
			 0);
	assert_int_equal(plan.nr_changed, JOIN_NR_FILES);
	assert_string_equal(plan.file[JOIN_AUTHORIZED_KEYS].content,
			    KEY_H " me\n" KEY_B " root@b\n");
	assert_string_equal(plan.file[JOIN_KNOWN_HOSTS].content, "b,10.0.0.2 " HOSTKEY_B "\n");
	assert_string_equal(plan.file[JOIN_CONFIG].content, JOIN_INCLUDE_LINE "\n");
	assert_string_equal(plan.file[JOIN_SSH_CONF].content, "CONF\n");
	for (size_t f = 0; f < JOIN_NR_FILES; f++)
		t.st.text[f] = xstrdup(plan.file[f].content);
	assert_int_equal(join_plan_side(t.m, 2, 0, &t.st, KEY_H " me", "CONF\n", "a", &again, &err),
			 0);
	assert_int_equal(again.nr_changed, 0);
	join_side_plan_release(&plan);
	join_side_plan_release(&again);
	two_release(&t);
	strbuf_release(&err);
}

/* Lines already there stay, with their options and comments; only what is missing is added. */
static void plan_keeps_and_completes(void **state)
{
	struct two t;
	struct join_side_plan plan;
	struct strbuf err = STRBUF_INIT;

	(void)state;
	two_init(&t);
	t.st.text[JOIN_AUTHORIZED_KEYS] = xstrdup("from=\"10.*\" " KEY_B " old comment\n# x\n");
	t.st.text[JOIN_KNOWN_HOSTS] = xstrdup("|1|salt|hash " HOSTKEY_A "\nb " HOSTKEY_B "\n");
	t.st.text[JOIN_CONFIG] = xstrdup("Host other\n  User x");
	/* This host's side: no authorized_keys change, all of a and b known. */
	assert_int_equal(
		join_plan_side(t.m, 2, SIZE_MAX, &t.st, KEY_H, "C\n", "this host", &plan, &err), 0);
	assert_false(plan.file[JOIN_AUTHORIZED_KEYS].changed);
	assert_string_equal(plan.file[JOIN_KNOWN_HOSTS].content,
			    "|1|salt|hash " HOSTKEY_A "\nb " HOSTKEY_B "\n"
			    "a,10.0.0.1,192.168.100.1 " HOSTKEY_A "\n"
			    "10.0.0.2 " HOSTKEY_B "\n");
	assert_string_equal(plan.file[JOIN_CONFIG].content,
			    JOIN_INCLUDE_LINE "\nHost other\n  User x");
	join_side_plan_release(&plan);
	/* Node a: b's key is there (with options): only this host's is added. */
	assert_int_equal(join_plan_side(t.m, 2, 0, &t.st, KEY_H, "C\n", "a", &plan, &err), 0);
	assert_int_equal(plan.file[JOIN_AUTHORIZED_KEYS].added.nr, 1);
	assert_string_equal(plan.file[JOIN_AUTHORIZED_KEYS].added.v[0], KEY_H);
	join_side_plan_release(&plan);
	two_release(&t);
	strbuf_release(&err);
}

/* A known_hosts line that gives a node another key: refused, with the line. */
static void plan_changed_host_key(void **state)
{
	struct two t;
	struct join_side_plan plan;
	struct strbuf err = STRBUF_INIT;

	(void)state;
	two_init(&t);
	t.st.text[JOIN_KNOWN_HOSTS] = xstrdup("# c\nx " HOSTKEY_A "\n10.0.0.2,b " HOSTKEY_A "\n");
	assert_int_equal(join_plan_side(t.m, 2, 0, &t.st, KEY_H, "C\n", "a", &plan, &err),
			 -EKEYREJECTED);
	assert_non_null(strstr(err.buf, "a: ~/.ssh/known_hosts:3: the host key of b changed"));
	assert_int_equal(plan.nr_changed, 0);
	two_release(&t);
	strbuf_release(&err);
}

static void plan_ssh_conf(void **state)
{
	struct cluster_file cf;
	struct strvec mgmt = STRVEC_INIT;
	struct strbuf err = STRBUF_INIT, out = STRBUF_INIT;

	(void)state;
	cluster_file_init(&cf);
	strvec_push(&mgmt, "10.0.0.1");
	assert_int_equal(cluster_file_put(&cf, "a", NULL, &mgmt, NULL, "ops", &err), 0);
	assert_int_equal(cluster_file_put(&cf, "b", NULL, NULL, NULL, NULL, &err), 0);
	join_ssh_conf_text(&cf, &out);
	assert_non_null(strstr(out.buf, "\nHost a\n  HostName 10.0.0.1\n  User ops\n"
					"  IdentityFile ~/.ssh/id_ed25519\n"));
	assert_non_null(strstr(out.buf, "\nHost b\n  IdentityFile ~/.ssh/id_ed25519\n"));
	assert_null(strstr(out.buf, "Host *"));
	assert_true(join_config_has_include("  include  sparkctl.conf\n"));
	assert_true(join_config_has_include("Include ~/.ssh/sparkctl.conf"));
	assert_false(join_config_has_include("# Include sparkctl.conf\n"));
	cluster_file_release(&cf);
	strvec_clear(&mgmt);
	strbuf_release(&err);
	strbuf_release(&out);
}

/* The inventory's ids: read below the root, validated, a malformed one null and a problem. */
static void inventory_ids(void **state)
{
	char dir[] = "/tmp/sparkctl-test-idsXXXXXX";
	struct probe_options o = { .root = dir, .no_nvidia_libraries = true };
	struct inventory inv;
	struct strbuf err = STRBUF_INIT;
	char *cmd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	cmd = xasprintf("mkdir -p %s/etc/sparkctl && "
			"echo 0123456789abcdef0123456789abcdef > %s/etc/sparkctl/node-id && "
			"echo 0123456789ABCDEF0123456789ABCDEF > %s/etc/machine-id",
			dir, dir, dir);
	sh(cmd);
	free(cmd);
	cmd = xasprintf(
		"d=%s/etc/NetworkManager/system-connections && mkdir -p $d && "
		"printf '[connection]\\nid=Wired 2\\ninterface-name=enp1s0f1np1\\n"
		"[ipv4]\\nmethod=auto\\n' > \"$d/w.nmconnection\" && "
		"printf '[connection]\\nid=off\\nautoconnect=false\\n' > \"$d/o.nmconnection\" && "
		"echo x > \"$d/not-a-keyfile\"",
		dir);
	sh(cmd);
	free(cmd);
	inventory_init(&inv);
	assert_int_equal(probe_inventory(&o, &inv, &err), 0);
	assert_int_equal(inv.sys.nr_nm_profiles, 2);
	assert_string_equal(inv.sys.nm_profiles[0].file, "o.nmconnection");
	assert_int_equal(inv.sys.nm_profiles[0].autoconnect, 0);
	assert_null(inv.sys.nm_profiles[0].interface_name);
	assert_string_equal(inv.sys.nm_profiles[1].id, "Wired 2");
	assert_string_equal(inv.sys.nm_profiles[1].interface_name, "enp1s0f1np1");
	assert_int_equal(inv.sys.nm_profiles[1].autoconnect, 1);
	assert_string_equal(inv.sys.nm_profiles[1].ipv4_method, "auto");
	assert_string_equal(inv.sys.node_id, "0123456789abcdef0123456789abcdef");
	assert_string_equal(inv.sys.machine_id, "0123456789ABCDEF0123456789ABCDEF");
	inventory_release(&inv);
	/* An upper-case node id and a short machine id are not ids. */
	cmd = xasprintf("echo 0123456789ABCDEF0123456789ABCDEF > %s/etc/sparkctl/node-id && "
			"echo 0123 > %s/etc/machine-id",
			dir, dir);
	sh(cmd);
	free(cmd);
	inventory_init(&inv);
	assert_int_equal(probe_inventory(&o, &inv, &err), 0);
	assert_null(inv.sys.node_id);
	assert_null(inv.sys.machine_id);
	bool named = false;
	for (size_t i = 0; i < inv.nr_problems; i++)
		if (inv.problems[i].path && strstr(inv.problems[i].path, "etc/machine-id"))
			named = true;
	assert_true(named);
	inventory_release(&inv);
	strbuf_release(&err);
	remove_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(file_round_trip),
		cmocka_unit_test(file_bad_fields),
		cmocka_unit_test(file_save_and_locate),
		cmocka_unit_test(state_parse),
		cmocka_unit_test(plan_fresh_then_nothing),
		cmocka_unit_test(plan_keeps_and_completes),
		cmocka_unit_test(plan_changed_host_key),
		cmocka_unit_test(plan_ssh_conf),
		cmocka_unit_test(inventory_ids),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
