/*
 * budget.h — work budgets: how far each search may go, counted in its own
 * units of work (states expanded, steps simulated, candidates planned),
 * never in seconds, so the same input and options give the same plan on
 * every machine, under any load and under the sanitizers.
 *
 * One effort level (--effort 1-9, AR_EFFORT_DEFAULT when not given) scales
 * every search's budget by AR_EFFORT_FACTOR per level.  Each search names
 * its own base budget (the units it may spend at the default level) beside
 * its unit.
 *
 * The wall clock enters only as an outer safety net (--time-limit, off by
 * default): an ArWatch holds one deadline for a whole run, every budget
 * of that run checks it now and then, and once it has passed every search
 * of the run stops at once and the run says so (ArWatch.fired).  A run
 * stopped that way is no longer reproducible, and is reported as such.
 */
#ifndef ARENAC_BUDGET_H
#define ARENAC_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#define AR_EFFORT_MIN 1
#define AR_EFFORT_MAX 9
#define AR_EFFORT_DEFAULT 5
#define AR_EFFORT_FACTOR 4

/* The --time-limit safety net of one run, shared by all its searches. */
typedef struct ArWatch {
	double deadline;        /* monotonic seconds; 0: no time limit */
	bool fired;             /* some search stopped at the deadline */
} ArWatch;

/* Units a search may still spend. */
typedef struct ArBudget {
	int64_t left;
	int64_t granted;        /* what it started with */
	ArWatch *watch;         /* NULL: no time limit */
	bool spent;             /* ran out (of units or time): stays so */
} ArBudget;

/* base units (those of the default effort) scaled to effort, at least 1.
 * Levels outside 1-9 are allowed inside the planner: a search running
 * many small plans gives each a few levels less. */
int64_t ar_effort_units(int effort, int64_t base);

/* A watch whose deadline is seconds from now (0 or less: none). */
void ar_watch_start(ArWatch *w, double seconds);

void ar_budget_init(ArBudget *b, int64_t units, ArWatch *watch);

/*
 * Takes units from the budget; false once it is spent or the watch's
 * deadline has passed (then watch->fired is set).  After the first false
 * it stays false.  The clock is read on each call while a deadline is
 * set, so searches spend in chunks of at least a few microseconds.
 */
bool ar_budget_spend(ArBudget *b, int64_t units);

/* Whether b can still spend, without spending. */
bool ar_budget_left(ArBudget *b);

/* A share of what parent has left (left * num / den, at least 1) as a
 * budget of its own on the same watch; ar_budget_settle then charges the
 * parent what the child spent. */
void ar_budget_share(const ArBudget *parent, int64_t num, int64_t den,
		     ArBudget *child);
void ar_budget_settle(ArBudget *parent, const ArBudget *child);

#endif
