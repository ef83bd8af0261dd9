/*
 * sparkctl storage target - a Linux NVMe/TCP target (nvmet) through
 * configfs: one subsystem with namespace 1 on a block device (or a
 * memory-backed null_blk device made for it), listening on one TCP port.
 * The operations are planned once (storage/nvmet.h); --print shows them as
 * shell commands, --apply performs them (undoing them on a failure),
 * --remove tears the target down.
 */
#include "sparkctl.h"

#include "cmd/cmd.h"
#include "lib/xalloc.h"
#include "storage/nvmet.h"
#include "storage/storage_conf.h"

struct target_args {
	const char *nqn, *device, *null_blk, *listen, *root;
	unsigned port_id;
	struct strvec allow_hosts;
	bool apply, print, remove;
};

static const char *const target_usage[] = {
	"sparkctl storage target --nqn NQN (--device DEV | --null-blk SIZE) --listen ADDR[:PORT]\n"
	"        [--port-id N] [--allow-host HOSTNQN ...] [--apply | --print] [--root DIR]",
	"sparkctl storage target --nqn NQN --remove [--print] [--root DIR]",
	NULL,
};

/* The exit status of a refusal or failure of storage/nvmet.c, by its errno. */
static int exit_of(int r)
{
	return r == -EINVAL   ? SPARKCTL_EXIT_USAGE
	       : r == -ENODEV ? SPARKCTL_EXIT_UNAVAILABLE
			      : SPARKCTL_EXIT_ERROR;
}

static int check_args(const struct cmd *cmd, const struct target_args *a)
{
	const char *title = cmd_title(cmd);

	if (!a->nqn)
		return cmd_usage_error(title, "--nqn NQN is required");
	if (a->apply + a->print + a->remove > 1 && !(a->remove && a->print && !a->apply))
		return cmd_usage_error(title, "--apply, --print and --remove exclude each other "
					      "(--remove --print shows the teardown)");
	if (a->remove) {
		if (a->device || a->null_blk || a->listen || a->port_id || a->allow_hosts.nr)
			return cmd_usage_error(title, "--remove takes only --nqn (and --root)");
		return SPARKCTL_EXIT_OK;
	}
	if (!a->device == !a->null_blk)
		return cmd_usage_error(title, "give one of --device DEV and --null-blk SIZE");
	if (!a->listen)
		return cmd_usage_error(title, "--listen ADDR[:PORT] is required");
	if (a->device && a->device[0] != '/')
		return cmd_usage_error(title, "--device: an absolute path (/dev/...)");
	return SPARKCTL_EXIT_OK;
}

/* The request of the options (req->traddr allocated into *traddr). */
static int make_request(const struct cmd *cmd, const struct target_args *a,
			struct nvmet_request *req, char **traddr)
{
	struct strbuf err = STRBUF_INIT;
	int ret = SPARKCTL_EXIT_OK;

	*req = (struct nvmet_request){ .nqn = a->nqn,
				       .device = a->device,
				       .port_id = a->port_id,
				       .allow_hosts = &a->allow_hosts };
	if (a->null_blk && nvmet_parse_size_mib(a->null_blk, &req->null_blk_mib) < 0)
		ret = cmd_usage_error(cmd_title(cmd), "--null-blk: a size such as 64M, 1G (MiB "
						      "without a unit)");
	else if (nvmet_split_addr_port(a->listen, STORAGE_DEFAULT_PORT, traddr, &req->trsvcid,
				       &err) < 0)
		ret = cmd_usage_error(cmd_title(cmd), "--listen: %s", err.buf);
	req->traddr = *traddr;
	strbuf_release(&err);
	return ret;
}

/* The device must be there before anything is made. */
static int check_device(const struct cmd *cmd, const struct rootfs *root, const char *device)
{
	if (!device || rootfs_exists(root, device + 1))
		return SPARKCTL_EXIT_OK;
	cmd_error(cmd_title(cmd), "--device %s: no such device; nothing made", device);
	return SPARKCTL_EXIT_USAGE;
}

static int plan(const struct cmd *cmd, const struct target_args *a, const struct rootfs *root,
		struct nvmet_ops *ops)
{
	struct nvmet_state st;
	struct nvmet_request req;
	struct strbuf err = STRBUF_INIT;
	char *traddr = NULL;
	int r, ret;

	nvmet_state_init(&st);
	if (!nvmet_nqn_usable(a->nqn)) {
		ret = cmd_usage_error(cmd_title(cmd),
				      "--nqn: not an NQN (" NVME_NQN_RULE ", no '/')");
		goto out;
	}
	r = probe_nvmet_state(root, a->nqn, &st, &err);
	if (r < 0) {
		cmd_error(cmd_title(cmd), "%s", err.buf);
		ret = SPARKCTL_EXIT_ERROR;
		goto out;
	}
	if (a->remove) {
		nvmet_plan_remove(a->nqn, &st, ops);
		ret = SPARKCTL_EXIT_OK;
		goto out;
	}
	ret = make_request(cmd, a, &req, &traddr);
	if (ret == SPARKCTL_EXIT_OK && a->apply)
		ret = check_device(cmd, root, a->device);
	if (ret != SPARKCTL_EXIT_OK)
		goto out;
	r = nvmet_plan_create(&req, &st, ops, &err);
	if (r < 0) {
		cmd_error(cmd_title(cmd), "%s", err.buf);
		ret = exit_of(r);
	}
out:
	free(traddr);
	strbuf_release(&err);
	nvmet_state_release(&st);
	return ret;
}

