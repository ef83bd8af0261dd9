/*
 * Unit tests of launch/protocol.c (the job spec, a unit's environment and
 * command, exit statuses) and probe/procs.c (parsing /proc text,
 * selections from a process table, and a few calls on real processes).
 */
#include "sparkctl.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "test_util.h"

#include "launch/launcher.h"
#include "launch/node_agent.h"
#include "launch/srun.h"
#include "proc/child.h"
#include "lib/json.h"
#include "lib/xalloc.h"
#include "probe/procs.h"

/* ---- helpers ---- */

static void push_all(struct strvec *v, const char *const *items)
{
	for (size_t i = 0; items[i]; i++)
		strvec_push(v, items[i]);
}

/* The strings of v are exactly items, in order. */
static void assert_strvec(const struct strvec *v, const char *const *items)
{
	size_t n = 0;

	while (items[n])
		n++;
	if (v->nr != n) {
		for (size_t i = 0; i < v->nr; i++)
			print_message("  [%zu] %s\n", i, v->v[i]);
		fail_msg("%zu strings, expected %zu", v->nr, n);
	}
	for (size_t i = 0; i < n; i++)
		assert_string_equal(v->v[i], items[i]);
	assert_null(v->v[n]);
}

/* The value of key in env ("K=V" entries), or NULL; fails if key is there twice. */
static const char *env_get(const struct strvec *env, const char *key)
{
	size_t klen = strlen(key);
	const char *found = NULL;

	for (size_t i = 0; i < env->nr; i++)
		if (!strncmp(env->v[i], key, klen) && env->v[i][klen] == '=') {
			if (found)
				fail_msg("%s is in the environment twice", key);
			found = env->v[i] + klen + 1;
		}
	return found;
}

/* Every byte from 0x01 to 0xff, in order. */
static char *all_bytes(void)
{
	char *s = xcalloc(256, 1);

	for (int i = 1; i < 256; i++)
		s[i - 1] = (char)i;
	return s;
}

/* A spec with every field set, the arguments and variables holding every byte. */
static void full_spec(struct launch_spec *s)
{
	char *bytes = all_bytes();

	launch_spec_init(s);
	s->job_id = xstrdup("0123456789abcdef");
	s->node_rank = 2;
	s->nnodes = 3;
	s->nproc = 4;
	s->rank_base = 8;
	s->world_size = 12;
	s->torchrun = true;
	s->use_env = false;
	s->all_local = true;
	s->kill_stale = true;
	s->master_addr = xstrdup("10.0.0.1");
	s->port = 29500;
	s->grace_ms = 7000;
	s->ping_ms = 5000;
	s->chdir = xstrdup("/tmp/a dir/%41/\xc3\xa9");
	strvec_push(&s->argv, "prog");
	strvec_push(&s->argv, bytes);
	strvec_push(&s->argv, "");
	strvec_push(&s->argv, "%");
	strvec_push(&s->argv, "%41");
	strvec_push(&s->argv, "100%%");
	strvec_push(&s->argv, "%00");
	strvec_push(&s->argv, "-n");
	strvec_push(&s->argv, "\"quoted\" \\back\\ 'single'");
	strvec_push(&s->argv, "h\xc3\xa9llo \xe2\x98\x83 \xff\xfe");
	strvec_push(&s->env, "A=1");
	strvec_push(&s->env, "B=x%y=z");
	strvec_pushf(&s->env, "C=%s", bytes);
	strvec_push(&s->env, "EMPTY=");
	strvec_push(&s->torchrun_opts, "--max_restarts=0");
	strvec_pushf(&s->torchrun_opts, "--x=%s", bytes);
	free(bytes);
}

static void assert_same_strvec(const struct strvec *a, const struct strvec *b)
{
	assert_int_equal(a->nr, b->nr);
	for (size_t i = 0; i < a->nr; i++)
		assert_string_equal(a->v[i], b->v[i]);
}

static void assert_same_spec(const struct launch_spec *a, const struct launch_spec *b)
{
	assert_string_equal(a->job_id, b->job_id);
	assert_int_equal(a->node_rank, b->node_rank);
	assert_int_equal(a->nnodes, b->nnodes);
	assert_int_equal(a->nproc, b->nproc);
	assert_int_equal(a->rank_base, b->rank_base);
	assert_int_equal(a->world_size, b->world_size);
	assert_int_equal(a->torchrun, b->torchrun);
	assert_int_equal(a->use_env, b->use_env);
	assert_int_equal(a->all_local, b->all_local);
	assert_int_equal(a->kill_stale, b->kill_stale);
	if (a->master_addr)
		assert_string_equal(a->master_addr, b->master_addr);
	else
		assert_null(b->master_addr);
	assert_int_equal(a->port, b->port);
	assert_int_equal(a->grace_ms, b->grace_ms);
	assert_int_equal(a->ping_ms, b->ping_ms);
	if (a->chdir)
		assert_string_equal(a->chdir, b->chdir);
	else
		assert_null(b->chdir);
	assert_same_strvec(&a->argv, &b->argv);
	assert_same_strvec(&a->env, &b->env);
	assert_same_strvec(&a->torchrun_opts, &b->torchrun_opts);
}

/* ---- the job spec ---- */

static void spec_round_trip(void **state)
{
	struct launch_spec s, back;
	struct strbuf line = STRBUF_INIT, err = STRBUF_INIT;

	(void)state;
	full_spec(&s);
	launch_spec_to_json(&s, &line);
	/* One line of printable ASCII: a line protocol's message, whatever the bytes. */
	for (size_t i = 0; i < line.len; i++)
		if ((unsigned char)line.buf[i] < 0x20 || (unsigned char)line.buf[i] >= 0x7f)
			fail_msg("byte 0x%02x at %zu of the spec line", (unsigned char)line.buf[i],
				 i);
	if (launch_spec_from_json(line.buf, line.len, &back, &err) < 0)
		fail_msg("the spec does not parse back: %s", err.buf);
	assert_same_spec(&s, &back);
	launch_spec_release(&back);

	/* No master address, no directory: they stay unset. */
	free(s.master_addr);
	s.master_addr = NULL;
	free(s.chdir);
	s.chdir = NULL;
	s.torchrun = false;
	s.use_env = true;
	s.all_local = false;
	s.kill_stale = false;
	s.port = 0;
	strbuf_reset(&line);
	launch_spec_to_json(&s, &line);
	assert_int_equal(launch_spec_from_json(line.buf, line.len, &back, &err), 0);
	assert_same_spec(&s, &back);
	launch_spec_release(&back);

	launch_spec_release(&s);
	assert_null(s.job_id);
	assert_int_equal(s.argv.nr, 0);
	strbuf_release(&line);
	strbuf_release(&err);
}

/* Every single byte as an argument of its own survives, alone and between others. */
static void spec_every_byte(void **state)
{
	struct strbuf line = STRBUF_INIT, err = STRBUF_INIT;

	(void)state;
	for (int c = 1; c < 256; c++) {
		struct launch_spec s, back;
		char one[2] = { (char)c, 0 };
		char *mixed = xasprintf("a%cb%c%c", c, c, c);

		launch_spec_init(&s);
		s.job_id = xstrdup("00000000000000ff");
		s.nnodes = s.nproc = s.world_size = 1;
		strvec_push(&s.argv, one);
		strvec_push(&s.argv, mixed);
		strvec_pushf(&s.env, "V=%s", mixed);
		strbuf_reset(&line);
		launch_spec_to_json(&s, &line);
		assert_null(memchr(line.buf, '\n', line.len));
		if (launch_spec_from_json(line.buf, line.len, &back, &err) < 0)
			fail_msg("byte 0x%02x: %s", c, err.buf);
		assert_same_spec(&s, &back);
		launch_spec_release(&back);
		launch_spec_release(&s);
		free(mixed);
	}
	strbuf_release(&line);
	strbuf_release(&err);
}

