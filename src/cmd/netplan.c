/*
 * sparkctl netplan - the fabric part of netplan for one node of a plan,
 * printed, or installed with --write (atomically, mode 0600, with a
 * backup) and applied with --apply.
 */
#include "sparkctl.h"

#include <dirent.h>

#include "cmd/cmd.h"
#include "config/netplan.h"
#include "lib/atomic_file.h"
#include "lib/rootfs.h"
#include "lib/xalloc.h"
#include "proc/child.h"

#define NETPLAN_DIR  "etc/netplan"
#define NETPLAN_FILE "40-sparkctl.yaml"
#define NETPLAN_BAK  "40-sparkctl.yaml.bak"

static const char *const netplan_usage[] = {
	"sparkctl netplan --plan pair|switch|ring --node I [--nodes N] [--base CIDR]\n"
	"                    [--write [--force]] [--apply] [--root DIR | --from FILE]",
	"sparkctl netplan --plan PLAN --node I [--nodes N] [--base CIDR] --hosts [--names A,B,...]",
	NULL,
};

static const char netplan_description[] =
	"Generate the fabric part of netplan for node I (0-based) of N under a plan:\n"
	"  pair    two nodes, one cable (two /24s, one per twin) or two (four /24s)\n"
	"  switch  N nodes on a switch: one /24 per twin rail, shared by all nodes\n"
	"  ring    three nodes, each port 0 cabled to the next node's port 1:\n"
	"          one /24 per link per twin\n"
	"Subnets are consecutive /24s of --base (default " NETPLAN_DEFAULT_BASE "); node I\n"
	"gets host .(11+I).  Every fabric netdev: its address, mtu 9000, no DHCP, no\n"
	"link-local addresses, no default route.  Interface names come from the node's\n"
	"inventory.\n"
	"\n"
	"Prints the YAML.  --write installs it as /etc/netplan/" NETPLAN_FILE " (below --root\n"
	"when given) atomically with mode 0600, keeping the file it replaces as\n" NETPLAN_BAK
	"; it refuses to replace a file sparkctl did not write unless --force.\n"
	"--apply also runs 'netplan generate' and 'netplan apply', and refuses when this\n"
	"SSH session arrives over an interface the plan changes, unless --force.\n"
	"--hosts prints /etc/hosts lines for every node of the plan instead.";

/* Read a whole small file below root; NULL when absent or unreadable. */
static char *read_below(const char *root, const char *rel)
{
	struct rootfs r;
	struct strbuf sb = STRBUF_INIT;
	char *s = NULL;

	if (rootfs_open(&r, root) < 0)
		return NULL;
	if (rootfs_read_file(&r, rel, ROOTFS_FILE_MAX, &sb) == 0)
		s = strbuf_detach(&sb, NULL);
	rootfs_close(&r);
	strbuf_release(&sb);
	return s;
}

/* Warn about other netplan files that configure the same interfaces: netplan merges them. */
static void warn_other_files(int dirfd, const struct netplan *p)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 5, ".yaml") != 0 ||
		    streq(de->d_name, NETPLAN_FILE))
			continue;
		int f = openat(dirfd, de->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		char buf[65536];
		ssize_t n = f >= 0 ? read(f, buf, sizeof(buf) - 1) : -1;
		if (f >= 0)
			close(f);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		for (size_t i = 0; i < p->nr_ifaces; i++) {
			struct strbuf key = STRBUF_INIT;
			strbuf_addf(&key, "%s:", p->ifaces[i].netdev->name);
			if (strstr(buf, key.buf))
				fprintf(stderr,
					"sparkctl netplan: warning: /etc/netplan/%s also "
					"configures %s; "
					"netplan merges both files\n",
					de->d_name, p->ifaces[i].netdev->name);
			strbuf_release(&key);
		}
	}
	closedir(d);
}

