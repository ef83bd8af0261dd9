#include "sparkctl.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include "inventory/derive.h"
#include "inventory/inventory_json.h"
#include "lib/xalloc.h"
#include "probe/parsers.h"

/* ---- writing ---------------------------------------------------------------- */

static json_t *limit_to_json(int64_t v)
{
	return v == INV_UNLIMITED ? jstr("unlimited") : jint_known(v);
}

static json_t *library_to_json(const struct inv_library *lib)
{
	json_t *o = json_object();

	jset(o, "available", jtri(lib->available));
	jset(o, "version", jstr(lib->version));
	jset(o, "path", jstr(lib->path));
	jset(o, "reason", jstr(lib->reason));
	return o;
}

static json_t *settings_map_to_json(const struct inv_setting *s, size_t nr)
{
	json_t *o = json_object();

	for (size_t i = 0; i < nr; i++)
		jset(o, s[i].key, jstr(s[i].value));
	return o;
}

static json_t *nccl_to_json(const struct inv_system *s)
{
	json_t *o = library_to_json(&s->nccl);

	jset(o, "version_code", jint_known(s->nccl_version_code));
	return o;
}

static json_t *gpu_to_json(const struct inv_gpu_info *gi)
{
	json_t *o = json_object(), *devs = json_array();

	jset(o, "nvml", library_to_json(&gi->nvml));
	jset(o, "cuda", library_to_json(&gi->cuda));
	jset(o, "driver_version", jstr(gi->driver_version));
	jset(o, "cuda_driver_version", jint_known(gi->cuda_driver_version));
	for (size_t i = 0; i < gi->nr_gpus; i++) {
		const struct inv_gpu *g = &gi->gpus[i];
		json_t *d = json_object();
		jset(d, "index", jint(g->index));
		jset(d, "name", jstr(g->name));
		jset(d, "uuid", jstr(g->uuid));
		jset(d, "pci_bus_id", jstr(g->pci_bus_id));
		jset(d, "memory_total_bytes", jint_known(g->memory_total_bytes));
		jset(d, "unified_memory", jtri(g->unified_memory));
		jset(d, "cc_major", jint_known(g->cc_major));
		jset(d, "cc_minor", jint_known(g->cc_minor));
		jset(d, "gpudirect_rdma_supported", jtri(g->gpudirect_rdma));
		jset(d, "dma_buf_supported", jtri(g->dma_buf));
		jpush(devs, d);
	}
	jset(o, "devices", devs);
	return o;
}

static const char *module_state_name(enum inv_module_state st)
{
	switch (st) {
	case MODULE_LOADED:
		return "loaded";
	case MODULE_BUILTIN:
		return "builtin";
	case MODULE_ABSENT:
		return "absent";
	case MODULE_UNKNOWN:
		break;
	}
	return NULL;
}

static json_t *system_to_json(const struct inv_system *s)
{
	json_t *o = json_object(), *os = json_object(), *drv = json_object();
	json_t *mods = json_object(), *conf = json_array(), *lim = json_object();
	json_t *sysctl = json_object(), *mem = json_object();

	jset(o, "hostname", jstr(s->hostname));
	jset(o, "kernel", jstr(s->kernel));
	jset(o, "arch", jstr(s->arch));
	jset(o, "home", jstr(s->home));
	jset(os, "id", jstr(s->os_id));
	jset(os, "version_id", jstr(s->os_version_id));
	jset(os, "pretty_name", jstr(s->os_pretty_name));
	jset(o, "os", os);
	jset(drv, "version", jstr(s->nvidia_driver));
	jset(drv, "open_kernel_module", jtri(s->nvidia_open_module));
	jset(o, "nvidia_driver", drv);
	json_t *load = json_object();
	for (size_t i = 0; i < s->nr_modules; i++) {
		jset(mods, s->modules[i].name, jstr(module_state_name(s->modules[i].state)));
		if (s->modules[i].load_file)
			jset(load, s->modules[i].name, jstr(s->modules[i].load_file));
	}
	jset(o, "modules", mods);
	jset(o, "modules_load", load);
	jset(o, "nccl", nccl_to_json(s));
	for (size_t i = 0; i < s->nr_nccl_conf; i++) {
		json_t *e = json_object();
		jset(e, "file", jstr(s->nccl_conf[i].file));
		jset(e, "key", jstr(s->nccl_conf[i].key));
		jset(e, "value", jstr(s->nccl_conf[i].value));
		jpush(conf, e);
	}
	jset(o, "nccl_conf", conf);
	jset(o, "environment", settings_map_to_json(s->environment, s->nr_environment));
	jset(lim, "memlock_soft", limit_to_json(s->memlock_soft));
	jset(lim, "memlock_hard", limit_to_json(s->memlock_hard));
	jset(o, "limits", lim);
	jset(sysctl, "net.core.rmem_max", jint_known(s->rmem_max));
	jset(sysctl, "net.core.wmem_max", jint_known(s->wmem_max));
	jset(o, "sysctl", sysctl);
	jset(mem, "mem_total_bytes", jint_known(s->mem_total));
	jset(mem, "mem_available_bytes", jint_known(s->mem_available));
	jset(mem, "cma_total_bytes", jint_known(s->cma_total));
	jset(o, "memory", mem);
	return o;
}

