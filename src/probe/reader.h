/*
 * reader.h - what the host readers of probe/ share.
 *
 * The readers - rdma_ports.h, netdevs.h, pci_functions.h, sensors.h,
 * meminfo.h, hostname.h, cpu_topology.h, procs.h, avahi.h - are the only
 * code that reads the host: the probe builds the inventory with them, the
 * exporter's collectors and top map what they return to metrics, bench binds its
 * ranks and bounds its buffers with them.  Each reads below a root
 * (lib/rootfs.h), returns plain data or calls back per item, and never
 * prints.
 *
 * A read answers 1 (read), 0 (absent: rootfs_absent()) or a negative
 * errno.  A failure that is not absence - a file that cannot be read, or
 * content not in the kernel's format (-EINVAL) - is also told to the
 * reader's fail(), with the file's path: the probe lists it as a problem,
 * an exporter collector reports failure.
 *
 * A server that reads the same files at every round (the exporter's
 * scrapes) gives the reader a cache: the directories of values it reads
 * stay open, and their files, which each round rereads with one pread()
 * from offset 0 (sysfs regenerates the value) instead of an open, a stat,
 * a read and a close.  A directory is opened again after a failed read
 * (the device went away), after READER_CACHE_REOPEN_NS (files a newer
 * setting added), and closed when a round no longer read it.
 */
#ifndef SPARKCTL_PROBE_READER_H
#define SPARKCTL_PROBE_READER_H

#include "sparkctl.h"
#include "lib/rootfs.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

#define READER_CACHE_REOPEN_NS (60ULL * 1000 * 1000 * 1000)

struct reader_cache;
struct cached_dir;

struct host_reader {
	const struct rootfs *root;
	struct reader_cache *cache; /* NULL: every file is opened afresh */
	/*
	 * A failure that is not absence, or NULL to ignore them: err < 0;
	 * content is the text when it is not in the kernel's format (err
	 * -EINVAL), else NULL.
	 */
	void (*fail)(void *data, const char *path, int err, const char *content);
	void *data;
};

struct reader_cache *reader_cache_new(void);
void reader_cache_free(struct reader_cache *cache);
/* The end of a round: close the directories that the round did not read. */
void reader_cache_sweep(struct reader_cache *cache);

/* Tell fail() that the content of path is not in the kernel's format; returns -EINVAL. */
int reader_bad_content(const struct host_reader *rd, const char *path, const char *content);
/* Tell fail() about err reading path unless it is absence; returns err, or 0 for absence. */
int reader_failed(const struct host_reader *rd, const char *path, int err);

/* The names in directory rel (sorted): their number, 0 when it is absent. */
int reader_list(const struct host_reader *rd, const char *rel, struct strvec *names);
/*
 * The one-value file rel (rootfs_read_value()): 1, 0 when absent.  Text
 * holding a NUL byte is not a value (-EINVAL).
 */
int reader_value(const struct host_reader *rd, const char *rel, struct strbuf *out);
/* The whole file rel, at most max bytes (rootfs_read_file()): 1, 0 when absent. */
int reader_file(const struct host_reader *rd, const char *rel, size_t max, struct strbuf *out);

/*
 * A directory of values read by name: the directory is looked up once
 * (or kept open in the reader's cache).  names: the files that will be
 * read (NULL-terminated), or NULL for every file it holds; a cached
 * directory reads no others, and keeps the names it was first opened
 * with, so one directory is always opened with the same names.
 */
struct reader_dir {
	const struct host_reader *rd;
	struct rootfs_dir dir; /* when not cached */
	struct cached_dir *cd; /* when cached */
	struct strvec listed;  /* reader_dir_list() when not cached */
	size_t next;	       /* where to look for the next name in cd */
};

/* 1 when open, 0 when the directory is absent.  Close it in any case. */
int reader_dir_open(const struct host_reader *rd, const char *rel, const char *const *names,
		    struct reader_dir *d);
/* The value of file name, as reader_value(). */
int reader_dir_value(struct reader_dir *d, const char *name, struct strbuf *out);
/* Tell fail() that the content of file name is not in the kernel's format; returns -EINVAL. */
int reader_dir_bad_content(const struct reader_dir *d, const char *name, const char *content);
/* The names of the files (sorted), valid until the directory is closed: their number. */
int reader_dir_list(struct reader_dir *d, const struct strvec **names);
void reader_dir_close(struct reader_dir *d);

#endif
