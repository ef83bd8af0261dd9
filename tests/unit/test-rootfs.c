/* Unit tests of lib/rootfs.c: bounded, contained reads of hostile trees. */
#include "sparkctl.h"

#include <sys/stat.h>

#include "test_util.h"

#include "lib/rootfs.h"
#include "lib/xalloc.h"

static char tree[] = "/tmp/sparkctl-rootfs-XXXXXX";

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(tree))
		return -1;
	char *cmd = xasprintf(
		"cd %s && mkdir -p a/b etc outside && printf '4: ACTIVE\\n' > a/b/state && "
		": > a/empty && printf 'x' > a/nonl && ln -s loop2 a/loop1 && ln -s loop1 a/loop2 "
		"&& "
		"ln -s b a/blink && ln -s /etc/passwd a/abs && ln -s ../../../../../../etc/passwd "
		"a/dotdot && printf 'root-of-tree\\n' > etc/passwd && truncate -s 1G a/huge && "
		"mkfifo a/fifo && printf '1234567890' > a/ten",
		tree);
	sh(cmd);
	free(cmd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	remove_tree(tree);
	return 0;
}

static void reads(void **state)
{
	struct rootfs root;
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	assert_int_equal(rootfs_open(&root, tree), 0);
	assert_false(root.is_host_root);
	assert_int_equal(rootfs_read_value(&root, "a/b/state", &sb), 0);
	assert_string_equal(sb.buf, "4: ACTIVE");
	assert_int_equal(rootfs_read_value(&root, "/a/blink/state", &sb), 0); /* leading '/' */
	assert_string_equal(sb.buf, "4: ACTIVE");
	assert_int_equal(rootfs_read_value(&root, "a/empty", &sb), 0);
	assert_string_equal(sb.buf, "");
	assert_int_equal(rootfs_read_value(&root, "a/nonl", &sb), 0);
	assert_string_equal(sb.buf, "x");
	assert_int_equal(rootfs_read_value(&root, "a/missing", &sb), -ENOENT);
	assert_int_equal(rootfs_read_value(&root, "a/nodir/x", &sb), -ENOENT);
	assert_int_equal(rootfs_read_value(&root, "a/b/state/x", &sb), -ENOTDIR);
	assert_int_equal(rootfs_read_value(&root, "a/loop1", &sb), -ELOOP);
	assert_int_equal(rootfs_read_value(&root, "a/b", &sb), -EISDIR);
	/* A FIFO is refused at once, never waited on. */
	assert_int_equal(rootfs_read_value(&root, "a/fifo", &sb), -ESPIPE);
	/* A 1 GiB file where a value is expected: refused after the limit. */
	assert_int_equal(rootfs_read_value(&root, "a/huge", &sb), -EFBIG);
	assert_int_equal(sb.len, 0);
	assert_int_equal(rootfs_read_file(&root, "a/ten", 10, &sb), 0);
	assert_int_equal(rootfs_read_file(&root, "a/ten", 9, &sb), -EFBIG);
	rootfs_close(&root);
	strbuf_release(&sb);
}

/* Absolute symlinks and ".." stay inside the root. */
static void containment(void **state)
{
	struct rootfs root;
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	assert_int_equal(rootfs_open(&root, tree), 0);
	assert_int_equal(rootfs_read_value(&root, "a/abs", &sb), 0);
	assert_string_equal(sb.buf, "root-of-tree");
	assert_int_equal(rootfs_read_value(&root, "a/dotdot", &sb), 0);
	assert_string_equal(sb.buf, "root-of-tree");
	assert_int_equal(rootfs_read_value(&root, "../../../../etc/passwd", &sb), 0);
	assert_string_equal(sb.buf, "root-of-tree");
	rootfs_close(&root);
	strbuf_release(&sb);
}

static void links_and_lists(void **state)
{
	struct rootfs root;
	struct strbuf sb = STRBUF_INIT;
	struct strvec names = STRVEC_INIT;

	(void)state;
	assert_int_equal(rootfs_open(&root, tree), 0);
	assert_int_equal(rootfs_readlink(&root, "a/abs", &sb), 0);
	assert_string_equal(sb.buf, "/etc/passwd");
	assert_int_equal(rootfs_readlink(&root, "a/b/state", &sb), -EINVAL);
	assert_int_equal(rootfs_readlink(&root, "a/none", &sb), -ENOENT);
	assert_int_equal(rootfs_list(&root, "a/b", &names), 1);
	assert_string_equal(names.v[0], "state");
	assert_true(rootfs_list(&root, "a", &names) > 5);
	for (size_t i = 1; i < names.nr; i++)
		assert_true(strcmp(names.v[i - 1], names.v[i]) < 0);
	assert_int_equal(rootfs_list(&root, "a/missing", &names), -ENOENT);
	assert_int_equal(rootfs_list(&root, "a/ten", &names), -ENOTDIR);
	assert_true(rootfs_exists(&root, "a/blink"));
	assert_false(rootfs_exists(&root, "a/loop1"));
	rootfs_close(&root);
	strvec_clear(&names);
	strbuf_release(&sb);
}

