/*
 * Checks of a node's GPU, driver, NCCL library, limits and memory.
 */
#include "sparkctl.h"

#include <ctype.h>

#include "check/check.h"
#include "lib/parse.h"
#include "lib/xalloc.h"

static bool has_unified_gpu(const struct inventory *inv)
{
	for (size_t i = 0; i < inv->gpu.nr_gpus; i++)
		if (inv->gpu.gpus[i].unified_memory == TRI_YES)
			return true;
	return false;
}

static enum inv_module_state module(const struct inventory *inv, const char *name)
{
	for (size_t i = 0; i < inv->sys.nr_modules; i++)
		if (streq(inv->sys.modules[i].name, name))
			return inv->sys.modules[i].state;
	return MODULE_UNKNOWN;
}

void check_gpudirect_support(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	enum inv_module_state peermem = module(inv, "nvidia_peermem");

	if (!inv->gpu.nr_gpus) {
		report(ctx, CHECK_SKIP, NULL, "no GPU in the inventory");
		return;
	}
	for (size_t i = 0; i < inv->gpu.nr_gpus; i++) {
		const struct inv_gpu *g = &inv->gpu.gpus[i];
		const char *name = g->name ? g->name : "?";
		if (g->gpudirect_rdma < 0) {
			report(ctx, CHECK_SKIP, NULL,
			       "GPU %u: GPUDirect support unknown (CUDA: %s)", g->index,
			       inv->gpu.cuda.reason ? inv->gpu.cuda.reason : "not asked");
		} else if (g->gpudirect_rdma == TRI_NO) {
			report(ctx, CHECK_PASS, NULL,
			       "GPU %u (%s) has no GPUDirect RDMA%s: NCCL stages through host "
			       "memory%s",
			       g->index, name, g->dma_buf == TRI_NO ? " and no DMA-BUF" : "",
			       g->unified_memory == TRI_YES ? " (expected on GB10)" : "");
		} else if (g->dma_buf != TRI_YES && peermem == MODULE_ABSENT) {
			/* NCCL needs nvidia_peermem or DMA-BUF to use GPUDirect: neither is there.
			 */
			report(ctx, CHECK_WARN,
			       "sudo modprobe nvidia-peermem (persist in /etc/modules-load.d/), or "
			       "use "
			       "the open kernel module for DMA-BUF",
			       "GPU %u (%s) supports GPUDirect RDMA, but neither nvidia_peermem "
			       "nor "
			       "DMA-BUF is available: NCCL disables GPUDirect silently",
			       g->index, name);
		} else {
			report(ctx, CHECK_PASS, NULL, "GPU %u (%s): GPUDirect RDMA through %s",
			       g->index, name,
			       g->dma_buf == TRI_YES ? "DMA-BUF" : "nvidia_peermem");
		}
	}
}

void check_gpudirect_peermem(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	enum inv_module_state st = MODULE_UNKNOWN;
	const char *load_file = NULL;
	const struct inv_gpu *no_gdr = NULL;

	for (size_t i = 0; i < inv->sys.nr_modules; i++) {
		if (streq(inv->sys.modules[i].name, "nvidia_peermem")) {
			st = inv->sys.modules[i].state;
			load_file = inv->sys.modules[i].load_file;
		}
	}
	for (size_t i = 0; i < inv->gpu.nr_gpus && !no_gdr; i++)
		if (inv->gpu.gpus[i].gpudirect_rdma == TRI_NO)
			no_gdr = &inv->gpu.gpus[i];
	if (load_file && no_gdr) {
		char *fix = xasprintf("remove nvidia-peermem from %s%s", load_file,
				      st == MODULE_LOADED ? "; sudo rmmod nvidia_peermem" : "");
		report(ctx, CHECK_WARN, fix,
		       "%s loads nvidia_peermem at boot, but GPU %u (%s) has no GPUDirect RDMA: a "
		       "leftover of settings that hang",
		       load_file, no_gdr->index, no_gdr->name ? no_gdr->name : "?");
		free(fix);
	} else if (st == MODULE_UNKNOWN)
		report(ctx, CHECK_SKIP, NULL, "the loaded modules are unknown");
	else if (st != MODULE_ABSENT && no_gdr)
		report(ctx, CHECK_WARN,
		       "sudo rmmod nvidia_peermem; remove it from /etc/modules-load.d/ and any "
		       "NCCL "
		       "GPUDirect settings",
		       "nvidia_peermem is loaded but GPU %u (%s) has no GPUDirect RDMA: a leftover "
		       "of "
		       "settings that hang",
		       no_gdr->index, no_gdr->name ? no_gdr->name : "?");
	else
		report(ctx, CHECK_PASS, NULL, "nvidia_peermem is %s%s",
		       st == MODULE_ABSENT ? "not loaded" : "loaded",
		       st == MODULE_ABSENT && no_gdr ? " (it cannot work on this GPU)" : "");
}

