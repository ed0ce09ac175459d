/*
 * test_shape.c — unit tests of ar_infer on hand-built graphs: one group per
 * shape function family, opset-dependent forms, folding, and the errors a
 * user sees for models arenac cannot plan.
 */
#include "shape_build.h"

static void test_lenet_chain(void **state)
{
	ArGraph *g = ar_graph_new("lenet");
	int n;
	(void)state;
	INPUT(g, "x", 1, 1, 28, 28);
	INPUT(g, "w", 20, 1, 5, 5);
	INPUT(g, "fc", 10, 2880);
	INTS(g, "flat", 0, -1);
	node(g, "Conv", 13, "x,w", "c");
	node(g, "Relu", 13, "c", "r");
	n = node(g, "MaxPool", 13, "r", "p");
	ATTR_INTS(g, n, "kernel_shape", 2, 2);
	ATTR_INTS(g, n, "strides", 2, 2);
	node(g, "Reshape", 13, "p,flat", "f");
	n = node(g, "Gemm", 13, "f,fc", "y");
	attr_i(g, n, "transB", 1);
	ok(g);
	SHAPE(g, "c", 1, 20, 24, 24);
	SHAPE(g, "p", 1, 20, 12, 12);
	SHAPE(g, "f", 1, 2880);
	SHAPE(g, "y", 1, 10);
	assert_int_equal(T(g, "y")->bytes, 40);
	assert_int_equal(T(g, "c")->kind, AR_TK_ACTIVATION);
	ar_graph_free(g);
}

static void test_broadcast(void **state)
{
	ArGraph *g = ar_graph_new("bc");
	(void)state;
	input(g, "s", AR_DT_FLOAT, 0, NULL);
	INPUT(g, "a", 2, 3);
	INPUT(g, "b", 4, 1, 3);
	INPUT(g, "c", 5, 1);
	node(g, "Add", 13, "s,a", "sa");
	node(g, "Mul", 13, "b,c", "bc");
	node(g, "Less", 13, "bc,c", "lt");
	node(g, "Sum", 6, "a,s,b", "sum");
	ok(g);
	SHAPE(g, "sa", 2, 3);
	SHAPE(g, "bc", 4, 5, 3);
	assert_int_equal(T(g, "lt")->dtype, AR_DT_BOOL);
	SHAPE(g, "sum", 4, 2, 3);
	ar_graph_free(g);

	g = ar_graph_new("bad");
	INPUT(g, "a", 2, 3);
	INPUT(g, "b", 4, 3);
	node(g, "Add", 13, "a,b", "y");
	fails(g, "node 'Add' (Add): shapes [2,3] and [4,3] cannot be broadcast");
	ar_graph_free(g);
}

static void test_negative_axes(void **state)
{
	ArGraph *g = ar_graph_new("axes");
	int n;
	(void)state;
	INPUT(g, "a", 2, 3, 4);
	INPUT(g, "b", 2, 3, 5);
	input(g, "i", AR_DT_INT64, 2, DIMS(7, 8));
	INTS(g, "ax", -1);
	n = node(g, "Concat", 13, "a,b", "cat");
	attr_i(g, n, "axis", -1);
	n = node(g, "Gather", 13, "a,i", "ga");
	attr_i(g, n, "axis", -2);
	node(g, "Unsqueeze", 13, "a,ax", "u");
	n = node(g, "Softmax", 13, "a", "sm");
	attr_i(g, n, "axis", -1);
	ok(g);
	SHAPE(g, "cat", 2, 3, 9);
	SHAPE(g, "ga", 2, 7, 8, 4);
	SHAPE(g, "u", 2, 3, 4, 1);
	ar_graph_free(g);

	g = ar_graph_new("range");
	INPUT(g, "a", 2, 3);
	n = node(g, "Concat", 13, "a,a", "cat");
	attr_i(g, n, "axis", -3);
	fails(g, "axis -3 is out of range for rank 2");
	ar_graph_free(g);
}

