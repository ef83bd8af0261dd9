/*
 * sparkctl serve - one model served across the nodes by vLLM, SGLang,
 * TensorRT-LLM or llama.cpp.
 *
 * The plan (every node's environment and the engines' command lines) is
 * src/serve/serve_plan.c, the preflight src/serve/serve_preflight.c, the
 * report view/serve_view.c, the start order serve/serve_gate.c, the
 * readiness serve/serve_ready.c.  --print prints the plan; without it
 * the engine is started through launch's machinery.
 */
#include "sparkctl.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#include "bench/nccl_perf.h"
#include "check/check.h"
#include "cmd/cmd.h"
#include "inventory/inventory_json.h"
#include "launch/launcher.h"
#include "lib/clock.h"
#include "proc/run.h"
#include "lib/xalloc.h"
#include "probe/procs.h"
#include "remote/hosts.h"
#include "remote/session.h"
#include "remote/lookup.h"
#include "serve/serve_ask.h"
#include "serve/serve_gate.h"
#include "serve/serve_plan.h"
#include "serve/serve_ready.h"
#include "view/progress.h"
#include "view/serve_view.h"

/* Milliseconds one remote 'sparkctl topo --json' may take, connection included. */
#define REMOTE_TIMEOUT_MS     30000
#define REMOTE_FANOUT	      16
/* --ready-timeout's default: loading a large model from disk takes minutes. */
#define SERVE_READY_TIMEOUT_S 1800
/* Between two polls of the head's /health, and the most one may take. */
#define READY_POLL_MS	      1000
#define READY_REQUEST_MS      2000
/* A port option not given. */
#define PORT_UNSET	      UINT_MAX

static const char *const serve_usage[] = {
	"sparkctl serve vllm|sglang|trtllm|llamacpp MODEL [--print] [-H HOSTS | --hostfile FILE]\n"
	"                    [--tp N] [--pp N] [--backend mp|ray] [--port PORT] [--master-port "
	"PORT]\n"
	"                    [--image IMAGE [--model-cache DIR]] [--model-size SIZE | --params N "
	"[--dtype T]]\n"
	"                    [--ready-timeout S] [--json] [-- ENGINE_ARG...]",
	"sparkctl serve ENGINE MODEL --print --from FILE... [options] [-- ENGINE_ARG...]",
	NULL,
};

static const char serve_description[] =
	"Serve MODEL across the nodes with one engine: vllm (backend mp, without Ray, by\n"
	"default; or ray), sglang, trtllm (mpirun on the head) or llamacpp (rpc-server on\n"
	"each worker, bound to its fabric address only, llama-server on the head).  The\n"
	"first node is the head; every engine meets at the head's fabric address.\n"
	"\n"
	"Each node gets its 'sparkctl env' plus what the engines read: VLLM_HOST_IP,\n"
	"RAY_NODE_IP_ADDRESS and RAY_OVERRIDE_NODE_IP_ADDRESS (Ray), GLOO_SOCKET_IFNAME\n"
	"and TP_SOCKET_IFNAME as the plain name of its fabric interface.  With --image\n"
	"each node runs the engine in docker (host network and IPC, /dev/infiniband,\n"
	"memlock unlimited, the model cache mounted, the environment given with -e).\n"
	"The workers start first, the head last.  Tensor parallel defaults to the GPUs of\n"
	"a node, pipeline parallel to the nodes; their product must be all the GPUs.\n"
	"\n"
	"--print shows every node's environment and the command lines in start order,\n"
	"and the preflight: tp x pp against the GPUs, the model's share of each node's\n"
	"memory (--model-size, or --params x --dtype) with a 20% margin, the ports.\n"
	"Without --print, the engine is started through launch's machinery once the\n"
	"preflight passes: the workers first (each worker's part reports to, or is\n"
	"waited for by, the head's before the head's engine starts; trtllm's mpirun\n"
	"reaches the workers over ssh at their fabric addresses), output prefixed by\n"
	"node, the first part that ends ends all, Ctrl-C leaves nothing.  Once the\n"
	"head's /health answers 200 (polled from here), 'ready: http://HEAD:PORT/v1'\n"
	"on stdout; not by --ready-timeout: everything ended, exit 5.\n"
	"\n"
	"The nodes: -H, --hostfile, a Slurm allocation, the cluster file, else this node\n"
	"(their inventories over SSH); --from saved inventories; --root DIR one node.\n"
	"Arguments after '--' go to the engine, on every node that runs it.";

struct serve_args {
	const char *hosts, *hostfile, *cluster, *root, *remote_sparkctl;
	const char *backend, *image, *model_cache, *model_size, *params, *dtype;
	struct strvec from;
	unsigned tp, pp, port, master_port, ready_timeout;
	bool print, json;
};

