/*  _network: the compiled engine's evaluator of a propositional network.

    One generic interpreter: a game's network arrives as integer arrays (see
    compiled/network.py for their meaning), never as code, so nothing of a game's
    text reaches C. A state is a bytes object with one byte (0 or 1) per fluent; a
    joint move is a list of move indices. Random playouts run entirely here, with
    their own seeded generator (xorshift64*). A Batch (the last section) steps many
    games of one network together, bit-sliced, writing its outputs into buffers.

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
      look at signals every few milliseconds and stop at their deadline.
*/

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "pythread.h"
#include "structmember.h"
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

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

/* ---- checked sizes and arrays ------------------------------------------------------- */

/* a * b, or -1 (with MemoryError set) if it does not fit a Py_ssize_t */
static Py_ssize_t
checked_mul(Py_ssize_t a, Py_ssize_t b)
{
    if (a < 0 || b < 0 || (b != 0 && a > PY_SSIZE_T_MAX / b)) {
        PyErr_SetString(PyExc_MemoryError, "a size overflows this machine's integers");
        return -1;
    }
    return a * b;
}

static void *
alloc_array(Py_ssize_t n, Py_ssize_t size)
{
    Py_ssize_t bytes = checked_mul(n > 0 ? n : 1, size);
    if (bytes < 0) return NULL;
    void *p = PyMem_Calloc((size_t)bytes, 1);
    if (!p) PyErr_NoMemory();
    return p;
}

#define ALLOC(n, type) ((type *)alloc_array((n), (Py_ssize_t)sizeof(type)))

/* A fresh int32 array of a Python sequence of ints or of a buffer of C ints (array('i'),
   a memoryview), each in lo..hi-1; its length in *n. NULL with an exception otherwise. */
static int32_t *
int_array(PyObject *obj, Py_ssize_t *n, const char *what, int64_t lo, int64_t hi)
{
    int32_t *out;
    Py_ssize_t len;
    if (PyObject_CheckBuffer(obj)) {
        Py_buffer view;
        if (PyObject_GetBuffer(obj, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
        int ok = view.itemsize == 4 && view.format &&
                 (strcmp(view.format, "i") == 0 || strcmp(view.format, "=i") == 0 ||
                  strcmp(view.format, "@i") == 0 || strcmp(view.format, "<i") == 0);
        if (!ok) {
            PyBuffer_Release(&view);
            PyErr_Format(PyExc_TypeError, "%s: a buffer of C ints (format 'i') expected", what);
            return NULL;
        }
        len = view.len / 4;
        out = ALLOC(len, int32_t);
        if (!out) { PyBuffer_Release(&view); return NULL; }
        memcpy(out, view.buf, (size_t)len * 4);
        PyBuffer_Release(&view);
        for (Py_ssize_t i = 0; i < len; i++)
            if (out[i] < lo || out[i] >= hi) {
                PyMem_Free(out);
                PyErr_Format(PyExc_ValueError, "%s: item %zd out of range", what, i);
                return NULL;
            }
    } else {
        /* a copy: converting an item may run Python code, which may change a list */
        PyObject *fast = PySequence_Tuple(obj);
        if (!fast) return NULL;
        len = PyTuple_GET_SIZE(fast);
        out = ALLOC(len, int32_t);
        if (!out) { Py_DECREF(fast); return NULL; }
        for (Py_ssize_t i = 0; i < len; i++) {
            long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(fast, i));
            if (v == -1 && PyErr_Occurred()) {
                PyMem_Free(out); Py_DECREF(fast);
                if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
                    PyErr_Clear();
                    PyErr_Format(PyExc_ValueError, "%s: item %zd out of range", what, i);
                }
                return NULL;
            }
            if (v < lo || v >= hi) {
                PyMem_Free(out); Py_DECREF(fast);
                PyErr_Format(PyExc_ValueError, "%s: item %zd out of range", what, i);
                return NULL;
            }
            out[i] = (int32_t)v;
        }
        Py_DECREF(fast);
    }
    if (n) *n = len;
    return out;
}

/* Per role, a list of (a, b) pairs: flattened into start/first arrays, with the
   seconds into *second (ints in 0..second_hi-1) or, if second_hi < 0, into a tuple of
   the objects themselves (*objects; each an int). */
static int
pairs_per_role(PyObject *seq, int32_t n_roles, const char *what, int32_t first_hi,
               int32_t **start, int32_t **first, int32_t **second, int32_t second_hi,
               PyObject **objects)
{
    /* tuple copies: converting an item may run Python code, which may change a list */
    PyObject *outer = PySequence_Tuple(seq);
    if (!outer) return -1;
    if (PyTuple_GET_SIZE(outer) != n_roles) {
        Py_DECREF(outer);
        PyErr_Format(PyExc_ValueError, "%s: one list per role expected", what);
        return -1;
    }
    PyObject *rows = PyTuple_New(n_roles);
    if (!rows) { Py_DECREF(outer); return -1; }
    Py_ssize_t total = 0;
    for (int32_t r = 0; r < n_roles; r++) {
        PyObject *row = PySequence_Tuple(PyTuple_GET_ITEM(outer, r));
        if (!row) { Py_DECREF(rows); Py_DECREF(outer); return -1; }
        PyTuple_SET_ITEM(rows, r, row);
        total += PyTuple_GET_SIZE(row);
        if (total > INT32_MAX) {
            Py_DECREF(rows); Py_DECREF(outer);
            PyErr_Format(PyExc_ValueError, "%s: too many entries", what);
            return -1;
        }
    }
    Py_DECREF(outer);
    *start = ALLOC((Py_ssize_t)n_roles + 1, int32_t);
    *first = ALLOC(total, int32_t);
    if (second) *second = ALLOC(total, int32_t);
    if (objects) *objects = PyTuple_New(total);
    if (!*start || !*first || (second && !*second) || (objects && !*objects)) {
        Py_DECREF(rows); return -1;
    }
    Py_ssize_t at = 0;
    for (int32_t r = 0; r < n_roles; r++) {
        PyObject *items = PyTuple_GET_ITEM(rows, r);
        (*start)[r] = (int32_t)at;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(items); i++, at++) {
            int a;
            PyObject *b;
            if (!PyArg_ParseTuple(PyTuple_GET_ITEM(items, i), "iO", &a, &b)) {
                Py_DECREF(rows); return -1;
            }
            if (a < 0 || a >= first_hi) {
                Py_DECREF(rows);
                PyErr_Format(PyExc_ValueError, "%s: an atom out of range", what);
                return -1;
            }
            (*first)[at] = a;
            if (second) {
                long v = PyLong_AsLong(b);
                if (v == -1 && PyErr_Occurred()) { Py_DECREF(rows); return -1; }
                if (v < 0 || v >= second_hi) {
                    Py_DECREF(rows);
                    PyErr_Format(PyExc_ValueError, "%s: an index out of range", what);
                    return -1;
                }
                (*second)[at] = (int32_t)v;
            } else {
                if (!PyLong_CheckExact(b)) {
                    Py_DECREF(rows);
                    PyErr_Format(PyExc_TypeError, "%s: a value is an int", what);
                    return -1;
                }
                Py_INCREF(b);
                PyTuple_SET_ITEM(*objects, at, b);
            }
        }
    }
    (*start)[n_roles] = (int32_t)at;
    Py_DECREF(rows);
    return 0;
}

/* ---- the lock ------------------------------------------------------------------------ */

/* Take the network's lock: refuses a call from within a call on it in the same thread
   (a finalizer run by an allocation); waits for another thread's call with the GIL
   released, looking at signals. */
static int
acquire(Network *self)
{
    unsigned long me = PyThread_get_thread_ident();
    if (self->owner == me) {
        PyErr_SetString(PyExc_RuntimeError,
                        "a network cannot be called from within one of its own calls");
        return -1;
    }
    if (!PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) {
        for (;;) {
            PyLockStatus got;
            Py_BEGIN_ALLOW_THREADS
            got = PyThread_acquire_lock_timed(self->lock, 20000, 0);
            Py_END_ALLOW_THREADS
            if (got == PY_LOCK_ACQUIRED) break;
            if (PyErr_CheckSignals() < 0) return -1;
        }
    }
    self->owner = me;
    return 0;
}

static void leave(Network *self);

/* Take the network for one call: a network never built (or whose building failed)
   refuses every call. */
static int
enter(Network *self)
{
    if (acquire(self) < 0) return -1;
    if (!self->ready) {
        leave(self);
        PyErr_SetString(PyExc_RuntimeError, "this network was never built");
        return -1;
    }
    return 0;
}

static void
leave(Network *self)
{
    self->owner = 0;
    PyThread_release_lock(self->lock);
}

/* ---- pacing long loops ------------------------------------------------------------- */

static double
now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);   /* time.monotonic()'s clock */
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef struct {
    PyThreadState *ts;   /* non-NULL while the GIL is released */
    double deadline;     /* time.monotonic() seconds; <= 0: none */
    double next;         /* when to look at signals next (and first release the GIL) */
    unsigned count;
    int stop;            /* 1: a signal handler raised (its error is set); 2: deadline */
} Pace;

static void
pace_start(Pace *p, double deadline)
{
    p->ts = NULL;
    p->deadline = deadline;
    p->next = now() + 0.002;   /* a short call keeps the GIL */
    p->count = 0;
    p->stop = 0;
}

static int
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

/* Once per step of a long loop: nonzero when it must stop (p->stop says why). */
static inline int
pace_step(Pace *p)
{
    if (++p->count & 15) return 0;
    return pace_check(p);
}

static void
pace_end(Pace *p)
{
    if (p->ts) PyEval_RestoreThread(p->ts);
    p->ts = NULL;
}

/* ---- building -------------------------------------------------------------------- */

