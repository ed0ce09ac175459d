/*
 * optable.c — the runtime's op table (optable.h's list), whole, or cut
 * to the ops of one model.
 *
 * The library holds it whole.  A firmware that compiles this file
 * itself with its model's header,
 *
 *     cc -DARENAC_HEADER='"net.h"' -DARENAC_UP=NET -c runtime/optable.c
 *
 * and links the object before libarenac_rt.a, gets a table of only the
 * ops its model runs: nothing refers to the other kernels, so the
 * linker leaves them out (the library's own optable.o is never pulled
 * in, its two symbols being defined already).  The header says which
 * ops its plan runs with one PREFIX_USES_ID macro each
 * (codegen/header_uses.c); ART_IS_SET (arenac_rt.h) tells a macro
 * defined as 1 from an undefined one, pasted into a name, so that the
 * one list serves both builds.  A step whose op was left out fails before the
 * first step runs (interp.c), never half-way.
 */
#include <stddef.h>

#include "optable.h"

#ifdef ARENAC_HEADER
#include ARENAC_HEADER
#define ART_KEEP(id) ART_IS_SET(ART_CAT(ARENAC_UP, _USES_##id))
#else
#define ART_KEEP(id) 1
#endif

/* An op left out has no entry at all, so that neither its kernel nor
 * its name reaches the firmware's flash. */
#define ART_ENTRY_1(domain, op, fn, inplace) \
	{domain, op, fn, inplace, ART_IS_SET(ART_PLACES_ITSELF_##fn)},
#define ART_ENTRY_0(domain, op, fn, inplace)
#define ART_ENTRY(id, domain, op, fn, inplace) \
	ART_CAT(ART_ENTRY_, ART_KEEP(id))(domain, op, fn, inplace)

/* The end mark (no function) keeps the table non-empty whatever the
 * model runs. */
const art_op art_ops[] = {ART_OPS(ART_ENTRY) {"", "", NULL, IP_NO, 0}};
const int art_nops = (int)(sizeof art_ops / sizeof art_ops[0]);
