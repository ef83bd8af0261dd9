/*
 * netdevs.h - network interfaces and their statistics, from sys/class/net
 * (reader.h says how reads answer and fail).
 */
#ifndef SPARKCTL_PROBE_NETDEVS_H
#define SPARKCTL_PROBE_NETDEVS_H

#include "sparkctl.h"
#include "probe/reader.h"

#define NET_CLASS "sys/class/net"

/* The netdevs of this network namespace, sorted: their number. */
int netdev_list(const struct host_reader *rd, struct strvec *names);

/* The state of a netdev's link; INV_UNKNOWN, TRI_UNKNOWN and NULL where not known. */
struct netdev_link {
	int64_t mtu;
	char *operstate;    /* "up", "down", "unknown", ... */
	int carrier;	    /* tri-state */
	int64_t speed_mbps; /* unknown while the link is down */
};

/* 1 when the netdev's directory was read, 0 when it is absent. */
int netdev_read_link(const struct host_reader *rd, const char *dev, struct netdev_link *out);
void netdev_link_release(struct netdev_link *l);

/*
 * The files names (NULL-terminated) of the netdev's statistics/: fn is
 * called with the text of each one that could be read, in that order,
 * and returns -EINVAL for text not in its format (the reader reports it).
 */
typedef int netdev_stat_fn(void *data, const char *name, const char *text);
int netdev_read_statistics(const struct host_reader *rd, const char *dev, const char *const *names,
			   netdev_stat_fn *fn, void *data);

#endif