/* A word that ends up on a command line printed or run: printable, not empty. */
static bool word_ok(const char *s)
{
	return *s && str_is_printable(s, strlen(s), 0) && !strchr(s, '\n');
}

/* The engine and options into o; a usage error is printed. */
static int check_engine(const struct serve_args *a, const char *engine, const char *model,
			struct serve_options *o)
{
	struct strbuf err = STRBUF_INIT;
	int ret = SPARKCTL_EXIT_OK;

	if (serve_engine_choose(engine, a->backend, o, &err) < 0)
		ret = cmd_usage_error("serve", "%s", err.buf);
	strbuf_release(&err);
	if (ret != SPARKCTL_EXIT_OK)
		return ret;
	if (!word_ok(model))
		return cmd_usage_error("serve", "the model is an empty or unprintable word");
	o->model = model;
	if ((a->tp != UINT_MAX || a->pp != UINT_MAX) && o->engine == SERVE_ENGINE_LLAMACPP)
		return cmd_usage_error("serve", "llamacpp splits layers over its RPC servers: no "
						"--tp or --pp");
	if ((a->tp != UINT_MAX && !a->tp) || (a->pp != UINT_MAX && !a->pp))
		return cmd_usage_error("serve", "--tp and --pp are at least 1");
	o->tp = a->tp == UINT_MAX ? 0 : a->tp;
	o->pp = a->pp == UINT_MAX ? 0 : a->pp;
	return SPARKCTL_EXIT_OK;
}

/* The ports: given ones are ports, and distinct (serve.ports). */
static int check_ports(const struct serve_args *a, struct serve_options *o)
{
	struct findings f = { 0 };
	int ret = SPARKCTL_EXIT_OK;

	o->port = a->port == PORT_UNSET ? serve_default_port(o->engine) : a->port;
	o->master_port = a->master_port == PORT_UNSET
				 ? serve_default_master_port(o->engine, o->backend)
				 : a->master_port;
	serve_check_ports(o, &f);
	if (f.items[0].status == CHECK_FAIL)
		ret = cmd_usage_error("serve", "%s: %s", f.items[0].message, f.items[0].fix);
	findings_release(&f);
	return ret;
}

/* The model's size: --model-size, or --params x --dtype. */
static int check_size(const struct serve_args *a, struct serve_options *o)
{
	uint64_t count;
	unsigned halves = 4;

	if (a->model_size && a->params)
		return cmd_usage_error("serve", "--model-size or --params, not both");
	if (a->dtype && !a->params)
		return cmd_usage_error("serve", "--dtype only applies with --params");
	if (a->model_size && perf_parse_size(a->model_size, &o->model_bytes) < 0)
		return cmd_usage_error("serve", "--model-size '%s': a size such as 16G, 140G",
				       a->model_size);
	if (a->dtype && serve_dtype_halves(a->dtype, &halves) < 0)
		return cmd_usage_error("serve", "--dtype '%s': bf16, fp16, fp8 or fp4", a->dtype);
	if (a->params) {
		if (serve_params_parse(a->params, &count) < 0)
			return cmd_usage_error(
				"serve", "--params '%s': a count such as 8B, 70B, 500M", a->params);
		o->model_bytes = count * halves / 2;
	}
	return SPARKCTL_EXIT_OK;
}

static int check_args(const struct serve_args *a, int n, char **argv, struct serve_options *o)
{
	struct strbuf err = STRBUF_INIT;
	int ret;

	if (n < 2)
		return cmd_usage_error("serve", "give the ENGINE and the MODEL: sparkctl serve "
						"vllm|sglang|trtllm|llamacpp MODEL --print");
	if ((ret = check_engine(a, argv[1], argv[2], o)) != SPARKCTL_EXIT_OK ||
	    (ret = check_ports(a, o)) != SPARKCTL_EXIT_OK ||
	    (ret = check_size(a, o)) != SPARKCTL_EXIT_OK)
		return ret;
	if (a->json && !a->print)
		return cmd_usage_error("serve", "--json is for --print");
	if ((a->from.nr || a->root) && !a->print)
		return cmd_usage_error("serve", "--from and --root name no node to start on: give "
						"--print, or -H");
	if ((a->hosts || a->hostfile || a->cluster) && a->from.nr)
		return cmd_usage_error("serve", "-H, --hostfile or --cluster, or --from: not both");
	if (a->root && (a->from.nr || a->hosts || a->hostfile || a->cluster))
		return cmd_usage_error("serve",
				       "--root is one node: not with --from, -H, --hostfile "
				       "or --cluster");
	if (a->image && !word_ok(a->image))
		return cmd_usage_error("serve", "--image: an empty or unprintable name");
	if (a->model_cache && (a->model_cache[0] != '/' || !word_ok(a->model_cache)))
		return cmd_usage_error("serve", "--model-cache takes an absolute path");
	if (a->model_cache && !a->image)
		return cmd_usage_error("serve", "--model-cache only applies with --image");
	for (size_t i = 0; i < o->engine_args->nr; i++)
		if (!str_is_printable(o->engine_args->v[i], strlen(o->engine_args->v[i]), 0))
			return cmd_usage_error("serve", "an engine argument is not printable");
	if (serve_check_engine_args(o->engine, o->engine_args, &err) < 0) {
		ret = cmd_usage_error("serve", "%s", err.buf);
		strbuf_release(&err);
		return ret;
	}
	o->image = a->image;
	o->model_cache = a->model_cache;
	return SPARKCTL_EXIT_OK;
}

