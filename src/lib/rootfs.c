#include "sparkctl.h"

#include <dirent.h>
#include <linux/openat2.h>
#include <sched.h>
#include <sys/syscall.h>

#include "lib/rootfs.h"
#include "lib/xalloc.h"

const char *rootfs_root_path(const char *option)
{
	const char *env = option ? NULL : secure_getenv("SPARKCTL_ROOT");

	if (option)
		return *option ? option : "/";
	return env && *env ? env : "/";
}

bool rootfs_absent(int err)
{
	switch (-err) {
	case ENOENT:
	case ENOTDIR:
	case ENODEV:
	case ENXIO:
	case EINVAL:
	case EOPNOTSUPP:
	case ENODATA:
	case EAGAIN:
		return true;
	default:
		return false;
	}
}

int rootfs_open(struct rootfs *root, const char *path)
{
	struct stat st, host;
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);

	root->dirfd = -1;
	root->path = NULL;
	root->recorder = NULL;
	root->is_host_root = false;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || stat("/", &host) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	root->dirfd = fd;
	root->path = xstrdup(path);
	root->is_host_root = st.st_dev == host.st_dev && st.st_ino == host.st_ino;
	return 0;
}

void rootfs_close(struct rootfs *root)
{
	if (root->dirfd >= 0)
		close(root->dirfd);
	root->dirfd = -1;
	free(root->path);
	root->path = NULL;
}

static const char *strip_slashes(const char *rel)
{
	while (*rel == '/')
		rel++;
	return *rel ? rel : ".";
}

/*
 * openat2() with RESOLVE_IN_ROOT keeps every path inside the root;
 * -ENOSYS where the kernel lacks it (before 5.6, or a seccomp filter
 * answers ENOSYS).
 */
static int openat2_in_root(const struct rootfs *root, const char *rel, int flags)
{
	static bool have_openat2 = true;
	struct open_how how = {
		.flags = (uint64_t)(unsigned int)(flags | O_CLOEXEC),
		.resolve = (uint64_t)(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS),
	};
	/*
	 * EAGAIN: a rename or mount anywhere on the system raced the lookup,
	 * which on a busy machine can happen again and again.  The live root
	 * gives up after a few tries (the caller may take openat(), exact
	 * there); a tree keeps trying, yielding, since openat() could follow
	 * an absolute link out of it.
	 */
	int max_tries = root->is_host_root ? 32 : 4096;

	if (!have_openat2)
		return -ENOSYS;
	rel = strip_slashes(rel);
	for (int tries = 0; tries < max_tries; tries++) {
		long fd = syscall(SYS_openat2, root->dirfd, rel, &how, sizeof(how));
		if (fd >= 0)
			return (int)fd;
		if (errno == ENOSYS)
			have_openat2 = false;
		if (errno != EAGAIN)
			return -errno;
		if (tries >= 8)
			sched_yield();
	}
	return -EAGAIN;
}

/*
 * Where openat2() is missing, reads fall back to openat(), which is exact
 * for the live root and for trees whose symlinks are relative, as sysfs's
 * are.
 */
