#include "sparkctl.h"

#include <gnutls/gnutls.h>

#include "exporter/web_config.h"
#include "lib/xalloc.h"

/* Far beyond any real web-config file, certificate chain or key. */
#define WEB_CONFIG_MAX_BYTES (64 * 1024)
#define TLS_FILE_MAX_BYTES   (1024 * 1024)

enum section {
	SECTION_NONE,
	SECTION_TLS,
	SECTION_USERS
};

struct parser {
	const char *path;
	unsigned line;
	struct strbuf *err;
	struct web_config *cfg;
	enum section section;
	unsigned section_line; /* where the current section began */
	unsigned child_indent; /* of the current section's keys; 0 until its first */
	bool seen_tls, seen_users;
	bool seen_content; /* a key came: "---" is no longer allowed */
};

static int parse_error(struct parser *p, const char *fmt, ...) ATTR_PRINTF(2, 3);
static int parse_error(struct parser *p, const char *fmt, ...)
{
	va_list ap;

	if (p->line)
		strbuf_addf(p->err, "%s:%u: ", p->path, p->line);
	else
		strbuf_addf(p->err, "%s: ", p->path);
	va_start(ap, fmt);
	strbuf_vaddf(p->err, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* After a scalar: nothing but spaces and a comment may follow. */
static bool rest_is_comment(const char *s)
{
	while (*s == ' ')
		s++;
	return !*s || *s == '#';
}

static int quoted_scalar(struct parser *p, const char **pos, struct strbuf *out)
{
	const char *s = *pos;
	char quote = *s++;

	for (;; s++) {
		if (!*s)
			return parse_error(p, "a quoted string that does not end on its line");
		if (*s == quote) {
			/* '' is a single quote inside single quotes. */
			if (quote == '\'' && s[1] == '\'') {
				strbuf_addch(out, '\'');
				s++;
				continue;
			}
			break;
		}
		if (quote == '"' && *s == '\\') {
			if (s[1] != '\\' && s[1] != '"')
				return parse_error(p, "only \\\\ and \\\" may be escaped in a "
						      "double-quoted string");
			s++;
		}
		strbuf_addch(out, *s);
	}
	*pos = s + 1;
	return 0;
}

/*
 * A scalar at *pos into out: quoted, or plain - a key up to its ':', a
 * value up to the end of the line or a comment.  *pos moves past it.
 */
static int scalar(struct parser *p, const char **pos, bool key, struct strbuf *out)
{
	const char *s = *pos, *start = s, *end;

	if (*s == '\'' || *s == '"')
		return quoted_scalar(p, pos, out);
	/* What would make YAML read something else than a string: refused, not guessed. */
	if (!*s || strchr("[]{}&*!|>%@`,?#", *s) ||
	    ((*s == '-' || *s == ':') && (!s[1] || s[1] == ' ')))
		return parse_error(p, "'%c' cannot begin a plain value here: quote the value", *s);
	for (; *s; s++) {
		if (*s == ':' && (!s[1] || s[1] == ' ')) {
			if (key)
				break;
			return parse_error(p, "': ' inside a value: quote the value");
		}
		if (*s == '#' && s[-1] == ' ')
			break;
	}
	if (key && *s != ':')
		return parse_error(p, "expected 'KEY: VALUE'");
	for (end = s; end > start && end[-1] == ' ';)
		end--;
	strbuf_add(out, start, (size_t)(end - start));
	*pos = s;
	return 0;
}

/* A relative name is relative to the directory of the config file, as exporter-toolkit has it. */
static char *resolve(const char *config_path, const char *name)
{
	const char *slash = strrchr(config_path, '/');

	if (name[0] == '/' || !slash)
		return xstrdup(name);
	return xasprintf("%.*s/%s", (int)(slash - config_path), config_path, name);
}

bool web_config_is_bcrypt(const char *hash)
{
	static const char alphabet[] =
		"./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	unsigned cost;

	if (strlen(hash) != 60 || !starts_with(hash, "$2") || !strchr("aby", hash[2]) ||
	    hash[3] != '$' || hash[6] != '$' || hash[4] < '0' || hash[4] > '9' || hash[5] < '0' ||
	    hash[5] > '9')
		return false;
	cost = (unsigned)(hash[4] - '0') * 10 + (unsigned)(hash[5] - '0');
	if (cost < 4 || cost > 31)
		return false;
	for (size_t i = 7; i < 60; i++)
		if (!strchr(alphabet, hash[i]))
			return false;
	return true;
}

static int tls_key(struct parser *p, const char *key, const char *value)
{
	char **slot;

	if (streq(key, "cert_file"))
		slot = &p->cfg->cert_file;
	else if (streq(key, "key_file"))
		slot = &p->cfg->key_file;
	else
		return parse_error(p,
				   "unknown key '%s' in tls_server_config (known: cert_file, "
				   "key_file)",
				   key);
	if (*slot)
		return parse_error(p, "'%s' given twice", key);
	*slot = resolve(p->path, value);
	return 0;
}

static int user_key(struct parser *p, const char *name, const char *hash)
{
	struct web_user *u;

	if (!*name || strchr(name, ':'))
		return parse_error(p, "'%s' cannot be a user name: it is empty or has a ':'", name);
	for (size_t i = 0; i < p->cfg->nr_users; i++)
		if (streq(p->cfg->users[i].name, name))
			return parse_error(p, "user '%s' given twice", name);
	if (!web_config_is_bcrypt(hash))
		return parse_error(p,
				   "user '%s': the password must be a bcrypt hash ($2y$..., e.g. "
				   "from 'htpasswd -nBC 10 %s')",
				   name, name);
	u = ARRAY_PUSH(p->cfg->users, p->cfg->nr_users);
	u->name = xstrdup(name);
	u->hash = xstrdup(hash);
	return 0;
}

/* A line that begins a section: "tls_server_config:" or "basic_auth_users:". */
static int section_key(struct parser *p, const char *key, bool has_value)
{
	bool *seen;

	if (streq(key, "tls_server_config")) {
		p->section = SECTION_TLS;
		seen = &p->seen_tls;
	} else if (streq(key, "basic_auth_users")) {
		p->section = SECTION_USERS;
		seen = &p->seen_users;
	} else {
		return parse_error(p,
				   "unknown key '%s' (known: tls_server_config, "
				   "basic_auth_users)",
				   key);
	}
	if (*seen)
		return parse_error(p, "'%s' given twice", key);
	if (has_value)
		return parse_error(p, "'%s' takes its keys on the lines below, indented", key);
	*seen = true;
	p->section_line = p->line;
	p->child_indent = 0;
	return 0;
}

/* The end of a section: it must have had what it needs. */
static int section_end(struct parser *p)
{
	unsigned line = p->line;
	int r = 0;

	p->line = p->section_line;
	if (p->section == SECTION_TLS && (!p->cfg->cert_file || !p->cfg->key_file))
		r = parse_error(p, "tls_server_config needs both cert_file and key_file");
	else if (p->section == SECTION_USERS && !p->cfg->nr_users)
		r = parse_error(p, "basic_auth_users lists no user");
	p->line = line;
	p->section = SECTION_NONE;
	return r;
}

static int parse_line(struct parser *p, const char *line)
{
	struct strbuf key = STRBUF_INIT, value = STRBUF_INIT;
	const char *s = line;
	unsigned indent = 0;
	bool has_value;
	int r;

	while (*s == ' ')
		s++, indent++;
	if (!*s || *s == '#')
		return 0;
	if (streq(s, "---") && !indent && !p->seen_content)
		return 0;
	p->seen_content = true;
	if (*s == '-' && (!s[1] || s[1] == ' '))
		return parse_error(p, "a list item where 'KEY: VALUE' belongs");
	if ((r = scalar(p, &s, true, &key)) < 0)
		goto out;
	if (*s != ':' || (s[1] && s[1] != ' ')) {
		r = parse_error(p, "expected 'KEY: VALUE'");
		goto out;
	}
	for (s++; *s == ' ';)
		s++;
	has_value = *s && *s != '#';
	if (indent == 0) {
		if ((r = section_end(p)) < 0)
			goto out;
		r = section_key(p, key.buf, has_value);
		goto out;
	}
	if (has_value) {
		if ((r = scalar(p, &s, false, &value)) < 0)
			goto out;
		if (!rest_is_comment(s)) {
			while (*s == ' ')
				s++;
			r = parse_error(p, "unexpected text after the value: '%s'", s);
			goto out;
		}
	}
	if (p->section == SECTION_NONE) {
		r = parse_error(p, "an indented line outside tls_server_config and "
				   "basic_auth_users");
		goto out;
	}
	if (p->child_indent && indent != p->child_indent) {
		r = parse_error(p, "indented unlike the line above (nothing nests deeper)");
		goto out;
	}
	p->child_indent = indent;
	if (!has_value || !value.len) {
		r = parse_error(p, "'%s' has no value", key.buf);
		goto out;
	}
	r = p->section == SECTION_TLS ? tls_key(p, key.buf, value.buf)
				      : user_key(p, key.buf, value.buf);
out:
	strbuf_release(&key);
	strbuf_release(&value);
	return r;
}

int web_config_parse(const char *text, size_t len, const char *path, struct web_config *cfg,
		     struct strbuf *err)
{
	struct parser p = { .path = path, .err = err, .cfg = cfg };
	struct strbuf line = STRBUF_INIT;
	const char *end = text + len;
	int r = 0;

	memset(cfg, 0, sizeof(*cfg));
	for (const char *s = text; s < end && r == 0;) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);

		p.line++;
		strbuf_reset(&line);
		strbuf_add(&line, s, n);
		if (line.len && line.buf[line.len - 1] == '\r')
			strbuf_setlen(&line, line.len - 1);
		if (strlen(line.buf) != line.len)
			r = parse_error(&p, "a NUL byte");
		else if (strchr(line.buf, '\t'))
			r = parse_error(&p, "a tab: YAML indents with spaces only");
		else
			r = parse_line(&p, line.buf);
		s += n + 1;
	}
	if (r == 0)
		r = section_end(&p);
	p.line = 0;
	if (r == 0 && !p.seen_tls && !p.seen_users)
		r = parse_error(&p, "neither tls_server_config nor basic_auth_users: "
				    "nothing to configure");
	strbuf_release(&line);
	if (r < 0)
		web_config_release(cfg);
	return r;
}

