/*
 * fuzz-parsers - the pure parsers of lib/host_text.h, parse_bdf() and
 * host_list_parse() (-H lists, Slurm's hostlists), and what nvme-cli prints
 * (storage/nvme_cli.h: discover, list-subsys, a path's Address).
 *
 * The first byte selects the parser (modulo their number), the rest is
 * the text.  Besides memory errors and leaks, each parser's documented
 * result range is checked, and GIDs and PCI addresses must survive a
 * format/parse round trip.
 */
#include "sparkctl.h"

#include <strings.h>

#include "fuzz.h"
#include "inventory/derive.h"
#include "inventory/inventory.h"
#include "lib/host_text.h"
#include "remote/hosts.h"
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
	P_NVME_DISCOVER_JSON,
	P_NVME_DISCOVER_TEXT,
	P_NVME_LIST_SUBSYS,
	P_NVME_ADDRESS,
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

static void nvme_address(const char *s)
{
	struct nvme_address a;

	if (nvme_address_parse(s, &a) < 0)
		return;
	FUZZ_CHECK(!a.traddr || !strchr(a.traddr, ','));
	nvme_address_release(&a);
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
	case NR_PARSERS:
		break;
	}
	free(s);
	return 0;
}
