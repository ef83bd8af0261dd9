/*
 * rdma_ports.h - RDMA devices, their ports and the ports' counters, from
 * sys/class/infiniband (reader.h says how reads answer and fail).
 */
#ifndef SPARKCTL_PROBE_RDMA_PORTS_H
#define SPARKCTL_PROBE_RDMA_PORTS_H

#include "sparkctl.h"
#include "probe/reader.h"

#define RDMA_CLASS "sys/class/infiniband"

/* The RDMA devices' names, sorted: their number, 0 where there are none. */
int rdma_list_devices(const struct host_reader *rd, struct strvec *names);

/* What a device says of its adapter; NULL where it cannot be read. */
struct rdma_device_attrs {
	char *hca_type; /* "MT4129" */
	char *fw_ver;	/* "28.45.4028" */
	char *board_id; /* "NVD0000000087" */
};

/* 1 when the device's directory was read, 0 when it is absent. */
int rdma_read_device(const struct host_reader *rd, const char *dev, struct rdma_device_attrs *out);
void rdma_device_attrs_release(struct rdma_device_attrs *a);

/* The names in the device's ports/ ("1"), sorted: their number. */
int rdma_list_ports(const struct host_reader *rd, const char *dev, struct strvec *names);

/* The state of a port's link; INV_UNKNOWN and NULL where not known. */
struct rdma_port_link {
	int state;	       /* ports/P/state: 4 = ACTIVE */
	char *state_name;      /* "ACTIVE" */
	int phys_state;	       /* ports/P/phys_state: 5 = LinkUp */
	char *phys_state_name; /* "LinkUp" */
	char *rate;	       /* ports/P/rate as read: "200 Gb/sec (2X NDR)" */
	int64_t rate_mbps;     /* the rate in Mb/s */
	char *link_layer;      /* "Ethernet", "InfiniBand" */
};

/* 1 when the port's directory was read, 0 when it is absent. */
int rdma_read_port_link(const struct host_reader *rd, const char *dev, const char *port,
			struct rdma_port_link *out);
void rdma_port_link_release(struct rdma_port_link *l);

/* The netdev of the port's GID 0 (gid_attrs/ndevs/0), allocated, or NULL. */
char *rdma_read_port_netdev(const struct host_reader *rd, const char *dev, const char *port);

/*
 * The files of the port's counters/ (hw false) or hw_counters/ (hw true),
 * in name order: fn is called with the text of each one that want (NULL:
 * every one) accepts, before it is read, and that could be read.  Parsing
 * it is fn's, which returns -EINVAL for text not in its format (the reader
 * reports it).  Returns the number of files listed, 0 when there is no
 * such directory.
 */
typedef int rdma_counter_fn(void *data, const char *name, const char *text);
int rdma_read_counters(const struct host_reader *rd, const char *dev, const char *port, bool hw,
		       bool (*want)(void *data, const char *name), rdma_counter_fn *fn, void *data);

#endif
