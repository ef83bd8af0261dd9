/* Unit tests of src/lib: strbuf, strvec, numbers, options, suggestions, JSON helpers. */
#include "sparkctl.h"

#include <fcntl.h>
#include <signal.h>

#include "test_util.h"

#include "lib/json.h"
#include "lib/options.h"
#include "lib/parse.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "lib/suggest.h"
#include "lib/xalloc.h"

static void strbuf_basics(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.len, 0);
	strbuf_add_hex(&sb, "", 0);
	assert_string_equal(sb.buf, "");
	strbuf_add_hex(&sb, "\x00\x0f\xa5\xff", 4);
	assert_string_equal(sb.buf, "000fa5ff");
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "abc");
	strbuf_addch(&sb, 'd');
	strbuf_addf(&sb, "-%d-%s", 42, "x");
	assert_string_equal(sb.buf, "abcd-42-x");
	assert_int_equal(sb.len, 9);
	/* Growth across many appends keeps the content. */
	for (int i = 0; i < 1000; i++)
		strbuf_addf(&sb, "%04d", i);
	assert_int_equal(sb.len, 9 + 4000);
	assert_memory_equal(sb.buf + 9 + 4 * 999, "0999", 4);
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "  x y \n\t");
	strbuf_trim(&sb);
	assert_string_equal(sb.buf, "x y");
	size_t len;
	char *s = strbuf_detach(&sb, &len);
	assert_string_equal(s, "x y");
	assert_int_equal(len, 3);
	assert_string_equal(sb.buf, "");
	free(s);
	/* Detaching an empty strbuf still returns an allocated string. */
	s = strbuf_detach(&sb, NULL);
	assert_string_equal(s, "");
	free(s);
	strbuf_addchars(&sb, '-', 3);
	assert_string_equal(sb.buf, "---");
	strbuf_release(&sb);
}

/* strbuf_add_printable() of s (NUL-terminated) with flags. */
static void printable_is(const char *s, unsigned flags, const char *want)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_add_printable(&sb, s, strlen(s), flags);
	assert_string_equal(sb.buf, want);
	assert_int_equal(str_is_printable(s, strlen(s), flags), streq(s, want));
	strbuf_release(&sb);
}

