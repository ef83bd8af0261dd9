/*
 * sparkctl top - a live view of this node's GPUs and fabric ports, or of
 * several nodes (-H), in the terminal.
 *
 * A sample is the JSON object of top/sample.h: here from
 * top_sample_collect(), on other nodes from 'sparkctl agent status' over
 * SSH, which prints the same object; both are read back by
 * top_sample_parse() alike.  Two samples make a model
 * (top/model.h), and the model and the terminal's size make the lines
 * (view/top_view.h) that ncurses draws, or that --once prints.
 */
#include "sparkctl.h"

#include <curses.h>
#include <math.h>
#include <signal.h>
#include <time.h>

#include "cmd/cmd.h"
#include "remote/session.h"
#include "exporter/gpu_metrics.h"
#include "lib/clock.h"
#include "lib/json.h"
#include "lib/parse.h"
#include "lib/rootfs.h"
#include "lib/xalloc.h"
#include "probe/hostname.h"
#include "proc/run.h"
#include "remote/hosts.h"
#include "top/model.h"
#include "top/sample.h"
#include "view/progress.h"
#include "view/top_view.h"

/* What one node's 'agent status' may print, and how long it may take. */
#define SCRAPE_OUTPUT_MAX ((size_t)16 << 20)
#define SCRAPE_TIMEOUT_MS 15000

/* The intervals +/- step through, in milliseconds. */
static const uint64_t intervals_ms[] = { 200, 500, 1000, 2000, 5000, 10000, 30000, 60000 };

static const char *const top_usage[] = {
	"sparkctl top [--interval S] [--sort KEY] [--root DIR] [--no-gpu]",
	"sparkctl top (--once | -n COUNT) [--json] [--interval S] [--root DIR [--then DIR]]",
	"sparkctl top -H HOSTS [--once] [--remote-sparkctl PATH] [--interval S]",
	NULL,
};

static const char top_description[] =
	"A live view of this node's GPUs (utilisation, power, temperature, memory) and\n"
	"fabric ports (TX/RX Gb/s from counter deltas, a short history, the error and\n"
	"congestion counters that moved).  With -H, one block per node, sampled over SSH\n"
	"by 'sparkctl agent status'.  Keys: q quit, p or space pause, + and - the\n"
	"interval, s the sort order.  --once, or stdout not a terminal: two samples an\n"
	"interval apart, printed as plain lines (or --json).";

struct top_node {
	char *host;
	char *error; /* why the last sample failed */
	struct top_sample prev, cur;
	bool has_prev, has_cur;
	double t_prev, t_cur; /* seconds */
	struct top_model model;
};

struct top {
	struct top_node *nodes;
	size_t nr;
	bool remote;
	bool no_gpu;
	bool progress; /* plain text views: the progress line while nodes are slow to answer */
	struct remote_session rm;
	struct top_sample_source src; /* local */
};

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

static double now_s(void)
{
	return (double)monotonic_ns() / 1e9;
}

/* The sample doc into n at time t, or why it is none in n->error. */
static void node_push(struct top_node *n, const json_t *doc, double t, bool remote)
{
	struct top_sample s;
	struct strbuf err = STRBUF_INIT;

	if (top_sample_parse(doc, &s, &err) < 0) {
		free(n->error);
		n->error = xasprintf("%s: %s",
				     remote ? "the remote sparkctl printed no usable sample"
					    : "no usable sample",
				     err.buf);
		strbuf_release(&err);
		return;
	}
	top_sample_release(&n->prev);
	n->prev = n->cur;
	n->has_prev = n->has_cur;
	n->t_prev = n->t_cur;
	n->cur = s;
	n->has_cur = true;
	n->t_cur = t;
	free_and_null(&n->error);
	strbuf_release(&err);
}

/* One sample of this node from root; at is its time, or NAN for now. */
static void sample_local(struct top *t, const struct rootfs *root, double at)
{
	struct top_sample_source src = t->src;
	double t0 = now_s();
	json_t *doc;

	src.root = root;
	/* What cannot be read is left out of the sample; the rest still counts. */
	doc = top_sample_collect(&src);
	node_push(&t->nodes[0], doc, isnan(at) ? (t0 + now_s()) / 2 : at, false);
	json_decref(doc);
}

