#include "sparkctl.h"

#include "lib/clock.h"
#include "lib/xalloc.h"
#include "probe/reader.h"

struct cached_dir {
	char *rel;
	struct strvec names;
	int *fds; /* per name: the open file, or -errno of opening it */
	uint64_t opened_ns;
	bool seen;  /* read by the current round */
	bool stale; /* a read failed: open again at the next round */
};

struct reader_cache {
	struct cached_dir *dirs;
	size_t nr, alloc;
};

int reader_bad_content(const struct host_reader *rd, const char *path, const char *content)
{
	if (rd->fail)
		rd->fail(rd->data, path, -EINVAL, content);
	return -EINVAL;
}

int reader_failed(const struct host_reader *rd, const char *path, int err)
{
	if (rootfs_absent(err))
		return 0;
	if (rd->fail)
		rd->fail(rd->data, path, err, NULL);
	return err;
}

/* A value is text: a NUL byte in it is not the kernel's format. */
static int check_text(const struct host_reader *rd, const char *path, const struct strbuf *v)
{
	if (strlen(v->buf) == v->len)
		return 1;
	return reader_bad_content(rd, path, "(contains a NUL byte)");
}

int reader_list(const struct host_reader *rd, const char *rel, struct strvec *names)
{
	int r = rootfs_list(rd->root, rel, names);

	return r >= 0 ? r : reader_failed(rd, rel, r);
}

int reader_value(const struct host_reader *rd, const char *rel, struct strbuf *out)
{
	int r = rootfs_read_value(rd->root, rel, out);

	return r >= 0 ? check_text(rd, rel, out) : reader_failed(rd, rel, r);
}

int reader_file(const struct host_reader *rd, const char *rel, size_t max, struct strbuf *out)
{
	int r = rootfs_read_file(rd->root, rel, max, out);

	return r >= 0 ? 1 : reader_failed(rd, rel, r);
}

struct reader_cache *reader_cache_new(void)
{
	return xcalloc(1, sizeof(struct reader_cache));
}

static void cached_dir_release(struct cached_dir *cd)
{
	for (size_t i = 0; i < cd->names.nr; i++)
		if (cd->fds[i] >= 0)
			close(cd->fds[i]);
	free(cd->fds);
	cd->fds = NULL;
	strvec_clear(&cd->names);
}

void reader_cache_free(struct reader_cache *cache)
{
	if (!cache)
		return;
	for (size_t i = 0; i < cache->nr; i++) {
		cached_dir_release(&cache->dirs[i]);
		free(cache->dirs[i].rel);
	}
	free(cache->dirs);
	free(cache);
}

void reader_cache_sweep(struct reader_cache *cache)
{
	size_t n = 0;

	for (size_t i = 0; i < cache->nr; i++) {
		struct cached_dir *cd = &cache->dirs[i];

		if (!cd->seen) {
			cached_dir_release(cd);
			free(cd->rel);
			continue;
		}
		cd->seen = false;
		cache->dirs[n++] = *cd;
	}
	cache->nr = n;
}

/* Open the files want (NULL-terminated; NULL: every file listed) of cd->rel. */
static int cached_dir_open(const struct rootfs *root, struct cached_dir *cd,
			   const char *const *want)
{
	struct rootfs_dir dir;
	int r = rootfs_dir_open(root, cd->rel, &dir);

	if (r < 0)
		return r;
	if (want) {
		strvec_clear(&cd->names);
		for (; *want; want++)
			strvec_push(&cd->names, *want);
	} else {
		r = rootfs_dir_list(&dir, &cd->names);
	}
	if (r >= 0) {
		cd->fds = xcalloc(cd->names.nr ? cd->names.nr : 1, sizeof(*cd->fds));
		for (size_t i = 0; i < cd->names.nr; i++) {
			cd->fds[i] = rootfs_dir_open_value(&dir, cd->names.v[i]);
			/* Out of descriptors: read this directory the plain way. */
			if (cd->fds[i] == -EMFILE || cd->fds[i] == -ENFILE)
				r = cd->fds[i];
		}
		cd->opened_ns = monotonic_ns();
		cd->stale = false;
	}
	rootfs_dir_close(&dir);
	if (r < 0)
		cached_dir_release(cd);
	return r < 0 ? r : 0;
}

