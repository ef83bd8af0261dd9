/*
 * dns.h - the DNS messages of mDNS and DNS-SD (RFC 1035, 6762, 6763):
 * building a query and parsing a reply, in memory, without any I/O.
 *
 * Names are text: labels joined by '.', where a '.' or '\' inside a label
 * is written "\." or "\\" and a control byte (below 0x20, or 0x7f) as
 * "\DDD" (RFC 4343; spaces and UTF-8 are kept), so a name read from a reply can
 * be put into a query again unchanged.  Names compare case-insensitively
 * (dns_name_eq()).
 *
 * The parser trusts nothing in the message: a compression pointer must
 * point before the part of the name it is read from (so no loop is
 * possible), a label is at most 63 bytes and a name at most 255, counts
 * are bounded by what the message length can hold, and every record's
 * data must end exactly where its length says (a TXT string that runs
 * past it is an error).  A message that breaks any of this is refused
 * whole, with a message saying where and why.
 */
#ifndef SPARKCTL_DNS_H
#define SPARKCTL_DNS_H

#include "sparkctl.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

#define DNS_HEADER_LEN	12
#define DNS_LABEL_MAX	63
#define DNS_NAME_MAX	255 /* on the wire, with the length bytes and the final 0 */
/* The largest mDNS message (RFC 6762 §17: 9000 bytes, jumbo frames). */
#define DNS_MESSAGE_MAX 9000

#define DNS_TYPE_A		   1
#define DNS_TYPE_PTR		   12
#define DNS_TYPE_TXT		   16
#define DNS_TYPE_AAAA		   28
#define DNS_TYPE_SRV		   33
#define DNS_TYPE_ANY		   255
#define DNS_CLASS_IN		   1
/* In a question's class: answer by unicast (QU, RFC 6762 §5.4). */
#define DNS_CLASS_UNICAST_RESPONSE 0x8000
/* In a record's class: the cache-flush bit (RFC 6762 §10.2), not part of the class. */
#define DNS_CLASS_CACHE_FLUSH	   0x8000

#define DNS_FLAG_QR 0x8000 /* a response */
#define DNS_FLAG_TC 0x0200 /* truncated: more records follow in another message */

enum dns_section {
	DNS_ANSWER,
	DNS_AUTHORITY,
	DNS_ADDITIONAL,
};

struct dns_question {
	char *name;
	uint16_t type;
	uint16_t klass; /* with the unicast-response bit */
};

struct dns_rr {
	enum dns_section section;
	char *name;
	uint16_t type;
	uint16_t klass; /* without the cache-flush bit */
	uint32_t ttl;
	/* PTR: the name pointed to; SRV: the target host; NULL otherwise */
	char *target;
	uint16_t priority, weight, port; /* SRV */
	uint8_t addr[16];		 /* A: 4 bytes, AAAA: 16 */
	struct strvec txt;		 /* TXT: its strings (a NUL byte ends one early) */
};

struct dns_message {
	uint16_t id;
	uint16_t flags;
	struct dns_question *questions;
	size_t nr_questions;
	struct dns_rr *records; /* answers, then authority, then additional */
	size_t nr_records;
};

/*
 * Append a query with one question (name, type, class IN, with the
 * unicast-response bit when unicast_response) and the given id to out.
 * -EINVAL (message in err) when name is not a valid name.
 */
int dns_build_query(uint16_t id, const char *name, uint16_t type, bool unicast_response,
		    struct strbuf *out, struct strbuf *err);

/*
 * Parse the message of len bytes into m (which the caller releases, also
 * after a failure).  Records of other types than A, AAAA, PTR, SRV and TXT
 * are kept with their name, type and class only.  -EBADMSG with a message
 * in err when the message is malformed.
 */
int dns_parse(const uint8_t *msg, size_t len, struct dns_message *m, struct strbuf *err);
void dns_message_release(struct dns_message *m);

/* Two names in text form are the same name (ASCII case ignored). */
bool dns_name_eq(const char *a, const char *b);

/*
 * The first label of name, unescaped (an instance name "spark 1" of
 * "spark\0321._ssh._tcp.local"), and what follows its dot in *rest.
 */
void dns_first_label(const char *name, struct strbuf *label, const char **rest);

/* The value of key in a TXT record's strings ("id" of "id=abc"), or NULL. */
const char *dns_txt_value(const struct dns_rr *rr, const char *key);

#endif