/*
 * The command line into a and o; what follows the first '--' is the
 * engine's (engine_args).  Returns -1 when the command ends here with *ret.
 */
static int parse_serve(const struct cmd *cmd, struct serve_args *a, struct serve_options *o,
		       struct strvec *engine_args, int argc, char **argv, int *ret)
{
	const struct opt opts[] = {
		OPT_STRING('H', "hosts", &a->hosts, "HOSTS",
			   "the nodes, the head first: spark1,spark2 or spark[1-4]"),
		OPT_STRING(0, "hostfile", &a->hostfile, "FILE", "the nodes, from a hostfile"),
		OPT_STRING(0, "cluster", &a->cluster, "FILE",
			   "the cluster file whose nodes to use without -H (env SPARKCTL_CLUSTER)"),
		OPT_LIST(0, "from", &a->from, "FILE",
			 "saved inventories ('sparkctl topo --json'), one per node; repeat"),
		OPT_STRING(0, "root", &a->root, "DIR",
			   "one node: the host below DIR (a 'sparkctl capture' tree)"),
		OPT_STRING(0, "remote-sparkctl", &a->remote_sparkctl, "PATH",
			   "sparkctl on the nodes (default: this program's path, then PATH, then "
			   "~/.local/bin/sparkctl)"),
		OPT_UINT(0, "tp", &a->tp, "N", "tensor parallel size (default: a node's GPUs)"),
		OPT_UINT(0, "pp", &a->pp, "N", "pipeline parallel size (default: the nodes)"),
		OPT_CHOICE(0, "backend", &a->backend, "BACKEND", "mp|ray",
			   "vllm's: mp (default, no Ray) or ray"),
		OPT_UINT(0, "port", &a->port, "PORT",
			 "the API's port on the head (default: the engine's)"),
		OPT_UINT(0, "master-port", &a->master_port, "PORT",
			 "the rendezvous port on the head (default: the engine's)"),
		OPT_STRING(0, "image", &a->image, "IMAGE", "run the engine in this docker image"),
		OPT_STRING(0, "model-cache", &a->model_cache, "DIR",
			   "mounted as the container's Hugging Face cache (default "
			   "~/.cache/huggingface)"),
		OPT_STRING(0, "model-size", &a->model_size, "SIZE",
			   "the weights' size, for the memory check: 16G, 140G"),
		OPT_STRING(0, "params", &a->params, "N",
			   "the model's parameters, for the memory check: 8B, 70B"),
		OPT_CHOICE(0, "dtype", &a->dtype, "TYPE", "bf16|fp16|fp8|fp4",
			   "the weights' type with --params: bf16 (default), fp16, fp8 or fp4"),
		OPT_UINT(0, "ready-timeout", &a->ready_timeout, "S",
			 "end all (exit 5) if the head's /health is not 200 after S s (default "
			 "1800; 0: wait)"),
		OPT_BOOL(0, "print", &a->print, "print each node's environment and commands"),
		OPT_BOOL(0, "json", &a->json, "with --print: as JSON"),
		OPT_HELP(),
		OPT_END(),
	};
	int n, split = argc;

	for (int i = 1; i < argc; i++)
		if (streq(argv[i], "--")) {
			split = i;
			break;
		}
	for (int i = split + 1; i < argc; i++)
		strvec_push(engine_args, argv[i]);
	o->engine_args = engine_args;
	n = cmd_parse(cmd, opts, split, argv);
	*ret = n < 0 ? cmd_parse_exit(n) : check_args(a, n, argv, o);
	return *ret == SPARKCTL_EXIT_OK && n >= 0 ? n : -1;
}