/* A valid spec as a JSON object, to be spoilt by the caller. */
static json_t *valid_spec_json(void)
{
	struct launch_spec s;
	struct strbuf line = STRBUF_INIT;
	json_error_t jerr;
	json_t *j;

	full_spec(&s);
	launch_spec_to_json(&s, &line);
	j = json_loadb(line.buf, line.len, 0, &jerr);
	assert_non_null(j);
	launch_spec_release(&s);
	strbuf_release(&line);
	return j;
}

/* The spec j must be refused: -EINVAL, a message, and nothing left in out. */
static void assert_refused(json_t *j, const char *what)
{
	char *text = json_dumps(j, JSON_COMPACT);
	struct strbuf err = STRBUF_INIT;
	struct launch_spec s;
	int r;

	assert_non_null(text);
	r = launch_spec_from_json(text, strlen(text), &s, &err);
	if (r != -EINVAL)
		fail_msg("%s: accepted (%d): %s", what, r, text);
	if (!err.len)
		fail_msg("%s: refused without a message", what);
	assert_null(s.job_id);
	assert_int_equal(s.argv.nr, 0);
	assert_int_equal(s.env.nr, 0);
	free(text);
	strbuf_release(&err);
	json_decref(j);
}

static void refuse_set(const char *key, json_t *value, const char *what)
{
	json_t *j = valid_spec_json();

	json_object_set_new(j, key, value);
	assert_refused(j, what);
}

static void refuse_without(const char *key)
{
	json_t *j = valid_spec_json();

	json_object_del(j, key);
	assert_refused(j, key);
}

static void refuse_argv_entry(const char *entry, const char *what)
{
	json_t *j = valid_spec_json();

	json_array_append_new(json_object_get(j, "argv"), json_string(entry));
	assert_refused(j, what);
}

static void spec_malformed(void **state)
{
	static const char *const keys[] = {
		"job_id",     "node_rank", "nnodes",  "nproc",	   "rank_base",
		"world_size", "torchrun",  "use_env", "all_local", "kill_stale",
		"port",	      "grace_ms",  "argv",    "env",	   NULL,
	};
	static const char *const texts[] = {
		"",   "not json",	    "{",  "[]", "\"spec\"", "42", "null",
		"{}", "{\"job_id\":\"0\"}", NULL,
	};
	struct strbuf err = STRBUF_INIT;
	struct launch_spec s;
	json_t *j;

	(void)state;
	for (size_t i = 0; texts[i]; i++) {
		strbuf_reset(&err);
		if (launch_spec_from_json(texts[i], strlen(texts[i]), &s, &err) != -EINVAL)
			fail_msg("'%s' was accepted", texts[i]);
		assert_true(err.len > 0);
	}
	/* Whatever is missing. */
	for (size_t i = 0; keys[i]; i++)
		refuse_without(keys[i]);

	/* Inconsistent numbers. */
	refuse_set("node_rank", json_integer(3), "node_rank == nnodes");
	refuse_set("node_rank", json_integer(4), "node_rank > nnodes");
	refuse_set("nnodes", json_integer(0), "no nodes");
	refuse_set("nproc", json_integer(0), "no ranks");
	refuse_set("rank_base", json_integer(9), "rank_base + nproc > world_size");
	refuse_set("world_size", json_integer(11), "world_size < rank_base + nproc");
	refuse_set("rank_base", json_integer(4294967295LL), "rank_base + nproc wraps");
	refuse_set("port", json_integer(65536), "port 65536");
	refuse_set("node_rank", json_integer(-1), "a negative node_rank");
	refuse_set("nproc", json_integer(4294967296LL), "nproc beyond 32 bits");
	refuse_set("argv", json_array(), "an empty command");

	/* Wrong types. */
	refuse_set("job_id", json_integer(1), "job_id a number");
	refuse_set("nproc", json_string("4"), "nproc a string");
	refuse_set("nproc", json_real(4.0), "nproc a real");
	refuse_set("torchrun", json_integer(1), "torchrun a number");
	refuse_set("use_env", json_null(), "use_env null");
	refuse_set("argv", json_string("prog"), "argv a string");
	refuse_set("env", json_object(), "env an object");
	refuse_set("master_addr", json_integer(1), "master_addr a number");
	refuse_set("chdir", json_true(), "chdir a boolean");
	refuse_set("ping_ms", json_string("5000"), "ping_ms a string");
	refuse_set("ping_ms", json_integer(-1), "a negative ping_ms");
	/* A new job id is 16 lowercase hex digits, as the spec takes it. */
	{
		char *id = NULL;

		assert_int_equal(launch_job_id_new(&id), 0);
		assert_int_equal(strlen(id), 16);
		assert_int_equal(strspn(id, "0123456789abcdef"), 16);
		free(id);
	}
	/* An older launcher's spec has no ping_ms: taken, without pings. */
	{
		struct launch_spec old;
		char *text;

		j = valid_spec_json();
		json_object_del(j, "ping_ms");
		text = json_dumps(j, JSON_COMPACT);
		assert_int_equal(launch_spec_from_json(text, strlen(text), &old, &err), 0);
		assert_int_equal(old.ping_ms, 0);
		launch_spec_release(&old);
		free(text);
		json_decref(j);
	}
	j = valid_spec_json();
	json_array_append_new(json_object_get(j, "argv"), json_integer(1));
	assert_refused(j, "an argument that is a number");
	j = valid_spec_json();
	json_array_append_new(json_object_get(j, "env"), json_null());
	assert_refused(j, "a variable that is null");

	/* Bad percent escapes, wherever bytes travel. */
	refuse_argv_entry("%4", "a cut escape");
	refuse_argv_entry("abc%", "a lone % at the end");
	refuse_argv_entry("%zz", "an escape that is not hex");
	refuse_argv_entry("%4g", "a half-hex escape");
	refuse_argv_entry("%00", "an escaped NUL");
	refuse_argv_entry("a%00b", "an escaped NUL inside");
	refuse_set("chdir", json_string("/tmp/%0"), "a cut escape in chdir");
	refuse_set("master_addr", json_string("%00"), "an escaped NUL in master_addr");

	/* An environment entry without '='. */
	j = valid_spec_json();
	json_array_append_new(json_object_get(j, "env"), json_string("NOEQUALS"));
	assert_refused(j, "an env entry without '='");

	strbuf_release(&err);
}

/* ---- variables ---- */

static void reserved_vars(void **state)
{
	(void)state;
	for (size_t i = 0; launch_reserved_vars[i]; i++)
		assert_true(launch_var_reserved(launch_reserved_vars[i]));
	assert_true(launch_var_reserved("RANK"));
	assert_true(launch_var_reserved("MASTER_PORT"));
	assert_true(launch_var_reserved(LAUNCH_JOB_VAR));
	assert_true(launch_var_reserved("ROLE_NAME"));
	assert_true(launch_var_reserved("GROUP_WORLD_SIZE"));
	assert_true(launch_var_reserved("TORCHELASTIC_RUN_ID"));
	/* The caller's to choose; the launch only fills it in. */
	assert_false(launch_var_reserved("OMP_NUM_THREADS"));
	assert_false(launch_var_reserved("PATH"));
	assert_false(launch_var_reserved("rank"));
	assert_false(launch_var_reserved("RANKS"));
	assert_false(launch_var_reserved("RAN"));
	assert_false(launch_var_reserved(""));
	assert_false(launch_var_reserved("PYTHONUNBUFFERED"));
}

/*
 * The node mark is set by sparkctl launch itself, and teardown depends on
 * it: "--env and -x may not set them", like the job id.
 */
