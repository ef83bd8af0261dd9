/* join_plan.c - the state of each ~/.ssh, and what join changes in it. */
#include "sparkctl.h"

#include <strings.h>

#include "cluster/join_plan.h"
#include "lib/xalloc.h"

const char *const join_file_name[JOIN_NR_FILES] = {
	[JOIN_AUTHORIZED_KEYS] = "authorized_keys",
	[JOIN_KNOWN_HOSTS] = "known_hosts",
	[JOIN_SSH_CONF] = "sparkctl.conf",
	[JOIN_CONFIG] = "config",
};

/*
 * Each file as "file NAME", its lines prefixed "| ", then "end" (after an
 * empty line, so a last line without LF still ends).  The host key is the
 * one of the address this session came in on ($SSH_CONNECTION): every
 * address of a node reaches the same sshd.
 */
const char join_state_script[] =
	"d=\"$HOME/.ssh\"; "
	"if [ -d \"$d\" ]; then echo 'dir yes'; else echo 'dir no'; fi; "
	"if [ -f \"$d/id_ed25519\" ]; then echo 'key yes'; else echo 'key no'; fi; "
	"if [ -f \"$d/id_ed25519.pub\" ]; then printf 'pub '; head -n 1 \"$d/id_ed25519.pub\"; "
	"elif [ -f \"$d/id_ed25519\" ]; then printf 'pub '; "
	"ssh-keygen -y -f \"$d/id_ed25519\" < /dev/null 2> /dev/null | head -n 1; fi; "
	"for f in authorized_keys known_hosts config sparkctl.conf; do "
	"if [ -f \"$d/$f\" ]; then echo \"file $f\"; sed 's/^/| /' \"$d/$f\" || exit 1; "
	"printf '\\nend\\n'; fi; done; "
	"set -- ${SSH_CONNECTION:-}; "
	"if [ -n \"${3:-}\" ]; then echo \"address $3\"; "
	"ssh-keyscan -t ed25519 -T 5 -p \"$4\" \"$3\" 2> /dev/null | "
	"while read -r h t k; do [ \"$t\" != ssh-ed25519 ] || echo \"hostkey $t $k\"; done; fi; "
	"echo \"ident $(cat /proc/sys/kernel/random/boot_id 2> /dev/null) "
	"$(stat -L -c %d:%i \"$HOME\" 2> /dev/null)\"; "
	"echo done";

const char join_keygen_script[] =
	"d=\"$HOME/.ssh\"; "
	"[ -d \"$d\" ] || mkdir -m 700 \"$d\" || exit 1; "
	"if ! [ -f \"$d/id_ed25519\" ]; then "
	"ssh-keygen -q -t ed25519 -N '' -C \"$1\" -f \"$d/id_ed25519\" < /dev/null > /dev/null "
	"|| exit 1; fi; "
	"if [ -f \"$d/id_ed25519.pub\" ]; then head -n 1 \"$d/id_ed25519.pub\"; "
	"else ssh-keygen -y -f \"$d/id_ed25519\" < /dev/null; fi";

const char join_apply_script[] =
	"d=\"$HOME/.ssh\"; "
	"[ -d \"$d\" ] || mkdir -m 700 \"$d\" || exit 1; "
	"while [ $# -ge 3 ]; do "
	"t=$(mktemp \"$d/.$1.XXXXXX\") || exit 1; "
	"if printf '%s' \"$3\" > \"$t\" && chmod \"$2\" \"$t\" && { sync \"$t\" 2> /dev/null || :; "
	"} "
	"&& mv -f \"$t\" \"$d/$1\" && [ \"$(stat -c %a \"$d/$1\")\" = \"$2\" ]; then :; "
	"else rm -f \"$t\"; echo \"cannot write $d/$1\" >&2; exit 1; fi; "
	"shift 3; done";

