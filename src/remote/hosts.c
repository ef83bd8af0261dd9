/* hosts.c - -H host lists with bracket ranges, and hostfiles. */
#include "sparkctl.h"

#include <ctype.h>
#include <strings.h>

#include "cluster/cluster_file.h"
#include "lib/parse.h"
#include "lib/xalloc.h"
#include "remote/hosts.h"

/* The longest DNS name; user names get the same bound. */
#define HOST_NAME_LEN_MAX 253
/* The most slots one host may declare: far above any node's GPU count. */
#define HOST_SLOTS_MAX	  1024
/* The largest hostfile read (a bound on user-controlled input). */
#define HOSTFILE_SIZE_MAX ((size_t)1 << 20)

/*
 * Refused in names: the shell's metacharacters, the range brackets, and
 * '#', '=' and ',', which no host name holds and which hostfile lines and
 * -H lists use as syntax.
 */
static const char forbidden_chars[] = ";&|`$()<>\\'\"*?[]{}~#=,";

/* Open-addressed set of the hosts in a list, keyed by the host part. */
#define HOST_SET_SIZE 8192 /* a power of two, twice HOST_LIST_MAX */

struct host_set {
	uint32_t *slot; /* index + 1 into list->hosts; 0 is empty */
};

/* The part after '@', the node itself. */
static const char *host_part(const char *name)
{
	const char *at = strchr(name, '@');

	return at ? at + 1 : name;
}

/* Host names are case-insensitive (DNS), so the hash and comparison fold case. */
static uint32_t host_hash(const char *host)
{
	uint32_t h = 2166136261u;

	for (const unsigned char *p = (const unsigned char *)host; *p; p++) {
		h ^= (uint32_t)tolower(*p);
		h *= 16777619u;
	}
	return h;
}

static bool same_host(const char *a, const char *b)
{
	return strcasecmp(host_part(a), host_part(b)) == 0;
}

/* The index of the entry naming the same node as name, or -1. */
static long host_set_find(const struct host_set *set, const struct host_list *list,
			  const char *name, uint32_t *ret_pos)
{
	uint32_t pos = host_hash(host_part(name)) & (HOST_SET_SIZE - 1);

	while (set->slot[pos]) {
		size_t i = set->slot[pos] - 1;
		if (same_host(list->hosts[i].name, name))
			return (long)i;
		pos = (pos + 1) & (HOST_SET_SIZE - 1);
	}
	*ret_pos = pos;
	return -1;
}

static void host_set_init(struct host_set *set, const struct host_list *list)
{
	uint32_t pos;

	set->slot = xcalloc(HOST_SET_SIZE, sizeof(*set->slot));
	/* The list holds no duplicates and at most HOST_LIST_MAX entries. */
	for (size_t i = 0; i < list->nr && i < HOST_LIST_MAX; i++)
		if (host_set_find(set, list, list->hosts[i].name, &pos) < 0)
			set->slot[pos] = (uint32_t)i + 1;
}

static void host_set_release(struct host_set *set)
{
	free(set->slot);
	set->slot = NULL;
}

static int name_error(struct strbuf *err, const char *ctx, const char *name, const char *fmt, ...)
	ATTR_PRINTF(4, 5);

