/*  The network: a game's propositional network held in integer arrays (see
    compiled/network.py for their meaning), never as code, so nothing of a game's text
    reaches C; its building, which checks every array, and its lock.

    Safety, as CPython's own modules keep it:
    - every array, size and index that comes from Python is checked when the network
      is built (sizes in 64 bits, every index against what it indexes), and a network
      whose building failed, or that was never built, refuses every call;
    - one lock per network: its scratch values (the atoms' values, the watch lists) are
      touched by one call at a time, whatever threads share it; a call waits for the
      lock with the GIL released, and a call made from inside a call on the same
      network (a finalizer run by an allocation) is refused, never deadlocked;
    - results are written to C buffers under the lock, and Python objects are made
      from those, never by reading the network's values again after an allocation;
    - long loops (playouts, tuning) release the GIL after their first milliseconds,
      look at signals every few milliseconds and stop at their deadline (pace.h). */

#ifndef GDL2PL_NETWORK_H
#define GDL2PL_NETWORK_H

#include "common.h"
#include "pythread.h"

#pragma GCC visibility push(hidden)

typedef struct {
    PyObject_HEAD
    int ready;             /* built: every method refuses otherwise */
    PyThread_type_lock lock;
    unsigned long owner;   /* the thread holding the lock (0: none) */
    int32_t n_atoms, n_fluents, n_moves, n_roles, n_rules;
    int32_t *rule_start;   /* n_atoms + 1 */
    int32_t *lit_start;    /* n_rules + 1 */
    int32_t *lits;
    int32_t *state_prog; Py_ssize_t n_state_prog;
    int32_t *move_prog; Py_ssize_t n_move_prog;
    int32_t *legal_start;  /* n_roles + 1, into legal_atom / legal_move */
    int32_t *legal_atom, *legal_move;
    int32_t *next_atom, *next_fluent; Py_ssize_t n_next;
    int32_t terminal;
    int32_t *goal_start;   /* n_roles + 1, into goal_atom / goal_values */
    int32_t *goal_atom;
    PyObject *goal_values; /* a tuple: per goal entry, its value (an int, -1 if none) */
    int32_t *sees_start;   /* n_roles + 1, into sees_atom / sees_percept (GDL-II) */
    int32_t *sees_atom, *sees_percept;
    uint8_t *val;          /* every atom's value */
    uint8_t *current;      /* the state whose state program val holds */
    uint8_t *scratch;      /* a state's worth of scratch (sees' next state) */
    int has_current;
    /* cyclic groups (a program's -k markers): each is evaluated by a worklist */
    int32_t *group_of;     /* n_atoms: the group an atom belongs to, or -1 */
    int32_t *occ_start, *occ_rules;  /* per atom: its group's rules reading it */
    int32_t *missing;      /* n_rules: scratch, literals of its own group not yet true */
    int32_t *queue;        /* scratch: the worklist (size of the largest group) */
    /* watched evaluation (after tune()): each rule is looked at only once the atom
       it watches (one of its positive literals) is true; see push() */
    int watched;
    int32_t *rule_head;    /* n_rules */
    uint8_t *moving;       /* n_atoms: 1 for the joint move's bits and what depends on them */
    int32_t *watch_start, *watch_rules;   /* per atom, the rules watching it */
    int32_t *always_start, *always_rules; /* per atom, its rules without a positive literal */
    int32_t *cand_next;    /* n_rules: the next candidate rule of the same head */
    int32_t *sc_head, *mc_head;   /* per head: first candidate pushed by the state / move */
    uint32_t *sc_stamp, *mc_stamp, state_epoch, move_epoch;
    /* event-driven watched evaluation (after tune(), when the programs allow it): an
       atom is looked at only if a rule of it became a candidate (its bit is pending)
       or it has a rule without positive literal or is in a cyclic group ("always");
       every other derived atom is false. The atoms a run made true are listed, so that
       the next run starts from all-false without touching the others. */
    int events;            /* 1: evaluation by events */
    int can_events;        /* the programs list atoms in ascending order, each rule reading
                              only earlier atoms of its program (cycles: contiguous groups) */
    Py_ssize_t n_words;    /* 64-bit words of a bitmap over the atoms */
    uint64_t *pend_state;  /* state-program atoms with a candidate of this state */
    uint64_t *pend_ms;     /* move-program atoms with a candidate from the state */
    uint64_t *pend_mm;     /* move-program atoms with a candidate from the joint move */
    uint64_t *always_state, *always_move;
    uint8_t *program_of;   /* n_atoms: 1 state program, 2 move program, 0 neither */
    int32_t *group_pos;    /* n_atoms: index in its program of its group's marker, or -1 */
    int32_t *true_state, *true_move;  /* atoms made true by the last state / move run */
    Py_ssize_t n_true_state, n_true_move;
    int32_t *legal_of_start, *legal_of;  /* per atom: the legal entries it is the atom of */
    uint32_t *rule_seen, *atom_done, group_epoch;  /* a cyclic group's run by events */
    int32_t *move_legal;   /* n_moves: the legal atom of each move (-1: never legal) */
    int32_t *move_role;    /* n_moves: the role whose legal atom it has */
    int32_t *choice;       /* scratch: legal moves of one role */
    int32_t *joint;        /* scratch: one move per role */
    int32_t *result_moves; /* scratch: legal moves found, n_legal entries */
    Py_ssize_t *result_count; /* scratch: per role, how many of them */
    uint64_t rng;
    PyObject *move_objects;  /* NULL, or a tuple: the object that stands for each move */
    uint64_t generation;   /* times built: a Batch refuses a network rebuilt under it */
} Network;

/* ---- the lock ------------------------------------------------------------------------ */

/* Take the network's lock: refuses a call from within a call on it in the same thread
   (a finalizer run by an allocation); waits for another thread's call with the GIL
   released, looking at signals. */
int acquire(Network *self);

/* Take the network for one call: a network never built (or whose building failed)
   refuses every call. */
int enter(Network *self);

/* Give the network back (after acquire or enter). */
void leave(Network *self);

/* ---- building -------------------------------------------------------------------- */

/* Every array of the network freed, its Python objects released: not built. */
void release_arrays(Network *self);

/* Build the network from Network(n_atoms, n_fluents, n_moves, rule_start, lit_start,
   lits, state_program, move_program, legal, next, terminal, goals[, sees])'s arguments
   (see network_type.c), the lock held; -1 with an error if they are not a network (the
   arrays built so far are left for release_arrays). */
int build(Network *self, PyObject *args);

#pragma GCC visibility pop

#endif
