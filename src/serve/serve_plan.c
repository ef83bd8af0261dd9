/*
 * serve_plan.c - each node's environment and the engines' command lines
 * for 'sparkctl serve' (serve_plan.h).
 */
#include "sparkctl.h"

#include "config/nccl_env.h"
#include "launch/protocol.h"
#include "lib/xalloc.h"
#include "serve/serve_plan.h"

/* The container's name on every node: a second serve on a node is refused by docker. */
#define SERVE_CONTAINER_PREFIX "sparkctl-serve-"
/* Where the model cache is mounted in the container (the engines' images run as root). */
#define SERVE_CACHE_MOUNT      "/root/.cache/huggingface"

static const char *const engine_names[] = {
	[SERVE_ENGINE_VLLM] = "vllm",
	[SERVE_ENGINE_SGLANG] = "sglang",
	[SERVE_ENGINE_TRTLLM] = "trtllm",
	[SERVE_ENGINE_LLAMACPP] = "llamacpp",
};

int serve_engine_parse(const char *s, enum serve_engine *ret)
{
	for (size_t i = 0; i < ARRAY_SIZE(engine_names); i++)
		if (streq(s, engine_names[i])) {
			*ret = (enum serve_engine)i;
			return 0;
		}
	return -EINVAL;
}

const char *serve_engine_name(enum serve_engine e)
{
	return engine_names[e];
}

int serve_backend_parse(const char *s, enum serve_backend *ret)
{
	if (streq(s, "mp"))
		*ret = SERVE_BACKEND_MP;
	else if (streq(s, "ray"))
		*ret = SERVE_BACKEND_RAY;
	else
		return -EINVAL;
	return 0;
}

int serve_engine_choose(const char *engine, const char *backend, struct serve_options *o,
			struct strbuf *err)
{
	if (serve_engine_parse(engine, &o->engine) < 0) {
		strbuf_addf(err, "unknown engine '%s' (vllm, sglang, trtllm, llamacpp)", engine);
		return -EINVAL;
	}
	if (backend && o->engine != SERVE_ENGINE_VLLM) {
		strbuf_addf(err, "--backend is vllm's; %s has none", serve_engine_name(o->engine));
		return -EINVAL;
	}
	o->backend = o->engine == SERVE_ENGINE_VLLM ? SERVE_BACKEND_MP : SERVE_BACKEND_NONE;
	if (backend && serve_backend_parse(backend, &o->backend) < 0) {
		strbuf_addf(err, "unknown backend '%s' (mp, ray)", backend);
		return -EINVAL;
	}
	return 0;
}

const char *serve_backend_name(enum serve_backend b)
{
	return b == SERVE_BACKEND_MP ? "mp" : b == SERVE_BACKEND_RAY ? "ray" : NULL;
}

unsigned serve_default_port(enum serve_engine e)
{
	static const unsigned ports[] = {
		[SERVE_ENGINE_VLLM] = 8000,
		[SERVE_ENGINE_SGLANG] = 30000,
		[SERVE_ENGINE_TRTLLM] = 8355,
		[SERVE_ENGINE_LLAMACPP] = 8080,
	};
	return ports[e];
}

unsigned serve_default_master_port(enum serve_engine e, enum serve_backend b)
{
	static const unsigned ports[] = {
		[SERVE_ENGINE_VLLM] = 29501,
		[SERVE_ENGINE_SGLANG] = 25000,
		[SERVE_ENGINE_TRTLLM] = 2233,
		[SERVE_ENGINE_LLAMACPP] = 50052,
	};
	return e == SERVE_ENGINE_VLLM && b == SERVE_BACKEND_RAY ? 6379 : ports[e];
}

int serve_dtype_halves(const char *dtype, unsigned *ret)
{
	if (streq(dtype, "bf16") || streq(dtype, "fp16"))
		*ret = 4;
	else if (streq(dtype, "fp8"))
		*ret = 2;
	else if (streq(dtype, "fp4"))
		*ret = 1;
	else
		return -EINVAL;
	return 0;
}