static int name_error(struct strbuf *err, const char *ctx, const char *name, const char *fmt, ...)
{
	va_list ap;

	strbuf_addf(err, "%sinvalid host name '", ctx);
	strbuf_addstr_printable(err, name);
	strbuf_addstr(err, "': ");
	va_start(ap, fmt);
	strbuf_vaddf(err, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* ctx prefixes messages ("FILE:LINE: " or ""). */
static int validate_name(const char *name, const char *ctx, struct strbuf *err)
{
	const char *at = NULL;

	if (!*name) {
		strbuf_addf(err, "%sempty host name", ctx);
		return -EINVAL;
	}
	if (name[0] == '-')
		return name_error(err, ctx, name, "starts with '-'");
	for (const char *p = name; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c <= 0x20 || c == 0x7f)
			return name_error(err, ctx, name,
					  "contains whitespace or a control character");
		if (c >= 0x80)
			return name_error(err, ctx, name, "contains a non-ASCII byte");
		if (strchr(forbidden_chars, c))
			return name_error(err, ctx, name, "contains '%c'", c);
		if (c == '@') {
			if (at)
				return name_error(err, ctx, name, "contains more than one '@'");
			at = p;
		}
	}
	if (at) {
		if (at == name)
			return name_error(err, ctx, name, "empty user name before '@'");
		if (!at[1])
			return name_error(err, ctx, name, "empty host name after '@'");
		if (at[1] == '-')
			return name_error(err, ctx, name, "host part starts with '-'");
		if ((size_t)(at - name) > HOST_NAME_LEN_MAX)
			return name_error(err, ctx, name, "user name longer than %d characters",
					  HOST_NAME_LEN_MAX);
	}
	if (strlen(host_part(name)) > HOST_NAME_LEN_MAX)
		return name_error(err, ctx, name, "longer than %d characters", HOST_NAME_LEN_MAX);
	return 0;
}

/* Validate name and append it (taking ownership of it, also on failure). */
static int add_host(struct host_list *list, struct host_set *set, char *name,
		    const struct host_entry *counts, const char *ctx, struct strbuf *err)
{
	uint32_t pos = 0;
	long dup;
	int r;

	if ((r = validate_name(name, ctx, err)) < 0)
		goto out;
	dup = host_set_find(set, list, name, &pos);
	if (dup >= 0) {
		const char *other = list->hosts[dup].name;
		strbuf_addf(err, "%sduplicate host '%s'", ctx, name);
		if (!streq(other, name))
			strbuf_addf(err, " (the same node as '%s')", other);
		r = -EINVAL;
		goto out;
	}
	if (list->nr >= HOST_LIST_MAX) {
		strbuf_addf(err, "%smore than %d hosts", ctx, HOST_LIST_MAX);
		r = -EINVAL;
		goto out;
	}
	struct host_entry *e = ARRAY_PUSH(list->hosts, list->nr);
	e->name = name;
	e->slots = counts ? counts->slots : 0;
	e->max_slots = counts ? counts->max_slots : 0;
	set->slot[pos] = (uint32_t)list->nr;
	name = NULL;
out:
	free(name);
	return r;
}

/* Drop the entries appended after the first nr, so a failed call leaves the list as it was. */
static void host_list_truncate(struct host_list *list, size_t nr)
{
	while (list->nr > nr)
		free(list->hosts[--list->nr].name);
}

struct range_item {
	uint64_t lo, hi;
	int width; /* digits of the lower bound: "01-12" keeps two */
};

static int range_error(struct strbuf *err, const char *elem, const char *fmt, ...)
	ATTR_PRINTF(3, 4);

static int range_error(struct strbuf *err, const char *elem, const char *fmt, ...)
{
	va_list ap;

	strbuf_addstr(err, "invalid host range '");
	strbuf_addstr_printable(err, elem);
	strbuf_addstr(err, "': ");
	va_start(ap, fmt);
	strbuf_vaddf(err, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool all_digits(const char *s, size_t len)
{
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* Parse the inside of "[1,3,5-7]" into items; *ret_count is the number of names it makes. */
static int parse_range_body(const char *elem, const char *body, size_t len,
			    struct range_item **items, size_t *nr, uint64_t *ret_count,
			    struct strbuf *err)
{
	const char *p = body, *end = body + len;
	uint64_t count = 0;

	if (!len)
		return range_error(err, elem, "empty range");
	while (p <= end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *item_end = comma ? comma : end;
		const char *dash = memchr(p, '-', (size_t)(item_end - p));
		const char *lo_end = dash ? dash : item_end;
		const char *hi = dash ? dash + 1 : p;
		struct range_item it;

		if (item_end == p)
			return range_error(err, elem, "empty item in the range");
		if (!all_digits(p, (size_t)(lo_end - p)) ||
		    !all_digits(hi, (size_t)(item_end - hi)))
			return range_error(err, elem,
					   "expected numbers such as [1-4] or [01,03,05-07]");
		if (parse_u64_n(p, (size_t)(lo_end - p), &it.lo) < 0 ||
		    parse_u64_n(hi, (size_t)(item_end - hi), &it.hi) < 0)
			return range_error(err, elem, "number too large");
		if (it.lo > it.hi)
			return range_error(err, elem, "reversed range %.*s", (int)(item_end - p),
					   p);
		if (lo_end - p > HOST_NAME_LEN_MAX)
			return range_error(err, elem, "number longer than %d digits",
					   HOST_NAME_LEN_MAX);
		it.width = (int)(lo_end - p);
		/* Checked before adding, so neither the difference nor the sum can wrap. */
		if (it.hi - it.lo >= HOST_LIST_MAX || count + (it.hi - it.lo + 1) > HOST_LIST_MAX)
			return range_error(err, elem, "names more than %d hosts", HOST_LIST_MAX);
		count += it.hi - it.lo + 1;
		*ARRAY_PUSH(*items, *nr) = it;
		if (!comma)
			break;
		p = comma + 1;
	}
	*ret_count = count;
	return 0;
}

/* One bracket range of an element, and the text before it. */
struct range_group {
	const char *prefix; /* into the element */
	size_t prefix_len;
	struct range_item *items;
	size_t nr_items;
};

/* Free the groups and their items. */
static void release_groups(struct range_group *groups, size_t nr)
{
	for (size_t g = 0; g < nr; g++)
		free(groups[g].items);
	free(groups);
}

/*
 * Every name of groups (and the suffix after the last), the last range
 * varying fastest, as Slurm expands "rack[1-2]n[1-4]": rack1n1 .. rack1n4,
 * rack2n1 ...  pick holds, per group, the item and value in use.
 */
static int expand_groups(const struct range_group *groups, size_t nr, const char *suffix,
			 struct host_list *list, struct host_set *set, struct strbuf *err)
{
	struct pick {
		size_t item;
		uint64_t value;
	} *pick = xcalloc(nr, sizeof(*pick));
	struct strbuf name = STRBUF_INIT;
	int r = 0;

	for (size_t g = 0; g < nr; g++)
		pick[g].value = groups[g].items[0].lo;
	for (;;) {
		size_t g;
		strbuf_reset(&name);
		for (g = 0; g < nr; g++) {
			const struct range_item *it = &groups[g].items[pick[g].item];
			strbuf_add(&name, groups[g].prefix, groups[g].prefix_len);
			strbuf_addf(&name, "%0*" PRIu64, it->width, pick[g].value);
		}
		strbuf_addstr(&name, suffix);
		if ((r = add_host(list, set, strbuf_detach(&name, NULL), NULL, "", err)) < 0)
			break;
		/* The next name: step the last group, carrying into those before it. */
		for (g = nr; g-- > 0;) {
			const struct range_group *grp = &groups[g];
			if (pick[g].value < grp->items[pick[g].item].hi) {
				pick[g].value++;
				break;
			}
			if (pick[g].item + 1 < grp->nr_items) {
				pick[g].item++;
				pick[g].value = grp->items[pick[g].item].lo;
				break;
			}
			pick[g].item = 0;
			pick[g].value = grp->items[0].lo;
		}
		if (g == (size_t)-1)
			break;
	}
	strbuf_release(&name);
	free(pick);
	return r;
}

/*
 * One element of a -H list: a name, or a name with bracket ranges, each
 * "[1-4]", "[01,03,05-07]" ("node[01-08]" keeps the zero padding), as many
 * as Slurm's hostlists have ("rack[1-2]n[1-4]").
 */
static int parse_element(const char *elem, struct host_list *list, struct host_set *set,
			 struct strbuf *err)
{
	struct range_group *groups = NULL;
	size_t nr_groups = 0, literal = 0;
	const char *p = elem;
	uint64_t total = 1;
	int r = 0;

	if (!strchr(elem, '['))
		return add_host(list, set, xstrdup(elem), NULL, "", err);
	for (;;) {
		const char *open = strchr(p, '['), *close = strchr(p, ']');
		struct range_group *grp;
		uint64_t count = 0;
		if (!open) {
			if (close) {
				r = range_error(err, elem, "']' without '['");
				goto out;
			}
			break;
		}
		if (close && close < open) {
			r = range_error(err, elem, "']' without '['");
			goto out;
		}
		if (!close) {
			r = range_error(err, elem, "no ']' after '['");
			goto out;
		}
		if (memchr(open + 1, '[', (size_t)(close - open - 1))) {
			r = range_error(err, elem, "a range inside a range");
			goto out;
		}
		grp = ARRAY_PUSH(groups, nr_groups);
		*grp = (struct range_group){ .prefix = p, .prefix_len = (size_t)(open - p) };
		literal += grp->prefix_len;
		r = parse_range_body(elem, open + 1, (size_t)(close - open - 1), &grp->items,
				     &grp->nr_items, &count, err);
		if (r < 0)
			goto out;
		/* Checked before multiplying, so the product cannot wrap. */
		total *= count;
		if (total > HOST_LIST_MAX) {
			r = range_error(err, elem, "names more than %d hosts", HOST_LIST_MAX);
			goto out;
		}
		p = close + 1;
	}
	/* Bound the text around the ranges first: it is copied into every name. */
	if (literal + strlen(p) > 2 * HOST_NAME_LEN_MAX + 1) {
		r = range_error(err, elem, "name too long");
		goto out;
	}
	if (list->nr + total > HOST_LIST_MAX) {
		r = range_error(err, elem, "the list would hold more than %d hosts", HOST_LIST_MAX);
		goto out;
	}
	r = expand_groups(groups, nr_groups, p, list, set, err);
out:
	release_groups(groups, nr_groups);
	return r;
}

int host_list_parse(const char *spec, struct host_list *list, struct strbuf *err)
{
	size_t start_nr = list->nr;
	struct host_set set;
	const char *p = spec;
	int r = 0;

	host_set_init(&set, list);
	if (!*spec) {
		strbuf_addstr(err, "empty host list");
		r = -EINVAL;
		goto out;
	}
	for (;;) {
		const char *end = p;
		int depth = 0;

		/* A comma inside brackets belongs to the range. */
		while (*end && (*end != ',' || depth > 0)) {
			if (*end == '[')
				depth++;
			else if (*end == ']' && depth > 0)
				depth--;
			end++;
		}
		if (end == p) {
			strbuf_addstr(err, "empty host name in the list '");
			strbuf_addstr_printable(err, spec);
			strbuf_addch(err, '\'');
			r = -EINVAL;
			goto out;
		}
		char *elem = xstrndup(p, (size_t)(end - p));
		r = parse_element(elem, list, &set, err);
		free(elem);
		if (r < 0 || !*end)
			break;
		p = end + 1;
	}
out:
	if (r < 0)
		host_list_truncate(list, start_nr);
	host_set_release(&set);
	return r;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

#define HOSTFILE_FORMS "'HOST [slots=N] [max_slots=N]' or 'HOST:N'"

/* A count of slots: 1 .. HOST_SLOTS_MAX. */
static int parse_slot_count(const char *text, const char *field, const char *ctx, unsigned *ret,
			    struct strbuf *err)
{
	uint32_t n;

	if (parse_u32(text, &n) < 0 || n < 1 || n > HOST_SLOTS_MAX) {
		strbuf_addf(err, "%s%s must be a number from 1 to %d, not '", ctx, field,
			    HOST_SLOTS_MAX);
		strbuf_addstr_printable(err, text);
		strbuf_addch(err, '\'');
		return -EINVAL;
	}
	*ret = n;
	return 0;
}

/*
 * MPICH's "host:N" cuts the count off the name.  A name with two or more
 * colons is an IPv6 address ("::1") and keeps them all.
 */
static int split_mpich_count(char *name, const char *ctx, unsigned *slots, struct strbuf *err)
{
	char *colon = strchr(name, ':');

	if (colon && strchr(colon + 1, ':')) {
		const char *host = host_part(name);
		if (host[strspn(host, "0123456789abcdefABCDEF:.")]) {
			strbuf_addf(err, "%sexpected " HOSTFILE_FORMS ", not '", ctx);
			strbuf_addstr_printable(err, name);
			strbuf_addstr(err, "' (more than one ':' outside an IPv6 address)");
			return -EINVAL;
		}
		return 0;
	}
	if (!colon)
		return 0;
	*colon = '\0';
	return parse_slot_count(colon + 1, "the count after ':'", ctx, slots, err);
}

/* One "key=N" field of the Open MPI and DeepSpeed forms. */
static int parse_field(const char *word, const char *ctx, struct host_entry *e, struct strbuf *err)
{
	const char *eq = strchr(word, '=');
	size_t key_len = eq ? (size_t)(eq - word) : 0;
	unsigned *target;
	const char *key;

	if (eq && key_len == 5 && !strncmp(word, "slots", 5)) {
		target = &e->slots;
		key = "slots";
	} else if (eq && key_len == 9 &&
		   (!strncmp(word, "max_slots", 9) || !strncmp(word, "max-slots", 9))) {
		/* Open MPI takes both spellings. */
		target = &e->max_slots;
		key = "max_slots";
	} else {
		strbuf_addf(err, "%sunknown field '", ctx);
		strbuf_addstr_printable(err, word);
		strbuf_addstr(err, "' (expected slots=N or max_slots=N)");
		return -EINVAL;
	}
	if (*target) {
		strbuf_addf(err, "%s%s given twice", ctx, key);
		return -EINVAL;
	}
	return parse_slot_count(eq + 1, key, ctx, target, err);
}

/* One hostfile line (without its newline, comment already cut off). */
static int parse_line(char *line, const char *ctx, struct host_list *list, struct host_set *set,
		      struct strbuf *err)
{
	char *words[4];
	size_t nr_words = 0;
	char *p = line;
	struct host_entry e = { 0 };
	bool mpich;
	int r;

	for (;;) {
		while (is_blank(*p))
			*p++ = '\0';
		if (!*p)
			break;
		if (nr_words == ARRAY_SIZE(words)) {
			strbuf_addf(err, "%sexpected " HOSTFILE_FORMS, ctx);
			return -EINVAL;
		}
		words[nr_words++] = p;
		while (*p && !is_blank(*p))
			p++;
	}
	if (!nr_words)
		return 0;
	if (strchr(words[0], '=')) {
		strbuf_addf(err, "%sexpected a host name before '", ctx);
		strbuf_addstr_printable(err, words[0]);
		strbuf_addch(err, '\'');
		return -EINVAL;
	}
	if ((r = split_mpich_count(words[0], ctx, &e.slots, err)) < 0)
		return r;
	mpich = e.slots != 0;
	/* The name first: "-p 22" is a bad name, not a bad field. */
	if ((r = validate_name(words[0], ctx, err)) < 0)
		return r;
	if (mpich && nr_words > 1) {
		strbuf_addf(err, "%sexpected " HOSTFILE_FORMS ", not both forms", ctx);
		return -EINVAL;
	}
	for (size_t i = 1; i < nr_words; i++)
		if ((r = parse_field(words[i], ctx, &e, err)) < 0)
			return r;
	if (e.max_slots && e.slots > e.max_slots) {
		strbuf_addf(err, "%sslots=%u is more than max_slots=%u", ctx, e.slots, e.max_slots);
		return -EINVAL;
	}
	return add_host(list, set, xstrdup(words[0]), &e, ctx, err);
}

int host_list_parse_file_text(const char *text, const char *name, struct host_list *list,
			      struct strbuf *err)
{
	size_t start_nr = list->nr;
	struct strbuf line = STRBUF_INIT, ctx = STRBUF_INIT;
	struct host_set set;
	const char *p = text;
	unsigned long lineno = 0;
	int r = 0;

	host_set_init(&set, list);
	while (*p) {
		const char *nl = strchrnul(p, '\n');
		const char *hash = memchr(p, '#', (size_t)(nl - p));

		lineno++;
		strbuf_reset(&line);
		strbuf_add(&line, p, (size_t)((hash ? hash : nl) - p));
		strbuf_reset(&ctx);
		strbuf_addf(&ctx, "%s:%lu: ", name, lineno);
		if ((r = parse_line(line.buf, ctx.buf, list, &set, err)) < 0)
			break;
		p = *nl ? nl + 1 : nl;
	}
	if (r < 0)
		host_list_truncate(list, start_nr);
	host_set_release(&set);
	strbuf_release(&line);
	strbuf_release(&ctx);
	return r;
}

int host_list_load_file(const char *path, struct host_list *list, struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT;
	char buf[8192];
	ssize_t n;
	int fd, r = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		r = -errno;
		strbuf_addf(err, "cannot read '%s': %s", path, strerror(-r));
		return r;
	}
	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			strbuf_addf(err, "cannot read '%s': %s", path, strerror(-r));
			goto out;
		}
		if (n == 0)
			break;
		if (text.len + (size_t)n > HOSTFILE_SIZE_MAX) {
			strbuf_addf(err, "%s: larger than %zu KiB", path, HOSTFILE_SIZE_MAX >> 10);
			r = -EFBIG;
			goto out;
		}
		strbuf_add(&text, buf, (size_t)n);
	}
	/* A NUL would silently end the text early. */
	if (memchr(text.buf, '\0', text.len)) {
		strbuf_addf(err, "%s: contains a NUL byte; not a hostfile", path);
		r = -EINVAL;
		goto out;
	}
	r = host_list_parse_file_text(text.buf, path, list, err);
out:
	close(fd);
	strbuf_release(&text);
	return r;
}

bool host_is_local(const char *name)
{
	return streq(name, "localhost") || streq(name, "127.0.0.1") || streq(name, "::1");
}

void host_list_release(struct host_list *list)
{
	host_list_truncate(list, 0);
	free(list->hosts);
	list->hosts = NULL;
	list->nr = 0;
}

int host_list_from_cluster(const char *cluster, struct host_list *list, struct strbuf *err)
{
	struct cluster_file_location loc;
	struct cluster_file cf;
	size_t nr = list->nr;
	int r;

	cluster_file_init(&cf);
	if (cluster_file_locate(cluster, &loc) < 0 || !loc.path.len) {
		r = 0;
		goto out;
	}
	/* A file that --cluster or $SPARKCTL_CLUSTER names must be there. */
	if (!loc.exists && (loc.origin == CLUSTER_FILE_FROM_NOWHERE)) {
		r = 0;
		goto out;
	}
	if ((r = cluster_file_load(&cf, loc.path.buf, err)) < 0)
		goto out;
	if (!cf.nr) {
		strbuf_addstr(err, "no nodes in the cluster file '");
		strbuf_addstr_printable(err, loc.path.buf);
		strbuf_addstr(err, "' (sparkctl join HOST... or sparkctl cluster add NAME)");
		r = -EINVAL;
		goto out;
	}
	for (size_t i = 0; i < cf.nr; i++) {
		char *host = cluster_node_host(&cf.nodes[i]);
		r = host_list_parse(host, list, err);
		free(host);
		if (r < 0) {
			host_list_truncate(list, nr);
			goto out;
		}
	}
	r = 1;
out:
	cluster_file_release(&cf);
	cluster_file_location_release(&loc);
	return r;
}

int host_list_default(const char *cluster, struct host_list *list, struct strbuf *err)
{
	/* Inside an allocation its nodes are the ones to use, before any cluster file. */
	if (getenv("SLURM_JOB_ID") && getenv("SLURM_JOB_NODELIST")) {
		if (host_list_parse(getenv("SLURM_JOB_NODELIST"), list, err) < 0) {
			strbuf_addstr(err, " (in SLURM_JOB_NODELIST)");
			return -EINVAL;
		}
		return 1;
	}
	return host_list_from_cluster(cluster, list, err);
}

int host_list_from_options(const char *spec, const char *hostfile, const char *cluster,
			   const char *fallback, struct host_list *list, struct strbuf *err)
{
	if (spec && hostfile) {
		strbuf_addstr(err, "-H and --hostfile cannot be combined");
		return -EINVAL;
	}
	if (!spec && !hostfile) {
		int r = host_list_default(cluster, list, err);
		if (r < 0)
			return -EINVAL;
		if (r > 0)
			return 0;
	}
	if (!spec && !hostfile && !fallback) {
		strbuf_addstr(err, "which nodes? -H HOST,..., --hostfile FILE, or a cluster file "
				   "(sparkctl join)");
		return -EINVAL;
	}
	if ((hostfile ? host_list_load_file(hostfile, list, err)
		      : host_list_parse(spec ? spec : fallback, list, err)) < 0)
		return -EINVAL;
	if (!list->nr) {
		if (hostfile)
			strbuf_addf(err, "no hosts in '%s'", hostfile);
		else
			strbuf_addstr(err, "no hosts given");
		return -EINVAL;
	}
	return 0;
}

/* A name cut before the number at its end: "spark-07" is "spark-", 7, written "07". */
struct numbered_name {
	const char *name;
	size_t prefix_len; /* the name's length when it does not end in a number */
	uint64_t value;
	size_t digits;
};

static void cut_number(const char *name, struct numbered_name *out)
{
	size_t len = strlen(name), start = len;

	while (start > 0 && isdigit((unsigned char)name[start - 1]))
		start--;
	*out = (struct numbered_name){ .name = name, .prefix_len = len };
	/* Numbers past 19 digits stay text, as do names that are only a number. */
	if (start == len || start == 0 || len - start > 19 ||
	    parse_u64_n(name + start, len - start, &out->value) < 0)
		return;
	out->prefix_len = start;
	out->digits = len - start;
}

static int compare_numbered(const void *a, const void *b)
{
	const struct numbered_name *x = a, *y = b;
	size_t common = x->prefix_len < y->prefix_len ? x->prefix_len : y->prefix_len;
	int c = memcmp(x->name, y->name, common);

	if (c)
		return c;
	if (x->prefix_len != y->prefix_len)
		return x->prefix_len < y->prefix_len ? -1 : 1;
	/* Names without a number first; then by number, then by how it is written. */
	if (!x->digits != !y->digits)
		return x->digits ? 1 : -1;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return x->digits < y->digits ? -1 : x->digits > y->digits;
}

static bool same_prefix(const struct numbered_name *a, const struct numbered_name *b)
{
	return a->digits && b->digits && a->prefix_len == b->prefix_len &&
	       !memcmp(a->name, b->name, a->prefix_len);
}

/*
 * Whether n, written as a range item that starts at lo's width, reads as
 * its own name: the parser writes every value of "[08-12]" with 2 digits,
 * of "[9-12]" with as many as it has.
 */
static bool fits_width(const struct numbered_name *lo, const struct numbered_name *n)
{
	int need = snprintf(NULL, 0, "%0*" PRIu64, (int)lo->digits, n->value);

	return (size_t)need == n->digits;
}

void host_list_compress(const char *const *names, size_t n, struct strbuf *out)
{
	struct numbered_name *v = xcalloc(n + 1, sizeof(*v));
	size_t i = 0, first = out->len;

	for (size_t k = 0; k < n; k++)
		cut_number(names[k], &v[k]);
	qsort(v, n, sizeof(*v), compare_numbered);
	while (i < n) {
		size_t end = i + 1, items = 0;
		if (out->len > first)
			strbuf_addch(out, ',');
		while (end < n && same_prefix(&v[i], &v[end]))
			end++;
		if (end - i == 1 || !v[i].digits) {
			strbuf_addstr(out, v[i].name);
			/* The same name again (no number, or the same number) is not repeated. */
			while (++i < n && !strcmp(v[i].name, v[i - 1].name))
				;
			continue;
		}
		strbuf_add(out, v[i].name, v[i].prefix_len);
		strbuf_addch(out, '[');
		while (i < end) {
			size_t last = i;
			/* A run of consecutive numbers; the same name twice is one. */
			while (last + 1 < end && (streq(v[last + 1].name, v[last].name) ||
						  (v[last + 1].value == v[last].value + 1 &&
						   fits_width(&v[i], &v[last + 1]))))
				last++;
			strbuf_addf(out, "%s%s", items++ ? "," : "", v[i].name + v[i].prefix_len);
			if (v[last].value != v[i].value)
				strbuf_addf(out, "-%s", v[last].name + v[last].prefix_len);
			i = last + 1;
		}
		strbuf_addch(out, ']');
	}
	free(v);
}