static void reserved_job_node_var(void **state)
{
	(void)state;
	assert_true(launch_var_reserved(LAUNCH_JOB_NODE_VAR));
}

static void env_list(void **state)
{
	static const char *const start[] = { "A=1", "B=2", "AB=3", "C=", NULL };
	struct strvec env = STRVEC_INIT;

	(void)state;
	push_all(&env, start);
	/* Replaced in place, not moved to the end. */
	env_list_set(&env, "B", "two");
	assert_strvec(&env, (const char *const[]){ "A=1", "B=two", "AB=3", "C=", NULL });
	/* A is not AB, nor AB A. */
	env_list_set(&env, "A", "one");
	env_list_put(&env, "AB=three");
	assert_strvec(&env, (const char *const[]){ "A=one", "B=two", "AB=three", "C=", NULL });
	/* New keys go at the end; values may hold '=' and be empty. */
	env_list_set(&env, "D", "x=y");
	env_list_put(&env, "E=");
	env_list_set(&env, "C", "");
	assert_strvec(&env, (const char *const[]){ "A=one", "B=two", "AB=three", "C=", "D=x=y",
						   "E=", NULL });
	env_list_put(&env, "D=last");
	assert_strvec(&env, (const char *const[]){ "A=one", "B=two", "AB=three", "C=", "D=last",
						   "E=", NULL });
	/* A prefix of a key is another key. */
	env_list_set(&env, "ABC", "4");
	assert_int_equal(env.nr, 7);
	assert_string_equal(env.v[6], "ABC=4");
	strvec_clear(&env);
}

static void unit_spec(struct launch_spec *s, bool torchrun)
{
	launch_spec_init(s);
	s->job_id = xstrdup("fedcba9876543210");
	s->node_rank = 1;
	s->nnodes = 2;
	s->nproc = 3;
	s->rank_base = 3;
	s->world_size = 6;
	s->torchrun = torchrun;
	strvec_push(&s->argv, "prog");
}

static void unit_env_precedence(void **state)
{
	static const char *const base[] = {
		"PATH=/usr/bin",    "A=base",	"B=base", "C=base", "RANK=99",
		"MASTER_ADDR=base", "NOEQUALS", "EMPTY=", NULL,
	};
	static const char *const node[] = { "B=node", "C=node", "N=node", NULL };
	static const char *const caller[] = { "C=caller", "X=caller", "WORLD_SIZE=77", NULL };
	struct strvec node_env = STRVEC_INIT, out = STRVEC_INIT;
	struct launch_spec s;

	(void)state;
	unit_spec(&s, false);
	push_all(&node_env, node);
	push_all(&s.env, caller);
	launch_unit_env(&s, (char *const *)base, &node_env, 2, "10.1.2.3", 29501, &out);

	/* base < node env < caller < the rank's own. */
	assert_string_equal(env_get(&out, "PATH"), "/usr/bin");
	assert_string_equal(env_get(&out, "A"), "base");
	assert_string_equal(env_get(&out, "B"), "node");
	assert_string_equal(env_get(&out, "C"), "caller");
	assert_string_equal(env_get(&out, "N"), "node");
	assert_string_equal(env_get(&out, "X"), "caller");
	assert_string_equal(env_get(&out, "EMPTY"), "");
	assert_string_equal(env_get(&out, "RANK"), "5");
	assert_string_equal(env_get(&out, "LOCAL_RANK"), "2");
	assert_string_equal(env_get(&out, "WORLD_SIZE"), "6");
	assert_string_equal(env_get(&out, "LOCAL_WORLD_SIZE"), "3");
	assert_string_equal(env_get(&out, "NODE_RANK"), "1");
	assert_string_equal(env_get(&out, "GROUP_RANK"), "1");
	/* torchrun's whole set: one role, no restarts, the job's id as the run's. */
	assert_string_equal(env_get(&out, "GROUP_WORLD_SIZE"), "2");
	assert_string_equal(env_get(&out, "ROLE_RANK"), "5");
	assert_string_equal(env_get(&out, "ROLE_NAME"), "default");
	assert_string_equal(env_get(&out, "ROLE_WORLD_SIZE"), "6");
	assert_string_equal(env_get(&out, "TORCHELASTIC_RESTART_COUNT"), "0");
	assert_string_equal(env_get(&out, "TORCHELASTIC_MAX_RESTARTS"), "0");
	assert_string_equal(env_get(&out, "TORCHELASTIC_RUN_ID"), "fedcba9876543210");
	assert_string_equal(env_get(&out, "TORCHELASTIC_USE_AGENT_STORE"), "False");
	assert_string_equal(env_get(&out, "OMP_NUM_THREADS"), "1");
	assert_string_equal(env_get(&out, "MASTER_ADDR"), "10.1.2.3");
	assert_string_equal(env_get(&out, "MASTER_PORT"), "29501");
	assert_string_equal(env_get(&out, LAUNCH_JOB_VAR), "fedcba9876543210");
	assert_string_equal(env_get(&out, LAUNCH_JOB_NODE_VAR), "1");
	assert_string_equal(env_get(&out, "PYTHONUNBUFFERED"), "1");
	/* Only "K=V" entries; the base's order is kept. */
	for (size_t i = 0; i < out.nr; i++)
		assert_non_null(strchr(out.v[i], '='));
	assert_string_equal(out.v[0], "PATH=/usr/bin");
	assert_string_equal(out.v[1], "A=base");
	assert_string_equal(out.v[2], "B=node");
	assert_null(out.v[out.nr]);

	strvec_clear(&out);
	strvec_clear(&node_env);
	launch_spec_release(&s);
}

/* PYTHONUNBUFFERED=1 only where nobody set it: not over the base's, the node's or the caller's. */
static void unit_env_pythonunbuffered(void **state)
{
	static const char *const with[] = { "PYTHONUNBUFFERED=0", NULL };
	static const char *const without[] = { "HOME=/root", NULL };
	struct strvec node_env = STRVEC_INIT, out = STRVEC_INIT;
	struct launch_spec s;

	(void)state;
	unit_spec(&s, false);
	launch_unit_env(&s, (char *const *)with, NULL, 0, "127.0.0.1", 1, &out);
	assert_string_equal(env_get(&out, "PYTHONUNBUFFERED"), "0");
	strvec_clear(&out);

	strvec_push(&node_env, "PYTHONUNBUFFERED=node");
	launch_unit_env(&s, (char *const *)without, &node_env, 0, "127.0.0.1", 1, &out);
	assert_string_equal(env_get(&out, "PYTHONUNBUFFERED"), "node");
	strvec_clear(&out);

	strvec_push(&s.env, "PYTHONUNBUFFERED=");
	launch_unit_env(&s, (char *const *)without, NULL, 0, "127.0.0.1", 1, &out);
	assert_string_equal(env_get(&out, "PYTHONUNBUFFERED"), "");
	strvec_clear(&out);

	/* No base at all. */
	launch_unit_env(&s, NULL, NULL, 0, "127.0.0.1", 1, &out);
	assert_string_equal(env_get(&out, "RANK"), "3");
	strvec_clear(&out);

	strvec_clear(&node_env);
	launch_spec_release(&s);
}

