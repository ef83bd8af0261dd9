/*
 * service_file.c - the XML of avahi's service file (service_file.h).
 */
#include "sparkctl.h"

#include "discover/service_file.h"

static void add_escaped(struct strbuf *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			strbuf_addstr(out, "&amp;");
			break;
		case '<':
			strbuf_addstr(out, "&lt;");
			break;
		case '>':
			strbuf_addstr(out, "&gt;");
			break;
		case '"':
			strbuf_addstr(out, "&quot;");
			break;
		case '\'':
			strbuf_addstr(out, "&apos;");
			break;
		default:
			strbuf_addch(out, *s);
		}
	}
}

static void add_txt(struct strbuf *out, const char *key, const char *value)
{
	strbuf_addf(out, "    <txt-record>%s=", key);
	add_escaped(out, value);
	strbuf_addstr(out, "</txt-record>\n");
}

void service_file_xml(const char *id, const char *version, const struct strvec *fabric,
		      struct strbuf *out)
{
	strbuf_addstr(out, "<?xml version=\"1.0\" standalone='no'?>\n"
			   "<!DOCTYPE service-group SYSTEM \"avahi-service.dtd\">\n"
			   /* no "--" inside an XML comment: avahi refuses the file */
			   "<!-- written by sparkctl publish, which also removes it -->\n"
			   "<service-group>\n"
			   "  <name replace-wildcards=\"yes\">%h</name>\n"
			   "  <service>\n"
			   "    <type>" SERVICE_TYPE "</type>\n");
	strbuf_addf(out, "    <port>%d</port>\n", SERVICE_PORT);
	add_txt(out, "id", id);
	add_txt(out, "ver", version);
	if (fabric->nr) {
		struct strbuf list = STRBUF_INIT;
		for (size_t i = 0; i < fabric->nr; i++)
			strbuf_addf(&list, "%s%s", i ? "," : "", fabric->v[i]);
		add_txt(out, "fabric", list.buf);
		strbuf_release(&list);
	}
	strbuf_addstr(out, "  </service>\n"
			   "</service-group>\n");
}