static void recorder(void **state)
{
	struct rootfs root;
	struct rootfs_recorder rec = { 0 };
	struct strbuf sb = STRBUF_INIT;
	struct strvec names = STRVEC_INIT;

	(void)state;
	assert_int_equal(rootfs_open(&root, tree), 0);
	root.recorder = &rec;
	assert_int_equal(rootfs_read_value(&root, "a/b/state", &sb), 0);
	assert_int_equal(rootfs_readlink(&root, "a/abs", &sb), 0);
	int n = rootfs_list(&root, "a", &names);
	assert_int_equal(n, (int)names.nr);
	rootfs_read_value(&root, "a/missing", &sb); /* failures are not recorded */
	bool file = false, link = false, dir = false, listed_link = false;
	for (size_t i = 0; i < rec.nr; i++) {
		const struct rootfs_record *r = &rec.records[i];
		if (r->kind == ROOTFS_RECORD_FILE && streq(r->path, "a/b/state"))
			file = streq(r->data, "4: ACTIVE\n");
		if (r->kind == ROOTFS_RECORD_LINK && streq(r->path, "a/abs"))
			link = streq(r->data, "/etc/passwd");
		if (r->kind == ROOTFS_RECORD_LINK && streq(r->path, "a/blink"))
			listed_link = streq(r->data, "b");
		if (r->kind == ROOTFS_RECORD_DIR && streq(r->path, "a"))
			dir = true;
		assert_false(streq(r->path, "a/missing"));
	}
	assert_true(file);
	assert_true(link);
	assert_true(listed_link);
	assert_true(dir);
	rootfs_recorder_release(&rec);
	rootfs_close(&root);
	strvec_clear(&names);
	strbuf_release(&sb);
}

static void open_errors(void **state)
{
	struct rootfs root;

	(void)state;
	assert_int_equal(rootfs_open(&root, "/nonexistent/root"), -ENOENT);
	char *file = xasprintf("%s/a/ten", tree);
	assert_int_equal(rootfs_open(&root, file), -ENOTDIR);
	free(file);
	assert_int_equal(rootfs_open(&root, "/"), 0);
	assert_true(root.is_host_root);
	rootfs_close(&root);
}

/* A directory of values: each name is read inside it, and only there. */
static void dir_values(void **state)
{
	struct rootfs root;
	struct rootfs_dir dir;
	struct rootfs_recorder rec = { 0 };
	struct strbuf sb = STRBUF_INIT;
	struct strvec names = STRVEC_INIT;

	(void)state;
	assert_int_equal(rootfs_open(&root, tree), 0);
	root.recorder = &rec;
	assert_int_equal(rootfs_dir_open(&root, "a/blink", &dir), 0); /* a link inside the root */
	assert_int_equal(rootfs_dir_read_value(&dir, "state", &sb), 0);
	assert_string_equal(sb.buf, "4: ACTIVE");
	assert_int_equal(rootfs_dir_list(&dir, &names), 1);
	rootfs_dir_close(&dir);
	assert_int_equal(rec.nr > 0, 1);
	assert_string_equal(rec.records[0].path, "a/blink/state");
	assert_string_equal(rec.records[0].data, "4: ACTIVE\n");
	root.recorder = NULL;

	assert_int_equal(rootfs_dir_open(&root, "a", &dir), 0);
	assert_int_equal(rootfs_dir_read_value(&dir, "nonl", &sb), 0);
	assert_string_equal(sb.buf, "x");
	assert_int_equal(rootfs_dir_read_value(&dir, "ten", &sb), 0);
	assert_string_equal(sb.buf, "1234567890");
	assert_int_equal(rootfs_dir_read_value(&dir, "empty", &sb), 0);
	assert_string_equal(sb.buf, "");
	/* No path, no symlink: nothing outside the directory is reached. */
	assert_int_equal(rootfs_dir_read_value(&dir, "b/state", &sb), -EINVAL);
	assert_int_equal(rootfs_dir_read_value(&dir, "..", &sb), -EINVAL);
	assert_int_equal(rootfs_dir_read_value(&dir, "abs", &sb), -ELOOP);
	assert_int_equal(rootfs_dir_read_value(&dir, "dotdot", &sb), -ELOOP);
	assert_int_equal(rootfs_dir_read_value(&dir, "b", &sb), -EISDIR);
	assert_int_equal(rootfs_dir_read_value(&dir, "fifo", &sb), -ESPIPE);
	assert_int_equal(rootfs_dir_read_value(&dir, "huge", &sb), -EFBIG);
	assert_int_equal(sb.len, 0);
	assert_int_equal(rootfs_dir_read_value(&dir, "missing", &sb), -ENOENT);
	/* A file kept open reads its content of the moment, from its start. */
	int fd = rootfs_dir_open_value(&dir, "ten");
	assert_true(fd >= 0);
	assert_int_equal(rootfs_reread_value(fd, &sb), 0);
	assert_string_equal(sb.buf, "1234567890");
	char *cmd = xasprintf("printf '42\\n' > %s/a/ten", tree);
	sh(cmd);
	free(cmd);
	assert_int_equal(rootfs_reread_value(fd, &sb), 0);
	assert_string_equal(sb.buf, "42");
	close(fd);
	assert_int_equal(rootfs_dir_open_value(&dir, "fifo"), -ESPIPE);
	assert_int_equal(rootfs_dir_open_value(&dir, "abs"), -ELOOP);
	assert_int_equal(rootfs_dir_open_value(&dir, "b/state"), -EINVAL);
	rootfs_dir_close(&dir);
	assert_int_equal(rootfs_dir_open(&root, "a/missing", &dir), -ENOENT);
	rootfs_dir_close(&dir);
	assert_int_equal(rootfs_dir_open(&root, "a/ten", &dir), -ENOTDIR);
	rootfs_dir_close(&dir);
	rootfs_recorder_release(&rec);
	rootfs_close(&root);
	strvec_clear(&names);
	strbuf_release(&sb);
}

