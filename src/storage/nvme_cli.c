/*
 * nvme_cli.c - parsers of nvme-cli 2.x output (see nvme_cli.h).
 */
#include "sparkctl.h"

#include <arpa/inet.h>
#include <jansson.h>

#include "lib/json.h"
#include "lib/parse.h"
#include "lib/xalloc.h"
#include "storage/nvme_cli.h"

void nvme_discovery_log_init(struct nvme_discovery_log *log)
{
	log->genctr = -1;
	log->records = NULL;
	log->nr = 0;
}

static void record_release(struct nvme_discovery_record *r)
{
	free(r->trtype);
	free(r->adrfam);
	free(r->subtype);
	free(r->trsvcid);
	free(r->subnqn);
	free(r->traddr);
}

void nvme_discovery_log_release(struct nvme_discovery_log *log)
{
	for (size_t i = 0; i < log->nr; i++)
		record_release(&log->records[i]);
	free(log->records);
	nvme_discovery_log_init(log);
}

static struct nvme_discovery_record *record_new(struct nvme_discovery_log *log)
{
	struct nvme_discovery_record *r = ARRAY_PUSH(log->records, log->nr);

	r->trtype = xstrdup("");
	r->adrfam = xstrdup("");
	r->subtype = xstrdup("");
	r->trsvcid = xstrdup("");
	r->subnqn = xstrdup("");
	r->traddr = xstrdup("");
	r->portid = -1;
	return r;
}

/* The string field key of a record: its member (a string or, for portid, a number). */
static char **record_field(struct nvme_discovery_record *r, const char *key)
{
	static const struct {
		const char *key;
		size_t offset;
	} fields[] = {
		{ "trtype", offsetof(struct nvme_discovery_record, trtype) },
		{ "adrfam", offsetof(struct nvme_discovery_record, adrfam) },
		{ "subtype", offsetof(struct nvme_discovery_record, subtype) },
		{ "trsvcid", offsetof(struct nvme_discovery_record, trsvcid) },
		{ "subnqn", offsetof(struct nvme_discovery_record, subnqn) },
		{ "traddr", offsetof(struct nvme_discovery_record, traddr) },
	};

	for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
		if (streq(fields[i].key, key))
			return (char **)(void *)((char *)r + fields[i].offset);
	return NULL;
}

static int record_from_json(const json_t *o, size_t i, struct nvme_discovery_log *log,
			    struct strbuf *err)
{
	struct nvme_discovery_record *r = record_new(log);
	const char *key;
	json_t *v;
	char ctx[32];

	snprintf(ctx, sizeof(ctx), "records[%zu]", i);
	if (!json_is_object(o)) {
		strbuf_addf(err, "%s: expected an object", ctx);
		return -EINVAL;
	}
	json_object_foreach((json_t *)o, key, v)
	{
		char **field = record_field(r, key);

		if (streq(key, "portid")) {
			if (jval_int(v, ctx, key, &r->portid, err) < 0)
				return -EINVAL;
		} else if (field && json_is_string(v)) {
			free(*field);
			*field = xstrdup(json_string_value(v));
		} else if (field && !json_is_null(v)) {
			strbuf_addf(err, "%s.%s: expected a string", ctx, key);
			return -EINVAL;
		}
	}
	return 0;
}

int nvme_discover_parse_json(const char *text, size_t len, struct nvme_discovery_log *log,
			     struct strbuf *err)
{
	json_t *doc = NULL;
	const json_t *records;
	int r = json_load_buffer(text, len, "nvme discover", &doc, err);

	if (r < 0)
		goto out;
	r = jget_int(doc, "nvme discover", "genctr", &log->genctr, err);
	if (r == 0)
		r = jget_array(doc, "nvme discover", "records", &records, err);
	if (r == 0 && !records) {
		strbuf_addstr(err, "nvme discover: no \"records\"");
		r = -EINVAL;
	}
	for (size_t i = 0; r == 0 && i < json_array_size(records); i++)
		r = record_from_json(json_array_get(records, i), i, log, err);
out:
	if (r < 0)
		nvme_discovery_log_release(log);
	json_decref(doc);
	return r;
}

/* One "key: value" line of an entry of the text form. */
static int text_field(struct nvme_discovery_record *rec, const char *line, size_t len)
{
	const char *colon = memchr(line, ':', len);
	char *key, **field;
	const char *v;
	size_t vlen;
	uint64_t n;

	if (!colon)
		return 0; /* not a field */
	key = xstrndup(line, (size_t)(colon - line));
	for (v = colon + 1; v < line + len && (*v == ' ' || *v == '\t'); v++)
		;
	vlen = (size_t)(line + len - v);
	while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t' || v[vlen - 1] == '\r'))
		vlen--;
	field = record_field(rec, key);
	if (field) {
		free(*field);
		*field = xstrndup(v, vlen);
	} else if (streq(key, "portid") && parse_u64_n(v, vlen, &n) == 0 && n <= INT64_MAX) {
		rec->portid = (int64_t)n;
	}
	free(key);
	return 0;
}

