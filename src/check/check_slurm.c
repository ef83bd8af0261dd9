/*
 * Checks across the nodes that run Slurm (docs/slurm.md, "Checks across
 * the nodes"): munge credentials decode everywhere, the job user has one
 * uid and gid, slurm.conf is one file, and no node claims more memory
 * than it has.  A node is a Slurm node when its inventory has a "slurm"
 * section (it has a slurm.conf); the others are skipped, each with why.
 * Where no node runs Slurm these checks report nothing: doctor says
 * nothing of Slurm where there is none.
 */
#include "sparkctl.h"

#include "check/check.h"
#include "lib/xalloc.h"
#include "slurm/slurm_conf.h"

#define MIB_SHIFT 20

static const char *node_name(const struct doctor_node *n)
{
	return n->inspected && n->inv.sys.hostname ? n->inv.sys.hostname : n->host;
}

static const struct inv_slurm *slurm_of(const struct doctor_node *n)
{
	return n->inspected ? n->inv.slurm : NULL;
}

/*
 * The number of Slurm nodes; each inspected node without Slurm is
 * skipped with why, once there is a Slurm node at all.
 */
static size_t slurm_nodes(struct check_ctx *ctx)
{
	const struct doctor_cluster *c = ctx->cluster;
	size_t n = 0;

	for (size_t i = 0; i < c->nr_nodes; i++)
		n += slurm_of(&c->nodes[i]) != NULL;
	for (size_t i = 0; n && i < c->nr_nodes; i++)
		if (c->nodes[i].inspected && !c->nodes[i].inv.slurm)
			report(ctx, CHECK_SKIP, NULL,
			       "%s: not a Slurm node (no slurm.conf: $SLURM_CONF or "
			       "/etc/slurm/slurm.conf)",
			       node_name(&c->nodes[i]));
	return n;
}

/* The node's name in a fix's commands: as doctor reached it (-H), else its host name. */
static const char *ssh_name(const struct doctor_cluster *c, const struct doctor_node *n)
{
	return c->probed ? n->host : node_name(n);
}

/* ---- slurm.munge ------------------------------------------------------------ */

/* What to do about unmunge's answer on a node, by its reason. */
static char *munge_fix(const char *detail, const char *encoder, const char *node)
{
	if (strstr(detail, "Expired") || strstr(detail, "Rewound"))
		return xasprintf("the clocks of %s and %s disagree: enable time synchronisation on "
				 "both (sudo timedatectl set-ntp true; chronyc tracking)",
				 encoder, node);
	if (strstr(detail, "not installed"))
		return xasprintf("install munge on %s (sudo apt install munge), give it %s's "
				 "/etc/munge/munge.key (mode 0400, owner munge) and start it: sudo "
				 "systemctl enable --now munge",
				 node, encoder);
	/* unmunge: 'Failed to access "PATH": ... (Did you start munged?)', or a refused connect. */
	if (strstr(detail, "Failed to access") || strstr(detail, "munged") ||
	    strstr(detail, "connect"))
		return xasprintf("start munged on %s (sudo systemctl enable --now munge) and check "
				 "that slurm.conf's AuthInfo=socket= names its socket",
				 node);
	return xasprintf("copy /etc/munge/munge.key from %s to %s (mode 0400, owner munge: sudo "
			 "install -m 0400 -o munge -g munge munge.key /etc/munge/munge.key), "
			 "then on %s: sudo systemctl restart munge; also check that the clocks "
			 "agree (timedatectl)",
			 encoder, node, node);
}

