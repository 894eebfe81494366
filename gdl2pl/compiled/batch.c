/*  Batches of games: see batch.h. */

#include "batch.h"

#include <math.h>
#include <pthread.h>

#include "evaluate.h"
#include "pace.h"

static void *batch_alloc(Batch *b, Py_ssize_t n, Py_ssize_t size);

/* The problems' names (problem_result) and stages (note_problem), by kind. */
static const char *problem_names[] = {
    "", "missing goal", "no goal", "goals", "no legal move", "move without action",
    "fluent without observation"
};
static const int problem_stage[] = {2, 2, 2, 2, 1, 1, 0};

static void
note_problem(Batch *b, int kind, Py_ssize_t game, int32_t detail)
{
    if (kind == P_MISSING_GOAL) {
        if (!b->soft_kind || game < b->soft_game ||
            (game == b->soft_game && detail < b->soft_detail)) {
            b->soft_kind = kind; b->soft_game = game; b->soft_detail = detail;
        }
        return;
    }
    if (b->hard_kind) {
        int s = problem_stage[kind], t = problem_stage[b->hard_kind];
        if (game > b->hard_game || (game == b->hard_game &&
                                    (s > t || (s == t && detail >= b->hard_detail))))
            return;
    }
    b->hard_kind = kind; b->hard_game = game; b->hard_detail = detail;
}

void
unpack(uint8_t *out, const uint8_t *bits, Py_ssize_t n)
{
    for (Py_ssize_t k = 0; k < n; k++) out[k] = (uint8_t)bit(bits, k);
}

/* The 64 x 64 bit matrix a transposed, row r being a[63 - r] and column c bit c: bit c
   of a[63 - r] becomes bit r of a[63 - c]. (Swaps of ever smaller blocks.) */
static void
transpose64(uint64_t *a)
{
    uint64_t m = 0x00000000FFFFFFFFull;
    for (int j = 32; j != 0; j >>= 1, m ^= m << j)
        for (int k = 0; k < 64; k = ((k | j) + 1) & ~j) {
            uint64_t t = (a[k] ^ (a[k | j] >> j)) & m;
            a[k] ^= t;
            a[k | j] ^= t << j;
        }
}

void
pack_group(const Batch *b, Py_ssize_t g, uint8_t *out)
{
    const int nw = b->width;
    const int32_t nf = b->n_fluents;
    const Py_ssize_t base = g * b->lanes, sb = b->state_bytes;
    const int lanes = (int)(b->n - base < b->lanes ? b->n - base : b->lanes);
    const uint64_t *F = b->fw + (size_t)g * nf * nw;
    uint64_t a[64];
    for (int q = 0; q * 64 < lanes; q++)
        for (int32_t f0 = 0; f0 < nf; f0 += 64) {
            for (int j = 0; j < 64; j++)
                a[63 - j] = f0 + j < nf ? F[(size_t)(f0 + j) * nw + q] : 0;
            transpose64(a);   /* a[63 - lane]: bit j, fluent f0 + j of that lane's game */
            const Py_ssize_t at = f0 / 8, take = sb - at < 8 ? sb - at : 8;
            for (int lane = 0; lane < 64 && q * 64 + lane < lanes; lane++) {
                uint64_t w = a[63 - lane];
                uint8_t *row = out + (Py_ssize_t)(q * 64 + lane) * sb + at;
                for (Py_ssize_t k = 0; k < take; k++) row[k] = (uint8_t)(w >> (8 * k));
            }
        }
}

/* The packed states of group g's games in `load` (one bit a lane) into load_words,
   from `states` (every game's, state_bytes each): pack_group's transposition back. */
static void
unpack_group(Batch *b, Py_ssize_t g, const uint64_t *load, const uint8_t *states)
{
    const int nw = b->width;
    const int32_t nf = b->n_fluents;
    const Py_ssize_t base = g * b->lanes, sb = b->state_bytes;
    uint64_t a[64];
    for (int q = 0; q < nw; q++) {
        if (!load[q]) continue;
        for (int32_t f0 = 0; f0 < nf; f0 += 64) {
            const Py_ssize_t at = f0 / 8, take = sb - at < 8 ? sb - at : 8;
            for (int lane = 0; lane < 64; lane++) {
                uint64_t w = 0;
                if ((load[q] >> lane) & 1) {
                    const uint8_t *row = states + (base + q * 64 + lane) * sb + at;
                    for (Py_ssize_t k = 0; k < take; k++) w |= (uint64_t)row[k] << (8 * k);
                }
                a[63 - lane] = w;
            }
            transpose64(a);   /* a[63 - j]: fluent f0 + j, a bit a lane */
            for (int j = 0; j < 64 && f0 + j < nf; j++)
                b->load_words[(size_t)(f0 + j) * nw + q] = a[63 - j];
        }
    }
}

/* Game i's lane of n atoms' words as n bytes of 0 or 1 (lane_get), and back. */
void
lane_get(const Batch *b, const uint64_t *words, Py_ssize_t n, Py_ssize_t i, uint8_t *out)
{
    const int lane = (int)(i % b->lanes), shift = lane % 64, nw = b->width;
    const uint64_t *w = words + (i / b->lanes) * n * nw + lane / 64;
    for (Py_ssize_t k = 0; k < n; k++) out[k] = (uint8_t)((w[k * nw] >> shift) & 1);
}

static void
lane_set(const Batch *b, uint64_t *words, Py_ssize_t n, Py_ssize_t i, const uint8_t *bytes)
{
    const int lane = (int)(i % b->lanes), shift = lane % 64, nw = b->width;
    uint64_t *w = words + (i / b->lanes) * n * nw + lane / 64;
    const uint64_t one = (uint64_t)1 << shift;
    for (Py_ssize_t k = 0; k < n; k++)
        w[k * nw] = (w[k * nw] & ~one) | ((uint64_t)(bytes[k] & 1) << shift);
}

static inline int
lowest_lane(uint64_t w)
{
    return __builtin_ctzll(w);
}

