/*
 * sparkctl deploy - put this sparkctl on the nodes: this binary at
 * ~/.local/bin/sparkctl (or --to PATH), where every command that runs
 * sparkctl on a node looks for it (remote/lookup.h), or a .deb installed
 * with apt-get (--deb FILE).
 *
 * Each node is asked its architecture first (uname -m, or dpkg's for a
 * .deb); one that cannot run what would be copied is refused.  The file
 * travels over ssh's stdin into a temporary name beside the target, is
 * checked for its length, made 0755 and renamed over the target: a deploy
 * cut short leaves the old file (or none) and at most that temporary
 * name, which the next deploy removes.
 */
#include "sparkctl.h"

#include <elf.h>

#include "cmd/cmd.h"
#include "lib/json.h"
#include "lib/xalloc.h"
#include "probe/procs.h"
#include "proc/run.h"
#include "remote/hosts.h"
#include "remote/session.h"
#include "version.h"
#include "view/emit.h"
#include "view/progress.h"

#define DEPLOY_SCHEMA_VERSION 1
#define DEPLOY_IMAGE_MAX      ((size_t)512 << 20)
#define DEPLOY_PROBE_MS	      20000
#define DEPLOY_INSTALL_MS     600000
#define DEPLOY_OUTPUT_MAX     ((size_t)1 << 20)

static const char *const deploy_usage[] = {
	"sparkctl deploy -H HOST,... | --hostfile FILE [--to PATH] [options]",
	"sparkctl deploy -H HOST,... | --hostfile FILE --deb FILE [options]",
	NULL,
};

static const char deploy_description[] =
	"Put this sparkctl on the nodes, where the commands that reach them look for\n"
	"it: this binary goes to ~/.local/bin/sparkctl (--to PATH: elsewhere; a\n"
	"relative PATH is below the node's home), through ssh, written to a\n"
	"temporary name beside it and renamed when whole.  With --deb FILE the\n"
	"package is copied and installed with 'apt-get install' (as root, or with\n"
	"'sudo -n'), which brings its dependencies too.  Each node's architecture is\n"
	"checked first ('uname -m', or 'dpkg --print-architecture' for a .deb): a\n"
	"node that could not run the file is refused.  Deploying the same binary\n"
	"again changes nothing.";

/*
 * The node's side of a binary deploy: sh -c SCRIPT deploy TARGET SIZE, the
 * binary on stdin.  The temporary name carries the node's name and the
 * shell's pid: a home shared by the nodes gets one per node, and the
 * temporaries an interrupted deploy left on this node (its shell gone) go
 * first.  The copy must have SIZE bytes (ssh ends stdin as a plain end
 * of file when the sender dies) before it is renamed over TARGET.
 */
static const char install_binary_script[] =
	"t=$1; n=$2; "
	"[ -n \"$t\" ] || t=\"$HOME/.local/bin/sparkctl\"; "
	"case $t in \"~/\"*) t=\"$HOME/${t#\"~/\"}\";; /*) ;; *) t=\"$HOME/$t\";; esac; "
	"d=${t%/*}; b=${t##*/}; [ -n \"$d\" ] || d=/; "
	"if [ -z \"$b\" ] || [ -d \"$t\" ]; then "
	"echo \"sparkctl-deploy: $t is a directory\" >&2; exit 1; fi; "
	"mkdir -p -- \"$d\" || exit 1; "
	"h=$(uname -n); "
	"for old in \"$d/.$b.deploy-$h-\"*; do "
	"[ ! -e \"$old\" ] || kill -0 \"${old##*-}\" 2> /dev/null || rm -f -- \"$old\"; done; "
	"tmp=\"$d/.$b.deploy-$h-$$\"; "
	"trap 'rm -f -- \"$tmp\"' EXIT; trap 'exit 1' HUP INT TERM PIPE; "
	"cat > \"$tmp\" || exit 1; "
	"got=$(wc -c < \"$tmp\"); "
	"if [ \"$got\" -ne \"$n\" ]; then "
	"echo \"sparkctl-deploy: the copy ended after $got of $n bytes\" >&2; exit 1; fi; "
	"if command -v cmp > /dev/null 2>&1 && cmp -s -- \"$tmp\" \"$t\"; then "
	"chmod 0755 -- \"$t\" || exit 1; echo \"unchanged $t\"; exit 0; fi; "
	"chmod 0755 -- \"$tmp\" && mv -f -- \"$tmp\" \"$t\" || exit 1; "
	"echo \"installed $t\"";

