/*
 * plain.c — a model whose tables are written in the runtime's own types
 * (art_tensor and art_step rows, attributes as art_attr rows), as a test
 * that builds one step by hand has them.  A generated header's tables
 * are bound with ARENAC_RT_BIND instead, which decodes its own types.
 */
#include <string.h>

#include "arenac_rt.h"

static void plain_tensor(const void *table, int i, art_tensor *out)
{
	*out = ((const art_tensor *)table)[i];
}

static void plain_step(const void *table, int i, art_step *out)
{
	*out = ((const art_step *)table)[i];
}

static void plain_attr(const void *table, int i, art_attr *out)
{
	*out = ((const art_attr *)table)[i];
}

void art_plain_model(art_model *m, const art_tensor *tensors, int ntensors,
		     const art_step *steps, int nsteps)
{
	memset(m, 0, sizeof *m);
	m->g.tensors = tensors;
	m->g.ntensors = ntensors;
	m->g.steps = steps;
	m->g.nsteps = nsteps;
	m->tensor = plain_tensor;
	m->step = plain_step;
	m->attr = plain_attr;
}
