/*
 * budget.c — work budgets and the --time-limit safety net (budget.h).
 *
 * The budget arithmetic is integer and reads nothing but its arguments,
 * so where a search stops depends on the input and the effort alone; the
 * clock is read only while a time limit is set.
 */
#include "budget.h"

#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int64_t ar_effort_units(int effort, int64_t base)
{
	int64_t u = base > 0 ? base : 1;
	for (int e = effort; e > AR_EFFORT_DEFAULT; e--)
		u = u > INT64_MAX / AR_EFFORT_FACTOR ? INT64_MAX
						     : u * AR_EFFORT_FACTOR;
	for (int e = effort; e < AR_EFFORT_DEFAULT; e++)
		u /= AR_EFFORT_FACTOR;
	return u > 0 ? u : 1;
}

void ar_watch_start(ArWatch *w, double seconds)
{
	w->deadline = seconds > 0 ? now() + seconds : 0;
	w->fired = false;
}

void ar_budget_init(ArBudget *b, int64_t units, ArWatch *watch)
{
	b->left = b->granted = units > 0 ? units : 0;
	b->watch = watch;
	b->spent = units <= 0;
}

static bool time_is_up(ArWatch *w)
{
	if (!w || w->deadline <= 0)
		return false;
	if (!w->fired && now() > w->deadline)
		w->fired = true;
	return w->fired;
}

bool ar_budget_left(ArBudget *b)
{
	if (!b->spent && time_is_up(b->watch))
		b->spent = true;
	return !b->spent;
}

bool ar_budget_spend(ArBudget *b, int64_t units)
{
	if (!ar_budget_left(b))
		return false;
	if (units > b->left) {
		b->left = 0;
		b->spent = true;
		return false;
	}
	b->left -= units;
	return true;
}

void ar_budget_share(const ArBudget *parent, int64_t num, int64_t den,
		     ArBudget *child)
{
	int64_t part = parent->left / den * num +
		       parent->left % den * num / den;
	ar_budget_init(child, parent->spent ? 0 : part > 0 ? part : 1,
		       parent->watch);
}

void ar_budget_settle(ArBudget *parent, const ArBudget *child)
{
	int64_t used = child->granted - child->left;
	if (used >= parent->left) {
		parent->left = 0;
		parent->spent = true;
	} else {
		parent->left -= used;
	}
	if (child->watch && child->watch->fired)
		parent->spent = true;
}
