/*  The Python type Batch: see batch_type.h. Arguments are checked, and copied where
    Python code could change them, before the batch's network is taken; the work is
    batch.c's. */

#include "batch_type.h"

#include "batch.h"
#include "network_type.h"
#include "pace.h"
#include "structmember.h"

/* Whether a buffer's items are of one of the struct codes `codes` (native or
   little-endian on a little-endian machine) and of itemsize bytes. */
static int
format_is(const Py_buffer *v, const char *codes, Py_ssize_t itemsize)
{
    const char *f = v->format ? v->format : "B";
    if (*f == '@' || *f == '=') f++;
    else if (*f == '<') {
        const uint16_t one = 1;
        if (*(const uint8_t *)&one != 1) return 0;   /* not little-endian */
        f++;
    }
    return f[0] && !f[1] && strchr(codes, f[0]) && v->itemsize == itemsize;
}

/* A buffer of items of 1 byte (kind 'b'), int32 ('i'), float32 or float64 ('r'), or
   1 byte or float32 ('o'), `count` of them (count < 0: any number), held in *v; -1 with
   an error otherwise. */
static int
get_buffer(PyObject *obj, Py_buffer *v, int writable, char kind, Py_ssize_t count,
           const char *what)
{
    if (PyObject_GetBuffer(obj, v, (writable ? PyBUF_WRITABLE : 0) | PyBUF_C_CONTIGUOUS |
                                     PyBUF_FORMAT) < 0)
        return -1;
    int ok;
    switch (kind) {
    case 'b': ok = format_is(v, "bB?c", 1); break;
    case 'i': ok = format_is(v, "i", 4) || format_is(v, "l", 4); break;
    case 'r': ok = format_is(v, "f", 4) || format_is(v, "d", 8); break;
    default: ok = format_is(v, "bB?c", 1) || format_is(v, "f", 4); break;
    }
    const char *want = kind == 'b' ? "1-byte items" : kind == 'i' ? "int32 items"
                       : kind == 'r' ? "float32 or float64 items" : "1-byte or float32 items";
    if (!ok) {
        PyBuffer_Release(v);
        PyErr_Format(PyExc_TypeError, "%s: a C-contiguous buffer of %s expected", what, want);
        return -1;
    }
    if (count < 0) return 0;
    Py_ssize_t bytes = checked_mul(count, v->itemsize);
    if (bytes < 0) { PyBuffer_Release(v); return -1; }
    if (v->len != bytes) {
        PyBuffer_Release(v);
        PyErr_Format(PyExc_ValueError, "%s: %zd items expected, not %zd", what, count,
                     v->len / (v->itemsize > 0 ? v->itemsize : 1));
        return -1;
    }
    return 0;
}

/* A fresh array of doubles of a sequence of numbers; its length in *n. */
static double *
double_array(PyObject *obj, Py_ssize_t *n, const char *what)
{
    PyObject *fast = PySequence_Tuple(obj);   /* a copy: __float__ may change a list */
    if (!fast) return NULL;
    Py_ssize_t len = PyTuple_GET_SIZE(fast);
    double *out = ALLOC(len, double);
    if (!out) { Py_DECREF(fast); return NULL; }
    for (Py_ssize_t i = 0; i < len; i++) {
        double x = PyFloat_AsDouble(PyTuple_GET_ITEM(fast, i));
        if (x == -1.0 && PyErr_Occurred()) {
            PyMem_Free(out); Py_DECREF(fast);
            PyErr_Format(PyExc_TypeError, "%s: item %zd is not a number", what, i);
            return NULL;
        }
        out[i] = x;
    }
    Py_DECREF(fast);
    *n = len;
    return out;
}

/* An `active` argument: None (every game) or a buffer of n 1-byte flags, into *v
   (v->obj NULL for None). */
static int
active_arg(Batch *b, PyObject *obj, Py_buffer *v)
{
    v->obj = NULL;
    v->buf = NULL;
    if (obj == NULL || obj == Py_None) return 0;
    return get_buffer(obj, v, 0, 'b', b->n, "active");
}

