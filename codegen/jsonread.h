/*
 * jsonread.h — a small JSON reader (RFC 8259) for files arenac wrote
 * itself and reads back: the plan report given to --timeline-compare.
 *
 * The whole text becomes a tree of values.  It is strict (no comments, no
 * trailing commas), bounded (nesting at most AR_JSON_MAX_DEPTH deep) and
 * exact for integers (held as int64 when written without a fraction or an
 * exponent), since offsets and byte counts are what the reader wants.
 */
#ifndef ARENAC_JSONREAD_H
#define ARENAC_JSONREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AR_JSON_MAX_DEPTH 64

typedef enum {
	AR_JSON_NULL, AR_JSON_BOOL, AR_JSON_INT, AR_JSON_REAL, AR_JSON_STRING,
	AR_JSON_ARRAY, AR_JSON_OBJECT
} ArJsonType;

typedef struct ArJson {
	ArJsonType type;
	bool b;
	int64_t i;
	double d;               /* REAL, and INT as a double */
	char *s;                /* STRING, NUL-terminated UTF-8 */
	struct ArJson *items;   /* ARRAY items, OBJECT values */
	char **keys;            /* OBJECT keys, in file order */
	int n;
} ArJson;

/*
 * Parses text[0..len).  On failure returns false with a message naming
 * what was wrong and the byte offset where ("expected ',' at byte 1041").
 */
bool ar_json_parse(const char *text, size_t len, ArJson *out, char *msg,
		   size_t msgn);
void ar_json_free(ArJson *v);

/* Member key of an object (the first, if repeated), or NULL. */
const ArJson *ar_json_get(const ArJson *obj, const char *key);

#endif
