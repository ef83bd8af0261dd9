/*
 * discover.c - which interfaces to ask on, and what the replies say
 * (discover.h).  Pure: the sockets are in mdns.c and scan.c.
 */
#include "sparkctl.h"

#include "discover/discover.h"
#include "inventory/derive.h"
#include "lib/xalloc.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <strings.h>

static void set_error(struct discover_result *out, const char *fmt, ...) ATTR_PRINTF(2, 3);
static void set_error(struct discover_result *out, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	free(out->error);
	out->error = strbuf_detach(&sb, NULL);
}

static const char *first_ipv4(const struct inv_netdev *n)
{
	for (size_t i = 0; i < n->nr_addrs; i++)
		if (n->addrs[i].family == AF_INET)
			return n->addrs[i].address;
	return NULL;
}

static bool netdev_up(const struct inv_netdev *n)
{
	return n->operstate && (streq(n->operstate, "up") || streq(n->operstate, "unknown"));
}

static void add_iface(struct discover_result *out, const struct inv_netdev *n)
{
	for (size_t i = 0; i < out->nr_ifaces; i++)
		if (streq(out->ifaces[i].name, n->name))
			return;
	struct discover_iface *d = ARRAY_PUSH(out->ifaces, out->nr_ifaces);
	d->name = xstrdup(n->name);
	d->address = xstrdup(first_ipv4(n));
}

static const struct inv_netdev *netdev_named(const struct inventory *inv, const char *name)
{
	for (size_t i = 0; i < inv->nr_netdevs; i++)
		if (streq(inv->netdevs[i].name, name))
			return &inv->netdevs[i];
	return NULL;
}

/* The fabric ports' netdevs that are up with an IPv4 address. */
static void add_fabric(const struct inventory *inv, struct discover_result *out)
{
	for (size_t i = 0; i < inv->nr_rdma; i++) {
		const struct inv_rdma_dev *d = &inv->rdma[i];
		for (size_t k = 0; k < d->nr_ports; k++) {
			const struct inv_netdev *n;
			if (!port_is_fabric(inv, d, &d->ports[k]))
				continue;
			n = rdma_port_netdev(inv, d, &d->ports[k]);
			if (n && netdev_up(n) && first_ipv4(n))
				add_iface(out, n);
		}
	}
}

static int choose_listed(const struct discover_request *req, struct discover_result *out)
{
	if (!req->iface_names || !req->iface_names->nr) {
		set_error(out, "--iface names no interface");
		return -EINVAL;
	}
	for (size_t i = 0; i < req->iface_names->nr; i++) {
		const char *name = req->iface_names->v[i];
		const struct inv_netdev *n = netdev_named(req->inv, name);
		if (!n) {
			set_error(out, "no interface %s on this node", name);
			return -EINVAL;
		}
		if (!first_ipv4(n)) {
			set_error(out, "%s has no IPv4 address to send the query from", name);
			return -ENODEV;
		}
		add_iface(out, n);
	}
	out->chosen_by = "--iface";
	return 0;
}

int discover_choose_ifaces(const struct discover_request *req, struct discover_result *out)
{
	const struct inventory *inv = req->inv;

	if (req->which == DISCOVER_IFACES_LIST)
		return choose_listed(req, out);
	if (req->which != DISCOVER_IFACES_MGMT) {
		add_fabric(inv, out);
		out->chosen_by = "fabric";
	}
	if (req->which == DISCOVER_IFACES_MGMT) {
		for (size_t i = 0; i < inv->nr_netdevs; i++)
			if (inv->netdevs[i].default_route == TRI_YES &&
			    first_ipv4(&inv->netdevs[i]))
				add_iface(out, &inv->netdevs[i]);
		out->chosen_by = "mgmt";
	} else if (req->which == DISCOVER_IFACES_DEFAULT && !out->nr_ifaces) {
		for (size_t i = 0; i < inv->nr_netdevs; i++) {
			const struct inv_netdev *n = &inv->netdevs[i];
			if (!streq(n->name, "lo") && netdev_up(n) && first_ipv4(n))
				add_iface(out, n);
		}
		out->chosen_by = "up";
	}
	if (!out->nr_ifaces) {
		set_error(out, "%s",
			  req->which == DISCOVER_IFACES_FABRIC
				  ? "no fabric port is up with an IPv4 address"
			  : req->which == DISCOVER_IFACES_MGMT
				  ? "no interface with an IPv4 address carries the default route"
				  : "no interface other than lo is up with an IPv4 address");
		return -ENODEV;
	}
	return 0;
}

