#include "sparkctl.h"

#include <math.h>

#include "inventory/codec.h"
#include "lib/xalloc.h"
#include "lib/host_text.h"

static void *member(void *obj, size_t offset)
{
	return (char *)obj + offset;
}

static const void *cmember(const void *obj, size_t offset)
{
	return (const char *)obj + offset;
}

/* The elements of an ARRAY or MAP row: the pointer and the count. */
static void **elements(const struct inv_field *f, void *obj)
{
	return member(obj, f->offset);
}

static size_t *count(const struct inv_field *f, void *obj)
{
	return member(obj, f->count_offset);
}

static const char *element(const struct inv_field *f, const void *obj, size_t i)
{
	return *(const char *const *)cmember(obj, f->offset) + i * f->desc->size;
}

static size_t nr_elements(const struct inv_field *f, const void *obj)
{
	return *(const size_t *)cmember(obj, f->count_offset);
}

/* The TAG row of d: which tagged array an element belongs to. */
static const struct inv_field *tag_row(const struct inv_desc *d)
{
	for (size_t i = 0; i < d->nr_fields; i++)
		if (d->fields[i].type == INV_TAG)
			return &d->fields[i];
	return NULL;
}

static bool has_tag(const struct inv_field *f, const void *elem)
{
	const struct inv_field *t = f->tag ? tag_row(f->desc) : NULL;

	return !t || *(const int *)cmember(elem, t->offset) == f->tag;
}

/* ---- init and release ------------------------------------------------------- */

void inv_fields_init(const struct inv_desc *d, void *obj)
{
	for (size_t i = 0; i < d->nr_fields; i++) {
		const struct inv_field *f = &d->fields[i];
		void *p = member(obj, f->offset);
		switch (f->type) {
		case INV_INT:
		case INV_LIMIT:
			*(int64_t *)p = INV_UNKNOWN;
			break;
		case INV_INT32:
		case INV_TRI:
		case INV_ENUM:
			*(int *)p = -1;
			break;
		case INV_STRVEC:
			strvec_init(p);
			break;
		case INV_OBJECT:
		case INV_INLINE:
			inv_fields_init(f->desc, p);
			break;
		default:
			break;
		}
	}
}

void inv_fields_release(const struct inv_desc *d, void *obj)
{
	for (size_t i = 0; i < d->nr_fields; i++) {
		const struct inv_field *f = &d->fields[i];
		void *p = member(obj, f->offset);
		switch (f->type) {
		case INV_STRING:
			free_and_null(p);
			break;
		case INV_STRVEC:
			strvec_clear(p);
			break;
		case INV_OBJECT:
		case INV_INLINE:
			inv_fields_release(f->desc, p);
			break;
		case INV_OPTIONAL:
			if (*(void **)p) {
				inv_fields_release(f->desc, *(void **)p);
				free_and_null(p);
			}
			break;
		case INV_ARRAY:
		case INV_MAP:
			/* Two rows may share the array (ipv4, ipv6): the first empties it. */
			for (size_t j = 0; j < *count(f, obj); j++)
				inv_fields_release(f->desc,
						   (char *)*elements(f, obj) + j * f->desc->size);
			free(*elements(f, obj));
			*elements(f, obj) = NULL;
			*count(f, obj) = 0;
			break;
		default:
			break;
		}
	}
}

/* ---- writing ---------------------------------------------------------------- */

static void fields_to_json(json_t *o, const struct inv_desc *d, const void *obj,
			   const struct inv_scope *s);

static const char *enum_name(const struct inv_enum_name *names, int value)
{
	for (; names->name; names++)
		if (names->value == value)
			return names->name;
	return NULL;
}

/* A new object of desc's rows for the struct at obj, held by the object of outer. */
static json_t *object_to_json(const struct inv_desc *d, const void *obj,
			      const struct inv_scope *outer)
{
	struct inv_scope s = { outer->inv, outer, obj };
	json_t *o = json_object();

	fields_to_json(o, d, obj, &s);
	return o;
}

