/*
 * nvmet_configfs.c - the NVMe target's and null_blk's configfs, read below
 * a root (see nvmet_configfs.h).
 */
#include "sparkctl.h"

#include "lib/xalloc.h"
#include "probe/nvmet_configfs.h"

void nvmet_state_init(struct nvmet_state *st)
{
	memset(st, 0, sizeof(*st));
	strvec_init(&st->subsystems);
	strvec_init(&st->hosts);
	strvec_init(&st->nullb);
	strvec_init(&st->allowed_hosts);
	strvec_init(&st->hosts_allowed_elsewhere);
}

void nvmet_state_release(struct nvmet_state *st)
{
	for (size_t i = 0; i < st->nr_ports; i++) {
		free(st->ports[i].id);
		free(st->ports[i].trtype);
		free(st->ports[i].traddr);
		free(st->ports[i].trsvcid);
		strvec_clear(&st->ports[i].subsystems);
	}
	free(st->ports);
	for (size_t i = 0; i < st->nr_namespaces; i++) {
		free(st->namespaces[i].nsid);
		free(st->namespaces[i].device_path);
	}
	free(st->namespaces);
	strvec_clear(&st->subsystems);
	strvec_clear(&st->hosts);
	strvec_clear(&st->nullb);
	strvec_clear(&st->allowed_hosts);
	strvec_clear(&st->hosts_allowed_elsewhere);
	nvmet_state_init(st);
}

/* The names in rel; a directory that is not there is empty. */
static int list_names(const struct rootfs *root, const char *rel, bool dirs_only,
		      struct strvec *names, struct strbuf *err)
{
	int r = dirs_only ? rootfs_list_dirs(root, rel, names) : rootfs_list(root, rel, names);

	if (r >= 0 || rootfs_absent(r))
		return 0;
	strbuf_addf(err, "cannot list /%s: %s", rel, strerror(-r));
	return r;
}

/* An attribute's value, "" when it cannot be read (a port half made by hand). */
static char *attr(const struct rootfs *root, const char *dir, const char *name)
{
	struct strbuf path = STRBUF_INIT, value = STRBUF_INIT;
	char *s;

	strbuf_addf(&path, "%s/%s", dir, name);
	if (rootfs_read_value(root, path.buf, &value) < 0)
		strbuf_reset(&value);
	s = strbuf_detach(&value, NULL);
	strbuf_release(&path);
	return s;
}

static int read_ports(const struct rootfs *root, struct nvmet_state *st, struct strbuf *err)
{
	struct strvec ids = STRVEC_INIT;
	int r = list_names(root, NVMET_CONFIGFS_DIR "/ports", true, &ids, err);

	for (size_t i = 0; r == 0 && i < ids.nr; i++) {
		struct nvmet_port_state *p = ARRAY_PUSH(st->ports, st->nr_ports);
		struct strbuf rel = STRBUF_INIT;

		p->id = xstrdup(ids.v[i]);
		strbuf_addf(&rel, "%s/ports/%s", NVMET_CONFIGFS_DIR, p->id);
		p->trtype = attr(root, rel.buf, "addr_trtype");
		p->traddr = attr(root, rel.buf, "addr_traddr");
		p->trsvcid = attr(root, rel.buf, "addr_trsvcid");
		strvec_init(&p->subsystems);
		strbuf_addstr(&rel, "/subsystems");
		r = list_names(root, rel.buf, false, &p->subsystems, err);
		strbuf_release(&rel);
	}
	strvec_clear(&ids);
	return r;
}

/* nqn's namespaces and allowed hosts, and the hosts the other subsystems allow. */
static int read_subsystems(const struct rootfs *root, const char *nqn, struct nvmet_state *st,
			   struct strbuf *err)
{
	struct strbuf rel = STRBUF_INIT;
	struct strvec names = STRVEC_INIT;
	int r = list_names(root, NVMET_CONFIGFS_DIR "/subsystems", true, &st->subsystems, err);

	for (size_t i = 0; r == 0 && i < st->subsystems.nr; i++) {
		const char *name = st->subsystems.v[i];
		bool this = nqn && streq(name, nqn);

		strvec_clear(&names);
		strbuf_reset(&rel);
		strbuf_addf(&rel, "%s/subsystems/%s/allowed_hosts", NVMET_CONFIGFS_DIR, name);
		r = list_names(root, rel.buf, false, this ? &st->allowed_hosts : &names, err);
		for (size_t j = 0; !this && j < names.nr; j++)
			if (!strvec_contains(&st->hosts_allowed_elsewhere, names.v[j]))
				strvec_push(&st->hosts_allowed_elsewhere, names.v[j]);
		if (r < 0 || !this)
			continue;
		st->subsystem_present = true;
		strbuf_reset(&rel);
		strbuf_addf(&rel, "%s/subsystems/%s/namespaces", NVMET_CONFIGFS_DIR, name);
		r = list_names(root, rel.buf, true, &names, err);
		for (size_t j = 0; r == 0 && j < names.nr; j++) {
			struct nvmet_namespace_state *ns =
				ARRAY_PUSH(st->namespaces, st->nr_namespaces);
			struct strbuf dir = STRBUF_INIT;

			ns->nsid = xstrdup(names.v[j]);
			strbuf_addf(&dir, "%s/%s", rel.buf, ns->nsid);
			ns->device_path = attr(root, dir.buf, "device_path");
			strbuf_release(&dir);
		}
	}
	strvec_clear(&names);
	strbuf_release(&rel);
	return r;
}

int probe_nvmet_state(const struct rootfs *root, const char *nqn, struct nvmet_state *st,
		      struct strbuf *err)
{
	int r;

	st->nvmet_present = rootfs_exists(root, NVMET_CONFIGFS_DIR);
	st->nullb_present = rootfs_exists(root, NULLB_CONFIGFS_DIR);
	st->nvmet_tcp_loaded = rootfs_exists(root, NVMET_TCP_MODULE_DIR);
	r = read_ports(root, st, err);
	if (r == 0)
		r = read_subsystems(root, nqn, st, err);
	if (r == 0)
		r = list_names(root, NVMET_CONFIGFS_DIR "/hosts", true, &st->hosts, err);
	if (r == 0)
		r = list_names(root, NULLB_CONFIGFS_DIR, true, &st->nullb, err);
	return r;
}
