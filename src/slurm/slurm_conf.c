#include "sparkctl.h"

#include <ctype.h>
#include <strings.h>
#include <sys/socket.h>

#include "config/fabric.h"
#include "lib/parse.h"
#include "lib/xalloc.h"
#include "remote/hosts.h"
#include "slurm/slurm_conf.h"

#define MIB ((uint64_t)1 << 20)

/* The default reserve on unified memory: the GPU's allocations come out of MemTotal too. */
#define UNIFIED_RESERVE_MILLI_PERCENT 10000
#define UNIFIED_RESERVE_MIN_MIB	      8192
#define RESERVE_MILLI_PERCENT	      2000

int slurm_mem_reserve_parse(const char *s, struct slurm_mem_reserve *out)
{
	static const struct {
		const char *suffix;
		uint64_t bytes;
	} units[] = {
		{ "KiB", 1 << 10 }, { "KB", 1 << 10 },	  { "K", 1 << 10 },	{ "MiB", MIB },
		{ "MB", MIB },	    { "M", MIB },	  { "GiB", MIB << 10 }, { "GB", MIB << 10 },
		{ "G", MIB << 10 }, { "TiB", MIB << 20 }, { "TB", MIB << 20 },	{ "T", MIB << 20 },
	};
	size_t len = strlen(s), num_len = strspn(s, "0123456789.");
	uint64_t milli, bytes = MIB;
	char num[32];

	if (!num_len || num_len >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, num_len);
	num[num_len] = '\0';
	if (parse_milli(num, &milli) < 0 || milli > (uint64_t)1000 * 1000 * 1000)
		return -EINVAL;
	if (len == num_len + 1 && s[num_len] == '%') {
		/* A share: thousandths of a percent, below the whole. */
		if (milli >= 100 * 1000)
			return -EINVAL;
		*out = (struct slurm_mem_reserve){ SLURM_RESERVE_RATIO, milli };
		return 0;
	}
	if (len > num_len) {
		size_t i;
		for (i = 0; i < ARRAY_SIZE(units); i++)
			if (!strcasecmp(s + num_len, units[i].suffix))
				break;
		if (i == ARRAY_SIZE(units))
			return -EINVAL;
		bytes = units[i].bytes;
	}
	/* At most 10^9 units of at most 2^40 bytes: the product fits. */
	*out = (struct slurm_mem_reserve){ SLURM_RESERVE_MIB, milli * (bytes >> 10) / 1000 / 1024 };
	return 0;
}

/* The short host name ("spark-01" of "spark-01.lab"), if Slurm can take it as a NodeName. */
static int node_name(const struct inventory *inv, size_t i, char **ret, struct strbuf *err)
{
	const char *h = inv->sys.hostname;
	size_t len;

	if (!h || !*h) {
		strbuf_addf(err, "node %zu: the inventory has no host name", i + 1);
		return -EINVAL;
	}
	len = strcspn(h, ".");
	for (size_t k = 0; k < len; k++) {
		unsigned char c = (unsigned char)h[k];
		if (!isalnum(c) && c != '-' && c != '_') {
			strbuf_addstr(err, "the host name '");
			strbuf_addstr_printable(err, h);
			strbuf_addstr(err, "' cannot be a Slurm node name");
			return -EINVAL;
		}
	}
	*ret = xstrndup(h, len);
	return 0;
}

/* The GPU's type for Gres: "NVIDIA GB10" -> "gb10", "NVIDIA H100 80GB HBM3" -> "h100". */
static char *gpu_type(const char *name)
{
	struct strbuf t = STRBUF_INIT;

	if (!name)
		return NULL;
	if (!strncasecmp(name, "NVIDIA ", 7))
		name += 7;
	for (const char *p = name; *p && *p != ' '; p++)
		if (isalnum((unsigned char)*p) || *p == '_' || *p == '-')
			strbuf_addch(&t, (char)tolower((unsigned char)*p));
	if (!t.len) {
		strbuf_release(&t);
		return NULL;
	}
	return strbuf_detach(&t, NULL);
}