static void sample_remote(struct top *t)
{
	struct run_job *jobs = xcalloc(t->nr, sizeof(*jobs));
	const char *argv[] = { "agent", "status", NULL, NULL };

	if (t->no_gpu)
		argv[2] = "--no-gpu";
	for (size_t i = 0; i < t->nr; i++) {
		run_job_init(&jobs[i]);
		/* The host list refuses such names already; an empty argv cannot start. */
		if (remote_session_sparkctl_argv(&t->rm, t->nodes[i].host, argv, &jobs[i].argv) < 0)
			strvec_clear(&jobs[i].argv);
	}
	progress_begin(t->progress, "top: sampling %zu node%s", t->nr, t->nr == 1 ? "" : "s");
	run_jobs(jobs, t->nr, 0, SCRAPE_TIMEOUT_MS, SCRAPE_OUTPUT_MAX);
	progress_end();
	for (size_t i = 0; i < t->nr; i++) {
		struct top_node *n = &t->nodes[i];
		struct run_job *j = &jobs[i];
		struct strbuf err = STRBUF_INIT;
		char *error = NULL, *failure = remote_failure(j, n->host, SCRAPE_TIMEOUT_MS);
		json_t *doc = NULL;

		if (failure) {
			error = xasprintf("unreachable: %s", failure);
			free(failure);
		} else if (j->truncated ||
			   json_load_buffer(j->out.buf, j->out.len, "its answer", &doc, &err) < 0) {
			error = xasprintf("the remote sparkctl printed no sample: %s",
					  j->truncated ? "too much output" : err.buf);
		}
		if (error) {
			free(n->error);
			n->error = error;
		} else {
			node_push(n, doc, (j->started_at + j->ended_at) / 2, true);
		}
		json_decref(doc);
		strbuf_release(&err);
		run_job_release(j);
	}
	free(jobs);
}

static void sample(struct top *t, const struct rootfs *root, double at)
{
	if (t->remote)
		sample_remote(t);
	else
		sample_local(t, root, at);
}

static void update_models(struct top *t)
{
	for (size_t i = 0; i < t->nr; i++) {
		struct top_node *n = &t->nodes[i];
		if (n->has_cur)
			top_model_update(&n->model, n->has_prev ? &n->prev : NULL, &n->cur,
					 n->has_prev ? n->t_cur - n->t_prev : 0);
	}
}

static void render(const struct top *t, const struct top_view_opts *o, struct strbuf *out)
{
	struct top_view_node *v = xcalloc(t->nr, sizeof(*v));

	for (size_t i = 0; i < t->nr; i++) {
		const struct top_node *n = &t->nodes[i];
		v[i] = (struct top_view_node){
			.host = n->host,
			.error = n->error     ? n->error
				 : n->has_cur ? NULL
					      : "no sample yet",
			.model = &n->model,
		};
	}
	top_view_render(v, t->nr, o, out);
	free(v);
}

/* One view as JSON: indented, or on one line (a view of -n). */
static void render_json(const struct top *t, double interval, bool line, struct strbuf *out)
{
	const char **hosts = xcalloc(t->nr, sizeof(*hosts));
	const char **errors = xcalloc(t->nr, sizeof(*errors));
	const struct top_model **models = xcalloc(t->nr, sizeof(*models));
	json_t *j;

	for (size_t i = 0; i < t->nr; i++) {
		const struct top_node *n = &t->nodes[i];
		hosts[i] = n->host;
		errors[i] = n->error ? n->error : n->has_cur ? NULL : "no sample yet";
		models[i] = &n->model;
	}
	j = top_models_json(hosts, errors, models, t->nr, interval);
	if (line) {
		json_to_line(j, out);
		strbuf_addch(out, '\n');
	} else {
		json_to_strbuf(j, out);
	}
	json_decref(j);
	free(hosts);
	free(errors);
	free(models);
}

static bool any_error(const struct top *t)
{
	for (size_t i = 0; i < t->nr; i++)
		if (t->nodes[i].error)
			return true;
	return false;
}

static void sleep_ms(uint64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !stop_signal)
		;
}

