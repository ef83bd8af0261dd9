/*
 * link_parse_iperf3.c - iperf3's -J report.
 */
#include "sparkctl.h"

#include <math.h>

#include "bench/link_parse.h"
#include "lib/json.h"

/* iperf3 -J */

/* A number (integer or real) member; NAN when missing or null, -EPROTO when not a number. */
static int jget_number(const json_t *obj, const char *ctx, const char *key, double *ret,
		       struct strbuf *err)
{
	const json_t *v = json_object_get(obj, key);

	*ret = NAN;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_number(v)) {
		strbuf_addf(err, "%s.%s: expected a number", ctx, key);
		return -EPROTO;
	}
	*ret = json_number_value(v);
	return 0;
}

/* A string member into buf ("" when missing); -EPROTO when not a string. */
static int jget_strbuf(const json_t *obj, const char *ctx, const char *key, char *buf, size_t size,
		       struct strbuf *err)
{
	char *s = NULL;

	if (jget_str(obj, ctx, key, &s, err) < 0)
		return -EPROTO;
	snprintf(buf, size, "%s", s ? s : "");
	free(s);
	return 0;
}

static int jget_count(const json_t *obj, const char *ctx, const char *key, int64_t *ret,
		      struct strbuf *err)
{
	return jget_int(obj, ctx, key, ret, err) < 0 ? -EPROTO : 0;
}

static int jget_member(const json_t *obj, const char *ctx, const char *key, const json_t **ret,
		       struct strbuf *err)
{
	return jget_object(obj, ctx, key, ret, err) < 0 ? -EPROTO : 0;
}

static int iperf3_peer(const json_t *start, struct iperf3_result *ret, struct strbuf *err)
{
	const json_t *connected = NULL, *to = NULL, *first;
	int64_t port = -1;
	int r;

	r = jget_array(start, "start", "connected", &connected, err) < 0 ? -EPROTO : 0;
	if (r == 0)
		r = jget_member(start, "start", "connecting_to", &to, err);
	if (r < 0)
		return r;
	first = connected ? json_array_get(connected, 0) : NULL;
	if (first && json_is_object(first)) {
		r = jget_strbuf(first, "start.connected[0]", "remote_host", ret->remote_host,
				sizeof(ret->remote_host), err);
		if (r == 0)
			r = jget_count(first, "start.connected[0]", "remote_port", &port, err);
	}
	if (r == 0 && !ret->remote_host[0] && to) {
		r = jget_strbuf(to, "start.connecting_to", "host", ret->remote_host,
				sizeof(ret->remote_host), err);
		if (r == 0)
			r = jget_count(to, "start.connecting_to", "port", &port, err);
	}
	if (r == 0)
		ret->remote_port = port >= 0 && port <= 65535 ? (int)port : -1;
	return r;
}

static int iperf3_start(const json_t *j, struct iperf3_result *ret, struct strbuf *err)
{
	const json_t *start = NULL, *ts = NULL;
	int64_t streams = -1, reverse = -1, bidir = -1;
	int r;

	r = jget_member(j, NULL, "start", &start, err);
	if (r < 0 || !start)
		return r;
	r = jget_strbuf(start, "start", "version", ret->version, sizeof(ret->version), err);
	if (r == 0)
		r = iperf3_peer(start, ret, err);
	if (r == 0)
		r = jget_member(start, "start", "test_start", &ts, err);
	if (r < 0 || !ts)
		return r;
	r = jget_strbuf(ts, "start.test_start", "protocol", ret->protocol, sizeof(ret->protocol),
			err);
	if (r == 0)
		r = jget_count(ts, "start.test_start", "num_streams", &streams, err);
	if (r == 0)
		r = jget_count(ts, "start.test_start", "reverse", &reverse, err);
	if (r == 0)
		r = jget_count(ts, "start.test_start", "bidir", &bidir, err);
	if (r == 0)
		r = jget_number(ts, "start.test_start", "duration", &ret->duration_s, err);
	if (r < 0)
		return r;
	ret->num_streams = streams >= 0 && streams <= INT_MAX ? (int)streams : -1;
	ret->reverse = reverse > 0;
	if (bidir > 0) {
		strbuf_addstr(err, "a --bidir report: not supported");
		return -EPROTO;
	}
	return 0;
}