static int write_plan(const char *root, const struct netplan *p, const char *yaml, bool force)
{
	struct strbuf dir = STRBUF_INIT, err = STRBUF_INIT, rel = STRBUF_INIT;
	int dirfd = -1, ret = SPARKCTL_EXIT_ERROR;
	char *old;

	strbuf_addf(&dir, "%s/%s", streq(root, "/") ? "" : root, NETPLAN_DIR);
	dirfd = open(dir.buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		cmd_error("netplan", "cannot open %s: %s (is netplan installed?)", dir.buf,
			  strerror(errno));
		goto out;
	}
	strbuf_addf(&rel, "%s/%s", NETPLAN_DIR, NETPLAN_FILE);
	old = read_below(root, rel.buf);
	if (old && !starts_with(old, NETPLAN_MARKER) && !force) {
		cmd_error("netplan",
			  "%s/%s exists and was not written by sparkctl; use --force to replace it "
			  "(it is kept as %s)",
			  dir.buf, NETPLAN_FILE, NETPLAN_BAK);
		free(old);
		goto out;
	}
	free(old);
	warn_other_files(dirfd, p);
	if (atomic_replace(dirfd, NETPLAN_FILE, yaml, strlen(yaml), 0600, NETPLAN_BAK, &err) < 0) {
		cmd_error("netplan", "%s/%s: %s", dir.buf, NETPLAN_FILE, err.buf);
		goto out;
	}
	fprintf(stderr, "sparkctl netplan: wrote %s/%s\n", dir.buf, NETPLAN_FILE);
	ret = SPARKCTL_EXIT_OK;
out:
	if (dirfd >= 0)
		close(dirfd);
	strbuf_release(&dir);
	strbuf_release(&err);
	strbuf_release(&rel);
	return ret;
}

/* The interface this SSH session arrived on, from $SSH_CONNECTION and the inventory. */
static const struct inv_netdev *ssh_netdev(const struct inventory *inv)
{
	const char *conn = getenv("SSH_CONNECTION");
	char client[64], server[64];
	unsigned cport, sport;

	if (!conn || sscanf(conn, "%63s %u %63s %u", client, &cport, server, &sport) != 4)
		return NULL;
	for (size_t i = 0; i < inv->nr_netdevs; i++)
		for (size_t k = 0; k < inv->netdevs[i].nr_addrs; k++)
			if (streq(inv->netdevs[i].addrs[k].address, server))
				return &inv->netdevs[i];
	return NULL;
}

static int netplan_tool(const char *verb)
{
	int status = child_run_command((const char *const[]){ "netplan", verb, NULL });

	if (status < 0) {
		cmd_error("netplan", "cannot run 'netplan %s': %s", verb, strerror(-status));
		return SPARKCTL_EXIT_UNAVAILABLE;
	}
	if (status != 0) {
		cmd_error("netplan", "'netplan %s' failed (status %d)", verb, status);
		return SPARKCTL_EXIT_ERROR;
	}
	return SPARKCTL_EXIT_OK;
}

static void split_names(const char *list, struct strvec *out)
{
	const char *p = list;

	while (p && *p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char *name = xstrndup(p, len);
		strvec_push_nodup(out, name);
		p = comma ? comma + 1 : NULL;
	}
}

