/*
 * rootfs.h - reading the host's files below a root directory.
 *
 * Every file sparkctl reads from sysfs, procfs or /etc goes through these
 * functions, relative to a root: "/" for the live host, or a directory
 * holding a captured tree (sparkctl capture, tests/fixtures/).  Paths are
 * resolved inside the root (openat2 RESOLVE_IN_ROOT), so an absolute
 * symlink or ".." in a captured tree cannot reach the real host.
 *
 * Functions return 0 (or a count) on success and a negative errno on
 * failure; they never print.  Reads are bounded: a file larger than the
 * limit fails with -EFBIG rather than filling memory, and anything that
 * is not a regular file or directory (a FIFO, a socket, a device) fails
 * with -ESPIPE rather than blocking.
 *
 * When a recorder is attached, every successful read, readlink and
 * listing is recorded, so that 'sparkctl capture' can write exactly the
 * files that sparkctl reads.
 */
#ifndef SPARKCTL_ROOTFS_H
#define SPARKCTL_ROOTFS_H

#include "sparkctl.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

/* The most a single sysfs/procfs value may hold (sysfs attributes are <= one page). */
#define ROOTFS_VALUE_MAX ((size_t)64 * 1024)
/* The most a whole file read with rootfs_read_file() by the probe may hold. */
#define ROOTFS_FILE_MAX	 ((size_t)4 * 1024 * 1024)
/* The most entries one directory listing may return. */
#define ROOTFS_LIST_MAX	 100000

enum rootfs_record_kind {
	ROOTFS_RECORD_FILE, /* data: the file's content */
	ROOTFS_RECORD_LINK, /* data: the symlink's target */
	ROOTFS_RECORD_DIR,  /* a directory that was listed; data unused */
};

struct rootfs_record {
	enum rootfs_record_kind kind;
	char *path; /* relative to the root, without a leading '/' */
	char *data;
	size_t len;
};

struct rootfs_recorder {
	struct rootfs_record *records;
	size_t nr;
};

struct rootfs {
	int dirfd;			  /* O_PATH descriptor of the root directory */
	char *path;			  /* the root as given, for messages */
	bool is_host_root;		  /* the root is the host's "/" (a live probe) */
	struct rootfs_recorder *recorder; /* optional, see above */
};

/*
 * The root a command reads: the --root it was given (option, NULL when
 * none), else $SPARKCTL_ROOT, else "/".  An empty value is the default
 * "/".  The environment is read with secure_getenv(): a set-uid caller's
 * environment never redirects it.
 */
const char *rootfs_root_path(const char *option);

/*
 * True when err, from reading a file below a root, means "not there to
 * read" rather than "something is wrong":
 *  - ENOENT, and ENOTDIR for a path through something that is no longer
 *    a directory (a device that went away while it was being read);
 *  - ENODEV, ENXIO: the file's device is gone;
 *  - EINVAL, EOPNOTSUPP, ENODATA: what sysfs answers for a value that does
 *    not apply to this device now (the speed of a link that is down, an
 *    attribute the driver lacks, a sensor without a reading);
 *  - EAGAIN: a value that is not ready yet, or a lookup that kept racing
 *    renames; the next read may have it.
 * EACCES, EPERM and EIO are not absence.  Every file sparkctl reads is
 * world-readable on a sound host (the exporter's service runs
 * unprivileged on that), so a denial means that a sandbox, an LSM or a
 * seccomp filter hides part of the host, and EIO is a device that failed
 * to answer: the probe lists them as problems (docs/inventory.md) and an
 * exporter collector that meets one reports failure, rather than leaving
 * a hole that looks like a host without the thing.
 */
bool rootfs_absent(int err);

/* Open path as a root.  -ENOTDIR, -ENOENT, ... when it cannot be used. */
int rootfs_open(struct rootfs *root, const char *path);
void rootfs_close(struct rootfs *root);

/* Read the whole file rel (at most max bytes) into out (replacing its content). */
int rootfs_read_file(const struct rootfs *root, const char *rel, size_t max, struct strbuf *out);
/*
 * Read the first max bytes of rel at most (all of it when shorter) into
 * out: for the headers of a large binary (a library's ELF notes).  Not
 * recorded: a capture keeps what is learned from it in its own facts, not
 * a cut-off copy of the file.
 */
