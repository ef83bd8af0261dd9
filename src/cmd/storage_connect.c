/*
 * sparkctl storage connect | disconnect - the planned NVMe/TCP volume,
 * through nvme-cli: discover the target (is it there, does it offer the
 * NQN), connect, and wait until the path is live; or disconnect it.  The
 * target, port, NQN and interface come from the options, else from the
 * plan this node keeps (/etc/sparkctl/storage.d, storage/storage_conf.h).
 * With -H, --hostfile or --cluster, the same verb runs on each node over SSH.
 *
 * Never a half connection: a controller connected but not live within
 * the timeout is disconnected again before the command fails.
 */
#include "sparkctl.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <time.h>

#include "cmd/cmd.h"
#include "lib/clock.h"
#include "lib/json.h"
#include "lib/parse.h"
#include "lib/xalloc.h"
#include "probe/nvme.h"
#include "probe/nvmet_configfs.h"
#include "proc/run.h"
#include "remote/hosts.h"
#include "remote/session.h"
#include "storage/nvme_cli.h"
#include "storage/nvmet.h"
#include "storage/storage_conf.h"
#include "view/emit.h"

#define STORAGE_CONNECT_SCHEMA_VERSION 1
#define CONNECT_DEFAULT_TIMEOUT_S      30
#define NVME_OUTPUT_MAX		       ((size_t)1024 * 1024)
/* How often list-subsys is asked whether the new path is live. */
#define LIVE_POLL_MS		       200
/* The most a new connection waits for its namespaces' block devices. */
#define NAMESPACE_WAIT_MS	       5000
/* The least time left for one more list-subsys while waiting for the path. */
#define LIVE_POLL_MIN_MS	       1000
/* A node's own connect is bounded by its timeout; SSH gets this much more. */
#define REMOTE_SLACK_MS		       30000
#define NVME_MISSING		       "nvme-cli is not installed (Debian: apt-get install nvme-cli)"

struct connect_args {
	const char *target, *nqn, *iface, *timeout, *root, *mount;
	const char *hosts, *hostfile, *cluster, *remote_sparkctl;
	bool json;
};

/* What one connect or disconnect works with, resolved. */
struct volume {
	const char *title;
	const char *root; /* --root: where the plan and the loaded modules are seen */
	char *traddr, *nqn, *iface;
	unsigned port;
	char port_s[8];
	unsigned timeout_s;
	uint64_t deadline_ms; /* monotonic */
};

static void volume_release(struct volume *v)
{
	free(v->traddr);
	free(v->nqn);
	free(v->iface);
}

static unsigned remaining_ms(const struct volume *v)
{
	uint64_t now = monotonic_ms();

	return now >= v->deadline_ms ? 1 : (unsigned)(v->deadline_ms - now);
}

/*
 * Run nvme with args (NULL-terminated) within the deadline: SPARKCTL_EXIT_OK
 * when it ran (whatever its status: see job), UNAVAILABLE when nvme is
 * missing, TIMEOUT when it was killed at the deadline; the error printed.
 */
static int run_nvme(const struct volume *v, const char *const *args, struct run_job *job)
{
	run_job_init(job);
	strvec_push(&job->argv, "nvme");
	for (size_t i = 0; args[i]; i++)
		strvec_push(&job->argv, args[i]);
	if (run_jobs(job, 1, 1, remaining_ms(v), NVME_OUTPUT_MAX) < 0) {
		cmd_error(v->title, "cannot run nvme");
		return SPARKCTL_EXIT_ERROR;
	}
	if (job->spawn_error == -ENOENT) {
		cmd_error(v->title, NVME_MISSING);
		return SPARKCTL_EXIT_UNAVAILABLE;
	}
	if (job->spawn_error) {
		cmd_error(v->title, "cannot run nvme: %s", strerror(-job->spawn_error));
		return SPARKCTL_EXIT_UNAVAILABLE;
	}
	if (job->timed_out) {
		cmd_error(v->title, "nvme %s did not finish within %u s; stopped it", args[0],
			  v->timeout_s);
		return SPARKCTL_EXIT_TIMEOUT;
	}
	return SPARKCTL_EXIT_OK;
}

