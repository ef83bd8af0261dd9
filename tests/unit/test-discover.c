/*
 * test-discover.c - the DNS codec of discover (queries, replies, every
 * malformed reply refused with a reason), the merge of replies into
 * hosts, the interfaces chosen, the node id and publish's service file.
 */
#include "sparkctl.h"

#include "test_util.h"

#include "discover/discover.h"
#include "discover/dns.h"
#include "discover/node_id.h"
#include "discover/service_file.h"
#include "lib/rootfs.h"

#include <arpa/inet.h>

/* ---- a reply, built byte by byte */

static void put16(struct strbuf *m, unsigned v)
{
	strbuf_addch(m, (int)(v >> 8) & 0xff);
	strbuf_addch(m, (int)v & 0xff);
}

static void header(struct strbuf *m, unsigned id, unsigned qd, unsigned an, unsigned ns,
		   unsigned ar)
{
	put16(m, id);
	put16(m, DNS_FLAG_QR | 0x0400);
	put16(m, qd);
	put16(m, an);
	put16(m, ns);
	put16(m, ar);
}

/* Labels of a dotted name without escapes, then either 0 or a pointer to ptr (ptr >= 0). */
static void name(struct strbuf *m, const char *dotted, int ptr)
{
	const char *p = dotted;

	while (*p) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);
		strbuf_addch(m, (int)l);
		strbuf_add(m, p, l);
		p = dot ? dot + 1 : p + l;
	}
	if (ptr >= 0)
		put16(m, 0xc000u | (unsigned)ptr);
	else
		strbuf_addch(m, 0);
}

static void rr_head(struct strbuf *m, unsigned type, unsigned rdlen)
{
	put16(m, type);
	put16(m, DNS_CLASS_IN | DNS_CLASS_CACHE_FLUSH);
	put16(m, 0);
	put16(m, 120);
	put16(m, rdlen);
}

/*
 * What avahi answers a legacy unicast PTR query for _sparkctl._tcp: the
 * question, a PTR answer, SRV, TXT and A as additional records, names
 * compressed.
 */
static void avahi_like_reply(struct strbuf *m, unsigned id, const char *host, const char *node_id,
			     const uint8_t addr[4])
{
	size_t svc, inst, target, rdstart;
	struct strbuf txt = STRBUF_INIT;

	header(m, id, 1, 1, 0, 3);
	svc = m->len;
	name(m, "_sparkctl._tcp.local", -1);
	put16(m, DNS_TYPE_PTR);
	put16(m, DNS_CLASS_IN);
	/* PTR answer: name points at the question, data "HOST" + pointer */
	put16(m, 0xc000u | (unsigned)svc);
	rr_head(m, DNS_TYPE_PTR, (unsigned)(1 + strlen(host) + 2));
	inst = m->len;
	name(m, host, (int)svc);
	/* SRV */
	put16(m, 0xc000u | (unsigned)inst);
	rr_head(m, DNS_TYPE_SRV, (unsigned)(6 + 1 + strlen(host) + 1 + 5 + 1));
	rdstart = m->len;
	put16(m, 0);
	put16(m, 0);
	put16(m, 22);
	target = m->len;
	strbuf_addch(m, (int)strlen(host));
	strbuf_addstr(m, host);
	name(m, "local", -1);
	assert_int_equal(m->len - rdstart, 6 + 1 + strlen(host) + 1 + 5 + 1);
	/* TXT */
	strbuf_addf(&txt, "id=%s", node_id);
	put16(m, 0xc000u | (unsigned)inst);
	rr_head(m, DNS_TYPE_TXT, (unsigned)(1 + txt.len + 1 + 9));
	strbuf_addch(m, (int)txt.len);
	strbuf_add(m, txt.buf, txt.len);
	strbuf_addch(m, 9);
	strbuf_addstr(m, "ver=0.1.0");
	/* A */
	put16(m, 0xc000u | (unsigned)target);
	rr_head(m, DNS_TYPE_A, 4);
	strbuf_add(m, addr, 4);
	strbuf_release(&txt);
}

static int parse(const struct strbuf *m, struct dns_message *msg, struct strbuf *err)
{
	strbuf_reset(err);
	return dns_parse((const uint8_t *)m->buf, m->len, msg, err);
}

