/*
 * nccl_bind.c - where a rank of bench nccl runs: its CPUs (--bind), and the
 * memory its buffers may take.  Read from the host's files below the root,
 * through probe's readers.
 */
#include "sparkctl.h"

#include <sched.h>

#include "bench/nccl_rank.h"
#include "probe/cpu_topology.h"
#include "probe/meminfo.h"
#include "probe/pci_functions.h"

#define GIB (UINT64_C(1) << 30)

/* The core of each allowed CPU: the first CPU of its thread_siblings_list, -1 unknown. */
static void read_cores(struct bench *b, const cpu_set_t *allowed, int *core_of)
{
	struct strbuf list = STRBUF_INIT;

	for (size_t c = 0; c < CPU_SETSIZE; c++) {
		cpu_set_t siblings;
		core_of[c] = -1;
		if (!CPU_ISSET(c, allowed))
			continue;
		strbuf_reset(&list);
		if (cpu_read_siblings(&(struct host_reader){ .root = &b->host }, c, &list) > 0 &&
		    perf_parse_cpulist(list.buf, &siblings) == 0) {
			for (size_t s = 0; s < CPU_SETSIZE; s++) {
				if (CPU_ISSET(s, &siblings)) {
					core_of[c] = (int)s;
					break;
				}
			}
		}
	}
	strbuf_release(&list);
}

/*
 * How fast each allowed CPU can run, to tell the performance cores of a
 * hybrid CPU (GB10: Cortex-X925 and Cortex-A725) from the others: the
 * scheduler's cpu_capacity where the kernel gives it (arm64), else the
 * highest frequency cpufreq allows.  One source for every CPU, or none
 * (all 0): figures of two kinds do not compare.
 */
static void read_capacities(struct bench *b, const cpu_set_t *allowed, unsigned long *capacity)
{
	static const enum cpu_speed_source sources[] = { CPU_SPEED_CAPACITY, CPU_SPEED_MAX_FREQ };
	const struct host_reader rd = { .root = &b->host };

	for (size_t i = 0; i < ARRAY_SIZE(sources); i++) {
		bool all = true;
		memset(capacity, 0, CPU_SETSIZE * sizeof(*capacity));
		for (size_t c = 0; all && c < CPU_SETSIZE; c++) {
			uint64_t v = 0;
			if (!CPU_ISSET(c, allowed))
				continue;
			all = cpu_read_speed(&rd, c, sources[i], &v) > 0 && v > 0 && v <= ULONG_MAX;
			if (all)
				capacity[c] = (unsigned long)v;
		}
		if (all)
			return;
	}
	memset(capacity, 0, CPU_SETSIZE * sizeof(*capacity));
}

/*
 * --bind: core (the default) runs the rank on one physical core next to
 * its GPU (its NUMA node), the fastest first and a different one per local
 * rank (the GPU's ordinal), as mpirun binds each of two nccl-tests
 * processes; numa on every CPU of the node, as an MPI launcher binds ranks
 * to a package.  Small operations are bound by the CPU that issues them: a
 * rank that may migrate among the node's CPUs was slower more often on a
 * shared host (docs/benchmarks.md).  A narrower binding the caller chose
 * (taskset, numactl) is kept: the choice is made within it.  Without a
 * local_cpulist, the node is every CPU the rank may use.  The rank's CPUs
 * end up in its info, for the JSON.
 */
void nccl_bind_rank(struct bench *b)
{
	const struct nccl_rank_info *ri = &b->team.info;
	struct strbuf list = STRBUF_INIT;
	cpu_set_t now, set, near;
	char bdf[32];

	if (sched_getaffinity(0, sizeof(now), &now) != 0)
		goto out;
	set = now;
	snprintf(bdf, sizeof(bdf), "%04x:%02x:%02x.0", (unsigned)ri->pci_domain,
		 (unsigned)ri->pci_bus, (unsigned)ri->pci_device);
	if (b->o->bind != PERF_BIND_NONE && b->host_open &&
	    pci_read_local_cpulist(&(struct host_reader){ .root = &b->host }, bdf, &list) > 0 &&
	    perf_parse_cpulist(list.buf, &near) == 0) {
		cpu_set_t both;
		CPU_AND(&both, &near, &now);
		if (CPU_COUNT(&both) > 0)
			set = both;
	}
	if (b->o->bind == PERF_BIND_CORE && b->host_open) {
		int core_of[CPU_SETSIZE];
		unsigned long capacity[CPU_SETSIZE];
		cpu_set_t core;
		read_cores(b, &set, core_of);
		read_capacities(b, &set, capacity);
		perf_pick_core(&set, core_of, capacity, (unsigned)b->gpu.ordinal, &core);
		if (CPU_COUNT(&core) > 0)
			set = core;
	}
	if (!CPU_EQUAL(&set, &now))
		sched_setaffinity(0, sizeof(set), &set);
	if (sched_getaffinity(0, sizeof(now), &now) == 0) {
		strbuf_reset(&list);
		perf_format_cpulist(&now, &list);
		snprintf(b->team.info.cpus, sizeof(b->team.info.cpus), "%s", list.buf);
	}
out:
	strbuf_release(&list);
}

/*
 * The largest size the buffers may have on this rank.  Device memory holds
 * the send and receive buffers; on a GPU that shares the host's memory
 * (GB10) the host check's two buffers come out of the same memory, and
 * the free figure is the kernel's MemAvailable.  The reserve is nccl-tests'
 * (1 GiB + 1 GiB per 16 GiB, at most 4 GiB) for NCCL's own buffers.
 */
int nccl_memory_bound(struct bench *b, uint64_t *ret)
{
	size_t free_b = 0, total_b = 0;
	uint64_t avail, reserve, buffers = 2;
	int integrated = 0;
	cu_result cr = b->gpu.cuda.mem_get_info(&free_b, &total_b);

	if (cr != CUDA_SUCCESS)
		return nccl_cu_fail(b, cr, "cuMemGetInfo");
	avail = free_b;
	if (b->gpu.cuda.device_get_attribute(&integrated, CU_ATTR_INTEGRATED, b->gpu.dev) !=
	    CUDA_SUCCESS)
		integrated = 0;
	if (integrated) {
		struct meminfo mem;
		if (b->host_open &&
		    meminfo_read(&(struct host_reader){ .root = &b->host }, &mem) > 0 &&
		    mem.mem_available >= 0 && (uint64_t)mem.mem_available < avail)
			avail = (uint64_t)mem.mem_available;
		if (b->o->check && !b->gpu.check_on_gpu)
			buffers += 2;
	}
	reserve = GIB + ((uint64_t)total_b + 16 * GIB - 1) / (16 * GIB) * GIB;
	if (reserve > 5 * GIB)
		reserve = 5 * GIB;
	*ret = avail > reserve ? (avail - reserve) / buffers : 0;
	return 0;
}