static json_t *counters_to_json(const struct inv_counter *c, size_t nr)
{
	json_t *o = json_object();

	for (size_t i = 0; i < nr; i++)
		jset(o, c[i].name, jint(c[i].value));
	return o;
}

static json_t *gid_to_json(const struct inv_gid *g)
{
	json_t *o = json_object();
	char text[40], v4[16];
	int ver = gid_type_version(g->type);

	format_gid(g->raw, text);
	jset(o, "index", jint(g->index));
	jset(o, "gid", jstr(text));
	jset(o, "type", jstr(g->type));
	jset(o, "ndev", jstr(g->ndev));
	/* derived */
	jset(o, "roce_version", ver ? jint(ver) : json_null());
	jset(o, "ipv4", jstr(gid_ipv4(g->raw, v4) ? v4 : NULL));
	return o;
}

static json_t *port_to_json(const struct inventory *inv, const struct inv_rdma_dev *d,
			    const struct inv_port *p, const struct nccl_gid_params *gp)
{
	json_t *o = json_object(), *gids = json_array();
	const struct inv_netdev *nd = rdma_port_netdev(inv, d, p);
	int pick = nccl_gid_pick(p, gp);

	jset(o, "port", jint(p->num));
	jset(o, "state", jstr(p->state_name));
	jset(o, "state_code", jint_known(p->state));
	jset(o, "phys_state", jstr(p->phys_state_name));
	jset(o, "phys_state_code", jint_known(p->phys_state));
	jset(o, "rate", jstr(p->rate));
	jset(o, "link_layer", jstr(p->link_layer));
	jset(o, "lid", jint_known(p->lid));
	/* derived */
	jset(o, "rate_mbps", jint_known(port_rate_mbps(p)));
	jset(o, "netdev", jstr(rdma_port_netdev_name(d, p)));
	jset(o, "fabric", jbool(port_is_fabric(inv, d, p)));
	jset(o, "roce_mtu",
	     port_is_infiniband(p) || !nd ? json_null()
					  : jint_known(roce_mtu_for_netdev_mtu(nd->mtu)));
	jset(o, "nccl_gid_index", pick >= 0 ? jint(pick) : json_null());

	for (size_t i = 0; i < p->nr_gids; i++)
		jpush(gids, gid_to_json(&p->gids[i]));
	jset(o, "gids", gids);
	jset(o, "counters", counters_to_json(p->counters, p->nr_counters));
	jset(o, "hw_counters", counters_to_json(p->hw_counters, p->nr_hw_counters));
	return o;
}

static json_t *rdma_to_json(const struct inventory *inv, const struct inv_rdma_dev *d,
			    const struct nccl_gid_params *gp)
{
	json_t *o = json_object(), *nds = json_array(), *ports = json_array();
	const struct inv_rdma_dev *twin = rdma_twin(inv, d);

	jset(o, "name", jstr(d->name));
	jset(o, "hca_type", jstr(d->hca_type));
	jset(o, "fw_ver", jstr(d->fw_ver));
	jset(o, "board_id", jstr(d->board_id));
	jset(o, "node_guid", jstr(d->node_guid));
	jset(o, "sys_image_guid", jstr(d->sys_image_guid));
	jset(o, "pci_address", jstr(d->pci_address));
	for (size_t i = 0; i < d->netdevs.nr; i++)
		jpush(nds, jstr(d->netdevs.v[i]));
	jset(o, "netdevs", nds);
	jset(o, "phys_port_name", jstr(d->phys_port_name));
	jset(o, "phys_switch_id", jstr(d->phys_switch_id));
	/* derived */
	jset(o, "twin", jstr(twin ? twin->name : NULL));
	for (size_t i = 0; i < d->nr_ports; i++)
		jpush(ports, port_to_json(inv, d, &d->ports[i], gp));
	jset(o, "ports", ports);
	return o;
}

static json_t *netdev_to_json(const struct inv_netdev *n)
{
	json_t *o = json_object(), *v4 = json_array(), *v6 = json_array();

	jset(o, "name", jstr(n->name));
	jset(o, "ifindex", jint_known(n->ifindex));
	jset(o, "mtu", jint_known(n->mtu));
	jset(o, "operstate", jstr(n->operstate));
	jset(o, "carrier", jtri(n->carrier));
	jset(o, "speed_mbps", jint_known(n->speed_mbps));
	jset(o, "address", jstr(n->address));
	jset(o, "driver", jstr(n->driver));
	jset(o, "pci_address", jstr(n->pci_address));
	jset(o, "phys_port_name", jstr(n->phys_port_name));
	jset(o, "phys_switch_id", jstr(n->phys_switch_id));
	jset(o, "default_route", jtri(n->default_route));
	for (size_t i = 0; i < n->nr_addrs; i++) {
		json_t *a = json_object();
		jset(a, "address", jstr(n->addrs[i].address));
		jset(a, "prefix_len", jint(n->addrs[i].prefix_len));
		jpush(n->addrs[i].family == AF_INET ? v4 : v6, a);
	}
	jset(o, "ipv4", v4);
	jset(o, "ipv6", v6);
	return o;
}

