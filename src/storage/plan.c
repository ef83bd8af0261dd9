/* plan.c - the files of each node of a shared NVMe/TCP volume (pure: no I/O). */
#include "sparkctl.h"

#include <arpa/inet.h>
#include <strings.h>

#include "cluster/cluster_file.h"
#include "lib/parse.h"
#include "lib/xalloc.h"
#include "storage/plan.h"

/* nvme-cli's port for a TCP discovery controller when a discovery.conf line names none. */
#define NVME_DISCOVERY_TCP_PORT "8009"

/* ---- the request ---- */

static int parse_port(const char *text, unsigned *port)
{
	uint32_t v;

	if (parse_u32(text, &v) < 0 || v < 1 || v > 65535)
		return -EINVAL;
	*port = v;
	return 0;
}

static bool is_ipv6(const char *s)
{
	unsigned char buf[sizeof(struct in6_addr)];

	return inet_pton(AF_INET6, s, buf) == 1;
}

int storage_plan_parse_target(const char *target, char **address, unsigned *port,
			      struct strbuf *err)
{
	char *addr = NULL;
	const char *port_text = NULL;
	int r = -EINVAL;

	*port = STORAGE_DEFAULT_PORT;
	if (target[0] == '[') {
		const char *close = strchr(target, ']');
		if (!close || (close[1] && close[1] != ':'))
			goto bad;
		addr = xstrndup(target + 1, (size_t)(close - target - 1));
		if (!is_ipv6(addr))
			goto bad;
		port_text = close[1] ? close + 2 : NULL;
	} else if (strchr(target, ':') && strchr(target, ':') != strrchr(target, ':')) {
		/* Two colons: an IPv6 address without a port (with one, it is in brackets). */
		addr = xstrdup(target);
		if (!is_ipv6(addr))
			goto bad;
	} else {
		const char *colon = strchr(target, ':');
		addr = colon ? xstrndup(target, (size_t)(colon - target)) : xstrdup(target);
		port_text = colon ? colon + 1 : NULL;
		if (!cluster_address_valid(addr))
			goto bad;
	}
	if (port_text && parse_port(port_text, port) < 0)
		goto bad;
	*address = addr;
	return 0;
bad:
	strbuf_addstr(err, "--target '");
	strbuf_addstr_printable(err, target);
	strbuf_addstr(err, "' is not ADDR[:PORT] (an IPv6 address with a port in brackets: "
			   "[fd00::1]:4420; the port 1-65535)");
	free(addr);
	return r;
}

/* "--OPTION 'VALUE' WHY" into err: -EINVAL. */
static int refuse_value(struct strbuf *err, const char *option, const char *value, const char *why)
{
	strbuf_addf(err, "--%s '", option);
	strbuf_addstr_printable(err, value);
	strbuf_addf(err, "' %s", why);
	return -EINVAL;
}

/* The fields of req other than the nodes, checked, into conf. */
static int make_volume(const struct storage_plan_request *req, struct storage_conf *conf,
		       struct strbuf *err)
{
	struct strbuf unit = STRBUF_INIT;
	int r;

	if ((r = storage_plan_parse_target(req->target, &conf->target_address, &conf->target_port,
					   err)) < 0)
		return r;
	if (!nvme_nqn_valid(req->nqn))
		return refuse_value(err, "nqn", req->nqn, "is not an NQN (" NVME_NQN_RULE ")");
	conf->nqn = xstrdup(req->nqn);
	if (!storage_mount_valid(req->mount))
		return refuse_value(err, "mount", req->mount,
				    "is not an absolute path below / (no '.', '..', empty "
				    "components or control characters)");
	conf->mount = xstrdup(req->mount);
	if (req->fs && storage_fs_parse(req->fs, &conf->fs) < 0)
		return refuse_value(err, "fs", req->fs, "is not ext4 or xfs");
	if (req->uuid && !storage_uuid_valid(req->uuid))
		return refuse_value(err, "uuid", req->uuid,
				    "is not a filesystem UUID (8-4-4-4-12 hex digits, as blkid "
				    "prints it)");
	conf->uuid = xstrdup_or_null(req->uuid);
	if (req->iface && !storage_iface_valid(req->iface))
		return refuse_value(err, "iface", req->iface, "is not an interface name");
	conf->interface = xstrdup_or_null(req->iface);
	storage_unit_name(conf->mount, &unit);
	conf->unit = strbuf_detach(&unit, NULL);
	return 0;
}

static ssize_t node_index(const struct storage_conf *conf, const char *name)
{
	for (size_t i = 0; i < conf->nr_nodes; i++)
		if (streq(conf->nodes[i].name, name))
			return (ssize_t)i;
	return -1;
}

