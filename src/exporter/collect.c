#include "sparkctl.h"

#include "exporter/collect.h"
#include "exporter/gpu_metrics.h"
#include "inventory/inventory.h"
#include "lib/clock.h"
#include "lib/parse.h"
#include "probe/meminfo.h"
#include "probe/netdevs.h"
#include "probe/pci_functions.h"
#include "probe/rdma_ports.h"
#include "probe/sensors.h"
#include "version.h"

#define NS "sparkctl_"

/*
 * The names are node_exporter's infiniband collector's, so that queries
 * carry over; the data counters count 32-bit words (IBTA PMA), never
 * lanes: x4 exactly.
 */
static const struct rdma_counter port_counters[] = {
	{ "port_rcv_data", "port_data_received_bytes_total",
	  "Data received on the port, in bytes (RoCE: RDMA traffic only)", 4 },
	{ "port_xmit_data", "port_data_transmitted_bytes_total",
	  "Data transmitted on the port, in bytes (RoCE: RDMA traffic only)", 4 },
	{ "port_rcv_packets", "port_packets_received_total", "Packets received on the port", 1 },
	{ "port_xmit_packets", "port_packets_transmitted_total", "Packets transmitted on the port",
	  1 },
	{ "unicast_rcv_packets", "unicast_packets_received_total", "Unicast packets received", 1 },
	{ "unicast_xmit_packets", "unicast_packets_transmitted_total",
	  "Unicast packets transmitted", 1 },
	{ "multicast_rcv_packets", "multicast_packets_received_total", "Multicast packets received",
	  1 },
	{ "multicast_xmit_packets", "multicast_packets_transmitted_total",
	  "Multicast packets transmitted", 1 },
	{ "port_rcv_errors", "port_errors_received_total", "Packets received with errors", 1 },
	{ "port_rcv_discards", "port_discards_received_total", "Inbound packets discarded", 1 },
	{ "port_xmit_discards", "port_discards_transmitted_total",
	  "Outbound packets discarded (port down or congested)", 1 },
	{ "port_rcv_constraint_errors", "port_constraint_errors_received_total",
	  "Packets received that failed a partition or constraint check", 1 },
	{ "port_xmit_constraint_errors", "port_constraint_errors_transmitted_total",
	  "Packets not transmitted because of a partition or constraint check", 1 },
	{ "port_rcv_remote_physical_errors", "port_receive_remote_physical_errors_total",
	  "Packets received marked with the EBP delimiter", 1 },
	{ "port_rcv_switch_relay_errors", "port_receive_switch_relay_errors_total",
	  "Packets discarded because they could not be forwarded", 1 },
	{ "port_xmit_wait", "port_transmit_wait_total",
	  "Ticks during which the port had data to send but sent none", 1 },
	{ "symbol_error", "symbol_error_total", "Minor link errors on the physical lanes", 1 },
	{ "link_downed", "link_downed_total", "Times the link failed to recover and went down", 1 },
	{ "link_error_recovery", "link_error_recovery_total", "Successful link error recoveries",
	  1 },
	{ "local_link_integrity_errors", "local_link_integrity_errors_total",
	  "Local physical errors beyond the threshold", 1 },
	{ "excessive_buffer_overrun_errors", "excessive_buffer_overrun_errors_total",
	  "Consecutive buffer overrun errors beyond the threshold", 1 },
	{ "VL15_dropped", "vl15_dropped_total", "VL15 packets dropped", 1 },
};

