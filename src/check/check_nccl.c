/*
 * Checks of the NCCL configuration in effect on a node: the environment
 * and NCCL's configuration files, read with NCCL's own precedence and
 * parsing rules.
 */
#include "sparkctl.h"

#include <strings.h>

#include "check/check.h"
#include "config/fabric.h"
#include "config/nccl_env.h"
#include "inventory/derive.h"
#include "lib/host_text.h"
#include "lib/ipv4.h"
#include "lib/xalloc.h"

/* Where a setting came from, for messages and fixes. */
static const char *where(const char *source)
{
	return source ? source : "the environment";
}

static void unset_fix(struct strbuf *fix, const char *key, const char *source)
{
	if (source && !streq(source, "environment"))
		strbuf_addf(fix, "remove %s from %s", key, source);
	else
		strbuf_addf(fix, "unset %s", key);
}

/* The IPv4 RoCE v2 GID index of port p for address want, or -1. */
static int ipv4_v2_index(const struct inv_port *p, const char *want)
{
	char v4[16];

	for (size_t g = 0; g < p->nr_gids; g++)
		if (gid_type_version(p->gids[g].type) == 2 && gid_ipv4(p->gids[g].raw, v4) &&
		    streq(v4, want))
			return (int)p->gids[g].index;
	return -1;
}

void check_nccl_gid_index(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	const char *source;
	const char *value = inventory_nccl_setting(inv, "NCCL_IB_GID_INDEX", &source);
	struct nccl_gid_params params;
	struct fabric f;
	struct strbuf wrong = STRBUF_INIT, fix = STRBUF_INIT;

	nccl_gid_params_from_inventory(&params, inv);
	if (!value || params.gid_index < 0) {
		report(ctx, CHECK_PASS, NULL,
		       "NCCL_IB_GID_INDEX is not pinned: NCCL selects each port's RoCE v2 GID");
		return;
	}
	fabric_build(inv, true, &f);
	for (size_t i = 0; i < f.nr_rails; i++) {
		const struct fabric_rail *r = &f.rails[i];
		char want[16];
		if (port_is_infiniband(r->port))
			continue;
		ipv4_format(r->ipv4.addr, want);
		int right = ipv4_v2_index(r->port, want);
		if (right != params.gid_index)
			strbuf_addf(&wrong, "%s%s has it at %d", wrong.len ? ", " : "",
				    r->dev->name, right);
	}
	unset_fix(&fix, "NCCL_IB_GID_INDEX", source);
	strbuf_addstr(&fix, ": NCCL >= 2.21 picks the right GID on every port");
	if (wrong.len)
		report(ctx, CHECK_FAIL, fix.buf,
		       "NCCL_IB_GID_INDEX=%s (from %s) is not the IPv4 RoCE v2 GID on every port "
		       "(%s): "
		       "connection setup fails or hangs",
		       value, where(source), wrong.buf);
	else if (f.nr_rails)
		report(ctx, CHECK_WARN, fix.buf,
		       "NCCL_IB_GID_INDEX=%s (from %s) is right today, but the index drifts after "
		       "interface changes",
		       value, where(source));
	else
		report(ctx, CHECK_WARN, fix.buf, "NCCL_IB_GID_INDEX=%s is pinned (from %s)", value,
		       where(source));
	fabric_release(&f);
	strbuf_release(&wrong);
	strbuf_release(&fix);
}

/* One entry of NCCL_IB_HCA or NCCL_SOCKET_IFNAME: a name prefix, or exact. */
struct name_filter {
	bool exclude, exact, bad_order;
	struct strvec names; /* device or interface names, ports stripped */
};

static void filter_parse(const char *value, bool strip_ports, struct name_filter *nf)
{
	const char *p = value;

	memset(nf, 0, sizeof(*nf));
	strvec_init(&nf->names);
	/* NCCL tests '^' first, then '='; "=^" is an include list of names starting with '^'. */
	if (*p == '=' && p[1] == '^')
		nf->bad_order = true;
	if (*p == '^') {
		nf->exclude = true;
		p++;
	}
	if (*p == '=') {
		nf->exact = true;
		p++;
	}
	while (*p) {
		size_t len = strcspn(p, ",");
		size_t name_len = strip_ports ? strcspn(p, ":,") : len;
		if (name_len > len)
			name_len = len;
		if (name_len)
			strvec_push_nodup(&nf->names, xstrndup(p, name_len));
		p += len + (p[len] == ',');
	}
}

static bool filter_entry_matches(const struct name_filter *nf, const char *entry, const char *name)
{
	return nf->exact ? streq(entry, name) : !strncmp(name, entry, strlen(entry));
}