static void
release_arrays(Network *self)
{
    void *arrays[] = {self->rule_start, self->lit_start, self->lits, self->state_prog,
                      self->move_prog, self->legal_start, self->legal_atom, self->legal_move,
                      self->next_atom, self->next_fluent, self->goal_start, self->goal_atom,
                      self->val, self->current, self->scratch, self->choice, self->joint,
                      self->rule_head, self->moving, self->watch_start, self->watch_rules,
                      self->always_start, self->always_rules, self->cand_next, self->sc_head,
                      self->mc_head, self->sc_stamp, self->mc_stamp, self->move_legal,
                      self->move_role, self->group_of, self->occ_start, self->occ_rules,
                      self->missing, self->queue, self->result_moves, self->result_count,
                      self->sees_start, self->sees_atom, self->sees_percept,
                      self->pend_state, self->pend_ms, self->pend_mm, self->always_state,
                      self->always_move, self->program_of, self->group_pos,
                      self->true_state, self->true_move, self->legal_of_start,
                      self->legal_of, self->rule_seen, self->atom_done};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) PyMem_Free(arrays[i]);
    self->rule_start = self->lit_start = self->lits = self->state_prog = NULL;
    self->move_prog = self->legal_start = self->legal_atom = self->legal_move = NULL;
    self->next_atom = self->next_fluent = self->goal_start = self->goal_atom = NULL;
    self->val = self->current = self->scratch = self->moving = NULL;
    self->choice = self->joint = self->rule_head = self->watch_start = NULL;
    self->watch_rules = self->always_start = self->always_rules = self->cand_next = NULL;
    self->sc_head = self->mc_head = self->move_legal = self->move_role = NULL;
    self->sc_stamp = self->mc_stamp = NULL;
    self->group_of = self->occ_start = self->occ_rules = self->missing = self->queue = NULL;
    self->result_moves = NULL;
    self->result_count = NULL;
    self->sees_start = self->sees_atom = self->sees_percept = NULL;
    self->pend_state = self->pend_ms = self->pend_mm = NULL;
    self->always_state = self->always_move = NULL;
    self->program_of = NULL;
    self->group_pos = self->true_state = self->true_move = NULL;
    self->legal_of_start = self->legal_of = NULL;
    self->rule_seen = self->atom_done = NULL;
    self->group_epoch = 0;
    self->events = self->can_events = 0;
    self->n_true_state = self->n_true_move = 0;
    Py_CLEAR(self->goal_values);
    Py_CLEAR(self->move_objects);
    self->watched = 0;
    self->has_current = 0;
}

static void
Network_dealloc(Network *self)
{
    release_arrays(self);
    if (self->lock) PyThread_free_lock(self->lock);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
Network_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    Network *self = (Network *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->lock = PyThread_allocate_lock();
    if (!self->lock) { Py_DECREF(self); return PyErr_NoMemory(); }
    return (PyObject *)self;
}

/* A program: atoms >= first (the derived ones), each once; a marker -k is followed by k
   of them, a cyclic group (numbered into group_of from *groups on). */
static int
check_program(Network *self, const int32_t *prog, Py_ssize_t n, int32_t first,
              uint8_t *seen, int32_t *groups, Py_ssize_t *largest)
{
    Py_ssize_t i = 0;
    while (i < n) {
        Py_ssize_t k = 1;
        int cyclic = prog[i] < 0;
        if (cyclic) {
            k = -(Py_ssize_t)prog[i];
            if (k > n - i - 1) {
                PyErr_SetString(PyExc_ValueError, "a cycle of a program runs past its end");
                return -1;
            }
            if (k > *largest) *largest = k;
            i++;
        }
        for (Py_ssize_t j = 0; j < k; j++, i++) {
            int32_t a = prog[i];
            if (a < first || a >= self->n_atoms || seen[a]) {
                PyErr_SetString(PyExc_ValueError,
                                "a program evaluates an atom that is not derived, or twice");
                return -1;
            }
            seen[a] = 1;
            if (cyclic) self->group_of[a] = *groups;
        }
        if (cyclic) (*groups)++;
    }
    return 0;
}

/* Per atom of a cyclic group, the rules of its group that read it (positively); a
   negation of an atom of the rule's own group is refused (not stratified). */
static int
build_occurrences(Network *self)
{
    self->occ_start = ALLOC((Py_ssize_t)self->n_atoms + 1, int32_t);
    int32_t *fill = ALLOC(self->n_atoms, int32_t);
    if (!self->occ_start || !fill) { PyMem_Free(fill); return -1; }
    Py_ssize_t total = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int32_t a = 0; a < self->n_atoms; a++) {
            int32_t g = self->group_of[a];
            if (g < 0) continue;
            for (int32_t r = self->rule_start[a]; r < self->rule_start[a + 1]; r++)
                for (int32_t i = self->lit_start[r]; i < self->lit_start[r + 1]; i++) {
                    int32_t b = self->lits[i] >> 1;
                    if (self->group_of[b] != g) continue;
                    if (self->lits[i] & 1) {
                        PyMem_Free(fill);
                        PyErr_SetString(PyExc_ValueError,
                                        "a rule negates an atom of its own cycle");
                        return -1;
                    }
                    if (pass == 0) { self->occ_start[b + 1]++; total++; }
                    else self->occ_rules[self->occ_start[b] + fill[b]++] = r;
                }
        }
        if (pass == 0) {
            if (total > INT32_MAX) {
                PyMem_Free(fill);
                PyErr_SetString(PyExc_ValueError, "cycles too large");
                return -1;
            }
            for (int32_t a = 0; a < self->n_atoms; a++)
                self->occ_start[a + 1] += self->occ_start[a];
            self->occ_rules = ALLOC(total, int32_t);
            if (!self->occ_rules) { PyMem_Free(fill); return -1; }
        }
    }
    PyMem_Free(fill);
    return 0;
}

/* Whether the programs allow evaluation by events, and the arrays it needs: each
   program's atoms in ascending order, a single atom's rules reading only earlier atoms
   of its own program (and a state-program atom none of the move program), a cyclic
   group's atoms contiguous; and per atom its legal entries. */
static int
prepare_events(Network *self)
{
    int32_t n = self->n_atoms;
    self->n_words = ((Py_ssize_t)n + 63) / 64;
    self->program_of = ALLOC(n, uint8_t);
    self->group_pos = ALLOC(n, int32_t);
    self->true_state = ALLOC(n, int32_t);
    self->true_move = ALLOC(n, int32_t);
    self->pend_state = ALLOC(self->n_words, uint64_t);
    self->pend_ms = ALLOC(self->n_words, uint64_t);
    self->pend_mm = ALLOC(self->n_words, uint64_t);
    self->always_state = ALLOC(self->n_words, uint64_t);
    self->always_move = ALLOC(self->n_words, uint64_t);
    self->legal_of_start = ALLOC((Py_ssize_t)n + 1, int32_t);
    Py_ssize_t n_legal = self->legal_start[self->n_roles];
    self->legal_of = ALLOC(n_legal, int32_t);
    self->rule_seen = ALLOC(self->n_rules, uint32_t);
    self->atom_done = ALLOC(n, uint32_t);
    if (!self->program_of || !self->group_pos || !self->true_state || !self->true_move ||
        !self->pend_state || !self->pend_ms || !self->pend_mm || !self->always_state ||
        !self->always_move || !self->legal_of_start || !self->legal_of || !self->rule_seen ||
        !self->atom_done)
        return -1;
    for (int32_t a = 0; a < n; a++) self->group_pos[a] = -1;
    int ok = 1;
    const int32_t *progs[2] = {self->state_prog, self->move_prog};
    Py_ssize_t lens[2] = {self->n_state_prog, self->n_move_prog};
    for (int p = 0; p < 2; p++) {
        int32_t last = -1;
        Py_ssize_t i = 0;
        while (i < lens[p]) {
            int32_t x = progs[p][i];
            if (x >= 0) {
                if (x <= last) ok = 0;
                last = x;
                self->program_of[x] = (uint8_t)(p + 1);
                i++;
                continue;
            }
            Py_ssize_t k = -(Py_ssize_t)x;
            for (Py_ssize_t j = 0; j < k; j++) {
                int32_t a = progs[p][i + 1 + j];
                if (a <= last || (j > 0 && a != last + 1)) ok = 0;
                last = a;
                self->program_of[a] = (uint8_t)(p + 1);
                self->group_pos[a] = (int32_t)i;
            }
            i += 1 + k;
        }
    }
    for (int32_t a = 0; ok && a < n; a++) {
        int pa = self->program_of[a];
        if (!pa) continue;
        for (int32_t r = self->rule_start[a]; ok && r < self->rule_start[a + 1]; r++)
            for (int32_t i = self->lit_start[r]; i < self->lit_start[r + 1]; i++) {
                int32_t b = self->lits[i] >> 1;
                int pb = self->program_of[b];
                int same_group = self->group_pos[a] >= 0 && self->group_of[b] == self->group_of[a];
                if ((pb == pa && b >= a && !same_group) || (pa == 1 && pb == 2)) {
                    ok = 0;
                    break;
                }
            }
    }
    int32_t first = self->n_fluents + self->n_moves + 1;   /* the first derived atom */
    for (int32_t a = first; ok && a < n; a++)
        if (!self->program_of[a] && self->rule_start[a] < self->rule_start[a + 1]) ok = 0;
    for (Py_ssize_t e = 0; ok && e < n_legal; e++)
        if (self->legal_atom[e] < first) ok = 0;   /* a legal atom that is an input */
    for (Py_ssize_t e = 0; e < n_legal; e++) self->legal_of_start[self->legal_atom[e] + 1]++;
    for (int32_t a = 0; a < n; a++) self->legal_of_start[a + 1] += self->legal_of_start[a];
    int32_t *fill = ALLOC(n, int32_t);
    if (!fill) return -1;
    for (Py_ssize_t e = 0; e < n_legal; e++) {
        int32_t a = self->legal_atom[e];
        self->legal_of[self->legal_of_start[a] + fill[a]++] = (int32_t)e;
    }
    PyMem_Free(fill);
    self->can_events = ok;
    return 0;
}

/* Network(n_atoms, n_fluents, n_moves, rule_start, lit_start, lits, state_program,
           move_program, legal, next, terminal, goals[, sees]): see compiled/network.py.
   Integer arrays may be sequences or buffers of C ints; legal is per role a list of
   (atom, move index), goals per role a list of (atom, value: an int, -1 if none), sees
   (GDL-II) per role a list of (atom, percept index). */
static int build(Network *self, PyObject *args);

static int
Network_init(Network *self, PyObject *args, PyObject *kw)
{
    if (acquire(self) < 0) return -1;
    self->ready = 0;
    self->generation++;
    release_arrays(self);
    int ok = build(self, args) == 0;
    self->ready = ok;
    leave(self);
    return ok ? 0 : -1;
}

