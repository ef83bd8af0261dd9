/*
 * block_path.c - the block device under a filesystem, and its NVMe
 * controller's transport (see block_path.h).
 */
#include "sparkctl.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/sysmacros.h>

#include "lib/parse.h"
#include "lib/strvec.h"
#include "lib/xalloc.h"
#include "probe/block_path.h"
#include "probe/nvme.h"

void block_path_init(struct block_path *bp)
{
	*bp = (struct block_path){ 0 };
}

void block_path_release(struct block_path *bp)
{
	free(bp->disk);
	free(bp->controller);
	free(bp->transport);
	free(bp->src_addr);
	free(bp->traddr);
	block_path_init(bp);
}

/* The last component of path, or the one before it (up 1), as a new string. */
static char *component(const char *path, unsigned up)
{
	const char *end = path + strlen(path);

	while (end > path && end[-1] == '/')
		end--;
	for (;;) {
		const char *start = end;
		while (start > path && start[-1] != '/')
			start--;
		if (!up || start == path)
			return start < end ? xstrndup(start, (size_t)(end - start)) : NULL;
		up--;
		end = start - 1;
	}
}

/* The controller at rel (a directory with a transport file): 1, 0 when it has none. */
static int read_controller(const struct rootfs *root, const char *rel, struct block_path *bp)
{
	struct strbuf value = STRBUF_INIT;
	struct nvme_address addr;
	int r = rootfs_read_valuef(root, &value, "%s/transport", rel);

	if (r < 0) {
		r = rootfs_absent(r) ? 0 : r;
		goto out;
	}
	bp->transport = strbuf_detach(&value, NULL);
	/* sys/class/block/DISK/device is a link: the controller is what it names. */
	if (rootfs_readlink(root, rel, &value) >= 0)
		bp->controller = component(value.buf, 0);
	else
		bp->controller = component(rel, 0);
	strbuf_reset(&value);
	if (rootfs_read_valuef(root, &value, "%s/address", rel) >= 0 &&
	    nvme_address_parse(value.buf, &addr) == 0) {
		bp->src_addr = addr.src_addr;
		bp->traddr = addr.traddr;
		addr.src_addr = addr.traddr = NULL;
		nvme_address_release(&addr);
	}
	r = 1;
out:
	strbuf_release(&value);
	return r;
}

/* An NVMe disk's controller: its device, or the first controller of its subsystem. */
static int read_nvme_disk(const struct rootfs *root, struct block_path *bp)
{
	struct strbuf rel = STRBUF_INIT;
	struct strvec names = STRVEC_INIT;
	int r;

	strbuf_addf(&rel, "sys/class/block/%s/device", bp->disk);
	r = read_controller(root, rel.buf, bp);
	if (r != 0)
		goto out;
	/* Native multipath: the disk hangs below the subsystem, which lists its controllers. */
	r = rootfs_list(root, rel.buf, &names);
	if (r < 0) {
		r = rootfs_absent(r) ? 0 : r;
		goto out;
	}
	strvec_sort(&names);
	r = 0;
	for (size_t i = 0; i < names.nr && r == 0; i++) {
		const char *n = names.v[i];
		if (strncmp(n, "nvme", 4) || !n[4] || strspn(n + 4, "0123456789") != strlen(n + 4))
			continue;
		strbuf_reset(&rel);
		strbuf_addf(&rel, "sys/class/block/%s/device/%s", bp->disk, n);
		r = read_controller(root, rel.buf, bp);
	}
out:
	strvec_clear(&names);
	strbuf_release(&rel);
	return r < 0 ? r : 1;
}

int block_path_read(const struct rootfs *root, dev_t dev, struct block_path *bp)
{
	struct strbuf rel = STRBUF_INIT, link = STRBUF_INIT;
	int r;

	strbuf_addf(&rel, "sys/dev/block/%u:%u", major(dev), minor(dev));
	r = rootfs_readlink(root, rel.buf, &link);
	if (r < 0) {
		r = rootfs_absent(r) ? 0 : r;
		goto out;
	}
	strbuf_addstr(&rel, "/partition");
	bp->disk = component(link.buf, rootfs_exists(root, rel.buf) ? 1 : 0);
	if (!bp->disk) {
		r = 0;
		goto out;
	}
	r = starts_with(bp->disk, "nvme") ? read_nvme_disk(root, bp) : 1;
out:
	strbuf_release(&rel);
	strbuf_release(&link);
	return r;
}

int block_path_read_disk(const struct rootfs *root, const char *disk, struct block_path *bp)
{
	bp->disk = xstrdup(disk);
	return starts_with(disk, "nvme") ? read_nvme_disk(root, bp) : 1;
}

void block_path_netdev_rate(const struct rootfs *root, const char *name, int64_t *speed_mbps,
			    int64_t *mtu)
{
	struct strbuf value = STRBUF_INIT;

	*speed_mbps = *mtu = -1;
	if (rootfs_read_valuef(root, &value, "sys/class/net/%s/speed", name) >= 0 &&
	    (parse_i64(value.buf, speed_mbps) < 0 || *speed_mbps <= 0))
		*speed_mbps = -1;
	strbuf_reset(&value);
	if (rootfs_read_valuef(root, &value, "sys/class/net/%s/mtu", name) >= 0 &&
	    parse_i64(value.buf, mtu) < 0)
		*mtu = -1;
	strbuf_release(&value);
}

char *block_path_netdev_of_address(const char *addr)
{
	unsigned char want[sizeof(struct in6_addr)];
	struct ifaddrs *ifs = NULL;
	char *name = NULL;
	int family = strchr(addr, ':') ? AF_INET6 : AF_INET;

	if (inet_pton(family, addr, want) != 1 || getifaddrs(&ifs) < 0)
		return NULL;
	for (const struct ifaddrs *i = ifs; i && !name; i = i->ifa_next) {
		const void *have;
		size_t len;
		if (!i->ifa_addr || i->ifa_addr->sa_family != family)
			continue;
		if (family == AF_INET) {
			have = &((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr;
			len = sizeof(struct in_addr);
		} else {
			have = &((const struct sockaddr_in6 *)(const void *)i->ifa_addr)->sin6_addr;
			len = sizeof(struct in6_addr);
		}
		if (!memcmp(have, want, len))
			name = xstrdup(i->ifa_name);
	}
	freeifaddrs(ifs);
	return name;
}