static void test_windows(void **state)
{
	ArGraph *g = ar_graph_new("win");
	int n;
	(void)state;
	INPUT(g, "x", 1, 2, 7, 6);
	INPUT(g, "w", 4, 2, 3, 3);
	INPUT(g, "z", 1, 1, 5, 6);
	n = node(g, "Conv", 13, "x,w", "up");
	attr_s(g, n, "auto_pad", "SAME_UPPER");
	ATTR_INTS(g, n, "strides", 2, 4);
	n = node(g, "Conv", 13, "x,w", "lo");
	attr_s(g, n, "auto_pad", "SAME_LOWER");
	ATTR_INTS(g, n, "strides", 2, 4);
	n = node(g, "Conv", 13, "x,w", "dil");
	ATTR_INTS(g, n, "dilations", 2, 1);
	ATTR_INTS(g, n, "pads", 1, 0, 1, 0);
	n = node(g, "MaxPool", 13, "x", "fl");
	ATTR_INTS(g, n, "kernel_shape", 3, 3);
	ATTR_INTS(g, n, "strides", 2, 2);
	n = node(g, "MaxPool", 13, "x", "ce,idx");
	ATTR_INTS(g, n, "kernel_shape", 3, 3);
	ATTR_INTS(g, n, "strides", 2, 2);
	attr_i(g, n, "ceil_mode", 1);
	/* The last window would start in the end padding: dropped. */
	n = node(g, "AveragePool", 13, "z", "drop");
	ATTR_INTS(g, n, "kernel_shape", 2, 1);
	ATTR_INTS(g, n, "strides", 3, 1);
	ATTR_INTS(g, n, "pads", 0, 0, 2, 0);
	attr_i(g, n, "ceil_mode", 1);
	n = node(g, "AveragePool", 13, "x", "va");
	attr_s(g, n, "auto_pad", "VALID");
	ATTR_INTS(g, n, "kernel_shape", 3, 2);
	ATTR_INTS(g, n, "strides", 2, 2);
	node(g, "GlobalAveragePool", 13, "x", "gap");
	n = node(g, "ConvTranspose", 13, "up,w", "ct");
	ATTR_INTS(g, n, "strides", 2, 3);
	ATTR_INTS(g, n, "output_padding", 1, 0);
	ok(g);
	SHAPE(g, "up", 1, 4, 4, 2);
	SHAPE(g, "lo", 1, 4, 4, 2);
	SHAPE(g, "dil", 1, 4, 5, 4);
	SHAPE(g, "fl", 1, 2, 3, 2);
	SHAPE(g, "ce", 1, 2, 3, 3);
	assert_int_equal(T(g, "idx")->dtype, AR_DT_INT64);
	SHAPE(g, "drop", 1, 1, 2, 6);
	SHAPE(g, "va", 1, 2, 3, 3);
	SHAPE(g, "gap", 1, 2, 1, 1);
	/* ConvTranspose weights are [C, M/group, k...]: 4 in, 2 out. */
	SHAPE(g, "ct", 1, 2, 10, 6);
	ar_graph_free(g);

	g = ar_graph_new("big");
	INPUT(g, "x", 1, 2, 2, 2);
	n = node(g, "MaxPool", 13, "x", "y");
	ATTR_INTS(g, n, "kernel_shape", 3, 3);
	fails(g, "larger than the padded input");
	ar_graph_free(g);
}

static void test_matmul(void **state)
{
	ArGraph *g = ar_graph_new("mm");
	(void)state;
	INPUT(g, "v", 3);
	INPUT(g, "m", 3, 4);
	INPUT(g, "b", 2, 5, 3);
	INPUT(g, "p", 2, 1, 3, 4);
	INPUT(g, "q", 5, 4, 6);
	node(g, "MatMul", 13, "v,m", "vm");
	node(g, "MatMul", 13, "b,v", "bv");
	node(g, "MatMul", 13, "p,q", "pq");
	ok(g);
	SHAPE(g, "vm", 4);
	SHAPE(g, "bv", 2, 5);
	SHAPE(g, "pq", 2, 5, 3, 6);
	ar_graph_free(g);

	g = ar_graph_new("k");
	INPUT(g, "a", 2, 3);
	INPUT(g, "b", 4, 5);
	node(g, "MatMul", 13, "a,b", "y");
	fails(g, "inner dims differ: 3 and 4");
	ar_graph_free(g);
}

static void test_reshape(void **state)
{
	ArGraph *g = ar_graph_new("rs");
	int n;
	(void)state;
	INPUT(g, "x", 2, 3, 4);
	INTS(g, "s1", 0, -1);
	INTS(g, "s2", -1, 0, 2);
	INTS(g, "s3", 0, 12);
	node(g, "Reshape", 13, "x,s1", "a");
	node(g, "Reshape", 13, "x,s2", "b");
	n = node(g, "Reshape", 14, "x,s3", "c");
	attr_i(g, n, "allowzero", 0);
	n = node(g, "Reshape", 1, "x", "d");
	ATTR_INTS(g, n, "shape", 4, -1);
	n = node(g, "Flatten", 13, "x", "e");
	attr_i(g, n, "axis", -1);
	ok(g);
	SHAPE(g, "a", 2, 12);
	SHAPE(g, "b", 4, 3, 2);
	SHAPE(g, "c", 2, 12);
	SHAPE(g, "d", 4, 6);
	SHAPE(g, "e", 6, 4);
	ar_graph_free(g);

	g = ar_graph_new("two");
	INPUT(g, "x", 2, 3);
	INTS(g, "s", -1, -1);
	node(g, "Reshape", 13, "x,s", "y");
	fails(g, "more than one -1");
	ar_graph_free(g);

	g = ar_graph_new("size");
	INPUT(g, "x", 2, 3);
	INTS(g, "s", 4, 2);
	node(g, "Reshape", 13, "x,s", "y");
	fails(g, "cannot reshape 6 elements into 8");
	ar_graph_free(g);

	/* A shape known only at run time: each axis at most the 6
	 * elements, the view no larger than its input. */
	g = ar_graph_new("runtime");
	INPUT(g, "x", 2, 3);
	input(g, "s", AR_DT_INT64, 1, DIMS(2));
	input(g, "s1", AR_DT_INT64, 1, DIMS(1));
	node(g, "Reshape", 13, "x,s", "y");
	node(g, "Reshape", 13, "x,s1", "y1");
	ok(g);
	SHAPE(g, "y", 6, 6);
	assert_int_equal(T(g, "y")->bounded, 3);
	assert_int_equal(T(g, "y")->bytes, 24);
	SHAPE(g, "y1", 6);
	assert_int_equal(T(g, "y1")->bounded, 0);
	ar_graph_free(g);
}

