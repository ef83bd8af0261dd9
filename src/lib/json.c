#include "sparkctl.h"

#include <math.h>

#include "lib/atomic_file.h"
#include "lib/json.h"
#include "lib/xalloc.h"

ATTR_NORETURN static void json_oom(void)
{
	fprintf(stderr, "sparkctl: out of memory building JSON\n");
	abort();
}

static json_t *checked(json_t *j)
{
	if (!j)
		json_oom();
	return j;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0 if invalid. */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2;
		cp = s[0] & 0x1fu;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = s[0] & 0x0fu;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4;
		cp = s[0] & 0x07u;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3fu);
	}
	/* Reject overlong forms, surrogates and values past U+10FFFF. */
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

/* s with every byte that is not valid UTF-8 replaced by U+FFFD; true if any was. */
static bool utf8_clean(const char *s, struct strbuf *out)
{
	size_t n = strlen(s);
	bool replaced = false;

	for (size_t i = 0; i < n;) {
		size_t len = utf8_seq_len((const unsigned char *)s + i, n - i);
		if (len) {
			strbuf_add(out, s + i, len);
			i += len;
		} else {
			strbuf_addstr(out, "\xef\xbf\xbd");
			replaced = true;
			i++;
		}
	}
	return replaced;
}

json_t *jstr(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *j;

	if (!s)
		return checked(json_null());
	utf8_clean(s, &sb);
	j = checked(json_stringn(sb.buf, sb.len));
	strbuf_release(&sb);
	return j;
}

json_t *jint_known(int64_t v)
{
	return checked(v < 0 ? json_null() : json_integer((json_int_t)v));
}

json_t *jint(int64_t v)
{
	return checked(json_integer((json_int_t)v));
}

double json_round_real(double v)
{
	char text[32];

	/*
	 * 15 significant digits: every decimal of 15 digits survives the trip
	 * through a double and back, so what is written is read back the same,
	 * and a computed 0.306 is not written 0.30599999999999999.
	 */
	if (!isfinite(v))
		return v;
	snprintf(text, sizeof(text), "%.*g", JSON_REAL_DIGITS, v);
	return strtod(text, NULL);
}

json_t *jreal(double v)
{
	return checked(isfinite(v) ? json_real(json_round_real(v)) : json_null());
}

json_t *jreal_rounded(double v, int decimals)
{
	char text[64];

	if (!isfinite(v))
		return checked(json_null());
	snprintf(text, sizeof(text), "%.*f", decimals, v);
	return jreal(strtod(text, NULL));
}

json_t *jtri(int t)
{
	return checked(t < 0 ? json_null() : json_boolean(t));
}

json_t *jbool(bool b)
{
	return checked(json_boolean(b));
}

void jset(json_t *obj, const char *key, json_t *value)
{
	struct strbuf clean = STRBUF_INIT;
	int r;

	if (!value)
		json_oom();
	/* A key from a file name or a value may hold bytes JSON cannot: as jstr() does. */
	if (utf8_clean(key, &clean))
		key = clean.buf;
	r = json_object_set_new(obj, key, value);
	strbuf_release(&clean);
	if (r < 0)
		json_oom();
}

void jpush(json_t *arr, json_t *value)
{
	if (!value || json_array_append_new(arr, value) < 0)
		json_oom();
}

/* Reals in their shortest form of at most 15 digits (json_round_real()). */
#define REAL_FLAGS JSON_REAL_PRECISION(JSON_REAL_DIGITS)
#define DUMP_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | REAL_FLAGS)

/*
 * jansson's text, with DEL and the C1 controls (U+0080-U+009F) as \u
 * escapes: jansson escapes only the C0 controls, and a terminal acts on
 * these too.  They occur only inside strings, where the escape means the
 * same character.
 */
static void add_json_text(struct strbuf *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *run = p;

	for (; *p; p++) {
		bool c1 = p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f;
		if (*p != 0x7f && !c1)
			continue;
		strbuf_add(out, run, (size_t)(p - run));
		strbuf_addf(out, "\\u00%02X", c1 ? *++p : *p);
		run = p + 1;
	}
	strbuf_add(out, run, (size_t)(p - run));
}

/*
 * Reals with 15 significant digits: every decimal of up to 15 digits comes
 * out as written (0.306, not jansson's default 0.30599999999999999).
 */
#define DUMP_REAL_PRECISION JSON_REAL_PRECISION(15)

static void dump(const json_t *j, size_t flags, struct strbuf *out)
{
	char *s = json_dumps(j, flags | DUMP_REAL_PRECISION);

	if (!s)
		json_oom();
	add_json_text(out, s);
	free(s);
}

int json_write(FILE *f, const json_t *j)
{
	struct strbuf text = STRBUF_INIT;
	int r = 0;

	json_to_strbuf(j, &text);
	if (fwrite(text.buf, 1, text.len, f) != text.len)
		r = -EIO;
	strbuf_release(&text);
	return r;
}

void json_to_strbuf(const json_t *j, struct strbuf *out)
{
	dump(j, DUMP_FLAGS, out);
	strbuf_addch(out, '\n');
}

void json_to_line(const json_t *j, struct strbuf *out)
{
	dump(j, JSON_COMPACT | JSON_ENSURE_ASCII | REAL_FLAGS, out);
}

