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
 * directory with the given mode, fsync it, rename it over name, fsync the
 * directory.  When backup is set and name existed, its previous content is
 * kept as dirfd/backup (replacing an older backup).  On failure nothing
 * is left behind and name is untouched; returns a negative errno with a
 * message in err.
 */
int atomic_replace(int dirfd, const char *name, const char *data, size_t len, mode_t mode,
		   const char *backup, struct strbuf *err);

#endif