static inline void
put_reward(Batch *b, Py_ssize_t k, double x)
{
    if (b->rewards_double) ((double *)b->out[OUT_REWARDS].buf)[k] = x;
    else ((float *)b->out[OUT_REWARDS].buf)[k] = (float)x;
}

/* Game i's reward for role r in a terminal state where `count` of its goal entries
   hold (the last found one `found`). */
static double
terminal_reward(Batch *b, Py_ssize_t i, int32_t r, int32_t count, int32_t found)
{
    double x;
    int kind = P_NONE;
    if (count == 1) {
        x = b->goal_return[found];
        if (isnan(x)) { kind = P_GOALS; x = 0.0; }
    } else if (count == 0) {
        x = b->missing_return;
        if (isnan(x)) { kind = P_NO_GOAL; x = 0.0; }
        else note_problem(b, P_MISSING_GOAL, i, r);
    } else {
        kind = P_GOALS;
        x = 0.0;
    }
    if (kind == P_NONE) return x;
    if (b->marks.obj) ((uint8_t *)b->marks.buf)[i] = 1;   /* the game marked, 0 reward */
    else note_problem(b, kind, i, r);
    return x;
}

/* Game i's mover, only moves and problems from its roles' legal move counts (and the
   last move found). */
static void
finish_game(Batch *b, Py_ssize_t i, int terminal, const int32_t *count, const int32_t *last)
{
    const int32_t R = b->n_roles;
    int32_t movers = 0, mover = 0;
    for (int32_t r = 0; r < R; r++) {
        b->only[i * R + r] = count[r] == 1 ? last[r] : -1;
        b->counts[i * R + r] = count[r];
        if (terminal) continue;
        if (count[r] == 0) note_problem(b, P_NO_LEGAL, i, r);
        else if (count[r] > 1) { movers++; mover = r; }
    }
    ((int32_t *)b->out[OUT_MOVER].buf)[i] =
        terminal ? -1 : movers == 0 ? 0 : movers == 1 ? mover : -1;
    ((uint8_t *)b->out[OUT_TERMINATED].buf)[i] = (uint8_t)terminal;
    ((uint8_t *)b->out[OUT_ILLEGAL].buf)[i] = 0;
    if (b->marks.obj) ((uint8_t *)b->marks.buf)[i] = 0;   /* terminal_reward may set it */
    b->done[i] = (uint8_t)terminal;
}

/* Game i's rows of the outputs and legal moves, cleared before they are written. */
static void
clear_game(Batch *b, Py_ssize_t i)
{
    const int32_t R = b->n_roles, A = b->n_actions;
    size_t item = b->obs_float ? sizeof(float) : 1;
    memset((uint8_t *)b->out[OUT_OBS].buf + (size_t)i * (size_t)b->obs_size * item, 0,
           (size_t)b->obs_size * item);
    memset((uint8_t *)b->out[OUT_MASKS].buf + i * (Py_ssize_t)R * A, 0, (size_t)R * (size_t)A);
    memset(b->legals + i * b->legal_bytes, 0, (size_t)b->legal_bytes);
}

/* Fluent f holds in game i: 1 at its offsets of i's observation row. (Locals: a store
   through a byte pointer may alias the batch's fields, which would be read again.) */
static inline void
observe(Batch *b, Py_ssize_t i, int32_t f)
{
    const int32_t start = b->obs_start[f], end = b->obs_start[f + 1];
    const int32_t *restrict at = b->obs_at;
    if (start == end) note_problem(b, P_UNOBSERVED, i, f);
    if (b->obs_float) {
        float *restrict row = (float *)b->out[OUT_OBS].buf + i * b->obs_size;
        for (int32_t k = start; k < end; k++) row[at[k]] = 1.0f;
    } else {
        uint8_t *restrict row = (uint8_t *)b->out[OUT_OBS].buf + i * b->obs_size;
        for (int32_t k = start; k < end; k++) row[at[k]] = 1;
    }
}

/* Move m (legal entry of role r) is legal in game i. */
static inline void
mark_legal(Batch *b, Py_ssize_t i, int32_t r, int32_t m)
{
    uint8_t *bits = b->legals + i * b->legal_bytes;
    bits[m >> 3] |= (uint8_t)(1u << (m & 7));
    int32_t a = b->move_action[m];
    if (a < 0) note_problem(b, P_NO_ACTION, i, r);
    else ((uint8_t *)b->out[OUT_MASKS].buf)[(i * b->n_roles + r) * (Py_ssize_t)b->n_actions + a] = 1;
}

/* ---- one game at a time, in the network's values (watched evaluation) ------------- */

/* Game i's outputs and interface values, from the network's values of its state. */
static void
emit(Batch *b, Py_ssize_t i)
{
    Network *net = b->net;
    const uint8_t *val = net->val;
    const int32_t R = b->n_roles;
    int terminal = val[net->terminal] != 0;
    int32_t *count = b->lane_count, *last = b->lane_last;   /* lane 0's rows: scratch */
    clear_game(b, i);
    for (int32_t f = 0; f < b->n_fluents; f++) if (val[f]) observe(b, i, f);
    for (int32_t r = 0; r < R; r++) {
        count[r] = 0; last[r] = -1;
        if (terminal) continue;
        for (int32_t j = net->legal_start[r]; j < net->legal_start[r + 1]; j++) {
            if (!val[net->legal_atom[j]]) continue;
            mark_legal(b, i, r, net->legal_move[j]);
            count[r]++;
            last[r] = net->legal_move[j];
        }
    }
    finish_game(b, i, terminal, count, last);
    for (int32_t r = 0; r < R; r++) {
        double x = 0.0;
        if (terminal) {
            int32_t found = -1, k = 0;
            for (int32_t j = net->goal_start[r]; j < net->goal_start[r + 1]; j++)
                if (val[net->goal_atom[j]]) { found = j; k++; }
            x = terminal_reward(b, i, r, k, found);
        }
        put_reward(b, i * R + r, x);
    }
    for (int32_t k = 0; k < b->n_iface; k++) b->iface_vals[k] = val[b->iface[k]];
    lane_set(b, b->iw, b->n_iface, i, b->iface_vals);
}