void join_state_release(struct join_state *st)
{
	free(st->pubkey);
	free(st->host_key);
	free(st->address);
	free(st->ident);
	for (size_t i = 0; i < JOIN_NR_FILES; i++)
		free(st->text[i]);
	memset(st, 0, sizeof(*st));
}

static int file_index(const char *name)
{
	for (int i = 0; i < JOIN_NR_FILES; i++)
		if (streq(join_file_name[i], name))
			return i;
	return -1;
}

int join_state_parse(const char *out, struct join_state *st, struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT;
	int in_file = -1, r = 0;
	bool done = false;

	memset(st, 0, sizeof(*st));
	for (const char *p = out; *p;) {
		size_t len = strcspn(p, "\n");
		char *line = xstrndup(p, len);
		p += len + (p[len] == '\n');
		if (in_file >= 0) {
			if (streq(line, "end")) {
				st->text[in_file] = strbuf_detach(&text, NULL);
				in_file = -1;
			} else if (!strncmp(line, "| ", 2)) {
				strbuf_addstr(&text, line + 2);
				strbuf_addch(&text, '\n');
			} else if (*line) {
				r = -EINVAL;
			}
		} else if (!strncmp(line, "file ", 5)) {
			in_file = file_index(line + 5);
			if (in_file < 0 || st->text[in_file])
				r = -EINVAL;
		} else if (streq(line, "dir yes") || streq(line, "dir no")) {
			st->has_dir = streq(line, "dir yes");
		} else if (streq(line, "key yes") || streq(line, "key no")) {
			st->has_key = streq(line, "key yes");
		} else if (!strncmp(line, "pub ", 4)) {
			free(st->pubkey);
			st->pubkey = *(line + 4) ? xstrdup(line + 4) : NULL;
		} else if (!strncmp(line, "hostkey ", 8)) {
			if (!st->host_key)
				st->host_key = xstrdup(line + 8);
		} else if (!strncmp(line, "ident ", 6)) {
			free(st->ident);
			st->ident = xstrdup(line + 6);
		} else if (!strncmp(line, "address ", 8)) {
			free(st->address);
			st->address = xstrdup(line + 8);
		} else if (streq(line, "done")) {
			done = true;
		} else if (*line) {
			r = -EINVAL;
		}
		free(line);
		if (r < 0)
			break;
	}
	if (r == 0 && (in_file >= 0 || !done))
		r = -EINVAL;
	if (r < 0) {
		strbuf_addstr(err, "the node's report of its ~/.ssh is cut short or garbled");
		join_state_release(st);
	}
	strbuf_release(&text);
	return r;
}

/* ---- the files ---- */

/* "type base64" of a public key or known_hosts key: the first two words of s. */
static char *key_of(const char *s)
{
	const char *sp = strchr(s, ' ');
	size_t len;

	if (!sp)
		return xstrdup(s);
	len = (size_t)(sp - s) + 1 + strcspn(sp + 1, " \t");
	return xstrndup(s, len);
}

/* Whether an authorized_keys line holds key ("type base64"), options or not. */
static bool line_has_key(const char *line, const char *key)
{
	const char *p = strstr(line, key);
	size_t len = strlen(key);

	while (p) {
		bool starts = p == line || p[-1] == ' ' || p[-1] == '\t';
		bool ends = p[len] == '\0' || p[len] == ' ' || p[len] == '\t';
		if (starts && ends)
			return true;
		p = strstr(p + 1, key);
	}
	return false;
}

static void change_init(struct join_file_change *c, const char *old)
{
	c->changed = false;
	c->content = xstrdup(old ? old : "");
	strvec_init(&c->added);
}

static void append_line(struct join_file_change *c, const char *line)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, c->content);
	if (sb.len && sb.buf[sb.len - 1] != '\n')
		strbuf_addch(&sb, '\n');
	strbuf_addf(&sb, "%s\n", line);
	free(c->content);
	c->content = strbuf_detach(&sb, NULL);
	strvec_push(&c->added, line);
	c->changed = true;
}

