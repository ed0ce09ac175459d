/*
 * emit.h — writers of arenac's outputs: JSON report, C header, Graphviz.
 *
 * Every writer reads only the Graph and the Plan; none changes them.  Files
 * are written through ar_out_open/ar_out_commit so that a failed run never
 * leaves a truncated output for a firmware build to pick up.
 */
#ifndef ARENAC_EMIT_H
#define ARENAC_EMIT_H

#include <stdio.h>

#include "graph.h"
#include "plan.h"

typedef struct ArEmitInfo {
	const char *model_path;     /* as given (pictures use its base name) */
	const char *prefix;         /* identifier prefix for the header */
	const char *options;        /* the options that shaped the plan, one line */
	bool strip_names;           /* --strip-names: the header's tables
				       without tensor (but the graph's inputs'
				       and outputs'), step and graph names */
	bool dot_weights;           /* draw weights and constants in --dot */
	/* --train: the memory bill, written as the JSON "training" object. */
	const struct ArTrainBill *training;
	/* --dot: every step drawn, however large the graph (--dot-expand);
	 * or only the steps within dot_radius of step dot_focus. */
	bool dot_expand;
	bool dot_focus_set;
	int dot_focus, dot_radius;
	/* --timeline-other: tensors under this many bytes are drawn merged
	 * (0: none); when not set, those under two points tall. */
	bool timeline_other_set;
	int64_t timeline_other;
	/* --timeline-compare: another plan drawn below this one. */
	const struct ArPlanReport *compare;
	const char *compare_path;
	/* Many devices (devices.h): the JSON's "parallel" and "devices"
	 * (and "fit"), the plan being stage `stage`'s. */
	const struct ArDevicesResult *devices;
	const struct ArFitResult *fit;
	int stage;
	/* --train: the host's bill, the JSON's "host" (json_host.c). */
	const struct ArHostBill *host;
} ArEmitInfo;

/* Atomic output: a temporary file beside the target, renamed on commit,
 * or the target left as it is when it already holds the output (outfile.c).
 * A path of "-" writes to stdout (path NULL); an existing target that is no
 * regular file (/dev/null) is written straight (sink NULL). */
typedef struct ArOutFile {
	FILE *f;
	char *path;
	struct ArOutSink *sink;
} ArOutFile;

int ar_out_open(ArOutFile *o, const char *path, ArError *err);
/* Completes the temporary (on failure removes it); then either publish it
 * over the target or abort.  Commit is finish and publish at once. */
int ar_out_finish(ArOutFile *o, ArError *err);
int ar_out_publish(ArOutFile *o, ArError *err);
int ar_out_commit(ArOutFile *o, ArError *err);
void ar_out_abort(ArOutFile *o);

/* The model as every output names it: the file name of model_path without
 * its folders, so that outputs do not depend on where arenac ran. */
const char *ar_model_name(const ArEmitInfo *info);

/* Writes s as a JSON string literal (with quotes). */
void ar_json_str(FILE *f, const char *s);

/* --trace: the plan in the Trace Event Format (trace.c); nonzero when the
 * write failed. */
int ar_write_trace(FILE *f, const ArGraph *g, const ArPlan *p,
		   const ArEmitInfo *info);
int ar_write_json(FILE *f, const ArGraph *g, const ArPlan *p,
		  const ArEmitInfo *info);
/* The report's "host" object (json_host.c). */
void ar_write_host_json(FILE *f, const struct ArHostBill *h);
/* The report's multi-device part (json_devices.c). */
void ar_write_devices_json(FILE *f, const ArEmitInfo *info);
int ar_write_header(FILE *f, const ArGraph *g, const ArPlan *p,
		    const ArEmitInfo *info, ArError *err);
/* Format from the extension: .dot writes DOT text, .svg/.png/.pdf render
 * through gvc. */
/* The identifier prefix the header derives from info->prefix. Malloc'ed. */
char *ar_header_prefix(const char *prefix);

/*
 * The weights blob (--weights): each weight and constant that a step reads,
 * in tensor order at offsets aligned to the plan's alignment; offsets[t]
 * (may be NULL) gets t's offset or -1.  Returns the blob's size.  The
 * header's weights_offset column comes from here.
 */
int64_t ar_weights_layout(const ArGraph *g, const ArPlan *p, int64_t *offsets);
/*
 * The same over the subgraphs too: off[0] per tensor of g, off[1 + id]
 * per tensor of subgraph id (ar_plan_walk_subs; NULL when not planned),
 * a subgraph's outer tensors at the offset of what they stand for; size
 * is the whole blob's (what ar_weights_layout returns).
 */
typedef struct ArWeightsLayout {
	int n;
	int64_t **off;
	int64_t size;
} ArWeightsLayout;
void ar_weights_layout_all(const ArGraph *g, const ArPlan *p,
			   ArWeightsLayout *l);
void ar_weights_layout_free(ArWeightsLayout *l);
/* Writes the blob as raw bytes, or with c_text as a C file defining
 * const uint8_t PREFIX_weights[PREFIX_WEIGHTS_SIZE].  Constants whose
 * values the frontend left to compute on demand are computed here, one at
 * a time (their data in g is dropped again once written). */
int ar_write_weights(FILE *f, bool c_text, ArGraph *g, const ArPlan *p,
		     const ArEmitInfo *info, ArError *err);

/* The pictures, by path's extension (see ar_gv_write): out gets the
 * finished file to publish, or with out NULL it is committed at once. */
int ar_write_dot(const char *path, const ArGraph *g, const ArPlan *p,
		 const ArEmitInfo *info, ArOutFile *out, ArError *err);
int ar_write_timeline(const char *path, const ArGraph *g, const ArPlan *p,
		      const ArEmitInfo *info, ArOutFile *out, ArError *err);

#endif