static bool filter_selects(const struct name_filter *nf, const char *name)
{
	bool any = false;

	for (size_t i = 0; i < nf->names.nr && !any; i++)
		any = filter_entry_matches(nf, nf->names.v[i], name);
	return nf->exclude ? !any : any;
}

void check_nccl_ib_hca(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	const char *source;
	const char *value = inventory_nccl_setting(inv, "NCCL_IB_HCA", &source);
	struct name_filter nf;
	struct fabric f;
	size_t problems = 0;

	fabric_build(inv, true, &f);
	if (!value || !*value) {
		if (f.nr_strays)
			report(ctx, CHECK_WARN,
			       "eval \"$(sparkctl env)\"   # sets NCCL_IB_HCA to the fabric",
			       "NCCL_IB_HCA is unset and %zu ACTIVE port%s not part of the fabric "
			       "(%s/%u: %s): NCCL would use %s too",
			       f.nr_strays, f.nr_strays == 1 ? " is" : "s are",
			       f.strays[0].dev->name, f.strays[0].port->num, f.strays[0].reason,
			       f.nr_strays == 1 ? "it" : "them");
		else
			report(ctx, CHECK_PASS, NULL,
			       "NCCL_IB_HCA is unset: NCCL uses every ACTIVE device, which are the "
			       "%zu fabric rails",
			       f.nr_rails);
		fabric_release(&f);
		return;
	}
	filter_parse(value, true, &nf);
	if (nf.bad_order) {
		report(ctx, CHECK_FAIL, "write the exclude list as NCCL_IB_HCA=^=names",
		       "NCCL_IB_HCA=%s (from %s): '=^' is not an exclude list for NCCL, it selects "
		       "names starting with '^', which match nothing",
		       value, where(source));
		problems++;
	}
	for (size_t i = 0; i < nf.names.nr && !nf.exclude && !nf.bad_order; i++) {
		const char *e = nf.names.v[i];
		const struct inv_rdma_dev *match = NULL;
		size_t matches = 0;
		for (size_t d = 0; d < inv->nr_rdma; d++) {
			if (filter_entry_matches(&nf, e, inv->rdma[d].name)) {
				match = &inv->rdma[d];
				matches++;
			}
		}
		if (!match) {
			report(ctx, CHECK_FAIL, "eval \"$(sparkctl env)\"   # the fabric's devices",
			       "NCCL_IB_HCA (from %s) names %s, which is not an RDMA device here",
			       where(source), e);
			problems++;
			continue;
		}
		if (matches > 1 && !nf.exact) {
			report(ctx, CHECK_WARN, "prefix the list with '=' to match names exactly",
			       "NCCL_IB_HCA entry '%s' (from %s) also matches %zu other device%s: "
			       "NCCL "
			       "matches prefixes",
			       e, where(source), matches - 1, matches == 2 ? "" : "s");
			problems++;
		}
		bool active = false;
		for (size_t k = 0; k < match->nr_ports; k++)
			active |= port_is_fabric(inv, match, &match->ports[k]);
		if (!active) {
			report(ctx, CHECK_FAIL,
			       "list only ACTIVE fabric devices: eval \"$(sparkctl env)\"",
			       "NCCL_IB_HCA (from %s) names %s, which is not ACTIVE with carrier",
			       where(source), match->name);
			problems++;
		}
	}
	/* Every selected rail needs its twin selected too. */
	for (size_t i = 0; i < f.nr_rails; i++) {
		const struct fabric_rail *r = &f.rails[i];
		if (r->twin && filter_selects(&nf, r->dev->name) &&
		    !filter_selects(&nf, r->twin->name)) {
			report(ctx, CHECK_FAIL, "eval \"$(sparkctl env)\"   # lists both twins",
			       "NCCL_IB_HCA=%s (from %s) selects %s but not its twin %s: the port "
			       "runs at "
			       "half bandwidth",
			       value, where(source), r->dev->name, r->twin->name);
			problems++;
		}
	}
	if (!problems)
		report(ctx, CHECK_PASS, NULL, "NCCL_IB_HCA=%s (from %s) selects the fabric", value,
		       where(source));
	strvec_clear(&nf.names);
	fabric_release(&f);
}

static bool netdev_has_address(const struct inv_netdev *nd)
{
	return nd->nr_addrs > 0;
}

