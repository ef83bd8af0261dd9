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

json_t *jstr(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	size_t n;

	if (!s)
		return checked(json_null());
	n = strlen(s);
	for (size_t i = 0; i < n;) {
		size_t len = utf8_seq_len((const unsigned char *)s + i, n - i);
		if (len) {
			strbuf_add(&sb, s + i, len);
			i += len;
		} else {
			strbuf_addstr(&sb, "\xef\xbf\xbd");
			i++;
		}
	}
	json_t *j = checked(json_stringn(sb.buf, sb.len));
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

json_t *jreal(double v)
{
	return checked(isfinite(v) ? json_real(v) : json_null());
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
	if (!value || json_object_set_new(obj, key, value) < 0)
		json_oom();
}

void jpush(json_t *arr, json_t *value)
{
	if (!value || json_array_append_new(arr, value) < 0)
		json_oom();
}

#define DUMP_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER)

int json_write(FILE *f, const json_t *j)
{
	if (json_dumpf(j, f, DUMP_FLAGS) < 0 || fputc('\n', f) == EOF)
		return -EIO;
	return 0;
}

void json_to_strbuf(const json_t *j, struct strbuf *out)
{
	char *s = json_dumps(j, DUMP_FLAGS);

	if (!s)
		json_oom();
	strbuf_addstr(out, s);
	strbuf_addch(out, '\n');
	free(s);
}

void json_to_line(const json_t *j, struct strbuf *out)
{
	char *s = json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII);

	if (!s)
		json_oom();
	strbuf_addstr(out, s);
	free(s);
}

int json_load_buffer(const char *buf, size_t len, const char *name, json_t **ret,
		     struct strbuf *err)
{
	json_error_t jerr;
	json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);

	if (!j) {
		strbuf_addf(err, "%s:%d:%d: %s", name, jerr.line, jerr.column, jerr.text);
		return -EINVAL;
	}
	if (!json_is_object(j)) {
		strbuf_addf(err, "%s: expected a JSON object at the top level", name);
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
		strbuf_addf(err, "cannot open '%s': %s", path, strerror(-r));
		return r;
	}
	r = strbuf_read_fd(&text, fd, JSON_INPUT_MAX);
	if (!is_stdin)
		close(fd);
	if (r == -EFBIG)
		strbuf_addf(err, "%s: larger than %zu MiB", name, JSON_INPUT_MAX >> 20);
	else if (r < 0)
		strbuf_addf(err, "cannot read '%s': %s", name, strerror(-r));
	else
		r = json_load_buffer(text.buf, text.len, name, ret, err);
	strbuf_release(&text);
	return r;
}

static int type_error(const char *ctx, const char *key, const char *what, struct strbuf *err)
{
	strbuf_addf(err, "%s%s%s: expected %s", ctx ? ctx : "", ctx && *ctx ? "." : "", key, what);
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

	json_to_strbuf(j, &text);
	strbuf_addch(&text, '\n');
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