/* The first line nvme printed on stderr (escaped), for a message. */
static char *nvme_said(const struct run_job *job)
{
	char *line = remote_first_line(job->err.len ? job->err.buf : job->out.buf);

	if (!*line) {
		free(line);
		line = xasprintf("exit status %d", job->status);
	}
	return line;
}

/*
 * The subsystems this node has connected now (nvme list-subsys -o json).
 * tolerant: a list-subsys that fails is an empty list (nvme-cli fails to
 * scan where no NVMe driver is loaded yet: nothing is connected then).
 */
static int list_subsys(const struct volume *v, struct nvme_subsys_list *l, bool tolerant)
{
	static const char *const args[] = { "list-subsys", "-o", "json", NULL };
	struct run_job job;
	struct strbuf err = STRBUF_INIT;
	int ret = run_nvme(v, args, &job);

	if (ret == SPARKCTL_EXIT_OK && job.status != 0 && tolerant) {
		/* an empty list */
	} else if (ret == SPARKCTL_EXIT_OK && job.status != 0) {
		char *said = nvme_said(&job);
		cmd_error(v->title, "nvme list-subsys failed: %s", said);
		free(said);
		ret = SPARKCTL_EXIT_ERROR;
	} else if (ret == SPARKCTL_EXIT_OK &&
		   nvme_list_subsys_parse(job.out.buf, job.out.len, l, &err) < 0) {
		cmd_error(v->title, "%s", err.buf);
		ret = SPARKCTL_EXIT_ERROR;
	}
	strbuf_release(&err);
	run_job_release(&job);
	return ret;
}

/*
 * nvme-cli takes an IP address (traddr), and list-subsys shows one: a
 * name is resolved first, to its first address.
 */
static int resolve_name(char **addr)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	unsigned char bin[16];
	char text[INET6_ADDRSTRLEN];
	const void *a;

	if (inet_pton(AF_INET, *addr, bin) == 1 || inet_pton(AF_INET6, *addr, bin) == 1)
		return 0;
	if (getaddrinfo(*addr, NULL, &hints, &res) != 0 || !res)
		return -ENOENT;
	a = res->ai_family == AF_INET6
		    ? (const void *)&((const struct sockaddr_in6 *)(void *)res->ai_addr)->sin6_addr
		    : (const void *)&((const struct sockaddr_in *)(void *)res->ai_addr)->sin_addr;
	if (inet_ntop(res->ai_family, a, text, sizeof(text))) {
		free(*addr);
		*addr = xstrdup(text);
	}
	freeaddrinfo(res);
	return 0;
}

/* Options first, then the plan; a usage error when something is still missing. */
static int resolve(const char *title, const struct connect_args *a, bool need_target,
		   struct volume *v)
{
	struct storage_conf conf;
	struct rootfs root = { .dirfd = -1 };
	struct strbuf err = STRBUF_INIT;
	int ret = SPARKCTL_EXIT_OK, r;

