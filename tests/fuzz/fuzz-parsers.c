/*
 * fuzz-parsers - the pure parsers of lib/host_text.h, parse_bdf(),
 * host_list_parse() (-H lists, Slurm's hostlists), storage_conf_parse()
 * (a plan of /etc/sparkctl/storage.d), storage_unit_name() and
 * storage_conf_file_name(), probe/nvme.h's
 * (sysfs NVMe addresses and namespaces, mount tables and fstab, hostnqn),
 * fio's JSON report (storage/fio.h) and what nvme-cli prints
 * (storage/nvme_cli.h: discover, list-subsys), and the line of
 * 'scontrol show node NAME -o' (slurm/health.h), and the GNU build id of
 * an ELF file (lib/elf_note.h: raw bytes, not text).
 *
 * The first byte selects the parser (modulo their number), the rest is
 * the text.  Besides memory errors and leaks, each parser's documented
 * result range is checked, and GIDs and PCI addresses must survive a
 * format/parse round trip.
 */
#include "sparkctl.h"

#include <ctype.h>
#include <strings.h>

#include "fuzz.h"
#include "inventory/derive.h"
#include "inventory/inventory.h"
#include "lib/elf_note.h"
#include "lib/host_text.h"
#include "lib/json.h"
#include "probe/nvme.h"
#include "remote/hosts.h"
#include "slurm/health.h"
#include "storage/storage_conf.h"
#include "storage/fio.h"
#include "storage/nvme_cli.h"

/* Selectors: the seed corpus prepends these values, keep them stable. */
enum parser {
	P_PORT_STATE,
	P_PORT_RATE,
	P_GID,
	P_GID_TYPE,
	P_LINK_SPEED,
	P_AER_TOTAL,
	P_MEMINFO,
	P_MODULES,
	P_OS_RELEASE,
	P_NVIDIA_VERSION,
	P_NCCL_CONF,
	P_DEFAULT_ROUTES,
	P_BDF,
	P_HOST_LIST,
	P_STORAGE_CONF,
	P_STORAGE_UNIT_NAME,
	P_NVME_ADDRESS,
	P_NVME_NAMESPACE,
	P_MOUNT_TABLE,
	P_NVME_HOSTNQN,
	P_FIO_REPORT,
	P_NVME_DISCOVER_JSON,
	P_NVME_DISCOVER_TEXT,
	P_NVME_LIST_SUBSYS,
	P_SLURM_NODE_SHOW,
	P_ELF_NOTE,
	NR_PARSERS
};

static void port_state(const char *s)
{
	char *name = NULL;
	int code = -1;

	if (parse_port_state(s, &code, &name) < 0)
		return;
	FUZZ_CHECK(code >= 0 && code <= 255);
	FUZZ_CHECK(name && *name);
	free(name);
}

static void port_rate(const char *s)
{
	int64_t mbps;

	if (parse_port_rate(s, &mbps) == 0)
		FUZZ_CHECK(mbps >= 0);
}

static void gid(const char *s)
{
	uint8_t raw[16], again[16];
	char text[40], v4[16], mapped[32];

	if (parse_gid(s, raw) < 0)
		return;
	/* The kernel's form must parse back to the same GID. */
	format_gid(raw, text);
	FUZZ_CHECK(strlen(text) == 39);
	FUZZ_CHECK(parse_gid(text, again) == 0 && !memcmp(raw, again, 16));
	if (gid_ipv4(raw, v4)) {
		snprintf(mapped, sizeof(mapped), "::ffff:%s", v4);
		FUZZ_CHECK(parse_gid(mapped, again) == 0 && !memcmp(raw, again, 16));
	}
	if (gid_is_zero(raw))
		FUZZ_CHECK(streq(text, "0000:0000:0000:0000:0000:0000:0000:0000"));
}

static void gid_type(const char *s)
{
	int v = gid_type_version(s);

	FUZZ_CHECK(v >= 0 && v <= 2);
	FUZZ_CHECK(gid_type_version(NULL) == 0);
}

static void link_speed(const char *s)
{
	uint64_t v;

	(void)parse_link_speed(s, &v);
}

