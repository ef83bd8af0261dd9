#include "sparkctl.h"

#include "inventory/inventory.h"
#include "lib/parse.h"
#include "lib/xalloc.h"
#include "probe/cpu_topology.h"

#define CPU_DIR "sys/devices/system/cpu"

int cpu_read_siblings(const struct host_reader *rd, size_t cpu, struct strbuf *list)
{
	struct strbuf rel = STRBUF_INIT;
	int r;

	strbuf_addf(&rel, CPU_DIR "/cpu%zu/topology/thread_siblings_list", cpu);
	r = reader_value(rd, rel.buf, list);
	strbuf_release(&rel);
	return r;
}

int cpu_read_speed(const struct host_reader *rd, size_t cpu, enum cpu_speed_source src,
		   uint64_t *ret)
{
	struct strbuf rel = STRBUF_INIT, v = STRBUF_INIT;
	int r;

	strbuf_addf(&rel, CPU_DIR "/cpu%zu/%s", cpu,
		    src == CPU_SPEED_CAPACITY ? "cpu_capacity" : "cpufreq/cpuinfo_max_freq");
	r = reader_value(rd, rel.buf, &v);
	if (r > 0 && parse_u64(v.buf, ret) < 0)
		r = reader_bad_content(rd, rel.buf, v.buf);
	strbuf_release(&rel);
	strbuf_release(&v);
	return r;
}

/* The next number of a kernel CPU list at *p ("0-19,32"): 0, or -EINVAL. */
static int next_number(const char **p, uint64_t *ret)
{
	const char *s = *p;
	size_t len = strspn(s, "0123456789");

	if (!len || parse_u64_n(s, len, ret) < 0)
		return -EINVAL;
	*p = s + len;
	return 0;
}

/*
 * The CPUs of a kernel CPU list, in order, into cpus (at most
 * CPU_TOPOLOGY_MAX): their number, or -EINVAL.
 */
static int parse_cpu_list(const char *list, uint32_t **cpus, size_t *nr)
{
	const char *p = list;

	if (!*p)
		return 0;
	for (;;) {
		uint64_t lo, hi;
		if (next_number(&p, &lo) < 0)
			return -EINVAL;
		hi = lo;
		if (*p == '-' && (p++, next_number(&p, &hi) < 0))
			return -EINVAL;
		if (hi < lo || hi >= CPU_TOPOLOGY_MAX || *nr + (hi - lo + 1) > CPU_TOPOLOGY_MAX)
			return -EINVAL;
		for (uint64_t c = lo; c <= hi; c++)
			*ARRAY_PUSH(*cpus, *nr) = (uint32_t)c;
		if (!*p)
			return (int)*nr;
		if (*p++ != ',')
			return -EINVAL;
	}
}

/* One CPU's place: its socket and the core it belongs to. */
struct cpu_place {
	int64_t package;
	int64_t core; /* the first CPU of its siblings list, or CPU_TOPOLOGY_MAX + core_id */
};

/* A signed integer value of cpu's topology/name (physical_package_id is -1 where unknown). */
static int read_topology_int(const struct host_reader *rd, uint32_t cpu, const char *name,
			     int64_t *ret)
{
	struct strbuf rel = STRBUF_INIT, v = STRBUF_INIT;
	int r;

	strbuf_addf(&rel, CPU_DIR "/cpu%" PRIu32 "/topology/%s", cpu, name);
	r = reader_value(rd, rel.buf, &v);
	if (r > 0 && parse_i64(v.buf, ret) < 0)
		r = reader_bad_content(rd, rel.buf, v.buf);
	strbuf_release(&rel);
	strbuf_release(&v);
	return r;
}

static int read_place(const struct host_reader *rd, uint32_t cpu, struct cpu_place *out)
{
	struct strbuf list = STRBUF_INIT;
	uint32_t *siblings = NULL;
	size_t nr = 0;
	int64_t core_id;
	int r;

	out->package = 0;
	out->core = cpu;
	if ((r = read_topology_int(rd, cpu, "physical_package_id", &out->package)) < 0)
		goto out;
	if ((r = cpu_read_siblings(rd, cpu, &list)) < 0)
		goto out;
	if (r > 0) {
		if (parse_cpu_list(list.buf, &siblings, &nr) <= 0) {
			struct strbuf rel = STRBUF_INIT;
			strbuf_addf(&rel, CPU_DIR "/cpu%" PRIu32 "/topology/thread_siblings_list",
				    cpu);
			r = reader_bad_content(rd, rel.buf, list.buf);
			strbuf_release(&rel);
			goto out;
		}
		out->core = siblings[0];
	} else if ((r = read_topology_int(rd, cpu, "core_id", &core_id)) > 0) {
		out->core = CPU_TOPOLOGY_MAX + core_id;
	}
	r = r < 0 ? r : 0;
out:
	free(siblings);
	strbuf_release(&list);
	return r;
}

static int compare_places(const void *a, const void *b)
{
	const struct cpu_place *x = a, *y = b;

	if (x->package != y->package)
		return x->package < y->package ? -1 : 1;
	return x->core < y->core ? -1 : x->core > y->core;
}

int cpu_read_topology(const struct host_reader *rd, struct cpu_topology *out)
{
	struct strbuf online = STRBUF_INIT;
	struct cpu_place *places = NULL;
	uint32_t *cpus = NULL;
	size_t nr = 0, sockets = 0, cores = 0;
	int r;

	*out = (struct cpu_topology){ INV_UNKNOWN, INV_UNKNOWN, INV_UNKNOWN, INV_UNKNOWN };
	if ((r = reader_value(rd, CPU_DIR "/online", &online)) <= 0)
		goto out;
	if (parse_cpu_list(online.buf, &cpus, &nr) <= 0) {
		r = reader_bad_content(rd, CPU_DIR "/online", online.buf);
		goto out;
	}
	places = xcalloc(nr, sizeof(*places));
	for (size_t i = 0; i < nr; i++)
		if ((r = read_place(rd, cpus[i], &places[i])) < 0)
			goto out;
	qsort(places, nr, sizeof(*places), compare_places);
	for (size_t i = 0; i < nr; i++) {
		bool new_socket = !i || places[i].package != places[i - 1].package;
		sockets += new_socket;
		cores += new_socket || places[i].core != places[i - 1].core;
	}
	out->cpus = (int64_t)nr;
	out->sockets = (int64_t)sockets;
	out->cores_per_socket = (int64_t)(cores / sockets);
	out->threads_per_core = (int64_t)(nr / cores);
	r = 1;
out:
	free(places);
	free(cpus);
	strbuf_release(&online);
	return r;
}