static int run_netplan(const struct cmd *cmd, int argc, char **argv)
{
	struct inventory_source src = { 0 };
	const char *plan = NULL, *base = NETPLAN_DEFAULT_BASE, *names = NULL;
	unsigned node = UINT_MAX, nodes = 0;
	bool write = false, apply = false, force = false, hosts = false;
	const struct opt opts[] = {
		OPT_STRING(0, "plan", &plan, "PLAN", "pair, switch or ring"),
		OPT_UINT(0, "node", &node, "I", "this node's index, 0 to N-1"),
		OPT_UINT(0, "nodes", &nodes, "N", "number of nodes (pair: 2, ring: 3)"),
		OPT_STRING(0, "base", &base, "CIDR",
			   "where the plan's /24 subnets are carved from"),
		OPT_BOOL(0, "write", &write, "install as /etc/netplan/" NETPLAN_FILE),
		OPT_BOOL(0, "apply", &apply,
			 "--write, then 'netplan generate' and 'netplan apply'"),
		OPT_BOOL(0, "force", &force, "replace a foreign file; apply over this SSH session"),
		OPT_BOOL(0, "hosts", &hosts, "print /etc/hosts lines for every node instead"),
		OPT_STRING(0, "names", &names, "A,B,...",
			   "node names for --hosts (default node0, ...)"),
		OPT_INVENTORY_SOURCE(&src),
		OPT_HELP(),
		OPT_END(),
	};
	struct netplan_options o = { 0 };
	struct netplan p = { 0 };
	struct inventory inv;
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	struct strvec name_list = STRVEC_INIT;
	int n, ret;

	n = cmd_parse(cmd, opts, argc, argv);
	if (n < 0)
		return cmd_parse_exit(n);
	if (!plan)
		return cmd_usage_error("netplan", "--plan is required (pair, switch or ring)");
	if (netplan_parse_plan(plan, &o.plan) < 0)
		return cmd_usage_error("netplan", "unknown plan '%s' (pair, switch or ring)", plan);
	if (node == UINT_MAX)
		return cmd_usage_error("netplan", "--node is required (this node's index, from 0)");
	if (!nodes && o.plan == PLAN_SWITCH)
		return cmd_usage_error("netplan", "--nodes is required for the switch plan");
	o.node = node;
	o.nodes = nodes ? nodes : o.plan == PLAN_PAIR ? 2 : 3;
	if (cidr_parse(base, &o.base) < 0)
		return cmd_usage_error("netplan",
				       "--base '%s' is not an IPv4 CIDR like 10.20.0.0/16", base);
	if (hosts && (write || apply))
		return cmd_usage_error("netplan",
				       "--hosts prints; it cannot be combined with --write");
	if (names && !hosts)
		return cmd_usage_error("netplan", "--names only applies to --hosts");
	if ((write || apply) && src.from)
		return cmd_usage_error("netplan",
				       "--write and --apply change a host; they cannot use --from");

	inventory_init(&inv);
	ret = inventory_source_load("netplan", &src, &inv);
	if (ret != SPARKCTL_EXIT_OK)
		goto out;
	ret = SPARKCTL_EXIT_ERROR;
	if (netplan_build(&inv, &o, &p, &err) < 0) {
		cmd_error("netplan", "%s", err.buf);
		goto out;
	}
	if (hosts) {
		split_names(names, &name_list);
		if (netplan_hosts(&p, &name_list, &out, &err) < 0) {
			ret = cmd_usage_error("netplan", "%s", err.buf);
			goto out;
		}
		fputs(out.buf, stdout);
		ret = SPARKCTL_EXIT_OK;
		goto out;
	}
	netplan_yaml(&p, &out);
	if (apply && !force) {
		const struct inv_netdev *via = ssh_netdev(&inv);
		if (via && netplan_changes(&p, via->name)) {
			cmd_error("netplan",
				  "refusing --apply: this SSH session arrives over %s, which the "
				  "plan "
				  "changes; run it from the console or over another interface, or "
				  "add "
				  "--force",
				  via->name);
			goto out;
		}
	}
	if (apply && src.root) {
		ret = cmd_usage_error("netplan", "--apply changes this running host; it cannot be "
						 "combined with --root (use --write)");
		goto out;
	}
	if (!write && !apply) {
		fputs(out.buf, stdout);
		ret = SPARKCTL_EXIT_OK;
		goto out;
	}
	ret = write_plan(src.root ? src.root : "/", &p, out.buf, force);
	if (ret == SPARKCTL_EXIT_OK && apply) {
		ret = netplan_tool("generate");
		if (ret == SPARKCTL_EXIT_OK)
			ret = netplan_tool("apply");
	}
out:
	netplan_release(&p);
	inventory_release(&inv);
	strvec_clear(&name_list);
	strbuf_release(&out);
	strbuf_release(&err);
	return ret;
}

const struct cmd cmd_netplan = {
	.name = "netplan",
	.fn = run_netplan,
	.summary = "generate (and --write) the fabric addresses of a plan",
	.usage = netplan_usage,
	.description = netplan_description,
	.max_operands = 0,
};
