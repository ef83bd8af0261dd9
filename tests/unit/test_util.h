/*
 * test_util.h - shared by the cmocka unit tests.
 */
#ifndef SPARKCTL_TEST_UTIL_H
#define SPARKCTL_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "inventory/inventory.h"
#include "lib/xalloc.h"
#include "probe/probe.h"

/* Run a shell command that builds a test's tree; fail the test if it fails. */
static inline void sh(const char *cmd)
{
	if (system(cmd) != 0)
		fail_msg("command failed: %s", cmd);
}

/* Remove a test's tree (a teardown). */
static inline void remove_tree(const char *dir)
{
	char *cmd = xasprintf("rm -rf '%s'", dir);

	sh(cmd);
	free(cmd);
}

/* Probe the fixture tree tests/fixtures/NAME into inv (asserting success). */
static inline void load_fixture(const char *name, struct inventory *inv)
{
	struct strbuf path = STRBUF_INIT, err = STRBUF_INIT;
	struct probe_options opts = { 0 };

	strbuf_addf(&path, "%s/%s", FIXTURES_DIR, name);
	opts.root = path.buf;
	inventory_init(inv);
	int r = probe_inventory(&opts, inv, &err);
	if (r < 0)
		fail_msg("probe of %s failed: %s", path.buf, err.buf);
	strbuf_release(&path);
	strbuf_release(&err);
}

#endif
