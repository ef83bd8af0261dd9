/*
 * serve_plan.h - what 'sparkctl serve' starts on each node, as plain data.
 *
 * A pure function of the options and the nodes' inventories: for every
 * node its fabric address and environment ('sparkctl env' plus what the
 * engines read), and the processes to start, in order - the workers
 * first, the head last (with Ray: the Ray head, then the workers' Ray,
 * then vLLM on the head).  The head is the first node; HEAD is its
 * fabric address.  Nothing here reads the host or starts anything.
 *
 * The engines' flags are those of vLLM 0.18 and later (multi-node without
 * Ray: --nnodes/--node-rank/--master-addr/--master-port, --headless on the
 * workers), SGLang's --dist-init-addr/--nnodes/--node-rank, TensorRT-LLM's
 * trtllm-serve under mpirun and llama.cpp's rpc-server and llama-server
 * --rpc, as NVIDIA's DGX Spark playbooks and the Spark launchers use them:
 * docs/serve.md.
 */
#ifndef SPARKCTL_SERVE_PLAN_H
#define SPARKCTL_SERVE_PLAN_H

#include "sparkctl.h"
#include "check/check.h"
#include "inventory/inventory.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

enum serve_engine {
	SERVE_ENGINE_VLLM,
	SERVE_ENGINE_SGLANG,
	SERVE_ENGINE_TRTLLM,
	SERVE_ENGINE_LLAMACPP,
};

enum serve_backend {
	SERVE_BACKEND_NONE, /* engines other than vLLM */
	SERVE_BACKEND_MP,   /* vLLM's own processes across nodes (no Ray) */
	SERVE_BACKEND_RAY,
};

/* "vllm", ...: 0, or -EINVAL. */
int serve_engine_parse(const char *s, enum serve_engine *ret);
const char *serve_engine_name(enum serve_engine e);
/* "mp", "ray": 0, or -EINVAL. */
int serve_backend_parse(const char *s, enum serve_backend *ret);
const char *serve_backend_name(enum serve_backend b);

/* The engine's API port when --port is not given: 8000, 30000, 8355, 8080. */
unsigned serve_default_port(enum serve_engine e);
/*
 * The rendezvous port when --master-port is not given: vLLM mp 29501, Ray
 * 6379, SGLang 25000, TensorRT-LLM 2233 (the containers' sshd), llama.cpp
 * 50052 (rpc-server).
 */
unsigned serve_default_master_port(enum serve_engine e, enum serve_backend b);

/* Bytes per weight of --dtype: bf16/fp16 2, fp8 1, fp4 0.5 (as halves: 4, 2, 1). */
int serve_dtype_halves(const char *dtype, unsigned *ret);
/* A parameter count: "70B", "8b", "1.5B", "500M", "7000000000": 0 or -EINVAL. */
int serve_params_parse(const char *s, uint64_t *ret);

struct serve_options {
	enum serve_engine engine;
	enum serve_backend backend; /* SERVE_BACKEND_MP or _RAY for vLLM, else _NONE */
	const char *model;
	unsigned tp, pp;	 /* 0: from the GPUs (tp: GPUs per node, pp: nodes) */
	unsigned port;		 /* the API's, on the head */
	unsigned master_port;	 /* the rendezvous port, on the head */
	const char *image;	 /* docker image, or NULL: the engine on each node's PATH */
	const char *model_cache; /* mounted into the container; NULL: ~/.cache/huggingface */
	const struct strvec *engine_args; /* after '--': to the engine (may be NULL) */
	uint64_t model_bytes;		  /* the weights, for the memory check; 0: not known */
};

/*
 * ENGINE and --backend (NULL: the engine's default, mp for vLLM) into
 * o->engine and o->backend: 0, or -EINVAL with a one-line message in err
 * (an unknown name, a backend for an engine other than vLLM).
 */
int serve_engine_choose(const char *engine, const char *backend, struct serve_options *o,
			struct strbuf *err);

/*
 * The options that sparkctl sets itself among args (the engine's
 * rendezvous and parallelism, its port): -EINVAL with a one-line message
 * naming the first one and the option that sets it.
 */