static void test_slice(void **state)
{
	ArGraph *g = ar_graph_new("sl");
	int n;
	(void)state;
	INPUT(g, "x", 10, 8);
	INTS(g, "st", -1, 2);
	INTS(g, "en", -100, 1000);
	INTS(g, "ax", 0, 1);
	INTS(g, "sp", -2, 3);
	INTS(g, "st1", 5);
	INTS(g, "en1", 5);
	node(g, "Slice", 13, "x,st,en,ax,sp", "a");
	node(g, "Slice", 13, "x,st1,en1", "empty");
	n = node(g, "Slice", 9, "x", "b");
	ATTR_INTS(g, n, "starts", 1);
	ATTR_INTS(g, n, "ends", -1);
	ATTR_INTS(g, n, "axes", -1);
	ok(g);
	SHAPE(g, "a", 5, 2);
	SHAPE(g, "empty", 0, 8);
	SHAPE(g, "b", 10, 6);
	ar_graph_free(g);
}

static void test_split(void **state)
{
	ArGraph *g = ar_graph_new("sp");
	int n;
	(void)state;
	INPUT(g, "x", 6, 7);
	INTS(g, "sz", 2, 5);
	n = node(g, "Split", 11, "x", "a0,a1");
	ATTR_INTS(g, n, "split", 4, 2);
	node(g, "Split", 13, "x,sz", "b0,b1");
	attr_i(g, g->nnodes - 1, "axis", -1);
	node(g, "Split", 13, "x", "c0,c1,c2");
	n = node(g, "Split", 18, "x", "d0,d1,d2");
	attr_i(g, n, "axis", 1);
	attr_i(g, n, "num_outputs", 3);
	ok(g);
	SHAPE(g, "a0", 4, 7);
	SHAPE(g, "a1", 2, 7);
	SHAPE(g, "b1", 6, 5);
	SHAPE(g, "c2", 2, 7);
	SHAPE(g, "d0", 6, 3);
	SHAPE(g, "d2", 6, 1);
	ar_graph_free(g);

	g = ar_graph_new("bad");
	INPUT(g, "x", 6, 7);
	n = node(g, "Split", 11, "x", "a0,a1");
	ATTR_INTS(g, n, "split", 4, 3);
	fails(g, "split sizes add up to 7, the dim is 6");
	ar_graph_free(g);
}

/* Attribute forms before an opset, input forms from it. */
static void test_opset_forms(void **state)
{
	ArGraph *g = ar_graph_new("forms");
	int n;
	(void)state;
	INPUT(g, "x", 1, 3, 1, 4);
	INTS(g, "ax", 0, 2);
	INTS(g, "pads", 0, 1, 0, 2, 0, 0, 0, 3);
	n = node(g, "Squeeze", 11, "x", "sq11");
	ATTR_INTS(g, n, "axes", 0);
	node(g, "Squeeze", 13, "x,ax", "sq13");
	node(g, "Squeeze", 13, "x", "sqall");
	n = node(g, "Pad", 2, "x", "pad2");
	ATTR_INTS(g, n, "pads", 0, 1, 0, 2, 0, 0, 0, 3);
	node(g, "Pad", 11, "x,pads", "pad11");
	n = node(g, "ReduceMean", 13, "x", "rm");
	ATTR_INTS(g, n, "axes", 1, -1);
	n = node(g, "ReduceSum", 13, "x,ax", "rs");
	attr_i(g, n, "keepdims", 0);
	node(g, "ReduceMax", 13, "x", "rall");
	ok(g);
	SHAPE(g, "sq11", 3, 1, 4);
	SHAPE(g, "sq13", 3, 4);
	SHAPE(g, "sqall", 3, 4);
	SHAPE(g, "pad2", 1, 4, 1, 9);
	SHAPE(g, "pad11", 1, 4, 1, 9);
	SHAPE(g, "rm", 1, 1, 1, 1);
	SHAPE(g, "rs", 3, 4);
	SHAPE(g, "rall", 1, 1, 1, 1);
	ar_graph_free(g);
}

