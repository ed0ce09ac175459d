/*
 * solve.h — `arenac solve`: the offset solvers on a MiniMalloc-style CSV,
 * without a model, for benchmarks and for plans made elsewhere.
 */
#ifndef ARENAC_SOLVE_H
#define ARENAC_SOLVE_H

/* argv[0] is "solve"; returns the process exit code. */
int arenac_solve_main(int argc, char **argv);

#endif