static json_t *array_to_json(const struct inv_field *f, const void *obj, const struct inv_scope *s)
{
	json_t *a = json_array();

	for (size_t i = 0; i < nr_elements(f, obj); i++) {
		const char *elem = element(f, obj, i);
		if (has_tag(f, elem))
			jpush(a, object_to_json(f->desc, elem, s));
	}
	return a;
}

/* A rate of mbps Mb/s as a number of Gb/s; null when unknown (negative). */
static json_t *jgbps(int64_t mbps)
{
	return mbps < 0 ? json_null() : jreal((double)mbps / 1000.0);
}

static json_t *value_to_json(const struct inv_field *f, const void *obj, const struct inv_scope *s);

static json_t *map_to_json(const struct inv_field *f, const void *obj, const struct inv_scope *s)
{
	const struct inv_field *key = &f->desc->fields[0], *value = &f->desc->fields[f->value];
	json_t *o = json_object();

	for (size_t i = 0; i < nr_elements(f, obj); i++) {
		const char *elem = element(f, obj, i);
		struct inv_scope in = { s->inv, s, elem };
		json_t *v = value_to_json(value, elem, &in);
		if ((f->flags & INV_OMIT_NULL) && json_is_null(v))
			json_decref(v);
		else
			jset(o, *(const char *const *)cmember(elem, key->offset), v);
	}
	return o;
}

static json_t *strvec_to_json(const struct strvec *sv)
{
	json_t *a = json_array();

	for (size_t i = 0; i < sv->nr; i++)
		jpush(a, jstr(sv->v[i]));
	return a;
}

static json_t *value_to_json(const struct inv_field *f, const void *obj, const struct inv_scope *s)
{
	const void *p = cmember(obj, f->offset);
	char text[INV_DERIVED_TEXT];
	int64_t n;

	switch (f->type) {
	case INV_STRING:
		return jstr(*(const char *const *)p);
	case INV_INT:
		if (f->flags & INV_MBPS_AS_GBPS)
			return jgbps(*(const int64_t *)p);
		return jint_known(*(const int64_t *)p);
	case INV_INT32:
		return jint_known(*(const int *)p);
	case INV_UINT:
		return jint(*(const unsigned *)p);
	case INV_TRI:
		return jtri(*(const int *)p);
	case INV_LIMIT:
		n = *(const int64_t *)p;
		return n == INV_UNLIMITED ? jstr("unlimited") : jint_known(n);
	case INV_ENUM:
		return jstr(enum_name(f->names, *(const int *)p));
	case INV_GID:
		format_gid(p, text);
		return jstr(text);
	case INV_STRVEC:
		return strvec_to_json(p);
	case INV_CONST:
		return jint(f->min);
	case INV_OBJECT:
		return object_to_json(f->desc, p, s);
	case INV_OPTIONAL:
		if (!*(const void *const *)p)
			return json_null();
		return object_to_json(f->desc, *(const void *const *)p, s);
	case INV_ARRAY:
		return array_to_json(f, obj, s);
	case INV_MAP:
		return map_to_json(f, obj, s);
	case INV_DERIVED_STRING:
		return jstr(f->derive.str(s, text));
	case INV_DERIVED_INT:
		if (f->flags & INV_MBPS_AS_GBPS)
			return jgbps(f->derive.num(s));
		return jint_known(f->derive.num(s));
	case INV_DERIVED_TRI:
		return jtri(f->derive.tri(s));
	case INV_DERIVED_BOOL:
		return jbool(f->derive.flag(s));
	case INV_NAME:
	case INV_TAG:
	case INV_INLINE:
		break;
	}
	abort(); /* rows of these types are not values */
}

static void fields_to_json(json_t *o, const struct inv_desc *d, const void *obj,
			   const struct inv_scope *s)
{
	for (size_t i = 0; i < d->nr_fields; i++) {
		const struct inv_field *f = &d->fields[i];
		if (f->type == INV_INLINE) {
			const void *inner = cmember(obj, f->offset);
			struct inv_scope in = { s->inv, s->outer, inner };
			fields_to_json(o, f->desc, inner, &in);
		} else if (f->type != INV_NAME && f->type != INV_TAG) {
			jset(o, f->key, value_to_json(f, obj, s));
		}
	}
}