/* What a full pipe does not take stays in the buffer, in order; a closed one is an error. */
static void write_pending(void **state)
{
	struct strbuf sb = STRBUF_INIT, got = STRBUF_INIT;
	int fds[2];
	size_t total = 200000; /* more than a pipe holds (64 KiB by default) */

	(void)state;
	assert_int_equal(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
	for (size_t i = 0; i < total; i++)
		strbuf_addch(&sb, 'a' + (int)(i % 26));
	assert_int_equal(strbuf_write_pending(&sb, fds[1]), 0);
	assert_true(sb.len > 0 && sb.len < total);
	/* What is left starts where the pipe stopped taking it. */
	assert_int_equal(sb.buf[0], 'a' + (int)((total - sb.len) % 26));
	while (sb.len) {
		char buf[65536];
		ssize_t n = read(fds[0], buf, sizeof(buf));
		assert_true(n > 0);
		strbuf_add(&got, buf, (size_t)n);
		assert_int_equal(strbuf_write_pending(&sb, fds[1]), 0);
	}
	for (;;) {
		char buf[65536];
		ssize_t n = read(fds[0], buf, sizeof(buf));
		if (n <= 0)
			break;
		strbuf_add(&got, buf, (size_t)n);
	}
	assert_int_equal(got.len, total);
	for (size_t i = 0; i < total; i++)
		assert_int_equal(got.buf[i], 'a' + (int)(i % 26));
	/* Nothing pending: nothing written, 0. */
	assert_int_equal(strbuf_write_pending(&sb, fds[1]), 0);
	/* The reader gone: -EPIPE (SIGPIPE ignored, as the launcher has it), the buffer kept. */
	close(fds[0]);
	signal(SIGPIPE, SIG_IGN);
	strbuf_addstr(&sb, "lost");
	assert_int_equal(strbuf_write_pending(&sb, fds[1]), -EPIPE);
	assert_string_equal(sb.buf, "lost");
	signal(SIGPIPE, SIG_DFL);
	close(fds[1]);
	strbuf_release(&sb);
	strbuf_release(&got);
}

static void printable(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	/* Plain text and printable UTF-8 pass unchanged; a backslash is not doubled. */
	printable_is("spark-01 eth0 /x\\y", 0, "spark-01 eth0 /x\\y");
	printable_is("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc2\xa0", 0,
		     "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc2\xa0");
	/* C0 controls, DEL: an OSC title, a CSI colour, BEL. */
	printable_is("\033]0;PWNED\007\033[31mRED\177", 0, "\\x1b]0;PWNED\\x07\\x1b[31mRED\\x7f");
	printable_is("a\tb\nc\rd", 0, "a\\x09b\\x0ac\\x0dd");
	/* Multi-line text keeps its newlines and tabs, nothing else. */
	printable_is("a\tb\nc\rd\033", PRINTABLE_LINES, "a\tb\nc\\x0dd\\x1b");
	/* The C1 controls U+0080-U+009F (CSI is U+009B): both bytes. */
	printable_is("\xc2\x9b"
		     "31m\xc2\x80\xc2\x9f",
		     0,
		     "\\xc2\\x9b"
		     "31m\\xc2\\x80\\xc2\\x9f");
	/* Not UTF-8: lone continuation and lead bytes, overlong forms, surrogates, > U+10FFFF. */
	printable_is("\x80\xff\xfe", 0, "\\x80\\xff\\xfe");
	printable_is("\xc3(", 0, "\\xc3(");
	printable_is("\xc0\xaf\xe0\x80\xaf", 0, "\\xc0\\xaf\\xe0\\x80\\xaf");
	printable_is("\xed\xa0\x80", 0, "\\xed\\xa0\\x80");
	printable_is("\xf4\x90\x80\x80", 0, "\\xf4\\x90\\x80\\x80");
	printable_is("\xe2\x82", 0, "\\xe2\\x82"); /* cut short */
	/* One byte, one column. */
	printable_is("caf\xc3\xa9", PRINTABLE_ASCII, "caf\\xc3\\xa9");
	/* Escaping twice changes nothing. */
	strbuf_add_printable(&sb, "x\033y\xff", 4, 0);
	assert_true(str_is_printable(sb.buf, sb.len, 0));
	/* A NUL inside the length is escaped too. */
	strbuf_reset(&sb);
	strbuf_add_printable(&sb, "a\0b", 3, 0);
	assert_string_equal(sb.buf, "a\\x00b");
	strbuf_reset(&sb);
	strbuf_addstr_printable(&sb, "\033c");
	assert_string_equal(sb.buf, "\\x1bc");
	strbuf_release(&sb);
}

static void strvec_basics(void **state)
{
	struct strvec sv = STRVEC_INIT;

	(void)state;
	assert_null(sv.v[0]);
	strvec_push(&sv, "b");
	strvec_pushf(&sv, "%s", "c");
	strvec_push(&sv, "a");
	strvec_sort(&sv);
	assert_string_equal(sv.v[0], "a");
	assert_string_equal(sv.v[2], "c");
	assert_null(sv.v[3]);
	assert_true(strvec_contains(&sv, "b"));
	assert_false(strvec_contains(&sv, "d"));
	for (int i = 0; i < 100; i++)
		strvec_pushf(&sv, "%d", i);
	assert_int_equal(sv.nr, 103);
	assert_null(sv.v[103]);
	strvec_clear(&sv);
	assert_int_equal(sv.nr, 0);
}

static void array_growth(void **state)
{
	int *arr = NULL;
	size_t nr = 0;

	(void)state;
	for (int i = 0; i < 1000; i++)
		*ARRAY_PUSH(arr, nr) = i;
	assert_int_equal(nr, 1000);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(arr[i], i);
	free(arr);
}

static void numbers(void **state)
{
	uint64_t u;
	int64_t i;
	int n;
	uint32_t u32;

	(void)state;
	assert_int_equal(parse_u64("18446744073709551615", &u), 0);
	assert_true(u == UINT64_MAX);
	assert_int_equal(parse_u64("18446744073709551616", &u), -ERANGE);
	assert_int_equal(parse_u64("", &u), -EINVAL);
	assert_int_equal(parse_u64(" 1", &u), -EINVAL);
	assert_int_equal(parse_u64("1 ", &u), -EINVAL);
	assert_int_equal(parse_u64("-1", &u), -EINVAL);
	assert_int_equal(parse_u64("+1", &u), -EINVAL);
	assert_int_equal(parse_i64("-9223372036854775808", &i), 0);
	assert_true(i == INT64_MIN);
	assert_int_equal(parse_i64("9223372036854775808", &i), -ERANGE);
	assert_int_equal(parse_int("-5", &n), 0);
	assert_int_equal(n, -5);
	assert_int_equal(parse_int("2147483648", &n), -ERANGE);
	assert_int_equal(parse_u32("4294967296", &u32), -ERANGE);
	assert_int_equal(parse_u64_hex("0x15b3", &u), 0);
	assert_int_equal(u, 0x15b3);
	assert_int_equal(parse_u64_hex("ffffffffffffffff", &u), 0);
	assert_int_equal(parse_u64_hex("1ffffffffffffffff", &u), -ERANGE);
	assert_int_equal(parse_u64_hex("0x", &u), -EINVAL);
	assert_int_equal(parse_u64_hex("0xg", &u), -EINVAL);
	assert_int_equal(parse_milli("32.0", &u), 0);
	assert_int_equal(u, 32000);
	assert_int_equal(parse_milli("2.5", &u), 0);
	assert_int_equal(u, 2500);
	assert_int_equal(parse_milli("0.125", &u), 0);
	assert_int_equal(u, 125);
	assert_int_equal(parse_milli("1.", &u), -EINVAL);
	assert_int_equal(parse_milli(".5", &u), -EINVAL);
	assert_int_equal(parse_milli("1.0001", &u), -EINVAL);
}

/*
 * A mutable argv from string literals.  options_parse() reorders the
 * pointers, so it gets a copy of the array; sv keeps owning the strings.
 */
static char **argv_copy;

static char **make_argv(struct strvec *sv, int *argc, ...)
{
	va_list ap;
	const char *s;

	strvec_clear(sv);
	va_start(ap, argc);
	while ((s = va_arg(ap, const char *)))
		strvec_push(sv, s);
	va_end(ap);
	*argc = (int)sv->nr;
	free(argv_copy);
	argv_copy = xcalloc(sv->nr + 1, sizeof(char *));
	memcpy(argv_copy, sv->v, sv->nr * sizeof(char *));
	return argv_copy;
}

static void options(void **state)
{
	bool json = false, verbose = false;
	const char *root = NULL;
	unsigned count = 0;
	struct strvec envs = STRVEC_INIT;
	const struct opt opts[] = {
		OPT_BOOL(0, "json", &json, "json"),
		OPT_BOOL('v', "verbose", &verbose, "more"),
		OPT_STRING(0, "root", &root, "DIR", "root"),
		OPT_UINT('n', "count", &count, "N", "count"),
		OPT_LIST('e', "env", &envs, "K=V", "env"),
		OPT_HELP(),
		OPT_END(),
	};
	struct strbuf err = STRBUF_INIT;
	struct strvec sv = STRVEC_INIT;
	int argc;
	char **argv = make_argv(&sv, &argc, "cmd", "a", "--json", "-vn3", "--root=/x", "-e", "A=1",
				"b", "--env", "B=2", "--", "--json", NULL);

	(void)state;
	int n = options_parse(opts, argc, argv, &err);
	assert_int_equal(argc, 12);
	assert_int_equal(n, 3);
	assert_string_equal(argv[1], "a");
	assert_string_equal(argv[2], "b");
	assert_string_equal(argv[3], "--json");
	assert_true(json);
	assert_true(verbose);
	assert_int_equal(count, 3);
	assert_string_equal(root, "/x");
	assert_int_equal(envs.nr, 2);
	assert_string_equal(envs.v[1], "B=2");

	argv = make_argv(&sv, &argc, "cmd", "--jsn", NULL);
	assert_int_equal(options_parse(opts, argc, argv, &err), -EINVAL);
	assert_string_equal(err.buf, "unknown option '--jsn'; did you mean '--json'?");
	strbuf_reset(&err);
	argv = make_argv(&sv, &argc, "cmd", "--root", NULL);
	assert_int_equal(options_parse(opts, argc, argv, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "requires a value"));
	strbuf_reset(&err);
	argv = make_argv(&sv, &argc, "cmd", "-n", "x", NULL);
	assert_int_equal(options_parse(opts, argc, argv, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "expects a non-negative integer"));
	strbuf_reset(&err);
	argv = make_argv(&sv, &argc, "cmd", "--json=yes", NULL);
	assert_int_equal(options_parse(opts, argc, argv, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "takes no value"));
	strbuf_reset(&err);
	argv = make_argv(&sv, &argc, "cmd", "-z", NULL);
	assert_int_equal(options_parse(opts, argc, argv, &err), -EINVAL);
	strbuf_reset(&err);
	/* -h asks for the help, unless something else is wrong. */
	argv = make_argv(&sv, &argc, "cmd", "a", "-vh", NULL);
	assert_int_equal(options_parse(opts, argc, argv, &err), OPTIONS_HELP);
	argv = make_argv(&sv, &argc, "cmd", "--help", "--jsn", NULL);
	assert_int_equal(options_parse(opts, argc, argv, &err), -EINVAL);
	strbuf_reset(&err);

	struct strbuf help_text = STRBUF_INIT;
	const char *const usage[] = { "cmd [--json]", NULL };
	options_help(&help_text, usage, "Does things.", opts);
	assert_non_null(strstr(help_text.buf, "usage: cmd [--json]\n"));
	assert_non_null(strstr(help_text.buf, "  -n, --count N"));
	assert_non_null(strstr(help_text.buf, "  -h, --help"));
	strbuf_release(&help_text);
	strvec_clear(&envs);
	strvec_clear(&sv);
	free(argv_copy);
	argv_copy = NULL;
	strbuf_release(&err);
}

/* With OPT_OPERANDS_STOP the first operand ends the options: the rest is the command's. */
static void options_operands_stop(void **state)
{
	bool verbose = false;
	unsigned count = 0;
	const struct opt opts[] = {
		OPT_BOOL('v', "verbose", &verbose, "more"),
		OPT_UINT('n', "count", &count, "N", "count"),
		OPT_HELP(),
		OPT_OPERANDS_STOP(),
		OPT_END(),
	};
	struct strbuf err = STRBUF_INIT, help_text = STRBUF_INIT;
	struct strvec sv = STRVEC_INIT;
	int argc;
	char **argv = make_argv(&sv, &argc, "cmd", "-n", "2", "prog", "-n", "5", "-v", "--x", NULL);

	(void)state;
	assert_int_equal(options_parse(opts, argc, argv, &err), 5);
	assert_int_equal(count, 2);
	assert_false(verbose);
	assert_string_equal(argv[1], "prog");
	assert_string_equal(argv[2], "-n");
	assert_string_equal(argv[3], "5");
	assert_string_equal(argv[4], "-v");
	assert_string_equal(argv[5], "--x");
	/* "--" before the command is still allowed. */
	argv = make_argv(&sv, &argc, "cmd", "-v", "--", "-prog", NULL);
	assert_int_equal(options_parse(opts, argc, argv, &err), 1);
	assert_true(verbose);
	assert_string_equal(argv[1], "-prog");
	/* The marker is not an option: no line in the help. */
	options_help(&help_text, NULL, NULL, opts);
	assert_int_equal(strstr(help_text.buf, "-n, --count") != NULL, 1);
	assert_null(strstr(help_text.buf, "                        \n")); /* an empty entry */
	strbuf_release(&help_text);
	strbuf_release(&err);
	strvec_clear(&sv);
}

static void suggestions(void **state)
{
	const char *const names[] = { "topo", "capture", "help", "version" };

	(void)state;
	assert_int_equal(edit_distance("kitten", "sitting"), 3);
	assert_int_equal(edit_distance("", "abc"), 3);
	assert_int_equal(edit_distance("same", "same"), 0);
	assert_string_equal(suggest_nearest("tpo", names, 4), "topo");
	assert_string_equal(suggest_nearest("captur", names, 4), "capture");
	assert_string_equal(suggest_nearest("vers", names, 4), "version");
	assert_null(suggest_nearest("launchpad", names, 4));
}

static void json_helpers(void **state)
{
	struct strbuf sb = STRBUF_INIT, err = STRBUF_INIT;
	json_t *o = json_object(), *doc = NULL;

	(void)state;
	jset(o, "s", jstr("t\"ab\n"));
	jset(o, "null", jstr(NULL));
	jset(o, "unknown", jint_known(-1));
	jset(o, "n", jint_known(7));
	jset(o, "tri", jtri(-1));
	json_to_strbuf(o, &sb);
	assert_non_null(strstr(sb.buf, "\"s\": \"t\\\"ab\\n\""));
	assert_non_null(strstr(sb.buf, "\"unknown\": null"));
	assert_non_null(strstr(sb.buf, "\"tri\": null"));
	json_decref(o);
	/* No control character reaches the text raw: C0 (jansson), DEL and C1 (ours). */
	strbuf_reset(&sb);
	o = json_object();
	jset(o, "k\x7f",
	     jstr("\033[2J\x7f\xc2\x9b"
		  "1m\xc2\xa0\xc3\xa9"));
	json_to_strbuf(o, &sb);
	assert_string_equal(
		sb.buf, "{\n  \"k\\u007F\": \"\\u001B[2J\\u007F\\u009B1m\xc2\xa0\xc3\xa9\"\n}\n");
	strbuf_reset(&sb);
	json_to_line(o, &sb);
	assert_string_equal(sb.buf, "{\"k\\u007F\":\"\\u001B[2J\\u007F\\u009B1m\\u00A0\\u00E9\"}");
	json_decref(o);
	strbuf_reset(&sb);

	/* Syntax errors name the line and column. */
	const char *text = "{\n  \"a\": 1,\n  \"b\": ]\n}";
	assert_int_equal(json_load_buffer(text, strlen(text), "f.json", &doc, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "f.json:3:"));
	strbuf_reset(&err);
	assert_int_equal(json_load_buffer("", 0, "empty.json", &doc, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "empty.json:"));
	strbuf_reset(&err);
	assert_int_equal(json_load_path("/nonexistent/x.json", &doc, &err), -ENOENT);
	assert_non_null(strstr(err.buf, "cannot open '/nonexistent/x.json'"));
	/* The bytes jansson quotes from the input are escaped, and so is the name. */
	strbuf_reset(&err);
	text = "{\"a\": \033[31m}";
	assert_int_equal(json_load_buffer(text, strlen(text), "f\033.json", &doc, &err), -EINVAL);
	assert_string_equal(err.buf, "f\\x1b.json:1:7: invalid token near '\\x1b'");
	strbuf_reset(&err);
	text = "{\"a\": \"\xc2\x9b";
	assert_int_equal(json_load_buffer(text, strlen(text), "f.json", &doc, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "near '\"\\xc2\\x9b'"));
	strbuf_reset(&err);
	o = json_object();
	jset(o, "k\033", jstr("x"));
	int64_t n;
	assert_int_equal(jget_int(o, "a\033", "k\033", &n, &err), -EINVAL);
	assert_string_equal(err.buf, "a\\x1b.k\\x1b: expected a non-negative integer");
	json_decref(o);
	strbuf_release(&sb);
	strbuf_release(&err);
}

/* Reals: the shortest text that reads back as the value written, never 17 noisy digits. */
static void json_reals(void **state)
{
	static const struct {
		double v;
		const char *text;
	} cases[] = {
		{ 0.306, "0.306" },
		{ 0.1 + 0.2, "0.3" },
		{ 1.0 / 3.0, "0.333333333333333" },
		{ 2.0, "2.0" },
		{ 197.53, "197.53" },
		{ 1e-7, "1e-7" },
		{ 123456789012.5, "123456789012.5" },
		{ -0.5, "-0.5" },
	};
	struct strbuf sb = STRBUF_INIT, err = STRBUF_INIT;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		json_t *o = json_object(), *back = NULL;
		struct strbuf want = STRBUF_INIT;
		jset(o, "v", jreal(cases[i].v));
		strbuf_reset(&sb);
		json_to_line(o, &sb);
		strbuf_addf(&want, "{\"v\":%s}", cases[i].text);
		assert_string_equal(sb.buf, want.buf);
		/* What is written reads back as the double jreal() holds. */
		assert_int_equal(json_load_buffer(sb.buf, sb.len, "r", &back, &err), 0);
		assert_true(json_real_value(json_object_get(back, "v")) ==
			    json_real_value(json_object_get(o, "v")));
		assert_true(json_round_real(json_real_value(json_object_get(back, "v"))) ==
			    json_real_value(json_object_get(back, "v")));
		strbuf_reset(&sb);
		json_to_strbuf(o, &sb);
		strbuf_reset(&want);
		strbuf_addf(&want, "\"v\": %s\n", cases[i].text);
		assert_non_null(strstr(sb.buf, want.buf));
		json_decref(back);
		json_decref(o);
		strbuf_release(&want);
	}
	/* Rounded to the places a value was measured with. */
	json_t *o = json_object();
	jset(o, "r", jreal_rounded(0.30599999, 3));
	jset(o, "g", jreal_rounded(23.456789, 2));
	jset(o, "nan", jreal_rounded(0.0 / 0.0, 2));
	strbuf_reset(&sb);
	json_to_line(o, &sb);
	assert_string_equal(sb.buf, "{\"r\":0.306,\"g\":23.46,\"nan\":null}");
	json_decref(o);
	strbuf_release(&sb);
	strbuf_release(&err);
}

