/*
 * nccl.h - the NCCL library (libnccl.so.2), loaded at run time.
 *
 * For the inventory only the version is needed; bench nccl extends this
 * with the collective API.
 */
#ifndef SPARKCTL_NCCL_H
#define SPARKCTL_NCCL_H

#include "sparkctl.h"
#include "lib/strbuf.h"

#define NCCL_SONAME "libnccl.so.2"

/*
 * NCCL's version code as ncclGetVersion() returns it: X*1000+Y*100+Z up to
 * 2.8, X*10000+Y*100+Z since 2.9.  Writes "X.Y.Z" to out.
 */
void nccl_version_string(int code, struct strbuf *out);

/*
 * Load libnccl.so.2 and ask its version.  On success writes the code and
 * the path of the library (allocated).  -ENOENT with the reason in err.
 */
int nccl_probe_version(int *ret_code, char **ret_path, struct strbuf *err);

#endif