/* Add pubkey (of name; NULL: not made yet) unless a line holds it. */
static void authorize(struct join_file_change *c, const char *pubkey, const char *name)
{
	if (!pubkey) {
		struct strbuf line = STRBUF_INIT;
		strbuf_addf(&line, "(the key join makes on %s)", name);
		append_line(c, line.buf);
		strbuf_release(&line);
		return;
	}
	char *key = key_of(pubkey);
	bool found = false;
	for (const char *p = c->content; *p && !found;) {
		size_t len = strcspn(p, "\n");
		char *line = xstrndup(p, len);
		found = line[0] != '#' && line_has_key(line, key);
		free(line);
		p += len + (p[len] == '\n');
	}
	if (!found)
		append_line(c, pubkey);
	free(key);
}

static void plan_authorized_keys(const struct join_member *members, size_t n, size_t self,
				 const struct join_state *st, const char *this_host_key,
				 struct join_file_change *c)
{
	change_init(c, st->text[JOIN_AUTHORIZED_KEYS]);
	if (self == SIZE_MAX)
		return;
	authorize(c, this_host_key, "this host");
	for (size_t i = 0; i < n; i++)
		if (i != self)
			authorize(c, members[i].pubkey, members[i].name);
}

/* Whether the known_hosts host field (comma-separated patterns) names alias. */
static bool hosts_field_has(const char *field, const char *alias)
{
	const char *p = field;

	while (*p) {
		size_t len = strcspn(p, ",");
		if (len == strlen(alias) && strncasecmp(p, alias, len) == 0)
			return true;
		p += len + (p[len] == ',');
	}
	return false;
}

static int plan_known_hosts(const struct join_member *members, size_t n, size_t self,
			    const struct join_state *st, const char *label,
			    struct join_file_change *c, struct strbuf *err)
{
	const char *old = st->text[JOIN_KNOWN_HOSTS];

	change_init(c, old);
	for (size_t i = 0; i < n; i++) {
		struct strbuf missing = STRBUF_INIT;
		if (i == self || !members[i].host_key)
			continue;
		char *key = key_of(members[i].host_key);
		const char *type_end = strchr(key, ' ');
		size_t type_len = type_end ? (size_t)(type_end - key) : strlen(key);
		for (size_t a = 0; a < members[i].aliases->nr; a++) {
			const char *alias = members[i].aliases->v[a];
			bool known = false;
			size_t lineno = 0;
			for (const char *p = old ? old : ""; *p;) {
				size_t len = strcspn(p, "\n");
				char *line = xstrndup(p, len);
				p += len + (p[len] == '\n');
				lineno++;
				/* Hashed (|1|...) and marked (@revoked) lines are ssh's to judge.
				 */
				char *sp = strchr(line, ' ');
				if (line[0] != '#' && line[0] != '|' && line[0] != '@' && sp) {
					*sp = '\0';
					const char *lkey = sp + 1;
					if (hosts_field_has(line, alias) &&
					    !strncmp(lkey, key, type_len) &&
					    lkey[type_len] == ' ') {
						char *have = key_of(lkey);
						if (streq(have, key)) {
							known = true;
						} else {
							strbuf_addf(
								err,
								"%s: ~/.ssh/known_hosts:%zu: the "
								"host "
								"key of %s changed (it is not the "
								"key "
								"there now); if the node was "
								"reinstalled, remove that line "
								"(ssh-keygen -R %s) and join again",
								label, lineno, alias, alias);
							free(have);
							free(line);
							free(key);
							strbuf_release(&missing);
							return -EKEYREJECTED;
						}
						free(have);
					}
				}
				free(line);
			}
			if (!known)
				strbuf_addf(&missing, "%s%s", missing.len ? "," : "", alias);
		}
		if (missing.len) {
			strbuf_addf(&missing, " %s", key);
			append_line(c, missing.buf);
		}
		free(key);
		strbuf_release(&missing);
	}
	return 0;
}

