/*
 * Unit tests of 'sparkctl serve' (serve/serve_plan.h): the parsers, the
 * engine arguments sparkctl sets itself, the plan of two Sparks (the
 * fixtures spark-1cable and spark-gid-drift: one cable, one subnet per
 * twin) for each engine, the nodes it refuses, and each preflight check
 * passing and failing.
 */
#include "sparkctl.h"

#include "test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "serve/serve_gate.h"
#include "serve/serve_plan.h"

struct pair {
	struct inventory invs[2];
	struct serve_node_input in[2];
};

static int setup_pair(void **state)
{
	struct pair *p = xcalloc(1, sizeof(*p));

	load_fixture("spark-1cable", &p->invs[0]);
	load_fixture("spark-gid-drift", &p->invs[1]);
	p->in[0] = (struct serve_node_input){ "spark-01", &p->invs[0] };
	p->in[1] = (struct serve_node_input){ "spark-02", &p->invs[1] };
	*state = p;
	return 0;
}

static int teardown_pair(void **state)
{
	struct pair *p = *state;

	inventory_release(&p->invs[0]);
	inventory_release(&p->invs[1]);
	free(p);
	return 0;
}

static struct serve_options vllm_options(void)
{
	return (struct serve_options){ .engine = SERVE_ENGINE_VLLM,
				       .backend = SERVE_BACKEND_MP,
				       .model = "Qwen/Qwen3-8B",
				       .port = 8000,
				       .master_port = 29501 };
}