static void test_fold_shape_subgraph(void **state)
{
	ArGraph *g = ar_graph_new("fold");
	const int64_t *v;
	int n;
	(void)state;
	INPUT(g, "x", 2, 3, 4);
	INTS(g, "i0", 0);
	INTS(g, "m1", -1);
	node(g, "Shape", 13, "x", "shp");
	n = node(g, "Gather", 13, "shp,i0", "d0");
	attr_i(g, n, "axis", 0);
	n = node(g, "Concat", 13, "d0,m1", "tgt");
	attr_i(g, n, "axis", 0);
	node(g, "Reshape", 13, "x,tgt", "y");
	ok(g);
	assert_int_equal(T(g, "shp")->kind, AR_TK_CONSTANT);
	assert_int_equal(T(g, "tgt")->kind, AR_TK_CONSTANT);
	v = T(g, "tgt")->data;
	assert_non_null(v);
	assert_int_equal(v[0], 2);
	assert_int_equal(v[1], -1);
	SHAPE(g, "y", 2, 12);
	assert_int_equal(T(g, "y")->kind, AR_TK_ACTIVATION);
	ar_graph_free(g);
}

static void test_fold_large_constant(void **state)
{
	ArGraph *g = ar_graph_new("big");
	(void)state;
	INTS(g, "shape", 2048, 1024);
	INTS(g, "small", 3);
	node(g, "ConstantOfShape", 9, "shape", "w");
	node(g, "ConstantOfShape", 9, "small", "b");
	INPUT(g, "x", 1, 2048);
	node(g, "MatMul", 9, "x,w", "y");
	ok(g);
	assert_int_equal(T(g, "w")->kind, AR_TK_CONSTANT);
	assert_null(T(g, "w")->data);
	assert_int_equal(T(g, "w")->bytes, 2048 * 1024 * 4);
	assert_non_null(T(g, "b")->data);
	SHAPE(g, "y", 1, 1024);
	ar_graph_free(g);
}

static void test_constant_output(void **state)
{
	ArGraph *g = ar_graph_new("k");
	ArAttr *a;
	int n, id;
	(void)state;
	n = node(g, "Constant", 13, "", "c");
	a = fx_attr(g, &g->nodes[n], "value_ints", AR_ATTR_INTS);
	a->nints = 3;
	a->ints = ar_xcalloc(3, sizeof(int64_t));
	id = ar_graph_find(g, "c");
	g->tensors[id].kind = AR_TK_OUTPUT;
	g->outputs = ar_xmalloc(sizeof(int));
	g->outputs[g->noutputs++] = id;
	n = node(g, "Constant", 13, "", "f");
	fx_attr(g, &g->nodes[n], "value_float", AR_ATTR_FLOAT)->f = 2.5f;
	ok(g);
	assert_int_equal(T(g, "c")->kind, AR_TK_OUTPUT);
	SHAPE(g, "c", 3);
	assert_int_equal(T(g, "f")->kind, AR_TK_CONSTANT);
	assert_int_equal(T(g, "f")->rank, 0);
	assert_true(*(float *)T(g, "f")->data == 2.5f);
	ar_graph_free(g);
}

static void test_dropout_mask_and_declared(void **state)
{
	ArGraph *g = ar_graph_new("drop");
	ArTensor *t;
	(void)state;
	INPUT(g, "x", 2, 3);
	node(g, "Dropout", 9, "x", "y,mask");
	node(g, "Dropout", 12, "x", "y2,mask2");
	t = &g->tensors[ar_graph_find(g, "y")];
	t->declared = ar_xmalloc(sizeof *t->declared);
	t->declared->rank = 2;
	t->declared->dims[0] = -1;
	t->declared->dims[1] = 4;
	ok(g);
	SHAPE(g, "mask", 2, 3);
	assert_int_equal(T(g, "mask")->dtype, AR_DT_FLOAT);
	assert_int_equal(T(g, "mask2")->dtype, AR_DT_BOOL);
	assert_int_equal(nwarn, 1);
	assert_non_null(strstr(lastwarn, "tensor 'y': declared shape [-1,4], "
			       "inferred [2,3]"));
	ar_graph_free(g);
}

/*
 * Constants are computed only when needed: a 3,000-element Range (above
 * the eager limit) stays without a value until a Reshape's target needs
 * the value of ReduceMax(Range) + 1, which then computes the chain.
 */
static void test_lazy_constants(void **state)
{
	ArGraph *g = ar_graph_new("lazy");
	(void)state;
	INPUT(g, "x", 3000);
	INTS(g, "zero", 0);
	INTS(g, "limit", 3000);
	INTS(g, "one", 1);
	node(g, "Range", 11, "zero,limit,one", "r");
	node(g, "Range", 11, "zero,limit,one", "unused");
	node(g, "ReduceMax", 13, "r", "rmax");
	node(g, "Add", 13, "rmax,one", "n");
	node(g, "Reshape", 13, "x,n", "y");
	g->outputs = ar_xmalloc(sizeof(int));
	g->outputs[g->noutputs++] = ar_graph_find(g, "y");
	ok(g);
	SHAPE(g, "y", 3000);
	assert_int_equal(T(g, "n")->kind, AR_TK_CONSTANT);
	assert_non_null(T(g, "r")->data);
	assert_int_equal(((const int64_t *)T(g, "n")->data)[0], 3000);
	assert_int_equal(T(g, "unused")->kind, AR_TK_CONSTANT);
	assert_null(T(g, "unused")->data);
	ar_graph_free(g);
}

