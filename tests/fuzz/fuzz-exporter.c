/*
 * fuzz-exporter - the exporter's pure parts: the --listen parser, counter
 * parsing, the Prometheus text writer and the web-config parser.
 *
 * The first byte selects what is fuzzed, the rest is the input.  An
 * address that parses must format and parse back to itself; a label
 * value and a HELP text must come out of the writer escaped so that
 * unescaping the line gives the input back, on exactly one line; a
 * web-config is refused with one line and nothing kept, or accepted with
 * what the server needs (both TLS files or neither, bcrypt hashes, users
 * named once).
 */
#include "sparkctl.h"

#include "exporter/collect.h"
#include "exporter/http.h"
#include "exporter/metrics.h"
#include "exporter/web_config.h"
#include "fuzz.h"

enum target {
	T_LISTEN,
	T_COUNTER,
	T_WRITER,
	T_WEB_CONFIG,
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

static void web_config(const uint8_t *data, size_t size)
{
	struct web_config cfg;
	struct strbuf err = STRBUF_INIT;
	int r = web_config_parse((const char *)data, size, "/etc/w.yml", &cfg, &err);

	FUZZ_CHECK(r == 0 || r == -EINVAL);
	if (r < 0) {
		FUZZ_CHECK(err.len && !strchr(err.buf, '\n') && starts_with(err.buf, "/etc/w.yml"));
		FUZZ_CHECK(!cfg.cert_file && !cfg.key_file && !cfg.nr_users);
	} else {
		FUZZ_CHECK(!err.len);
		FUZZ_CHECK(!cfg.cert_file == !cfg.key_file && (cfg.cert_file || cfg.nr_users));
		FUZZ_CHECK(!cfg.cert_file || starts_with(cfg.cert_file, "/"));
		for (size_t i = 0; i < cfg.nr_users; i++) {
			FUZZ_CHECK(*cfg.users[i].name && !strchr(cfg.users[i].name, ':'));
			FUZZ_CHECK(web_config_is_bcrypt(cfg.users[i].hash));
			for (size_t j = 0; j < i; j++)
				FUZZ_CHECK(!streq(cfg.users[i].name, cfg.users[j].name));
		}
	}
	web_config_release(&cfg);
	strbuf_release(&err);
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
	case T_WRITER:
		writer(s);
		break;
	default:
		web_config(data + 1, size - 1);
		break;
	}
	free(s);
	return 0;
}