/*
 * Directories to write in: looked up inside the root like reads, created
 * there with exactly the mode asked for, never through a symlink out of it.
 */
static void dirs_for_write(void **state)
{
	struct rootfs root;
	struct rootfs_dir dir;
	struct strbuf sb = STRBUF_INIT;
	struct stat st;
	char *w = xasprintf("%s/w", tree), *cmd;
	mode_t mask;

	(void)state;
	/* w/etc/netplan -> TREE/outside (absolute), w/dotdot -> ../../../outside, w/dangling. */
	cmd = xasprintf(
		"mkdir -p %s/etc %s/outside && ln -s %s/outside %s/etc/netplan && "
		"ln -s ../../../../../../../outside %s/dotdot && ln -s nowhere %s/dangling && "
		": > %s/file && ln -s file %s/link",
		w, tree, tree, w, w, w, w, w);
	sh(cmd);
	free(cmd);
	assert_int_equal(rootfs_open(&root, w), 0);

	/* Without create_mode, what the link leads to inside the root must exist. */
	assert_int_equal(rootfs_dir_open_for_write(&root, "etc/netplan", 0, &dir), -ENOENT);
	rootfs_dir_close(&dir);
	/* A link is never made a directory (as mkdir -p): what it leads to is made first. */
	assert_int_equal(rootfs_dir_open_for_write(&root, "etc/netplan/sub", 0755, &dir), -ENOENT);
	rootfs_dir_close(&dir);
	cmd = xasprintf("mkdir -p %s%s/outside", w, tree);
	sh(cmd);
	free(cmd);
	/* Then below it, inside the root, with 0750 whatever the umask. */
	mask = umask(0777);
	assert_int_equal(rootfs_dir_open_for_write(&root, "etc/netplan/sub", 0750, &dir), 0);
	umask(mask);
	assert_int_equal(fstat(dir.dirfd, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0750);
	assert_int_equal(mkdirat(dir.dirfd, "made", 0700), 0);
	rootfs_dir_close(&dir);
	cmd = xasprintf("%s%s/outside/sub/made", w, tree);
	assert_int_equal(stat(cmd, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	free(cmd);
	cmd = xasprintf("%s/outside/sub", tree);
	assert_int_equal(stat(cmd, &st), -1);
	free(cmd);

	/* ".." stops at the root: dotdot is w/outside. */
	cmd = xasprintf("mkdir %s/outside", w);
	sh(cmd);
	free(cmd);
	assert_int_equal(rootfs_dir_open_for_write(&root, "dotdot/x", 0755, &dir), 0);
	rootfs_dir_close(&dir);
	cmd = xasprintf("%s/outside/x", w);
	assert_int_equal(stat(cmd, &st), 0);
	free(cmd);
	cmd = xasprintf("%s/outside/x", tree);
	assert_int_equal(stat(cmd, &st), -1);
	free(cmd);

	/* A dangling link or a file in the way is not made a directory. */
	assert_int_equal(rootfs_dir_open_for_write(&root, "dangling/x", 0755, &dir), -ENOENT);
	rootfs_dir_close(&dir);
	cmd = xasprintf("%s/nowhere", w);
	assert_int_equal(lstat(cmd, &st), -1);
	free(cmd);
	assert_int_equal(rootfs_dir_open_for_write(&root, "file/x", 0755, &dir), -ENOTDIR);
	rootfs_dir_close(&dir);

	/* What is read through it is read as it is: a link is not followed. */
	assert_int_equal(rootfs_dir_open_for_write(&root, ".", 0, &dir), 0);
	assert_int_equal(rootfs_dir_read_file(&dir, "file", 10, &sb), 0);
	assert_int_equal(rootfs_dir_read_file(&dir, "link", 10, &sb), -ELOOP);
	assert_int_equal(rootfs_dir_read_file(&dir, "etc", 10, &sb), -EISDIR);
	assert_int_equal(rootfs_dir_read_file(&dir, "missing", 10, &sb), -ENOENT);
	rootfs_dir_close(&dir);
	rootfs_close(&root);
	strbuf_release(&sb);
	free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reads),	   cmocka_unit_test(containment),
		cmocka_unit_test(links_and_lists), cmocka_unit_test(recorder),
		cmocka_unit_test(open_errors),	   cmocka_unit_test(dir_values),
		cmocka_unit_test(dirs_for_write),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