/* The nodes' inventories into c: --from files, the node below --root, or over SSH. */
static int collect(const struct serve_args *a, struct doctor_cluster *c)
{
	struct remote_session rm = { 0 };
	struct host_list hosts = { 0 };
	struct strbuf err = STRBUF_INIT;
	int ret = SPARKCTL_EXIT_OK;

	if (a->from.nr || a->root) {
		size_t nr = a->from.nr ? a->from.nr : 1;
		c->nodes = xcalloc(nr, sizeof(*c->nodes));
		for (size_t i = 0; i < nr && ret == SPARKCTL_EXIT_OK; i++, c->nr_nodes++) {
			struct inventory_source src = { .root = a->root,
							.from = a->from.nr ? a->from.v[i] : NULL };
			inventory_init(&c->nodes[i].inv);
			ret = inventory_source_load("serve", &src, &c->nodes[i].inv);
			c->nodes[i].inspected = ret == SPARKCTL_EXIT_OK;
		}
		goto out;
	}
	if (host_list_from_options(a->hosts, a->hostfile, a->cluster, "localhost", &hosts, &err) <
	    0) {
		ret = cmd_usage_error("serve", "%s", err.buf);
		goto out;
	}
	remote_session_init(&rm, a->remote_sparkctl, true);
	c->nodes = xcalloc(hosts.nr, sizeof(*c->nodes));
	for (size_t i = 0; i < hosts.nr; i++)
		c->nodes[c->nr_nodes++].host = xstrdup(hosts.hosts[i].name);
	progress_begin(!a->json, "serve: reading %zu node%s", c->nr_nodes,
		       c->nr_nodes == 1 ? "" : "s");
	remote_gather_inventories(&rm, c, REMOTE_FANOUT, REMOTE_TIMEOUT_MS);
	progress_end();
	for (size_t i = 0; i < c->nr_nodes; i++) {
		if (c->nodes[i].inspected)
			continue;
		cmd_error("serve", "%s: %s", c->nodes[i].host,
			  c->nodes[i].error ? c->nodes[i].error : "not read");
		ret = SPARKCTL_EXIT_UNAVAILABLE;
	}
	remote_session_close(&rm);
out:
	/* A saved inventory or tree is named by its node's hostname. */
	for (size_t i = 0; i < c->nr_nodes; i++)
		if (!c->nodes[i].host)
			c->nodes[i].host =
				xstrdup(c->nodes[i].inv.sys.hostname ? c->nodes[i].inv.sys.hostname
								     : "localhost");
	host_list_release(&hosts);
	strbuf_release(&err);
	return ret;
}

/*
 * The plan of the nodes in c into plan (release it) and their inputs into
 * *in (free it); 'sparkctl env's notes and any error said.  An exit status.
 */
static int make_plan(const struct serve_options *o, const struct doctor_cluster *c,
		     struct serve_node_input **in, struct serve_plan *plan)
{
	struct strbuf err = STRBUF_INIT;
	int r, ret = SPARKCTL_EXIT_OK;

	*in = xcalloc(c->nr_nodes, sizeof(**in));
	for (size_t i = 0; i < c->nr_nodes; i++)
		(*in)[i] = (struct serve_node_input){ c->nodes[i].host, &c->nodes[i].inv };
	r = serve_plan_build(o, *in, c->nr_nodes, plan, &err);
	for (size_t i = 0; i < plan->notes.nr; i++)
		cmd_error("serve", "%s", plan->notes.v[i]);
	if (r < 0) {
		ret = cmd_exit_of_errno(r);
		if (ret == SPARKCTL_EXIT_USAGE)
			cmd_usage_error("serve", "%s", err.buf);
		else
			cmd_error("serve", "%s", err.buf);
	}
	strbuf_release(&err);
	return ret;
}

/*
 * The preflight's checks on the nodes themselves (serve/serve_ask.h): what
 * listens on each, the image's id, the NCCL in the image and the nodes'
 * own, asked over ssh as the inventories were.  Nothing to ask of --from
 * files or a --root tree.
 */
static void check_nodes(const struct serve_args *a, const struct serve_plan *plan,
			const struct serve_node_input *in, struct findings *f)
{
	const struct serve_ask_options ask = { .title = "serve", .progress = !a->json };
	struct remote_session rm = { 0 };

	if (a->from.nr || a->root)
		return;
	remote_session_init(&rm, a->remote_sparkctl, true);
	serve_check_nodes(&rm, plan, in, &ask, f);
	remote_session_close(&rm);
}

