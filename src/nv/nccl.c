#include "sparkctl.h"

#include <dlfcn.h>

#include "lib/dl.h"
#include "nv/nccl.h"

void nccl_version_string(int code, struct strbuf *out)
{
	if (code >= 20900)
		strbuf_addf(out, "%d.%d.%d", code / 10000, code / 100 % 100, code % 100);
	else
		strbuf_addf(out, "%d.%d.%d", code / 1000, code / 100 % 10, code % 100);
}

int nccl_probe_version(int *ret_code, char **ret_path, struct strbuf *err)
{
	int (*get_version)(int *version) = NULL;
	const struct dl_symbol syms[] = {
		{ { "ncclGetVersion" }, (void **)&get_version, true },
	};
	void *h;
	int code = 0, r;

	r = dl_open(NCCL_SONAME, &h, err);
	if (r < 0)
		return r;
	r = dl_resolve(h, syms, ARRAY_SIZE(syms), err);
	if (r == 0 && get_version(&code) != 0) {
		strbuf_addstr(err, "ncclGetVersion failed");
		r = -EIO;
	}
	if (r == 0) {
		*ret_code = code;
		*ret_path = dl_path(h);
	}
	dlclose(h);
	return r;
}