int json_load_buffer(const char *buf, size_t len, const char *name, json_t **ret,
		     struct strbuf *err)
{
	json_error_t jerr;
	json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);

	if (!j) {
		/* jansson quotes the text near the error: the input's bytes, escaped here. */
		strbuf_addstr_printable(err, name);
		strbuf_addf(err, ":%d:%d: ", jerr.line, jerr.column);
		strbuf_addstr_printable(err, jerr.text);
		return -EINVAL;
	}
	if (!json_is_object(j)) {
		strbuf_addstr_printable(err, name);
		strbuf_addstr(err, ": expected a JSON object at the top level");
		json_decref(j);
		return -EINVAL;
	}
	*ret = j;
	return 0;
}

int json_load_path(const char *path, json_t **ret, struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT;
	bool is_stdin = streq(path, "-");
	const char *name = is_stdin ? "<stdin>" : path;
	int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	int r;

	if (fd < 0) {
		r = -errno;
		strbuf_addstr(err, "cannot open '");
		strbuf_addstr_printable(err, path);
		strbuf_addf(err, "': %s", strerror(-r));
		return r;
	}
	r = strbuf_read_fd(&text, fd, JSON_INPUT_MAX);
	if (!is_stdin)
		close(fd);
	if (r == -EFBIG) {
		strbuf_addstr_printable(err, name);
		strbuf_addf(err, ": larger than %zu MiB", JSON_INPUT_MAX >> 20);
	} else if (r < 0) {
		strbuf_addstr(err, "cannot read '");
		strbuf_addstr_printable(err, name);
		strbuf_addf(err, "': %s", strerror(-r));
	} else {
		r = json_load_buffer(text.buf, text.len, name, ret, err);
	}
	strbuf_release(&text);
	return r;
}

/* ctx and key may be the document's own keys: escaped. */
static int type_error(const char *ctx, const char *key, const char *what, struct strbuf *err)
{
	strbuf_addstr_printable(err, ctx ? ctx : "");
	strbuf_addstr(err, ctx && *ctx ? "." : "");
	strbuf_addstr_printable(err, key);
	strbuf_addf(err, ": expected %s", what);
	return -EINVAL;
}

int jval_str(const json_t *v, const char *ctx, const char *key, char **ret, struct strbuf *err)
{
	*ret = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return type_error(ctx, key, "a string", err);
	*ret = xstrdup(json_string_value(v));
	return 0;
}

int jval_int(const json_t *v, const char *ctx, const char *key, int64_t *ret, struct strbuf *err)
{
	*ret = -1;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return type_error(ctx, key, "a non-negative integer", err);
	*ret = (int64_t)json_integer_value(v);
	return 0;
}

int jval_tri(const json_t *v, const char *ctx, const char *key, int *ret, struct strbuf *err)
{
	*ret = -1;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_boolean(v))
		return type_error(ctx, key, "true, false or null", err);
	*ret = json_is_true(v) ? 1 : 0;
	return 0;
}

int jval_array(const json_t *v, const char *ctx, const char *key, const json_t **ret,
	       struct strbuf *err)
{
	*ret = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v))
		return type_error(ctx, key, "an array", err);
	*ret = v;
	return 0;
}

int jval_object(const json_t *v, const char *ctx, const char *key, const json_t **ret,
		struct strbuf *err)
{
	*ret = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return type_error(ctx, key, "an object", err);
	*ret = v;
	return 0;
}

int jget_str(const json_t *obj, const char *ctx, const char *key, char **ret, struct strbuf *err)
{
	return jval_str(json_object_get(obj, key), ctx, key, ret, err);
}

int jget_int(const json_t *obj, const char *ctx, const char *key, int64_t *ret, struct strbuf *err)
{
	return jval_int(json_object_get(obj, key), ctx, key, ret, err);
}

int jget_tri(const json_t *obj, const char *ctx, const char *key, int *ret, struct strbuf *err)
{
	return jval_tri(json_object_get(obj, key), ctx, key, ret, err);
}

int jget_array(const json_t *obj, const char *ctx, const char *key, const json_t **ret,
	       struct strbuf *err)
{
	return jval_array(json_object_get(obj, key), ctx, key, ret, err);
}

int jget_object(const json_t *obj, const char *ctx, const char *key, const json_t **ret,
		struct strbuf *err)
{
	return jval_object(json_object_get(obj, key), ctx, key, ret, err);
}

int json_save(const json_t *j, const char *path, struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT, dir = STRBUF_INIT;
	const char *slash = strrchr(path, '/');
	int dirfd, r;

	json_to_strbuf(j, &text); /* ends with its newline */
	if (streq(path, "-")) {
		r = fwrite(text.buf, 1, text.len, stdout) == text.len && fflush(stdout) == 0 ? 0
											     : -EIO;
		if (r < 0)
			strbuf_addstr(err, "cannot write the JSON to standard output");
		goto out;
	}
	if (slash)
		strbuf_add(&dir, path, slash == path ? 1 : (size_t)(slash - path));
	else
		strbuf_addch(&dir, '.');
	dirfd = open(dir.buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		r = -errno;
		strbuf_addf(err, "cannot open %s: %s", dir.buf, strerror(errno));
		goto out;
	}
	r = atomic_replace(dirfd, slash ? slash + 1 : path, text.buf, text.len, 0644, NULL, err);
	close(dirfd);
out:
	strbuf_release(&text);
	strbuf_release(&dir);
	return r;
}