static void
release_active(Py_buffer *v)
{
    if (v->obj) PyBuffer_Release(v);
}

/* A buffer of action ids, one per role and game, int32 or int64 (*wide set for int64),
   writable when `writable`, into *v; -1 with a ValueError naming `what` otherwise. */
static int
action_ids_arg(Batch *b, PyObject *obj, Py_buffer *v, int writable, const char *what,
               int *wide)
{
    if (PyObject_GetBuffer(obj, v, (writable ? PyBUF_WRITABLE : 0) | PyBUF_C_CONTIGUOUS |
                                     PyBUF_FORMAT) < 0)
        return -1;
    *wide = format_is(v, "lqn", 8);
    int narrow = format_is(v, "i", 4) || format_is(v, "l", 4);
    Py_ssize_t want = checked_mul(b->n, b->n_roles);
    if ((!*wide && !narrow) || want < 0 || v->len != want * v->itemsize) {
        PyBuffer_Release(v);
        if (want >= 0)
            PyErr_Format(PyExc_ValueError, "%s: a %sC-contiguous buffer of %zd int32 or "
                         "int64 action ids expected (one per role and game)", what,
                         writable ? "writable " : "", want);
        return -1;
    }
    return 0;
}

static void
Batch_dealloc(Batch *b)
{
    void *arrays[] = {b->iface, b->move_action, b->action_move, b->obs_start, b->obs_at,
                      b->goal_return, b->init, b->init_words, b->fw, b->iw, b->words,
                      b->next_words, b->load_words, b->wqueue, b->queued, b->lane_count,
                      b->lane_last, b->goal_count, b->goal_found, b->legals, b->done,
                      b->only, b->plan, b->culprit, b->joints, b->scratch, b->next,
                      b->iface_vals, b->mw_start, b->mw_rules, b->counts, b->move_lo,
                      b->move_hi, b->packed};
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++) PyMem_Free(arrays[k]);
    for (int k = 0; k < N_OUT; k++) if (b->out[k].obj) PyBuffer_Release(&b->out[k]);
    if (b->marks.obj) PyBuffer_Release(&b->marks);
    batch_free_threads(b);
    Py_XDECREF(b->net);
    Py_TYPE(b)->tp_free((PyObject *)b);
}

/* Batch(network, n, init, move_action, n_actions, obs_start, obs_at, obs_size,
         goal_returns, missing_return, observations, masks, rewards, terminated, mover,
         illegal, *, width=0): see batch.h. The output buffers are held for the
   batch's life: observations n * obs_size items (1 byte or float32), masks
   n * roles * n_actions (1 byte), rewards n * roles (float32 or float64), terminated
   n (1 byte), mover n (int32), illegal n (1 byte); marks (optional) n (1 byte): a game
   whose terminal state gives a role no reward is marked there (its rewards 0) rather
   than reported as the call's problem. Every game starts in `init`. width:
   the 64-bit words of a group (1, 2 or 4), or 0 for the least that holds n games up to
   4 (the default, by measurement; another width is for benchmarks/eval_paths.py). */
