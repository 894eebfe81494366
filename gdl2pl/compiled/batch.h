/*  Batches of games: a Batch holds N games of one network and steps them together:
    one call steps every game (or those a mask names) and writes what learning code
    reads into arrays it was given when built (any writable C-contiguous buffer: numpy
    arrays, array.array, bytearray; no numpy is needed): per game the observation row,
    per role the legal-action mask and the reward, whether the game has ended, the role
    to move, and whether an illegal action ended it.

    Bit-sliced: the games go in groups of 64, 128 or 256 (the batch's width: 1, 2 or 4
    64-bit words), and a group's states are held as one word (or 2, 4) per fluent, bit
    k for its k-th game. A group is evaluated at once, every atom's value a word: a rule
    is the AND of its literals' words, an atom the OR of its rules', a cyclic group's
    least fixpoint found by a worklist of the atoms whose words grew (each grows at most
    once a game: linear work, however the cycle is ordered). So a group costs one pass
    over the rules, where one game alone costs a watched evaluation (tune()); a group
    with few games to step (at most `solo`) steps them one by one that way instead. A
    step of a group: the fluents' words and the interface's (the state program's atoms
    that the move program or a next reads, saved at the group's last evaluation) and
    the joint moves' bits; the move program; the next state's words (games not stepped
    keep theirs); the state program; the outputs.

    Tables from Python say what the outputs mean, nothing of a game's text does: the
    action id of each move in its role's action table (-1: none), for each fluent the
    offsets of an observation row that hold 1 while it holds, and per goal entry the
    reward it gives (NaN: no number).

    A call takes the network's lock for its whole length (the one-by-one steps use the
    network's values), and the batch's own arrays are touched only under it: one call
    at a time per network, whatever threads share it (a call from inside a call is
    refused, as for the network). Long loops release the GIL; a signal handler's error
    is raised once the call is done, every game stepped, so that a batch is never left
    half stepped. Memory: the `memory` member (bytes of the batch's own arrays: linear
    in N, plus the scratch of one group) and the output arrays. */

#ifndef GDL2PL_BATCH_H
#define GDL2PL_BATCH_H

#include "network.h"

#pragma GCC visibility push(hidden)

enum { OUT_OBS, OUT_MASKS, OUT_REWARDS, OUT_TERMINATED, OUT_MOVER, OUT_ILLEGAL, N_OUT };

/* What a state can break of the adapters' contract. The problem reported is the first
   by game, then stage (a fluent without observation entry; a role's legal moves; its
   goals), then detail (the fluent's or the role's index), whatever the order the games
   were evaluated in. */
enum { P_NONE, P_MISSING_GOAL, P_NO_GOAL, P_GOALS, P_NO_LEGAL, P_NO_ACTION, P_UNOBSERVED };

/* What a step does to one game. */
enum { PLAN_NONE, PLAN_STEP, PLAN_RESET, PLAN_ILLEGAL, PLAN_LOAD };

/* The most 64-bit words per atom of a group of games. A batch's width is 1, 2 or 4
   words (64, 128 or 256 games a group), the least that holds its games up to 4: a
   rule's literals are read once for up to 256 games (breakthrough's batch of 1,024 ran
   1.85 times as fast as with one word, checkers' twice), and a small batch keeps its
   words close together (a batch of 64 on a 4-word layout ran at half speed). */
#define WORDS 4

/* What evaluating one group of games writes besides the games' own rows: each thread
   stepping groups has its own (the batch's for the calling thread). */
typedef struct {
    uint64_t *words, *next_words, *load_words;
    int32_t *wqueue, *lane_count, *lane_last, *goal_count, *goal_found;
    uint8_t *queued;
} Scratch;

/* The most threads a batch steps its groups on. */
#define MAX_THREADS 64

