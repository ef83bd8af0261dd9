#include "sparkctl.h"

#include "check/check.h"
#include "lib/suggest.h"
#include "lib/xalloc.h"

/* The checks, in the order they run and are listed. */
const struct check checks[] = {
	{ "rdma.devices", "RDMA devices are present", CHECK_LOCAL, CHECK_FAIL, check_rdma_devices,
	  "Without RDMA devices NCCL falls back to TCP sockets: a tenth of the bandwidth." },
	{ "rdma.modules", "the RDMA kernel modules are loaded", CHECK_LOCAL, CHECK_FAIL,
	  check_rdma_modules,
	  "mlx5_ib and ib_uverbs expose the ConnectX-7 to user space; without them there are no "
	  "RDMA devices for NCCL." },
	{ "fabric.active", "a fabric port is ACTIVE with carrier", CHECK_LOCAL, CHECK_FAIL,
	  check_fabric_active,
	  "No ACTIVE port means no cable, a cable in the wrong port, or a link that never came "
	  "up." },
	{ "fabric.twins", "both twins of every cabled port are ACTIVE", CHECK_LOCAL, CHECK_FAIL,
	  check_fabric_twins,
	  "Each DGX Spark QSFP port is two PCIe x4 halves; one half alone gives half the "
	  "bandwidth (~100 of 200 Gb/s)." },
	{ "fabric.subnets", "twins sit in different subnets", CHECK_LOCAL, CHECK_FAIL,
	  check_fabric_subnets,
	  "Twins in one subnet confuse routing and ARP: traffic for one half leaves by the "
	  "other." },
	{ "fabric.ipv4", "every fabric netdev has an IPv4 address", CHECK_LOCAL, CHECK_FAIL,
	  check_fabric_ipv4,
	  "RoCE v2 addresses its peers by IP: a port without an address has no usable GID." },
	{ "fabric.gid", "every fabric port has the IPv4 RoCE v2 GID NCCL picks", CHECK_LOCAL,
	  CHECK_FAIL, check_fabric_gid,
	  "NCCL selects the IPv4 RoCE v2 GID of each port; a port without one, or with two, fails "
	  "or picks the wrong address." },
	{ "fabric.link_layer", "the rails share one link layer", CHECK_LOCAL, CHECK_FAIL,
	  check_fabric_link_layer,
	  "NCCL cannot mix InfiniBand and RoCE ports in one job; DGX Spark ports are Ethernet." },
	{ "net.mtu", "fabric MTU 9000, equal on twins", CHECK_LOCAL, CHECK_FAIL, check_net_mtu,
	  "The default MTU 1500 limits RoCE to 1024-byte packets; twins with different MTUs "
	  "lose packets at the larger size." },
	{ "link.speed", "links run at full rate", CHECK_LOCAL, CHECK_FAIL, check_link_speed,
	  "A port or netdev below the rate of its twin or of 200G (switch autonegotiation at "
	  "100G, a degraded NIC) caps every collective." },
	{ "link.errors", "no link-down or symbol errors", CHECK_LOCAL, CHECK_WARN,
	  check_link_errors,
	  "link_downed and symbol_error count flaps and bit errors that turn into retransmits and "
	  "timeouts." },
	{ "pci.link", "NIC PCIe links trained at full width and speed", CHECK_LOCAL, CHECK_FAIL,
	  check_pci_link,
	  "A function trained below its maximum (x2 instead of x4, a lower generation) caps that "
	  "twin: a real DGX Spark failure after some BIOS versions." },
	{ "pci.aer", "no PCIe AER errors on the NICs", CHECK_LOCAL, CHECK_FAIL, check_pci_aer,
	  "Fatal AER errors precede mlx5 resets and lost links." },
	{ "nccl.gid_index", "NCCL_IB_GID_INDEX is not pinned to a wrong GID", CHECK_LOCAL,
	  CHECK_FAIL, check_nccl_gid_index,
	  "A pinned index that is not the IPv4 RoCE v2 GID hangs connection setup; the index "
	  "drifts after interface changes." },
	{ "nccl.ib_hca", "NCCL_IB_HCA names both twins of the fabric, exactly", CHECK_LOCAL,
	  CHECK_FAIL, check_nccl_ib_hca,
	  "A missing twin halves the bandwidth; a down device fails init; mlx5_1 without '=' also "
	  "matches mlx5_10." },
	{ "nccl.socket_ifname", "NCCL_SOCKET_IFNAME names a usable bootstrap interface",
	  CHECK_LOCAL, CHECK_FAIL, check_nccl_socket_ifname,
	  "A missing, down or address-less interface fails bootstrap; an interface that does not "
	  "reach every node hangs it." },
	{ "nccl.gpudirect", "no GPUDirect forced where the GPU lacks it", CHECK_LOCAL, CHECK_FAIL,
	  check_nccl_gpudirect,
	  "GPUDirect or DMA-BUF settings on a GPU without them (GB10) hang init_process_group "
	  "forever, with no message." },
	{ "nccl.transport", "nothing forces NCCL off the RDMA transport", CHECK_LOCAL, CHECK_FAIL,
	  check_nccl_transport,
	  "NCCL_IB_DISABLE=1, NCCL_NET=Socket or an external net plugin that breaks RoCE on Spark "
	  "sends every byte over TCP." },
	{ "nccl.conf", "no risky leftovers in NCCL configuration files", CHECK_LOCAL, CHECK_FAIL,
	  check_nccl_conf,
	  "Keys in /etc/nccl.conf or $NCCL_CONF_FILE apply to every job silently; leftovers such "
	  "as NCCL_IB_USE_INLINE=1 froze a 4-byte warm-up." },
	{ "gpudirect.support", "GPUDirect has a path where the GPU supports it", CHECK_LOCAL,
	  CHECK_WARN, check_gpudirect_support,
	  "NCCL needs nvidia_peermem or DMA-BUF to use GPUDirect RDMA; without either it falls "
	  "back to host memory silently, ten times slower.  GB10 supports neither." },
	{ "gpudirect.peermem", "nvidia_peermem is not loaded where it cannot work", CHECK_LOCAL,
	  CHECK_WARN, check_gpudirect_peermem,
	  "On GB10 nvidia_peermem cannot work; a configuration that loads it is a leftover of "
	  "GPUDirect settings that hang." },
	{ "limits.memlock", "locked memory is unlimited", CHECK_LOCAL, CHECK_FAIL,
	  check_limits_memlock,
	  "RDMA registers (locks) its buffers; a small RLIMIT_MEMLOCK fails ibv_reg_mr and "
	  "ibv_create_cq." },
	{ "memory.cma", "the kernel has a CMA area on unified memory", CHECK_LOCAL, CHECK_FAIL,
	  check_memory_cma,
	  "On GB10 kernels without CMA (CmaTotal 0) memory registration fails with ENOMEM." },
	{ "net.buffers", "socket buffers are large enough", CHECK_LOCAL, CHECK_WARN,
	  check_net_buffers,
	  "Small net.core.rmem_max/wmem_max slow NCCL's bootstrap and any TCP fallback." },
	{ "net.nm_autoconnect", "no DHCP profile auto-connects a fabric port", CHECK_LOCAL,
	  CHECK_WARN, check_net_nm_autoconnect,
	  "A NetworkManager profile that auto-connects a CX-7 port with DHCP keeps bringing the "
	  "port up with no lease (or a link-local address) beside the static fabric address; "
	  "each time avahi sees a new address it announces the host again and, on a conflict, "
	  "renames it to name-NN.local, so discovery and ssh by .local name break." },
	{ "net.avahi_name", "avahi holds this node's own .local name", CHECK_LOCAL, CHECK_WARN,
	  check_net_avahi_name,
	  "When avahi-daemon meets another answer for HOSTNAME.local it renames this node "
	  "HOSTNAME-2.local (then -3, ...); discover, join and ssh by HOSTNAME.local then reach "
	  "another host or none. Read from avahi-daemon's process title, with no network "
	  "traffic." },
	{ "sw.driver", "the NVIDIA driver is loaded", CHECK_LOCAL, CHECK_FAIL, check_sw_driver,
	  "Without the kernel driver there is no GPU; GB10 needs the open kernel module." },
	{ "sw.gpu", "a GPU is visible", CHECK_LOCAL, CHECK_FAIL, check_sw_gpu,
	  "NVML must see the GPU the job will use." },
	{ "sw.nccl", "NCCL is present and supports the GPU", CHECK_LOCAL, CHECK_FAIL, check_sw_nccl,
	  "GB10 (sm_121) needs an NCCL built for CUDA 13; NVIDIA's Spark playbooks use 2.28.9." },
	{ "storage.conf", "the node's storage plan can be read", CHECK_LOCAL, CHECK_FAIL,
	  check_storage_conf,
	  "Connect, check and the boot-time unit take each volume from its plan in "
	  "/etc/sparkctl/storage.d; a file they cannot read leaves the node without its volume." },
	{ "storage.module", "nvme_tcp is loaded", CHECK_LOCAL, CHECK_FAIL, check_storage_module,
	  "Without nvme_tcp no NVMe/TCP controller can be connected: 'nvme connect' fails with "
	  "'Failed to open /dev/nvme-fabrics' or an invalid argument." },
	{ "storage.hostnqn", "the node has a host NQN", CHECK_LOCAL, CHECK_FAIL,
	  check_storage_hostnqn,
	  "The target allows hosts by their NQN; without /etc/nvme/hostnqn nvme-cli makes one "
	  "up on each connect, and a target that lists allowed hosts refuses it." },
	{ "storage.path_live", "the planned controller is live", CHECK_LOCAL, CHECK_FAIL,
	  check_storage_path_live,
	  "A controller that is not live holds every I/O of the volume until it reconnects "
	  "(ctrl_loss_tmo), then fails it: the jobs reading the volume hang, then get EIO." },
	{ "storage.path_iface", "the volume's traffic leaves by the planned interface", CHECK_LOCAL,
	  CHECK_FAIL, check_storage_path_iface,
	  "A connection that the route put on the management port moves the volume at 1 or 10 "
	  "Gb/s instead of the fabric's 200, and competes with SSH and the jobs' bootstrap." },
	{ "storage.iface_mtu", "the volume's interface has MTU 9000", CHECK_LOCAL, CHECK_WARN,
	  check_storage_iface_mtu,
	  "At MTU 1500 NVMe/TCP cuts every transfer into six times the packets of MTU 9000; the "
	  "CPU handling them, not the link, then bounds the volume's throughput." },
	{ "storage.target_reachable", "the target accepts TCP connections", CHECK_LOCAL, CHECK_FAIL,
	  check_storage_target_reachable,
	  "A target that does not answer on its port cannot be connected: connect and the boot "
	  "unit fail, and a lost controller never comes back. (Live probes only.)" },
	{ "storage.mounted", "the volume is mounted as planned", CHECK_LOCAL, CHECK_FAIL,
	  check_storage_mounted,
	  "A volume not mounted leaves jobs writing to the node's own disk under the mount "
	  "point; a reader mounted read-write is a second writer, which corrupts ext4 and xfs." },
	{ "storage.nofail", "fstab mounts it by UUID with nofail and _netdev", CHECK_LOCAL,
	  CHECK_FAIL, check_storage_nofail,
	  "Without _netdev the mount is tried before the network is up; without nofail a boot "
	  "without the target stops in emergency mode; a /dev/nvmeXnY name changes with the "
	  "order of connection." },
	{ "cluster.ssh", "every node answers over SSH", CHECK_CLUSTER, CHECK_FAIL,
	  check_cluster_ssh, "A node that cannot be reached in batch mode cannot be launched on." },
	{ "cluster.hostnames", "host names are unique", CHECK_CLUSTER, CHECK_FAIL,
	  check_cluster_hostnames,
	  "Duplicate names break rendezvous and the logs of every launcher." },
	{ "cluster.machine_id", "machine ids are unique", CHECK_CLUSTER, CHECK_FAIL,
	  check_cluster_machine_id,
	  "Nodes made from one image share /etc/machine-id: systemd derives DHCP client ids, "
	  "the journal's and D-Bus's ids from it, so two nodes get the same DHCP lease and "
	  "their logs mix." },
	{ "cluster.ssh_mesh", "every node reaches every other by ssh with its key", CHECK_CLUSTER,
	  CHECK_FAIL, check_cluster_ssh_mesh,
	  "launch and bench link start processes on one node from another, and MPI and "
	  "torchrun do it between every pair: a pair without a key login hangs at a password "
	  "prompt or fails.  Probed where the nodes come from the cluster file (sparkctl join "
	  "makes the mesh)." },
	{ "cluster.file", "the cluster file agrees with the nodes", CHECK_CLUSTER, CHECK_WARN,
	  check_cluster_file,
	  "Commands without -H reach the nodes of the cluster file: a node left out is not "
	  "checked or launched on, and a stale id or fabric address means the file describes "
	  "another machine." },
	{ "cluster.plan", "every node has the same fabric plan", CHECK_CLUSTER, CHECK_FAIL,
	  check_cluster_plan,
	  "Nodes with different numbers of cabled ports or link layers cannot pair their HCAs." },
	{ "cluster.hca_pairing", "HCA lists pair across nodes", CHECK_CLUSTER, CHECK_FAIL,
	  check_cluster_hca_pairing,
	  "NCCL pairs HCAs by position: different ports at one position, or rails on different "
	  "subnets, fail with ibv_modify_qp errors or hang." },
	{ "cluster.ping", "every link passes a don't-fragment ping at its MTU", CHECK_CLUSTER,
	  CHECK_FAIL, check_cluster_ping,
	  "A full-size ping that may not be fragmented catches MTU mismatches, wrong cabling and "
	  "wrong subnets before a job does." },
	{ "cluster.mtu", "MTU is equal at both ends of every link", CHECK_CLUSTER, CHECK_FAIL,
	  check_cluster_mtu,
	  "Packets larger than the smaller MTU are dropped: IBV_WC_RETRY_EXC_ERR." },
	{ "cluster.versions", "the same NCCL, driver and CUDA everywhere", CHECK_CLUSTER,
	  CHECK_FAIL, check_cluster_versions,
	  "NCCL must be the same version on every rank; drivers and CUDA should match too." },
	{ "cluster.sparkctl", "every node runs the same sparkctl version", CHECK_CLUSTER,
	  CHECK_FAIL, check_cluster_sparkctl,
	  "launch, bench link and status speak sparkctl's own protocol and JSON between the "
	  "nodes: a node of another version may misread them." },
	{ "cluster.clock", "clocks agree within a second", CHECK_CLUSTER, CHECK_FAIL,
	  check_cluster_clock,
	  "Skewed clocks make logs, timeouts and rendezvous deadlines disagree." },
	{ "slurm.munge", "munge credentials decode on every Slurm node", CHECK_CLUSTER, CHECK_FAIL,
	  check_slurm_munge,
	  "Slurm signs every message between its daemons with munge: a node whose munge.key "
	  "differs, whose munged is not running, or whose clock is off cannot decode them, and "
	  "slurmctld marks it DOWN (Protocol authentication error).  Probed with 'munge -n | ssh "
	  "NODE unmunge' through the socket of slurm.conf's AuthInfo." },
	{ "slurm.uid", "the job user has the same uid and gid on every Slurm node", CHECK_CLUSTER,
	  CHECK_FAIL, check_slurm_uid,
	  "slurmd runs a job's tasks as the submitting user's uid and gid: a node where the name "
	  "has other ids (or none) fails the job, or runs it as someone else, and files on a "
	  "shared volume change owner." },
	{ "slurm.conf_same", "slurm.conf is the same on every Slurm node", CHECK_CLUSTER,
	  CHECK_FAIL, check_slurm_conf_same,
	  "slurmctld and slurmd compare the hash of slurm.conf and log 'appears to have a "
	  "different slurm.conf'; nodes that differ disagree about nodes, partitions and plugins "
	  "until they fail in ways that are hard to trace." },
	{ "slurm.real_memory", "RealMemory is not above the node's memory", CHECK_CLUSTER,
	  CHECK_FAIL, check_slurm_real_memory,
	  "slurmd registers the memory it finds; slurmctld drains a node whose RealMemory in "
	  "slurm.conf is more (reason 'Low RealMemory'), and no job runs there." },
	{ "storage.hostnqn_unique", "host NQNs are unique", CHECK_CLUSTER, CHECK_FAIL,
	  check_storage_hostnqn_unique,
	  "Nodes made from one image share /etc/nvme/hostnqn: the target takes them for one "
	  "host, and a connect from one drops the other's controller." },
	{ "storage.single_writer", "at most one node mounts the volume read-write", CHECK_CLUSTER,
	  CHECK_FAIL, check_storage_single_writer,
	  "ext4 and xfs are not cluster file systems: two writers of one volume corrupt it "
	  "within minutes, silently." },
	/* serve's preflight: run by 'doctor --engine' (and 'sparkctl serve'), not from here. */
	{ "serve.plan", "the engine's plan can be made: a fabric address on every node",
	  CHECK_ENGINE, CHECK_FAIL, NULL,
	  "Every engine meets at the head's fabric address: a node without one, or on another "
	  "subnet, cannot join (doctor --engine)." },
	{ "serve.parallel", "tensor x pipeline parallel equals the GPUs", CHECK_ENGINE, CHECK_FAIL,
	  NULL,
	  "vLLM, SGLang and TensorRT-LLM refuse a tensor x pipeline parallel size that is not the "
	  "GPUs they are given; nodes with different GPUs cannot share one split (doctor "
	  "--engine)." },
	{ "serve.ports_free", "the engine's ports are free on every node", CHECK_ENGINE, CHECK_FAIL,
	  NULL,
	  "An API or rendezvous port already taken makes the engine fail after minutes of "
	  "loading the model, or join another job (doctor --engine)." },
	{ "serve.image", "the image is on every node, the same as the head's", CHECK_ENGINE,
	  CHECK_FAIL, NULL,
	  "A node without the image pulls it at start (tens of GB) or fails; a node with another "
	  "build of one tag runs other code (doctor --engine --image)." },
	{ "serve.nccl", "the NCCL the engine loads is the nodes' build", CHECK_ENGINE, CHECK_FAIL,
	  NULL,
	  "Two builds of one NCCL version, mixed in one job, have hung it; another version in the "
	  "image than on the host means 'bench nccl' measured something else.  Compared by the "
	  "GNU build id of libnccl.so.2: the image's (the pip wheel's, else the loader's) with "
	  "each node's, or without --image every node's with the head's (doctor --engine)." },
};
const size_t nr_checks = ARRAY_SIZE(checks);