int serve_params_parse(const char *s, uint64_t *ret)
{
	uint64_t whole = 0, frac = 0, frac_den = 1, unit = 1;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (whole > UINT64_C(1000000000000000))
			return -EINVAL;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		if (*++p < '0' || *p > '9')
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (frac_den >= 1000)
				return -EINVAL;
			frac = frac * 10 + (uint64_t)(*p - '0');
			frac_den *= 10;
		}
	}
	switch (*p) {
	case 'K':
	case 'k':
		unit = UINT64_C(1000);
		p++;
		break;
	case 'M':
	case 'm':
		unit = UINT64_C(1000000);
		p++;
		break;
	case 'B':
	case 'b':
		unit = UINT64_C(1000000000);
		p++;
		break;
	case 'T':
	case 't':
		unit = UINT64_C(1000000000000);
		p++;
		break;
	}
	/* A fraction of one parameter means nothing; 10^15 parameters is no model yet. */
	if (*p || (unit == 1 && frac) || whole > UINT64_C(1000000000000000) / unit)
		return -EINVAL;
	*ret = whole * unit + frac * unit / frac_den;
	return *ret ? 0 : -EINVAL;
}

/* The options each engine's line gets from sparkctl, and what sets them. */
struct reserved_arg {
	const char *flag, *set_by;
};

static const struct reserved_arg vllm_reserved[] = {
	{ "--tensor-parallel-size", "--tp" },
	{ "-tp", "--tp" },
	{ "--pipeline-parallel-size", "--pp" },
	{ "-pp", "--pp" },
	{ "--nnodes", "the nodes" },
	{ "--node-rank", "the nodes" },
	{ "--master-addr", "the head's fabric address" },
	{ "--master-port", "--master-port" },
	{ "--headless", "the nodes" },
	{ "--distributed-executor-backend", "--backend" },
	{ "--port", "--port" },
	{ NULL, NULL },
};

static const struct reserved_arg sglang_reserved[] = {
	{ "--model-path", "MODEL" },
	{ "--tp-size", "--tp" },
	{ "--tp", "--tp" },
	{ "--pp-size", "--pp" },
	{ "--dist-init-addr", "the head's address and --master-port" },
	{ "--nnodes", "the nodes" },
	{ "--node-rank", "the nodes" },
	{ "--port", "--port" },
	{ NULL, NULL },
};

static const struct reserved_arg trtllm_reserved[] = {
	{ "--tp_size", "--tp" },
	{ "--pp_size", "--pp" },
	{ "--port", "--port" },
	{ NULL, NULL },
};

static const struct reserved_arg llamacpp_reserved[] = {
	{ "--rpc", "the nodes and --master-port" },
	{ "--port", "--port" },
	{ NULL, NULL },
};

int serve_check_engine_args(enum serve_engine e, const struct strvec *args, struct strbuf *err)
{
	static const struct reserved_arg *const tables[] = {
		[SERVE_ENGINE_VLLM] = vllm_reserved,
		[SERVE_ENGINE_SGLANG] = sglang_reserved,
		[SERVE_ENGINE_TRTLLM] = trtllm_reserved,
		[SERVE_ENGINE_LLAMACPP] = llamacpp_reserved,
	};

	for (size_t i = 0; args && i < args->nr; i++) {
		const char *a = args->v[i];
		for (const struct reserved_arg *r = tables[e]; r->flag; r++) {
			size_t len = strlen(r->flag);
			if (strncmp(a, r->flag, len) == 0 && (a[len] == '\0' || a[len] == '=')) {
				strbuf_addf(err, "%s is set by sparkctl serve (from %s)", r->flag,
					    r->set_by);
				return -EINVAL;
			}
		}
	}
	return 0;
}

static void node_release(struct serve_node *n)
{
	free(n->host);
	free(n->hostname);
	free(n->interface);
	free(n->address);
	strvec_clear(&n->env);
}

