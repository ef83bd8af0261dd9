/*
 * status_view.c - the cluster on one screen: a row per node from its
 * answer to 'sparkctl agent status', the same figures in JSON under
 * "summary" beside the answer itself.
 */
#include "sparkctl.h"

#include <math.h>

#include "view/color.h"
#include "view/status_view.h"

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

/* A count read back as a double: an integer, or null when unknown. */
static json_t *jcount(double v)
{
	return isfinite(v) && v >= 0 ? jint((int64_t)v) : json_null();
}

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* A figure, or null when no GPU reported it. */
static json_t *jnum(double v)
{
	return isnan(v) ? json_null() : jreal(v);
}

/* GPU: how many, the first one's name without the vendor; hottest, mean utilisation, total power.
 */
static void emit_gpus(const json_t *gpus, struct emitter *e)
{
	size_t n = json_array_size(gpus), temps = 0, utils = 0, powers = 0;
	double hottest = -INFINITY, util = 0, power = 0;
	const char *name = n ? str(json_array_get(gpus, 0), "name") : NULL;
	char text[32];

	if (name && starts_with(name, "NVIDIA "))
		name += strlen("NVIDIA ");
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
	emit_value(e, "gpus", jint((int64_t)n), NULL);
	if (!n)
		emit_cell(e, "gpu_name", json_null(), "none");
	else if (n > 1)
		emit_cellf(e, "gpu_name", jstr(name), "%zu x %s", n, name ? name : "GPU");
	else
		emit_cell(e, "gpu_name", jstr(name), name ? name : "GPU");
	hottest = temps ? hottest : NAN;
	util = utils ? util / (double)utils : NAN;
	power = powers ? power : NAN;
	snprintf(text, sizeof(text), "%.0f C", hottest);
	emit_cell(e, "temperature_max_celsius", jnum(hottest), temps ? text : NULL);
	snprintf(text, sizeof(text), "%.0f%%", 100.0 * util);
	emit_cell(e, "utilization_mean_ratio", jnum(util), utils ? text : NULL);
	snprintf(text, sizeof(text), "%.0f W", power);
	emit_cell(e, "power_total_watts", jnum(power), powers ? text : NULL);
}

/* Append v to a "/"-separated list of distinct values; true when it was new. */
static bool add_distinct(struct strbuf *sb, const char *v)
{
	const char *p = sb->buf;
	size_t len = strlen(v);

	for (; *p; p += strcspn(p, "/") + (p[strcspn(p, "/")] == '/'))
		if (strncmp(p, v, len) == 0 && (p[len] == '/' || p[len] == '\0'))
			return false;
	if (sb->len)
		strbuf_addch(sb, '/');
	strbuf_addstr(sb, v);
	return true;
}

/* FABRIC: "2 up, 200G, MTU 9000" - the fabric ports ACTIVE, their distinct rates and MTUs. */
static void emit_fabric(const json_t *ports, struct emitter *e)
{
	struct strbuf rates = STRBUF_INIT, mtus = STRBUF_INIT, text = STRBUF_INIT;
	json_t *jrates = json_array(), *jmtus = json_array();
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
		snprintf(v, sizeof(v), "%gG", x = num(p, "rate_gbps"));
		if (!isnan(x) && add_distinct(&rates, v))
			jpush(jrates, jreal(x));
		snprintf(v, sizeof(v), "%.0f", x = num(p, "mtu"));
		if (!isnan(x) && add_distinct(&mtus, v))
			jpush(jmtus, jint((int64_t)x));
	}
	if (up)
		strbuf_addf(&text, "%zu up, %s, MTU %s", up, rates.len ? rates.buf : "?",
			    mtus.len ? mtus.buf : "?");
	emit_cell(e, "fabric_ports_up", jint((int64_t)up), up ? text.buf : "none up");
	emit_value(e, "fabric_rates_gbps", jrates, NULL);
	emit_value(e, "fabric_mtus", jmtus, NULL);
	strbuf_release(&rates);
	strbuf_release(&mtus);
	strbuf_release(&text);
}