static bool unified_memory(const struct inventory *inv)
{
	for (size_t i = 0; i < inv->gpu.nr_gpus; i++)
		if (inv->gpu.gpus[i].unified_memory == TRI_YES)
			return true;
	return false;
}

/*
 * The plan of a node's fabric among n nodes, as env's auto topology
 * decides it: InfiniBand or more than two cabled ports is a switch; one
 * port is a pair of two nodes, else a switch; both ports are a two-cable
 * pair of two nodes or a ring of three.  NULL without a fabric, or where
 * one node cannot tell.
 */
static const char *fabric_plan(const struct fabric *f, size_t n)
{
	if (!f->nr_rails)
		return NULL;
	if (f->infiniband || f->nr_ports > 2)
		return "switch";
	if (f->nr_ports == 1)
		return n > 2 ? "switch" : "pair";
	return n == 2 ? "pair" : n == 3 ? "ring" : NULL;
}

/* RealMemory: MemTotal in MiB less the reserve; the note says how. */
static int real_memory(const struct inventory *inv, const char *name,
		       const struct slurm_mem_reserve *r, uint64_t *ret, struct strbuf *note,
		       struct strbuf *err)
{
	uint64_t total, reserve;

	if (inv->sys.mem_total <= 0) {
		strbuf_addf(err, "%s: the inventory has no MemTotal", name);
		return -EINVAL;
	}
	total = (uint64_t)inv->sys.mem_total / MIB;
	strbuf_addf(note, "MemTotal %" PRIu64 " MiB less ", total);
	switch (r->kind) {
	case SLURM_RESERVE_MIB:
		reserve = r->value;
		strbuf_addf(note, "%" PRIu64 " MiB (--mem-reserve)", reserve);
		break;
	case SLURM_RESERVE_RATIO:
		reserve = total * r->value / 100000;
		strbuf_addf(note, "%" PRIu64 " MiB (--mem-reserve %" PRIu64 ".%03" PRIu64 "%%)",
			    reserve, r->value / 1000, r->value % 1000);
		break;
	case SLURM_RESERVE_DEFAULT:
	default:
		if (unified_memory(inv)) {
			reserve = total * UNIFIED_RESERVE_MILLI_PERCENT / 100000;
			if (reserve < UNIFIED_RESERVE_MIN_MIB)
				reserve = UNIFIED_RESERVE_MIN_MIB;
			strbuf_addf(note, "%" PRIu64 " MiB (unified memory: 10%%, at least 8 GiB)",
				    reserve);
		} else {
			reserve = total * RESERVE_MILLI_PERCENT / 100000;
			strbuf_addf(note, "%" PRIu64 " MiB (2%%)", reserve);
		}
		break;
	}
	if (reserve >= total) {
		strbuf_addf(err,
			    "%s: a reserve of %" PRIu64 " MiB leaves nothing of its %" PRIu64
			    " MiB",
			    name, reserve, total);
		return -EINVAL;
	}
	*ret = total - reserve;
	return 0;
}

int slurm_real_memory(const struct inventory *inv, const struct slurm_mem_reserve *r,
		      uint64_t *ret_mib)
{
	struct strbuf note = STRBUF_INIT, err = STRBUF_INIT;
	int ret = real_memory(inv, "node", r, ret_mib, &note, &err);

	strbuf_release(&note);
	strbuf_release(&err);
	return ret;
}

