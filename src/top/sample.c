#include "sparkctl.h"

#include <math.h>

#include "exporter/collect.h"
#include "exporter/gpu_metrics.h"
#include "exporter/metrics.h"
#include "inventory/inventory.h"
#include "lib/parse.h"
#include "lib/xalloc.h"
#include "probe/meminfo.h"
#include "probe/netdevs.h"
#include "probe/rdma_ports.h"
#include "top/sample.h"

static const char *const gpu_states[] = {
	[TOP_GPU_OFF] = "off",
	[TOP_GPU_NO_NVML] = "no_nvml",
	[TOP_GPU_OK] = "ok",
};

/*
 * A netdev's statistics and their names in counters{}: the exporter's
 * metric names without "sparkctl_network_" and "_total", so that a
 * counter has one name wherever sparkctl shows it.
 */
static const char *const netdev_stats[][2] = {
	{ "rx_bytes", "receive_bytes" },     { "tx_bytes", "transmit_bytes" },
	{ "rx_packets", "receive_packets" }, { "tx_packets", "transmit_packets" },
	{ "rx_errors", "receive_errs" },     { "tx_errors", "transmit_errs" },
	{ "rx_dropped", "receive_drop" },    { "tx_dropped", "transmit_drop" },
};

const char *top_gpu_state_name(enum top_gpu_state s)
{
	return gpu_states[s];
}

/* ---- collecting ---- */

/* A size in bytes as an integer, null when unknown or beyond JSON's integers. */
static json_t *jbytes(double v)
{
	return v >= 0 && v < 9.2e18 ? jint((int64_t)llround(v)) : json_null();
}

static json_t *gpus_json(struct exporter_gpu *g)
{
	static const char *const gauges[][2] = {
		{ "sparkctl_gpu_utilization_ratio", "utilization_ratio" },
		{ "sparkctl_gpu_power_watts", "power_watts" },
		{ "sparkctl_gpu_temperature_celsius", "temperature_celsius" },
	};
	struct metric_set set = METRIC_SET_INIT;
	json_t *arr = json_array();

	/* A query that failed leaves its figure out; the others still count. */
	exporter_gpu_collect(g, &set);
	for (size_t i = 0; i < exporter_gpu_count(g); i++) {
		json_t *o = json_object();
		char idx[24];
		double v, total;
		bool has_total;

		snprintf(idx, sizeof(idx), "%zu", i);
		jset(o, "index", jint((int64_t)i));
		jset(o, "name", jstr(exporter_gpu_name(g, i)));
		for (size_t k = 0; k < ARRAY_SIZE(gauges); k++)
			jset(o, gauges[k][1],
			     metric_set_value(&set, gauges[k][0], "gpu", idx, &v) == 0
				     ? jreal(v)
				     : json_null());
		jset(o, "memory_used_bytes",
		     metric_set_value(&set, "sparkctl_gpu_memory_used_bytes", "gpu", idx, &v) == 0
			     ? jbytes(v)
			     : json_null());
		has_total = metric_set_value(&set, "sparkctl_gpu_memory_total_bytes", "gpu", idx,
					     &total) == 0;
		jset(o, "memory_total_bytes", has_total ? jbytes(total) : json_null());
		/* No framebuffer figure: the GPU shares the host's memory (GB10). */
		jset(o, "unified_memory", jbool(!has_total));
		jpush(arr, o);
	}
	metric_set_release(&set);
	return arr;
}

/* The counters of one port's counters/ or hw_counters/ as they are read. */
struct counters_read {
	json_t *obj;
	bool hw;
	const struct rdma_counter *known; /* of the file about to be read */
};

/* Only the files the exporter names are read: the others may be anything. */
static bool known_counter(void *data, const char *name)
{
	struct counters_read *c = data;

	c->known = rdma_counter_find(name, c->hw);
	return c->known != NULL;
}

/* The exporter's metric name without "_total": the counter's name in counters{}. */
static void add_count(json_t *obj, const char *metric, size_t len, const char *text, uint64_t scale)
{
	char *key;
	uint64_t n;

	if (len > 6 && streq(metric + len - 6, "_total"))
		len -= 6;
	/* "N/A" (no PMA) or a value beyond JSON's integers: no figure. */
	if (exporter_parse_counter(text, &n) < 0 || n > (uint64_t)INT64_MAX / scale)
		return;
	key = xstrndup(metric, len);
	jset(obj, key, jint((int64_t)(n * scale)));
	free(key);
}

