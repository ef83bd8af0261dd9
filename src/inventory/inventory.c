#include "sparkctl.h"

#include "inventory/codec.h"
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
	/* where slurm.conf is, when not /etc/slurm/slurm.conf */
	"SLURM_CONF",
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
	inv_fields_init(&inv_schema_inventory, inv);
}

void inventory_release(struct inventory *inv)
{
	inv_fields_release(&inv_schema_inventory, inv);
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