int serve_check_engine_args(enum serve_engine e, const struct strvec *args, struct strbuf *err);

/* One node as given: its name and its inventory. */
struct serve_node_input {
	const char *host;
	const struct inventory *inv;
};

struct serve_node {
	char *host;	   /* as given (-H, the --from file) */
	char *hostname;	   /* its inventory's */
	unsigned rank;	   /* 0: the head */
	char *interface;   /* the fabric netdev everything rendezvous over */
	char *address;	   /* its IPv4 address */
	unsigned gpus;	   /* 0: not known */
	struct strvec env; /* "KEY=VALUE": 'sparkctl env', then the engines' variables */
};

/* One process to start, in start order. */
struct serve_step {
	size_t node;	    /* index into plan->nodes */
	const char *role;   /* "vllm worker", "ray head", ... (static) */
	struct strvec argv; /* exactly what runs on the node */
	bool exec;	    /* --image: in the container of the node's first step (docker exec) */
};

struct serve_plan {
	enum serve_engine engine;
	enum serve_backend backend;
	char *model;
	unsigned tp, pp; /* as used (llama.cpp: 0, it has neither) */
	unsigned gpus;	 /* of all nodes; 0 when a node's are not known */
	unsigned port, master_port;
	char *image;		  /* or NULL */
	char *url;		  /* the API on the head: http://HEAD:PORT */
	struct serve_node *nodes; /* by rank: nodes[0] is the head */
	size_t nr_nodes;
	struct serve_step *steps; /* in start order */
	size_t nr_steps;
	struct strvec notes; /* "NODE: ..." from 'sparkctl env' (ports left out), also on failure */
};

/*
 * The plan for nodes[0..n) (the first is the head).  -EDOM (the command
 * line's) when --tp/--pp do not match the GPUs or a port is refused,
 * -ENODEV when a node has no fabric port, -EINVAL otherwise (a node with
 * no fabric address, nodes that cannot reach the head): a one-line
 * message naming the node in err.  plan is always released with
 * serve_plan_release().
 */
int serve_plan_build(const struct serve_options *o, const struct serve_node_input *nodes, size_t n,
		     struct serve_plan *plan, struct strbuf *err);
void serve_plan_release(struct serve_plan *plan);

/*
 * The preflight, pure: each check one finding (check_id "serve.NAME", node
 * "cluster" or the node's name) with its fix when it fails:
 *   serve.parallel  tensor x pipeline parallel equals the GPUs of the nodes;
 *   serve.memory    each node's share of the weights, with a margin, fits
 *                   the memory its GPUs can use (unified memory: MemAvailable);
 *   serve.ports     the API and rendezvous ports are ports, and distinct.
 * Appended to out (findings_release()).
 */
void serve_preflight(const struct serve_options *o, const struct serve_node_input *nodes, size_t n,
		     struct findings *out);
/* The memory margin: the share of the weights a node holds, times this, must fit. */
#define SERVE_MEMORY_MARGIN_PERCENT 120

/*
 * Tensor and pipeline parallel from the options and the GPUs of the nodes
 * (tp: a node's GPUs, pp: the nodes, or what the one given leaves), and
 * all the GPUs in *total: 0; -EDOM when tp x pp is not the GPUs, -EINVAL
 * when a node's GPUs are not known or the nodes differ; a message in err.
 */
int serve_parallel_resolve(const struct serve_options *o, const struct serve_node_input *nodes,
			   size_t n, unsigned *tp, unsigned *pp, unsigned *total,
			   struct strbuf *err);

/* One check of the preflight, for the command and the tests. */
void serve_check_parallel(const struct serve_options *o, const struct serve_node_input *nodes,
			  size_t n, struct findings *out);
void serve_check_memory(const struct serve_options *o, const struct serve_node_input *nodes,
			size_t n, struct findings *out);
void serve_check_ports(const struct serve_options *o, struct findings *out);

/*
 * What node runs, as one POSIX shell script (appended to out): its
 * variables exported, then its steps in order - each but the last in the
 * background, the last exec'd.  Empty when the node has no step of its own
 * (trtllm's workers without --image: mpirun starts their ranks).
 */