/* Game i in `state` (one byte per fluent): installed, its outputs written. */
static void
solo_load(Batch *b, Py_ssize_t i, const uint8_t *state)
{
    install(b->net, state);
    emit(b, i);
    lane_set(b, b->fw, b->n_fluents, i, state);
}

/* Atom a (a fluent or of the interface: not moving) is true: its watchers that the
   move program looks at become candidates of their heads, as push() makes them. */
static inline void
push_moving(Batch *b, int32_t a)
{
    Network *net = b->net;
    for (int32_t i = b->mw_start[a]; i < b->mw_start[a + 1]; i++) {
        int32_t r = b->mw_rules[i], h = net->rule_head[r];
        if (net->events) mark(net->pend_ms, h);    /* (as push() marks it) */
        if (net->sc_stamp[h] != net->state_epoch) {
            net->sc_stamp[h] = net->state_epoch; net->sc_head[h] = -1;
        }
        net->cand_next[r] = net->sc_head[h]; net->sc_head[h] = r;
    }
}

/* The network's values as they were after game i's last evaluation, as far as the
   move program reads them: the fluents and the interface (the watched evaluation's
   state candidates too). The rest of the state program's atoms are stale: has_current
   is cleared, so that the next install evaluates them. */
static void
restore(Batch *b, Py_ssize_t i)
{
    Network *net = b->net;
    uint8_t *val = net->val;
    /* evaluation by events: from all-false, and the interface's true atoms listed so
       that the next run resets them */
    if (net->events) forget_runs(net, 1);
    lane_get(b, b->fw, b->n_fluents, i, val);
    lane_get(b, b->iw, b->n_iface, i, b->iface_vals);
    for (int32_t k = 0; k < b->n_iface; k++) {
        val[b->iface[k]] = b->iface_vals[k];
        if (net->events && b->iface_vals[k]) net->true_state[net->n_true_state++] = b->iface[k];
    }
    net->has_current = 0;
    if (net->watched) {
        next_state_epoch(net);
        for (int32_t f = 0; f < b->n_fluents; f++) if (val[f]) push_moving(b, f);
        for (int32_t k = 0; k < b->n_iface; k++)
            if (val[b->iface[k]]) push_moving(b, b->iface[k]);
    }
}

/* Game i ends by role r's illegal action (its state stays, its outputs written): reward
   -1 for r, 0 for the others. */
static void
end_game(Batch *b, Py_ssize_t i, int32_t r)
{
    for (int32_t q = 0; q < b->n_roles; q++) put_reward(b, i * b->n_roles + q, q == r ? -1.0 : 0.0);
    ((uint8_t *)b->out[OUT_TERMINATED].buf)[i] = 1;
    ((uint8_t *)b->out[OUT_ILLEGAL].buf)[i] = 1;
    ((int32_t *)b->out[OUT_MOVER].buf)[i] = -1;
    if (b->marks.obj) ((uint8_t *)b->marks.buf)[i] = 0;
    b->done[i] = 1;
}

/* Game i's plan, one game at a time (`states`: set_states' packed states). */
static void
solo_game(Batch *b, Py_ssize_t i, const uint8_t *states)
{
    Network *net = b->net;
    switch (b->plan[i]) {
    case PLAN_STEP:
        restore(b, i);
        memcpy(net->joint, b->joints + i * b->n_roles, sizeof(int32_t) * (size_t)b->n_roles);
        successor(net, b->next);
        solo_load(b, i, b->next);
        break;
    case PLAN_RESET:
        solo_load(b, i, b->init);
        break;
    case PLAN_ILLEGAL:
        lane_get(b, b->fw, b->n_fluents, i, b->scratch);
        solo_load(b, i, b->scratch);
        end_game(b, i, b->culprit[i]);
        break;
    case PLAN_LOAD:
        unpack(b->scratch, states + i * b->state_bytes, b->n_fluents);
        solo_load(b, i, b->scratch);
        break;
    default:
        break;
    }
}

/* ---- a group of games at a time, bit-sliced ---------------------------------------- */

/* The evaluation of a group's NW words per atom (NW = the batch's width: 1, 2 or 4,
   each its own copy of these functions, so that the loops over words unroll):

   atom_words_NW: atom a's words, the OR of its rules', a rule's the AND of its
   literals' (complemented where negated); a rule stops at its first literal that no
   game of the group has.

   group_words_NW: the least fixpoint of a cyclic group of k atoms in every game: from
   all-false, each atom's words once, then the rules reading an atom whose words grew
   (its group's rules read its atoms only positively, so words only grow: an atom is
   queued at most 64 * NW + 1 times, the work is linear in the group's rules).

   run_words_NW: a program. */
#define DEFINE_WORDS(NW)                                                                \
static inline void                                                                      \
atom_words_##NW(const Network *net, const uint64_t *W, int32_t a, uint64_t *out)        \
{                                                                                       \
    uint64_t v[NW] = {0};                                                               \
    for (int32_t r = net->rule_start[a]; r < net->rule_start[a + 1]; r++) {             \
        uint64_t w[NW];                                                                 \
        for (int k = 0; k < NW; k++) w[k] = ~(uint64_t)0;                               \
        for (int32_t i = net->lit_start[r]; i < net->lit_start[r + 1]; i++) {           \
            int32_t lit = net->lits[i];                                                 \
            const uint64_t *x = W + (size_t)(lit >> 1) * NW;                            \
            uint64_t neg = (uint64_t)0 - (uint64_t)(lit & 1), any = 0;                  \
            for (int k = 0; k < NW; k++) { w[k] &= x[k] ^ neg; any |= w[k]; }           \
            if (!any) break;                                                            \
        }                                                                               \
        for (int k = 0; k < NW; k++) v[k] |= w[k];                                      \
    }                                                                                   \
    for (int k = 0; k < NW; k++) out[k] = v[k];                                         \
}                                                                                       \
                                                                                        \
