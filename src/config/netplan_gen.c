#include "sparkctl.h"

#include <ctype.h>
#include <fnmatch.h>

#include "config/netplan_gen.h"
#include "lib/xalloc.h"

int netplan_parse_plan(const char *s, enum netplan_plan *ret)
{
	if (streq(s, "pair"))
		*ret = PLAN_PAIR;
	else if (streq(s, "switch"))
		*ret = PLAN_SWITCH;
	else if (streq(s, "ring"))
		*ret = PLAN_RING;
	else
		return -EINVAL;
	return 0;
}

const char *netplan_plan_name(enum netplan_plan p)
{
	return p == PLAN_PAIR ? "pair" : p == PLAN_SWITCH ? "switch" : "ring";
}

/* A rail's role: which physical port (in label order) and which half. */
struct role {
	const struct fabric_rail *rail;
	unsigned port; /* 0, 1, ... in label order */
	unsigned half;
};

static int cmp_role(const void *a, const void *b)
{
	const struct role *x = a, *y = b;

	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return (int)x->half - (int)y->half;
}

/* The /24 index of a role under the plan, for node i. */
static unsigned subnet_of(const struct netplan_options *o, const struct role *r, size_t position)
{
	if (o->plan != PLAN_RING)
		return (unsigned)position;
	/*
	 * Ring: node i's port 0 is cabled to node i+1's port 1; link i has one /24
	 * per twin.  Port 0 is on link i, port 1 on link i-1.
	 */
	unsigned link = r->port == 0 ? o->node : (o->node + o->nodes - 1) % o->nodes;
	return 2 * link + r->half;
}

/* Netplan takes interface names as YAML keys: keep to the characters Linux names use. */
static bool plain_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.')
			return false;
	return true;
}

static bool unicast_range(const struct cidr *c)
{
	unsigned first = c->addr >> 24;

	return first != 0 && first != 127 && first < 224;
}

static int check_base(const struct inventory *inv, const struct netplan *p, struct strbuf *err)
{
	const struct cidr *base = &p->opts.base;
	uint32_t first = cidr_network(base).addr;
	char text[19];
	unsigned need = 24;

	cidr_format(base, text);
	while (need > 0 && (1u << (24 - need)) < p->nr_subnets)
		need--;
	if (base->prefix > need) {
		strbuf_addf(err,
			    "--base %s is too small: the %s plan needs %zu /24 subnets (a /%u)",
			    text, netplan_plan_name(p->opts.plan), p->nr_subnets, need);
		return -EINVAL;
	}
	if (!unicast_range(base)) {
		strbuf_addf(err, "--base %s is not a unicast range for hosts", text);
		return -EINVAL;
	}
	/* The plan must not take addresses another network of this node uses. */
	for (size_t i = 0; i < inv->nr_netdevs; i++) {
		const struct inv_netdev *nd = &inv->netdevs[i];
		if (netplan_changes(p, nd->name))
			continue;
		for (size_t k = 0; k < nd->nr_addrs; k++) {
			struct cidr a = { 0, nd->addrs[k].prefix_len };
			if (ipv4_parse(nd->addrs[k].address, &a.addr) < 0)
				continue;
			for (size_t s = 0; s < p->nr_subnets; s++) {
				struct cidr sub = { first + ((uint32_t)s << 8), 24 };
				if (!cidr_overlaps(&sub, &a))
					continue;
				char at[19], st[19];
				cidr_format(&a, at);
				cidr_format(&sub, st);
				strbuf_addf(
					err,
					"--base %s: the plan's subnet %s overlaps %s of %s, which "
					"is not a fabric interface",
					text, st, at, nd->name);
				return -EINVAL;
			}
		}
	}
	return 0;
}

int netplan_build(const struct inventory *inv, const struct netplan_options *o, struct netplan *p,
		  struct strbuf *err)
{
	struct fabric f;
	struct role *roles = NULL;
	size_t nr_roles = 0;
	int r = -EINVAL;

	memset(p, 0, sizeof(*p));
	p->opts = *o;
	p->node_name = xstrdup(inv->sys.hostname ? inv->sys.hostname : "(unknown host)");
	fabric_build(inv, false, &f);

	/* Options that contradict each other whatever the host: -EDOM. */
	r = -EDOM;
	if (o->nodes < 2) {
		strbuf_addf(err, "--nodes must be at least 2, not %u", o->nodes);
		goto out;
	}
	if (o->node >= o->nodes) {
		strbuf_addf(err, "--node %u is out of range: nodes are numbered 0 to %u", o->node,
			    o->nodes - 1);
		goto out;
	}
	if ((o->plan == PLAN_PAIR && o->nodes != 2) || (o->plan == PLAN_RING && o->nodes != 3)) {
		strbuf_addf(err, "the %s plan is for %s nodes, not %u", netplan_plan_name(o->plan),
			    o->plan == PLAN_PAIR ? "2" : "3", o->nodes);
		goto out;
	}
	if (NETPLAN_HOST_OFFSET + o->nodes > 255) {
		strbuf_addf(err, "at most %d nodes fit the plan's /24 subnets",
			    255 - NETPLAN_HOST_OFFSET);
		goto out;
	}
	r = -ENODEV;
	if (!f.nr_rails || f.infiniband) {
		strbuf_addf(err, "%s has no ACTIVE RoCE fabric port to address%s", p->node_name,
			    f.infiniband ? " (its fabric is InfiniBand)"
					 : ": is the QSFP cable plugged in and the link up?");
		goto out;
	}
	r = -EINVAL;