/* OMP_NUM_THREADS=1 as torchrun sets it: only for more than one rank, and never over a value. */
static void unit_env_omp_num_threads(void **state)
{
	static const char *const set[] = { "OMP_NUM_THREADS=8", NULL };
	struct strvec out = STRVEC_INIT;
	struct launch_spec s;

	(void)state;
	unit_spec(&s, false);
	launch_unit_env(&s, (char *const *)set, NULL, 0, "127.0.0.1", 1, &out);
	assert_string_equal(env_get(&out, "OMP_NUM_THREADS"), "8");
	strvec_clear(&out);
	strvec_push(&s.env, "OMP_NUM_THREADS=4");
	launch_unit_env(&s, NULL, NULL, 0, "127.0.0.1", 1, &out);
	assert_string_equal(env_get(&out, "OMP_NUM_THREADS"), "4");
	strvec_clear(&out);
	strvec_clear(&s.env);
	s.nproc = 1;
	launch_unit_env(&s, NULL, NULL, 0, "127.0.0.1", 1, &out);
	assert_null(env_get(&out, "OMP_NUM_THREADS"));
	assert_string_equal(env_get(&out, "LOCAL_WORLD_SIZE"), "1");
	strvec_clear(&out);
	launch_spec_release(&s);
}

/* With --torchrun the launch sets only the node's variables: torchrun sets the ranks'. */
static void unit_env_torchrun(void **state)
{
	static const char *const base[] = { "PATH=/usr/bin", NULL };
	struct strvec out = STRVEC_INIT;
	struct launch_spec s;

	(void)state;
	unit_spec(&s, true);
	launch_unit_env(&s, (char *const *)base, NULL, 0, "10.0.0.9", 29400, &out);
	assert_null(env_get(&out, "RANK"));
	assert_null(env_get(&out, "LOCAL_RANK"));
	assert_null(env_get(&out, "WORLD_SIZE"));
	assert_null(env_get(&out, "LOCAL_WORLD_SIZE"));
	assert_null(env_get(&out, "ROLE_NAME"));
	assert_null(env_get(&out, "TORCHELASTIC_RUN_ID"));
	assert_null(env_get(&out, "OMP_NUM_THREADS"));
	assert_string_equal(env_get(&out, "NODE_RANK"), "1");
	assert_string_equal(env_get(&out, "GROUP_RANK"), "1");
	assert_string_equal(env_get(&out, "MASTER_ADDR"), "10.0.0.9");
	assert_string_equal(env_get(&out, "MASTER_PORT"), "29400");
	assert_string_equal(env_get(&out, LAUNCH_JOB_VAR), "fedcba9876543210");
	assert_string_equal(env_get(&out, "PYTHONUNBUFFERED"), "1");
	strvec_clear(&out);
	launch_spec_release(&s);
}

static void torch_probe(void **state)
{
	struct torch_probe t = { 0 };

	(void)state;
	assert_int_equal(launch_torch_probe_parse("1.13.0a0+gitunknown 3 11\n", &t), 0);
	assert_int_equal(t.torch_major, 1);
	assert_int_equal(t.torch_minor, 13);
	assert_int_equal(t.python_major, 3);
	assert_int_equal(t.python_minor, 11);
	assert_true(launch_torch_needs_std_map(&t));
	/* Before Python 3.11 the default parses; from torch 2.0 it parses everywhere. */
	assert_int_equal(launch_torch_probe_parse("1.13.1 3 10", &t), 0);
	assert_false(launch_torch_needs_std_map(&t));
	assert_int_equal(launch_torch_probe_parse("2.0.0 3 11\n", &t), 0);
	assert_false(launch_torch_needs_std_map(&t));
	assert_int_equal(launch_torch_probe_parse("2.5.1+cu124 3 12\n", &t), 0);
	assert_int_equal(t.torch_minor, 5);
	assert_false(launch_torch_needs_std_map(&t));
	assert_int_equal(launch_torch_probe_parse("1.12.1.post2 4 0\n", &t), 0);
	assert_true(launch_torch_needs_std_map(&t));
	/* Anything else is no answer. */
	static const char *const bad[] = {
		"",
		"\n",
		"1.13.0 3",
		"1.13.0 3 11 x",
		"1 3 11",
		"x1.13 3 11",
		"1.13.0 3 11\nmore",
		"1.13.0  3 11",
		"1.13.0 3 11\n\n",
		"99999999999.1 3 11",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(launch_torch_probe_parse(bad[i], &t), -EINVAL);
}

static void unit_argv(void **state)
{
	struct strvec out = STRVEC_INIT;
	struct launch_spec s;

	(void)state;
	unit_spec(&s, false);
	strvec_push(&s.argv, "--flag");
	strvec_push(&s.argv, "");
	launch_unit_argv(&s, "10.0.0.1", 29500, &out);
	assert_strvec(&out, (const char *const[]){ "prog", "--flag", "", NULL });
	strvec_clear(&out);

	/* torchrun: not a Python script, so --no_python. */
	s.torchrun = true;
	launch_unit_argv(&s, "10.0.0.1", 29500, &out);
	assert_strvec(&out, (const char *const[]){ "torchrun", "--nnodes=2", "--node_rank=1",
						   "--nproc_per_node=3", "--master_addr=10.0.0.1",
						   "--master_port=29500", "--no_python", "prog",
						   "--flag", "", NULL });
	strvec_clear(&out);

	/* The caller's torchrun options come after sparkctl's, before the command. */
	strvec_push(&s.torchrun_opts, "--max_restarts=0");
	strvec_push(&s.torchrun_opts, "--rdzv_backend=c10d");
	launch_unit_argv(&s, "10.0.0.1", 29500, &out);
	assert_strvec(&out, (const char *const[]){ "torchrun", "--nnodes=2", "--node_rank=1",
						   "--nproc_per_node=3", "--master_addr=10.0.0.1",
						   "--master_port=29500", "--max_restarts=0",
						   "--rdzv_backend=c10d", "--no_python", "prog",
						   "--flag", "", NULL });
	strvec_clear(&out);
	/* The agent found a torch whose default --redirects/--tee fail: a map for rank 9, before
	 * the caller's. */
	s.torchrun_std_map = true;
	launch_unit_argv(&s, "10.0.0.1", 29500, &out);
	assert_strvec(&out,
		      (const char *const[]){ "torchrun", "--nnodes=2", "--node_rank=1",
					     "--nproc_per_node=3", "--master_addr=10.0.0.1",
					     "--master_port=29500", "--redirects=9:1", "--tee=9:1",
					     "--max_restarts=0", "--rdzv_backend=c10d",
					     "--no_python", "prog", "--flag", "", NULL });
	strvec_clear(&out);
	s.torchrun_std_map = false;
	/* Not without --torchrun. */
	s.torchrun = false;
	launch_unit_argv(&s, "10.0.0.1", 29500, &out);
	assert_strvec(&out, (const char *const[]){ "prog", "--flag", "", NULL });
	strvec_clear(&out);
	strvec_clear(&s.torchrun_opts);
	s.torchrun = true;

	/* A script: torchrun runs it with Python itself. */
	strvec_clear(&s.argv);
	strvec_push(&s.argv, "/work/train.py");
	strvec_push(&s.argv, "--epochs=3");
	launch_unit_argv(&s, "127.0.0.1", 1234, &out);
	assert_strvec(&out, (const char *const[]){ "torchrun", "--nnodes=2", "--node_rank=1",
						   "--nproc_per_node=3", "--master_addr=127.0.0.1",
						   "--master_port=1234", "/work/train.py",
						   "--epochs=3", NULL });
	strvec_clear(&out);

	/* Only the command counts, not an argument that ends in .py; "py" is no script. */
	strvec_clear(&s.argv);
	strvec_push(&s.argv, "python3");
	strvec_push(&s.argv, "train.py");
	launch_unit_argv(&s, "127.0.0.1", 1234, &out);
	assert_string_equal(out.v[6], "--no_python");
	assert_string_equal(out.v[7], "python3");
	strvec_clear(&out);
	strvec_clear(&s.argv);
	strvec_push(&s.argv, "py");
	launch_unit_argv(&s, "127.0.0.1", 1234, &out);
	assert_string_equal(out.v[6], "--no_python");
	strvec_clear(&out);

	launch_spec_release(&s);
}

/* ---- exit statuses ---- */

/* The wait() status of a real child that exits with how (>= 0) or dies of signal -how. */
static int exit_of(int how)
{
	int wstatus;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (how >= 0)
			_exit(how);
		signal(-how, SIG_DFL);
		raise(-how);
		_exit(100);
	}
	assert_int_equal(waitpid(pid, &wstatus, 0), pid);
	return wstatus;
}

