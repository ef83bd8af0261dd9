/*
 * node_master.c - where node 0's agent has the ranks meet: MASTER_ADDR
 * and a free MASTER_PORT.
 */
#include "sparkctl.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "launch/node_agent.h"
#include "lib/ipv4.h"

/* The address sshd accepted this session on, if it is a usable IPv4 address. */
static bool ssh_server_addr(char buf[16])
{
	const char *conn = getenv("SSH_CONNECTION");
	char client[64], server[64];
	unsigned cport, sport;
	uint32_t addr;

	if (!conn || sscanf(conn, "%63s %u %63s %u", client, &cport, server, &sport) != 4 ||
	    ipv4_parse(server, &addr) < 0 || (addr >> 24) == 127)
		return false;
	ipv4_format(addr, buf);
	return true;
}

/* The first IPv4 address of the interface that holds the default route. */
static bool default_route_addr(const struct inventory *inv, char buf[16])
{
	if (!inv)
		return false;
	for (size_t i = 0; i < inv->nr_netdevs; i++) {
		const struct inv_netdev *nd = &inv->netdevs[i];
		if (nd->default_route != 1)
			continue;
		for (size_t k = 0; k < nd->nr_addrs; k++)
			if (nd->addrs[k].family == AF_INET) {
				snprintf(buf, 16, "%s", nd->addrs[k].address);
				return true;
			}
	}
	return false;
}

int launch_master_addr(const struct launch_spec *s, const char *bootstrap,
		       const struct inventory *inv, char out[256], struct strbuf *err)
{
	char buf[16];

	if (s->master_addr)
		snprintf(out, 256, "%s", s->master_addr);
	else if (s->nnodes == 1 || s->all_local)
		snprintf(out, 256, "127.0.0.1");
	else if (bootstrap && bootstrap[0])
		snprintf(out, 256, "%s", bootstrap);
	else if (ssh_server_addr(buf) || default_route_addr(inv, buf))
		snprintf(out, 256, "%s", buf);
	else {
		strbuf_addstr(err, "cannot choose MASTER_ADDR: no fabric, no SSH address, no "
				   "default route; give --master-addr");
		return -ENOENT;
	}
	return 0;
}

/* A TCP port that is free now, chosen by the kernel. */
int launch_free_port(unsigned *ret, struct strbuf *err)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) < 0) {
		int e = errno;
		strbuf_addf(err, "cannot find a free TCP port: %s", strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	close(fd);
	*ret = ntohs(sin.sin_port);
	return 0;
}