static json_t *pci_to_json(const struct inv_pci *p)
{
	json_t *o = json_object();

	jset(o, "address", jstr(p->address));
	jset(o, "vendor_id", jstr(p->vendor_id));
	jset(o, "device_id", jstr(p->device_id));
	jset(o, "current_link_speed", jstr(p->current_link_speed));
	jset(o, "current_link_width", jint_known(p->current_link_width));
	jset(o, "max_link_speed", jstr(p->max_link_speed));
	jset(o, "max_link_width", jint_known(p->max_link_width));
	jset(o, "aer_fatal", jint_known(p->aer_fatal));
	jset(o, "aer_nonfatal", jint_known(p->aer_nonfatal));
	jset(o, "aer_correctable", jint_known(p->aer_correctable));
	/* derived */
	jset(o, "link_degraded", jtri(pci_link_degraded(p)));
	return o;
}

json_t *inventory_to_json(const struct inventory *inv)
{
	json_t *o = json_object(), *arr;
	struct nccl_gid_params gp;

	nccl_gid_params_default(&gp);
	jset(o, "schema_version", jint(INVENTORY_SCHEMA_VERSION));
	jset(o, "sparkctl_version", jstr(inv->sparkctl_version));
	jset(o, "source", jstr(inv->source));
	jset(o, "root", jstr(inv->root));
	jset(o, "system", system_to_json(&inv->sys));
	arr = json_array();
	for (size_t i = 0; i < inv->nr_rdma; i++)
		jpush(arr, rdma_to_json(inv, &inv->rdma[i], &gp));
	jset(o, "rdma_devices", arr);
	arr = json_array();
	for (size_t i = 0; i < inv->nr_netdevs; i++)
		jpush(arr, netdev_to_json(&inv->netdevs[i]));
	jset(o, "netdevs", arr);
	arr = json_array();
	for (size_t i = 0; i < inv->nr_pci; i++)
		jpush(arr, pci_to_json(&inv->pci[i]));
	jset(o, "pci_functions", arr);
	jset(o, "gpu", gpu_to_json(&inv->gpu));
	arr = json_array();
	for (size_t i = 0; i < inv->nr_problems; i++) {
		json_t *p = json_object();
		jset(p, "path", jstr(inv->problems[i].path));
		jset(p, "message", jstr(inv->problems[i].message));
		jpush(arr, p);
	}
	jset(o, "problems", arr);
	return o;
}

json_t *host_facts_to_json(const struct inventory *inv)
{
	const struct inv_system *s = &inv->sys;
	json_t *o = json_object(), *lim = json_object();

	jset(o, "format", jint(1));
	jset(o, "captured_by", jstr(inv->sparkctl_version));
	jset(o, "arch", jstr(s->arch));
	jset(o, "home", jstr(s->home));
	jset(o, "environment", settings_map_to_json(s->environment, s->nr_environment));
	jset(lim, "memlock_soft", limit_to_json(s->memlock_soft));
	jset(lim, "memlock_hard", limit_to_json(s->memlock_hard));
	jset(o, "limits", lim);
	jset(o, "nccl", nccl_to_json(s));
	jset(o, "gpu", gpu_to_json(&inv->gpu));
	return o;
}

/* ---- reading ---------------------------------------------------------------- */

/* Reading context: err collects the message; path names the object being read. */
struct reader {
	struct strbuf *err;
	struct strbuf path;
};

static const char *at(struct reader *rd)
{
	return rd->path.buf;
}

/* Push a path component ("ports[1]", "gpu"); returns the length to pop back to. */
static size_t enter(struct reader *rd, const char *fmt, ...) ATTR_PRINTF(2, 3);
static size_t enter(struct reader *rd, const char *fmt, ...)
{
	size_t len = rd->path.len;
	va_list ap;

	if (len && fmt[0] != '[')
		strbuf_addch(&rd->path, '.');
	va_start(ap, fmt);
	strbuf_vaddf(&rd->path, fmt, ap);
	va_end(ap);
	return len;
}

static void leave(struct reader *rd, size_t len)
{
	strbuf_setlen(&rd->path, len);
}

static int bad(struct reader *rd, const char *key, const char *what)
{
	strbuf_addf(rd->err, "%s%s%s: %s", at(rd), *at(rd) && *key ? "." : "", key, what);
	return -EINVAL;
}

/* Integer that must fit an int (state codes, compute capability). */
static int get_small_int(struct reader *rd, const json_t *o, const char *key, int *ret)
{
	int64_t v;
	int r = jget_int(o, at(rd), key, &v, rd->err);

	if (r < 0)
		return r;
	if (v > INT_MAX)
		return bad(rd, key, "value too large");
	*ret = (int)v;
	return 0;
}