static const struct rdma_counter hw_counters[] = {
	{ "duplicate_request", "duplicate_requests_packets_total",
	  "Requests received that were executed before (retransmissions arriving)", 1 },
	{ "implied_nak_seq_err", "implied_nak_seq_errors_total",
	  "ACKs with a PSN beyond the expected one for an RDMA READ (loss)", 1 },
	{ "local_ack_timeout_err", "local_ack_timeout_errors_total",
	  "ACK timer expirations at the sender (loss, dead path or stalled peer)", 1 },
	{ "np_cnp_sent", "np_cnp_packets_sent_total",
	  "Congestion notification packets sent for ECN-marked packets received", 1 },
	{ "np_ecn_marked_roce_packets", "np_ecn_marked_roce_packets_received_total",
	  "RoCEv2 packets received with ECN congestion experienced", 1 },
	{ "out_of_buffer", "out_of_buffer_drops_total",
	  "Packets dropped for lack of a receive WQE (receiver too slow)", 1 },
	{ "out_of_sequence", "out_of_sequence_packets_received_total",
	  "Packets received out of sequence (loss in the fabric)", 1 },
	{ "packet_seq_err", "packet_sequence_errors_total",
	  "NAK sequence error packets received (loss)", 1 },
	{ "req_cqe_error", "req_cqes_errors_total", "Requester completions with an error", 1 },
	{ "req_cqe_flush_error", "req_cqes_flush_errors_total",
	  "Requester completions flushed with an error", 1 },
	{ "req_remote_access_errors", "req_remote_access_errors_total",
	  "Requester remote access errors", 1 },
	{ "req_remote_invalid_request", "req_remote_invalid_request_errors_total",
	  "Requester remote invalid request errors", 1 },
	{ "req_rnr_retries_exceeded", "req_rnr_retries_exceeded_total",
	  "RNR retry budget exhausted (the QP went to error)", 1 },
	{ "req_transport_retries_exceeded", "req_transport_retries_exceeded_total",
	  "Transport retry budget exhausted (the QP went to error)", 1 },
	{ "resp_cqe_error", "resp_cqes_errors_total", "Responder completions with an error", 1 },
	{ "resp_cqe_flush_error", "resp_cqes_flush_errors_total",
	  "Responder completions flushed with an error", 1 },
	{ "resp_local_length_error", "resp_local_length_errors_total",
	  "Responder local length errors", 1 },
	{ "resp_remote_access_errors", "resp_remote_access_errors_total",
	  "Responder remote access errors", 1 },
	{ "rnr_nak_retry_err", "rnr_nak_retry_packets_received_total",
	  "Receiver-not-ready NAKs received", 1 },
	{ "roce_adp_retrans", "roce_adp_retransmits_total", "Adaptive retransmissions", 1 },
	{ "roce_adp_retrans_to", "roce_adp_retransmits_timeout_total",
	  "Adaptive retransmission timeouts", 1 },
	{ "roce_slow_restart", "roce_slow_restart_used_total", "Slow restarts used", 1 },
	{ "roce_slow_restart_cnps", "roce_slow_restart_cnps_total",
	  "CNPs generated by slow restart", 1 },
	{ "roce_slow_restart_trans", "roce_slow_restart_total", "Slow restart state transitions",
	  1 },
	{ "rp_cnp_handled", "rp_cnp_packets_handled_total",
	  "CNPs handled by the reaction point (this sender was slowed down)", 1 },
	{ "rp_cnp_ignored", "rp_cnp_ignored_packets_received_total",
	  "CNPs received and ignored (congestion control off?)", 1 },
	{ "rx_atomic_requests", "rx_atomic_requests_total", "Atomic requests received", 1 },
	{ "rx_dct_connect", "rx_dct_connect_requests_total", "DCT connect requests received", 1 },
	{ "rx_icrc_encapsulated", "rx_icrc_encapsulated_errors_total",
	  "RoCE packets received with an ICRC error", 1 },
	{ "rx_read_requests", "rx_read_requests_total", "RDMA READ requests received", 1 },
	{ "rx_write_requests", "rx_write_requests_total", "RDMA WRITE requests received", 1 },
};

const struct rdma_counter *rdma_counter_find(const char *file, bool hw)
{
	const struct rdma_counter *t = hw ? hw_counters : port_counters;
	size_t n = hw ? ARRAY_SIZE(hw_counters) : ARRAY_SIZE(port_counters);

	for (size_t i = 0; i < n; i++)
		if (streq(t[i].file, file))
			return &t[i];
	return NULL;
}

int exporter_parse_counter(const char *text, uint64_t *ret)
{
	if (starts_with(text, "N/A"))
		return -ENODATA;
	return parse_u64(text, ret) < 0 ? -EINVAL : 0;
}

/* One collector's run: the readers it reads through and what it adds to. */
struct collect {
	struct host_reader rd;
	struct metric_set *set;
	int ret; /* the first failure: a file, content not in the kernel's format, a metric */
};

/* Keep the first error of a collector. */
static void keep(int *ret, int r)
{
	if (r < 0 && *ret == 0)
		*ret = r;
}