/* Network_init's work, the lock held (a failure leaves the network not ready). */
static int
build(Network *self, PyObject *args)
{
    PyObject *rs, *ls, *lits, *sp, *mp, *legal, *next, *goals, *sees = NULL;
    int n_atoms, n_fluents, n_moves, terminal;
    if (!PyArg_ParseTuple(args, "iiiOOOOOOOiO|O", &n_atoms, &n_fluents, &n_moves, &rs, &ls,
                          &lits, &sp, &mp, &legal, &next, &terminal, &goals, &sees))
        return -1;
    if (n_fluents < 0 || n_moves < 0 || n_atoms < 1 ||
        (int64_t)n_fluents + n_moves + 1 > n_atoms || n_atoms > INT32_MAX / 2 - 1) {
        PyErr_SetString(PyExc_ValueError, "inconsistent network sizes");
        return -1;
    }
    self->n_atoms = n_atoms; self->n_fluents = n_fluents; self->n_moves = n_moves;
    Py_ssize_t n_roles = PySequence_Size(legal);
    if (n_roles < 0) return -1;
    if (n_roles > INT32_MAX / 2) {
        PyErr_SetString(PyExc_ValueError, "too many roles");
        return -1;
    }
    self->n_roles = (int32_t)n_roles;
    Py_ssize_t n_rs, n_ls, n_lits;
    if (!(self->lit_start = int_array(ls, &n_ls, "lit_start", 0, INT32_MAX))) return -1;
    if (n_ls < 1 || n_ls - 1 > INT32_MAX / 2) {
        PyErr_SetString(PyExc_ValueError, "lit_start: one entry per rule and one more");
        return -1;
    }
    self->n_rules = (int32_t)(n_ls - 1);
    if (!(self->rule_start = int_array(rs, &n_rs, "rule_start", 0, (int64_t)self->n_rules + 1)))
        return -1;
    if (!(self->lits = int_array(lits, &n_lits, "lits", 0, 2 * (int64_t)n_atoms))) return -1;
    if (!(self->state_prog = int_array(sp, &self->n_state_prog, "state_program",
                                       -(int64_t)n_atoms, n_atoms)))
        return -1;
    if (!(self->move_prog = int_array(mp, &self->n_move_prog, "move_program",
                                      -(int64_t)n_atoms, n_atoms)))
        return -1;
    if (n_rs != (Py_ssize_t)n_atoms + 1 || self->rule_start[0] != 0 ||
        self->rule_start[n_atoms] != self->n_rules || self->lit_start[0] != 0 ||
        self->lit_start[self->n_rules] != n_lits) {
        PyErr_SetString(PyExc_ValueError, "rule_start or lit_start do not span the rules");
        return -1;
    }
    for (Py_ssize_t i = 0; i + 1 < n_rs; i++)
        if (self->rule_start[i] > self->rule_start[i + 1]) {
            PyErr_SetString(PyExc_ValueError, "rule_start not ascending"); return -1;
        }
    for (Py_ssize_t i = 0; i + 1 < n_ls; i++)
        if (self->lit_start[i] > self->lit_start[i + 1]) {
            PyErr_SetString(PyExc_ValueError, "lit_start not ascending"); return -1;
        }
    if (terminal < 0 || terminal >= n_atoms) {
        PyErr_SetString(PyExc_ValueError, "terminal out of range");
        return -1;
    }
    self->terminal = terminal;
    if (pairs_per_role(legal, self->n_roles, "legal", n_atoms, &self->legal_start,
                       &self->legal_atom, &self->legal_move, n_moves, NULL) < 0)
        return -1;
    if (pairs_per_role(goals, self->n_roles, "goals", n_atoms, &self->goal_start,
                       &self->goal_atom, NULL, -1, &self->goal_values) < 0)
        return -1;
    if (sees) {
        if (pairs_per_role(sees, self->n_roles, "sees", n_atoms, &self->sees_start,
                           &self->sees_atom, &self->sees_percept, INT32_MAX, NULL) < 0)
            return -1;
    } else {
        self->sees_start = ALLOC((Py_ssize_t)n_roles + 1, int32_t);
        if (!self->sees_start) return -1;
    }
    PyObject *nexts = PySequence_Tuple(next);   /* a copy (see pairs_per_role) */
    if (!nexts) return -1;
    self->n_next = PyTuple_GET_SIZE(nexts);
    self->next_atom = ALLOC(self->n_next, int32_t);
    self->next_fluent = ALLOC(self->n_next, int32_t);
    if (!self->next_atom || !self->next_fluent) { Py_DECREF(nexts); return -1; }
    for (Py_ssize_t i = 0; i < self->n_next; i++) {
        int a, f;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(nexts, i), "ii", &a, &f)) {
            Py_DECREF(nexts); return -1;
        }
        if (a < 0 || a >= n_atoms || f < 0 || f >= n_fluents) {
            Py_DECREF(nexts);
            PyErr_SetString(PyExc_ValueError, "next pair out of range");
            return -1;
        }
        self->next_atom[i] = a; self->next_fluent[i] = f;
    }
    Py_DECREF(nexts);
    self->val = ALLOC(n_atoms, uint8_t);
    self->current = ALLOC((Py_ssize_t)n_fluents + 1, uint8_t);
    self->scratch = ALLOC((Py_ssize_t)n_fluents + 1, uint8_t);
    self->joint = ALLOC(n_roles + 1, int32_t);
    self->rule_head = ALLOC(self->n_rules, int32_t);
    self->moving = ALLOC(n_atoms, uint8_t);
    self->move_legal = ALLOC(n_moves, int32_t);
    self->move_role = ALLOC(n_moves, int32_t);
    self->group_of = ALLOC(n_atoms, int32_t);
    self->missing = ALLOC(self->n_rules, int32_t);
    Py_ssize_t n_legal = self->legal_start[n_roles];
    self->choice = ALLOC(n_legal + 1, int32_t);
    self->result_moves = ALLOC(n_legal + 1, int32_t);
    self->result_count = ALLOC(n_roles + 1, Py_ssize_t);
    if (!self->val || !self->current || !self->scratch || !self->joint || !self->rule_head || !self->moving ||
        !self->move_legal || !self->move_role || !self->group_of || !self->missing ||
        !self->choice || !self->result_moves || !self->result_count)
        return -1;
    for (int32_t a = 0; a < n_atoms; a++)
        for (int32_t r = self->rule_start[a]; r < self->rule_start[a + 1]; r++)
            self->rule_head[r] = a;
    /* the programs: derived atoms only, each at most once, and their cyclic groups */
    for (int32_t a = 0; a < n_atoms; a++) self->group_of[a] = -1;
    uint8_t *seen = ALLOC(n_atoms, uint8_t);
    if (!seen) return -1;
    int32_t groups = 0;
    Py_ssize_t largest = 0;
    int32_t first = n_fluents + n_moves;
    if (check_program(self, self->state_prog, self->n_state_prog, first, seen, &groups,
                      &largest) < 0 ||
        check_program(self, self->move_prog, self->n_move_prog, first, seen, &groups,
                      &largest) < 0) {
        PyMem_Free(seen);
        return -1;
    }
    PyMem_Free(seen);
    self->queue = ALLOC(largest + 1, int32_t);
    if (!self->queue || build_occurrences(self) < 0) return -1;
    memset(self->moving + n_fluents, 1, (size_t)n_moves);
    for (Py_ssize_t i = 0; i < self->n_move_prog; i++)
        if (self->move_prog[i] >= 0) self->moving[self->move_prog[i]] = 1;
    for (int32_t m = 0; m < n_moves; m++) self->move_legal[m] = self->move_role[m] = -1;
    for (int32_t r = 0; r < self->n_roles; r++)
        for (int32_t i = self->legal_start[r]; i < self->legal_start[r + 1]; i++) {
            int32_t m = self->legal_move[i];
            if (self->move_legal[m] >= 0) {
                PyErr_SetString(PyExc_ValueError, "a move is legal by two atoms");
                return -1;
            }
            self->move_legal[m] = self->legal_atom[i];
            self->move_role[m] = r;
        }
    if (prepare_events(self) < 0) return -1;
    self->rng = 0x9E3779B97F4A7C15ULL;
    return 0;
}

/* ---- evaluation ------------------------------------------------------------------ */

static inline uint8_t
atom_value(const Network *self, int32_t a)
{
    const uint8_t *val = self->val;
    for (int32_t r = self->rule_start[a]; r < self->rule_start[a + 1]; r++) {
        int32_t i = self->lit_start[r], end = self->lit_start[r + 1];
        for (; i < end; i++) {
            int32_t lit = self->lits[i];
            if (val[lit >> 1] == (lit & 1)) break;
        }
        if (i == end) return 1;
    }
    return 0;
}

static inline int
rule_holds(const Network *self, int32_t r)
{
    for (int32_t i = self->lit_start[r]; i < self->lit_start[r + 1]; i++) {
        int32_t lit = self->lits[i];
        if (self->val[lit >> 1] == (lit & 1)) return 0;
    }
    return 1;
}

/* Atom a is true: its watchers become candidates of their heads, in the move's lists
   if a depends on the joint move, else in the state's. */
static inline void
mark(uint64_t *bits, int32_t a)
{
    bits[a >> 6] |= (uint64_t)1 << (a & 63);
}

static inline void
push(Network *self, int32_t a)
{
    int move = self->moving[a];
    for (int32_t i = self->watch_start[a]; i < self->watch_start[a + 1]; i++) {
        int32_t r = self->watch_rules[i], h = self->rule_head[r];
        if (self->events)
            mark(self->program_of[h] == 1 ? self->pend_state
                 : move ? self->pend_mm : self->pend_ms, h);
        if (move) {
            if (self->mc_stamp[h] != self->move_epoch) {
                self->mc_stamp[h] = self->move_epoch; self->mc_head[h] = -1;
            }
            self->cand_next[r] = self->mc_head[h]; self->mc_head[h] = r;
        } else {
            if (self->sc_stamp[h] != self->state_epoch) {
                self->sc_stamp[h] = self->state_epoch; self->sc_head[h] = -1;
            }
            self->cand_next[r] = self->sc_head[h]; self->sc_head[h] = r;
        }
    }
}

