#include "sparkctl.h"

#include <dlfcn.h>
#include <link.h>

#include "lib/dl.h"
#include "lib/xalloc.h"

int dl_open(const char *soname, void **ret_handle, struct strbuf *err)
{
	void *h;

	dlerror();
	h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *msg = dlerror();
		strbuf_addstr(err, msg ? msg : soname);
		return -ENOENT;
	}
	*ret_handle = h;
	return 0;
}

int dl_resolve(void *handle, const struct dl_symbol *syms, size_t n, struct strbuf *err)
{
	for (size_t i = 0; i < n; i++) {
		const struct dl_symbol *s = &syms[i];
		void *addr = NULL;

		for (size_t k = 0; k < ARRAY_SIZE(s->names) && s->names[k] && !addr; k++) {
			dlerror();
			addr = dlsym(handle, s->names[k]);
		}
		*s->slot = addr;
		if (!addr && s->required) {
			strbuf_addf(err, "symbol '%s' not found", s->names[0]);
			return -ENOENT;
		}
	}
	return 0;
}

char *dl_path(void *handle)
{
	struct link_map *map = NULL;

	if (dlinfo(handle, RTLD_DI_LINKMAP, &map) < 0 || !map || !map->l_name || !*map->l_name)
		return NULL;
	/* The loader keeps the name as found: relative for a relative LD_LIBRARY_PATH entry. */
	char *abs = realpath(map->l_name, NULL);
	return abs ? abs : xstrdup(map->l_name);
}
