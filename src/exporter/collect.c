#include "sparkctl.h"

#include "exporter/collect.h"
#include "exporter/gpu.h"
#include "lib/clock.h"
#include "lib/host_text.h"
#include "lib/parse.h"
#include "lib/xalloc.h"
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

/* Errors that mean "this file is not there to read" rather than bad content. */
static bool skippable(int r)
{
	return r == -ENOENT || r == -ENOTDIR || r == -EACCES || r == -EPERM || r == -EINVAL ||
	       r == -EOPNOTSUPP || r == -ENODEV || r == -EIO || r == -ENODATA || r == -EAGAIN;
}

/* Keep the first error of a collector. */
static void keep(int *ret, int r)
{
	if (r < 0 && *ret == 0)
		*ret = r;
}

/* Read rel as a value; 1 when read, 0 when it is not there to read, < 0 on a real error. */
static int read_value(const struct rootfs *root, const char *rel, struct strbuf *out)
{
	int r = rootfs_read_value(root, rel, out);

	if (r >= 0)
		return 1;
	return skippable(r) ? 0 : r;
}

/* read_value() of name in dir. */
static int dir_value(const struct rootfs_dir *dir, const char *name, struct strbuf *out)
{
	int r = rootfs_dir_read_value(dir, name, out);

	if (r >= 0)
		return 1;
	return skippable(r) ? 0 : r;
}

/* Open the directory rel; 1 when open, 0 when it is not there, < 0 on a real error. */
static int dir_open(const struct rootfs *root, const char *rel, struct rootfs_dir *dir)
{
	int r = rootfs_dir_open(root, rel, dir);

	if (r >= 0)
		return 1;
	return skippable(r) ? 0 : r;
}

/*
 * Add the counter text v as metric; r is what reading it gave (1 read, 0
 * not there, < 0 an error).  Bad content is -EINVAL; "N/A" adds nothing.
 */
static int add_counter(int r, const struct strbuf *v, struct metric_set *set, const char *metric,
		       const char *help, uint64_t scale, const struct metric_label *labels,
		       size_t nr_labels)
{
	uint64_t n;

	if (r > 0) {
		r = exporter_parse_counter(v->buf, &n);
		if (r == -ENODATA)
			r = 0;
		else if (r == 0)
			r = metric_add_u64(set, metric, help, METRIC_COUNTER, labels, nr_labels,
					   n * scale);
	}
	return r;
}

/*
 * The counter directories of the RDMA ports, kept open between scrapes:
 * a scrape then costs one pread() per counter instead of an open, a stat,
 * a read and a close.  A directory is opened again when a read failed
 * (the device went away), after CACHE_REOPEN_NS (counters a newer setting
 * added), and closed when a scrape no longer met it.
 */
#define CACHE_REOPEN_NS (60ULL * 1000 * 1000 * 1000)

struct cached_dir {
	char *rel;
	struct strvec names;
	int *fds; /* per name: the open file, or -errno of opening it */
	uint64_t opened_ns;
	bool seen;  /* met by the current scrape */
	bool stale; /* a read failed: open again at the next scrape */
};

struct exporter_cache {
	struct cached_dir *dirs;
	size_t nr, alloc;
};

struct exporter_cache *exporter_cache_new(void)
{
	return xcalloc(1, sizeof(struct exporter_cache));
}

static void cached_dir_release(struct cached_dir *cd)
{
	for (size_t i = 0; i < cd->names.nr; i++)
		if (cd->fds[i] >= 0)
			close(cd->fds[i]);
	free(cd->fds);
	cd->fds = NULL;
	strvec_clear(&cd->names);
}

void exporter_cache_free(struct exporter_cache *cache)
{
	if (!cache)
		return;
	for (size_t i = 0; i < cache->nr; i++) {
		cached_dir_release(&cache->dirs[i]);
		free(cache->dirs[i].rel);
	}
	free(cache->dirs);
	free(cache);
}