static void                                                                             \
group_words_##NW(Batch *b, uint64_t *W, const int32_t *group, Py_ssize_t k)             \
{                                                                                       \
    const Network *net = b->net;                                                        \
    Py_ssize_t cap = b->largest + 1, head = 0, tail = 0;                                \
    for (Py_ssize_t j = 0; j < k; j++)                                                  \
        memset(W + (size_t)group[j] * NW, 0, sizeof(uint64_t) * NW);                    \
    for (Py_ssize_t j = 0; j < k; j++) {                                                \
        int32_t a = group[j];                                                           \
        uint64_t *aw = W + (size_t)a * NW, any = 0;                                     \
        atom_words_##NW(net, W, a, aw);                                                 \
        for (int q = 0; q < NW; q++) any |= aw[q];                                      \
        if (any) {                                                                      \
            b->queued[a] = 1;                                                           \
            b->wqueue[tail] = a;                                                        \
            tail = (tail + 1) % cap;                                                    \
        }                                                                               \
    }                                                                                   \
    while (head != tail) {                                                              \
        int32_t a = b->wqueue[head];                                                    \
        head = (head + 1) % cap;                                                        \
        b->queued[a] = 0;                                                               \
        for (int32_t i = net->occ_start[a]; i < net->occ_start[a + 1]; i++) {           \
            int32_t r = net->occ_rules[i], h = net->rule_head[r];                       \
            uint64_t w[NW], grew = 0, *hw = W + (size_t)h * NW;                         \
            for (int q = 0; q < NW; q++) w[q] = ~(uint64_t)0;                           \
            for (int32_t j = net->lit_start[r]; j < net->lit_start[r + 1]; j++) {       \
                int32_t lit = net->lits[j];                                             \
                const uint64_t *x = W + (size_t)(lit >> 1) * NW;                        \
                uint64_t neg = (uint64_t)0 - (uint64_t)(lit & 1);                       \
                for (int q = 0; q < NW; q++) w[q] &= x[q] ^ neg;                        \
            }                                                                           \
            for (int q = 0; q < NW; q++) { grew |= w[q] & ~hw[q]; hw[q] |= w[q]; }      \
            if (grew && !b->queued[h]) {                                                \
                b->queued[h] = 1;                                                       \
                b->wqueue[tail] = h;                                                    \
                tail = (tail + 1) % cap;                                                \
            }                                                                           \
        }                                                                               \
    }                                                                                   \
}                                                                                       \
                                                                                        \
static void                                                                             \
run_words_##NW(Batch *b, uint64_t *W, const int32_t *prog, Py_ssize_t n)                \
{                                                                                       \
    Py_ssize_t i = 0;                                                                   \
    while (i < n) {                                                                     \
        int32_t x = prog[i];                                                            \
        if (x >= 0) {                                                                   \
            atom_words_##NW(b->net, W, x, W + (size_t)x * NW);                          \
            i++;                                                                        \
            continue;                                                                   \
        }                                                                               \
        Py_ssize_t k = -(Py_ssize_t)x;                                                  \
        group_words_##NW(b, W, prog + i + 1, k);                                        \
        i += 1 + k;                                                                     \
    }                                                                                   \
}

DEFINE_WORDS(1)
DEFINE_WORDS(2)
DEFINE_WORDS(4)

static void
run_words(Batch *b, uint64_t *W, const int32_t *prog, Py_ssize_t n)
{
    switch (b->width) {
    case 1: run_words_1(b, W, prog, n); break;
    case 2: run_words_2(b, W, prog, n); break;
    default: run_words_4(b, W, prog, n); break;
    }
}