static int get_limit(struct reader *rd, const json_t *o, const char *key, int64_t *ret)
{
	const json_t *v = json_object_get(o, key);

	if (json_is_string(v) && streq(json_string_value(v), "unlimited")) {
		*ret = INV_UNLIMITED;
		return 0;
	}
	if (json_is_string(v))
		return bad(rd, key, "expected a number of bytes, \"unlimited\" or null");
	return jget_int(o, at(rd), key, ret, rd->err);
}

static int library_from_json(struct reader *rd, const json_t *o, struct inv_library *lib)
{
	int r;

	if (!o)
		return 0;
	if ((r = jget_tri(o, at(rd), "available", &lib->available, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "version", &lib->version, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "path", &lib->path, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "reason", &lib->reason, rd->err)) < 0)
		return r;
	return 0;
}

static int settings_map_from_json(struct reader *rd, const json_t *o, struct inv_setting **arr,
				  size_t *nr)
{
	const char *key;
	json_t *v;

	if (!o)
		return 0;
	json_object_foreach((json_t *)o, key, v)
	{
		if (!json_is_string(v))
			return bad(rd, key, "expected a string");
		struct inv_setting *s = ARRAY_PUSH(*arr, *nr);
		s->key = xstrdup(key);
		s->value = xstrdup(json_string_value(v));
	}
	return 0;
}

static int sub_object(struct reader *rd, const json_t *o, const char *key, const json_t **ret)
{
	return jget_object(o, at(rd), key, ret, rd->err);
}

static int sub_array(struct reader *rd, const json_t *o, const char *key, const json_t **ret)
{
	return jget_array(o, at(rd), key, ret, rd->err);
}

static int nccl_from_json(struct reader *rd, const json_t *parent, struct inv_system *s)
{
	const json_t *o;
	size_t mark;
	int r = sub_object(rd, parent, "nccl", &o);

	if (r < 0 || !o)
		return r;
	mark = enter(rd, "nccl");
	r = library_from_json(rd, o, &s->nccl);
	if (r == 0)
		r = jget_int(o, at(rd), "version_code", &s->nccl_version_code, rd->err);
	leave(rd, mark);
	return r;
}

static int limits_from_json(struct reader *rd, const json_t *parent, struct inv_system *s)
{
	const json_t *o;
	size_t mark;
	int r = sub_object(rd, parent, "limits", &o);

	if (r < 0 || !o)
		return r;
	mark = enter(rd, "limits");
	r = get_limit(rd, o, "memlock_soft", &s->memlock_soft);
	if (r == 0)
		r = get_limit(rd, o, "memlock_hard", &s->memlock_hard);
	leave(rd, mark);
	return r;
}

static int environment_from_json(struct reader *rd, const json_t *parent, struct inv_system *s)
{
	const json_t *o;
	size_t mark;
	int r = sub_object(rd, parent, "environment", &o);

	if (r < 0 || !o)
		return r;
	mark = enter(rd, "environment");
	r = settings_map_from_json(rd, o, &s->environment, &s->nr_environment);
	leave(rd, mark);
	return r;
}

static int gpu_device_from_json(struct reader *rd, const json_t *o, struct inv_gpu *g)
{
	int64_t index;
	int r;

	if (!json_is_object(o))
		return bad(rd, "", "expected an object");
	if ((r = jget_int(o, at(rd), "index", &index, rd->err)) < 0)
		return r;
	if (index < 0 || index > INT_MAX)
		return bad(rd, "index", "expected a GPU index");
	g->index = (unsigned)index;
	if ((r = jget_str(o, at(rd), "name", &g->name, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "uuid", &g->uuid, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "pci_bus_id", &g->pci_bus_id, rd->err)) < 0 ||
	    (r = jget_int(o, at(rd), "memory_total_bytes", &g->memory_total_bytes, rd->err)) < 0 ||
	    (r = jget_tri(o, at(rd), "unified_memory", &g->unified_memory, rd->err)) < 0 ||
	    (r = get_small_int(rd, o, "cc_major", &g->cc_major)) < 0 ||
	    (r = get_small_int(rd, o, "cc_minor", &g->cc_minor)) < 0 ||
	    (r = jget_tri(o, at(rd), "gpudirect_rdma_supported", &g->gpudirect_rdma, rd->err)) <
		    0 ||
	    (r = jget_tri(o, at(rd), "dma_buf_supported", &g->dma_buf, rd->err)) < 0)
		return r;
	return 0;
}

