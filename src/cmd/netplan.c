/*
 * sparkctl netplan - the fabric part of netplan for one node of a plan,
 * printed, or installed with --write (atomically, mode 0600, with a
 * backup) and applied with --apply.
 */
#include "sparkctl.h"

#include "cmd/cmd.h"
#include "config/netplan_gen.h"
#include "lib/atomic_file.h"
#include "lib/rootfs.h"
#include "lib/xalloc.h"
#include "proc/child.h"
#include "remote/hosts.h"

#define NETPLAN_DIR	 "etc/netplan"
/*
 * netplan merges its files in the lexical order of their names and the
 * later one wins: 90 comes after the usual 00-installer-config,
 * 50-cloud-init and 01-netcfg, so the plan's values are the ones used.
 */
#define NETPLAN_FILE	 "90-sparkctl.yaml"
#define NETPLAN_BAK	 "90-sparkctl.yaml.bak"
/* Where sparkctl wrote before (a name that cloud-init's 50- overrode); moved to its .bak. */
#define NETPLAN_OLD_FILE "40-sparkctl.yaml"
#define NETPLAN_OLD_BAK	 "40-sparkctl.yaml.bak"

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
	"Prints the YAML.  --write installs it as /etc/netplan/" NETPLAN_FILE " (below the\n"
	"root it read, resolved inside it) atomically with mode 0600, keeping the file\n"
	"it replaces as " NETPLAN_BAK
	"; it refuses to replace a file sparkctl did not write unless --force.\n"
	"netplan merges its files in name order, the later winning: --write refuses\n"
	"when a file after " NETPLAN_FILE " configures a fabric interface (naming it;\n"
	"--force writes anyway), and says which earlier ones it overrides.  An older\n"
	"/etc/netplan/" NETPLAN_OLD_FILE " of sparkctl's becomes " NETPLAN_OLD_BAK ".\n"
	"--apply also runs 'netplan generate' and 'netplan apply', and refuses when this\n"
	"SSH session arrives over an interface the plan changes, unless --force.\n"
	"--hosts prints /etc/hosts lines for every node of the plan instead.";

/* The most a netplan file may hold for sparkctl to read it. */
#define NETPLAN_FILE_MAX ((size_t)1024 * 1024)

/* netplan's directories, the later hiding a file of the same name in an earlier one. */
static const char *const netplan_dirs[] = { "lib/netplan", "etc/netplan", "run/netplan" };

static bool is_yaml(const char *name)
{
	size_t len = strlen(name);

	return len > 5 && streq(name + len - 5, ".yaml");
}

/* True when the file is sparkctl's own older 40-sparkctl.yaml: moved away, not merged. */
static bool own_old_file(const struct rootfs *root, size_t dir, const char *name)
{
	struct strbuf text = STRBUF_INIT, rel = STRBUF_INIT;
	bool own;

	strbuf_addf(&rel, "%s/%s", netplan_dirs[dir], name);
	own = dir == 1 && streq(name, NETPLAN_OLD_FILE) &&
	      rootfs_read_file(root, rel.buf, NETPLAN_FILE_MAX, &text) == 0 &&
	      starts_with(text.buf, NETPLAN_MARKER);
	strbuf_release(&text);
	strbuf_release(&rel);
	return own;
}

/*
 * Every other netplan file that configures an interface of the plan, in
 * netplan's order (a name hidden by the same name in a later directory
 * is not read by netplan, nor here).
 */
static void find_overlaps(const struct rootfs *root, const struct netplan *p,
			  struct netplan_overlap **out, size_t *nr)
{
	struct strvec names[ARRAY_SIZE(netplan_dirs)];
	struct strbuf text = STRBUF_INIT, rel = STRBUF_INIT;

	for (size_t d = 0; d < ARRAY_SIZE(netplan_dirs); d++) {
		strvec_init(&names[d]);
		rootfs_list(root, netplan_dirs[d], &names[d]);
	}
	for (size_t d = 0; d < ARRAY_SIZE(netplan_dirs); d++) {
		for (size_t k = 0; k < names[d].nr; k++) {
			const char *name = names[d].v[k];
			bool hidden = false;
			if (!is_yaml(name) || (d == 1 && streq(name, NETPLAN_FILE)))
				continue;
			for (size_t later = d + 1; later < ARRAY_SIZE(netplan_dirs); later++)
				for (size_t j = 0; j < names[later].nr && !hidden; j++)
					hidden = streq(names[later].v[j], name);
			/* Ours in /lib is hidden by ours in /etc; ours in /run hides it. */
			if (hidden || (d == 0 && streq(name, NETPLAN_FILE)) ||
			    own_old_file(root, d, name))
				continue;
			strbuf_reset(&rel);
			strbuf_addf(&rel, "/%s/%s", netplan_dirs[d], name);
			/* Read below the root (relative); named as netplan sees it. */
			if (rootfs_read_file(root, rel.buf + 1, NETPLAN_FILE_MAX, &text) < 0)
				continue;
			netplan_find_overlaps(p, rel.buf, strcmp(name, NETPLAN_FILE) >= 0, text.buf,
					      out, nr);
		}
	}
	for (size_t d = 0; d < ARRAY_SIZE(netplan_dirs); d++)
		strvec_clear(&names[d]);
	strbuf_release(&text);
	strbuf_release(&rel);
}

