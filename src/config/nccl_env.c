#include "sparkctl.h"

#include <ctype.h>

#include "config/nccl_env.h"
#include "inventory/derive.h"
#include "lib/host_text.h"
#include "lib/json.h"
#include "lib/xalloc.h"

int env_parse_topology(const char *s, enum env_topology *ret)
{
	static const char *const names[] = { "auto", "pair", "switch", "ring" };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		if (streq(s, names[i])) {
			*ret = (enum env_topology)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *env_topology_name(enum env_topology t)
{
	switch (t) {
	case TOPOLOGY_PAIR:
		return "pair";
	case TOPOLOGY_SWITCH:
		return "switch";
	case TOPOLOGY_RING:
		return "ring";
	case TOPOLOGY_AUTO:
		break;
	}
	return "auto";
}

int env_parse_mode(const char *s, enum env_gdr_mode *ret)
{
	if (streq(s, "auto"))
		*ret = GDR_MODE_AUTO;
	else if (streq(s, "safe"))
		*ret = GDR_MODE_SAFE;
	else if (streq(s, "dmabuf"))
		*ret = GDR_MODE_DMABUF;
	else
		return -EINVAL;
	return 0;
}

int env_parse_format(const char *s, enum env_format *ret)
{
	if (streq(s, "sh"))
		*ret = ENV_FORMAT_SH;
	else if (streq(s, "env"))
		*ret = ENV_FORMAT_ENV;
	else if (streq(s, "docker"))
		*ret = ENV_FORMAT_DOCKER;
	else if (streq(s, "json"))
		*ret = ENV_FORMAT_JSON;
	else
		return -EINVAL;
	return 0;
}

static void set_var(struct node_env *e, const char *key, const char *value, const char *fmt, ...)
	ATTR_PRINTF(4, 5);
/* Set key (replacing an earlier value, keeping its place) with the reason it has. */
static void set_var(struct node_env *e, const char *key, const char *value, const char *fmt, ...)
{
	struct strbuf reason = STRBUF_INIT;
	struct env_var *v = NULL;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&reason, fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < e->nr_vars && !v; i++)
		if (streq(e->vars[i].key, key))
			v = &e->vars[i];
	if (v) {
		free(v->value);
		free(v->reason);
	} else {
		v = ARRAY_PUSH(e->vars, e->nr_vars);
		v->key = xstrdup(key);
	}
	v->value = xstrdup(value);
	v->reason = strbuf_detach(&reason, NULL);
}

/* The topology, from the number of cabled ports and what the user said. */
static int resolve_topology(const struct node_env *e, const struct env_options *o,
			    struct strbuf *err)
{
	size_t ports = e->fabric.nr_ports;

	if (o->topology != TOPOLOGY_AUTO) {
		if (o->topology == TOPOLOGY_RING && (e->fabric.infiniband || ports != 2)) {
			strbuf_addf(err,
				    "a ring needs both ports of the node cabled (4 ACTIVE twins); "
				    "%s has %zu fabric port%s",
				    e->node, ports, ports == 1 ? "" : "s");
			return -EINVAL;
		}
		if (o->topology == TOPOLOGY_PAIR && o->nodes > 2) {
			strbuf_addf(err, "a pair is two nodes, not %u; use --topology switch",
				    o->nodes);
			return -EINVAL;
		}
		return (int)o->topology;
	}
	if (e->fabric.infiniband || ports > 2)
		return TOPOLOGY_SWITCH;
	if (ports == 1)
		return o->nodes > 2 ? TOPOLOGY_SWITCH : TOPOLOGY_PAIR;
	/* Both ports cabled: a two-cable pair and a ring look the same from one node. */
	if (o->nodes == 2)
		return TOPOLOGY_PAIR;
	if (o->nodes == 3)
		return TOPOLOGY_RING;
	strbuf_addf(err,
		    "%s has both ports cabled (4 ACTIVE twins): that is a two-cable pair or a "
		    "3-node ring, which one node cannot tell apart; say --nodes 2 or --nodes 3 "
		    "(or --topology pair|ring)",
		    e->node);
	return -EINVAL;
}

/* The non-fabric interface with the IPv4 default route (the management network). */
static const struct inv_netdev *management_netdev(const struct inventory *inv,
						  const struct fabric *f)
{
	for (size_t i = 0; i < inv->nr_netdevs; i++) {
		const struct inv_netdev *nd = &inv->netdevs[i];
		bool fabric = false;
		for (size_t k = 0; k < f->nr_rails && !fabric; k++)
			fabric = f->rails[k].netdev == nd;
		if (!fabric && nd->default_route == TRI_YES)
			return nd;
	}
	return NULL;
}

static int choose_bootstrap(const struct inventory *inv, const struct env_options *o,
			    struct node_env *e, const char **why, struct strbuf *err)
{
	if (o->socket_if) {
		e->bootstrap = inventory_netdev(inv, o->socket_if);
		if (!e->bootstrap) {
			strbuf_addf(err, "--socket-if %s: no such interface on %s", o->socket_if,
				    e->node);
			return -EINVAL;
		}
		*why = "chosen with --socket-if";
	} else if (e->topology == TOPOLOGY_RING || e->fabric.infiniband) {
		e->bootstrap = management_netdev(inv, &e->fabric);
		if (!e->bootstrap) {
			strbuf_addf(
				err,
				"%s has no management interface (a non-fabric interface with the "
				"default route) to bootstrap over; name one with --socket-if",
				e->node);
			return -EINVAL;
		}
		*why = e->topology == TOPOLOGY_RING
			       ? "the management interface (default route): in a ring, no fabric "
				 "link reaches every node"
			       : "the management interface (default route): the InfiniBand rails "
				 "have no IP interface";
	} else {
		/* The lower-PCI-domain twin of the first cabled port: its own subnet, direct. */
		for (size_t i = 0; i < e->fabric.nr_rails && !e->bootstrap; i++)
			if (e->fabric.rails[i].half == 0 && e->fabric.rails[i].has_ipv4)
				e->bootstrap = e->fabric.rails[i].netdev;
		if (!e->bootstrap) {
			strbuf_addf(err,
				    "%s: no fabric interface has an IPv4 address to bootstrap over",
				    e->node);
			return -EINVAL;
		}
		*why = "the primary-domain twin of the first cabled port, with its IPv4 address";
	}
	if (!netdev_ipv4(e->bootstrap, &e->bootstrap_addr)) {
		strbuf_addf(err, "the bootstrap interface %s of %s has no IPv4 address",
			    e->bootstrap->name, e->node);
		return -EINVAL;
	}
	return 0;
}

static void emit_bootstrap(struct node_env *e, const char *why)
{
	/*
	 * UCX_NET_DEVICES is not among them: it is not a socket interface but
	 * the list of devices every UCX transport may use (emit_ucx_devices()).
	 */
	static const char *const keys[] = { "GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME",
					    "OMPI_MCA_btl_tcp_if_include" };
	char addr[19], exact[64];
	const char *name = e->bootstrap->name;

	cidr_format(&e->bootstrap_addr, addr);
	snprintf(exact, sizeof(exact), "=%s", name);
	set_var(e, "NCCL_SOCKET_IFNAME", exact, "bootstrap over %s (%s): %s; '=' matches exactly",
		name, addr, why);
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		set_var(e, keys[i], name, "the same bootstrap interface for %s",
			i == 0	 ? "PyTorch's gloo"
			: i == 1 ? "TensorPipe (PyTorch RPC)"
				 : "Open MPI's TCP transport");
}

/*
 * UCX_NET_DEVICES limits every UCX transport (RDMA as well as TCP) to the
 * devices named, in UCX's DEVICE:PORT form: the rails, so that UCX and MPI
 * traffic stays on the fabric.  Naming the bootstrap netdev here would put
 * it all on TCP over that one interface - the management NIC on InfiniBand
 * and in a ring.
 */
static void emit_ucx_devices(struct node_env *e)
{
	struct strbuf list = STRBUF_INIT;

	if (!e->fabric.nr_rails)
		return;
	for (size_t i = 0; i < e->fabric.nr_rails; i++)
		strbuf_addf(&list, "%s%s:%u", i ? "," : "", e->fabric.rails[i].dev->name,
			    e->fabric.rails[i].port->num);
	set_var(e, "UCX_NET_DEVICES", list.buf,
		"UCX's transports on the %zu fabric ports only (RDMA DEVICE:PORT, as NCCL_IB_HCA), "
		"never the bootstrap interface",
		e->fabric.nr_rails);
	strbuf_release(&list);
}

static void emit_hca(struct node_env *e)
{
	struct strbuf list = STRBUF_INIT;

	strbuf_addch(&list, '=');
	for (size_t i = 0; i < e->fabric.nr_rails; i++)
		strbuf_addf(&list, "%s%s", i ? "," : "", e->fabric.rails[i].dev->name);
	if (e->fabric.infiniband)
		set_var(e, "NCCL_IB_HCA", list.buf,
			"the %zu ACTIVE InfiniBand ports, in PCI order; '=' matches names exactly",
			e->fabric.nr_rails);
	else
		set_var(e, "NCCL_IB_HCA", list.buf,
			"the %zu fabric devices (ACTIVE, carrier, IPv4): both twins of every "
			"cabled "
			"port, in PCI order as NCCL pairs them; '=' matches names exactly",
			e->fabric.nr_rails);
	strbuf_release(&list);
}

static int emit_gid(const struct inventory *inv, const struct env_options *o, struct node_env *e,
		    struct strbuf *err)
{
	struct nccl_gid_params defaults;
	struct cidr cover = { 0, 0 };
	int common = -1;
	bool same = true;

	if (e->fabric.infiniband)
		return 0; /* GIDs of InfiniBand ports are chosen by LID/FLID, not address */
	nccl_gid_params_default(&defaults);
	for (size_t i = 0; i < e->fabric.nr_rails; i++) {
		const struct fabric_rail *r = &e->fabric.rails[i];
		struct cidr net = cidr_network(&r->ipv4);
		cover = i ? cidr_cover(&cover, &net) : net;
		int pick = nccl_gid_pick(r->port, &defaults);
		if (i == 0)
			common = pick;
		else if (pick != common)
			same = false;
	}
	if (o->pin_gid) {
		if (!same || common < 0) {
			strbuf_addstr(err, "--pin-gid: the IPv4 RoCE v2 GID is not at one index (");
			for (size_t i = 0; i < e->fabric.nr_rails; i++)
				strbuf_addf(err, "%s%s %d", i ? ", " : "",
					    e->fabric.rails[i].dev->name,
					    nccl_gid_pick(e->fabric.rails[i].port, &defaults));
			strbuf_addstr(err, "); leave NCCL_IB_GID_INDEX unset and let NCCL choose");
			return -EINVAL;
		}
		char idx[16];
		snprintf(idx, sizeof(idx), "%d", common);
		set_var(e, "NCCL_IB_GID_INDEX", idx,
			"pinned on request: every fabric device has its IPv4 RoCE v2 GID at %d "
			"today "
			"(the index can drift after interface changes)",
			common);
		return 0;
	}
	(void)inv;
	set_var(e, "NCCL_IB_ROCE_VERSION_NUM", "2",
		"NCCL picks each device's RoCE v2 GID itself, so no index is pinned: the index "
		"drifts (3, 4, 5) on real Sparks");
	set_var(e, "NCCL_IB_ADDR_FAMILY", "AF_INET",
		"the GID NCCL picks is the IPv4-mapped one of the fabric address");
	if (e->fabric.nr_rails && cover.prefix >= 16) {
		char text[19];
		cidr_format(&cover, text);
		set_var(e, "NCCL_IB_ADDR_RANGE", text,
			"every fabric address is in %s: other GIDs of these devices (link-local, "
			"autoconfigured) cannot be chosen",
			text);
	}
	return 0;
}

/* The first GPU whose CUDA attribute is known false, or NULL. */
static const struct inv_gpu *gpu_lacking(const struct inventory *inv, bool dmabuf)
{
	for (size_t i = 0; i < inv->gpu.nr_gpus; i++) {
		const struct inv_gpu *g = &inv->gpu.gpus[i];
		if ((dmabuf ? g->dma_buf : g->gpudirect_rdma) == TRI_NO)
			return g;
	}
	return NULL;
}

static bool gpu_support_known(const struct inventory *inv)
{
	if (!inv->gpu.nr_gpus)
		return false;
	for (size_t i = 0; i < inv->gpu.nr_gpus; i++)
		if (inv->gpu.gpus[i].gpudirect_rdma < 0 || inv->gpu.gpus[i].dma_buf < 0)
			return false;
	return true;
}

static void emit_safe(struct node_env *e, const char *why)
{
	set_var(e, "NCCL_NET_GDR_LEVEL", "LOC", "no GPUDirect RDMA: %s", why);
	set_var(e, "NCCL_DMABUF_ENABLE", "0", "no DMA-BUF registration: %s", why);
}

static int emit_gpudirect(const struct inventory *inv, const struct env_options *o,
			  struct node_env *e, struct strbuf *err)
{
	const struct inv_gpu *no_gdr = gpu_lacking(inv, false), *no_dmabuf = gpu_lacking(inv, true);

	switch (o->mode) {
	case GDR_MODE_SAFE:
		emit_safe(e, "--mode safe: data is staged through host memory");
		return 0;
	case GDR_MODE_DMABUF:
		if (no_dmabuf && !o->force) {
			strbuf_addf(
				err,
				"--mode dmabuf: GPU %u (%s) does not support DMA-BUF (CUDA "
				"attribute DMA_BUF_SUPPORTED is 0); NCCL configured for it hangs "
				"in init_process_group on such hardware (GB10). Use --mode auto, "
				"or --force",
				no_dmabuf->index, no_dmabuf->name ? no_dmabuf->name : "?");
			return -EINVAL;
		}
		set_var(e, "NCCL_DMABUF_ENABLE", "1", "--mode dmabuf%s",
			no_dmabuf ? " (forced on hardware without DMA-BUF)" : "");
		set_var(e, "NCCL_NET_GDR_LEVEL", "SYS",
			"--mode dmabuf: allow GPUDirect between any GPU and NIC");
		return 0;
	case GDR_MODE_AUTO:
		break;
	}
	if (no_gdr || no_dmabuf) {
		const struct inv_gpu *g = no_gdr ? no_gdr : no_dmabuf;
		char *why = xasprintf("GPU %u (%s) reports no %s support (CUDA device attribute); "
				      "settings that assume it hang init_process_group",
				      g->index, g->name ? g->name : "?",
				      no_gdr ? "GPUDirect RDMA" : "DMA-BUF");
		emit_safe(e, why);
		free(why);
	} else if (!gpu_support_known(inv)) {
		emit_safe(e,
			  "GPUDirect support is unknown here (no GPU seen through CUDA); the safe "
			  "setting never hangs");
		strvec_push(&e->notes, "GPUDirect support unknown (no CUDA GPU in the inventory): "
				       "using --mode safe");
	}
	/* Supported everywhere: NCCL's defaults already use it. */
	return 0;
}

static void emit_ring(struct node_env *e)
{
	set_var(e, "NCCL_NET_PLUGIN", "none",
		"a Spark ring needs NCCL's own IB transport: external net plugins break RoCE "
		"on Spark");
	set_var(e, "NCCL_IB_SUBNET_AWARE_ROUTING", "1",
		"each ring link is its own subnet: connect only to the peer on the same subnet");
	set_var(e, "NCCL_IB_MERGE_NICS", "0",
		"keep the twins separate devices: merged ports try non-neighbour paths in a ring");
}

static bool valid_key(const char *key, size_t len)
{
	if (len == 0 || isdigit((unsigned char)key[0]))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)key[i]) && key[i] != '_')
			return false;
	return true;
}