/* The readers tell the collector what they could not read, or not parse. */
static void read_failed(void *data, const char *path, int err, const char *content)
{
	struct collect *c = data;

	(void)path;
	(void)content;
	keep(&c->ret, err);
}

static void add_u64(struct collect *c, const char *name, const char *help, enum metric_type type,
		    const struct metric_label *labels, size_t nr_labels, uint64_t v)
{
	keep(&c->ret, metric_add_u64(c->set, name, help, type, labels, nr_labels, v));
}

static void add_double(struct collect *c, const char *name, const char *help,
		       const struct metric_label *labels, size_t nr_labels, double v)
{
	keep(&c->ret, metric_add_double(c->set, name, help, METRIC_GAUGE, labels, nr_labels, v));
}

/* An empty label value is no value. */
static const char *nonempty(const char *s)
{
	return s && *s ? s : NULL;
}

/* The counter text as metric: "N/A" adds nothing; -EINVAL when it is not a number. */
static int add_counter(struct collect *c, const char *text, const char *metric, const char *help,
		       uint64_t scale, const struct metric_label *labels, size_t nr_labels)
{
	uint64_t n;
	int r = exporter_parse_counter(text, &n);

	if (r == 0)
		add_u64(c, metric, help, METRIC_COUNTER, labels, nr_labels, n * scale);
	return r == -ENODATA ? 0 : r;
}

/* A port's counters as they are read. */
struct port_counters {
	struct collect *c;
	const struct metric_label *labels; /* device, port */
	struct strbuf metric;
	const struct rdma_counter *known; /* of the file of counters/ about to be read */
};

/* Only the files of counters/ that have a metric are read. */
static bool known_port_counter(void *data, const char *name)
{
	struct port_counters *p = data;

	p->known = rdma_counter_find(name, false);
	return p->known != NULL;
}

static int port_counter(void *data, const char *name, const char *text)
{
	struct port_counters *p = data;
	const struct rdma_counter *rc = p->known;

	(void)name;
	strbuf_reset(&p->metric);
	strbuf_addf(&p->metric, NS "rdma_%s", rc->metric);
	return add_counter(p->c, text, p->metric.buf, rc->help, rc->scale, p->labels, 2);
}

static int hw_counter(void *data, const char *name, const char *text)
{
	struct port_counters *p = data;
	const struct rdma_counter *rc = rdma_counter_find(name, true);
	const struct metric_label l[3] = { p->labels[0], p->labels[1], { "counter", name } };
	uint64_t ms;

	if (streq(name, "lifespan")) {
		if (exporter_parse_counter(text, &ms) == 0)
			add_double(p->c, NS "rdma_port_hw_counters_lifespan_seconds",
				   "How long the driver caches hw_counters", p->labels, 2,
				   (double)ms / 1000.0);
		return 0;
	}
	/* Counters of newer drivers still show up, by their file name. */
	if (!rc)
		return add_counter(p->c, text, NS "rdma_port_hw_counter_total",
				   "Other hw_counters of the port, by file name", 1, l, 3);
	strbuf_reset(&p->metric);
	strbuf_addf(&p->metric, NS "rdma_%s", rc->metric);
	return add_counter(p->c, text, p->metric.buf, rc->help, rc->scale, l, 2);
}

