/*
 * pause_symlinkat.c - an LD_PRELOAD library for tests: the program's first
 * symlinkat(), once done, waits until the test lets it go, so that the test
 * can act at a known point (a capture whose partial tree exists and is being
 * filled).  It writes the link's path and a newline to the FIFO
 * $PAUSE_NOTIFY, then reads one byte from the FIFO $PAUSE_RESUME.  Without
 * both variables it only calls the real symlinkat().
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int symlinkat_fn(const char *target, int dirfd, const char *linkpath);

static void notify_and_wait(const char *notify, const char *resume, const char *linkpath)
{
	int fd = open(notify, O_WRONLY | O_CLOEXEC);
	char c;

	if (fd >= 0) {
		if (write(fd, linkpath, strlen(linkpath)) < 0 || write(fd, "\n", 1) < 0)
			_exit(99);
		close(fd);
	}
	fd = open(resume, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		while (read(fd, &c, 1) < 0 && errno == EINTR)
			;
		close(fd);
	}
}

int symlinkat(const char *target, int dirfd, const char *linkpath)
{
	static bool paused;
	symlinkat_fn *real;
	const char *notify = getenv("PAUSE_NOTIFY"), *resume = getenv("PAUSE_RESUME");
	int r, saved;

	*(void **)&real = dlsym(RTLD_NEXT, "symlinkat");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	r = real(target, dirfd, linkpath);
	saved = errno;
	if (!paused && notify && resume) {
		paused = true;
		notify_and_wait(notify, resume, linkpath);
	}
	errno = saved;
	return r;
}