/* ext4 and xfs are not cluster filesystems: said wherever a second writer is refused. */
#define ONE_WRITER_WHY                                                                             \
	"ext4 and xfs are not cluster filesystems: two hosts mounting one read-write corrupt it"

static int choose_writer(const struct storage_plan_request *req, struct storage_conf *conf,
			 struct strbuf *err)
{
	const char *writer;
	ssize_t at;

	if (req->ro_all && req->nr_writers) {
		strbuf_addstr(err, "--writer and --ro-all contradict each other");
		return -EINVAL;
	}
	if (req->ro_all)
		return 0;
	for (size_t i = 0; i < req->nr_writers; i++) {
		const char *comma = strchr(req->writers[i], ',');
		if (i == 0 && !comma)
			continue;
		strbuf_addstr(err, "two writers ('");
		if (comma)
			strbuf_add_printable(err, req->writers[i],
					     (size_t)(comma - req->writers[i]), 0);
		else
			strbuf_addstr_printable(err, req->writers[0]);
		strbuf_addstr(err, "' and '");
		strbuf_addstr_printable(err, comma ? comma + 1 : req->writers[i]);
		strbuf_addstr(err, "'): " ONE_WRITER_WHY "; give one --writer, or --ro-all");
		return -EINVAL;
	}
	writer = req->nr_writers ? req->writers[0] : conf->nodes[0].name;
	at = node_index(conf, writer);
	if (at < 0) {
		strbuf_addstr(err, "--writer '");
		strbuf_addstr_printable(err, writer);
		strbuf_addstr(err, "' is not one of the nodes");
		return -EINVAL;
	}
	conf->nodes[at].access = STORAGE_ACCESS_RW;
	return 0;
}

static int make_nodes(const struct storage_plan_request *req, struct storage_conf *conf,
		      struct strbuf *err)
{
	if (!req->nr_nodes) {
		strbuf_addstr(err, "no nodes: give --nodes, -H, --hostfile or a cluster file");
		return -EINVAL;
	}
	for (size_t i = 0; i < req->nr_nodes; i++) {
		const char *name = req->nodes[i];
		if (!cluster_node_name_valid(name) || node_index(conf, name) >= 0) {
			strbuf_addstr(err, "node '");
			strbuf_addstr_printable(err, name);
			strbuf_addstr(err, node_index(conf, name) >= 0 ? "' is listed twice"
								       : "' is not a host name");
			return -EINVAL;
		}
		struct storage_node *n = ARRAY_PUSH(conf->nodes, conf->nr_nodes);
		n->name = xstrdup(name);
		n->access = STORAGE_ACCESS_RO;
	}
	return choose_writer(req, conf, err);
}

int storage_plan_make(const struct storage_plan_request *req, struct storage_conf *conf,
		      struct strbuf *err)
{
	int r;

	storage_conf_init(conf);
	if ((r = make_volume(req, conf, err)) < 0 || (r = make_nodes(req, conf, err)) < 0)
		storage_conf_release(conf);
	return r;
}

void storage_plan_for_node(const struct storage_conf *plan, const char *name,
			   struct storage_conf *out)
{
	storage_conf_init(out);
	out->target_address = xstrdup(plan->target_address);
	out->target_port = plan->target_port;
	out->nqn = xstrdup(plan->nqn);
	out->mount = xstrdup(plan->mount);
	out->fs = plan->fs;
	out->uuid = xstrdup_or_null(plan->uuid);
	out->interface = xstrdup_or_null(plan->interface);
	out->unit = xstrdup(plan->unit);
	out->node = xstrdup(name);
	out->nodes = xcalloc(plan->nr_nodes, sizeof(*out->nodes));
	out->nr_nodes = plan->nr_nodes;
	for (size_t i = 0; i < plan->nr_nodes; i++) {
		out->nodes[i].name = xstrdup(plan->nodes[i].name);
		out->nodes[i].access = plan->nodes[i].access;
	}
}

/* ---- the files ---- */

void storage_plan_discovery_line(const struct storage_conf *conf, struct strbuf *out)
{
	strbuf_addf(out, "--transport=tcp --traddr=%s --trsvcid=%u", conf->target_address,
		    conf->target_port);
	if (conf->interface)
		strbuf_addf(out, " --host-iface=%s", conf->interface);
	strbuf_addch(out, '\n');
}

void storage_plan_modules_load(struct strbuf *out)
{
	strbuf_addstr(out, "# Written by sparkctl storage plan: the NVMe/TCP initiator, at boot.\n"
			   "nvme-tcp\n");
}

