/*
 * health.c - sparkctl doctor --slurm-health: what scontrol says of the
 * node, the reason of its failed checks, and what to do (health.h).
 */
#include "sparkctl.h"

#include <errno.h>

#include "lib/strvec.h"
#include "lib/xalloc.h"
#include "proc/run.h"
#include "slurm/health.h"

/* Bytes scontrol may print: one node's line is under 2 KiB. */
#define SCONTROL_MAX_OUTPUT (64 * 1024)

void slurm_node_show_release(struct slurm_node_show *n)
{
	free(n->name);
	free(n->state);
	free(n->reason);
	memset(n, 0, sizeof(*n));
}

/*
 * The value of " KEY=" (or KEY= at the start) in line[0..len): up to the
 * next blank; NULL when absent.
 */
static char *field(const char *line, size_t len, const char *key)
{
	size_t klen = strlen(key);

	for (size_t i = 0; i + klen <= len; i++) {
		if ((i && line[i - 1] != ' ') || memcmp(line + i, key, klen) != 0)
			continue;
		size_t end = i + klen;
		while (end < len && line[end] != ' ')
			end++;
		return xstrndup(line + i + klen, end - i - klen);
	}
	return NULL;
}

/* Reason=TEXT [user@time]: the text, without the tail Slurm adds. */
static char *reason_text(const char *s, size_t len)
{
	if (len && s[len - 1] == ']') {
		for (size_t i = len - 1; i-- > 0;) {
			if (s[i] == '[' && i && s[i - 1] == ' ' &&
			    memchr(s + i, '@', len - i) != NULL) {
				len = i - 1;
				break;
			}
		}
	}
	while (len && s[len - 1] == ' ')
		len--;
	return len ? xstrndup(s, len) : NULL;
}

/* State=BASE+FLAG+...: DRAIN (DRAINING, DRAINED) among them, DOWN as the base. */
static void state_flags(struct slurm_node_show *n)
{
	const char *p = n->state;

	n->down = starts_with(p, "DOWN") && (p[4] == '\0' || p[4] == '+' || p[4] == '*');
	while (p && *p) {
		const char *plus = strchr(p, '+');
		size_t tlen = plus ? (size_t)(plus - p) : strlen(p);
		if (tlen >= 5 && memcmp(p, "DRAIN", 5) == 0)
			n->drain = true;
		p = plus ? plus + 1 : NULL;
	}
}

int slurm_node_show_parse(const char *text, size_t len, struct slurm_node_show *out)
{
	const char *nl = memchr(text, '\n', len);
	size_t line_len = nl ? (size_t)(nl - text) : len, reason_at = line_len;
	static const char reason_key[] = " Reason=";

	memset(out, 0, sizeof(*out));
	if (memchr(text, '\0', line_len) || line_len < 9 || memcmp(text, "NodeName=", 9) != 0)
		return -EINVAL;
	/* The reason is free text, last on the line: no field is looked for inside it. */
	for (size_t i = 0; i + sizeof(reason_key) - 1 <= line_len; i++) {
		if (memcmp(text + i, reason_key, sizeof(reason_key) - 1) == 0) {
			reason_at = i;
			out->reason = reason_text(text + i + sizeof(reason_key) - 1,
						  line_len - i - (sizeof(reason_key) - 1));
			break;
		}
	}
	out->name = field(text, reason_at, "NodeName=");
	out->state = field(text, reason_at, "State=");
	if (!out->name || !*out->name || !out->state || !*out->state) {
		slurm_node_show_release(out);
		return -EINVAL;
	}
	state_flags(out);
	return 0;
}

bool slurm_node_name_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > SLURM_NODE_NAME_MAX || name[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/*
 * s as a reason may hold it: printable ASCII, a blank for each control
 * character, '?' for each character beyond ASCII, no quotes or
 * backslashes (scontrol and the tools that show reasons take them for
 * their own), runs of blanks as one.
 */
static void add_reason_text(struct strbuf *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		int c = *p;
		if (c == '"' || c == '\'' || c == '\\' || c == '`')
			continue;
		if (c >= 0x80 &&
		    c < 0xc0) /* a UTF-8 continuation byte: its lead byte gave the '?' */
			continue;
		c = c >= 0xc0 ? '?' : (c < 0x20 || c == 0x7f) ? ' ' : c;
		if (c == ' ' && (!out->len || out->buf[out->len - 1] == ' '))
			continue;
		strbuf_addch(out, c);
	}
}