/* The shell's form of a wait status, as the process layer gives it. */
static int shell_status(int wstatus, bool *signaled)
{
	struct child c;
	int status;

	child_init(&c);
	child_reaped(&c, wstatus);
	status = child_status(&c, signaled);
	child_release(&c);
	return status;
}

static void wait_status(void **state)
{
	bool signaled = true;

	(void)state;
	assert_int_equal(shell_status(exit_of(0), &signaled), 0);
	assert_false(signaled);
	assert_int_equal(shell_status(exit_of(3), &signaled), 3);
	assert_false(signaled);
	/* A program may exit 130 itself: that is not a signal. */
	assert_int_equal(shell_status(exit_of(130), &signaled), 130);
	assert_false(signaled);
	assert_int_equal(shell_status(exit_of(255), &signaled), 255);
	assert_false(signaled);
	assert_int_equal(shell_status(exit_of(-SIGKILL), &signaled), 137);
	assert_true(signaled);
	assert_int_equal(shell_status(exit_of(-SIGTERM), &signaled), 143);
	assert_true(signaled);
	assert_int_equal(shell_status(exit_of(-SIGINT), &signaled), 130);
	assert_true(signaled);
	/* A core dump changes nothing. */
	assert_int_equal(shell_status(SIGABRT | 0x80, &signaled), 134);
	assert_true(signaled);
}

static void describe_status(void **state)
{
	static const struct {
		int status;
		bool signaled;
		const char *text;
	} cases[] = {
		{ -1, false, "not started" },
		{ -1, true, "not started" },
		{ 0, false, "exit 0" },
		{ 3, false, "exit 3" },
		{ 130, false, "exit 130" },
		{ 255, false, "exit 255" },
		{ 137, true, "signal 9 (SIGKILL)" },
		{ 143, true, "signal 15 (SIGTERM)" },
		{ 130, true, "signal 2 (SIGINT)" },
		{ 139, true, "signal 11 (SIGSEGV)" },
		{ 134, true, "signal 6 (SIGABRT)" },
	};
	struct strbuf b = STRBUF_INIT;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		strbuf_reset(&b);
		launch_describe_status(cases[i].status, cases[i].signaled, &b);
		assert_string_equal(b.buf, cases[i].text);
	}
	strbuf_release(&b);
}

/* ---- /proc text ---- */

static void stat_parse(void **state)
{
	struct proc_entry e;

	(void)state;
	memset(&e, 0, sizeof(e));
	assert_int_equal(
		proc_stat_parse("1234 (bash) S 1000 1234 1234 34816 5678 4194304 0 0\n", &e), 0);
	assert_int_equal(e.pid, 1234);
	assert_int_equal(e.state, 'S');
	assert_int_equal(e.ppid, 1000);
	assert_int_equal(e.pgid, 1234);
	assert_int_equal(e.sid, 1234);

	/* The comm is whatever lies between the first '(' and the last ')'. */
	assert_int_equal(proc_stat_parse("1 (a) b) S 0 1 1 0 -1 4194560", &e), 0);
	assert_int_equal(e.pid, 1);
	assert_int_equal(e.state, 'S');
	assert_int_equal(e.ppid, 0);
	assert_int_equal(e.pgid, 1);
	assert_int_equal(e.sid, 1);
	assert_int_equal(proc_stat_parse("77 (with  spaces) R 5 6 7 0 -1", &e), 0);
	assert_int_equal(e.pid, 77);
	assert_int_equal(e.state, 'R');
	assert_int_equal(e.ppid, 5);
	assert_int_equal(e.pgid, 6);
	assert_int_equal(e.sid, 7);
	/* A comm that looks like the fields that follow it. */
	assert_int_equal(proc_stat_parse("42 (x) S 99 99 99 ) Z 1 42 43 0 -1", &e), 0);
	assert_int_equal(e.pid, 42);
	assert_int_equal(e.state, 'Z');
	assert_int_equal(e.ppid, 1);
	assert_int_equal(e.pgid, 42);
	assert_int_equal(e.sid, 43);
	assert_int_equal(proc_stat_parse("5 ((sd-pam)) S 4 5 5 0", &e), 0);
	assert_int_equal(e.ppid, 4);
	assert_int_equal(proc_stat_parse("6 () I 2 0 0 0", &e), 0);
	assert_int_equal(e.state, 'I');
	assert_int_equal(e.pgid, 0);
	assert_int_equal(e.sid, 0);
	assert_int_equal(proc_stat_parse("2147483647 (max) S 1 1 1 0", &e), 0);
	assert_int_equal(e.pid, 2147483647);
	assert_int_equal(e.start_ticks, 0); /* cut short: unknown */
	/* Field 22, starttime, after negative tty fields and a comm with spaces. */
	assert_int_equal(proc_stat_parse("9 (a b) S 1 9 9 0 -1 4194560 10 0 0 0 3 4 0 0 20 0 1 0 "
					 "123456 2000 300 18446744073709551615",
					 &e),
			 0);
	assert_int_equal(e.start_ticks, 123456);
}

static void stat_parse_malformed(void **state)
{
	static const char *const bad[] = {
		"",
		"garbage",
		"12 (x",
		"12 x) S 1 2 3 4",
		"(x) S 1 2 3 4",
		" (x) S 1 2 3 4",
		"abc (x) S 1 2 3 4",
		"12(x) S 1 2 3 4",
		"-1 (x) S 1 2 3 4",
		"2147483648 (x) S 1 2 3 4",
		"99999999999999999999 (x) S 1 2 3 4",
		"12 (x)",
		"12 (x) ",
		"12 (x) S",
		"12 (x) S ",
		"12 (x) S 1",
		"12 (x) S 1 2",
		"12 (x)S 1 2 3 4",
		"12 (x) SS 1 2 3 4",
		"12 (x) S x 2 3 4",
		"12 (x) S 1 y 3 4",
		"12 (x) S 1 2 z 4",
		"12 (x) S -1 2 3 4",
		"12 (x) S 1  2 3 4",
		"12 (x) S 1 2 3000000000 4",
		") 12 (x S 1 2 3 4",
		NULL,
	};
	struct proc_entry e;

	(void)state;
	for (size_t i = 0; bad[i]; i++)
		if (proc_stat_parse(bad[i], &e) != -EINVAL)
			fail_msg("'%s' was accepted", bad[i]);
}

static const char tcp_header[] = "  sl  local_address rem_address   st tx_queue rx_queue tr "
				 "tm->when retrnsmt   uid  timeout "
				 "inode                                                     \n";

