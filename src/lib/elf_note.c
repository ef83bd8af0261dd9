/*
 * elf_note.c - ELF notes from a buffer (elf_note.h).
 *
 * Only the fields needed are read, each at its offset for the file's
 * class and byte order, so no structure of <elf.h> is overlaid on bytes
 * that may be short or misaligned.
 */
#include "sparkctl.h"

#include "lib/elf_note.h"

#define EI_NIDENT   16
#define ELFCLASS32  1
#define ELFCLASS64  2
#define ELFDATA2LSB 1
#define ELFDATA2MSB 2
#define PT_NOTE	    4
#define SHT_NOTE    7

/* The file's class and byte order, and the buffer they apply to. */
struct elf_view {
	const uint8_t *buf;
	size_t len;
	bool is64, big_endian;
};

static bool in_bounds(const struct elf_view *v, uint64_t off, uint64_t size)
{
	return off <= v->len && size <= v->len - off;
}

/* The unsigned integer of size bytes at off (bounds checked by the caller). */
static uint64_t read_uint(const struct elf_view *v, uint64_t off, unsigned size)
{
	uint64_t x = 0;

	for (unsigned i = 0; i < size; i++) {
		unsigned at = v->big_endian ? i : size - 1 - i;
		x = x << 8 | v->buf[off + at];
	}
	return x;
}

/* A word that is 4 bytes in ELF32 and 8 in ELF64 (addresses, offsets, sizes). */
static uint64_t read_word(const struct elf_view *v, uint64_t off)
{
	return read_uint(v, off, v->is64 ? 8 : 4);
}

static size_t align4(size_t x)
{
	return (x + 3) & ~(size_t)3;
}

/* The notes in buf[off..off+size): as elf_find_note(), -ENOENT when none matches. */
static int find_in_notes(const struct elf_view *v, uint64_t off, uint64_t size, const char *name,
			 uint32_t type, const uint8_t **desc, size_t *desc_len)
{
	size_t name_len = strlen(name) + 1, at = 0;

	if (!in_bounds(v, off, size))
		return -ENOENT;
	/* Each note: namesz, descsz, type (4 bytes each), the name, the descriptor. */
	while (size - at >= 12) {
		uint64_t namesz = read_uint(v, off + at, 4), descsz = read_uint(v, off + at + 4, 4);
		uint32_t ntype = (uint32_t)read_uint(v, off + at + 8, 4);
		size_t left = (size_t)(size - at - 12);
		if (namesz > left || align4((size_t)namesz) > left ||
		    descsz > left - align4((size_t)namesz))
			return -ENOENT;
		const uint8_t *n = v->buf + off + at + 12;
		const uint8_t *d = n + align4((size_t)namesz);
		if (ntype == type && namesz == name_len && !memcmp(n, name, name_len)) {
			*desc = d;
			*desc_len = (size_t)descsz;
			return 0;
		}
		if (align4((size_t)descsz) > left - align4((size_t)namesz))
			return -ENOENT; /* the last note, its padding cut off */
		at += 12 + align4((size_t)namesz) + align4((size_t)descsz);
	}
	return -ENOENT;
}

/* The header's table at table_off: count entries of entsize, each checked whole. */
static int find_in_table(const struct elf_view *v, uint64_t table_off, uint64_t entsize,
			 uint64_t count, bool sections, const char *name, uint32_t type,
			 const uint8_t **desc, size_t *desc_len)
{
	/* Where an entry's type, offset and size are: ELF32 and ELF64 order them differently. */
	unsigned min_entsize = sections ? (v->is64 ? 64 : 40) : (v->is64 ? 56 : 32);
	unsigned type_at = sections ? 4 : 0;
	unsigned off_at = sections ? (v->is64 ? 24 : 16) : (v->is64 ? 8 : 4);
	unsigned size_at = sections ? (v->is64 ? 32 : 20) : (v->is64 ? 32 : 16);

	if (!count || entsize < min_entsize || count > v->len / entsize ||
	    !in_bounds(v, table_off, entsize * count))
		return -ENOENT;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t e = table_off + i * entsize;
		if (read_uint(v, e + type_at, 4) != (sections ? SHT_NOTE : PT_NOTE))
			continue;
		if (find_in_notes(v, read_word(v, e + off_at), read_word(v, e + size_at), name,
				  type, desc, desc_len) == 0)
			return 0;
	}
	return -ENOENT;
}

int elf_find_note(const void *buf, size_t len, const char *name, uint32_t type,
		  const uint8_t **desc, size_t *desc_len)
{
	struct elf_view v = { .buf = buf, .len = len };
	uint64_t phoff, shoff, phentsize, phnum, shentsize, shnum;

	if (len < EI_NIDENT || memcmp(buf, "\177ELF", 4))
		return -ENOEXEC;
	if ((v.buf[4] != ELFCLASS32 && v.buf[4] != ELFCLASS64) ||
	    (v.buf[5] != ELFDATA2LSB && v.buf[5] != ELFDATA2MSB))
		return -ENOEXEC;
	v.is64 = v.buf[4] == ELFCLASS64;
	v.big_endian = v.buf[5] == ELFDATA2MSB;
	if (len < (v.is64 ? 64u : 52u))
		return -ENOEXEC;
	/* e_phoff, e_shoff, then e_flags, e_ehsize, e_phentsize, e_phnum, e_shentsize, e_shnum. */
	phoff = read_word(&v, v.is64 ? 32 : 28);
	shoff = read_word(&v, v.is64 ? 40 : 32);
	phentsize = read_uint(&v, v.is64 ? 54 : 42, 2);
	phnum = read_uint(&v, v.is64 ? 56 : 44, 2);
	shentsize = read_uint(&v, v.is64 ? 58 : 46, 2);
	shnum = read_uint(&v, v.is64 ? 60 : 48, 2);
	if (!(phnum && in_bounds(&v, phoff, phentsize * phnum)) &&
	    !(shnum && in_bounds(&v, shoff, shentsize * shnum)))
		return -ENOEXEC; /* neither table in the buffer: cut off */
	if (find_in_table(&v, phoff, phentsize, phnum, false, name, type, desc, desc_len) == 0)
		return 0;
	if (find_in_table(&v, shoff, shentsize, shnum, true, name, type, desc, desc_len) == 0)
		return 0;
	return -ENOENT;
}

int elf_gnu_build_id(const void *buf, size_t len, struct strbuf *out)
{
	const uint8_t *desc;
	size_t desc_len;
	int r = elf_find_note(buf, len, "GNU", ELF_NOTE_GNU_BUILD_ID, &desc, &desc_len);

	if (r < 0)
		return r;
	if (!desc_len || desc_len > ELF_BUILD_ID_MAX)
		return -ENOENT;
	strbuf_add_hex(out, desc, desc_len);
	return 0;
}
