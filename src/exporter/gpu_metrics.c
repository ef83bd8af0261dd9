#include "sparkctl.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#include "exporter/gpu_metrics.h"
#include "lib/xalloc.h"
#include "nv/nvml.h"

#define NS "sparkctl_gpu_"

/* How long one wait of the Xid thread lasts: the most exporter_gpu_close() waits for it. */
#define XID_WAIT_MS 200

struct gpu_dev {
	nvml_device dev;
	char index[16];
	char uuid[NVML_UUID_SIZE];
	char name[NVML_NAME_SIZE];
	char bus_id[32];
	bool xid_watched; /* Xid events registered for it */
};

struct xid_count {
	size_t gpu;		/* index into devs */
	unsigned long long xid; /* the Xid code */
	uint64_t n;
};

struct exporter_gpu {
	struct nvml nvml;
	struct gpu_dev *devs;
	size_t nr;
	char driver[NVML_DRIVER_VERSION_SIZE];

	nvml_event_set events; /* NULL: no Xid watch */
	pthread_t thread;
	bool thread_started;
	atomic_bool stop;

	pthread_mutex_t lock; /* guards xids */
	struct xid_count *xids;
	size_t nr_xids, alloc_xids;
};

static void xid_record(struct exporter_gpu *g, const struct nvml_event_data *d)
{
	size_t gpu;

	for (gpu = 0; gpu < g->nr; gpu++)
		if (g->devs[gpu].dev == d->device)
			break;
	if (gpu == g->nr)
		return;
	pthread_mutex_lock(&g->lock);
	for (size_t i = 0; i < g->nr_xids; i++) {
		if (g->xids[i].gpu == gpu && g->xids[i].xid == d->event_data) {
			g->xids[i].n++;
			goto out;
		}
	}
	if (g->nr_xids == g->alloc_xids) {
		g->alloc_xids = g->alloc_xids ? 2 * g->alloc_xids : 8;
		g->xids = xrealloc(g->xids, g->alloc_xids * sizeof(*g->xids));
	}
	g->xids[g->nr_xids++] = (struct xid_count){ gpu, d->event_data, 1 };
out:
	pthread_mutex_unlock(&g->lock);
}

