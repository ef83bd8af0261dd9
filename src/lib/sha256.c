/*
 * sha256.c - the SHA-256 of a buffer as hex, through gnutls (linked already
 * for the exporter's TLS): for comparing files across nodes.
 */
#include "sparkctl.h"

#include <gnutls/crypto.h>

#include "lib/sha256.h"

int sha256_hex(const void *data, size_t len, char hex[SHA256_HEX_LEN + 1])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char digest[SHA256_HEX_LEN / 2];

	hex[0] = '\0';
	if (gnutls_hash_fast(GNUTLS_DIG_SHA256, data, len, digest) < 0)
		return -EIO;
	for (size_t i = 0; i < sizeof(digest); i++) {
		hex[2 * i] = digits[digest[i] >> 4];
		hex[2 * i + 1] = digits[digest[i] & 15];
	}
	hex[SHA256_HEX_LEN] = '\0';
	return 0;
}
