/*
 * hostname.h - the name of the node the root describes: a capture's own,
 * not this machine's (reader.h says how reads answer and fail).
 */
#ifndef SPARKCTL_PROBE_HOSTNAME_H
#define SPARKCTL_PROBE_HOSTNAME_H

#include "sparkctl.h"
#include "probe/reader.h"

#define HOSTNAME_PATH "proc/sys/kernel/hostname"

/* The kernel's host name (proc/sys/kernel/hostname) into out: 1, or 0 when absent. */
int hostname_read(const struct host_reader *rd, struct strbuf *out);

#endif