json_t *inv_fields_to_json(const struct inv_desc *d, const void *obj, const struct inventory *inv)
{
	struct inv_scope top = { inv, NULL, obj };
	json_t *o = json_object();

	fields_to_json(o, d, obj, &top);
	return o;
}

/* ---- reading ---------------------------------------------------------------- */

/* Reading context: err collects the message; path names the object being read. */
struct reader {
	struct strbuf *err;
	struct strbuf path;
};

/* Push a path component ("ports[1]", "gpu"); returns the length to pop back to. */
static size_t enter(struct reader *rd, const char *fmt, ...) ATTR_PRINTF(2, 3);
static size_t enter(struct reader *rd, const char *fmt, ...)
{
	size_t len = rd->path.len;
	va_list ap;

	if (len && fmt[0] != '[')
		strbuf_addch(&rd->path, '.');
	va_start(ap, fmt);
	strbuf_vaddf(&rd->path, fmt, ap);
	va_end(ap);
	return len;
}

static void leave(struct reader *rd, size_t len)
{
	strbuf_setlen(&rd->path, len);
}

/* "path.key: what"; key "" names the object itself. */
static int bad(struct reader *rd, const char *key, const char *what)
{
	/* The path holds the document's keys: escaped, as every part of a message from input. */
	strbuf_addstr_printable(rd->err, rd->path.buf);
	strbuf_addstr(rd->err, *rd->path.buf && *key ? "." : "");
	strbuf_addstr_printable(rd->err, key);
	strbuf_addf(rd->err, ": %s", what);
	return -EINVAL;
}

static int bad_enum(struct reader *rd, const char *key, const struct inv_enum_name *names)
{
	struct strbuf what = STRBUF_INIT;
	int r;

	strbuf_addstr(&what, "expected ");
	for (; names->name; names++)
		strbuf_addf(&what, "\"%s\", ", names->name);
	strbuf_setlen(&what, what.len - 2);
	strbuf_addstr(&what, " or null");
	r = bad(rd, key, what.buf);
	strbuf_release(&what);
	return r;
}

/* A required value is missing: the row's message, else the type's. */
static int check_required(struct reader *rd, const struct inv_field *f, const char *key,
			  bool missing, const char *type_message)
{
	if ((f->flags & INV_REQUIRED) && missing)
		return bad(rd, key, f->message ? f->message : type_message);
	return 0;
}

/* A number of Gb/s (null: unknown) as whole Mb/s. */
static int read_gbps(struct reader *rd, const char *key, const json_t *v, int64_t *ret)
{
	*ret = INV_UNKNOWN;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_number(v) || json_number_value(v) < 0)
		return bad(rd, key, "expected a non-negative number of Gb/s or null");
	*ret = llround(json_number_value(v) * 1000.0);
	return 0;
}

/* The integer kinds: int64_t, an int, an unsigned within bounds. */
static int read_number(struct reader *rd, const struct inv_field *f, const char *key,
		       const json_t *v, void *p)
{
	int64_t n;
	int r = jval_int(v, rd->path.buf, key, &n, rd->err);

	if (r < 0)
		return r;
	switch (f->type) {
	case INV_INT32:
		if (n > INT_MAX)
			return bad(rd, key, "value too large");
		*(int *)p = (int)n;
		break;
	case INV_UINT:
		if (n < f->min || n > f->max)
			return bad(rd, key, f->message);
		*(unsigned *)p = (unsigned)n;
		break;
	default:
		*(int64_t *)p = n;
		break;
	}
	return check_required(rd, f, key, n < 0, "expected a non-negative integer");
}

static int read_limit(struct reader *rd, const char *key, const json_t *v, int64_t *ret)
{
	if (json_is_string(v) && streq(json_string_value(v), "unlimited")) {
		*ret = INV_UNLIMITED;
		return 0;
	}
	if (json_is_string(v))
		return bad(rd, key, "expected a number of bytes, \"unlimited\" or null");
	return jval_int(v, rd->path.buf, key, ret, rd->err);
}

static int read_enum(struct reader *rd, const struct inv_field *f, const char *key, const json_t *v,
		     int *ret)
{
	*ret = -1;
	if (!v || json_is_null(v))
		return 0;
	for (const struct inv_enum_name *n = f->names; n->name; n++) {
		if (streq(json_string_value(v), n->name)) {
			*ret = n->value;
			return 0;
		}
	}
	return bad_enum(rd, key, f->names);
}