/* The node's side of --deb: sh -c SCRIPT deploy SIZE, the package on stdin. */
static const char install_deb_script[] =
	"n=$1; "
	"dir=$(mktemp -d) || exit 1; "
	"trap 'rm -rf -- \"$dir\"' EXIT; trap 'exit 1' HUP INT TERM PIPE; "
	"f=\"$dir/sparkctl.deb\"; "
	"cat > \"$f\" || exit 1; "
	"got=$(wc -c < \"$f\"); "
	"if [ \"$got\" -ne \"$n\" ]; then "
	"echo \"sparkctl-deploy: the copy ended after $got of $n bytes\" >&2; exit 1; fi; "
	/* apt's sandbox user reads the file: not only root. */
	"chmod 0755 \"$dir\"; chmod 0644 \"$f\"; "
	"if [ \"$(id -u)\" = 0 ]; then s=; else s='sudo -n'; fi; "
	"$s env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \"$f\" >&2 || exit 1; "
	"echo \"installed $(command -v sparkctl || echo /usr/bin/sparkctl)\"";

enum deploy_result {
	DEPLOY_INSTALLED,
	DEPLOY_UNCHANGED,
	DEPLOY_UNREACHABLE, /* ssh could not reach it */
	DEPLOY_WRONG_ARCH,  /* it could not run the file */
	DEPLOY_FAILED,	    /* the copy or the installation failed there */
};

static const char *const result_names[] = {
	[DEPLOY_INSTALLED] = "installed",     [DEPLOY_UNCHANGED] = "unchanged",
	[DEPLOY_UNREACHABLE] = "unreachable", [DEPLOY_WRONG_ARCH] = "wrong_arch",
	[DEPLOY_FAILED] = "failed",
};

struct deploy_node {
	const char *host;
	char *arch; /* as the node says it: uname -m, or dpkg's */
	char *path; /* where sparkctl is now */
	char *error;
	enum deploy_result result;
};

struct deploy_args {
	const char *hosts, *hostfile, *cluster, *to, *deb;
	unsigned fanout;
	bool json, quiet;
};

/* What is copied: the bytes and the architecture they run on. */
struct deploy_payload {
	struct strbuf data;
	char *arch; /* uname -m's or dpkg's name */
};

/* ---- what is copied ---- */

/* The machine an ELF image runs on, as uname -m names it; NULL when not ELF. */
static char *elf_machine(const struct strbuf *image)
{
	const unsigned char *h = (const unsigned char *)image->buf;
	unsigned machine;

	if (image->len < 20 || memcmp(h, ELFMAG, SELFMAG) != 0)
		return NULL;
	/* e_machine is the same 2 bytes in ELF32 and ELF64, in the file's byte order. */
	machine = h[EI_DATA] == ELFDATA2MSB ? (unsigned)h[18] << 8 | h[19]
					    : (unsigned)h[19] << 8 | h[18];
	switch (machine) {
	case EM_AARCH64:
		return xstrdup("aarch64");
	case EM_X86_64:
		return xstrdup("x86_64");
	default:
		return xasprintf("ELF machine %u", machine);
	}
}

/* This program's own image. */
static int payload_self(struct deploy_payload *p, struct strbuf *err)
{
	int r = proc_self_image(&p->data, DEPLOY_IMAGE_MAX);

	if (r < 0) {
		strbuf_addf(err, "cannot read this program's binary: %s", strerror(-r));
		return r;
	}
	p->arch = elf_machine(&p->data);
	if (!p->arch) {
		strbuf_addstr(err, "this program's binary is not an ELF file");
		return -ENOEXEC;
	}
	return 0;
}