/* A saved document is the text json_to_strbuf() makes: one newline at its end, 0644. */
static void json_saving(void **state)
{
	char dir[] = "/tmp/sparkctl-json-XXXXXX", path[64];
	struct strbuf err = STRBUF_INIT, text = STRBUF_INIT, want = STRBUF_INIT;
	json_t *doc = json_object();
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/doc.json", dir);
	jset(doc, "schema_version", jint(1));
	assert_int_equal(json_save(doc, path, &err), 0);
	assert_int_equal(strbuf_read_path(&text, path, 4096), 0);
	json_to_strbuf(doc, &want);
	assert_string_equal(text.buf, want.buf);
	assert_true(text.len >= 2 && text.buf[text.len - 1] == '\n' &&
		    text.buf[text.len - 2] != '\n');
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	unlink(path);
	rmdir(dir);
	json_decref(doc);
	strbuf_release(&err);
	strbuf_release(&text);
	strbuf_release(&want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(strbuf_basics), cmocka_unit_test(printable),
		cmocka_unit_test(write_pending), cmocka_unit_test(strvec_basics),
		cmocka_unit_test(array_growth),	 cmocka_unit_test(numbers),
		cmocka_unit_test(options),	 cmocka_unit_test(options_operands_stop),
		cmocka_unit_test(suggestions),	 cmocka_unit_test(json_helpers),
		cmocka_unit_test(json_reals),	 cmocka_unit_test(json_saving),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
