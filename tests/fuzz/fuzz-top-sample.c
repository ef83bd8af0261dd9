/*
 * fuzz-top-sample - what 'sparkctl top -H' reads from a node's 'agent
 * status': the JSON, the sample, and the model and layout over whatever it
 * accepts.
 *
 * A sample that parses is taken as both samples of a model, either way
 * round, which must give no negative rate; the model is laid out on a
 * small terminal, every line within its width, and written as JSON.  A
 * sample that does not parse must say why and leave nothing behind.
 */
#include "sparkctl.h"

#include "fuzz.h"
#include "lib/json.h"
#include "top/model.h"
#include "top/sample.h"
#include "view/top_view.h"

static void check_model(const struct top_sample *s)
{
	struct top_model m = TOP_MODEL_INIT;
	struct strbuf out = STRBUF_INIT;
	const char *host = "node", *error = NULL;
	const struct top_model *models[1] = { &m };
	json_t *j;

	top_model_update(&m, NULL, s, 0);
	top_model_update(&m, s, s, 1);
	for (size_t i = 0; i < m.nr_ports; i++) {
		const struct top_port *p = &m.ports[i];
		/* the same counters twice: a rate of zero, or none */
		FUZZ_CHECK(!p->has_rate || (p->tx_gbps == 0 && p->rx_gbps == 0));
		FUZZ_CHECK(p->nr_flags == 0);
	}
	struct top_view_node n = { "node", NULL, &m };
	struct top_view_opts o = { .width = 40, .height = 10, .interval = 1, .keys = true };
	top_view_render(&n, 1, &o, &out);
	for (const char *p = out.buf; *p;) {
		const char *eol = strchr(p, '\n');
		FUZZ_CHECK(eol && (size_t)(eol - p) <= o.width);
		p = eol + 1;
	}
	j = top_models_json(&host, &error, models, 1, 1);
	json_decref(j);
	top_model_release(&m);
	strbuf_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf err = STRBUF_INIT;
	struct top_sample s;
	json_t *doc = NULL;

	if (json_load_buffer((const char *)data, size, "fuzz", &doc, &err) == 0) {
		strbuf_reset(&err);
		if (top_sample_parse(doc, &s, &err) == 0) {
			FUZZ_CHECK(err.len == 0);
			check_model(&s);
			top_sample_release(&s);
		} else {
			FUZZ_CHECK(err.len > 0 && s.nr_ports == 0 && s.nr_gpus == 0);
		}
	}
	json_decref(doc);
	strbuf_release(&err);
	return 0;
}