static int apply_sets(const struct env_options *o, struct node_env *e, struct strbuf *err)
{
	for (size_t i = 0; o->sets && i < o->sets->nr; i++) {
		const char *kv = o->sets->v[i], *eq = strchr(kv, '=');
		if (!eq || !valid_key(kv, (size_t)(eq - kv))) {
			strbuf_addf(err,
				    "--set '%s': expected KEY=VALUE with a variable name as KEY",
				    kv);
			return -EINVAL;
		}
		char *key = xstrndup(kv, (size_t)(eq - kv));
		set_var(e, key, eq + 1, "set with --set");
		free(key);
	}
	return 0;
}

int env_generate(const struct inventory *inv, const struct env_options *o, struct node_env *e,
		 struct strbuf *err)
{
	const char *bootstrap_why = NULL;
	int r;

	memset(e, 0, sizeof(*e));
	strvec_init(&e->notes);
	e->node = xstrdup(inv->sys.hostname ? inv->sys.hostname : "(unknown host)");
	fabric_build(inv, true, &e->fabric);
	for (size_t i = 0; i < e->fabric.nr_strays; i++)
		strvec_pushf(&e->notes, "left out %s/%u: %s (not part of the fabric)",
			     e->fabric.strays[i].dev->name, e->fabric.strays[i].port->num,
			     e->fabric.strays[i].reason);
	if (!e->fabric.nr_rails) {
		strbuf_addf(err, "%s has no ACTIVE fabric port%s", e->node,
			    e->fabric.nr_strays ? " (see the ports left out above)"
						: ": no RDMA port is ACTIVE with carrier");
		return -ENODEV;
	}
	r = resolve_topology(e, o, err);
	if (r < 0)
		return r;
	e->topology = (enum env_topology)r;
	if ((r = choose_bootstrap(inv, o, e, &bootstrap_why, err)) < 0)
		return r;
	emit_hca(e);
	emit_bootstrap(e, bootstrap_why);
	emit_ucx_devices(e);
	if ((r = emit_gid(inv, o, e, err)) < 0 || (r = emit_gpudirect(inv, o, e, err)) < 0)
		return r;
	if (e->topology == TOPOLOGY_RING)
		emit_ring(e);
	return apply_sets(o, e, err);
}