/* Gres=gpu:TYPE:N,... in the order the types first appear; gres.conf's lines. */
static void node_gpus(const struct inventory *inv, struct strbuf *desc, struct strbuf *gres)
{
	size_t n = inv->gpu.nr_gpus, listed = 0;
	char **types = xcalloc(n + 1, sizeof(*types));

	for (size_t i = 0; i < n; i++)
		types[i] = gpu_type(inv->gpu.gpus[i].name);
	for (size_t i = 0; i < n; i++) {
		unsigned count = 0;
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = (!types[k] && !types[i]) ||
			       (types[k] && types[i] && streq(types[k], types[i]));
		if (seen)
			continue;
		for (size_t k = i; k < n; k++)
			count += (!types[k] && !types[i]) ||
				 (types[k] && types[i] && streq(types[k], types[i]));
		strbuf_addstr(desc, listed++ ? "," : " Gres=");
		if (types[i])
			strbuf_addf(desc, "gpu:%s:%u", types[i], count);
		else
			strbuf_addf(desc, "gpu:%u", count);
	}
	for (size_t i = 0; i < n; i++) {
		strbuf_addstr(gres, "Name=gpu");
		if (types[i])
			strbuf_addf(gres, " Type=%s", types[i]);
		strbuf_addf(gres, " File=/dev/nvidia%u\n", inv->gpu.gpus[i].index);
		free(types[i]);
	}
	free(types);
}

static int describe_node(const struct inventory *inv, size_t i, size_t n,
			 const struct slurm_conf_options *o, struct slurm_node *out,
			 struct strbuf *err)
{
	const struct inv_cpu *cpu = &inv->sys.cpu;
	struct strbuf desc = STRBUF_INIT, note = STRBUF_INIT, gres = STRBUF_INIT;
	struct fabric f;
	uint64_t mem;
	int r;

	if ((r = node_name(inv, i, &out->name, err)) < 0)
		goto out;
	if (cpu->cpus <= 0 || cpu->sockets <= 0 || cpu->cores_per_socket <= 0 ||
	    cpu->threads_per_core <= 0) {
		strbuf_addf(err,
			    "%s: the inventory has no CPU topology (system.cpu: a sparkctl too old "
			    "on that node, or no /sys/devices/system/cpu)",
			    out->name);
		r = -EINVAL;
		goto out;
	}
	if ((r = real_memory(inv, out->name, &o->reserve, &mem, &note, err)) < 0)
		goto out;
	strbuf_addf(&desc,
		    "CPUs=%" PRId64 " Boards=1 SocketsPerBoard=%" PRId64 " CoresPerSocket=%" PRId64
		    " ThreadsPerCore=%" PRId64 " RealMemory=%" PRIu64,
		    cpu->cpus, cpu->sockets, cpu->cores_per_socket, cpu->threads_per_core, mem);
	node_gpus(inv, &desc, &gres);
	fabric_build(inv, false, &f);
	const char *plan = fabric_plan(&f, n);
	if (plan)
		out->plan = xstrdup(plan);
	if (f.nr_rails)
		strbuf_addf(&desc, " Features=%s%s%srails_%zu", plan ? "fabric_" : "",
			    plan ? plan : "", plan ? "," : "", f.nr_rails);
	fabric_release(&f);
	out->desc = strbuf_detach(&desc, NULL);
	out->memory_note = strbuf_detach(&note, NULL);
	out->gres = strbuf_detach(&gres, NULL);
out:
	strbuf_release(&desc);
	strbuf_release(&note);
	strbuf_release(&gres);
	return r;
}

/* The first IPv4 address of the interface of the default route: how the others reach it. */
static char *management_address(const struct inventory *inv)
{
	for (size_t i = 0; i < inv->nr_netdevs; i++) {
		const struct inv_netdev *nd = &inv->netdevs[i];
		if (nd->default_route != TRI_YES)
			continue;
		for (size_t k = 0; k < nd->nr_addrs; k++)
			if (nd->addrs[k].family == AF_INET)
				return xstrdup(nd->addrs[k].address);
	}
	return NULL;
}

static int check_partition(const char *name, struct strbuf *err)
{
	for (const char *p = name; *p; p++) {
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_') {
			strbuf_addstr(err, "--partition: '");
			strbuf_addstr_printable(err, name);
			strbuf_addstr(err, "' is not a partition name (letters, digits, '-', '_')");
			return -EDOM;
		}
	}
	if (!*name) {
		strbuf_addstr(err, "--partition: an empty name");
		return -EDOM;
	}
	return 0;
}