typedef struct {
    PyObject_HEAD
    Network *net;
    uint64_t generation;   /* the network's when built: a rebuilt network is refused */
    Py_ssize_t n, n_groups;    /* games, and groups of `lanes` games */
    int width, lanes;      /* 64-bit words an atom has in a group, and games a group */
    int32_t n_roles, n_actions, n_fluents, n_moves, n_iface, solo;
    Py_ssize_t obs_size, state_bytes, legal_bytes, largest, memory;
    int32_t *iface;        /* the interface: state program atoms the move program reads */
    int32_t *move_action;  /* n_moves: its action id in its role's table, -1: none */
    int32_t *action_move;  /* n_roles * n_actions: the move of an action id, -1: none */
    int32_t *obs_start, *obs_at;   /* per fluent, its offsets in an observation row */
    double *goal_return;   /* per goal entry, its reward (NaN: not a number) */
    double missing_return; /* the reward of a role without goal (NaN: a problem) */
    uint8_t *init;         /* the initial state, one byte per fluent */
    uint64_t *init_words;  /* n_fluents: all ones where the initial state holds it */
    uint64_t *fw;          /* n_groups * n_fluents: each group's fluents, a lane a game */
    uint64_t *iw;          /* n_groups * n_iface: each group's interface values */
    uint64_t *words;       /* n_atoms: scratch, every atom's word in one group */
    uint64_t *next_words, *load_words;   /* n_fluents each: scratch */
    int32_t *wqueue;       /* largest cyclic group + 1: scratch, its worklist */
    uint8_t *queued;       /* n_atoms: scratch, in the worklist */
    int32_t *lane_count, *lane_last, *goal_count, *goal_found;  /* lanes * roles: scratch */
    uint8_t *legals;       /* n * legal_bytes: each game's legal moves, packed */
    uint8_t *done;         /* n: the game has ended (terminal, or by an illegal action) */
    int32_t *only;         /* n * n_roles: a role's one legal move, -1: none or several */
    int32_t *counts;       /* n * n_roles: how many legal moves a role has */
    int32_t *move_lo, *move_hi;  /* per role: its moves are lo..hi-1, each with an action
                                    id (else lo = hi = -1: sample scans its entries) */
    uint8_t *plan;         /* n: scratch, what a call does to each game */
    int32_t *culprit;      /* n: scratch, the role whose action was illegal */
    int32_t *joints;       /* n * n_roles: scratch, the joint moves of a step */
    uint8_t *scratch, *next;   /* n_fluents + 1 each: a state, one byte per fluent */
    uint8_t *iface_vals;   /* n_iface + 1: scratch */
    int32_t *mw_start, *mw_rules;  /* once the network watches: per atom, its watchers
                                      whose head the move program evaluates */
    Py_buffer out[N_OUT];
    Py_buffer marks;       /* n 1-byte flags, or obj NULL: a game whose terminal state
                              has no reward for a role (no goal value, several, or not a
                              number) is marked here, not reported as a problem */
    uint8_t *packed;       /* lanes * state_bytes: scratch, one group's packed states */
    int threads;           /* threads a call steps the groups on (1: the caller's only) */
    Scratch *extra;        /* threads - 1: the other threads' scratch */
    Py_ssize_t extra_bytes;   /* their bytes (counted in memory) */
    int obs_float, rewards_double;
    uint64_t rng;
    int hard_kind, soft_kind;              /* the first problems of a call */
    Py_ssize_t hard_game, soft_game;
    int32_t hard_detail, soft_detail;
} Batch;

/* Bit k of packed bits (bit k: byte k / 8, lowest bit first). */
static inline int
bit(const uint8_t *bits, Py_ssize_t k)
{
    return (bits[k >> 3] >> (k & 7)) & 1;
}

/* bits (as pack makes them) into n bytes of 0 or 1 */
void unpack(uint8_t *out, const uint8_t *bits, Py_ssize_t n);

/* Group g's games' packed states (state_bytes each, as get_states gives them) into
   out + (game - first game of g) * state_bytes, from its fluents' words: 64 fluents of
   64 games at a time, a bit matrix transposed. */
void pack_group(const Batch *b, Py_ssize_t g, uint8_t *out);

/* Game i's lane of n atoms' words (the batch's width each, from `words`: a group's
   first) as n bytes of 0 or 1. */
void lane_get(const Batch *b, const uint64_t *words, Py_ssize_t n, Py_ssize_t i, uint8_t *out);

/* Every game's plan in b->plan, group by group, with the GIL released after the first
   milliseconds; on b->threads threads when there are groups enough (a group on one
   thread only, each thread with its own scratch; the others step every group
   bit-sliced: the same answers). Returns 0, or -1 with a signal handler's error set
   (every game has still run). */
int run_plans(Batch *b, const uint8_t *states);

/* Step the groups on k threads from now on (1 <= k <= MAX_THREADS): the scratch of the
   k - 1 others allocated (their bytes counted in memory). Under the network's lock.
   Returns 0, or -1 with MemoryError or ValueError set (the threads unchanged). */
int batch_set_threads(Batch *b, int k);

/* Free the other threads' scratch. */
void batch_free_threads(Batch *b);

/* None, or (kind, game, detail) of the first problem of the call: a breach of the
   adapters' contract first, else a role without goal given the missing-goal reward. */
PyObject *problem_result(Batch *b);

/* Take the batch's network for one call (see enter); a network built again since the
   batch was made is refused. */
int batch_enter(Batch *b);

/* The part of building done under the network's lock: sizes checked against the
   network's, tables, per-game arrays, every game in the initial state. */
int batch_build_locked(Batch *b, PyObject *init, Py_ssize_t n_ma, Py_ssize_t n_os,
                       Py_ssize_t n_oa, Py_ssize_t n_gr);

#pragma GCC visibility pop

#endif