/* For each game of a group in mask m (the batch's width in words), its lane in `lane`. */
#define EACH_LANE(b, m, lane, body)                                                   \
    for (int lane##_q = 0; lane##_q < (b)->width; lane##_q++)                         \
        for (uint64_t lane##_w = (m)[lane##_q]; lane##_w; lane##_w &= lane##_w - 1) { \
            int lane = lane##_q * 64 + lowest_lane(lane##_w);                         \
            body                                                                      \
        }

/* The outputs of the games of group g in `lanes`, from the words of their states. */
static void
emit_words(Batch *b, Py_ssize_t g, const uint64_t *lanes)
{
    const Network *net = b->net;
    const uint64_t *W = b->words;
    const int32_t R = b->n_roles;
    const int nw = b->width;
    const Py_ssize_t base = g * b->lanes;
    uint64_t term[WORDS], moving[WORDS];
    for (int q = 0; q < nw; q++) {
        term[q] = W[(size_t)net->terminal * nw + q] & lanes[q];
        moving[q] = lanes[q] & ~term[q];
    }
    EACH_LANE(b, lanes, lane, {
        clear_game(b, base + lane);
        for (int32_t r = 0; r < R; r++) {
            b->lane_count[(Py_ssize_t)lane * R + r] = b->goal_count[(Py_ssize_t)lane * R + r] = 0;
            b->lane_last[(Py_ssize_t)lane * R + r] = b->goal_found[(Py_ssize_t)lane * R + r] = -1;
        }
    })
    for (int32_t f = 0; f < b->n_fluents; f++) {
        uint64_t m[WORDS];
        for (int q = 0; q < nw; q++) m[q] = W[(size_t)f * nw + q] & lanes[q];
        EACH_LANE(b, m, lane, { observe(b, base + lane, f); })
    }
    for (int32_t r = 0; r < R; r++)
        for (int32_t j = net->legal_start[r]; j < net->legal_start[r + 1]; j++) {
            int32_t x = net->legal_move[j];
            uint64_t m[WORDS];
            for (int q = 0; q < nw; q++)
                m[q] = W[(size_t)net->legal_atom[j] * nw + q] & moving[q];
            EACH_LANE(b, m, lane, {
                mark_legal(b, base + lane, r, x);
                b->lane_count[(Py_ssize_t)lane * R + r]++;
                b->lane_last[(Py_ssize_t)lane * R + r] = x;
            })
        }
    for (int32_t r = 0; r < R; r++)
        for (int32_t j = net->goal_start[r]; j < net->goal_start[r + 1]; j++) {
            uint64_t m[WORDS];
            for (int q = 0; q < nw; q++)
                m[q] = W[(size_t)net->goal_atom[j] * nw + q] & term[q];
            EACH_LANE(b, m, lane, {
                b->goal_count[(Py_ssize_t)lane * R + r]++;
                b->goal_found[(Py_ssize_t)lane * R + r] = j;
            })
        }
    EACH_LANE(b, lanes, lane, {
        Py_ssize_t i = base + lane;
        int terminal = (int)((term[lane / 64] >> (lane % 64)) & 1);
        finish_game(b, i, terminal, b->lane_count + (Py_ssize_t)lane * R, b->lane_last + (Py_ssize_t)lane * R);
        for (int32_t r = 0; r < R; r++)
            put_reward(b, i * R + r, terminal ? terminal_reward(b, i, r,
                       b->goal_count[(Py_ssize_t)lane * R + r], b->goal_found[(Py_ssize_t)lane * R + r]) : 0.0);
    })
}

/* Group g's plans (`states`: set_states' packed states): bit-sliced, or one game at a
   time when at most `solo` of its games change. */
static void
run_group(Batch *b, Py_ssize_t g, const uint8_t *states)
{
    Network *net = b->net;
    const int nw = b->width;
    const Py_ssize_t base = g * b->lanes;
    const int lanes = (int)(b->n - base < b->lanes ? b->n - base : b->lanes);
    const int32_t R = b->n_roles, nf = b->n_fluents;
    uint64_t step[WORDS] = {0}, reset[WORDS] = {0}, ended[WORDS] = {0}, load[WORDS] = {0};
    uint64_t touched[WORDS], keep[WORDS], any_step = 0, any_load = 0;
    int count = 0;
    for (int lane = 0; lane < lanes; lane++) {
        uint64_t one = (uint64_t)1 << (lane % 64);
        switch (b->plan[base + lane]) {
        case PLAN_STEP: step[lane / 64] |= one; break;
        case PLAN_RESET: reset[lane / 64] |= one; break;
        case PLAN_ILLEGAL: ended[lane / 64] |= one; break;
        case PLAN_LOAD: load[lane / 64] |= one; break;
        default: continue;
        }
        count++;
    }
    if (!count) return;
    for (int q = 0; q < nw; q++) {
        touched[q] = step[q] | reset[q] | ended[q] | load[q];
        keep[q] = ~(step[q] | reset[q] | load[q]);
        any_step |= step[q];
        any_load |= load[q];
    }
    if (count <= b->solo) {
        EACH_LANE(b, touched, lane, { solo_game(b, base + lane, states); })
        return;
    }
    const size_t fwords = (size_t)nf * nw;
    uint64_t *F = b->fw + (size_t)g * fwords, *I = b->iw + (size_t)g * b->n_iface * nw;
    uint64_t *W = b->words;
    if (any_load) unpack_group(b, g, load, states);
    if (any_step) {
        memcpy(W, F, sizeof(uint64_t) * fwords);
        for (int32_t k = 0; k < b->n_iface; k++)
            memcpy(W + (size_t)b->iface[k] * nw, I + (size_t)k * nw, sizeof(uint64_t) * nw);
        memset(W + fwords, 0, sizeof(uint64_t) * (size_t)b->n_moves * nw);
        EACH_LANE(b, step, lane, {
            const int32_t *joint = b->joints + (base + lane) * R;
            for (int32_t r = 0; r < R; r++)
                W[(size_t)(nf + joint[r]) * nw + lane / 64] |= (uint64_t)1 << (lane % 64);
        })
        run_words(b, W, net->move_prog, net->n_move_prog);
        memset(b->next_words, 0, sizeof(uint64_t) * fwords);
        for (Py_ssize_t e = 0; e < net->n_next; e++)
            for (int q = 0; q < nw; q++)
                b->next_words[(size_t)net->next_fluent[e] * nw + q] |=
                    W[(size_t)net->next_atom[e] * nw + q];
    }
    for (int32_t f = 0; f < nf; f++)
        for (int q = 0; q < nw; q++) {
            size_t x = (size_t)f * nw + q;
            F[x] = (F[x] & keep[q]) | (any_step ? b->next_words[x] & step[q] : 0) |
                   (b->init_words[f] & reset[q]) | (any_load ? b->load_words[x] & load[q] : 0);
        }
    memcpy(W, F, sizeof(uint64_t) * fwords);
    run_words(b, W, net->state_prog, net->n_state_prog);
    for (int32_t k = 0; k < b->n_iface; k++)
        memcpy(I + (size_t)k * nw, W + (size_t)b->iface[k] * nw, sizeof(uint64_t) * nw);
    emit_words(b, g, touched);
    EACH_LANE(b, ended, lane, {
        Py_ssize_t i = base + lane;
        end_game(b, i, b->culprit[i]);
    })
}

/* A thread's share of a call: every `stride`-th group from `first`, on its own copy of
   the batch (the games' rows shared, each group's written by one thread only; the
   scratch and the problems its own). No Python call: it runs without the GIL. */
typedef struct {
    Batch copy;
    const uint8_t *states;
    Py_ssize_t first, stride;
    pthread_t id;
    int started;
} Worker;

static void *
worker_main(void *arg)
{
    Worker *w = arg;
    for (Py_ssize_t g = w->first; g < w->copy.n_groups; g += w->stride)
        run_group(&w->copy, g, w->states);
    return NULL;
}

static void
use_scratch(Batch *c, const Scratch *s)
{
    c->words = s->words; c->next_words = s->next_words; c->load_words = s->load_words;
    c->wqueue = s->wqueue; c->queued = s->queued;
    c->lane_count = s->lane_count; c->lane_last = s->lane_last;
    c->goal_count = s->goal_count; c->goal_found = s->goal_found;
}

int
run_plans(Batch *b, const uint8_t *states)
{
    Pace pace;
    pace_start(&pace, 0);
    b->hard_kind = b->soft_kind = P_NONE;
    Py_ssize_t stride = b->threads < b->n_groups ? b->threads : b->n_groups;
    if (stride <= 1) {
        for (Py_ssize_t g = 0; g < b->n_groups; g++) {
            run_group(b, g, states);
            if (!pace.stop) pace_check(&pace);
        }
        pace_end(&pace);
        return pace.stop == 1 ? -1 : 0;
    }
    Worker workers[MAX_THREADS];   /* the other threads': workers[1 .. stride - 1] */
    for (Py_ssize_t t = 1; t < stride; t++) {
        Worker *w = &workers[t];
        w->copy = *b;
        use_scratch(&w->copy, &b->extra[t - 1]);
        w->copy.solo = -1;   /* the network's own values are the calling thread's */
        w->states = states;
        w->first = t;
        w->stride = stride;
        w->started = pthread_create(&w->id, NULL, worker_main, w) == 0;
    }
    for (Py_ssize_t g = 0; g < b->n_groups; g += stride) {
        run_group(b, g, states);
        if (!pace.stop) pace_check(&pace);
    }
    if (!pace.ts) pace.ts = PyEval_SaveThread();   /* waiting: without the GIL */
    for (Py_ssize_t t = 1; t < stride; t++) {
        Worker *w = &workers[t];
        if (w->started) pthread_join(w->id, NULL);
        else worker_main(w);   /* no thread to be had: its share here */
    }
    pace_end(&pace);
    for (Py_ssize_t t = 1; t < stride; t++) {
        const Batch *c = &workers[t].copy;
        if (c->hard_kind) note_problem(b, c->hard_kind, c->hard_game, c->hard_detail);
        if (c->soft_kind) note_problem(b, c->soft_kind, c->soft_game, c->soft_detail);
    }
    if (pace.stop != 1 && PyErr_CheckSignals() < 0) return -1;
    return pace.stop == 1 ? -1 : 0;
}

void
batch_free_threads(Batch *b)
{
    for (int t = 0; b->extra && t < b->threads - 1; t++) {
        Scratch *s = &b->extra[t];
        void *arrays[] = {s->words, s->next_words, s->load_words, s->wqueue, s->queued,
                          s->lane_count, s->lane_last, s->goal_count, s->goal_found};
        for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++) PyMem_Free(arrays[k]);
    }
    PyMem_Free(b->extra);
    b->extra = NULL;
    b->memory -= b->extra_bytes;
    b->extra_bytes = 0;
    b->threads = 1;
}