/* Text where systemd expands specifiers (Description=): '%' doubled. */
static void add_unit_text(struct strbuf *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '%')
			strbuf_addch(out, '%');
		strbuf_addch(out, *s);
	}
}

/*
 * One argument of an Exec*= line as systemd splits them: as it is when
 * it holds nothing systemd would act on, else in double quotes with '\'
 * and '"' escaped, '$' (variables) and '%' (specifiers) doubled.
 */
static void add_exec_arg(struct strbuf *out, const char *arg)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789._-:/@+=,";

	if (*arg && strspn(arg, plain) == strlen(arg)) {
		strbuf_addstr(out, arg);
		return;
	}
	strbuf_addch(out, '"');
	for (; *arg; arg++) {
		if (*arg == '\\' || *arg == '"')
			strbuf_addch(out, '\\');
		else if (*arg == '$' || *arg == '%')
			strbuf_addch(out, *arg);
		strbuf_addch(out, *arg);
	}
	strbuf_addch(out, '"');
}

void storage_plan_unit(const struct storage_conf *conf, struct strbuf *out)
{
	char port[16];

	snprintf(port, sizeof(port), "%u", conf->target_port);
	strbuf_addstr(out, "# Written by sparkctl storage plan: connects the NVMe/TCP volume that "
			   "/etc/fstab\n# mounts by UUID (x-systemd.requires= orders the mount "
			   "after this unit,\n# and its unmount before the disconnect).\n");
	strbuf_addstr(out, "[Unit]\nDescription=NVMe/TCP volume ");
	add_unit_text(out, conf->nqn);
	strbuf_addstr(out, " for ");
	add_unit_text(out, conf->mount);
	strbuf_addstr(out, "\nDocumentation=man:sparkctl-storage-plan(1)\n"
			   "Wants=network-online.target\n"
			   "After=network-online.target\n"
			   "\n[Service]\n"
			   "Type=oneshot\n"
			   "RemainAfterExit=yes\n");
	/*
	 * A volume connected already (by 'sparkctl storage connect', to
	 * format it) would make nvme connect fail with "already connected":
	 * the condition skips the start then, which is no failure, so the
	 * mount that requires this unit goes ahead.  "$$1" is "$1" to sh.
	 */
	strbuf_addstr(out, "ExecCondition=/bin/sh -c '! grep -qsxF -e \"$$1\" "
			   "/sys/class/nvme/nvme*/subsysnqn' sparkctl-nvme ");
	add_exec_arg(out, conf->nqn);
	strbuf_addstr(out, "\nExecStartPre=/sbin/modprobe nvme-tcp\n"
			   "ExecStart=/usr/sbin/nvme connect -t tcp -n ");
	add_exec_arg(out, conf->nqn);
	strbuf_addstr(out, " -a ");
	add_exec_arg(out, conf->target_address);
	strbuf_addf(out, " -s %s", port);
	if (conf->interface) {
		strbuf_addstr(out, " -f ");
		add_exec_arg(out, conf->interface);
	}
	strbuf_addf(out, " -l %d -c %d\n", STORAGE_PLAN_CTRL_LOSS_TMO, STORAGE_PLAN_RECONNECT_S);
	strbuf_addstr(out, "ExecStop=/usr/sbin/nvme disconnect -n ");
	add_exec_arg(out, conf->nqn);
	strbuf_addstr(out, "\n\n[Install]\nWantedBy=multi-user.target\n");
}

/* A field of fstab: space, tab, newline and backslash as octal escapes, as getmntent() reads. */
static void add_fstab_field(struct strbuf *out, const char *s)
{
	for (; *s; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\\')
			strbuf_addf(out, "\\%03o", (unsigned char)*s);
		else
			strbuf_addch(out, *s);
	}
}

void storage_plan_fstab_line(const struct storage_conf *conf, struct strbuf *out)
{
	const struct storage_node *me = storage_conf_this_node(conf);
	bool ro = !me || me->access != STORAGE_ACCESS_RW;

	strbuf_addstr(out, "UUID=");
	add_fstab_field(out, conf->uuid ? conf->uuid : "FILESYSTEM-UUID");
	strbuf_addch(out, ' ');
	add_fstab_field(out, conf->mount);
	/* A unit name holds no blank (systemd escapes them); its \xNN are no octal escapes. */
	strbuf_addf(out, " %s _netdev,nofail,noatime,x-systemd.requires=%s",
		    storage_fs_name(conf->fs), conf->unit);
	/* A reader must not replay the journal: the writer owns it (noload, norecovery). */
	if (ro)
		strbuf_addstr(out, conf->fs == STORAGE_FS_XFS ? ",ro,norecovery" : ",ro,noload");
	strbuf_addstr(out, " 0 0\n");
}

