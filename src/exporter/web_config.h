/*
 * web_config.h - the exporter's web configuration file (--web-config):
 * TLS and HTTP basic authentication, in the form Prometheus' exporters
 * read (exporter-toolkit's web-config.yml):
 *
 *	tls_server_config:
 *	  cert_file: server.crt		# PEM; relative to this file's directory
 *	  key_file: server.key
 *	basic_auth_users:
 *	  prometheus: $2y$10$...	# bcrypt, e.g. from 'htpasswd -nBC 10 USER'
 *
 * Only these keys, in a strict subset of YAML: two levels of block
 * mappings, plain or quoted scalars on one line, comments.  Anything else
 * is refused with one line naming the file and the line.
 */
#ifndef SPARKCTL_EXPORTER_WEB_CONFIG_H
#define SPARKCTL_EXPORTER_WEB_CONFIG_H

#include "sparkctl.h"

#include "lib/strbuf.h"

struct web_user {
	char *name;
	char *hash; /* bcrypt: $2a$, $2b$ or $2y$, cost, salt and digest */
};

struct web_config {
	char *cert_file, *key_file; /* both or neither (then plain HTTP) */
	struct web_user *users;	    /* none: no authentication */
	size_t nr_users;
};

#define WEB_CONFIG_INIT                                                                            \
	{                                                                                          \
		.cert_file = NULL                                                                  \
	}

/*
 * Parse the text of the file at path (path names it in messages and is
 * the base of relative file names).  -EINVAL with "PATH:LINE: what" in
 * err; cfg is then empty.
 */
int web_config_parse(const char *text, size_t len, const char *path, struct web_config *cfg,
		     struct strbuf *err);
/* Read the file at path and parse it: -errno with a message in err. */
int web_config_read(const char *path, struct web_config *cfg, struct strbuf *err);
void web_config_release(struct web_config *cfg);

/* Whether hash is a well-formed bcrypt hash ($2a$, $2b$, $2y$; cost 04 to 31). */
bool web_config_is_bcrypt(const char *hash);

/*
 * Read the certificate (chain) and key files of cfg into *cert_pem and
 * *key_pem and check that they make a pair.  A key file that users other
 * than its owner and group may read or write is refused.  -errno with one
 * line in err.  The key is wiped by web_config_free_key().
 */
int web_config_read_tls(const struct web_config *cfg, char **cert_pem, char **key_pem,
			struct strbuf *err);
void web_config_free_key(char *key_pem);

#endif
