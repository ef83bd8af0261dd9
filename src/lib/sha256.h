/*
 * sha256.h - SHA-256 of a buffer, as sha256sum prints it (gnutls'
 * digest, which the program links for the exporter already).
 */
#ifndef SPARKCTL_SHA256_H
#define SPARKCTL_SHA256_H

#include "sparkctl.h"

#define SHA256_HEX_LEN 64

/* The digest of data[0..len) as 64 lowercase hex digits and a NUL in hex; 0, or -EIO. */
int sha256_hex(const void *data, size_t len, char hex[SHA256_HEX_LEN + 1]);

#endif