static PyObject *
Batch_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"network", "n", "init", "move_action", "n_actions", "obs_start",
                            "obs_at", "obs_size", "goal_returns", "missing_return",
                            "observations", "masks", "rewards", "terminated", "mover",
                            "illegal", "width", "marks", NULL};
    PyObject *net, *init, *ma, *os, *oa, *gr, *outs[N_OUT], *marks = NULL;
    Py_ssize_t n, obs_size;
    int n_actions, width = 0;
    double missing;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!nOOiOOnOdOOOOOO|$iO:Batch", names,
                                     &NetworkType, &net, &n, &init, &ma, &n_actions, &os,
                                     &oa, &obs_size, &gr, &missing, &outs[0], &outs[1],
                                     &outs[2], &outs[3], &outs[4], &outs[5], &width,
                                     &marks))
        return NULL;
    if (n < 1 || n_actions < 1 || obs_size < 0 || obs_size > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError,
                        "a batch has n >= 1 games, n_actions >= 1, 0 <= obs_size < 2**31");
        return NULL;
    }
    if (width != 0 && width != 1 && width != 2 && width != 4) {
        PyErr_SetString(PyExc_ValueError, "width: 1, 2 or 4 words a group, or 0 (by n)");
        return NULL;
    }
    Batch *b = (Batch *)type->tp_alloc(type, 0);
    if (!b) return NULL;
    Py_INCREF(net);
    b->net = (Network *)net;
    b->n = n;
    b->n_actions = n_actions;
    b->width = width;   /* 0: chosen by n when built */
    b->obs_size = obs_size;
    b->missing_return = missing;
    /* Python's part first (conversions may run Python code), the network's after */
    Py_ssize_t n_ma, n_os, n_oa, n_gr;
    static const char kinds[N_OUT] = {'o', 'b', 'r', 'b', 'i', 'b'};
    static const char *what[N_OUT] = {"observations", "masks", "rewards", "terminated",
                                      "mover", "illegal"};
    if (!(b->move_action = int_array(ma, &n_ma, "move_action", -1, n_actions)) ||
        !(b->obs_start = int_array(os, &n_os, "obs_start", 0, INT32_MAX)) ||
        !(b->obs_at = int_array(oa, &n_oa, "obs_at", 0, obs_size)) ||
        !(b->goal_return = double_array(gr, &n_gr, "goal_returns"))) {
        Py_DECREF(b);
        return NULL;
    }
    b->memory = (n_ma + n_os + n_oa) * 4 + n_gr * 8;
    for (int k = 0; k < N_OUT; k++) {
        /* their sizes are checked against the network's under its lock */
        if (get_buffer(outs[k], &b->out[k], 1, kinds[k], -1, what[k]) < 0) {
            Py_DECREF(b);
            return NULL;
        }
    }
    if (marks && marks != Py_None &&
        get_buffer(marks, &b->marks, 1, 'b', -1, "marks") < 0) {
        Py_DECREF(b);
        return NULL;
    }
    b->obs_float = b->out[OUT_OBS].itemsize == 4;
    b->rewards_double = b->out[OUT_REWARDS].itemsize == 8;
    if (enter(b->net) < 0) { Py_DECREF(b); return NULL; }
    int ok = batch_build_locked(b, init, n_ma, n_os, n_oa, n_gr) == 0;
    leave(b->net);
    if (!ok) { Py_DECREF(b); return NULL; }
    return (PyObject *)b;
}

/* ---- a batch's calls ------------------------------------------------------------- */

/* reset(active=None) -> None | (problem, game, detail): the games `active` names (1-byte
   flags; None: all) back to the initial state. */
static PyObject *
Batch_reset(Batch *b, PyObject *args, PyObject *kw)
{
    static char *names[] = {"active", NULL};
    PyObject *active_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:reset", names, &active_obj)) return NULL;
    Py_buffer active;
    if (active_arg(b, active_obj, &active) < 0) return NULL;
    if (batch_enter(b) < 0) { release_active(&active); return NULL; }
    const uint8_t *on = active.buf;
    for (Py_ssize_t i = 0; i < b->n; i++)
        b->plan[i] = !on || on[i] ? PLAN_RESET : PLAN_NONE;
    release_active(&active);
    int failed = run_plans(b, NULL) < 0;
    leave(b->net);
    return failed ? NULL : problem_result(b);
}

/* step(actions, active=None, autoreset=True, end_illegal=False, strict=-1) -> None |
   (problem, game, detail). actions: n * roles action ids (int32 or int64), role by role
   for each game. A role with one legal move plays it, whatever its action says (but
   role `strict`, whose action must be that move, as a one-player environment's). A game that
   has ended is reset instead (autoreset; its actions are not read) or refused. An
   action that is not legal is refused, nothing stepped (ValueError), or with
   end_illegal ends its game (reward -1 for its role, `illegal` set). */
/* The plan of every game for a step with `actions` (see step), into b->plan, b->joints
   and b->culprit; games `on` leaves out (when given) are not stepped. Returns 0, or -1
   with a ValueError set: a game that has ended (without autoreset), or an action that
   is not legal (without end_illegal), nothing stepped. */