/* ---- merging ---- */

/* The whitespace-separated fields of line (at most max), as pointers into a copy. */
static size_t split_fields(char *copy, char **fields, size_t max)
{
	size_t n = 0;
	char *save = NULL;

	for (char *f = strtok_r(copy, " \t", &save); f && n < max; f = strtok_r(NULL, " \t", &save))
		fields[n++] = f;
	return n;
}

/* Two addresses the same: equal as text, or the same IPv6 address however written. */
static bool same_address(const char *a, const char *b)
{
	unsigned char x[sizeof(struct in6_addr)], y[sizeof(struct in6_addr)];

	if (strcasecmp(a, b) == 0)
		return true;
	return inet_pton(AF_INET6, a, x) == 1 && inet_pton(AF_INET6, b, y) == 1 &&
	       memcmp(x, y, sizeof(x)) == 0;
}

/* A discovery.conf line for the plan's discovery controller (same traddr and trsvcid). */
static bool discovery_line_matches(const char *line, size_t len, const struct storage_conf *conf)
{
	char *copy = xstrndup(line, len), *fields[64];
	const char *traddr = NULL, *trsvcid = NULL;
	size_t n = split_fields(copy, fields, ARRAY_SIZE(fields));
	char port[16];
	bool match;

	for (size_t i = 0; i < n; i++) {
		const char *f = fields[i], *next = i + 1 < n ? fields[i + 1] : NULL;
		if (starts_with(f, "--traddr="))
			traddr = f + 9;
		else if (starts_with(f, "--trsvcid="))
			trsvcid = f + 10;
		else if ((streq(f, "-a") || streq(f, "--traddr")) && next)
			traddr = next;
		else if ((streq(f, "-s") || streq(f, "--trsvcid")) && next)
			trsvcid = next;
	}
	snprintf(port, sizeof(port), "%u", conf->target_port);
	match = n && fields[0][0] != '#' && traddr && same_address(traddr, conf->target_address) &&
		streq(trsvcid ? trsvcid : NVME_DISCOVERY_TCP_PORT, port);
	free(copy);
	return match;
}

/* getmntent()'s reading of an fstab field: \NNN octal escapes. */
static void unescape_fstab_field(const char *s, struct strbuf *out)
{
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			strbuf_addch(out, (s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			strbuf_addch(out, *s);
		}
	}
}

static bool fstab_line_matches(const char *line, size_t len, const struct storage_conf *conf)
{
	char *copy = xstrndup(line, len), *fields[2];
	struct strbuf dir = STRBUF_INIT;
	size_t n = split_fields(copy, fields, ARRAY_SIZE(fields));
	bool match = false;

	if (n == 2 && fields[0][0] != '#') {
		unescape_fstab_field(fields[1], &dir);
		/* "/mnt/shared/" names the same mount point. */
		while (dir.len > 1 && dir.buf[dir.len - 1] == '/')
			strbuf_setlen(&dir, dir.len - 1);
		match = streq(dir.buf, conf->mount);
	}
	strbuf_release(&dir);
	free(copy);
	return match;
}

/*
 * old's lines into out, the first that matches replaced by line, later
 * ones dropped (a second line for the same thing would contradict it);
 * line appended when none matches.
 */
static int merge_lines(const char *old, const struct storage_conf *conf, const char *line,
		       bool (*matches)(const char *, size_t, const struct storage_conf *),
		       struct strbuf *out)
{
	int replaced = 0;
	const char *p = old ? old : "";

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (matches(p, len, conf)) {
			if (!replaced)
				strbuf_addstr(out, line);
			replaced++;
		} else {
			strbuf_add(out, p, len);
			strbuf_addch(out, '\n');
		}
		p += len + (nl ? 1 : 0);
	}
	if (!replaced)
		strbuf_addstr(out, line);
	return replaced;
}

int storage_plan_merge_discovery(const char *old, const struct storage_conf *conf,
				 struct strbuf *out)
{
	struct strbuf line = STRBUF_INIT;
	int r;

	storage_plan_discovery_line(conf, &line);
	r = merge_lines(old, conf, line.buf, discovery_line_matches, out);
	strbuf_release(&line);
	return r;
}

int storage_plan_merge_fstab(const char *old, const struct storage_conf *conf, struct strbuf *out)
{
	struct strbuf line = STRBUF_INIT;
	int r;

	storage_plan_fstab_line(conf, &line);
	r = merge_lines(old, conf, line.buf, fstab_line_matches, out);
	strbuf_release(&line);
	return r;
}
