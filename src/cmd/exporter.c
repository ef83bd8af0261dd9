/*
 * sparkctl exporter - Prometheus metrics of this node: GPUs (NVML), RDMA
 * ports, netdevs, temperatures, PCIe AER, memory.
 */
#include "sparkctl.h"

#include <signal.h>
#include <sys/resource.h>

#include "cmd/cmd.h"
#include "exporter/collect.h"
#include "exporter/gpu.h"
#include "exporter/http.h"
#include "lib/rootfs.h"

#define EXPORTER_DEFAULT_LISTEN "127.0.0.1:9877"

static const char *const exporter_usage[] = {
	"sparkctl exporter [--listen ADDR:PORT] [--root DIR] [--no-gpu] [limits]",
	"sparkctl exporter --once [--root DIR] [--no-gpu]",
	NULL,
};

static const char exporter_description[] =
	"Serve this node's metrics to Prometheus on http://ADDR:PORT/metrics "
	"(default\n" EXPORTER_DEFAULT_LISTEN ", this host only: any other address must be given).\n"
	"Metrics are read at each scrape: GPUs through NVML, RDMA port counters,\n"
	"netdevs, thermal zones and hwmon, PCIe AER and memory from sysfs and procfs.\n"
	"Runs until SIGINT or SIGTERM.  --once prints one scrape and exits.";

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

/* Wait for SIGINT or SIGTERM (blocked by the caller before any thread started). */
static void wait_for_stop(const sigset_t *stop)
{
	int sig;

	while (sigwait(stop, &sig) != 0)
		;
}

/* Serve until SIGINT or SIGTERM. */
static int serve(const struct exporter_source *src, const char *listen_text,
		 const struct http_limits *limits, const sigset_t *stop)
{
	struct sockaddr_storage ss;
	socklen_t len;
	struct http_server *server = NULL;
	struct strbuf err = STRBUF_INIT, addr = STRBUF_INIT;
	int r;

	r = http_parse_listen(listen_text, &ss, &len);
	if (r < 0)
		return cmd_usage_error("exporter", "invalid --listen '%s': expected ADDR:PORT",
				       listen_text);
	r = http_server_start(&server, (struct sockaddr *)&ss, len, limits, scrape, (void *)src,
			      &err);
	if (r < 0) {
		cmd_error("exporter", "%s", err.buf);
		strbuf_release(&err);
		return SPARKCTL_EXIT_ERROR;
	}
	http_server_address(server, &addr);
	fprintf(stderr, "sparkctl exporter: serving http://%s/metrics\n", addr.buf);
	fflush(stderr);
	strbuf_release(&addr);
	wait_for_stop(stop);
	http_server_stop(server);
	return SPARKCTL_EXIT_OK;
}

static int run_exporter(const struct cmd *cmd, int argc, char **argv)
{
	const char *listen_text = EXPORTER_DEFAULT_LISTEN, *root_path = NULL;
	bool once = false, no_gpu = false;
	unsigned max_conn = 32, max_per_ip = 8, timeout_s = 10;
	const struct opt opts[] = {
		OPT_STRING(0, "listen", &listen_text, "ADDR:PORT",
			   "where to serve (default " EXPORTER_DEFAULT_LISTEN
			   "; port 0: any free)"),
		OPT_STRING(0, "root", &root_path, "DIR",
			   "read sysfs and procfs below DIR, e.g. a 'sparkctl capture' tree"),
		OPT_BOOL(0, "once", &once, "print one scrape to stdout and exit"),
		OPT_BOOL(0, "no-gpu", &no_gpu, "leave NVML alone: no GPU metrics"),
		OPT_UINT(0, "max-connections", &max_conn, "N",
			 "connections served at once (default 32)"),
		OPT_UINT(0, "max-per-ip", &max_per_ip, "N",
			 "connections from one address (default 8)"),
		OPT_UINT(0, "timeout", &timeout_s, "SECONDS",
			 "close a connection idle this long (default 10)"),
		OPT_HELP(),
		OPT_END(),
	};
	struct exporter_source src = { .gpu_disabled = false };
	struct http_limits limits;
	struct rootfs root = { .dirfd = -1 };
	struct strbuf err = STRBUF_INIT;
	sigset_t stop;
	int n, r, ret = SPARKCTL_EXIT_OK;

	n = cmd_parse(cmd, opts, argc, argv);
	if (n < 0)
		return cmd_parse_exit(n);
	if (max_conn == 0 || max_per_ip == 0 || timeout_s == 0)
		return cmd_usage_error("exporter",
				       "--max-connections, --max-per-ip and --timeout must be > 0");
	root_path = rootfs_root_path(root_path);
	r = rootfs_open(&root, root_path);
	if (r < 0) {
		cmd_error("exporter", "cannot use '%s' as the root: %s", root_path, strerror(-r));
		return SPARKCTL_EXIT_ERROR;
	}
	src.root = &root;
	src.gpu_disabled = no_gpu;

	/* Before any thread starts, so that every thread inherits the mask. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	if (!once) {
		pthread_sigmask(SIG_BLOCK, &stop, NULL);
		signal(SIGPIPE, SIG_IGN);
	}
	if (!no_gpu) {
		r = exporter_gpu_open(&src.gpu, !once, &err);
		/* No NVML is a node without GPU metrics, not a reason to stop. */
		if (r < 0 && !once)
			fprintf(stderr, "sparkctl exporter: no GPU metrics: %s\n", err.buf);
		if (r < 0)
			src.gpu = NULL;
		strbuf_release(&err);
	}

	if (once) {
		struct strbuf out = STRBUF_INIT;

		scrape(&src, &out);
		fwrite(out.buf, 1, out.len, stdout);
		strbuf_release(&out);
	} else {
		limits = (struct http_limits){
			.max_connections = max_conn,
			.max_per_ip = max_per_ip,
			.timeout_s = timeout_s,
			/* Request line and headers: a scrape needs well under 1 KiB. */
			.memory = 16 * 1024,
		};
		/* The counter files stay open: a node with many HCAs needs more than 1024. */
		struct rlimit nofile;
		if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
			nofile.rlim_cur = nofile.rlim_max;
			setrlimit(RLIMIT_NOFILE, &nofile);
		}
		src.cache = reader_cache_new();
		ret = serve(&src, listen_text, &limits, &stop);
		reader_cache_free(src.cache);
	}
	exporter_gpu_close(src.gpu);
	rootfs_close(&root);
	return ret;
}

const struct cmd cmd_exporter = {
	.name = "exporter",
	.fn = run_exporter,
	.summary = "serve GPU, RDMA and thermal metrics to Prometheus",
	.usage = exporter_usage,
	.description = exporter_description,
	.max_operands = 0,
};
