#include "sparkctl.h"

#include <ctype.h>
#include <strings.h>

#include "lib/parse.h"
#include "lib/xalloc.h"
#include "remote/hosts.h"
#include "slurm/conf_scan.h"

void slurm_conf_scan_init(struct slurm_conf_scan *s, const char *node, slurm_include_reader read,
			  void *read_data)
{
	memset(s, 0, sizeof(*s));
	s->node = node;
	s->real_memory_mib = -1;
	s->default_real_memory_mib = -1;
	strvec_init(&s->problems);
	s->read = read;
	s->read_data = read_data;
}

void slurm_conf_scan_release(struct slurm_conf_scan *s)
{
	free(s->controller);
	free(s->munge_socket);
	strvec_clear(&s->problems);
	memset(s, 0, sizeof(*s));
}

static void problem(struct slurm_conf_scan *s, const char *path, size_t line, const char *what,
		    const char *value)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "%s:%zu: %s", path, line, what);
	if (value) {
		strbuf_addstr(&sb, " '");
		strbuf_add_printable(&sb, value, strnlen(value, 80), 0);
		strbuf_addch(&sb, '\'');
	}
	strvec_push_nodup(&s->problems, strbuf_detach(&sb, NULL));
}

/*
 * The words of one line, without its comment: whitespace separates them,
 * except inside double quotes (which are dropped); "\#" is a '#'.
 */
static void split_words(const char *line, size_t len, struct strvec *words)
{
	struct strbuf w = STRBUF_INIT;
	bool quoted = false, any = false;

	for (size_t i = 0; i < len; i++) {
		char c = line[i];
		if (c == '\\' && i + 1 < len && line[i + 1] == '#') {
			strbuf_addch(&w, '#');
			any = true;
			i++;
		} else if (c == '#' && !quoted) {
			break;
		} else if (c == '"') {
			quoted = !quoted;
			any = true;
		} else if (!quoted && isspace((unsigned char)c)) {
			if (any)
				strvec_push(words, w.buf);
			strbuf_reset(&w);
			any = false;
		} else {
			strbuf_addch(&w, c);
			any = true;
		}
	}
	if (any)
		strvec_push(words, w.buf);
	strbuf_release(&w);
}

/* The value of key in "key=value" (case-insensitive), or NULL. */
static const char *value_of(const char *word, const char *key)
{
	size_t n = strlen(key);

	return !strncasecmp(word, key, n) && word[n] == '=' ? word + n + 1 : NULL;
}

/* RealMemory=N among the words of a NodeName line: 1 with *mib, 0 when absent, -1 when bad. */
static int line_real_memory(const struct strvec *words, int64_t *mib, const char **bad)
{
	for (size_t i = 1; i < words->nr; i++) {
		const char *v = value_of(words->v[i], "RealMemory");
		uint64_t n;
		if (!v)
			continue;
		if (parse_u64(v, &n) < 0 || n > INT64_MAX / (1 << 20)) {
			*bad = v;
			return -1;
		}
		*mib = (int64_t)n;
		return 1;
	}
	return 0;
}

static void scan_node_line(struct slurm_conf_scan *s, const struct strvec *words, const char *names,
			   const char *path, size_t lineno)
{
	struct host_list list = { 0 };
	struct strbuf err = STRBUF_INIT;
	const char *bad = NULL;
	int64_t mib = -1;
	int r = line_real_memory(words, &mib, &bad);

	if (r < 0) {
		problem(s, path, lineno, "RealMemory is not a number of MiB:", bad);
		goto out;
	}
	if (!strcasecmp(names, "DEFAULT")) {
		if (r > 0)
			s->default_real_memory_mib = mib;
		goto out;
	}
	if (host_list_parse(names, &list, &err) < 0) {
		problem(s, path, lineno, "NodeName is not a hostlist:", names);
		goto out;
	}
	for (size_t i = 0; i < list.nr; i++) {
		if (strcasecmp(list.hosts[i].name, s->node) != 0)
			continue;
		s->listed = true;
		s->real_memory_mib = r > 0 ? mib : s->default_real_memory_mib;
	}
out:
	host_list_release(&list);
	strbuf_release(&err);
}

static void scan_include(struct slurm_conf_scan *s, const char *file, const char *path,
			 size_t lineno)
{
	struct strbuf full = STRBUF_INIT, text = STRBUF_INIT;
	const char *slash = strrchr(path, '/');
	int r;

	if (!s->read || s->depth >= SLURM_INCLUDE_DEPTH) {
		problem(s, path, lineno, "Include not followed (too deep):", file);
		goto out;
	}
	if (file[0] != '/' && slash)
		strbuf_add(&full, path, (size_t)(slash - path + 1));
	strbuf_addstr(&full, file);
	r = s->read(s->read_data, full.buf, &text);
	if (r == 0) {
		problem(s, path, lineno, "Include names a file that does not exist:", full.buf);
	} else if (r < 0) {
		problem(s, path, lineno, strerror(-r), full.buf);
	} else {
		s->depth++;
		slurm_conf_scan_text(s, full.buf, text.buf);
		s->depth--;
	}
out:
	strbuf_release(&full);
	strbuf_release(&text);
}

static void scan_line(struct slurm_conf_scan *s, const struct strvec *words, const char *path,
		      size_t lineno)
{
	const char *first = words->v[0], *v;

	if (!strcasecmp(first, "Include") && words->nr >= 2) {
		scan_include(s, words->v[1], path, lineno);
	} else if ((v = value_of(first, "NodeName"))) {
		scan_node_line(s, words, v, path, lineno);
	} else if ((v = value_of(first, "SlurmctldHost")) ||
		   (v = value_of(first, "ControlMachine"))) {
		if (!s->controller && *v)
			s->controller = xstrndup(v, strcspn(v, "("));
	} else if ((v = value_of(first, "AuthInfo"))) {
		/* Options separated by commas: "cred_expire=60,socket=/run/munge/munge.socket.2".
		 */
		while (*v) {
			size_t len = strcspn(v, ",");
			if (len > 7 && !strncasecmp(v, "socket=", 7)) {
				free(s->munge_socket);
				s->munge_socket = xstrndup(v + 7, len - 7);
			}
			v += len + (v[len] == ',');
		}
	}
}

void slurm_conf_scan_text(struct slurm_conf_scan *s, const char *path, const char *text)
{
	size_t lineno = 0;

	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");
		struct strvec words = STRVEC_INIT;
		lineno++;
		split_words(p, len, &words);
		if (words.nr)
			scan_line(s, &words, path, lineno);
		strvec_clear(&words);
		p += len + (p[len] == '\n');
	}
}