static int read_gid(struct reader *rd, const struct inv_field *f, const char *key, const json_t *v,
		    uint8_t *raw)
{
	const char *text = json_string_value(v);

	if (v && !json_is_null(v) && !text)
		return bad(rd, key, "expected a string");
	if (!text || parse_gid(text, raw) < 0)
		return bad(rd, key, f->message);
	return 0;
}

static int read_strvec(struct reader *rd, const char *key, const json_t *v, struct strvec *sv)
{
	const json_t *a;
	int r = jval_array(v, rd->path.buf, key, &a, rd->err);

	for (size_t i = 0; r == 0 && a && i < json_array_size(a); i++) {
		const char *s = json_string_value(json_array_get(a, i));
		if (!s)
			return bad(rd, key, "expected an array of strings");
		strvec_push(sv, s);
	}
	return r;
}

static int fields_from_json(struct reader *rd, const struct inv_desc *d, const json_t *o,
			    void *obj);

static int object_from_json(struct reader *rd, const struct inv_field *f, const char *key,
			    const json_t *v, void *p)
{
	const json_t *o;
	size_t mark;
	int r = jval_object(v, rd->path.buf, key, &o, rd->err);

	if (r < 0)
		return r;
	/* A missing object reads as an empty one: everything in it unknown. */
	mark = enter(rd, "%s", key);
	r = fields_from_json(rd, f->desc, o, p);
	leave(rd, mark);
	return r;
}

/* A missing or null value leaves the pointer NULL; an object is read into a new struct. */
static int optional_from_json(struct reader *rd, const struct inv_field *f, const char *key,
			      const json_t *v, void *p)
{
	void *obj;

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return bad(rd, key, "expected an object or null");
	obj = xcalloc(1, f->desc->size);
	inv_fields_init(f->desc, obj);
	*(void **)p = obj;
	return object_from_json(rd, f, key, v, obj);
}

static void *push_element(const struct inv_field *f, void *obj)
{
	void *elem = array_push(elements(f, obj), count(f, obj), f->desc->size);
	const struct inv_field *t = tag_row(f->desc);

	inv_fields_init(f->desc, elem);
	if (t)
		*(int *)member(elem, t->offset) = f->tag;
	return elem;
}

static int array_from_json(struct reader *rd, const struct inv_field *f, const char *key,
			   const json_t *v, void *obj)
{
	const json_t *a;
	int r = jval_array(v, rd->path.buf, key, &a, rd->err);

	for (size_t i = 0; r == 0 && a && i < json_array_size(a); i++) {
		const json_t *e = json_array_get(a, i);
		void *elem = push_element(f, obj);
		size_t err_len = rd->err->len, mark = enter(rd, "%s[%zu]", key, i);
		r = json_is_object(e) ? fields_from_json(rd, f->desc, e, elem)
				      : bad(rd, "", "expected an object");
		leave(rd, mark);
		if (r < 0 && f->message) {
			/* The row names the entries' format rather than the fault. */
			strbuf_setlen(rd->err, err_len);
			r = bad(rd, key, f->message);
		}
	}
	return r;
}

static int value_from_json(struct reader *rd, const struct inv_field *f, const char *key,
			   const json_t *v, void *obj);

static int map_from_json(struct reader *rd, const struct inv_field *f, const char *key,
			 const json_t *v, void *obj)
{
	const struct inv_field *kf = &f->desc->fields[0], *vf = &f->desc->fields[f->value];
	const json_t *m;
	const char *name;
	json_t *val;
	size_t mark;
	int r = jval_object(v, rd->path.buf, key, &m, rd->err);

	if (r < 0)
		return r;
	mark = enter(rd, "%s", key);
	if (f->keys) {
		/* The same entries whatever the document holds: its other keys are ignored. */
		bool fill = *count(f, obj) == 0;
		for (size_t i = 0; fill && f->keys[i]; i++)
			*(const char **)member(push_element(f, obj), kf->offset) = f->keys[i];
		for (size_t i = 0; r == 0 && i < *count(f, obj); i++) {
			void *elem = (char *)*elements(f, obj) + i * f->desc->size;
			name = *(const char **)member(elem, kf->offset);
			r = value_from_json(rd, vf, name, json_object_get(m, name), elem);
		}
	} else if (m) {
		json_object_foreach((json_t *)m, name, val)
		{
			void *elem = push_element(f, obj);
			*(char **)member(elem, kf->offset) = xstrdup(name);
			if ((r = value_from_json(rd, vf, name, val, elem)) < 0) {
				/* A bad entry is not added. */
				inv_fields_release(f->desc, elem);
				(*count(f, obj))--;
				break;
			}
		}
	}
	leave(rd, mark);
	return r;
}