static void tcp_table(void **state)
{
	struct strbuf t = STRBUF_INIT;
	unsigned long inode = 0;

	(void)state;
	strbuf_addstr(&t, tcp_header);
	/* 8080 (0x1F90) in TIME_WAIT first, then listening; 8081 only connected. */
	strbuf_addstr(&t, "   0: 0100007F:1F90 0100007F:C350 06 00000000:00000000 03:00000F9B "
			  "00000000     0        0 0 3 0000000000000000\n");
	strbuf_addstr(&t, "   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 "
			  "00000000  1000        0 12345 1 0000000000000000 100 0 0 10 0\n");
	strbuf_addstr(&t, "   2: 0100007F:1F91 0100007F:9C40 01 00000000:00000000 00:00000000 "
			  "00000000  1000        0 22222 1 0000000000000000 20 4 30 10 -1\n");
	/* 40000 (0x9C40) as the other end of that connection. */
	strbuf_addstr(&t, "   3: 0100007F:9C40 0100007F:1F91 01 00000000:00000000 00:00000000 "
			  "00000000  1000        0 33333 1 0000000000000000 20 4 30 10 -1\n");
	/* A listener on 0x8080 = 32896 (not 8080) and on 65535, any address. */
	strbuf_addstr(&t, "   4: 0100007F:8080 00000000:0000 0A 00000000:00000000 00:00000000 "
			  "00000000     0        0 44444 1 0000000000000000 100 0 0 10 0\n");
	strbuf_addstr(&t, "   5: 00000000:FFFF 00000000:0000 0A 00000000:00000000 00:00000000 "
			  "00000000     0        0 55555 1 0000000000000000 100 0 0 10 0\n");

	assert_int_equal(tcp_table_find_listener(t.buf, 8080, &inode), 1);
	assert_int_equal(inode, 12345);
	assert_int_equal(tcp_table_find_listener(t.buf, 32896, &inode), 1);
	assert_int_equal(inode, 44444);
	assert_int_equal(tcp_table_find_listener(t.buf, 65535, &inode), 1);
	assert_int_equal(inode, 55555);
	inode = 7;
	assert_int_equal(tcp_table_find_listener(t.buf, 8081, &inode), 0);
	assert_int_equal(tcp_table_find_listener(t.buf, 40000, &inode), 0);
	assert_int_equal(tcp_table_find_listener(t.buf, 50000, &inode), 0);
	assert_int_equal(tcp_table_find_listener(t.buf, 1, &inode), 0);
	assert_int_equal(inode, 7);

	/* Header only: nothing listens.  Not a table: an error. */
	assert_int_equal(tcp_table_find_listener(tcp_header, 8080, &inode), 0);
	assert_int_equal(tcp_table_find_listener("", 8080, &inode), -EINVAL);
	assert_int_equal(tcp_table_find_listener("hello\nworld\n", 8080, &inode), -EINVAL);
	assert_int_equal(tcp_table_find_listener("local_address", 8080, &inode), -EINVAL);
	strbuf_release(&t);
}

static void tcp6_table(void **state)
{
	struct strbuf t = STRBUF_INIT;
	unsigned long inode = 0;

	(void)state;
	strbuf_addstr(&t,
		      "  sl  local_address                         remote_address                "
		      "        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n");
	strbuf_addstr(&t, "   0: 00000000000000000000000000000000:1F90 "
			  "00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 "
			  "00000000  1000        0 6001 1 0000000000000000 100 0 0 10 0\n");
	strbuf_addstr(&t, "   1: 00000000000000000000000001000000:0016 "
			  "00000000000000000000000001000000:D431 01 00000000:00000000 02:0008C0E1 "
			  "00000000     0        0 6002 4 0000000000000000 20 4 31 10 -1\n");
	strbuf_addstr(&t, "   2: 0000000000000000FFFF00000100007F:0050 "
			  "00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 "
			  "00000000     0        0 6003 1 0000000000000000 100 0 0 10 0\n");
	assert_int_equal(tcp_table_find_listener(t.buf, 8080, &inode), 1);
	assert_int_equal(inode, 6001);
	assert_int_equal(tcp_table_find_listener(t.buf, 80, &inode), 1);
	assert_int_equal(inode, 6003);
	assert_int_equal(tcp_table_find_listener(t.buf, 22, &inode), 0);
	assert_int_equal(tcp_table_find_listener(t.buf, 54321, &inode), 0);
	strbuf_release(&t);
}

/* ---- selections from a process table ---- */

static const struct proc_entry table_entries[] = {
	/* pid ppid pgid sid state start_ticks */
	{ 1, 0, 1, 1, 'S', 5 },		   /* init */
	{ 100, 1, 100, 100, 'S', 1000 },   /* the agent */
	{ 101, 100, 101, 101, 'S', 1001 }, /* a rank, leading its session */
	{ 102, 101, 101, 101, 'R', 1002 }, /* its child */
	{ 103, 102, 103, 103, 'Z', 1003 }, /* a dead grandchild */
	{ 104, 103, 104, 104, 'S', 1004 }, /* below the dead one */
	{ 105, 100, 105, 105, 'Z', 1005 }, /* a dead rank */
	{ 106, 105, 106, 106, 'S', 1006 }, /* its child */
	{ 107, 1, 101, 101, 'S', 1007 },   /* in the rank's session, orphaned to init */
	{ 108, 1, 108, 101, 'Z', 1008 },   /* in the rank's session, dead */
	{ 200, 1, 200, 200, 'S', 500 },	   /* unrelated */
	{ 201, 200, 200, 200, 'S', 0 },	   /* unrelated */
};

static void assert_pids(const struct proc_list *l, const pid_t *want, size_t n)
{
	if (l->nr != n) {
		for (size_t i = 0; i < l->nr; i++)
			print_message("  got %d\n", (int)l->pids[i]);
		fail_msg("%zu processes, expected %zu", l->nr, n);
	}
	for (size_t i = 0; i < n; i++)
		if (!proc_list_has(l, want[i]))
			fail_msg("%d is missing", (int)want[i]);
}

/* Only processes as young as the job (or of unknown age) are candidates for its marks. */
static void started_since(void **state)
{
	const struct proc_table t = { (struct proc_entry *)table_entries,
				      ARRAY_SIZE(table_entries) };
	struct proc_table young;

	(void)state;
	procs_started_since(&t, 1000, &young);
	assert_int_equal(young.nr, 10);
	for (size_t i = 0; i < young.nr; i++)
		assert_true(young.v[i].start_ticks >= 1000 || young.v[i].start_ticks == 0);
	proc_table_release(&young);
	procs_started_since(&t, 0, &young);
	assert_int_equal(young.nr, ARRAY_SIZE(table_entries));
	proc_table_release(&young);

	/* A real process has its start; this one started after init. */
	struct proc_table live;
	uint64_t self = 0, init = 0;
	assert_int_equal(proc_table_scan(&live), 0);
	for (size_t i = 0; i < live.nr; i++) {
		if (live.v[i].pid == getpid())
			self = live.v[i].start_ticks;
		if (live.v[i].pid == 1)
			init = live.v[i].start_ticks;
	}
	proc_table_release(&live);
	assert_true(self > 0);
	assert_true(self >= init);
}

static void descendants(void **state)
{
	const struct proc_table t = { (struct proc_entry *)table_entries,
				      ARRAY_SIZE(table_entries) };
	struct proc_list l = { 0 };

	(void)state;
	/* Not the root itself, not the zombies, but whatever lives below them. */
	procs_descendants(&t, 100, &l);
	assert_pids(&l, (const pid_t[]){ 101, 102, 104, 106 }, 4);
	proc_list_release(&l);

	procs_descendants(&t, 101, &l);
	assert_pids(&l, (const pid_t[]){ 102, 104 }, 2);
	proc_list_release(&l);

	procs_descendants(&t, 104, &l);
	assert_int_equal(l.nr, 0);
	procs_descendants(&t, 999, &l);
	assert_int_equal(l.nr, 0);

	/* Appended to what is there, without duplicates. */
	proc_list_add(&l, 102);
	proc_list_add(&l, 500);
	procs_descendants(&t, 101, &l);
	assert_pids(&l, (const pid_t[]){ 102, 104, 500 }, 3);
	proc_list_release(&l);
	assert_int_equal(l.nr, 0);
	assert_null(l.pids);
}

