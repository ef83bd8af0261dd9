#include "sparkctl.h"

#include <ctype.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"

char strbuf_empty[1];

void strbuf_init(struct strbuf *sb, size_t hint)
{
	sb->alloc = 0;
	sb->len = 0;
	sb->buf = strbuf_empty;
	if (hint)
		strbuf_grow(sb, hint);
}

void strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb, 0);
}

char *strbuf_detach(struct strbuf *sb, size_t *ret_len)
{
	char *res;

	strbuf_grow(sb, 0);
	res = sb->buf;
	if (ret_len)
		*ret_len = sb->len;
	strbuf_init(sb, 0);
	return res;
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;

	if (need < sb->len)
		abort(); /* size_t overflow: a bug, not a condition */
	if (need <= sb->alloc)
		return;
	size_t alloc = sb->alloc ? sb->alloc : 64;
	while (alloc < need)
		alloc = alloc > SIZE_MAX / 2 ? need : alloc * 2;
	if (sb->alloc) {
		sb->buf = xrealloc(sb->buf, alloc);
	} else {
		sb->buf = xmalloc(alloc);
		sb->buf[0] = '\0';
	}
	sb->alloc = alloc;
}

void strbuf_setlen(struct strbuf *sb, size_t len)
{
	if (!sb->alloc) {
		if (len)
			abort();
		return;
	}
	if (len >= sb->alloc)
		abort();
	sb->len = len;
	sb->buf[len] = '\0';
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	if (!len)
		return;
	strbuf_grow(sb, len);
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, int c)
{
	strbuf_grow(sb, 1);
	sb->buf[sb->len++] = (char)c;
	sb->buf[sb->len] = '\0';
}

void strbuf_addchars(struct strbuf *sb, int c, size_t n)
{
	if (!n)
		return;
	strbuf_grow(sb, n);
	memset(sb->buf + sb->len, c, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(sb->buf + sb->len, sb->alloc ? sb->alloc - sb->len : 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		abort(); /* an invalid format: a bug */
	if ((size_t)n >= (sb->alloc ? sb->alloc - sb->len : 0)) {
		strbuf_grow(sb, (size_t)n);
		n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, ap);
		if (n < 0)
			abort();
	}
	sb->len += (size_t)n;
}

void strbuf_add_hex(struct strbuf *sb, const void *bytes, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *p = bytes;

	strbuf_grow(sb, 2 * len);
	for (size_t i = 0; i < len; i++) {
		sb->buf[sb->len++] = digits[p[i] >> 4];
		sb->buf[sb->len++] = digits[p[i] & 15];
	}
	sb->buf[sb->len] = '\0';
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

/*
 * How many bytes at s make one character that may pass unescaped: 0 when
 * s[0] is a control, or a byte that does not start valid UTF-8 (RFC 3629:
 * no overlong forms, no surrogates, nothing above U+10FFFF).
 */
static size_t printable_char(const unsigned char *s, size_t len, unsigned flags)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t need;

	if (c < 0x80) {
		if (c == '\n' || c == '\t')
			return flags & PRINTABLE_LINES ? 1 : 0;
		return c >= 0x20 && c != 0x7f ? 1 : 0;
	}
	if (flags & PRINTABLE_ASCII)
		return 0;
	if (c >= 0xc2 && c <= 0xdf) {
		need = 2;
		if (c == 0xc2)
			lo = 0xa0; /* U+0080-U+009F are the C1 controls */
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (len < need || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < need; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return need;
}

void strbuf_add_printable(struct strbuf *sb, const char *s, size_t len, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)s;

	strbuf_grow(sb, len);
	for (size_t i = 0; i < len;) {
		size_t n = printable_char(p + i, len - i, flags);
		if (n) {
			strbuf_add(sb, p + i, n);
			i += n;
		} else {
			strbuf_addf(sb, "\\x%02x", p[i]);
			i++;
		}
	}
}

bool str_is_printable(const char *s, size_t len, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < len;) {
		size_t n = printable_char(p + i, len - i, flags);
		if (!n)
			return false;
		i += n;
	}
	return true;
}

void strbuf_rtrim(struct strbuf *sb)
{
	size_t len = sb->len;

	while (len && isspace((unsigned char)sb->buf[len - 1]))
		len--;
	if (sb->alloc)
		strbuf_setlen(sb, len);
}

void strbuf_trim(struct strbuf *sb)
{
	size_t start = 0;

	strbuf_rtrim(sb);
	while (start < sb->len && isspace((unsigned char)sb->buf[start]))
		start++;
	if (start) {
		memmove(sb->buf, sb->buf + start, sb->len - start);
		strbuf_setlen(sb, sb->len - start);
	}
}

int strbuf_read_fd(struct strbuf *sb, int fd, size_t max)
{
	size_t start = sb->len;

	for (;;) {
		strbuf_grow(sb, 65536);
		ssize_t n = read(fd, sb->buf + sb->len, sb->alloc - sb->len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return 0;
		sb->len += (size_t)n;
		sb->buf[sb->len] = '\0';
		if (sb->len - start > max)
			return -EFBIG;
	}
}

int strbuf_write_pending(struct strbuf *sb, int fd)
{
	size_t off = 0;
	int ret = 0;

	while (off < sb->len) {
		ssize_t n = write(fd, sb->buf + off, sb->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = errno == EAGAIN ? 0 : -errno;
			break;
		}
		off += (size_t)n;
	}
	memmove(sb->buf, sb->buf + off, sb->len - off);
	strbuf_setlen(sb, sb->len - off);
	return ret;
}

int strbuf_read_path(struct strbuf *sb, const char *path, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	int r;

	if (fd < 0)
		return -errno;
	r = strbuf_read_fd(sb, fd, max);
	close(fd);
	return r;
}
