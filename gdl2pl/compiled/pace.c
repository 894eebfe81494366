/*  Pacing long loops: see pace.h. */

#include "pace.h"

#include <time.h>

static double
now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);   /* time.monotonic()'s clock */
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void
pace_start(Pace *p, double deadline)
{
    p->ts = NULL;
    p->deadline = deadline;
    p->next = now() + 0.002;   /* a short call keeps the GIL */
    p->count = 0;
    p->stop = 0;
}

int
pace_check(Pace *p)
{
    double t = now();
    if (p->deadline > 0 && t >= p->deadline) { p->stop = 2; return 1; }
    if (t < p->next) return 0;
    if (p->ts) PyEval_RestoreThread(p->ts);
    p->ts = NULL;
    if (PyErr_CheckSignals() < 0) { p->stop = 1; return 1; }
    p->ts = PyEval_SaveThread();
    p->next = t + 0.005;
    return 0;
}

void
pace_end(Pace *p)
{
    if (p->ts) PyEval_RestoreThread(p->ts);
    p->ts = NULL;
}