static void query_bytes(void **state)
{
	struct strbuf q = STRBUF_INIT, err = STRBUF_INIT;
	static const uint8_t want[] = { 0x12, 0x34, 0,	 0,   0,   1,	0, 0,	0,   0,	   0,
					0,    4,    '_', 's', 's', 'h', 4, '_', 't', 'c',  'p',
					5,    'l',  'o', 'c', 'a', 'l', 0, 0,	12,  0x80, 1 };
	struct dns_message m;

	(void)state;
	assert_int_equal(dns_build_query(0x1234, "_ssh._tcp.local", DNS_TYPE_PTR, true, &q, &err),
			 0);
	assert_int_equal(q.len, sizeof(want));
	assert_memory_equal(q.buf, want, sizeof(want));
	/* the query parses back, one question, without the QR bit */
	assert_int_equal(parse(&q, &m, &err), 0);
	assert_int_equal(m.nr_questions, 1);
	assert_string_equal(m.questions[0].name, "_ssh._tcp.local");
	assert_int_equal(m.questions[0].klass, DNS_CLASS_IN | DNS_CLASS_UNICAST_RESPONSE);
	assert_false(m.flags & DNS_FLAG_QR);
	dns_message_release(&m);
	strbuf_release(&q);
	strbuf_release(&err);
}

static void query_refuses_bad_names(void **state)
{
	struct strbuf q = STRBUF_INIT, err = STRBUF_INIT, big = STRBUF_INIT;

	(void)state;
	strbuf_addchars(&big, 'a', 64);
	strbuf_addstr(&big, ".local");
	assert_int_equal(dns_build_query(1, big.buf, DNS_TYPE_PTR, false, &q, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "is not a DNS name"));
	assert_int_equal(q.len, 0);
	assert_int_equal(dns_build_query(1, "a..local", DNS_TYPE_PTR, false, &q, &err), -EINVAL);
	strbuf_reset(&big);
	for (int i = 0; i < 5; i++) {
		strbuf_addchars(&big, 'b', 60);
		strbuf_addch(&big, '.');
	}
	strbuf_addstr(&big, "local"); /* 5 * 61 + 6 + 1 = 312 bytes on the wire */
	assert_int_equal(dns_build_query(1, big.buf, DNS_TYPE_PTR, false, &q, &err), -EINVAL);
	/* 63 is a label's most */
	strbuf_reset(&big);
	strbuf_addchars(&big, 'c', 63);
	strbuf_addstr(&big, ".local");
	assert_int_equal(dns_build_query(1, big.buf, DNS_TYPE_PTR, false, &q, &err), 0);
	strbuf_release(&q);
	strbuf_release(&err);
	strbuf_release(&big);
}

static void escaped_names_round_trip(void **state)
{
	struct strbuf q = STRBUF_INIT, err = STRBUF_INIT, label = STRBUF_INIT;
	struct dns_message m;
	const char *rest;

	(void)state;
	assert_int_equal(dns_build_query(7, "spark\\.1 \\007x._ssh._tcp.local", DNS_TYPE_SRV, false,
					 &q, &err),
			 0);
	/* one label of 10 bytes: "spark.1 \a" "x" */
	assert_int_equal((uint8_t)q.buf[DNS_HEADER_LEN], 10);
	assert_int_equal(parse(&q, &m, &err), 0);
	assert_string_equal(m.questions[0].name, "spark\\.1 \\007x._ssh._tcp.local");
	dns_first_label(m.questions[0].name, &label, &rest);
	assert_int_equal(label.len, 10);
	assert_memory_equal(label.buf, "spark.1 \ax", 10);
	assert_string_equal(rest, "_ssh._tcp.local");
	assert_true(dns_name_eq("Spark1.LOCAL.", "spark1.local"));
	assert_false(dns_name_eq("spark1.local", "spark2.local"));
	dns_message_release(&m);
	strbuf_release(&q);
	strbuf_release(&err);
	strbuf_release(&label);
}

static const uint8_t addr1[4] = { 169, 254, 10, 1 };

