#include "sparkctl.h"

#include <math.h>

#include "view/status_view.h"
#include "view/table.h"

#define RED   "\033[31m"
#define RESET "\033[0m"

void status_age(int64_t s, char buf[24])
{
	if (s < 0)
		s = 0;
	if (s < 120)
		snprintf(buf, 24, "%" PRId64 "s", s);
	else if (s < 120 * 60)
		snprintf(buf, 24, "%" PRId64 "m", s / 60);
	else if (s < 48 * 3600)
		snprintf(buf, 24, "%" PRId64 "h", s / 3600);
	else
		snprintf(buf, 24, "%" PRId64 "d", s / 86400);
}

static double num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* "8 x H100 80GB HBM3": how many GPUs, and the first one's name without the vendor. */
static void gpu_cells(struct table *t, const json_t *gpus)
{
	size_t n = json_array_size(gpus), temps = 0, utils = 0, powers = 0;
	double hottest = -INFINITY, util = 0, power = 0;
	const char *name = n ? str(json_array_get(gpus, 0), "name") : NULL;

	if (!n) {
		for (int i = 0; i < 4; i++)
			table_cell(t, i ? NULL : "none");
		return;
	}
	if (name && starts_with(name, "NVIDIA "))
		name += strlen("NVIDIA ");
	if (n > 1)
		table_cellf(t, "%zu x %s", n, name ? name : "GPU");
	else
		table_cell(t, name ? name : "GPU");
	for (size_t i = 0; i < n; i++) {
		const json_t *g = json_array_get(gpus, i);
		double v;
		if (!isnan(v = num(g, "temperature_celsius"))) {
			hottest = fmax(hottest, v);
			temps++;
		}
		if (!isnan(v = num(g, "utilization_ratio"))) {
			util += v;
			utils++;
		}
		if (!isnan(v = num(g, "power_watts"))) {
			power += v;
			powers++;
		}
	}
	if (temps)
		table_cellf(t, "%.0f C", hottest);
	else
		table_cell(t, NULL);
	if (utils)
		table_cellf(t, "%.0f%%", 100.0 * util / (double)utils);
	else
		table_cell(t, NULL);
	if (powers)
		table_cellf(t, "%.0f W", power);
	else
		table_cell(t, NULL);
}

/* Append v to a "/"-separated list of distinct values. */
static void add_distinct(struct strbuf *sb, const char *v)
{
	const char *p = sb->buf;
	size_t len = strlen(v);

	for (; *p; p += strcspn(p, "/") + (p[strcspn(p, "/")] == '/'))
		if (strncmp(p, v, len) == 0 && (p[len] == '/' || p[len] == '\0'))
			return;
	if (sb->len)
		strbuf_addch(sb, '/');
	strbuf_addstr(sb, v);
}

/* "2 up, 200G, MTU 9000": the fabric ports that are ACTIVE, their rates and MTUs. */
static void fabric_cell(struct table *t, const json_t *ports)
{
	struct strbuf rates = STRBUF_INIT, mtus = STRBUF_INIT;
	size_t up = 0, i;
	const json_t *p;

	json_array_foreach(ports, i, p)
	{
		char v[32];
		double x;
		if (!json_is_true(json_object_get(p, "fabric")) || !str(p, "state") ||
		    strcmp(str(p, "state"), "ACTIVE") != 0)
			continue;
		up++;
		if (!isnan(x = num(p, "rate_gbps"))) {
			snprintf(v, sizeof(v), "%gG", x);
			add_distinct(&rates, v);
		}
		if (!isnan(x = num(p, "mtu"))) {
			snprintf(v, sizeof(v), "%.0f", x);
			add_distinct(&mtus, v);
		}
	}
	if (!up)
		table_cell(t, "none up");
	else
		table_cellf(t, "%zu up, %s, MTU %s", up, rates.len ? rates.buf : "?",
			    mtus.len ? mtus.buf : "?");
	strbuf_release(&rates);
	strbuf_release(&mtus);
}

static void doctor_cell(struct table *t, const json_t *doctor, int64_t now)
{
	const json_t *sum = json_object_get(doctor, "summary");
	char age[24];

	if (!json_is_object(doctor) || !json_is_object(sum)) {
		table_cell(t, "never run");
		return;
	}
	status_age(now - (int64_t)num(doctor, "time"), age);
	table_cellf(t, "%.0f fail, %.0f warn (%s ago)", num(sum, "fail"), num(sum, "warn"), age);
}

void status_render(const struct status_node *nodes, size_t n, int64_t now, bool color,
		   struct strbuf *out)
{
	static const char *const headers[] = { "NODE",	"STATE",  "GPU",    ">TEMP",
					       ">UTIL", ">POWER", "FABRIC", "DOCTOR" };
	struct table t;

	table_init(&t, ARRAY_SIZE(headers), headers);
	for (size_t i = 0; i < n; i++) {
		const struct status_node *sn = &nodes[i];
		table_cell(&t, sn->host);
		if (sn->error) {
			table_cell(&t, "down");
			for (size_t k = 2; k < ARRAY_SIZE(headers); k++)
				table_cell(&t, NULL);
			continue;
		}
		table_cell(&t, "up");
		gpu_cells(&t, json_object_get(sn->doc, "gpus"));
		fabric_cell(&t, json_object_get(sn->doc, "ports"));
		doctor_cell(&t, json_object_get(sn->doc, "doctor"), now);
	}
	table_render(&t, 160, out);
	table_release(&t);
	for (size_t i = 0; i < n; i++) {
		const char *gpu_error = nodes[i].doc ? str(nodes[i].doc, "gpu_error") : NULL;
		if (nodes[i].error)
			strbuf_addf(out, "%s%s: unreachable: %s%s\n", color ? RED : "",
				    nodes[i].host, nodes[i].error, color ? RESET : "");
		else if (gpu_error)
			strbuf_addf(out, "%s: no GPU figures: %s\n", nodes[i].host, gpu_error);
	}
}

json_t *status_json(const struct status_node *nodes, size_t n)
{
	json_t *doc = json_object(), *arr = json_array();

	jset(doc, "schema_version", jint(1));
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_object();
		jset(o, "host", jstr(nodes[i].host));
		jset(o, "reachable", jbool(!nodes[i].error));
		jset(o, "error", jstr(nodes[i].error));
		jset(o, "status", nodes[i].doc ? json_incref(nodes[i].doc) : json_null());
		jpush(arr, o);
	}
	jset(doc, "nodes", arr);
	return doc;
}
