/*
 * treap.h — the heap priority of the planner's treaps (the interval sets
 * of greedy placement, ivset.c, and the verifier's live set, verify.c).
 *
 * A treap's priorities are usually random; here they are a fixed hash of
 * the node's index, so a tree's shape depends only on what was inserted,
 * never on a seed or the machine, and nothing needs to be stored for it.
 */
#ifndef ARENAC_TREAP_H
#define ARENAC_TREAP_H

#include <stdint.h>

static inline uint32_t ar_treap_priority(int k)
{
	uint32_t x = (uint32_t)k * 0x9E3779B9u;
	x ^= x >> 16;
	x *= 0x85EBCA6Bu;
	return x ^ (x >> 13);
}

#endif