void check_slurm_munge(struct check_ctx *ctx)
{
	const struct doctor_cluster *c = ctx->cluster;
	const struct doctor_node *enc;
	size_t ok = 0, bad = 0, invalid = 0;

	if (!slurm_nodes(ctx))
		return;
	if (!c->munge_probed) {
		report(ctx, CHECK_SKIP, NULL,
		       "not probed: credentials are tried over ssh with -H, not with --from");
		return;
	}
	enc = &c->nodes[c->munge_encoder];
	if (c->munge_encode_error) {
		char *fix =
			strstr(c->munge_encode_error, "not installed")
				? munge_fix(c->munge_encode_error, node_name(enc), node_name(enc))
				: xasprintf("on %s: sudo systemctl enable --now munge, and check "
					    "that slurm.conf's AuthInfo=socket= names munged's "
					    "socket",
					    node_name(enc));
		report(ctx, CHECK_FAIL, fix, "%s: no credential to try: 'munge -n' failed: %s",
		       node_name(enc), c->munge_encode_error);
		free(fix);
		return;
	}
	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct doctor_node *n = &c->nodes[i];
		const char *detail = n->munge_detail ? n->munge_detail : "no answer";
		if (!slurm_of(n) || n->munge == 0)
			continue;
		if (n->munge > 0) {
			ok++;
			continue;
		}
		char *fix = munge_fix(detail, node_name(enc), node_name(n));
		struct finding *f = report(ctx, CHECK_FAIL, fix,
					   "%s cannot decode a munge credential of %s: %s",
					   node_name(n), node_name(enc), detail);
		finding_evidence(f, "unmunge=%s", detail);
		free(fix);
		bad++;
		invalid += strstr(detail, "Invalid credential") != NULL;
	}
	if (bad && invalid == bad && ok == 1 && bad >= 2)
		report(ctx, CHECK_FAIL,
		       "compare /etc/munge/munge.key across the nodes (sudo sha256sum "
		       "/etc/munge/munge.key) and copy the others' key to the odd one",
		       "no other node decodes %s's credentials: its munge.key may be the odd one",
		       node_name(enc));
	if (!bad)
		report(ctx, CHECK_PASS, NULL, "a credential of %s decodes on %zu Slurm node%s",
		       node_name(enc), ok, ok == 1 ? "" : "s");
}

/* ---- slurm.uid -------------------------------------------------------------- */

/* The user most Slurm nodes were probed as (their $USER), or NULL. */
static const char *common_user(const struct doctor_cluster *c)
{
	const char *best = NULL;
	size_t best_n = 0;

	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct inv_slurm *a = slurm_of(&c->nodes[i]);
		size_t n = 0;
		if (!a || !a->user)
			continue;
		for (size_t k = 0; k < c->nr_nodes; k++) {
			const struct inv_slurm *b = slurm_of(&c->nodes[k]);
			n += b && b->user && streq(a->user, b->user);
		}
		if (n > best_n) {
			best = a->user;
			best_n = n;
		}
	}
	return best;
}

static bool same_ids(const struct inv_slurm *a, const struct inv_slurm *b)
{
	return a->uid == b->uid && a->gid == b->gid;
}

/* The node whose (uid, gid) most nodes with the user share; ties: the first. */
static const struct inv_slurm *majority_ids(const struct doctor_cluster *c, const char *user)
{
	const struct inv_slurm *best = NULL;
	size_t best_n = 0;

	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct inv_slurm *a = slurm_of(&c->nodes[i]);
		size_t n = 0;
		if (!a || !a->user || !streq(a->user, user) || a->uid < 0)
			continue;
		for (size_t k = 0; k < c->nr_nodes; k++) {
			const struct inv_slurm *b = slurm_of(&c->nodes[k]);
			n += b && b->user && streq(b->user, user) && same_ids(a, b);
		}
		if (n > best_n) {
			best = a;
			best_n = n;
		}
	}
	return best;
}

/* The nodes (comma-separated) whose user has the ids of ref. */
static void nodes_with_ids(const struct doctor_cluster *c, const char *user,
			   const struct inv_slurm *ref, struct strbuf *out)
{
	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct inv_slurm *s = slurm_of(&c->nodes[i]);
		if (s && s->user && streq(s->user, user) && same_ids(s, ref))
			strbuf_addf(out, "%s%s", out->len ? ", " : "", node_name(&c->nodes[i]));
	}
}