static int
plan_step(Batch *b, const Py_buffer *actions, int wide, const uint8_t *on, int autoreset,
          int end_illegal, int strict)
{
    const int32_t R = b->n_roles, A = b->n_actions;
    Py_ssize_t bad_game = -1;
    long long bad_action = 0;
    int32_t bad_role = -1;
    for (Py_ssize_t i = 0; i < b->n && bad_game < 0; i++) {
        if (on && !on[i]) { b->plan[i] = PLAN_NONE; continue; }
        if (b->done[i]) {
            if (!autoreset) { bad_game = i; break; }
            b->plan[i] = PLAN_RESET;
            continue;
        }
        b->plan[i] = PLAN_STEP;
        const uint8_t *legal = b->legals + i * b->legal_bytes;
        for (int32_t r = 0; r < R; r++) {
            Py_ssize_t k = i * R + r;
            int32_t m = r == strict ? -1 : b->only[k];
            if (m < 0) {
                long long a = wide ? (long long)((const int64_t *)actions->buf)[k]
                                   : (long long)((const int32_t *)actions->buf)[k];
                m = a >= 0 && a < A ? b->action_move[(Py_ssize_t)r * A + a] : -1;
                if (m >= 0 && !bit(legal, m)) m = -1;
                if (m < 0) {
                    if (!end_illegal) { bad_game = i; bad_role = r; bad_action = a; break; }
                    b->plan[i] = PLAN_ILLEGAL;
                    b->culprit[i] = r;
                    break;
                }
            }
            b->joints[k] = m;
        }
    }
    if (bad_game < 0) return 0;
    if (bad_role < 0)
        PyErr_Format(PyExc_ValueError, "game %zd has ended: reset it (or step with "
                     "autoreset)", bad_game);
    else
        PyErr_Format(PyExc_ValueError, "game %zd: action %lld of role %d is not legal "
                     "there", bad_game, bad_action, (int)bad_role);
    return -1;
}

/* step(actions, active=None, autoreset=True, end_illegal=False, strict=-1) -> None |
   (problem, game, detail). actions: n * roles action ids (int32 or int64), role by role
   for each game. A role with one legal move plays it, whatever its action says (but
   role `strict`, whose action must be that move, as a one-player environment's). A game that
   has ended is reset instead (autoreset; its actions are not read) or refused. An
   action that is not legal is refused, nothing stepped (ValueError), or with
   end_illegal ends its game (reward -1 for its role, `illegal` set). */
static PyObject *
Batch_step(Batch *b, PyObject *args, PyObject *kw)
{
    static char *names[] = {"actions", "active", "autoreset", "end_illegal", "strict", NULL};
    PyObject *actions_obj, *active_obj = NULL;
    int autoreset = 1, end_illegal = 0, strict = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|Oppi:step", names, &actions_obj,
                                     &active_obj, &autoreset, &end_illegal, &strict))
        return NULL;
    Py_buffer actions, active;
    int wide;
    if (action_ids_arg(b, actions_obj, &actions, 0, "actions", &wide) < 0)
        return NULL;
    if (active_arg(b, active_obj, &active) < 0) { PyBuffer_Release(&actions); return NULL; }
    if (batch_enter(b) < 0) {
        PyBuffer_Release(&actions); release_active(&active);
        return NULL;
    }
    /* the plan of every game, checked whole before any game moves */
    int bad = plan_step(b, &actions, wide, active.buf, autoreset, end_illegal, strict) < 0;
    PyBuffer_Release(&actions);
    release_active(&active);
    if (bad) { leave(b->net); return NULL; }
    int failed = run_plans(b, NULL) < 0;
    leave(b->net);
    return failed ? NULL : problem_result(b);
}

/* Every game's packed state into out (n * state_bytes), group by group, the GIL
   released after the first milliseconds. Returns 0, or -1 with a signal handler's
   error set (every state still written). */
