/*
 * probe.h - build an inventory from a host.
 *
 * probe/ is the only code that reads the host; the probe builds the
 * inventory, mostly with the readers it shares with the exporter, top and
 * bench (probe/reader.h).  Files come from the root (lib/rootfs.h): "/"
 * for the live host or a captured tree.  Facts that are not files - the
 * machine architecture, the process environment and limits, the answers
 * of NVML, CUDA and NCCL, the interface addresses - come from system
 * calls and dlopen() on the live host, and from the tree's .sparkctl/
 * directory when replaying a capture (docs/capture.md).
 *
 * A fact that cannot be read is left unknown and, unless it is simply
 * absent (rootfs_absent()), explained in inventory.problems; the probe
 * fails as a whole only when the root itself cannot be used.
 */
#ifndef SPARKCTL_PROBE_H
#define SPARKCTL_PROBE_H

#include "sparkctl.h"
#include "inventory/inventory.h"
#include "lib/rootfs.h"
#include "lib/strbuf.h"

/* Where a capture keeps what is not a file of the host. */
#define CAPTURE_META_DIR     ".sparkctl"
#define CAPTURE_HOST_JSON    ".sparkctl/host.json"
#define CAPTURE_ADDRESS_JSON ".sparkctl/ip-address.json"

struct probe_options {
	const char *root;		  /* "/" for the live host */
	struct rootfs_recorder *recorder; /* record every file read (capture), or NULL */
	/* Leave NVML, CUDA and NCCL alone: for a caller that queries the GPUs itself. */
	bool no_nvidia_libraries;
	/*
	 * Live hosts only: try a TCP connection to the planned storage target
	 * (storage.target_reachable in the inventory; up to 2 s).  For topo and
	 * doctor, which report on the node; the commands that only use the
	 * inventory (env, launch, status) do not wait on the network.
	 */
	bool storage_target;
	/*
	 * The job user whose uid and gid the inventory's "slurm" section
	 * holds; NULL: the user the probe runs as ($USER, else $LOGNAME).
	 */
	const char *slurm_user;
};

/*
 * Probe the host below opts->root into inv (initialised by the caller).
 * Returns 0, or a negative errno with a message in err when the root
 * cannot be opened.
 */
int probe_inventory(const struct probe_options *opts, struct inventory *inv, struct strbuf *err);

/*
 * NetworkManager keyfiles hold secrets (Wi-Fi keys, VPN passwords): a
 * capture keeps only the keys the probe reads.  nm_keyfile_path(): rel (a
 * path below the root) is one; nm_keyfile_redact(): the text with only the
 * section lines and those keys, appended to out.
 */
bool nm_keyfile_path(const char *rel);
void nm_keyfile_redact(const char *text, size_t len, struct strbuf *out);

#endif