/* The open directory rel, or NULL (then the caller reads it the plain way). */
static struct cached_dir *cache_get(struct reader_cache *cache, const struct rootfs *root,
				    const char *rel, const char *const *want)
{
	struct cached_dir *cd = NULL;

	for (size_t i = 0; i < cache->nr; i++)
		if (streq(cache->dirs[i].rel, rel))
			cd = &cache->dirs[i];
	if (cd && (cd->stale || monotonic_ns() - cd->opened_ns > READER_CACHE_REOPEN_NS))
		cached_dir_release(cd);
	else if (cd)
		goto out;
	if (!cd) {
		if (cache->nr == cache->alloc) {
			cache->alloc = cache->alloc ? 2 * cache->alloc : 16;
			cache->dirs = xrealloc(cache->dirs, cache->alloc * sizeof(*cache->dirs));
		}
		cd = &cache->dirs[cache->nr++];
		memset(cd, 0, sizeof(*cd));
		cd->rel = xstrdup(rel);
		strvec_init(&cd->names);
	}
	if (cached_dir_open(root, cd, want) < 0) {
		/* Forgotten at the sweep: never seen. */
		cd->stale = true;
		return NULL;
	}
out:
	cd->seen = true;
	return cd;
}

int reader_dir_open(const struct host_reader *rd, const char *rel, const char *const *names,
		    struct reader_dir *d)
{
	int r;

	d->rd = rd;
	d->dir.dirfd = -1;
	d->dir.rel = NULL;
	strvec_init(&d->listed);
	d->next = 0;
	d->cd = rd->cache ? cache_get(rd->cache, rd->root, rel, names) : NULL;
	if (d->cd)
		return 1;
	r = rootfs_dir_open(rd->root, rel, &d->dir);
	return r >= 0 ? 1 : reader_failed(rd, rel, r);
}

/* For a failure: the path of name in the directory. */
static char *dir_path(const struct reader_dir *d, const char *name)
{
	return xasprintf("%s/%s", d->cd ? d->cd->rel : d->dir.rel, name);
}

/* 1 read, or the failure r of reading name (told to fail() unless absent). */
static int dir_result(struct reader_dir *d, const char *name, int r, const struct strbuf *out)
{
	char *path = NULL;

	if (r >= 0 && strlen(out->buf) == out->len)
		return 1;
	path = dir_path(d, name);
	r = r >= 0 ? check_text(d->rd, path, out) : reader_failed(d->rd, path, r);
	free(path);
	return r;
}

int reader_dir_bad_content(const struct reader_dir *d, const char *name, const char *content)
{
	char *path = dir_path(d, name);

	reader_bad_content(d->rd, path, content);
	free(path);
	return -EINVAL;
}

int reader_dir_value(struct reader_dir *d, const char *name, struct strbuf *out)
{
	struct cached_dir *cd = d->cd;
	int r;

	strbuf_reset(out);
	if (!cd) {
		if (d->dir.dirfd < 0)
			return 0;
		return dir_result(d, name, rootfs_dir_read_value(&d->dir, name, out), out);
	}
	/* Names are mostly read in their order: look from after the last one first. */
	for (size_t k = 0; k < cd->names.nr; k++) {
		size_t i = (d->next + k) % cd->names.nr;

		if (!streq(cd->names.v[i], name))
			continue;
		d->next = i + 1;
		r = cd->fds[i];
		if (r >= 0) {
			r = rootfs_reread_value(cd->fds[i], out);
			if (r < 0)
				cd->stale = true;
		}
		return dir_result(d, name, r, out);
	}
	return 0;
}

int reader_dir_list(struct reader_dir *d, const struct strvec **names)
{
	int r;

	*names = d->cd ? &d->cd->names : &d->listed;
	if (d->cd)
		return (int)d->cd->names.nr;
	if (d->dir.dirfd < 0)
		return 0;
	r = rootfs_dir_list(&d->dir, &d->listed);
	return r >= 0 ? r : reader_failed(d->rd, d->dir.rel, r);
}

void reader_dir_close(struct reader_dir *d)
{
	rootfs_dir_close(&d->dir);
	strvec_clear(&d->listed);
	d->cd = NULL;
}
