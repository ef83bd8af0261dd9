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

/* The most CPUs cpu_read_topology() counts (a bound on what a tree may list). */
#define CPU_TOPOLOGY_MAX 65536

/*
 * The host's CPUs as Slurm counts them (slurmd -C): the online CPUs, the
 * sockets (distinct topology/physical_package_id), the cores (distinct
 * thread_siblings_list: core_id is only unique within a cluster on arm64
 * device-tree systems, so it serves only where the siblings list is
 * absent), and per socket and per core the quotients.
 */
struct cpu_topology {
	int64_t cpus;
	int64_t sockets;
	int64_t cores_per_socket;
	int64_t threads_per_core;
};

/*
 * Read it from sys/devices/system/cpu (online, then each online CPU's
 * topology/): 1, 0 when online is absent, or a negative errno (a list
 * or value not in the kernel's format, told to fail()).
 */
int cpu_read_topology(const struct host_reader *rd, struct cpu_topology *out);

/* What tells how fast a CPU can run; figures of two sources do not compare. */
enum cpu_speed_source {
	CPU_SPEED_CAPACITY, /* the scheduler's cpu_capacity (arm64; 1024 for the fastest) */
	CPU_SPEED_MAX_FREQ, /* cpufreq's highest frequency, cpuinfo_max_freq (kHz) */
};

/* cpu's figure from src: 1 with *ret, 0 when absent. */
int cpu_read_speed(const struct host_reader *rd, size_t cpu, enum cpu_speed_source src,
		   uint64_t *ret);

#endif