int nvme_discover_parse_text(const char *text, size_t len, struct nvme_discovery_log *log,
			     struct strbuf *err)
{
	static const char header[] = "Discovery Log Number of Records ";
	struct nvme_discovery_record *rec = NULL;
	const char *p = text, *end = text + len;
	bool seen_header = false;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *gen;

		if (n >= sizeof(header) - 1 && !memcmp(p, header, sizeof(header) - 1)) {
			seen_header = true;
			gen = memmem(p, n, "Generation counter ", 19);
			uint64_t g;
			if (gen && parse_u64_n(gen + 19, n - (size_t)(gen + 19 - p), &g) == 0 &&
			    g <= INT64_MAX)
				log->genctr = (int64_t)g;
		} else if (n >= 5 && !memcmp(p, "=====", 5)) {
			rec = record_new(log);
		} else if (rec) {
			text_field(rec, p, n);
		}
		p += n + (nl ? 1 : 0);
	}
	if (!seen_header) {
		strbuf_addstr(err, "nvme discover: no \"Discovery Log Number of Records\" line");
		nvme_discovery_log_release(log);
		return -EINVAL;
	}
	return 0;
}

bool nvme_discovery_offers(const struct nvme_discovery_log *log, const char *nqn)
{
	for (size_t i = 0; i < log->nr; i++)
		if (streq(log->records[i].subtype, NVME_SUBTYPE_NVM) &&
		    streq(log->records[i].subnqn, nqn))
			return true;
	return false;
}

void nvme_discovery_nqns(const struct nvme_discovery_log *log, struct strbuf *out)
{
	size_t shown = 0;

	for (size_t i = 0; i < log->nr; i++) {
		const struct nvme_discovery_record *r = &log->records[i];
		bool again = false;

		if (!streq(r->subtype, NVME_SUBTYPE_NVM) || !*r->subnqn)
			continue;
		for (size_t j = 0; j < i; j++)
			again |= streq(log->records[j].subtype, NVME_SUBTYPE_NVM) &&
				 streq(log->records[j].subnqn, r->subnqn);
		if (again)
			continue;
		if (shown++)
			strbuf_addstr(out, ", ");
		strbuf_addstr(out, r->subnqn);
	}
	if (!shown)
		strbuf_addstr(out, "none");
}

void nvme_subsys_list_init(struct nvme_subsys_list *l)
{
	l->hostnqn = NULL;
	l->v = NULL;
	l->nr = 0;
}

void nvme_subsys_list_release(struct nvme_subsys_list *l)
{
	for (size_t i = 0; i < l->nr; i++) {
		struct nvme_subsystem *s = &l->v[i];

		for (size_t j = 0; j < s->nr_paths; j++) {
			free(s->paths[j].name);
			free(s->paths[j].transport);
			free(s->paths[j].address);
			free(s->paths[j].state);
			nvme_address_release(&s->paths[j].addr);
		}
		free(s->paths);
		free(s->name);
		free(s->nqn);
	}
	free(l->v);
	free(l->hostnqn);
	nvme_subsys_list_init(l);
}

/* A string member, "" when absent or null. */
static int str_member(const json_t *o, const char *ctx, const char *key, char **ret,
		      struct strbuf *err)
{
	int r = jget_str(o, ctx, key, ret, err);

	if (r == 0 && !*ret)
		*ret = xstrdup("");
	return r;
}

static int path_from_json(const json_t *o, const char *ctx, struct nvme_subsystem *s,
			  struct strbuf *err)
{
	struct nvme_path *p = ARRAY_PUSH(s->paths, s->nr_paths);
	int r;

	memset(p, 0, sizeof(*p));
	if (!json_is_object(o)) {
		strbuf_addf(err, "%s: expected an object", ctx);
		return -EINVAL;
	}
	r = str_member(o, ctx, "Name", &p->name, err);
	if (r == 0)
		r = str_member(o, ctx, "Transport", &p->transport, err);
	if (r == 0)
		r = str_member(o, ctx, "Address", &p->address, err);
	if (r == 0)
		r = str_member(o, ctx, "State", &p->state, err);
	if (r == 0 && nvme_address_parse(p->address, &p->addr) < 0) {
		strbuf_addf(err, "%s.Address: not key=value,...: ", ctx);
		strbuf_addstr_printable(err, p->address);
		r = -EINVAL;
	}
	return r;
}

static int subsystem_from_json(const json_t *o, size_t i, struct nvme_subsys_list *l,
			       struct strbuf *err)
{
	struct nvme_subsystem *s;
	const json_t *paths;
	char ctx[48];
	int r;