void serve_plan_release(struct serve_plan *plan)
{
	for (size_t i = 0; i < plan->nr_nodes; i++)
		node_release(&plan->nodes[i]);
	for (size_t i = 0; i < plan->nr_steps; i++)
		strvec_clear(&plan->steps[i].argv);
	free(plan->nodes);
	free(plan->steps);
	free(plan->model);
	free(plan->image);
	free(plan->url);
	strvec_clear(&plan->notes);
	memset(plan, 0, sizeof(*plan));
}

/*
 * The node's fabric interface and environment: 'sparkctl env' (its
 * bootstrap interface must be a fabric port: the management network is
 * not where the engines should meet), then the engines' own variables.
 */
static int node_env(const struct serve_options *o, const struct serve_node_input *in, size_t n,
		    struct serve_node *node, struct node_env *e, struct strvec *notes,
		    struct strbuf *err)
{
	struct env_options eo = { .nodes = (unsigned)n };
	char addr[16];
	bool fabric = false;
	int r;

	r = env_generate(in->inv, &eo, e, err);
	for (size_t k = 0; k < e->notes.nr; k++)
		strvec_pushf(notes, "%s: %s", e->node ? e->node : node->host, e->notes.v[k]);
	if (r < 0)
		return r;
	for (size_t k = 0; k < e->fabric.nr_rails && !fabric; k++)
		fabric = e->fabric.rails[k].netdev && e->fabric.rails[k].netdev == e->bootstrap;
	if (!fabric) {
		strbuf_addf(err,
			    "%s: its bootstrap interface %s is not a fabric port (the management "
			    "network); serve needs the nodes on one fabric subnet (a pair or a "
			    "switch)",
			    node->host, e->bootstrap->name);
		return -EINVAL;
	}
	ipv4_format(e->bootstrap_addr.addr, addr);
	node->interface = xstrdup(e->bootstrap->name);
	node->address = xstrdup(addr);
	for (size_t k = 0; k < e->nr_vars; k++) {
		/* What is printed must be what runs: no value a terminal would alter. */
		if (!str_is_printable(e->vars[k].value, strlen(e->vars[k].value), 0)) {
			strbuf_addf(err, "%s: the value of %s is not printable", node->host,
				    e->vars[k].key);
			return -EINVAL;
		}
		env_list_set(&node->env, e->vars[k].key, e->vars[k].value);
	}
	/* Gloo and TensorPipe take one plain name: never NCCL's '^' or '=' forms. */
	env_list_set(&node->env, "GLOO_SOCKET_IFNAME", node->interface);
	env_list_set(&node->env, "TP_SOCKET_IFNAME", node->interface);
	if (o->engine == SERVE_ENGINE_VLLM)
		env_list_set(&node->env, "VLLM_HOST_IP", node->address);
	if (o->backend == SERVE_BACKEND_RAY) {
		env_list_set(&node->env, "RAY_NODE_IP_ADDRESS", node->address);
		env_list_set(&node->env, "RAY_OVERRIDE_NODE_IP_ADDRESS", node->address);
	}
	return 0;
}

/* Every node's address, interface and environment; they must reach the head's subnet. */
static int make_nodes(const struct serve_options *o, const struct serve_node_input *in, size_t n,
		      struct serve_plan *plan, struct strbuf *err)
{
	struct cidr head = { 0 };
	int r = 0;

	plan->nodes = xcalloc(n, sizeof(*plan->nodes));
	for (size_t i = 0; i < n && r == 0; i++, plan->nr_nodes++) {
		struct serve_node *node = &plan->nodes[i];
		struct node_env e = { 0 };
		node->host = xstrdup(in[i].host);
		node->hostname =
			xstrdup(in[i].inv->sys.hostname ? in[i].inv->sys.hostname : in[i].host);
		node->rank = (unsigned)i;
		node->gpus = (unsigned)in[i].inv->gpu.nr_gpus;
		strvec_init(&node->env);
		r = node_env(o, &in[i], n, node, &e, &plan->notes, err);
		if (r == 0 && i == 0)
			head = e.bootstrap_addr;
		if (r == 0 && i > 0 && !cidr_contains(&head, e.bootstrap_addr.addr)) {
			strbuf_addf(err,
				    "%s: its fabric address %s (%s) is not on the head's subnet "
				    "(%s, %s)",
				    node->host, node->address, node->interface,
				    plan->nodes[0].address, plan->nodes[0].host);
			r = -EINVAL;
		}
		node_env_release(&e);
	}
	return r;
}

