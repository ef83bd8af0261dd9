/*
 * discover.h - finding the other Sparks: a one-shot mDNS/DNS-SD query on
 * chosen interfaces (discover_run()), or a TCP sweep of port 22 over a
 * small subnet (discover_scan()).
 *
 * The query is RFC 6762's legacy unicast: a PTR question for each
 * service is sent to 224.0.0.251:5353 from an ordinary (ephemeral) port
 * of a socket bound to the interface's IPv4 address, with
 * IP_MULTICAST_IF naming it; a responder (avahi-daemon) answers by
 * unicast to that port, with the PTR and, as additional records, the
 * instance's SRV and TXT and the host's A.  Whatever is missing is asked
 * for once (SRV and TXT of an instance, A of a host) on the same socket.
 * No daemon, no D-Bus, nothing bound to port 5353.  Replies are collected
 * until the timeout.
 *
 * Hosts are merged by the TXT id= of _sparkctl._tcp first (so a node that
 * avahi renamed on one interface is still one node), then by the host
 * name; a host seen on two interfaces is one host with both.  A host name
 * that answers with two different ids, or a reply that cannot be parsed,
 * is a finding, not a failure.
 */
#ifndef SPARKCTL_DISCOVER_H
#define SPARKCTL_DISCOVER_H

#include "sparkctl.h"
#include "discover/dns.h"
#include "inventory/inventory.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

#define DISCOVER_SCHEMA_VERSION	    1
#define DISCOVER_DEFAULT_TIMEOUT_MS 1000
/* --scan refuses a larger subnet than a /22 (1024 addresses). */
#define DISCOVER_SCAN_MIN_PREFIX    22

enum discover_ifaces {
	DISCOVER_IFACES_DEFAULT, /* fabric ports up with IPv4, else every up interface */
	DISCOVER_IFACES_LIST,	 /* the names of request.iface_names */
	DISCOVER_IFACES_FABRIC,	 /* the fabric ports (inventory/derive.h: port_is_fabric()) */
	DISCOVER_IFACES_MGMT,	 /* the interface of the default route */
};

struct discover_request {
	const struct inventory *inv; /* this node: its interfaces and addresses */
	enum discover_ifaces which;
	const struct strvec *iface_names; /* DISCOVER_IFACES_LIST */
	/* "_ssh._tcp", "_sparkctl._tcp" (without ".local"); none: both */
	const struct strvec *services;
	unsigned timeout_ms; /* 0: DISCOVER_DEFAULT_TIMEOUT_MS */
};

struct discover_iface {
	char *name;
	char *address; /* its first IPv4 address */
};

struct discover_host {
	char *host;		 /* the host name without .local */
	struct strvec names;	 /* the .local names it answered with (SRV targets) */
	struct strvec instances; /* DNS-SD instance names */
	struct strvec services;	 /* _ssh._tcp, _sparkctl._tcp */
	struct strvec addresses; /* IPv4 then IPv6, as text */
	struct strvec ifaces;	 /* where it was seen */
	char *id;		 /* TXT id= (NULL: none) */
	char *version;		 /* TXT ver= */
	struct strvec fabric;	 /* TXT fabric= */
	unsigned port;		 /* SRV port (of the first service) */
	bool this_host;		 /* answered from an address of this node */
};

struct discover_result {
	struct discover_iface *ifaces; /* the interfaces asked on */
	size_t nr_ifaces;
	const char *chosen_by; /* "--iface", "fabric", "mgmt", "up" */
	struct strvec services;
	struct discover_host *hosts;
	size_t nr_hosts;
	struct strvec findings; /* warnings: bad replies, a host with two ids */
	char *error;		/* why discover_run() failed */
};

void discover_result_init(struct discover_result *out);
/* A new, empty host at the end of out->hosts. */
struct discover_host *discover_add_host(struct discover_result *out);

/*
 * Ask, collect, merge into out (discover_result_init() first).  0 (also
 * when nothing answered), -ENODEV when no interface fits the request,
 * -EINVAL for a bad request (an interface this node does not have),
 * another -errno for a socket that cannot be made; out->error says why.
 * The caller releases out in every case.
 */
int discover_run(const struct discover_request *req, struct discover_result *out);
void discover_result_release(struct discover_result *out);

/* The interfaces of req (pure, for the tests): 0, or -ENODEV/-EINVAL with out->error. */
int discover_choose_ifaces(const struct discover_request *req, struct discover_result *out);

/*
 * One reply as received: its records (owned), on which interface, from
 * which address.
 */
struct discover_reply {
	size_t iface;
	char from[48];
	struct dns_message msg;
};

/*
 * Merge the replies into out->hosts and out->findings (pure).  hostname
 * (this node's, may be NULL) finds avahi's name churn: this node answering
 * as "HOSTNAME-N.local" (avahi renamed it after a conflict), or another
 * host answering as "HOSTNAME.local".
 */
void discover_merge(const struct discover_reply *replies, size_t nr, const char *hostname,
		    struct discover_result *out);

/*
 * --scan: the addresses of cidr (at most a /22) that accept a TCP
 * connection on port 22 within timeout_ms, into out->hosts.  -E2BIG for
 * a larger subnet, -EINVAL for a CIDR that does not parse (out->error).
 */
int discover_scan(const char *cidr, unsigned timeout_ms, struct discover_result *out);

#endif