/* --once and -n: plain lines, count views an interval apart. */
static int run_plain(struct top *t, struct top_view_opts *o, unsigned count, uint64_t interval_ms,
		     const struct rootfs *root, const struct rootfs *then, bool json)
{
	struct strbuf out = STRBUF_INIT;

	t->progress = !json;
	/* Replayed captures are interval apart by definition, not by the clock. */
	sample(t, root, then ? 0 : NAN);
	for (unsigned i = 0; i < count && !stop_signal; i++) {
		if (then) {
			sample(t, then, (double)interval_ms / 1000);
		} else {
			sleep_ms(interval_ms);
			if (stop_signal)
				break;
			sample(t, root, NAN);
		}
		update_models(t);
		strbuf_reset(&out);
		if (json) {
			render_json(t, o->interval, count > 1, &out);
		} else {
			if (i)
				strbuf_addch(&out, '\n');
			render(t, o, &out);
		}
		fwrite(out.buf, 1, out.len, stdout);
		fflush(stdout);
	}
	strbuf_release(&out);
	if (stop_signal)
		return 128 + stop_signal;
	return any_error(t) ? SPARKCTL_EXIT_UNAVAILABLE : SPARKCTL_EXIT_OK;
}

/* The next interval of intervals_ms[] above (up) or below ms; ms itself at either end. */
static uint64_t interval_next(uint64_t ms, bool up)
{
	uint64_t r = ms;

	for (size_t i = 0; i < ARRAY_SIZE(intervals_ms); i++) {
		size_t k = up ? i : ARRAY_SIZE(intervals_ms) - 1 - i;
		if (up ? intervals_ms[k] > ms : intervals_ms[k] < ms) {
			r = intervals_ms[k];
			break;
		}
	}
	return r;
}

static void draw(const struct top *t, const struct top_view_opts *base)
{
	struct top_view_opts o = *base;
	struct strbuf out = STRBUF_INIT;
	int rows, cols, y = 0;

	getmaxyx(stdscr, rows, cols);
	o.width = cols > 0 ? (size_t)cols : 0;
	o.height = rows > 0 ? (size_t)rows : 0;
	if (!o.width || !o.height)
		return;
	render(t, &o, &out);
	erase();
	for (const char *p = out.buf; *p && y < rows; y++) {
		const char *eol = strchr(p, '\n');
		/* The last column of the last line would scroll the screen. */
		int n = (int)(eol - p);
		mvaddnstr(y, 0, p, y == rows - 1 && n >= cols ? cols - 1 : n);
		p = eol + 1;
	}
	refresh();
	strbuf_release(&out);
}

static int run_screen(struct top *t, struct top_view_opts *o, uint64_t interval_ms,
		      const struct rootfs *root)
{
	SCREEN *screen;
	double due;
	bool quit = false;

	/* Not initscr(), which exits the program when the terminal is unknown. */
	screen = newterm(NULL, stdout, stdin);
	if (!screen)
		return -EIO;
	set_term(screen);
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	sample(t, root, NAN);
	update_models(t);
	due = now_s() + (double)interval_ms / 1000;
	while (!quit && !stop_signal) {
		double left;
		int ch;

		if (!o->paused && now_s() >= due) {
			sample(t, root, NAN);
			update_models(t);
			due = now_s() + (double)interval_ms / 1000;
		}
		o->interval = (double)interval_ms / 1000;
		draw(t, o);
		left = o->paused ? 1 : due - now_s();
		timeout(left <= 0 ? 0 : (int)(left * 1000) + 1);
		ch = getch();
		switch (ch) {
		case 'q':
		case 'Q':
			quit = true;
			break;
		case ' ':
		case 'p':
		case 'P':
			o->paused = !o->paused;
			break;
		case '+':
		case '=':
			interval_ms = interval_next(interval_ms, true);
			due = now_s() + (double)interval_ms / 1000;
			break;
		case '-':
		case '_':
			interval_ms = interval_next(interval_ms, false);
			due = now_s() + (double)interval_ms / 1000;
			break;
		case 's':
		case 'S':
			o->sort = (enum top_sort)((o->sort + 1) % TOP_SORT_COUNT);
			break;
		default:
			break; /* KEY_RESIZE and timeouts: the next draw fits the new size */
		}
	}
	endwin();
	delscreen(screen);
	return 0;
}

static void nodes_release(struct top *t)
{
	for (size_t i = 0; i < t->nr; i++) {
		struct top_node *n = &t->nodes[i];
		free(n->host);
		free(n->error);
		top_sample_release(&n->prev);
		top_sample_release(&n->cur);
		top_model_release(&n->model);
	}
	free(t->nodes);
}

static int open_root(const char *path, struct rootfs *root)
{
	int r = rootfs_open(root, path);

	if (r < 0)
		cmd_error("top", "cannot use '%s' as the root: %s", path, strerror(-r));
	return r;
}