static void reply_of_avahi(void **state)
{
	struct strbuf m = STRBUF_INIT, err = STRBUF_INIT;
	struct dns_message msg;
	char text[16];

	(void)state;
	avahi_like_reply(&m, 0x4242, "spark1", "0123456789abcdef0123456789abcdef", addr1);
	assert_int_equal(parse(&m, &msg, &err), 0);
	assert_int_equal(msg.id, 0x4242);
	assert_int_equal(msg.nr_questions, 1);
	assert_int_equal(msg.nr_records, 4);
	assert_int_equal(msg.records[0].section, DNS_ANSWER);
	assert_int_equal(msg.records[0].type, DNS_TYPE_PTR);
	assert_string_equal(msg.records[0].name, "_sparkctl._tcp.local");
	assert_string_equal(msg.records[0].target, "spark1._sparkctl._tcp.local");
	assert_int_equal(msg.records[1].section, DNS_ADDITIONAL);
	assert_int_equal(msg.records[1].type, DNS_TYPE_SRV);
	assert_string_equal(msg.records[1].target, "spark1.local");
	assert_int_equal(msg.records[1].port, 22);
	/* the cache-flush bit is not part of the class */
	assert_int_equal(msg.records[1].klass, DNS_CLASS_IN);
	assert_int_equal(msg.records[2].txt.nr, 2);
	assert_string_equal(dns_txt_value(&msg.records[2], "id"),
			    "0123456789abcdef0123456789abcdef");
	assert_string_equal(dns_txt_value(&msg.records[2], "ver"), "0.1.0");
	assert_null(dns_txt_value(&msg.records[2], "fabric"));
	assert_string_equal(msg.records[3].name, "spark1.local");
	inet_ntop(AF_INET, msg.records[3].addr, text, sizeof(text));
	assert_string_equal(text, "169.254.10.1");
	dns_message_release(&msg);

	/* every cut of it is refused with a reason, none crashes */
	for (size_t len = 0; len < m.len; len++) {
		strbuf_reset(&err);
		assert_int_equal(dns_parse((const uint8_t *)m.buf, len, &msg, &err), -EBADMSG);
		assert_true(err.len > 0);
		dns_message_release(&msg);
	}
	strbuf_release(&m);
	strbuf_release(&err);
}

static void expect_refused(const struct strbuf *m, const char *why)
{
	struct strbuf err = STRBUF_INIT;
	struct dns_message msg;

	assert_int_equal(parse(m, &msg, &err), -EBADMSG);
	if (!strstr(err.buf, why))
		fail_msg("'%s' does not say '%s'", err.buf, why);
	dns_message_release(&msg);
	strbuf_release(&err);
}

static void name_loops_are_refused(void **state)
{
	struct strbuf m = STRBUF_INIT;

	(void)state;
	/* a pointer to itself */
	header(&m, 1, 1, 0, 0, 0);
	put16(&m, 0xc000u | DNS_HEADER_LEN);
	put16(&m, DNS_TYPE_PTR);
	put16(&m, DNS_CLASS_IN);
	expect_refused(&m, "name loop");

	/* a pointer forward */
	strbuf_reset(&m);
	header(&m, 1, 1, 0, 0, 0);
	put16(&m, 0xc000u | (DNS_HEADER_LEN + 6));
	put16(&m, DNS_TYPE_PTR);
	put16(&m, DNS_CLASS_IN);
	name(&m, "a", -1);
	expect_refused(&m, "points forward");

	/*
	 * Two names pointing at each other through a label that spans the
	 * pointer: every jump backwards from where it was read, but into the
	 * run it came from.
	 */
	strbuf_reset(&m);
	header(&m, 1, 2, 0, 0, 0);
	/* 12: label of 3 bytes whose content is a pointer to 12 and a byte */
	strbuf_addch(&m, 3);
	put16(&m, 0xc000u | DNS_HEADER_LEN);
	strbuf_addch(&m, 'x');
	put16(&m, 0xc000u | (DNS_HEADER_LEN + 1));
	put16(&m, DNS_TYPE_PTR);
	put16(&m, DNS_CLASS_IN);
	expect_refused(&m, "name loop");

	/* an unknown label type (0x40, extended labels) */
	strbuf_reset(&m);
	header(&m, 1, 1, 0, 0, 0);
	strbuf_addch(&m, 0x41);
	strbuf_addch(&m, 'a');
	strbuf_addch(&m, 0);
	put16(&m, DNS_TYPE_PTR);
	put16(&m, DNS_CLASS_IN);
	expect_refused(&m, "unknown label type");
	strbuf_release(&m);
}