void check_nccl_socket_ifname(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	const char *source;
	const char *value = inventory_nccl_setting(inv, "NCCL_SOCKET_IFNAME", &source);
	struct name_filter nf;
	const struct inv_netdev *chosen = NULL;
	size_t matched = 0;

	/* NCCL ignores a value of one character or less. */
	if (!value || strlen(value) <= 1) {
		report(ctx, CHECK_PASS, NULL,
		       "NCCL_SOCKET_IFNAME is unset: NCCL picks an interface itself ('sparkctl "
		       "env' "
		       "names one)");
		return;
	}
	filter_parse(value, false, &nf);
	for (size_t i = 0; i < inv->nr_netdevs; i++) {
		const struct inv_netdev *nd = &inv->netdevs[i];
		if (!filter_selects(&nf, nd->name))
			continue;
		matched++;
		if (!chosen && streq(nd->operstate, "up") && netdev_has_address(nd))
			chosen = nd;
	}
	if (!matched)
		report(ctx, CHECK_FAIL,
		       "eval \"$(sparkctl env)\"   # names the bootstrap interface",
		       "NCCL_SOCKET_IFNAME=%s (from %s) matches no interface: bootstrap fails",
		       value, where(source));
	else if (!chosen)
		report(ctx, CHECK_FAIL, "bring the interface up with an address, or name another",
		       "NCCL_SOCKET_IFNAME=%s (from %s) matches only interfaces that are down or "
		       "have "
		       "no address",
		       value, where(source));
	else {
		/* Compare with the bootstrap interface sparkctl env would choose. */
		struct env_options o = { .nodes = ctx->nodes };
		struct node_env e;
		struct strbuf err = STRBUF_INIT;
		if (env_generate(inv, &o, &e, &err) == 0 && e.bootstrap && e.bootstrap != chosen) {
			bool rail = false;
			for (size_t i = 0; i < e.fabric.nr_rails; i++)
				rail |= e.fabric.rails[i].netdev == chosen;
			if (rail)
				report(ctx, CHECK_WARN, "eval \"$(sparkctl env)\"",
				       "NCCL_SOCKET_IFNAME=%s (from %s) bootstraps over the RDMA "
				       "rail %s; "
				       "for this %s the bootstrap belongs on %s",
				       value, where(source), chosen->name,
				       env_topology_name(e.topology), e.bootstrap->name);
			else
				report(ctx, CHECK_PASS, NULL,
				       "NCCL_SOCKET_IFNAME=%s (from %s) bootstraps over %s", value,
				       where(source), chosen->name);
		} else {
			report(ctx, CHECK_PASS, NULL,
			       "NCCL_SOCKET_IFNAME=%s (from %s) bootstraps over %s", value,
			       where(source), chosen->name);
		}
		node_env_release(&e);
		strbuf_release(&err);
	}
	strvec_clear(&nf.names);
}

/* A GDR level that allows GPUDirect at some distance (anything but LOC / 0). */
static bool gdr_level_allows(const char *v)
{
	return v && *v && !streq(v, "LOC") && !streq(v, "0");
}

void check_nccl_gpudirect(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	const char *src_level, *src_dmabuf;
	const char *level = inventory_nccl_setting(inv, "NCCL_NET_GDR_LEVEL", &src_level);
	const char *dmabuf = inventory_nccl_setting(inv, "NCCL_DMABUF_ENABLE", &src_dmabuf);
	const struct inv_gpu *no_gdr = NULL, *no_dmabuf = NULL;
	bool known = inv->gpu.nr_gpus > 0;

	for (size_t i = 0; i < inv->gpu.nr_gpus; i++) {
		const struct inv_gpu *g = &inv->gpu.gpus[i];
		if (g->gpudirect_rdma == TRI_NO && !no_gdr)
			no_gdr = g;
		if (g->dma_buf == TRI_NO && !no_dmabuf)
			no_dmabuf = g;
		known &= g->gpudirect_rdma >= 0 && g->dma_buf >= 0;
	}
	bool problem = false;
	if (gdr_level_allows(level) && no_gdr) {
		struct strbuf fix = STRBUF_INIT;
		unset_fix(&fix, "NCCL_NET_GDR_LEVEL", src_level);
		strbuf_addstr(&fix, ", or set NCCL_NET_GDR_LEVEL=LOC (sparkctl env does)");
		report(ctx, CHECK_FAIL, fix.buf,
		       "NCCL_NET_GDR_LEVEL=%s (from %s) asks for GPUDirect RDMA, which GPU %u (%s) "
		       "does "
		       "not support: init_process_group hangs",
		       level, where(src_level), no_gdr->index, no_gdr->name ? no_gdr->name : "?");
		strbuf_release(&fix);
		problem = true;
	}
	if (dmabuf && streq(dmabuf, "1") && no_dmabuf) {
		struct strbuf fix = STRBUF_INIT;
		unset_fix(&fix, "NCCL_DMABUF_ENABLE", src_dmabuf);
		strbuf_addstr(&fix, ", or set NCCL_DMABUF_ENABLE=0");
		report(ctx, CHECK_FAIL, fix.buf,
		       "NCCL_DMABUF_ENABLE=1 (from %s) on GPU %u (%s), which does not support "
		       "DMA-BUF: "
		       "init_process_group hangs",
		       where(src_dmabuf), no_dmabuf->index,
		       no_dmabuf->name ? no_dmabuf->name : "?");
		strbuf_release(&fix);
		problem = true;
	}
	if (problem)
		return;
	if (!known && (gdr_level_allows(level) || (dmabuf && streq(dmabuf, "1"))))
		report(ctx, CHECK_SKIP, NULL,
		       "GPUDirect settings are present but the GPU's support is unknown (no CUDA)");
	else
		report(ctx, CHECK_PASS, NULL, "no GPUDirect setting beyond what the GPU supports");
}