static void aer_total(const char *s)
{
	/* The keys probe/pci.c asks for. */
	static const char *const keys[] = { "TOTAL_ERR_FATAL", "TOTAL_ERR_NONFATAL",
					    "TOTAL_ERR_COR" };

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		int64_t v;
		if (parse_aer_total(s, keys[i], &v) == 0)
			FUZZ_CHECK(v >= 0);
	}
}

static void meminfo(const char *s)
{
	static const char *const keys[] = { "MemTotal", "MemAvailable", "CmaTotal" };

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		int64_t v;
		if (parse_meminfo(s, keys[i], &v) == 0)
			FUZZ_CHECK(v >= 0 && v % 1024 == 0);
	}
}

static void modules(const char *s)
{
	for (size_t i = 0; inventory_watched_modules[i]; i++)
		(void)modules_contains(s, inventory_watched_modules[i]);
}

static void os_release(const char *s)
{
	static const char *const keys[] = { "ID", "VERSION_ID", "PRETTY_NAME" };

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		char *v = NULL;
		int r = parse_os_release(s, keys[i], &v);
		FUZZ_CHECK(r == 0 || r == -ENOENT);
		FUZZ_CHECK((r == 0) == (v != NULL));
		free(v);
	}
}

static void nvidia_version(const char *s)
{
	char *version = NULL;
	int is_open = -1;

	if (parse_nvidia_version(s, &version, &is_open) < 0)
		return;
	FUZZ_CHECK(version && version[0] >= '0' && version[0] <= '9');
	FUZZ_CHECK(is_open == 0 || is_open == 1);
	free(version);
}

/* Line by line, as probe/system.c reads a configuration file. */
static void nccl_conf(char *s)
{
	for (char *line = s; line && *line;) {
		char *nl = strchr(line, '\n');
		char *key = NULL, *value = NULL;
		if (nl)
			*nl = '\0';
		if (parse_nccl_conf_line(line, &key, &value) == 0) {
			FUZZ_CHECK(key && value && line[0] != '#');
			FUZZ_CHECK(strlen(key) + 1 + strlen(value) == strlen(line));
			free(key);
			free(value);
		}
		line = nl ? nl + 1 : NULL;
	}
}

static void count_route(const char *ifname, void *data)
{
	FUZZ_CHECK(ifname && *ifname);
	(*(size_t *)data)++;
}

static void default_routes(const char *s)
{
	size_t n = 0;

	(void)parse_default_routes(s, count_route, &n);
}

static void bdf(const char *s)
{
	struct pci_bdf b;
	char text[32];

	if (parse_bdf(s, &b) < 0)
		return;
	/* Fixed widths: formatting gives the input back, up to hex case. */
	snprintf(text, sizeof(text), "%04x:%02x:%02x.%x", b.domain, b.bus, b.device, b.function);
	FUZZ_CHECK(!strcasecmp(text, s));
}

/* Every name made is a plain name; a refused list leaves nothing behind, and says why. */
static void host_list(const char *s)
{
	struct host_list list = { 0 };
	struct strbuf err = STRBUF_INIT;

	if (host_list_parse(s, &list, &err) == 0) {
		FUZZ_CHECK(list.nr >= 1 && list.nr <= HOST_LIST_MAX);
		for (size_t i = 0; i < list.nr; i++)
			FUZZ_CHECK(*list.hosts[i].name && !strpbrk(list.hosts[i].name, "[],"));
	} else {
		FUZZ_CHECK(list.nr == 0 && err.len > 0);
	}
	host_list_release(&list);
	strbuf_release(&err);
}

