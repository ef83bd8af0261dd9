/*
 * Unit tests of lib/elf_note.h: the GNU build id of shared libraries the
 * compiler links here (--build-id=0x...), of ELF32/ELF64 files of either
 * byte order laid out by hand, and refusals of cut-off and garbage input.
 */
#include "sparkctl.h"

#include <unistd.h>

#include "test_util.h"

#include "lib/elf_note.h"
#include "lib/rootfs.h"
#include "lib/strbuf.h"

/* The build id of buf[0..len) as elf_gnu_build_id() says it, or "-errno". */
static char *build_id_of(const void *buf, size_t len)
{
	struct strbuf out = STRBUF_INIT;
	int r = elf_gnu_build_id(buf, len, &out);

	if (r < 0) {
		strbuf_reset(&out);
		strbuf_addf(&out, "%d", r);
	}
	return strbuf_detach(&out, NULL);
}

static void assert_build_id(const void *buf, size_t len, const char *want)
{
	char *got = build_id_of(buf, len);

	assert_string_equal(got, want);
	free(got);
}

/* Link a shared library with build id hex (extra: more compiler flags) and read it. */
static bool link_library(const char *dir, const char *hex, const char *extra, struct strbuf *file)
{
	char *cmd =
		xasprintf("printf 'const char v[] = \"NCCL version 2.28.9+cuda13.0\";\\n' > "
			  "%s/v.c && cc %s -shared -fPIC -Wl,--build-id=0x%s %s/v.c -o %s/lib.so "
			  "2>/dev/null",
			  dir, extra, hex, dir, dir);
	char *path = xasprintf("%s/lib.so", dir);
	struct rootfs root;
	bool ok = system(cmd) == 0;

	if (ok) {
		assert_int_equal(rootfs_open(&root, "/"), 0);
		assert_int_equal(rootfs_read_file(&root, path, 1 << 24, file), 0);
		rootfs_close(&root);
	}
	free(cmd);
	free(path);
	return ok;
}

static void build_id_of_linked_libraries(void **state)
{
	char dir[] = "/tmp/sparkctl-elf-XXXXXX";
	struct strbuf file = STRBUF_INIT;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_true(link_library(dir, "0123456789abcdef0123456789abcdef01234567", "", &file));
	assert_build_id(file.buf, file.len, "0123456789abcdef0123456789abcdef01234567");
	/* The head of the file is enough: the notes are in its first page. */
	assert_build_id(file.buf, 4096, "0123456789abcdef0123456789abcdef01234567");
	/* Cut inside the ELF header, or before the notes: refused or not found, never read. */
	assert_build_id(file.buf, 40, "-8");
	assert_build_id(file.buf, 100, "-8");
	for (size_t cut = 0; cut < 4096; cut++) {
		char *got = build_id_of(file.buf, cut);
		assert_true(streq(got, "-8") || streq(got, "-2") ||
			    streq(got, "0123456789abcdef0123456789abcdef01234567"));
		free(got);
	}
	/* Another build of the same source: another id. */
	assert_true(link_library(dir, "feedface", "", &file));
	assert_build_id(file.buf, file.len, "feedface");
	/* ELF32, where the compiler can make one (no libc needed). */
	if (link_library(dir, "c0ffee32", "-m32 -nostdlib", &file))
		assert_build_id(file.buf, file.len, "c0ffee32");
	/* Linked without a build id: none. */
	{
		struct rootfs root;
		char *cmd = xasprintf("cc -shared -fPIC -Wl,--build-id=none %s/v.c -o %s/none.so",
				      dir, dir);
		char *path = xasprintf("%s/none.so", dir);
		sh(cmd);
		free(cmd);
		assert_int_equal(rootfs_open(&root, "/"), 0);
		assert_int_equal(rootfs_read_file(&root, path, 1 << 24, &file), 0);
		rootfs_close(&root);
		free(path);
	}
	assert_build_id(file.buf, file.len, "-2");
	strbuf_release(&file);
	remove_tree(dir);
}

/* Append x as size bytes in the byte order. */
static void put(struct strbuf *sb, uint64_t x, unsigned size, bool big_endian)
{
	for (unsigned i = 0; i < size; i++) {
		unsigned shift = 8 * (big_endian ? size - 1 - i : i);
		strbuf_addch(sb, (char)(x >> shift & 0xff));
	}
}

/*
 * An ELF file laid out by hand: the header, one program header (PT_NOTE
 * when use_phdr) and one section header (SHT_NOTE unless use_phdr) for
 * one note area holding a note "XYZ" type 3, then "GNU" type 1, then "GNU"
 * type 3 with the bytes 0xab 0xcd 0xef.
 */
