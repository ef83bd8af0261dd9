/*
 * node_id.c - reading and creating /etc/sparkctl/node-id (node_id.h).
 */
#include "sparkctl.h"

#include "discover/node_id.h"
#include "lib/atomic_file.h"

#include <sys/random.h>

#define NODE_ID_PATH NODE_ID_DIR "/" NODE_ID_FILE

bool node_id_valid(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
			return false;
	return n == NODE_ID_LEN;
}

/* The content of the file: the id and one newline, nothing else. */
static int id_of_text(const struct strbuf *text, struct strbuf *out)
{
	if (text->len != NODE_ID_LEN + 1 || text->buf[NODE_ID_LEN] != '\n')
		return -EINVAL;
	strbuf_reset(out);
	strbuf_add(out, text->buf, NODE_ID_LEN);
	return node_id_valid(out->buf) ? 0 : -EINVAL;
}

int node_id_read(const struct rootfs *root, struct strbuf *out)
{
	struct strbuf text = STRBUF_INIT;
	int r = rootfs_read_file(root, NODE_ID_PATH, 4096, &text);

	if (r == 0)
		r = id_of_text(&text, out);
	strbuf_release(&text);
	return r;
}

static int new_id(struct strbuf *out, struct strbuf *err)
{
	uint8_t bytes[NODE_ID_LEN / 2];

	if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes)) {
		int e = errno;
		strbuf_addf(err, "cannot draw random bytes for a node id: %s", strerror(e));
		return -e;
	}
	strbuf_reset(out);
	strbuf_add_hex(out, bytes, sizeof(bytes));
	return 0;
}

int node_id_ensure(const struct rootfs *root, struct strbuf *out, struct strbuf *err)
{
	struct rootfs_dir dir = { .dirfd = -1 };
	struct strbuf text = STRBUF_INIT;
	int r;

	if ((r = rootfs_dir_open_for_write(root, NODE_ID_DIR, 0755, &dir)) < 0) {
		strbuf_addf(err, "cannot open /%s: %s", NODE_ID_DIR, strerror(-r));
		goto out;
	}
	/* read through the directory that is written to, so the check is about it */
	r = rootfs_dir_read_file(&dir, NODE_ID_FILE, 4096, &text);
	if (r == 0) {
		if ((r = id_of_text(&text, out)) < 0)
			strbuf_addf(err,
				    "/%s does not hold a node id (32 lowercase hex characters); "
				    "remove it to have a new one made",
				    NODE_ID_PATH);
		goto out;
	}
	if (r != -ENOENT) {
		strbuf_addf(err, "cannot read /%s: %s", NODE_ID_PATH, strerror(-r));
		goto out;
	}
	if ((r = new_id(out, err)) < 0)
		goto out;
	strbuf_reset(&text);
	strbuf_addf(&text, "%s\n", out->buf);
	if ((r = atomic_replace(dir.dirfd, NODE_ID_FILE, text.buf, text.len, 0644, NULL, err)) < 0)
		goto out;
	r = 1;
out:
	rootfs_dir_close(&dir);
	strbuf_release(&text);
	return r;
}