static void session(void **state)
{
	const struct proc_table t = { (struct proc_entry *)table_entries,
				      ARRAY_SIZE(table_entries) };
	struct proc_list l = { 0 };

	(void)state;
	procs_in_session(&t, 101, &l);
	assert_pids(&l, (const pid_t[]){ 101, 102, 107 }, 3);
	/* Again: nothing twice. */
	procs_in_session(&t, 101, &l);
	assert_int_equal(l.nr, 3);
	proc_list_release(&l);
	procs_in_session(&t, 103, &l);
	assert_int_equal(l.nr, 0);
	procs_in_session(&t, 999, &l);
	assert_int_equal(l.nr, 0);
	proc_list_release(&l);
}

static void proc_list_basics(void **state)
{
	struct proc_list l = { 0 };

	(void)state;
	assert_false(proc_list_has(&l, 1));
	proc_list_add(&l, 5);
	proc_list_add(&l, 5);
	proc_list_add(&l, 6);
	assert_int_equal(l.nr, 2);
	assert_true(proc_list_has(&l, 5));
	assert_true(proc_list_has(&l, 6));
	assert_false(proc_list_has(&l, 7));
	proc_list_release(&l);
	assert_int_equal(l.nr, 0);
}

/* ---- real processes ---- */

/* A child that sleeps with exactly this environment. */
static pid_t sleeper(const char *const *envp)
{
	int ready[2];
	char c;
	pid_t pid;

	assert_int_equal(pipe(ready), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		const char *const argv[] = { "sleep", "30", NULL };
		close(ready[0]);
		fcntl(ready[1], F_SETFD, FD_CLOEXEC);
		execve("/bin/sleep", (char *const *)argv, (char *const *)envp);
		_exit(127);
	}
	close(ready[1]);
	/* The pipe closes at the exec: from then on /proc shows the new program. */
	assert_int_equal(read(ready[0], &c, 1), 0);
	close(ready[0]);
	return pid;
}

static void reap(pid_t pid)
{
	int wstatus;
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &wstatus, 0), pid);
}

static void live_environment(void **state)
{
	const char *const envp[] = { "SPARKCTL_T_JOB=0123456789abcdef", "SPARKCTL_T_NODE=1",
				     "SPARKCTL_T_EMPTY=", NULL };
	struct proc_list l = { 0 };
	struct proc_table t;
	pid_t pid;
	char *v;

	(void)state;
	pid = sleeper(envp);
	v = proc_env_value(pid, "SPARKCTL_T_JOB");
	assert_non_null(v);
	assert_string_equal(v, "0123456789abcdef");
	free(v);
	assert_null(proc_env_value(pid, "SPARKCTL_T_JO"));
	assert_null(proc_env_value(pid, "SPARKCTL_T"));
	assert_null(proc_env_value(pid, "PATH"));
	v = proc_cmdline(pid, 100);
	assert_non_null(v);
	assert_string_equal(v, "sleep 30");
	free(v);
	v = proc_cmdline(pid, 3);
	assert_string_equal(v, "sle");
	free(v);

	assert_int_equal(proc_table_scan(&t), 0);
	assert_true(t.nr > 1);
	procs_descendants(&t, getpid(), &l);
	assert_true(proc_list_has(&l, pid));
	assert_false(proc_list_has(&l, getpid()));
	proc_list_release(&l);
	/* Every entry must match exactly. */
	procs_with_env(&t, (const char *const[]){ "SPARKCTL_T_JOB=0123456789abcdef", NULL }, &l);
	assert_pids(&l, (const pid_t[]){ pid }, 1);
	proc_list_release(&l);
	procs_with_env(&t,
		       (const char *const[]){ "SPARKCTL_T_JOB=0123456789abcdef",
					      "SPARKCTL_T_NODE=1", NULL },
		       &l);
	assert_pids(&l, (const pid_t[]){ pid }, 1);
	proc_list_release(&l);
	procs_with_env(&t,
		       (const char *const[]){ "SPARKCTL_T_JOB=0123456789abcdef",
					      "SPARKCTL_T_NODE=2", NULL },
		       &l);
	assert_int_equal(l.nr, 0);
	procs_with_env(&t, (const char *const[]){ "SPARKCTL_T_JOB=0123456789abcde", NULL }, &l);
	assert_int_equal(l.nr, 0);
	procs_with_env(&t, (const char *const[]){ "SPARKCTL_T_JOB=0123456789abcdef0", NULL }, &l);
	assert_int_equal(l.nr, 0);
	procs_with_env(&t, (const char *const[]){ "SPARKCTL_T_EMPTY=", NULL }, &l);
	assert_pids(&l, (const pid_t[]){ pid }, 1);
	proc_list_release(&l);
	proc_table_release(&t);
	reap(pid);
}

static void signal_list(void **state)
{
	const char *const envp[] = { NULL };
	struct proc_list l = { 0 };
	pid_t pid;

	(void)state;
	/* Never the caller; never 0 or -1 (a process group, everything). */
	proc_list_add(&l, getpid());
	proc_list_add(&l, 0);
	proc_list_add(&l, -1);
	assert_int_equal(procs_signal(&l, 0), 0);
	pid = sleeper(envp);
	proc_list_add(&l, pid);
	assert_int_equal(procs_signal(&l, 0), 1);
	assert_int_equal(procs_signal(&l, SIGKILL), 1);
	reap(pid);
	/* Gone already: not an error, not counted. */
	assert_int_equal(procs_signal(&l, 0), 0);
	proc_list_release(&l);
}

static void port_owner(void **state)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	pid_t owner = -1;
	unsigned port;
	int fd;

	(void)state;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	port = ntohs(sin.sin_port);
	/* Bound but not listening: free as far as a listener goes. */
	assert_int_equal(tcp_port_owner(port, &owner), 0);
	assert_int_equal(listen(fd, 1), 0);
	assert_int_equal(tcp_port_owner(port, &owner), 1);
	assert_int_equal(owner, getpid());
	close(fd);
	assert_int_equal(tcp_port_owner(port, &owner), 0);
}

/* ---- under srun ---------------------------------------------------------- */

static void srun_labels(void **state)
{
	unsigned task = 99;
	size_t skip = 0;

	(void)state;
	assert_true(srun_label_parse("0: O 0 hi", 9, &task, &skip));
	assert_int_equal(task, 0);
	assert_int_equal(skip, 3);
	/* Right-aligned when there are ten tasks or more. */
	assert_true(srun_label_parse(" 7: X", 5, &task, &skip));
	assert_int_equal(task, 7);
	assert_int_equal(skip, 4);
	assert_true(srun_label_parse("12: ", 4, &task, &skip));
	assert_int_equal(task, 12);
	assert_int_equal(skip, 4);
	/* An empty line of the task: the label without its space. */
	assert_true(srun_label_parse("3:", 2, &task, &skip));
	assert_int_equal(skip, 2);
	/* srun's own lines, and anything else. */
	assert_false(srun_label_parse("srun: error: x", 14, &task, &skip));
	assert_false(srun_label_parse(": x", 3, &task, &skip));
	assert_false(srun_label_parse("12 x", 4, &task, &skip));
	assert_false(srun_label_parse("   ", 3, &task, &skip));
	assert_false(srun_label_parse("99999999999: x", 14, &task, &skip));
}