const char *check_status_name(enum check_status s)
{
	switch (s) {
	case CHECK_PASS:
		return "PASS";
	case CHECK_WARN:
		return "WARN";
	case CHECK_FAIL:
		return "FAIL";
	case CHECK_SKIP:
		return "SKIP";
	}
	return "?";
}

const char *check_scope_name(enum check_scope s)
{
	switch (s) {
	case CHECK_LOCAL:
		return "node";
	case CHECK_CLUSTER:
		return "cluster";
	case CHECK_ENGINE:
		return "engine";
	}
	return "?";
}

const struct check *check_lookup(const char *id)
{
	for (size_t i = 0; i < nr_checks; i++)
		if (streq(checks[i].id, id))
			return &checks[i];
	return NULL;
}

struct finding *report(struct check_ctx *ctx, enum check_status status, const char *fix,
		       const char *fmt, ...)
{
	struct finding *f = ARRAY_PUSH(ctx->out->items, ctx->out->nr);
	struct strbuf msg = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	/* A check never reports worse than its severity in the table (docs/checks.md). */
	if (status != CHECK_SKIP && status > ctx->check->severity)
		abort();
	f->check_id = ctx->check->id;
	f->node = xstrdup(ctx->node);
	f->status = status;
	f->message = strbuf_detach(&msg, NULL);
	f->fix = xstrdup_or_null(fix);
	strvec_init(&f->evidence);
	return f;
}