/* The plan and the preflight of the nodes in c, printed; the exit status. */
static int print_plan(const struct serve_args *a, const struct serve_options *o,
		      const struct doctor_cluster *c)
{
	struct serve_node_input *in = NULL;
	struct strbuf out = STRBUF_INIT;
	struct findings f = { 0 };
	struct serve_plan plan;
	struct emitter e;
	int ret;

	if ((ret = make_plan(o, c, &in, &plan)) != SPARKCTL_EXIT_OK)
		goto out;
	serve_preflight(o, in, c->nr_nodes, &f);
	check_nodes(a, &plan, in, &f);
	emit_init(&e, a->json ? EMIT_JSON : EMIT_TEXT, &out, false);
	serve_plan_emit(&plan, &f, &e);
	emit_finish(&e, &out);
	fputs(out.buf, stdout);
	for (size_t i = 0; i < f.nr; i++)
		if (f.items[i].status == CHECK_FAIL) {
			cmd_error("serve", "preflight: %s %s: %s", f.items[i].check_id,
				  f.items[i].node, f.items[i].message);
			ret = SPARKCTL_EXIT_PROBLEMS;
		}
out:
	serve_plan_release(&plan);
	findings_release(&f);
	strbuf_release(&out);
	free(in);
	return ret;
}

static void add_words(struct strbuf *script, const struct strvec *words)
{
	for (size_t k = 0; k < words->nr; k++) {
		serve_sh_word(script, words->v[k]);
		strbuf_addch(script, ' ');
	}
}

/*
 * Ray's order: the Ray head, then the workers' Ray (each once the head's
 * GCS listens), then vLLM on the head once every worker's raylet is
 * connected to the GCS (serve_gate.h).  The head's wait goes between its
 * Ray, in the background, and its exec'd vLLM: into part.
 */
static void ray_gate(const struct serve_plan *plan, size_t i, const struct strvec *words,
		     size_t workers, struct strbuf *script, struct strbuf *part)
{
	struct strbuf gate = STRBUF_INIT;
	const char *exec_line;

	add_words(i ? script : &gate, words);
	if (i) {
		strbuf_addf(script, "agent serve-gate --await-listening %s:%u || exit $?\n",
			    plan->nodes[0].address, plan->master_port);
		return;
	}
	strbuf_addf(&gate, "agent serve-gate --await-peers %s:%u:%zu || exit $?\n",
		    plan->nodes[0].address, plan->master_port, workers);
	exec_line = strstr(part->buf, "\nexec ");
	if (exec_line) {
		struct strbuf both = STRBUF_INIT;
		strbuf_add(&both, part->buf, (size_t)(exec_line + 1 - part->buf));
		strbuf_add(&both, gate.buf, gate.len);
		strbuf_addstr(&both, exec_line + 1);
		strbuf_reset(part);
		strbuf_add(part, both.buf, both.len);
		strbuf_release(&both);
	}
	strbuf_release(&gate);
}

/*
 * The head's part waits for a server on every worker (serve_gate.h):
 * llama.cpp's rpc-server, to which llama-server connects once; the sshd of
 * a TensorRT-LLM worker's container, which mpirun reaches once.
 */
static void await_worker_servers(const struct serve_plan *plan, struct strbuf *script)
{
	strbuf_addstr(script, "agent serve-gate");
	for (size_t i = 1; i < plan->nr_nodes; i++)
		strbuf_addf(script, " --await-listening %s:%u", plan->nodes[i].address,
			    plan->master_port);
	strbuf_addstr(script, " || exit $?\n");
}

/*
 * Whether the head's part waits for a server on each worker (llama.cpp's
 * rpc-server, the sshd of a TensorRT-LLM worker's container) rather than
 * for the workers' reports.
 */
static bool awaits_servers(const struct serve_plan *plan)
{
	return plan->engine == SERVE_ENGINE_LLAMACPP ||
	       (plan->engine == SERVE_ENGINE_TRTLLM && plan->image);
}

/*
 * A node's part: its variables and steps (serve_node_script).  A
 * TensorRT-LLM worker without --image has no step of its own - mpirun
 * starts its ranks over ssh - yet takes part in the job all the same: it
 * reports to the head's part before mpirun starts, then holds its place,
 * so that the job ends when the node is lost as when a part ends.
 */
static void node_part(const struct serve_plan *plan, size_t i, struct strbuf *part)
{
	strbuf_reset(part);
	serve_node_script(plan, i, part);
	if (!part->len && i && plan->engine == SERVE_ENGINE_TRTLLM)
		strbuf_addstr(part, "exec sleep infinity\n");
}

/*
 * The job launch runs: on each node with steps of its own, one unit, a
 * shell that takes the node's part by its index (NODE_RANK, which launch
 * sets) - its variables, then its engine.  The plan has the environment:
 * launch adds no 'sparkctl env' of its own.
 */
static int make_job(const struct serve_args *a, const struct serve_plan *plan,
		    struct launch_node *nodes, size_t *nr, struct launch_spec *job)
{
	struct strbuf script = STRBUF_INIT, part = STRBUF_INIT;
	char *self = proc_self_path_or_name();
	struct strvec words = STRVEC_INIT;
	size_t workers = 0;
	int r;

