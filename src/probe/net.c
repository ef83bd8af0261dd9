#include "sparkctl.h"

#include <arpa/inet.h>
#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "inventory/derive.h"
#include "lib/host_text.h"
#include "lib/json.h"
#include "lib/xalloc.h"
#include "probe/netdevs.h"
#include "probe/probe.h"
#include "probe/probe_internal.h"

/* The PCI address a device link points at, or NULL for virtual and non-PCI devices. */
static char *pci_address_of(struct probe_ctx *ctx, const char *link)
{
	char *base = probe_read_link_base(ctx, link);
	struct pci_bdf bdf;

	if (base && parse_bdf(base, &bdf) < 0)
		free_and_null(&base);
	return base;
}

static void probe_netdev(struct probe_ctx *ctx, const char *name)
{
	struct inventory *inv = ctx->inv;
	struct inv_netdev *n = ARRAY_PUSH(inv->netdevs, inv->nr_netdevs);
	struct strbuf p = STRBUF_INIT;
	struct netdev_link link;

	n->name = xstrdup(name);
	n->default_route = TRI_UNKNOWN;
	strbuf_addf(&p, NET_CLASS "/%s/ifindex", name);
	n->ifindex = probe_read_int(ctx, p.buf);
	netdev_read_link(&ctx->rd, name, &link);
	n->mtu = link.mtu;
	n->operstate = link.operstate;
	n->carrier = link.carrier;
	n->speed_mbps = link.speed_mbps;
	n->address = probe_read_strf(ctx, NET_CLASS "/%s/address", name);
	n->phys_port_name = probe_read_strf(ctx, NET_CLASS "/%s/phys_port_name", name);
	n->phys_switch_id = probe_read_strf(ctx, NET_CLASS "/%s/phys_switch_id", name);
	strbuf_reset(&p);
	strbuf_addf(&p, NET_CLASS "/%s/device", name);
	n->pci_address = pci_address_of(ctx, p.buf);
	strbuf_addstr(&p, "/driver");
	n->driver = probe_read_link_base(ctx, p.buf);
	strbuf_release(&p);
}

static void mark_default_route(const char *ifname, void *data)
{
	struct inventory *inv = data;

	for (size_t i = 0; i < inv->nr_netdevs; i++)
		if (streq(inv->netdevs[i].name, ifname))
			inv->netdevs[i].default_route = TRI_YES;
}

void probe_netdevs(struct probe_ctx *ctx)
{
	struct strvec names = STRVEC_INIT;
	struct strbuf text = STRBUF_INIT;
	int r;

	netdev_list(&ctx->rd, &names);
	for (size_t i = 0; i < names.nr; i++)
		probe_netdev(ctx, names.v[i]);
	strvec_clear(&names);

	r = rootfs_read_file(ctx->root, "proc/net/route", ROOTFS_FILE_MAX, &text);
	if (r < 0) {
		probe_read_failed(ctx, "proc/net/route", r);
	} else {
		for (size_t i = 0; i < ctx->inv->nr_netdevs; i++)
			ctx->inv->netdevs[i].default_route = TRI_NO;
		if (parse_default_routes(text.buf, mark_default_route, ctx->inv) < 0)
			probe_bad_content(ctx, "proc/net/route", text.buf);
	}
	strbuf_release(&text);
}

static struct inv_netdev *find_netdev(struct inventory *inv, const char *name, size_t len)
{
	for (size_t i = 0; i < inv->nr_netdevs; i++)
		if (strlen(inv->netdevs[i].name) == len &&
		    !strncmp(inv->netdevs[i].name, name, len))
			return &inv->netdevs[i];
	return NULL;
}

static void add_address(struct inv_netdev *n, int family, const char *addr, unsigned prefix)
{
	struct inv_addr *a = ARRAY_PUSH(n->addrs, n->nr_addrs);

	a->family = family;
	a->address = xstrdup(addr);
	a->prefix_len = prefix;
}

/* Order each netdev's addresses IPv4 first, keeping the kernel's order within a family. */
static void order_addresses(struct inventory *inv)
{
	for (size_t i = 0; i < inv->nr_netdevs; i++) {
		struct inv_netdev *n = &inv->netdevs[i];
		size_t k = 0;
		for (size_t j = 0; j < n->nr_addrs; j++) {
			if (n->addrs[j].family != AF_INET)
				continue;
			struct inv_addr a = n->addrs[j];
			memmove(&n->addrs[k + 1], &n->addrs[k], (j - k) * sizeof(a));
			n->addrs[k++] = a;
		}
	}
}

/*
 * The kernel's addresses, as 'ip address show' lists them: an RTM_GETADDR
 * dump over rtnetlink.  getifaddrs() names IPv4 addresses by their label,
 * which may be any string, so addresses are matched by interface index.
 */