static inline uint8_t
candidate_value(const Network *self, int32_t a)
{
    if (self->sc_stamp[a] == self->state_epoch)
        for (int32_t r = self->sc_head[a]; r >= 0; r = self->cand_next[r])
            if (rule_holds(self, r)) return 1;
    if (self->moving[a] && self->mc_stamp[a] == self->move_epoch)
        for (int32_t r = self->mc_head[a]; r >= 0; r = self->cand_next[r])
            if (rule_holds(self, r)) return 1;
    for (int32_t i = self->always_start[a]; i < self->always_start[a + 1]; i++)
        if (rule_holds(self, self->always_rules[i])) return 1;
    return 0;
}

/* The least fixpoint of a cyclic group of k atoms (its rules read its own atoms only
   positively): each rule counts the literals of the group it still misses; an atom
   that becomes true lowers the count of the rules reading it. Linear in the group's
   rules, however its atoms are ordered. */
static void
eval_group(Network *self, const int32_t *group, Py_ssize_t k)
{
    uint8_t *val = self->val;
    int32_t g = self->group_of[group[0]];
    Py_ssize_t queued = 0;
    for (Py_ssize_t j = 0; j < k; j++) val[group[j]] = 0;
    for (Py_ssize_t j = 0; j < k; j++) {
        int32_t a = group[j];
        for (int32_t r = self->rule_start[a]; r < self->rule_start[a + 1]; r++) {
            int32_t miss = 0;
            for (int32_t i = self->lit_start[r]; i < self->lit_start[r + 1]; i++) {
                int32_t lit = self->lits[i], b = lit >> 1;
                if (self->group_of[b] == g) miss++;
                else if (val[b] == (lit & 1)) { miss = -1; break; }
            }
            self->missing[r] = miss;
            if (miss == 0 && !val[a]) { val[a] = 1; self->queue[queued++] = a; }
        }
    }
    while (queued > 0) {
        int32_t b = self->queue[--queued];
        for (int32_t i = self->occ_start[b]; i < self->occ_start[b + 1]; i++) {
            int32_t r = self->occ_rules[i];
            if (self->missing[r] > 0 && --self->missing[r] == 0) {
                int32_t h = self->rule_head[r];
                if (!val[h]) { val[h] = 1; self->queue[queued++] = h; }
            }
        }
    }
}

/* eval_group by events (watched mode): the group's atoms that hold at once are those
   with a candidate (or always) rule that holds; from there a worklist, each rule of the
   group looked at when an atom of the group it reads comes off the list (counting then
   the atoms of the group it still waits for), so that a group none of whose rules is a
   candidate costs next to nothing, however large. */
static inline int
word_bit(const uint64_t *bits, int32_t a)
{
    return (bits[a >> 6] >> (a & 63)) & 1;
}

static void
eval_group_events(Network *self, const int32_t *group, Py_ssize_t k, const uint64_t *pend,
                  const uint64_t *also, const uint64_t *always)
{
    uint8_t *val = self->val;
    int32_t g = self->group_of[group[0]];
    if (++self->group_epoch == 0) {   /* the stamps wrapped: start them afresh */
        memset(self->rule_seen, 0, sizeof(uint32_t) * (size_t)self->n_rules);
        memset(self->atom_done, 0, sizeof(uint32_t) * (size_t)self->n_atoms);
        self->group_epoch = 1;
    }
    uint32_t ep = self->group_epoch;
    Py_ssize_t queued = 0;
    for (Py_ssize_t j = 0; j < k; j++) val[group[j]] = 0;
    for (Py_ssize_t j = 0; j < k; j++) {
        int32_t a = group[j];   /* (only an atom with a candidate or always rule can hold) */
        if ((word_bit(pend, a) || word_bit(also, a) || word_bit(always, a)) &&
            candidate_value(self, a)) {
            val[a] = 1;
            self->queue[queued++] = a;
        }
    }
    while (queued > 0) {
        int32_t b = self->queue[--queued];
        for (int32_t i = self->occ_start[b]; i < self->occ_start[b + 1]; i++) {
            int32_t r = self->occ_rules[i];
            if (self->rule_seen[r] != ep) {
                /* first look: the group's atoms it reads that are not done yet (b
                   among them: each of b's occurrences counts down below), or -1 if a
                   literal from outside the group fails */
                self->rule_seen[r] = ep;
                int32_t miss = 0;
                for (int32_t l = self->lit_start[r]; l < self->lit_start[r + 1]; l++) {
                    int32_t lit = self->lits[l], x = lit >> 1;
                    if (self->group_of[x] == g) miss += self->atom_done[x] != ep;
                    else if (val[x] == (lit & 1)) { miss = -1; break; }
                }
                self->missing[r] = miss;
            }
            if (self->missing[r] > 0 && --self->missing[r] == 0) {
                int32_t h = self->rule_head[r];
                if (!val[h]) { val[h] = 1; self->queue[queued++] = h; }
            }
        }
        self->atom_done[b] = ep;
    }
}

static void
run(Network *self, const int32_t *prog, Py_ssize_t n)
{
    uint8_t *val = self->val;
    Py_ssize_t i = 0;
    while (i < n) {
        int32_t x = prog[i];
        if (x >= 0) {
            if (self->watched) {
                if ((val[x] = candidate_value(self, x))) push(self, x);
            } else {
                val[x] = atom_value(self, x);
            }
            i++;
            continue;
        }
        Py_ssize_t k = -(Py_ssize_t)x;
        const int32_t *group = prog + i + 1;
        eval_group(self, group, k);
        if (self->watched)
            for (Py_ssize_t j = 0; j < k; j++) if (val[group[j]]) push(self, group[j]);
        i += 1 + k;
    }
}

/* Evaluation by events of the state (kind 1) or move (kind 2) program: only the atoms
   whose bit is pending or always set are looked at, in ascending order (the order of
   the program); every other atom of the program stays false. */
static void
run_events(Network *self, int kind)
{
    const int32_t *prog = kind == 1 ? self->state_prog : self->move_prog;
    const uint64_t *pend = kind == 1 ? self->pend_state : self->pend_mm;
    const uint64_t *also = kind == 1 ? self->pend_state : self->pend_ms;
    const uint64_t *always = kind == 1 ? self->always_state : self->always_move;
    int32_t *trues = kind == 1 ? self->true_state : self->true_move;
    Py_ssize_t nt = kind == 1 ? self->n_true_state : self->n_true_move;
    uint8_t *val = self->val;
    Py_ssize_t cur = 0;
    for (;;) {
        Py_ssize_t w = cur >> 6;
        if (w >= self->n_words) break;
        /* (a push while this runs sets only later bits: reading the words again here
           sees them) */
        uint64_t bits = (pend[w] | also[w] | always[w]) & (~(uint64_t)0 << (cur & 63));
        if (!bits) { cur = (w + 1) << 6; continue; }
        int32_t a = (int32_t)((w << 6) + __builtin_ctzll(bits));
        if (self->group_pos[a] >= 0) {
            const int32_t *group = prog + self->group_pos[a] + 1;
            Py_ssize_t k = -(Py_ssize_t)prog[self->group_pos[a]];
            eval_group_events(self, group, k, pend, also, always);
            for (Py_ssize_t j = 0; j < k; j++)
                if (val[group[j]]) { push(self, group[j]); trues[nt++] = group[j]; }
            cur = (Py_ssize_t)group[k - 1] + 1;
        } else {
            if ((val[a] = candidate_value(self, a))) { push(self, a); trues[nt++] = a; }
            cur = (Py_ssize_t)a + 1;
        }
    }
    if (kind == 1) self->n_true_state = nt;
    else self->n_true_move = nt;
}

/* Back to all-false: the atoms the last move run made true (and with state, those of
   the last state run too). */
static void
forget_runs(Network *self, int state)
{
    uint8_t *val = self->val;
    for (Py_ssize_t i = 0; i < self->n_true_move; i++) val[self->true_move[i]] = 0;
    self->n_true_move = 0;
    memset(self->pend_mm, 0, sizeof(uint64_t) * (size_t)self->n_words);
    if (!state) return;
    for (Py_ssize_t i = 0; i < self->n_true_state; i++) val[self->true_state[i]] = 0;
    self->n_true_state = 0;
    memset(self->pend_state, 0, sizeof(uint64_t) * (size_t)self->n_words);
    memset(self->pend_ms, 0, sizeof(uint64_t) * (size_t)self->n_words);
}

/* The next epoch of the state's (the move's) candidate lists. At the wrap of the 32-bit
   counter every stamp is cleared first, so that a stamp of 2**32 epochs ago, or the 0
   of a head never stamped, never passes for the new epoch's. */
static inline void
next_state_epoch(Network *self)
{
    if (++self->state_epoch == 0) {
        memset(self->sc_stamp, 0, sizeof(uint32_t) * (size_t)self->n_atoms);
        self->state_epoch = 1;
    }
}

static inline void
next_move_epoch(Network *self)
{
    if (++self->move_epoch == 0) {
        memset(self->mc_stamp, 0, sizeof(uint32_t) * (size_t)self->n_atoms);
        self->move_epoch = 1;
    }
}

static void
install(Network *self, const uint8_t *state)
{
    if (self->has_current && memcmp(self->current, state, (size_t)self->n_fluents) == 0)
        return;
    if (self->events) forget_runs(self, 1);
    for (int32_t f = 0; f < self->n_fluents; f++) self->val[f] = state[f] != 0;
    if (self->watched) {
        next_state_epoch(self);
        for (int32_t f = 0; f < self->n_fluents; f++) if (self->val[f]) push(self, f);
    }
    if (self->events) run_events(self, 1);
    else run(self, self->state_prog, self->n_state_prog);
    memcpy(self->current, state, (size_t)self->n_fluents);
    self->has_current = 1;
}

/* The state after the joint move in self->joint (the state program has run). */
static void
successor(Network *self, uint8_t *out)
{
    uint8_t *moves = self->val + self->n_fluents;
    if (self->events) forget_runs(self, 0);
    memset(moves, 0, (size_t)self->n_moves);
    for (int32_t r = 0; r < self->n_roles; r++) moves[self->joint[r]] = 1;
    if (self->watched) {
        next_move_epoch(self);
        for (int32_t r = 0; r < self->n_roles; r++)
            push(self, self->n_fluents + self->joint[r]);
    }
    if (self->events) run_events(self, 2);
    else run(self, self->move_prog, self->n_move_prog);
    memset(out, 0, (size_t)self->n_fluents);
    for (Py_ssize_t i = 0; i < self->n_next; i++)
        if (self->val[self->next_atom[i]]) out[self->next_fluent[i]] = 1;
}

