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

/* ---- what the nodes say: free ports, the image, NCCL ----------------------- */

const char serve_facts_script[] =
	"if command -v ss >/dev/null 2>&1; then echo '#ss'; ss -Hltnp 2>/dev/null; fi\n"
	"if [ -n \"$1\" ]; then\n"
	"  if command -v docker >/dev/null 2>&1; then\n"
	"    out=$(docker image inspect --format '{{.Id}}' \"$1\" 2>&1); st=$?\n"
	"  else out='docker: not found on this node'; st=127; fi\n"
	"  echo \"#image $st $out\" | head -n 1\n"
	"  if [ \"$st\" = 0 ] && [ -n \"$2\" ]; then\n"
	"    out=$(docker run --rm --network none --entrypoint python3 \"$1\" -c \"$2\" 2>&1); "
	"st=$?\n"
	"    echo \"#nccl-status $st\"\n"
	"    printf '%s\\n' \"$out\" | head -n 8 | sed 's/^/#nccl /'\n"
	"  fi\n"
	"fi\n";

/*
 * Python 3.7 or later, standard library only: the images' python3 may be
 * anything.  It reads the library through mmap: the "NCCL version" string
 * is anywhere in a file of hundreds of megabytes, the build id in its
 * first page (the program headers' PT_NOTE, as lib/elf_note.c reads it).
 */
const char serve_nccl_snippet[] =
	"import mmap, os, re, struct, subprocess, sys\n"
	"\n"
	"\n"
	"def wheel():\n"
	"    for d in sys.path:\n"
	"        p = os.path.join(d or os.getcwd(), 'nvidia', 'nccl', 'lib', 'libnccl.so.2')\n"
	"        if os.path.isfile(p):\n"
	"            return p\n"
	"\n"
	"\n"
	"def loader():\n"
	"    try:\n"
	"        out = subprocess.run(['ldconfig', '-p'], capture_output=True, text=True).stdout\n"
	"    except OSError:\n"
	"        return None\n"
	"    for line in out.splitlines():\n"
	"        if line.strip().startswith('libnccl.so.2 ') and '=> ' in line:\n"
	"            return line.split('=> ', 1)[1].strip()\n"
	"\n"
	"\n"
	"def build_id(b):\n"
	"    try:\n"
	"        if b[:4] != b'\\x7fELF':\n"
	"            return ''\n"
	"        e = '<' if b[5] == 1 else '>'\n"
	"        w, x = ('Q', 8) if b[4] == 2 else ('I', 4)\n"
	"        phoff = struct.unpack_from(e + w, b, 24 + x)[0]\n"
	"        phentsize, phnum = struct.unpack_from(e + 'HH', b, 30 + 3 * x)\n"
	"        for i in range(phnum):\n"
	"            ph = phoff + i * phentsize\n"
	"            if struct.unpack_from(e + 'I', b, ph)[0] != 4:\n"
	"                continue\n"
	"            at = struct.unpack_from(e + w, b, ph + x)[0]\n"
	"            end = at + struct.unpack_from(e + w, b, ph + 4 * x)[0]\n"
	"            while at + 12 <= end:\n"
	"                nsz, dsz, typ = struct.unpack_from(e + 'III', b, at)\n"
	"                d = at + 12 + (nsz + 3) // 4 * 4\n"
	"                if typ == 3 and b[at + 12:at + 12 + nsz] == b'GNU\\0':\n"
	"                    return b[d:d + dsz].hex()\n"
	"                at = d + (dsz + 3) // 4 * 4\n"
	"    except (struct.error, IndexError):\n"
	"        pass\n"
	"    return ''\n"
	"\n"
	"\n"
	"p = wheel() or loader()\n"
	"if not p:\n"
	"    print('none no libnccl.so.2: not in a pip wheel (nvidia/nccl/lib on sys.path), '\n"
	"          'not in ldconfig -p')\n"
	"    sys.exit(0)\n"
	"print('path', p)\n"
	"try:\n"
	"    with open(p, 'rb') as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:\n"
	"        v = re.search(rb'NCCL version (\\d+\\.\\d+\\.\\d+)', m)\n"
	"        v = v.group(1).decode() if v else ''\n"
	"        print('build_id', build_id(m))\n"
	"except (OSError, ValueError) as err:\n"
	"    print('none', p, 'cannot be read:', err)\n"
	"    sys.exit(0)\n"
	"if not v:\n"
	"    v = re.search(r'\\.so\\.(\\d+\\.\\d+\\.\\d+)$', os.path.realpath(p))\n"
	"    v = v.group(1) if v else ''\n"
	"print('version', v)\n";