/* The .deb at path, and its Architecture field (dpkg-deb -f). */
static int payload_deb(struct deploy_payload *p, const char *path, struct strbuf *err)
{
	struct run_job job;
	int r = strbuf_read_path(&p->data, path, DEPLOY_IMAGE_MAX);

	if (r < 0) {
		strbuf_addf(err, "cannot read '%s': %s", path, strerror(-r));
		return r;
	}
	run_job_init(&job);
	strvec_pushl(&job.argv, "dpkg-deb", "-f", "--", path, "Architecture", NULL);
	run_jobs(&job, 1, 1, DEPLOY_PROBE_MS, DEPLOY_OUTPUT_MAX);
	strbuf_trim(&job.out);
	if (job.status != 0 || !job.out.len) {
		char *why = remote_failure(&job, "this node", DEPLOY_PROBE_MS);
		strbuf_addf(err, "'%s' is not a package dpkg-deb can read: %s", path,
			    why ? why : "no Architecture field");
		free(why);
		r = -EINVAL;
	} else {
		p->arch = strbuf_detach(&job.out, NULL);
	}
	run_job_release(&job);
	return r;
}

/* ---- the nodes ---- */

/* Whether a node of architecture node_arch runs the payload's. */
static bool arch_fits(const char *node_arch, const char *payload_arch, bool deb)
{
	return streq(node_arch, payload_arch) || (deb && streq(payload_arch, "all"));
}

/* A failed job on n: unreachable when ssh itself failed (255), else failed. */
static void node_failed(struct deploy_node *n, const struct run_job *j, unsigned timeout_ms)
{
	n->error = remote_failure(j, n->host, timeout_ms);
	if (!n->error)
		n->error = xstrdup("failed");
	n->result = j->status == 255 || j->timed_out ? DEPLOY_UNREACHABLE : DEPLOY_FAILED;
}

/* Ask every node its architecture; a node that cannot take the payload is refused. */
static void probe_nodes(struct remote_session *rs, struct deploy_node *nodes, size_t nr,
			const struct deploy_payload *p, const struct deploy_args *a)
{
	struct run_job *jobs = xcalloc(nr + 1, sizeof(*jobs));
	const char *uname_argv[] = { "uname", "-m", NULL };
	const char *dpkg_argv[] = { "dpkg", "--print-architecture", NULL };

	for (size_t i = 0; i < nr; i++) {
		run_job_init(&jobs[i]);
		if (remote_session_argv(rs, nodes[i].host, a->deb ? dpkg_argv : uname_argv,
					&jobs[i].argv) < 0)
			strvec_push(&jobs[i].argv, "false");
	}
	run_jobs(jobs, nr, a->fanout, DEPLOY_PROBE_MS, DEPLOY_OUTPUT_MAX);
	for (size_t i = 0; i < nr; i++) {
		struct deploy_node *n = &nodes[i];
		struct strbuf arch = STRBUF_INIT;
		if (jobs[i].status != 0) {
			node_failed(n, &jobs[i], DEPLOY_PROBE_MS);
		} else {
			strbuf_add_printable(&arch, jobs[i].out.buf, strcspn(jobs[i].out.buf, "\n"),
					     0);
			n->arch = strbuf_detach(&arch, NULL);
			if (!arch_fits(n->arch, p->arch, a->deb)) {
				n->result = DEPLOY_WRONG_ARCH;
				n->error = xasprintf("%s is %s, and this %s is for %s: not copied",
						     n->host, n->arch,
						     a->deb ? "package" : "sparkctl", p->arch);
			}
		}
		strbuf_release(&arch);
		run_job_release(&jobs[i]);
	}
	free(jobs);
}

