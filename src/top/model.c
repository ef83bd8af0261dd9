#include "sparkctl.h"

#include <math.h>

#include "lib/json.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "top/model.h"

/*
 * RDMA counters that count traffic or requests, not trouble: every other
 * counter of a port raises a flag when it moves.  Flush errors are left
 * out too: a queue pair torn down at a job's end makes them, and that is
 * no fault.
 */
static const char *const rdma_quiet[] = {
	"port_data_transmitted_bytes",
	"port_data_received_bytes",
	"port_packets_transmitted",
	"port_packets_received",
	"unicast_packets_transmitted",
	"unicast_packets_received",
	"multicast_packets_transmitted",
	"multicast_packets_received",
	"rx_atomic_requests",
	"rx_dct_connect_requests",
	"rx_read_requests",
	"rx_write_requests",
	"req_cqes_flush_errors",
	"resp_cqes_flush_errors",
};

static const char *const netdev_trouble[] = {
	"receive_errs",
	"transmit_errs",
	"receive_drop",
	"transmit_drop",
};

/* The port of prev with the same kind and name as p, or NULL. */
static const struct top_sample_port *find_port(const struct top_sample *prev,
					       const struct top_sample_port *p)
{
	for (size_t i = 0; prev && i < prev->nr_ports; i++)
		if (prev->ports[i].rdma == p->rdma && streq(prev->ports[i].name, p->name))
			return &prev->ports[i];
	return NULL;
}

/*
 * How much counter name grew from a to b: false when either is missing or
 * it went down (a reset or a 32-bit wrap: no figure is better than a wrong
 * one).
 */
static bool counter_delta(const struct top_sample_port *a, const struct top_sample_port *b,
			  const char *name, double *ret)
{
	const struct top_counter *x = a ? top_sample_counter(a, name) : NULL;
	const struct top_counter *y = top_sample_counter(b, name);

	if (!x || !y || y->value < x->value)
		return false;
	*ret = (double)(y->value - x->value);
	return true;
}

