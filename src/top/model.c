#include "sparkctl.h"

#include <math.h>

#include "lib/json.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "top/model.h"
#include "top/promtext.h"

#define P "sparkctl_"

/*
 * RDMA counters that count traffic or requests, not trouble: every other
 * sparkctl_rdma_*_total of a port raises a flag when it moves.  Flush
 * errors are left out too: a queue pair torn down at a job's end makes
 * them, and that is no fault.  The hw_counters the exporter does not
 * know (rdma_port_hw_counter_total{counter}) may be anything, so they
 * are left out as well.
 */
static const char *const rdma_quiet[] = {
	"port_data_transmitted_bytes_total",
	"port_data_received_bytes_total",
	"port_packets_transmitted_total",
	"port_packets_received_total",
	"unicast_packets_transmitted_total",
	"unicast_packets_received_total",
	"multicast_packets_transmitted_total",
	"multicast_packets_received_total",
	"rx_atomic_requests_total",
	"rx_dct_connect_requests_total",
	"rx_read_requests_total",
	"rx_write_requests_total",
	"req_cqes_flush_errors_total",
	"resp_cqes_flush_errors_total",
	"port_hw_counter_total",
};

static const char *const netdev_trouble[] = {
	"receive_errs_total",
	"transmit_errs_total",
	"receive_drop_total",
	"transmit_drop_total",
};

static const struct metric_family *find_family(const struct metric_set *set, const char *name)
{
	if (!set)
		return NULL;
	for (size_t i = 0; i < set->nr; i++)
		if (streq(set->families[i].name, name))
			return &set->families[i];
	return NULL;
}

const struct metric_sample *top_find_sample(const struct metric_set *set, const char *name,
					    const char *labels)
{
	const struct metric_family *f = find_family(set, name);

	if (!f)
		return NULL;
	for (size_t i = 0; i < f->nr; i++)
		if (streq(f->samples[i].labels, labels))
			return &f->samples[i];
	return NULL;
}

double top_sample_value(const struct metric_sample *s)
{
	return s->is_uint ? (double)s->u : s->d;
}

static bool get_value(const struct metric_set *set, const char *name, const char *labels,
		      double *ret)
{
	const struct metric_sample *s = top_find_sample(set, name, labels);

	if (!s || !isfinite(top_sample_value(s)))
		return false;
	*ret = top_sample_value(s);
	return true;
}

/*
 * How much a counter grew from prev to cur: false when either is
 * missing or it went down (a reset or a 32-bit wrap: no figure is better
 * than a wrong one).
 */
static bool counter_delta(const struct metric_set *prev, const struct metric_set *cur,
			  const char *name, const char *labels, double *ret)
{
	const struct metric_sample *a = top_find_sample(prev, name, labels);
	const struct metric_sample *b = top_find_sample(cur, name, labels);

	if (!a || !b)
		return false;
	if (a->is_uint && b->is_uint) {
		if (b->u < a->u)
			return false;
		*ret = (double)(b->u - a->u);
		return true;
	}
	double va = top_sample_value(a), vb = top_sample_value(b);
	if (!isfinite(va) || !isfinite(vb) || vb < va || !isfinite(vb - va))
		return false;
	*ret = vb - va;
	return true;
}

static char *label(const char *labels, const char *name)
{
	struct strbuf sb = STRBUF_INIT;

	if (metric_labels_get(labels, name, &sb) < 0) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb, NULL);
}

static void key2(struct strbuf *out, const char *n1, const char *v1, const char *n2, const char *v2)
{
	strbuf_reset(out);
	strbuf_addf(out, "{%s=\"", n1);
	metric_escape_label(out, v1);
	strbuf_addch(out, '"');
	if (n2) {
		strbuf_addf(out, ",%s=\"", n2);
		metric_escape_label(out, v2);
		strbuf_addch(out, '"');
	}
	strbuf_addch(out, '}');
}

static void gpu_release(struct top_gpu *g)
{
	free(g->index);
	free(g->name);
}

static void port_release(struct top_port *p)
{
	free(p->name);
	free(p->netdev);
	free(p->state);
	for (size_t i = 0; i < p->nr_flags; i++)
		free(p->flags[i].counter);
	free(p->flags);
}

