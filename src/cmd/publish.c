/*
 * sparkctl publish - advertise this node to 'sparkctl discover': avahi's
 * service file for _sparkctl._tcp with the node id, sparkctl's version
 * and the fabric addresses (discover/service_file.h), or --remove it.
 */
#include "sparkctl.h"

#include "cmd/cmd.h"
#include "discover/discover.h"
#include "discover/node_id.h"
#include "discover/service_file.h"
#include "lib/atomic_file.h"
#include "lib/rootfs.h"
#include "version.h"

static const char *const publish_usage[] = {
	"sparkctl publish [--dry-run] [--root DIR]",
	"sparkctl publish --remove [--dry-run] [--root DIR]",
	NULL,
};

static const char publish_description[] =
	"Write /" SERVICE_FILE_DIR "/" SERVICE_FILE_NAME ", avahi's service file that\n"
	"advertises " SERVICE_TYPE " on port 22 with TXT id= (this node's id, from\n"
	"/" NODE_ID_DIR "/" NODE_ID_FILE ", made from random bytes when missing), ver= (this\n"
	"sparkctl) and fabric= (the IPv4 addresses of the fabric ports), atomically\n"
	"with mode 0644, only when it changes.  avahi-daemon sees the file change and\n"
	"publishes it by itself.  --remove removes the file.  --dry-run prints the\n"
	"file (or what --remove would do) and writes nothing.  Writing below / needs\n"
	"root; --root DIR writes below DIR instead.";

struct publish_args {
	const char *root;
	bool remove, dry_run;
};

/* "/etc/avahi/services" below the root, for messages. */
static void where(const char *root_path, struct strbuf *out)
{
	if (!streq(root_path, "/"))
		strbuf_addstr(out, root_path);
	strbuf_addstr(out, "/" SERVICE_FILE_DIR "/" SERVICE_FILE_NAME);
}

static int remove_file(const struct rootfs *root, const char *path, bool dry_run)
{
	struct rootfs_dir dir = { .dirfd = -1 };
	int r = rootfs_dir_open_for_write(root, SERVICE_FILE_DIR, 0, &dir);

	if (r == 0 && !dry_run && unlinkat(dir.dirfd, SERVICE_FILE_NAME, 0) < 0)
		r = -errno;
	else if (r == 0 && dry_run && faccessat(dir.dirfd, SERVICE_FILE_NAME, F_OK, 0) < 0)
		r = -errno;
	rootfs_dir_close(&dir);
	if (r == -ENOENT) {
		printf("%s does not exist: nothing to remove\n", path);
		return SPARKCTL_EXIT_OK;
	}
	if (r < 0) {
		cmd_error("publish", "cannot remove %s: %s", path, strerror(-r));
		return SPARKCTL_EXIT_ERROR;
	}
	printf("%s %s; avahi-daemon stops advertising " SERVICE_TYPE " by itself\n",
	       dry_run ? "would remove" : "removed", path);
	return SPARKCTL_EXIT_OK;
}

/* The IPv4 addresses of the fabric ports of the node below root (none: empty). */
static int fabric_addresses(const char *root, struct strvec *out)
{
	struct inventory_source src = { .root = root, .no_nvidia_libraries = true };
	struct discover_request req = { .which = DISCOVER_IFACES_FABRIC };
	struct discover_result res;
	struct inventory inv;
	int ret;

	inventory_init(&inv);
	discover_result_init(&res);
	ret = inventory_source_load("publish", &src, &inv);
	if (ret == SPARKCTL_EXIT_OK) {
		req.inv = &inv;
		if (discover_choose_ifaces(&req, &res) == 0)
			for (size_t i = 0; i < res.nr_ifaces; i++)
				strvec_push(out, res.ifaces[i].address);
	}
	discover_result_release(&res);
	inventory_release(&inv);
	return ret;
}

/* The id to advertise: created unless dry_run.  An exit status. */
static int node_id(const struct rootfs *root, bool dry_run, struct strbuf *id)
{
	struct strbuf err = STRBUF_INIT;
	int r;

	if (dry_run) {
		r = node_id_read(root, id);
		if (r == -ENOENT) {
			strbuf_addstr(id, "NEW-NODE-ID");
			cmd_error("publish", "note: no /" NODE_ID_DIR "/" NODE_ID_FILE
					     " yet: publish makes one");
			r = 0;
		} else if (r < 0) {
			strbuf_addf(&err, "/" NODE_ID_DIR "/" NODE_ID_FILE ": %s",
				    r == -EINVAL ? "not a node id (32 lowercase hex characters)"
						 : strerror(-r));
		}
	} else if ((r = node_id_ensure(root, id, &err)) == 1) {
		cmd_error("publish", "made this node's id %s (/" NODE_ID_DIR "/" NODE_ID_FILE ")",
			  id->buf);
	}
	if (r < 0)
		cmd_error("publish", "%s", err.buf);
	strbuf_release(&err);
	return r < 0 ? SPARKCTL_EXIT_ERROR : SPARKCTL_EXIT_OK;
}

