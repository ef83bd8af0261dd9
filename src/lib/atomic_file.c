#include "sparkctl.h"

#include "lib/atomic_file.h"
#include "lib/xalloc.h"

/* Temporary names tried before giving up: a dead process with our pid may have left some. */
#define TEMP_NAME_TRIES 100

static int write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * A new file next to name holding data, with exactly mode and synced: its
 * name, .NAME.KIND-PID-N, in *ret_name (allocated).
 */
static int write_temp(int dirfd, const char *name, const char *kind, const char *data, size_t len,
		      mode_t mode, char **ret_name, struct strbuf *err)
{
	char *tmp = NULL;
	int fd = -1, r;

	for (unsigned n = 0; n < TEMP_NAME_TRIES && fd < 0; n++) {
		free(tmp);
		tmp = xasprintf(".%s.%s-%ld-%u", name, kind, (long)getpid(), n);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		r = -errno;
		strbuf_addf(err, "cannot create a file next to '%s': %s", name, strerror(-r));
		free(tmp);
		return r;
	}
	/* The mode must not depend on the umask. */
	r = fchmod(fd, mode) < 0 ? -errno : 0;
	if (r == 0)
		r = write_all(fd, data, len);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r < 0) {
		strbuf_addf(err, "cannot write '%s': %s", tmp, strerror(-r));
		unlinkat(dirfd, tmp, 0);
		free(tmp);
		return r;
	}
	*ret_name = tmp;
	return 0;
}

/* A copy of name (a regular file) next to it, with its mode, for where links cannot be made. */
static int copy_old(int dirfd, const char *name, char **ret_name, struct strbuf *err)
{
	int in = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct strbuf content = STRBUF_INIT;
	char buf[65536];
	struct stat st = { 0 };
	ssize_t n = 0;
	int r = 0;

	if (in < 0) {
		if (errno == ENOENT)
			return 0;
		r = -errno;
	} else if (fstat(in, &st) < 0) {
		r = -errno;
	} else if (!S_ISREG(st.st_mode)) {
		r = S_ISDIR(st.st_mode) ? -EISDIR : -ESPIPE;
	}
	while (r == 0) {
		n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			r = -errno;
		if (n <= 0)
			break;
		strbuf_add(&content, buf, (size_t)n);
	}
	if (in >= 0)
		close(in);
	if (r < 0)
		strbuf_addf(err, "cannot read '%s' to back it up: %s", name, strerror(-r));
	else
		r = write_temp(dirfd, name, "old", content.buf, content.len, st.st_mode & 07777,
			       ret_name, err);
	strbuf_release(&content);
	return r;
}

/*
 * A second name for the file now at name, which becomes the backup once
 * the new file is in place: a hard link (the same file, made at once),
 * else a copy.  0 with *ret_name NULL when there is no file to keep.
 */
static int hold_old(int dirfd, const char *name, char **ret_name, struct strbuf *err)
{
	*ret_name = NULL;
	for (unsigned n = 0; n < TEMP_NAME_TRIES; n++) {
		char *tmp = xasprintf(".%s.old-%ld-%u", name, (long)getpid(), n);
		int e = linkat(dirfd, name, dirfd, tmp, 0) == 0 ? 0 : errno;
		if (e == 0) {
			*ret_name = tmp;
			return 0;
		}
		free(tmp);
		if (e == ENOENT)
			return 0;
		if (e != EEXIST)
			break;
	}
	/* No hard links here (e.g. vfat), or not a file that can be linked. */
	return copy_old(dirfd, name, ret_name, err);
}

int atomic_replace(int dirfd, const char *name, const char *data, size_t len, mode_t mode,
		   const char *backup, struct strbuf *err)
{
	char *tmp = NULL, *old = NULL;
	int r = write_temp(dirfd, name, "tmp", data, len, mode, &tmp, err);

	if (r < 0)
		return r;
	if (backup && (r = hold_old(dirfd, name, &old, err)) < 0)
		goto fail;
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		r = -errno;
		strbuf_addf(err, "cannot replace '%s': %s", name, strerror(-r));
		goto fail;
	}
	free(tmp);
	tmp = NULL;
	if (old && renameat(dirfd, old, dirfd, backup) < 0) {
		r = -errno;
		strbuf_addf(err, "cannot replace the backup '%s': %s", backup, strerror(-r));
		/* The previous file goes back in place: the failure changes nothing. */
		if (renameat(dirfd, old, dirfd, name) < 0) {
			strbuf_addf(err, "; the new '%s' is in place, the previous one is '%s'",
				    name, old);
			free(old);
			old = NULL;
		}
		goto fail;
	}
	free(old);
	fsync(dirfd); /* the renames themselves; a failure here loses nothing already written */
	return 0;
fail:
	if (tmp)
		unlinkat(dirfd, tmp, 0);
	if (old)
		unlinkat(dirfd, old, 0);
	free(tmp);
	free(old);
	fsync(dirfd);
	return r;
}
