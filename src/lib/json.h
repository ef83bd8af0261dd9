/*
 * json.h - sparkctl's one way of writing and reading JSON, on jansson.
 *
 * Writing: build a json_t tree with the j*() constructors (which map
 * sparkctl's "unknown" conventions to null and never produce invalid
 * UTF-8), then json_write().  Never build JSON text by hand.
 *
 * Reading: json_load_path() parses a file or standard input with a size
 * limit and reports syntax errors as "FILE:LINE:COLUMN: message"; the
 * jget_*() accessors check types and name the offending field by path.
 */
#ifndef SPARKCTL_JSON_H
#define SPARKCTL_JSON_H

#include <jansson.h>

#include "sparkctl.h"
#include "lib/strbuf.h"

/* The largest JSON document sparkctl reads. */
#define JSON_INPUT_MAX ((size_t)64 * 1024 * 1024)

/* A string, or null when s is NULL.  Invalid UTF-8 bytes become U+FFFD. */
json_t *jstr(const char *s);
/* An integer, or null when v is negative (sparkctl's "unknown"). */
json_t *jint_known(int64_t v);
/* An integer. */
json_t *jint(int64_t v);
/*
 * Reals are written with at most JSON_REAL_DIGITS significant digits, in
 * the shortest form ("0.306", not "0.30599999999999999"): enough for any
 * measurement, and such a decimal reads back as the double it came from.
 */
#define JSON_REAL_DIGITS 15
/* v rounded to JSON_REAL_DIGITS significant digits: the double its JSON text reads back as. */
double json_round_real(double v);
/* A number, or null when v is not finite (JSON has no NaN or infinity). */
json_t *jreal(double v);
/* jreal() of v rounded to decimals places: a value known to that precision (a rate, a ratio). */
json_t *jreal_rounded(double v, int decimals);
/* true/false, or null when t is negative (unknown). */
json_t *jtri(int t);
json_t *jbool(bool b);
/* obj[key] = value; takes the reference.  Aborts on allocation failure. */
void jset(json_t *obj, const char *key, json_t *value);
/* Append value to arr; takes the reference. */
void jpush(json_t *arr, json_t *value);

/*
 * Save j as path, indented, with a final newline: "-" is stdout;
 * a file is replaced whole (mode 0644) or left as it was.  -errno and a
 * message in err on failure.
 */
int json_save(const json_t *j, const char *path, struct strbuf *err);
/*
 * Write j to f, indented by two spaces, with a final newline.  -EIO on
 * failure.  Every control character in a string (C0, DEL, C1) is a \u
 * escape in the text, here and below: JSON output is safe on a terminal.
 */
int json_write(FILE *f, const json_t *j);
/* The text of j, indented, with a final newline. */
void json_to_strbuf(const json_t *j, struct strbuf *out);

/*
 * Parse the JSON object in file path ("-" is standard input), at most
 * JSON_INPUT_MAX bytes.  On failure returns a negative errno and a
 * one-line message in err.
 */
/* j as compact JSON on one line, without a newline (a line protocol's message). */
void json_to_line(const json_t *j, struct strbuf *out);
int json_load_path(const char *path, json_t **ret, struct strbuf *err);
/* Parse the JSON object in buf; name is used in messages. */
int json_load_buffer(const char *buf, size_t len, const char *name, json_t **ret,
		     struct strbuf *err);

/*
 * Typed accessors.  ctx names the object for messages ("rdma_devices[2]").
 * A missing key or a null value is "unknown": strings become NULL,
 * integers -1, tri-states -1.  A value of the wrong type is an error:
 * -EINVAL with "ctx.key: expected ..." in err.
 */
int jget_str(const json_t *obj, const char *ctx, const char *key, char **ret, struct strbuf *err);
int jget_int(const json_t *obj, const char *ctx, const char *key, int64_t *ret, struct strbuf *err);
int jget_tri(const json_t *obj, const char *ctx, const char *key, int *ret, struct strbuf *err);
/* An array or object member; *ret is NULL when missing or null. */
int jget_array(const json_t *obj, const char *ctx, const char *key, const json_t **ret,
	       struct strbuf *err);
int jget_object(const json_t *obj, const char *ctx, const char *key, const json_t **ret,
		struct strbuf *err);
/* The same checks on a value already at hand (v: obj's member key, NULL when missing). */
int jval_str(const json_t *v, const char *ctx, const char *key, char **ret, struct strbuf *err);
int jval_int(const json_t *v, const char *ctx, const char *key, int64_t *ret, struct strbuf *err);
int jval_tri(const json_t *v, const char *ctx, const char *key, int *ret, struct strbuf *err);
int jval_array(const json_t *v, const char *ctx, const char *key, const json_t **ret,
	       struct strbuf *err);
int jval_object(const json_t *v, const char *ctx, const char *key, const json_t **ret,
		struct strbuf *err);

#endif
