/*  Pacing a long loop (playouts, tuning, a batch's step): the GIL released after the
    loop's first milliseconds, signals looked at every few milliseconds (with the GIL
    held again for that), a deadline kept. Between pace_start and pace_end the caller
    makes no Python call: the GIL may be released. */

#ifndef GDL2PL_PACE_H
#define GDL2PL_PACE_H

#include "common.h"

#pragma GCC visibility push(hidden)

typedef struct {
    PyThreadState *ts;   /* non-NULL while the GIL is released */
    double deadline;     /* time.monotonic() seconds; <= 0: none */
    double next;         /* when to look at signals next (and first release the GIL) */
    unsigned count;
    int stop;            /* 1: a signal handler raised (its error is set); 2: deadline */
} Pace;

/* Start pacing a loop that stops at `deadline` (a time.monotonic() value; <= 0: none). */
void pace_start(Pace *p, double deadline);

/* Nonzero when the loop must stop (p->stop says why); may release the GIL, or take it
   to look at signals. */
int pace_check(Pace *p);

/* Once per step of a long loop: nonzero when it must stop (p->stop says why). */
static inline int
pace_step(Pace *p)
{
    if (++p->count & 15) return 0;
    return pace_check(p);
}

/* The loop is over: the GIL is held again. */
void pace_end(Pace *p);

#pragma GCC visibility pop

#endif
