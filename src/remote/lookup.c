/* lookup.c - the one place that decides which sparkctl a node runs. */
#include "sparkctl.h"

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "remote/lookup.h"

/*
 * $0 is this program's path; the command's arguments are "$@".  'command -v'
 * may name a function or a directory on odd setups: only an executable
 * file is run.  exec keeps the node's process tree as it was without the
 * lookup (the agents are signalled through ssh's session).
 */
static const char lookup_snippet[] = "p=\"$0\"; "
				     "if ! [ -f \"$p\" ] || ! [ -x \"$p\" ]; then "
				     "p=$(command -v sparkctl 2>/dev/null) || p=; "
				     "if [ -z \"$p\" ] || ! [ -f \"$p\" ] || ! [ -x \"$p\" ]; then "
				     "p=\"$HOME/" REMOTE_SPARKCTL_HOME_PATH "\"; "
				     "fi; "
				     "fi; "
				     "if ! [ -f \"$p\" ] || ! [ -x \"$p\" ]; then "
				     "echo '" REMOTE_SPARKCTL_MISSING_LINE "' >&2; exit 127; "
				     "fi; "
				     "exec \"$p\" \"$@\"";

void remote_sparkctl_words(struct strvec *out, const char *local_path, const char *override)
{
	if (override) {
		strvec_push(out, override);
		return;
	}
	strvec_pushl(out, "sh", "-c", lookup_snippet, local_path, NULL);
}

bool remote_sparkctl_missing(int status, const char *err)
{
	const char *p = err;
	size_t len = strlen(REMOTE_SPARKCTL_MISSING_LINE);

	if (status != REMOTE_SPARKCTL_MISSING_STATUS || !err)
		return false;
	/* A line of its own: the command's output cannot end the same way by chance. */
	while ((p = strstr(p, REMOTE_SPARKCTL_MISSING_LINE)) != NULL) {
		if ((p == err || p[-1] == '\n') &&
		    (p[len] == '\0' || p[len] == '\n' || p[len] == '\r'))
			return true;
		p += len;
	}
	return false;
}

char *remote_sparkctl_missing_message(const char *host)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "sparkctl is not installed on ");
	strbuf_add_printable(&sb, host, strlen(host), 0);
	strbuf_addstr(&sb, " (sparkctl deploy -H ");
	strbuf_add_printable(&sb, host, strlen(host), 0);
	strbuf_addch(&sb, ')');
	return strbuf_detach(&sb, NULL);
}