static void limit_text(int64_t v, char buf[32])
{
	if (v == INV_UNLIMITED)
		snprintf(buf, 32, "unlimited");
	else if (v >= 1 << 20)
		snprintf(buf, 32, "%" PRId64 " MiB", v >> 20);
	else
		snprintf(buf, 32, "%" PRId64 " KiB", v >> 10);
}

void check_limits_memlock(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	char soft[32], hard[32];

	if (inv->sys.memlock_soft == INV_UNKNOWN) {
		report(ctx, CHECK_SKIP, NULL, "RLIMIT_MEMLOCK is unknown");
		return;
	}
	limit_text(inv->sys.memlock_soft, soft);
	limit_text(inv->sys.memlock_hard, hard);
	if (inv->sys.memlock_soft == INV_UNLIMITED)
		report(ctx, CHECK_PASS, NULL, "locked memory is unlimited");
	else
		report(ctx, CHECK_FAIL,
		       "add '* soft memlock unlimited' and '* hard memlock unlimited' to "
		       "/etc/security/limits.conf and log in again; containers: --ulimit "
		       "memlock=-1",
		       "RLIMIT_MEMLOCK is %s (hard %s): RDMA cannot register its buffers "
		       "(ibv_reg_mr, ibv_create_cq fail with ENOMEM)",
		       soft, hard);
}

void check_memory_cma(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;

	if (!has_unified_gpu(inv))
		report(ctx, CHECK_SKIP, NULL, "no unified-memory GPU");
	else if (inv->sys.cma_total < 0)
		report(ctx, CHECK_SKIP, NULL, "CmaTotal is unknown");
	else if (inv->sys.cma_total == 0)
		report(ctx, CHECK_FAIL,
		       "boot a kernel with a CMA area (DGX OS kernels 6.17.0-1031-nvidia and later "
		       "have one), or add cma=1G to the kernel command line",
		       "CmaTotal is 0 on a unified-memory GPU: RDMA memory registration fails with "
		       "ENOMEM (kernel %s)",
		       inv->sys.kernel ? inv->sys.kernel : "?");
	else
		report(ctx, CHECK_PASS, NULL, "CmaTotal is %" PRId64 " MiB",
		       inv->sys.cma_total >> 20);
}

void check_net_buffers(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	const int64_t want = 4 << 20;

	if (inv->sys.rmem_max < 0 || inv->sys.wmem_max < 0)
		report(ctx, CHECK_SKIP, NULL, "net.core.rmem_max/wmem_max are unknown");
	else if (inv->sys.rmem_max < want || inv->sys.wmem_max < want)
		report(ctx, CHECK_WARN,
		       "sudo sysctl -w net.core.rmem_max=67108864 net.core.wmem_max=67108864 "
		       "(persist "
		       "in /etc/sysctl.d/)",
		       "net.core.rmem_max=%" PRId64 " and wmem_max=%" PRId64
		       ": small socket buffers slow bootstrap and any TCP fallback",
		       inv->sys.rmem_max, inv->sys.wmem_max);
	else
		report(ctx, CHECK_PASS, NULL, "net.core.rmem_max=%" PRId64 ", wmem_max=%" PRId64,
		       inv->sys.rmem_max, inv->sys.wmem_max);
}

/* Whether name is the netdev of one of the node's RDMA (CX-7) ports. */
static bool fabric_netdev(const struct inventory *inv, const char *name)
{
	for (size_t d = 0; d < inv->nr_rdma; d++)
		if (strvec_contains(&inv->rdma[d].netdevs, name))
			return true;
	return false;
}

void check_net_nm_autoconnect(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	size_t bad = 0;

	for (size_t i = 0; i < inv->sys.nr_nm_profiles; i++) {
		const struct inv_nm_profile *p = &inv->sys.nm_profiles[i];
		if (!p->interface_name || !fabric_netdev(inv, p->interface_name) ||
		    p->autoconnect == 0 || !p->ipv4_method || !streq(p->ipv4_method, "auto"))
			continue;
		const char *name = p->id ? p->id : p->file;
		struct strbuf fix = STRBUF_INIT;
		strbuf_addstr(&fix, "sudo nmcli connection modify '");
		strbuf_addstr(&fix, name);
		strbuf_addstr(&fix,
			      "' connection.autoconnect no (or delete it: sudo nmcli connection "
			      "delete '");
		strbuf_addstr(&fix, name);
		strbuf_addstr(&fix, "'); the fabric address comes from netplan (sparkctl netplan)");
		struct finding *f =
			report(ctx, CHECK_WARN, fix.buf,
			       "NetworkManager profile '%s' (%s) auto-connects fabric "
			       "port %s with DHCP: avahi renames the host to name-NN.local",
			       name, p->file ? p->file : "?", p->interface_name);
		finding_evidence(f, "interface=%s", p->interface_name);
		strbuf_release(&fix);
		bad++;
	}
	if (!bad)
		report(ctx, CHECK_PASS, NULL,
		       "%zu NetworkManager profile%s, none auto-connects a "
		       "fabric port with DHCP",
		       inv->sys.nr_nm_profiles, inv->sys.nr_nm_profiles == 1 ? "" : "s");
}