int
batch_set_threads(Batch *b, int k)
{
    if (k < 1 || k > MAX_THREADS) {
        PyErr_Format(PyExc_ValueError, "threads: 1 to %d, not %d", MAX_THREADS, k);
        return -1;
    }
    const Network *net = b->net;
    const Py_ssize_t word = sizeof(uint64_t) * b->width, nf1 = (Py_ssize_t)b->n_fluents + 1;
    const Py_ssize_t lanes_roles = (Py_ssize_t)b->lanes * b->n_roles;
    Scratch *extra = k > 1 ? PyMem_Calloc((size_t)(k - 1), sizeof(Scratch)) : NULL;
    if (k > 1 && !extra) { PyErr_NoMemory(); return -1; }
    Py_ssize_t before = b->memory, bytes = 0;
    int ok = 1;
    for (int t = 0; t < k - 1 && ok; t++) {
        Scratch *s = &extra[t];
        s->words = batch_alloc(b, net->n_atoms, word);
        s->next_words = batch_alloc(b, nf1, word);
        s->load_words = batch_alloc(b, nf1, word);
        s->wqueue = batch_alloc(b, b->largest + 1, sizeof(int32_t));
        s->queued = batch_alloc(b, net->n_atoms, 1);
        s->lane_count = batch_alloc(b, lanes_roles, sizeof(int32_t));
        s->lane_last = batch_alloc(b, lanes_roles, sizeof(int32_t));
        s->goal_count = batch_alloc(b, lanes_roles, sizeof(int32_t));
        s->goal_found = batch_alloc(b, lanes_roles, sizeof(int32_t));
        ok = s->words && s->next_words && s->load_words && s->wqueue && s->queued &&
             s->lane_count && s->lane_last && s->goal_count && s->goal_found;
    }
    bytes = b->memory - before;
    b->memory = before;
    if (!ok) {   /* freed as batch_free_threads frees them */
        Scratch *old = b->extra;
        int old_threads = b->threads;
        Py_ssize_t old_bytes = b->extra_bytes;
        b->extra = extra; b->threads = k; b->extra_bytes = 0;
        batch_free_threads(b);
        b->extra = old; b->threads = old_threads; b->extra_bytes = old_bytes;
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return -1;
    }
    batch_free_threads(b);
    b->extra = extra;
    b->threads = k;
    b->extra_bytes = bytes;
    b->memory += bytes;
    return 0;
}

PyObject *
problem_result(Batch *b)
{
    if (b->hard_kind)
        return Py_BuildValue("(sni)", problem_names[b->hard_kind], b->hard_game, b->hard_detail);
    if (b->soft_kind)
        return Py_BuildValue("(sni)", problem_names[b->soft_kind], b->soft_game, b->soft_detail);
    Py_RETURN_NONE;
}

/* Once the network watches (tune()): per atom, its watchers whose head is in the move
   program (what restore() pushes). */
