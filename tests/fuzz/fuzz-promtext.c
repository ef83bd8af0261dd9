/*
 * fuzz-promtext - the Prometheus text parser of 'sparkctl top -H', and the
 * model and layout over whatever it accepts.
 *
 * Text that parses is written again (metric_set_render()), and that text
 * must parse to a set that is written identically.  The set is then taken
 * as both samples of a model, which must give no negative rate, and laid
 * out on a small terminal, every line within its width.
 */
#include "sparkctl.h"

#include <math.h>

#include "fuzz.h"
#include "top/model.h"
#include "top/promtext.h"
#include "view/top_view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct metric_set set = METRIC_SET_INIT, again = METRIC_SET_INIT;
	struct strbuf err = STRBUF_INIT, text = STRBUF_INIT, text2 = STRBUF_INIT;
	struct strbuf out = STRBUF_INIT;
	struct top_model m = TOP_MODEL_INIT;

	if (promtext_parse((const char *)data, size, &set, &err) == 0) {
		metric_set_render(&set, &text);
		FUZZ_CHECK(promtext_parse(text.buf, text.len, &again, &err) == 0);
		metric_set_render(&again, &text2);
		FUZZ_CHECK(streq(text.buf, text2.buf));

		top_model_update(&m, &set, &again, 1);
		top_model_update(&m, &again, &set, 1);
		for (size_t i = 0; i < m.nr_ports; i++) {
			const struct top_port *p = &m.ports[i];
			FUZZ_CHECK(!p->has_rate || (p->tx_gbps >= 0 && p->rx_gbps >= 0));
		}
		struct top_view_node n = { "node", NULL, &m };
		struct top_view_opts o = { .width = 40, .height = 10, .interval = 1, .keys = true };
		top_view_render(&n, 1, &o, &out);
		for (const char *p = out.buf; *p;) {
			const char *eol = strchr(p, '\n');
			FUZZ_CHECK(eol && (size_t)(eol - p) <= o.width);
			p = eol + 1;
		}
	}
	top_model_release(&m);
	metric_set_release(&set);
	metric_set_release(&again);
	strbuf_release(&err);
	strbuf_release(&text);
	strbuf_release(&text2);
	strbuf_release(&out);
	return 0;
}