int web_config_read(const char *path, struct web_config *cfg, struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT;
	int r = strbuf_read_path(&text, path, WEB_CONFIG_MAX_BYTES);

	memset(cfg, 0, sizeof(*cfg));
	if (r == -EFBIG)
		strbuf_addf(err, "%s: larger than %d KiB", path, WEB_CONFIG_MAX_BYTES / 1024);
	else if (r < 0)
		strbuf_addf(err, "cannot read %s: %s", path, strerror(-r));
	else
		r = web_config_parse(text.buf, text.len, path, cfg, err);
	strbuf_release(&text);
	return r;
}

void web_config_release(struct web_config *cfg)
{
	free(cfg->cert_file);
	free(cfg->key_file);
	for (size_t i = 0; i < cfg->nr_users; i++) {
		free(cfg->users[i].name);
		free(cfg->users[i].hash);
	}
	free(cfg->users);
	memset(cfg, 0, sizeof(*cfg));
}

/* A regular file into out; with secret, one only its owner and group may use. */
static int read_tls_file(const char *what, const char *path, bool secret, struct strbuf *out,
			 struct strbuf *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY), r = 0;

	if (fd < 0 || fstat(fd, &st) < 0) {
		r = -errno;
		strbuf_addf(err, "cannot read %s %s: %s", what, path, strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		r = -EINVAL;
		strbuf_addf(err, "%s %s is not a regular file", what, path);
	} else if (secret && (st.st_mode & S_IRWXO)) {
		r = -EPERM;
		strbuf_addf(err, "%s %s is open to other users (mode %04o): chmod o-rwx it", what,
			    path, (unsigned)(st.st_mode & 07777));
	} else if ((r = strbuf_read_fd(out, fd, TLS_FILE_MAX_BYTES)) < 0) {
		strbuf_addf(err, "cannot read %s %s: %s", what, path,
			    r == -EFBIG ? "larger than 1 MiB" : strerror(-r));
	}
	if (fd >= 0)
		close(fd);
	return r < 0 ? r : 0;
}

