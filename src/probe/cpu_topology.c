#include "sparkctl.h"

#include "lib/parse.h"
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