static void long_names_are_refused(void **state)
{
	struct strbuf m = STRBUF_INIT;
	size_t prev = 0;

	(void)state;
	/* five names of 60-byte labels, each pointing back at the one before: 305 bytes */
	header(&m, 1, 5, 0, 0, 0);
	for (int i = 0; i < 5; i++) {
		size_t here = m.len;
		strbuf_addch(&m, 60);
		strbuf_addchars(&m, 'a' + i, 60);
		if (i)
			put16(&m, 0xc000u | (unsigned)prev);
		else
			strbuf_addch(&m, 0);
		put16(&m, DNS_TYPE_PTR);
		put16(&m, DNS_CLASS_IN);
		prev = here;
	}
	expect_refused(&m, "longer than 255 bytes");
	strbuf_release(&m);
}

static void bad_records_are_refused(void **state)
{
	struct strbuf m = STRBUF_INIT;

	(void)state;
	/* a TXT string of 200 bytes in a record of 10 */
	header(&m, 1, 0, 1, 0, 0);
	name(&m, "x.local", -1);
	rr_head(&m, DNS_TYPE_TXT, 10);
	strbuf_addch(&m, 200);
	strbuf_addchars(&m, 'a', 9);
	strbuf_addchars(&m, 'b', 191); /* the bytes are there, past the record */
	expect_refused(&m, "a TXT string of 200 bytes");

	/* a record whose length runs past the message */
	strbuf_reset(&m);
	header(&m, 1, 0, 1, 0, 0);
	name(&m, "x.local", -1);
	rr_head(&m, DNS_TYPE_TXT, 300);
	strbuf_addch(&m, 3);
	strbuf_addstr(&m, "a=b");
	expect_refused(&m, "runs past the end");

	/* an A record of 5 bytes */
	strbuf_reset(&m);
	header(&m, 1, 0, 1, 0, 0);
	name(&m, "x.local", -1);
	rr_head(&m, DNS_TYPE_A, 5);
	strbuf_addchars(&m, 1, 5);
	expect_refused(&m, "5 bytes of data");

	/* a PTR whose name ends before its data does */
	strbuf_reset(&m);
	header(&m, 1, 0, 1, 0, 0);
	name(&m, "x.local", -1);
	rr_head(&m, DNS_TYPE_PTR, 5);
	name(&m, "ab", -1);
	strbuf_addch(&m, 0);
	expect_refused(&m, "does not end its data");

	/* counts that the message cannot hold */
	strbuf_reset(&m);
	header(&m, 1, 0xffff, 0xffff, 0xffff, 0xffff);
	strbuf_addchars(&m, 0, 100);
	expect_refused(&m, "more than 112 bytes can hold");

	/* shorter than a header */
	strbuf_reset(&m);
	put16(&m, 1);
	expect_refused(&m, "shorter than a DNS header");
	strbuf_release(&m);
}

/* ---- merging replies */

static void add_reply(struct discover_reply **r, size_t *nr, size_t iface, const char *from,
		      const char *host, const char *id, const uint8_t addr[4])
{
	struct strbuf m = STRBUF_INIT, err = STRBUF_INIT;
	struct discover_reply *reply = ARRAY_PUSH(*r, *nr);

	avahi_like_reply(&m, 1, host, id, addr);
	reply->iface = iface;
	snprintf(reply->from, sizeof(reply->from), "%s", from);
	assert_int_equal(dns_parse((const uint8_t *)m.buf, m.len, &reply->msg, &err), 0);
	strbuf_release(&m);
	strbuf_release(&err);
}

static void result_with_ifaces(struct discover_result *res)
{
	discover_result_init(res);
	strvec_push(&res->services, "_sparkctl._tcp");
	res->ifaces = xcalloc(2, sizeof(*res->ifaces));
	res->ifaces[0].name = xstrdup("ll0");
	res->ifaces[0].address = xstrdup("169.254.10.3");
	res->ifaces[1].name = xstrdup("fab0");
	res->ifaces[1].address = xstrdup("198.18.0.3");
	res->nr_ifaces = 2;
}

static void release_replies(struct discover_reply *r, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		dns_message_release(&r[i].msg);
	free(r);
}