void check_slurm_uid(struct check_ctx *ctx)
{
	const struct doctor_cluster *c = ctx->cluster;
	const char *user;
	const struct inv_slurm *ref;
	struct strbuf ref_nodes = STRBUF_INIT;
	size_t same = 0, bad = 0;

	if (!slurm_nodes(ctx))
		return;
	if (!(user = common_user(c))) {
		report(ctx, CHECK_SKIP, NULL, "the job user is unknown ($USER was not set)");
		return;
	}
	ref = majority_ids(c, user);
	if (ref)
		nodes_with_ids(c, user, ref, &ref_nodes);
	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct doctor_node *n = &c->nodes[i];
		const struct inv_slurm *s = slurm_of(n);
		char *fix;
		if (!s)
			continue;
		if (!s->user || !streq(s->user, user)) {
			report(ctx, CHECK_SKIP, NULL, "%s: probed as user %s, not %s", node_name(n),
			       s->user ? s->user : "(unknown)", user);
			continue;
		}
		if (ref && same_ids(s, ref)) {
			same++;
			continue;
		}
		if (s->uid < 0) {
			fix = ref ? xasprintf("on %s: sudo useradd -u %" PRId64 " -g %" PRId64
					      " %s (the group %" PRId64 " must exist: sudo "
					      "groupadd -g %" PRId64 " %s), or take the users from "
					      "one directory (LDAP, SSSD)",
					      node_name(n), ref->uid, ref->gid, user, ref->gid,
					      ref->gid, user)
				  : xasprintf("on every node: sudo useradd %s", user);
			report(ctx, CHECK_FAIL, fix, "%s has no user %s (etc/passwd%s)",
			       node_name(n), user, n->inv.root ? "" : ", nor NSS");
		} else {
			fix = xasprintf("on %s: sudo usermod -u %" PRId64 " -g %" PRId64
					" %s (then chown its files: find / -xdev -uid %" PRId64
					" -exec chown -h %" PRId64
					" {} +), or take the users from one "
					"directory (LDAP, SSSD)",
					node_name(n), ref->uid, ref->gid, user, s->uid, ref->uid);
			struct finding *f =
				report(ctx, CHECK_FAIL, fix,
				       "user %s is uid %" PRId64 " gid %" PRId64
				       " on %s, but uid %" PRId64 " gid %" PRId64 " on %s",
				       user, s->uid, s->gid, node_name(n), ref->uid, ref->gid,
				       ref_nodes.buf);
			finding_evidence(f, "uid=%" PRId64, s->uid);
			finding_evidence(f, "gid=%" PRId64, s->gid);
		}
		free(fix);
		bad++;
	}
	if (!bad && same < 2)
		report(ctx, CHECK_SKIP, NULL,
		       "one Slurm node with user %s: no other ids to compare", user);
	else if (!bad)
		report(ctx, CHECK_PASS, NULL,
		       "user %s is uid %" PRId64 " gid %" PRId64 " on %zu Slurm node%s", user,
		       ref->uid, ref->gid, same, same == 1 ? "" : "s");
	strbuf_release(&ref_nodes);
}

/* ---- slurm.conf_same -------------------------------------------------------- */

/* The node whose checksum most nodes share; ties: the controller's, else the first. */
static const struct doctor_node *majority_conf(const struct doctor_cluster *c)
{
	const struct doctor_node *best = NULL;
	size_t best_n = 0;

	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct inv_slurm *a = slurm_of(&c->nodes[i]);
		size_t n = 0;
		if (!a || !a->conf_sha256)
			continue;
		for (size_t k = 0; k < c->nr_nodes; k++) {
			const struct inv_slurm *b = slurm_of(&c->nodes[k]);
			n += b && b->conf_sha256 && streq(a->conf_sha256, b->conf_sha256);
		}
		bool controller = a->controller && c->nodes[i].inv.slurm->node_name &&
				  streq(a->controller, c->nodes[i].inv.slurm->node_name);
		if (n > best_n || (n == best_n && controller)) {
			best = &c->nodes[i];
			best_n = n;
		}
	}
	return best;
}