struct top_args {
	const char *root, *from, *then, *hosts, *cluster, *remote_sparkctl, *interval, *sort;
	bool once, no_gpu, json, local;
	unsigned count;
	uint64_t interval_ms;
	bool plain; /* lines, not the terminal view */
};

/* The command line into a and o; -1 when the command ends here with *ret. */
static int parse_top(const struct cmd *cmd, struct top_args *a, struct top_view_opts *o, int argc,
		     char **argv, int *ret)
{
	const struct opt opts[] = {
		OPT_STRING('H', "hosts", &a->hosts, "HOSTS",
			   "the nodes to show, e.g. spark[1-4] (over SSH)"),
		OPT_STRING(
			0, "cluster", &a->cluster, "FILE",
			"without -H, show the nodes of this cluster file (env SPARKCTL_CLUSTER)"),
		OPT_BOOL(0, "local", &a->local,
			 "show this node, even where a cluster file is in effect"),
		OPT_STRING(0, "interval", &a->interval, "S",
			   "seconds between samples (default 1; at least 0.1)"),
		OPT_BOOL(0, "once", &a->once, "print one view as plain lines and exit"),
		OPT_UINT('n', "count", &a->count, "COUNT",
			 "print COUNT views, an interval apart, and exit"),
		OPT_CHOICE(0, "sort", &a->sort, "KEY", "name|traffic|util|temp",
			   "name, traffic, util or temp"),
		OPT_BOOL(0, "json", &a->json, "print the figures as JSON (-n: one line per view)"),
		OPT_STRING(0, "root", &a->root, "DIR",
			   "read sysfs and procfs below DIR, e.g. a 'sparkctl capture' tree"),
		OPT_STRING(0, "then", &a->then, "DIR",
			   "with --once --root: the second sample is DIR, an interval later"),
		OPT_STRING(0, "from", &a->from, "FILE",
			   "refused: a saved inventory holds no counters (use --root)"),
		OPT_BOOL(0, "no-gpu", &a->no_gpu, "leave NVML alone: no GPU figures"),
		OPT_STRING(0, "remote-sparkctl", &a->remote_sparkctl, "PATH",
			   "sparkctl on the nodes (default: this program's path, then PATH, then "
			   "~/.local/bin/sparkctl)"),
		OPT_HELP(),
		OPT_END(),
	};
	int n = cmd_parse(cmd, opts, argc, argv);

	*ret = SPARKCTL_EXIT_USAGE;
	if (n < 0)
		*ret = cmd_parse_exit(n);
	else if (parse_milli(a->interval, &a->interval_ms) < 0 || a->interval_ms < 100 ||
		 a->interval_ms > 3600000)
		cmd_usage_error("top", "invalid --interval '%s': expected 0.1 to 3600 seconds",
				a->interval);
	else if (top_sort_parse(a->sort, &o->sort) < 0)
		cmd_usage_error("top", "invalid --sort '%s': expected name, traffic, util or temp",
				a->sort);
	else if (a->from)
		cmd_usage_error("top", "--from: a saved inventory holds no counters or readings "
				       "to show; --root DIR reads a captured tree");
	else if (a->local && (a->hosts || a->cluster))
		cmd_usage_error("top", "--local shows this node: not with -H or --cluster");
	else if (a->hosts && (a->root || a->then))
		cmd_usage_error("top", "--root and --then are for this node, not with -H");
	else if (a->then && (!a->root || !a->once || a->count > 1))
		cmd_usage_error("top", "--then needs --root and --once");
	else if (!a->hosts && a->remote_sparkctl)
		cmd_usage_error("top", "--remote-sparkctl needs -H");
	else if (a->once && a->count > 1)
		cmd_usage_error("top", "--once prints one view: use -n COUNT alone");
	else
		*ret = SPARKCTL_EXIT_OK;
	if (*ret != SPARKCTL_EXIT_OK || n < 0)
		return -1;
	a->plain = a->once || a->json || a->count > 0 || !isatty(STDOUT_FILENO);
	if (a->count == 0)
		a->count = 1;
	o->interval = (double)a->interval_ms / 1000;
	return n;
}

