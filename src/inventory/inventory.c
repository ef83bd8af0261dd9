#include "sparkctl.h"

#include "inventory/inventory.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"

const char *const inventory_watched_modules[] = {
	"mlx5_core", "mlx5_ib",	  "ib_core",	  "ib_uverbs",	"rdma_ucm",   "rdma_cm",
	"ib_umad",   "ib_ipoib",  "nvidia",	  "nvidia_uvm", "nvidia_drm", "nvidia_peermem",
	"nvme_tcp",  "nvme_rdma", "nvme_fabrics", NULL,
};

/* Exact names and, ending in '_', prefixes of the variables worth recording. */
static const char *const recorded_env[] = {
	"NCCL_",
	"UCX_",
	"GLOO_SOCKET_IFNAME",
	"TP_SOCKET_IFNAME",
	"OMPI_MCA_btl_tcp_if_include",
	"OMPI_MCA_btl_tcp_if_exclude",
	"CUDA_VISIBLE_DEVICES",
	"LD_LIBRARY_PATH",
};

bool inventory_env_is_recorded(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(recorded_env); i++) {
		const char *r = recorded_env[i];
		size_t n = strlen(r);
		if (r[n - 1] == '_' ? !strncmp(name, r, n) && name[n] : streq(name, r))
			return true;
	}
	return false;
}

void inventory_init(struct inventory *inv)
{
	memset(inv, 0, sizeof(*inv));
	inv->sys.nvidia_open_module = TRI_UNKNOWN;
	inv->sys.nccl.available = TRI_UNKNOWN;
	inv->sys.nccl_version_code = INV_UNKNOWN;
	inv->sys.memlock_soft = INV_UNKNOWN;
	inv->sys.memlock_hard = INV_UNKNOWN;
	inv->sys.rmem_max = INV_UNKNOWN;
	inv->sys.wmem_max = INV_UNKNOWN;
	inv->sys.mem_total = INV_UNKNOWN;
	inv->sys.mem_available = INV_UNKNOWN;
	inv->sys.cma_total = INV_UNKNOWN;
	inv->gpu.nvml.available = TRI_UNKNOWN;
	inv->gpu.cuda.available = TRI_UNKNOWN;
	inv->gpu.cuda_driver_version = INV_UNKNOWN;
}

static void counters_release(struct inv_counter *c, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		free(c[i].name);
	free(c);
}

static void port_release(struct inv_port *p)
{
	free(p->state_name);
	free(p->phys_state_name);
	free(p->rate);
	free(p->link_layer);
	for (size_t i = 0; i < p->nr_gids; i++) {
		free(p->gids[i].type);
		free(p->gids[i].ndev);
	}
	free(p->gids);
	counters_release(p->counters, p->nr_counters);
	counters_release(p->hw_counters, p->nr_hw_counters);
}

static void rdma_release(struct inv_rdma_dev *d)
{
	free(d->name);
	free(d->hca_type);
	free(d->fw_ver);
	free(d->board_id);
	free(d->node_guid);
	free(d->sys_image_guid);
	free(d->pci_address);
	strvec_clear(&d->netdevs);
	free(d->phys_port_name);
	free(d->phys_switch_id);
	for (size_t i = 0; i < d->nr_ports; i++)
		port_release(&d->ports[i]);
	free(d->ports);
}

static void netdev_release(struct inv_netdev *n)
{
	free(n->name);
	free(n->operstate);
	free(n->address);
	free(n->driver);
	free(n->pci_address);
	free(n->phys_port_name);
	free(n->phys_switch_id);
	for (size_t i = 0; i < n->nr_addrs; i++)
		free(n->addrs[i].address);
	free(n->addrs);
}

static void pci_release(struct inv_pci *p)
{
	free(p->address);
	free(p->vendor_id);
	free(p->device_id);
	free(p->current_link_speed);
	free(p->max_link_speed);
}

void inv_library_release(struct inv_library *lib)
{
	free(lib->reason);
	free(lib->path);
	free(lib->version);
	memset(lib, 0, sizeof(*lib));
	lib->available = TRI_UNKNOWN;
}

