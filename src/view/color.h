/*
 * color.h - the ANSI colours of the reports: doctor's PASS, WARN, FAIL and
 * SKIP, which every report that judges something reuses, so that green,
 * yellow and red mean the same in each.
 */
#ifndef SPARKCTL_COLOR_H
#define SPARKCTL_COLOR_H

#define COLOR_PASS  "\033[32m"
#define COLOR_WARN  "\033[1;33m"
#define COLOR_FAIL  "\033[1;31m"
#define COLOR_SKIP  "\033[2m"
#define COLOR_RESET "\033[0m"

#endif