static int rdma_counter(void *data, const char *name, const char *text)
{
	struct counters_read *c = data;

	(void)name;
	add_count(c->obj, c->known->metric, strlen(c->known->metric), text, c->known->scale);
	return 0;
}

static int netdev_counter(void *data, const char *name, const char *text)
{
	for (size_t i = 0; i < ARRAY_SIZE(netdev_stats); i++)
		if (streq(netdev_stats[i][0], name))
			add_count(data, netdev_stats[i][1], strlen(netdev_stats[i][1]), text, 1);
	return 0;
}

/* MTU and carrier of netdev (NULL: unknown) into o. */
static void add_netdev_link(const struct host_reader *rd, const char *netdev, json_t *o)
{
	struct netdev_link l = { .mtu = INV_UNKNOWN, .carrier = TRI_UNKNOWN };

	if (!netdev || netdev_read_link(rd, netdev, &l) <= 0)
		l = (struct netdev_link){ .mtu = INV_UNKNOWN, .carrier = TRI_UNKNOWN };
	jset(o, "mtu", jint_known(l.mtu));
	jset(o, "carrier", jtri(l.carrier));
	netdev_link_release(&l);
}

static json_t *rdma_port_json(const struct host_reader *rd, const char *dev, const char *port)
{
	struct rdma_port_link link = { 0 };
	struct counters_read c = { json_object(), false, NULL };
	json_t *o = NULL;
	char *netdev = NULL;
	uint32_t num;

	if (parse_u32(port, &num) < 0 || rdma_read_port_link(rd, dev, port, &link) <= 0) {
		json_decref(c.obj);
		goto out;
	}
	netdev = rdma_read_port_netdev(rd, dev, port);
	if (netdev && !*netdev)
		free_and_null(&netdev);
	o = json_object();
	jset(o, "rdma_device", jstr(dev));
	jset(o, "port", jint(num));
	jset(o, "netdev", jstr(netdev));
	jset(o, "state", jstr(link.state_name));
	jset(o, "rate_gbps",
	     link.rate_mbps > 0 ? jreal((double)link.rate_mbps / 1000.0) : json_null());
	add_netdev_link(rd, netdev, o);
	rdma_read_counters(rd, dev, port, false, known_counter, rdma_counter, &c);
	c.hw = true;
	rdma_read_counters(rd, dev, port, true, known_counter, rdma_counter, &c);
	jset(o, "counters", c.obj);
out:
	rdma_port_link_release(&link);
	free(netdev);
	return o;
}

static json_t *ports_json(const struct host_reader *rd)
{
	struct strvec devs = STRVEC_INIT, ports = STRVEC_INIT;
	json_t *arr = json_array(), *o;

	rdma_list_devices(rd, &devs);
	for (size_t d = 0; d < devs.nr; d++) {
		strvec_clear(&ports);
		rdma_list_ports(rd, devs.v[d], &ports);
		for (size_t p = 0; p < ports.nr; p++)
			if ((o = rdma_port_json(rd, devs.v[d], ports.v[p])) != NULL)
				jpush(arr, o);
	}
	strvec_clear(&devs);
	strvec_clear(&ports);
	return arr;
}

static json_t *netdevs_json(const struct host_reader *rd)
{
	const char *files[ARRAY_SIZE(netdev_stats) + 1] = { NULL };
	struct strvec devs = STRVEC_INIT;
	json_t *arr = json_array();

	for (size_t i = 0; i < ARRAY_SIZE(netdev_stats); i++)
		files[i] = netdev_stats[i][0];
	netdev_list(rd, &devs);
	for (size_t i = 0; i < devs.nr; i++) {
		struct netdev_link l = { 0 };
		json_t *o, *counters;

		if (netdev_read_link(rd, devs.v[i], &l) <= 0) {
			netdev_link_release(&l);
			continue;
		}
		o = json_object();
		counters = json_object();
		jset(o, "name", jstr(devs.v[i]));
		jset(o, "state", jstr(l.operstate));
		jset(o, "speed_gbps",
		     l.speed_mbps > 0 ? jreal((double)l.speed_mbps / 1000.0) : json_null());
		jset(o, "mtu", jint_known(l.mtu));
		jset(o, "carrier", jtri(l.carrier));
		netdev_read_statistics(rd, devs.v[i], files, netdev_counter, counters);
		jset(o, "counters", counters);
		jpush(arr, o);
		netdev_link_release(&l);
	}
	strvec_clear(&devs);
	return arr;
}