static int gpu_from_json(struct reader *rd, const json_t *parent, struct inv_gpu_info *gi)
{
	const json_t *o, *lib, *devs;
	size_t mark;
	int r = sub_object(rd, parent, "gpu", &o);

	if (r < 0 || !o)
		return r;
	mark = enter(rd, "gpu");
	if ((r = sub_object(rd, o, "nvml", &lib)) < 0)
		goto out;
	size_t m2 = enter(rd, "nvml");
	r = library_from_json(rd, lib, &gi->nvml);
	leave(rd, m2);
	if (r < 0 || (r = sub_object(rd, o, "cuda", &lib)) < 0)
		goto out;
	m2 = enter(rd, "cuda");
	r = library_from_json(rd, lib, &gi->cuda);
	leave(rd, m2);
	if (r < 0 ||
	    (r = jget_str(o, at(rd), "driver_version", &gi->driver_version, rd->err)) < 0 ||
	    (r = jget_int(o, at(rd), "cuda_driver_version", &gi->cuda_driver_version, rd->err)) <
		    0 ||
	    (r = sub_array(rd, o, "devices", &devs)) < 0)
		goto out;
	for (size_t i = 0; devs && i < json_array_size(devs); i++) {
		m2 = enter(rd, "devices[%zu]", i);
		r = gpu_device_from_json(rd, json_array_get(devs, i),
					 ARRAY_PUSH(gi->gpus, gi->nr_gpus));
		leave(rd, m2);
		if (r < 0)
			goto out;
	}
out:
	leave(rd, mark);
	return r;
}

static int modules_from_json(struct reader *rd, const json_t *o, const json_t *load,
			     struct inv_system *s)
{
	for (size_t i = 0; inventory_watched_modules[i]; i++) {
		const char *name = inventory_watched_modules[i];
		const json_t *v = o ? json_object_get(o, name) : NULL;
		struct inv_module *m = ARRAY_PUSH(s->modules, s->nr_modules);
		m->name = name;
		m->state = MODULE_UNKNOWN;
		if (load) {
			int r = jget_str(load, "system.modules_load", name, &m->load_file, rd->err);
			if (r < 0)
				return r;
		}
		if (!v || json_is_null(v))
			continue;
		const char *st = json_string_value(v);
		if (streq(st, "loaded"))
			m->state = MODULE_LOADED;
		else if (streq(st, "builtin"))
			m->state = MODULE_BUILTIN;
		else if (streq(st, "absent"))
			m->state = MODULE_ABSENT;
		else
			return bad(rd, name,
				   "expected \"loaded\", \"builtin\", \"absent\" or null");
	}
	return 0;
}

static int nccl_conf_from_json(struct reader *rd, const json_t *arr, struct inv_system *s)
{
	for (size_t i = 0; arr && i < json_array_size(arr); i++) {
		const json_t *e = json_array_get(arr, i);
		size_t mark = enter(rd, "nccl_conf[%zu]", i);
		struct inv_setting *set = ARRAY_PUSH(s->nccl_conf, s->nr_nccl_conf);
		int r = json_is_object(e) ? 0 : bad(rd, "", "expected an object");
		if (r == 0 && (r = jget_str(e, at(rd), "file", &set->file, rd->err)) == 0 &&
		    (r = jget_str(e, at(rd), "key", &set->key, rd->err)) == 0)
			r = jget_str(e, at(rd), "value", &set->value, rd->err);
		if (r == 0 && (!set->key || !set->value))
			r = bad(rd, "key", "an entry needs a key and a value");
		leave(rd, mark);
		if (r < 0)
			return r;
	}
	return 0;
}

static int system_from_json(struct reader *rd, const json_t *o, struct inv_system *s)
{
	const json_t *os, *drv, *mods, *load, *conf, *sysctl, *mem;
	size_t mark;
	int r;

	if ((r = jget_str(o, at(rd), "hostname", &s->hostname, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "kernel", &s->kernel, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "arch", &s->arch, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "home", &s->home, rd->err)) < 0 ||
	    (r = sub_object(rd, o, "os", &os)) < 0 ||
	    (r = sub_object(rd, o, "nvidia_driver", &drv)) < 0 ||
	    (r = sub_object(rd, o, "modules", &mods)) < 0 ||
	    (r = sub_object(rd, o, "modules_load", &load)) < 0 ||
	    (r = sub_array(rd, o, "nccl_conf", &conf)) < 0 ||
	    (r = sub_object(rd, o, "sysctl", &sysctl)) < 0 ||
	    (r = sub_object(rd, o, "memory", &mem)) < 0)
		return r;
	if (os) {
		mark = enter(rd, "os");
		if ((r = jget_str(os, at(rd), "id", &s->os_id, rd->err)) == 0 &&
		    (r = jget_str(os, at(rd), "version_id", &s->os_version_id, rd->err)) == 0)
			r = jget_str(os, at(rd), "pretty_name", &s->os_pretty_name, rd->err);
		leave(rd, mark);
		if (r < 0)
			return r;
	}
	if (drv) {
		mark = enter(rd, "nvidia_driver");
		if ((r = jget_str(drv, at(rd), "version", &s->nvidia_driver, rd->err)) == 0)
			r = jget_tri(drv, at(rd), "open_kernel_module", &s->nvidia_open_module,
				     rd->err);
		leave(rd, mark);
		if (r < 0)
			return r;
	}
	mark = enter(rd, "modules");
	r = modules_from_json(rd, mods, load, s);
	leave(rd, mark);
	if (r < 0 || (r = nccl_from_json(rd, o, s)) < 0 ||
	    (r = nccl_conf_from_json(rd, conf, s)) < 0 ||
	    (r = environment_from_json(rd, o, s)) < 0 || (r = limits_from_json(rd, o, s)) < 0)
		return r;
	if (sysctl) {
		mark = enter(rd, "sysctl");
		if ((r = jget_int(sysctl, at(rd), "net.core.rmem_max", &s->rmem_max, rd->err)) == 0)
			r = jget_int(sysctl, at(rd), "net.core.wmem_max", &s->wmem_max, rd->err);
		leave(rd, mark);
		if (r < 0)
			return r;
	}
	if (mem) {
		mark = enter(rd, "memory");
		if ((r = jget_int(mem, at(rd), "mem_total_bytes", &s->mem_total, rd->err)) == 0 &&
		    (r = jget_int(mem, at(rd), "mem_available_bytes", &s->mem_available,
				  rd->err)) == 0)
			r = jget_int(mem, at(rd), "cma_total_bytes", &s->cma_total, rd->err);
		leave(rd, mark);
	}
	return r;
}