void top_model_release(struct top_model *m)
{
	for (size_t i = 0; i < m->nr_gpus; i++)
		gpu_release(&m->gpus[i]);
	free(m->gpus);
	for (size_t i = 0; i < m->nr_ports; i++)
		port_release(&m->ports[i]);
	free(m->ports);
	*m = (struct top_model)TOP_MODEL_INIT;
}

static void add_gpus(struct top_model *m, const struct metric_set *cur)
{
	const struct metric_family *info = find_family(cur, P "gpu_info");
	struct strbuf key = STRBUF_INIT;
	double v;

	if (get_value(cur, P "gpu_nvml_up", "", &v))
		m->gpu_state = v == 1 ? TOP_GPU_OK : TOP_GPU_NO_NVML;
	for (size_t i = 0; info && i < info->nr; i++) {
		const char *labels = info->samples[i].labels;
		char *index = label(labels, "gpu"), *uuid = label(labels, "uuid");
		char *type = label(labels, "memory_type");
		double used, total;

		if (!index || !uuid) {
			free(index);
			free(uuid);
			free(type);
			continue;
		}
		struct top_gpu *g = ARRAY_PUSH(m->gpus, m->nr_gpus);
		g->index = index;
		g->name = label(labels, "name");
		key2(&key, "gpu", index, "uuid", uuid);
		g->has_util = get_value(cur, P "gpu_utilization_ratio", key.buf, &g->util);
		g->util *= 100;
		g->has_power = get_value(cur, P "gpu_power_watts", key.buf, &g->power_w);
		g->has_temp = get_value(cur, P "gpu_temperature_celsius", key.buf, &g->temp_c);
		if (get_value(cur, P "gpu_memory_used_bytes", key.buf, &used) &&
		    get_value(cur, P "gpu_memory_total_bytes", key.buf, &total) && total > 0 &&
		    total < 1e19 && used >= 0 && used <= total) {
			g->has_mem = true;
			g->mem_used = (uint64_t)used;
			g->mem_total = (uint64_t)total;
		} else if (type && streq(type, "unified") && m->has_mem) {
			/* GB10: NVML has no memory size; the GPU allocates the system's. */
			g->has_mem = g->mem_unified = true;
			g->mem_total = m->mem_total;
			g->mem_used = m->mem_total - m->mem_available;
		}
		free(uuid);
		free(type);
	}
	strbuf_release(&key);
}

/* The counters of one port that moved, as flags. */
static void port_flags(struct top_port *p, const struct metric_set *prev,
		       const struct metric_set *cur, const char *prefix, const char *labels)
{
	size_t plen = strlen(prefix);

	for (size_t i = 0; i < cur->nr; i++) {
		const struct metric_family *f = &cur->families[i];
		const char *rest;
		double d;
		bool watched = false;

		if (f->type != METRIC_COUNTER || !starts_with(f->name, prefix))
			continue;
		rest = f->name + plen;
		if (p->rdma) {
			watched = true;
			for (size_t j = 0; j < ARRAY_SIZE(rdma_quiet); j++)
				if (streq(rest, rdma_quiet[j]))
					watched = false;
		} else {
			for (size_t j = 0; j < ARRAY_SIZE(netdev_trouble); j++)
				if (streq(rest, netdev_trouble[j]))
					watched = true;
		}
		if (!watched || !counter_delta(prev, cur, f->name, labels, &d) || d <= 0)
			continue;
		size_t n = strlen(rest);
		if (n > 6 && streq(rest + n - 6, "_total"))
			n -= 6;
		struct top_flag *fl = ARRAY_PUSH(p->flags, p->nr_flags);
		fl->counter = xstrndup(rest, n);
		fl->increase = d;
	}
}