void finding_evidence(struct finding *f, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strvec_push_nodup(&f->evidence, strbuf_detach(&sb, NULL));
}

/* Does name select check c: its id, or its group (the part before the first '.')? */
static bool selects(const char *name, const struct check *c)
{
	size_t n = strlen(name);
	return streq(name, c->id) || (!strncmp(c->id, name, n) && c->id[n] == '.');
}

static int mark(struct check_selection *sel, const struct strvec *names, bool value,
		struct strbuf *err)
{
	for (size_t i = 0; i < names->nr; i++) {
		bool any = false;
		for (size_t k = 0; k < nr_checks; k++) {
			if (selects(names->v[i], &checks[k])) {
				sel->enabled[k] = value;
				any = true;
			}
		}
		if (!any) {
			const char *ids[ARRAY_SIZE(checks)];
			for (size_t k = 0; k < nr_checks; k++)
				ids[k] = checks[k].id;
			const char *near = suggest_nearest(names->v[i], ids, nr_checks);
			strbuf_addf(err, "no check '%s'", names->v[i]);
			if (near)
				strbuf_addf(err, "; did you mean '%s'?", near);
			strbuf_addstr(err, " ('sparkctl doctor --list' lists them)");
			return -EINVAL;
		}
	}
	return 0;
}

