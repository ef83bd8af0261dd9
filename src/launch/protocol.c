/*
 * protocol.c - the job spec, the environment and the command of a unit.
 */
#include "sparkctl.h"

#include <sys/random.h>

#include "launch/protocol.h"
#include "lib/json.h"
#include "lib/xalloc.h"

const char *const launch_reserved_vars[] = {
	"RANK",
	"LOCAL_RANK",
	"WORLD_SIZE",
	"LOCAL_WORLD_SIZE",
	"NODE_RANK",
	"GROUP_RANK",
	"GROUP_WORLD_SIZE",
	"ROLE_RANK",
	"ROLE_NAME",
	"ROLE_WORLD_SIZE",
	"MASTER_ADDR",
	"MASTER_PORT",
	"TORCHELASTIC_RESTART_COUNT",
	"TORCHELASTIC_MAX_RESTARTS",
	"TORCHELASTIC_RUN_ID",
	"TORCHELASTIC_USE_AGENT_STORE",
	LAUNCH_JOB_VAR,
	LAUNCH_JOB_NODE_VAR,
	NULL,
};

bool launch_var_reserved(const char *key)
{
	for (size_t i = 0; launch_reserved_vars[i]; i++)
		if (streq(key, launch_reserved_vars[i]))
			return true;
	return false;
}

void launch_spec_init(struct launch_spec *s)
{
	memset(s, 0, sizeof(*s));
	strvec_init(&s->argv);
	strvec_init(&s->env);
	strvec_init(&s->torchrun_opts);
}

unsigned launch_spec_part(const struct launch_spec *s)
{
	return s->srun_task ? s->task : s->node_rank;
}

void launch_spec_release(struct launch_spec *s)
{
	free(s->job_id);
	free(s->master_addr);
	free(s->chdir);
	strvec_clear(&s->argv);
	strvec_clear(&s->env);
	strvec_clear(&s->torchrun_opts);
	launch_spec_init(s);
}

/*
 * Arguments and variables may hold any byte but NUL, and JSON strings
 * must be UTF-8: they travel percent-encoded (every byte outside
 * printable ASCII, and '%' itself, as %XX).
 */
static json_t *jbytes(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	struct strbuf b = STRBUF_INIT;
	json_t *j;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p >= 0x7f || *p == '%') {
			strbuf_addch(&b, '%');
			strbuf_addch(&b, hex[*p >> 4]);
			strbuf_addch(&b, hex[*p & 15]);
		} else {
			strbuf_addch(&b, *p);
		}
	}
	j = jstr(b.buf);
	strbuf_release(&b);
	return j;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int unbytes(const json_t *j, char **ret)
{
	const char *s = json_string_value(j);
	struct strbuf b = STRBUF_INIT;

	if (!s)
		return -EINVAL;
	for (; *s; s++) {
		int hi, lo;
		if (*s != '%') {
			strbuf_addch(&b, *s);
			continue;
		}
		if ((hi = hex_digit(s[1])) < 0 || (lo = hex_digit(s[2])) < 0 ||
		    (hi == 0 && lo == 0)) {
			strbuf_release(&b);
			return -EINVAL;
		}
		strbuf_addch(&b, hi << 4 | lo);
		s += 2;
	}
	*ret = strbuf_detach(&b, NULL);
	return 0;
}

static json_t *jbytes_array(const struct strvec *v)
{
	json_t *a = json_array();
	for (size_t i = 0; i < v->nr; i++)
		jpush(a, jbytes(v->v[i]));
	return a;
}

void launch_spec_to_json(const struct launch_spec *s, struct strbuf *out)
{
	json_t *j = json_object();

	jset(j, "job_id", jstr(s->job_id));
	jset(j, "node_rank", jint(s->node_rank));
	jset(j, "nnodes", jint(s->nnodes));
	jset(j, "nproc", jint(s->nproc));
	jset(j, "rank_base", jint(s->rank_base));
	jset(j, "world_size", jint(s->world_size));
	jset(j, "torchrun", jbool(s->torchrun));
	jset(j, "use_env", jbool(s->use_env));
	jset(j, "all_local", jbool(s->all_local));
	jset(j, "kill_stale", jbool(s->kill_stale));
	jset(j, "master_addr", s->master_addr ? jbytes(s->master_addr) : json_null());
	jset(j, "port", jint(s->port));
	jset(j, "grace_ms", jint(s->grace_ms));
	jset(j, "ping_ms", jint(s->ping_ms));
	jset(j, "contain", jstr(contain_mode_name(s->contain)));
	jset(j, "chdir", s->chdir ? jbytes(s->chdir) : json_null());
	jset(j, "argv", jbytes_array(&s->argv));
	jset(j, "env", jbytes_array(&s->env));
	jset(j, "torchrun_opts", jbytes_array(&s->torchrun_opts));
	json_to_line(j, out);
	json_decref(j);
}

