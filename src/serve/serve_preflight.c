/*
 * serve_preflight.c - the checks 'sparkctl serve' makes before anything
 * starts (serve_plan.h): pure functions of the options and the nodes'
 * inventories, each a finding with its fix.
 */
#include "sparkctl.h"

#include "lib/xalloc.h"
#include "serve/serve_plan.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

static struct finding *add(struct findings *out, const char *id, const char *node,
			   enum check_status status, const char *fix, const char *fmt, ...)
	ATTR_PRINTF(6, 7);

static struct finding *add(struct findings *out, const char *id, const char *node,
			   enum check_status status, const char *fix, const char *fmt, ...)
{
	struct finding *f = ARRAY_PUSH(out->items, out->nr);
	struct strbuf msg = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	f->check_id = id;
	f->node = xstrdup(node);
	f->status = status;
	f->message = strbuf_detach(&msg, NULL);
	f->fix = xstrdup_or_null(fix);
	strvec_init(&f->evidence);
	return f;
}

void serve_check_parallel(const struct serve_options *o, const struct serve_node_input *nodes,
			  size_t n, struct findings *out)
{
	struct strbuf err = STRBUF_INIT;
	unsigned tp, pp, total;
	char *fix;

	if (o->engine == SERVE_ENGINE_LLAMACPP) {
		add(out, "serve.parallel", "cluster", CHECK_PASS, NULL,
		    "llama.cpp splits the layers over its RPC servers: no --tp or --pp");
		return;
	}
	if (serve_parallel_resolve(o, nodes, n, &tp, &pp, &total, &err) == 0) {
		add(out, "serve.parallel", "cluster", CHECK_PASS, NULL,
		    "tensor parallel %u x pipeline parallel %u: the %u GPU%s of %zu node%s", tp, pp,
		    total, total == 1 ? "" : "s", n, n == 1 ? "" : "s");
	} else if (total) {
		fix = xasprintf("--tp %u --pp %zu (a node's GPUs in tensor parallel, the nodes "
				"in pipeline), or --tp %u --pp 1",
				total / (unsigned)n, n, total);
		add(out, "serve.parallel", "cluster", CHECK_FAIL, fix, "%s", err.buf);
		free(fix);
	} else {
		add(out, "serve.parallel", "cluster", CHECK_FAIL,
		    "serve on nodes alike, each with its GPUs seen ('sparkctl topo' lists them)",
		    "%s", err.buf);
	}
	strbuf_release(&err);
}

/*
 * What a node's GPUs can hold: on unified memory (GB10) the system's
 * MemAvailable, which the GPU allocates from; else the GPUs' own memory.
 * -1 when not known.
 */
static int64_t usable_bytes(const struct inventory *inv, bool *unified)
{
	int64_t sum = 0;

	*unified = false;
	for (size_t i = 0; i < inv->gpu.nr_gpus; i++)
		*unified |= inv->gpu.gpus[i].unified_memory == TRI_YES;
	if (*unified)
		return inv->sys.mem_available >= 0 ? inv->sys.mem_available : -1;
	for (size_t i = 0; i < inv->gpu.nr_gpus; i++) {
		if (inv->gpu.gpus[i].memory_total_bytes < 0)
			return -1;
		sum += inv->gpu.gpus[i].memory_total_bytes;
	}
	return inv->gpu.nr_gpus ? sum : -1;
}

void serve_check_memory(const struct serve_options *o, const struct serve_node_input *nodes,
			size_t n, struct findings *out)
{
	uint64_t total_gpus = 0;

	if (!o->model_bytes) {
		add(out, "serve.memory", "cluster", CHECK_SKIP, NULL,
		    "the model's size is not known: give --model-size or --params");
		return;
	}
	for (size_t i = 0; i < n; i++)
		total_gpus += nodes[i].inv->gpu.nr_gpus;
	for (size_t i = 0; i < n; i++) {
		const char *host = nodes[i].host;
		bool unified;
		int64_t usable = usable_bytes(nodes[i].inv, &unified);
		/* The node's share: by its GPUs (llama.cpp, or GPUs unknown: by node). */
		double share = o->engine == SERVE_ENGINE_LLAMACPP || !total_gpus
				       ? (double)o->model_bytes / (double)n
				       : (double)o->model_bytes *
						 (double)nodes[i].inv->gpu.nr_gpus /
						 (double)total_gpus;
		double need = share * SERVE_MEMORY_MARGIN_PERCENT / 100.0;
		const char *what = unified ? "MemAvailable (unified memory)" : "GPU memory";
		if (usable < 0) {
			add(out, "serve.memory", host, CHECK_SKIP, NULL,
			    "its inventory does not say how much memory its GPUs can use");
		} else if (need > (double)usable) {
			char *fix = xasprintf(
				"serve on more nodes, a smaller or quantized model (--dtype fp8), "
				"or free memory on %s",
				host);
			add(out, "serve.memory", host, CHECK_FAIL, fix,
			    "its share of the weights, %.1f GiB, with a %d%% margin %.1f GiB, "
			    "does not fit its %s of %.1f GiB",
			    share / GIB, SERVE_MEMORY_MARGIN_PERCENT - 100, need / GIB, what,
			    (double)usable / GIB);
			free(fix);
		} else {
			add(out, "serve.memory", host, CHECK_PASS, NULL,
			    "its share of the weights, %.1f GiB (%.1f GiB with the margin), fits "
			    "its %s of %.1f GiB",
			    share / GIB, need / GIB, what, (double)usable / GIB);
		}
	}
}