void serve_node_script(const struct serve_plan *plan, size_t node, struct strbuf *out);
/* word as one POSIX shell word: as it is when it needs no quotes, else in single quotes. */
void serve_sh_word(struct strbuf *out, const char *word);

/*
 * What the preflight learns on a node itself (serve_facts_script() run
 * there over ssh): what listens, the image's id and the NCCL in the image;
 * and the node's own NCCL, from its inventory.
 */
struct serve_node_facts {
	char *error;	 /* the node could not be asked, or NULL */
	bool has_ss;	 /* ss(8) ran: listening is what listens */
	char *listening; /* 'ss -Hltnp': one socket a line */
	bool image_asked;
	int image_status; /* of 'docker image inspect' (127: no docker) */
	char *image_id;	  /* its first line of output: the id, or docker's error */
	/* serve_nccl_snippet run in the image (--image, the image on the node). */
	bool nccl_asked;
	int nccl_status;     /* of its 'docker run' (126, 127: no python3 in the image) */
	char *nccl_path;     /* the libnccl.so.2 the engine loads there */
	char *nccl_version;  /* "2.28.9", or NULL when not known */
	char *nccl_build_id; /* hex, or NULL when not known */
	char *nccl_none;     /* why none was found, or NULL */
	char *nccl_error;    /* the first other line it printed (docker's error) */
	/* The node's own libnccl.so.2 (serve_facts_host_nccl(): its inventory's). */
	char *host_nccl_path;	  /* NULL: the node has none, or it is not known */
	char *host_nccl_version;  /* "2.28.9" */
	char *host_nccl_build_id; /* NULL: not known (an older sparkctl, a capture) */
	char *host_nccl_reason;	  /* why it has none */
};

/* The shell script (sh -c SCRIPT sh IMAGE SNIPPET) whose output serve_facts_parse() reads. */
extern const char serve_facts_script[];
/*
 * The Python program the script runs in the image (docker run --rm
 * --network none --entrypoint python3 IMAGE -c SNIPPET): the libnccl.so.2
 * the engine loads - the pip wheel's (nvidia/nccl/lib on sys.path, which
 * PyTorch loads), else the one of 'ldconfig -p' - as the lines "path P",
 * "version X.Y.Z" (its "NCCL version" string, else its file name) and
 * "build_id HEX" (empty when it has none); or "none WHY".
 */
extern const char serve_nccl_snippet[];
/* The output of serve_facts_script into f (serve_node_facts_release()). */
void serve_facts_parse(const char *text, struct serve_node_facts *f);
/* The node's own NCCL from its inventory into f. */
void serve_facts_host_nccl(struct serve_node_facts *f, const struct inventory *inv);
void serve_node_facts_release(struct serve_node_facts *f);

/*
 * serve.ports_free: each port a node's engine will listen on (the head:
 * the API, the rendezvous but for llama.cpp's and TensorRT-LLM's with
 * --image or on one node, where the workers report natively; a
 * llama.cpp worker: its rpc-server's; a TensorRT-LLM worker with --image:
 * its container's sshd) is free there - a FAIL names what listens.
 * serve.image: with --image, the image is on every node and its id the
 * same as the head's.
 * serve.nccl: with --image, the NCCL the engine loads in the image against
 * each node's own (one build: PASS; one version, two builds: FAIL - mixed,
 * they have hung jobs; two versions: WARN - 'bench nccl' on the host
 * measured another NCCL); without, every node's NCCL against the head's
 * (FAIL unless the same version and build).  facts[i] is plan->nodes[i]'s.
 */
void serve_check_node_facts(const struct serve_plan *plan, const struct serve_node_facts *facts,
			    struct findings *out);
/* serve.nccl alone. */
void serve_check_nccl(const struct serve_plan *plan, const struct serve_node_facts *facts,
		      struct findings *out);

/* The version of serve --print --json (docs/schemas/serve-print.schema.json). */
#define SERVE_PRINT_SCHEMA_VERSION 1

#endif