static int
state_arg(Network *self, PyObject *state, const uint8_t **bytes)
{
    if (!PyBytes_Check(state) || PyBytes_GET_SIZE(state) != self->n_fluents) {
        PyErr_SetString(PyExc_ValueError, "a state is bytes, one per fluent");
        return -1;
    }
    *bytes = (const uint8_t *)PyBytes_AS_STRING(state);
    return 0;
}

static int
compare_ints(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* The installed state's legal moves into result_moves / result_count (C only), each
   role's in the network's order. */
static void
collect_legal(Network *self)
{
    if (self->events) {
        /* the legal entries of the atoms the state run made true, in entry order */
        Py_ssize_t k = 0;
        for (Py_ssize_t i = 0; i < self->n_true_state; i++) {
            int32_t t = self->true_state[i];
            for (int32_t j = self->legal_of_start[t]; j < self->legal_of_start[t + 1]; j++)
                self->choice[k++] = self->legal_of[j];
        }
        if (k > 1) qsort(self->choice, (size_t)k, sizeof(int32_t), compare_ints);
        Py_ssize_t at = 0, j = 0;
        for (int32_t r = 0; r < self->n_roles; r++) {
            Py_ssize_t count = 0;
            for (; j < k && self->choice[j] < self->legal_start[r + 1]; j++)
                if (self->choice[j] >= self->legal_start[r])
                    self->result_moves[at + count++] = self->legal_move[self->choice[j]];
            self->result_count[r] = count;
            at += count;
        }
        return;
    }
    Py_ssize_t at = 0;
    for (int32_t r = 0; r < self->n_roles; r++) {
        Py_ssize_t k = 0;
        for (int32_t i = self->legal_start[r]; i < self->legal_start[r + 1]; i++)
            if (self->val[self->legal_atom[i]]) { self->result_moves[at + k] = self->legal_move[i]; k++; }
        self->result_count[r] = k;
        at += k;
    }
}

/* Per role, a list (objects NULL: of move indices) or a tuple (of the move objects)
   of the legal moves collect_legal found. Reads only the result buffers, which no
   other call can change while this one holds the network. */
static PyObject *
legal_result(Network *self, PyObject *objects)
{
    PyObject *out = objects ? PyTuple_New(self->n_roles) : PyList_New(self->n_roles);
    if (!out) return NULL;
    Py_ssize_t at = 0;
    for (int32_t r = 0; r < self->n_roles; r++) {
        Py_ssize_t k = self->result_count[r];
        PyObject *ms = objects ? PyTuple_New(k) : PyList_New(k);
        if (!ms) { Py_DECREF(out); return NULL; }
        for (Py_ssize_t j = 0; j < k; j++) {
            int32_t m = self->result_moves[at + j];
            PyObject *x;
            if (objects) {
                x = PyTuple_GET_ITEM(objects, m);
                Py_INCREF(x);
                PyTuple_SET_ITEM(ms, j, x);
            } else {
                x = PyLong_FromLong(m);
                if (!x) { Py_DECREF(ms); Py_DECREF(out); return NULL; }
                PyList_SET_ITEM(ms, j, x);
            }
        }
        at += k;
        if (objects) PyTuple_SET_ITEM(out, r, ms);
        else PyList_SET_ITEM(out, r, ms);
    }
    return out;
}

/* ---- the step API ---------------------------------------------------------------- */

/* Per role, a list of its entries start[r]..start[r+1]-1 (goals, percepts) whose atom
   holds: each as values[i], or with values NULL as its place among the role's entries.
   Counted, then listed: the values cannot change meanwhile (the caller holds the
   network), so the list is filled exactly. */
static PyObject *
holding(Network *self, const int32_t *start, const int32_t *atoms, const int32_t *values)
{
    PyObject *out = PyList_New(self->n_roles);
    for (int32_t r = 0; out && r < self->n_roles; r++) {
        Py_ssize_t k = 0;
        for (int32_t i = start[r]; i < start[r + 1]; i++) k += self->val[atoms[i]] != 0;
        PyObject *list = PyList_New(k);
        if (!list) { Py_CLEAR(out); break; }
        PyList_SET_ITEM(out, r, list);
        Py_ssize_t j = 0;
        for (int32_t i = start[r]; i < start[r + 1] && j < k; i++) {
            if (!self->val[atoms[i]]) continue;
            PyObject *x = PyLong_FromLong(values ? values[i] : i - start[r]);
            if (!x) { Py_CLEAR(out); break; }
            PyList_SET_ITEM(list, j++, x);
        }
    }
    return out;
}

/* Take the network for a question about one state, and install that state. */
static int
enter_state(Network *self, PyObject *state)
{
    const uint8_t *s;
    if (enter(self) < 0) return -1;
    if (state_arg(self, state, &s) < 0) { leave(self); return -1; }
    install(self, s);
    return 0;
}

static PyObject *
Network_legal(Network *self, PyObject *state)
{
    if (enter_state(self, state) < 0) return NULL;
    collect_legal(self);
    PyObject *out = legal_result(self, NULL);
    leave(self);
    return out;
}

static PyObject *
Network_terminal(Network *self, PyObject *state)
{
    if (enter_state(self, state) < 0) return NULL;
    int t = self->val[self->terminal];
    leave(self);
    return PyBool_FromLong(t);
}

static PyObject *
Network_goals(Network *self, PyObject *state)
{
    if (enter_state(self, state) < 0) return NULL;
    PyObject *out = holding(self, self->goal_start, self->goal_atom, NULL);
    leave(self);
    return out;
}

/* The joint move (one move index per role) into self->joint; with check, each must be
   a legal move of its role in the installed state: else the role (>= 0) is returned.
   -1: fine; -2: an error is set. */
static int
joint_arg(Network *self, PyObject *moves, int check)
{
    Py_ssize_t n;
    int32_t *joint = int_array(moves, &n, "a joint move", -1, self->n_moves);
    if (!joint) return -2;
    if (n != self->n_roles) {
        PyMem_Free(joint);
        PyErr_SetString(PyExc_ValueError, "a joint move is one move index per role");
        return -2;
    }
    for (int32_t r = 0; r < self->n_roles; r++) {
        int32_t m = joint[r];
        int known = m >= 0 && self->move_legal[m] >= 0 && self->move_role[m] == r;
        if (check && (!known || !self->val[self->move_legal[m]])) {
            PyMem_Free(joint);
            return r;
        }
        if (!check && m < 0) {
            PyMem_Free(joint);
            PyErr_SetString(PyExc_ValueError, "a joint move is one move index per role");
            return -2;
        }
        self->joint[r] = m;
    }
    PyMem_Free(joint);
    return -1;
}

/* Take the network for a question about a joint move (one move index per role;
   legality is not checked) in a state, and play it: the next state into out. */
static int
enter_move(Network *self, PyObject *state, PyObject *moves, uint8_t *out)
{
    if (enter_state(self, state) < 0) return -1;
    if (joint_arg(self, moves, 0) == -2) { leave(self); return -1; }
    successor(self, out);
    return 0;
}

static PyObject *
Network_next(Network *self, PyObject *args)
{
    PyObject *state, *moves;
    if (!PyArg_ParseTuple(args, "OO", &state, &moves)) return NULL;
    if (!PyBytes_Check(state)) return PyErr_Format(PyExc_ValueError, "a state is bytes");
    PyObject *out = PyBytes_FromStringAndSize(NULL, PyBytes_GET_SIZE(state));
    if (!out) return NULL;
    /* (a state of the wrong size is refused before anything is written) */
    if (enter_move(self, state, moves, (uint8_t *)PyBytes_AS_STRING(out)) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    leave(self);
    return out;
}

/* sees(state, joint) -> per role, the indices of its percepts (GDL-II's sees) when the
   joint move (one move index per role; legality is not checked) is played in state. */
static PyObject *
Network_sees(Network *self, PyObject *args)
{
    PyObject *state, *moves;
    if (!PyArg_ParseTuple(args, "OO", &state, &moves)) return NULL;
    if (enter_move(self, state, moves, self->scratch) < 0) return NULL;
    PyObject *out = holding(self, self->sees_start, self->sees_atom, self->sees_percept);
    leave(self);
    return out;
}

/* set_moves(objects): the tuple of objects, one per move index, that step(..., 2)
   answers legal moves with. */
static PyObject *
Network_set_moves(Network *self, PyObject *objects)
{
    if (enter(self) < 0) return NULL;
    if (!PyTuple_Check(objects) || PyTuple_GET_SIZE(objects) != self->n_moves) {
        leave(self);
        PyErr_SetString(PyExc_ValueError, "set_moves takes a tuple of one object per move");
        return NULL;
    }
    PyObject *old = self->move_objects;
    Py_INCREF(objects);
    self->move_objects = objects;
    leave(self);
    Py_XDECREF(old);   /* after leaving: its finalizers may call this network */
    Py_RETURN_NONE;
}

/* step(state, joint, full) -> ("illegal", role) for the first role whose move (an
   index, -1 for one the network does not know) is not legal; else the next state,
   and with full also its terminal flag and legal moves: (state, terminal, legal),
   legal as lists of move indices (full 1) or tuples of set_moves' objects (full 2). */
static PyObject *
Network_step(Network *self, PyObject *args)
{
    PyObject *state, *moves;
    int full;
    const uint8_t *s;
    if (!PyArg_ParseTuple(args, "OOi", &state, &moves, &full)) return NULL;
    if (enter(self) < 0) return NULL;
    PyObject *objects = self->move_objects;
    if (full == 2 && !objects) {
        leave(self);
        PyErr_SetString(PyExc_ValueError, "step(..., 2) needs set_moves first");
        return NULL;
    }
    if (state_arg(self, state, &s) < 0) { leave(self); return NULL; }
    install(self, s);
    int bad = joint_arg(self, moves, 1);
    if (bad == -2) { leave(self); return NULL; }
    if (bad >= 0) { leave(self); return Py_BuildValue("(si)", "illegal", bad); }
    PyObject *out = PyBytes_FromStringAndSize(NULL, self->n_fluents);
    if (!out) { leave(self); return NULL; }
    successor(self, (uint8_t *)PyBytes_AS_STRING(out));
    if (!full) { leave(self); return out; }
    install(self, (const uint8_t *)PyBytes_AS_STRING(out));
    int terminal = self->val[self->terminal];
    collect_legal(self);
    PyObject *legal = legal_result(self, full == 2 ? objects : NULL);
    leave(self);
    if (!legal) { Py_DECREF(out); return NULL; }
    return Py_BuildValue("(NON)", out, terminal ? Py_True : Py_False, legal);
}

/* ---- playouts -------------------------------------------------------------------- */

/* xorshift64*: the next number of the generator whose state is *rng (never 0) */
static inline uint64_t
xorshift_next(uint64_t *rng)
{
    uint64_t x = *rng;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    *rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static inline uint64_t
next_random(Network *self)
{
    return xorshift_next(&self->rng);
}

static PyObject *
Network_seed(Network *self, PyObject *arg)
{
    unsigned long long s = PyLong_AsUnsignedLongLongMask(arg);
    if (s == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    if (enter(self) < 0) return NULL;
    /* splitmix64 of the seed: never zero, well spread */
    uint64_t z = (uint64_t)s + 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    self->rng = z ? z : 1;
    leave(self);
    Py_RETURN_NONE;
}

/* One random playout from the state in buf (overwritten with the final state).
   Returns the depth (>= 0); -1 - r when role r has no legal move (buf: that state);
   PLAYOUT_STOPPED when pace says stop. */
#define PLAYOUT_STOPPED INT64_MIN

/* The most bytes of results one playouts() call keeps (1 GiB). */
#define MAX_RESULT_BYTES ((Py_ssize_t)1 << 30)

static int64_t
playout(Network *self, uint8_t *buf, int64_t max_depth, Pace *pace)
{
    int64_t depth = 0;
    for (;;) {
        install(self, buf);
        if (self->val[self->terminal] || depth >= max_depth) return depth;
        collect_legal(self);
        Py_ssize_t at = 0;
        for (int32_t r = 0; r < self->n_roles; r++) {
            Py_ssize_t k = self->result_count[r];
            if (k == 0) return -1 - (int64_t)r;
            self->joint[r] = self->result_moves[at + (Py_ssize_t)(next_random(self) % (uint64_t)k)];
            at += k;
        }
        successor(self, buf);
        depth++;
        if (pace_step(pace)) return PLAYOUT_STOPPED;
    }
}

/* The goal entry of role r that holds in the installed state, or -1 unless exactly
   one does. */
static int32_t
goal_of(Network *self, int32_t r)
{
    int32_t found = -1, count = 0;
    for (int32_t i = self->goal_start[r]; i < self->goal_start[r + 1]; i++)
        if (self->val[self->goal_atom[i]]) { found = i; count++; }
    return count == 1 ? found : -1;
}

/* The value (an int object, new reference) of goal entry i (-1: none). */
static PyObject *
goal_object(Network *self, int32_t i)
{
    if (i < 0) return PyLong_FromLong(-1);
    PyObject *v = PyTuple_GET_ITEM(self->goal_values, i);
    Py_INCREF(v);
    return v;
}

static int64_t
depth_arg(PyObject *obj)
{
    /* a depth beyond 2**62 steps is never reached: such a bound is no bound */
    int overflow = 0;
    long long d = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (d == -1 && PyErr_Occurred()) return -1;
    if (overflow > 0 || d > ((int64_t)1 << 62)) return (int64_t)1 << 62;
    if (overflow < 0 || d < 0) {
        PyErr_SetString(PyExc_ValueError, "max_depth must be >= 0");
        return -1;
    }
    return d;
}

/* depth_charge(state, max_depth) -> ("done", final state, depth) | ("stuck", role, state) */
static PyObject *
Network_depth_charge(Network *self, PyObject *args)
{
    PyObject *state, *depth_obj;
    const uint8_t *s;
    if (!PyArg_ParseTuple(args, "OO", &state, &depth_obj)) return NULL;
    int64_t max_depth = depth_arg(depth_obj);
    if (max_depth < 0) return NULL;
    if (enter(self) < 0) return NULL;
    if (state_arg(self, state, &s) < 0) { leave(self); return NULL; }
    PyObject *out = PyBytes_FromStringAndSize((const char *)s, self->n_fluents);
    if (!out) { leave(self); return NULL; }
    Pace pace;
    pace_start(&pace, 0);
    int64_t d = playout(self, (uint8_t *)PyBytes_AS_STRING(out), max_depth, &pace);
    pace_end(&pace);
    leave(self);
    if (d == PLAYOUT_STOPPED) { Py_DECREF(out); return NULL; }  /* a signal's error */
    if (d < 0) return Py_BuildValue("(sLN)", "stuck", (long long)(-1 - d), out);
    return Py_BuildValue("(sNL)", "done", out, (long long)d);
}

/* playouts(state, n, max_depth) -> ("playouts", per role [(goal or -1, depth)], steps)
                                  | ("stuck", role, state) */
static PyObject *
Network_playouts(Network *self, PyObject *args)
{
    PyObject *state, *depth_obj;
    Py_ssize_t n;
    const uint8_t *s;
    if (!PyArg_ParseTuple(args, "OnO", &state, &n, &depth_obj)) return NULL;
    if (n < 1) {
        PyErr_SetString(PyExc_ValueError, "the number of playouts must be >= 1");
        return NULL;
    }
    int64_t max_depth = depth_arg(depth_obj);
    if (max_depth < 0) return NULL;
    if (enter(self) < 0) return NULL;
    if (state_arg(self, state, &s) < 0) { leave(self); return NULL; }
    /* per playout: each role's goal entry and the depth, checked for overflow */
    Py_ssize_t per = (Py_ssize_t)self->n_roles;
    int32_t *results = NULL;
    int64_t *depths = NULL;
    /* the answer holds a pair per role and playout: past MAX_RESULT_BYTES of them
       (whatever the allocator would promise) it is refused, not filled for hours */
    Py_ssize_t bytes = checked_mul(n, per * (Py_ssize_t)sizeof(int32_t) +
                                      (Py_ssize_t)sizeof(int64_t));
    if (bytes < 0 || bytes > MAX_RESULT_BYTES) {
        leave(self);
        if (bytes >= 0)
            PyErr_Format(PyExc_MemoryError,
                         "%zd playouts do not fit in one answer (ask for them in parts)", n);
        return NULL;
    }
    uint8_t *buf = ALLOC((Py_ssize_t)self->n_fluents + 1, uint8_t);
    results = ALLOC(checked_mul(n, per > 0 ? per : 1), int32_t);
    depths = ALLOC(n, int64_t);
    if (!buf || !results || !depths) {
        PyMem_Free(buf); PyMem_Free(results); PyMem_Free(depths);
        leave(self);
        return NULL;
    }
    long long steps = 0;
    int64_t stuck = 0;
    Pace pace;
    pace_start(&pace, 0);
    for (Py_ssize_t p = 0; p < n; p++) {
        memcpy(buf, s, (size_t)self->n_fluents);
        int64_t d = playout(self, buf, max_depth, &pace);
        if (d == PLAYOUT_STOPPED || d < 0) { stuck = d; break; }
        steps += d;
        depths[p] = d;
        for (int32_t r = 0; r < self->n_roles; r++) results[p * per + r] = goal_of(self, r);
        if (pace_step(&pace)) { stuck = PLAYOUT_STOPPED; break; }
    }
    pace_end(&pace);
    leave(self);
    PyObject *out = NULL;
    if (stuck == PLAYOUT_STOPPED) {
        /* a signal handler's error is set */
    } else if (stuck < 0) {
        PyObject *state_now = PyBytes_FromStringAndSize((const char *)buf, self->n_fluents);
        if (state_now)
            out = Py_BuildValue("(sLN)", "stuck", (long long)(-1 - stuck), state_now);
    } else {
        PyObject *per_role = PyList_New(self->n_roles);
        for (int32_t r = 0; per_role && r < self->n_roles; r++) {
            PyObject *col = PyList_New(n);
            if (!col) { Py_CLEAR(per_role); break; }
            PyList_SET_ITEM(per_role, r, col);
            for (Py_ssize_t p = 0; p < n; p++) {
                PyObject *v = goal_object(self, results[p * per + r]);
                PyObject *pair = v ? Py_BuildValue("(NL)", v, (long long)depths[p]) : NULL;
                if (!pair) { Py_CLEAR(per_role); break; }
                PyList_SET_ITEM(col, p, pair);
            }
        }
        if (per_role) out = Py_BuildValue("(sNL)", "playouts", per_role, steps);
    }
    PyMem_Free(buf); PyMem_Free(results); PyMem_Free(depths);
    return out;
}

/* tune(state, steps, max_depth, deadline): play random playouts from state (at most
   `steps` steps in all, and none past `deadline`, a time.monotonic() value, 0 for
   none) with every rule looked at, count how often each atom holds, then let each
   rule watch its positive literal that held least often (rules without one are
   always looked at). From then on a rule is looked at only once its watched atom
   holds. Returns the steps played. Tuning twice keeps the first tuning. */
static PyObject *
Network_tune(Network *self, PyObject *args)
{
    PyObject *state, *depth_obj;
    const uint8_t *start;
    Py_ssize_t steps;
    double deadline = 0;
    if (!PyArg_ParseTuple(args, "OnO|d", &state, &steps, &depth_obj, &deadline)) return NULL;
    int64_t max_depth = depth_arg(depth_obj);
    if (max_depth < 0) return NULL;
    if (enter(self) < 0) return NULL;
    if (state_arg(self, state, &start) < 0) { leave(self); return NULL; }
    if (self->watched) { leave(self); return PyLong_FromLong(0); }
    int64_t *count = ALLOC(self->n_atoms, int64_t);
    uint8_t *buf = ALLOC((Py_ssize_t)self->n_fluents + 1, uint8_t);
    int32_t *watch = ALLOC(self->n_rules, int32_t);
    int32_t *wfill = ALLOC(self->n_atoms, int32_t), *afill = ALLOC(self->n_atoms, int32_t);
    int32_t *watch_start = ALLOC((Py_ssize_t)self->n_atoms + 1, int32_t);
    int32_t *always_start = ALLOC((Py_ssize_t)self->n_atoms + 1, int32_t);
    int32_t *watch_rules = ALLOC(self->n_rules, int32_t);
    int32_t *always_rules = ALLOC(self->n_rules, int32_t);
    int32_t *cand_next = ALLOC(self->n_rules, int32_t);
    int32_t *sc_head = ALLOC(self->n_atoms, int32_t), *mc_head = ALLOC(self->n_atoms, int32_t);
    uint32_t *sc_stamp = ALLOC(self->n_atoms, uint32_t);
    uint32_t *mc_stamp = ALLOC(self->n_atoms, uint32_t);
    if (!count || !buf || !watch || !wfill || !afill || !watch_start || !always_start ||
        !watch_rules || !always_rules || !cand_next || !sc_head || !mc_head || !sc_stamp ||
        !mc_stamp) {
        void *all[] = {count, buf, watch, wfill, afill, watch_start, always_start,
                       watch_rules, always_rules, cand_next, sc_head, mc_head, sc_stamp,
                       mc_stamp};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) PyMem_Free(all[i]);
        leave(self);
        return NULL;
    }
    uint64_t saved = self->rng;
    Py_ssize_t done = 0;
    Pace pace;
    pace_start(&pace, deadline);
    for (int p = 0; p < 1000 && done < steps && !pace.stop; p++) {
        memcpy(buf, start, (size_t)self->n_fluents);
        int64_t depth = 0;
        for (;;) {
            install(self, buf);
            if (self->val[self->terminal] || depth >= max_depth || done >= steps) break;
            int stuck = 0;
            for (int32_t r = 0; r < self->n_roles; r++) {
                Py_ssize_t k = 0;
                for (int32_t i = self->legal_start[r]; i < self->legal_start[r + 1]; i++)
                    if (self->val[self->legal_atom[i]]) self->choice[k++] = self->legal_move[i];
                if (k == 0) { stuck = 1; break; }
                self->joint[r] = self->choice[next_random(self) % (uint64_t)k];
            }
            if (stuck) break;
            successor(self, buf);
            for (int32_t a = 0; a < self->n_atoms; a++) count[a] += self->val[a];
            depth++; done++;
            if (pace_step(&pace)) break;
        }
    }
    pace_end(&pace);
    self->rng = saved;
    if (pace.stop == 1) {   /* a signal handler raised: nothing changes */
        void *all[] = {count, buf, watch, wfill, afill, watch_start, always_start,
                       watch_rules, always_rules, cand_next, sc_head, mc_head, sc_stamp,
                       mc_stamp};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) PyMem_Free(all[i]);
        leave(self);
        return NULL;
    }
    /* the watch of each rule (past the deadline: from what was counted so far) */
    for (int32_t r = 0; r < self->n_rules; r++) {
        int32_t best = -1;
        for (int32_t i = self->lit_start[r]; i < self->lit_start[r + 1]; i++) {
            int32_t lit = self->lits[i];
            if (lit & 1) continue;
            int32_t a = lit >> 1;
            /* fewest times true; on a tie, the joint move's bits (one per role) */
            if (best < 0 || count[a] < count[best] ||
                (count[a] == count[best] && self->moving[a] && !self->moving[best]))
                best = a;
        }
        watch[r] = best;
    }
    for (int32_t r = 0; r < self->n_rules; r++) {
        if (watch[r] >= 0) watch_start[watch[r] + 1]++;
        else always_start[self->rule_head[r] + 1]++;
    }
    for (int32_t a = 0; a < self->n_atoms; a++) {
        watch_start[a + 1] += watch_start[a];
        always_start[a + 1] += always_start[a];
    }
    for (int32_t r = 0; r < self->n_rules; r++) {
        if (watch[r] >= 0) {
            int32_t a = watch[r];
            watch_rules[watch_start[a] + wfill[a]++] = r;
        } else {
            int32_t h = self->rule_head[r];
            always_rules[always_start[h] + afill[h]++] = r;
        }
    }
    PyMem_Free(wfill); PyMem_Free(afill); PyMem_Free(count); PyMem_Free(watch);
    PyMem_Free(buf);
    self->watch_start = watch_start; self->always_start = always_start;
    self->watch_rules = watch_rules; self->always_rules = always_rules;
    self->cand_next = cand_next; self->sc_head = sc_head; self->mc_head = mc_head;
    self->sc_stamp = sc_stamp; self->mc_stamp = mc_stamp;
    self->state_epoch = self->move_epoch = 1;
    self->watched = 1;
    self->has_current = 0;
    if (self->can_events) {
        /* from all-false: the atoms with a rule without positive literal are looked at
           in every run, the rest on events. A cyclic group too: an atom of it can
           become true first only by a rule without positive literal of the group, which
           watches an atom outside the group (a pending bit) or has none (always). */
        for (int32_t a = 0; a < self->n_atoms; a++) {
            if (!self->program_of[a]) continue;
            if (self->always_start[a] < self->always_start[a + 1])
                mark(self->program_of[a] == 1 ? self->always_state : self->always_move, a);
        }
        int32_t first = self->n_fluents + self->n_moves;
        memset(self->val + first, 0, (size_t)(self->n_atoms - first));
        self->n_true_state = self->n_true_move = 0;
        memset(self->pend_state, 0, sizeof(uint64_t) * (size_t)self->n_words);
        memset(self->pend_ms, 0, sizeof(uint64_t) * (size_t)self->n_words);
        memset(self->pend_mm, 0, sizeof(uint64_t) * (size_t)self->n_words);
        self->events = 1;
    }
    leave(self);
    return PyLong_FromSsize_t(done);
}

/* _set_epochs(state, move): put the candidate lists' epoch counters where a test wants
   them (near their wrap); the lists are stale from then on only if the counters lie. */
static PyObject *
Network_set_epochs(Network *self, PyObject *args)
{
    unsigned int se, me;
    if (!PyArg_ParseTuple(args, "II", &se, &me)) return NULL;
    if (enter(self) < 0) return NULL;
    if (self->watched) {
        self->state_epoch = se;
        self->move_epoch = me;
    }
    leave(self);
    Py_RETURN_NONE;
}

/* Alike on purpose: one row a method, its signature in its docstring (CPython's way). */
static PyMethodDef Network_methods[] = {
    {"step", (PyCFunction)Network_step, METH_VARARGS,
     "step(state, joint, full) -> ('illegal', role) | state | (state, terminal, legal); "
     "full 2: legal moves as set_moves' objects"},
    {"set_moves", (PyCFunction)Network_set_moves, METH_O,
     "set_moves(objects): the tuple of objects standing for the moves, by index"},
    {"tune", (PyCFunction)Network_tune, METH_VARARGS,
     "tune(state, steps, max_depth, deadline=0) -> steps played: let each rule watch its "
     "rarest literal"},
    {"legal", (PyCFunction)Network_legal, METH_O,
     "legal(state) -> per role, the indices of its legal moves (in the network's order)"},
    {"terminal", (PyCFunction)Network_terminal, METH_O, "terminal(state) -> bool"},
    {"goals", (PyCFunction)Network_goals, METH_O,
     "goals(state) -> per role, the indices of its goal values that hold"},
    {"next", (PyCFunction)Network_next, METH_VARARGS,
     "next(state, joint) -> the next state (legality is not checked)"},
    {"sees", (PyCFunction)Network_sees, METH_VARARGS,
     "sees(state, joint) -> per role, the indices of its percepts (legality is not "
     "checked)"},
    {"depth_charge", (PyCFunction)Network_depth_charge, METH_VARARGS,
     "depth_charge(state, max_depth) -> ('done', state, depth) | ('stuck', role, state)"},
    {"playouts", (PyCFunction)Network_playouts, METH_VARARGS,
     "playouts(state, n, max_depth) -> ('playouts', per role [(goal, depth)], steps) | "
     "('stuck', role, state)"},
    {"seed", (PyCFunction)Network_seed, METH_O, "seed(int): seed the playout generator"},
    {"_set_epochs", (PyCFunction)Network_set_epochs, METH_VARARGS,
     "_set_epochs(state, move): a test's hook: the candidate lists' epoch counters"},
    {NULL, NULL, 0, NULL}
};

static PyTypeObject NetworkType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gdl2pl.compiled._network.Network",
    .tp_basicsize = sizeof(Network),
    .tp_dealloc = (destructor)Network_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A propositional network held in integer arrays (compiled/network.py).",
    .tp_methods = Network_methods,
    .tp_init = (initproc)Network_init,
    .tp_new = Network_new,
};

/* ---- batches of games ------------------------------------------------------------ */

/* A Batch holds N games of one network and steps them together: one call steps every
   game (or those a mask names) and writes what learning code reads into arrays it was
   given when built (any writable C-contiguous buffer: numpy arrays, array.array,
   bytearray; this file needs no numpy): per game the observation row, per role the
   legal-action mask and the reward, whether the game has ended, the role to move, and
   whether an illegal action ended it.

   Bit-sliced: the games go in groups of 64, 128 or 256 (the batch's width: 1, 2 or 4
   64-bit words), and a group's states are held as one word (or 2, 4) per fluent, bit k
   for its k-th game. A group is evaluated at once, every atom's value a word: a rule
   is the AND of its literals' words, an atom the OR of its rules', a cyclic group's
   least fixpoint found by a worklist of the atoms whose words grew (each grows at most
   once a game: linear work, however the cycle is ordered). So a group costs one pass
   over the rules, where one game alone costs a watched evaluation (tune()); a group
   with few games to step (at most `solo`) steps them one by one that way instead. A step of a group: the fluents' words and the interface's
   (the state program's atoms that the move program or a next reads, saved at the
   group's last evaluation) and the joint moves' bits; the move program; the next
   state's words (games not stepped keep theirs); the state program; the outputs.

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

enum { OUT_OBS, OUT_MASKS, OUT_REWARDS, OUT_TERMINATED, OUT_MOVER, OUT_ILLEGAL, N_OUT };

/* What a state can break of the adapters' contract. The problem reported is the first
   by game, then stage (a fluent without observation entry; a role's legal moves; its
   goals), then detail (the fluent's or the role's index), whatever the order the games
   were evaluated in. */
enum { P_NONE, P_MISSING_GOAL, P_NO_GOAL, P_GOALS, P_NO_LEGAL, P_NO_ACTION, P_UNOBSERVED };
static const char *problem_names[] = {
    "", "missing goal", "no goal", "goals", "no legal move", "move without action",
    "fluent without observation"
};
static const int problem_stage[] = {2, 2, 2, 2, 1, 1, 0};

/* What a step does to one game. */
enum { PLAN_NONE, PLAN_STEP, PLAN_RESET, PLAN_ILLEGAL, PLAN_LOAD };

/* The most 64-bit words per atom of a group of games. A batch's width is 1, 2 or 4
   words (64, 128 or 256 games a group), the least that holds its games up to 4: a
   rule's literals are read once for up to 256 games (breakthrough's batch of 1,024 ran
   1.85 times as fast as with one word, checkers' twice), and a small batch keeps its
   words close together (a batch of 64 on a 4-word layout ran at half speed). */
#define WORDS 4

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
    int obs_float, rewards_double;
    uint64_t rng;
    int hard_kind, soft_kind;              /* the first problems of a call */
    Py_ssize_t hard_game, soft_game;
    int32_t hard_detail, soft_detail;
} Batch;