static void test_misc_ops(void **state)
{
	ArGraph *g = ar_graph_new("misc");
	int n;
	(void)state;
	INPUT(g, "x", 4, 2, 6);
	INTS(g, "rep", 1, 2, 3);
	INTS(g, "es", 3, 1, 1, 1);
	INTS(g, "k", 2);
	INPUT(g, "W", 2, 20, 6);
	INPUT(g, "R", 2, 20, 5);
	n = node(g, "LSTM", 14, "x,W,R", "y,yh,yc");
	attr_i(g, n, "hidden_size", 5);
	attr_s(g, n, "direction", "bidirectional");
	node(g, "Tile", 13, "x,rep", "t");
	node(g, "Expand", 13, "x,es", "e");
	n = node(g, "TopK", 11, "x,k", "tv,ti");
	n = node(g, "ArgMax", 13, "x", "am");
	attr_i(g, n, "keepdims", 0);
	n = node(g, "Cast", 13, "x", "ci");
	attr_i(g, n, "to", AR_DT_INT32);
	n = node(g, "Transpose", 13, "x", "tr");
	ok(g);
	SHAPE(g, "y", 4, 2, 2, 5);
	SHAPE(g, "yc", 2, 2, 5);
	SHAPE(g, "t", 4, 4, 18);
	SHAPE(g, "e", 3, 4, 2, 6);
	SHAPE(g, "tv", 4, 2, 2);
	assert_int_equal(T(g, "ti")->dtype, AR_DT_INT64);
	SHAPE(g, "am", 2, 6);
	assert_int_equal(T(g, "ci")->dtype, AR_DT_INT32);
	SHAPE(g, "tr", 6, 2, 4);
	ar_graph_free(g);
}

/* Sequence ops as the tensor ops they stand for (frontend/unroll.c). */
static void test_sequences(void **state)
{
	ArGraph *g = ar_graph_new("seq");
	int n;
	(void)state;
	INPUT(g, "x", 4, 3);
	n = node(g, "SplitToSequence", 13, "x", "s");
	attr_i(g, n, "axis", 1);
	attr_i(g, n, "keepdims", 0);
	node(g, "SequenceLength", 13, "s", "len");
	node(g, "SequenceErase", 13, "s", "s2");
	INTS(g, "last", -1);
	node(g, "SequenceAt", 13, "s2,last", "e");
	n = node(g, "ConcatFromSequence", 13, "s2", "c");
	attr_i(g, n, "axis", 0);
	attr_i(g, n, "new_axis", 1);
	g->outputs = ar_xmalloc(2 * sizeof(int));
	g->outputs[g->noutputs++] = ar_graph_find(g, "c");
	g->outputs[g->noutputs++] = ar_graph_find(g, "e");
	ok(g);
	SHAPE(g, "c", 2, 4);
	SHAPE(g, "e", 4);
	assert_non_null(T(g, "len")->data);
	assert_int_equal(((const int64_t *)T(g, "len")->data)[0], 3);
	/* The lists are gone: no sequence tensor and no sequence op. */
	assert_int_equal(ar_graph_find(g, "s"), -1);
	assert_int_equal(ar_graph_find(g, "s2"), -1);
	for (int i = 0; i < g->nnodes; i++)
		assert_null(strstr(g->nodes[i].op, "Sequence"));
	ar_graph_free(g);
}

static void test_refusals(void **state)
{
	ArGraph *g = ar_graph_new("unknown");
	int n, id;
	(void)state;
	INPUT(g, "x", 2);
	node(g, "FancyOp", 13, "x", "y");
	fails(g, "node 'FancyOp' (FancyOp): no shape inference for this op");
	ar_graph_free(g);

	g = ar_graph_new("domain");
	INPUT(g, "x", 2);
	n = node(g, "Relu", 1, "x", "y");
	ar_node_set_op(g, &g->nodes[n], g->nodes[n].op, "com.example");
	fails(g, "no shape inference for this op (domain 'com.example')");
	ar_graph_free(g);

	/* Sequences are lists of tensors (frontend/unroll.c): one as a graph
	 * output has nothing to be planned as; a position known only at
	 * run time picks no tensor. */
	g = ar_graph_new("seq");
	node(g, "SequenceEmpty", 12, "", "s");
	g->outputs = ar_xmalloc(sizeof(int));
	g->outputs[g->noutputs++] = ar_graph_find(g, "s");
	fails(g, "graph output 's' is a sequence: arenac plans tensors only");
	ar_graph_free(g);

	g = ar_graph_new("seq at");
	INPUT(g, "x", 4, 3);
	input(g, "p", AR_DT_INT64, 0, NULL);
	node(g, "SplitToSequence", 11, "x", "s");
	node(g, "SequenceAt", 11, "s,p", "y");
	fails(g, "node 'SequenceAt' (SequenceAt): input 1 ('p') must be a "
	      "compile-time constant");
	ar_graph_free(g);

	g = ar_graph_new("unknown shape");
	id = ar_graph_add_tensor(g, "x");
	g->tensors[id].kind = AR_TK_INPUT;
	g->tensors[id].dtype = AR_DT_FLOAT;
	node(g, "Relu", 13, "x", "y");
	fails(g, "node 'Relu' (Relu): input 0 ('x') has an unknown shape");
	ar_graph_free(g);

	g = ar_graph_new("string");
	id = ar_graph_add_tensor(g, "x");
	g->tensors[id].kind = AR_TK_INPUT;
	g->tensors[id].dtype = AR_DT_STRING;
	g->tensors[id].rank = 0;
	node(g, "Identity", 13, "x", "y");
	fails(g, "is a string tensor");
	ar_graph_free(g);
}