	for (size_t i = 1; i < plan->nr_nodes; i++) {
		node_part(plan, i, &part);
		workers += part.len > 0;
	}
	remote_sparkctl_words(&words, self, a->remote_sparkctl);
	*nr = 0;
	strbuf_addstr(&script, "case \"$NODE_RANK\" in\n");
	for (size_t i = 0; i < plan->nr_nodes; i++) {
		node_part(plan, i, &part);
		if (!part.len)
			continue;
		strbuf_addf(&script, "%zu)\n", *nr);
		/*
		 * The workers first, the head last (serve_gate.h): llama-server
		 * connects once to each rpc-server, mpirun once to each worker
		 * container's sshd, the others' workers report.
		 */
		if (workers && plan->backend == SERVE_BACKEND_RAY) {
			ray_gate(plan, i, &words, workers, &script, &part);
		} else if (workers && (!awaits_servers(plan) || !i)) {
			for (size_t k = 0; k < words.nr; k++) {
				serve_sh_word(&script, words.v[k]);
				strbuf_addch(&script, ' ');
			}
			if (awaits_servers(plan))
				await_worker_servers(plan, &script);
			else
				strbuf_addf(&script, "agent serve-gate --%s %s:%u:%zu || exit $?\n",
					    i ? "report-to" : "await-workers",
					    plan->nodes[0].address, plan->master_port,
					    i ? (size_t)plan->nodes[i].rank : workers);
		}
		strbuf_addf(&script, "%s;;\n", part.buf);
		nodes[*nr] = (struct launch_node){ .host = plan->nodes[i].host,
						   .local = host_is_local(plan->nodes[i].host),
						   .nproc = 1 };
		(*nr)++;
	}
	strbuf_addstr(&script, "esac\n");
	strvec_pushl(&job->argv, "sh", "-c", script.buf, "sparkctl-serve", NULL);
	if ((r = launch_job_id_new(&job->job_id)) < 0)
		cmd_error("serve", "cannot make a job id: %s", strerror(-r));
	job->chdir = xstrdup("/");
	job->master_addr = xstrdup(plan->nodes[0].address);
	job->grace_ms = 10000;
	job->world_size = (unsigned)*nr;
	job->all_local = true;
	for (size_t i = 0; i < *nr; i++)
		job->all_local &= nodes[i].local;
	strbuf_release(&script);
	strbuf_release(&part);
	strvec_clear(&words);
	free(self);
	return r < 0 ? SPARKCTL_EXIT_ERROR : SPARKCTL_EXIT_OK;
}

/*
 * The head's readiness, polled from this host while launch runs the job:
 * "ready: URL/v1" on stdout once /health answers 200; when it has not after
 * timeout_s, SIGTERM to this process, which launch takes as the end of the
 * job (timed_out tells serve why).
 */
struct ready_watch {
	char addr[INET_ADDRSTRLEN];
	unsigned port, timeout_s;
	int stop_fd; /* readable: launch is done, stop polling */
	atomic_bool ready, timed_out;
};

static void *watch_ready(void *data)
{
	struct ready_watch *w = data;
	uint64_t deadline = monotonic_ms() + (uint64_t)w->timeout_s * 1000;
	struct pollfd stop = { .fd = w->stop_fd, .events = POLLIN };

	for (;;) {
		if (serve_http_status(w->addr, w->port, SERVE_READY_PATH, READY_REQUEST_MS) ==
		    200) {
			struct strbuf line = STRBUF_INIT;
			strbuf_addf(&line, "ready: http://%s:%u/v1\n", w->addr, w->port);
			fflush(stdout);
			(void)!write(STDOUT_FILENO, line.buf, line.len);
			strbuf_release(&line);
			atomic_store(&w->ready, true);
			return NULL;
		}
		if (w->timeout_s && monotonic_ms() >= deadline) {
			atomic_store(&w->timed_out, true);
			kill(getpid(), SIGTERM);
			return NULL;
		}
		if (poll(&stop, 1, READY_POLL_MS) > 0)
			return NULL;
	}
}

/*
 * The head's IPv4 address as this host reaches it - where ssh connects
 * ('ssh -G': its HostName), 127.0.0.1 for this host - into addr: the
 * engines' APIs listen on every address of the head, and its fabric
 * address is often not routed from here.  0, or -errno.
 */
static int head_address(const char *host, const char *ssh_program, char addr[INET_ADDRSTRLEN])
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai = NULL;
	struct run_job job;
	char *name = NULL;
	int r;

	if (host_is_local(host)) {
		snprintf(addr, INET_ADDRSTRLEN, "127.0.0.1");
		return 0;
	}
	run_job_init(&job);
	strvec_pushl(&job.argv, ssh_program ? ssh_program : "ssh", "-G", "--", host, NULL);
	if (run_jobs(&job, 1, 0, 5000, 1 << 20) == 0 && job.status == 0) {
		for (char *l = job.out.buf; l && *l;
		     l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
			if (!strncmp(l, "hostname ", 9)) {
				name = xstrndup(l + 9, strcspn(l + 9, "\n"));
				break;
			}
	}
	run_job_release(&job);
	r = getaddrinfo(name ? name : host, NULL, &hints, &ai);
	free(name);
	if (r)
		return -EHOSTUNREACH;
	inet_ntop(AF_INET, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, addr, INET_ADDRSTRLEN);
	freeaddrinfo(ai);
	return 0;
}

