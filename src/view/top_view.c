#include "sparkctl.h"

#include <math.h>

#include "lib/xalloc.h"
#include "view/top_view.h"

static const char *const sort_names[TOP_SORT_COUNT] = {
	[TOP_SORT_NAME] = "name",
	[TOP_SORT_TRAFFIC] = "traffic",
	[TOP_SORT_UTIL] = "util",
	[TOP_SORT_TEMP] = "temp",
};

/* Room left for flags when the history graph is sized. */
#define FLAGS_MIN    12
#define GRAPH_MAX    32
#define GRAPH_MIN    6
#define GRAPH_PLAIN  16
#define NETDEV_WIDTH 72 /* narrower terminals lose the NETDEV column */
#define NAME_MAX_W   24

static size_t max_size(size_t a, size_t b)
{
	return a > b ? a : b;
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

const char *top_sort_name(enum top_sort s)
{
	return s < TOP_SORT_COUNT ? sort_names[s] : "?";
}

int top_sort_parse(const char *name, enum top_sort *ret)
{
	for (size_t i = 0; i < TOP_SORT_COUNT; i++) {
		if (streq(name, sort_names[i])) {
			*ret = (enum top_sort)i;
			return 0;
		}
	}
	return -EINVAL;
}

/*
 * Text from a node (names, label values), escaped to ASCII: one byte is one
 * column, so the columns line up and a line cut to the width stays whole.
 * At most max bytes of it.
 */
static void add_clean(struct strbuf *out, const char *s, size_t max)
{
	size_t start = out->len;

	strbuf_add_printable(out, s, strlen(s), PRINTABLE_ASCII);
	if (out->len - start > max)
		strbuf_setlen(out, start + max);
}

static void add_padded(struct strbuf *out, const char *s, size_t w)
{
	size_t start = out->len;

	add_clean(out, s, w);
	strbuf_addchars(out, ' ', w - (out->len - start));
}

/* One line: cut to the width, trailing blanks removed. */
static void emit(struct strbuf *out, struct strbuf *line, const struct top_view_opts *o)
{
	if (o->width && line->len > o->width)
		strbuf_setlen(line, o->width);
	strbuf_rtrim(line);
	strbuf_add(out, line->buf, line->len);
	strbuf_addch(out, '\n');
	strbuf_reset(line);
}

void top_view_graph(const struct top_port *p, size_t width, struct strbuf *out)
{
	static const char chars[] = TOP_GRAPH_CHARS;
	const size_t steps = sizeof(chars) - 2;
	size_t n = p->hist_nr < width ? p->hist_nr : width;
	const double *h = p->hist + p->hist_nr - n;
	double top = p->line_gbps;

	if (top <= 0) {
		for (size_t i = 0; i < n; i++)
			top = fmax(top, h[i]);
	}
	strbuf_addchars(out, ' ', width - n);
	for (size_t i = 0; i < n; i++) {
		if (h[i] < 0) {
			strbuf_addch(out, ' ');
		} else if (h[i] == 0 || top <= 0) {
			strbuf_addch(out, chars[0]);
		} else {
			double step = ceil(h[i] / top * (double)steps);
			size_t k = step < 1 ? 1 : !(step <= (double)steps) ? steps : (size_t)step;
			strbuf_addch(out, chars[k]);
		}
	}
}

static void add_gib(struct strbuf *out, uint64_t bytes)
{
	strbuf_addf(out, "%.1f", (double)bytes / (double)(1ULL << 30));
}

struct sorted {
	const void *item;
	size_t index;
	double key;
};

static int sorted_cmp(const void *a, const void *b)
{
	const struct sorted *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static double gpu_key(const struct top_gpu *g, enum top_sort sort)
{
	if (sort == TOP_SORT_UTIL)
		return g->has_util ? g->util : -1;
	if (sort == TOP_SORT_TEMP)
		return g->has_temp ? g->temp_c : -1;
	return 0;
}

static void render_gpus(const struct top_model *m, const struct top_view_opts *o, size_t name_w,
			struct strbuf *line, struct strbuf *out)
{
	struct sorted *v;
	char cell[64];

	if (m->gpu_state == TOP_GPU_OFF)
		return;
	if (m->gpu_state == TOP_GPU_NO_NVML || !m->nr_gpus) {
		strbuf_addstr(line, m->gpu_state == TOP_GPU_NO_NVML
					    ? "GPU  none: NVML is not available"
					    : "GPU  none");
		emit(out, line, o);
		return;
	}
	strbuf_addstr(line, "GPU ");
	add_padded(line, "NAME", name_w);
	strbuf_addstr(line, " UTIL   POWER  TEMP  MEMORY");
	emit(out, line, o);
	v = xcalloc(m->nr_gpus, sizeof(*v));
	for (size_t i = 0; i < m->nr_gpus; i++)
		v[i] = (struct sorted){ &m->gpus[i], i, gpu_key(&m->gpus[i], o->sort) };
	qsort(v, m->nr_gpus, sizeof(*v), sorted_cmp);
	for (size_t i = 0; i < m->nr_gpus; i++) {
		const struct top_gpu *g = v[i].item;

		snprintf(cell, sizeof(cell), "%" PRId64, g->index);
		strbuf_addf(line, "%3.3s ", cell);
		add_padded(line, g->name ? g->name : "-", name_w);
		if (g->has_util)
			snprintf(cell, sizeof(cell), "%.0f%%", g->util * 100);
		else
			snprintf(cell, sizeof(cell), "-");
		strbuf_addf(line, " %4s", cell);
		if (g->has_power)
			snprintf(cell, sizeof(cell), "%.1f W", g->power_w);
		else
			snprintf(cell, sizeof(cell), "-");
		strbuf_addf(line, " %7s", cell);
		if (g->has_temp)
			snprintf(cell, sizeof(cell), "%.0f C", g->temp_c);
		else
			snprintf(cell, sizeof(cell), "-");
		strbuf_addf(line, " %5s  ", cell);
		if (g->has_mem) {
			add_gib(line, g->mem_used);
			strbuf_addch(line, '/');
			add_gib(line, g->mem_total);
			strbuf_addstr(line, g->unified_memory ? " GiB unified" : " GiB");
		} else {
			strbuf_addch(line, '-');
		}
		emit(out, line, o);
	}
	free(v);
}

struct port_cols {
	size_t name_w, netdev_w, graph_w;
	bool netdev;
};

static void render_ports(const struct top_model *m, const struct top_view_opts *o,
			 const struct port_cols *c, struct strbuf *line, struct strbuf *out)
{
	struct strbuf flags = STRBUF_INIT;
	struct sorted *v;
	char cell[32];

	if (!m->nr_ports) {
		strbuf_addstr(line, "PORT none");
		emit(out, line, o);
		return;
	}
	add_padded(line, "PORT", c->name_w);
	if (c->netdev) {
		strbuf_addch(line, ' ');
		add_padded(line, "NETDEV", c->netdev_w);
	}
	strbuf_addstr(line, " STATE  TX Gb/s RX Gb/s");
	if (c->graph_w) {
		strbuf_addch(line, ' ');
		add_padded(line, "HISTORY", c->graph_w);
	}
	strbuf_addstr(line, " FLAGS");
	emit(out, line, o);
	v = xcalloc(m->nr_ports, sizeof(*v));
	for (size_t i = 0; i < m->nr_ports; i++) {
		const struct top_port *p = &m->ports[i];
		double key = 0;
		if (o->sort == TOP_SORT_TRAFFIC)
			key = p->has_rate ? p->tx_gbps + p->rx_gbps : -1;
		v[i] = (struct sorted){ p, i, key };
	}
	qsort(v, m->nr_ports, sizeof(*v), sorted_cmp);
	for (size_t i = 0; i < m->nr_ports; i++) {
		const struct top_port *p = v[i].item;

		add_padded(line, p->name, c->name_w);
		if (c->netdev) {
			strbuf_addch(line, ' ');
			add_padded(line, p->netdev ? p->netdev : "-", c->netdev_w);
		}
		strbuf_addch(line, ' ');
		add_padded(line, p->state ? p->state : "-", 6);
		if (p->has_rate) {
			snprintf(cell, sizeof(cell), " %7.2f %7.2f", p->tx_gbps, p->rx_gbps);
			strbuf_addstr(line, cell);
		} else {
			strbuf_addf(line, " %7s %7s", "-", "-");
		}
		if (c->graph_w) {
			strbuf_addch(line, ' ');
			top_view_graph(p, c->graph_w, line);
		}
		strbuf_reset(&flags);
		for (size_t j = 0; j < p->nr_flags; j++) {
			strbuf_addstr(&flags, j ? ", " : "");
			add_clean(&flags, p->flags[j].counter, SIZE_MAX);
			strbuf_addf(&flags, " +%.0f", p->flags[j].increase);
		}
		if (flags.len && (!o->width || line->len + 1 + flags.len <= o->width)) {
			strbuf_addch(line, ' ');
			strbuf_add(line, flags.buf, flags.len);
		} else if (flags.len) {
			/* Too long to follow the graph: a line of its own, so no name is cut. */
			emit(out, line, o);
			strbuf_addstr(line, "  ! ");
			strbuf_add(line, flags.buf, flags.len);
		}
		emit(out, line, o);
	}
	free(v);
	strbuf_release(&flags);
}

static void node_title(const struct top_view_node *n, struct strbuf *line)
{
	const struct top_model *m = n->model;

	strbuf_addch(line, '[');
	add_clean(line, n->host, SIZE_MAX);
	strbuf_addch(line, ']');
	if (n->error) {
		strbuf_addstr(line, "  ");
		add_clean(line, n->error, SIZE_MAX);
		return;
	}
	if (m && m->has_mem) {
		strbuf_addstr(line, "  memory ");
		add_gib(line, m->mem_total - m->mem_available);
		strbuf_addstr(line, "/");
		add_gib(line, m->mem_total);
		strbuf_addstr(line, " GiB used, ");
		add_gib(line, m->mem_available);
		strbuf_addstr(line, " GiB available");
	}
}

static void columns(const struct top_view_node *nodes, size_t nr, const struct top_view_opts *o,
		    struct port_cols *c, size_t *gpu_name_w)
{
	size_t fixed;
	bool has_netdev = false;

	c->name_w = 4;
	c->netdev_w = 6;
	*gpu_name_w = 4;
	for (size_t i = 0; i < nr; i++) {
		const struct top_model *m = nodes[i].error ? NULL : nodes[i].model;
		for (size_t j = 0; m && j < m->nr_ports; j++) {
			c->name_w = max_size(c->name_w, strlen(m->ports[j].name));
			if (m->ports[j].netdev) {
				c->netdev_w = max_size(c->netdev_w, strlen(m->ports[j].netdev));
				has_netdev = true;
			}
		}
		for (size_t j = 0; m && j < m->nr_gpus; j++)
			if (m->gpus[j].name)
				*gpu_name_w = max_size(*gpu_name_w, strlen(m->gpus[j].name));
	}
	c->name_w = min_size(c->name_w, NAME_MAX_W);
	c->netdev_w = min_size(c->netdev_w, NAME_MAX_W);
	*gpu_name_w = min_size(*gpu_name_w, NAME_MAX_W);
	c->netdev = has_netdev && (!o->width || o->width >= NETDEV_WIDTH);
	if (!o->width) {
		c->graph_w = GRAPH_PLAIN;
		return;
	}
	/* name, netdev, state, TX, RX and the spaces between them */
	fixed = c->name_w + (c->netdev ? c->netdev_w + 1 : 0) + 1 + 6 + 8 + 8 + 1;
	c->graph_w = o->width > fixed + FLAGS_MIN ? o->width - fixed - FLAGS_MIN : 0;
	c->graph_w = min_size(c->graph_w, GRAPH_MAX);
	if (c->graph_w < GRAPH_MIN)
		c->graph_w = 0;
}

void top_view_render(const struct top_view_node *nodes, size_t nr, const struct top_view_opts *o,
		     struct strbuf *out)
{
	struct strbuf all = STRBUF_INIT, line = STRBUF_INIT;
	struct top_view_opts body = *o;
	struct port_cols c;
	size_t gpu_name_w, lines = 0, keep;

	body.height = 0;
	columns(nodes, nr, o, &c, &gpu_name_w);
	strbuf_addstr(&line, "sparkctl top  ");
	/* First, where the narrowest terminal still shows it. */
	if (o->paused)
		strbuf_addstr(&line, "PAUSED  ");
	if (nr == 1)
		add_clean(&line, nodes[0].host, SIZE_MAX);
	else
		strbuf_addf(&line, "%zu nodes", nr);
	strbuf_addf(&line, "  every %.1f s  sort %s", o->interval, top_sort_name(o->sort));
	emit(&all, &line, &body);
	for (size_t i = 0; i < nr; i++) {
		const struct top_view_node *n = &nodes[i];

		emit(&all, &line, &body); /* a blank line before each node */
		node_title(n, &line);
		emit(&all, &line, &body);
		if (n->error || !n->model)
			continue;
		render_gpus(n->model, &body, gpu_name_w, &line, &all);
		render_ports(n->model, &body, &c, &line, &all);
	}
	/* Cut to the height, keeping the last line for what was cut and the keys. */
	for (size_t i = 0; i < all.len; i++)
		lines += all.buf[i] == '\n';
	keep = lines;
	if (o->height && lines + o->keys > o->height) {
		size_t room = o->height > (size_t)o->keys + 1 ? o->height - o->keys - 1 : 0;
		keep = room;
	}
	const char *p = all.buf;
	for (size_t i = 0; i < keep; i++) {
		const char *eol = strchr(p, '\n');
		strbuf_add(out, p, (size_t)(eol - p) + 1);
		p = eol + 1;
	}
	if (keep < lines) {
		strbuf_addf(&line, "... %zu more lines", lines - keep);
		emit(out, &line, o);
	}
	if (o->keys) {
		strbuf_addstr(&line, "q quit  p pause  +/- interval  s sort");
		emit(out, &line, o);
	}
	strbuf_release(&line);
	strbuf_release(&all);
}