	storage_conf_init(&conf);
	memset(v, 0, sizeof(*v));
	v->title = title;
	v->root = a->root;
	v->timeout_s = CONNECT_DEFAULT_TIMEOUT_S;
	if (a->timeout) {
		uint32_t s;
		if (parse_u32(a->timeout, &s) < 0 || s == 0 || s > 86400) {
			ret = cmd_usage_error(title, "--connect-timeout: seconds, 1 to 86400");
			goto out;
		}
		v->timeout_s = s;
	}
	v->deadline_ms = monotonic_ms() + (uint64_t)v->timeout_s * 1000;
	if (!a->nqn || (need_target && !a->target)) {
		r = rootfs_open(&root, rootfs_root_path(a->root));
		if (r == 0)
			r = storage_conf_load_mount(&root, a->mount, &conf, &err);
		if (r == -E2BIG || (r == -ENOENT && a->mount)) {
			/* Several volumes planned and none chosen, or no plan for --mount. */
			ret = cmd_usage_error(title, "%s", err.buf);
			goto out;
		}
		if (r < 0 && r != -ENOENT) {
			cmd_error(title, "%s", err.buf);
			ret = SPARKCTL_EXIT_ERROR;
			goto out;
		}
	}
	if (a->target) {
		r = nvmet_split_addr_port(a->target, STORAGE_DEFAULT_PORT, &v->traddr, &v->port,
					  &err);
		if (r < 0) {
			ret = cmd_usage_error(title, "--target: %s", err.buf);
			goto out;
		}
	} else if (conf.target_address) {
		v->traddr = xstrdup(conf.target_address);
		v->port = conf.target_port ? conf.target_port : STORAGE_DEFAULT_PORT;
	}
	if (v->traddr && resolve_name(&v->traddr) < 0) {
		ret = cmd_usage_error(title,
				      "--target: '%s' is neither an IP address nor a name "
				      "that resolves",
				      v->traddr);
		goto out;
	}
	snprintf(v->port_s, sizeof(v->port_s), "%u", v->port);
	v->nqn = xstrdup_or_null(a->nqn ? a->nqn : conf.nqn);
	v->iface = xstrdup_or_null(a->iface ? a->iface : (a->target ? NULL : conf.interface));
	if (!v->nqn || (need_target && !v->traddr)) {
		ret = cmd_usage_error(title,
				      "give --nqn%s, or plan the volume first "
				      "('sparkctl storage plan --write': /etc/sparkctl/"
				      "storage.d)",
				      need_target ? " and --target" : "");
	} else if (!nvme_nqn_valid(v->nqn)) {
		ret = cmd_usage_error(title, "--nqn: not an NQN (" NVME_NQN_RULE ")");
	}
out:
	if (root.dirfd >= 0)
		rootfs_close(&root);
	storage_conf_release(&conf);
	strbuf_release(&err);
	return ret;
}

/*
 * nvme-tcp loaded (nvme discover needs /dev/nvme-fabrics), best effort:
 * when modprobe cannot, what it said goes into why, for the message of a
 * discover that then fails.
 */
static void load_nvme_tcp(const struct volume *v, struct strbuf *why)
{
	struct rootfs root = { .dirfd = -1 };
	struct run_job job;

	if (rootfs_open(&root, rootfs_root_path(v->root)) < 0)
		return;
	if (rootfs_exists(&root, NVME_TCP_MODULE_DIR))
		goto out;
	run_job_init(&job);
	strvec_pushl(&job.argv, "modprobe", "nvme-tcp", NULL);
	if (run_jobs(&job, 1, 1, remaining_ms(v), NVME_OUTPUT_MAX) == 0 && job.status != 0) {
		char *said = job.spawn_error ? xstrdup(strerror(-job.spawn_error))
					     : remote_first_line(job.err.buf);
		strbuf_addf(why, "; nvme-tcp is not loaded (modprobe nvme-tcp: %s)", said);
		free(said);
	}
	run_job_release(&job);
out:
	rootfs_close(&root);
}