int web_config_read_tls(const struct web_config *cfg, char **cert_pem, char **key_pem,
			struct strbuf *err)
{
	struct strbuf cert = STRBUF_INIT, key = STRBUF_INIT;
	gnutls_certificate_credentials_t cred = NULL;
	gnutls_datum_t cert_datum, key_datum;
	int r;

	if ((r = read_tls_file("cert_file", cfg->cert_file, false, &cert, err)) < 0 ||
	    (r = read_tls_file("key_file", cfg->key_file, true, &key, err)) < 0)
		goto out;
	/* What libmicrohttpd would only report as "failed to start", said here exactly. */
	cert_datum = (gnutls_datum_t){ (unsigned char *)cert.buf, (unsigned)cert.len };
	key_datum = (gnutls_datum_t){ (unsigned char *)key.buf, (unsigned)key.len };
	if (gnutls_certificate_allocate_credentials(&cred) < 0) {
		r = -ENOMEM;
		strbuf_addstr(err, "gnutls: out of memory");
		goto out;
	}
	r = gnutls_certificate_set_x509_key_mem2(cred, &cert_datum, &key_datum, GNUTLS_X509_FMT_PEM,
						 NULL, 0);
	gnutls_certificate_free_credentials(cred);
	if (r < 0) {
		strbuf_addf(err, "cert_file %s with key_file %s: %s", cfg->cert_file, cfg->key_file,
			    gnutls_strerror(r));
		r = -EINVAL;
		goto out;
	}
	*cert_pem = strbuf_detach(&cert, NULL);
	*key_pem = strbuf_detach(&key, NULL);
	r = 0;
out:
	strbuf_release(&cert);
	explicit_bzero(key.buf, key.len);
	strbuf_release(&key);
	return r;
}

void web_config_free_key(char *key_pem)
{
	if (!key_pem)
		return;
	explicit_bzero(key_pem, strlen(key_pem));
	free(key_pem);
}
