#include "sparkctl.h"

#include <dlfcn.h>

#include "lib/dl.h"
#include "nv/nccl.h"

void nccl_version_string(int code, struct strbuf *out)
{
	if (code >= 20900)
		strbuf_addf(out, "%d.%d.%d", code / 10000, code / 100 % 100, code % 100);
	else
		strbuf_addf(out, "%d.%d.%d", code / 1000, code / 100 % 10, code % 100);
}

int nccl_probe_version(int *ret_code, char **ret_path, struct strbuf *err)
{
	int (*get_version)(int *version) = NULL;
	const struct dl_symbol syms[] = {
		{ { "ncclGetVersion" }, (void **)&get_version, true },
	};
	void *h;
	int code = 0, r;

	r = dl_open(NCCL_SONAME, &h, err);
	if (r < 0)
		return r;
	r = dl_resolve(h, syms, ARRAY_SIZE(syms), err);
	if (r == 0 && get_version(&code) != 0) {
		strbuf_addstr(err, "ncclGetVersion failed");
		r = -EIO;
	}
	if (r == 0) {
		*ret_code = code;
		*ret_path = dl_path(h);
	}
	dlclose(h);
	return r;
}

int nccl_open(struct nccl *nccl, struct strbuf *err)
{
	const struct dl_symbol syms[] = {
		{ { "ncclGetVersion" }, (void **)&nccl->get_version, true },
		{ { "ncclGetUniqueId" }, (void **)&nccl->get_unique_id, true },
		{ { "ncclCommInitRank" }, (void **)&nccl->comm_init_rank, true },
		{ { "ncclCommInitRankConfig" }, (void **)&nccl->comm_init_rank_config, false },
		{ { "ncclMemAlloc" }, (void **)&nccl->mem_alloc, false },
		{ { "ncclMemFree" }, (void **)&nccl->mem_free, false },
		{ { "ncclCommDestroy" }, (void **)&nccl->comm_destroy, true },
		{ { "ncclCommAbort" }, (void **)&nccl->comm_abort, true },
		{ { "ncclCommFinalize" }, (void **)&nccl->comm_finalize, false },
		{ { "ncclCommGetAsyncError" }, (void **)&nccl->comm_get_async_error, true },
		{ { "ncclGetErrorString" }, (void **)&nccl->get_error_string, true },
		{ { "ncclGetLastError" }, (void **)&nccl->get_last_error, false },
		{ { "ncclAllReduce" }, (void **)&nccl->all_reduce, true },
		{ { "ncclAllGather" }, (void **)&nccl->all_gather, true },
		{ { "ncclReduceScatter" }, (void **)&nccl->reduce_scatter, true },
		{ { "ncclBroadcast" }, (void **)&nccl->broadcast, true },
		{ { "ncclReduce" }, (void **)&nccl->reduce, true },
		{ { "ncclAlltoAll" }, (void **)&nccl->alltoall, false },
		{ { "ncclSend" }, (void **)&nccl->send, true },
		{ { "ncclRecv" }, (void **)&nccl->recv, true },
		{ { "ncclGroupStart" }, (void **)&nccl->group_start, true },
		{ { "ncclGroupEnd" }, (void **)&nccl->group_end, true },
	};
	int r;

	memset(nccl, 0, sizeof(*nccl));
	r = dl_open(NCCL_SONAME, &nccl->handle, err);
	if (r < 0)
		return r;
	r = dl_resolve(nccl->handle, syms, ARRAY_SIZE(syms), err);
	if (r == 0 && nccl->get_version(&nccl->version) != NCCL_SUCCESS) {
		strbuf_addstr(err, "ncclGetVersion failed");
		r = -EIO;
	}
	if (r < 0) {
		dlclose(nccl->handle);
		memset(nccl, 0, sizeof(*nccl));
	}
	return r;
}

void nccl_config_init(struct nccl_config_v22800 *config)
{
	*config = (struct nccl_config_v22800){
		.size = sizeof(*config),
		.magic = NCCL_CONFIG_MAGIC,
		.version = 22800,
		.blocking = NCCL_CONFIG_UNDEF_INT,
		.cga_cluster_size = NCCL_CONFIG_UNDEF_INT,
		.min_ctas = NCCL_CONFIG_UNDEF_INT,
		.max_ctas = NCCL_CONFIG_UNDEF_INT,
		.split_share = NCCL_CONFIG_UNDEF_INT,
		.traffic_class = NCCL_CONFIG_UNDEF_INT,
		.collnet_enable = NCCL_CONFIG_UNDEF_INT,
		.cta_policy = NCCL_CONFIG_UNDEF_INT,
		.shrink_share = NCCL_CONFIG_UNDEF_INT,
		.nvls_ctas = NCCL_CONFIG_UNDEF_INT,
		.n_channels_per_net_peer = NCCL_CONFIG_UNDEF_INT,
		.nvlink_centric_sched = NCCL_CONFIG_UNDEF_INT,
	};
}

void nccl_close(struct nccl *nccl)
{
	if (nccl->handle)
		dlclose(nccl->handle);
	memset(nccl, 0, sizeof(*nccl));
}

void nccl_describe(const struct nccl *nccl, nccl_comm comm, nccl_result r, struct strbuf *out)
{
	const char *last = nccl->get_last_error ? nccl->get_last_error(comm) : NULL;

	strbuf_addstr(out, nccl->get_error_string ? nccl->get_error_string(r) : "NCCL error");
	if (last && *last)
		strbuf_addf(out, " (%s)", last);
}