void check_slurm_conf_same(struct check_ctx *ctx)
{
	const struct doctor_cluster *c = ctx->cluster;
	const struct doctor_node *ref;
	const struct inv_slurm *rs;
	struct strbuf differ = STRBUF_INIT, targets = STRBUF_INIT, fix = STRBUF_INIT;
	size_t same = 0, bad = 0;

	if (!slurm_nodes(ctx))
		return;
	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct inv_slurm *s = slurm_of(&c->nodes[i]);
		if (s && !s->conf_sha256)
			report(ctx, CHECK_SKIP, NULL,
			       "%s: %s could not be read (its inventory's problems say why)",
			       node_name(&c->nodes[i]), s->conf);
	}
	if (!(ref = majority_conf(c)))
		goto out;
	rs = ref->inv.slurm;
	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct doctor_node *n = &c->nodes[i];
		const struct inv_slurm *s = slurm_of(n);
		if (!s || !s->conf_sha256)
			continue;
		if (streq(s->conf_sha256, rs->conf_sha256)) {
			same++;
			continue;
		}
		strbuf_addf(&differ, "%s%s (sha256 %.12s)", bad ? ", " : "", node_name(n),
			    s->conf_sha256);
		strbuf_addf(&targets, " %s", ssh_name(c, n));
		bad++;
	}
	if (bad) {
		/* The controller's copy is the one to spread, where it is among the majority. */
		const char *from = rs->controller ? rs->controller : node_name(ref);
		strbuf_addf(&fix,
			    "copy slurm.conf from the controller %s to the others: for n in%s; do "
			    "scp %s:%s $n:%s; done; then on the controller: sudo scontrol "
			    "reconfigure",
			    from, targets.buf, from, rs->conf, rs->conf);
		struct finding *f = report(ctx, CHECK_FAIL, fix.buf,
					   "slurm.conf on %s differs from the majority's (sha256 "
					   "%.12s, on %zu node%s)",
					   differ.buf, rs->conf_sha256, same, same == 1 ? "" : "s");
		finding_evidence(f, "conf_sha256=%s", rs->conf_sha256);
	} else if (same < 2) {
		report(ctx, CHECK_SKIP, NULL, "one Slurm node: no other slurm.conf to compare");
	} else {
		report(ctx, CHECK_PASS, NULL,
		       "slurm.conf is the same on %zu Slurm nodes (sha256 %.12s)", same,
		       rs->conf_sha256);
	}
out:
	strbuf_release(&differ);
	strbuf_release(&targets);
	strbuf_release(&fix);
}

/* ---- slurm.real_memory ------------------------------------------------------ */

void check_slurm_real_memory(struct check_ctx *ctx)
{
	const struct doctor_cluster *c = ctx->cluster;
	const struct slurm_mem_reserve dflt = { SLURM_RESERVE_DEFAULT, 0 };

	if (!slurm_nodes(ctx))
		return;
	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct doctor_node *n = &c->nodes[i];
		const struct inv_slurm *s = slurm_of(n);
		int64_t real, total;
		uint64_t figure;
		if (!s)
			continue;
		if (s->node_listed != TRI_YES) {
			report(ctx, CHECK_SKIP, NULL,
			       "%s: no NodeName line of %s names %s (a controller or login node)",
			       node_name(n), s->conf, s->node_name ? s->node_name : "it");
			continue;
		}
		if (s->real_memory_bytes < 0) {
			report(ctx, CHECK_PASS, NULL,
			       "%s: RealMemory is not set (Slurm's default, 1 MiB)", node_name(n));
			continue;
		}
		if (n->inv.sys.mem_total <= 0) {
			report(ctx, CHECK_SKIP, NULL, "%s: MemTotal is unknown", node_name(n));
			continue;
		}
		real = s->real_memory_bytes >> MIB_SHIFT;
		total = n->inv.sys.mem_total >> MIB_SHIFT;
		if (real <= total) {
			report(ctx, CHECK_PASS, NULL,
			       "%s: RealMemory %" PRId64 " MiB, of MemTotal %" PRId64 " MiB",
			       node_name(n), real, total);
			continue;
		}
		char *fix =
			slurm_real_memory(&n->inv, &dflt, &figure) == 0
				? xasprintf(
					  "set RealMemory=%" PRIu64
					  " on %s's NodeName line ('sparkctl slurm conf' writes "
					  "it: MemTotal less a reserve), copy slurm.conf to every "
					  "node, sudo scontrol reconfigure; then: sudo scontrol "
					  "update nodename=%s state=resume",
					  figure, s->node_name, s->node_name)
				: xasprintf("set RealMemory at most %" PRId64
					    " on %s's NodeName line, then: sudo scontrol "
					    "reconfigure",
					    total, s->node_name);
		struct finding *f =
			report(ctx, CHECK_FAIL, fix,
			       "%s: RealMemory %" PRId64 " MiB is above its MemTotal %" PRId64
			       " MiB: slurmctld drains it (Low RealMemory)",
			       node_name(n), real, total);
		finding_evidence(f, "real_memory_mib=%" PRId64, real);
		finding_evidence(f, "mem_total_mib=%" PRId64, total);
		free(fix);
	}
}
