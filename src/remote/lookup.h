/*
 * lookup.h - which sparkctl a node runs.
 *
 * A node may hold sparkctl at this program's path, on its PATH, or where
 * 'sparkctl deploy' puts it (~/.local/bin/sparkctl).  Every command that
 * runs sparkctl on another node starts it through the words built here,
 * so the order is decided once; --remote-sparkctl PATH replaces it.
 */
#ifndef SPARKCTL_LOOKUP_H
#define SPARKCTL_LOOKUP_H

#include "sparkctl.h"
#include "lib/strvec.h"

/* Where 'sparkctl deploy' puts the binary, below the node's home. */
#define REMOTE_SPARKCTL_HOME_PATH ".local/bin/sparkctl"

/* The status and the line of stderr with which the lookup says it found none. */
#define REMOTE_SPARKCTL_MISSING_STATUS 127
#define REMOTE_SPARKCTL_MISSING_LINE   "sparkctl-lookup: no sparkctl on this node"

/*
 * Append to out the words that start sparkctl on a node; the command's own
 * arguments follow them.  override (--remote-sparkctl) non-NULL: that path
 * alone.  Otherwise a POSIX shell snippet ('sh' '-c' SNIPPET local_path)
 * that runs the first of local_path, 'sparkctl' on the node's PATH and
 * $HOME/.local/bin/sparkctl that is an executable file, and exits
 * REMOTE_SPARKCTL_MISSING_STATUS after REMOTE_SPARKCTL_MISSING_LINE on
 * stderr when there is none.  Every word is an argument, never shell text:
 * ssh_command() quotes each once.
 */
void remote_sparkctl_words(struct strvec *out, const char *local_path, const char *override);

/* True when a remote command ended as the lookup ends where it found no sparkctl. */
bool remote_sparkctl_missing(int status, const char *err);

/* The message for that node, allocated: "sparkctl is not installed on NODE (sparkctl deploy -H
 * NODE)". */
char *remote_sparkctl_missing_message(const char *host);

#endif
