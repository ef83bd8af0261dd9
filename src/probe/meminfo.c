#include "sparkctl.h"

#include "inventory/inventory.h"
#include "lib/host_text.h"
#include "probe/meminfo.h"

int meminfo_read(const struct host_reader *rd, struct meminfo *out)
{
	static const struct {
		const char *key;
		size_t offset;
	} lines[] = {
		{ "MemTotal", offsetof(struct meminfo, mem_total) },
		{ "MemAvailable", offsetof(struct meminfo, mem_available) },
		{ "CmaTotal", offsetof(struct meminfo, cma_total) },
		{ "CmaFree", offsetof(struct meminfo, cma_free) },
	};
	struct strbuf text = STRBUF_INIT;
	int r = reader_file(rd, MEMINFO_PATH, ROOTFS_FILE_MAX, &text);

	for (size_t i = 0; i < ARRAY_SIZE(lines); i++) {
		int64_t *v = (int64_t *)(void *)((char *)out + lines[i].offset);
		if (r <= 0 || parse_meminfo(text.buf, lines[i].key, v) < 0)
			*v = INV_UNKNOWN;
	}
	if (r > 0 && out->mem_total < 0)
		reader_bad_content(rd, MEMINFO_PATH, text.buf);
	strbuf_release(&text);
	return r;
}