void inv_gpu_info_release(struct inv_gpu_info *gi)
{
	inv_library_release(&gi->nvml);
	inv_library_release(&gi->cuda);
	free(gi->driver_version);
	for (size_t i = 0; i < gi->nr_gpus; i++) {
		free(gi->gpus[i].name);
		free(gi->gpus[i].uuid);
		free(gi->gpus[i].pci_bus_id);
	}
	free(gi->gpus);
	memset(gi, 0, sizeof(*gi));
	gi->nvml.available = TRI_UNKNOWN;
	gi->cuda.available = TRI_UNKNOWN;
	gi->cuda_driver_version = INV_UNKNOWN;
}

void inv_setting_array_release(struct inv_setting *s, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		free(s[i].key);
		free(s[i].value);
		free(s[i].file);
	}
	free(s);
}

static void system_release(struct inv_system *s)
{
	free(s->hostname);
	free(s->kernel);
	free(s->arch);
	free(s->home);
	free(s->os_id);
	free(s->os_version_id);
	free(s->os_pretty_name);
	free(s->nvidia_driver);
	for (size_t i = 0; i < s->nr_modules; i++)
		free(s->modules[i].load_file);
	free(s->modules);
	inv_library_release(&s->nccl);
	inv_setting_array_release(s->nccl_conf, s->nr_nccl_conf);
	inv_setting_array_release(s->environment, s->nr_environment);
}

void inventory_release(struct inventory *inv)
{
	free(inv->sparkctl_version);
	free(inv->source);
	free(inv->root);
	system_release(&inv->sys);
	for (size_t i = 0; i < inv->nr_rdma; i++)
		rdma_release(&inv->rdma[i]);
	free(inv->rdma);
	for (size_t i = 0; i < inv->nr_netdevs; i++)
		netdev_release(&inv->netdevs[i]);
	free(inv->netdevs);
	for (size_t i = 0; i < inv->nr_pci; i++)
		pci_release(&inv->pci[i]);
	free(inv->pci);
	inv_gpu_info_release(&inv->gpu);
	for (size_t i = 0; i < inv->nr_problems; i++) {
		free(inv->problems[i].path);
		free(inv->problems[i].message);
	}
	free(inv->problems);
	inventory_init(inv);
}

void inventory_add_problem(struct inventory *inv, const char *path, const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	struct inv_problem *p = ARRAY_PUSH(inv->problems, inv->nr_problems);
	p->path = xstrdup_or_null(path);
	p->message = strbuf_detach(&msg, NULL);
}

const struct inv_rdma_dev *inventory_rdma(const struct inventory *inv, const char *name)
{
	for (size_t i = 0; i < inv->nr_rdma; i++)
		if (streq(inv->rdma[i].name, name))
			return &inv->rdma[i];
	return NULL;
}

const struct inv_netdev *inventory_netdev(const struct inventory *inv, const char *name)
{
	for (size_t i = 0; i < inv->nr_netdevs; i++)
		if (streq(inv->netdevs[i].name, name))
			return &inv->netdevs[i];
	return NULL;
}

const struct inv_pci *inventory_pci(const struct inventory *inv, const char *address)
{
	for (size_t i = 0; i < inv->nr_pci; i++)
		if (streq(inv->pci[i].address, address))
			return &inv->pci[i];
	return NULL;
}

const char *inventory_env(const struct inventory *inv, const char *key)
{
	for (size_t i = 0; i < inv->sys.nr_environment; i++)
		if (streq(inv->sys.environment[i].key, key))
			return inv->sys.environment[i].value;
	return NULL;
}

const char *inventory_nccl_setting(const struct inventory *inv, const char *key,
				   const char **ret_source)
{
	const char *v = inventory_env(inv, key);

	if (v) {
		if (ret_source)
			*ret_source = "environment";
		return v;
	}
	/* nccl_conf is in NCCL's reading order, and NCCL never overwrites a value. */
	for (size_t i = 0; i < inv->sys.nr_nccl_conf; i++) {
		if (streq(inv->sys.nccl_conf[i].key, key)) {
			if (ret_source)
				*ret_source = inv->sys.nccl_conf[i].file;
			return inv->sys.nccl_conf[i].value;
		}
	}
	if (ret_source)
		*ret_source = NULL;
	return NULL;
}