/* One "#nccl KEY VALUE" line of the snippet's output (after "#nccl ") into f. */
static void parse_nccl_line(const char *line, struct serve_node_facts *f)
{
	static const struct {
		const char *key;
		size_t offset;
	} keys[] = {
		{ "path ", offsetof(struct serve_node_facts, nccl_path) },
		{ "version ", offsetof(struct serve_node_facts, nccl_version) },
		{ "build_id ", offsetof(struct serve_node_facts, nccl_build_id) },
		{ "none ", offsetof(struct serve_node_facts, nccl_none) },
	};

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		char **value = (char **)((char *)f + keys[i].offset);
		if (strncmp(line, keys[i].key, strlen(keys[i].key)))
			continue;
		free(*value);
		line += strlen(keys[i].key);
		/* An empty value is "not known". */
		*value = *line ? xstrdup(line) : NULL;
		return;
	}
	if (!f->nccl_error && *line)
		f->nccl_error = xstrdup(line);
}

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
		} else if (len > 13 && !strncmp(l, "#nccl-status ", 13)) {
			char *line = xstrndup(l, len);
			in_ss = false;
			if (sscanf(line, "#nccl-status %d", &st) == 1) {
				f->nccl_asked = true;
				f->nccl_status = st;
			}
			free(line);
		} else if (len >= 6 && !strncmp(l, "#nccl ", 6)) {
			char *line = xstrndup(l + 6, len - 6);
			in_ss = false;
			parse_nccl_line(line, f);
			free(line);
		} else if (in_ss) {
			strbuf_add(&listening, l, len);
			strbuf_addch(&listening, '\n');
		}
		l = nl ? nl + 1 : NULL;
	}
	f->listening = strbuf_detach(&listening, NULL);
}

void serve_facts_host_nccl(struct serve_node_facts *f, const struct inventory *inv)
{
	const struct inv_library *lib = &inv->sys.nccl;

	if (lib->available == TRI_YES) {
		f->host_nccl_path = xstrdup_or_null(lib->path);
		f->host_nccl_version = xstrdup_or_null(lib->version);
		f->host_nccl_build_id = xstrdup_or_null(inv->sys.nccl_build_id);
	} else if (lib->available == TRI_NO) {
		f->host_nccl_reason = xstrdup(lib->reason ? lib->reason : "libnccl.so.2 not found");
	}
}