static void rdma_port(struct collect *c, const char *dev, const char *port)
{
	const struct metric_label labels[2] = { { "device", dev }, { "port", port } };
	struct port_counters counters = { c, labels, STRBUF_INIT, NULL };
	struct rdma_port_link link;
	char *netdev;

	if (rdma_read_port_link(&c->rd, dev, port, &link) <= 0)
		goto out;
	if (link.state >= 0)
		add_u64(c, NS "rdma_port_state_id",
			"Port state: 1 down, 2 init, 3 armed, 4 active, 5 active defer",
			METRIC_GAUGE, labels, 2, (uint64_t)link.state);
	if (link.phys_state >= 0)
		add_u64(c, NS "rdma_port_physical_state_id",
			"Physical port state: 2 polling, 3 disabled, 5 link up, 6 link error "
			"recovery",
			METRIC_GAUGE, labels, 2, (uint64_t)link.phys_state);
	if (link.rate_mbps >= 0)
		add_u64(c, NS "rdma_port_rate_bytes_per_second",
			"Port signalling rate, in bytes per second", METRIC_GAUGE, labels, 2,
			(uint64_t)link.rate_mbps * 125000);
	/* The netdev of GID 0: what ties the port to the network series. */
	netdev = rdma_read_port_netdev(&c->rd, dev, port);
	{
		const struct metric_label info[6] = {
			labels[0],
			labels[1],
			{ "link_layer", nonempty(link.link_layer) },
			{ "netdev", nonempty(netdev) },
			{ "state", link.state_name },
			{ "phys_state", link.phys_state_name },
		};
		add_u64(c, NS "rdma_port_info",
			"The port's link layer, netdev (of GID 0) and states", METRIC_GAUGE, info,
			ARRAY_SIZE(info), 1);
	}
	free(netdev);
	rdma_read_counters(&c->rd, dev, port, false, known_port_counter, port_counter, &counters);
	rdma_read_counters(&c->rd, dev, port, true, NULL, hw_counter, &counters);
out:
	rdma_port_link_release(&link);
	strbuf_release(&counters.metric);
}

static void rdma_device(struct collect *c, const char *dev)
{
	struct rdma_device_attrs a;
	struct strvec ports = STRVEC_INIT;

	rdma_read_device(&c->rd, dev, &a);
	{
		const struct metric_label info[4] = {
			{ "device", dev },
			{ "board_id", a.board_id },
			{ "firmware_version", a.fw_ver },
			{ "hca_type", a.hca_type },
		};
		add_u64(c, NS "rdma_info", "The RDMA device's board, firmware and HCA",
			METRIC_GAUGE, info, ARRAY_SIZE(info), 1);
	}
	rdma_list_ports(&c->rd, dev, &ports);
	for (size_t i = 0; i < ports.nr; i++)
		rdma_port(c, dev, ports.v[i]);
	rdma_device_attrs_release(&a);
	strvec_clear(&ports);
}

static void rdma(struct collect *c)
{
	struct strvec devs = STRVEC_INIT;

	rdma_list_devices(&c->rd, &devs);
	for (size_t i = 0; i < devs.nr; i++)
		rdma_device(c, devs.v[i]);
	strvec_clear(&devs);
}

static const struct {
	const char *file, *metric, *help;
} netdev_stats[] = {
	{ "rx_bytes", "receive_bytes_total", "Bytes received" },
	{ "tx_bytes", "transmit_bytes_total", "Bytes transmitted" },
	{ "rx_packets", "receive_packets_total", "Packets received" },
	{ "tx_packets", "transmit_packets_total", "Packets transmitted" },
	{ "rx_errors", "receive_errs_total", "Receive errors" },
	{ "tx_errors", "transmit_errs_total", "Transmit errors" },
	{ "rx_dropped", "receive_drop_total", "Received packets dropped" },
	{ "tx_dropped", "transmit_drop_total", "Transmitted packets dropped" },
};

/* A netdev's statistics as they are read. */
struct netdev_counters {
	struct collect *c;
	const struct metric_label *labels; /* device */
	struct strbuf metric;
};

static int netdev_stat(void *data, const char *name, const char *text)
{
	struct netdev_counters *n = data;
	size_t i = 0;

	while (!streq(netdev_stats[i].file, name))
		i++;
	strbuf_reset(&n->metric);
	strbuf_addf(&n->metric, NS "network_%s", netdev_stats[i].metric);
	return add_counter(n->c, text, n->metric.buf, netdev_stats[i].help, 1, n->labels, 1);
}