/* Close what the scrape did not meet. */
static void cache_sweep(struct exporter_cache *cache)
{
	size_t n = 0;

	for (size_t i = 0; i < cache->nr; i++) {
		struct cached_dir *cd = &cache->dirs[i];

		if (!cd->seen) {
			cached_dir_release(cd);
			free(cd->rel);
			continue;
		}
		cd->seen = false;
		cache->dirs[n++] = *cd;
	}
	cache->nr = n;
}

/* Open the files want (NULL-terminated; NULL: every file listed) of cd->rel. */
static int cached_dir_open(const struct rootfs *root, struct cached_dir *cd,
			   const char *const *want)
{
	struct rootfs_dir dir;
	int r = rootfs_dir_open(root, cd->rel, &dir);

	if (r < 0)
		return r;
	if (want) {
		strvec_clear(&cd->names);
		for (; *want; want++)
			strvec_push(&cd->names, *want);
	} else {
		r = rootfs_dir_list(&dir, &cd->names);
	}
	if (r >= 0) {
		cd->fds = xcalloc(cd->names.nr ? cd->names.nr : 1, sizeof(*cd->fds));
		for (size_t i = 0; i < cd->names.nr; i++) {
			cd->fds[i] = rootfs_dir_open_value(&dir, cd->names.v[i]);
			/* Out of descriptors: read this one the plain way. */
			if (cd->fds[i] == -EMFILE || cd->fds[i] == -ENFILE)
				r = cd->fds[i];
		}
		cd->opened_ns = monotonic_ns();
		cd->stale = false;
	}
	rootfs_dir_close(&dir);
	if (r < 0)
		cached_dir_release(cd);
	return r < 0 ? r : 0;
}

/* The open directory rel, or NULL (then the caller reads it the plain way). */
static struct cached_dir *cache_get(struct exporter_cache *cache, const struct rootfs *root,
				    const char *rel, const char *const *want)
{
	struct cached_dir *cd = NULL;

	for (size_t i = 0; i < cache->nr; i++)
		if (streq(cache->dirs[i].rel, rel))
			cd = &cache->dirs[i];
	if (cd && (cd->stale || monotonic_ns() - cd->opened_ns > CACHE_REOPEN_NS))
		cached_dir_release(cd);
	else if (cd)
		goto out;
	if (!cd) {
		if (cache->nr == cache->alloc) {
			cache->alloc = cache->alloc ? 2 * cache->alloc : 16;
			cache->dirs = xrealloc(cache->dirs, cache->alloc * sizeof(*cache->dirs));
		}
		cd = &cache->dirs[cache->nr++];
		memset(cd, 0, sizeof(*cd));
		cd->rel = xstrdup(rel);
		strvec_init(&cd->names);
	}
	if (cached_dir_open(root, cd, want) < 0) {
		/* Forgotten at the sweep: never seen. */
		cd->stale = true;
		return NULL;
	}
out:
	cd->seen = true;
	return cd;
}

/* The value of name i of cd, as dir_value() answers. */
static int cached_value(struct cached_dir *cd, size_t i, struct strbuf *out)
{
	int r = cd->fds[i];

	if (r >= 0) {
		r = rootfs_reread_value(cd->fds[i], out);
		if (r >= 0)
			return 1;
		cd->stale = true;
	}
	return skippable(r) ? 0 : r;
}

/*
 * A directory read by name, kept open in the cache when there is one
 * (only the files want), else opened for this scrape.
 */
struct dirview {
	struct rootfs_dir dir;
	struct cached_dir *cd;
};

/* 1 when open, 0 when the directory is not there, < 0 on a real error. */
static int view_open(const struct rootfs *root, struct exporter_cache *cache, const char *rel,
		     const char *const *want, struct dirview *dv)
{
	dv->dir.dirfd = -1;
	dv->dir.rel = NULL;
	dv->cd = cache ? cache_get(cache, root, rel, want) : NULL;
	if (dv->cd)
		return 1;
	return dir_open(root, rel, &dv->dir);
}