static void gpu_release(struct top_gpu *g)
{
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

static void add_gpus(struct top_model *m, const struct top_sample *cur)
{
	m->gpu_state = cur->gpu_state;
	for (size_t i = 0; i < cur->nr_gpus; i++) {
		const struct top_sample_gpu *s = &cur->gpus[i];
		struct top_gpu *g = ARRAY_PUSH(m->gpus, m->nr_gpus);

		g->index = s->index;
		g->name = s->name ? xstrdup(s->name) : NULL;
		g->has_util = s->has_util;
		g->util = s->util;
		g->has_power = s->has_power;
		g->power_w = s->power_w;
		g->has_temp = s->has_temp;
		g->temp_c = s->temp_c;
		if (s->has_mem_used && s->has_mem_total && s->mem_total > 0 &&
		    s->mem_used <= s->mem_total) {
			g->has_mem = true;
			g->mem_used = s->mem_used;
			g->mem_total = s->mem_total;
		} else if (s->unified_memory && m->has_mem) {
			/* GB10: NVML has no memory size; the GPU allocates the system's. */
			g->has_mem = g->unified_memory = true;
			g->mem_total = m->mem_total;
			g->mem_used = m->mem_total - m->mem_available;
		}
	}
}

static bool is_watched(const struct top_sample_port *p, const char *name)
{
	if (p->rdma) {
		for (size_t j = 0; j < ARRAY_SIZE(rdma_quiet); j++)
			if (streq(name, rdma_quiet[j]))
				return false;
		return true;
	}
	for (size_t j = 0; j < ARRAY_SIZE(netdev_trouble); j++)
		if (streq(name, netdev_trouble[j]))
			return true;
	return false;
}

/* The counters of one port that moved, as flags, in the sample's order. */
static void port_flags(struct top_port *p, const struct top_sample_port *prev,
		       const struct top_sample_port *cur)
{
	for (size_t i = 0; prev && i < cur->nr_counters; i++) {
		const char *name = cur->counters[i].name;
		double d;

		if (!is_watched(cur, name) || !counter_delta(prev, cur, name, &d) || d <= 0)
			continue;
		struct top_flag *fl = ARRAY_PUSH(p->flags, p->nr_flags);
		fl->counter = xstrdup(name);
		fl->increase = d;
	}
}

static void port_rates(struct top_port *p, const struct top_sample_port *prev,
		       const struct top_sample_port *cur, double seconds)
{
	const char *tx_name = cur->rdma ? "port_data_transmitted_bytes" : "transmit_bytes";
	const char *rx_name = cur->rdma ? "port_data_received_bytes" : "receive_bytes";
	double tx, rx;

	if (!prev || seconds <= 0)
		return;
	if (!counter_delta(prev, cur, tx_name, &tx) || !counter_delta(prev, cur, rx_name, &rx))
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

/* A netdev shows when it is not lo and no RDMA port's: that port shows it. */
static bool netdev_shown(const struct top_sample *cur, const struct top_sample_port *nd)
{
	if (streq(nd->name, "lo"))
		return false;
	for (size_t j = 0; j < cur->nr_ports; j++)
		if (cur->ports[j].rdma && cur->ports[j].netdev &&
		    streq(cur->ports[j].netdev, nd->name))
			return false;
	return true;
}

static void add_ports(struct top_model *m, const struct top_sample *prev,
		      const struct top_sample *cur, double seconds)
{
	for (size_t i = 0; i < cur->nr_ports; i++) {
		const struct top_sample_port *s = &cur->ports[i];
		const struct top_sample_port *before =
			prev && seconds > 0 ? find_port(prev, s) : NULL;

		if (!s->rdma && !netdev_shown(cur, s))
			continue;
		struct top_port *p = ARRAY_PUSH(m->ports, m->nr_ports);
		p->rdma = s->rdma;
		p->name = xstrdup(s->name);
		p->netdev = s->netdev ? xstrdup(s->netdev) : NULL;
		p->state = s->state ? xstrdup(s->state) : NULL;
		p->line_gbps = s->line_gbps;
		port_rates(p, before, s, seconds);
		port_flags(p, before, s);
	}
	if (m->nr_ports)
		qsort(m->ports, m->nr_ports, sizeof(*m->ports), port_cmp);
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

void top_model_update(struct top_model *m, const struct top_sample *prev,
		      const struct top_sample *cur, double seconds)
{
	struct top_model old = *m;

	*m = (struct top_model)TOP_MODEL_INIT;
	m->seconds = seconds;
	m->has_mem = cur->has_mem;
	m->mem_total = cur->mem_total;
	m->mem_available = cur->mem_available;
	add_gpus(m, cur);
	add_ports(m, prev, cur, seconds);
	carry_history(m, &old);
	top_model_release(&old);
}

/* A figure rounded to decimals places, or null: no 0.30599999999999999 in the output. */
static json_t *jopt(bool has, double v, int decimals)
{
	double scale = pow(10, decimals);

	return has ? jreal(round(v * scale) / scale) : json_null();
}

static json_t *gpu_json(const struct top_gpu *g)
{
	json_t *o = json_object();

	jset(o, "index", jint(g->index));
	jset(o, "name", jstr(g->name));
	jset(o, "utilization_ratio", jopt(g->has_util, g->util, 3));
	jset(o, "power_watts", jopt(g->has_power, g->power_w, 2));
	jset(o, "temperature_celsius", jopt(g->has_temp, g->temp_c, 1));
	jset(o, "memory_used_bytes", g->has_mem ? jint((int64_t)g->mem_used) : json_null());
	jset(o, "memory_total_bytes", g->has_mem ? jint((int64_t)g->mem_total) : json_null());
	jset(o, "unified_memory", jbool(g->unified_memory));
	return o;
}

static json_t *port_json(const struct top_port *p)
{
	json_t *o = json_object(), *flags = json_array();

	jset(o, "name", jstr(p->name));
	jset(o, "rdma", jbool(p->rdma));
	jset(o, "netdev", jstr(p->netdev));
	jset(o, "state", jstr(p->state));
	jset(o, "tx_gbps", jopt(p->has_rate, p->tx_gbps, 3));
	jset(o, "rx_gbps", jopt(p->has_rate, p->rx_gbps, 3));
	jset(o, "rate_gbps", jopt(p->line_gbps > 0, p->line_gbps, 3));
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
	json_t *root = json_object(), *nodes = json_array();

	jset(root, "schema_version", jint(TOP_SCHEMA_VERSION));
	jset(root, "interval_seconds", jopt(true, interval, 3));
	for (size_t i = 0; i < nr; i++) {
		const struct top_model *m = errors[i] ? NULL : models[i];
		json_t *n = json_object();

		jset(n, "host", jstr(hosts[i]));
		jset(n, "error", jstr(errors[i]));
		if (m) {
			json_t *gpus = json_array(), *ports = json_array();
			jset(n, "sample_interval_seconds", jopt(true, m->seconds, 3));
			jset(n, "memory_total_bytes",
			     m->has_mem ? jint((int64_t)m->mem_total) : json_null());
			jset(n, "memory_available_bytes",
			     m->has_mem ? jint((int64_t)m->mem_available) : json_null());
			jset(n, "gpu_state", jstr(top_gpu_state_name(m->gpu_state)));
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
