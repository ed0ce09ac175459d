/*
 * picture_util.h — what the picture tests share: a scratch folder,
 * Graphviz files read back (attributes, shapes by class), LeNet planned.
 */
#ifndef ARENAC_PICTURE_UTIL_H
#define ARENAC_PICTURE_UTIL_H

#include "testutil.h"

#include <stdbool.h>
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include "infer.h"
#include "load.h"
#include "plan.h"

/* Each test program makes its own with mkdtemp before running. */
static char tmpdir[] = "/tmp/arenac_picXXXXXX";

static const char *tmp(const char *name)
{
	static char buf[256];
	snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
	return buf;
}

static int remove_tmpdir(void **state)
{
	char cmd[300];
	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	return system(cmd);
}

static Agraph_t *read_dot(const char *path)
{
	FILE *f = fopen(path, "r");
	Agraph_t *g;
	assert_non_null(f);
	g = agread(f, NULL);
	fclose(f);
	assert_non_null(g);
	return g;
}

static const char *attr(void *obj, const char *name)
{
	char *v = agget(obj, (char *)name);
	return v ? v : "";
}

static int count_class(Agraph_t *g, const char *cls)
{
	int n = 0;
	for (Agnode_t *v = agfstnode(g); v; v = agnxtnode(g, v))
		n += strcmp(attr(v, "class"), cls) == 0;
	return n;
}

static bool starts_with_file(const char *path, const char *magic)
{
	char buf[16] = {0};
	FILE *f = fopen(path, "rb");
	size_t n;
	if (!f)
		return false;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	return n >= strlen(magic) && memcmp(buf, magic, strlen(magic)) == 0;
}

/* testdata/lenet.onnx at batch 1, planned with the default options. */
static void plan_lenet(ArGraph **g, ArPlan **p)
{
	ArLoadOptions lo = {0};
	ArPlanOptions po;
	ArError err = {0};

	lo.dim_default = 1;
	lo.batch = -1;
	assert_int_equal(ar_load_onnx("testdata/lenet.onnx", &lo, g, &err),
			 AR_OK);
	assert_int_equal(ar_infer(*g, NULL, &err), AR_OK);
	ar_plan_options_default(&po);
	assert_int_equal(ar_plan(*g, &po, p, &err), AR_OK);
}

#endif