/* A record of the given type and name in the replies, first found; its reply in *which. */
static const struct dns_rr *find_rr(const struct discover_reply *replies, size_t nr, uint16_t type,
				    const char *name, size_t *which)
{
	for (size_t i = 0; i < nr; i++)
		for (size_t k = 0; k < replies[i].msg.nr_records; k++) {
			const struct dns_rr *rr = &replies[i].msg.records[k];
			if (rr->type == type && dns_name_eq(rr->name, name)) {
				if (which)
					*which = i;
				return rr;
			}
		}
	return NULL;
}

/*
 * The same, from the reply of the PTR that named it when that reply has
 * it (so two answers of one name with different ids stay apart), else
 * from any.
 */
static const struct dns_rr *find_rr_from(const struct discover_reply *replies, size_t nr,
					 size_t prefer, uint16_t type, const char *name,
					 size_t *which)
{
	const struct dns_rr *rr = find_rr(replies + prefer, 1, type, name, NULL);

	if (rr) {
		*which = prefer;
		return rr;
	}
	return find_rr(replies, nr, type, name, which);
}

static void push_unique(struct strvec *sv, const char *s)
{
	if (s && !strvec_contains(sv, s))
		strvec_push(sv, s);
}

/* "spark1" of "spark1.local". */
static char *short_name(const char *target)
{
	struct strbuf label = STRBUF_INIT;
	const char *rest;

	dns_first_label(target, &label, &rest);
	return strbuf_detach(&label, NULL);
}

static struct discover_host *host_by_id(struct discover_result *out, const char *id)
{
	for (size_t i = 0; i < out->nr_hosts; i++)
		if (out->hosts[i].id && streq(out->hosts[i].id, id))
			return &out->hosts[i];
	return NULL;
}

static struct discover_host *host_by_name(struct discover_result *out, const char *name)
{
	for (size_t i = 0; i < out->nr_hosts; i++)
		for (size_t k = 0; k < out->hosts[i].names.nr; k++)
			if (dns_name_eq(out->hosts[i].names.v[k], name))
				return &out->hosts[i];
	return NULL;
}

struct discover_host *discover_add_host(struct discover_result *out)
{
	struct discover_host *h = ARRAY_PUSH(out->hosts, out->nr_hosts);

	memset(h, 0, sizeof(*h));
	strvec_init(&h->names);
	strvec_init(&h->instances);
	strvec_init(&h->services);
	strvec_init(&h->addresses);
	strvec_init(&h->ifaces);
	strvec_init(&h->fabric);
	return h;
}

static struct discover_host *new_host(struct discover_result *out, const char *target,
				      const char *id)
{
	struct discover_host *h = discover_add_host(out);

	h->host = short_name(target);
	h->id = xstrdup_or_null(id);
	return h;
}

static void add_fabric_txt(struct discover_host *h, const char *list)
{
	const char *p = list;

	while (p && *p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len) {
			char *a = xstrndup(p, len);
			push_unique(&h->fabric, a);
			free(a);
		}
		p = comma ? comma + 1 : NULL;
	}
}

/* The addresses of the host name target, IPv4 first. */
static void add_addresses(const struct discover_reply *replies, size_t nr, const char *target,
			  struct discover_host *h)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < nr; i++)
			for (size_t k = 0; k < replies[i].msg.nr_records; k++) {
				const struct dns_rr *rr = &replies[i].msg.records[k];
				char text[INET6_ADDRSTRLEN];
				uint16_t type = pass ? DNS_TYPE_AAAA : DNS_TYPE_A;
				if (rr->type != type || !dns_name_eq(rr->name, target))
					continue;
				inet_ntop(pass ? AF_INET6 : AF_INET, rr->addr, text, sizeof(text));
				push_unique(&h->addresses, text);
			}
}

static bool from_this_host(const struct discover_result *out, const char *from)
{
	for (size_t i = 0; i < out->nr_ifaces; i++)
		if (out->ifaces[i].address && streq(out->ifaces[i].address, from))
			return true;
	return false;
}