static void port_rates(struct top_port *p, const struct metric_set *prev,
		       const struct metric_set *cur, double seconds, const char *tx_name,
		       const char *rx_name, const char *labels)
{
	double tx, rx;

	if (!prev || seconds <= 0)
		return;
	if (!counter_delta(prev, cur, tx_name, labels, &tx) ||
	    !counter_delta(prev, cur, rx_name, labels, &rx))
		return;
	p->has_rate = true;
	p->tx_gbps = tx * 8 / seconds / 1e9;
	p->rx_gbps = rx * 8 / seconds / 1e9;
}

static int port_cmp(const void *a, const void *b)
{
	const struct top_port *x = a, *y = b;

	if (x->rdma != y->rdma)
		return x->rdma ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void add_ports(struct top_model *m, const struct metric_set *prev,
		      const struct metric_set *cur, double seconds)
{
	const struct metric_family *info = find_family(cur, P "rdma_port_info");
	const struct metric_family *nd = find_family(cur, P "network_receive_bytes_total");
	struct strbuf key = STRBUF_INIT;
	size_t nr_rdma;
	double v;

	for (size_t i = 0; info && i < info->nr; i++) {
		const char *labels = info->samples[i].labels;
		char *dev = label(labels, "device"), *port = label(labels, "port");

		if (dev && port) {
			struct top_port *p = ARRAY_PUSH(m->ports, m->nr_ports);
			p->rdma = true;
			p->name = xasprintf("%s/%s", dev, port);
			p->netdev = label(labels, "netdev");
			p->state = label(labels, "state");
			key2(&key, "device", dev, "port", port);
			if (get_value(cur, P "rdma_port_rate_bytes_per_second", key.buf, &v))
				p->line_gbps = v * 8 / 1e9;
			port_rates(p, prev, cur, seconds,
				   P "rdma_port_data_transmitted_bytes_total",
				   P "rdma_port_data_received_bytes_total", key.buf);
			port_flags(p, prev, cur, P "rdma_", key.buf);
		}
		free(dev);
		free(port);
	}
	nr_rdma = m->nr_ports;
	for (size_t i = 0; nd && i < nd->nr; i++) {
		char *dev = label(nd->samples[i].labels, "device");
		bool skip = !dev || streq(dev, "lo");

		/* A netdev under an RDMA port shows as that port. */
		for (size_t j = 0; !skip && j < nr_rdma; j++)
			if (m->ports[j].netdev && streq(m->ports[j].netdev, dev))
				skip = true;
		if (skip) {
			free(dev);
			continue;
		}
		struct top_port *p = ARRAY_PUSH(m->ports, m->nr_ports);
		p->name = dev;
		key2(&key, "device", dev, NULL, NULL);
		if (get_value(cur, P "network_up", key.buf, &v))
			p->state = xstrdup(v == 1 ? "up" : "down");
		if (get_value(cur, P "network_speed_bytes", key.buf, &v))
			p->line_gbps = v * 8 / 1e9;
		port_rates(p, prev, cur, seconds, P "network_transmit_bytes_total",
			   P "network_receive_bytes_total", key.buf);
		port_flags(p, prev, cur, P "network_", key.buf);
	}
	if (m->nr_ports)
		qsort(m->ports, m->nr_ports, sizeof(*m->ports), port_cmp);
	strbuf_release(&key);
}

/* Carry each port's history over from old, and add this update's figure. */
static void carry_history(struct top_model *m, const struct top_model *old)
{
	for (size_t i = 0; i < m->nr_ports; i++) {
		struct top_port *p = &m->ports[i];

		for (size_t j = 0; j < old->nr_ports; j++) {
			if (old->ports[j].rdma == p->rdma && streq(old->ports[j].name, p->name)) {
				memcpy(p->hist, old->ports[j].hist, sizeof(p->hist));
				p->hist_nr = old->ports[j].hist_nr;
				break;
			}
		}
		if (p->hist_nr == TOP_HISTORY) {
			memmove(p->hist, p->hist + 1, (TOP_HISTORY - 1) * sizeof(p->hist[0]));
			p->hist_nr--;
		}
		p->hist[p->hist_nr++] = p->has_rate ? fmax(p->tx_gbps, p->rx_gbps) : -1;
	}
}

void top_model_update(struct top_model *m, const struct metric_set *prev,
		      const struct metric_set *cur, double seconds)
{
	struct top_model old = *m;
	double total, avail;

	*m = (struct top_model)TOP_MODEL_INIT;
	m->seconds = seconds;
	if (get_value(cur, P "memory_total_bytes", "", &total) &&
	    get_value(cur, P "memory_available_bytes", "", &avail) && total > 0 && total < 1e19 &&
	    avail >= 0 && avail <= total) {
		m->has_mem = true;
		m->mem_total = (uint64_t)total;
		m->mem_available = (uint64_t)avail;
	}
	add_gpus(m, cur);
	add_ports(m, prev, cur, seconds);
	carry_history(m, &old);
	top_model_release(&old);
}

static json_t *jopt(bool has, double v)
{
	return has ? jreal(v) : json_null();
}

static json_t *gpu_json(const struct top_gpu *g)
{
	json_t *o = json_object();

	jset(o, "index", jstr(g->index));
	jset(o, "name", jstr(g->name));
	jset(o, "utilization_percent", jopt(g->has_util, g->util));
	jset(o, "power_watts", jopt(g->has_power, g->power_w));
	jset(o, "temperature_celsius", jopt(g->has_temp, g->temp_c));
	jset(o, "memory_used_bytes", g->has_mem ? jint((int64_t)g->mem_used) : json_null());
	jset(o, "memory_total_bytes", g->has_mem ? jint((int64_t)g->mem_total) : json_null());
	jset(o, "memory_unified", jbool(g->mem_unified));
	return o;
}

static json_t *port_json(const struct top_port *p)
{
	json_t *o = json_object(), *flags = json_array();

	jset(o, "name", jstr(p->name));
	jset(o, "rdma", jbool(p->rdma));
	jset(o, "netdev", jstr(p->netdev));
	jset(o, "state", jstr(p->state));
	jset(o, "tx_gbps", jopt(p->has_rate, p->tx_gbps));
	jset(o, "rx_gbps", jopt(p->has_rate, p->rx_gbps));
	jset(o, "line_gbps", jopt(p->line_gbps > 0, p->line_gbps));
	for (size_t i = 0; i < p->nr_flags; i++) {
		json_t *f = json_object();
		jset(f, "counter", jstr(p->flags[i].counter));
		double d = p->flags[i].increase;
		/* Counters count whole things; beyond 2^53 a double is what there is. */
		jset(f, "increase", d < 9007199254740992.0 ? jint((int64_t)d) : jreal(d));
		jpush(flags, f);
	}
	jset(o, "flags", flags);
	return o;
}

json_t *top_models_json(const char *const *hosts, const char *const *errors,
			const struct top_model *const *models, size_t nr, double interval)
{
	static const char *const gpu_states[] = {
		[TOP_GPU_OFF] = "off",
		[TOP_GPU_NO_NVML] = "no_nvml",
		[TOP_GPU_OK] = "ok",
	};
	json_t *root = json_object(), *nodes = json_array();

	jset(root, "interval_ms", jint((int64_t)llround(interval * 1000)));
	for (size_t i = 0; i < nr; i++) {
		const struct top_model *m = errors[i] ? NULL : models[i];
		json_t *n = json_object();

		jset(n, "host", jstr(hosts[i]));
		jset(n, "error", jstr(errors[i]));
		if (m) {
			json_t *gpus = json_array(), *ports = json_array();
			jset(n, "seconds", jreal(m->seconds));
			jset(n, "memory_total_bytes",
			     m->has_mem ? jint((int64_t)m->mem_total) : json_null());
			jset(n, "memory_available_bytes",
			     m->has_mem ? jint((int64_t)m->mem_available) : json_null());
			jset(n, "gpu_state", jstr(gpu_states[m->gpu_state]));
			for (size_t j = 0; j < m->nr_gpus; j++)
				jpush(gpus, gpu_json(&m->gpus[j]));
			for (size_t j = 0; j < m->nr_ports; j++)
				jpush(ports, port_json(&m->ports[j]));
			jset(n, "gpus", gpus);
			jset(n, "ports", ports);
		}
		jpush(nodes, n);
	}
	jset(root, "nodes", nodes);
	return root;
}