/* The target answers and offers the NQN (nvme discover). */
static int discover(const struct volume *v, const char *module_why)
{
	const char *args[] = { "discover", "-t", "tcp",	 "-a", v->traddr, "-s",
			       v->port_s,  "-o", "json", NULL, NULL,	  NULL };
	struct nvme_discovery_log log;
	struct run_job job;
	struct strbuf err = STRBUF_INIT, nqns = STRBUF_INIT;
	int ret;

	if (v->iface) {
		args[9] = "-f";
		args[10] = v->iface;
	}
	nvme_discovery_log_init(&log);
	ret = run_nvme(v, args, &job);
	if (ret == SPARKCTL_EXIT_OK && job.status != 0) {
		char *said = nvme_said(&job);
		cmd_error(v->title, "no NVMe/TCP target answers at %s:%u (nvme discover: %s)%s",
			  v->traddr, v->port, said, module_why);
		free(said);
		ret = SPARKCTL_EXIT_UNAVAILABLE;
	} else if (ret == SPARKCTL_EXIT_OK &&
		   nvme_discover_parse_json(job.out.buf, job.out.len, &log, &err) < 0) {
		cmd_error(v->title, "%s", err.buf);
		ret = SPARKCTL_EXIT_ERROR;
	} else if (ret == SPARKCTL_EXIT_OK && !nvme_discovery_offers(&log, v->nqn)) {
		nvme_discovery_nqns(&log, &nqns);
		cmd_error(v->title, "the target at %s:%u does not offer %s; it offers: %s",
			  v->traddr, v->port, v->nqn, nqns.buf);
		ret = SPARKCTL_EXIT_UNAVAILABLE;
	}
	nvme_discovery_log_release(&log);
	strbuf_release(&err);
	strbuf_release(&nqns);
	run_job_release(&job);
	return ret;
}

/* Disconnect the controllers of nqn that were not there before (or the NQN). */
static void undo_connect(const struct volume *v, const struct nvme_subsystem *before)
{
	struct nvme_subsys_list now;
	struct volume grace = *v;
	const struct nvme_subsystem *s;
	size_t undone = 0;

	/* The deadline has passed: the cleanup gets time of its own. */
	grace.deadline_ms = monotonic_ms() + 10000;
	nvme_subsys_list_init(&now);
	if (list_subsys(&grace, &now, false) == SPARKCTL_EXIT_OK &&
	    (s = nvme_subsys_find(&now, v->nqn)) != NULL) {
		for (size_t i = 0; i < s->nr_paths; i++) {
			const char *name = s->paths[i].name;
			bool old = false;
			struct run_job job;
			const char *args[] = { "disconnect", "-d", name, NULL };

			for (size_t j = 0; before && j < before->nr_paths; j++)
				old |= streq(before->paths[j].name, name);
			if (old || !*name)
				continue;
			if (run_nvme(&grace, args, &job) == SPARKCTL_EXIT_OK && job.status == 0)
				undone++;
			run_job_release(&job);
		}
	}
	if (!undone && !before) {
		const char *args[] = { "disconnect", "-n", v->nqn, NULL };
		struct run_job job;

		run_nvme(&grace, args, &job);
		run_job_release(&job);
	}
	nvme_subsys_list_release(&now);
}

/* Wait until nqn has a live path to the target; TIMEOUT (after undoing) when not. */
static int wait_live(const struct volume *v, const struct nvme_subsystem *before,
		     struct nvme_subsys_list *l)
{
	for (;;) {
		int ret;

		/* A poll so close to the deadline that nvme cannot answer is as not live. */
		if (remaining_ms(v) < LIVE_POLL_MIN_MS)
			break;
		ret = list_subsys(v, l, false);
		if (ret == SPARKCTL_EXIT_TIMEOUT)
			break;
		if (ret != SPARKCTL_EXIT_OK) {
			undo_connect(v, before);
			return ret;
		}
		if (nvme_subsys_count_paths(nvme_subsys_find(l, v->nqn), v->traddr, v->port_s,
					    true))
			return SPARKCTL_EXIT_OK;
		if (monotonic_ms() + LIVE_POLL_MS >= v->deadline_ms)
			break;
		nvme_subsys_list_release(l);
		nanosleep(&(struct timespec){ .tv_nsec = LIVE_POLL_MS * 1000000L }, NULL);
	}
	undo_connect(v, before);
	cmd_error(v->title,
		  "connected to %s:%u, but no path of %s was live within %u s; "
		  "disconnected it",
		  v->traddr, v->port, v->nqn, v->timeout_s);
	return SPARKCTL_EXIT_TIMEOUT;
}

