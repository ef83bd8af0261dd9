/*
 * sparkctl storage plan - the files each node needs to mount a shared
 * NVMe/TCP volume at boot, printed for every node, or installed for this
 * one with --write (below --root, resolved inside it).  It never runs
 * systemctl: it says what to run next.
 */
#include "sparkctl.h"

#include <sys/stat.h>

#include "cmd/cmd.h"
#include "lib/atomic_file.h"
#include "lib/json.h"
#include "lib/rootfs.h"
#include "lib/xalloc.h"
#include "probe/hostname.h"
#include "probe/nvme.h"
#include "probe/reader.h"
#include "remote/hosts.h"
#include "storage/plan.h"
#include "storage/storage_conf.h"
#include "view/emit.h"

#define PLAN_SCHEMA_VERSION 1
/* The most an fstab or discovery.conf may hold for sparkctl to merge its line into it. */
#define PLAN_MERGE_FILE_MAX ((size_t)1024 * 1024)
#define FSTAB_BACKUP	    "fstab.sparkctl.bak"

static const char *const plan_usage[] = {
	"sparkctl storage plan --target ADDR[:PORT] --nqn NQN --mount DIR [--fs ext4|xfs]\n"
	"                        [--uuid UUID] [--writer NODE | --ro-all] [--iface IF]\n"
	"                        [--nodes A,B | -H HOSTS | --hostfile FILE] [--json]",
	"sparkctl storage plan ... --uuid UUID --write [--force] [--node NAME] [--root DIR]",
	NULL,
};

static const char plan_description[] =
	"The files each node needs to mount one NVMe/TCP volume at boot:\n"
	"  /etc/nvme/discovery.conf       a line for the target (the file's other lines kept)\n"
	"  /etc/modules-load.d/" STORAGE_PLAN_MODULES_NAME "  loads nvme-tcp\n"
	"  /etc/systemd/system/UNIT       sparkctl-nvme-<mount>.service: 'nvme connect' at boot\n"
	"  /etc/fstab                     a line by UUID, _netdev,nofail,x-systemd.requires=UNIT\n"
	"  /etc/sparkctl/storage.d/M.json the plan, one file per mount point M (/mnt/shared:\n"
	"                                 mnt-shared.json); 'storage connect', 'check' and\n"
	"                                 'bench' take their defaults from it\n"
	"One node mounts read-write: --writer NODE, else the first node; --ro-all mounts it\n"
	"read-only everywhere.  ext4 and xfs are not cluster filesystems: a second writer\n"
	"is refused, and readers mount with ro,noload (ext4) or ro,norecovery (xfs) so\n"
	"that they never replay the writer's journal.  Readers see the writer's changes\n"
	"only after they mount again.  A node keeps one plan per volume: a plan for\n"
	"another mount point adds its files, one for the same mount point replaces\n"
	"them; one subsystem (NQN) is mounted at one mount point only.\n"
	"\n"
	"The nodes are --nodes, -H or --hostfile, else those of the cluster file.  Without\n"
	"--write the files of every node are printed (of --node only, with it).  --write\n"
	"installs this node's (--node, else the node named as this host) below the root,\n"
	"mode 0644, keeping each file it replaces as NAME.bak (/etc/fstab as\n"
	"/etc/" FSTAB_BACKUP "); it needs --uuid (blkid prints it after mkfs).  Running\n"
	"it again changes nothing.  It never runs systemctl: it prints the commands to\n"
	"run next.  It refuses a mount point that holds files with nothing mounted there\n"
	"(the volume would hide them) unless --force.";

struct plan_args {
	const char *target, *nqn, *mount, *fs, *uuid, *iface, *nodes, *hosts, *hostfile, *cluster,
		*node, *root;
	struct strvec writers;
	bool ro_all, write, json, force;
};

/*
 * A plan that cannot be made as asked (two writers, a bad NQN): a usage
 * error, on one line, without the pointer to --help that an unknown option gets.
 */