static int view_value(struct dirview *dv, const char *name, struct strbuf *out)
{
	if (!dv->cd)
		return dir_value(&dv->dir, name, out);
	for (size_t i = 0; i < dv->cd->names.nr; i++)
		if (streq(dv->cd->names.v[i], name))
			return cached_value(dv->cd, i, out);
	return 0;
}

static void view_close(struct dirview *dv)
{
	rootfs_dir_close(&dv->dir);
	dv->cd = NULL;
}

static int rdma_counter_dir(const struct rootfs *root, struct exporter_cache *cache,
			    const char *rel, bool hw, struct metric_set *set,
			    const struct metric_label *labels)
{
	struct strvec listed = STRVEC_INIT;
	const struct strvec *names = &listed;
	struct strbuf metric = STRBUF_INIT, v = STRBUF_INIT;
	struct rootfs_dir dir = { .dirfd = -1 };
	struct cached_dir *cd = cache ? cache_get(cache, root, rel, NULL) : NULL;
	int ret = 0, r;

	if (cd) {
		names = &cd->names;
	} else {
		r = dir_open(root, rel, &dir);
		if (r <= 0)
			return r;
		r = rootfs_dir_list(&dir, &listed);
		if (r < 0) {
			ret = skippable(r) ? 0 : r;
			goto out;
		}
	}
	for (size_t i = 0; i < names->nr; i++) {
		const char *name = names->v[i];
		const struct rdma_counter *c = rdma_counter_find(name, hw);
		struct metric_label l[3] = { labels[0], labels[1], { "counter", name } };

		if (!c && !hw)
			continue;
		r = cd ? cached_value(cd, i, &v) : dir_value(&dir, name, &v);
		if (hw && streq(name, "lifespan")) {
			uint64_t ms;

			if (r > 0 && exporter_parse_counter(v.buf, &ms) == 0)
				r = metric_add_double(set,
						      NS "rdma_port_hw_counters_lifespan_seconds",
						      "How long the driver caches hw_counters",
						      METRIC_GAUGE, labels, 2, (double)ms / 1000.0);
			keep(&ret, r < 0 ? r : 0);
			continue;
		}
		strbuf_reset(&metric);
		if (c) {
			strbuf_addf(&metric, NS "rdma_%s", c->metric);
			r = add_counter(r, &v, set, metric.buf, c->help, c->scale, l, 2);
		} else {
			/* Counters of newer drivers still show up, by their file name. */
			r = add_counter(r, &v, set, NS "rdma_port_hw_counter_total",
					"Other hw_counters of the port, by file name", 1, l, 3);
		}
		keep(&ret, r);
	}
out:
	rootfs_dir_close(&dir);
	strvec_clear(&listed);
	strbuf_release(&metric);
	strbuf_release(&v);
	return ret;
}

/* ports/P/state or phys_state ("4: ACTIVE") as a gauge of its number; the name to *ret_name. */
static int rdma_state(struct dirview *dir, const char *file, struct strbuf *v,
		      struct metric_set *set, const char *metric, const char *help,
		      const struct metric_label *labels, char **ret_name)
{
	int code, r = view_value(dir, file, v);

	if (r > 0) {
		r = parse_port_state(v->buf, &code, ret_name);
		if (r == 0 && code >= 0)
			r = metric_add_u64(set, metric, help, METRIC_GAUGE, labels, 2,
					   (uint64_t)code);
	}
	return r < 0 ? r : 0;
}