json_t *top_sample_collect(const struct top_sample_source *src)
{
	const struct host_reader rd = { .root = src->root };
	struct meminfo mi;
	enum top_gpu_state state = src->gpu_disabled ? TOP_GPU_OFF
				   : src->gpu	     ? TOP_GPU_OK
						     : TOP_GPU_NO_NVML;
	json_t *o = json_object();

	jset(o, "gpu_state", jstr(gpu_states[state]));
	jset(o, "gpus", state == TOP_GPU_OK ? gpus_json(src->gpu) : json_array());
	if (meminfo_read(&rd, &mi) <= 0)
		mi.mem_total = mi.mem_available = INV_UNKNOWN;
	jset(o, "memory_total_bytes", jint_known(mi.mem_total));
	jset(o, "memory_available_bytes", jint_known(mi.mem_available));
	jset(o, "ports", ports_json(&rd));
	jset(o, "netdevs", netdevs_json(&rd));
	return o;
}

/* ---- reading back ---- */

static int bad(struct strbuf *err, const char *path, const char *key, const char *what)
{
	strbuf_addf(err, "%s%s%s: %s", path, *path && *key ? "." : "", key, what);
	return -EINVAL;
}

static int too_many(struct strbuf *err, const char *key, unsigned max)
{
	strbuf_addf(err, "%s: more than %u", key, max);
	return -EINVAL;
}

/* Absent or null: *has false.  A number in [lo, hi]: *v. */
static int opt_real(const json_t *o, const char *path, const char *key, double lo, double hi,
		    bool *has, double *v, struct strbuf *err)
{
	const json_t *j = json_object_get(o, key);

	*has = false;
	if (!j || json_is_null(j))
		return 0;
	if (!json_is_number(j))
		return bad(err, path, key, "expected a number or null");
	*v = json_number_value(j);
	if (!isfinite(*v) || *v < lo || *v > hi)
		return bad(err, path, key, "out of range");
	*has = true;
	return 0;
}

/* Absent or null: *has false.  An integer >= 0: *v. */
static int opt_count(const json_t *o, const char *path, const char *key, bool *has, uint64_t *v,
		     struct strbuf *err)
{
	const json_t *j = json_object_get(o, key);

	*has = false;
	if (!j || json_is_null(j))
		return 0;
	if (!json_is_integer(j) || json_integer_value(j) < 0)
		return bad(err, path, key, "expected a non-negative integer or null");
	*v = (uint64_t)json_integer_value(j);
	*has = true;
	return 0;
}

/* Absent or null: NULL.  A string: a copy. */
static int opt_str(const json_t *o, const char *path, const char *key, char **ret,
		   struct strbuf *err)
{
	const json_t *j = json_object_get(o, key);

	*ret = NULL;
	if (!j || json_is_null(j))
		return 0;
	if (!json_is_string(j))
		return bad(err, path, key, "expected a string or null");
	*ret = xstrndup(json_string_value(j), json_string_length(j));
	return 0;
}

static int need(const json_t *o, const char *path, const char *key, struct strbuf *err)
{
	const json_t *j = json_object_get(o, key);

	return j && !json_is_null(j) ? 0 : bad(err, path, key, "missing");
}

static int need_array(const json_t *o, const char *key, const json_t **ret, struct strbuf *err)
{
	*ret = json_object_get(o, key);
	if (!*ret)
		return bad(err, "", key, "missing");
	return json_is_array(*ret) ? 0 : bad(err, "", key, "expected an array");
}

static int parse_gpu(const json_t *o, const char *path, struct top_sample_gpu *g,
		     struct strbuf *err)
{
	const json_t *index = json_object_get(o, "index"), *unified;