size_t slurm_health_reason(const struct findings *f, struct strbuf *out)
{
	const struct finding *first = NULL;
	struct strbuf tail = STRBUF_INIT;
	size_t fails = 0;

	strbuf_reset(out);
	for (size_t i = 0; i < f->nr; i++)
		if (f->items[i].status == CHECK_FAIL && !fails++)
			first = &f->items[i];
	if (!first)
		goto out;
	strbuf_addstr(out, SLURM_HEALTH_MARK " ");
	add_reason_text(out, first->check_id);
	strbuf_addch(out, ' ');
	add_reason_text(out, first->message ? first->message : "failed");
	strbuf_rtrim(out);
	if (fails > 1)
		strbuf_addf(&tail, " (+%zu more)", fails - 1);
	if (out->len + tail.len > SLURM_HEALTH_REASON_MAX) {
		strbuf_setlen(out, SLURM_HEALTH_REASON_MAX - tail.len - 3);
		strbuf_rtrim(out);
		strbuf_addstr(out, "...");
	}
	strbuf_addstr(out, tail.buf);
out:
	strbuf_release(&tail);
	return fails;
}

enum slurm_health_action slurm_health_decide(const char *fail_reason,
					     const struct slurm_node_show *node)
{
	bool failing = fail_reason && *fail_reason;
	bool ours = node->reason && starts_with(node->reason, SLURM_HEALTH_MARK);

	/* NHC's rule: another's reason is theirs to lift, and stays. */
	if (node->reason && !ours)
		return SLURM_HEALTH_NOT_OURS;
	if (!failing)
		return ours && node->drain ? SLURM_HEALTH_RESUME : SLURM_HEALTH_OK;
	return ours && node->drain && streq(node->reason, fail_reason) ? SLURM_HEALTH_STAY_DRAINED
								       : SLURM_HEALTH_DRAIN;
}

/* Run scontrol with args; its stdout into out.  The errors of health.h. */
static int scontrol(const char *const *args, unsigned timeout_ms, struct strbuf *out,
		    struct strbuf *err)
{
	struct run_job job;
	int ret = 0;

	run_job_init(&job);
	strvec_push(&job.argv, "scontrol");
	for (size_t i = 0; args[i]; i++)
		strvec_push(&job.argv, args[i]);
	ret = run_jobs(&job, 1, 1, timeout_ms, SCONTROL_MAX_OUTPUT);
	if (ret < 0) {
		strbuf_addf(err, "scontrol: %s", strerror(-ret));
	} else if (job.spawn_error) {
		ret = job.spawn_error;
		strbuf_addf(err, "scontrol: %s%s", strerror(-ret),
			    ret == -ENOENT ? " (Debian's slurm-client has it)" : "");
	} else if (job.timed_out) {
		ret = -ETIMEDOUT;
		strbuf_addf(err, "scontrol %s: no answer in %u s", args[0], timeout_ms / 1000);
	} else if (job.status != 0) {
		const char *text = job.err.len ? job.err.buf : job.out.buf;
		size_t n = strcspn(text, "\n");
		ret = -EHOSTUNREACH;
		strbuf_addf(err, "scontrol %s: ", args[0]);
		if (n)
			strbuf_add_printable(err, text, n, 0);
		else
			strbuf_addf(err, "exit status %d", job.status);
	} else if (out) {
		strbuf_add(out, job.out.buf, job.out.len);
	}
	run_job_release(&job);
	return ret;
}

int slurm_node_show(const char *node, unsigned timeout_ms, struct slurm_node_show *out,
		    struct strbuf *err)
{
	const char *args[] = { "show", "node", node, "-o", NULL };
	struct strbuf text = STRBUF_INIT;
	int ret = scontrol(args, timeout_ms, &text, err);

	memset(out, 0, sizeof(*out));
	if (ret == 0 && slurm_node_show_parse(text.buf, text.len, out) < 0) {
		ret = -EINVAL;
		strbuf_addf(err, "scontrol show node %s -o: not a node's line: ", node);
		strbuf_add_printable(err, text.buf, strcspn(text.buf, "\n"), 0);
	}
	strbuf_release(&text);
	return ret;
}

int slurm_node_update(const char *node, const char *reason, unsigned timeout_ms, struct strbuf *err)
{
	char *name = xasprintf("nodename=%s", node);
	char *why = reason ? xasprintf("reason=%s", reason) : NULL;
	const char *args[] = { "update", name, reason ? "state=drain" : "state=resume", why, NULL };
	int ret = scontrol(args, timeout_ms, NULL, err);

	free(name);
	free(why);
	return ret;
}