	/* Roles: physical ports in label order, halves in PCI-domain order. */
	for (size_t i = 0; i < f.nr_rails; i++) {
		struct role *ro = ARRAY_PUSH(roles, nr_roles);
		ro->rail = &f.rails[i];
		ro->half = f.rails[i].half;
		ro->port = 0;
		for (size_t k = 0; k < f.nr_rails; k++)
			if (strcmp(f.rails[k].label, f.rails[i].label) < 0 && f.rails[k].half == 0)
				ro->port++;
	}
	qsort(roles, nr_roles, sizeof(*roles), cmp_role);
	if (o->plan == PLAN_RING && (nr_roles != 4 || roles[0].port != 0 || roles[1].port != 0 ||
				     roles[2].port != 1 || roles[3].port != 1)) {
		strbuf_addf(err,
			    "the ring plan needs both ports of %s cabled with both twins ACTIVE "
			    "(4 fabric netdevs); it has %zu",
			    p->node_name, nr_roles);
		goto out;
	}
	p->nr_subnets = o->plan == PLAN_RING ? 2 * o->nodes : nr_roles;

	for (size_t i = 0; i < nr_roles; i++) {
		const struct fabric_rail *rail = roles[i].rail;
		struct netplan_iface *ifc = ARRAY_PUSH(p->ifaces, p->nr_ifaces);
		if (!rail->netdev || !plain_name(rail->netdev->name)) {
			strbuf_addf(err, "cannot write the interface name of %s into netplan",
				    rail->dev->name);
			goto out;
		}
		ifc->netdev = rail->netdev;
		ifc->rdma = rail->dev;
		ifc->subnet = subnet_of(o, &roles[i], i);
		ifc->addr.addr = cidr_network(&o->base).addr + (ifc->subnet << 8) +
				 NETPLAN_HOST_OFFSET + o->node;
		ifc->addr.prefix = 24;
	}
	if ((r = check_base(inv, p, err)) < 0)
		goto out;
	r = 0;
out:
	free(roles);
	fabric_release(&f);
	return r;
}

void netplan_release(struct netplan *p)
{
	free(p->node_name);
	free(p->ifaces);
	memset(p, 0, sizeof(*p));
}

bool netplan_changes(const struct netplan *p, const char *netdev)
{
	for (size_t i = 0; i < p->nr_ifaces; i++)
		if (streq(p->ifaces[i].netdev->name, netdev))
			return true;
	return false;
}

void netplan_yaml(const struct netplan *p, struct strbuf *out)
{
	struct strbuf shown = STRBUF_INIT;
	char base[19];

	/* Names in comments are the inventory's: escaped, a newline cannot end the comment. */
	strbuf_addstr_printable(&shown, p->node_name);
	cidr_format(&p->opts.base, base);
	strbuf_addf(out,
		    NETPLAN_MARKER "; 'sparkctl netplan --write' replaces it.\n"
				   "# Fabric of %s: plan %s, node %u of %u, base %s.\n"
				   "network:\n"
				   "  version: 2\n"
				   "  ethernets:\n",
		    shown.buf, netplan_plan_name(p->opts.plan), p->opts.node, p->opts.nodes, base);
	for (size_t i = 0; i < p->nr_ifaces; i++) {
		const struct netplan_iface *ifc = &p->ifaces[i];
		char addr[19];
		cidr_format(&ifc->addr, addr);
		strbuf_reset(&shown);
		strbuf_addstr_printable(&shown, ifc->rdma->name);
		strbuf_addf(out,
			    "    %s:\n"
			    "      # %s\n"
			    "      dhcp4: false\n"
			    "      dhcp6: false\n"
			    "      link-local: []\n"
			    "      mtu: %d\n"
			    "      addresses:\n"
			    "        - %s\n",
			    ifc->netdev->name, shown.buf, NETPLAN_FABRIC_MTU, addr);
	}
	strbuf_release(&shown);
}