int serve_parallel_resolve(const struct serve_options *o, const struct serve_node_input *in,
			   size_t n, unsigned *tp, unsigned *pp, unsigned *total,
			   struct strbuf *err)
{
	unsigned per_node = n ? (unsigned)in[0].inv->gpu.nr_gpus : 0;

	*tp = *pp = *total = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned g = (unsigned)in[i].inv->gpu.nr_gpus;
		if (!g) {
			strbuf_addf(err, "%s: its inventory shows no GPU", in[i].host);
			*total = 0;
			return -EINVAL;
		}
		if (g != per_node) {
			strbuf_addf(err, "%s has %u GPU%s, %s %u: serve needs nodes alike",
				    in[i].host, g, g == 1 ? "" : "s", in[0].host, per_node);
			*total = 0;
			return -EINVAL;
		}
		*total += g;
	}
	*tp = o->tp ? o->tp : o->pp ? *total / o->pp : per_node;
	*pp = o->pp ? o->pp : o->tp ? *total / o->tp : (unsigned)n;
	if ((uint64_t)*tp * *pp == *total && *tp)
		return 0;
	if (!o->tp != !o->pp)
		strbuf_addf(err, "--%s %u does not divide the %u GPU%s of the %zu node%s",
			    o->tp ? "tp" : "pp", o->tp ? o->tp : o->pp, *total,
			    *total == 1 ? "" : "s", n, n == 1 ? "" : "s");
	else
		strbuf_addf(err,
			    "tensor parallel %u x pipeline parallel %u is %llu GPUs; the %zu "
			    "node%s have %u",
			    *tp, *pp, (unsigned long long)*tp * *pp, n, n == 1 ? "" : "s", *total);
	return -EDOM;
}

static void push_uint(struct strvec *v, const char *flag, unsigned value)
{
	strvec_push(v, flag);
	strvec_pushf(v, "%u", value);
}

/* Append a step; the caller fills its argv. */
static struct strvec *add_step(struct serve_plan *plan, size_t node, const char *role)
{
	struct serve_step *s = ARRAY_PUSH(plan->steps, plan->nr_steps);

	s->node = node;
	s->role = role;
	strvec_init(&s->argv);
	return &s->argv;
}

static void push_args(struct strvec *v, const struct strvec *args)
{
	for (size_t i = 0; args && i < args->nr; i++)
		strvec_push(v, args->v[i]);
}

/* The rest of a docker run line: host network and IPC, the RDMA devices, the environment. */
/*
 * With --image, step s in a container: 'docker run' with host network and
 * IPC, the RDMA devices, memlock unlimited, the model cache and every
 * variable given with -e, the engine's program as the entrypoint (images
 * differ in theirs: vllm/vllm-openai's is 'vllm serve', NGC's a script);
 * or 'docker exec' into the container the node's first step started.
 */