static int rdma_port(const struct rootfs *root, struct exporter_cache *cache, const char *dev,
		     const char *port, struct metric_set *set)
{
	struct strbuf rel = STRBUF_INIT, v = STRBUF_INIT;
	struct strbuf link_layer = STRBUF_INIT, netdev = STRBUF_INIT;
	static const char *const port_files[] = { "state", "phys_state", "rate", "link_layer",
						  NULL };
	static const char *const ndev_files[] = { "0", NULL };
	const struct metric_label labels[2] = { { "device", dev }, { "port", port } };
	struct dirview dir;
	char *state = NULL, *phys = NULL;
	int64_t mbps;
	int ret = 0, r;

	strbuf_addf(&rel, "sys/class/infiniband/%s/ports/%s", dev, port);
	r = view_open(root, cache, rel.buf, port_files, &dir);
	if (r <= 0)
		goto out;
	keep(&ret, rdma_state(&dir, "state", &v, set, NS "rdma_port_state_id",
			      "Port state: 1 down, 2 init, 3 armed, 4 active, 5 active defer",
			      labels, &state));
	keep(&ret, rdma_state(&dir, "phys_state", &v, set, NS "rdma_port_physical_state_id",
			      "Physical port state: 2 polling, 3 disabled, 5 link up, 6 link error "
			      "recovery",
			      labels, &phys));
	r = view_value(&dir, "rate", &v);
	if (r > 0) {
		r = parse_port_rate(v.buf, &mbps);
		if (r == 0)
			r = metric_add_u64(set, NS "rdma_port_rate_bytes_per_second",
					   "Port signalling rate, in bytes per second",
					   METRIC_GAUGE, labels, 2, (uint64_t)mbps * 125000);
	}
	keep(&ret, r < 0 ? r : 0);
	if (view_value(&dir, "link_layer", &link_layer) <= 0)
		strbuf_reset(&link_layer);
	view_close(&dir);

	/* The netdev of GID 0: what ties the port to the network series. */
	strbuf_addstr(&rel, "/gid_attrs/ndevs");
	if (view_open(root, cache, rel.buf, ndev_files, &dir) <= 0 ||
	    view_value(&dir, "0", &netdev) <= 0)
		strbuf_reset(&netdev);
	view_close(&dir);
	{
		const struct metric_label info[6] = {
			labels[0],
			labels[1],
			{ "link_layer", link_layer.len ? link_layer.buf : NULL },
			{ "netdev", netdev.len ? netdev.buf : NULL },
			{ "state", state },
			{ "phys_state", phys },
		};
		keep(&ret, metric_add_u64(set, NS "rdma_port_info",
					  "The port's link layer, netdev (of GID 0) and states",
					  METRIC_GAUGE, info, ARRAY_SIZE(info), 1));
	}

	strbuf_reset(&rel);
	strbuf_addf(&rel, "sys/class/infiniband/%s/ports/%s/counters", dev, port);
	keep(&ret, rdma_counter_dir(root, cache, rel.buf, false, set, labels));
	strbuf_reset(&rel);
	strbuf_addf(&rel, "sys/class/infiniband/%s/ports/%s/hw_counters", dev, port);
	keep(&ret, rdma_counter_dir(root, cache, rel.buf, true, set, labels));
out:
	free(state);
	free(phys);
	strbuf_release(&rel);
	strbuf_release(&v);
	strbuf_release(&link_layer);
	strbuf_release(&netdev);
	return r < 0 ? r : ret;
}

static int rdma_device(const struct rootfs *root, struct exporter_cache *cache, const char *dev,
		       struct metric_set *set)
{
	static const char *const attrs[][2] = {
		{ "board_id", "board_id" },
		{ "fw_ver", "firmware_version" },
		{ "hca_type", "hca_type" },
	};
	static const char *const files[] = { "board_id", "fw_ver", "hca_type", NULL };
	struct strbuf path = STRBUF_INIT, vals[ARRAY_SIZE(attrs)];
	struct metric_label info[1 + ARRAY_SIZE(attrs)] = { { "device", dev } };
	struct strvec ports = STRVEC_INIT;
	struct dirview dir;
	int ret = 0, r, opened;