/* The node that runs slurmctld: by its name, its short name, or the first. */
static int find_controller(const struct slurm_conf *c, const char *want, struct strbuf *err)
{
	if (!want)
		return 0;
	for (size_t i = 0; i < c->nr_nodes; i++)
		if (!strcasecmp(c->nodes[i].name, want) ||
		    (!strncasecmp(c->nodes[i].name, want, strlen(c->nodes[i].name)) &&
		     want[strlen(c->nodes[i].name)] == '.'))
			return (int)i;
	strbuf_addstr(err, "--controller: '");
	strbuf_addstr_printable(err, want);
	strbuf_addstr(err, "' is not among the nodes (");
	for (size_t i = 0; i < c->nr_nodes; i++)
		strbuf_addf(err, "%s%s", i ? ", " : "", c->nodes[i].name);
	strbuf_addch(err, ')');
	return -EDOM;
}

int slurm_conf_build(const struct inventory *const *invs, size_t n,
		     const struct slurm_conf_options *o, struct slurm_conf *out, struct strbuf *err)
{
	int r;

	memset(out, 0, sizeof(*out));
	out->partition = xstrdup(o->partition ? o->partition : SLURM_DEFAULT_PARTITION);
	if ((r = check_partition(out->partition, err)) < 0)
		return r;
	out->nodes = xcalloc(n + 1, sizeof(*out->nodes));
	for (size_t i = 0; i < n; i++) {
		out->nr_nodes++;
		if ((r = describe_node(invs[i], i, n, o, &out->nodes[i], err)) < 0)
			return r;
		for (size_t k = 0; k < i; k++) {
			if (!strcasecmp(out->nodes[k].name, out->nodes[i].name)) {
				strbuf_addf(err, "two nodes are named %s (nodes %zu and %zu)",
					    out->nodes[i].name, k + 1, i + 1);
				return -EINVAL;
			}
		}
		out->gpus |= invs[i]->gpu.nr_gpus > 0;
	}
	if ((r = find_controller(out, o->controller, err)) < 0)
		return r;
	out->controller = (size_t)r;
	out->controller_addr = management_address(invs[out->controller]);
	for (size_t i = 0; i < n; i++) {
		const char *p = out->nodes[i].plan;
		if (!p || (i && (!out->plan || !streq(out->plan, p)))) {
			free(out->plan);
			out->plan = NULL;
			break;
		}
		if (!i)
			out->plan = xstrdup(p);
	}
	return 0;
}

void slurm_conf_release(struct slurm_conf *c)
{
	for (size_t i = 0; i < c->nr_nodes; i++) {
		free(c->nodes[i].name);
		free(c->nodes[i].desc);
		free(c->nodes[i].memory_note);
		free(c->nodes[i].gres);
		free(c->nodes[i].plan);
	}
	free(c->nodes);
	free(c->controller_addr);
	free(c->partition);
	free(c->plan);
	memset(c, 0, sizeof(*c));
}

/* The names of the nodes whose field (at offset) equals node i's, as a hostlist; those done. */
static void alike(const struct slurm_conf *c, size_t i, size_t offset, bool *done,
		  struct strbuf *out)
{
	const char **names = xcalloc(c->nr_nodes + 1, sizeof(*names));
	const char *mine = *(char *const *)((const char *)&c->nodes[i] + offset);
	size_t nr = 0;

	for (size_t k = i; k < c->nr_nodes; k++) {
		const char *theirs = *(char *const *)((const char *)&c->nodes[k] + offset);
		if (!done[k] && streq(mine, theirs)) {
			names[nr++] = c->nodes[k].name;
			done[k] = true;
		}
	}
	host_list_compress(names, nr, out);
	free(names);
}

static void all_nodes(const struct slurm_conf *c, struct strbuf *out)
{
	const char **names = xcalloc(c->nr_nodes + 1, sizeof(*names));

	for (size_t i = 0; i < c->nr_nodes; i++)
		names[i] = c->nodes[i].name;
	host_list_compress(names, c->nr_nodes, out);
	free(names);
}

