/*
 * avahi.h - the host name avahi-daemon holds, read from its process title
 * (reader.h says how reads answer and fail).
 *
 * avahi-daemon shows its state in its process title (setproctitle):
 * /proc/PID/cmdline reads "avahi-daemon: running [node1-2.local]" - the
 * title as argv[0], then NULs or whatever bytes the argument area held
 * (only argv[0] is read).  After a name
 * conflict avahi renames the host HOSTNAME-2.local, -3, ...; the title is
 * the one place that says which name it holds without asking it over
 * D-Bus or the network.
 */
#ifndef SPARKCTL_PROBE_AVAHI_H
#define SPARKCTL_PROBE_AVAHI_H

#include "sparkctl.h"
#include "probe/reader.h"

#define AVAHI_TITLE_PREFIX  "avahi-daemon: "
/* The most proc/ entries looked at, and the most of one cmdline read (a title is short). */
#define AVAHI_PROC_SCAN_MAX 65536
#define AVAHI_CMDLINE_MAX   4096

/*
 * A process's cmdline (len bytes, arguments separated by NULs): 1 and the
 * name into out (reset first) for avahi-daemon's "running [NAME]" or
 * "registering [NAME]" (the name it holds, or is probing for); 0 for
 * another state of avahi-daemon ("starting up", "chroot helper", a title
 * not of that form); -ENOENT when it is not avahi-daemon's title.
 */
int avahi_title_parse(const char *cmdline, size_t len, struct strbuf *out);

/*
 * The name avahi-daemon holds on the node below the root: the titles of
 * proc/[0-9]+/cmdline, of the processes in this process's network
 * namespace where that can be told (proc/self/ns/net against
 * proc/PID/ns/net; a daemon whose namespace cannot be read counts), the
 * lowest pid with a name.  Only the cmdline of that process is read
 * through rd (a capture keeps it alone); the scan reads without
 * recording.  1 and out, 0 when no avahi-daemon holds a name.
 */
int avahi_host_name_read(const struct host_reader *rd, struct strbuf *out);

/*
 * For a capture: whether rel (a path below the root) is a process's
 * cmdline, which the probe reads of avahi-daemon only.  A capture keeps
 * its title alone (argv[0] and its NUL): after the title, the argument
 * area holds whatever bytes setproctitle left there.
 */
bool avahi_cmdline_path(const char *rel);

#endif