/*
 * The watch of the head's readiness, in a thread of its own that takes no
 * signal: launch's signals stay blocked from here on, so that a SIGTERM
 * the watch sends before launch watches them is not lost.  0 or -errno.
 */
static int start_watch(const struct serve_plan *plan, unsigned timeout_s, struct ready_watch *w,
		       pthread_t *t, int stop_pipe[2], sigset_t *old_mask)
{
	sigset_t all, launch_signals;
	int r;

	*w = (struct ready_watch){ .port = plan->port, .timeout_s = timeout_s };
	/* Not known by name: its fabric address, which may be routed from here. */
	if (head_address(plan->nodes[0].host, getenv("SPARKCTL_SSH"), w->addr) < 0)
		snprintf(w->addr, sizeof(w->addr), "%s", plan->nodes[0].address);
	if (pipe2(stop_pipe, O_CLOEXEC) < 0)
		return -errno;
	w->stop_fd = stop_pipe[0];
	sigemptyset(&launch_signals);
	sigaddset(&launch_signals, SIGINT);
	sigaddset(&launch_signals, SIGTERM);
	sigaddset(&launch_signals, SIGHUP);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &launch_signals, old_mask);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	r = pthread_create(t, NULL, watch_ready, w);
	pthread_sigmask(SIG_SETMASK, old_mask, NULL);
	pthread_sigmask(SIG_BLOCK, &launch_signals, NULL);
	if (r)
		pthread_sigmask(SIG_SETMASK, old_mask, NULL);
	return -r;
}

static void stop_watch(struct ready_watch *w, pthread_t t, const int stop_pipe[2],
		       const sigset_t *old_mask)
{
	(void)!write(stop_pipe[1], "", 1);
	pthread_join(t, NULL);
	/* The watch's SIGTERM, when the job had ended by itself meanwhile: taken here. */
	if (atomic_load(&w->timed_out)) {
		const struct timespec now = { 0 };
		sigset_t term;
		sigemptyset(&term);
		sigaddset(&term, SIGTERM);
		(void)sigtimedwait(&term, NULL, &now);
	}
	pthread_sigmask(SIG_SETMASK, old_mask, NULL);
}

/* Start the plan through launch: every part on its node, the first failure ends all. */
static int start_plan(const struct serve_args *a, const struct serve_plan *plan)
{
	struct launch_node *nodes = xcalloc(plan->nr_nodes, sizeof(*nodes));
	struct strvec ssh_extra = STRVEC_INIT;
	struct launch_result res = { 0 };
	struct strbuf err = STRBUF_INIT;
	struct launch_spec job;
	char *self = proc_self_path_or_name();
	struct ready_watch watch = { 0 };
	int stop_pipe[2] = { -1, -1 };
	pthread_t watcher;
	sigset_t old_mask;
	size_t nr;
	int r, ret;

	launch_spec_init(&job);
	if ((ret = make_job(a, plan, nodes, &nr, &job)) != SPARKCTL_EXIT_OK)
		goto out;
	/* A node that dies is noticed in 15 s, not at the next TCP timeout. */
	strvec_pushl(&ssh_extra, "ServerAliveInterval=5", "ServerAliveCountMax=3", NULL);
	const struct ssh_options ssh = { .program = getenv("SPARKCTL_SSH"),
					 .connect_timeout = 5,
					 .extra_options = &ssh_extra };
	const struct launch_options o = { .job = &job,
					  .nodes = nodes,
					  .nr_nodes = nr,
					  .local_sparkctl = self,
					  .remote_sparkctl = a->remote_sparkctl,
					  .ssh = &ssh,
					  .tag_output = true,
					  .hosts_arg = a->hostfile ? a->hostfile
						       : a->hosts  ? a->hosts
								   : "localhost",
					  .out_fd = STDOUT_FILENO,
					  .err_fd = STDERR_FILENO };
	cmd_error("serve", "starting %s on %zu node%s; its API will be %s",
		  serve_engine_name(plan->engine), nr, nr == 1 ? "" : "s", plan->url);
	fflush(stdout);
	r = start_watch(plan, a->ready_timeout, &watch, &watcher, stop_pipe, &old_mask);
	if (r < 0) {
		cmd_error("serve", "cannot watch the head's readiness: %s", strerror(-r));
		ret = SPARKCTL_EXIT_ERROR;
		goto out;
	}
	r = launch_run(&o, &res, &err);
	stop_watch(&watch, watcher, stop_pipe, &old_mask);
	if (r < 0) {
		cmd_error("serve", "%s", err.buf);
		ret = SPARKCTL_EXIT_ERROR;
		goto out;
	}
	if (atomic_load(&watch.timed_out)) {
		cmd_error("serve",
			  "the head's %s did not answer 200 within %u s (--ready-timeout); every "
			  "node's part was ended",
			  SERVE_READY_PATH, a->ready_timeout);
		launch_result_release(&res);
		ret = SPARKCTL_EXIT_TIMEOUT;
		goto out;
	}
	if (res.end == LAUNCH_END_UNIT_FAILED) {
		const struct launch_unit_result *u = &res.units[res.failed_unit];
		strbuf_reset(&err);
		launch_describe_status(u->status, u->signaled, &err);
		cmd_error("serve", "the engine on %s ended with %s; every node's part was ended",
			  nodes[u->node].host, err.buf);
	} else if (res.end == LAUNCH_END_NODE_FAILED) {
		cmd_error("serve", "%s was lost; every node's part was ended",
			  nodes[res.failed_node].host);
	} else if (res.end == LAUNCH_END_INTERRUPTED) {
		cmd_error("serve", "ended by SIG%s",
			  sigabbrev_np(res.signal) ? sigabbrev_np(res.signal) : "?");
	}
	ret = res.exit_status;
	launch_result_release(&res);
out:
	for (int i = 0; i < 2; i++)
		if (stop_pipe[i] >= 0)
			close(stop_pipe[i]);
	launch_spec_release(&job);
	strvec_clear(&ssh_extra);
	strbuf_release(&err);
	free(nodes);
	free(self);
	return ret;
}

