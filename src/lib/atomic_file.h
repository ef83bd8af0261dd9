/*
 * atomic_file.h - replacing a file so that readers see the old or the new
 * content, never a part.
 */
#ifndef SPARKCTL_ATOMIC_FILE_H
#define SPARKCTL_ATOMIC_FILE_H

#include "sparkctl.h"
#include "lib/strbuf.h"

/*
 * Replace dirfd/name with data: write a temporary file in the same
 * directory with the given mode (whatever the umask), fsync it, rename it
 * over name, fsync the directory.  When backup is set and name existed,
 * the file it held becomes dirfd/backup (replacing an older backup) once
 * the new file is in place: it is first given a temporary second name (a
 * hard link, or a copy where links cannot be made), the new file is
 * renamed over name, then that second name over backup; when this last
 * step fails, the previous file is renamed back over name.  So on any
 * failure name and backup are left as they were and no temporary file
 * remains; returns a negative errno with a message in err.  dirfd must be
 * opened O_RDONLY (not O_PATH), below a root through
 * rootfs_dir_open_for_write().
 */
int atomic_replace(int dirfd, const char *name, const char *data, size_t len, mode_t mode,
		   const char *backup, struct strbuf *err);

#endif
