/*
 * dns.c - building DNS queries and parsing replies (dns.h).
 */
#include "sparkctl.h"

#include "discover/dns.h"
#include "lib/xalloc.h"

#include <ctype.h>
#include <strings.h>

/* The least a question (root name, type, class) and a record (plus ttl, rdlength) take. */
#define DNS_QUESTION_MIN 5
#define DNS_RR_MIN	 11

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put16(struct strbuf *out, uint16_t v)
{
	strbuf_addch(out, v >> 8);
	strbuf_addch(out, v & 0xff);
}

/* One label's bytes as text (dns.h's escaping). */
static void add_label_text(struct strbuf *out, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		uint8_t c = p[i];
		if (c == '.' || c == '\\')
			strbuf_addf(out, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			strbuf_addf(out, "\\%03u", c);
		else
			strbuf_addch(out, c);
	}
}

/*
 * The name at *off of msg into out as text; *off moves past it (past the
 * first pointer, when compressed).  A pointer must point before the start
 * of the run of labels it ends, so every jump goes strictly backwards and
 * no loop can be built.
 */
static int read_name(const uint8_t *msg, size_t len, size_t *off, struct strbuf *out,
		     struct strbuf *err)
{
	size_t pos = *off, run_start = *off, wire = 1;
	bool jumped = false;

	strbuf_reset(out);
	for (;;) {
		if (pos >= len) {
			strbuf_addf(err, "a name at offset %zu runs past the end of the message",
				    *off);
			return -EBADMSG;
		}
		uint8_t l = msg[pos];
		if ((l & 0xc0) == 0xc0) {
			if (pos + 1 >= len) {
				strbuf_addf(err, "a compression pointer at offset %zu is cut off",
					    pos);
				return -EBADMSG;
			}
			size_t to = (size_t)(get16(msg + pos) & 0x3fff);
			if (to >= run_start) {
				strbuf_addf(err,
					    "a compression pointer at offset %zu points forward or "
					    "into its own name (to %zu): a name loop",
					    pos, to);
				return -EBADMSG;
			}
			if (!jumped)
				*off = pos + 2;
			jumped = true;
			pos = run_start = to;
			continue;
		}
		if (l & 0xc0) {
			strbuf_addf(err, "unknown label type 0x%02x at offset %zu", l, pos);
			return -EBADMSG;
		}
		if (l == 0) {
			if (!jumped)
				*off = pos + 1;
			if (!out->len)
				strbuf_addch(out, '.');
			return 0;
		}
		/* l <= 63 here: the two high bits are clear */
		wire += (size_t)l + 1;
		if (wire > DNS_NAME_MAX) {
			strbuf_addf(err, "a name at offset %zu is longer than %d bytes", *off,
				    DNS_NAME_MAX);
			return -EBADMSG;
		}
		if (pos + 1 + l > len) {
			strbuf_addf(err, "a label at offset %zu runs past the end of the message",
				    pos);
			return -EBADMSG;
		}
		if (out->len)
			strbuf_addch(out, '.');
		add_label_text(out, msg + pos + 1, l);
		pos += (size_t)l + 1;
	}
}

/* Name text into wire labels (no compression). */
static int add_name_wire(struct strbuf *out, const char *name, struct strbuf *err)
{
	struct strbuf label = STRBUF_INIT;
	size_t wire = 1;
	const char *p = name;
	int r = -EINVAL;

	if (streq(name, ".")) {
		strbuf_addch(out, 0);
		r = 0;
		goto out;
	}
	for (;;) {
		strbuf_reset(&label);
		while (*p && *p != '.') {
			if (*p == '\\' && p[1] >= '0' && p[1] <= '9' && p[2] >= '0' &&
			    p[2] <= '9' && p[3] >= '0' && p[3] <= '9') {
				unsigned v = (unsigned)(p[1] - '0') * 100 +
					     (unsigned)(p[2] - '0') * 10 + (unsigned)(p[3] - '0');
				if (v > 255)
					goto bad;
				strbuf_addch(&label, (int)v);
				p += 4;
			} else if (*p == '\\' && p[1]) {
				strbuf_addch(&label, p[1]);
				p += 2;
			} else if (*p == '\\') {
				goto bad;
			} else {
				strbuf_addch(&label, *p++);
			}
		}
		if (!label.len || label.len > DNS_LABEL_MAX)
			goto bad;
		wire += label.len + 1;
		if (wire > DNS_NAME_MAX)
			goto bad;
		strbuf_addch(out, (int)label.len);
		strbuf_add(out, label.buf, label.len);
		if (!*p || (p[0] == '.' && !p[1]))
			break;
		p++;
	}
	strbuf_addch(out, 0);
	r = 0;
	goto out;
bad:
	strbuf_addf(err,
		    "'%s' is not a DNS name (labels of 1 to %d bytes, at most %d bytes in all)",
		    name, DNS_LABEL_MAX, DNS_NAME_MAX);
out:
	strbuf_release(&label);
	return r;
}

