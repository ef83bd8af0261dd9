/*
 * probe_internal.h - shared by the probe's source files only.
 */
#ifndef SPARKCTL_PROBE_INTERNAL_H
#define SPARKCTL_PROBE_INTERNAL_H

#include "sparkctl.h"
#include "inventory/inventory.h"
#include "lib/rootfs.h"
#include "lib/strbuf.h"
#include "probe/reader.h"

struct probe_ctx {
	const struct rootfs *root;
	struct inventory *inv;
	bool no_nvidia_libraries; /* probe_options' */
	bool storage_target;	  /* probe_options' */
	const char *slurm_user;	  /* probe_options' */
	struct host_reader rd;	  /* the shared readers', failures recorded as problems */
};

/*
 * Read a one-value file.  Returns the value (allocated) or NULL.  Absence
 * (rootfs_absent()) is silent; other failures are recorded as problems.
 */
char *probe_read_str(struct probe_ctx *ctx, const char *path);
char *probe_read_strf(struct probe_ctx *ctx, const char *fmt, ...) ATTR_PRINTF(2, 3);
/* A non-negative decimal integer value, or INV_UNKNOWN; bad text is a problem. */
int64_t probe_read_int(struct probe_ctx *ctx, const char *path);
/* The last component of a symlink's target ("0000:01:00.1" for a device link), or NULL. */
char *probe_read_link_base(struct probe_ctx *ctx, const char *path);
/* Record that the content of path is not in the expected format. */
void probe_bad_content(struct probe_ctx *ctx, const char *path, const char *content);
/* Record a failed read of path, unless err means "absent" (rootfs_absent()). */
void probe_read_failed(struct probe_ctx *ctx, const char *path, int err);

void probe_system(struct probe_ctx *ctx);
void probe_nccl_conf(struct probe_ctx *ctx);
void probe_nm_profiles(struct probe_ctx *ctx);
void probe_netdevs(struct probe_ctx *ctx);
void probe_rdma(struct probe_ctx *ctx);
void probe_pci(struct probe_ctx *ctx);
/* The inventory's "slurm" (probe/slurm.c): after probe_system() and the host facts. */
void probe_slurm(struct probe_ctx *ctx);
/* Architecture, environment, limits, GPUs and NCCL of the running host. */
void probe_host_live(struct probe_ctx *ctx);
/* The same facts from a capture's .sparkctl/host.json. */
void probe_host_captured(struct probe_ctx *ctx);
/* Interface addresses: getifaddrs() live, .sparkctl/ip-address.json captured. */
void probe_addresses_live(struct probe_ctx *ctx);
void probe_addresses_captured(struct probe_ctx *ctx);
/* NVML, CUDA and NCCL through dlopen (live only). */
void probe_gpus_live(struct probe_ctx *ctx);
void probe_nccl_live(struct probe_ctx *ctx);

#endif