/* A plan read is one writer at most, its node among nodes[], and reads back the same. */
static void storage_conf(const char *s)
{
	struct storage_conf conf, again;
	struct strbuf err = STRBUF_INIT, text = STRBUF_INIT, text2 = STRBUF_INIT;
	size_t writers = 0;

	if (storage_conf_parse(&conf, s, strlen(s), "F", &err) < 0) {
		FUZZ_CHECK(conf.nr_nodes == 0 && err.len > 0);
		goto out;
	}
	for (size_t i = 0; i < conf.nr_nodes; i++)
		writers += conf.nodes[i].access == STORAGE_ACCESS_RW;
	FUZZ_CHECK(writers <= 1 && storage_conf_this_node(&conf));
	FUZZ_CHECK(nvme_nqn_valid(conf.nqn));
	json_t *j = storage_conf_to_json(&conf);
	json_to_strbuf(j, &text);
	json_decref(j);
	FUZZ_CHECK(storage_conf_parse(&again, text.buf, text.len, "again", &err) == 0);
	j = storage_conf_to_json(&again);
	json_to_strbuf(j, &text2);
	json_decref(j);
	FUZZ_CHECK(streq(text.buf, text2.buf));
	storage_conf_release(&again);
	storage_conf_release(&conf);
out:
	strbuf_release(&err);
	strbuf_release(&text);
	strbuf_release(&text2);
}

/*
 * A unit name of systemd's characters only, one name per mount point; the
 * plan's file name is the unit's escaped path, for the same mount points.
 */
static void storage_unit(const char *s)
{
	struct strbuf name = STRBUF_INIT, file = STRBUF_INIT;

	if (storage_unit_name(s, &name) == 0) {
		FUZZ_CHECK(starts_with(name.buf, "sparkctl-nvme-"));
		FUZZ_CHECK(name.len > 22 && streq(name.buf + name.len - 8, ".service"));
		for (const char *p = name.buf; *p; p++)
			FUZZ_CHECK(isalnum((unsigned char)*p) || strchr(":_.\\-", *p));
		FUZZ_CHECK(storage_conf_file_name(s, &file) == 0);
		FUZZ_CHECK(file.len == name.len - 22 + 5 && !strchr(file.buf, '/') &&
			   !strncmp(file.buf, name.buf + 14, name.len - 22) &&
			   streq(file.buf + file.len - 5, ".json"));
	} else {
		FUZZ_CHECK(name.len == 0);
		FUZZ_CHECK(storage_conf_file_name(s, &file) < 0 && file.len == 0);
	}
	strbuf_release(&name);
	strbuf_release(&file);
}

/* nvme discover's log: every record has its fields; a refused log says why and holds none. */
static void nvme_discover(const char *s, bool json)
{
	struct nvme_discovery_log log;
	struct strbuf err = STRBUF_INIT, nqns = STRBUF_INIT;
	int r;

	nvme_discovery_log_init(&log);
	r = json ? nvme_discover_parse_json(s, strlen(s), &log, &err)
		 : nvme_discover_parse_text(s, strlen(s), &log, &err);
	if (r == 0) {
		for (size_t i = 0; i < log.nr; i++)
			FUZZ_CHECK(log.records[i].subnqn && log.records[i].traddr &&
				   log.records[i].trsvcid && log.records[i].subtype);
		nvme_discovery_nqns(&log, &nqns);
		FUZZ_CHECK(nqns.len > 0);
	} else {
		FUZZ_CHECK(log.nr == 0 && err.len > 0);
	}
	nvme_discovery_log_release(&log);
	strbuf_release(&err);
	strbuf_release(&nqns);
}

static void nvme_list_subsys(const char *s)
{
	struct nvme_subsys_list l;
	struct strbuf err = STRBUF_INIT;

	nvme_subsys_list_init(&l);
	if (nvme_list_subsys_parse(s, strlen(s), &l, &err) == 0) {
		FUZZ_CHECK(l.hostnqn != NULL);
		for (size_t i = 0; i < l.nr; i++) {
			FUZZ_CHECK(nvme_subsys_count_paths(&l.v[i], NULL, NULL, false) <=
				   l.v[i].nr_paths);
			for (size_t j = 0; j < l.v[i].nr_paths; j++)
				FUZZ_CHECK(l.v[i].paths[j].state && l.v[i].paths[j].name);
		}
	} else {
		FUZZ_CHECK(l.nr == 0 && err.len > 0);
	}
	nvme_subsys_list_release(&l);
	strbuf_release(&err);
}