void slurm_conf_nodes_text(const struct slurm_conf *c, struct strbuf *out)
{
	const struct slurm_node *ctl = &c->nodes[c->controller];
	bool *done = xcalloc(c->nr_nodes + 1, sizeof(*done));
	struct strbuf names = STRBUF_INIT;

	strbuf_addstr(out, SLURM_CONF_MARKER
		      ": the controller, nodes and partition.\n"
		      "# slurm.conf includes it (Include /" SLURM_CONF_DIR "/" SLURM_NODES_FILE
		      ")\n# in place of its own SlurmctldHost, GresTypes, TopologyPlugin,\n"
		      "# NodeName and PartitionName lines.\n#\n");
	if (c->controller_addr)
		strbuf_addf(
			out,
			"# DGX OS maps a node's own name to 127.0.1.1: the controller is given\n"
			"# with its management address, where every node reaches it.\n"
			"SlurmctldHost=%s(%s)\n",
			ctl->name, c->controller_addr);
	else
		strbuf_addf(out,
			    "# %s has no IPv4 address on the interface of its default route:\n"
			    "# add it as SlurmctldHost=%s(ADDRESS) where its own name maps to "
			    "loopback.\nSlurmctldHost=%s\n",
			    ctl->name, ctl->name, ctl->name);
	if (c->gpus)
		strbuf_addstr(out, "GresTypes=gpu\n");
	strbuf_addstr(out, "TopologyPlugin=topology/tree\n");
	strbuf_addstr(out, "#\n# RealMemory is MemTotal less a reserve for the system; on unified "
			   "memory\n# (GB10) the GPU's memory comes out of MemTotal too, so the "
			   "reserve is larger.\n");
	for (size_t i = 0; i < c->nr_nodes; i++) {
		if (done[i])
			continue;
		strbuf_reset(&names);
		alike(c, i, offsetof(struct slurm_node, desc), done, &names);
		strbuf_addf(out, "# %s: %s\n", names.buf, c->nodes[i].memory_note);
		strbuf_addf(out, "NodeName=%s %s\n", names.buf, c->nodes[i].desc);
	}
	strbuf_addf(out, "PartitionName=%s Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
		    c->partition);
	strbuf_release(&names);
	free(done);
}

void slurm_conf_gres_text(const struct slurm_conf *c, struct strbuf *out)
{
	bool *done = xcalloc(c->nr_nodes + 1, sizeof(*done));
	struct strbuf names = STRBUF_INIT;

	strbuf_addstr(out, SLURM_CONF_MARKER ": the GPUs of each node.\n");
	if (!c->gpus)
		strbuf_addstr(out, "# No node has a GPU.\n");
	for (size_t i = 0; i < c->nr_nodes; i++) {
		if (done[i] || !*c->nodes[i].gres)
			continue;
		strbuf_reset(&names);
		alike(c, i, offsetof(struct slurm_node, gres), done, &names);
		for (const char *line = c->nodes[i].gres; *line;) {
			const char *nl = strchrnul(line, '\n');
			strbuf_addf(out, "NodeName=%s %.*s\n", names.buf, (int)(nl - line), line);
			line = *nl ? nl + 1 : nl;
		}
	}
	strbuf_release(&names);
	free(done);
}

void slurm_conf_topology_text(const struct slurm_conf *c, struct strbuf *out)
{
	strbuf_addstr(out, SLURM_CONF_MARKER ": the fabric, for the topology/tree plugin.\n");
	if (c->plan && streq(c->plan, "switch"))
		strbuf_addstr(out, "# The nodes share one fabric switch.\n");
	else if (c->plan)
		strbuf_addf(
			out,
			"# The fabric is a %s of direct links, no switch: one switch of all the\n"
			"# nodes stands for it, so that every node can be given to one job.\n",
			c->plan);
	else
		strbuf_addstr(out, "# The nodes' fabric plan is not one plan (or there is no "
				   "fabric): one switch\n# of all the nodes, so that every node "
				   "can be given to one job.\n");
	strbuf_addstr(out, "SwitchName=fabric Nodes=");
	all_nodes(c, out);
	strbuf_addch(out, '\n');
}