void serve_check_ports(const struct serve_options *o, struct findings *out)
{
	if (!o->port || o->port > 65535 || !o->master_port || o->master_port > 65535) {
		unsigned bad = !o->port || o->port > 65535 ? o->port : o->master_port;
		add(out, "serve.ports", "cluster", CHECK_FAIL,
		    "give --port and --master-port between 1 and 65535", "%u is not a TCP port",
		    bad);
	} else if (o->port == o->master_port) {
		add(out, "serve.ports", "cluster", CHECK_FAIL,
		    "give --port and --master-port different ports",
		    "the API and the rendezvous would both use port %u", o->port);
	} else {
		add(out, "serve.ports", "cluster", CHECK_PASS, NULL,
		    "the API on port %u, the rendezvous on %u", o->port, o->master_port);
	}
}

void serve_preflight(const struct serve_options *o, const struct serve_node_input *nodes, size_t n,
		     struct findings *out)
{
	serve_check_parallel(o, nodes, n, out);
	serve_check_memory(o, nodes, n, out);
	serve_check_ports(o, out);
}

/* ---- what the nodes say: free ports, the image ---------------------------- */

const char serve_facts_script[] =
	"if command -v ss >/dev/null 2>&1; then echo '#ss'; ss -Hltnp 2>/dev/null; fi\n"
	"if [ -n \"$1\" ]; then\n"
	"  if command -v docker >/dev/null 2>&1; then\n"
	"    out=$(docker image inspect --format '{{.Id}}' \"$1\" 2>&1); st=$?\n"
	"  else out='docker: not found on this node'; st=127; fi\n"
	"  echo \"#image $st $out\" | head -n 1\n"
	"fi\n";

void serve_facts_parse(const char *text, struct serve_node_facts *f)
{
	struct strbuf listening = STRBUF_INIT;
	bool in_ss = false;

	for (const char *l = text; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		int st, at = 0;
		if (len == 3 && !strncmp(l, "#ss", 3)) {
			f->has_ss = in_ss = true;
		} else if (len > 7 && !strncmp(l, "#image ", 7)) {
			char *line = xstrndup(l, len);
			in_ss = false;
			if (sscanf(line, "#image %d %n", &st, &at) == 1 && at) {
				f->image_asked = true;
				f->image_status = st;
				free(f->image_id);
				f->image_id = xstrdup(line + at);
			}
			free(line);
		} else if (in_ss) {
			strbuf_add(&listening, l, len);
			strbuf_addch(&listening, '\n');
		}
		l = nl ? nl + 1 : NULL;
	}
	f->listening = strbuf_detach(&listening, NULL);
}

void serve_node_facts_release(struct serve_node_facts *f)
{
	free(f->error);
	free(f->listening);
	free(f->image_id);
	*f = (struct serve_node_facts){ 0 };
}

/*
 * The line of ss -Hltnp whose local address ends in :port, described into
 * who ("python3 (pid 812) at 0.0.0.0:8000"): true when there is one.
 */
static bool port_taken(const char *listening, unsigned port, struct strbuf *who)
{
	char suffix[16];

	snprintf(suffix, sizeof(suffix), ":%u", port);
	for (const char *l = listening; l && *l;) {
		const char *nl = strchr(l, '\n');
		char *line = xstrndup(l, nl ? (size_t)(nl - l) : strlen(l));
		char state[32], local[128];
		int recvq, sendq;
		/* State Recv-Q Send-Q Local:Port Peer:Port Process */
		if (sscanf(line, "%31s %d %d %127s", state, &recvq, &sendq, local) == 4 &&
		    strlen(local) > strlen(suffix) &&
		    streq(local + strlen(local) - strlen(suffix), suffix)) {
			const char *name = strstr(line, "((\""), *pid = strstr(line, "pid=");
			if (name) {
				name += 3;
				strbuf_add(who, name, strcspn(name, "\""));
				if (pid)
					strbuf_addf(who, " (pid %ld)", strtol(pid + 4, NULL, 10));
				strbuf_addstr(who, " at ");
			}
			strbuf_addstr(who, local);
			free(line);
			return true;
		}
		free(line);
		l = nl ? nl + 1 : NULL;
	}
	return false;
}

