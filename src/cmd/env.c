/*
 * sparkctl env - the NCCL/UCX/Gloo/MPI environment a distributed job on
 * this node needs, derived from what the node has (config/nccl_env.h).
 */
#include "sparkctl.h"

#include "cmd/cmd.h"
#include "config/nccl_env.h"
#include "inventory/inventory_json.h"
#include "lib/xalloc.h"

static const char *const env_usage[] = {
	"sparkctl env [--topology auto|pair|switch|ring] [--nodes N] [--socket-if IF]\n"
	"                    [--pin-gid] [--mode auto|safe|dmabuf [--force]] [--set KEY=VALUE]...\n"
	"                    [--format sh|env|docker | --json] [--explain]\n"
	"                    [--root DIR | --from FILE [--from FILE]...]",
	NULL,
};

static const char env_description[] =
	"Print the environment a distributed job on this node needs: NCCL_IB_HCA with\n"
	"both twins of every cabled port, the bootstrap interface for NCCL, Gloo,\n"
	"TensorPipe, UCX and Open MPI, the GID selection (never a pinned index unless\n"
	"--pin-gid), GPUDirect settings from what the GPU supports, and what a 3-node\n"
	"ring adds.  --explain gives the fact behind every variable.\n"
	"\n"
	"With several --from inventories (one per node) it prints each node's\n"
	"environment and fails, naming the nodes, when their HCA lists would not pair\n"
	"or their bootstrap interfaces cannot reach each other.\n"
	"\n"
	"--format sh is safe to eval: eval \"$(sparkctl env)\".";

struct env_args {
	const char *topology, *mode, *format, *socket_if, *root;
	unsigned nodes;
	bool pin_gid, force, explain, json;
	struct strvec from, sets;
};

static int parse_choices(struct env_args *a, struct env_options *o, enum env_format *fmt)
{
	if (a->topology && env_parse_topology(a->topology, &o->topology) < 0)
		return cmd_usage_error("env", "unknown topology '%s' (auto, pair, switch, ring)",
				       a->topology);
	if (a->mode && env_parse_mode(a->mode, &o->mode) < 0)
		return cmd_usage_error("env", "unknown mode '%s' (auto, safe, dmabuf)", a->mode);
	if (a->format && env_parse_format(a->format, fmt) < 0)
		return cmd_usage_error("env", "unknown format '%s' (sh, env, docker, json)",
				       a->format);
	if (a->json && a->format && *fmt != ENV_FORMAT_JSON)
		return cmd_usage_error("env", "--json and --format %s cannot be used together",
				       a->format);
	if (a->json)
		*fmt = ENV_FORMAT_JSON;
	if (a->root && a->from.nr)
		return cmd_usage_error("env", "--root and --from cannot be used together");
	if (a->force && o->mode != GDR_MODE_DMABUF)
		return cmd_usage_error("env", "--force only applies to --mode dmabuf");
	return SPARKCTL_EXIT_OK;
}

/* Load the inventories: each --from, or this host (live or --root). */
static int load_nodes(const struct env_args *a, struct inventory **ret, size_t *nr)
{
	size_t n = a->from.nr ? a->from.nr : 1;
	struct inventory *invs = xcalloc(n, sizeof(*invs));
	int ret_code = SPARKCTL_EXIT_OK;

	for (size_t i = 0; i < n && ret_code == SPARKCTL_EXIT_OK; i++) {
		struct inventory_source src = { .root = a->root,
						.from = a->from.nr ? a->from.v[i] : NULL };
		inventory_init(&invs[i]);
		ret_code = inventory_source_load("env", &src, &invs[i]);
	}
	*ret = invs;
	*nr = n;
	return ret_code;
}

/* The command line into a, o and fmt; -1 when the command ends here with *ret. */
static int parse_env(const struct cmd *cmd, struct env_args *a, struct env_options *o,
		     enum env_format *fmt, int argc, char **argv, int *ret)
{
	const struct opt opts[] = {
		OPT_CHOICE(0, "topology", &a->topology, "TOPOLOGY", "auto|pair|switch|ring",
			   "auto (default), pair, switch or ring"),
		OPT_UINT(0, "nodes", &a->nodes, "N", "number of nodes in the cluster, when known"),
		OPT_STRING(0, "socket-if", &a->socket_if, "IF", "bootstrap interface to use"),
		OPT_BOOL(0, "pin-gid", &a->pin_gid,
			 "emit NCCL_IB_GID_INDEX (only if it is the same on every device)"),
		OPT_CHOICE(0, "mode", &a->mode, "MODE", "auto|safe|dmabuf",
			   "GPUDirect: auto (default, from the GPU), safe or dmabuf"),
		OPT_BOOL(0, "force", &a->force, "allow --mode dmabuf where the GPU lacks DMA-BUF"),
		OPT_LIST(0, "set", &a->sets, "KEY=VALUE", "add or override a variable"),
		OPT_CHOICE(0, "format", &a->format, "FORMAT", "sh|env|docker|json",
			   "sh (default), env or docker (json: as --json)"),
		OPT_BOOL(0, "json", &a->json, "print the variables as JSON"),
		OPT_BOOL(0, "explain", &a->explain, "say for every variable the fact it came from"),
		OPT_STRING(0, "root", &a->root, "DIR",
			   "read the host below DIR, e.g. a 'sparkctl capture' tree"),
		OPT_LIST(0, "from", &a->from, "FILE",
			 "a saved inventory ('sparkctl topo --json'); repeat for each node"),
		OPT_HELP(),
		OPT_END(),
	};
	int n = cmd_parse(cmd, opts, argc, argv);