static int
pack_all(Batch *b, uint8_t *out)
{
    Pace pace;
    pace_start(&pace, 0);
    for (Py_ssize_t g = 0; g < b->n_groups; g++) {
        pack_group(b, g, out + g * b->lanes * b->state_bytes);
        if (!pace.stop) pace_check(&pace);
    }
    pace_end(&pace);
    return pace.stop == 1 ? -1 : 0;
}

/* transition(states, actions, active=None, autoreset=True, end_illegal=False,
   strict=-1) -> (states, None | (problem, game, detail)): step's functional form. The
   games are in `states` (packed, as get_states gives them), and those `active` names
   (None: all) take one step with `actions` (as step takes them); the states every game
   is in after it come back packed (a new bytes object), its outputs written as step writes
   them. A game whose state is already the one given (the states of the last call given
   back, as a learner does) is not loaded again, so such a call costs a step and
   the states' packing; any other is loaded first (its outputs written, as set_states
   does), then stepped. `held`: the caller knows the games to be in `states` (the
   states of the last call, nothing since), which are then not compared. */
static PyObject *
Batch_transition(Batch *b, PyObject *args, PyObject *kw)
{
    static char *names[] = {"states", "actions", "active", "autoreset", "end_illegal",
                            "strict", "held", NULL};
    PyObject *states_obj, *actions_obj, *active_obj = NULL;
    int autoreset = 1, end_illegal = 0, strict = -1, held = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|Oppip:transition", names, &states_obj,
                                     &actions_obj, &active_obj, &autoreset, &end_illegal,
                                     &strict, &held))
        return NULL;
    Py_ssize_t size = checked_mul(b->n, b->state_bytes);
    if (size < 0) return NULL;
    Py_buffer states, actions, active;
    int wide;
    if (get_buffer(states_obj, &states, 0, 'b', size, "states") < 0) return NULL;
    /* a copy: the caller's buffer may change while the GIL is released */
    uint8_t *copy = ALLOC(size, uint8_t);
    if (!copy) { PyBuffer_Release(&states); return NULL; }
    memcpy(copy, states.buf, (size_t)size);
    PyBuffer_Release(&states);
    if (action_ids_arg(b, actions_obj, &actions, 0, "actions", &wide) < 0) {
        PyMem_Free(copy);
        return NULL;
    }
    if (active_arg(b, active_obj, &active) < 0) {
        PyMem_Free(copy); PyBuffer_Release(&actions);
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, size);   /* before the lock */
    if (!out || batch_enter(b) < 0) {
        Py_XDECREF(out); PyMem_Free(copy); PyBuffer_Release(&actions); release_active(&active);
        return NULL;
    }
    const uint8_t *on = active.buf;
    const uint8_t *ended_by_illegal = b->out[OUT_ILLEGAL].buf;
    const Py_ssize_t sb = b->state_bytes;
    /* the games not in the state given are loaded: their packed states compared */
    Py_ssize_t loads = 0;
    for (Py_ssize_t g = 0; g < b->n_groups; g++) {
        const Py_ssize_t base = g * b->lanes;
        const Py_ssize_t lanes = b->n - base < b->lanes ? b->n - base : b->lanes;
        if (!held) pack_group(b, g, b->packed);
        for (Py_ssize_t lane = 0; lane < lanes; lane++) {
            Py_ssize_t i = base + lane;
            /* every game takes the state given, stepped or not; a game an illegal
               action ended is done in a state that is not terminal: loaded again, it is
               not done */
            int load = ended_by_illegal[i] || (!held &&
                       memcmp(b->packed + lane * sb, copy + i * sb, (size_t)sb) != 0);
            b->plan[i] = load ? PLAN_LOAD : PLAN_NONE;
            loads += load;
        }
    }
    int failed = 0, kind = P_NONE;
    Py_ssize_t game = 0;
    int32_t detail = 0;
    if (loads) {
        failed = run_plans(b, copy) < 0;
        kind = b->hard_kind; game = b->hard_game; detail = b->hard_detail;
    }
    PyMem_Free(copy);
    if (!failed && plan_step(b, &actions, wide, on, autoreset, end_illegal, strict) < 0)
        failed = 1;
    PyBuffer_Release(&actions);
    release_active(&active);
    if (!failed) failed = run_plans(b, NULL) < 0;
    if (!failed) {
        if (kind) {   /* a problem of a state loaded, as set_states reports it */
            int hk = b->hard_kind;
            Py_ssize_t hg = b->hard_game;
            if (!hk || game <= hg) {
                b->hard_kind = kind; b->hard_game = game; b->hard_detail = detail;
            }
        }
        failed = pack_all(b, (uint8_t *)PyBytes_AS_STRING(out)) < 0;
    }
    leave(b->net);
    if (failed) { Py_DECREF(out); return NULL; }
    PyObject *problem = problem_result(b);
    if (!problem) { Py_DECREF(out); return NULL; }
    return Py_BuildValue("(NN)", out, problem);
}