/* Without --print: the plan, the preflight (a failure starts nothing), then the start. */
static int serve_plan_run(const struct serve_args *a, const struct serve_options *o,
			  const struct doctor_cluster *c)
{
	struct serve_node_input *in = NULL;
	struct findings f = { 0 };
	struct serve_plan plan;
	int ret;

	if ((ret = make_plan(o, c, &in, &plan)) != SPARKCTL_EXIT_OK)
		goto out;
	serve_preflight(o, in, c->nr_nodes, &f);
	check_nodes(a, &plan, in, &f);
	for (size_t i = 0; i < f.nr; i++) {
		if (f.items[i].status != CHECK_FAIL)
			continue;
		cmd_error("serve", "preflight: %s %s: %s (%s)", f.items[i].check_id,
			  f.items[i].node, f.items[i].message, f.items[i].fix);
		ret = SPARKCTL_EXIT_PROBLEMS;
	}
	if (ret == SPARKCTL_EXIT_OK)
		ret = start_plan(a, &plan);
out:
	serve_plan_release(&plan);
	findings_release(&f);
	free(in);
	return ret;
}

static int run_serve(const struct cmd *cmd, int argc, char **argv)
{
	struct serve_args a = { .from = STRVEC_INIT,
				.tp = UINT_MAX,
				.pp = UINT_MAX,
				.port = PORT_UNSET,
				.master_port = PORT_UNSET,
				.ready_timeout = SERVE_READY_TIMEOUT_S };
	struct strvec engine_args = STRVEC_INIT;
	struct serve_options o = { 0 };
	struct doctor_cluster c = { 0 };
	int ret;

	if (parse_serve(cmd, &a, &o, &engine_args, argc, argv, &ret) < 0)
		goto out;
	if ((ret = collect(&a, &c)) == SPARKCTL_EXIT_OK)
		ret = a.print ? print_plan(&a, &o, &c) : serve_plan_run(&a, &o, &c);
out:
	doctor_cluster_release(&c);
	strvec_clear(&a.from);
	strvec_clear(&engine_args);
	return ret;
}

const struct cmd cmd_serve = {
	.name = "serve",
	.fn = run_serve,
	.summary = "serve a model across the nodes: vLLM, SGLang, TensorRT-LLM, llama.cpp",
	.usage = serve_usage,
	.description = serve_description,
	.flags = CMD_READS_NODE,
	.exit_status =
		"0 printed (or the engines ended well), the status of the first engine "
		"that failed; 5 the head not ready by --ready-timeout (or a worker's part "
		"never reported); 1 an inventory that cannot be read, a node without a fabric "
		"address on the head's subnet, 2 usage (also: tp x pp not the GPUs, a bad "
		"port), 3 a node could not be reached or has no fabric port, 4 the "
		"preflight found a problem (the plan printed all the same; nothing started)",
	.max_operands = 2,
};
