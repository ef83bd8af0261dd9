/*
 * fuzz-dns - what 'sparkctl discover' reads from the network: a DNS
 * message, as dns_parse() takes it, and the merge of what it accepts.
 *
 * A message that is refused says why and leaves nothing behind.  One that
 * is taken has names within 255 bytes on the wire (at most four text
 * bytes per wire byte), and a question's name can be put into a query
 * again and parses back to the same text; the merge of it as a reply of
 * two interfaces gives hosts with a name and at least one interface.
 */
#include "sparkctl.h"

#include "discover/discover.h"
#include "discover/dns.h"
#include "fuzz.h"

static void check_names(const struct dns_message *m)
{
	struct strbuf q = STRBUF_INIT, err = STRBUF_INIT;

	for (size_t i = 0; i < m->nr_questions; i++) {
		struct dns_message back;
		const char *name = m->questions[i].name;
		FUZZ_CHECK(strlen(name) <= 4 * DNS_NAME_MAX);
		strbuf_reset(&q);
		if (streq(name, "."))
			continue;
		FUZZ_CHECK(dns_build_query(1, name, DNS_TYPE_PTR, false, &q, &err) == 0);
		FUZZ_CHECK(dns_parse((const uint8_t *)q.buf, q.len, &back, &err) == 0);
		FUZZ_CHECK(back.nr_questions == 1 && streq(back.questions[0].name, name));
		dns_message_release(&back);
	}
	for (size_t i = 0; i < m->nr_records; i++) {
		FUZZ_CHECK(strlen(m->records[i].name) <= 4 * DNS_NAME_MAX);
		for (size_t k = 0; k < m->records[i].txt.nr; k++)
			FUZZ_CHECK(strlen(m->records[i].txt.v[k]) <= 255);
	}
	strbuf_release(&q);
	strbuf_release(&err);
}

static void check_merge(const struct dns_message *m)
{
	struct discover_reply replies[1];
	struct discover_result res;

	discover_result_init(&res);
	strvec_push(&res.services, "_ssh._tcp");
	strvec_push(&res.services, "_sparkctl._tcp");
	res.ifaces = xcalloc(1, sizeof(*res.ifaces));
	res.ifaces[0].name = xstrdup("fab0");
	res.ifaces[0].address = xstrdup("198.18.0.1");
	res.nr_ifaces = 1;
	replies[0].iface = 0;
	snprintf(replies[0].from, sizeof(replies[0].from), "198.18.0.2");
	replies[0].msg = *m;
	discover_merge(replies, 1, "spark1", &res);
	for (size_t i = 0; i < res.nr_hosts; i++)
		FUZZ_CHECK(res.hosts[i].host && res.hosts[i].ifaces.nr == 1 &&
			   res.hosts[i].names.nr >= 1);
	discover_result_release(&res);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf err = STRBUF_INIT;
	struct dns_message m;

	if (dns_parse(data, size, &m, &err) == 0) {
		FUZZ_CHECK(err.len == 0);
		check_names(&m);
		check_merge(&m);
	} else {
		FUZZ_CHECK(err.len > 0);
	}
	dns_message_release(&m);
	FUZZ_CHECK(m.nr_records == 0 && m.nr_questions == 0);
	strbuf_release(&err);
	return 0;
}