/* Split comma-separated entries of each list element into one strvec. */
static void split_all(const struct strvec *in, struct strvec *out)
{
	for (size_t i = 0; i < in->nr; i++) {
		const char *p = in->v[i];
		while (*p) {
			size_t len = strcspn(p, ",");
			if (len)
				strvec_push_nodup(out, xstrndup(p, len));
			p += len + (p[len] == ',');
		}
	}
}

int check_select(struct check_selection *sel, const struct strvec *only, const struct strvec *skip,
		 struct strbuf *err)
{
	struct strvec o = STRVEC_INIT, s = STRVEC_INIT;
	int r;

	sel->enabled = xcalloc(nr_checks, sizeof(*sel->enabled));
	split_all(only, &o);
	split_all(skip, &s);
	for (size_t k = 0; k < nr_checks; k++)
		sel->enabled[k] = o.nr == 0;
	r = mark(sel, &o, true, err);
	if (r == 0)
		r = mark(sel, &s, false, err);
	strvec_clear(&o);
	strvec_clear(&s);
	return r;
}

void check_selection_release(struct check_selection *sel)
{
	free(sel->enabled);
	sel->enabled = NULL;
}

void run_local_checks(const struct check_selection *sel, const struct inventory *inv,
		      const char *node, unsigned nodes, struct findings *out)
{
	for (size_t k = 0; k < nr_checks; k++) {
		if (checks[k].scope != CHECK_LOCAL || !sel->enabled[k])
			continue;
		struct check_ctx ctx = { &checks[k], inv, node, nodes, NULL, out };
		checks[k].run(&ctx);
	}
}