void serve_node_facts_release(struct serve_node_facts *f)
{
	free(f->error);
	free(f->listening);
	free(f->image_id);
	free(f->nccl_path);
	free(f->nccl_version);
	free(f->nccl_build_id);
	free(f->nccl_none);
	free(f->nccl_error);
	free(f->host_nccl_path);
	free(f->host_nccl_version);
	free(f->host_nccl_build_id);
	free(f->host_nccl_reason);
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

/*
 * The ports node i's engine listens on, into ports (at most 2): their
 * number.  TensorRT-LLM's head listens on the rendezvous port only to hear
 * its workers report (natively; with --image its mpirun connects out).
 */
static size_t node_ports(const struct serve_plan *plan, size_t i, unsigned ports[2])
{
	bool trtllm_gate =
		plan->engine == SERVE_ENGINE_TRTLLM && !plan->image && plan->nr_nodes > 1;
	size_t n = 0;

	if (!i) {
		ports[n++] = plan->port;
		if ((plan->engine != SERVE_ENGINE_LLAMACPP &&
		     plan->engine != SERVE_ENGINE_TRTLLM) ||
		    trtllm_gate)
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

/* "NCCL 2.28.9 build 4e43... (PATH)" into sb: the build when it is known. */
static void describe_nccl(struct strbuf *sb, const char *version, const char *build_id,
			  const char *path)
{
	strbuf_addf(sb, "NCCL %s", version ? version : "of an unknown version");
	if (build_id)
		strbuf_addf(sb, " build %s", build_id);
	if (path)
		strbuf_addf(sb, " (%s)", path);
}

/* Two NCCLs: 0 one build, 1 one version with a build id not known, 2 two builds, 3 two versions. */
static int nccl_difference(const char *version_a, const char *build_a, const char *version_b,
			   const char *build_b)
{
	if (!streq(version_a, version_b))
		return 3;
	if (!build_a || !build_b)
		return 1;
	return streq(build_a, build_b) ? 0 : 2;
}

/* Without --image: every node's own NCCL against the head's. */
static void check_nccl_native(const struct serve_plan *plan, const struct serve_node_facts *facts,
			      struct findings *out)
{
	const struct serve_node_facts *head = &facts[0];
	const char *head_host = plan->nodes[0].host;
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT, fix = STRBUF_INIT;
	bool all_same = true;

	if (!head->host_nccl_version) {
		add(out, "serve.nccl", head_host, CHECK_SKIP, NULL,
		    "the NCCL of the head %s is not known%s%s", head_host,
		    head->host_nccl_reason ? ": " : "",
		    head->host_nccl_reason ? head->host_nccl_reason : "");
		return;
	}
	describe_nccl(&b, head->host_nccl_version, head->host_nccl_build_id, head->host_nccl_path);
	for (size_t i = 1; i < plan->nr_nodes; i++) {
		const struct serve_node_facts *f = &facts[i];
		const char *host = plan->nodes[i].host;
		strbuf_reset(&a);
		strbuf_reset(&fix);
		if (!f->host_nccl_version) {
			all_same = false;
			if (!f->host_nccl_reason) {
				add(out, "serve.nccl", host, CHECK_SKIP, NULL,
				    "the NCCL of %s is not known", host);
				continue;
			}
			strbuf_addf(&fix, "install NCCL %s on %s, the head's build (%s)",
				    head->host_nccl_version, host,
				    head->host_nccl_path ? head->host_nccl_path : "libnccl.so.2");
			add(out, "serve.nccl", host, CHECK_FAIL, fix.buf,
			    "%s has no NCCL (%s); the head %s has %s", host, f->host_nccl_reason,
			    head_host, b.buf);
			continue;
		}
		describe_nccl(&a, f->host_nccl_version, f->host_nccl_build_id, f->host_nccl_path);
		int d = nccl_difference(f->host_nccl_version, f->host_nccl_build_id,
					head->host_nccl_version, head->host_nccl_build_id);
		if (!d)
			continue;
		all_same = false;
		if (d == 1) {
			add(out, "serve.nccl", host, CHECK_WARN,
			    "inspect every node with this sparkctl: its inventory has NCCL's build "
			    "id",
			    "%s has %s, the head %s has %s: one version, but whether one build "
			    "is not known without both build ids",
			    host, a.buf, head_host, b.buf);
			continue;
		}
		strbuf_addf(&fix,
			    "install one NCCL build on every node: the head's %s on %s in place of "
			    "%s (or serve in one --image on every node)",
			    head->host_nccl_path ? head->host_nccl_path : "libnccl.so.2", host,
			    f->host_nccl_path ? f->host_nccl_path : "its own");
		add(out, "serve.nccl", host, CHECK_FAIL, fix.buf,
		    "%s has %s, but the head %s has %s%s", host, a.buf, head_host, b.buf,
		    d == 2 ? ": two builds of one version, which have hung jobs" : "");
	}
	if (all_same)
		add(out, "serve.nccl", "cluster", CHECK_PASS, NULL, "%s on %s", b.buf,
		    plan->nr_nodes > 1 ? "every node" : head_host);
	strbuf_release(&a);
	strbuf_release(&b);
	strbuf_release(&fix);
}

/* Why the image's NCCL on a node is not known, or NULL when it is. */
static char *image_nccl_unknown(const struct serve_plan *plan, const struct serve_node_facts *f,
				const char *host)
{
	if (f->error)
		return xasprintf("not asked: %s", f->error);
	if (!f->image_asked || f->image_status)
		return xasprintf("%s is not usable on %s (serve.image says why)", plan->image,
				 host);
	if (!f->nccl_asked)
		return xasprintf("not asked: no answer from %s", host);
	if (f->nccl_status == 126 || f->nccl_status == 127)
		return xasprintf("%s has no python3 to look for its NCCL with: %s", plan->image,
				 f->nccl_error ? f->nccl_error : "command not found");
	if (f->nccl_status || (!f->nccl_path && !f->nccl_none))
		return xasprintf("docker run %s failed (status %d): %s", plan->image,
				 f->nccl_status,
				 f->nccl_error ? f->nccl_error : "no answer from its python3");
	return NULL;
}

/* With --image: the NCCL the engine loads in the image against each node's own. */
static void check_nccl_image(const struct serve_plan *plan, const struct serve_node_facts *facts,
			     struct findings *out)
{
	for (size_t i = 0; i < plan->nr_nodes; i++) {
		const struct serve_node_facts *f = &facts[i];
		const char *host = plan->nodes[i].host;
		struct strbuf img = STRBUF_INIT, own = STRBUF_INIT, fix = STRBUF_INIT;
		char *why = image_nccl_unknown(plan, f, host);
		int d;
		if (why) {
			add(out, "serve.nccl", host, CHECK_SKIP, NULL, "%s", why);
			free(why);
			continue;
		}
		if (f->nccl_none) {
			add(out, "serve.nccl", host, CHECK_WARN,
			    "see which NCCL the engine loads in the image (NCCL_DEBUG=VERSION "
			    "prints it)",
			    "%s: %s", plan->image, f->nccl_none);
			continue;
		}
		describe_nccl(&img, f->nccl_version, f->nccl_build_id, f->nccl_path);
		if (!f->host_nccl_version) {
			add(out, "serve.nccl", host, CHECK_PASS, NULL,
			    "%s loads %s; %s has no NCCL of its own to differ from (%s)",
			    plan->image, img.buf, host,
			    f->host_nccl_reason ? f->host_nccl_reason : "not known");
			goto next;
		}
		describe_nccl(&own, f->host_nccl_version, f->host_nccl_build_id, f->host_nccl_path);
		d = f->nccl_version ? nccl_difference(f->nccl_version, f->nccl_build_id,
						      f->host_nccl_version, f->host_nccl_build_id)
				    : -1;
		if (d < 0) {
			add(out, "serve.nccl", host, CHECK_WARN,
			    "see which NCCL the engine loads in the image (NCCL_DEBUG=VERSION "
			    "prints it)",
			    "%s loads %s: its version is not known, %s has %s", plan->image,
			    img.buf, host, own.buf);
		} else if (!d) {
			add(out, "serve.nccl", host, CHECK_PASS, NULL, "%s loads %s, as %s has",
			    plan->image, img.buf, host);
		} else if (d == 1) {
			add(out, "serve.nccl", host, CHECK_WARN,
			    "inspect the node with this sparkctl: its inventory has NCCL's build "
			    "id",
			    "%s loads %s, %s has %s: one version, but whether one build is not "
			    "known without both build ids",
			    plan->image, img.buf, host, own.buf);
		} else if (d == 2) {
			strbuf_addf(&fix,
				    "make them one build: install the image's %s on %s in place of "
				    "%s (docker cp from a container of %s), or build %s on the "
				    "nodes' NCCL",
				    f->nccl_path, host,
				    f->host_nccl_path ? f->host_nccl_path : "its libnccl.so.2",
				    plan->image, plan->image);
			add(out, "serve.nccl", host, CHECK_FAIL, fix.buf,
			    "%s loads %s, but %s has %s: two builds of one version, which have "
			    "hung jobs",
			    plan->image, img.buf, host, own.buf);
		} else {
			strbuf_addf(&fix,
				    "run 'sparkctl bench nccl' inside %s, so that what is measured "
				    "is what the engine runs (or serve an image built on NCCL %s)",
				    plan->image, f->host_nccl_version);
			add(out, "serve.nccl", host, CHECK_WARN, fix.buf,
			    "%s loads %s, %s has %s: what 'sparkctl bench nccl' measured on the "
			    "host is not what the engine runs",
			    plan->image, img.buf, host, own.buf);
		}
	next:
		strbuf_release(&img);
		strbuf_release(&own);
		strbuf_release(&fix);
	}
}

void serve_check_nccl(const struct serve_plan *plan, const struct serve_node_facts *facts,
		      struct findings *out)
{
	if (!plan->nr_nodes)
		return;
	if (plan->image)
		check_nccl_image(plan, facts, out);
	else
		check_nccl_native(plan, facts, out);
}

void serve_check_node_facts(const struct serve_plan *plan, const struct serve_node_facts *facts,
			    struct findings *out)
{
	check_ports_free(plan, facts, out);
	check_image(plan, facts, out);
	serve_check_nccl(plan, facts, out);
}