static int refuse(const char *fmt, ...) ATTR_PRINTF(1, 2);
static int refuse(const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	cmd_error("storage plan", "%s", msg.buf);
	strbuf_release(&msg);
	return SPARKCTL_EXIT_USAGE;
}

/* The node names: "user@" of a cluster file's entry dropped. */
static int load_nodes(const struct plan_args *a, struct strvec *names)
{
	struct host_list hosts = { 0 };
	struct strbuf err = STRBUF_INIT;
	int ret = SPARKCTL_EXIT_OK;

	if (a->nodes && a->hosts) {
		ret = cmd_usage_error("storage plan",
				      "--nodes and -H name the same nodes: give one");
		goto out;
	}
	if (host_list_from_options(a->nodes ? a->nodes : a->hosts, a->hostfile, a->cluster, NULL,
				   &hosts, &err) < 0) {
		ret = cmd_usage_error("storage plan", "%s", err.buf);
		goto out;
	}
	for (size_t i = 0; i < hosts.nr; i++) {
		const char *at = strrchr(hosts.hosts[i].name, '@');
		strvec_push(names, at ? at + 1 : hosts.hosts[i].name);
	}
out:
	host_list_release(&hosts);
	strbuf_release(&err);
	return ret;
}

static int check_args(const struct plan_args *a)
{
	if (!a->target || !a->nqn || !a->mount)
		return cmd_usage_error("storage plan", "--target, --nqn and --mount are required");
	if (a->root && !a->write)
		return cmd_usage_error("storage plan",
				       "--root is where --write installs the files");
	if (a->write && !a->uuid)
		return refuse("--write needs --uuid, the filesystem's UUID: run 'blkid' on "
			      "the volume after mkfs (connect it first: 'sparkctl storage "
			      "connect')");
	return SPARKCTL_EXIT_OK;
}

/* The options and the nodes into a plan; an exit status, the error printed. */
static int make_plan(const struct plan_args *a, struct storage_conf *plan)
{
	struct strvec names = STRVEC_INIT;
	struct strbuf err = STRBUF_INIT;
	int ret;

	if ((ret = check_args(a)) != SPARKCTL_EXIT_OK ||
	    (ret = load_nodes(a, &names)) != SPARKCTL_EXIT_OK)
		goto out;
	struct storage_plan_request req = {
		.target = a->target,
		.nqn = a->nqn,
		.mount = a->mount,
		.fs = a->fs,
		.uuid = a->uuid,
		.iface = a->iface,
		.nodes = (const char *const *)names.v,
		.nr_nodes = names.nr,
		.writers = (const char *const *)a->writers.v,
		.nr_writers = a->writers.nr,
		.ro_all = a->ro_all,
	};
	if (storage_plan_make(&req, plan, &err) < 0)
		ret = refuse("%s", err.buf);
out:
	strvec_clear(&names);
	strbuf_release(&err);
	return ret;
}

/* ---- printing ---- */

static bool node_in_plan(const struct storage_conf *plan, const char *name)
{
	for (size_t i = 0; i < plan->nr_nodes; i++)
		if (streq(plan->nodes[i].name, name))
			return true;
	return false;
}

static const char *writer_of(const struct storage_conf *plan)
{
	for (size_t i = 0; i < plan->nr_nodes; i++)
		if (plan->nodes[i].access == STORAGE_ACCESS_RW)
			return plan->nodes[i].name;
	return NULL;
}

static void emit_file(struct emitter *e, const char *path, const char *note, bool merged,
		      const char *content)
{
	emit_object_open(e, NULL);
	emit_str(e, "path", "\n--- %s", path);
	emit_text(e, "%s\n", note);
	emit_value(e, "merged", jbool(merged), NULL);
	emit_value(e, "content", jstr(content), content);
	emit_close(e);
}