static void merge_by_id_and_name(void **state)
{
	static const uint8_t a2[4] = { 169, 254, 10, 2 }, f2[4] = { 198, 18, 0, 2 },
			     a3[4] = { 169, 254, 10, 3 };
	const char *id2 = "22222222222222222222222222222222",
		   *id9 = "99999999999999999999999999999999";
	struct discover_reply *r = NULL;
	struct discover_result res;
	size_t nr = 0;

	(void)state;
	result_with_ifaces(&res);
	/* spark2 on both interfaces, as spark2-2 on the second (avahi renamed it there) */
	add_reply(&r, &nr, 0, "169.254.10.2", "spark2", id2, a2);
	add_reply(&r, &nr, 1, "198.18.0.2", "spark2-2", id2, f2);
	/* this node's own answer */
	add_reply(&r, &nr, 0, "169.254.10.3", "spark3", "33333333333333333333333333333333", a3);
	discover_merge(r, nr, NULL, &res);
	assert_int_equal(res.nr_hosts, 2);
	assert_string_equal(res.hosts[0].host, "spark2");
	assert_string_equal(res.hosts[0].id, id2);
	assert_int_equal(res.hosts[0].names.nr, 2);
	assert_int_equal(res.hosts[0].ifaces.nr, 2);
	assert_string_equal(res.hosts[0].ifaces.v[0], "ll0");
	assert_string_equal(res.hosts[0].ifaces.v[1], "fab0");
	assert_int_equal(res.hosts[0].addresses.nr, 2);
	assert_string_equal(res.hosts[0].version, "0.1.0");
	assert_false(res.hosts[0].this_host);
	assert_true(res.hosts[1].this_host);
	assert_int_equal(res.findings.nr, 0);
	discover_result_release(&res);

	/* one name, two ids: two hosts and a finding */
	result_with_ifaces(&res);
	add_reply(&r, &nr, 0, "169.254.10.2", "spark2", id9, a2);
	discover_merge(r, nr, NULL, &res);
	assert_int_equal(res.nr_hosts, 3);
	assert_int_equal(res.findings.nr, 1);
	assert_non_null(strstr(res.findings.v[0], "spark2.local answers with two node ids"));
	discover_result_release(&res);
	release_replies(r, nr);
}

static void name_churn(void **state)
{
	static const uint8_t a1[4] = { 169, 254, 10, 1 }, a3[4] = { 169, 254, 10, 3 };
	struct discover_reply *r = NULL;
	struct discover_result res;
	size_t nr = 0;

	(void)state;
	/* this node (169.254.10.3) answers as spark3-2: avahi renamed it */
	result_with_ifaces(&res);
	add_reply(&r, &nr, 0, "169.254.10.3", "spark3-2", "33333333333333333333333333333333", a3);
	discover_merge(r, nr, "spark3", &res);
	assert_int_equal(res.findings.nr, 1);
	assert_non_null(strstr(res.findings.v[0], "avahi calls this node spark3-2.local, not "
						  "spark3.local"));
	discover_result_release(&res);
	/* a host name that only starts like this one: no churn */
	result_with_ifaces(&res);
	discover_merge(r, nr, "spark", &res);
	assert_int_equal(res.findings.nr, 0);
	discover_result_release(&res);
	/* another host answers as spark3.local */
	result_with_ifaces(&res);
	add_reply(&r, &nr, 0, "169.254.10.1", "spark3", "11111111111111111111111111111111", a1);
	discover_merge(r, nr, "spark3", &res);
	assert_int_equal(res.findings.nr, 2);
	assert_non_null(strstr(res.findings.v[1], "another host (169.254.10.1) answers as "
						  "spark3.local"));
	discover_result_release(&res);
	/* no hostname: nothing to compare */
	result_with_ifaces(&res);
	discover_merge(r, nr, NULL, &res);
	assert_int_equal(res.findings.nr, 0);
	discover_result_release(&res);
	release_replies(r, nr);
}