/* The ports node i's engine listens on, into ports (at most 2): their number. */
static size_t node_ports(const struct serve_plan *plan, size_t i, unsigned ports[2])
{
	size_t n = 0;

	if (!i) {
		ports[n++] = plan->port;
		if (plan->engine != SERVE_ENGINE_LLAMACPP && plan->engine != SERVE_ENGINE_TRTLLM)
			ports[n++] = plan->master_port;
	} else if (plan->engine == SERVE_ENGINE_LLAMACPP ||
		   (plan->engine == SERVE_ENGINE_TRTLLM && plan->image)) {
		ports[n++] = plan->master_port;
	}
	return n;
}

static void check_ports_free(const struct serve_plan *plan, const struct serve_node_facts *facts,
			     struct findings *out)
{
	for (size_t i = 0; i < plan->nr_nodes; i++) {
		const char *host = plan->nodes[i].host;
		struct strbuf who = STRBUF_INIT, ok = STRBUF_INIT;
		unsigned ports[2];
		size_t n = node_ports(plan, i, ports);
		bool failed = false;
		if (!n)
			continue;
		if (facts[i].error) {
			add(out, "serve.ports_free", host, CHECK_SKIP, NULL, "not asked: %s",
			    facts[i].error);
			continue;
		}
		if (!facts[i].has_ss) {
			add(out, "serve.ports_free", host, CHECK_SKIP,
			    "install iproute2 (ss) on the node",
			    "ss(8) is not on %s: its listening ports are not known", host);
			continue;
		}
		for (size_t k = 0; k < n; k++) {
			strbuf_reset(&who);
			if (!port_taken(facts[i].listening, ports[k], &who)) {
				strbuf_addf(&ok, "%s%u", ok.len ? ", " : "", ports[k]);
				continue;
			}
			failed = true;
			add(out, "serve.ports_free", host, CHECK_FAIL,
			    i || plan->engine == SERVE_ENGINE_LLAMACPP || ports[k] == plan->port
				    ? "stop what listens there, or choose another port (--port, "
				      "--master-port)"
				    : "stop what listens there, or choose another port "
				      "(--master-port)",
			    "port %u on %s is taken: %s", ports[k], host, who.buf);
		}
		if (!failed)
			add(out, "serve.ports_free", host, CHECK_PASS, NULL, "port%s %s free on %s",
			    n > 1 ? "s" : "", ok.buf, host);
		strbuf_release(&who);
		strbuf_release(&ok);
	}
}

static void check_image(const struct serve_plan *plan, const struct serve_node_facts *facts,
			struct findings *out)
{
	const char *head_id = NULL;
	bool all_same = true;
	struct strbuf fix = STRBUF_INIT;

	if (!plan->image)
		return;
	strbuf_addf(&fix,
		    "docker pull %s on every node (or docker save on the head, docker load "
		    "on the node)",
		    plan->image);
	for (size_t i = 0; i < plan->nr_nodes; i++) {
		const struct serve_node_facts *f = &facts[i];
		const char *host = plan->nodes[i].host;
		if (f->error || !f->image_asked) {
			add(out, "serve.image", host, CHECK_SKIP, NULL, "not asked: %s",
			    f->error ? f->error : "no answer");
			all_same = false;
		} else if (f->image_status == 127) {
			add(out, "serve.image", host, CHECK_FAIL,
			    "install docker (and the NVIDIA container toolkit) on the node, or "
			    "serve "
			    "without --image",
			    "%s: docker is not on %s", plan->image, host);
			all_same = false;
		} else if (f->image_status) {
			add(out, "serve.image", host, CHECK_FAIL, fix.buf, "%s is not on %s: %s",
			    plan->image, host, f->image_id);
			all_same = false;
		} else if (!head_id && !i) {
			head_id = f->image_id;
		} else if (head_id && !streq(head_id, f->image_id)) {
			add(out, "serve.image", host, CHECK_FAIL, fix.buf,
			    "%s is %s on %s, but %s on the head %s", plan->image, f->image_id, host,
			    head_id, plan->nodes[0].host);
			all_same = false;
		}
	}
	if (all_same && head_id)
		add(out, "serve.image", "cluster", CHECK_PASS, NULL, "%s is %s on every node",
		    plan->image, head_id);
	strbuf_release(&fix);
}

void serve_check_node_facts(const struct serve_plan *plan, const struct serve_node_facts *facts,
			    struct findings *out)
{
	check_ports_free(plan, facts, out);
	check_image(plan, facts, out);
}