static void emit_node(struct emitter *e, const struct storage_conf *plan, size_t index, bool first)
{
	struct storage_conf conf;
	struct strbuf text = STRBUF_INIT, path = STRBUF_INIT;
	const struct storage_node *node = &plan->nodes[index];

	storage_plan_for_node(plan, node->name, &conf);
	emit_object_open(e, NULL);
	emit_text(e, "%s==== ", first ? "" : "\n");
	emit_str(e, "name", "%s", node->name);
	emit_value(e, "access", jstr(storage_access_name(node->access)),
		   node->access == STORAGE_ACCESS_RW ? " (read-write) ====\n"
						     : " (read-only) ====\n");
	emit_array_open(e, "files");
	storage_plan_discovery_line(&conf, &text);
	emit_file(e, "/etc/nvme/discovery.conf", " (this line; the file's others are kept)", true,
		  text.buf);
	strbuf_reset(&text);
	storage_plan_modules_load(&text);
	emit_file(e, "/etc/modules-load.d/" STORAGE_PLAN_MODULES_NAME, "", false, text.buf);
	strbuf_reset(&text);
	storage_plan_unit(&conf, &text);
	strbuf_addf(&path, "/etc/systemd/system/%s", conf.unit);
	emit_file(e, path.buf, "", false, text.buf);
	strbuf_reset(&text);
	storage_plan_fstab_line(&conf, &text);
	emit_file(e, "/etc/fstab", " (this line; the file's others are kept)", true, text.buf);
	strbuf_reset(&text);
	json_t *storage = storage_conf_to_json(&conf);
	json_to_strbuf(storage, &text);
	strbuf_reset(&path);
	strbuf_addf(&path, "/%s/", STORAGE_CONF_DIR);
	storage_conf_file_name(conf.mount, &path);
	emit_file(e, path.buf, "", false, text.buf);
	emit_close(e);
	emit_value(e, "storage", storage, NULL);
	emit_close(e);
	storage_conf_release(&conf);
	strbuf_release(&text);
	strbuf_release(&path);
}

/* The plan's summary: the volume, and who writes (said when it was the default). */
static void emit_summary(struct emitter *e, const struct plan_args *a,
			 const struct storage_conf *plan)
{
	const char *writer = writer_of(plan);

	emit_value(e, "schema_version", jint(PLAN_SCHEMA_VERSION), NULL);
	emit_text(e, "# volume ");
	emit_str(e, NULL, "%s", plan->nqn);
	emit_text(e, " mounted at ");
	emit_str(e, NULL, "%s", plan->mount);
	emit_text(e, " (%s)\n# writer: ", storage_fs_name(plan->fs));
	emit_value(e, "writer", jstr(writer), writer ? writer : "none");
	emit_value(e, "writer_default", jbool(writer && !a->writers.nr),
		   !writer	    ? " (--ro-all: every node mounts it read-only)\n"
		   : !a->writers.nr ? " (the first node; --writer NODE or --ro-all to choose)\n"
				    : "\n");
	if (!plan->uuid)
		emit_text(e, "# --uuid not given: FILESYSTEM-UUID stands for the filesystem's UUID "
			     "(blkid prints it after mkfs)\n");
	emit_text(e, "\n");
}

static void print_plan(const struct plan_args *a, const struct storage_conf *plan)
{
	struct strbuf out = STRBUF_INIT;
	struct emitter e;

	emit_init(&e, a->json ? EMIT_JSON : EMIT_TEXT, &out, false);
	emit_summary(&e, a, plan);
	emit_array_open(&e, "nodes");
	for (size_t i = 0, shown = 0; i < plan->nr_nodes; i++)
		if (!a->node || streq(a->node, plan->nodes[i].name))
			emit_node(&e, plan, i, shown++ == 0);
	emit_close(&e);
	emit_finish(&e, &out);
	fputs(out.buf, stdout);
	strbuf_release(&out);
}

/* ---- writing ---- */

/* One file to install below the root. */
struct plan_file {
	const char *dir;    /* relative to the root */
	const char *name;   /* in dir */
	const char *backup; /* the replaced file's new name in dir */
	/* The content, from the file's current text (NULL: none). */
	int (*make)(const struct storage_conf *conf, const char *old, struct strbuf *out);
	bool keep_mode; /* the mode the file had (0644 when new) */
};

