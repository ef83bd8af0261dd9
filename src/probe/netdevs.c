#include "sparkctl.h"

#include "inventory/inventory.h"
#include "lib/parse.h"
#include "lib/xalloc.h"
#include "probe/netdevs.h"

int netdev_list(const struct host_reader *rd, struct strvec *names)
{
	return reader_list(rd, NET_CLASS, names);
}

/* A non-negative decimal value of d, or INV_UNKNOWN. */
static int64_t dir_int(struct reader_dir *d, const char *name, struct strbuf *v)
{
	uint64_t n;

	if (reader_dir_value(d, name, v) <= 0)
		return INV_UNKNOWN;
	if (parse_u64(v->buf, &n) < 0 || n > INT64_MAX) {
		reader_dir_bad_content(d, name, v->buf);
		return INV_UNKNOWN;
	}
	return (int64_t)n;
}

int netdev_read_link(const struct host_reader *rd, const char *dev, struct netdev_link *out)
{
	static const char *const files[] = { "mtu", "operstate", "carrier", "speed", NULL };
	struct strbuf rel = STRBUF_INIT, v = STRBUF_INIT;
	struct reader_dir d;
	int r;

	out->mtu = INV_UNKNOWN;
	out->operstate = NULL;
	out->carrier = TRI_UNKNOWN;
	out->speed_mbps = INV_UNKNOWN;
	strbuf_addf(&rel, NET_CLASS "/%s", dev);
	r = reader_dir_open(rd, rel.buf, files, &d);
	if (r <= 0)
		goto out;
	out->mtu = dir_int(&d, "mtu", &v);
	if (reader_dir_value(&d, "operstate", &v) > 0)
		out->operstate = xstrdup(v.buf);
	if (reader_dir_value(&d, "carrier", &v) > 0) {
		if (streq(v.buf, "1") || streq(v.buf, "0"))
			out->carrier = streq(v.buf, "1") ? TRI_YES : TRI_NO;
		else
			reader_dir_bad_content(&d, "carrier", v.buf);
	}
	/* Drivers print SPEED_UNKNOWN as "-1". */
	if (reader_dir_value(&d, "speed", &v) > 0 && !streq(v.buf, "-1")) {
		uint64_t n;
		if (parse_u64(v.buf, &n) == 0 && n <= INT64_MAX)
			out->speed_mbps = (int64_t)n;
		else
			reader_dir_bad_content(&d, "speed", v.buf);
	}
out:
	reader_dir_close(&d);
	strbuf_release(&rel);
	strbuf_release(&v);
	return r;
}

void netdev_link_release(struct netdev_link *l)
{
	free_and_null(&l->operstate);
}

int netdev_read_statistics(const struct host_reader *rd, const char *dev, const char *const *names,
			   netdev_stat_fn *fn, void *data)
{
	struct strbuf rel = STRBUF_INIT, v = STRBUF_INIT;
	struct reader_dir d;
	int r;

	strbuf_addf(&rel, NET_CLASS "/%s/statistics", dev);
	r = reader_dir_open(rd, rel.buf, names, &d);
	for (size_t i = 0; r > 0 && names[i]; i++)
		if (reader_dir_value(&d, names[i], &v) > 0 && fn(data, names[i], v.buf) < 0)
			reader_dir_bad_content(&d, names[i], v.buf);
	reader_dir_close(&d);
	strbuf_release(&rel);
	strbuf_release(&v);
	return r;
}