static PyTypeObject BatchType;

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

static inline int
bit(const uint8_t *bits, Py_ssize_t k)
{
    return (bits[k >> 3] >> (k & 7)) & 1;
}

/* n bytes, each 0 or 1, packed into n_bytes bytes (bit k: byte k, lowest bit first). */
static void
pack(uint8_t *out, const uint8_t *bytes, Py_ssize_t n, Py_ssize_t n_bytes)
{
    memset(out, 0, (size_t)n_bytes);
    for (Py_ssize_t k = 0; k < n; k++) out[k >> 3] |= (uint8_t)((bytes[k] & 1) << (k & 7));
}

/* bits (as pack makes them) into n bytes of 0 or 1 */
static void
unpack(uint8_t *out, const uint8_t *bits, Py_ssize_t n)
{
    for (Py_ssize_t k = 0; k < n; k++) out[k] = (uint8_t)bit(bits, k);
}

/* Game i's lane of n atoms' words (the batch's width each, from `words`: a group's
   first) as n bytes of 0 or 1, and back. */
static void
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
    if (count == 1) {
        x = b->goal_return[found];
        if (isnan(x)) { note_problem(b, P_GOALS, i, r); x = 0.0; }
    } else if (count == 0) {
        x = b->missing_return;
        if (isnan(x)) { note_problem(b, P_NO_GOAL, i, r); x = 0.0; }
        else note_problem(b, P_MISSING_GOAL, i, r);
    } else {
        note_problem(b, P_GOALS, i, r);
        x = 0.0;
    }
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
    if (any_load) {
        memset(b->load_words, 0, sizeof(uint64_t) * fwords);
        EACH_LANE(b, load, lane, {
            unpack(b->scratch, states + (base + lane) * b->state_bytes, nf);
            for (int32_t f = 0; f < nf; f++)
                b->load_words[(size_t)f * nw + lane / 64] |=
                    (uint64_t)b->scratch[f] << (lane % 64);
        })
    }
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