static int open_in_root(const struct rootfs *root, const char *rel, int flags)
{
	int fd = openat2_in_root(root, rel, flags);

	if (fd == -ENOSYS || (fd == -EAGAIN && root->is_host_root)) {
		fd = openat(root->dirfd, strip_slashes(rel), flags | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	return fd;
}

/*
 * The directory rel for writing in it.  Without openat2(), a root other
 * than the live one is walked one name at a time, refusing symlinks and
 * "..", so that a write can fail there but never leave the root.
 */
static int open_dir_for_write(const struct rootfs *root, const char *rel)
{
	const int flags = O_RDONLY | O_DIRECTORY;
	int fd = openat2_in_root(root, rel, flags);
	char *copy, *save = NULL;

	if (fd != -ENOSYS && !(fd == -EAGAIN && root->is_host_root))
		return fd;
	if (root->is_host_root) {
		fd = openat(root->dirfd, strip_slashes(rel), flags | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	copy = xstrdup(strip_slashes(rel));
	fd = openat(root->dirfd, ".", flags | O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	for (char *c = strtok_r(copy, "/", &save); c && fd >= 0; c = strtok_r(NULL, "/", &save)) {
		int next;
		if (streq(c, "."))
			continue;
		next = streq(c, "..") ? -EXDEV : openat(fd, c, flags | O_NOFOLLOW | O_CLOEXEC);
		if (next == -1)
			next = errno == ENOTDIR || errno == ELOOP ? -ELOOP : -errno;
		close(fd);
		fd = next;
	}
	free(copy);
	return fd;
}

/*
 * Create the missing directories of rel, one at a time: each is made in
 * its parent as found inside the root, then looked up again from the
 * root, so that a symlink that appears on the way is resolved inside it
 * too.  A name that exists but is not a directory (a dangling symlink)
 * fails the lookup that follows.
 */
static int create_dirs(const struct rootfs *root, const char *rel, mode_t mode)
{
	struct strbuf prefix = STRBUF_INIT;
	char *copy = xstrdup(strip_slashes(rel)), *save = NULL;
	int parent = open_dir_for_write(root, ".");

	for (char *c = strtok_r(copy, "/", &save); c && parent >= 0;
	     c = strtok_r(NULL, "/", &save)) {
		int fd;
		strbuf_addf(&prefix, "%s%s", prefix.len ? "/" : "", c);
		fd = open_dir_for_write(root, prefix.buf);
		if (fd == -ENOENT) {
			bool made = mkdirat(parent, c, mode) == 0;
			if (!made && errno != EEXIST) {
				fd = -errno;
			} else {
				fd = open_dir_for_write(root, prefix.buf);
				/* The mode asked for, whatever the umask. */
				if (made && fd >= 0 && fchmod(fd, mode) < 0) {
					close(fd);
					fd = -errno;
				}
			}
		}
		close(parent);
		parent = fd;
	}
	free(copy);
	strbuf_release(&prefix);
	return parent;
}

static void record(const struct rootfs *root, enum rootfs_record_kind kind, const char *rel,
		   const char *data, size_t len)
{
	struct rootfs_recorder *rec = root->recorder;

	if (!rec)
		return;
	/* Duplicates are harmless: a capture writes the same thing twice. */
	rel = strip_slashes(rel);
	struct rootfs_record *r = ARRAY_PUSH(rec->records, rec->nr);
	r->kind = kind;
	r->path = xstrdup(rel);
	r->data = data ? xstrndup(data, len) : NULL;
	r->len = data ? len : 0;
}

/*
 * A regular file's bytes into out: all of it, -EFBIG past max, and
 * recorded (whole); or its first max bytes at most, not recorded (head).
 */
static int read_regular(const struct rootfs *root, const char *rel, size_t max, bool whole,
			struct strbuf *out)
{
	/* One byte past max tells a whole file that is too big. */
	size_t limit = whole ? max + 1 : max;
	struct stat st;
	int fd = open_in_root(root, rel, O_RDONLY | O_NOCTTY | O_NONBLOCK);
	int r = 0;

	strbuf_reset(out);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = S_ISDIR(st.st_mode) ? -EISDIR : -ESPIPE;
		goto out;
	}
	while (out->len < limit) {
		strbuf_grow(out, 4096);
		size_t room = out->alloc - out->len - 1;
		if (out->len + room > limit)
			room = limit - out->len;
		ssize_t n = read(fd, out->buf + out->len, room);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			goto out;
		}
		if (n == 0)
			break;
		out->len += (size_t)n;
		out->buf[out->len] = '\0';
	}
	if (whole && out->len > max) {
		r = -EFBIG;
		goto out;
	}
	if (whole)
		record(root, ROOTFS_RECORD_FILE, rel, out->buf, out->len);
out:
	if (r < 0)
		strbuf_reset(out);
	close(fd);
	return r;
}

int rootfs_read_file(const struct rootfs *root, const char *rel, size_t max, struct strbuf *out)
{
	return read_regular(root, rel, max, true, out);
}

int rootfs_read_head(const struct rootfs *root, const char *rel, size_t max, struct strbuf *out)
{
	return read_regular(root, rel, max, false, out);
}

int rootfs_read_value(const struct rootfs *root, const char *rel, struct strbuf *out)
{
	int r = rootfs_read_file(root, rel, ROOTFS_VALUE_MAX, out);

	if (r < 0)
		return r;
	strbuf_rtrim(out);
	return 0;
}

int rootfs_read_valuef(const struct rootfs *root, struct strbuf *out, const char *fmt, ...)
{
	struct strbuf path = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&path, fmt, ap);
	va_end(ap);
	int r = rootfs_read_value(root, path.buf, out);
	strbuf_release(&path);
	return r;
}

/* Split rel into an open descriptor of its parent directory and its last component. */
static int open_parent(const struct rootfs *root, const char *rel, const char **ret_base)
{
	struct strbuf dir = STRBUF_INIT;
	const char *slash;

	rel = strip_slashes(rel);
	slash = strrchr(rel, '/');
	if (slash) {
		strbuf_add(&dir, rel, (size_t)(slash - rel));
		*ret_base = slash + 1;
	} else {
		strbuf_addch(&dir, '.');
		*ret_base = rel;
	}
	int fd = open_in_root(root, dir.buf, O_PATH | O_DIRECTORY);
	strbuf_release(&dir);
	return fd;
}

static int readlink_at(int dirfd, const char *name, struct strbuf *out)
{
	char buf[PATH_MAX];
	ssize_t n = readlinkat(dirfd, name, buf, sizeof(buf));

	if (n < 0)
		return -errno;
	if ((size_t)n >= sizeof(buf))
		return -ENAMETOOLONG;
	strbuf_reset(out);
	strbuf_add(out, buf, (size_t)n);
	return 0;
}

int rootfs_readlink(const struct rootfs *root, const char *rel, struct strbuf *out)
{
	const char *base;
	int fd = open_parent(root, rel, &base);

	if (fd < 0)
		return fd;
	int r = readlink_at(fd, base, out);
	close(fd);
	if (r == 0)
		record(root, ROOTFS_RECORD_LINK, rel, out->buf, out->len);
	return r;
}

/* For the recorder: note what a listed entry is, so a capture can recreate it. */
static void record_entry(const struct rootfs *root, int dirfd, const char *rel,
			 const struct dirent *de)
{
	struct strbuf path = STRBUF_INIT, target = STRBUF_INIT;
	unsigned char type = de->d_type;

	if (type == DT_UNKNOWN) {
		struct stat st;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return;
		type = S_ISLNK(st.st_mode) ? DT_LNK : S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
	}
	strbuf_addf(&path, "%s/%s", strip_slashes(rel), de->d_name);
	if (type == DT_LNK && readlink_at(dirfd, de->d_name, &target) == 0)
		record(root, ROOTFS_RECORD_LINK, path.buf, target.buf, target.len);
	else if (type == DT_DIR)
		record(root, ROOTFS_RECORD_DIR, path.buf, NULL, 0);
	strbuf_release(&path);
	strbuf_release(&target);
}

/* A directory entry that is itself a directory (not a symlink to one). */
static bool entry_is_dir(int dirfd, const struct dirent *de)
{
	struct stat st;

	if (de->d_type != DT_UNKNOWN)
		return de->d_type == DT_DIR;
	return fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/* The names (of directories only, if dirs_only) in the directory fd (which this takes over), listed
 * as rel. */
static int list_fd(const struct rootfs *root, int fd, const char *rel, bool dirs_only,
		   struct strvec *names)
{
	struct dirent *de;
	DIR *d;
	int r = 0;

	strvec_clear(names);
	if (fd < 0)
		return fd;
	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	record(root, ROOTFS_RECORD_DIR, rel, NULL, 0);
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			r = errno ? -errno : 0;
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (dirs_only && !entry_is_dir(dirfd(d), de))
			continue;
		if (names->nr >= ROOTFS_LIST_MAX) {
			r = -E2BIG;
			break;
		}
		strvec_push(names, de->d_name);
		if (root->recorder)
			record_entry(root, dirfd(d), rel, de);
	}
	closedir(d);
	if (r < 0) {
		strvec_clear(names);
		return r;
	}
	strvec_sort(names);
	return (int)names->nr;
}

int rootfs_list(const struct rootfs *root, const char *rel, struct strvec *names)
{
	return list_fd(root, open_in_root(root, rel, O_RDONLY | O_DIRECTORY), rel, false, names);
}

int rootfs_list_dirs(const struct rootfs *root, const char *rel, struct strvec *names)
{
	return list_fd(root, open_in_root(root, rel, O_RDONLY | O_DIRECTORY), rel, true, names);
}

bool rootfs_exists(const struct rootfs *root, const char *rel)
{
	struct stat st;
	int fd = open_in_root(root, rel, O_PATH);

	if (fd < 0)
		return false;
	if (root->recorder && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
		record(root, ROOTFS_RECORD_DIR, rel, NULL, 0);
	close(fd);
	return true;
}

void rootfs_recorder_release(struct rootfs_recorder *rec)
{
	for (size_t i = 0; i < rec->nr; i++) {
		free(rec->records[i].path);
		free(rec->records[i].data);
	}
	free(rec->records);
	rec->records = NULL;
	rec->nr = 0;
}

static int dir_init(const struct rootfs *root, const char *rel, int fd, struct rootfs_dir *dir)
{
	dir->root = root;
	dir->dirfd = fd;
	dir->rel = NULL;
	if (fd < 0)
		return fd;
	dir->rel = xstrdup(strip_slashes(rel));
	return 0;
}

int rootfs_dir_open(const struct rootfs *root, const char *rel, struct rootfs_dir *dir)
{
	return dir_init(root, rel, open_in_root(root, rel, O_RDONLY | O_DIRECTORY), dir);
}

int rootfs_dir_open_for_write(const struct rootfs *root, const char *rel, mode_t create_mode,
			      struct rootfs_dir *dir)
{
	int fd = open_dir_for_write(root, rel);

	if (fd == -ENOENT && create_mode)
		fd = create_dirs(root, rel, create_mode);
	return dir_init(root, rel, fd, dir);
}

void rootfs_dir_close(struct rootfs_dir *dir)
{
	if (dir->dirfd >= 0)
		close(dir->dirfd);
	dir->dirfd = -1;
	free(dir->rel);
	dir->rel = NULL;
}

int rootfs_dir_open_value(const struct rootfs_dir *dir, const char *name)
{
	struct stat st;
	int fd, r;

	if (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	fd = openat(dir->dirfd, name, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -ESPIPE;
	}
	return fd;
}

/* The whole content of fd from offset 0, at most max bytes. */
static int pread_all(int fd, size_t max, struct strbuf *out)
{
	strbuf_reset(out);
	for (;;) {
		strbuf_grow(out, 4096);
		size_t room = out->alloc - out->len - 1;
		if (out->len + room > max + 1)
			room = max + 1 - out->len;
		ssize_t n = pread(fd, out->buf + out->len, room, (off_t)out->len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int r = -errno;
			strbuf_reset(out);
			return r;
		}
		out->len += (size_t)n;
		out->buf[out->len] = '\0';
		if (out->len > max) {
			strbuf_reset(out);
			return -EFBIG;
		}
		/* A regular file (sysfs attributes included) reads short only at its end. */
		if ((size_t)n < room)
			break;
	}
	return 0;
}

int rootfs_reread_value(int fd, struct strbuf *out)
{
	int r = pread_all(fd, ROOTFS_VALUE_MAX, out);

	if (r == 0)
		strbuf_rtrim(out);
	return r;
}

int rootfs_dir_read_file(const struct rootfs_dir *dir, const char *name, size_t max,
			 struct strbuf *out)
{
	int fd = rootfs_dir_open_value(dir, name), r;

	strbuf_reset(out);
	if (fd < 0)
		return fd;
	r = pread_all(fd, max, out);
	close(fd);
	if (r < 0)
		return r;
	if (dir->root->recorder) {
		struct strbuf path = STRBUF_INIT;
		strbuf_addf(&path, "%s/%s", dir->rel, name);
		record(dir->root, ROOTFS_RECORD_FILE, path.buf, out->buf, out->len);
		strbuf_release(&path);
	}
	return 0;
}

int rootfs_dir_read_value(const struct rootfs_dir *dir, const char *name, struct strbuf *out)
{
	int r = rootfs_dir_read_file(dir, name, ROOTFS_VALUE_MAX, out);

	if (r == 0)
		strbuf_rtrim(out);
	return r;
}

int rootfs_dir_list(const struct rootfs_dir *dir, struct strvec *names)
{
	/* A descriptor of its own: a listing moves the offset of the one it reads. */
	int fd = openat(dir->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	return list_fd(dir->root, fd < 0 ? -errno : fd, dir->rel, false, names);
}

int rootfs_dir_readlink(const struct rootfs_dir *dir, const char *name, struct strbuf *out)
{
	int r;

	if (strchr(name, '/'))
		return -EINVAL;
	r = readlink_at(dir->dirfd, name, out);
	if (r == 0 && dir->root->recorder) {
		struct strbuf path = STRBUF_INIT;
		strbuf_addf(&path, "%s/%s", dir->rel, name);
		record(dir->root, ROOTFS_RECORD_LINK, path.buf, out->buf, out->len);
		strbuf_release(&path);
	}
	return r;
}