/* Write xml as the service file unless it holds it already. */
static int write_file(const struct rootfs *root, const char *path, const char *xml)
{
	struct rootfs_dir dir = { .dirfd = -1 };
	struct strbuf old = STRBUF_INIT, err = STRBUF_INIT;
	int r, ret = SPARKCTL_EXIT_ERROR;

	if ((r = rootfs_dir_open_for_write(root, SERVICE_FILE_DIR, 0755, &dir)) < 0) {
		cmd_error("publish", "cannot open the directory of %s: %s", path, strerror(-r));
		goto out;
	}
	r = rootfs_dir_read_file(&dir, SERVICE_FILE_NAME, 1024 * 1024, &old);
	if (r == 0 && streq(old.buf, xml)) {
		printf("%s unchanged\n", path);
		ret = SPARKCTL_EXIT_OK;
		goto out;
	}
	if (atomic_replace(dir.dirfd, SERVICE_FILE_NAME, xml, strlen(xml), 0644, NULL, &err) < 0) {
		cmd_error("publish", "%s: %s", path, err.buf);
		goto out;
	}
	printf("wrote %s; avahi-daemon notices it and advertises " SERVICE_TYPE " by itself\n",
	       path);
	ret = SPARKCTL_EXIT_OK;
out:
	rootfs_dir_close(&dir);
	strbuf_release(&old);
	strbuf_release(&err);
	return ret;
}

static int publish(const struct publish_args *a, const struct rootfs *root, const char *path)
{
	struct strbuf id = STRBUF_INIT, xml = STRBUF_INIT;
	struct strvec fabric = STRVEC_INIT;
	int ret;

	if ((ret = fabric_addresses(a->root, &fabric)) != SPARKCTL_EXIT_OK)
		goto out;
	if ((ret = node_id(root, a->dry_run, &id)) != SPARKCTL_EXIT_OK)
		goto out;
	service_file_xml(id.buf, SPARKCTL_VERSION, &fabric, &xml);
	if (a->dry_run)
		fputs(xml.buf, stdout);
	else
		ret = write_file(root, path, xml.buf);
out:
	strbuf_release(&id);
	strbuf_release(&xml);
	strvec_clear(&fabric);
	return ret;
}

static int run_publish(const struct cmd *cmd, int argc, char **argv)
{
	struct publish_args a = { 0 };
	const struct opt opts[] = {
		OPT_BOOL(0, "remove", &a.remove, "remove the service file"),
		OPT_BOOL(0, "dry-run", &a.dry_run, "print the file (or what --remove does) only"),
		OPT_STRING(0, "root", &a.root, "DIR",
			   "write below DIR instead of / (env SPARKCTL_ROOT)"),
		OPT_HELP(),
		OPT_END(),
	};
	struct strbuf path = STRBUF_INIT;
	const char *root_path;
	struct rootfs root;
	int r, ret, n = cmd_parse(cmd, opts, argc, argv);

	if (n < 0)
		return cmd_parse_exit(n);
	root_path = rootfs_root_path(a.root);
	where(root_path, &path);
	if (streq(root_path, "/") && !a.dry_run && geteuid() != 0) {
		cmd_error("publish", "writing %s needs root (or --dry-run, or --root DIR)",
			  path.buf);
		ret = SPARKCTL_EXIT_ERROR;
		goto out;
	}
	if ((r = rootfs_open(&root, root_path)) < 0) {
		cmd_error("publish", "cannot use the root %s: %s", root_path, strerror(-r));
		ret = SPARKCTL_EXIT_ERROR;
		goto out;
	}
	ret = a.remove ? remove_file(&root, path.buf, a.dry_run) : publish(&a, &root, path.buf);
	rootfs_close(&root);
out:
	strbuf_release(&path);
	return ret;
}

const struct cmd cmd_publish = {
	.name = "publish",
	.fn = run_publish,
	.summary = "advertise this node to 'sparkctl discover' (avahi service file)",
	.usage = publish_usage,
	.description = publish_description,
	.exit_status = "0 written, unchanged, removed or nothing to remove, 1 error (not root, "
		       "a file or node id that cannot be read or written), 2 usage",
	.max_operands = 0,
};