void run_cluster_checks(const struct check_selection *sel, const struct doctor_cluster *c,
			struct findings *out)
{
	for (size_t k = 0; k < nr_checks; k++) {
		if (checks[k].scope != CHECK_CLUSTER || !sel->enabled[k])
			continue;
		struct check_ctx ctx = {
			&checks[k], NULL, "cluster", (unsigned)c->nr_nodes, c, out
		};
		checks[k].run(&ctx);
	}
}

void findings_release(struct findings *f)
{
	for (size_t i = 0; i < f->nr; i++) {
		free(f->items[i].node);
		free(f->items[i].message);
		free(f->items[i].fix);
		strvec_clear(&f->items[i].evidence);
	}
	free(f->items);
	f->items = NULL;
	f->nr = 0;
}

void doctor_cluster_release(struct doctor_cluster *c)
{
	for (size_t i = 0; i < c->nr_nodes; i++) {
		free(c->nodes[i].host);
		free(c->nodes[i].error);
		free(c->nodes[i].munge_detail);
		inventory_release(&c->nodes[i].inv);
	}
	free(c->nodes);
	for (size_t i = 0; i < c->nr_links; i++) {
		free(c->links[i].from_if);
		free(c->links[i].to_addr);
		free(c->links[i].detail);
	}
	free(c->links);
	free(c->mesh);
	free(c->munge_encode_error);
	memset(c, 0, sizeof(*c));
}

void checks_markdown(struct strbuf *out)
{
	strbuf_addstr(out,
		      "# The checks of `sparkctl doctor`\n\n"
		      "Generated from the table in `src/check/check.c` "
		      "(`sparkctl doctor --list --markdown`); do not edit by hand.\n"
		      "`--only` and `--skip` take these ids, or a group such as `fabric`.\n\n"
		      "| id | scope | at worst | checks that | why |\n|---|---|---|---|---|\n");
	for (size_t k = 0; k < nr_checks; k++)
		strbuf_addf(out, "| `%s` | %s | %s | %s | %s |\n", checks[k].id,
			    check_scope_name(checks[k].scope),
			    check_status_name(checks[k].severity), checks[k].title, checks[k].why);
}