static void containerize(const struct serve_options *o, const struct serve_plan *plan,
			 const struct serve_node_input *in, struct serve_step *s)
{
	const char *home = in[s->node].inv->sys.home;
	const struct strvec *env = &plan->nodes[s->node].env;
	struct strvec v = STRVEC_INIT;

	if (s->exec) {
		strvec_pushl(&v, "docker", "exec", NULL);
		strvec_pushf(&v, SERVE_CONTAINER_PREFIX "%s", serve_engine_name(o->engine));
	} else {
		strvec_pushl(&v, "docker", "run", "--rm", "--name", NULL);
		strvec_pushf(&v, SERVE_CONTAINER_PREFIX "%s", serve_engine_name(o->engine));
		strvec_pushl(&v, "--network", "host", "--ipc", "host", "--gpus", "all", "--device",
			     "/dev/infiniband", "--ulimit", "memlock=-1", "-v", NULL);
		if (o->model_cache)
			strvec_pushf(&v, "%s:" SERVE_CACHE_MOUNT, o->model_cache);
		else
			strvec_pushf(&v, "%s/.cache/huggingface:" SERVE_CACHE_MOUNT,
				     home ? home : "/root");
		for (size_t i = 0; i < env->nr; i++)
			strvec_pushl(&v, "-e", env->v[i], NULL);
		strvec_pushl(&v, "--entrypoint", s->argv.v[0], o->image, NULL);
	}
	for (size_t i = s->exec ? 0 : 1; i < s->argv.nr; i++)
		strvec_push(&v, s->argv.v[i]);
	strvec_clear(&s->argv);
	s->argv = v;
}

/* A step of the engine; exec: in the container of the node's first step (with --image). */
static struct strvec *engine_step(struct serve_plan *plan, size_t node, const char *role, bool exec)
{
	struct strvec *v = add_step(plan, node, role);

	plan->steps[plan->nr_steps - 1].exec = exec;
	return v;
}

static void vllm_common(const struct serve_options *o, const struct serve_plan *plan,
			struct strvec *v)
{
	strvec_pushl(v, "vllm", "serve", o->model, NULL);
	push_uint(v, "--tensor-parallel-size", plan->tp);
	push_uint(v, "--pipeline-parallel-size", plan->pp);
	strvec_pushl(v, "--distributed-executor-backend", serve_backend_name(o->backend), NULL);
}

/* vLLM without Ray: every node runs 'vllm serve', the workers headless. */
static void plan_vllm_mp(const struct serve_options *o, struct serve_plan *plan)
{
	for (size_t k = 1; k <= plan->nr_nodes; k++) {
		size_t i = k % plan->nr_nodes; /* the workers, then the head */
		struct strvec *v = engine_step(plan, i, i ? "vllm worker" : "vllm head", false);
		vllm_common(o, plan, v);
		push_uint(v, "--nnodes", (unsigned)plan->nr_nodes);
		push_uint(v, "--node-rank", (unsigned)i);
		strvec_pushl(v, "--master-addr", plan->nodes[0].address, NULL);
		push_uint(v, "--master-port", plan->master_port);
		if (i)
			strvec_push(v, "--headless");
		else
			push_uint(v, "--port", plan->port);
		push_args(v, o->engine_args);
	}
}

/* vLLM on Ray: the Ray head, each worker's Ray joining it, then vLLM on the head. */
static void plan_vllm_ray(const struct serve_options *o, struct serve_plan *plan)
{
	struct strvec *v = engine_step(plan, 0, "ray head", false);

	strvec_pushl(v, "ray", "start", "--block", "--head", NULL);
	strvec_pushf(v, "--port=%u", plan->master_port);
	strvec_pushf(v, "--node-ip-address=%s", plan->nodes[0].address);
	strvec_push(v, "--include-dashboard=false");
	for (size_t i = 1; i < plan->nr_nodes; i++) {
		v = engine_step(plan, i, "ray worker", false);
		strvec_pushl(v, "ray", "start", "--block", NULL);
		strvec_pushf(v, "--address=%s:%u", plan->nodes[0].address, plan->master_port);
		strvec_pushf(v, "--node-ip-address=%s", plan->nodes[i].address);
	}
	v = engine_step(plan, 0, "vllm head", true);
	vllm_common(o, plan, v);
	push_uint(v, "--port", plan->port);
	push_args(v, o->engine_args);
}