/*
 * Say what the other files do to the plan.  A later file would override
 * it: refused (false) unless force.  An earlier one is overridden, but
 * netplan still adds its lists.
 */
static bool check_overlaps(const struct rootfs *root, const struct netplan *p, bool force)
{
	struct netplan_overlap *o = NULL;
	size_t nr = 0;
	bool ok = true;

	find_overlaps(root, p, &o, &nr);
	for (size_t i = 0; i < nr; i++) {
		const char *how = o[i].by_match ? " (through a 'match: name:' pattern)" : "";
		if (o[i].later) {
			cmd_error("netplan",
				  "%s%s configures %s%s and comes after " NETPLAN_FILE
				  " in netplan's order, so its values win over the plan's; remove "
				  "%s from it, or use --force to write anyway",
				  force ? "warning: " : "", o[i].file, o[i].iface, how, o[i].iface);
			ok = ok && force;
		} else {
			cmd_error("netplan",
				  "note: %s also configures %s%s; " NETPLAN_FILE
				  " comes later and its values win%s%s%s",
				  o[i].file, o[i].iface, how,
				  o[i].adds.len ? ", but netplan still adds its " : "",
				  o[i].adds.buf, o[i].adds.len ? " (remove them there)" : "");
		}
	}
	netplan_overlaps_release(o, nr);
	return ok;
}

/*
 * sparkctl's older file, under a name that other files override: moved
 * to its backup name once the new file is in place, so no stale copy of
 * the plan is merged.  Only a file sparkctl wrote.
 */
static int retire_old_file(const struct rootfs_dir *dir, const char *where)
{
	struct strbuf old = STRBUF_INIT;
	int r = rootfs_dir_read_file(dir, NETPLAN_OLD_FILE, NETPLAN_FILE_MAX, &old);
	bool own = r == 0 && starts_with(old.buf, NETPLAN_MARKER);

	strbuf_release(&old);
	if (!own)
		return SPARKCTL_EXIT_OK;
	if (renameat(dir->dirfd, NETPLAN_OLD_FILE, dir->dirfd, NETPLAN_OLD_BAK) < 0) {
		cmd_error("netplan", "cannot move the older %s/%s to %s: %s", where,
			  NETPLAN_OLD_FILE, NETPLAN_OLD_BAK, strerror(errno));
		return SPARKCTL_EXIT_ERROR;
	}
	cmd_error("netplan", "moved the older %s/%s to %s", where, NETPLAN_OLD_FILE,
		  NETPLAN_OLD_BAK);
	return SPARKCTL_EXIT_OK;
}

/*
 * Whether the file in place may be replaced: absent, or written by
 * sparkctl (or --force).  Read through the directory that the write then
 * uses.
 */
static bool may_replace(const struct rootfs_dir *dir, const char *where, bool force)
{
	struct strbuf old = STRBUF_INIT;
	int r = rootfs_dir_read_file(dir, NETPLAN_FILE, NETPLAN_FILE_MAX, &old);
	bool ok = r == -ENOENT || (r == 0 && starts_with(old.buf, NETPLAN_MARKER)) || force;

	strbuf_release(&old);
	if (ok)
		return true;
	/* A symlink, a directory, a device: not a file sparkctl wrote either. */
	if (r == 0 || r == -ELOOP || r == -EISDIR || r == -ESPIPE || r == -EFBIG)
		cmd_error("netplan",
			  "%s/%s exists and was not written by sparkctl; use --force to replace it "
			  "(it is kept as %s)",
			  where, NETPLAN_FILE, NETPLAN_BAK);
	else
		cmd_error("netplan", "cannot read %s/%s: %s", where, NETPLAN_FILE, strerror(-r));
	return false;
}

