/*  Evaluating one game's network: a state installed (the state program run: legal,
    terminal, goal), a joint move played (the move program: next, sees), random
    playouts, and tuning.

    Three ways, by measurement (benchmarks/RESULTS.md, "The evaluation paths"): every
    rule of every atom looked at (before tune()); after tune(), each rule looked at only
    once the atom it watches (its positive literal that held least often in random play)
    is true ("watched"); and when the programs list their atoms in ascending order,
    only the atoms a true atom's watch made a candidate are looked at, the others stay
    false ("events"). All three give the same values. A cyclic group (a program's -k
    marker) is evaluated from all-false to its least fixpoint by a worklist. */

#ifndef GDL2PL_EVALUATE_H
#define GDL2PL_EVALUATE_H

#include "network.h"
#include "pace.h"

#pragma GCC visibility push(hidden)

/* Atom a's bit in a bitmap over the atoms. */
static inline void
mark(uint64_t *bits, int32_t a)
{
    bits[a >> 6] |= (uint64_t)1 << (a & 63);
}

/* Back to all-false (evaluation by events): the atoms the last move run made true,
   and with state those of the last state run too. */
void forget_runs(Network *self, int state);

/* The next epoch of the state's candidate lists (watched evaluation). */
void next_state_epoch(Network *self);

/* `state` (one byte per fluent) into the network's values, the state program run
   (nothing to do if it is the state installed last). */
void install(Network *self, const uint8_t *state);

/* The state after the joint move in self->joint (the state program has run) into out,
   one byte per fluent. */
void successor(Network *self, uint8_t *out);

/* The installed state's legal moves into result_moves / result_count (C only), each
   role's in the network's order. */
void collect_legal(Network *self);

/* The goal entry of role r that holds in the installed state, or -1 unless exactly
   one does. */
int32_t goal_of(Network *self, int32_t r);

/* One random playout from the state in buf (overwritten with the final state).
   Returns the depth (>= 0); -1 - r when role r has no legal move (buf: that state);
   PLAYOUT_STOPPED when pace says stop. */
#define PLAYOUT_STOPPED INT64_MIN
int64_t playout(Network *self, uint8_t *buf, int64_t max_depth, Pace *pace);

/* Random playouts from `start` (at most `steps` steps in all, and none past
   `deadline`, a time.monotonic() value, 0 for none) with every rule looked at, then
   each rule set to watch its positive literal that held least often (rules without
   one are always looked at), and evaluation by events where the programs allow it.
   Returns the steps played; -1 with an error set (memory, or a signal handler's: then
   nothing changes). Called on a network that does not watch yet. */
Py_ssize_t tune(Network *self, const uint8_t *start, Py_ssize_t steps, int64_t max_depth,
                double deadline);

#pragma GCC visibility pop

#endif
