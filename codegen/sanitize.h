/*
 * sanitize.h — making model-supplied names safe for generated text.
 *
 * Tensor and node names come from the model file and may hold anything:
 * quotes, newlines, "*" "/" pairs, preprocessor lines.  Every writer that
 * puts a name into C or DOT goes through these functions so that a model
 * can never inject code into a firmware build or break a picture.
 */
#ifndef ARENAC_SANITIZE_H
#define ARENAC_SANITIZE_H

#include <stdio.h>

/*
 * A C identifier fragment made of [A-Za-z0-9_] with no leading, trailing
 * or doubled underscore (so that PREFIX_<frag>_SIZE never holds "__",
 * reserved in C++).  Empty when nothing of the name survives.  Malloc'ed.
 */
char *ar_c_ident(const char *s);

/*
 * Identifier fragments for n names, distinct from each other: the first
 * name to claim a fragment keeps it, later ones get _2, _3, ...  A name
 * with nothing usable becomes fallback followed by its position.  The
 * result is an array of n malloc'ed strings; free with ar_strv_free.
 */
char **ar_c_idents_unique(const char *const *names, int n,
			  const char *fallback);
void ar_strv_free(char **v, int n);

/* C string literals: ar_text_c_str (text.h), for the header's tables. */

/* Writes s for the inside of a C block comment: it cannot end the comment,
 * open a nested one, splice lines or hold a non-ASCII byte. */
void ar_c_comment(FILE *f, const char *s);

/*
 * s as Graphviz label text: printable ASCII only, backslashes doubled (so
 * "\N", "\n" and friends in a name are not escapes), cut to max chars with
 * "..." when longer (max 0: no limit).  Malloc'ed.
 */
char *ar_dot_label(const char *s, int max);

#endif