static int dump_addresses(struct probe_ctx *ctx)
{
	struct {
		struct nlmsghdr nh;
		struct ifaddrmsg ifa;
	} req;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	static char buf[65536] __attribute__((aligned(NLMSG_ALIGNTO)));
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	int r = 0;

	if (fd < 0)
		return -errno;
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifaddrmsg));
	req.nh.nlmsg_type = RTM_GETADDR;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nh.nlmsg_seq = 1;
	req.ifa.ifa_family = AF_UNSPEC;
	if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		goto out;
	}
	for (bool done = false; !done;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			goto out;
		}
		size_t left = (size_t)n;
		for (struct nlmsghdr *nh = (struct nlmsghdr *)(void *)buf; NLMSG_OK(nh, left);
		     nh = NLMSG_NEXT(nh, left)) {
			if (nh->nlmsg_type == NLMSG_DONE) {
				done = true;
				break;
			}
			if (nh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nh);
				r = e->error < 0 ? e->error : -EIO;
				goto out;
			}
			if (nh->nlmsg_type != RTM_NEWADDR)
				continue;
			const struct ifaddrmsg *ifa = NLMSG_DATA(nh);
			const void *local = NULL, *address = NULL;
			size_t alen = IFA_PAYLOAD(nh);
			for (const struct rtattr *rta = IFA_RTA(ifa); RTA_OK(rta, alen);
			     rta = RTA_NEXT(rta, alen)) {
				if (rta->rta_type == IFA_LOCAL)
					local = RTA_DATA(rta);
				else if (rta->rta_type == IFA_ADDRESS)
					address = RTA_DATA(rta);
			}
			/* IPv4: IFA_LOCAL is the address (IFA_ADDRESS is the peer on point-to-point
			 * links). */
			const void *a = ifa->ifa_family == AF_INET && local ? local : address;
			char text[INET6_ADDRSTRLEN];
			if ((ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6) || !a ||
			    !inet_ntop(ifa->ifa_family, a, text, sizeof(text)))
				continue;
			for (size_t i = 0; i < ctx->inv->nr_netdevs; i++)
				if (ctx->inv->netdevs[i].ifindex == (int64_t)ifa->ifa_index)
					add_address(&ctx->inv->netdevs[i], ifa->ifa_family, text,
						    ifa->ifa_prefixlen);
		}
	}
out:
	close(fd);
	return r;
}

void probe_addresses_live(struct probe_ctx *ctx)
{
	int r = dump_addresses(ctx);

	if (r < 0)
		inventory_add_problem(ctx->inv, "netlink RTM_GETADDR", "%s", strerror(-r));
	order_addresses(ctx->inv);
}

/* One addr_info entry of 'ip -j address show'. */
static void captured_address(struct probe_ctx *ctx, struct inv_netdev *n, const json_t *ai)
{
	const char *fam = json_string_value(json_object_get(ai, "family"));
	const char *local = json_string_value(json_object_get(ai, "local"));
	const json_t *plen = json_object_get(ai, "prefixlen");
	int family = streq(fam, "inet") ? AF_INET : streq(fam, "inet6") ? AF_INET6 : 0;
	unsigned char bin[16];

	if (!family)
		return; /* other families (e.g. none) carry no IP address */
	if (!local || !json_is_integer(plen) || json_integer_value(plen) < 0 ||
	    json_integer_value(plen) > (family == AF_INET ? 32 : 128) ||
	    inet_pton(family, local, bin) != 1) {
		inventory_add_problem(ctx->inv, CAPTURE_ADDRESS_JSON,
				      "malformed address entry of '%s'", n->name);
		return;
	}
	add_address(n, family, local, (unsigned)json_integer_value(plen));
}

/* jansson quotes the bytes near the error: escaped, as anything from a file in a message. */
static void bad_json(struct probe_ctx *ctx, const json_error_t *jerr)
{
	struct strbuf near = STRBUF_INIT;

	strbuf_addstr_printable(&near, jerr->text);
	inventory_add_problem(ctx->inv, CAPTURE_ADDRESS_JSON,
			      "invalid JSON at line %d column %d: %s", jerr->line, jerr->column,
			      near.buf);
	strbuf_release(&near);
}

void probe_addresses_captured(struct probe_ctx *ctx)
{
	struct strbuf text = STRBUF_INIT;
	json_t *doc = NULL;
	int r = rootfs_read_file(ctx->root, CAPTURE_ADDRESS_JSON, JSON_INPUT_MAX, &text);

	if (r < 0) {
		if (r == -ENOENT)
			inventory_add_problem(ctx->inv, CAPTURE_ADDRESS_JSON,
					      "not in the tree: interface addresses are unknown");
		else
			probe_read_failed(ctx, CAPTURE_ADDRESS_JSON, r);
		goto out;
	}
	json_error_t jerr;
	doc = json_loadb(text.buf, text.len, 0, &jerr);
	if (!doc || !json_is_array(doc)) {
		if (doc)
			inventory_add_problem(ctx->inv, CAPTURE_ADDRESS_JSON,
					      "expected the array of 'ip -j address show'");
		else
			bad_json(ctx, &jerr);
		goto out;
	}
	size_t i;
	json_t *link;
	json_array_foreach(doc, i, link)
	{
		const char *name = json_string_value(json_object_get(link, "ifname"));
		const json_t *infos = json_object_get(link, "addr_info");
		struct inv_netdev *n = name ? find_netdev(ctx->inv, name, strlen(name)) : NULL;
		size_t k;
		json_t *ai;
		if (!n || !json_is_array(infos))
			continue;
		json_array_foreach(infos, k, ai)
		{
			captured_address(ctx, n, ai);
		}
	}
	order_addresses(ctx->inv);
out:
	json_decref(doc);
	strbuf_release(&text);
}