bool join_config_has_include(const char *text)
{
	for (const char *p = text ? text : ""; *p;) {
		size_t len = strcspn(p, "\n");
		char *line = xstrndup(p, len);
		char *s = line;
		p += len + (p[len] == '\n');
		while (*s == ' ' || *s == '\t')
			s++;
		bool has = !strncasecmp(s, "Include", 7) && (s[7] == ' ' || s[7] == '\t') &&
			   (strstr(s, " sparkctl.conf") || strstr(s, "~/.ssh/sparkctl.conf"));
		free(line);
		if (has)
			return true;
	}
	return false;
}

/*
 * ssh_config applies the first value it reads: a Host or Match block ends
 * only at the next one, so the Include goes first to apply to every host.
 */
static void plan_config(const struct join_state *st, struct join_file_change *c)
{
	const char *old = st->text[JOIN_CONFIG];

	change_init(c, old);
	if (join_config_has_include(old))
		return;
	free(c->content);
	c->content = xasprintf(JOIN_INCLUDE_LINE "\n%s", old ? old : "");
	strvec_push(&c->added, JOIN_INCLUDE_LINE " (at the top)");
	c->changed = true;
}

static void plan_ssh_conf(const struct join_state *st, const char *ssh_conf,
			  struct join_file_change *c)
{
	const char *old = st->text[JOIN_SSH_CONF];

	change_init(c, old);
	if (old && streq(old, ssh_conf))
		return;
	free(c->content);
	c->content = xstrdup(ssh_conf);
	for (const char *p = ssh_conf; *p;) {
		size_t len = strcspn(p, "\n");
		char *line = xstrndup(p, len);
		p += len + (p[len] == '\n');
		strvec_push_nodup(&c->added, line);
	}
	c->changed = true;
}

int join_plan_side(const struct join_member *members, size_t n, size_t self,
		   const struct join_state *st, const char *this_host_key, const char *ssh_conf,
		   const char *label, struct join_side_plan *plan, struct strbuf *err)
{
	int r;

	memset(plan, 0, sizeof(*plan));
	plan_authorized_keys(members, n, self, st, this_host_key,
			     &plan->file[JOIN_AUTHORIZED_KEYS]);
	r = plan_known_hosts(members, n, self, st, label, &plan->file[JOIN_KNOWN_HOSTS], err);
	plan_ssh_conf(st, ssh_conf, &plan->file[JOIN_SSH_CONF]);
	plan_config(st, &plan->file[JOIN_CONFIG]);
	for (size_t i = 0; i < JOIN_NR_FILES; i++)
		plan->nr_changed += plan->file[i].changed;
	if (r < 0)
		join_side_plan_release(plan);
	return r;
}

void join_side_plan_release(struct join_side_plan *plan)
{
	for (size_t i = 0; i < JOIN_NR_FILES; i++) {
		free(plan->file[i].content);
		strvec_clear(&plan->file[i].added);
	}
	memset(plan, 0, sizeof(*plan));
}

void join_ssh_conf_text(const struct cluster_file *cf, struct strbuf *out)
{
	strbuf_addstr(out, "# The nodes of the sparkctl cluster, written by 'sparkctl join'\n"
			   "# (replaced whole by the next join; docs/cluster.md).\n");
	for (size_t i = 0; i < cf->nr; i++) {
		const struct cluster_node *n = &cf->nodes[i];
		strbuf_addf(out, "\nHost %s\n", n->name);
		if (n->mgmt_addresses.nr)
			strbuf_addf(out, "  HostName %s\n", n->mgmt_addresses.v[0]);
		if (n->user)
			strbuf_addf(out, "  User %s\n", n->user);
		strbuf_addstr(out, "  IdentityFile ~/.ssh/id_ed25519\n");
	}
}