/* Every game's plan in b->plan, group by group, with the GIL released after the first
   milliseconds. Returns 0, or -1 with a signal handler's error set (every game has
   still run). */
static int
run_plans(Batch *b, const uint8_t *states)
{
    Pace pace;
    pace_start(&pace, 0);
    b->hard_kind = b->soft_kind = P_NONE;
    for (Py_ssize_t g = 0; g < b->n_groups; g++) {
        run_group(b, g, states);
        if (!pace.stop) pace_check(&pace);
    }
    pace_end(&pace);
    return pace.stop == 1 ? -1 : 0;
}

/* None, or (kind, game, detail) of the first problem of the call: a breach of the
   adapters' contract first, else a role without goal given the missing-goal reward. */
static PyObject *
problem_result(Batch *b)
{
    if (b->hard_kind)
        return Py_BuildValue("(sni)", problem_names[b->hard_kind], b->hard_game, b->hard_detail);
    if (b->soft_kind)
        return Py_BuildValue("(sni)", problem_names[b->soft_kind], b->soft_game, b->soft_detail);
    Py_RETURN_NONE;
}
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

/* Take the batch's network for one call (see enter); a network built again since the
   batch was made is refused. */
static int
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


static void
Batch_dealloc(Batch *b)
{
    void *arrays[] = {b->iface, b->move_action, b->action_move, b->obs_start, b->obs_at,
                      b->goal_return, b->init, b->init_words, b->fw, b->iw, b->words,
                      b->next_words, b->load_words, b->wqueue, b->queued, b->lane_count,
                      b->lane_last, b->goal_count, b->goal_found, b->legals, b->done,
                      b->only, b->plan, b->culprit, b->joints, b->scratch, b->next,
                      b->iface_vals, b->mw_start, b->mw_rules, b->counts, b->move_lo,
                      b->move_hi};
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++) PyMem_Free(arrays[k]);
    for (int k = 0; k < N_OUT; k++) if (b->out[k].obj) PyBuffer_Release(&b->out[k]);
    Py_XDECREF(b->net);
    Py_TYPE(b)->tp_free((PyObject *)b);
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

