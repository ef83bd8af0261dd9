#include "sparkctl.h"

#include "lib/atomic_file.h"
#include "lib/xalloc.h"

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

/* Keep the current name as backup: a hard link (atomic), else a copy. */
static int keep_backup(int dirfd, const char *name, const char *backup, mode_t mode,
		       struct strbuf *err)
{
	if (unlinkat(dirfd, backup, 0) < 0 && errno != ENOENT) {
		int r = -errno;
		strbuf_addf(err, "cannot replace the backup '%s': %s", backup, strerror(-r));
		return r;
	}
	if (linkat(dirfd, name, dirfd, backup, 0) == 0)
		return 0;
	if (errno == ENOENT)
		return 0; /* nothing to back up */
	/* No hard links here (e.g. vfat): copy. */
	int in = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct strbuf content = STRBUF_INIT;
	char buf[65536];
	ssize_t n;
	int r = 0;

	if (in < 0)
		return errno == ENOENT ? 0 : -errno;
	for (;;) {
		n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		strbuf_add(&content, buf, (size_t)n);
	}
	if (n < 0) {
		r = -errno;
		strbuf_addf(err, "cannot read '%s' to back it up: %s", name, strerror(-r));
	}
	close(in);
	if (r == 0)
		r = atomic_replace(dirfd, backup, content.buf, content.len, mode, NULL, err);
	strbuf_release(&content);
	return r;
}

int atomic_replace(int dirfd, const char *name, const char *data, size_t len, mode_t mode,
		   const char *backup, struct strbuf *err)
{
	char *tmp = xasprintf(".%s.tmp-%ld", name, (long)getpid());
	int fd, r;

	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0) {
		r = -errno;
		strbuf_addf(err, "cannot create a file next to '%s': %s", name, strerror(-r));
		free(tmp);
		return r;
	}
	/* The mode must not depend on the umask. */
	if ((r = fchmod(fd, mode) < 0 ? -errno : 0) < 0 || (r = write_all(fd, data, len)) < 0 ||
	    (r = fsync(fd) < 0 ? -errno : 0) < 0) {
		strbuf_addf(err, "cannot write '%s': %s", tmp, strerror(-r));
		close(fd);
		goto fail;
	}
	if (close(fd) < 0) {
		r = -errno;
		strbuf_addf(err, "cannot write '%s': %s", tmp, strerror(-r));
		goto fail;
	}
	if (backup && (r = keep_backup(dirfd, name, backup, mode, err)) < 0)
		goto fail;
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		r = -errno;
		strbuf_addf(err, "cannot replace '%s': %s", name, strerror(-r));
		goto fail;
	}
	fsync(dirfd); /* the rename itself; a failure here loses nothing already written */
	free(tmp);
	return 0;
fail:
	unlinkat(dirfd, tmp, 0);
	free(tmp);
	return r;
}
