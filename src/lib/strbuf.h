/*
 * strbuf.h - a growable string.
 *
 * Invariants: buf is never NULL and always NUL-terminated, so it can be
 * passed to any C string function; len is the length without the NUL.
 * A strbuf must be initialised with STRBUF_INIT or strbuf_init() before
 * use and released with strbuf_release().  strbuf_detach() hands the
 * buffer to the caller, who frees it with free().  Functions that append
 * never fail (allocation failure aborts, see xalloc.h).
 */
#ifndef SPARKCTL_STRBUF_H
#define SPARKCTL_STRBUF_H

#include "sparkctl.h"

struct strbuf {
	size_t alloc; /* bytes allocated for buf; 0 while buf is the shared empty string */
	size_t len;   /* length of the string, not counting the NUL */
	char *buf;    /* the string */
};

extern char strbuf_empty[];
#define STRBUF_INIT                                                                                \
	{                                                                                          \
		0, 0, strbuf_empty                                                                 \
	}

void strbuf_init(struct strbuf *sb, size_t hint);
void strbuf_release(struct strbuf *sb);
/* Return the string (always heap-allocated) and reset sb to empty. */
char *strbuf_detach(struct strbuf *sb, size_t *ret_len);
/* Make room for at least extra more bytes. */
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_setlen(struct strbuf *sb, size_t len);
static inline void strbuf_reset(struct strbuf *sb)
{
	strbuf_setlen(sb, 0);
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
/* Append c n times. */
void strbuf_addchars(struct strbuf *sb, int c, size_t n);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) ATTR_PRINTF(2, 3);
/* len bytes as lowercase hex, two digits each. */
void strbuf_add_hex(struct strbuf *sb, const void *bytes, size_t len);
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap) ATTR_PRINTF(2, 0);

/*
 * Text that reaches a terminal: append len bytes of s with everything a
 * terminal could act on written as \xNN (lower-case hex), so a value from
 * outside (an inventory, a remote node, a host list, ssh's stderr) cannot
 * move the cursor, retitle the window or clear the screen.  Escaped: the
 * C0 controls 0x00-0x1f, DEL 0x7f, the C1 controls U+0080-U+009F (each of
 * their two UTF-8 bytes) and every byte that is not part of valid UTF-8.
 * Valid printable UTF-8 is appended unchanged.  A backslash is not doubled,
 * so escaping text twice changes nothing: a message escaped where it was
 * made reads the same after the output escapes it again.  The exact bytes
 * are in the JSON output.
 */
enum printable_flags {
	PRINTABLE_LINES = 1 << 0, /* keep '\n' and '\t': multi-line text that sparkctl wrote */
	PRINTABLE_ASCII = 1 << 1, /* escape every byte above 0x7e too: one byte, one column */
};
void strbuf_add_printable(struct strbuf *sb, const char *s, size_t len, unsigned flags);
static inline void strbuf_addstr_printable(struct strbuf *sb, const char *s)
{
	strbuf_add_printable(sb, s, strlen(s), 0);
}
/* True when strbuf_add_printable() would append s unchanged. */
bool str_is_printable(const char *s, size_t len, unsigned flags);

/* Remove trailing whitespace (spaces, tabs, newlines). */
void strbuf_rtrim(struct strbuf *sb);
/* Remove leading and trailing whitespace. */
void strbuf_trim(struct strbuf *sb);
/*
 * Append everything fd has to read, up to max bytes: -EFBIG beyond that,
 * -errno on a read error.
 */
int strbuf_read_fd(struct strbuf *sb, int fd, size_t max);
/* The same for the file at path (opened close-on-exec, not following a terminal). */
int strbuf_read_path(struct strbuf *sb, const char *path, size_t max);
/*
 * Write the front of sb to fd (non-blocking) for as long as fd takes it,
 * and remove what was written: 0 when sb is empty or fd would block,
 * -errno on a write error (sb is left as it was from there).
 */
int strbuf_write_pending(struct strbuf *sb, int fd);

#endif