	strbuf_addf(&path, "sys/class/infiniband/%s", dev);
	opened = view_open(root, cache, path.buf, files, &dir);
	keep(&ret, opened < 0 ? opened : 0);
	for (size_t i = 0; i < ARRAY_SIZE(attrs); i++) {
		strbuf_init(&vals[i], 0);
		r = opened > 0 ? view_value(&dir, attrs[i][0], &vals[i]) : 0;
		keep(&ret, r < 0 ? r : 0);
		info[1 + i].name = attrs[i][1];
		info[1 + i].value = r > 0 ? vals[i].buf : NULL;
	}
	view_close(&dir);
	keep(&ret, metric_add_u64(set, NS "rdma_info", "The RDMA device's board, firmware and HCA",
				  METRIC_GAUGE, info, ARRAY_SIZE(info), 1));
	strbuf_reset(&path);
	strbuf_addf(&path, "sys/class/infiniband/%s/ports", dev);
	r = rootfs_list(root, path.buf, &ports);
	if (r < 0)
		keep(&ret, skippable(r) ? 0 : r);
	for (size_t i = 0; i < ports.nr; i++)
		keep(&ret, rdma_port(root, cache, dev, ports.v[i], set));
	for (size_t i = 0; i < ARRAY_SIZE(attrs); i++)
		strbuf_release(&vals[i]);
	strbuf_release(&path);
	strvec_clear(&ports);
	return ret;
}

typedef int entry_collector(const struct rootfs *root, struct exporter_cache *cache,
			    const char *name, struct metric_set *set);

/* fn for each entry of the class directory rel; none (no such class) is no error. */
static int collect_each(const struct rootfs *root, struct exporter_cache *cache, const char *rel,
			entry_collector *fn, struct metric_set *set)
{
	struct strvec names = STRVEC_INIT;
	int ret = 0, r = rootfs_list(root, rel, &names);

	if (r < 0)
		ret = r == -ENOENT ? 0 : r;
	for (size_t i = 0; i < names.nr; i++)
		keep(&ret, fn(root, cache, names.v[i], set));
	strvec_clear(&names);
	return ret;
}

int collect_rdma(const struct rootfs *root, struct metric_set *set)
{
	return collect_rdma_cached(root, NULL, set);
}

int collect_rdma_cached(const struct rootfs *root, struct exporter_cache *cache,
			struct metric_set *set)
{
	return collect_each(root, cache, "sys/class/infiniband", rdma_device, set);
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

/* A signed gauge file of the netdev; "-1" or an unreadable file (link down) adds nothing. */
static int netdev_gauge(struct dirview *dir, const char *file, struct strbuf *v,
			struct metric_set *set, const char *metric, const char *help,
			uint64_t scale, const struct metric_label *l)
{
	int64_t n;
	int r = view_value(dir, file, v);

	if (r > 0) {
		r = parse_i64(v->buf, &n) < 0 ? -EINVAL : 0;
		if (r == 0 && n >= 0)
			r = metric_add_u64(set, metric, help, METRIC_GAUGE, l, 1,
					   (uint64_t)n * scale);
	}
	return r < 0 ? r : 0;
}

static int netdev_one(const struct rootfs *root, struct exporter_cache *cache, const char *dev,
		      struct metric_set *set)
{
	static const char *const files[] = { "mtu", "carrier", "speed", "operstate", NULL };
	const char *stats[ARRAY_SIZE(netdev_stats) + 1] = { NULL };
	const struct metric_label l[1] = { { "device", dev } };
	struct strbuf rel = STRBUF_INIT, metric = STRBUF_INIT, v = STRBUF_INIT;
	struct dirview dir;
	int ret = 0, r;

	strbuf_addf(&rel, "sys/class/net/%s", dev);
	r = view_open(root, cache, rel.buf, files, &dir);
	if (r <= 0)
		goto out;
	keep(&ret,
	     netdev_gauge(&dir, "mtu", &v, set, NS "network_mtu_bytes", "The netdev's MTU", 1, l));
	keep(&ret, netdev_gauge(&dir, "carrier", &v, set, NS "network_carrier",
				"1 when the netdev has a carrier", 1, l));
	keep(&ret, netdev_gauge(&dir, "speed", &v, set, NS "network_speed_bytes",
				"The netdev's link speed, in bytes per second", 125000, l));
	if (view_value(&dir, "operstate", &v) > 0)
		keep(&ret, metric_add_u64(set, NS "network_up", "1 when the operstate is up",
					  METRIC_GAUGE, l, 1, streq(v.buf, "up")));
	view_close(&dir);