static int counters_from_json(struct reader *rd, const json_t *o, struct inv_counter **arr,
			      size_t *nr)
{
	const char *key;
	json_t *v;

	if (!o)
		return 0;
	json_object_foreach((json_t *)o, key, v)
	{
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return bad(rd, key, "expected a non-negative integer");
		struct inv_counter *c = ARRAY_PUSH(*arr, *nr);
		c->name = xstrdup(key);
		c->value = (int64_t)json_integer_value(v);
	}
	return 0;
}

static int gid_from_json(struct reader *rd, const json_t *o, struct inv_gid *g)
{
	int64_t index;
	char *text = NULL;
	int r;

	if (!json_is_object(o))
		return bad(rd, "", "expected an object");
	if ((r = jget_int(o, at(rd), "index", &index, rd->err)) < 0)
		return r;
	if (index < 0 || index > 65535)
		return bad(rd, "index", "expected a GID index");
	g->index = (unsigned)index;
	if ((r = jget_str(o, at(rd), "gid", &text, rd->err)) < 0)
		return r;
	if (!text || parse_gid(text, g->raw) < 0) {
		free(text);
		return bad(rd, "gid",
			   "expected a GID such as fe80:0000:0000:0000:0000:0000:0000:0001");
	}
	free(text);
	if ((r = jget_str(o, at(rd), "type", &g->type, rd->err)) < 0)
		return r;
	return jget_str(o, at(rd), "ndev", &g->ndev, rd->err);
}

static int port_from_json(struct reader *rd, const json_t *o, struct inv_port *p)
{
	const json_t *gids, *ctr, *hw;
	int64_t num;
	int r;

	p->state = p->phys_state = (int)INV_UNKNOWN;
	if (!json_is_object(o))
		return bad(rd, "", "expected an object");
	if ((r = jget_int(o, at(rd), "port", &num, rd->err)) < 0)
		return r;
	if (num < 1 || num > 255)
		return bad(rd, "port", "expected a port number (1-255)");
	p->num = (unsigned)num;
	if ((r = jget_str(o, at(rd), "state", &p->state_name, rd->err)) < 0 ||
	    (r = get_small_int(rd, o, "state_code", &p->state)) < 0 ||
	    (r = jget_str(o, at(rd), "phys_state", &p->phys_state_name, rd->err)) < 0 ||
	    (r = get_small_int(rd, o, "phys_state_code", &p->phys_state)) < 0 ||
	    (r = jget_str(o, at(rd), "rate", &p->rate, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "link_layer", &p->link_layer, rd->err)) < 0 ||
	    (r = jget_int(o, at(rd), "lid", &p->lid, rd->err)) < 0 ||
	    (r = sub_array(rd, o, "gids", &gids)) < 0 ||
	    (r = sub_object(rd, o, "counters", &ctr)) < 0 ||
	    (r = sub_object(rd, o, "hw_counters", &hw)) < 0)
		return r;
	for (size_t i = 0; gids && i < json_array_size(gids); i++) {
		size_t mark = enter(rd, "gids[%zu]", i);
		r = gid_from_json(rd, json_array_get(gids, i), ARRAY_PUSH(p->gids, p->nr_gids));
		leave(rd, mark);
		if (r < 0)
			return r;
	}
	size_t mark = enter(rd, "counters");
	r = counters_from_json(rd, ctr, &p->counters, &p->nr_counters);
	leave(rd, mark);
	if (r < 0)
		return r;
	mark = enter(rd, "hw_counters");
	r = counters_from_json(rd, hw, &p->hw_counters, &p->nr_hw_counters);
	leave(rd, mark);
	return r;
}

