/*
 * cpu_topology.h - the CPUs' cores and speeds, from
 * sys/devices/system/cpu (reader.h says how reads answer and fail).
 */
#ifndef SPARKCTL_PROBE_CPU_TOPOLOGY_H
#define SPARKCTL_PROBE_CPU_TOPOLOGY_H

#include "sparkctl.h"
#include "probe/reader.h"

/*
 * The CPUs that share cpu's core (topology/thread_siblings_list), as the
 * kernel lists them ("0,64"): 1, or 0 when absent.
 */
int cpu_read_siblings(const struct host_reader *rd, size_t cpu, struct strbuf *list);

/* What tells how fast a CPU can run; figures of two sources do not compare. */
enum cpu_speed_source {
	CPU_SPEED_CAPACITY, /* the scheduler's cpu_capacity (arm64; 1024 for the fastest) */
	CPU_SPEED_MAX_FREQ, /* cpufreq's highest frequency, cpuinfo_max_freq (kHz) */
};

/* cpu's figure from src: 1 with *ret, 0 when absent. */
int cpu_read_speed(const struct host_reader *rd, size_t cpu, enum cpu_speed_source src,
		   uint64_t *ret);

#endif