static int nvme_connect(const struct volume *v, const struct nvme_subsystem *before)
{
	const char *args[] = { "connect", "-t", "tcp", "-n", v->nqn, "-a", v->traddr, "-s",
			       v->port_s, "-l", "600", "-c", "10",   NULL, NULL,      NULL };
	struct run_job job;
	int ret;

	if (v->iface) {
		args[13] = "-f";
		args[14] = v->iface;
	}
	ret = run_nvme(v, args, &job);
	if (ret == SPARKCTL_EXIT_TIMEOUT) {
		undo_connect(v, before);
	} else if (ret == SPARKCTL_EXIT_OK && job.status != 0) {
		char *said = nvme_said(&job);
		cmd_error(v->title, "nvme connect to %s:%u failed: %s", v->traddr, v->port, said);
		free(said);
		ret = SPARKCTL_EXIT_UNAVAILABLE;
	}
	run_job_release(&job);
	return ret;
}

/*
 * The block devices of controller ctrl's namespaces into devices.  After a
 * new connection (wait) they are waited for, within the deadline and at most
 * NAMESPACE_WAIT_MS: the kernel scans the namespaces once the path is live.
 * Not when the controller's directory is not there to read (nothing to
 * wait for), nor for a subsystem without namespaces beyond that bound.
 */
static void controller_devices(const struct volume *v, const char *ctrl, bool wait,
			       struct strvec *devices)
{
	struct rootfs root = { .dirfd = -1 };
	uint64_t until = monotonic_ms() + NAMESPACE_WAIT_MS;

	if (until > v->deadline_ms)
		until = v->deadline_ms;
	if (rootfs_open(&root, rootfs_root_path(v->root)) < 0)
		return;
	while (nvme_controller_devices(&root, ctrl, devices) == 0 && wait &&
	       monotonic_ms() + LIVE_POLL_MS < until)
		nanosleep(&(struct timespec){ .tv_nsec = LIVE_POLL_MS * 1000000L }, NULL);
	rootfs_close(&root);
}

/* The live paths of nqn to the target, as text or JSON. */
static void emit_connection(const struct volume *v, const struct nvme_subsys_list *l, bool already,
			    bool json)
{
	const struct nvme_subsystem *s = nvme_subsys_find(l, v->nqn);
	struct strvec devices = STRVEC_INIT;
	struct strbuf out = STRBUF_INIT;
	struct emitter e;

	emit_init(&e, json ? EMIT_JSON : EMIT_TEXT, &out, cmd_use_color());
	emit_value(&e, "schema_version", jint(STORAGE_CONNECT_SCHEMA_VERSION), NULL);
	emit_str(&e, "nqn", already ? "%s: connected already" : "%s: connected", v->nqn);
	emit_bool(&e, "already_connected", already, NULL, NULL);
	emit_object_open(&e, "target");
	emit_str(&e, "address", " (%s", v->traddr);
	emit_int(&e, "port", ":%" PRId64 ")\n", v->port);
	emit_close(&e);
	emit_str(&e, "subsystem", NULL, s ? s->name : NULL);
	emit_array_open(&e, "controllers");
	for (size_t i = 0; s && i < s->nr_paths; i++) {
		const struct nvme_path *p = &s->paths[i];

		if (!nvme_path_to(p, v->traddr, v->port_s))
			continue;
		emit_object_open(&e, NULL);
		emit_str(&e, "name", "  %s", p->name);
		emit_str(&e, "state", " %s", p->state);
		emit_str(&e, "transport", NULL, p->transport);
		emit_str(&e, "address", NULL, p->addr.traddr);
		emit_str(&e, "src_addr", " from %s", p->addr.src_addr);
		emit_str(&e, "interface", p->addr.host_iface ? " on %s" : NULL, p->addr.host_iface);
		controller_devices(v, p->name, !already, &devices);
		emit_array_open(&e, "devices");
		for (size_t j = 0; j < devices.nr; j++)
			emit_str(&e, NULL, j ? ", %s" : ", namespace %s", devices.v[j]);
		emit_close(&e);
		strvec_clear(&devices);
		emit_text(&e, "\n");
		emit_close(&e);
	}
	emit_close(&e);
	emit_finish(&e, &out);
	fputs(out.buf, stdout);
	strbuf_release(&out);
}

