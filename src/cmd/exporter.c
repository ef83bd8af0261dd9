/*
 * sparkctl exporter - Prometheus metrics of this node: GPUs (NVML), RDMA
 * ports, netdevs, temperatures, PCIe AER, memory.
 */
#include "sparkctl.h"

#include <signal.h>
#include <sys/resource.h>

#include "cmd/cmd.h"
#include "exporter/basic_auth.h"
#include "exporter/collect.h"
#include "exporter/gpu_metrics.h"
#include "exporter/http.h"
#include "exporter/web_config.h"
#include "lib/rootfs.h"
#include "probe/reader.h"
#include "proc/loop.h"

#define EXPORTER_DEFAULT_LISTEN "127.0.0.1:9877"

static const char *const exporter_usage[] = {
	"sparkctl exporter [--listen ADDR:PORT] [--web-config FILE] [--root DIR] [--no-gpu] "
	"[limits]",
	"sparkctl exporter --once [--root DIR] [--no-gpu]",
	NULL,
};

static const char exporter_description[] =
	"Serve this node's metrics to Prometheus on http://ADDR:PORT/metrics "
	"(default\n" EXPORTER_DEFAULT_LISTEN ", this host only: any other address must be given).\n"
	"Metrics are read at each scrape: GPUs through NVML, RDMA port counters,\n"
	"netdevs, thermal zones and hwmon, PCIe AER and memory from sysfs and procfs.\n"
	"Runs until SIGINT or SIGTERM.  --once prints one scrape and exits.\n"
	"Without --web-config it serves plain HTTP to anyone who can reach it; the\n"
	"file (as Prometheus' exporters read it) turns on TLS and basic authentication.";

static int scrape(void *data, struct strbuf *out)
{
	const struct exporter_source *src = data;
	struct metric_set set = METRIC_SET_INIT;

	/* A collector that failed is reported in the metrics, not by the HTTP status. */
	exporter_collect(src, &set);
	metric_set_render(&set, out);
	metric_set_release(&set);
	return 0;
}

struct exporter_args {
	const char *listen, *root, *from, *web_config;
	bool once, no_gpu;
	unsigned max_conn, max_per_ip, timeout_s, request_timeout_s;
};

/* The command line into a; -1 when the command ends here with *ret. */
static int parse_exporter(const struct cmd *cmd, struct exporter_args *a, int argc, char **argv,
			  int *ret)
{
	const struct opt opts[] = {
		OPT_STRING(0, "listen", &a->listen, "ADDR:PORT",
			   "where to serve (default " EXPORTER_DEFAULT_LISTEN
			   "; port 0: any free)"),
		OPT_STRING(0, "web-config", &a->web_config, "FILE",
			   "TLS and basic authentication, as in Prometheus' web-config.yml"),
		OPT_STRING(0, "root", &a->root, "DIR",
			   "read sysfs and procfs below DIR, e.g. a 'sparkctl capture' tree"),
		OPT_STRING(0, "from", &a->from, "FILE",
			   "refused: a saved inventory holds no counters (use --root)"),
		OPT_BOOL(0, "once", &a->once, "print one scrape to stdout and exit"),
		OPT_BOOL(0, "no-gpu", &a->no_gpu, "leave NVML alone: no GPU metrics"),
		OPT_UINT(0, "max-connections", &a->max_conn, "N",
			 "connections held at once (default 32); beyond, the one waiting "
			 "longest for its request is closed"),
		OPT_UINT(0, "max-per-ip", &a->max_per_ip, "N",
			 "the same, per client address (default 8)"),
		OPT_UINT(0, "idle-timeout", &a->timeout_s, "SECONDS",
			 "close a connection idle this long (default 10)"),
		OPT_RENAMED(0, "timeout", "--idle-timeout"),
		OPT_UINT(0, "request-timeout", &a->request_timeout_s, "SECONDS",
			 "close a connection whose request is not whole after this (default 5)"),
		OPT_HELP(),
		OPT_END(),
	};
	int n = cmd_parse(cmd, opts, argc, argv);

	if (n < 0) {
		*ret = cmd_parse_exit(n);
		return -1;
	}
	if (a->from) {
		*ret = cmd_usage_error("exporter",
				       "--from: a saved inventory holds no counters or readings "
				       "to export; --root DIR reads a captured tree");
		return -1;
	}
	if (a->max_conn == 0 || a->max_per_ip == 0 || a->timeout_s == 0 ||
	    a->request_timeout_s == 0) {
		*ret = cmd_usage_error("exporter",
				       "--max-connections, --max-per-ip, --idle-timeout "
				       "and --request-timeout must be > 0");
		return -1;
	}
	if (a->once && a->web_config) {
		*ret = cmd_usage_error("exporter", "--once serves nothing: --web-config is for "
						   "serving");
		return -1;
	}
	return n;
}

/* NVML for the GPU metrics, unless --no-gpu; none is a node without them, not an error. */
static void open_gpu(const struct exporter_args *a, struct exporter_source *src)
{
	struct strbuf err = STRBUF_INIT;

	src->gpu_disabled = a->no_gpu;
	if (!a->no_gpu && exporter_gpu_open(&src->gpu, !a->once, &err) < 0) {
		if (!a->once)
			cmd_error("exporter", "no GPU metrics: %s", err.buf);
		src->gpu = NULL;
	}
	strbuf_release(&err);
}

static void stop_serving(struct loop *loop, const struct signalfd_siginfo *si, void *data)
{
	(void)si;
	(void)data;
	loop_stop(loop);
}