	strbuf_addstr(&rel, "/statistics");
	for (size_t i = 0; i < ARRAY_SIZE(netdev_stats); i++)
		stats[i] = netdev_stats[i].file;
	r = view_open(root, cache, rel.buf, stats, &dir);
	if (r <= 0)
		goto out;
	for (size_t i = 0; i < ARRAY_SIZE(netdev_stats); i++) {
		strbuf_reset(&metric);
		strbuf_addf(&metric, NS "network_%s", netdev_stats[i].metric);
		r = view_value(&dir, netdev_stats[i].file, &v);
		keep(&ret, add_counter(r, &v, set, metric.buf, netdev_stats[i].help, 1, l, 1));
	}
	view_close(&dir);
out:
	strbuf_release(&rel);
	strbuf_release(&metric);
	strbuf_release(&v);
	return r < 0 ? r : ret;
}

int collect_netdev(const struct rootfs *root, struct metric_set *set)
{
	return collect_netdev_cached(root, NULL, set);
}

int collect_netdev_cached(const struct rootfs *root, struct exporter_cache *cache,
			  struct metric_set *set)
{
	return collect_each(root, cache, "sys/class/net", netdev_one, set);
}

/* A millidegree file as degrees; 0 when there is none, 1 when read, -EINVAL for bad content. */
static int read_millis(const struct rootfs *root, const char *rel, double *ret)
{
	struct strbuf v = STRBUF_INIT;
	int64_t n;
	int r = read_value(root, rel, &v);

	if (r > 0) {
		if (parse_i64(v.buf, &n) < 0)
			r = -EINVAL;
		else
			*ret = (double)n / 1000.0;
	}
	strbuf_release(&v);
	return r;
}

int collect_thermal(const struct rootfs *root, struct metric_set *set)
{
	struct strvec zones = STRVEC_INIT;
	struct strbuf path = STRBUF_INIT, type = STRBUF_INIT;
	int ret = 0, r = rootfs_list(root, "sys/class/thermal", &zones);
	double t;

	if (r < 0)
		ret = r == -ENOENT ? 0 : r;
	for (size_t i = 0; i < zones.nr; i++) {
		const char *zone = zones.v[i];

		if (!starts_with(zone, "thermal_zone"))
			continue;
		strbuf_reset(&path);
		strbuf_addf(&path, "sys/class/thermal/%s/type", zone);
		if (read_value(root, path.buf, &type) <= 0)
			strbuf_reset(&type);
		strbuf_reset(&path);
		strbuf_addf(&path, "sys/class/thermal/%s/temp", zone);
		r = read_millis(root, path.buf, &t);
		if (r > 0) {
			const struct metric_label l[2] = {
				{ "zone", zone + strlen("thermal_zone") },
				{ "type", type.len ? type.buf : NULL },
			};
			r = metric_add_double(set, NS "thermal_zone_temp_celsius",
					      "Thermal zone temperature", METRIC_GAUGE, l, 2, t);
		}
		keep(&ret, r < 0 ? r : 0);
	}
	strvec_clear(&zones);
	strbuf_release(&path);
	strbuf_release(&type);
	return ret;
}

/* Read the plain way: no cache (collect_hwmon has none). */
static int hwmon_chip(const struct rootfs *root, struct exporter_cache *cache, const char *chip,
		      struct metric_set *set)
{
	struct strvec files = STRVEC_INIT;
	struct strbuf path = STRBUF_INIT, v = STRBUF_INIT, sensor = STRBUF_INIT;
	int ret = 0, r;
	double t;