int dns_build_query(uint16_t id, const char *name, uint16_t type, bool unicast_response,
		    struct strbuf *out, struct strbuf *err)
{
	size_t start = out->len;
	int r;

	put16(out, id);
	put16(out, 0); /* a standard query */
	put16(out, 1);
	put16(out, 0);
	put16(out, 0);
	put16(out, 0);
	if ((r = add_name_wire(out, name, err)) < 0) {
		strbuf_setlen(out, start);
		return r;
	}
	put16(out, type);
	put16(out, (uint16_t)(DNS_CLASS_IN | (unicast_response ? DNS_CLASS_UNICAST_RESPONSE : 0)));
	return 0;
}

/* TXT data: length-prefixed strings, the last ending exactly at end. */
static int read_txt(const uint8_t *msg, size_t pos, size_t end, struct dns_rr *rr,
		    struct strbuf *err)
{
	while (pos < end) {
		size_t l = msg[pos];
		if (pos + 1 + l > end) {
			strbuf_addf(err,
				    "a TXT string of %zu bytes at offset %zu runs past its record "
				    "(%zu bytes left)",
				    l, pos, end - pos - 1);
			return -EBADMSG;
		}
		char *s = xstrndup((const char *)msg + pos + 1, l);
		strvec_push_nodup(&rr->txt, s);
		pos += 1 + l;
	}
	return 0;
}

/* The data of rr, msg[pos..pos+rdlen), by its type. */
static int read_rdata(const uint8_t *msg, size_t len, size_t pos, size_t rdlen, struct dns_rr *rr,
		      struct strbuf *err)
{
	struct strbuf name = STRBUF_INIT;
	size_t end = pos + rdlen, at = pos;
	int r = 0;

	switch (rr->type) {
	case DNS_TYPE_A:
	case DNS_TYPE_AAAA:
		if (rdlen != (rr->type == DNS_TYPE_A ? 4u : 16u)) {
			strbuf_addf(err, "an address record at offset %zu has %zu bytes of data",
				    pos, rdlen);
			r = -EBADMSG;
			break;
		}
		memcpy(rr->addr, msg + pos, rdlen);
		break;
	case DNS_TYPE_SRV:
		if (rdlen < 7) {
			strbuf_addf(err, "an SRV record at offset %zu is too short", pos);
			r = -EBADMSG;
			break;
		}
		rr->priority = get16(msg + pos);
		rr->weight = get16(msg + pos + 2);
		rr->port = get16(msg + pos + 4);
		at = pos + 6;
		__attribute__((fallthrough)); /* to the name, as a PTR's */
	case DNS_TYPE_PTR:
		/* a name inside the record's data may point anywhere before it */
		if ((r = read_name(msg, len < end ? len : end, &at, &name, err)) < 0)
			break;
		if (at != end) {
			strbuf_addf(err,
				    "the name in the record at offset %zu does not end its data",
				    pos);
			r = -EBADMSG;
			break;
		}
		rr->target = strbuf_detach(&name, NULL);
		break;
	case DNS_TYPE_TXT:
		r = read_txt(msg, pos, end, rr, err);
		break;
	default:
		break;
	}
	strbuf_release(&name);
	return r;
}

static int read_header(const uint8_t *msg, size_t len, struct dns_message *m, size_t counts[4],
		       struct strbuf *err)
{
	size_t need;

	if (len < DNS_HEADER_LEN) {
		strbuf_addf(err, "a message of %zu bytes is shorter than a DNS header", len);
		return -EBADMSG;
	}
	m->id = get16(msg);
	m->flags = get16(msg + 2);
	for (size_t i = 0; i < 4; i++)
		counts[i] = get16(msg + 4 + 2 * i);
	need = counts[0] * DNS_QUESTION_MIN + (counts[1] + counts[2] + counts[3]) * DNS_RR_MIN;
	if (need > len - DNS_HEADER_LEN) {
		strbuf_addf(err,
			    "the header claims %zu questions and %zu records, more than %zu bytes "
			    "can hold",
			    counts[0], counts[1] + counts[2] + counts[3], len);
		return -EBADMSG;
	}
	return 0;
}