int netplan_hosts(const struct netplan *p, const struct strvec *names, struct strbuf *out,
		  struct strbuf *err)
{
	if (names->nr && names->nr != p->opts.nodes) {
		strbuf_addf(err, "--names gives %zu names for %u nodes", names->nr, p->opts.nodes);
		return -EDOM;
	}
	for (size_t i = 0; i < names->nr; i++) {
		if (!plain_name(names->v[i])) {
			strbuf_addf(err, "--names: '%s' is not a host name", names->v[i]);
			return -EDOM;
		}
	}
	strbuf_addf(out, "# sparkctl netplan --hosts: plan %s, %u nodes\n",
		    netplan_plan_name(p->opts.plan), p->opts.nodes);
	for (unsigned n = 0; n < p->opts.nodes; n++) {
		char fallback[32];
		const char *name = names->nr ? names->v[n] : fallback;
		snprintf(fallback, sizeof(fallback), "node%u", n);
		for (size_t i = 0; i < p->nr_ifaces; i++) {
			/* Node n's address on the same role as this node's interface i. */
			struct netplan_options o = p->opts;
			struct role ro = { NULL, 0, 0 };
			o.node = n;
			if (p->opts.plan == PLAN_RING) {
				ro.port = (unsigned)(i / 2);
				ro.half = (unsigned)(i % 2);
			}
			uint32_t addr = cidr_network(&p->opts.base).addr +
					(subnet_of(&o, &ro, i) << 8) + NETPLAN_HOST_OFFSET + n;
			char text[16];
			ipv4_format(addr, text);
			if (i == 0)
				strbuf_addf(out, "%-15s  %s-fabric %s-r0\n", text, name, name);
			else
				strbuf_addf(out, "%-15s  %s-r%zu\n", text, name, i);
		}
	}
	return 0;
}

/* One line of block-style YAML: its indentation, key and value (comment cut off). */
struct yaml_line {
	size_t indent;
	char key[256];
	char value[256];
	bool is_key;
};

/* Copy [p, end) without surrounding blanks and quotes into buf. */
static void copy_unquoted(const char *p, const char *end, char *buf, size_t size)
{
	size_t len;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	if (end - p >= 2 && (*p == '"' || *p == '\'') && end[-1] == *p) {
		p++;
		end--;
	}
	len = (size_t)(end - p) < size - 1 ? (size_t)(end - p) : size - 1;
	memcpy(buf, p, len);
	buf[len] = '\0';
}

static void yaml_split(const char *line, size_t len, struct yaml_line *y)
{
	const char *end = line + len, *p = line, *colon;

	memset(y, 0, sizeof(*y));
	while (p < end && *p == ' ')
		p++;
	y->indent = (size_t)(p - line);
	/* A comment starts at '#' at the line's start or after a blank. */
	for (const char *q = p; q < end; q++)
		if (*q == '#' && (q == p || q[-1] == ' ' || q[-1] == '\t')) {
			end = q;
			break;
		}
	if (p == end || *p == '-')
		return;
	colon = memchr(p, ':', (size_t)(end - p));
	if (!colon || (colon + 1 < end && colon[1] != ' ' && colon[1] != '\t'))
		return;
	y->is_key = true;
	copy_unquoted(p, colon, y->key, sizeof(y->key));
	copy_unquoted(colon + 1, end, y->value, sizeof(y->value));
}

static bool merged_list(const char *key)
{
	return streq(key, "addresses") || streq(key, "routes") || streq(key, "routing-policy") ||
	       streq(key, "nameservers");
}

static void add_overlap(const char *file, const char *iface, bool later, bool by_match,
			struct netplan_overlap **out, size_t *nr)
{
	struct netplan_overlap *o = ARRAY_PUSH(*out, *nr);

	o->file = xstrdup(file);
	o->iface = iface;
	o->later = later;
	o->by_match = by_match;
	strbuf_init(&o->adds, 0);
}

void netplan_find_overlaps(const struct netplan *p, const char *file, bool later, const char *text,
			   struct netplan_overlap **out, size_t *nr)
{
	for (size_t i = 0; i < p->nr_ifaces; i++) {
		const char *name = p->ifaces[i].netdev->name;
		struct netplan_overlap *found = NULL;
		size_t block = SIZE_MAX, child = SIZE_MAX;

		for (const char *line = text; *line;) {
			const char *nl = strchrnul(line, '\n');
			struct yaml_line y;

			yaml_split(line, (size_t)(nl - line), &y);
			line = *nl ? nl + 1 : nl;
			if (!y.is_key)
				continue;
			/* Inside the interface's block: its direct keys. */
			if (block != SIZE_MAX && y.indent > block) {
				if (child == SIZE_MAX)
					child = y.indent;
				if (y.indent == child && merged_list(y.key) &&
				    !strstr(found->adds.buf, y.key))
					strbuf_addf(&found->adds, "%s%s",
						    found->adds.len ? ", " : "", y.key);
				continue;
			}
			block = child = SIZE_MAX;
			if (streq(y.key, name)) {
				if (!found) {
					add_overlap(file, name, later, false, out, nr);
					found = &(*out)[*nr - 1];
				}
				block = y.indent;
			} else if (streq(y.key, "name") && y.value[0] &&
				   fnmatch(y.value, name, 0) == 0 && !found) {
				add_overlap(file, name, later, true, out, nr);
				found = &(*out)[*nr - 1];
			}
		}
	}
}

void netplan_overlaps_release(struct netplan_overlap *o, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		free(o[i].file);
		strbuf_release(&o[i].adds);
	}
	free(o);
}