static int connect_here(const struct volume *v, bool json)
{
	struct nvme_subsys_list before, after;
	const struct nvme_subsystem *had;
	struct strbuf module_why = STRBUF_INIT;
	int ret;

	nvme_subsys_list_init(&before);
	nvme_subsys_list_init(&after);
	load_nvme_tcp(v, &module_why);
	ret = list_subsys(v, &before, true);
	if (ret != SPARKCTL_EXIT_OK)
		goto out;
	had = nvme_subsys_find(&before, v->nqn);
	if (nvme_subsys_count_paths(had, v->traddr, v->port_s, true)) {
		emit_connection(v, &before, true, json);
		goto out;
	}
	ret = discover(v, module_why.buf);
	if (ret == SPARKCTL_EXIT_OK)
		ret = nvme_connect(v, had);
	if (ret == SPARKCTL_EXIT_OK)
		ret = wait_live(v, had, &after);
	if (ret == SPARKCTL_EXIT_OK)
		emit_connection(v, &after, false, json);
out:
	nvme_subsys_list_release(&before);
	nvme_subsys_list_release(&after);
	strbuf_release(&module_why);
	return ret;
}

static int disconnect_here(const struct volume *v)
{
	const char *args[] = { "disconnect", "-n", v->nqn, NULL };
	struct nvme_subsys_list l;
	const struct nvme_subsystem *s;
	struct run_job job;
	int ret;

	nvme_subsys_list_init(&l);
	run_job_init(&job);
	ret = list_subsys(v, &l, true);
	if (ret != SPARKCTL_EXIT_OK)
		goto out;
	s = nvme_subsys_find(&l, v->nqn);
	if (!s || !s->nr_paths) {
		printf("%s: not connected\n", v->nqn);
		goto out;
	}
	run_job_release(&job);
	ret = run_nvme(v, args, &job);
	if (ret == SPARKCTL_EXIT_OK && job.status != 0) {
		char *said = nvme_said(&job);
		cmd_error(v->title, "nvme disconnect failed: %s", said);
		free(said);
		ret = SPARKCTL_EXIT_ERROR;
	} else if (ret == SPARKCTL_EXIT_OK) {
		printf("%s: disconnected %zu controller%s\n", v->nqn, s->nr_paths,
		       s->nr_paths == 1 ? "" : "s");
	}
out:
	run_job_release(&job);
	nvme_subsys_list_release(&l);
	return ret;
}