void node_env_release(struct node_env *e)
{
	free(e->node);
	fabric_release(&e->fabric);
	for (size_t i = 0; i < e->nr_vars; i++) {
		free(e->vars[i].key);
		free(e->vars[i].value);
		free(e->vars[i].reason);
	}
	free(e->vars);
	strvec_clear(&e->notes);
	memset(e, 0, sizeof(*e));
}

/* The role of a rail that must match across nodes: its physical port and half. */
static void rail_role(const struct fabric_rail *r, char buf[48])
{
	if (r->label[0])
		snprintf(buf, 48, "port %s half %u", r->label, r->half);
	else
		snprintf(buf, 48, "port %u", r->port->num);
}

int env_check_cluster(const struct node_env *nodes, size_t n, struct strbuf *err)
{
	size_t problems = 0;

	for (size_t a = 0; a < n; a++) {
		for (size_t b = a + 1; b < n; b++) {
			const struct node_env *x = &nodes[a], *y = &nodes[b];
			char ra[48], rb[48], na[19], nb[19];
			if (x->fabric.nr_rails != y->fabric.nr_rails) {
				strbuf_addf(
					err,
					"%s has %zu fabric HCAs and %s has %zu: NCCL pairs HCAs by "
					"position, so the lists would not pair\n",
					x->node, x->fabric.nr_rails, y->node, y->fabric.nr_rails);
				problems++;
				continue;
			}
			for (size_t i = 0; i < x->fabric.nr_rails; i++) {
				const struct fabric_rail *p = &x->fabric.rails[i],
							 *q = &y->fabric.rails[i];
				rail_role(p, ra);
				rail_role(q, rb);
				if (!streq(ra, rb)) {
					strbuf_addf(err,
						    "HCA %zu is %s (%s) on %s but %s (%s) on %s: "
						    "the lists "
						    "would not pair; cable the same ports on every "
						    "node\n",
						    i + 1, p->dev->name, ra, x->node, q->dev->name,
						    rb, y->node);
					problems++;
				} else if (x->topology != TOPOLOGY_RING && !x->fabric.infiniband &&
					   !cidr_overlaps(&p->ipv4, &q->ipv4)) {
					struct cidr np = cidr_network(&p->ipv4),
						    nq = cidr_network(&q->ipv4);
					cidr_format(&np, na);
					cidr_format(&nq, nb);
					strbuf_addf(
						err,
						"HCA %zu: %s of %s is on %s but %s of %s is on %s: "
						"they cannot reach each other\n",
						i + 1, p->dev->name, x->node, na, q->dev->name,
						y->node, nb);
					problems++;
				} else if (!x->fabric.infiniband && p->ipv4.addr == q->ipv4.addr) {
					ipv4_format(p->ipv4.addr, na);
					strbuf_addf(err, "%s and %s both have the address %s\n",
						    x->node, y->node, na);
					problems++;
				}
			}
			if (!cidr_contains(&x->bootstrap_addr, y->bootstrap_addr.addr) ||
			    !cidr_contains(&y->bootstrap_addr, x->bootstrap_addr.addr)) {
				cidr_format(&x->bootstrap_addr, na);
				cidr_format(&y->bootstrap_addr, nb);
				strbuf_addf(
					err,
					"bootstrap interfaces cannot reach each other: %s %s (%s) "
					"and %s %s (%s) are on different subnets\n",
					x->node, x->bootstrap->name, na, y->node,
					y->bootstrap->name, nb);
				problems++;
			}
		}
	}
	if (problems)
		strbuf_rtrim(err);
	return problems ? -EINVAL : 0;
}

