#include "sparkctl.h"

#include "inventory/inventory.h"
#include "lib/host_text.h"
#include "lib/xalloc.h"
#include "probe/rdma_ports.h"

int rdma_list_devices(const struct host_reader *rd, struct strvec *names)
{
	return reader_list(rd, RDMA_CLASS, names);
}

/* The value of name in d, allocated, or NULL. */
static char *dir_str(struct reader_dir *d, const char *name, struct strbuf *v)
{
	return reader_dir_value(d, name, v) > 0 ? xstrdup(v->buf) : NULL;
}

int rdma_read_device(const struct host_reader *rd, const char *dev, struct rdma_device_attrs *out)
{
	static const char *const files[] = { "hca_type", "fw_ver", "board_id", NULL };
	struct strbuf rel = STRBUF_INIT, v = STRBUF_INIT;
	struct reader_dir d;
	int r;

	memset(out, 0, sizeof(*out));
	strbuf_addf(&rel, RDMA_CLASS "/%s", dev);
	r = reader_dir_open(rd, rel.buf, files, &d);
	if (r > 0) {
		out->hca_type = dir_str(&d, "hca_type", &v);
		out->fw_ver = dir_str(&d, "fw_ver", &v);
		out->board_id = dir_str(&d, "board_id", &v);
	}
	reader_dir_close(&d);
	strbuf_release(&rel);
	strbuf_release(&v);
	return r;
}

void rdma_device_attrs_release(struct rdma_device_attrs *a)
{
	free_and_null(&a->hca_type);
	free_and_null(&a->fw_ver);
	free_and_null(&a->board_id);
}

int rdma_list_ports(const struct host_reader *rd, const char *dev, struct strvec *names)
{
	char *rel = xasprintf(RDMA_CLASS "/%s/ports", dev);
	int r = reader_list(rd, rel, names);

	free(rel);
	return r;
}

/* A "%d: %s" state file into code and name; INV_UNKNOWN and NULL unless read. */
static void read_state(struct reader_dir *d, const char *file, struct strbuf *v, int *code,
		       char **name)
{
	*code = (int)INV_UNKNOWN;
	*name = NULL;
	if (reader_dir_value(d, file, v) > 0 && parse_port_state(v->buf, code, name) < 0)
		reader_dir_bad_content(d, file, v->buf);
}

int rdma_read_port_link(const struct host_reader *rd, const char *dev, const char *port,
			struct rdma_port_link *out)
{
	static const char *const files[] = { "state", "phys_state", "rate", "link_layer", NULL };
	struct strbuf rel = STRBUF_INIT, v = STRBUF_INIT;
	struct reader_dir d;
	int r;

	memset(out, 0, sizeof(*out));
	out->state = out->phys_state = (int)INV_UNKNOWN;
	out->rate_mbps = INV_UNKNOWN;
	strbuf_addf(&rel, RDMA_CLASS "/%s/ports/%s", dev, port);
	r = reader_dir_open(rd, rel.buf, files, &d);
	if (r <= 0)
		goto out;
	read_state(&d, "state", &v, &out->state, &out->state_name);
	read_state(&d, "phys_state", &v, &out->phys_state, &out->phys_state_name);
	if (reader_dir_value(&d, "rate", &v) > 0) {
		if (parse_port_rate(v.buf, &out->rate_mbps) == 0)
			out->rate = xstrdup(v.buf);
		else
			reader_dir_bad_content(&d, "rate", v.buf);
	}
	out->link_layer = dir_str(&d, "link_layer", &v);
out:
	reader_dir_close(&d);
	strbuf_release(&rel);
	strbuf_release(&v);
	return r;
}

void rdma_port_link_release(struct rdma_port_link *l)
{
	free_and_null(&l->state_name);
	free_and_null(&l->phys_state_name);
	free_and_null(&l->rate);
	free_and_null(&l->link_layer);
}

char *rdma_read_port_netdev(const struct host_reader *rd, const char *dev, const char *port)
{
	static const char *const files[] = { "0", NULL };
	struct strbuf rel = STRBUF_INIT, v = STRBUF_INIT;
	struct reader_dir d;
	char *ndev = NULL;

	strbuf_addf(&rel, RDMA_CLASS "/%s/ports/%s/gid_attrs/ndevs", dev, port);
	if (reader_dir_open(rd, rel.buf, files, &d) > 0)
		ndev = dir_str(&d, "0", &v);
	reader_dir_close(&d);
	strbuf_release(&rel);
	strbuf_release(&v);
	return ndev;
}

int rdma_read_counters(const struct host_reader *rd, const char *dev, const char *port, bool hw,
		       bool (*want)(void *data, const char *name), rdma_counter_fn *fn, void *data)
{
	struct strbuf rel = STRBUF_INIT, v = STRBUF_INIT;
	const struct strvec *names;
	struct reader_dir d;
	int r;

	strbuf_addf(&rel, RDMA_CLASS "/%s/ports/%s/%s", dev, port, hw ? "hw_counters" : "counters");
	r = reader_dir_open(rd, rel.buf, NULL, &d);
	if (r > 0)
		r = reader_dir_list(&d, &names);
	for (int i = 0; i < r; i++) {
		const char *name = names->v[i];

		if ((!want || want(data, name)) && reader_dir_value(&d, name, &v) > 0 &&
		    fn(data, name, v.buf) < 0)
			reader_dir_bad_content(&d, name, v.buf);
	}
	reader_dir_close(&d);
	strbuf_release(&rel);
	strbuf_release(&v);
	return r;
}