static int read_record(const uint8_t *msg, size_t len, size_t *off, struct dns_rr *rr,
		       struct strbuf *name, struct strbuf *err)
{
	size_t rdlen;
	int r;

	if ((r = read_name(msg, len, off, name, err)) < 0)
		return r;
	rr->name = xstrdup(name->buf);
	if (*off + 10 > len) {
		strbuf_addf(err, "a record at offset %zu is cut off", *off);
		return -EBADMSG;
	}
	rr->type = get16(msg + *off);
	rr->klass = get16(msg + *off + 2) & (uint16_t)~DNS_CLASS_CACHE_FLUSH;
	rr->ttl = get32(msg + *off + 4);
	rdlen = get16(msg + *off + 8);
	*off += 10;
	if (*off + rdlen > len) {
		strbuf_addf(err, "a record's data at offset %zu (%zu bytes) runs past the end",
			    *off, rdlen);
		return -EBADMSG;
	}
	if ((r = read_rdata(msg, len, *off, rdlen, rr, err)) < 0)
		return r;
	*off += rdlen;
	return 0;
}

int dns_parse(const uint8_t *msg, size_t len, struct dns_message *m, struct strbuf *err)
{
	struct strbuf name = STRBUF_INIT;
	size_t counts[4], off = DNS_HEADER_LEN;
	int r;

	memset(m, 0, sizeof(*m));
	if ((r = read_header(msg, len, m, counts, err)) < 0)
		goto out;
	m->questions = xcalloc(counts[0] ? counts[0] : 1, sizeof(*m->questions));
	for (size_t i = 0; i < counts[0]; i++) {
		struct dns_question *q = &m->questions[m->nr_questions];
		if ((r = read_name(msg, len, &off, &name, err)) < 0)
			goto out;
		if (off + 4 > len) {
			strbuf_addf(err, "a question at offset %zu is cut off", off);
			r = -EBADMSG;
			goto out;
		}
		q->name = xstrdup(name.buf);
		q->type = get16(msg + off);
		q->klass = get16(msg + off + 2);
		off += 4;
		m->nr_questions++;
	}
	size_t nr = counts[1] + counts[2] + counts[3];
	m->records = xcalloc(nr ? nr : 1, sizeof(*m->records));
	for (size_t i = 0; i < nr; i++) {
		struct dns_rr *rr = &m->records[m->nr_records++];
		strvec_init(&rr->txt);
		rr->section = i < counts[1]		  ? DNS_ANSWER
			      : i < counts[1] + counts[2] ? DNS_AUTHORITY
							  : DNS_ADDITIONAL;
		if ((r = read_record(msg, len, &off, rr, &name, err)) < 0)
			goto out;
	}
	r = 0;
out:
	strbuf_release(&name);
	return r;
}

void dns_message_release(struct dns_message *m)
{
	for (size_t i = 0; i < m->nr_questions; i++)
		free(m->questions[i].name);
	for (size_t i = 0; i < m->nr_records; i++) {
		free(m->records[i].name);
		free(m->records[i].target);
		strvec_clear(&m->records[i].txt);
	}
	free(m->questions);
	free(m->records);
	memset(m, 0, sizeof(*m));
}

bool dns_name_eq(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	/* a trailing dot (the root) is the same name */
	if (la && a[la - 1] == '.' && !(la >= 2 && a[la - 2] == '\\'))
		la--;
	if (lb && b[lb - 1] == '.' && !(lb >= 2 && b[lb - 2] == '\\'))
		lb--;
	return la == lb && strncasecmp(a, b, la) == 0;
}

void dns_first_label(const char *name, struct strbuf *label, const char **rest)
{
	const char *p = name;

	strbuf_reset(label);
	while (*p && *p != '.') {
		if (p[0] == '\\' && isdigit((unsigned char)p[1]) && isdigit((unsigned char)p[2]) &&
		    isdigit((unsigned char)p[3])) {
			strbuf_addch(label, (p[1] - '0') * 100 + (p[2] - '0') * 10 + (p[3] - '0'));
			p += 4;
		} else if (p[0] == '\\' && p[1]) {
			strbuf_addch(label, p[1]);
			p += 2;
		} else {
			strbuf_addch(label, *p++);
		}
	}
	*rest = *p ? p + 1 : p;
}

const char *dns_txt_value(const struct dns_rr *rr, const char *key)
{
	size_t kl = strlen(key);

	for (size_t i = 0; i < rr->txt.nr; i++)
		if (strncasecmp(rr->txt.v[i], key, kl) == 0 && rr->txt.v[i][kl] == '=')
			return rr->txt.v[i] + kl + 1;
	return NULL;
}