static void plan_sglang(const struct serve_options *o, struct serve_plan *plan)
{
	for (size_t k = 1; k <= plan->nr_nodes; k++) {
		size_t i = k % plan->nr_nodes;
		struct strvec *v = engine_step(plan, i, i ? "sglang worker" : "sglang head", false);
		strvec_pushl(v, "python3", "-m", "sglang.launch_server", "--model-path", o->model,
			     NULL);
		push_uint(v, "--tp-size", plan->tp);
		push_uint(v, "--pp-size", plan->pp);
		strvec_push(v, "--dist-init-addr");
		strvec_pushf(v, "%s:%u", plan->nodes[0].address, plan->master_port);
		push_uint(v, "--nnodes", (unsigned)plan->nr_nodes);
		push_uint(v, "--node-rank", (unsigned)i);
		if (!i) {
			strvec_pushl(v, "--host", "0.0.0.0", NULL);
			push_uint(v, "--port", plan->port);
		}
		push_args(v, o->engine_args);
	}
}

/*
 * TensorRT-LLM: mpirun on the head starts a rank per GPU on every node
 * and passes the head's environment by name (-x).  Natively it reaches
 * the nodes with ssh; with --image each worker's container runs sshd on
 * --master-port for the head's container (NVIDIA's playbook).
 */
static void plan_trtllm(const struct serve_options *o, struct serve_plan *plan)
{
	struct strbuf hosts = STRBUF_INIT;
	struct strvec *v;

	for (size_t i = 1; i < plan->nr_nodes && o->image; i++) {
		v = engine_step(plan, i, "sshd for mpirun", false);
		strvec_pushl(v, "/usr/sbin/sshd", "-D", "-p", NULL);
		strvec_pushf(v, "%u", plan->master_port);
	}
	for (size_t i = 0; i < plan->nr_nodes; i++)
		strbuf_addf(&hosts, "%s%s:%u", i ? "," : "", plan->nodes[i].address,
			    plan->nodes[i].gpus);
	v = engine_step(plan, 0, "mpirun", false);
	strvec_push(v, "mpirun");
	push_uint(v, "-np", plan->tp * plan->pp);
	strvec_pushl(v, "-H", hosts.buf, "--bind-to", "none", NULL);
	if (o->image) {
		strvec_pushl(v, "--mca", "plm_rsh_args", NULL);
		strvec_pushf(v, "-p %u", plan->master_port);
	}
	for (size_t k = 0; k < plan->nodes[0].env.nr; k++) {
		const char *kv = plan->nodes[0].env.v[k];
		strvec_push(v, "-x");
		strvec_push_nodup(v, xstrndup(kv, (size_t)(strchr(kv, '=') - kv)));
	}
	strvec_pushl(v, "trtllm-llmapi-launch", "trtllm-serve", o->model, NULL);
	push_uint(v, "--tp_size", plan->tp);
	push_uint(v, "--pp_size", plan->pp);
	strvec_pushl(v, "--backend", "pytorch", "--host", "0.0.0.0", NULL);
	push_uint(v, "--port", plan->port);
	push_args(v, o->engine_args);
	strbuf_release(&hosts);
}

/* A GGUF file is given by path, anything else is a Hugging Face repository. */
static bool is_gguf(const char *model)
{
	size_t len = strlen(model);

	return len > 5 && streq(model + len - 5, ".gguf");
}

/*
 * llama.cpp: an rpc-server on each worker, bound to its fabric address
 * only (RPC has no authentication), then llama-server on the head with
 * every worker's server.
 */
static void plan_llamacpp(const struct serve_options *o, struct serve_plan *plan)
{
	struct strbuf rpc = STRBUF_INIT;
	struct strvec *v;

	for (size_t i = 1; i < plan->nr_nodes; i++) {
		v = engine_step(plan, i, "rpc-server", false);
		strvec_pushl(v, "rpc-server", "--host", plan->nodes[i].address, NULL);
		push_uint(v, "--port", plan->master_port);
		strbuf_addf(&rpc, "%s%s:%u", i > 1 ? "," : "", plan->nodes[i].address,
			    plan->master_port);
	}
	v = engine_step(plan, 0, "llama-server", false);
	strvec_pushl(v, "llama-server", is_gguf(o->model) ? "-m" : "-hf", o->model, NULL);
	if (rpc.len)
		strvec_pushl(v, "--rpc", rpc.buf, NULL);
	strvec_pushl(v, "-ngl", "999", "--host", "0.0.0.0", NULL);
	push_uint(v, "--port", plan->port);
	push_args(v, o->engine_args);
	strbuf_release(&rpc);
}

