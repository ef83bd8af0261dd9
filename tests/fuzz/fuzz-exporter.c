/*
 * fuzz-exporter - the exporter's pure parts: the --listen parser, counter
 * parsing, and the Prometheus text writer.
 *
 * The first byte selects what is fuzzed, the rest is the input.  An
 * address that parses must format and parse back to itself; a label
 * value and a HELP text must come out of the writer escaped so that
 * unescaping the line gives the input back, on exactly one line.
 */
#include "sparkctl.h"

#include "exporter/collect.h"
#include "exporter/http.h"
#include "exporter/metrics.h"
#include "fuzz.h"

enum target {
	T_LISTEN,
	T_COUNTER,
	T_WRITER,
	NR_TARGETS
};

static void listen_text(const char *s)
{
	struct sockaddr_storage a, b;
	struct strbuf out = STRBUF_INIT;
	socklen_t la, lb;

	if (http_parse_listen(s, &a, &la) < 0)
		return;
	http_format_addr((struct sockaddr *)&a, &out);
	FUZZ_CHECK(http_parse_listen(out.buf, &b, &lb) == 0);
	FUZZ_CHECK(la == lb && memcmp(&a, &b, la) == 0);
	strbuf_release(&out);
}

static void counter(const char *s)
{
	uint64_t v = 0;
	int r = exporter_parse_counter(s, &v);

	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENODATA);
	if (r == 0) {
		char buf[32];
		/* Decimal digits only; leading zeros are allowed. */
		while (s[0] == '0' && s[1])
			s++;
		snprintf(buf, sizeof(buf), "%" PRIu64, v);
		FUZZ_CHECK(streq(buf, s));
	}
}

/* Undo the writer's escaping of text[0..n): into out; false on a bad escape. */
static bool unescape(const char *text, size_t n, bool quotes, struct strbuf *out)
{
	for (size_t i = 0; i < n; i++) {
		if (text[i] != '\\') {
			if (quotes && text[i] == '"')
				return false;
			strbuf_addch(out, text[i]);
			continue;
		}
		if (++i == n)
			return false;
		if (text[i] == 'n')
			strbuf_addch(out, '\n');
		else if (text[i] == '\\' || (quotes && text[i] == '"'))
			strbuf_addch(out, text[i]);
		else
			return false;
	}
	return true;
}

static void writer(const char *s)
{
	struct metric_set set = METRIC_SET_INIT;
	struct strbuf out = STRBUF_INIT, got = STRBUF_INIT;
	const struct metric_label l[1] = { { "v", s } };
	const char *help, *nl, *sample, *end;

	FUZZ_CHECK(metric_add_u64(&set, "m_total", s, METRIC_COUNTER, l, 1, 7) == 0);
	FUZZ_CHECK(metric_add_u64(&set, "m_total", s, METRIC_COUNTER, l, 1, 8) == -EEXIST);
	FUZZ_CHECK(metric_add_u64(&set, s, "", METRIC_GAUGE, NULL, 0, 1) ==
		   (metric_name_valid(s) && !streq(s, "m_total") ? 0 : -EINVAL));
	metric_set_render(&set, &out);
	/* "# HELP m_total TEXT\n# TYPE m_total counter\nm_total{v="VALUE"} 7\n" first. */
	FUZZ_CHECK(starts_with(out.buf, "# HELP m_total "));
	help = out.buf + strlen("# HELP m_total ");
	nl = strchr(help, '\n');
	FUZZ_CHECK(nl && unescape(help, (size_t)(nl - help), false, &got) && streq(got.buf, s));
	FUZZ_CHECK(starts_with(nl + 1, "# TYPE m_total counter\nm_total{v=\""));
	sample = nl + 1 + strlen("# TYPE m_total counter\nm_total{v=\"");
	end = strchr(sample, '\n');
	FUZZ_CHECK(end && end - sample >= 4 && !strncmp(end - 4, "\"} 7", 4));
	strbuf_reset(&got);
	FUZZ_CHECK(unescape(sample, (size_t)(end - 4 - sample), true, &got) && streq(got.buf, s));
	metric_set_release(&set);
	strbuf_release(&out);
	strbuf_release(&got);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size < 1)
		return 0;
	s = fuzz_strndup(data + 1, size - 1);
	switch (data[0] % NR_TARGETS) {
	case T_LISTEN:
		listen_text(s);
		break;
	case T_COUNTER:
		counter(s);
		break;
	default:
		writer(s);
		break;
	}
	free(s);
	return 0;
}