static void choose_ifaces_of_a_fixture(void **state)
{
	struct discover_request req = { .which = DISCOVER_IFACES_LIST };
	struct strvec names = STRVEC_INIT;
	struct discover_result res;
	struct inventory inv;

	(void)state;
	load_fixture("spark-1cable", &inv);
	req.inv = &inv;
	discover_result_init(&res);
	req.which = DISCOVER_IFACES_FABRIC;
	assert_int_equal(discover_choose_ifaces(&req, &res), 0);
	assert_string_equal(res.chosen_by, "fabric");
	assert_true(res.nr_ifaces >= 1);
	for (size_t i = 0; i < res.nr_ifaces; i++)
		assert_non_null(res.ifaces[i].address);
	discover_result_release(&res);

	discover_result_init(&res);
	req.which = DISCOVER_IFACES_LIST;
	req.iface_names = &names;
	strvec_push(&names, "nosuch0");
	assert_int_equal(discover_choose_ifaces(&req, &res), -EINVAL);
	assert_string_equal(res.error, "no interface nosuch0 on this node");
	discover_result_release(&res);
	strvec_clear(&names);
	inventory_release(&inv);
}

/* ---- node id, service file */

static void node_id_made_once(void **state)
{
	char dir[] = "/tmp/test-discover.XXXXXX";
	struct strbuf id = STRBUF_INIT, again = STRBUF_INIT, err = STRBUF_INIT;
	struct rootfs root;
	struct stat st;
	char *path, *cmd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(rootfs_open(&root, dir), 0);
	assert_int_equal(node_id_read(&root, &id), -ENOENT);
	assert_int_equal(node_id_ensure(&root, &id, &err), 1);
	assert_true(node_id_valid(id.buf));
	assert_int_equal(node_id_ensure(&root, &again, &err), 0);
	assert_string_equal(id.buf, again.buf);
	assert_int_equal(node_id_read(&root, &again), 0);
	assert_string_equal(id.buf, again.buf);
	path = xasprintf("%s/etc/sparkctl/node-id", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	/* a file that is not an id is refused and left alone */
	cmd = xasprintf("printf 'ABC\\n' > '%s'", path);
	sh(cmd);
	free(cmd);
	assert_int_equal(node_id_read(&root, &again), -EINVAL);
	assert_int_equal(node_id_ensure(&root, &again, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "does not hold a node id"));
	assert_false(node_id_valid("0123456789ABCDEF0123456789ABCDEF"));
	rootfs_close(&root);
	remove_tree(dir);
	free(path);
	strbuf_release(&id);
	strbuf_release(&again);
	strbuf_release(&err);
}

static void service_file_escapes(void **state)
{
	struct strvec fabric = STRVEC_INIT;
	struct strbuf xml = STRBUF_INIT;
	const char *c, *end;

	(void)state;
	strvec_push(&fabric, "192.168.100.11");
	strvec_push(&fabric, "192.168.101.11");
	service_file_xml("0123", "1.0<&>'\"", &fabric, &xml);
	assert_non_null(
		strstr(xml.buf, "<txt-record>ver=1.0&lt;&amp;&gt;&apos;&quot;</txt-record>"));
	assert_non_null(
		strstr(xml.buf, "<txt-record>fabric=192.168.100.11,192.168.101.11</txt-record>"));
	assert_non_null(strstr(xml.buf, "<type>_sparkctl._tcp</type>"));
	assert_non_null(strstr(xml.buf, "<port>22</port>"));
	/* XML refuses "--" inside a comment (and so does avahi) */
	c = strstr(xml.buf, "<!--");
	end = strstr(c, "-->");
	for (const char *p = c + 4; p < end; p++)
		assert_false(p[0] == '-' && p[1] == '-');
	strbuf_reset(&xml);
	strvec_clear(&fabric);
	service_file_xml("0123", "1", &fabric, &xml);
	assert_null(strstr(xml.buf, "fabric="));
	strbuf_release(&xml);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(query_bytes),
		cmocka_unit_test(query_refuses_bad_names),
		cmocka_unit_test(escaped_names_round_trip),
		cmocka_unit_test(reply_of_avahi),
		cmocka_unit_test(name_loops_are_refused),
		cmocka_unit_test(long_names_are_refused),
		cmocka_unit_test(bad_records_are_refused),
		cmocka_unit_test(merge_by_id_and_name),
		cmocka_unit_test(name_churn),
		cmocka_unit_test(choose_ifaces_of_a_fixture),
		cmocka_unit_test(node_id_made_once),
		cmocka_unit_test(service_file_escapes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