void check_nccl_transport(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	const char *src;
	const char *v;
	size_t problems = 0;

	if ((v = inventory_nccl_setting(inv, "NCCL_IB_DISABLE", &src)) && streq(v, "1")) {
		struct strbuf fix = STRBUF_INIT;
		unset_fix(&fix, "NCCL_IB_DISABLE", src);
		report(ctx, CHECK_FAIL, fix.buf,
		       "NCCL_IB_DISABLE=1 (from %s): NCCL sends everything over TCP sockets",
		       where(src));
		strbuf_release(&fix);
		problems++;
	}
	if ((v = inventory_nccl_setting(inv, "NCCL_NET", &src)) && !strcasecmp(v, "Socket")) {
		struct strbuf fix = STRBUF_INIT;
		unset_fix(&fix, "NCCL_NET", src);
		report(ctx, CHECK_FAIL, fix.buf,
		       "NCCL_NET=%s (from %s): NCCL uses TCP sockets, not RDMA", v, where(src));
		strbuf_release(&fix);
		problems++;
	}
	const char *plugin = inventory_nccl_setting(inv, "NCCL_NET_PLUGIN", &src);
	const char *ldpath = inventory_env(inv, "LD_LIBRARY_PATH");
	bool roce = false;
	struct fabric f;
	fabric_build(inv, false, &f);
	roce = f.nr_rails && !f.infiniband;
	fabric_release(&f);
	if (roce && plugin && !streq(plugin, "none")) {
		report(ctx, CHECK_WARN, "export NCCL_NET_PLUGIN=none",
		       "NCCL_NET_PLUGIN=%s (from %s): external net plugins break RoCE on DGX "
		       "Spark; "
		       "NCCL's own IB transport is what works",
		       plugin, where(src));
		problems++;
	} else if (roce && !plugin && ldpath &&
		   (strstr(ldpath, "nccl_rdma_sharp_plugin") || strstr(ldpath, "ofi-nccl"))) {
		report(ctx, CHECK_WARN, "export NCCL_NET_PLUGIN=none",
		       "LD_LIBRARY_PATH holds an external NCCL net plugin (%s), which NCCL loads "
		       "and "
		       "which breaks RoCE on DGX Spark",
		       strstr(ldpath, "sharp") ? "HPC-X SHARP" : "AWS OFI");
		problems++;
	}
	if (!problems)
		report(ctx, CHECK_PASS, NULL, "nothing forces NCCL off its RDMA transport");
}

/* Settings known to break jobs when left in a configuration file. */
static const char *const harmful_keys[] = {
	"NCCL_IB_USE_INLINE",
	"NCCL_IB_PREPOST_RECEIVE_WORK_REQUESTS",
};

void check_nccl_conf(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	struct strbuf keys = STRBUF_INIT;
	const char *file = NULL;

	for (size_t i = 0; i < inv->sys.nr_nccl_conf; i++) {
		const struct inv_setting *s = &inv->sys.nccl_conf[i];
		bool harmful = false;
		for (size_t k = 0; k < ARRAY_SIZE(harmful_keys); k++)
			harmful |= streq(s->key, harmful_keys[k]);
		if (harmful) {
			struct strbuf fix = STRBUF_INIT;
			strbuf_addf(&fix, "remove %s from %s", s->key, s->file);
			report(ctx, CHECK_FAIL, fix.buf,
			       "%s sets %s=%s for every job: this leftover froze NCCL's warm-up on "
			       "DGX "
			       "Spark",
			       s->file, s->key, s->value);
			strbuf_release(&fix);
		}
		strbuf_addf(&keys, "%s%s=%s", keys.len ? ", " : "", s->key, s->value);
		file = s->file;
	}
	if (!inv->sys.nr_nccl_conf) {
		report(ctx, CHECK_PASS, NULL, "no NCCL configuration file sets anything");
	} else {
		struct strbuf fix = STRBUF_INIT;
		strbuf_addf(&fix,
			    "move what is still wanted into the job's environment "
			    "(sparkctl env --set KEY=VALUE) and remove %s",
			    file);
		report(ctx, CHECK_WARN, fix.buf,
		       "NCCL configuration files set %s for every job, silently", keys.buf);
		strbuf_release(&fix);
	}
	strbuf_release(&keys);
}