/* The service of an instance name: "_ssh._tcp" of "spark1._ssh._tcp.local". */
static char *service_of(const char *instance)
{
	struct strbuf label = STRBUF_INIT, sb = STRBUF_INIT;
	const char *rest;
	size_t len;

	dns_first_label(instance, &label, &rest);
	strbuf_addstr(&sb, rest);
	len = sb.len;
	if (len > 6 && strcasecmp(sb.buf + len - 6, ".local") == 0)
		strbuf_setlen(&sb, len - 6);
	strbuf_release(&label);
	return strbuf_detach(&sb, NULL);
}

/* One instance that a PTR named, with what its SRV and TXT say. */
static void merge_instance(const struct discover_reply *replies, size_t nr, size_t seen_in,
			   const char *instance, bool with_id, struct discover_result *out)
{
	size_t srv_in = 0, txt_in = 0;
	const struct dns_rr *srv =
		find_rr_from(replies, nr, seen_in, DNS_TYPE_SRV, instance, &srv_in);
	const struct dns_rr *txt =
		find_rr_from(replies, nr, seen_in, DNS_TYPE_TXT, instance, &txt_in);
	const char *id = txt ? dns_txt_value(txt, "id") : NULL;
	struct discover_host *h = NULL;
	struct strbuf label = STRBUF_INIT;
	const char *rest;
	char *service;

	if (id && !*id)
		id = NULL;
	if (!srv || (id != NULL) != with_id)
		goto out;
	if (id)
		h = host_by_id(out, id);
	if (!h && !id)
		h = host_by_name(out, srv->target);
	if (!h)
		h = new_host(out, srv->target, id);
	push_unique(&h->names, srv->target);
	dns_first_label(instance, &label, &rest);
	push_unique(&h->instances, label.buf);
	service = service_of(instance);
	push_unique(&h->services, service);
	free(service);
	if (!h->port)
		h->port = srv->port;
	if (txt && !h->version)
		h->version = xstrdup_or_null(dns_txt_value(txt, "ver"));
	if (txt)
		add_fabric_txt(h, dns_txt_value(txt, "fabric"));
	for (size_t i = 0; i < out->nr_ifaces; i++)
		if (i == replies[seen_in].iface || i == replies[srv_in].iface)
			push_unique(&h->ifaces, out->ifaces[i].name);
	h->this_host = h->this_host || from_this_host(out, replies[seen_in].from);
	add_addresses(replies, nr, srv->target, h);
out:
	strbuf_release(&label);
}

static bool asked_service(const struct discover_result *out, const char *ptr_name)
{
	for (size_t i = 0; i < out->services.nr; i++) {
		struct strbuf sb = STRBUF_INIT;
		bool eq;
		strbuf_addf(&sb, "%s.local", out->services.v[i]);
		eq = dns_name_eq(sb.buf, ptr_name);
		strbuf_release(&sb);
		if (eq)
			return true;
	}
	return false;
}

/* Every instance named by a PTR of a service asked for, once. */
static void merge_pass(const struct discover_reply *replies, size_t nr, bool with_id,
		       struct discover_result *out)
{
	struct strvec done = STRVEC_INIT;

	for (size_t i = 0; i < nr; i++)
		for (size_t k = 0; k < replies[i].msg.nr_records; k++) {
			const struct dns_rr *rr = &replies[i].msg.records[k];
			if (rr->type != DNS_TYPE_PTR || !rr->target ||
			    !asked_service(out, rr->name))
				continue;
			/* seen on every interface it came from: merged once per reply */
			merge_instance(replies, nr, i, rr->target, with_id, out);
			push_unique(&done, rr->target);
		}
	strvec_clear(&done);
}

/* Two hosts of one name with different ids: a finding. */
static void find_id_conflicts(struct discover_result *out)
{
	for (size_t i = 0; i < out->nr_hosts; i++)
		for (size_t j = i + 1; j < out->nr_hosts; j++) {
			const struct discover_host *a = &out->hosts[i], *b = &out->hosts[j];
			if (!a->id || !b->id)
				continue;
			for (size_t k = 0; k < a->names.nr; k++)
				if (strvec_contains(&b->names, a->names.v[k]))
					strvec_pushf(&out->findings,
						     "%s answers with two node ids, %s and %s: two "
						     "nodes use one name, or a node's id changed",
						     a->names.v[k], a->id, b->id);
		}
}