/* The pick-th (from 0) set bit of bits in lo..hi-1, or -1. */
static int32_t
select_bit(const uint8_t *bits, int32_t lo, int32_t hi, int32_t pick)
{
    int32_t m = lo;
    for (; m < hi && (m & 7); m++)
        if (bit(bits, m) && pick-- == 0) return m;
    for (; m + 8 <= hi; m += 8) {
        int c = __builtin_popcount(bits[m >> 3]);
        if (pick >= c) { pick -= c; continue; }
        for (;; m++)
            if (bit(bits, m) && pick-- == 0) return m;
    }
    for (; m < hi; m++)
        if (bit(bits, m) && pick-- == 0) return m;
    return -1;
}

static inline uint64_t
batch_random(Batch *b)
{
    return xorshift_next(&b->rng);
}

/* sample(out, active=None): into out (n * roles int32 or int64), for each game that
   has not ended, per role a legal action id drawn uniformly by the batch's generator
   (seed()); 0 for the others. */
static PyObject *
Batch_sample(Batch *b, PyObject *args, PyObject *kw)
{
    static char *names[] = {"out", "active", NULL};
    PyObject *out_obj, *active_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:sample", names, &out_obj, &active_obj))
        return NULL;
    Py_buffer out, active;
    int wide;
    if (action_ids_arg(b, out_obj, &out, 1, "out", &wide) < 0)
        return NULL;
    if (active_arg(b, active_obj, &active) < 0) { PyBuffer_Release(&out); return NULL; }
    if (batch_enter(b) < 0) { PyBuffer_Release(&out); release_active(&active); return NULL; }
    Network *net = b->net;
    const int32_t R = b->n_roles;
    const uint8_t *on = active.buf;
    Pace pace;
    pace_start(&pace, 0);
    for (Py_ssize_t i = 0; i < b->n; i++) {
        if (on && !on[i]) continue;
        const uint8_t *legal = b->legals + i * b->legal_bytes;
        for (int32_t r = 0; r < R; r++) {
            Py_ssize_t k = i * R + r;
            int32_t a = 0, m = b->only[k];
            if (b->done[i]) {
                a = 0;
            } else if (m >= 0) {
                a = b->move_action[m] >= 0 ? b->move_action[m] : 0;
            } else if (b->move_lo[r] >= 0) {
                int32_t count = b->counts[k];
                if (count > 0) {
                    int32_t pick = (int32_t)(batch_random(b) % (uint64_t)count);
                    int32_t x = select_bit(legal, b->move_lo[r], b->move_hi[r], pick);
                    a = x >= 0 ? b->move_action[x] : 0;
                }
            } else {
                int32_t count = 0;
                for (int32_t j = net->legal_start[r]; j < net->legal_start[r + 1]; j++) {
                    int32_t x = net->legal_move[j];
                    count += bit(legal, x) && b->move_action[x] >= 0;
                }
                if (count > 0) {
                    int32_t pick = (int32_t)(batch_random(b) % (uint64_t)count);
                    for (int32_t j = net->legal_start[r]; j < net->legal_start[r + 1]; j++) {
                        int32_t x = net->legal_move[j];
                        if (bit(legal, x) && b->move_action[x] >= 0 && pick-- == 0) {
                            a = b->move_action[x];
                            break;
                        }
                    }
                }
            }
            if (wide) ((int64_t *)out.buf)[k] = a;
            else ((int32_t *)out.buf)[k] = a;
        }
        if (!pace.stop) pace_step(&pace);
    }
    pace_end(&pace);
    leave(net);
    PyBuffer_Release(&out);
    release_active(&active);
    if (pace.stop == 1) return NULL;
    Py_RETURN_NONE;
}

