/*
 * join_plan.h - what 'sparkctl join' changes in each ~/.ssh, computed from
 * what each side reported, before anything is written.
 *
 * Every side (each node, and this host) reports its ~/.ssh with the state
 * script (join_state_script): whether the directory and an ed25519 key
 * exist, the public key, the texts of authorized_keys, known_hosts, config
 * and sparkctl.conf, and (over ssh) the ed25519 host key of the address it
 * was reached at.  From those the plan is pure: each side's new files,
 * the lines each one gains, and the host keys that changed, which refuse
 * the whole join.  Applying is join_apply_script, one round trip per side.
 */
#ifndef SPARKCTL_JOIN_PLAN_H
#define SPARKCTL_JOIN_PLAN_H

#include "sparkctl.h"
#include "cluster/cluster_file.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

/* The ~/.ssh files join writes, with their modes. */
enum join_file {
	JOIN_AUTHORIZED_KEYS,
	JOIN_KNOWN_HOSTS,
	JOIN_SSH_CONF, /* sparkctl.conf */
	JOIN_CONFIG,
	JOIN_NR_FILES
};
extern const char *const join_file_name[JOIN_NR_FILES];

/* sh -c script (no arguments): prints the state, read by join_state_parse(). */
extern const char join_state_script[];
/*
 * sh -c script: makes ~/.ssh (0700) and an ed25519 key where missing
 * (argument 1: the key's comment); prints the public key.
 */
extern const char join_keygen_script[];
/*
 * sh -c script: arguments are triples NAME MODE CONTENT; each file of
 * ~/.ssh is replaced atomically (a temporary file in ~/.ssh, then rename),
 * and its mode checked.  Exits non-zero at the first failure.
 */
extern const char join_apply_script[];

struct join_state {
	bool has_dir, has_key;
	char *pubkey;		   /* "ssh-ed25519 AAAA... comment", or NULL */
	char *text[JOIN_NR_FILES]; /* the file's text, NULL when it does not exist */
	char *host_key;		   /* "ssh-ed25519 AAAA...", or NULL */
	char *address;		   /* the address ssh reached it at, or NULL */
	/*
	 * "BOOT-ID DEV:INODE" of the machine and its $HOME: two sides with the
	 * same one share one ~/.ssh (join run on one of the nodes).
	 */
	char *ident;
};

void join_state_release(struct join_state *st);
/* Parse the state script's output; -EINVAL with a message on garbage. */
int join_state_parse(const char *out, struct join_state *st, struct strbuf *err);

/* One node being joined, as the plan sees it. */
struct join_member {
	const char *name;	      /* the node's name (the host part of what was given) */
	const char *pubkey;	      /* its public key line, NULL: not made yet */
	const char *host_key;	      /* its ed25519 host key "type base64", or NULL */
	const struct strvec *aliases; /* the names and addresses known_hosts lists for it */
};

struct join_file_change {
	bool changed;
	char *content;	     /* the whole new file */
	struct strvec added; /* the lines it gains (for --dry-run) */
};

struct join_side_plan {
	struct join_file_change file[JOIN_NR_FILES];
	size_t nr_changed;
};

/*
 * The plan of one side: st its state, self the index of that side among
 * members (SIZE_MAX: this host, not a member), ssh_conf the text of
 * sparkctl.conf (join_ssh_conf_text()).  Keys of every other member and
 * this_host_key (the key of this host; NULL: not made yet) go into a
 * member's authorized_keys (this host's own is left alone), the host keys of every other
 * member into known_hosts, the Include line to the top of config.  label
 * names the side in messages.  A known_hosts line (not hashed) that gives
 * one of a member's aliases another key of the same type is a changed host
 * key: -EKEYREJECTED with "LABEL: ~/.ssh/known_hosts:LINE: ..." in err.
 */
int join_plan_side(const struct join_member *members, size_t n, size_t self,
		   const struct join_state *st, const char *this_host_key, const char *ssh_conf,
		   const char *label, struct join_side_plan *plan, struct strbuf *err);
void join_side_plan_release(struct join_side_plan *plan);

/*
 * sparkctl.conf for the nodes of cf: a Host block per node, HostName its
 * first management address, User when set, IdentityFile ~/.ssh/id_ed25519.
 */
void join_ssh_conf_text(const struct cluster_file *cf, struct strbuf *out);

/* The line config must hold, and whether text holds it. */
#define JOIN_INCLUDE_LINE "Include sparkctl.conf"
bool join_config_has_include(const char *text);

#endif