/* DOCTOR: the failures and warnings of the last doctor run there, and its age. */
static void emit_doctor(const json_t *doctor, int64_t now, struct emitter *e)
{
	const json_t *sum = json_object_get(doctor, "summary");
	char age[24];
	int64_t seconds;

	if (!json_is_object(doctor) || !json_is_object(sum)) {
		emit_cell(e, "doctor_fail", json_null(), "never run");
		emit_value(e, "doctor_warn", json_null(), NULL);
		emit_value(e, "doctor_age_seconds", json_null(), NULL);
		return;
	}
	seconds = now - (int64_t)num(doctor, "time");
	status_age(seconds, age);
	/* Counts: integers in JSON, as doctor wrote them. */
	emit_cellf(e, "doctor_fail", jcount(num(sum, "fail")), "%.0f fail, %.0f warn (%s ago)",
		   num(sum, "fail"), num(sum, "warn"), age);
	emit_value(e, "doctor_warn", jcount(num(sum, "warn")), NULL);
	emit_value(e, "doctor_age_seconds", jint(seconds < 0 ? 0 : seconds), NULL);
}

static void emit_row(const struct status_node *sn, int64_t now, struct emitter *e)
{
	emit_row_open(e);
	emit_cell(e, "host", jstr(sn->host), sn->host);
	emit_cell(e, "reachable", jbool(!sn->error),
		  sn->sparkctl_missing ? "no sparkctl"
		  : sn->error	       ? "down"
				       : "up");
	emit_value(e, "error", jstr(sn->error), NULL);
	emit_value(e, "sparkctl_missing", jbool(sn->sparkctl_missing), NULL);
	emit_value(e, "status", sn->doc ? json_incref(sn->doc) : json_null(), NULL);
	emit_object_open(e, "summary");
	if (sn->error) {
		for (size_t k = 0; k < 6; k++)
			emit_cell(e, NULL, NULL, NULL);
	} else {
		emit_gpus(json_object_get(sn->doc, "gpus"), e);
		emit_fabric(json_object_get(sn->doc, "ports"), e);
		emit_doctor(json_object_get(sn->doc, "doctor"), now, e);
	}
	emit_close(e);
	emit_row_close(e);
}

void status_emit(const struct status_node *nodes, size_t n, int64_t now, struct emitter *e)
{
	static const char *const headers[] = { "NODE",	"STATE",  "GPU",    ">TEMP",
					       ">UTIL", ">POWER", "FABRIC", "DOCTOR" };

	emit_int(e, "schema_version", NULL, 1);
	emit_table_open(e, "nodes", headers, ARRAY_SIZE(headers), 160);
	for (size_t i = 0; i < n; i++)
		emit_row(&nodes[i], now, e);
	emit_table_close(e);
	/* Below the table, why a node shows no figures. */
	for (size_t i = 0; i < n && !emit_is_json(e); i++) {
		const char *gpu_error = nodes[i].doc ? str(nodes[i].doc, "gpu_error") : NULL;
		struct strbuf line = STRBUF_INIT;
		if (nodes[i].sparkctl_missing) {
			emit_str_color(e, NULL, COLOR_FAIL, "%s", nodes[i].error);
			emit_text(e, "\n");
		} else if (nodes[i].error) {
			strbuf_addf(&line, "%s: unreachable: %s", nodes[i].host, nodes[i].error);
			emit_str_color(e, NULL, COLOR_FAIL, "%s", line.buf);
			emit_text(e, "\n");
		} else if (gpu_error) {
			strbuf_addf(&line, "%s: no GPU figures: %s", nodes[i].host, gpu_error);
			emit_str(e, NULL, "%s\n", line.buf);
		}
		strbuf_release(&line);
	}
}