static int
watch_moving(Batch *b)
{
    Network *net = b->net;
    int32_t *start = ALLOC((Py_ssize_t)net->n_atoms + 1, int32_t);
    if (!start) return -1;
    for (int32_t a = 0; a < net->n_atoms; a++) {
        int32_t k = 0;
        for (int32_t i = net->watch_start[a]; i < net->watch_start[a + 1]; i++)
            k += net->moving[net->rule_head[net->watch_rules[i]]] != 0;
        start[a + 1] = start[a] + k;
    }
    int32_t *rules = ALLOC(start[net->n_atoms], int32_t);
    if (!rules) { PyMem_Free(start); return -1; }
    for (int32_t a = 0, at = 0; a < net->n_atoms; a++)
        for (int32_t i = net->watch_start[a]; i < net->watch_start[a + 1]; i++)
            if (net->moving[net->rule_head[net->watch_rules[i]]]) rules[at++] = net->watch_rules[i];
    b->mw_start = start;
    b->mw_rules = rules;
    b->memory += ((Py_ssize_t)net->n_atoms + 1 + start[net->n_atoms]) * 4;
    return 0;
}

int
batch_enter(Batch *b)
{
    if (enter(b->net) < 0) return -1;
    if (b->net->generation != b->generation) {
        leave(b->net);
        PyErr_SetString(PyExc_RuntimeError,
                        "the network of this batch has been built again: make a new batch");
        return -1;
    }
    if (b->net->watched && !b->mw_start && watch_moving(b) < 0) {
        leave(b->net);
        return -1;
    }
    return 0;
}

/* ---- building a batch ------------------------------------------------------------- */

/* The interface of the network: the state program's atoms that a rule of the move
   program reads, or that a next reads. */
static int
find_interface(Batch *b)
{
    Network *net = b->net;
    uint8_t *in_state = ALLOC(net->n_atoms, uint8_t), *read = ALLOC(net->n_atoms, uint8_t);
    if (!in_state || !read) { PyMem_Free(in_state); PyMem_Free(read); return -1; }
    for (Py_ssize_t k = 0; k < net->n_state_prog; k++)
        if (net->state_prog[k] >= 0) in_state[net->state_prog[k]] = 1;
    for (Py_ssize_t k = 0; k < net->n_move_prog; k++) {
        int32_t a = net->move_prog[k];
        if (a < 0) continue;
        for (int32_t r = net->rule_start[a]; r < net->rule_start[a + 1]; r++)
            for (int32_t j = net->lit_start[r]; j < net->lit_start[r + 1]; j++) {
                int32_t c = net->lits[j] >> 1;
                if (in_state[c]) read[c] = 1;
            }
    }
    for (Py_ssize_t k = 0; k < net->n_next; k++)
        if (in_state[net->next_atom[k]]) read[net->next_atom[k]] = 1;
    int32_t count = 0;
    for (int32_t a = 0; a < net->n_atoms; a++) count += read[a];
    b->iface = ALLOC(count, int32_t);
    if (!b->iface) { PyMem_Free(in_state); PyMem_Free(read); return -1; }
    b->n_iface = 0;
    for (int32_t a = 0; a < net->n_atoms; a++) if (read[a]) b->iface[b->n_iface++] = a;
    PyMem_Free(in_state);
    PyMem_Free(read);
    return 0;
}

/* n items of `size` bytes, counted into b->memory */
static void *
batch_alloc(Batch *b, Py_ssize_t n, Py_ssize_t size)
{
    Py_ssize_t bytes = checked_mul(n, size);
    if (bytes < 0) return NULL;
    void *p = alloc_array(bytes, 1);
    if (p) b->memory += bytes > 0 ? bytes : 1;
    return p;
}

/* The size of the largest cyclic group of a program (its -k markers). */
static Py_ssize_t
largest_group(const int32_t *prog, Py_ssize_t n)
{
    Py_ssize_t largest = 0, i = 0;
    while (i < n) {
        if (prog[i] >= 0) { i++; continue; }
        Py_ssize_t k = -(Py_ssize_t)prog[i];
        if (k > largest) largest = k;
        i += 1 + k;
    }
    return largest;
}