int serve_plan_build(const struct serve_options *o, const struct serve_node_input *nodes, size_t n,
		     struct serve_plan *plan, struct strbuf *err)
{
	int r;

	memset(plan, 0, sizeof(*plan));
	strvec_init(&plan->notes);
	plan->engine = o->engine;
	plan->backend = o->backend;
	plan->model = xstrdup(o->model);
	plan->image = xstrdup_or_null(o->image);
	plan->port = o->port;
	plan->master_port = o->master_port;
	if (!n) {
		strbuf_addstr(err, "no nodes");
		return -EINVAL;
	}
	if (o->port == o->master_port) {
		strbuf_addf(err, "the API and the rendezvous would both use port %u", o->port);
		return -EDOM;
	}
	if (o->engine != SERVE_ENGINE_LLAMACPP &&
	    (r = serve_parallel_resolve(o, nodes, n, &plan->tp, &plan->pp, &plan->gpus, err)) < 0)
		return r;
	if ((r = make_nodes(o, nodes, n, plan, err)) < 0)
		return r;
	plan->url = xasprintf("http://%s:%u", plan->nodes[0].address, plan->port);
	switch (o->engine) {
	case SERVE_ENGINE_VLLM:
		if (o->backend == SERVE_BACKEND_RAY)
			plan_vllm_ray(o, plan);
		else
			plan_vllm_mp(o, plan);
		break;
	case SERVE_ENGINE_SGLANG:
		plan_sglang(o, plan);
		break;
	case SERVE_ENGINE_TRTLLM:
		plan_trtllm(o, plan);
		break;
	case SERVE_ENGINE_LLAMACPP:
		plan_llamacpp(o, plan);
		break;
	}
	for (size_t i = 0; i < plan->nr_steps && o->image; i++)
		containerize(o, plan, nodes, &plan->steps[i]);
	return 0;
}

void serve_sh_word(struct strbuf *out, const char *word)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789_@%+=:,./-";

	if (*word && *word != '=' && strspn(word, plain) == strlen(word)) {
		strbuf_addstr(out, word);
		return;
	}
	strbuf_addch(out, '\'');
	for (; *word; word++) {
		if (*word == '\'')
			strbuf_addstr(out, "'\\''");
		else
			strbuf_addch(out, *word);
	}
	strbuf_addch(out, '\'');
}

void serve_node_script(const struct serve_plan *plan, size_t node, struct strbuf *out)
{
	size_t last = plan->nr_steps;

	for (size_t i = 0; i < plan->nr_steps; i++)
		if (plan->steps[i].node == node)
			last = i;
	if (last == plan->nr_steps)
		return;
	for (size_t i = 0; i < plan->nodes[node].env.nr; i++) {
		const char *kv = plan->nodes[node].env.v[i];
		const char *eq = strchr(kv, '=');
		strbuf_addf(out, "export %.*s=", (int)(eq - kv), kv);
		serve_sh_word(out, eq + 1);
		strbuf_addch(out, '\n');
	}
	for (size_t i = 0; i <= last; i++) {
		const struct strvec *argv = &plan->steps[i].argv;
		if (plan->steps[i].node != node)
			continue;
		strbuf_addstr(out, i == last ? "exec" : "");
		for (size_t k = 0; k < argv->nr; k++) {
			if (k || i == last)
				strbuf_addch(out, ' ');
			serve_sh_word(out, argv->v[k]);
		}
		strbuf_addstr(out, i == last ? "\n" : " &\n");
	}
}