/* The same verb on each node over SSH: a line per node. */
static int on_nodes(const struct cmd *cmd, const struct connect_args *a)
{
	struct host_list hosts = { 0 };
	struct remote_session rm;
	struct strbuf err = STRBUF_INIT;
	struct strvec words = STRVEC_INIT;
	struct run_job *jobs;
	unsigned timeout_s = CONNECT_DEFAULT_TIMEOUT_S, timeout_ms;
	size_t failed = 0;
	uint32_t t;

	if (host_list_from_options(a->hosts, a->hostfile, a->cluster, NULL, &hosts, &err) < 0) {
		host_list_release(&hosts);
		strbuf_release(&err);
		return cmd_usage_error(cmd_title(cmd), "%s", err.buf);
	}
	if (a->timeout && parse_u32(a->timeout, &t) == 0 && t > 0)
		timeout_s = t;
	timeout_ms = timeout_s * 1000 + REMOTE_SLACK_MS;
	strvec_pushl(&words, "storage", cmd->name, NULL);
	if (a->target)
		strvec_pushl(&words, "--target", a->target, NULL);
	if (a->nqn)
		strvec_pushl(&words, "--nqn", a->nqn, NULL);
	if (a->iface)
		strvec_pushl(&words, "--iface", a->iface, NULL);
	if (a->mount)
		strvec_pushl(&words, "--mount", a->mount, NULL);
	if (a->timeout)
		strvec_pushl(&words, "--connect-timeout", a->timeout, NULL);
	remote_session_init(&rm, a->remote_sparkctl, true);
	jobs = xcalloc(hosts.nr + 1, sizeof(*jobs));
	for (size_t i = 0; i < hosts.nr; i++) {
		run_job_init(&jobs[i]);
		remote_session_sparkctl_argv(&rm, hosts.hosts[i].name, (const char *const *)words.v,
					     &jobs[i].argv);
	}
	run_jobs(jobs, hosts.nr, 16, timeout_ms, NVME_OUTPUT_MAX);
	for (size_t i = 0; i < hosts.nr; i++) {
		char *why = jobs[i].argv.nr
				    ? remote_failure(&jobs[i], hosts.hosts[i].name, timeout_ms)
				    : xstrdup("not a usable host name");
		struct strbuf line = STRBUF_INIT;

		strbuf_addstr_printable(&line, hosts.hosts[i].name);
		strbuf_addstr(&line, ": ");
		if (why) {
			failed++;
			strbuf_addf(&line, "failed: %s", why);
		} else {
			char *first = remote_first_line(jobs[i].out.buf);
			strbuf_addstr(&line, first);
			free(first);
		}
		puts(line.buf);
		strbuf_release(&line);
		free(why);
		run_job_release(&jobs[i]);
	}
	free(jobs);
	remote_session_close(&rm);
	strvec_clear(&words);
	host_list_release(&hosts);
	strbuf_release(&err);
	return failed ? SPARKCTL_EXIT_UNAVAILABLE : SPARKCTL_EXIT_OK;
}

/* The options connect and disconnect share: the nodes, and which plan. */
#define CONNECT_SHARED_OPTS(args)                                                                  \
	OPT_STRING(0, "hostfile", &(args)->hostfile, "FILE", "the nodes, one per line"),           \
		OPT_STRING(0, "cluster", &(args)->cluster, "FILE",                                 \
			   "the nodes of this cluster file"),                                      \
		OPT_STRING(0, "remote-sparkctl", &(args)->remote_sparkctl, "PATH",                 \
			   "the nodes' sparkctl (default: found on each node)"),                   \
		OPT_STRING(0, "mount", &(args)->mount, "DIR",                                      \
			   "the planned volume mounted at DIR (when several are planned)"),        \
		OPT_STRING(0, "root", &(args)->root, "DIR", "read the plan below DIR")