static void netdev_one(struct collect *c, const char *dev)
{
	const char *files[ARRAY_SIZE(netdev_stats) + 1] = { NULL };
	const struct metric_label l[1] = { { "device", dev } };
	struct netdev_counters counters = { c, l, STRBUF_INIT };
	struct netdev_link link;

	if (netdev_read_link(&c->rd, dev, &link) <= 0)
		goto out;
	if (link.mtu >= 0)
		add_u64(c, NS "network_mtu_bytes", "The netdev's MTU", METRIC_GAUGE, l, 1,
			(uint64_t)link.mtu);
	if (link.carrier != TRI_UNKNOWN)
		add_u64(c, NS "network_carrier", "1 when the netdev has a carrier", METRIC_GAUGE, l,
			1, link.carrier == TRI_YES);
	/* Unknown while the link is down. */
	if (link.speed_mbps >= 0)
		add_u64(c, NS "network_speed_bytes", "The netdev's link speed, in bytes per second",
			METRIC_GAUGE, l, 1, (uint64_t)link.speed_mbps * 125000);
	if (link.operstate)
		add_u64(c, NS "network_up", "1 when the operstate is up", METRIC_GAUGE, l, 1,
			streq(link.operstate, "up"));
	for (size_t i = 0; i < ARRAY_SIZE(netdev_stats); i++)
		files[i] = netdev_stats[i].file;
	netdev_read_statistics(&c->rd, dev, files, netdev_stat, &counters);
out:
	netdev_link_release(&link);
	strbuf_release(&counters.metric);
}

static void netdev(struct collect *c)
{
	struct strvec devs = STRVEC_INIT;

	netdev_list(&c->rd, &devs);
	for (size_t i = 0; i < devs.nr; i++)
		netdev_one(c, devs.v[i]);
	strvec_clear(&devs);
}

static void thermal_zone(void *data, const struct thermal_zone *z)
{
	const struct metric_label l[2] = {
		{ "zone", z->name + strlen("thermal_zone") },
		{ "type", nonempty(z->type) },
	};

	add_double(data, NS "thermal_zone_temp_celsius", "Thermal zone temperature", l, 2,
		   z->celsius);
}

static void thermal(struct collect *c)
{
	thermal_read_zones(&c->rd, thermal_zone, c);
}

static void hwmon_chip(void *data, const char *chip, const char *name)
{
	const struct metric_label l[2] = { { "chip", chip }, { "chip_name", name } };

	if (name)
		add_u64(data, NS "hwmon_chip_info", "The hwmon chip's driver name", METRIC_GAUGE, l,
			2, 1);
}

static void hwmon_sensor(void *data, const struct hwmon_sensor *s)
{
	const struct metric_label l[3] = {
		{ "chip", s->chip },
		{ "sensor", s->name },
		{ "label", s->label },
	};

	if (s->has_celsius)
		add_double(data, NS "hwmon_temp_celsius", "Hardware monitor temperature", l, 2,
			   s->celsius);
	if (s->label)
		add_u64(data, NS "hwmon_sensor_label", "The label of the hwmon sensor",
			METRIC_GAUGE, l, 3, 1);
}

static void hwmon(struct collect *c)
{
	static const struct hwmon_fns fns = { hwmon_chip, hwmon_sensor };

	hwmon_read_chips(&c->rd, &fns, c);
}

static void aer(struct collect *c)
{
	struct strvec devs = STRVEC_INIT;
	struct pci_aer counts;

	pci_list_functions(&c->rd, &devs);
	for (size_t i = 0; i < devs.nr; i++) {
		static const char *const kinds[3] = { "correctable", "nonfatal", "fatal" };

		if (pci_read_aer(&c->rd, devs.v[i], &counts) <= 0)
			continue;
		const int64_t by_kind[3] = { counts.correctable, counts.nonfatal, counts.fatal };
		for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
			const struct metric_label l[2] = {
				{ "device", devs.v[i] },
				{ "severity", kinds[k] },
			};
			if (by_kind[k] >= 0)
				add_u64(c, NS "pcie_aer_errors_total",
					"PCIe AER errors the device reported, by severity",
					METRIC_COUNTER, l, 2, (uint64_t)by_kind[k]);
		}
	}
	strvec_clear(&devs);
}