/* -H: one block per node, sampled over SSH. */
static int set_up_remote(struct top *t, const struct top_args *a, struct host_list *hosts)
{
	struct strbuf err = STRBUF_INIT;
	int ret = SPARKCTL_EXIT_OK;

	if (a->hosts && host_list_parse(a->hosts, hosts, &err) < 0) {
		ret = cmd_usage_error("top", "invalid -H: %s", err.buf);
		strbuf_release(&err);
		return ret;
	}
	t->remote = true;
	t->nr = hosts->nr;
	t->nodes = xcalloc(t->nr, sizeof(*t->nodes));
	for (size_t i = 0; i < t->nr; i++)
		t->nodes[i].host = xstrdup(hosts->hosts[i].name);
	remote_session_init(&t->rm, a->remote_sparkctl, true);
	{
		const char **names = xcalloc(t->nr + 1, sizeof(*names));
		for (size_t i = 0; i < t->nr; i++)
			names[i] = t->nodes[i].host;
		remote_session_fast_kex(&t->rm, names, t->nr);
		free(names);
	}
	strbuf_release(&err);
	return ret;
}

/* This node, or the tree below --root (and --then): one block, named as the tree says. */
static int set_up_local(struct top *t, const struct top_args *a, struct rootfs *root,
			struct rootfs *then)
{
	struct strbuf name = STRBUF_INIT, err = STRBUF_INIT;

	if (open_root(rootfs_root_path(a->root), root) < 0 ||
	    (a->then && open_root(a->then, then) < 0))
		return SPARKCTL_EXIT_ERROR;
	/* The name of the node the root describes: a capture's own, not ours. */
	if (hostname_read(&(struct host_reader){ .root = root }, &name) <= 0 || !name.len) {
		char self[256] = "";
		strbuf_reset(&name);
		if (gethostname(self, sizeof(self) - 1) == 0)
			strbuf_addstr(&name, self);
	}
	if (!name.len)
		strbuf_addstr(&name, "localhost");
	t->nr = 1;
	t->nodes = xcalloc(1, sizeof(*t->nodes));
	t->nodes[0].host = strbuf_detach(&name, NULL);
	t->src.gpu_disabled = a->no_gpu;
	/* No NVML is a node without GPU figures, which the view says. */
	if (!a->no_gpu && exporter_gpu_open(&t->src.gpu, false, &err) < 0)
		t->src.gpu = NULL;
	strbuf_release(&err);
	return SPARKCTL_EXIT_OK;
}

static int run_top(const struct cmd *cmd, int argc, char **argv)
{
	struct top_args a = { .interval = "1", .sort = "name" };
	struct top t = { 0 };
	struct top_view_opts o = { .sort = TOP_SORT_NAME };
	struct host_list hosts = { 0 };
	struct rootfs root = { .dirfd = -1 }, then = { .dirfd = -1 };
	struct sigaction sa;
	int ret;

	if (parse_top(cmd, &a, &o, argc, argv, &ret) < 0)
		return ret;
	t.no_gpu = a.no_gpu;
	/* Without -H, the allocation's or the cluster file's nodes (--root: this node). */
	if (!a.hosts && !a.root && !a.local) {
		struct strbuf err = STRBUF_INIT;
		if (host_list_default(a.cluster, &hosts, &err) < 0)
			ret = cmd_usage_error("top", "%s", err.buf);
		strbuf_release(&err);
		if (ret != SPARKCTL_EXIT_OK)
			goto out;
	}
	ret = a.hosts || hosts.nr ? set_up_remote(&t, &a, &hosts)
				  : set_up_local(&t, &a, &root, &then);
	if (ret != SPARKCTL_EXIT_OK)
		goto out;
	/* Before curses starts, which then leaves these handlers alone. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (a.plain) {
		ret = run_plain(&t, &o, a.count, a.interval_ms, &root, a.then ? &then : NULL,
				a.json);
	} else {
		o.keys = true;
		if (run_screen(&t, &o, a.interval_ms, &root) < 0) {
			cmd_error("top", "cannot start the terminal view");
			ret = SPARKCTL_EXIT_ERROR;
		} else if (stop_signal) {
			ret = 128 + stop_signal;
		}
	}
out:
	if (t.remote)
		remote_session_close(&t.rm);
	exporter_gpu_close(t.src.gpu);
	nodes_release(&t);
	host_list_release(&hosts);
	rootfs_close(&then);
	rootfs_close(&root);
	return ret;
}

const struct cmd cmd_top = {
	.name = "top",
	.fn = run_top,
	.summary = "live view of GPUs and fabric ports, of this node or several",
	.usage = top_usage,
	.description = top_description,
	.flags = CMD_READS_NODE,
	.exit_status = "0 done, 1 error, 2 usage, 3 a node of -H could not be sampled (--once, "
		       "-n); ended by a signal, 128+N",
	.max_operands = 0,
};
