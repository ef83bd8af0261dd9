/*
 * elf_note.h - the notes of an ELF file held in a buffer (ELF32 and
 * ELF64, either byte order): the GNU build id that tells two builds of a
 * library with one version apart.
 *
 * Pure and bounded: every offset and size is checked against the buffer,
 * so a truncated or hostile file is refused, never read past.  The buffer
 * may be only the head of the file: the notes of a loadable file are in
 * its first pages, found through the program headers (PT_NOTE); the
 * section headers (SHT_NOTE), at the file's end, are used when the buffer
 * holds them.
 */
#ifndef SPARKCTL_ELF_NOTE_H
#define SPARKCTL_ELF_NOTE_H

#include "sparkctl.h"

#include "lib/strbuf.h"

/* NT_GNU_BUILD_ID, the type of the note named "GNU" that holds the build id. */
#define ELF_NOTE_GNU_BUILD_ID 3
/* The most bytes of a build id (GNU ld writes 20: SHA-1; --build-id=0x... up to this). */
#define ELF_BUILD_ID_MAX      64

/*
 * The descriptor of the first note named name of type type in buf[0..len):
 * 0 and *desc, *desc_len pointing into buf; -ENOENT when there is none,
 * -ENOEXEC when buf is not an ELF file or its headers are cut off.
 */
int elf_find_note(const void *buf, size_t len, const char *name, uint32_t type,
		  const uint8_t **desc, size_t *desc_len);

/*
 * The GNU build id as lowercase hex (as 'file' and 'readelf -n' print it)
 * appended to out: 0, -ENOENT (no build id, or an empty or oversized one)
 * or -ENOEXEC.
 */
int elf_gnu_build_id(const void *buf, size_t len, struct strbuf *out);

#endif