/* A float initializer of n values. */
static int floats(ArGraph *g, const char *name, int n, const float *vals)
{
	int id = ints(g, name, 0, NULL);
	ArTensor *t = &g->tensors[id];
	free(t->data);
	t->dtype = AR_DT_FLOAT;
	t->dims[0] = n;
	assert_int_equal(ar_tensor_set_bytes(t, NULL), AR_OK);
	t->data = ar_xmalloc((size_t)n * sizeof *vals);
	memcpy(t->data, vals, (size_t)n * sizeof *vals);
	return id;
}

#define FLOATS(g, name, ...) floats(g, name, \
	(int)(sizeof((float[]){__VA_ARGS__}) / sizeof(float)), \
	(const float[]){__VA_ARGS__})

/* Outputs whose size depends on values: planned for their bound, exact
 * where the values are constants. */
static void test_bounded_sources(void **state)
{
	ArGraph *g = ar_graph_new("dyn");
	int n;
	(void)state;
	INPUT(g, "x", 2, 3);
	input(g, "cond", AR_DT_BOOL, 1, DIMS(3));
	input(g, "k", AR_DT_INT64, 1, DIMS(1));
	INTS(g, "c", 0, 3, 0, 1);
	INTS(g, "keep", 1, 0, 1);
	INPUT(g, "boxes", 1, 5, 4);
	INPUT(g, "scores", 1, 2, 5);
	INTS(g, "m", 3);
	node(g, "NonZero", 13, "x", "nz");
	node(g, "NonZero", 13, "c", "nzc");
	n = node(g, "Compress", 11, "x,cond", "cx");
	attr_i(g, n, "axis", 1);
	n = node(g, "Compress", 11, "x,keep", "ck");
	attr_i(g, n, "axis", -1);
	node(g, "NonMaxSuppression", 11, "boxes,scores,m", "sel");
	node(g, "NonMaxSuppression", 11, "boxes,scores", "none");
	node(g, "Unique", 11, "x", "u,ui,uinv,uc");
	node(g, "TopK", 11, "x,k", "tv,ti");
	/* Readers of a bounded tensor: ops that move axes move their
	 * marks, others are bounded on every axis; Shape is no constant. */
	node(g, "Relu", 13, "nz", "r");
	node(g, "Transpose", 13, "nz", "tr");
	node(g, "Add", 13, "nz,k", "sum");
	node(g, "Flatten", 13, "nz", "fl");
	node(g, "Shape", 13, "nz", "sh");
	ok(g);
	SHAPE(g, "nz", 2, 6);
	assert_int_equal(T(g, "nz")->bounded, 2);
	assert_int_equal(T(g, "nz")->bytes, 2 * 6 * 8);
	SHAPE(g, "nzc", 1, 2);
	assert_int_equal(T(g, "nzc")->bounded, 0);
	SHAPE(g, "cx", 2, 3);
	assert_int_equal(T(g, "cx")->bounded, 2);
	SHAPE(g, "ck", 2, 2);
	assert_int_equal(T(g, "ck")->bounded, 0);
	SHAPE(g, "sel", 6, 3);
	assert_int_equal(T(g, "sel")->bounded, 1);
	SHAPE(g, "none", 0, 3);
	assert_int_equal(T(g, "none")->bounded, 0);
	SHAPE(g, "u", 6);
	assert_int_equal(T(g, "u")->bounded, 1);
	SHAPE(g, "uinv", 6);
	assert_int_equal(T(g, "uinv")->bounded, 0);
	SHAPE(g, "tv", 2, 3);
	assert_int_equal(T(g, "ti")->bounded, 2);
	assert_int_equal(T(g, "ti")->dtype, AR_DT_INT64);
	assert_int_equal(T(g, "r")->bounded, 2);
	SHAPE(g, "tr", 6, 2);
	assert_int_equal(T(g, "tr")->bounded, 1);
	assert_int_equal(T(g, "sum")->bounded, 2);
	SHAPE(g, "fl", 2, 6);
	assert_int_equal(T(g, "fl")->bounded, 3);
	assert_int_equal(T(g, "sh")->kind, AR_TK_ACTIVATION);
	ar_graph_free(g);
}

/* NonZero of x [2, 3] (at most 6 entries) and Range of run-time limits
 * (no bound at all), under the --bound options given. */
static ArGraph *bound_graph(int nb, const ArBound *b)
{
	ArGraph *g = ar_graph_new("bound");
	INPUT(g, "x", 2, 3);
	input(g, "s", AR_DT_INT64, 0, NULL);
	input(g, "l", AR_DT_INT64, 0, NULL);
	input(g, "d", AR_DT_INT64, 0, NULL);
	node(g, "NonZero", 13, "x", "nz");
	node(g, "Range", 11, "s,l,d", "r");
	bounds = b;
	nbounds = nb;
	return g;
}