static int rdma_from_json(struct reader *rd, const json_t *o, struct inv_rdma_dev *d)
{
	const json_t *nds, *ports;
	int r;

	strvec_init(&d->netdevs);
	if (!json_is_object(o))
		return bad(rd, "", "expected an object");
	if ((r = jget_str(o, at(rd), "name", &d->name, rd->err)) < 0)
		return r;
	if (!d->name)
		return bad(rd, "name", "every RDMA device needs a name");
	if ((r = jget_str(o, at(rd), "hca_type", &d->hca_type, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "fw_ver", &d->fw_ver, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "board_id", &d->board_id, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "node_guid", &d->node_guid, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "sys_image_guid", &d->sys_image_guid, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "pci_address", &d->pci_address, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "phys_port_name", &d->phys_port_name, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "phys_switch_id", &d->phys_switch_id, rd->err)) < 0 ||
	    (r = sub_array(rd, o, "netdevs", &nds)) < 0 ||
	    (r = sub_array(rd, o, "ports", &ports)) < 0)
		return r;
	for (size_t i = 0; nds && i < json_array_size(nds); i++) {
		const char *s = json_string_value(json_array_get(nds, i));
		if (!s)
			return bad(rd, "netdevs", "expected an array of strings");
		strvec_push(&d->netdevs, s);
	}
	for (size_t i = 0; ports && i < json_array_size(ports); i++) {
		size_t mark = enter(rd, "ports[%zu]", i);
		r = port_from_json(rd, json_array_get(ports, i), ARRAY_PUSH(d->ports, d->nr_ports));
		leave(rd, mark);
		if (r < 0)
			return r;
	}
	return 0;
}

static int addrs_from_json(struct reader *rd, const json_t *arr, int family, struct inv_netdev *n)
{
	const char *key = family == AF_INET ? "ipv4" : "ipv6";

	for (size_t i = 0; arr && i < json_array_size(arr); i++) {
		const json_t *e = json_array_get(arr, i);
		const char *a = json_string_value(json_object_get(e, "address"));
		const json_t *plen = json_object_get(e, "prefix_len");
		unsigned char bin[16];
		if (!a || inet_pton(family, a, bin) != 1 || !json_is_integer(plen) ||
		    json_integer_value(plen) < 0 ||
		    json_integer_value(plen) > (family == AF_INET ? 32 : 128))
			return bad(rd, key,
				   "expected entries {\"address\": ..., \"prefix_len\": ...}");
		struct inv_addr *ad = ARRAY_PUSH(n->addrs, n->nr_addrs);
		ad->family = family;
		ad->address = xstrdup(a);
		ad->prefix_len = (unsigned)json_integer_value(plen);
	}
	return 0;
}

static int netdev_from_json(struct reader *rd, const json_t *o, struct inv_netdev *n)
{
	const json_t *v4, *v6;
	int r;

	if (!json_is_object(o))
		return bad(rd, "", "expected an object");
	if ((r = jget_str(o, at(rd), "name", &n->name, rd->err)) < 0)
		return r;
	if (!n->name)
		return bad(rd, "name", "every netdev needs a name");
	if ((r = jget_int(o, at(rd), "ifindex", &n->ifindex, rd->err)) < 0 ||
	    (r = jget_int(o, at(rd), "mtu", &n->mtu, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "operstate", &n->operstate, rd->err)) < 0 ||
	    (r = jget_tri(o, at(rd), "carrier", &n->carrier, rd->err)) < 0 ||
	    (r = jget_int(o, at(rd), "speed_mbps", &n->speed_mbps, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "address", &n->address, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "driver", &n->driver, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "pci_address", &n->pci_address, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "phys_port_name", &n->phys_port_name, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "phys_switch_id", &n->phys_switch_id, rd->err)) < 0 ||
	    (r = jget_tri(o, at(rd), "default_route", &n->default_route, rd->err)) < 0 ||
	    (r = sub_array(rd, o, "ipv4", &v4)) < 0 || (r = sub_array(rd, o, "ipv6", &v6)) < 0)
		return r;
	if ((r = addrs_from_json(rd, v4, AF_INET, n)) < 0)
		return r;
	return addrs_from_json(rd, v6, AF_INET6, n);
}

static int pci_from_json(struct reader *rd, const json_t *o, struct inv_pci *p)
{
	int r;

	if (!json_is_object(o))
		return bad(rd, "", "expected an object");
	if ((r = jget_str(o, at(rd), "address", &p->address, rd->err)) < 0)
		return r;
	if (!p->address)
		return bad(rd, "address", "every PCI function needs an address");
	if ((r = jget_str(o, at(rd), "vendor_id", &p->vendor_id, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "device_id", &p->device_id, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "current_link_speed", &p->current_link_speed, rd->err)) < 0 ||
	    (r = jget_int(o, at(rd), "current_link_width", &p->current_link_width, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "max_link_speed", &p->max_link_speed, rd->err)) < 0 ||
	    (r = jget_int(o, at(rd), "max_link_width", &p->max_link_width, rd->err)) < 0 ||
	    (r = jget_int(o, at(rd), "aer_fatal", &p->aer_fatal, rd->err)) < 0 ||
	    (r = jget_int(o, at(rd), "aer_nonfatal", &p->aer_nonfatal, rd->err)) < 0 ||
	    (r = jget_int(o, at(rd), "aer_correctable", &p->aer_correctable, rd->err)) < 0)
		return r;
	return 0;
}