/* Long lines split for srun's 1024-byte pieces come back whole, short ones as they were. */
static void srun_long_lines(void **state)
{
	struct strbuf buf = STRBUF_INIT, pending = STRBUF_INIT, whole = STRBUF_INIT;
	struct strvec got = STRVEC_INIT;
	size_t lens[] = { 0,
			  5,
			  SRUN_LINE_MAX - 1,
			  SRUN_LINE_MAX,
			  SRUN_LINE_MAX + 1,
			  3 * (SRUN_LINE_MAX - 1),
			  20000 };
	size_t start = 0;
	char *nl;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
		strbuf_addf(&buf, "O %zu ", i);
		for (size_t k = 0; k < lens[i]; k++)
			strbuf_addch(&buf, (char)('a' + (i + k) % 26));
		strbuf_addch(&buf, '\n');
	}
	strbuf_addstr(&buf, "O 9 unfinished");
	char *before = xstrdup(buf.buf);
	srun_split_long_lines(&buf);
	while ((nl = memchr(buf.buf + start, '\n', buf.len - start))) {
		size_t len = (size_t)(nl - buf.buf) - start;
		assert_true(len <= SRUN_LINE_MAX);
		if (srun_join_line(&pending, buf.buf + start, len, &whole))
			strvec_push(&got, whole.buf);
		start = (size_t)(nl - buf.buf) + 1;
	}
	/* The unfinished line stays as it was, for the next write. */
	assert_string_equal(buf.buf + start, "O 9 unfinished");
	assert_int_equal(got.nr, ARRAY_SIZE(lens));
	start = 0;
	for (size_t i = 0; i < got.nr; i++) {
		nl = strchr(before + start, '\n');
		assert_int_equal(strlen(got.v[i]), (size_t)(nl - before) - start);
		assert_memory_equal(got.v[i], before + start, strlen(got.v[i]));
		start = (size_t)(nl - before) + 1;
	}
	free(before);
	strvec_clear(&got);
	strbuf_release(&buf);
	strbuf_release(&pending);
	strbuf_release(&whole);
}

static void srun_refusals(void **state)
{
	(void)state;
	assert_int_equal(srun_refusal_kind("srun: error: Unable to create step for job 5: More "
					   "processors requested than permitted"),
			 -ERANGE);
	assert_int_equal(
		srun_refusal_kind("srun: error: Unable to create step for job 5: Requested node "
				  "configuration is not available"),
		-ERANGE);
	assert_int_equal(srun_refusal_kind("srun: error: Unable to contact slurm controller "
					   "(connect failure)"),
			 -EHOSTUNREACH);
	assert_int_equal(srun_refusal_kind(NULL), -EHOSTUNREACH);
}

static void srun_argv(void **state)
{
	struct launch_srun s = { .program = "/usr/bin/srun",
				 .nnodes = 2,
				 .nproc = 3,
				 .nodelist = "node1,node2",
				 .sparkctl = "/opt/sparkctl" };
	struct strvec v = STRVEC_INIT;
	struct strbuf all = STRBUF_INIT;

	(void)state;
	srun_step_argv(&s, false, &v);
	for (size_t i = 0; i < v.nr; i++)
		strbuf_addf(&all, "%s%s", i ? " " : "", v.v[i]);
	assert_string_equal(all.buf, "/usr/bin/srun --nodes=2 --ntasks=6 --ntasks-per-node=3 "
				     "--distribution=block --kill-on-bad-exit=1 --label "
				     "--input=all --export=ALL --mpi=none --nodelist=node1,node2 "
				     "-- /opt/sparkctl agent srun-task");
	strvec_clear(&v);
	strbuf_reset(&all);
	/* torchrun: one task per node; the whole allocation: no --nodelist. */
	s.nodelist = NULL;
	srun_step_argv(&s, true, &v);
	for (size_t i = 0; i < v.nr; i++)
		strbuf_addf(&all, "%s%s", i ? " " : "", v.v[i]);
	assert_non_null(strstr(all.buf, "--ntasks=2 --ntasks-per-node=1 "));
	assert_null(strstr(all.buf, "--nodelist"));
	strvec_clear(&v);
	strbuf_release(&all);
}

static void set_task(const char *procid, const char *localid, const char *nodeid,
		     const char *ntasks, const char *nnodes)
{
	setenv("SLURM_PROCID", procid, 1);
	setenv("SLURM_LOCALID", localid, 1);
	setenv("SLURM_NODEID", nodeid, 1);
	setenv("SLURM_STEP_NUM_TASKS", ntasks, 1);
	setenv("SLURM_STEP_NUM_NODES", nnodes, 1);
	setenv("SLURM_JOB_ID", "41", 1);
	setenv("SLURM_STEP_ID", "2", 1);
}

static void srun_place(void **state)
{
	struct launch_spec s;
	struct strbuf err = STRBUF_INIT;
	struct strvec env = STRVEC_INIT;
	unsigned local = 99;
	char step[64];

	(void)state;
	launch_spec_init(&s);
	s.job_id = xstrdup("0123456789abcdef");
	s.nnodes = 2;
	s.nproc = 3;
	s.world_size = 6;
	strvec_push(&s.argv, "true");
	/* Task 4: node 1, its second rank. */
	set_task("4", "1", "1", "6", "2");
	assert_int_equal(srun_task_place(&s, &local, step, &err), 0);
	assert_int_equal(local, 1);
	assert_int_equal(s.node_rank, 1);
	assert_int_equal(s.rank_base, 3);
	assert_string_equal(step, "41.2");
	/* Its marks are the task's, its variables the rank's. */
	assert_int_equal(launch_spec_part(&s), 4);
	launch_unit_env(&s, NULL, NULL, local, "10.0.0.1", 29500, &env);
	assert_string_equal(env_get(&env, "RANK"), "4");
	assert_string_equal(env_get(&env, "LOCAL_RANK"), "1");
	assert_string_equal(env_get(&env, "NODE_RANK"), "1");
	assert_string_equal(env_get(&env, "LOCAL_WORLD_SIZE"), "3");
	assert_string_equal(env_get(&env, LAUNCH_JOB_NODE_VAR), "4");
	strvec_clear(&env);
	/* A step that is not the job's: Slurm placed the tasks otherwise. */
	set_task("4", "0", "2", "6", "3");
	assert_int_equal(srun_task_place(&s, &local, step, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "not the job's"));
	strbuf_reset(&err);
	set_task("4", "1", "1", "5", "2");
	assert_int_equal(srun_task_place(&s, &local, step, &err), -EINVAL);
	strbuf_reset(&err);
	/* Not a task at all. */
	unsetenv("SLURM_PROCID");
	assert_int_equal(srun_task_place(&s, &local, step, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "SLURM_PROCID is not set"));
	strbuf_reset(&err);
	/* torchrun: one task per node, the node's rank. */
	s.torchrun = true;
	set_task("1", "0", "1", "2", "2");
	assert_int_equal(srun_task_place(&s, &local, step, &err), 0);
	assert_int_equal(local, 0);
	assert_int_equal(s.node_rank, 1);
	launch_spec_release(&s);
	strbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(spec_round_trip),
		cmocka_unit_test(spec_every_byte),
		cmocka_unit_test(spec_malformed),
		cmocka_unit_test(reserved_vars),
		cmocka_unit_test(reserved_job_node_var),
		cmocka_unit_test(env_list),
		cmocka_unit_test(unit_env_precedence),
		cmocka_unit_test(unit_env_pythonunbuffered),
		cmocka_unit_test(unit_env_torchrun),
		cmocka_unit_test(torch_probe),
		cmocka_unit_test(unit_env_omp_num_threads),
		cmocka_unit_test(unit_argv),
		cmocka_unit_test(wait_status),
		cmocka_unit_test(describe_status),
		cmocka_unit_test(stat_parse),
		cmocka_unit_test(stat_parse_malformed),
		cmocka_unit_test(tcp_table),
		cmocka_unit_test(tcp6_table),
		cmocka_unit_test(started_since),
		cmocka_unit_test(descendants),
		cmocka_unit_test(session),
		cmocka_unit_test(proc_list_basics),
		cmocka_unit_test(live_environment),
		cmocka_unit_test(signal_list),
		cmocka_unit_test(port_owner),
		cmocka_unit_test(srun_labels),
		cmocka_unit_test(srun_long_lines),
		cmocka_unit_test(srun_refusals),
		cmocka_unit_test(srun_argv),
		cmocka_unit_test(srun_place),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