	snprintf(ctx, sizeof(ctx), "Subsystems[%zu]", i);
	if (!json_is_object(o)) {
		strbuf_addf(err, "%s: expected an object", ctx);
		return -EINVAL;
	}
	r = jget_array(o, ctx, "Paths", &paths, err);
	if (r < 0)
		return r;
	/* nvme-cli 1.x put a subsystem's Paths in an object of their own after it. */
	if (!json_object_get(o, "NQN") && paths && l->nr) {
		s = &l->v[l->nr - 1];
	} else {
		s = ARRAY_PUSH(l->v, l->nr);
		memset(s, 0, sizeof(*s));
		r = str_member(o, ctx, "Name", &s->name, err);
		if (r == 0)
			r = str_member(o, ctx, "NQN", &s->nqn, err);
	}
	for (size_t j = 0; r == 0 && j < json_array_size(paths); j++) {
		char pctx[80];

		snprintf(pctx, sizeof(pctx), "%s.Paths[%zu]", ctx, j);
		r = path_from_json(json_array_get(paths, j), pctx, s, err);
	}
	return r;
}

static int host_from_json(const json_t *o, struct nvme_subsys_list *l, size_t *nr_seen,
			  struct strbuf *err)
{
	const json_t *subsystems;
	int r;

	if (!json_is_object(o)) {
		strbuf_addstr(err, "nvme list-subsys: expected an object");
		return -EINVAL;
	}
	if (!l->hostnqn) {
		r = jget_str(o, "nvme list-subsys", "HostNQN", &l->hostnqn, err);
		if (r < 0)
			return r;
	}
	r = jget_array(o, "nvme list-subsys", "Subsystems", &subsystems, err);
	for (size_t i = 0; r == 0 && i < json_array_size(subsystems); i++)
		r = subsystem_from_json(json_array_get(subsystems, i), (*nr_seen)++, l, err);
	return r;
}

int nvme_list_subsys_parse(const char *text, size_t len, struct nvme_subsys_list *l,
			   struct strbuf *err)
{
	struct strbuf wrapped = STRBUF_INIT;
	json_t *doc = NULL;
	const json_t *hosts;
	size_t skip = 0, nr_seen = 0;
	int r = 0;

	while (skip < len && strchr(" \t\r\n", text[skip]) && text[skip])
		skip++;
	if (skip == len)
		goto out; /* no subsystem: nvme-cli prints nothing */
	/* An array (nvme-cli 2.3) is read as the member of an object. */
	strbuf_addstr(&wrapped, "{\"hosts\":");
	if (text[skip] != '[')
		strbuf_addch(&wrapped, '[');
	strbuf_add(&wrapped, text + skip, len - skip);
	if (text[skip] != '[')
		strbuf_addch(&wrapped, ']');
	strbuf_addch(&wrapped, '}');
	r = json_load_buffer(wrapped.buf, wrapped.len, "nvme list-subsys", &doc, err);
	if (r == 0)
		r = jget_array(doc, "nvme list-subsys", "hosts", &hosts, err);
	for (size_t i = 0; r == 0 && i < json_array_size(hosts); i++)
		r = host_from_json(json_array_get(hosts, i), l, &nr_seen, err);
out:
	if (r == 0 && !l->hostnqn)
		l->hostnqn = xstrdup("");
	if (r < 0)
		nvme_subsys_list_release(l);
	json_decref(doc);
	strbuf_release(&wrapped);
	return r;
}

const struct nvme_subsystem *nvme_subsys_find(const struct nvme_subsys_list *l, const char *nqn)
{
	for (size_t i = 0; i < l->nr; i++)
		if (l->v[i].nqn && streq(l->v[i].nqn, nqn))
			return &l->v[i];
	return NULL;
}

/* The same address, as text or, for IP literals, as written differently ("fd00::1", "fd00:0::1").
 */
static bool same_address(const char *a, const char *b)
{
	unsigned char x[16], y[16];

	if (streq(a, b))
		return true;
	if (inet_pton(AF_INET6, a, x) == 1 && inet_pton(AF_INET6, b, y) == 1)
		return !memcmp(x, y, sizeof(x));
	return false;
}

bool nvme_path_to(const struct nvme_path *p, const char *traddr, const char *trsvcid)
{
	return streq(p->transport, "tcp") &&
	       (!traddr || (p->addr.traddr && same_address(p->addr.traddr, traddr))) &&
	       (!trsvcid || (p->addr.trsvcid && streq(p->addr.trsvcid, trsvcid)));
}

size_t nvme_subsys_count_paths(const struct nvme_subsystem *s, const char *traddr,
			       const char *trsvcid, bool live)
{
	size_t n = 0;

	for (size_t i = 0; s && i < s->nr_paths; i++) {
		const struct nvme_path *p = &s->paths[i];

		if (nvme_path_to(p, traddr, trsvcid) && (!live || streq(p->state, "live")))
			n++;
	}
	return n;
}