/* Single-quote s for a POSIX shell: 'it'\''s'. */
static void sh_quote(struct strbuf *out, const char *s)
{
	strbuf_addch(out, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			strbuf_addstr(out, "'\\''");
		else
			strbuf_addch(out, *s);
	}
	strbuf_addch(out, '\'');
}

/* One comment line: text with its newlines as spaces and its controls escaped. */
static void comment(struct strbuf *out, const char *text)
{
	struct strbuf line = STRBUF_INIT;

	for (; *text; text++)
		strbuf_addch(&line, *text == '\n' ? ' ' : *text);
	strbuf_addstr(out, "# ");
	strbuf_add_printable(out, line.buf, line.len, 0);
	strbuf_addch(out, '\n');
	strbuf_release(&line);
}

/*
 * A value is written as it is or not at all: escaped, it would no longer
 * be the value.  Names with controls or bytes that are not UTF-8 come only
 * from a damaged or hostile inventory (no interface NCCL can use is named
 * so), and quoting would still carry them to the terminal.  Newlines and
 * tabs stay for --format sh and docker, which quote them.
 */
static int check_printable(const struct env_var *v, struct strbuf *err)
{
	if (str_is_printable(v->value, strlen(v->value), PRINTABLE_LINES))
		return 0;
	strbuf_addf(err, "%s: the value '", v->key);
	strbuf_addstr_printable(err, v->value);
	strbuf_addstr(err, "' holds control characters or bytes that are not UTF-8; only "
			   "--json can carry it");
	return -EINVAL;
}

