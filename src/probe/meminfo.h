/*
 * meminfo.h - the kernel's memory figures, from proc/meminfo (reader.h
 * says how reads answer and fail).
 */
#ifndef SPARKCTL_PROBE_MEMINFO_H
#define SPARKCTL_PROBE_MEMINFO_H

#include "sparkctl.h"
#include "probe/reader.h"

#define MEMINFO_PATH "proc/meminfo"

/* In bytes; INV_UNKNOWN where the file does not have the line. */
struct meminfo {
	int64_t mem_total;     /* MemTotal */
	int64_t mem_available; /* MemAvailable: on a unified-memory GPU (GB10) also the GPU's */
	int64_t cma_total;     /* CmaTotal, absent when the kernel has no CMA */
	int64_t cma_free;      /* CmaFree */
};

/*
 * 1 when read, 0 when absent.  A text without MemTotal is not the
 * kernel's format (told to fail()), but what it has is filled in.
 */
int meminfo_read(const struct host_reader *rd, struct meminfo *out);

#endif
