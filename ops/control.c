/*
 * control.c — how a loop body's values pass from one iteration to the
 * next, as ONNX defines Loop and Scan; the planner (subplan.c), its
 * verifier and its poison executor all go by it.
 *
 *   Loop(M, cond, v_1..N): the body reads (iteration, condition, v_1..N)
 *   and writes (condition, v_1..N, scan slices): output 0 goes back to
 *   input 1, output j to input j + 1 for j <= N.
 *   Scan(states_1..N, scans_1..M) (opset 8: a sequence_lens input first):
 *   the body reads (states, one slice of each scan input) and writes
 *   (states, one slice of each scan output): output j goes back to input
 *   j for j < N.  num_scan_inputs gives M.
 * Everything else the body writes is copied out of it, and everything
 * else it reads is written anew each iteration (the iteration number, the
 * scan inputs' slices).
 */
#include "ops.h"

int ar_control_carried(const ArNode *n, ArControl c, int out)
{
	int states;

	if (c == AR_CONTROL_LOOP)
		return out >= 0 && out <= n->nexplicit - 2 ? out + 1 : -1;
	if (c != AR_CONTROL_SCAN)
		return -1;
	states = n->nexplicit - (int)ar_attr_int(n, "num_scan_inputs", 0) -
		 (n->opset < 9);
	return out >= 0 && out < states ? out : -1;
}