/* Install yaml as etc/netplan/NETPLAN_FILE below root, resolved inside it. */
static int write_plan(const char *root_path, const struct netplan *p, const char *yaml, bool force)
{
	struct strbuf where = STRBUF_INIT, err = STRBUF_INIT;
	struct rootfs_dir dir = { .dirfd = -1 };
	struct rootfs root;
	int r, ret = SPARKCTL_EXIT_ERROR;

	strbuf_addf(&where, "%s/%s", streq(root_path, "/") ? "" : root_path, NETPLAN_DIR);
	if ((r = rootfs_open(&root, root_path)) < 0) {
		cmd_error("netplan", "cannot use the root %s: %s", root_path, strerror(-r));
		goto out;
	}
	if ((r = rootfs_dir_open_for_write(&root, NETPLAN_DIR, 0, &dir)) < 0) {
		cmd_error("netplan", "cannot open %s: %s%s", where.buf, strerror(-r),
			  r == -ENOENT ? " (is netplan installed?)" : "");
		goto out_root;
	}
	if (!may_replace(&dir, where.buf, force))
		goto out_dir;
	if (!check_overlaps(&root, p, force))
		goto out_dir;
	if (atomic_replace(dir.dirfd, NETPLAN_FILE, yaml, strlen(yaml), 0600, NETPLAN_BAK, &err) <
	    0) {
		cmd_error("netplan", "%s/%s: %s", where.buf, NETPLAN_FILE, err.buf);
		goto out_dir;
	}
	cmd_error("netplan", "wrote %s/%s", where.buf, NETPLAN_FILE);
	ret = retire_old_file(&dir, where.buf);
out_dir:
	rootfs_dir_close(&dir);
out_root:
	rootfs_close(&root);
out:
	strbuf_release(&where);
	strbuf_release(&err);
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

/* --names as -H takes hosts: "s1,s2,s3" or "spark[1-3]". */
static int split_names(const char *list, struct strvec *out, struct strbuf *err)
{
	struct host_list hosts = { 0 };
	int r = 0;

	if (list && (r = host_list_parse(list, &hosts, err)) == 0)
		for (size_t i = 0; i < hosts.nr; i++)
			strvec_push(out, hosts.hosts[i].name);
	host_list_release(&hosts);
	return r;
}

struct netplan_args {
	struct inventory_source src;
	const char *plan, *base, *names;
	unsigned node, nodes;
	bool write, apply, force, hosts;
};

/* The options' consistency, and the plan they describe into o. */
static int check_args(const struct netplan_args *a, struct netplan_options *o)
{
	if (!a->plan)
		return cmd_usage_error("netplan", "--plan is required (pair, switch or ring)");
	if (netplan_parse_plan(a->plan, &o->plan) < 0)
		return cmd_usage_error("netplan", "unknown plan '%s' (pair, switch or ring)",
				       a->plan);
	if (a->node == UINT_MAX)
		return cmd_usage_error("netplan", "--node is required (this node's index, from 0)");
	if (!a->nodes && o->plan == PLAN_SWITCH)
		return cmd_usage_error("netplan", "--nodes is required for the switch plan");
	o->node = a->node;
	o->nodes = a->nodes ? a->nodes : o->plan == PLAN_PAIR ? 2 : 3;
	if (cidr_parse(a->base, &o->base) < 0)
		return cmd_usage_error(
			"netplan", "--base '%s' is not an IPv4 CIDR like 10.20.0.0/16", a->base);
	if (a->hosts && (a->write || a->apply))
		return cmd_usage_error("netplan",
				       "--hosts prints; it cannot be combined with --write");
	if (a->names && !a->hosts)
		return cmd_usage_error("netplan", "--names only applies to --hosts");
	if ((a->write || a->apply) && a->src.from)
		return cmd_usage_error("netplan",
				       "--write and --apply change a host; they cannot use --from");
	return SPARKCTL_EXIT_OK;
}

/* The command line into a and o; -1 when the command ends here with *ret. */
static int parse_netplan(const struct cmd *cmd, struct netplan_args *a, struct netplan_options *o,
			 int argc, char **argv, int *ret)
{
	const struct opt opts[] = {
		OPT_CHOICE(0, "plan", &a->plan, "PLAN", "pair|switch|ring", "pair, switch or ring"),
		OPT_UINT(0, "node", &a->node, "I", "this node's index, 0 to N-1"),
		OPT_UINT(0, "nodes", &a->nodes, "N", "number of nodes (pair: 2, ring: 3)"),
		OPT_STRING(0, "base", &a->base, "CIDR",
			   "where the plan's /24 subnets are carved from"),
		OPT_BOOL(0, "write", &a->write, "install as /etc/netplan/" NETPLAN_FILE),
		OPT_BOOL(0, "apply", &a->apply,
			 "--write, then 'netplan generate' and 'netplan apply'"),
		OPT_BOOL(0, "force", &a->force,
			 "replace a foreign file; apply over this SSH session"),
		OPT_BOOL(0, "hosts", &a->hosts, "print /etc/hosts lines for every node instead"),
		OPT_STRING(0, "names", &a->names, "A,B,...",
			   "node names for --hosts: s1,s2 or s[1-3] (default node0, ...)"),
		OPT_INVENTORY_SOURCE(&a->src),
		OPT_HELP(),
		OPT_END(),
	};
	int n = cmd_parse(cmd, opts, argc, argv);

	*ret = n < 0 ? cmd_parse_exit(n) : check_args(a, o);
	return *ret == SPARKCTL_EXIT_OK && n >= 0 ? n : -1;
}

/* --hosts: the /etc/hosts lines of every node's fabric addresses. */
static int print_hosts(const struct netplan_args *a, const struct netplan *p)
{
	struct strvec name_list = STRVEC_INIT;
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	int ret = SPARKCTL_EXIT_OK;

	if (split_names(a->names, &name_list, &err) < 0 ||
	    netplan_hosts(p, &name_list, &out, &err) < 0)
		ret = cmd_usage_error("netplan", "%s", err.buf);
	else
		fputs(out.buf, stdout);
	strvec_clear(&name_list);
	strbuf_release(&out);
	strbuf_release(&err);
	return ret;
}

/* The plan's YAML: printed, or written (--write) and applied (--apply). */
static int install(const struct netplan_args *a, const struct inventory *inv,
		   const struct netplan *p)
{
	const char *root_path = rootfs_root_path(a->src.root);
	struct strbuf out = STRBUF_INIT;
	int ret = SPARKCTL_EXIT_ERROR;

	netplan_yaml(p, &out);
	if (a->apply && !a->force) {
		const struct inv_netdev *via = ssh_netdev(inv);
		if (via && netplan_changes(p, via->name)) {
			cmd_error(
				"netplan",
				"refusing --apply: this SSH session arrives over %s, which the "
				"plan changes; run it from the console or over another interface, "
				"or add --force",
				via->name);
			goto out;
		}
	}
	/* The file goes below the root that the inventory was read from. */
	if (a->apply && !streq(root_path, "/")) {
		ret = cmd_usage_error("netplan",
				      "--apply changes this running host; it cannot be "
				      "combined with --root or $SPARKCTL_ROOT (use --write)");
		goto out;
	}
	if (!a->write && !a->apply) {
		fputs(out.buf, stdout);
		ret = SPARKCTL_EXIT_OK;
		goto out;
	}
	ret = write_plan(root_path, p, out.buf, a->force);
	if (ret == SPARKCTL_EXIT_OK && a->apply) {
		ret = netplan_tool("generate");
		if (ret == SPARKCTL_EXIT_OK)
			ret = netplan_tool("apply");
	}
out:
	strbuf_release(&out);
	return ret;
}

static int run_netplan(const struct cmd *cmd, int argc, char **argv)
{
	struct netplan_args a = { .base = NETPLAN_DEFAULT_BASE, .node = UINT_MAX };
	struct netplan_options o = { 0 };
	struct netplan p = { 0 };
	struct inventory inv;
	struct strbuf err = STRBUF_INIT;
	int r, ret;

	if (parse_netplan(cmd, &a, &o, argc, argv, &ret) < 0)
		return ret;
	inventory_init(&inv);
	ret = inventory_source_load("netplan", &a.src, &inv);
	if (ret != SPARKCTL_EXIT_OK)
		goto out;
	if ((r = netplan_build(&inv, &o, &p, &err)) < 0) {
		ret = cmd_exit_of_errno(r);
		if (ret == SPARKCTL_EXIT_USAGE)
			cmd_usage_error("netplan", "%s", err.buf);
		else
			cmd_error("netplan", "%s", err.buf);
	} else {
		ret = a.hosts ? print_hosts(&a, &p) : install(&a, &inv, &p);
	}
out:
	netplan_release(&p);
	inventory_release(&inv);
	strbuf_release(&err);
	return ret;
}

const struct cmd cmd_netplan = {
	.name = "netplan",
	.fn = run_netplan,
	.summary = "generate (and --write) the fabric addresses of a plan",
	.usage = netplan_usage,
	.description = netplan_description,
	.flags = CMD_READS_NODE,
	.exit_status =
		"0 done, 1 a --root or --from that cannot be read, a --base that does not "
		"fit, a file that cannot be written, --write refused (a later file would override "
		"ours), 'netplan' failed, 2 usage (also --node "
		"out of range), 3 no ACTIVE RoCE fabric port, or 'netplan' cannot be run",
	.max_operands = 0,
};