static void parsers(void **state)
{
	enum serve_engine e;
	enum serve_backend b;
	uint64_t n;
	unsigned h;

	(void)state;
	assert_int_equal(serve_engine_parse("llamacpp", &e), 0);
	assert_int_equal(e, SERVE_ENGINE_LLAMACPP);
	assert_string_equal(serve_engine_name(SERVE_ENGINE_TRTLLM), "trtllm");
	assert_int_equal(serve_engine_parse("vLLM", &e), -EINVAL);
	assert_int_equal(serve_engine_parse("exo", &e), -EINVAL);
	assert_int_equal(serve_backend_parse("ray", &b), 0);
	assert_int_equal(b, SERVE_BACKEND_RAY);
	assert_int_equal(serve_backend_parse("mpi", &b), -EINVAL);
	assert_null(serve_backend_name(SERVE_BACKEND_NONE));
	assert_int_equal(serve_default_master_port(SERVE_ENGINE_VLLM, SERVE_BACKEND_RAY), 6379);
	assert_int_equal(serve_default_master_port(SERVE_ENGINE_VLLM, SERVE_BACKEND_MP), 29501);
	assert_int_equal(serve_default_port(SERVE_ENGINE_SGLANG), 30000);

	assert_int_equal(serve_params_parse("70B", &n), 0);
	assert_true(n == UINT64_C(70000000000));
	assert_int_equal(serve_params_parse("1.5b", &n), 0);
	assert_true(n == UINT64_C(1500000000));
	assert_int_equal(serve_params_parse("500M", &n), 0);
	assert_true(n == UINT64_C(500000000));
	assert_int_equal(serve_params_parse("7000000000", &n), 0);
	assert_true(n == UINT64_C(7000000000));
	static const char *const bad[] = { "",
					   "B",
					   "0",
					   "0B",
					   "1.5",
					   "8 B",
					   "8BB",
					   "-8B",
					   "1.2345B",
					   "8G",
					   "99999999999999999999" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if (serve_params_parse(bad[i], &n) != -EINVAL)
			fail_msg("--params '%s' was taken", bad[i]);
	assert_int_equal(serve_dtype_halves("bf16", &h), 0);
	assert_int_equal(h, 4);
	assert_int_equal(serve_dtype_halves("fp4", &h), 0);
	assert_int_equal(h, 1);
	assert_int_equal(serve_dtype_halves("int4", &h), -EINVAL);
}

static void engine_args(void **state)
{
	struct strvec args = STRVEC_INIT;
	struct strbuf err = STRBUF_INIT;

	(void)state;
	strvec_pushl(&args, "--max-model-len", "4096", "--enforce-eager", NULL);
	assert_int_equal(serve_check_engine_args(SERVE_ENGINE_VLLM, &args, &err), 0);
	/* --port-like options that only start with a reserved name are the engine's. */
	strvec_push(&args, "--portal");
	assert_int_equal(serve_check_engine_args(SERVE_ENGINE_VLLM, &args, &err), 0);
	strvec_push(&args, "--nnodes=3");
	assert_int_equal(serve_check_engine_args(SERVE_ENGINE_VLLM, &args, &err), -EINVAL);
	assert_string_equal(err.buf, "--nnodes is set by sparkctl serve (from the nodes)");
	strvec_clear(&args);
	strbuf_reset(&err);
	strvec_pushl(&args, "--tp_size", "2", NULL);
	assert_int_equal(serve_check_engine_args(SERVE_ENGINE_VLLM, &args, &err), 0);
	assert_int_equal(serve_check_engine_args(SERVE_ENGINE_TRTLLM, &args, &err), -EINVAL);
	assert_string_equal(err.buf, "--tp_size is set by sparkctl serve (from --tp)");
	strvec_clear(&args);
	strbuf_reset(&err);
	strvec_pushl(&args, "--rpc", "10.0.0.9:50052", NULL);
	assert_int_equal(serve_check_engine_args(SERVE_ENGINE_LLAMACPP, &args, &err), -EINVAL);
	strvec_clear(&args);
	strbuf_release(&err);
}

/* The value of key in a node's environment, or NULL. */
static const char *env_of(const struct serve_node *n, const char *key)
{
	size_t len = strlen(key);

	for (size_t i = 0; i < n->env.nr; i++)
		if (strncmp(n->env.v[i], key, len) == 0 && n->env.v[i][len] == '=')
			return n->env.v[i] + len + 1;
	return NULL;
}

/* argv's words joined by spaces. */
static char *joined(const struct strvec *argv)
{
	struct strbuf b = STRBUF_INIT;

	for (size_t i = 0; i < argv->nr; i++)
		strbuf_addf(&b, "%s%s", i ? " " : "", argv->v[i]);
	return strbuf_detach(&b, NULL);
}

static void step_is(const struct serve_plan *plan, size_t i, size_t node, const char *argv)
{
	char *got = joined(&plan->steps[i].argv);

	assert_int_equal(plan->steps[i].node, node);
	assert_string_equal(got, argv);
	free(got);
}

static void vllm_mp(void **state)
{
	struct pair *p = *state;
	struct serve_options o = vllm_options();
	struct strbuf err = STRBUF_INIT;
	struct serve_plan plan;

	assert_int_equal(serve_plan_build(&o, p->in, 2, &plan, &err), 0);
	/* One GPU per Spark: tensor parallel within the node, pipeline across. */
	assert_int_equal(plan.tp, 1);
	assert_int_equal(plan.pp, 2);
	assert_string_equal(plan.url, "http://192.168.177.11:8000");
	assert_string_equal(plan.nodes[1].address, "192.168.177.12");
	assert_int_equal(plan.nr_steps, 2);
	/* The worker first, headless; the head last, with the API. */
	step_is(&plan, 0, 1,
		"vllm serve Qwen/Qwen3-8B --tensor-parallel-size 1 --pipeline-parallel-size 2 "
		"--distributed-executor-backend mp --nnodes 2 --node-rank 1 --master-addr "
		"192.168.177.11 --master-port 29501 --headless");
	step_is(&plan, 1, 0,
		"vllm serve Qwen/Qwen3-8B --tensor-parallel-size 1 --pipeline-parallel-size 2 "
		"--distributed-executor-backend mp --nnodes 2 --node-rank 0 --master-addr "
		"192.168.177.11 --master-port 29501 --port 8000");
	for (size_t i = 0; i < 2; i++) {
		const struct serve_node *n = &plan.nodes[i];
		/* Gloo and TensorPipe: one plain interface name, the fabric's. */
		assert_string_equal(env_of(n, "GLOO_SOCKET_IFNAME"), "enp1s0f1np1");
		assert_string_equal(env_of(n, "TP_SOCKET_IFNAME"), "enp1s0f1np1");
		assert_string_equal(env_of(n, "VLLM_HOST_IP"), n->address);
		/* 'sparkctl env' is there too, NCCL's own syntax kept for NCCL. */
		assert_string_equal(env_of(n, "NCCL_SOCKET_IFNAME"), "=enp1s0f1np1");
		assert_string_equal(env_of(n, "NCCL_IB_HCA"), "=rocep1s0f1,roceP2p1s0f1");
		assert_null(env_of(n, "RAY_NODE_IP_ADDRESS"));
	}
	/* What launch runs on the worker: its variables, then its engine in its place. */
	struct strbuf script = STRBUF_INIT;
	serve_node_script(&plan, 1, &script);
	assert_true(starts_with(script.buf, "export NCCL_IB_HCA='=rocep1s0f1,roceP2p1s0f1'\n"));
	assert_non_null(strstr(script.buf,
			       "\nexport VLLM_HOST_IP=192.168.177.12\n"
			       "exec vllm serve Qwen/Qwen3-8B --tensor-parallel-size 1 "));
	assert_string_equal(script.buf + script.len - strlen(" --headless\n"), " --headless\n");
	strbuf_release(&script);
	serve_plan_release(&plan);
	/* tp 2 across the two nodes. */
	o.tp = 2;
	assert_int_equal(serve_plan_build(&o, p->in, 2, &plan, &err), 0);
	assert_int_equal(plan.pp, 1);
	serve_plan_release(&plan);
	strbuf_release(&err);
}

static void vllm_ray_image(void **state)
{
	struct pair *p = *state;
	struct serve_options o = vllm_options();
	struct strvec args = STRVEC_INIT;
	struct strbuf err = STRBUF_INIT;
	struct serve_plan plan;
	char *s;

	o.backend = SERVE_BACKEND_RAY;
	o.master_port = 6379;
	o.image = "vllm:1";
	o.model_cache = "/srv/hf";
	strvec_pushl(&args, "--max-model-len", "4096", NULL);
	o.engine_args = &args;
	assert_int_equal(serve_plan_build(&o, p->in, 2, &plan, &err), 0);
	assert_int_equal(plan.nr_steps, 3);
	assert_string_equal(env_of(&plan.nodes[1], "RAY_NODE_IP_ADDRESS"), "192.168.177.12");
	assert_string_equal(env_of(&plan.nodes[1], "RAY_OVERRIDE_NODE_IP_ADDRESS"),
			    "192.168.177.12");
	/* The Ray head first, the worker's Ray joining it, vLLM on the head last. */
	assert_int_equal(plan.steps[0].node, 0);
	s = joined(&plan.steps[0].argv);
	assert_non_null(strstr(s, "docker run --rm --name sparkctl-serve-vllm --network host "
				  "--ipc host --gpus all --device /dev/infiniband --ulimit "
				  "memlock=-1 -v /srv/hf:/root/.cache/huggingface -e "));
	assert_non_null(strstr(s, " -e RAY_NODE_IP_ADDRESS=192.168.177.11 "));
	assert_non_null(strstr(s, " --entrypoint ray vllm:1 start --block --head --port=6379 "
				  "--node-ip-address=192.168.177.11 --include-dashboard=false"));
	free(s);
	assert_int_equal(plan.steps[1].node, 1);
	s = joined(&plan.steps[1].argv);
	assert_non_null(
		strstr(s, " --entrypoint ray vllm:1 start --block --address=192.168.177.11:6379 "
			  "--node-ip-address=192.168.177.12"));
	free(s);
	step_is(&plan, 2, 0,
		"docker exec sparkctl-serve-vllm vllm serve Qwen/Qwen3-8B --tensor-parallel-size 1 "
		"--pipeline-parallel-size 2 --distributed-executor-backend ray --port 8000 "
		"--max-model-len 4096");
	/* The head's Ray in the background, its vLLM in the script's place. */
	struct strbuf script = STRBUF_INIT;
	serve_node_script(&plan, 0, &script);
	assert_non_null(strstr(script.buf, "\ndocker run --rm "));
	assert_non_null(strstr(script.buf, " --include-dashboard=false &\nexec docker exec "
					   "sparkctl-serve-vllm vllm serve Qwen/Qwen3-8B "));
	strbuf_release(&script);
	serve_plan_release(&plan);
	strvec_clear(&args);
	strbuf_release(&err);
}

static void other_engines(void **state)
{
	struct pair *p = *state;
	struct serve_options o = vllm_options();
	struct strbuf err = STRBUF_INIT;
	struct serve_plan plan;
	char *s;

	o.engine = SERVE_ENGINE_SGLANG;
	o.backend = SERVE_BACKEND_NONE;
	o.master_port = 25000;
	o.port = 30000;
	assert_int_equal(serve_plan_build(&o, p->in, 2, &plan, &err), 0);
	step_is(&plan, 0, 1,
		"python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp-size 1 --pp-size "
		"2 "
		"--dist-init-addr 192.168.177.11:25000 --nnodes 2 --node-rank 1");
	assert_null(env_of(&plan.nodes[0], "VLLM_HOST_IP"));
	serve_plan_release(&plan);

	o.engine = SERVE_ENGINE_TRTLLM;
	o.master_port = 2233;
	o.port = 8355;
	assert_int_equal(serve_plan_build(&o, p->in, 2, &plan, &err), 0);
	/* Natively mpirun reaches the worker itself: one step, on the head. */
	assert_int_equal(plan.nr_steps, 1);
	s = joined(&plan.steps[0].argv);
	assert_true(starts_with(s, "mpirun -np 2 -H 192.168.177.11:1,192.168.177.12:1 "));
	assert_non_null(strstr(s, " -x GLOO_SOCKET_IFNAME "));
	assert_non_null(strstr(s, " trtllm-llmapi-launch trtllm-serve Qwen/Qwen3-8B --tp_size 1 "
				  "--pp_size 2 --backend pytorch --host 0.0.0.0 --port 8355"));
	free(s);
	/* The worker has no part of its own: mpirun starts its ranks. */
	struct strbuf script = STRBUF_INIT;
	serve_node_script(&plan, 1, &script);
	assert_int_equal(script.len, 0);
	strbuf_release(&script);
	serve_plan_release(&plan);

	o.engine = SERVE_ENGINE_LLAMACPP;
	o.model = "/models/qwen3-8b-q4_k_m.gguf";
	o.master_port = 50052;
	o.port = 8080;
	assert_int_equal(serve_plan_build(&o, p->in, 2, &plan, &err), 0);
	/* rpc-server on the worker's fabric address only: it has no authentication. */
	step_is(&plan, 0, 1, "rpc-server --host 192.168.177.12 --port 50052");
	step_is(&plan, 1, 0,
		"llama-server -m /models/qwen3-8b-q4_k_m.gguf --rpc 192.168.177.12:50052 -ngl 999 "
		"--host 0.0.0.0 --port 8080");
	assert_int_equal(plan.tp, 0);
	serve_plan_release(&plan);
	strbuf_release(&err);
}

static void refused(void **state)
{
	struct pair *p = *state;
	struct serve_options o = vllm_options();
	struct strbuf err = STRBUF_INIT;
	struct serve_plan plan;
	struct inventory ring, ib, two;
	struct serve_node_input in[2];

	o.tp = 2;
	o.pp = 2;
	assert_int_equal(serve_plan_build(&o, p->in, 2, &plan, &err), -EDOM);
	assert_string_equal(
		err.buf, "tensor parallel 2 x pipeline parallel 2 is 4 GPUs; the 2 nodes have 2");
	serve_plan_release(&plan);
	strbuf_reset(&err);
	o.pp = 0;
	o.tp = 3;
	assert_int_equal(serve_plan_build(&o, p->in, 2, &plan, &err), -EDOM);
	assert_string_equal(err.buf, "--tp 3 does not divide the 2 GPUs of the 2 nodes");
	serve_plan_release(&plan);
	strbuf_reset(&err);
	o = vllm_options();
	o.master_port = 8000;
	assert_int_equal(serve_plan_build(&o, p->in, 2, &plan, &err), -EDOM);
	serve_plan_release(&plan);
	o = vllm_options();

	/* A node whose bootstrap is the management network (a ring, InfiniBand). */
	load_fixture("spark-ring", &ring);
	load_fixture("ib-server", &ib);
	load_fixture("spark-2cable", &two);
	in[0] = (struct serve_node_input){ "dgx1", &ib };
	in[1] = (struct serve_node_input){ "dgx2", &ib };
	strbuf_reset(&err);
	o.tp = 8;
	assert_int_equal(serve_plan_build(&o, in, 2, &plan, &err), -EINVAL);
	assert_true(starts_with(err.buf, "dgx1: its bootstrap interface eno1 is not a fabric "
					 "port (the management network)"));
	serve_plan_release(&plan);
	o.tp = 0;
	/* A ring of three: no fabric subnet joins them; env bootstraps over the management port. */
	struct serve_node_input in3[3] = { { "ring1", &ring },
					   { "ring2", &ring },
					   { "ring3", &ring } };
	strbuf_reset(&err);
	assert_int_equal(serve_plan_build(&o, in3, 3, &plan, &err), -EINVAL);
	assert_true(starts_with(err.buf, "ring1: its bootstrap interface enP7s7 is not a fabric "
					 "port (the management network)"));
	serve_plan_release(&plan);
	in[0] = p->in[0];
	/* Unlike nodes: 8 GPUs and 1. */
	in[1] = (struct serve_node_input){ "dgx", &ib };
	strbuf_reset(&err);
	assert_int_equal(serve_plan_build(&o, in, 2, &plan, &err), -EINVAL);
	assert_string_equal(err.buf, "dgx has 8 GPUs, spark-01 1: serve needs nodes alike");
	serve_plan_release(&plan);
	/* A node on another fabric subnet than the head's. */
	in[1] = (struct serve_node_input){ "spark-2c", &two };
	strbuf_reset(&err);
	assert_int_equal(serve_plan_build(&o, in, 2, &plan, &err), -EINVAL);
	assert_string_equal(err.buf, "spark-2c: its fabric address 192.168.100.11 (enp1s0f0np0) is "
				     "not on the head's subnet (192.168.177.11, spark-01)");
	serve_plan_release(&plan);
	inventory_release(&ring);
	inventory_release(&ib);
	inventory_release(&two);
	strbuf_release(&err);
}

static const struct finding *only(const struct findings *f, const char *id, const char *node)
{
	const struct finding *found = NULL;

	for (size_t i = 0; i < f->nr; i++)
		if (streq(f->items[i].check_id, id) && streq(f->items[i].node, node)) {
			assert_null(found);
			found = &f->items[i];
		}
	assert_non_null(found);
	return found;
}

/* The finding of check id about node, or NULL. */
static const struct finding *find(const struct findings *f, const char *id, const char *node)
{
	for (size_t i = 0; i < f->nr; i++)
		if (streq(f->items[i].check_id, id) && streq(f->items[i].node, node))
			return &f->items[i];
	return NULL;
}

static void preflight(void **state)
{
	struct pair *p = *state;
	struct serve_options o = vllm_options();
	struct findings f = { 0 };
	const struct finding *x;

	/* 8B in bf16, 16 GB: 7.5 GiB a node, 8.9 with the margin, in 116 GiB. */
	o.model_bytes = UINT64_C(16000000000);
	serve_preflight(&o, p->in, 2, &f);
	assert_int_equal(f.nr, 4);
	assert_int_equal(only(&f, "serve.parallel", "cluster")->status, CHECK_PASS);
	x = only(&f, "serve.memory", "spark-02");
	assert_int_equal(x->status, CHECK_PASS);
	assert_string_equal(x->message,
			    "its share of the weights, 7.5 GiB (8.9 GiB with the "
			    "margin), fits its MemAvailable (unified memory) of 116.0 GiB");
	assert_int_equal(only(&f, "serve.ports", "cluster")->status, CHECK_PASS);
	findings_release(&f);

	/* 110 GB a node fits 116 GiB; with the 20% margin it does not. */
	o.model_bytes = UINT64_C(220000000000);
	serve_check_memory(&o, p->in, 2, &f);
	x = only(&f, "serve.memory", "spark-01");
	assert_int_equal(x->status, CHECK_FAIL);
	assert_string_equal(x->message,
			    "its share of the weights, 102.4 GiB, with a 20% margin 122.9 GiB, "
			    "does not fit its MemAvailable (unified memory) of 116.0 GiB");
	assert_non_null(x->fix);
	findings_release(&f);
	o.model_bytes = UINT64_C(180000000000);
	serve_check_memory(&o, p->in, 2, &f);
	assert_int_equal(only(&f, "serve.memory", "spark-01")->status, CHECK_PASS);
	findings_release(&f);
	/* On one node alone it is the whole model. */
	serve_check_memory(&o, p->in, 1, &f);
	assert_int_equal(only(&f, "serve.memory", "spark-01")->status, CHECK_FAIL);
	findings_release(&f);
	/* MemAvailable, not MemTotal: what the GPU of unified memory can still take. */
	o.model_bytes = UINT64_C(100000000000);
	serve_check_memory(&o, p->in, 2, &f);
	assert_int_equal(only(&f, "serve.memory", "spark-02")->status, CHECK_PASS);
	findings_release(&f);
	p->invs[1].sys.mem_available = INT64_C(40) << 30;
	serve_check_memory(&o, p->in, 2, &f);
	assert_int_equal(only(&f, "serve.memory", "spark-01")->status, CHECK_PASS);
	assert_int_equal(only(&f, "serve.memory", "spark-02")->status, CHECK_FAIL);
	findings_release(&f);
	o.model_bytes = 0;
	serve_check_memory(&o, p->in, 2, &f);
	assert_int_equal(only(&f, "serve.memory", "cluster")->status, CHECK_SKIP);
	findings_release(&f);

	o.tp = 2;
	o.pp = 2;
	serve_check_parallel(&o, p->in, 2, &f);
	x = only(&f, "serve.parallel", "cluster");
	assert_int_equal(x->status, CHECK_FAIL);
	assert_string_equal(x->fix, "--tp 1 --pp 2 (a node's GPUs in tensor parallel, the nodes "
				    "in pipeline), or --tp 2 --pp 1");
	findings_release(&f);

	o.port = 29501;
	serve_check_ports(&o, &f);
	x = only(&f, "serve.ports", "cluster");
	assert_int_equal(x->status, CHECK_FAIL);
	assert_string_equal(x->message, "the API and the rendezvous would both use port 29501");
	findings_release(&f);
	o.port = 65536;
	serve_check_ports(&o, &f);
	assert_int_equal(only(&f, "serve.ports", "cluster")->status, CHECK_FAIL);
	findings_release(&f);
	o.port = 8000;
	o.master_port = 0;
	serve_check_ports(&o, &f);
	assert_string_equal(only(&f, "serve.ports", "cluster")->message, "0 is not a TCP port");
	findings_release(&f);
}

/* The start order's gate: its argument, a worker reporting, a worker that never does. */
static void gate(void **state)
{
	struct strbuf err = STRBUF_INIT;
	char addr[16];
	unsigned port, n;
	int status;
	pid_t pid;

	(void)state;
	assert_int_equal(serve_gate_parse("192.168.177.11:29501:3", addr, sizeof(addr), &port, &n),
			 0);
	assert_string_equal(addr, "192.168.177.11");
	assert_int_equal(port, 29501);
	assert_int_equal(n, 3);
	assert_int_equal(serve_gate_parse("spark-01:29501:1", addr, sizeof(addr), &port, &n),
			 -EINVAL);
	assert_int_equal(serve_gate_parse("10.0.0.1:0:1", addr, sizeof(addr), &port, &n), -EINVAL);
	assert_int_equal(serve_gate_parse("10.0.0.1:29501:", addr, sizeof(addr), &port, &n),
			 -EINVAL);
	assert_int_equal(serve_gate_parse("10.0.0.1:29501", addr, sizeof(addr), &port, &n),
			 -EINVAL);

	/* Worker 2 of 2 never reports: the head's part names it. */
	pid = fork();
	assert_true(pid >= 0);
	if (!pid)
		_exit(serve_gate_report("127.0.0.1", 47391, 1, 30, &err) < 0 ? 1 : 0);
	assert_int_equal(serve_gate_await("127.0.0.1", 47391, 2, 1, &err), -ETIMEDOUT);
	assert_string_equal(err.buf, "no report from the worker of rank 2 at 127.0.0.1:47391 "
				     "within 1 s: its part did not start (see its output)");
	/* The reported worker learns that the head's part went away. */
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(WEXITSTATUS(status), 1);

	/* Both report: the head's part goes on, and so do the workers. */
	strbuf_reset(&err);
	for (unsigned rank = 1; rank <= 2; rank++)
		if (!fork())
			_exit(serve_gate_report("127.0.0.1", 47391, rank, 30, &err) < 0 ? 1 : 0);
	assert_int_equal(serve_gate_await("127.0.0.1", 47391, 2, 30, &err), 0);
	for (int i = 0; i < 2; i++) {
		assert_true(wait(&status) > 0);
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	/* llama.cpp's head waits for a worker's server: none listens, then one does. */
	assert_int_equal(serve_gate_parse_addr("10.0.0.2:50052", addr, sizeof(addr), &port), 0);
	assert_string_equal(addr, "10.0.0.2");
	assert_int_equal(port, 50052);
	assert_int_equal(serve_gate_parse_addr("10.0.0.2", addr, sizeof(addr), &port), -EINVAL);
	strbuf_reset(&err);
	assert_int_equal(serve_gate_listening("127.0.0.1", 47391, 0, &err), -ETIMEDOUT);
	assert_non_null(strstr(err.buf, "the worker's server at 127.0.0.1:47391 did not answer"));
	{
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(47391) };
		int one = 1, lfd = socket(AF_INET, SOCK_STREAM, 0);
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		assert_int_equal(setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
		assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
		assert_int_equal(listen(lfd, 1), 0);
		assert_int_equal(serve_gate_listening("127.0.0.1", 47391, 5, &err), 0);
		close(lfd);
	}
	/* Ray: the nodes holding a connection to the GCS, the head's own left out. */
	assert_int_equal(serve_gate_count_peers("0 0 10.0.0.1:6379 10.0.0.2:41000\n"
						"0 0 10.0.0.1:6379 10.0.0.2:41002\n"
						"0 0 10.0.0.1:6379 10.0.0.1:50000\n"
						"0 0 10.0.0.1:8000 10.0.0.3:50000\n"
						"0 0 10.0.0.1:63790 10.0.0.4:50000\n",
						"10.0.0.1", 6379),
			 1);
	assert_int_equal(serve_gate_count_peers("ESTAB 0 0 10.0.0.1:6379 10.0.0.2:41000\n"
						"ESTAB 0 0 10.0.0.1:6379 10.0.0.3:41000\n",
						"10.0.0.1", 6379),
			 2);
	assert_int_equal(serve_gate_count_peers("", "10.0.0.1", 6379), 0);
	/* No head's part: the worker gives up after its time. */
	assert_int_equal(serve_gate_report("127.0.0.1", 47391, 1, 0, &err), -ETIMEDOUT);
	strbuf_release(&err);
}

/* The preflight on the nodes: what listens (ss -Hltnp) and the image's id, as the nodes say. */
static void node_facts(void **state)
{
	struct pair *p = *state;
	struct serve_options o = vllm_options();
	struct serve_node_facts facts[2] = { 0 };
	struct strbuf err = STRBUF_INIT;
	struct findings f = { 0 };
	struct serve_plan plan;
	const struct finding *x;

	o.image = "img:1";
	assert_int_equal(serve_plan_build(&o, p->in, 2, &plan, &err), 0);
	serve_facts_parse(
		"#ss\n"
		"LISTEN 0 4096 0.0.0.0:22 0.0.0.0:* users:((\"sshd\",pid=7,fd=3))\n"
		"LISTEN 0 2048 0.0.0.0:8000 0.0.0.0:* users:((\"python3\",pid=812,fd=5))\n"
		"#image 0 sha256:aaaa\n",
		&facts[0]);
	serve_facts_parse("#ss\n"
			  "LISTEN 0 128 [::]:18000 [::]:*\n"
			  "#image 0 sha256:bbbb\n",
			  &facts[1]);
	assert_true(facts[0].has_ss);
	assert_int_equal(facts[0].image_status, 0);
	assert_string_equal(facts[1].image_id, "sha256:bbbb");
	serve_check_node_facts(&plan, facts, &f);
	x = only(&f, "serve.ports_free", "spark-01");
	assert_int_equal(x->status, CHECK_FAIL);
	assert_string_equal(x->message,
			    "port 8000 on spark-01 is taken: python3 (pid 812) at 0.0.0.0:8000");
	/* A vLLM worker listens on no port of its own; 18000 is not 8000. */
	assert_null(find(&f, "serve.ports_free", "spark-02"));
	x = only(&f, "serve.image", "spark-02");
	assert_int_equal(x->status, CHECK_FAIL);
	assert_string_equal(
		x->message,
		"img:1 is sha256:bbbb on spark-02, but sha256:aaaa on the head spark-01");
	assert_null(find(&f, "serve.image", "cluster"));
	findings_release(&f);

	/* Free ports and one image: PASS; docker missing: a FAIL that says so. */
	serve_node_facts_release(&facts[0]);
	serve_node_facts_release(&facts[1]);
	serve_facts_parse("#ss\n#image 0 sha256:aaaa\n", &facts[0]);
	serve_facts_parse("#image 0 sha256:aaaa\n", &facts[1]);
	serve_check_node_facts(&plan, facts, &f);
	assert_int_equal(only(&f, "serve.ports_free", "spark-01")->status, CHECK_PASS);
	assert_string_equal(only(&f, "serve.image", "cluster")->message,
			    "img:1 is sha256:aaaa on every node");
	findings_release(&f);
	serve_node_facts_release(&facts[1]);
	serve_facts_parse("#image 127 docker: not found on this node\n", &facts[1]);
	serve_check_node_facts(&plan, facts, &f);
	x = only(&f, "serve.image", "spark-02");
	assert_int_equal(x->status, CHECK_FAIL);
	assert_string_equal(x->message, "img:1: docker is not on spark-02");
	findings_release(&f);
	serve_node_facts_release(&facts[0]);
	serve_node_facts_release(&facts[1]);
	serve_plan_release(&plan);

	/* trtllm natively: the workers report to the head on the rendezvous port. */
	o.engine = SERVE_ENGINE_TRTLLM;
	o.backend = SERVE_BACKEND_NONE;
	o.image = NULL;
	o.port = 8355;
	o.master_port = 2233;
	assert_int_equal(serve_plan_build(&o, p->in, 2, &plan, &err), 0);
	serve_facts_parse("#ss\n"
			  "LISTEN 0 128 0.0.0.0:2233 0.0.0.0:* users:((\"sshd\",pid=9,fd=3))\n",
			  &facts[0]);
	serve_facts_parse("#ss\n", &facts[1]);
	serve_check_node_facts(&plan, facts, &f);
	x = only(&f, "serve.ports_free", "spark-01");
	assert_int_equal(x->status, CHECK_FAIL);
	assert_string_equal(x->message,
			    "port 2233 on spark-01 is taken: sshd (pid 9) at 0.0.0.0:2233");
	assert_null(find(&f, "serve.ports_free", "spark-02"));
	findings_release(&f);
	serve_node_facts_release(&facts[0]);
	serve_node_facts_release(&facts[1]);
	serve_plan_release(&plan);
	strbuf_release(&err);
}

/* The host's NCCL of a node's facts, as its inventory would give it. */
static void host_nccl(struct serve_node_facts *f, const char *version, const char *build_id)
{
	f->host_nccl_path = xstrdup("/usr/lib/libnccl.so.2");
	f->host_nccl_version = xstrdup(version);
	f->host_nccl_build_id = xstrdup_or_null(build_id);
}

/* serve.nccl: the image's NCCL (the program's lines) against each node's own, or the head's. */
static void nccl_facts(void **state)
{
	struct pair *p = *state;
	struct serve_options o = vllm_options();
	struct serve_node_facts facts[2] = { 0 };
	struct strbuf err = STRBUF_INIT;
	struct findings f = { 0 };
	struct serve_plan plan;
	const struct finding *x;

	o.image = "img:1";
	assert_int_equal(serve_plan_build(&o, p->in, 2, &plan, &err), 0);
	serve_facts_parse("#image 0 sha256:aaaa\n#nccl-status 0\n#nccl path /w/libnccl.so.2\n"
			  "#nccl build_id aa01\n#nccl version 2.28.9\n",
			  &facts[0]);
	serve_facts_parse("#image 0 sha256:aaaa\n#nccl-status 0\n#nccl path /w/libnccl.so.2\n"
			  "#nccl build_id \n#nccl version 2.28.9\n#nccl Traceback (most recent)\n",
			  &facts[1]);
	assert_true(facts[0].nccl_asked);
	assert_string_equal(facts[0].nccl_build_id, "aa01");
	assert_null(facts[1].nccl_build_id); /* empty: not known */
	assert_string_equal(facts[1].nccl_error, "Traceback (most recent)");
	host_nccl(&facts[0], "2.28.9", "aa02");
	host_nccl(&facts[1], "2.28.9", "aa01");
	serve_check_nccl(&plan, facts, &f);
	x = only(&f, "serve.nccl", "spark-01");
	assert_int_equal(x->status, CHECK_FAIL);
	assert_string_equal(x->message, "img:1 loads NCCL 2.28.9 build aa01 (/w/libnccl.so.2), but "
					"spark-01 has NCCL 2.28.9 build aa02 "
					"(/usr/lib/libnccl.so.2): two builds of one version, "
					"which have hung jobs");
	assert_int_equal(only(&f, "serve.nccl", "spark-02")->status, CHECK_WARN);
	findings_release(&f);

	/* One build: PASS; another version: WARN; no python3, no NCCL: SKIP, WARN. */
	serve_node_facts_release(&facts[0]);
	serve_node_facts_release(&facts[1]);
	serve_facts_parse("#image 0 sha256:aaaa\n#nccl-status 0\n#nccl path /w/libnccl.so.2\n"
			  "#nccl build_id aa01\n#nccl version 2.28.9\n",
			  &facts[0]);
	serve_facts_parse("#image 0 sha256:aaaa\n#nccl-status 0\n#nccl path /w/libnccl.so.2\n"
			  "#nccl build_id aa01\n#nccl version 2.28.9\n",
			  &facts[1]);
	host_nccl(&facts[0], "2.28.9", "aa01");
	host_nccl(&facts[1], "2.27.7", "aa01");
	serve_check_nccl(&plan, facts, &f);
	assert_int_equal(only(&f, "serve.nccl", "spark-01")->status, CHECK_PASS);
	assert_int_equal(only(&f, "serve.nccl", "spark-02")->status, CHECK_WARN);
	findings_release(&f);
	serve_node_facts_release(&facts[0]);
	serve_node_facts_release(&facts[1]);
	serve_facts_parse(
		"#image 0 sha256:aaaa\n#nccl-status 127\n#nccl exec: python3: not found\n",
		&facts[0]);
	serve_facts_parse("#image 0 sha256:aaaa\n#nccl-status 0\n#nccl none no libnccl.so.2\n",
			  &facts[1]);
	serve_check_nccl(&plan, facts, &f);
	x = only(&f, "serve.nccl", "spark-01");
	assert_int_equal(x->status, CHECK_SKIP);
	assert_string_equal(
		x->message,
		"img:1 has no python3 to look for its NCCL with: exec: python3: not found");
	x = only(&f, "serve.nccl", "spark-02");
	assert_int_equal(x->status, CHECK_WARN);
	assert_string_equal(x->message, "img:1: no libnccl.so.2");
	findings_release(&f);
	serve_plan_release(&plan);

	/* Natively: each node's own against the head's. */
	o.image = NULL;
	assert_int_equal(serve_plan_build(&o, p->in, 2, &plan, &err), 0);
	serve_node_facts_release(&facts[0]);
	serve_node_facts_release(&facts[1]);
	host_nccl(&facts[0], "2.28.9", "aa01");
	host_nccl(&facts[1], "2.28.9", "aa01");
	serve_check_nccl(&plan, facts, &f);
	assert_string_equal(only(&f, "serve.nccl", "cluster")->message,
			    "NCCL 2.28.9 build aa01 (/usr/lib/libnccl.so.2) on every node");
	findings_release(&f);
	free(facts[1].host_nccl_build_id);
	facts[1].host_nccl_build_id = xstrdup("bb01");
	serve_check_nccl(&plan, facts, &f);
	assert_int_equal(only(&f, "serve.nccl", "spark-02")->status, CHECK_FAIL);
	assert_null(find(&f, "serve.nccl", "cluster"));
	findings_release(&f);
	serve_node_facts_release(&facts[0]);
	serve_node_facts_release(&facts[1]);
	serve_plan_release(&plan);
	strbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parsers),
		cmocka_unit_test(engine_args),
		cmocka_unit_test(gate),
		cmocka_unit_test_setup_teardown(vllm_mp, setup_pair, teardown_pair),
		cmocka_unit_test_setup_teardown(vllm_ray_image, setup_pair, teardown_pair),
		cmocka_unit_test_setup_teardown(other_engines, setup_pair, teardown_pair),
		cmocka_unit_test_setup_teardown(refused, setup_pair, teardown_pair),
		cmocka_unit_test_setup_teardown(preflight, setup_pair, teardown_pair),
		cmocka_unit_test_setup_teardown(node_facts, setup_pair, teardown_pair),
		cmocka_unit_test_setup_teardown(nccl_facts, setup_pair, teardown_pair),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