/* The value the operations write into the attribute called name (the last one), or "?". */
static const char *written(const struct nvmet_ops *ops, const char *name)
{
	const char *v = "?";

	for (size_t i = 0; i < ops->nr; i++) {
		const char *slash = strrchr(ops->v[i].path, '/');

		if (ops->v[i].kind == NVMET_OP_WRITE && slash && streq(slash + 1, name))
			v = ops->v[i].value;
	}
	return v;
}

static void say_made(const char *nqn, const struct nvmet_ops *ops)
{
	const char *port = "?";
	for (size_t i = 0; i < ops->nr; i++)
		if (ops->v[i].kind == NVMET_OP_MKDIR &&
		    starts_with(ops->v[i].path, NVMET_CONFIGFS_DIR "/ports/"))
			port = ops->v[i].path + strlen(NVMET_CONFIGFS_DIR "/ports/");
	const char *addr = written(ops, "addr_traddr");
	bool v6 = strchr(addr, ':') != NULL;

	printf("made subsystem %s: namespace " NVMET_NSID " on %s, listening on %s %s%s%s:%s "
	       "(nvmet port %s)\n",
	       nqn, written(ops, "device_path"), written(ops, "addr_trtype"), v6 ? "[" : "", addr,
	       v6 ? "]" : "", written(ops, "addr_trsvcid"), port);
}

static int apply(const struct cmd *cmd, const struct target_args *a, const struct rootfs *root,
		 const struct nvmet_ops *ops)
{
	struct strbuf err = STRBUF_INIT;
	int r = nvmet_ops_apply(root, ops, !a->remove, NULL, &err);
	int ret = SPARKCTL_EXIT_OK;

	if (r < 0) {
		cmd_error(cmd_title(cmd), "%s", err.buf);
		ret = exit_of(r);
	} else if (a->remove && !ops->nr) {
		printf("no subsystem %s: nothing to remove\n", a->nqn);
	} else if (a->remove) {
		printf("removed subsystem %s (%zu operations)\n", a->nqn, ops->nr);
	} else {
		say_made(a->nqn, ops);
	}
	strbuf_release(&err);
	return ret;
}

static int run_target(const struct cmd *cmd, int argc, char **argv)
{
	struct target_args a = { 0 };
	struct nvmet_ops ops;
	struct rootfs root = { .dirfd = -1 };
	struct strbuf out = STRBUF_INIT;
	const char *root_path;
	int r, ret;
	const struct opt opts[] = {
		OPT_STRING(0, "nqn", &a.nqn, "NQN", "the subsystem's NVMe Qualified Name"),
		OPT_STRING(0, "device", &a.device, "PATH", "export this block device (or file)"),
		OPT_STRING(0, "null-blk", &a.null_blk, "SIZE",
			   "export a memory-backed null_blk device of SIZE (64M, 1G)"),
		OPT_STRING(0, "listen", &a.listen, "ADDR[:PORT]",
			   "the address to listen on (port 4420 by default)"),
		OPT_UINT(0, "port-id", &a.port_id, "N",
			 "nvmet's port number (default: the first free)"),
		OPT_LIST(0, "allow-host", &a.allow_hosts, "HOSTNQN",
			 "allow only this host (repeatable; default: any host)"),
		OPT_BOOL(0, "apply", &a.apply, "make the target"),
		OPT_BOOL(0, "print", &a.print,
			 "print what would be done as shell commands (default)"),
		OPT_BOOL(0, "remove", &a.remove, "tear the target of --nqn down"),
		OPT_STRING(0, "root", &a.root, "DIR", "the host's files below DIR (a test tree)"),
		OPT_HELP(),
		OPT_END(),
	};

	strvec_init(&a.allow_hosts);
	nvmet_ops_init(&ops);
	r = cmd_parse(cmd, opts, argc, argv);
	if (r < 0) {
		ret = cmd_parse_exit(r);
		goto out;
	}
	ret = check_args(cmd, &a);
	if (ret != SPARKCTL_EXIT_OK)
		goto out;
	root_path = rootfs_root_path(a.root);
	r = rootfs_open(&root, root_path);
	if (r < 0) {
		cmd_error(cmd_title(cmd), "--root %s: %s", root_path, strerror(-r));
		ret = SPARKCTL_EXIT_USAGE;
		goto out;
	}
	ret = plan(cmd, &a, &root, &ops);
	if (ret != SPARKCTL_EXIT_OK)
		goto out;
	if (a.apply || (a.remove && !a.print)) {
		ret = apply(cmd, &a, &root, &ops);
		goto out;
	}
	nvmet_ops_print(&ops, &out);
	fputs(out.buf, stdout);
out:
	if (root.dirfd >= 0)
		rootfs_close(&root);
	strbuf_release(&out);
	nvmet_ops_release(&ops);
	strvec_clear(&a.allow_hosts);
	return ret;
}

const struct cmd cmd_storage_target = {
	.name = "target",
	.title = "storage target",
	.fn = run_target,
	.summary = "a Linux NVMe/TCP target (nvmet) through configfs",
	.usage = target_usage,
	.description =
		"Plans the configfs operations that make an nvmet subsystem NQN with namespace 1\n"
		"on --device, or on a memory-backed null_blk device made for it (--null-blk), and\n"
		"a TCP port listening on --listen.  --print (the default) shows them as shell\n"
		"commands; --apply performs them in order, loading nvmet-tcp (and null_blk) with\n"
		"modprobe when they are not loaded, and undoes what it made when an operation\n"
		"fails.  --remove tears the subsystem down: its port links, its namespaces, the\n"
		"subsystem, the ports and hosts no other subsystem uses, and the null_blk device\n"
		"made for it; what is gone already is passed over.",
	.exit_status =
		"0 done (or nothing to remove), 1 a configfs operation failed (undone), "
		"the subsystem or port exists, the address is served already, 2 usage (also: "
		"no such device), 3 modprobe is missing or failed",
	.max_operands = 0,
};