static void meminfo(struct collect *c)
{
	static const struct {
		size_t offset;
		const char *metric, *help;
	} lines[] = {
		{ offsetof(struct meminfo, mem_total), NS "memory_total_bytes",
		  "Total usable memory (MemTotal)" },
		{ offsetof(struct meminfo, mem_available), NS "memory_available_bytes",
		  "Memory available without swapping (MemAvailable); on unified-memory GPUs "
		  "(GB10) also what the GPU can still allocate" },
		{ offsetof(struct meminfo, cma_total), NS "memory_cma_total_bytes",
		  "Contiguous memory allocator pool (CmaTotal)" },
		{ offsetof(struct meminfo, cma_free), NS "memory_cma_free_bytes",
		  "Free CMA memory (CmaFree)" },
	};
	struct meminfo m;

	if (meminfo_read(&c->rd, &m) <= 0)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(lines); i++) {
		int64_t v = *(const int64_t *)(const void *)((const char *)&m + lines[i].offset);

		/* Only the CMA lines are optional (kernels without CMA). */
		if (v >= 0)
			add_u64(c, lines[i].metric, lines[i].help, METRIC_GAUGE, NULL, 0,
				(uint64_t)v);
		else if (lines[i].offset != offsetof(struct meminfo, cma_total) &&
			 lines[i].offset != offsetof(struct meminfo, cma_free))
			keep(&c->ret, -EINVAL);
	}
}

typedef void collector_fn(struct collect *c);

/* Run one collector of the host's files; its first failure, or 0. */
static int run(collector_fn *fn, const struct rootfs *root, struct reader_cache *cache,
	       struct metric_set *set)
{
	struct collect c = {
		.rd = { .root = root, .cache = cache, .fail = read_failed },
		.set = set,
	};

	c.rd.data = &c;
	fn(&c);
	return c.ret;
}

int collect_rdma(const struct rootfs *root, struct metric_set *set)
{
	return run(rdma, root, NULL, set);
}

int collect_netdev(const struct rootfs *root, struct metric_set *set)
{
	return run(netdev, root, NULL, set);
}

int collect_thermal(const struct rootfs *root, struct metric_set *set)
{
	return run(thermal, root, NULL, set);
}

int collect_hwmon(const struct rootfs *root, struct metric_set *set)
{
	return run(hwmon, root, NULL, set);
}

int collect_aer(const struct rootfs *root, struct metric_set *set)
{
	return run(aer, root, NULL, set);
}

int collect_meminfo(const struct rootfs *root, struct metric_set *set)
{
	return run(meminfo, root, NULL, set);
}

int exporter_collect(const struct exporter_source *src, struct metric_set *set)
{
	static const struct {
		const char *name;
		collector_fn *fn; /* NULL: the GPUs, through NVML */
	} collectors[] = {
		{ "gpu", NULL },	{ "rdma", rdma },   { "netdev", netdev },
		{ "thermal", thermal }, { "hwmon", hwmon }, { "aer", aer },
		{ "meminfo", meminfo },
	};
	const struct metric_label build[2] = {
		{ "version", SPARKCTL_VERSION },
		{ "revision", SPARKCTL_GIT_REVISION },
	};
	int ok[ARRAY_SIZE(collectors)];
	uint64_t t0 = monotonic_ns();
	int ret = 0;

	for (size_t i = 0; i < ARRAY_SIZE(collectors); i++) {
		int r;

		if (!collectors[i].fn && !src->gpu) {
			ok[i] = -1;
			continue;
		}
		if (collectors[i].fn)
			r = run(collectors[i].fn, src->root, src->cache, set);
		else
			r = exporter_gpu_collect(src->gpu, set);
		keep(&ret, r);
		ok[i] = r == 0;
	}
	if (!src->gpu_disabled)
		keep(&ret,
		     metric_add_u64(set, NS "gpu_nvml_up",
				    "1 when NVML (libnvidia-ml.so.1) is loaded and initialised",
				    METRIC_GAUGE, NULL, 0, src->gpu != NULL));
	keep(&ret, metric_add_u64(set, NS "build_info", "The version of this sparkctl",
				  METRIC_GAUGE, build, 2, 1));
	for (size_t i = 0; i < ARRAY_SIZE(collectors); i++) {
		const struct metric_label l[1] = { { "collector", collectors[i].name } };

		if (ok[i] < 0)
			continue;
		keep(&ret, metric_add_u64(set, NS "scrape_collector_success",
					  "1 when the collector read everything it found",
					  METRIC_GAUGE, l, 1, (uint64_t)ok[i]));
	}
	if (src->cache)
		reader_cache_sweep(src->cache);
	keep(&ret, metric_add_double(set, NS "scrape_duration_seconds",
				     "How long collecting this scrape took", METRIC_GAUGE, NULL, 0,
				     (double)(monotonic_ns() - t0) / 1e9));
	return ret;
}