static int iperf3_end(const json_t *j, struct iperf3_result *ret, struct strbuf *err)
{
	const json_t *end = NULL, *recv = NULL, *sent = NULL;
	int64_t recv_bytes = -1, sent_bytes = -1;
	double recv_bps, sent_bps, retransmits;
	int r;

	r = jget_member(j, NULL, "end", &end, err);
	if (r == 0 && end)
		r = jget_member(end, "end", "sum_received", &recv, err);
	if (r == 0 && end)
		r = jget_member(end, "end", "sum_sent", &sent, err);
	if (r < 0)
		return r;
	if (!recv || !sent) {
		strbuf_addf(err, "no end.%s in the report", recv ? "sum_sent" : "sum_received");
		return -EPROTO;
	}
	r = jget_number(recv, "end.sum_received", "bits_per_second", &recv_bps, err);
	if (r == 0)
		r = jget_number(recv, "end.sum_received", "seconds", &ret->seconds, err);
	if (r == 0)
		r = jget_count(recv, "end.sum_received", "bytes", &recv_bytes, err);
	if (r == 0)
		r = jget_number(sent, "end.sum_sent", "bits_per_second", &sent_bps, err);
	if (r == 0)
		r = jget_count(sent, "end.sum_sent", "bytes", &sent_bytes, err);
	if (r == 0)
		r = jget_number(sent, "end.sum_sent", "retransmits", &retransmits, err);
	if (r < 0)
		return r;
	if (retransmits >= 0 && retransmits < 9e18)
		ret->retransmits = (int64_t)retransmits;
	ret->received_gbps = recv_bps / 1e9;
	ret->sent_gbps = sent_bps / 1e9;
	ret->received_bytes = recv_bytes > 0 ? (uint64_t)recv_bytes : 0;
	ret->sent_bytes = sent_bytes > 0 ? (uint64_t)sent_bytes : 0;
	if (isnan(recv_bps) || isnan(sent_bps)) {
		strbuf_addstr(err, "no bits_per_second in end.sum_received or end.sum_sent");
		return -EPROTO;
	}
	return 0;
}

int iperf3_parse_json(const char *text, struct iperf3_result *ret, struct strbuf *err)
{
	struct strbuf why = STRBUF_INIT;
	const char *start = text ? text : "";
	const json_t *error;
	json_error_t jerr;
	json_t *j;
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->remote_port = -1;
	ret->num_streams = -1;
	ret->duration_s = NAN;
	ret->seconds = NAN;
	ret->received_gbps = NAN;
	ret->sent_gbps = NAN;
	ret->retransmits = -1;

	start += strspn(start, " \t\r\n");
	if (*start != '{') {
		start = strstr(start, "\n{");
		if (!start) {
			strbuf_addstr(err, "no JSON object in iperf3's output");
			return -EINVAL;
		}
		start++;
	}
	/*
	 * Not json_load_buffer(): it rejects duplicate keys, which iperf 3.12
	 * prints, and text after the object, which 3.16 and 3.17 print.
	 */
	j = json_loadb(start, strlen(start), JSON_DISABLE_EOF_CHECK, &jerr);
	if (!j) {
		strbuf_addf(err, "iperf3 output:%d:%d: ", jerr.line, jerr.column);
		strbuf_addstr_printable(err, jerr.text); /* it quotes the output's bytes */
		return -EINVAL;
	}
	if (!json_is_object(j)) {
		strbuf_addstr(err, "iperf3 output: expected a JSON object");
		json_decref(j);
		return -EINVAL;
	}

	r = iperf3_start(j, ret, &why);
	if (r == 0)
		r = iperf3_end(j, ret, &why);

	/* an error wins over a partial report */
	error = json_object_get(j, "error");
	if (error && !json_is_null(error)) {
		if (json_is_string(error) && *json_string_value(error)) {
			strbuf_addstr(err, json_string_value(error));
			r = -EIO;
		} else {
			strbuf_reset(&why);
			strbuf_addstr(&why, "error: expected a message");
			r = -EPROTO;
		}
	}
	if (r < 0 && r != -EIO)
		strbuf_addstr(err, why.buf);
	strbuf_release(&why);
	json_decref(j);
	return r;
}