/* Copy and install on every node that fits; each says where sparkctl is now. */
static void install_nodes(struct remote_session *rs, struct deploy_node *nodes, size_t nr,
			  const struct deploy_payload *p, const struct deploy_args *a)
{
	struct run_job *jobs = xcalloc(nr + 1, sizeof(*jobs));
	size_t *index = xcalloc(nr + 1, sizeof(*index));
	size_t nr_jobs = 0;
	char *size = xasprintf("%zu", p->data.len);

	for (size_t i = 0; i < nr; i++) {
		struct run_job *j = &jobs[nr_jobs];
		if (nodes[i].error)
			continue;
		run_job_init(j);
		j->input = p->data.buf;
		j->input_len = p->data.len;
		const char *binary_argv[] = {
			"sh", "-c", install_binary_script, "deploy", a->to ? a->to : "", size, NULL
		};
		const char *deb_argv[] = { "sh", "-c", install_deb_script, "deploy", size, NULL };
		if (remote_session_argv(rs, nodes[i].host, a->deb ? deb_argv : binary_argv,
					&j->argv) < 0)
			strvec_push(&j->argv, "false");
		index[nr_jobs++] = i;
	}
	run_jobs(jobs, nr_jobs, a->fanout, DEPLOY_INSTALL_MS, DEPLOY_OUTPUT_MAX);
	for (size_t k = 0; k < nr_jobs; k++) {
		struct deploy_node *n = &nodes[index[k]];
		const char *out = jobs[k].out.buf, *word;
		struct strbuf path = STRBUF_INIT;
		/* The last line says what happened: "installed PATH" or "unchanged PATH". */
		const char *last = out;
		for (const char *q = out; *q; q++)
			if (q[0] == '\n' && q[1])
				last = q + 1;
		word = strchr(last, ' ');
		if (jobs[k].status != 0 || !word) {
			node_failed(n, &jobs[k], DEPLOY_INSTALL_MS);
		} else {
			n->result = starts_with(last, "unchanged ") ? DEPLOY_UNCHANGED
								    : DEPLOY_INSTALLED;
			strbuf_add_printable(&path, word + 1, strcspn(word + 1, "\n"), 0);
			n->path = strbuf_detach(&path, NULL);
		}
		strbuf_release(&path);
		run_job_release(&jobs[k]);
	}
	free(size);
	free(index);
	free(jobs);
}

/* ---- the report ---- */

static void deploy_emit(const struct deploy_node *nodes, size_t nr, const struct deploy_payload *p,
			struct emitter *e)
{
	static const char *const headers[] = { "NODE", "ARCH", "RESULT", "PATH" };

	emit_int(e, "schema_version", NULL, DEPLOY_SCHEMA_VERSION);
	emit_value(e, "sparkctl_version", jstr(SPARKCTL_VERSION), NULL);
	emit_value(e, "arch", jstr(p->arch), NULL);
	emit_table_open(e, "nodes", headers, ARRAY_SIZE(headers), 160);
	for (size_t i = 0; i < nr; i++) {
		const struct deploy_node *n = &nodes[i];
		emit_row_open(e);
		emit_cell(e, "host", jstr(n->host), n->host);
		emit_cell(e, "arch", jstr(n->arch), n->arch ? n->arch : "-");
		emit_cell(e, "result", jstr(result_names[n->result]), result_names[n->result]);
		emit_cell(e, "path", jstr(n->path), n->path ? n->path : "-");
		emit_value(e, "error", jstr(n->error), NULL);
		emit_row_close(e);
	}
	emit_table_close(e);
}

/* 3 when a node could not be reached, else 4 for one of another architecture, else 1. */
static int deploy_exit(const struct deploy_node *nodes, size_t nr)
{
	bool unreachable = false, wrong_arch = false, failed = false;

	for (size_t i = 0; i < nr; i++) {
		unreachable |= nodes[i].result == DEPLOY_UNREACHABLE;
		wrong_arch |= nodes[i].result == DEPLOY_WRONG_ARCH;
		failed |= nodes[i].result == DEPLOY_FAILED;
	}
	return unreachable  ? SPARKCTL_EXIT_UNAVAILABLE
	       : wrong_arch ? SPARKCTL_EXIT_PROBLEMS
	       : failed	    ? SPARKCTL_EXIT_ERROR
			    : SPARKCTL_EXIT_OK;
}

static int load_hosts(const struct deploy_args *a, struct host_list *hosts)
{
	struct strbuf err = STRBUF_INIT;
	int r = 0;

	if (a->deb && a->to)
		r = cmd_usage_error("deploy", "--to places the binary; a --deb package "
					      "installs where it says");
	else if (a->fanout == 0)
		r = cmd_usage_error("deploy", "--fanout must be at least 1");
	else if (host_list_from_options(a->hosts, a->hostfile, a->cluster, NULL, hosts, &err) < 0)
		r = cmd_usage_error("deploy", "%s", err.buf);
	strbuf_release(&err);
	return r;
}

