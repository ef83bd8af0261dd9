/*
 * bench-commands - how long sparkctl's node commands take, as a user sees
 * them: topo (target: live under 20 ms) and doctor without active probes
 * (target: under 50 ms).
 *
 * Runs the given sparkctl binary repeatedly (fork + exec, output to
 * /dev/null) for each case and prints the wall time (min, median, p95,
 * max) and the peak resident memory.  This is a benchmark, not a test:
 * it prints figures and never fails on them.
 *
 *   bench-commands SPARKCTL FIXTURES_DIR [RUNS]
 */
#include "sparkctl.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

struct sample {
	double ms;
	long maxrss_kb;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Run argv once; returns 0 and the sample, or -1 if it did not exit 0 or 1. */
static int run_once(char *const argv[], struct sample *s)
{
	struct rusage ru;
	int status;
	double t0 = now_ms();
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		return -1;
	s->ms = now_ms() - t0;
	s->maxrss_kb = ru.ru_maxrss;
	/* doctor exits 1 when a check fails: that is a result, not a failed run. */
	return WIFEXITED(status) && WEXITSTATUS(status) <= 1 ? 0 : -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void bench(const char *label, char *const argv[], int runs)
{
	double *ms = calloc((size_t)runs, sizeof(*ms));
	long rss = 0;
	struct sample s;

	if (!ms)
		abort();
	run_once(argv, &s); /* warm the page cache */
	for (int i = 0; i < runs; i++) {
		if (run_once(argv, &s) < 0) {
			printf("%-34s failed (run it by hand: %s ...)\n", label, argv[0]);
			free(ms);
			return;
		}
		ms[i] = s.ms;
		if (s.maxrss_kb > rss)
			rss = s.maxrss_kb;
	}
	qsort(ms, (size_t)runs, sizeof(*ms), cmp_double);
	printf("%-34s %7.2f %7.2f %7.2f %7.2f   %6ld\n", label, ms[0], ms[runs / 2],
	       ms[(runs * 95) / 100 < runs ? (runs * 95) / 100 : runs - 1], ms[runs - 1], rss);
	free(ms);
}

int main(int argc, char **argv)
{
	char root[PATH_MAX], saved[PATH_MAX];
	int runs = 50;

	if (argc < 3) {
		fprintf(stderr, "usage: bench-commands SPARKCTL FIXTURES_DIR [RUNS]\n");
		return 2;
	}
	if (argc > 3) {
		runs = (int)strtol(argv[3], NULL, 10);
		if (runs < 1 || runs > 100000)
			runs = 50;
	}
	snprintf(root, sizeof(root), "%s/spark-2cable", argv[2]);
	/* The saved inventory of that tree: --from reads it, --json writes it again. */
	snprintf(saved, sizeof(saved), "%s/../golden/topo-spark-2cable.json", argv[2]);

	char *live[] = { argv[1], (char *)"topo", NULL };
	char *live_json[] = { argv[1], (char *)"topo", (char *)"--json", NULL };
	char *fixture[] = { argv[1], (char *)"topo", (char *)"--root", root, NULL };
	char *fixture_json[] = { argv[1], (char *)"topo",   (char *)"--root",
				 root,	  (char *)"--json", NULL };
	char *from_json[] = { argv[1], (char *)"topo",	 (char *)"--from",
			      saved,   (char *)"--json", NULL };
	char *doctor[] = { argv[1], (char *)"doctor", NULL };
	char *doctor_fixture[] = { argv[1], (char *)"doctor", (char *)"--root", root, NULL };
	char *env_fixture[] = { argv[1], (char *)"env",	    (char *)"--root",
				root,	 (char *)"--nodes", (char *)"2",
				NULL };

	printf("sparkctl, %d runs each, wall time in ms (fork+exec included)\n\n", runs);
	printf("%-34s %7s %7s %7s %7s   %6s\n", "case", "min", "median", "p95", "max", "RSS kB");
	bench("topo (live host)", live, runs);
	bench("topo --json (live host)", live_json, runs);
	bench("topo --root spark-2cable", fixture, runs);
	bench("topo --root spark-2cable --json", fixture_json, runs);
	bench("topo --from spark-2cable --json", from_json, runs);
	bench("doctor (live host)", doctor, runs);
	bench("doctor --root spark-2cable", doctor_fixture, runs);
	bench("env --root spark-2cable", env_fixture, runs);
	printf("\ntargets: live topo under 20 ms; doctor without active probes under 50 ms\n");
	return 0;
}
