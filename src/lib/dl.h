/*
 * dl.h - loading optional shared libraries at run time.
 *
 * sparkctl never links against NVIDIA libraries: it opens them with
 * dlopen() by their versioned soname (libnvidia-ml.so.1, libcuda.so.1,
 * libnccl.so.2; an unversioned name can resolve to a toolkit stub) and
 * resolves each symbol from a table.  A missing library or symbol is a
 * capability the caller reports, never a crash.
 */
#ifndef SPARKCTL_DL_H
#define SPARKCTL_DL_H

#include "sparkctl.h"
#include "lib/strbuf.h"

struct dl_symbol {
	const char *names[3]; /* the symbol, newest version first; unused slots NULL */
	void **slot;	      /* where the address goes (a function pointer variable) */
	bool required;	      /* fail the whole load when none of the names resolve */
};

/*
 * dlopen(soname) with RTLD_NOW | RTLD_LOCAL.  On failure returns -ENOENT
 * and the loader's message (copied: dlerror()'s buffer is reused) in err.
 */
int dl_open(const char *soname, void **ret_handle, struct strbuf *err);
/*
 * Resolve every symbol of the table.  Optional symbols that are missing
 * are set to NULL.  Returns -ENOENT naming the first missing required
 * symbol in err.
 */
int dl_resolve(void *handle, const struct dl_symbol *syms, size_t n, struct strbuf *err);
/* The file the library was loaded from, or NULL if unknown (caller frees). */
char *dl_path(void *handle);

#endif