static int get_contain(const json_t *j, enum contain_mode *ret, struct strbuf *err)
{
	char *name = NULL;
	int r = jget_str(j, "job spec", "contain", &name, err);

	if (r == 0 && contain_mode_parse(name, ret) < 0) {
		strbuf_addf(err, "job spec: unknown contain mode");
		r = -EINVAL;
	}
	free(name);
	return r < 0 ? -EINVAL : 0;
}

static int get_uint(const json_t *j, const char *key, unsigned *ret, struct strbuf *err)
{
	int64_t v;
	if (jget_int(j, "job spec", key, &v, err) < 0)
		return -EINVAL;
	if (v < 0 || v > UINT32_MAX) {
		strbuf_addf(err, "job spec: \"%s\" missing or out of range", key);
		return -EINVAL;
	}
	*ret = (unsigned)v;
	return 0;
}

static int get_bool(const json_t *j, const char *key, bool *ret, struct strbuf *err)
{
	const json_t *v = json_object_get(j, key);
	if (!json_is_boolean(v)) {
		strbuf_addf(err, "job spec: \"%s\" must be true or false", key);
		return -EINVAL;
	}
	*ret = json_is_true(v);
	return 0;
}

static int get_bytes(const json_t *j, const char *key, char **ret, struct strbuf *err)
{
	const json_t *v = json_object_get(j, key);
	*ret = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (unbytes(v, ret) < 0) {
		strbuf_addf(err, "job spec: bad \"%s\"", key);
		return -EINVAL;
	}
	return 0;
}

/* An array of percent-encoded strings; an optional one may be missing (an older launcher). */
static int get_bytes_array(const json_t *j, const char *key, bool optional, struct strvec *out,
			   struct strbuf *err)
{
	const json_t *a, *v;
	size_t i;

	if (jget_array(j, "job spec", key, &a, err) < 0)
		return -EINVAL;
	if (!a && optional)
		return 0;
	if (!a) {
		strbuf_addf(err, "job spec: \"%s\" missing", key);
		return -EINVAL;
	}
	json_array_foreach(a, i, v)
	{
		char *s;
		if (unbytes(v, &s) < 0) {
			strbuf_addf(err, "job spec: bad \"%s\" entry", key);
			return -EINVAL;
		}
		strvec_push_nodup(out, s);
	}
	return 0;
}

int launch_job_id_new(char **ret)
{
	uint8_t bytes[8];
	struct strbuf hex = STRBUF_INIT;

	if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes))
		return -errno;
	strbuf_add_hex(&hex, bytes, sizeof(bytes));
	*ret = strbuf_detach(&hex, NULL);
	return 0;
}