/* Read the array doc[key], calling fn on each element pushed onto *arr. */
#define READ_ARRAY(rd, doc, key, arr, nr, fn)                                                      \
	do {                                                                                       \
		const json_t *a_;                                                                  \
		if ((r = sub_array((rd), (doc), (key), &a_)) < 0)                                  \
			goto out;                                                                  \
		for (size_t i_ = 0; a_ && i_ < json_array_size(a_); i_++) {                        \
			size_t m_ = enter((rd), "%s[%zu]", (key), i_);                             \
			r = fn((rd), json_array_get(a_, i_), ARRAY_PUSH((arr), (nr)));             \
			leave((rd), m_);                                                           \
			if (r < 0)                                                                 \
				goto out;                                                          \
		}                                                                                  \
	} while (0)

static int problem_from_json(struct reader *rd, const json_t *o, struct inv_problem *p)
{
	int r;

	if (!json_is_object(o))
		return bad(rd, "", "expected an object");
	if ((r = jget_str(o, at(rd), "path", &p->path, rd->err)) < 0 ||
	    (r = jget_str(o, at(rd), "message", &p->message, rd->err)) < 0)
		return r;
	if (!p->message)
		return bad(rd, "message", "expected a string");
	return 0;
}

int inventory_from_json(struct inventory *inv, const json_t *doc, struct strbuf *err)
{
	struct reader rd = { .err = err, .path = STRBUF_INIT };
	const json_t *sys;
	int64_t version;
	int r;

	if ((r = jget_int(doc, "", "schema_version", &version, err)) < 0)
		goto out;
	if (version < 0) {
		strbuf_addstr(err, "schema_version: missing; this is not a sparkctl inventory");
		r = -EINVAL;
		goto out;
	}
	if (version > INVENTORY_SCHEMA_VERSION) {
		strbuf_addf(err,
			    "schema_version %" PRId64 " is newer than this sparkctl reads (%d)",
			    version, INVENTORY_SCHEMA_VERSION);
		r = -EINVAL;
		goto out;
	}
	if ((r = jget_str(doc, "", "sparkctl_version", &inv->sparkctl_version, err)) < 0 ||
	    (r = jget_str(doc, "", "source", &inv->source, err)) < 0 ||
	    (r = jget_str(doc, "", "root", &inv->root, err)) < 0 ||
	    (r = sub_object(&rd, doc, "system", &sys)) < 0)
		goto out;
	if (sys) {
		size_t mark = enter(&rd, "system");
		r = system_from_json(&rd, sys, &inv->sys);
		leave(&rd, mark);
		if (r < 0)
			goto out;
	} else {
		r = modules_from_json(&rd, NULL, NULL, &inv->sys);
	}
	READ_ARRAY(&rd, doc, "rdma_devices", inv->rdma, inv->nr_rdma, rdma_from_json);
	READ_ARRAY(&rd, doc, "netdevs", inv->netdevs, inv->nr_netdevs, netdev_from_json);
	READ_ARRAY(&rd, doc, "pci_functions", inv->pci, inv->nr_pci, pci_from_json);
	if ((r = gpu_from_json(&rd, doc, &inv->gpu)) < 0)
		goto out;
	READ_ARRAY(&rd, doc, "problems", inv->problems, inv->nr_problems, problem_from_json);
out:
	strbuf_release(&rd.path);
	if (r < 0)
		inventory_release(inv);
	return r < 0 ? r : 0;
}

int host_facts_from_json(struct inventory *inv, const json_t *doc, struct strbuf *err)
{
	struct reader rd = { .err = err, .path = STRBUF_INIT };
	struct inv_system *s = &inv->sys;
	int r;

	if ((r = jget_str(doc, "", "arch", &s->arch, err)) < 0 ||
	    (r = jget_str(doc, "", "home", &s->home, err)) < 0 ||
	    (r = environment_from_json(&rd, doc, s)) < 0 ||
	    (r = limits_from_json(&rd, doc, s)) < 0 || (r = nccl_from_json(&rd, doc, s)) < 0 ||
	    (r = gpu_from_json(&rd, doc, &inv->gpu)) < 0)
		goto out;
out:
	strbuf_release(&rd.path);
	return r;
}

int inventory_load(struct inventory *inv, const char *path, struct strbuf *err)
{
	json_t *doc;
	int r = json_load_path(path, &doc, err);

	if (r < 0)
		return r;
	r = inventory_from_json(inv, doc, err);
	if (r < 0 && !streq(path, "-")) {
		/* Name the file in front of the field path. */
		struct strbuf msg = STRBUF_INIT;
		strbuf_addf(&msg, "%s: %s", path, err->buf);
		strbuf_reset(err);
		strbuf_addstr(err, msg.buf);
		strbuf_release(&msg);
	}
	json_decref(doc);
	return r;
}
