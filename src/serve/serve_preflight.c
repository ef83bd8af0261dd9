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