static int make_discovery(const struct storage_conf *conf, const char *old, struct strbuf *out)
{
	return storage_plan_merge_discovery(old, conf, out);
}

static int make_fstab(const struct storage_conf *conf, const char *old, struct strbuf *out)
{
	return storage_plan_merge_fstab(old, conf, out);
}

static int make_modules(const struct storage_conf *conf, const char *old, struct strbuf *out)
{
	(void)conf;
	(void)old;
	storage_plan_modules_load(out);
	return 0;
}

static int make_unit(const struct storage_conf *conf, const char *old, struct strbuf *out)
{
	(void)old;
	storage_plan_unit(conf, out);
	return 0;
}

static int make_plan_json(const struct storage_conf *conf, const char *old, struct strbuf *out)
{
	json_t *j = storage_conf_to_json(conf);

	(void)old;
	json_to_strbuf(j, out);
	json_decref(j);
	return 0;
}

struct write_result {
	char *path;   /* as the user sees it: below the root */
	bool changed; /* false: the file already held it */
	char *backup; /* where the file it replaced went, or NULL */
};

/* Install one file: its content from the current one, written only when it differs. */
static int install_file(const struct rootfs *root, const struct plan_file *f,
			const struct storage_conf *conf, struct write_result *res,
			struct strbuf *err)
{
	struct rootfs_dir dir = { .dirfd = -1 };
	struct strbuf old = STRBUF_INIT, text = STRBUF_INIT;
	const char *root_text = streq(root->path, "/") ? "" : root->path;
	mode_t mode = 0644;
	struct stat st;
	bool exists;
	int r;

