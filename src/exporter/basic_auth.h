/*
 * basic_auth.h - checking HTTP basic authentication against the bcrypt
 * hashes of a web-config file (exporter/web_config.h).
 *
 * A bcrypt evaluation costs tens of milliseconds by design, and the
 * exporter answers one request at a time, so each user's last password
 * that matched is remembered - as a keyed SHA-256 (HMAC with a key drawn
 * at start), never in clear - and a scrape with it costs one HMAC.  Any
 * other password costs one bcrypt evaluation, an unknown user too (against
 * another user's hash), so that the time taken does not tell which users
 * exist.  Comparisons take the same time wherever the inputs differ.
 * Not thread-safe: one thread checks.
 */
#ifndef SPARKCTL_EXPORTER_BASIC_AUTH_H
#define SPARKCTL_EXPORTER_BASIC_AUTH_H

#include "sparkctl.h"

#include "exporter/web_config.h"

struct basic_auth;

/* For the users of cfg (at least one); NULL when no random key can be drawn. */
struct basic_auth *basic_auth_new(const struct web_config *cfg);
void basic_auth_free(struct basic_auth *auth);

/* Whether user and password are those of a configured user. */
bool basic_auth_check(struct basic_auth *auth, const char *user, const char *password);

#endif