int rootfs_read_head(const struct rootfs *root, const char *rel, size_t max, struct strbuf *out);
/*
 * Read a one-value file such as a sysfs attribute: at most
 * ROOTFS_VALUE_MAX bytes, trailing whitespace removed.
 */
int rootfs_read_value(const struct rootfs *root, const char *rel, struct strbuf *out);
/* Format the path from fmt and read it with rootfs_read_value(). */
int rootfs_read_valuef(const struct rootfs *root, struct strbuf *out, const char *fmt, ...)
	ATTR_PRINTF(3, 4);
/* The target of the symlink rel, as stored (not resolved). */
int rootfs_readlink(const struct rootfs *root, const char *rel, struct strbuf *out);
/*
 * The names in directory rel, without "." and "..", sorted with strcmp.
 * Returns the number of names.
 */
int rootfs_list(const struct rootfs *root, const char *rel, struct strvec *names);
/* The same, of the entries that are directories only (symlinks are not). */
int rootfs_list_dirs(const struct rootfs *root, const char *rel, struct strvec *names);
/* True when rel exists (following symlinks inside the root). */
bool rootfs_exists(const struct rootfs *root, const char *rel);

void rootfs_recorder_release(struct rootfs_recorder *rec);

/*
 * A directory of many small values (sysfs counters), read by name: the
 * directory is looked up once, then each file is opened by its plain name
 * relative to it, which cannot leave the directory (a name with '/' is
 * refused, a symlink is not followed).  For hundreds of files per second
 * this costs a fraction of rootfs_read_value() with a long path each.
 */
struct rootfs_dir {
	const struct rootfs *root;
	int dirfd; /* the directory, O_RDONLY */
	char *rel; /* its path relative to the root, for the recorder */
};

int rootfs_dir_open(const struct rootfs *root, const char *rel, struct rootfs_dir *dir);
void rootfs_dir_close(struct rootfs_dir *dir);
/* rootfs_read_value() of the file name in the directory. */
int rootfs_dir_read_value(const struct rootfs_dir *dir, const char *name, struct strbuf *out);
/*
 * The whole file name in the directory (at most max bytes), as it is:
 * -ELOOP for a symlink, -EISDIR for a directory, -ESPIPE for anything else
 * that is not a regular file.
 */
int rootfs_dir_read_file(const struct rootfs_dir *dir, const char *name, size_t max,
			 struct strbuf *out);
/* rootfs_list() of the directory, through its descriptor. */
int rootfs_dir_list(const struct rootfs_dir *dir, struct strvec *names);
/* The target of the symlink name in the directory, as stored (rootfs_readlink()). */
int rootfs_dir_readlink(const struct rootfs_dir *dir, const char *name, struct strbuf *out);
/*
 * Keep a value file open to read it again and again (counters a server
 * polls): rootfs_dir_open_value() opens name in the directory with the
 * checks of rootfs_dir_read_value() and returns the descriptor (the caller
 * closes it); rootfs_reread_value() reads it from its start, so each call
 * sees the value of that moment (sysfs regenerates an attribute read at
 * offset 0).  A file replaced by another one under its name is not
 * followed.  Rereads are not recorded.
 */
int rootfs_dir_open_value(const struct rootfs_dir *dir, const char *name);
int rootfs_reread_value(int fd, struct strbuf *out);

/*
 * Writing below a root (sparkctl netplan --write, and every command that
 * installs a file below --root): rootfs_dir_open_for_write() opens the
 * directory rel resolved inside the root exactly as reads are (openat2
 * RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS: an absolute symlink or ".." on
 * the way leads to the same path below the root, never out of it), as a
 * rootfs_dir whose descriptor (O_RDONLY) the caller then writes through
 * with *at() calls and lib/atomic_file.h.  What the caller checks before
 * writing (a file's current content) is read with rootfs_dir_read_file()
 * through that same descriptor, so that the check and the write are about
 * one directory.  With create_mode, missing directories on the way are
 * created inside the root with exactly that mode (not the umask's);
 * without, a missing one fails with -ENOENT.  Where the kernel lacks
 * openat2(), a root other than the live "/" is walked one name at a time
 * and a symlink on the way fails with -ELOOP.  Close it with
 * rootfs_dir_close().
 */
int rootfs_dir_open_for_write(const struct rootfs *root, const char *rel, mode_t create_mode,
			      struct rootfs_dir *dir);

#endif
