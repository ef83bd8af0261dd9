/*
 * serve_ready.c - one HTTP GET with a time limit (serve_ready.h).
 */
#include "sparkctl.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include "lib/clock.h"
#include "serve/serve_ready.h"

/* Wait for events on fd until deadline: 1 ready, -ETIMEDOUT, -errno. */
static int wait_fd(int fd, short events, uint64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	for (;;) {
		uint64_t now = monotonic_ms();
		int r;
		if (now >= deadline)
			return -ETIMEDOUT;
		r = poll(&p, 1, (int)(deadline - now));
		if (r > 0)
			return 1;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

int serve_http_status(const char *addr, unsigned port, const char *path, int timeout_ms)
{
	uint64_t deadline = monotonic_ms() + (uint64_t)timeout_ms;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	char req[512], buf[64];
	size_t len = 0, sent = 0, reqlen;
	int fd, r, soerr = 0, major, minor, code;
	socklen_t sl = sizeof(soerr);

	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		return -EINVAL;
	r = snprintf(req, sizeof(req),
		     "GET %s HTTP/1.0\r\nHost: %s:%u\r\nConnection: close\r\n\r\n", path, addr,
		     port);
	if (r < 0 || (size_t)r >= sizeof(req))
		return -EINVAL;
	reqlen = (size_t)r;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (errno != EINPROGRESS) {
			r = -errno;
			goto out;
		}
		if ((r = wait_fd(fd, POLLOUT, deadline)) < 0)
			goto out;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr) {
			r = soerr ? -soerr : -errno;
			goto out;
		}
	}
	while (sent < reqlen) {
		ssize_t n = send(fd, req + sent, reqlen - sent, MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			r = -errno;
			goto out;
		}
		if (n > 0)
			sent += (size_t)n;
		else if ((r = wait_fd(fd, POLLOUT, deadline)) < 0)
			goto out;
	}
	/* The status line is all that is read: "HTTP/1.1 200 OK". */
	while (len < sizeof(buf) - 1 && !memchr(buf, '\n', len)) {
		ssize_t n = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);
		if (n == 0)
			break;
		if (n > 0) {
			len += (size_t)n;
			continue;
		}
		if (errno != EAGAIN && errno != EINTR) {
			r = -errno;
			goto out;
		}
		if ((r = wait_fd(fd, POLLIN, deadline)) < 0)
			goto out;
	}
	buf[len] = '\0';
	if (sscanf(buf, "HTTP/%d.%d %3d", &major, &minor, &code) != 3 || code < 100 || code > 599)
		r = -EPROTO;
	else
		r = code;
out:
	close(fd);
	return r;
}
