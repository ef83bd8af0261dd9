/*
 * nvme_cli.h - what nvme-cli 2.x prints, parsed: the discovery log of
 * 'nvme discover' (-o json, and its text form), the subsystems and paths
 * of 'nvme list-subsys -o json', and a path's Address string.
 *
 *   discover -o json:  {"genctr":G,"records":[{"trtype":"tcp","adrfam":"ipv4",
 *                       "subtype":"nvme subsystem","treq":"...","portid":1,
 *                       "trsvcid":"4420","subnqn":"nqn...","traddr":"127.0.0.1",...}]}
 *   discover (text):   "Discovery Log Number of Records N, Generation counter G",
 *                       then per entry "=====Discovery Log Entry i======" and
 *                       "key: value" lines of the same names
 *   list-subsys -o json: {"HostNQN","HostID","Subsystems":[{"Name","NQN",
 *                       "Paths":[{"Name","Transport","Address","State"}]}]},
 *                       or an array of such objects (nvme-cli 2.3: one per host)
 *   Address:           "traddr=A,trsvcid=P,src_addr=S" (also host_traddr, host_iface)
 *
 * Parsers are pure; they return 0 or -EINVAL with a message in err, and
 * keep strings as printed (escape them for a terminal).
 */
#ifndef SPARKCTL_NVME_CLI_H
#define SPARKCTL_NVME_CLI_H

#include "sparkctl.h"
#include "lib/strbuf.h"
#include "probe/nvme.h" /* nvme_address_parse(): the Address of list-subsys is sysfs' address */

/* The subtype of a record that is an NVM subsystem (not a discovery controller). */
#define NVME_SUBTYPE_NVM "nvme subsystem"

struct nvme_discovery_record {
	char *trtype, *adrfam, *subtype, *trsvcid, *subnqn, *traddr; /* "" when absent */
	int64_t portid;						     /* -1 when absent */
};

struct nvme_discovery_log {
	int64_t genctr; /* -1 when absent */
	struct nvme_discovery_record *records;
	size_t nr;
};

void nvme_discovery_log_init(struct nvme_discovery_log *log);
void nvme_discovery_log_release(struct nvme_discovery_log *log);
int nvme_discover_parse_json(const char *text, size_t len, struct nvme_discovery_log *log,
			     struct strbuf *err);
int nvme_discover_parse_text(const char *text, size_t len, struct nvme_discovery_log *log,
			     struct strbuf *err);
/* Whether the log offers nqn as an NVM subsystem. */
bool nvme_discovery_offers(const struct nvme_discovery_log *log, const char *nqn);
/* The NVM subsystems the log offers, ", " between them ("none" when it offers none). */
void nvme_discovery_nqns(const struct nvme_discovery_log *log, struct strbuf *out);

struct nvme_path {
	char *name, *transport, *address, *state; /* "" when absent */
	struct nvme_address addr;		  /* address, parsed */
};

struct nvme_subsystem {
	char *name, *nqn;
	struct nvme_path *paths;
	size_t nr_paths;
};

struct nvme_subsys_list {
	char *hostnqn; /* "" when absent */
	struct nvme_subsystem *v;
	size_t nr;
};

void nvme_subsys_list_init(struct nvme_subsys_list *l);
void nvme_subsys_list_release(struct nvme_subsys_list *l);
/*
 * list-subsys -o json: an object or an array of them (their subsystems
 * joined).  Empty output (nvme-cli prints nothing without subsystems) is
 * an empty list.
 */
int nvme_list_subsys_parse(const char *text, size_t len, struct nvme_subsys_list *l,
			   struct strbuf *err);
/* The subsystem of l called nqn, or NULL. */
const struct nvme_subsystem *nvme_subsys_find(const struct nvme_subsys_list *l, const char *nqn);
/* Whether p goes over tcp to traddr:trsvcid (either NULL: any). */
bool nvme_path_to(const struct nvme_path *p, const char *traddr, const char *trsvcid);
/*
 * The paths of s over tcp to traddr:trsvcid (either NULL: any; IPv6
 * addresses compared as addresses); live: only those "live".
 */
size_t nvme_subsys_count_paths(const struct nvme_subsystem *s, const char *traddr,
			       const char *trsvcid, bool live);

#endif