	res->path = xasprintf("%s/%s/%s", root_text, f->dir, f->name);
	if ((r = rootfs_dir_open_for_write(root, f->dir, 0755, &dir)) < 0) {
		strbuf_addf(err, "cannot open %s/%s: %s", root_text, f->dir, strerror(-r));
		goto out;
	}
	r = rootfs_dir_read_file(&dir, f->name, PLAN_MERGE_FILE_MAX, &old);
	if (r < 0 && r != -ENOENT) {
		strbuf_addf(err, "cannot read %s: %s", res->path,
			    r == -ELOOP ? "a symbolic link, which sparkctl does not replace"
					: strerror(-r));
		goto out;
	}
	exists = r == 0;
	f->make(conf, exists ? old.buf : NULL, &text);
	r = 0;
	if (exists && streq(old.buf, text.buf))
		goto out;
	if (exists && f->keep_mode && fstatat(dir.dirfd, f->name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		mode = st.st_mode & 07777;
	if ((r = atomic_replace(dir.dirfd, f->name, text.buf, text.len, mode, f->backup, err)) < 0)
		goto out;
	res->changed = true;
	if (exists)
		res->backup = xasprintf("%s/%s/%s", root_text, f->dir, f->backup);
out:
	rootfs_dir_close(&dir);
	strbuf_release(&old);
	strbuf_release(&text);
	return r;
}

/* Which node this is: --node, else the one named as the host the root holds. */
static int this_node(const struct plan_args *a, const struct rootfs *root,
		     const struct storage_conf *plan, char **name)
{
	struct strbuf host = STRBUF_INIT, names = STRBUF_INIT;
	int ret = SPARKCTL_EXIT_OK;

	if (a->node) {
		strbuf_addstr(&host, a->node);
	} else if (hostname_read(&(struct host_reader){ .root = root }, &host) <= 0 || !host.len) {
		ret = refuse("cannot tell which node this is (no host name): give --node");
		goto out;
	}
	/* A host name may be the node's name with its domain ("spark1.lab"). */
	for (int pass = 0; pass < (a->node ? 1 : 2); pass++) {
		size_t len = pass ? strcspn(host.buf, ".") : host.len;
		for (size_t i = 0; i < plan->nr_nodes; i++)
			if (strlen(plan->nodes[i].name) == len &&
			    !strncmp(plan->nodes[i].name, host.buf, len)) {
				*name = xstrdup(plan->nodes[i].name);
				goto out;
			}
	}
	for (size_t i = 0; i < plan->nr_nodes; i++)
		strbuf_addf(&names, "%s%s", i ? ", " : "", plan->nodes[i].name);
	ret = refuse("%s '%s' is not one of the nodes (%s)%s", a->node ? "--node" : "this host,",
		     host.buf, names.buf, a->node ? "" : "; give --node");
out:
	strbuf_release(&host);
	strbuf_release(&names);
	return ret;
}

static void print_written(const struct plan_args *a, const struct storage_conf *conf,
			  const struct write_result *res, size_t nr)
{
	struct strbuf out = STRBUF_INIT, cmd = STRBUF_INIT, mount = STRBUF_INIT;
	struct emitter e;

	emit_init(&e, a->json ? EMIT_JSON : EMIT_TEXT, &out, false);
	emit_value(&e, "schema_version", jint(PLAN_SCHEMA_VERSION), NULL);
	emit_str(&e, "node", "node %s", conf->node);
	emit_value(&e, "access", jstr(storage_access_name(storage_conf_this_node(conf)->access)),
		   storage_conf_this_node(conf)->access == STORAGE_ACCESS_RW ? " (read-write)\n"
									     : " (read-only)\n");
	emit_array_open(&e, "files");
	for (size_t i = 0; i < nr; i++) {
		emit_object_open(&e, NULL);
		emit_value(&e, "changed", jbool(res[i].changed),
			   res[i].changed ? "wrote     " : "unchanged ");
		emit_str(&e, "path", "%s", res[i].path);
		if (res[i].backup)
			emit_str(&e, "backup", " (the old one is %s)", res[i].backup);
		else
			emit_value(&e, "backup", json_null(), NULL);
		emit_text(&e, "\n");
		emit_close(&e);
	}
	emit_close(&e);
	emit_text(&e, "next, as root (sparkctl does not run them):\n");
	emit_array_open(&e, "next_commands");
	strbuf_addf(&cmd, "systemctl enable --now %s", conf->unit);
	strbuf_addf(&mount, "mount %s", conf->mount);
	const char *const next[] = { "systemctl daemon-reload", cmd.buf, mount.buf };
	for (size_t i = 0; i < ARRAY_SIZE(next); i++)
		emit_str(&e, NULL, "  %s\n", next[i]);
	emit_close(&e);
	emit_finish(&e, &out);
	fputs(out.buf, stdout);
	strbuf_release(&out);
	strbuf_release(&cmd);
	strbuf_release(&mount);
}

/*
 * One subsystem, one mount point: a plan already below the root that
 * mounts conf's subsystem elsewhere refuses conf (its file would stay,
 * and the namespace would be mounted twice).  A plan that cannot be read
 * is no obstacle: replanning is how it is mended.
 */
static int check_other_plans(const struct rootfs *root, const struct storage_conf *conf)
{
	struct strvec names = STRVEC_INIT;
	struct strbuf err = STRBUF_INIT;
	int ret = SPARKCTL_EXIT_OK;

	storage_conf_list(root, &names, &err);
	for (size_t i = 0; i < names.nr && ret == SPARKCTL_EXIT_OK; i++) {
		struct storage_conf other;
		if (storage_conf_load_file(root, names.v[i], &other, &err) == 0 && other.nqn &&
		    other.mount && streq(other.nqn, conf->nqn) && !streq(other.mount, conf->mount))
			ret = refuse(
				"%s is already planned at %s (/%s/%s): one subsystem is mounted "
				"at one mount point; remove that plan first",
				conf->nqn, other.mount, STORAGE_CONF_DIR, names.v[i]);
		storage_conf_release(&other);
		strbuf_reset(&err);
	}
	strvec_clear(&names);
	strbuf_release(&err);
	return ret;
}

/*
 * The mount point empty, or mounted already: mounting the volume over
 * files would hide them (nothing is lost, but a dataset or weights left
 * there seem to vanish, and reappear when the volume is not mounted).
 */
static int check_mount_point(const struct rootfs *root, const struct storage_conf *conf)
{
	struct strvec entries = STRVEC_INIT;
	bool mounted;
	int r = mount_point_state(root, conf->mount, &entries, &mounted), ret = SPARKCTL_EXIT_OK;

	if (r == -ENOTDIR) {
		cmd_error("storage plan", "%s is not a directory: it cannot be a mount point",
			  conf->mount);
		ret = SPARKCTL_EXIT_ERROR;
	} else if (r < 0) {
		cmd_error("storage plan", "cannot read the mount point %s: %s", conf->mount,
			  strerror(-r));
		ret = SPARKCTL_EXIT_ERROR;
	} else if (entries.nr && !mounted) {
		cmd_error("storage plan",
			  "%s holds %zu entr%s (%s%s) and nothing is mounted there: the volume "
			  "would hide them; move them away, choose another --mount, or --force",
			  conf->mount, entries.nr, entries.nr == 1 ? "y" : "ies", entries.v[0],
			  entries.nr > 1 ? ", ..." : "");
		ret = SPARKCTL_EXIT_ERROR;
	}
	strvec_clear(&entries);
	return ret;
}

/* --write: this node's files below the root. */
static int write_plan(const struct plan_args *a, const struct storage_conf *plan)
{
	struct strbuf unit_backup = STRBUF_INIT, err = STRBUF_INIT, conf_name = STRBUF_INIT,
		      conf_backup = STRBUF_INIT;
	struct write_result res[5] = { 0 };
	struct storage_conf conf;
	struct rootfs root;
	char *name = NULL;
	int r, ret = SPARKCTL_EXIT_ERROR;

	storage_conf_init(&conf);
	if ((r = rootfs_open(&root, rootfs_root_path(a->root))) < 0) {
		cmd_error("storage plan", "cannot use the root %s: %s", rootfs_root_path(a->root),
			  strerror(-r));
		goto out;
	}
	if ((ret = this_node(a, &root, plan, &name)) != SPARKCTL_EXIT_OK)
		goto out_root;
	storage_plan_for_node(plan, name, &conf);
	if ((ret = check_other_plans(&root, &conf)) != SPARKCTL_EXIT_OK ||
	    (!a->force && (ret = check_mount_point(&root, &conf)) != SPARKCTL_EXIT_OK))
		goto out_root;
	strbuf_addf(&unit_backup, "%s.bak", conf.unit);
	storage_conf_file_name(conf.mount, &conf_name);
	strbuf_addf(&conf_backup, "%s.bak", conf_name.buf);
	/* fstab last: its line names the unit, which is then in place. */
	const struct plan_file files[] = {
		{ STORAGE_PLAN_MODULES_DIR, STORAGE_PLAN_MODULES_NAME,
		  STORAGE_PLAN_MODULES_NAME ".bak", make_modules, false },
		{ STORAGE_PLAN_UNIT_DIR, conf.unit, unit_backup.buf, make_unit, false },
		{ STORAGE_PLAN_DISCOVERY_DIR, STORAGE_PLAN_DISCOVERY_NAME,
		  STORAGE_PLAN_DISCOVERY_NAME ".bak", make_discovery, false },
		{ STORAGE_CONF_DIR, conf_name.buf, conf_backup.buf, make_plan_json, false },
		{ STORAGE_PLAN_FSTAB_DIR, STORAGE_PLAN_FSTAB_NAME, FSTAB_BACKUP, make_fstab, true },
	};
	ret = SPARKCTL_EXIT_ERROR;
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		if (install_file(&root, &files[i], &conf, &res[i], &err) < 0) {
			cmd_error("storage plan", "%s", err.buf);
			goto out_root;
		}
	print_written(a, &conf, res, ARRAY_SIZE(files));
	ret = SPARKCTL_EXIT_OK;
out_root:
	rootfs_close(&root);
out:
	for (size_t i = 0; i < ARRAY_SIZE(res); i++) {
		free(res[i].path);
		free(res[i].backup);
	}
	storage_conf_release(&conf);
	free(name);
	strbuf_release(&unit_backup);
	strbuf_release(&conf_name);
	strbuf_release(&conf_backup);
	strbuf_release(&err);
	return ret;
}

static int storage_plan(const struct cmd *cmd, int argc, char **argv)
{
	struct plan_args a = { .writers = STRVEC_INIT };
	const struct opt opts[] = {
		OPT_STRING(0, "target", &a.target, "ADDR[:PORT]",
			   "the target's address (IPv6 in brackets with a port; port 4420)"),
		OPT_STRING(0, "nqn", &a.nqn, "NQN", "the subsystem's NVMe qualified name"),
		OPT_STRING(0, "mount", &a.mount, "DIR", "where every node mounts the volume"),
		OPT_CHOICE(0, "fs", &a.fs, "FS", "ext4|xfs",
			   "its filesystem: ext4 (default) or xfs"),
		OPT_STRING(0, "uuid", &a.uuid, "UUID", "the filesystem's UUID (blkid)"),
		OPT_LIST(0, "writer", &a.writers, "NODE",
			 "the one node that mounts it read-write (default: the first)"),
		OPT_BOOL(0, "ro-all", &a.ro_all, "every node mounts it read-only"),
		OPT_STRING(0, "iface", &a.iface, "IF",
			   "the initiators' interface (nvme connect -f)"),
		OPT_STRING(0, "nodes", &a.nodes, "A,B", "the nodes (ranges: spark[1-4])"),
		OPT_STRING('H', "hosts", &a.hosts, "HOST,...", "the nodes, as --nodes"),
		OPT_STRING(0, "hostfile", &a.hostfile, "FILE", "the nodes, one per line"),
		OPT_STRING(0, "cluster", &a.cluster, "FILE",
			   "the cluster file naming the nodes, when no other option does"),
		OPT_STRING(0, "node", &a.node, "NAME",
			   "the node --write installs (default: this host); print only its files"),
		OPT_BOOL(0, "write", &a.write, "install this node's files"),
		OPT_BOOL(0, "force", &a.force,
			 "--write over a mount point that holds files (they are hidden while "
			 "the volume is mounted)"),
		OPT_STRING(0, "root", &a.root, "DIR", "install below DIR instead of / (--write)"),
		OPT_BOOL(0, "json", &a.json, "the files as JSON"),
		OPT_HELP(),
		OPT_END(),
	};
	struct storage_conf plan;
	int n, ret;

	storage_conf_init(&plan);
	n = cmd_parse(cmd, opts, argc, argv);
	if (n < 0) {
		ret = cmd_parse_exit(n);
		goto out;
	}
	if ((ret = make_plan(&a, &plan)) != SPARKCTL_EXIT_OK)
		goto out;
	if (a.write) {
		ret = write_plan(&a, &plan);
	} else if (a.node && !node_in_plan(&plan, a.node)) {
		ret = refuse("--node '%s' is not one of the nodes", a.node);
	} else {
		print_plan(&a, &plan);
	}
out:
	storage_conf_release(&plan);
	strvec_clear(&a.writers);
	return ret;
}

const struct cmd cmd_storage_plan = {
	.name = "plan",
	.title = "storage plan",
	.fn = storage_plan,
	.summary = "each node's discovery line, nvme-tcp module, connect unit, fstab line",
	.usage = plan_usage,
	.description = plan_description,
	.exit_status = "0 printed or installed, 1 a root or a file that cannot be read or written, "
		       "a mount point that holds files (without --force), 2 usage (also two "
		       "writers, a writer that is not a node, a bad value, "
		       "--write without --uuid or on a node that is not in the plan)",
	.max_operands = 0,
};