/* Read v, the value of key (NULL when missing), into the row f of the struct at obj. */
static int value_from_json(struct reader *rd, const struct inv_field *f, const char *key,
			   const json_t *v, void *obj)
{
	void *p = member(obj, f->offset);
	int r;

	switch (f->type) {
	case INV_STRING:
		if ((r = jval_str(v, rd->path.buf, key, p, rd->err)) < 0)
			return r;
		return check_required(rd, f, key, !*(char **)p, "expected a string");
	case INV_INT:
		/* Gb/s under the key of today, integer Mb/s under version 1's. */
		if ((f->flags & INV_MBPS_AS_GBPS) && key == f->key)
			return read_gbps(rd, key, v, p);
		return read_number(rd, f, key, v, p);
	case INV_INT32:
	case INV_UINT:
		return read_number(rd, f, key, v, p);
	case INV_TRI:
		return jval_tri(v, rd->path.buf, key, p, rd->err);
	case INV_LIMIT:
		return read_limit(rd, key, v, p);
	case INV_ENUM:
		return read_enum(rd, f, key, v, p);
	case INV_GID:
		return read_gid(rd, f, key, v, p);
	case INV_STRVEC:
		return read_strvec(rd, key, v, p);
	case INV_OBJECT:
		return object_from_json(rd, f, key, v, p);
	case INV_OPTIONAL:
		return optional_from_json(rd, f, key, v, p);
	case INV_ARRAY:
		return array_from_json(rd, f, key, v, obj);
	case INV_MAP:
		return map_from_json(rd, f, key, v, obj);
	default:
		return 0; /* not read back: see is_read() */
	}
}

/* The rows read back: those that are values of this object, and not derived. */
static bool is_read(const struct inv_field *f)
{
	switch (f->type) {
	case INV_NAME:
	case INV_TAG:
	case INV_CONST:
	case INV_INLINE:
	case INV_DERIVED_STRING:
	case INV_DERIVED_INT:
	case INV_DERIVED_TRI:
	case INV_DERIVED_BOOL:
		return false;
	default:
		return !(f->flags & INV_WRITE_ONLY);
	}
}

/* The row f of o, under its key or, missing that, under its key of version 1. */
static int read_row(struct reader *rd, const struct inv_field *f, const json_t *o, void *obj)
{
	const json_t *v = json_object_get(o, f->key);

	if (!v && f->v1_key && (v = json_object_get(o, f->v1_key)))
		return value_from_json(rd, f, f->v1_key, v, obj);
	return value_from_json(rd, f, f->key, v, obj);
}

static int fields_from_json(struct reader *rd, const struct inv_desc *d, const json_t *o, void *obj)
{
	const char *key, *what;
	int r = 0;

	for (size_t i = 0; r == 0 && i < d->nr_fields; i++) {
		const struct inv_field *f = &d->fields[i];
		if (f->type == INV_INLINE)
			r = fields_from_json(rd, f->desc, o, member(obj, f->offset));
		else if (is_read(f))
			r = read_row(rd, f, o, obj);
	}
	if (r == 0 && d->check && (key = d->check(obj, &what)))
		r = bad(rd, key, what);
	return r;
}

int inv_fields_from_json(const struct inv_desc *d, const json_t *o, void *obj, struct strbuf *err)
{
	struct reader rd = { .err = err, .path = STRBUF_INIT };
	int r = fields_from_json(&rd, d, o, obj);

	strbuf_release(&rd.path);
	return r;
}