static int run_verb(const struct cmd *cmd, int argc, char **argv, bool connect)
{
	struct connect_args a = { 0 };
	struct volume v = { 0 };
	int r, ret;
	const struct opt connect_opts[] = {
		OPT_STRING(0, "target", &a.target, "ADDR[:PORT]",
			   "the target's address (port 4420 by default)"),
		OPT_STRING(0, "nqn", &a.nqn, "NQN", "the subsystem's NVMe Qualified Name"),
		OPT_STRING(0, "iface", &a.iface, "IF", "connect through this interface (-f)"),
		OPT_STRING(0, "connect-timeout", &a.timeout, "S",
			   "give up after S seconds, disconnecting what was connected (default "
			   "30)"),
		OPT_BOOL(0, "json", &a.json, "the connection as JSON"),
		OPT_STRING('H', "hosts", &a.hosts, "HOST,...", "connect on these nodes, over SSH"),
		CONNECT_SHARED_OPTS(&a),
		OPT_HELP(),
		OPT_END(),
	};
	const struct opt disconnect_opts[] = {
		OPT_STRING(0, "nqn", &a.nqn, "NQN", "the subsystem's NVMe Qualified Name"),
		OPT_STRING('H', "hosts", &a.hosts, "HOST,...",
			   "disconnect on these nodes, over SSH"),
		CONNECT_SHARED_OPTS(&a),
		OPT_HELP(),
		OPT_END(),
	};

	r = cmd_parse(cmd, connect ? connect_opts : disconnect_opts, argc, argv);
	if (r < 0)
		return cmd_parse_exit(r);
	if ((a.hosts || a.hostfile || a.cluster) && a.json)
		return cmd_usage_error(cmd_title(cmd),
				       "--json is this node's connection; with -H, "
				       "--hostfile or --cluster each node says a line");
	if (a.hosts || a.hostfile || a.cluster)
		return on_nodes(cmd, &a);
	ret = resolve(cmd_title(cmd), &a, connect, &v);
	if (ret == SPARKCTL_EXIT_OK)
		ret = connect ? connect_here(&v, a.json) : disconnect_here(&v);
	volume_release(&v);
	return ret;
}

static int run_connect(const struct cmd *cmd, int argc, char **argv)
{
	return run_verb(cmd, argc, argv, true);
}

static int run_disconnect(const struct cmd *cmd, int argc, char **argv)
{
	return run_verb(cmd, argc, argv, false);
}

static const char *const connect_usage[] = {
	"sparkctl storage connect [--target ADDR[:PORT]] [--nqn NQN] [--iface IF] [--mount DIR]\n"
	"        [--connect-timeout S] [--json] [-H HOSTS | --hostfile FILE | --cluster FILE]",
	NULL,
};

static const char *const disconnect_usage[] = {
	"sparkctl storage disconnect [--nqn NQN] [--mount DIR] [-H HOSTS | --hostfile FILE | "
	"--cluster FILE]",
	NULL,
};

const struct cmd cmd_storage_connect = {
	.name = "connect",
	.title = "storage connect",
	.fn = run_connect,
	.summary = "connect the planned NVMe/TCP volume (nvme-cli)",
	.usage = connect_usage,
	.description =
		"Asks the target (nvme discover) whether it answers and offers the NQN, connects\n"
		"(nvme connect -t tcp -l 600 -c 10, through --iface when given) and waits until\n"
		"the path is live, then shows the controller.  Options not given come from the\n"
		"plan this node keeps (/etc/sparkctl/storage.d; --mount DIR chooses among\n"
		"several).  A volume connected already\n"
		"is left as it is.  A controller that is not live within --connect-timeout is\n"
		"disconnected again.  With -H, --hostfile or --cluster, each node connects\n"
		"itself (sparkctl over SSH), a line per node.",
	.exit_status = "0 connected (or connected already), 1 an error, 2 usage, 3 nvme-cli "
		       "missing, the target does not answer or does not offer the NQN, a node "
		       "failed, 5 not live within the timeout (disconnected again)",
	.max_operands = 0,
};

const struct cmd cmd_storage_disconnect = {
	.name = "disconnect",
	.title = "storage disconnect",
	.fn = run_disconnect,
	.summary = "disconnect the NVMe/TCP volume (nvme-cli)",
	.usage = disconnect_usage,
	.description =
		"Disconnects every controller of the NQN (nvme disconnect -n), given or planned\n"
		"(/etc/sparkctl/storage.d; --mount DIR chooses among several), and says how\n"
		"many; a volume not connected is\n"
		"said so.  With -H, --hostfile or --cluster, on each node over SSH.",
	.exit_status = "0 disconnected (or not connected), 1 an error, 2 usage, 3 nvme-cli "
		       "missing, a node failed, 5 nvme did not finish in time",
	.max_operands = 0,
};