	(void)cache;
	strbuf_addf(&path, "sys/class/hwmon/%s/name", chip);
	if (read_value(root, path.buf, &v) > 0) {
		const struct metric_label l[2] = { { "chip", chip }, { "chip_name", v.buf } };
		keep(&ret, metric_add_u64(set, NS "hwmon_chip_info", "The hwmon chip's driver name",
					  METRIC_GAUGE, l, 2, 1));
	}
	strbuf_reset(&path);
	strbuf_addf(&path, "sys/class/hwmon/%s", chip);
	r = rootfs_list(root, path.buf, &files);
	if (r < 0)
		keep(&ret, skippable(r) ? 0 : r);
	for (size_t i = 0; i < files.nr; i++) {
		const char *f = files.v[i];
		size_t n = strlen(f);

		if (!starts_with(f, "temp") || n < 11 || !streq(f + n - 6, "_input"))
			continue;
		strbuf_reset(&sensor);
		strbuf_add(&sensor, f, n - 6);
		strbuf_reset(&path);
		strbuf_addf(&path, "sys/class/hwmon/%s/%s", chip, f);
		r = read_millis(root, path.buf, &t);
		if (r > 0) {
			const struct metric_label l[2] = { { "chip", chip },
							   { "sensor", sensor.buf } };
			r = metric_add_double(set, NS "hwmon_temp_celsius",
					      "Hardware monitor temperature", METRIC_GAUGE, l, 2,
					      t);
		}
		keep(&ret, r < 0 ? r : 0);
		strbuf_reset(&path);
		strbuf_addf(&path, "sys/class/hwmon/%s/%s_label", chip, sensor.buf);
		if (read_value(root, path.buf, &v) > 0) {
			const struct metric_label l[3] = {
				{ "chip", chip },
				{ "sensor", sensor.buf },
				{ "label", v.buf },
			};
			keep(&ret, metric_add_u64(set, NS "hwmon_sensor_label",
						  "The label of the hwmon sensor", METRIC_GAUGE, l,
						  3, 1));
		}
	}
	strvec_clear(&files);
	strbuf_release(&path);
	strbuf_release(&v);
	strbuf_release(&sensor);
	return ret;
}

int collect_hwmon(const struct rootfs *root, struct metric_set *set)
{
	return collect_each(root, NULL, "sys/class/hwmon", hwmon_chip, set);
}

int collect_aer(const struct rootfs *root, struct metric_set *set)
{
	return collect_aer_cached(root, NULL, set);
}

int collect_aer_cached(const struct rootfs *root, struct exporter_cache *cache,
		       struct metric_set *set)
{
	static const char *const kinds[][3] = {
		{ "aer_dev_correctable", "TOTAL_ERR_COR", "correctable" },
		{ "aer_dev_nonfatal", "TOTAL_ERR_NONFATAL", "nonfatal" },
		{ "aer_dev_fatal", "TOTAL_ERR_FATAL", "fatal" },
	};
	const char *files[ARRAY_SIZE(kinds) + 1] = { NULL };
	struct dirview dir;
	struct strvec devs = STRVEC_INIT;
	struct strbuf path = STRBUF_INIT, text = STRBUF_INIT;
	int ret = 0, r = rootfs_list(root, "sys/bus/pci/devices", &devs);
	int64_t n;