/* 16 lowercase hex digits: it goes into environments and messages as it is. */
static bool valid_job_id(const char *id)
{
	if (!id || strlen(id) != 16)
		return false;
	for (const char *p = id; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

int launch_spec_from_json(const char *text, size_t len, struct launch_spec *s, struct strbuf *err)
{
	json_t *j;
	int r = -EINVAL;

	launch_spec_init(s);
	if (json_load_buffer(text, len, "job spec", &j, err) < 0)
		return -EINVAL;
	if (!json_is_object(j)) {
		strbuf_addstr(err, "job spec: not a JSON object");
		goto out;
	}
	if (jget_str(j, "job spec", "job_id", &s->job_id, err) < 0 ||
	    get_uint(j, "node_rank", &s->node_rank, err) < 0 ||
	    get_uint(j, "nnodes", &s->nnodes, err) < 0 ||
	    get_uint(j, "nproc", &s->nproc, err) < 0 ||
	    get_uint(j, "rank_base", &s->rank_base, err) < 0 ||
	    get_uint(j, "world_size", &s->world_size, err) < 0 ||
	    get_bool(j, "torchrun", &s->torchrun, err) < 0 ||
	    get_bool(j, "use_env", &s->use_env, err) < 0 ||
	    get_bool(j, "all_local", &s->all_local, err) < 0 ||
	    get_bool(j, "kill_stale", &s->kill_stale, err) < 0 ||
	    get_bytes(j, "master_addr", &s->master_addr, err) < 0 ||
	    get_uint(j, "port", &s->port, err) < 0 ||
	    get_uint(j, "grace_ms", &s->grace_ms, err) < 0 ||
	    /* An older launcher sends no pings, and no ping_ms. */
	    (json_object_get(j, "ping_ms") && get_uint(j, "ping_ms", &s->ping_ms, err) < 0) ||
	    get_contain(j, &s->contain, err) < 0 || get_bytes(j, "chdir", &s->chdir, err) < 0 ||
	    get_bytes_array(j, "argv", false, &s->argv, err) < 0 ||
	    get_bytes_array(j, "env", false, &s->env, err) < 0 ||
	    get_bytes_array(j, "torchrun_opts", true, &s->torchrun_opts, err) < 0)
		goto out;
	if (!valid_job_id(s->job_id) || !s->argv.nr || !s->nnodes || s->node_rank >= s->nnodes ||
	    !s->nproc || s->port > 65535 || (uint64_t)s->rank_base + s->nproc > s->world_size) {
		strbuf_addstr(err, "job spec: inconsistent");
		goto out;
	}
	for (size_t i = 0; i < s->env.nr; i++)
		if (!strchr(s->env.v[i], '=')) {
			strbuf_addstr(err, "job spec: an env entry without '='");
			goto out;
		}
	r = 0;
out:
	json_decref(j);
	if (r < 0)
		launch_spec_release(s);
	return r;
}

static size_t key_len(const char *entry)
{
	const char *eq = strchr(entry, '=');
	return eq ? (size_t)(eq - entry) : strlen(entry);
}

void env_list_put(struct strvec *env, const char *entry)
{
	size_t klen = key_len(entry);

	for (size_t i = 0; i < env->nr; i++)
		if (key_len(env->v[i]) == klen && !memcmp(env->v[i], entry, klen)) {
			free(env->v[i]);
			env->v[i] = xstrdup(entry);
			return;
		}
	strvec_push(env, entry);
}

void env_list_set(struct strvec *env, const char *key, const char *value)
{
	char *entry = xasprintf("%s=%s", key, value);
	env_list_put(env, entry);
	free(entry);
}

static bool env_list_has(const struct strvec *env, const char *key)
{
	size_t klen = strlen(key);
	for (size_t i = 0; i < env->nr; i++)
		if (key_len(env->v[i]) == klen && !memcmp(env->v[i], key, klen))
			return true;
	return false;
}

static void env_list_setu(struct strvec *env, const char *key, unsigned value)
{
	char buf[16];
	snprintf(buf, sizeof(buf), "%u", value);
	env_list_set(env, key, buf);
}

void launch_unit_env(const struct launch_spec *s, char *const *base, const struct strvec *node_env,
		     unsigned local_rank, const char *master_addr, unsigned port,
		     struct strvec *out)
{
	for (size_t i = 0; base && base[i]; i++)
		if (strchr(base[i], '='))
			env_list_put(out, base[i]);
	for (size_t i = 0; node_env && i < node_env->nr; i++)
		env_list_put(out, node_env->v[i]);
	for (size_t i = 0; i < s->env.nr; i++)
		env_list_put(out, s->env.v[i]);
	if (!env_list_has(out, "PYTHONUNBUFFERED"))
		env_list_set(out, "PYTHONUNBUFFERED", "1");
	if (!s->torchrun) {
		/* torchrun's values for one role ("default") and no restarts. */
		env_list_setu(out, "RANK", s->rank_base + local_rank);
		env_list_setu(out, "LOCAL_RANK", local_rank);
		env_list_setu(out, "WORLD_SIZE", s->world_size);
		env_list_setu(out, "LOCAL_WORLD_SIZE", s->nproc);
		env_list_setu(out, "GROUP_WORLD_SIZE", s->nnodes);
		env_list_setu(out, "ROLE_RANK", s->rank_base + local_rank);
		env_list_set(out, "ROLE_NAME", "default");
		env_list_setu(out, "ROLE_WORLD_SIZE", s->world_size);
		env_list_set(out, "TORCHELASTIC_RESTART_COUNT", "0");
		env_list_set(out, "TORCHELASTIC_MAX_RESTARTS", "0");
		env_list_set(out, "TORCHELASTIC_RUN_ID", s->job_id);
		/* No agent hosts a store: init_process_group's rank 0 does. */
		env_list_set(out, "TORCHELASTIC_USE_AGENT_STORE", "False");
		/* torchrun's guard against nproc ranks each starting a thread per core. */
		if (s->nproc > 1 && !env_list_has(out, "OMP_NUM_THREADS"))
			env_list_set(out, "OMP_NUM_THREADS", "1");
	}
	env_list_setu(out, "NODE_RANK", s->node_rank);
	env_list_setu(out, "GROUP_RANK", s->node_rank);
	env_list_set(out, "MASTER_ADDR", master_addr);
	env_list_setu(out, "MASTER_PORT", port);
	env_list_set(out, LAUNCH_JOB_VAR, s->job_id);
	env_list_setu(out, LAUNCH_JOB_NODE_VAR, launch_spec_part(s));
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && streq(s + n - m, suffix);
}

void launch_unit_argv(const struct launch_spec *s, const char *master_addr, unsigned port,
		      struct strvec *out)
{
	if (s->torchrun) {
		strvec_push(out, "torchrun");
		strvec_pushf(out, "--nnodes=%u", s->nnodes);
		strvec_pushf(out, "--node_rank=%u", s->node_rank);
		strvec_pushf(out, "--nproc_per_node=%u", s->nproc);
		strvec_pushf(out, "--master_addr=%s", master_addr);
		strvec_pushf(out, "--master_port=%u", port);
		if (s->torchrun_std_map) {
			strvec_push(out, "--redirects=9:1");
			strvec_push(out, "--tee=9:1");
		}
		for (size_t i = 0; i < s->torchrun_opts.nr; i++)
			strvec_push(out, s->torchrun_opts.v[i]);
		if (!ends_with(s->argv.v[0], ".py"))
			strvec_push(out, "--no_python");
	}
	for (size_t i = 0; i < s->argv.nr; i++)
		strvec_push(out, s->argv.v[i]);
}

/* A decimal number at *p, advancing past it; false if there is none or it is too large. */
static bool parse_number(const char **p, unsigned *ret)
{
	unsigned long v = 0;

	if (**p < '0' || **p > '9')
		return false;
	for (; **p >= '0' && **p <= '9'; (*p)++) {
		v = v * 10 + (unsigned long)(**p - '0');
		if (v > 100000)
			return false;
	}
	*ret = (unsigned)v;
	return true;
}

int launch_torch_probe_parse(const char *text, struct torch_probe *ret)
{
	const char *p = text;
	struct torch_probe t = { 0 };

	/* "MAJOR.MINOR..." (PEP 440: suffixes such as a0, .post1, +local follow). */
	if (!parse_number(&p, &t.torch_major) || *p++ != '.' || !parse_number(&p, &t.torch_minor))
		return -EINVAL;
	p += strcspn(p, " \n");
	if (*p++ != ' ' || !parse_number(&p, &t.python_major) || *p++ != ' ' ||
	    !parse_number(&p, &t.python_minor))
		return -EINVAL;
	if (*p == '\n')
		p++;
	if (*p)
		return -EINVAL;
	*ret = t;
	return 0;
}

bool launch_torch_needs_std_map(const struct torch_probe *p)
{
	bool python_311 = p->python_major > 3 || (p->python_major == 3 && p->python_minor >= 11);

	return p->torch_major < 2 && python_311;
}

void launch_describe_status(int status, bool signaled, struct strbuf *out)
{
	if (status < 0) {
		strbuf_addstr(out, "not started");
	} else if (signaled) {
		const char *abbrev = sigabbrev_np(status - 128);
		strbuf_addf(out, "signal %d", status - 128);
		if (abbrev)
			strbuf_addf(out, " (SIG%s)", abbrev);
	} else {
		strbuf_addf(out, "exit %d", status);
	}
}