/* "spark1-2.local" of "spark1": avahi's name after a conflict (HOSTNAME-N). */
static bool renamed_from(const char *name, const char *hostname)
{
	size_t hl = strlen(hostname);
	const char *p = name + hl;

	if (strncasecmp(name, hostname, hl) != 0 || p[0] != '-' || !isdigit((unsigned char)p[1]))
		return false;
	for (p++; isdigit((unsigned char)*p); p++)
		;
	return dns_name_eq(p, ".local") || strcasecmp(p, ".local.") == 0;
}

/* avahi's name churn, seen from this node. */
static void find_name_churn(const char *hostname, struct discover_result *out)
{
	struct strbuf own = STRBUF_INIT;

	if (!hostname || !*hostname)
		return;
	strbuf_addf(&own, "%s.local", hostname);
	for (size_t i = 0; i < out->nr_hosts; i++) {
		const struct discover_host *h = &out->hosts[i];
		for (size_t k = 0; k < h->names.nr; k++) {
			const char *n = h->names.v[k];
			if (h->this_host && renamed_from(n, hostname))
				strvec_pushf(
					&out->findings,
					"avahi calls this node %s, not %s: it met a name conflict "
					"(another host of that name, or this node seen twice on "
					"one "
					"link, as through NetworkManager's DHCP profiles on the "
					"CX-7 "
					"ports); fix the cause and restart avahi-daemon",
					n, own.buf);
			else if (!h->this_host && dns_name_eq(n, own.buf))
				strvec_pushf(
					&out->findings,
					"another host (%s) answers as %s, this node's name: avahi "
					"renames one of them; give each node its own host name",
					h->addresses.nr ? h->addresses.v[0] : "no address", n);
		}
	}
	strbuf_release(&own);
}

static int host_cmp(const void *a, const void *b)
{
	const struct discover_host *x = a, *y = b;
	int c = strcmp(x->host, y->host);

	return c ? c : strcmp(x->id ? x->id : "", y->id ? y->id : "");
}

void discover_merge(const struct discover_reply *replies, size_t nr, const char *hostname,
		    struct discover_result *out)
{
	/* ids first, so a name-only _ssh._tcp answer joins the node it belongs to */
	merge_pass(replies, nr, true, out);
	merge_pass(replies, nr, false, out);
	for (size_t i = 0; i < nr; i++)
		for (size_t k = 0; k < replies[i].msg.nr_records; k++) {
			const struct dns_rr *rr = &replies[i].msg.records[k];
			if (rr->type == DNS_TYPE_PTR && rr->target &&
			    asked_service(out, rr->name) &&
			    !find_rr(replies, nr, DNS_TYPE_SRV, rr->target, NULL)) {
				struct strbuf sb = STRBUF_INIT;
				strbuf_addf(&sb,
					    "%s (from %s) answered no SRV record: no host name",
					    rr->target, replies[i].from);
				if (!strvec_contains(&out->findings, sb.buf))
					strvec_push(&out->findings, sb.buf);
				strbuf_release(&sb);
			}
		}
	find_id_conflicts(out);
	find_name_churn(hostname, out);
	if (out->nr_hosts > 1)
		qsort(out->hosts, out->nr_hosts, sizeof(*out->hosts), host_cmp);
}

void discover_result_init(struct discover_result *out)
{
	memset(out, 0, sizeof(*out));
	strvec_init(&out->services);
	strvec_init(&out->findings);
}

void discover_result_release(struct discover_result *out)
{
	for (size_t i = 0; i < out->nr_ifaces; i++) {
		free(out->ifaces[i].name);
		free(out->ifaces[i].address);
	}
	for (size_t i = 0; i < out->nr_hosts; i++) {
		struct discover_host *h = &out->hosts[i];
		free(h->host);
		free(h->id);
		free(h->version);
		strvec_clear(&h->names);
		strvec_clear(&h->instances);
		strvec_clear(&h->services);
		strvec_clear(&h->addresses);
		strvec_clear(&h->ifaces);
		strvec_clear(&h->fabric);
	}
	free(out->ifaces);
	free(out->hosts);
	strvec_clear(&out->services);
	strvec_clear(&out->findings);
	free(out->error);
	discover_result_init(out);
}
