/*
 * suggest.h - "did you mean" for mistyped command and option names.
 */
#ifndef SPARKCTL_SUGGEST_H
#define SPARKCTL_SUGGEST_H

#include "sparkctl.h"

/* Levenshtein distance between a and b (insert, delete, substitute: cost 1). */
size_t edit_distance(const char *a, const char *b);

/*
 * The candidate closest to word, or NULL when none is close enough to be
 * a likely typo (distance at most a third of the word's length, min 2).
 * candidates is an array of n strings; NULL entries are skipped.
 */
const char *suggest_nearest(const char *word, const char *const *candidates, size_t n);

#endif