static PyObject *
Batch_seed(Batch *b, PyObject *arg)
{
    unsigned long long s = PyLong_AsUnsignedLongLongMask(arg);
    if (s == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    if (batch_enter(b) < 0) return NULL;
    b->rng = seeded_rng(s);   /* as Network.seed */
    leave(b->net);
    Py_RETURN_NONE;
}

/* state(i) -> game i's state, one byte per fluent (as the network's other calls take). */
static PyObject *
Batch_state(Batch *b, PyObject *arg)
{
    Py_ssize_t i = PyNumber_AsSsize_t(arg, PyExc_IndexError);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (i < 0 || i >= b->n) {
        PyErr_Format(PyExc_IndexError, "game %zd: a batch of %zd games", i, b->n);
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, b->n_fluents);  /* before the lock */
    if (!out) return NULL;
    if (batch_enter(b) < 0) { Py_DECREF(out); return NULL; }
    lane_get(b, b->fw, b->n_fluents, i, (uint8_t *)PyBytes_AS_STRING(out));
    leave(b->net);
    return out;
}

/* get_states() -> bytes: every game's packed state, state_bytes each (bit k of a
   state: fluent k, lowest bit first). */
static PyObject *
Batch_get_states(Batch *b, PyObject *Py_UNUSED(ignored))
{
    Py_ssize_t size = checked_mul(b->n, b->state_bytes);
    if (size < 0) return NULL;
    PyObject *out = PyBytes_FromStringAndSize(NULL, size);   /* before the lock */
    if (!out) return NULL;
    if (batch_enter(b) < 0) { Py_DECREF(out); return NULL; }
    int failed = pack_all(b, (uint8_t *)PyBytes_AS_STRING(out)) < 0;
    leave(b->net);
    if (failed) { Py_DECREF(out); return NULL; }
    return out;
}

/* set_states(states, active=None) -> None | (problem, game, detail): the games `active`
   names take their packed states from `states` (a buffer as get_states gives), their
   outputs written. */
static PyObject *
Batch_set_states(Batch *b, PyObject *args, PyObject *kw)
{
    static char *names[] = {"states", "active", NULL};
    PyObject *states_obj, *active_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:set_states", names, &states_obj,
                                     &active_obj))
        return NULL;
    Py_ssize_t size = checked_mul(b->n, b->state_bytes);
    if (size < 0) return NULL;
    Py_buffer states, active;
    if (get_buffer(states_obj, &states, 0, 'b', size, "states") < 0) return NULL;
    if (active_arg(b, active_obj, &active) < 0) { PyBuffer_Release(&states); return NULL; }
    /* a copy: the caller's buffer may change while the GIL is released */
    uint8_t *copy = ALLOC(size, uint8_t);
    if (!copy) { PyBuffer_Release(&states); release_active(&active); return NULL; }
    memcpy(copy, states.buf, (size_t)size);
    PyBuffer_Release(&states);
    if (batch_enter(b) < 0) { PyMem_Free(copy); release_active(&active); return NULL; }
    const uint8_t *on = active.buf;
    for (Py_ssize_t i = 0; i < b->n; i++) b->plan[i] = !on || on[i] ? PLAN_LOAD : PLAN_NONE;
    release_active(&active);
    int failed = run_plans(b, copy) < 0;
    leave(b->net);
    PyMem_Free(copy);
    return failed ? NULL : problem_result(b);
}