	*ret = n < 0 ? cmd_parse_exit(n) : parse_choices(a, o, fmt);
	if (*ret != SPARKCTL_EXIT_OK || n < 0)
		return -1;
	o->nodes = a->nodes;
	o->socket_if = a->socket_if;
	o->pin_gid = a->pin_gid;
	o->force = a->force;
	o->sets = &a->sets;
	return n;
}

/* Each node's environment in the format; with several, whether they work together. */
static int print_envs(const struct env_args *a, const struct node_env *envs, size_t nr,
		      enum env_format fmt)
{
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	int ret = SPARKCTL_EXIT_OK;

	if (fmt == ENV_FORMAT_JSON && nr > 1) {
		env_format_json_nodes(envs, nr, a->explain, &out);
	} else {
		for (size_t i = 0; i < nr; i++) {
			if (i)
				strbuf_addch(&out, '\n');
			if (env_format(&envs[i], fmt, a->explain, &out, &err) < 0) {
				cmd_error("env", "%s", err.buf);
				ret = SPARKCTL_EXIT_ERROR;
				break;
			}
		}
	}
	if (ret == SPARKCTL_EXIT_OK)
		fputs(out.buf, stdout);
	if (ret == SPARKCTL_EXIT_OK && nr > 1 && env_check_cluster(envs, nr, &err) < 0) {
		for (char *line = err.buf; line && *line;) {
			char *nl = strchr(line, '\n');
			if (nl)
				*nl = '\0';
			cmd_error("env", "%s", line);
			line = nl ? nl + 1 : NULL;
		}
		ret = SPARKCTL_EXIT_PROBLEMS;
	}
	strbuf_release(&out);
	strbuf_release(&err);
	return ret;
}

static int run_env(const struct cmd *cmd, int argc, char **argv)
{
	struct env_args a = { .from = STRVEC_INIT, .sets = STRVEC_INIT };
	struct env_options o = { 0 };
	enum env_format fmt = ENV_FORMAT_SH;
	struct inventory *invs = NULL;
	struct node_env *envs = NULL;
	struct strbuf err = STRBUF_INIT;
	size_t nr = 0, made = 0;
	int ret;

	if (parse_env(cmd, &a, &o, &fmt, argc, argv, &ret) < 0 ||
	    (ret = load_nodes(&a, &invs, &nr)) != SPARKCTL_EXIT_OK)
		goto out;
	/* Several inventories say how many nodes there are. */
	if (nr > 1 && o.nodes < nr)
		o.nodes = (unsigned)nr;
	envs = xcalloc(nr, sizeof(*envs));
	for (size_t i = 0; i < nr; i++, made++) {
		int r = env_generate(&invs[i], &o, &envs[i], &err);
		for (size_t k = 0; k < envs[i].notes.nr; k++)
			cmd_error("env", "%s: %s", envs[i].node, envs[i].notes.v[k]);
		if (r < 0) {
			cmd_error("env", "%s", err.buf);
			made++;
			ret = cmd_exit_of_errno(r);
			goto out;
		}
	}
	ret = print_envs(&a, envs, nr, fmt);
out:
	for (size_t i = 0; i < made; i++)
		node_env_release(&envs[i]);
	free(envs);
	for (size_t i = 0; i < nr; i++)
		inventory_release(&invs[i]);
	free(invs);
	strvec_clear(&a.from);
	strvec_clear(&a.sets);
	strbuf_release(&err);
	return ret;
}

const struct cmd cmd_env = {
	.name = "env",
	.fn = run_env,
	.summary = "print the NCCL/UCX/Gloo/MPI environment for this node",
	.usage = env_usage,
	.description = env_description,
	.flags = CMD_READS_NODE,
	.exit_status = "0 printed, 1 a --root or --from that cannot be read, or no environment can "
		       "be made (an ambiguous topology, a refused setting), 2 usage, 3 no ACTIVE "
		       "fabric port, 4 several nodes' environments would not work together",
	.max_operands = 0,
};