static void make_elf(struct strbuf *sb, bool is64, bool be, bool use_phdr)
{
	unsigned w = is64 ? 8 : 4, ehsize = is64 ? 64 : 52, phsize = is64 ? 56 : 32,
		 shsize = is64 ? 64 : 40;
	struct strbuf notes = STRBUF_INIT;
	size_t notes_off = ehsize + phsize;
	size_t shoff;

	put(&notes, 4, 4, be), put(&notes, 4, 4, be), put(&notes, 3, 4, be);
	strbuf_add(&notes, "XYZ\0", 4), strbuf_add(&notes, "\1\2\3\4", 4);
	put(&notes, 4, 4, be), put(&notes, 1, 4, be), put(&notes, 1, 4, be);
	strbuf_add(&notes, "GNU\0", 4), strbuf_add(&notes, "\x11\0\0\0", 4);
	put(&notes, 4, 4, be), put(&notes, 3, 4, be), put(&notes, 3, 4, be);
	strbuf_add(&notes, "GNU\0", 4), strbuf_add(&notes, "\xab\xcd\xef\0", 4);
	shoff = notes_off + notes.len;

	strbuf_reset(sb);
	strbuf_add(sb, "\177ELF", 4);
	strbuf_addch(sb, (char)(is64 ? 2 : 1));
	strbuf_addch(sb, (char)(be ? 2 : 1));
	strbuf_addch(sb, 1);
	strbuf_addchars(sb, 0, 9);
	put(sb, 3, 2, be), put(sb, 0, 2, be), put(sb, 1, 4, be); /* type, machine, version */
	put(sb, 0, w, be);					 /* entry */
	put(sb, ehsize, w, be), put(sb, shoff, w, be);		 /* phoff, shoff */
	put(sb, 0, 4, be), put(sb, ehsize, 2, be);		 /* flags, ehsize */
	put(sb, phsize, 2, be), put(sb, 1, 2, be);		 /* phentsize, phnum */
	put(sb, shsize, 2, be), put(sb, 1, 2, be), put(sb, 0, 2, be);
	assert_int_equal(sb->len, ehsize);
	/* The program header. */
	put(sb, use_phdr ? 4 : 1, 4, be);
	if (is64)
		put(sb, 4, 4, be); /* flags */
	put(sb, notes_off, w, be), put(sb, 0, w, be), put(sb, 0, w, be);
	put(sb, notes.len, w, be), put(sb, notes.len, w, be);
	if (!is64)
		put(sb, 4, 4, be);
	put(sb, 4, w, be);
	assert_int_equal(sb->len, notes_off);
	strbuf_add(sb, notes.buf, notes.len);
	/* The section header. */
	put(sb, 0, 4, be), put(sb, use_phdr ? 1 : 7, 4, be);
	put(sb, 2, w, be), put(sb, 0, w, be), put(sb, notes_off, w, be), put(sb, notes.len, w, be);
	put(sb, 0, 4, be), put(sb, 0, 4, be), put(sb, 4, w, be), put(sb, 0, w, be);
	assert_int_equal(sb->len, shoff + shsize);
	strbuf_release(&notes);
}

static void build_id_of_every_class_and_byte_order(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	for (int is64 = 0; is64 < 2; is64++)
		for (int be = 0; be < 2; be++)
			for (int use_phdr = 0; use_phdr < 2; use_phdr++) {
				make_elf(&sb, is64, be, use_phdr);
				assert_build_id(sb.buf, sb.len, "abcdef");
				/* Without the section headers, only the program header finds it. */
				assert_build_id(sb.buf, sb.len - (is64 ? 64 : 40),
						use_phdr ? "abcdef" : "-2");
				/* A note whose size runs past its area is not read. */
				sb.buf[(is64 ? 64 + 56 : 52 + 32) + 40 + (be ? 7 : 4)] = 0x7f;
				assert_build_id(sb.buf, sb.len, "-2");
			}
	strbuf_release(&sb);
}

static void garbage_is_refused(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	unsigned seed = 1;

	(void)state;
	assert_build_id("", 0, "-8");
	assert_build_id("\177ELF", 4, "-8");
	assert_build_id("#!/bin/sh\necho not an ELF file at all, just text\n", 48, "-8");
	make_elf(&sb, true, false, true);
	sb.buf[4] = 3; /* no such class */
	assert_build_id(sb.buf, sb.len, "-8");
	/* Every byte of a good file changed in turn, then random bytes: no read past. */
	make_elf(&sb, true, false, true);
	for (size_t i = 0; i < sb.len; i++) {
		char *copy = xmalloc(sb.len), *got;
		memcpy(copy, sb.buf, sb.len);
		copy[i] = (char)0xff;
		got = build_id_of(copy, sb.len);
		free(got);
		free(copy);
	}
	for (int n = 0; n < 2000; n++) {
		char *copy = xmalloc(sb.len);
		memcpy(copy, sb.buf, sb.len);
		for (int k = 0; k < 8; k++) {
			seed = seed * 1103515245u + 12345u;
			copy[64 + (seed >> 8) % (sb.len - 64)] = (char)(seed >> 20);
		}
		free(build_id_of(copy, sb.len));
		free(copy);
	}
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(build_id_of_linked_libraries),
		cmocka_unit_test(build_id_of_every_class_and_byte_order),
		cmocka_unit_test(garbage_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