static json_t *node_json(const struct node_env *e, bool with_reasons)
{
	json_t *o = json_object(), *vars = json_object(), *reasons = json_object();
	json_t *hcas = json_array(), *notes = json_array();

	jset(o, "schema_version", jint(ENV_SCHEMA_VERSION));
	jset(o, "node", jstr(e->node));
	jset(o, "topology", jstr(env_topology_name(e->topology)));
	for (size_t i = 0; i < e->fabric.nr_rails; i++)
		jpush(hcas, jstr(e->fabric.rails[i].dev->name));
	jset(o, "hcas", hcas);
	jset(o, "bootstrap_interface", jstr(e->bootstrap ? e->bootstrap->name : NULL));
	for (size_t i = 0; i < e->nr_vars; i++) {
		jset(vars, e->vars[i].key, jstr(e->vars[i].value));
		jset(reasons, e->vars[i].key, jstr(e->vars[i].reason));
	}
	jset(o, "variables", vars);
	if (with_reasons)
		jset(o, "reasons", reasons);
	else
		json_decref(reasons);
	for (size_t i = 0; i < e->notes.nr; i++)
		jpush(notes, jstr(e->notes.v[i]));
	jset(o, "notes", notes);
	return o;
}

int env_format(const struct node_env *e, enum env_format fmt, bool with_reasons, struct strbuf *out,
	       struct strbuf *err)
{
	if (fmt == ENV_FORMAT_JSON) {
		json_t *o = node_json(e, with_reasons);
		json_to_strbuf(o, out);
		json_decref(o);
		return 0;
	}
	if (fmt != ENV_FORMAT_DOCKER) {
		strbuf_addstr(out, "# sparkctl env: ");
		strbuf_addstr_printable(out, e->node);
		strbuf_addf(out, ", topology %s, %zu HCA%s\n", env_topology_name(e->topology),
			    e->fabric.nr_rails, e->fabric.nr_rails == 1 ? "" : "s");
	}
	for (size_t i = 0; i < e->nr_vars; i++) {
		const struct env_var *v = &e->vars[i];
		if (check_printable(v, err) < 0)
			return -EINVAL;
		if (with_reasons && fmt != ENV_FORMAT_DOCKER)
			comment(out, v->reason);
		switch (fmt) {
		case ENV_FORMAT_SH:
			strbuf_addf(out, "export %s=", v->key);
			sh_quote(out, v->value);
			strbuf_addch(out, '\n');
			break;
		case ENV_FORMAT_ENV:
			/*
			 * docker --env-file takes the rest of the line literally while
			 * systemd unquotes and unescapes: only plain values mean the
			 * same to both.
			 */
			if (strpbrk(v->value, "\n\"'\\") || isspace((unsigned char)v->value[0]) ||
			    (*v->value && isspace((unsigned char)v->value[strlen(v->value) - 1]))) {
				strbuf_addf(
					err,
					"%s: the value cannot be written in --format env (quotes, "
					"backslashes, newlines or outer spaces); use --format sh "
					"or json",
					v->key);
				return -EINVAL;
			}
			strbuf_addf(out, "%s=%s\n", v->key, v->value);
			break;
		case ENV_FORMAT_DOCKER: {
			struct strbuf kv = STRBUF_INIT;
			strbuf_addf(&kv, "%s=%s", v->key, v->value);
			strbuf_addstr(out, i ? " -e " : "-e ");
			sh_quote(out, kv.buf);
			strbuf_release(&kv);
			break;
		}
		case ENV_FORMAT_JSON:
			break;
		}
	}
	if (fmt == ENV_FORMAT_DOCKER)
		strbuf_addch(out, '\n');
	return 0;
}

int env_format_json_nodes(const struct node_env *nodes, size_t n, bool with_reasons,
			  struct strbuf *out)
{
	json_t *doc = json_object(), *arr = json_array();

	/* One document with its schema_version; each node also carries it, as alone. */
	jset(doc, "schema_version", jint(ENV_SCHEMA_VERSION));
	for (size_t i = 0; i < n; i++)
		jpush(arr, node_json(&nodes[i], with_reasons));
	jset(doc, "nodes", arr);
	json_to_strbuf(doc, out);
	json_decref(doc);
	return 0;
}
