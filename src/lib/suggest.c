#include "sparkctl.h"

#include "lib/suggest.h"
#include "lib/xalloc.h"

size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *row = xcalloc(lb + 1, sizeof(*row));

	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0]; /* row[i-1][j-1] */
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j]; /* row[i-1][j] */
			size_t best = diag + (a[i - 1] == b[j - 1] ? 0 : 1);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	size_t d = row[lb];
	free(row);
	return d;
}

const char *suggest_nearest(const char *word, const char *const *candidates, size_t n)
{
	const char *best = NULL;
	size_t best_d = SIZE_MAX;
	size_t limit = strlen(word) / 3;

	if (limit < 2)
		limit = 2;
	for (size_t i = 0; i < n; i++) {
		if (!candidates[i])
			continue;
		size_t d = edit_distance(word, candidates[i]);
		/* A candidate that starts with the word is a likely abbreviation. */
		if (d > limit && *word && starts_with(candidates[i], word))
			d = limit;
		if (d < best_d) {
			best_d = d;
			best = candidates[i];
		}
	}
	return best_d <= limit ? best : NULL;
}