/*
 * The counter N that ends label (its first len bytes) as "-N", as avahi
 * writes it (no leading zero), with the length of what comes before the
 * '-'; 0 when it has none.
 */
static uint64_t avahi_counter(const char *label, size_t len, size_t *base_len)
{
	size_t digits = 0;
	uint64_t n;

	while (digits < len && isdigit((unsigned char)label[len - 1 - digits]))
		digits++;
	if (!digits || digits > 9 || digits == len || label[len - 1 - digits] != '-' ||
	    label[len - digits] == '0' || parse_u64_n(label + len - digits, digits, &n) < 0)
		return 0;
	*base_len = len - digits - 1;
	return n;
}

enum avahi_name_kind {
	AVAHI_NAME_OTHER,
	AVAHI_NAME_OWN,
	AVAHI_NAME_RENAMED
};

/*
 * avahi's name against the host name, by their first labels (avahi names
 * the host after the host name up to its first dot, in the domain it
 * serves), ignoring case.  After a conflict avahi appends "-2" to the
 * name, or counts up the N of a name that ends in "-N" already (spark-2
 * becomes spark-3): both are renames, a name that merely ends in digits
 * is not.
 */
static enum avahi_name_kind avahi_name_kind(const char *name, const char *hostname)
{
	size_t hl = strcspn(hostname, "."), nl = strcspn(name, ".");
	size_t name_base = 0, host_base = hl;
	uint64_t n = avahi_counter(name, nl, &name_base), host_n;

	if (nl == hl && strncasecmp(name, hostname, hl) == 0)
		return AVAHI_NAME_OWN;
	if (!n)
		return AVAHI_NAME_OTHER;
	/* HOSTNAME-N */
	if (name_base == hl && strncasecmp(name, hostname, hl) == 0)
		return AVAHI_NAME_RENAMED;
	/* BASE-M of a host name BASE-N, M > N */
	host_n = avahi_counter(hostname, hl, &host_base);
	if (host_n && name_base == host_base && n > host_n &&
	    strncasecmp(name, hostname, host_base) == 0)
		return AVAHI_NAME_RENAMED;
	return AVAHI_NAME_OTHER;
}

void check_net_avahi_name(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	const char *name = inv->sys.avahi_host_name, *host = inv->sys.hostname;
	struct finding *f = NULL;
	char *fix = NULL;
	int hl;

	if (!name) {
		report(ctx, CHECK_SKIP, NULL, "no avahi-daemon holds a name on this node");
		return;
	}
	if (!host || !*host) {
		report(ctx, CHECK_SKIP, NULL, "the host name is unknown (avahi holds %s)", name);
		return;
	}
	hl = (int)strcspn(host, ".");
	switch (avahi_name_kind(name, host)) {
	case AVAHI_NAME_OWN:
		report(ctx, CHECK_PASS, NULL, "avahi-daemon holds %s", name);
		break;
	case AVAHI_NAME_RENAMED:
		fix = xasprintf(
			"find what else answers for %.*s.local: most often this node "
			"itself on a second link (NetworkManager DHCP profiles on the CX-7 "
			"ports, see net.nm_autoconnect; or two interfaces on one network), "
			"or another host of the same name (a cloned image: sudo hostnamectl "
			"hostname NEWNAME there); then sudo systemctl restart avahi-daemon",
			hl, host);
		f = report(ctx, CHECK_WARN, fix,
			   "avahi-daemon calls this node %s, not %.*s.local: it met a name "
			   "conflict and renamed it",
			   name, hl, host);
		break;
	case AVAHI_NAME_OTHER:
		f = report(ctx, CHECK_WARN,
			   "remove host-name= from /etc/avahi/avahi-daemon.conf (avahi then "
			   "uses the host name), or name the host after it (sudo hostnamectl "
			   "hostname NAME); then sudo systemctl restart avahi-daemon",
			   "avahi-daemon holds %s, not %.*s.local: other nodes find this one "
			   "under another name than its host name",
			   name, hl, host);
		break;
	}
	if (f)
		finding_evidence(f, "avahi_host_name=%s", name);
	free(fix);
}