	if (!json_is_object(o))
		return bad(err, path, "", "expected an object");
	if (!json_is_integer(index) || json_integer_value(index) < 0 ||
	    json_integer_value(index) > 65535)
		return bad(err, path, "index", "expected an integer from 0 to 65535");
	g->index = json_integer_value(index);
	unified = json_object_get(o, "unified_memory");
	if (unified && !json_is_boolean(unified))
		return bad(err, path, "unified_memory", "expected true or false");
	g->unified_memory = json_is_true(unified);
	if (opt_str(o, path, "name", &g->name, err) < 0 ||
	    opt_real(o, path, "utilization_ratio", 0, 1, &g->has_util, &g->util, err) < 0 ||
	    opt_real(o, path, "power_watts", 0, 1e6, &g->has_power, &g->power_w, err) < 0 ||
	    opt_real(o, path, "temperature_celsius", -273.15, 1e4, &g->has_temp, &g->temp_c, err) <
		    0 ||
	    opt_count(o, path, "memory_used_bytes", &g->has_mem_used, &g->mem_used, err) < 0 ||
	    opt_count(o, path, "memory_total_bytes", &g->has_mem_total, &g->mem_total, err) < 0)
		return -EINVAL;
	return 0;
}

static int parse_counters(const json_t *o, const char *path, struct top_sample_port *p,
			  struct strbuf *err)
{
	const json_t *counters = json_object_get(o, "counters"), *v;
	const char *name;

	if (!json_is_object(counters))
		return bad(err, path, "counters", "expected an object");
	json_object_foreach((json_t *)counters, name, v)
	{
		/* The name is the sender's: not repeated in the message. */
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return bad(err, path, "counters", "a value that is not a count");
		struct top_counter *c = ARRAY_PUSH(p->counters, p->nr_counters);
		c->name = xstrdup(name);
		c->value = (uint64_t)json_integer_value(v);
	}
	return 0;
}

static int parse_port(const json_t *o, const char *path, bool rdma, struct top_sample_port *p,
		      struct strbuf *err)
{
	const char *rate_key = rdma ? "rate_gbps" : "speed_gbps";
	bool has_rate;
	double rate = 0;

	p->rdma = rdma;
	if (!json_is_object(o))
		return bad(err, path, "", "expected an object");
	if (rdma) {
		const json_t *port = json_object_get(o, "port");
		char *dev = NULL;

		if (need(o, path, "rdma_device", err) < 0 ||
		    opt_str(o, path, "rdma_device", &dev, err) < 0)
			return -EINVAL;
		if (!json_is_integer(port) || json_integer_value(port) < 0 ||
		    json_integer_value(port) > 65535) {
			free(dev);
			return bad(err, path, "port", "expected an integer from 0 to 65535");
		}
		p->name = xasprintf("%s/%" PRId64, dev, (int64_t)json_integer_value(port));
		free(dev);
		if (opt_str(o, path, "netdev", &p->netdev, err) < 0)
			return -EINVAL;
	} else if (need(o, path, "name", err) < 0 || opt_str(o, path, "name", &p->name, err) < 0) {
		return -EINVAL;
	}
	if (opt_str(o, path, "state", &p->state, err) < 0 ||
	    opt_real(o, path, rate_key, 0, 1e9, &has_rate, &rate, err) < 0)
		return -EINVAL;
	p->line_gbps = has_rate ? rate : 0;
	return parse_counters(o, path, p, err);
}

static int parse_memory(const json_t *doc, struct top_sample *s, struct strbuf *err)
{
	bool has_total, has_avail;

	if (opt_count(doc, "", "memory_total_bytes", &has_total, &s->mem_total, err) < 0 ||
	    opt_count(doc, "", "memory_available_bytes", &has_avail, &s->mem_available, err) < 0)
		return -EINVAL;
	/* Figures that contradict each other are no figures. */
	s->has_mem = has_total && has_avail && s->mem_total > 0 && s->mem_available <= s->mem_total;
	return 0;
}

