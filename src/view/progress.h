/*
 * progress.h - one line on stderr that says what a long wait is for.
 *
 * Work that may take more than 2 s (bench link's benchmarks, the fan-out
 * of -H over SSH) says what it waits for, on a terminal only: from 2 s
 * after progress_begin() a line "TEXT (N s)" is drawn on stderr and
 * redrawn in place every second, and progress_end() erases it, so nothing
 * of it is left in the output.  Never when stderr is not a terminal, and
 * never when the caller does not want it (--json, -q).
 *
 * There is one line per process, as there is one stderr.  The loops that
 * wait drive it (src/proc/run.c arms progress_timer_arm() in each of its
 * loops); the commands only begin, retitle and end it:
 *
 *	progress_begin(!a->json && !a->quiet, "status: asking %zu nodes", n);
 *	run_jobs(...);			// the line appears if this takes over 2 s
 *	progress_end();			// before anything else is printed
 *
 * Work that runs no loop while it waits (a rank of bench nccl: NCCL and
 * the rendezvous block, and a timer firing inside a timed operation would
 * disturb what is timed) draws the line itself where a pause costs nothing,
 * between two steps: progress_set() for the next step, then
 * progress_draw_due().  Its own output to the terminal goes between
 * progress_hide() and the next progress_draw_due(), so that no line of it
 * holds a piece of the progress.
 */
#ifndef SPARKCTL_PROGRESS_H
#define SPARKCTL_PROGRESS_H

#include "sparkctl.h"

struct loop;
struct loop_timer;

/* How long work runs before its line is shown. */
#define PROGRESS_DELAY_MS 2000

/*
 * Start timing a piece of work titled fmt (escaped for the terminal); shown
 * only when wanted and stderr is a terminal.  A progress already begun is
 * ended first.
 */
void progress_begin(bool wanted, const char *fmt, ...) ATTR_PRINTF(2, 3);
/* A new title for the same work (the next step); the clock goes on. */
void progress_set(const char *fmt, ...) ATTR_PRINTF(1, 2);
/* Erase the line if it is shown; nothing more is drawn until the next begin. */
void progress_end(void);
/*
 * Erase the line now, if it is shown, for output that may go to the same
 * terminal; the progress goes on, and the next draw shows it again.
 */
void progress_hide(void);
/*
 * For work that runs no loop: draw the line if it is due (2 s after the
 * begin, then each second, or at once after progress_hide()).
 */
void progress_draw_due(void);
/* True while a progress is begun and would be drawn (for tests of the callers). */
bool progress_active(void);

/*
 * For a loop that waits: init t and arm it, as a background timer (it keeps
 * no loop_run() waiting), to draw the line when it is due and each second
 * after.  Nothing when no progress is active.  t lives as long as the loop.
 */
void progress_timer_arm(struct loop *loop, struct loop_timer *t);

#endif