	for (size_t k = 0; k < ARRAY_SIZE(kinds); k++)
		files[k] = kinds[k][0];
	if (r < 0)
		ret = r == -ENOENT ? 0 : r;
	for (size_t i = 0; i < devs.nr; i++) {
		strbuf_reset(&path);
		strbuf_addf(&path, "sys/bus/pci/devices/%s", devs.v[i]);
		r = view_open(root, cache, path.buf, files, &dir);
		keep(&ret, r < 0 ? r : 0);
		for (size_t k = 0; r > 0 && k < ARRAY_SIZE(kinds); k++) {
			const struct metric_label l[2] = {
				{ "device", devs.v[i] },
				{ "severity", kinds[k][2] },
			};
			int rv = view_value(&dir, kinds[k][0], &text);

			if (rv <= 0) {
				keep(&ret, rv);
				continue;
			}
			if (parse_aer_total(text.buf, kinds[k][1], &n) < 0 || n < 0) {
				keep(&ret, -EINVAL);
				continue;
			}
			keep(&ret,
			     metric_add_u64(set, NS "pcie_aer_errors_total",
					    "PCIe AER errors the device reported, by severity",
					    METRIC_COUNTER, l, 2, (uint64_t)n));
		}
		view_close(&dir);
	}
	strvec_clear(&devs);
	strbuf_release(&path);
	strbuf_release(&text);
	return ret;
}

int collect_meminfo(const struct rootfs *root, struct metric_set *set)
{
	static const char *const keys[][3] = {
		{ "MemTotal", "memory_total_bytes", "Total usable memory (MemTotal)" },
		{ "MemAvailable", "memory_available_bytes",
		  "Memory available without swapping (MemAvailable); on unified-memory GPUs "
		  "(GB10) also what the GPU can still allocate" },
		{ "CmaTotal", "memory_cma_total_bytes",
		  "Contiguous memory allocator pool (CmaTotal)" },
		{ "CmaFree", "memory_cma_free_bytes", "Free CMA memory (CmaFree)" },
	};
	struct strbuf text = STRBUF_INIT, metric = STRBUF_INIT;
	int ret = 0, r = rootfs_read_file(root, "proc/meminfo", ROOTFS_FILE_MAX, &text);
	int64_t n;

	if (r < 0) {
		ret = r == -ENOENT ? 0 : r;
		goto out;
	}
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		r = parse_meminfo(text.buf, keys[i][0], &n);
		if (r < 0) {
			/* Only the CMA lines are optional (kernels without CMA). */
			if (!starts_with(keys[i][0], "Cma"))
				keep(&ret, -EINVAL);
			continue;
		}
		strbuf_reset(&metric);
		strbuf_addf(&metric, NS "%s", keys[i][1]);
		keep(&ret, metric_add_u64(set, metric.buf, keys[i][2], METRIC_GAUGE, NULL, 0,
					  (uint64_t)n));
	}
out:
	strbuf_release(&text);
	strbuf_release(&metric);
	return ret;
}

struct collector {
	const char *name;
	int (*fn)(const struct exporter_source *src, struct metric_set *set);
};

#define HOST_COLLECTOR(name)                                                                       \
	static int run_##name(const struct exporter_source *src, struct metric_set *set)           \
	{                                                                                          \
		return collect_##name(src->root, set);                                             \
	}
HOST_COLLECTOR(thermal)
HOST_COLLECTOR(hwmon)
HOST_COLLECTOR(meminfo)

static int run_rdma(const struct exporter_source *src, struct metric_set *set)
{
	return collect_rdma_cached(src->root, src->cache, set);
}

static int run_netdev(const struct exporter_source *src, struct metric_set *set)
{
	return collect_netdev_cached(src->root, src->cache, set);
}

static int run_aer(const struct exporter_source *src, struct metric_set *set)
{
	return collect_aer_cached(src->root, src->cache, set);
}

static int run_gpu(const struct exporter_source *src, struct metric_set *set)
{
	return exporter_gpu_collect(src->gpu, set);
}

int exporter_collect(const struct exporter_source *src, struct metric_set *set)
{
	static const struct collector collectors[] = {
		{ "gpu", run_gpu },	    { "rdma", run_rdma },   { "netdev", run_netdev },
		{ "thermal", run_thermal }, { "hwmon", run_hwmon }, { "aer", run_aer },
		{ "meminfo", run_meminfo },
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

		if (collectors[i].fn == run_gpu && !src->gpu) {
			ok[i] = -1;
			continue;
		}
		r = collectors[i].fn(src, set);
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
		cache_sweep(src->cache);
	keep(&ret, metric_add_double(set, NS "scrape_duration_seconds",
				     "How long collecting this scrape took", METRIC_GAUGE, NULL, 0,
				     (double)(monotonic_ns() - t0) / 1e9));
	return ret;
}