/* What --web-config asks for: TLS material and the users; all empty without it. */
struct web_security {
	struct web_config cfg;
	char *cert_pem, *key_pem;
	struct basic_auth *auth;
};

static void web_security_release(struct web_security *w)
{
	basic_auth_free(w->auth);
	web_config_free_key(w->key_pem);
	free(w->cert_pem);
	web_config_release(&w->cfg);
	*w = (struct web_security){ .cfg = WEB_CONFIG_INIT };
}

static int web_security_load(const char *path, struct web_security *w)
{
	struct strbuf err = STRBUF_INIT;
	int r = web_config_read(path, &w->cfg, &err);

	if (r == 0 && w->cfg.cert_file)
		r = web_config_read_tls(&w->cfg, &w->cert_pem, &w->key_pem, &err);
	if (r == 0 && w->cfg.nr_users && !(w->auth = basic_auth_new(&w->cfg))) {
		r = -EIO;
		strbuf_addstr(&err, "cannot draw a random key to remember passwords with");
	}
	if (r < 0) {
		cmd_error("exporter", "%s", err.buf);
		web_security_release(w);
	}
	strbuf_release(&err);
	return r;
}

/* Serve until SIGINT or SIGTERM. */
static int serve(const struct exporter_args *a, struct exporter_source *src,
		 const struct web_security *web)
{
	const struct http_limits limits = {
		.max_connections = a->max_conn,
		.max_per_ip = a->max_per_ip,
		.timeout_s = a->timeout_s,
		.request_timeout_s = a->request_timeout_s,
		/* Request line and headers: a scrape needs well under 1 KiB. */
		.memory = 16 * 1024,
	};
	const struct http_security security = { .cert_pem = web->cert_pem,
						.key_pem = web->key_pem,
						.auth = web->auth };
	struct http_server *server = NULL;
	struct strbuf err = STRBUF_INIT, url = STRBUF_INIT;
	struct sockaddr_storage ss;
	struct rlimit nofile;
	struct loop loop;
	sigset_t stop;
	socklen_t len;
	int r, ret = SPARKCTL_EXIT_ERROR;

	if (http_parse_listen(a->listen, &ss, &len) < 0)
		return cmd_usage_error("exporter", "invalid --listen '%s': expected ADDR:PORT",
				       a->listen);
	/* Blocked before any thread starts (NVML's, the server's), so that all inherit it. */
	loop_init(&loop);
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	if ((r = loop_watch_signals(&loop, &stop, stop_serving, NULL)) < 0) {
		cmd_error("exporter", "cannot watch for SIGTERM: %s", strerror(-r));
		goto out;
	}
	signal(SIGPIPE, SIG_IGN);
	open_gpu(a, src);
	/* Counter files stay open and clients may hold many sockets: beyond 1024 descriptors. */
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	src->cache = reader_cache_new();
	if (http_server_start(&server, (struct sockaddr *)&ss, len, &limits, &security, &loop,
			      scrape, src, &err) < 0) {
		cmd_error("exporter", "%s", err.buf);
		goto out;
	}
	http_server_url(server, &url);
	fprintf(stderr, "sparkctl exporter: serving %s/metrics\n", url.buf);
	fflush(stderr);
	/* The signals, and the timer of the requests' deadline: the server has its own thread. */
	while (!loop.stopped && loop_run_once(&loop, -1) == 0)
		;
	http_server_stop(server);
	ret = SPARKCTL_EXIT_OK;
out:
	reader_cache_free(src->cache);
	loop_release(&loop);
	strbuf_release(&err);
	strbuf_release(&url);
	return ret;
}

static int run_exporter(const struct cmd *cmd, int argc, char **argv)
{
	struct exporter_args a = { .listen = EXPORTER_DEFAULT_LISTEN,
				   .max_conn = 32,
				   .max_per_ip = 8,
				   .timeout_s = 10,
				   .request_timeout_s = 5 };
	struct exporter_source src = { .gpu_disabled = false };
	struct web_security web = { .cfg = WEB_CONFIG_INIT };
	struct rootfs root = { .dirfd = -1 };
	const char *root_path;
	int r, ret;

	if (parse_exporter(cmd, &a, argc, argv, &ret) < 0)
		return ret;
	/* Before the root: a bad file is said first, and nothing is opened for it. */
	if (a.web_config && web_security_load(a.web_config, &web) < 0)
		return SPARKCTL_EXIT_ERROR;
	root_path = rootfs_root_path(a.root);
	r = rootfs_open(&root, root_path);
	if (r < 0) {
		cmd_error("exporter", "cannot use '%s' as the root: %s", root_path, strerror(-r));
		web_security_release(&web);
		return SPARKCTL_EXIT_ERROR;
	}
	src.root = &root;
	if (a.once) {
		struct strbuf out = STRBUF_INIT;
		open_gpu(&a, &src);
		scrape(&src, &out);
		fwrite(out.buf, 1, out.len, stdout);
		strbuf_release(&out);
		ret = SPARKCTL_EXIT_OK;
	} else {
		ret = serve(&a, &src, &web);
	}
	exporter_gpu_close(src.gpu);
	rootfs_close(&root);
	web_security_release(&web);
	return ret;
}

const struct cmd cmd_exporter = {
	.name = "exporter",
	.fn = run_exporter,
	.summary = "serve GPU, RDMA and thermal metrics to Prometheus",
	.usage = exporter_usage,
	.description = exporter_description,
	.flags = CMD_READS_NODE,
	.exit_status = "0 stopped by SIGINT or SIGTERM, or after --once, 1 it cannot listen, use "
		       "its root or its --web-config, 2 usage",
	.max_operands = 0,
};
