#include "sparkctl.h"

#include <crypt.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include "exporter/basic_auth.h"
#include "lib/xalloc.h"

#define MAC_BYTES	  32 /* HMAC-SHA256 */
/* The part of a bcrypt hash that depends on the password: after "$2y$10$" and the salt. */
#define BCRYPT_DIGEST_AT  29
#define BCRYPT_HASH_CHARS 60

struct auth_user {
	char *name, *hash;
	bool remembered;
	uint8_t mac[MAC_BYTES]; /* of the last password that matched */
};

struct basic_auth {
	struct auth_user *users;
	size_t nr_users;
	uint8_t key[MAC_BYTES];
	struct crypt_data crypt; /* large: kept here, not on the stack */
};

/* Equal, in a time that does not depend on where a and b differ. */
static bool same_bytes(const void *a, const void *b, size_t n)
{
	const volatile uint8_t *x = a, *y = b;
	uint8_t diff = 0;

	for (size_t i = 0; i < n; i++)
		diff |= x[i] ^ y[i];
	return diff == 0;
}

struct basic_auth *basic_auth_new(const struct web_config *cfg)
{
	struct basic_auth *auth = xcalloc(1, sizeof(*auth));

	if (gnutls_rnd(GNUTLS_RND_KEY, auth->key, sizeof(auth->key)) < 0) {
		free(auth);
		return NULL;
	}
	auth->users = xcalloc(cfg->nr_users, sizeof(*auth->users));
	auth->nr_users = cfg->nr_users;
	for (size_t i = 0; i < cfg->nr_users; i++) {
		auth->users[i].name = xstrdup(cfg->users[i].name);
		auth->users[i].hash = xstrdup(cfg->users[i].hash);
	}
	return auth;
}

void basic_auth_free(struct basic_auth *auth)
{
	if (!auth)
		return;
	for (size_t i = 0; i < auth->nr_users; i++) {
		free(auth->users[i].name);
		free(auth->users[i].hash);
	}
	free(auth->users);
	explicit_bzero(auth, sizeof(*auth));
	free(auth);
}

/* Whether bcrypt of password with the salt and cost of hash gives hash. */
static bool bcrypt_matches(struct basic_auth *auth, const char *hash, const char *password)
{
	const char *out = crypt_rn(password, hash, &auth->crypt, (int)sizeof(auth->crypt));
	bool ok;

	/*
	 * Only the digest is compared: libcrypt writes the salt back in its
	 * canonical spelling, which may differ from the hash's in its last
	 * character while meaning the same bits.
	 */
	ok = out && strlen(out) == BCRYPT_HASH_CHARS &&
	     same_bytes(out + BCRYPT_DIGEST_AT, hash + BCRYPT_DIGEST_AT,
			BCRYPT_HASH_CHARS - BCRYPT_DIGEST_AT);
	explicit_bzero(&auth->crypt, sizeof(auth->crypt));
	return ok;
}

bool basic_auth_check(struct basic_auth *auth, const char *user, const char *password)
{
	struct auth_user *u = NULL;
	uint8_t mac[MAC_BYTES];
	bool ok;

	for (size_t i = 0; i < auth->nr_users; i++)
		if (streq(auth->users[i].name, user))
			u = &auth->users[i];
	if (!u) {
		/* As long as for a known user: the time does not tell that it is not one. */
		bcrypt_matches(auth, auth->users[0].hash, password);
		return false;
	}
	if (gnutls_hmac_fast(GNUTLS_MAC_SHA256, auth->key, sizeof(auth->key), password,
			     strlen(password), mac) < 0)
		return false;
	if (u->remembered && same_bytes(mac, u->mac, sizeof(mac)))
		return true;
	ok = bcrypt_matches(auth, u->hash, password);
	if (ok) {
		memcpy(u->mac, mac, sizeof(mac));
		u->remembered = true;
	}
	return ok;
}