/* Every value found is one without a separator; a refused address leaves nothing. */
static void nvme_address(const char *s)
{
	struct nvme_address a;

	if (nvme_address_parse(s, &a) < 0) {
		FUZZ_CHECK(!a.traddr && !a.trsvcid && !a.src_addr && !a.host_traddr &&
			   !a.host_iface);
		return;
	}
	FUZZ_CHECK(!a.traddr || !strpbrk(a.traddr, ",\n"));
	FUZZ_CHECK(!a.src_addr || !strpbrk(a.src_addr, ",\n"));
	nvme_address_release(&a);
}

/* A namespace's device is the entry without its "c<controller>", and parses as itself. */
static void nvme_namespace(const char *s)
{
	struct strbuf dev = STRBUF_INIT, again = STRBUF_INIT;

	if (nvme_namespace_device(s, &dev) == 0) {
		FUZZ_CHECK(dev.len <= strlen(s) && !strncmp(dev.buf, "nvme", 4));
		FUZZ_CHECK(nvme_namespace_device(dev.buf, &again) == 0 &&
			   streq(again.buf, dev.buf));
	}
	strbuf_release(&dev);
	strbuf_release(&again);
}

/* The first line is the mount point to find; the rest the table. */
static void mount_table(const char *s)
{
	const char *nl = strchr(s, '\n');
	struct mount_line m;
	char *dir;

	if (!nl)
		return;
	dir = fuzz_strndup((const uint8_t *)s, (size_t)(nl - s));
	if (mount_table_find(nl + 1, strlen(nl + 1), dir, &m) == 1) {
		FUZZ_CHECK(m.spec && m.dir && m.fs && m.options && streq(m.dir, dir));
		(void)mount_has_option(m.options, "nofail");
	} else {
		FUZZ_CHECK(!m.spec && !m.dir);
	}
	mount_line_release(&m);
	free(dir);
}

static void nvme_hostnqn(const char *s)
{
	struct strbuf nqn = STRBUF_INIT, path = STRBUF_INIT;

	if (nvme_hostnqn_parse(s, strlen(s), &nqn) == 0)
		FUZZ_CHECK(nqn.len && !strchr(nqn.buf, '\n') &&
			   !isspace((unsigned char)nqn.buf[0]));
	/* The by-uuid link of the same text resolves to an absolute path without "..". */
	by_uuid_target_path(s, &path);
	FUZZ_CHECK(path.buf[0] == '/' && !strstr(path.buf, "/../") && !strstr(path.buf, "//"));
	strbuf_release(&nqn);
	strbuf_release(&path);
}

/*
 * scontrol show node -o (doctor --slurm-health): a node's name and state
 * are one word each, a reason is never empty nor more than one line,
 * DRAIN is read from State alone; another's reason is never lifted.  The
 * text as a failed check's message makes a bounded reason of printable
 * ASCII without quotes, which is sparkctl's own.
 */
static void slurm_node_line(const char *s)
{
	struct slurm_node_show n;
	struct strbuf reason = STRBUF_INIT;
	char *message = xstrdup(s);
	struct finding fail = { .check_id = "fabric.twins",
				.status = CHECK_FAIL,
				.message = message };
	struct findings f = { .items = &fail, .nr = 1 };

	FUZZ_CHECK(slurm_health_reason(&f, &reason) == 1);
	FUZZ_CHECK(reason.len <= SLURM_HEALTH_REASON_MAX &&
		   starts_with(reason.buf, SLURM_HEALTH_MARK " fabric.twins"));
	for (size_t i = 0; i < reason.len; i++)
		FUZZ_CHECK(reason.buf[i] >= 0x20 && reason.buf[i] < 0x7f &&
			   !strchr("\"'\\`", reason.buf[i]));
	if (slurm_node_show_parse(s, strlen(s), &n) == 0) {
		FUZZ_CHECK(*n.name && !strchr(n.name, ' ') && *n.state && !strchr(n.state, ' '));
		FUZZ_CHECK(!n.reason || (*n.reason && !strchr(n.reason, '\n')));
		FUZZ_CHECK(!n.drain || strstr(n.state, "DRAIN"));
		FUZZ_CHECK(!n.down || starts_with(n.state, "DOWN"));
		if (n.reason && !starts_with(n.reason, SLURM_HEALTH_MARK)) {
			FUZZ_CHECK(slurm_health_decide(NULL, &n) == SLURM_HEALTH_NOT_OURS);
			FUZZ_CHECK(slurm_health_decide(reason.buf, &n) == SLURM_HEALTH_NOT_OURS);
		}
		if (!n.reason)
			FUZZ_CHECK(slurm_health_decide(reason.buf, &n) == SLURM_HEALTH_DRAIN);
		slurm_node_show_release(&n);
	}
	strbuf_release(&reason);
	free(message);
}