/* The part of building done under the network's lock: sizes checked against the
   network's, tables, per-game arrays, every game in the initial state. */
static int
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
    b->width = b->n > 128 ? 4 : b->n > 64 ? 2 : 1;
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
        !b->next_words || !b->load_words || !b->words || !b->queued || !b->wqueue ||
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
    b->rng = 0x9E3779B97F4A7C15ULL;
    b->solo = 4;
    memset(b->plan, PLAN_RESET, (size_t)b->n);
    return run_plans(b, NULL);
}
/* Batch(network, n, init, move_action, n_actions, obs_start, obs_at, obs_size,
         goal_returns, missing_return, observations, masks, rewards, terminated, mover,
         illegal): see the section's comment. The output buffers are held for the
   batch's life: observations n * obs_size items (1 byte or float32), masks
   n * roles * n_actions (1 byte), rewards n * roles (float32 or float64), terminated
   n (1 byte), mover n (int32), illegal n (1 byte). Every game starts in `init`. */
static PyObject *
Batch_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"network", "n", "init", "move_action", "n_actions", "obs_start",
                            "obs_at", "obs_size", "goal_returns", "missing_return",
                            "observations", "masks", "rewards", "terminated", "mover",
                            "illegal", NULL};
    PyObject *net, *init, *ma, *os, *oa, *gr, *outs[N_OUT];
    Py_ssize_t n, obs_size;
    int n_actions;
    double missing;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!nOOiOOnOdOOOOOO:Batch", names,
                                     &NetworkType, &net, &n, &init, &ma, &n_actions, &os,
                                     &oa, &obs_size, &gr, &missing, &outs[0], &outs[1],
                                     &outs[2], &outs[3], &outs[4], &outs[5]))
        return NULL;
    if (n < 1 || n_actions < 1 || obs_size < 0 || obs_size > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError,
                        "a batch has n >= 1 games, n_actions >= 1, 0 <= obs_size < 2**31");
        return NULL;
    }
    Batch *b = (Batch *)type->tp_alloc(type, 0);
    if (!b) return NULL;
    Py_INCREF(net);
    b->net = (Network *)net;
    b->n = n;
    b->n_actions = n_actions;
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
    const int32_t R = b->n_roles, A = b->n_actions;
    const uint8_t *on = active.buf;
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
                long long a = wide ? (long long)((const int64_t *)actions.buf)[k]
                                   : (long long)((const int32_t *)actions.buf)[k];
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
    PyBuffer_Release(&actions);
    release_active(&active);
    if (bad_game >= 0) {
        leave(b->net);
        if (bad_role < 0)
            PyErr_Format(PyExc_ValueError, "game %zd has ended: reset it (or step with "
                         "autoreset)", bad_game);
        else
            PyErr_Format(PyExc_ValueError, "game %zd: action %lld of role %d is not legal "
                         "there", bad_game, bad_action, (int)bad_role);
        return NULL;
    }
    int failed = run_plans(b, NULL) < 0;
    leave(b->net);
    return failed ? NULL : problem_result(b);
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
    uint64_t z = (uint64_t)s + 0x9E3779B97F4A7C15ULL;   /* splitmix64, as Network.seed */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    b->rng = z ? z : 1;
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
    uint8_t *bytes = (uint8_t *)PyBytes_AS_STRING(out);
    for (Py_ssize_t i = 0; i < b->n; i++) {
        lane_get(b, b->fw, b->n_fluents, i, b->scratch);
        pack(bytes + i * b->state_bytes, b->scratch, b->n_fluents, b->state_bytes);
    }
    leave(b->net);
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
    {"memory", T_PYSSIZET, offsetof(Batch, memory), READONLY,
     "bytes of the batch's own arrays (the output buffers are the caller's)"},
    {"solo", T_INT, offsetof(Batch, solo), 0,
     "a group of games with at most this many to change steps them one by one "
     "(watched evaluation) rather than bit-sliced (default 4; 0: never, 256: always)"},
    {NULL, 0, 0, 0, NULL}
};

static PyTypeObject BatchType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gdl2pl.compiled._network.Batch",
    .tp_basicsize = sizeof(Batch),
    .tp_dealloc = (destructor)Batch_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "N games of one network stepped together, bit-sliced, outputs written to "
              "arrays (see compiled/_network.c).",
    .tp_methods = Batch_methods,
    .tp_members = Batch_members,
    .tp_new = Batch_new,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_network",
    "The compiled engine's network evaluator (one generic interpreter, no game code).",
    -1, NULL
};

PyMODINIT_FUNC
PyInit__network(void)
{
    if (PyType_Ready(&NetworkType) < 0 || PyType_Ready(&BatchType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&NetworkType);
    if (PyModule_AddObject(m, "Network", (PyObject *)&NetworkType) < 0) {
        Py_DECREF(&NetworkType); Py_DECREF(m); return NULL;
    }
    Py_INCREF(&BatchType);
    if (PyModule_AddObject(m, "Batch", (PyObject *)&BatchType) < 0) {
        Py_DECREF(&BatchType); Py_DECREF(m); return NULL;
    }
    return m;
}