void check_sw_driver(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;

	if (!inv->sys.nvidia_driver)
		report(ctx, CHECK_FAIL, "install and load the NVIDIA driver (DGX OS ships it)",
		       "no NVIDIA kernel driver is loaded (/proc/driver/nvidia/version)");
	else if (has_unified_gpu(inv) && inv->sys.nvidia_open_module == TRI_NO)
		report(ctx, CHECK_WARN, "install the open kernel module flavour of the driver",
		       "driver %s is the proprietary kernel module; GB10 runs the open one",
		       inv->sys.nvidia_driver);
	else
		report(ctx, CHECK_PASS, NULL, "driver %s (%s kernel module)",
		       inv->sys.nvidia_driver,
		       inv->sys.nvidia_open_module == TRI_YES  ? "open"
		       : inv->sys.nvidia_open_module == TRI_NO ? "proprietary"
							       : "unknown");
}

void check_sw_gpu(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	const struct inv_gpu_info *gi = &inv->gpu;

	if (gi->nr_gpus) {
		report(ctx, CHECK_PASS, NULL, "%zu GPU%s visible: %s", gi->nr_gpus,
		       gi->nr_gpus == 1 ? "" : "s", gi->gpus[0].name ? gi->gpus[0].name : "?");
	} else if (gi->nvml.available == TRI_UNKNOWN) {
		report(ctx, CHECK_SKIP, NULL, "GPUs were not probed");
	} else {
		struct strbuf why = STRBUF_INIT;
		strbuf_addstr(&why, gi->nvml.available == TRI_NO && gi->nvml.reason
					    ? gi->nvml.reason
					    : "NVML lists none");
		report(ctx, CHECK_FAIL, "check 'nvidia-smi'; install the driver's libraries",
		       "no GPU is visible: %s", why.buf);
		strbuf_release(&why);
	}
}

/* The NCCL release NVIDIA's DGX Spark playbooks build (v2.28.9-1), and the first for CUDA 13. */
#define NCCL_SPARK_RECOMMENDED 22809
#define NCCL_SPARK_MINIMUM     22803
/* NCCL selects the RoCE GID dynamically since 2.21; before, index 0 (link-local). */
#define NCCL_DYNAMIC_GID       22100

void check_sw_nccl(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	const struct inv_library *lib = &inv->sys.nccl;
	int64_t code = inv->sys.nccl_version_code;
	bool gb10 = false;

	for (size_t i = 0; i < inv->gpu.nr_gpus; i++)
		gb10 |= inv->gpu.gpus[i].cc_major == 12 && inv->gpu.gpus[i].cc_minor == 1;
	if (lib->available == TRI_UNKNOWN) {
		report(ctx, CHECK_SKIP, NULL, "NCCL was not probed");
	} else if (lib->available == TRI_NO) {
		report(ctx, CHECK_WARN,
		       "install NCCL (or check the one your framework bundles: PyTorch wheels "
		       "bring "
		       "their own libnccl.so.2)",
		       "libnccl.so.2 is not on the loader path: %s",
		       lib->reason ? lib->reason : "?");
	} else if (gb10 && code < NCCL_SPARK_MINIMUM) {
		report(ctx, CHECK_FAIL,
		       "install NCCL 2.28.9 or later built for sm_121 (NVIDIA's DGX Spark NCCL "
		       "playbook)",
		       "NCCL %s cannot drive GB10 (sm_121 needs an NCCL built for CUDA 13)",
		       lib->version ? lib->version : "?");
	} else if (gb10 && code < NCCL_SPARK_RECOMMENDED) {
		report(ctx, CHECK_WARN, "install NCCL 2.28.9 or later",
		       "NCCL %s on GB10: NVIDIA's DGX Spark playbooks moved to 2.28.9 after "
		       "problems "
		       "with earlier 2.28 releases",
		       lib->version ? lib->version : "?");
	} else if (code >= 0 && code < NCCL_DYNAMIC_GID) {
		report(ctx, CHECK_WARN, "install NCCL 2.21 or later",
		       "NCCL %s predates dynamic GID selection (2.21): on RoCE it uses GID 0, a "
		       "link-local address",
		       lib->version ? lib->version : "?");
	} else {
		report(ctx, CHECK_PASS, NULL, "NCCL %s (%s)", lib->version ? lib->version : "?",
		       lib->path ? lib->path : "?");
	}
}