static void bound_done(ArGraph *g)
{
	bounds = NULL;
	nbounds = 0;
	ar_graph_free(g);
}

static void bound_usage(ArGraph *g, const char *text)
{
	ArError err;
	assert_int_equal(infer(g, &err), AR_EXIT_USAGE);
	assert_non_null(strstr(err.msg, text));
	bound_done(g);
}

/* --bound tightens a computed bound or supplies a missing one. */
static void test_bounded_options(void **state)
{
	ArGraph *g;
	(void)state;

	g = bound_graph(0, NULL);
	fails(g, "node 'Range' (Range): output 'r' has a size known only at "
	      "run time (axis 0) and no bound arenac can compute; give its "
	      "largest size with --bound r=N");
	bound_done(g);

	g = bound_graph(2, (const ArBound[]){{"r", 10, 0, {0}},
					     {"nz", 4, 0, {0}}});
	ok(g);
	SHAPE(g, "r", 10);
	assert_int_equal(T(g, "r")->bounded, 1);
	SHAPE(g, "nz", 2, 4);
	assert_int_equal(nwarn, 0);
	bound_done(g);

	/* A bound looser than the computed one is not taken. */
	g = bound_graph(2, (const ArBound[]){{"r", 10, 0, {0}},
					     {"nz", 100, 0, {0}}});
	ok(g);
	SHAPE(g, "nz", 2, 6);
	assert_non_null(strstr(lastwarn, "--bound nz: 100 is above the bound "
			       "of axis 1 that node 'NonZero' (NonZero) allows "
			       "(6); using 6"));
	bound_done(g);

	/* Axis by axis: the static axes must match. */
	g = bound_graph(2, (const ArBound[]){{"r", 10, 0, {0}},
					     {"nz", 0, 2, {2, 5}}});
	ok(g);
	SHAPE(g, "nz", 2, 5);
	bound_done(g);
	bound_usage(bound_graph(2, (const ArBound[]){{"r", 10, 0, {0}},
						    {"nz", 0, 2, {3, 5}}}),
		    "--bound nz: axis 0 has the static extent 2, the bound "
		    "says 3");
	bound_usage(bound_graph(2, (const ArBound[]){{"r", 10, 0, {0}},
						    {"nz", 0, 1, {5}}}),
		    "--bound nz: the tensor has rank 2, the bound gives 1");
	bound_usage(bound_graph(2, (const ArBound[]){{"r", 10, 0, {0}},
						    {"nope", 4, 0, {0}}}),
		    "--bound nope: the model has no tensor 'nope'");

	g = bound_graph(2, (const ArBound[]){{"r", 10, 0, {0}},
					     {"x", 4, 0, {0}}});
	ok(g);
	assert_non_null(strstr(lastwarn, "--bound x: 'x' has a static shape; "
			       "the bound is not used"));
	bound_done(g);
}

/*
 * Missing bounds, all in one error in the graph's order: r2's limit is
 * computed from r, so it is data-dependent at its source and named too;
 * rr, a Reshape of r that fails on r's placeholder size, is not, and
 * inference goes on to r3.  With the three bounds the graph infers.
 */
static ArGraph *missing_graph(int nb, const ArBound *b)
{
	ArGraph *g = ar_graph_new("missing");
	input(g, "s", AR_DT_INT64, 0, NULL);
	input(g, "l", AR_DT_INT64, 0, NULL);
	input(g, "d", AR_DT_INT64, 0, NULL);
	INTS(g, "shp", 2, -1);
	node(g, "Range", 11, "s,l,d", "r");
	node(g, "Reshape", 14, "r,shp", "rr");
	node(g, "Size", 13, "r", "nr");
	node(g, "Range", 11, "s,nr,d", "r2");
	node(g, "Range", 11, "s,l,d", "r3");
	bounds = b;
	nbounds = nb;
	return g;
}

static void test_bounds_missing_together(void **state)
{
	ArGraph *g;
	(void)state;

	g = missing_graph(0, NULL);
	fails(g, "3 tensors have a size known only at run time and no bound "
	      "arenac can compute; give each its largest size:\n"
	      "  --bound r=N   (node 'Range' (Range), axis 0)\n"
	      "  --bound r2=N  (node 'Range' (Range), axis 0)\n"
	      "  --bound r3=N  (node 'Range' (Range), axis 0)");
	assert_int_equal(nwarn, 0);
	bound_done(g);

	g = missing_graph(3, (const ArBound[]){{"r", 10, 0, {0}},
					       {"r2", 10, 0, {0}},
					       {"r3", 4, 0, {0}}});
	ok(g);
	SHAPE(g, "rr", 2, 5);
	SHAPE(g, "r3", 4);
	bound_done(g);
}

/* Resize's opset 18 axes and keep_aspect_ratio_policy, DFT's one-sided
 * forms and opset 20 axis input: forms the node suite (ONNX 1.12) lacks. */