static void *xid_thread(void *arg)
{
	struct exporter_gpu *g = arg;

	while (!atomic_load(&g->stop)) {
		struct nvml_event_data d;
		nvml_return r;

		memset(&d, 0, sizeof(d));
		r = g->nvml.event_set_wait(g->events, &d, XID_WAIT_MS);
		if (r == NVML_SUCCESS) {
			if (d.event_type & NVML_EVENT_TYPE_XID_CRITICAL_ERROR)
				xid_record(g, &d);
		} else if (r != NVML_ERROR_TIMEOUT) {
			/* A lasting error must not become a busy loop. */
			struct timespec ts = { 0, XID_WAIT_MS * 1000000L };
			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

static void xid_watch_start(struct exporter_gpu *g)
{
	struct nvml *n = &g->nvml;
	sigset_t all, old;
	bool any = false;

	if (!n->event_set_create || !n->device_register_events || !n->event_set_wait ||
	    !n->event_set_free)
		return;
	if (n->event_set_create(&g->events) != NVML_SUCCESS) {
		g->events = NULL;
		return;
	}
	for (size_t i = 0; i < g->nr; i++) {
		unsigned long long types = NVML_EVENT_TYPE_XID_CRITICAL_ERROR;

		if (n->device_get_supported_event_types &&
		    (n->device_get_supported_event_types(g->devs[i].dev, &types) != NVML_SUCCESS ||
		     !(types & NVML_EVENT_TYPE_XID_CRITICAL_ERROR)))
			continue;
		if (n->device_register_events(g->devs[i].dev, NVML_EVENT_TYPE_XID_CRITICAL_ERROR,
					      g->events) == NVML_SUCCESS)
			g->devs[i].xid_watched = any = true;
	}
	/* The thread takes no signals: the command waits for them. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (any && pthread_create(&g->thread, NULL, xid_thread, g) == 0)
		g->thread_started = true;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!g->thread_started) {
		n->event_set_free(g->events);
		g->events = NULL;
		for (size_t i = 0; i < g->nr; i++)
			g->devs[i].xid_watched = false;
	}
}

int exporter_gpu_open(struct exporter_gpu **ret, bool watch_xid, struct strbuf *err)
{
	struct exporter_gpu *g = xcalloc(1, sizeof(*g));
	unsigned count = 0;
	nvml_return nr;
	int r;

	r = nvml_open(&g->nvml, err);
	if (r < 0) {
		free(g);
		return r;
	}
	pthread_mutex_init(&g->lock, NULL);
	atomic_init(&g->stop, false);
	nr = g->nvml.device_get_count(&count);
	if (nr != NVML_SUCCESS) {
		strbuf_addf(err, "nvmlDeviceGetCount failed: %s", nvml_strerror(&g->nvml, nr));
		exporter_gpu_close(g);
		return -EIO;
	}
	if (!g->nvml.system_get_driver_version ||
	    g->nvml.system_get_driver_version(g->driver, sizeof(g->driver)) != NVML_SUCCESS)
		g->driver[0] = '\0';
	g->devs = xcalloc(count ? count : 1, sizeof(*g->devs));
	for (unsigned i = 0; i < count; i++) {
		struct gpu_dev *d = &g->devs[g->nr];
		struct nvml_pci_info pci;

		/* A GPU we may not open (NO_PERMISSION) keeps its index but is left out. */
		if (g->nvml.device_get_handle_by_index(i, &d->dev) != NVML_SUCCESS)
			continue;
		snprintf(d->index, sizeof(d->index), "%u", i);
		if (!g->nvml.device_get_uuid ||
		    g->nvml.device_get_uuid(d->dev, d->uuid, sizeof(d->uuid)) != NVML_SUCCESS)
			d->uuid[0] = '\0';
		if (!g->nvml.device_get_name ||
		    g->nvml.device_get_name(d->dev, d->name, sizeof(d->name)) != NVML_SUCCESS)
			d->name[0] = '\0';
		memset(&pci, 0, sizeof(pci));
		if (g->nvml.device_get_pci_info &&
		    g->nvml.device_get_pci_info(d->dev, &pci) == NVML_SUCCESS)
			memcpy(d->bus_id, pci.bus_id, sizeof(d->bus_id));
		d->bus_id[sizeof(d->bus_id) - 1] = '\0';
		g->nr++;
	}
	if (watch_xid)
		xid_watch_start(g);
	*ret = g;
	return 0;
}

void exporter_gpu_close(struct exporter_gpu *g)
{
	if (!g)
		return;
	if (g->thread_started) {
		atomic_store(&g->stop, true);
		pthread_join(g->thread, NULL);
	}
	if (g->events)
		g->nvml.event_set_free(g->events);
	nvml_close(&g->nvml);
	pthread_mutex_destroy(&g->lock);
	free(g->xids);
	free(g->devs);
	free(g);
}

size_t exporter_gpu_count(const struct exporter_gpu *g)
{
	return g->nr;
}

const char *exporter_gpu_name(const struct exporter_gpu *g, size_t i)
{
	return i < g->nr ? g->devs[i].name : NULL;
}

/* 1: a value; 0: the GPU or library does not have it; -EIO: the query failed. */
static int answer(nvml_return r)
{
	switch (r) {
	case NVML_SUCCESS:
		return 1;
	case NVML_ERROR_NOT_SUPPORTED:
	case NVML_ERROR_NO_PERMISSION:
	case NVML_ERROR_FUNCTION_NOT_FOUND:
		return 0;
	default:
		return -EIO;
	}
}

static void keep(int *ret, int r)
{
	if (r < 0 && *ret == 0)
		*ret = r;
}

static int gpu_temperature(struct nvml *n, nvml_device dev, double *ret)
{
	unsigned c;
	int r = 0;

	if (n->device_get_temperature_v) {
		struct nvml_temperature t = { NVML_TEMPERATURE_V1, NVML_TEMPERATURE_GPU, 0 };

		r = answer(n->device_get_temperature_v(dev, &t));
		if (r > 0) {
			*ret = t.temperature;
			return 1;
		}
	}
	if (n->device_get_temperature) {
		r = answer(n->device_get_temperature(dev, NVML_TEMPERATURE_GPU, &c));
		if (r > 0)
			*ret = c;
	}
	return r;
}

/*
 * The framebuffer's size and what is in use, as nvidia-smi counts it: v2
 * leaves the driver's reserve out of "used", v1 (the fallback) counts it.
 * Same returns as answer(), -ENOENT when neither call exists.
 */
static int gpu_memory(struct nvml *n, nvml_device dev, uint64_t *total, uint64_t *used)
{
	int r = -ENOENT;

	if (n->device_get_memory_info_v2) {
		struct nvml_memory_v2 m = { .version = NVML_MEMORY_V2 };
		r = answer(n->device_get_memory_info_v2(dev, &m));
		if (r > 0) {
			*total = m.total;
			*used = m.used;
			return 1;
		}
	}
	if (n->device_get_memory_info) {
		struct nvml_memory m;
		r = answer(n->device_get_memory_info(dev, &m));
		if (r > 0) {
			*total = m.total;
			*used = m.used;
		}
	}
	return r;
}

static const struct {
	unsigned long long bit;
	const char *name;
} clock_reasons[] = {
	{ 0x1, "gpu_idle" },
	{ 0x2, "applications_clocks_setting" },
	{ 0x4, "sw_power_cap" },
	{ 0x8, "hw_slowdown" },
	{ 0x10, "sync_boost" },
	{ 0x20, "sw_thermal_slowdown" },
	{ 0x40, "hw_thermal_slowdown" },
	{ 0x80, "hw_power_brake_slowdown" },
	{ 0x100, "display_clock_setting" },
};

static const struct {
	int type;
	const char *name;
} clocks[] = {
	{ NVML_CLOCK_GRAPHICS, "graphics" },
	{ NVML_CLOCK_SM, "sm" },
	{ NVML_CLOCK_MEM, "memory" },
	{ NVML_CLOCK_VIDEO, "video" },
};

static int gpu_one(struct exporter_gpu *g, struct gpu_dev *d, struct metric_set *set)
{
	struct nvml *n = &g->nvml;
	const struct metric_label l[3] = { { "gpu", d->index }, { "uuid", d->uuid } };
	struct metric_label lx[3] = { l[0], l[1] };
	struct nvml_utilization u;
	uint64_t mem_total = 0, mem_used = 0;
	unsigned long long ull;
	unsigned v;
	double t;
	int ret = 0, r;
	bool unified = false;

	r = gpu_memory(n, d->dev, &mem_total, &mem_used);
	if (r != -ENOENT) {
		keep(&ret, r);
		/* An integrated GPU has no framebuffer: never report host memory as the GPU's. */
		if (r == 0 || (r > 0 && mem_total == 0)) {
			unified = true;
		} else if (r > 0) {
			keep(&ret,
			     metric_add_u64(set, NS "memory_total_bytes",
					    "GPU framebuffer memory (absent on unified memory)",
					    METRIC_GAUGE, l, 2, mem_total));
			keep(&ret, metric_add_u64(set, NS "memory_used_bytes",
						  "GPU framebuffer memory in use, without the "
						  "driver's reserve (as nvidia-smi counts it)",
						  METRIC_GAUGE, l, 2, mem_used));
		}
	}
	{
		const struct metric_label info[7] = {
			l[0],
			l[1],
			{ "name", d->name },
			{ "pci_bus_id", d->bus_id },
			{ "driver_version", g->driver },
			{ "memory_type", unified ? "unified" : "dedicated" },
		};
		keep(&ret, metric_add_u64(set, NS "info",
					  "The GPU's name, PCI address, driver and memory type "
					  "(unified: see sparkctl_memory_available_bytes)",
					  METRIC_GAUGE, info, 6, 1));
	}
	if (n->device_get_utilization_rates) {
		r = answer(n->device_get_utilization_rates(d->dev, &u));
		keep(&ret, r);
		if (r > 0) {
			keep(&ret,
			     metric_add_double(set, NS "utilization_ratio",
					       "Time a kernel ran on the GPU, over the driver's "
					       "sample period (0-1)",
					       METRIC_GAUGE, l, 2, u.gpu / 100.0));
			keep(&ret, metric_add_double(set, NS "memory_utilization_ratio",
						     "Time device memory was read or written (0-1)",
						     METRIC_GAUGE, l, 2, u.memory / 100.0));
		}
	}
	r = gpu_temperature(n, d->dev, &t);
	keep(&ret, r);
	if (r > 0)
		keep(&ret, metric_add_double(set, NS "temperature_celsius", "GPU core temperature",
					     METRIC_GAUGE, l, 2, t));
	if (n->device_get_power_usage) {
		r = answer(n->device_get_power_usage(d->dev, &v));
		keep(&ret, r);
		if (r > 0)
			keep(&ret, metric_add_double(set, NS "power_watts",
						     "GPU power draw (prefer rate() of the energy "
						     "counter)",
						     METRIC_GAUGE, l, 2, v / 1000.0));
	}
	if (n->device_get_enforced_power_limit) {
		r = answer(n->device_get_enforced_power_limit(d->dev, &v));
		keep(&ret, r);
		if (r > 0)
			keep(&ret, metric_add_double(set, NS "power_limit_watts",
						     "The power limit the driver enforces",
						     METRIC_GAUGE, l, 2, v / 1000.0));
	}
	if (n->device_get_total_energy_consumption) {
		r = answer(n->device_get_total_energy_consumption(d->dev, &ull));
		keep(&ret, r);
		if (r > 0)
			keep(&ret, metric_add_double(set, NS "energy_joules_total",
						     "Energy the GPU used since the driver loaded",
						     METRIC_COUNTER, l, 2, (double)ull / 1000.0));
	}
	for (size_t i = 0; n->device_get_clock_info && i < ARRAY_SIZE(clocks); i++) {
		r = answer(n->device_get_clock_info(d->dev, clocks[i].type, &v));
		keep(&ret, r);
		lx[2] = (struct metric_label){ "clock", clocks[i].name };
		if (r > 0)
			keep(&ret, metric_add_u64(set, NS "clock_hertz", "Current GPU clock",
						  METRIC_GAUGE, lx, 3, (uint64_t)v * 1000000));
	}
	if (n->device_get_clocks_event_reasons) {
		r = answer(n->device_get_clocks_event_reasons(d->dev, &ull));
		keep(&ret, r);
		for (size_t i = 0; r > 0 && i < ARRAY_SIZE(clock_reasons); i++) {
			lx[2] = (struct metric_label){ "reason", clock_reasons[i].name };
			keep(&ret,
			     metric_add_u64(set, NS "clock_event_reason_active",
					    "1 while this reason holds the clocks down "
					    "(throttling)",
					    METRIC_GAUGE, lx, 3, !!(ull & clock_reasons[i].bit)));
		}
	}
	keep(&ret, metric_add_u64(set, NS "xid_events_watched",
				  "1 when Xid events of the GPU are counted", METRIC_GAUGE, l, 2,
				  d->xid_watched));
	return ret;
}

int exporter_gpu_collect(struct exporter_gpu *g, struct metric_set *set)
{
	char xid[24];
	int ret = 0;

	keep(&ret,
	     metric_add_u64(set, NS "devices", "GPUs NVML lists", METRIC_GAUGE, NULL, 0, g->nr));
	for (size_t i = 0; i < g->nr; i++)
		keep(&ret, gpu_one(g, &g->devs[i], set));
	pthread_mutex_lock(&g->lock);
	for (size_t i = 0; i < g->nr_xids; i++) {
		const struct gpu_dev *d = &g->devs[g->xids[i].gpu];
		const struct metric_label l[3] = {
			{ "gpu", d->index },
			{ "uuid", d->uuid },
			{ "xid", xid },
		};
		snprintf(xid, sizeof(xid), "%llu", g->xids[i].xid);
		keep(&ret, metric_add_u64(set, NS "xid_errors_total",
					  "Xid errors the driver reported, by GPU and Xid code",
					  METRIC_COUNTER, l, 3, g->xids[i].n));
	}
	pthread_mutex_unlock(&g->lock);
	return ret;
}