/* fio's JSON report (storage bench): figures never negative, a refusal says why. */
static void fio_report(const char *s)
{
	struct strbuf err = STRBUF_INIT;
	struct fio_result r;

	for (int writes = 0; writes < 2; writes++) {
		fio_result_init(&r);
		if (fio_result_parse(s, strlen(s), writes, &r, &err) == 0) {
			FUZZ_CHECK(r.bw_bytes >= 0 && r.iops >= 0 && r.error >= 0 &&
				   r.error < 4096);
			FUZZ_CHECK(r.clat_p99_us >= 0 || r.clat_p99_us == -1);
		} else {
			FUZZ_CHECK(err.len > 0);
		}
		fio_result_release(&r);
		strbuf_reset(&err);
	}
	strbuf_release(&err);
}

/* A build id, when found, is hex of at most ELF_BUILD_ID_MAX bytes. */
static void elf_note(const uint8_t *data, size_t size)
{
	struct strbuf id = STRBUF_INIT;

	if (elf_gnu_build_id(data, size, &id) == 0)
		FUZZ_CHECK(id.len >= 2 && id.len <= 2 * ELF_BUILD_ID_MAX &&
			   strspn(id.buf, "0123456789abcdef") == id.len);
	else
		FUZZ_CHECK(id.len == 0);
	strbuf_release(&id);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size == 0)
		return 0;
	s = fuzz_strndup(data + 1, size - 1);
	switch ((enum parser)(data[0] % NR_PARSERS)) {
	case P_PORT_STATE:
		port_state(s);
		break;
	case P_PORT_RATE:
		port_rate(s);
		break;
	case P_GID:
		gid(s);
		break;
	case P_GID_TYPE:
		gid_type(s);
		break;
	case P_LINK_SPEED:
		link_speed(s);
		break;
	case P_AER_TOTAL:
		aer_total(s);
		break;
	case P_MEMINFO:
		meminfo(s);
		break;
	case P_MODULES:
		modules(s);
		break;
	case P_OS_RELEASE:
		os_release(s);
		break;
	case P_NVIDIA_VERSION:
		nvidia_version(s);
		break;
	case P_NCCL_CONF:
		nccl_conf(s);
		break;
	case P_DEFAULT_ROUTES:
		default_routes(s);
		break;
	case P_BDF:
		bdf(s);
		break;
	case P_HOST_LIST:
		host_list(s);
		break;
	case P_STORAGE_CONF:
		storage_conf(s);
		break;
	case P_STORAGE_UNIT_NAME:
		storage_unit(s);
		break;
	case P_NVME_DISCOVER_JSON:
		nvme_discover(s, true);
		break;
	case P_NVME_DISCOVER_TEXT:
		nvme_discover(s, false);
		break;
	case P_NVME_LIST_SUBSYS:
		nvme_list_subsys(s);
		break;
	case P_NVME_ADDRESS:
		nvme_address(s);
		break;
	case P_NVME_NAMESPACE:
		nvme_namespace(s);
		break;
	case P_MOUNT_TABLE:
		mount_table(s);
		break;
	case P_NVME_HOSTNQN:
		nvme_hostnqn(s);
		break;
	case P_FIO_REPORT:
		fio_report(s);
		break;
	case P_SLURM_NODE_SHOW:
		slurm_node_line(s);
		break;
	case P_ELF_NOTE:
		elf_note(data + 1, size - 1);
		break;
	case NR_PARSERS:
		break;
	}
	free(s);
	return 0;
}
