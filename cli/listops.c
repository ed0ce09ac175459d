/*
 * listops.c — `arenac --list-ops`: the op table (ops/table.c) as text, one
 * op version per line, so a user can see what arenac supports before
 * trying a model, and tests can hold the table against ONNX's own lists.
 *
 * Columns, tab-separated after a header line: domain ("" is ONNX's),
 * op, first opset, input and output counts (min-max, "*" for any),
 * whether it has a shape function, a folder, an alias class (view,
 * inplace, concat or -), a gradient rule, a reference-runtime kernel,
 * and why it is refused, if it is.
 */
#include <stdio.h>

#include "ops.h"
#include "options.h"

static void put_count(FILE *f, int lo, int hi)
{
	if (hi == AR_VARIADIC)
		fprintf(f, "\t%d-*", lo);
	else
		fprintf(f, "\t%d-%d", lo, hi);
}

static const char *yes(bool b)
{
	return b ? "yes" : "-";
}

int cli_list_ops(Cli *c, char *arg)
{
	static const char *const alias[] = {"-", "view", "inplace", "concat"};
	int n;
	const ArOpDef *t = ar_op_table(&n);

	(void)c, (void)arg;
	puts("domain\top\tsince\tinputs\toutputs\tshape\tfold\talias\tgrad"
	     "\truntime\trefused");
	for (int i = 0; i < n; i++) {
		const ArOpDef *d = &t[i];
		printf("%s\t%s\t%d", d->domain ? d->domain : "", d->name,
		       d->since);
		put_count(stdout, d->in_min, d->in_max);
		put_count(stdout, d->out_min, d->out_max);
		printf("\t%s\t%s\t%s\t%s\t%s\t%s\n", yes(d->shape),
		       yes(d->fold), alias[d->alias], yes(d->grad),
		       yes(d->runtime), d->refuse ? d->refuse : "-");
	}
	return CLI_DONE;
}
