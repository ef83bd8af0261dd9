/*
 * codec.h - the inventory's fields, one descriptor per struct, and the
 * one writer, reader, initialiser and releaser that walk them.
 *
 * A descriptor (struct inv_desc) lists the JSON keys of one struct in
 * the order they are written: each row names the key, the kind of value,
 * where it is stored (offsetof) and one line of docs/inventory.md.  The
 * rows of every inventory struct are in schema.c; docs/inventory.md's
 * field tables are generated from them (tests/cli/inventory-doc.c) and a
 * test keeps the two equal.
 *
 * Conventions of the JSON form, kept by the walkers so no row repeats
 * them: an unknown value (NULL string, negative integer, TRI_UNKNOWN) is
 * written as null; a missing key or null reads back as unknown; a value
 * of the wrong type is an error "path.to.key: expected ...", and the
 * reader stops at the first.  Derived rows are computed by a function of
 * derive.c when written (it gets the object and those holding it, struct
 * inv_scope) and ignored when read.
 *
 * Ownership: the struct owns every string and array that its rows name;
 * inv_fields_release() frees them all.
 */
#ifndef SPARKCTL_INVENTORY_CODEC_H
#define SPARKCTL_INVENTORY_CODEC_H

#include "sparkctl.h"
#include "inventory/derive.h"
#include "lib/json.h"
#include "lib/strbuf.h"

enum inv_type {
	INV_STRING, /* char *; NULL is null */
	INV_INT,    /* int64_t; negative is null */
	INV_INT32,  /* int; negative is null; a larger value than an int holds is an error */
	INV_UINT,   /* unsigned, never null: between min and max, else message */
	INV_TRI,    /* int tri-state: true, false, null */
	INV_LIMIT,  /* int64_t bytes; INV_UNLIMITED is "unlimited"; negative is null */
	INV_ENUM,   /* int: the string of names[] with that value; -1 (unknown) is null */
	INV_GID,    /* uint8_t[16], as format_gid() writes it; never null (message) */
	INV_STRVEC, /* struct strvec: an array of strings */
	INV_NAME,   /* const char *, not owned: a map key out of the map row's keys[] */
	INV_TAG,    /* int, not in the JSON: which tagged array of the parent holds the element */
	INV_CONST,  /* the integer min: written, not read (a format version) */
	INV_OBJECT, /* a nested object: desc's rows on the struct at offset */
	INV_INLINE, /* desc's rows on the struct at offset, in this same object */
	INV_ARRAY,  /* desc structs: pointer at offset, size_t count at count_offset */
	INV_MAP,    /* ARRAY's storage as an object: key (desc row 0) -> row `value`; with
		       keys[], always those entries and no others */
	INV_DERIVED_STRING, /* derive.str() */
	INV_DERIVED_INT,    /* derive.num(); negative is null */
	INV_DERIVED_TRI,    /* derive.tri() */
	INV_DERIVED_BOOL,   /* derive.flag() */
	INV_OPTIONAL, /* an object or null: a pointer at offset to desc's struct; NULL is null */
};

/* Row flags. */
enum {
	INV_REQUIRED = 1 << 0,	 /* null or missing is an error: message, else the type's */
	INV_OMIT_NULL = 1 << 1,	 /* MAP: entries whose value is null are left out */
	INV_WRITE_ONLY = 1 << 2, /* written, not read back */
	/* INT, DERIVED_INT: the int64_t is Mb/s, the JSON a number of Gb/s (docs/json.md) */
	INV_MBPS_AS_GBPS = 1 << 3,
};

struct inv_enum_name {
	int value;
	const char *name;
};

struct inv_desc;

struct inv_field {
	const char *key;
	enum inv_type type;
	unsigned flags;
	size_t offset;
	size_t count_offset;	     /* ARRAY, MAP: where the size_t count is */
	const struct inv_desc *desc; /* OBJECT, INLINE, ARRAY, MAP: the nested struct */
	int64_t min, max;	     /* UINT: the bounds; CONST: min is the value */
	int tag;		     /* ARRAY: only elements whose TAG row is tag (0: all) */
	unsigned value;		     /* MAP: the index in desc of the row that holds the value */
	const char *const *keys;     /* MAP: the keys it always has, NULL-terminated */
	const struct inv_enum_name *names; /* ENUM: NULL-terminated by name */
	union {
		const char *(*str)(const struct inv_scope *s, char buf[INV_DERIVED_TEXT]);
		int64_t (*num)(const struct inv_scope *s);
		int (*tri)(const struct inv_scope *s);
		bool (*flag)(const struct inv_scope *s);
	} derive;
	/*
	 * The key in inventory version 1, read when key is missing: an older
	 * saved inventory still reads.  With INV_MBPS_AS_GBPS its value is
	 * the integer Mb/s of version 1.
	 */
	const char *v1_key;
	const char *message; /* the error for a missing or out-of-bounds value */
	const char *doc;     /* docs/inventory.md: what it is and where it comes from */
};

struct inv_desc {
	/* For docs/inventory.md: the name of its table, NULL when its rows are in the parent's. */
	const char *table;
	size_t size; /* of the struct: the element of an ARRAY or MAP */
	const struct inv_field *fields;
	size_t nr_fields;
	/*
	 * Optional, called once the rows are read: returns NULL when the
	 * object is valid, else the key to name with *what, the error.
	 */
	const char *(*check)(const void *obj, const char **what);
};

/* Initialise the struct at obj (zeroed) to "nothing known": unknowns, empty arrays. */
void inv_fields_init(const struct inv_desc *d, void *obj);
/* Free what the struct at obj owns; it is left as inv_fields_init() leaves it. */
void inv_fields_release(const struct inv_desc *d, void *obj);

/* A new JSON object of the struct at obj; inv is the inventory it belongs to. */
json_t *inv_fields_to_json(const struct inv_desc *d, const void *obj, const struct inventory *inv);

/*
 * Read o (NULL: an empty object) into the struct at obj, initialised and
 * empty.  On a schema violation returns -EINVAL with "path.key: expected
 * ..." in err; what was read so far stays in obj for the caller to
 * release.
 */
int inv_fields_from_json(const struct inv_desc *d, const json_t *o, void *obj, struct strbuf *err);

/* The descriptors (schema.c). */
extern const struct inv_desc inv_schema_inventory;  /* struct inventory: topo --json */
extern const struct inv_desc inv_schema_host_facts; /* struct inventory: a capture's host.json */

#endif