static void print_report(const struct deploy_node *nodes, size_t nr, const struct deploy_payload *p,
			 const struct deploy_args *a)
{
	struct strbuf out = STRBUF_INIT;
	struct emitter e;

	for (size_t i = 0; i < nr && !a->json; i++)
		if (nodes[i].error)
			cmd_error("deploy", "%s: %s", nodes[i].host, nodes[i].error);
	if (a->quiet && !a->json)
		return;
	emit_init(&e, a->json ? EMIT_JSON : EMIT_TEXT, &out, cmd_use_color());
	deploy_emit(nodes, nr, p, &e);
	emit_finish(&e, &out);
	fputs(out.buf, stdout);
	strbuf_release(&out);
}

static int run_deploy(const struct cmd *cmd, int argc, char **argv)
{
	struct deploy_args a = { .fanout = 16 };
	const struct opt opts[] = {
		OPT_STRING('H', "hosts", &a.hosts, "HOST,...", "the nodes (ranges: spark[1-4])"),
		OPT_STRING(0, "hostfile", &a.hostfile, "FILE", "the nodes, one per line"),
		OPT_STRING(0, "cluster", &a.cluster, "FILE",
			   "the cluster file whose nodes to use without -H (env SPARKCTL_CLUSTER)"),
		OPT_STRING(0, "to", &a.to, "PATH",
			   "where the binary goes (default ~/.local/bin/sparkctl)"),
		OPT_STRING(0, "deb", &a.deb, "FILE", "copy and install this .deb instead"),
		OPT_BOOL(0, "json", &a.json, "what happened on each node, as JSON"),
		OPT_BOOL('q', "quiet", &a.quiet, "only errors"),
		OPT_UINT(0, "fanout", &a.fanout, "N", "nodes copied to at once (default 16)"),
		OPT_HELP(),
		OPT_END(),
	};
	struct host_list hosts = { 0 };
	struct deploy_payload p = { .data = STRBUF_INIT };
	struct deploy_node *nodes = NULL;
	const char **names = NULL;
	struct remote_session rs;
	struct strbuf err = STRBUF_INIT;
	bool session = false;
	int n, ret;

	n = cmd_parse(cmd, opts, argc, argv);
	if (n < 0)
		return cmd_parse_exit(n);
	ret = load_hosts(&a, &hosts);
	if (ret != 0)
		goto out;
	if ((a.deb ? payload_deb(&p, a.deb, &err) : payload_self(&p, &err)) < 0) {
		cmd_error("deploy", "%s", err.buf);
		ret = SPARKCTL_EXIT_ERROR;
		goto out;
	}
	nodes = xcalloc(hosts.nr + 1, sizeof(*nodes));
	names = xcalloc(hosts.nr + 1, sizeof(*names));
	for (size_t i = 0; i < hosts.nr; i++)
		names[i] = nodes[i].host = hosts.hosts[i].name;
	remote_session_init(&rs, NULL, true);
	session = true;
	remote_session_fast_kex(&rs, names, hosts.nr);
	progress_begin(!a.json && !a.quiet, "deploy: copying to %zu node%s", hosts.nr,
		       hosts.nr == 1 ? "" : "s");
	probe_nodes(&rs, nodes, hosts.nr, &p, &a);
	install_nodes(&rs, nodes, hosts.nr, &p, &a);
	progress_end();
	print_report(nodes, hosts.nr, &p, &a);
	ret = deploy_exit(nodes, hosts.nr);
out:
	if (session)
		remote_session_close(&rs);
	for (size_t i = 0; nodes && i < hosts.nr; i++) {
		free(nodes[i].arch);
		free(nodes[i].path);
		free(nodes[i].error);
	}
	free(nodes);
	free(names);
	free(p.arch);
	strbuf_release(&p.data);
	strbuf_release(&err);
	host_list_release(&hosts);
	return ret;
}

const struct cmd cmd_deploy = {
	.name = "deploy",
	.fn = run_deploy,
	.summary = "copy this sparkctl (or its .deb) to the nodes",
	.usage = deploy_usage,
	.description = deploy_description,
	.exit_status = "0 installed (or already there) on every node, 1 error (a copy or an "
		       "installation failed), 2 usage, 3 a node could not be reached, 4 a node "
		       "of another architecture (refused)",
	.max_operands = 0,
};