int
batch_build_locked(Batch *b, PyObject *init, Py_ssize_t n_ma, Py_ssize_t n_os,
                   Py_ssize_t n_oa, Py_ssize_t n_gr)
{
    Network *net = b->net;
    b->generation = net->generation;
    b->n_roles = net->n_roles;
    b->n_fluents = net->n_fluents;
    b->n_moves = net->n_moves;
    const int32_t R = b->n_roles, A = b->n_actions;
    if (!PyBytes_Check(init) || PyBytes_GET_SIZE(init) != b->n_fluents) {
        PyErr_SetString(PyExc_ValueError, "init: bytes, one per fluent");
        return -1;
    }
    if (n_ma != b->n_moves) {
        PyErr_SetString(PyExc_ValueError, "move_action: one action id per move");
        return -1;
    }
    if (n_os != (Py_ssize_t)b->n_fluents + 1 || b->obs_start[0] != 0 ||
        b->obs_start[b->n_fluents] != n_oa) {
        PyErr_SetString(PyExc_ValueError, "obs_start: one entry per fluent and one more, "
                                          "spanning obs_at");
        return -1;
    }
    for (int32_t f = 0; f < b->n_fluents; f++)
        if (b->obs_start[f] > b->obs_start[f + 1]) {
            PyErr_SetString(PyExc_ValueError, "obs_start not ascending");
            return -1;
        }
    if (n_gr != net->goal_start[R]) {
        PyErr_SetString(PyExc_ValueError, "goal_returns: one reward per goal entry");
        return -1;
    }
    Py_ssize_t cells = checked_mul(b->n, checked_mul(R, A));
    Py_ssize_t roles = checked_mul(b->n, R);
    Py_ssize_t obs = checked_mul(b->n, b->obs_size);
    if (cells < 0 || roles < 0 || obs < 0) return -1;
    Py_ssize_t counts[N_OUT] = {obs, cells, roles, b->n, b->n, b->n};
    if (b->marks.obj && b->marks.len != b->n) {
        PyErr_Format(PyExc_ValueError, "marks: %zd items expected, not %zd", b->n,
                     b->marks.len);
        return -1;
    }
    for (int k = 0; k < N_OUT; k++) {
        Py_ssize_t items = b->out[k].len / b->out[k].itemsize;
        if (items != counts[k]) {
            static const char *names[] = {"observations", "masks", "rewards", "terminated",
                                          "mover", "illegal"};
            PyErr_Format(PyExc_ValueError, "%s: %zd items expected, not %zd", names[k],
                         counts[k], items);
            return -1;
        }
    }
    /* action ids -> moves, from each role's possible legal moves */
    b->action_move = batch_alloc(b, checked_mul(R, A), sizeof(int32_t));
    if (!b->action_move) return -1;
    for (Py_ssize_t k = 0; k < (Py_ssize_t)R * A; k++) b->action_move[k] = -1;
    for (int32_t r = 0; r < R; r++)
        for (int32_t j = net->legal_start[r]; j < net->legal_start[r + 1]; j++) {
            int32_t m = net->legal_move[j], a = b->move_action[m];
            if (a < 0) continue;
            int32_t *slot = &b->action_move[(Py_ssize_t)r * A + a];
            if (*slot >= 0 && *slot != m) {
                PyErr_Format(PyExc_ValueError, "move_action: two moves of role %d have "
                             "action id %d", (int)r, (int)a);
                return -1;
            }
            *slot = m;
        }
    if (find_interface(b) < 0) return -1;
    b->memory += (Py_ssize_t)b->n_iface * 4;
    if (!b->width) b->width = b->n > 128 ? 4 : b->n > 64 ? 2 : 1;
    b->lanes = 64 * b->width;
    b->n_groups = (b->n + b->lanes - 1) / b->lanes;
    b->state_bytes = ((Py_ssize_t)b->n_fluents + 7) / 8;
    b->legal_bytes = ((Py_ssize_t)b->n_moves + 7) / 8;
    b->largest = largest_group(net->state_prog, net->n_state_prog);
    Py_ssize_t in_move = largest_group(net->move_prog, net->n_move_prog);
    if (in_move > b->largest) b->largest = in_move;
    const Py_ssize_t nf1 = (Py_ssize_t)b->n_fluents + 1, lanes_roles = (Py_ssize_t)b->lanes * R;
    const Py_ssize_t word = sizeof(uint64_t) * b->width;
    b->init = batch_alloc(b, nf1, 1);
    b->scratch = batch_alloc(b, nf1, 1);
    b->next = batch_alloc(b, nf1, 1);
    b->iface_vals = batch_alloc(b, (Py_ssize_t)b->n_iface + 1, 1);
    b->init_words = batch_alloc(b, nf1, sizeof(uint64_t));
    b->next_words = batch_alloc(b, nf1, word);
    b->load_words = batch_alloc(b, nf1, word);
    b->words = batch_alloc(b, net->n_atoms, word);
    b->queued = batch_alloc(b, net->n_atoms, 1);
    b->wqueue = batch_alloc(b, b->largest + 1, sizeof(int32_t));
    b->packed = batch_alloc(b, b->lanes, b->state_bytes + 1);
    b->lane_count = batch_alloc(b, lanes_roles, sizeof(int32_t));
    b->lane_last = batch_alloc(b, lanes_roles, sizeof(int32_t));
    b->goal_count = batch_alloc(b, lanes_roles, sizeof(int32_t));
    b->goal_found = batch_alloc(b, lanes_roles, sizeof(int32_t));
    b->fw = batch_alloc(b, checked_mul(b->n_groups, nf1), word);
    b->iw = batch_alloc(b, checked_mul(b->n_groups, (Py_ssize_t)b->n_iface + 1), word);
    b->legals = batch_alloc(b, b->n, b->legal_bytes);
    b->done = batch_alloc(b, b->n, 1);
    b->plan = batch_alloc(b, b->n, 1);
    b->culprit = batch_alloc(b, b->n, sizeof(int32_t));
    b->only = batch_alloc(b, roles, sizeof(int32_t));
    b->counts = batch_alloc(b, roles, sizeof(int32_t));
    b->joints = batch_alloc(b, roles, sizeof(int32_t));
    b->move_lo = batch_alloc(b, R, sizeof(int32_t));
    b->move_hi = batch_alloc(b, R, sizeof(int32_t));
    if (!b->init || !b->scratch || !b->next || !b->iface_vals || !b->init_words ||
        !b->next_words || !b->load_words || !b->words || !b->queued || !b->wqueue || !b->packed ||
        !b->lane_count || !b->lane_last || !b->goal_count || !b->goal_found || !b->fw ||
        !b->iw || !b->legals || !b->done || !b->plan || !b->culprit || !b->only ||
        !b->counts || !b->joints || !b->move_lo || !b->move_hi)
        return -1;
    /* each role's moves as one range, where they form one (sample()'s quick path) */
    for (int32_t r = 0; r < R; r++) {
        int32_t lo = INT32_MAX, hi = -1, k = net->legal_start[r + 1] - net->legal_start[r];
        int ok = 1;
        for (int32_t j = net->legal_start[r]; j < net->legal_start[r + 1]; j++) {
            int32_t m = net->legal_move[j];
            if (m < lo) lo = m;
            if (m > hi) hi = m;
            ok &= b->move_action[m] >= 0;
        }
        /* every move is legal by one atom only: k entries over k moves fill the range */
        ok &= k > 0 && hi - lo + 1 == k;
        b->move_lo[r] = ok ? lo : -1;
        b->move_hi[r] = ok ? hi + 1 : -1;
    }
    memcpy(b->init, PyBytes_AS_STRING(init), (size_t)b->n_fluents);
    for (int32_t f = 0; f < b->n_fluents; f++) {
        b->init[f] = b->init[f] != 0;
        b->init_words[f] = b->init[f] ? ~(uint64_t)0 : 0;
    }
    b->rng = FIRST_RNG;
    b->solo = 4;
    b->threads = 1;
    memset(b->plan, PLAN_RESET, (size_t)b->n);
    return run_plans(b, NULL);
}