static int parse_gpu_state(const json_t *doc, struct top_sample *s, struct strbuf *err)
{
	const char *state = json_string_value(json_object_get(doc, "gpu_state"));

	for (size_t i = 0; state && i < ARRAY_SIZE(gpu_states); i++) {
		if (streq(state, gpu_states[i])) {
			s->gpu_state = (enum top_gpu_state)i;
			return 0;
		}
	}
	return bad(err, "", "gpu_state", "expected \"ok\", \"no_nvml\" or \"off\"");
}

/* Whether the last port of s has the name of another of its kind: rates would mix them. */
static bool port_repeated(const struct top_sample *s)
{
	const struct top_sample_port *last = &s->ports[s->nr_ports - 1];

	for (size_t i = 0; i + 1 < s->nr_ports; i++)
		if (s->ports[i].rdma == last->rdma && streq(s->ports[i].name, last->name))
			return true;
	return false;
}

/* ports[] (rdma) or netdevs[] into s->ports. */
static int parse_ports(const json_t *doc, const char *key, bool rdma, struct top_sample *s,
		       struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT;
	const json_t *arr;
	int r = need_array(doc, key, &arr, err);

	if (r == 0 && json_array_size(arr) > TOP_SAMPLE_MAX_PORTS)
		r = too_many(err, key, TOP_SAMPLE_MAX_PORTS);
	for (size_t i = 0; r == 0 && i < json_array_size(arr); i++) {
		strbuf_reset(&path);
		strbuf_addf(&path, "%s[%zu]", key, i);
		r = parse_port(json_array_get(arr, i), path.buf, rdma,
			       ARRAY_PUSH(s->ports, s->nr_ports), err);
		if (r == 0 && port_repeated(s))
			r = bad(err, path.buf, "",
				rdma ? "a second port of that device and number"
				     : "a second netdev of that name");
	}
	strbuf_release(&path);
	return r;
}

int top_sample_parse(const json_t *doc, struct top_sample *out, struct strbuf *err)
{
	struct top_sample s = TOP_SAMPLE_INIT;
	struct strbuf path = STRBUF_INIT;
	const json_t *gpus;
	int r = -EINVAL;

	*out = (struct top_sample)TOP_SAMPLE_INIT;
	if (!json_is_object(doc)) {
		strbuf_addstr(err, "not a JSON object");
		goto out;
	}
	if (parse_gpu_state(doc, &s, err) < 0 || need_array(doc, "gpus", &gpus, err) < 0 ||
	    parse_memory(doc, &s, err) < 0)
		goto out;
	if (json_array_size(gpus) > TOP_SAMPLE_MAX_GPUS) {
		too_many(err, "gpus", TOP_SAMPLE_MAX_GPUS);
		goto out;
	}
	for (size_t i = 0; i < json_array_size(gpus); i++) {
		strbuf_reset(&path);
		strbuf_addf(&path, "gpus[%zu]", i);
		if (parse_gpu(json_array_get(gpus, i), path.buf, ARRAY_PUSH(s.gpus, s.nr_gpus),
			      err) < 0)
			goto out;
	}
	if (parse_ports(doc, "ports", true, &s, err) < 0 ||
	    parse_ports(doc, "netdevs", false, &s, err) < 0)
		goto out;
	*out = s;
	s = (struct top_sample)TOP_SAMPLE_INIT;
	r = 0;
out:
	top_sample_release(&s);
	strbuf_release(&path);
	return r;
}

void top_sample_release(struct top_sample *s)
{
	for (size_t i = 0; i < s->nr_gpus; i++)
		free(s->gpus[i].name);
	free(s->gpus);
	for (size_t i = 0; i < s->nr_ports; i++) {
		struct top_sample_port *p = &s->ports[i];
		free(p->name);
		free(p->netdev);
		free(p->state);
		for (size_t j = 0; j < p->nr_counters; j++)
			free(p->counters[j].name);
		free(p->counters);
	}
	free(s->ports);
	*s = (struct top_sample)TOP_SAMPLE_INIT;
}

const struct top_counter *top_sample_counter(const struct top_sample_port *p, const char *name)
{
	for (size_t i = 0; i < p->nr_counters; i++)
		if (streq(p->counters[i].name, name))
			return &p->counters[i];
	return NULL;
}
