/*
 * progress.c - the progress line on stderr (progress.h).
 */
#include "sparkctl.h"

#include <sys/ioctl.h>

#include "lib/clock.h"
#include "lib/strbuf.h"
#include "proc/loop.h"
#include "view/progress.h"

#define PROGRESS_REDRAW_MS 1000

static struct {
	bool active;	   /* begun, wanted, stderr a terminal */
	bool shown;	   /* a line is on the screen */
	uint64_t start_ms; /* monotonic */
	uint64_t drawn_ms; /* monotonic, the last draw */
	struct strbuf title;
} progress = { .title = STRBUF_INIT };

static void write_stderr(const struct strbuf *sb)
{
	size_t off = 0;

	while (off < sb->len) {
		ssize_t n = write(STDERR_FILENO, sb->buf + off, sb->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* a terminal that went away: the work goes on without it */
		off += (size_t)n;
	}
}

static size_t terminal_columns(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

/* The title cut to the terminal's width (a wrapped line could not be redrawn in place). */
static void draw(void)
{
	struct strbuf line = STRBUF_INIT, text = STRBUF_INIT;
	size_t cols = terminal_columns(), width = 0, cut = 0;
	uint64_t now = monotonic_ms();

	strbuf_addf(&text, "%s (%" PRIu64 " s)", progress.title.buf,
		    (now - progress.start_ms) / 1000);
	/* Columns as UTF-8 lead bytes; the last column stays free for the cursor. */
	for (cut = 0; cut < text.len; cut++) {
		if (((unsigned char)text.buf[cut] & 0xc0) == 0x80)
			continue;
		if (width + 1 >= cols)
			break;
		width++;
	}
	strbuf_addch(&line, '\r');
	strbuf_add(&line, text.buf, cut);
	strbuf_addstr(&line, "\033[K");
	write_stderr(&line);
	progress.shown = true;
	progress.drawn_ms = now;
	strbuf_release(&line);
	strbuf_release(&text);
}

static void erase(void)
{
	struct strbuf line = STRBUF_INIT;

	if (!progress.shown)
		return;
	strbuf_addstr(&line, "\r\033[K");
	write_stderr(&line);
	progress.shown = false;
	strbuf_release(&line);
}

ATTR_PRINTF(1, 0) static void set_title(const char *fmt, va_list ap)
{
	struct strbuf raw = STRBUF_INIT;

	strbuf_vaddf(&raw, fmt, ap);
	strbuf_reset(&progress.title);
	strbuf_add_printable(&progress.title, raw.buf, raw.len, 0);
	strbuf_release(&raw);
}

void progress_begin(bool wanted, const char *fmt, ...)
{
	va_list ap;

	progress_end();
	if (!wanted || !isatty(STDERR_FILENO))
		return;
	va_start(ap, fmt);
	set_title(fmt, ap);
	va_end(ap);
	progress.start_ms = monotonic_ms();
	progress.active = true;
}

void progress_set(const char *fmt, ...)
{
	va_list ap;

	if (!progress.active)
		return;
	va_start(ap, fmt);
	set_title(fmt, ap);
	va_end(ap);
	if (progress.shown)
		draw();
}

void progress_end(void)
{
	erase();
	progress.active = false;
	strbuf_release(&progress.title);
}

void progress_hide(void)
{
	erase();
}

void progress_draw_due(void)
{
	uint64_t now = monotonic_ms();

	if (!progress.active || now < progress.start_ms + PROGRESS_DELAY_MS)
		return;
	if (progress.shown && now < progress.drawn_ms + PROGRESS_REDRAW_MS)
		return;
	draw();
}

bool progress_active(void)
{
	return progress.active;
}

static void on_timer(struct loop *loop, void *data)
{
	struct loop_timer *t = data;

	if (!progress.active)
		return;
	draw();
	loop_timer_arm_in(loop, t, PROGRESS_REDRAW_MS);
}

void progress_timer_arm(struct loop *loop, struct loop_timer *t)
{
	uint64_t due;

	loop_timer_init(t, on_timer, t);
	t->background = true;
	if (!progress.active)
		return;
	due = progress.start_ms + PROGRESS_DELAY_MS;
	loop_timer_arm(loop, t, due);
}