static PyMethodDef Batch_methods[] = {
    {"reset", (PyCFunction)(void (*)(void))Batch_reset, METH_VARARGS | METH_KEYWORDS,
     "reset(active=None) -> None | (problem, game, detail)"},
    {"step", (PyCFunction)(void (*)(void))Batch_step, METH_VARARGS | METH_KEYWORDS,
     "step(actions, active=None, autoreset=True, end_illegal=False, strict=-1) -> None | "
     "(problem, game, detail)"},
    {"transition", (PyCFunction)(void (*)(void))Batch_transition,
     METH_VARARGS | METH_KEYWORDS,
     "transition(states, actions, active=None, autoreset=True, end_illegal=False, "
     "strict=-1, held=False) -> (states, None | (problem, game, detail))"},
    {"sample", (PyCFunction)(void (*)(void))Batch_sample, METH_VARARGS | METH_KEYWORDS,
     "sample(out, active=None): random legal action ids, by the batch's generator"},
    {"seed", (PyCFunction)Batch_seed, METH_O, "seed(int): seed the batch's generator"},
    {"state", (PyCFunction)Batch_state, METH_O,
     "state(i) -> game i's state, one byte per fluent"},
    {"get_states", (PyCFunction)Batch_get_states, METH_NOARGS,
     "get_states() -> every game's packed state (state_bytes each)"},
    {"set_states", (PyCFunction)(void (*)(void))Batch_set_states,
     METH_VARARGS | METH_KEYWORDS,
     "set_states(states, active=None) -> None | (problem, game, detail)"},
    {NULL, NULL, 0, NULL}
};

static PyMemberDef Batch_members[] = {
    {"n", T_PYSSIZET, offsetof(Batch, n), READONLY, "the number of games"},
    {"state_bytes", T_PYSSIZET, offsetof(Batch, state_bytes), READONLY,
     "bytes of one packed state"},
    {"interface", T_INT, offsetof(Batch, n_iface), READONLY,
     "atoms of the state program the move program reads (saved per game)"},
    {"width", T_INT, offsetof(Batch, width), READONLY,
     "64-bit words an atom has in a group of games (1, 2 or 4: 64, 128 or 256 games)"},
    {"memory", T_PYSSIZET, offsetof(Batch, memory), READONLY,
     "bytes of the batch's own arrays (the output buffers are the caller's)"},
    {"solo", T_INT, offsetof(Batch, solo), 0,
     "a group of games with at most this many to change steps them one by one "
     "(watched evaluation) rather than bit-sliced (default 4; 0: never, 256: always)"},
    {NULL, 0, 0, 0, NULL}
};

static PyObject *
Batch_get_threads(Batch *b, void *Py_UNUSED(closure))
{
    return PyLong_FromLong(b->threads);
}

static int
Batch_set_threads(Batch *b, PyObject *value, void *Py_UNUSED(closure))
{
    if (!value) {
        PyErr_SetString(PyExc_AttributeError, "threads cannot be deleted");
        return -1;
    }
    int overflow;
    long k = PyLong_AsLongAndOverflow(value, &overflow);
    if (k == -1 && PyErr_Occurred()) return -1;
    if (overflow || k < 1 || k > MAX_THREADS) {
        PyErr_Format(PyExc_ValueError, "threads: 1 to %d", MAX_THREADS);
        return -1;
    }
    if (batch_enter(b) < 0) return -1;
    int failed = batch_set_threads(b, (int)k) < 0;
    leave(b->net);
    return failed ? -1 : 0;
}

static PyGetSetDef Batch_getset[] = {
    {"threads", (getter)Batch_get_threads, (setter)Batch_set_threads,
     "threads a call steps the groups of games on (1: the calling thread only; each "
     "other thread has its own scratch, counted in memory)", NULL},
    {NULL, NULL, NULL, NULL, NULL}
};

PyTypeObject BatchType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gdl2pl.compiled._network.Batch",
    .tp_basicsize = sizeof(Batch),
    .tp_dealloc = (destructor)Batch_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "N games of one network stepped together, bit-sliced, outputs written to "
              "arrays (see compiled/batch.h).",
    .tp_methods = Batch_methods,
    .tp_members = Batch_members,
    .tp_getset = Batch_getset,
    .tp_new = Batch_new,
};