static void test_resize_dft_forms(void **state)
{
	ArGraph *g = ar_graph_new("forms");
	int n;
	(void)state;
	INPUT(g, "x", 1, 3, 4, 8);
	FLOATS(g, "sc", 2.0f, 0.5f);
	INTS(g, "sz", 6, 10);
	INPUT(g, "sig", 1, 8, 1);
	INPUT(g, "spec", 1, 5, 2);
	INTS(g, "ax", 1);
	n = node(g, "Resize", 19, "x,,sc", "a");
	ATTR_INTS(g, n, "axes", 2, -1);
	n = node(g, "Resize", 19, "x,,,sz", "b");
	ATTR_INTS(g, n, "axes", 2, 3);
	attr_s(g, n, "keep_aspect_ratio_policy", "not_larger");
	n = node(g, "Resize", 19, "x,,,sz", "c");
	ATTR_INTS(g, n, "axes", 2, 3);
	attr_s(g, n, "keep_aspect_ratio_policy", "not_smaller");
	n = node(g, "DFT", 17, "sig", "rfft");
	attr_i(g, n, "onesided", 1);
	n = node(g, "DFT", 17, "spec", "irfft");
	attr_i(g, n, "onesided", 1);
	attr_i(g, n, "inverse", 1);
	node(g, "DFT", 20, "sig,,ax", "dft20");
	node(g, "DFT", 20, "spec", "dftlast");
	ok(g);
	SHAPE(g, "a", 1, 3, 8, 4);
	/* 6/4 and 10/8: not_larger scales by 1.25, not_smaller by 1.5. */
	SHAPE(g, "b", 1, 3, 5, 10);
	SHAPE(g, "c", 1, 3, 6, 12);
	SHAPE(g, "rfft", 1, 5, 2);
	SHAPE(g, "irfft", 1, 8, 1);
	SHAPE(g, "dft20", 1, 8, 2);
	SHAPE(g, "dftlast", 1, 5, 2);
	ar_graph_free(g);
}

/* Generators, Col2Im and CenterCropPad: ops the node suite (ONNX 1.12)
 * has no test of. */
static void test_generators(void **state)
{
	ArGraph *g = ar_graph_new("gen");
	int n;
	(void)state;
	INPUT(g, "x", 2, 5);
	INPUT(g, "cols", 1, 8, 9);
	INPUT(g, "img", 1, 3, 4, 8);
	INTS(g, "ishape", 4, 4);
	INTS(g, "block", 2, 2);
	INTS(g, "crop", 6, 6);
	n = node(g, "RandomNormal", 1, "", "rn");
	ATTR_INTS(g, n, "shape", 2, 3);
	n = node(g, "RandomUniformLike", 1, "x", "ru");
	attr_i(g, n, "dtype", AR_DT_DOUBLE);
	n = node(g, "Multinomial", 7, "x", "mn");
	attr_i(g, n, "sample_size", 4);
	n = node(g, "EyeLike", 9, "x", "eye");
	attr_i(g, n, "dtype", AR_DT_INT32);
	node(g, "Col2Im", 18, "cols,ishape,block", "im");
	n = node(g, "CenterCropPad", 18, "img,crop", "cc");
	ATTR_INTS(g, n, "axes", -2, -1);
	ok(g);
	SHAPE(g, "rn", 2, 3);
	assert_int_equal(T(g, "rn")->dtype, AR_DT_FLOAT);
	/* Random values are drawn at run time, inputs or none. */
	assert_int_equal(T(g, "rn")->kind, AR_TK_ACTIVATION);
	SHAPE(g, "ru", 2, 5);
	assert_int_equal(T(g, "ru")->dtype, AR_DT_DOUBLE);
	SHAPE(g, "mn", 2, 4);
	assert_int_equal(T(g, "mn")->dtype, AR_DT_INT32);
	SHAPE(g, "eye", 2, 5);
	assert_int_equal(T(g, "eye")->dtype, AR_DT_INT32);
	SHAPE(g, "im", 1, 2, 4, 4);
	SHAPE(g, "cc", 1, 3, 6, 6);
	ar_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lenet_chain),
		cmocka_unit_test(test_broadcast),
		cmocka_unit_test(test_negative_axes),
		cmocka_unit_test(test_windows),
		cmocka_unit_test(test_matmul),
		cmocka_unit_test(test_reshape),
		cmocka_unit_test(test_slice),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_opset_forms),
		cmocka_unit_test(test_fold_shape_subgraph),
		cmocka_unit_test(test_fold_large_constant),
		cmocka_unit_test(test_constant_output),
		cmocka_unit_test(test_dropout_mask_and_declared),
		cmocka_unit_test(test_misc_ops),
		cmocka_unit_test(test_lazy_constants),
		cmocka_unit_test(test_sequences),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_bounded_sources),
		cmocka_unit_test(test_bounded_options),
		cmocka_unit_test(test_bounds_missing_together),
		cmocka_unit_test(test_resize_dft_forms),
		cmocka_unit_test(test_generators),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
