/*  _network: the compiled engine's evaluator of a propositional network.

    One generic interpreter: a game's network arrives as integer arrays (see
    compiled/network.py for their meaning), never as code, so nothing of a game's
    text reaches C. A state is a bytes object with one byte (0 or 1) per fluent; a
    joint move is a list of move indices. Random playouts run entirely here, with
    their own seeded generator (xorshift64*).

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
    int32_t *move_legal;   /* n_moves: the legal atom of each move (-1: never legal) */
    int32_t *move_role;    /* n_moves: the role whose legal atom it has */
    int32_t *choice;       /* scratch: legal moves of one role */
    int32_t *joint;        /* scratch: one move per role */
    int32_t *result_moves; /* scratch: legal moves found, n_legal entries */
    Py_ssize_t *result_count; /* scratch: per role, how many of them */
    uint64_t rng;
    PyObject *move_objects;  /* NULL, or a tuple: the object that stands for each move */
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
                      self->val, self->current, self->choice, self->joint,
                      self->rule_head, self->moving, self->watch_start, self->watch_rules,
                      self->always_start, self->always_rules, self->cand_next, self->sc_head,
                      self->mc_head, self->sc_stamp, self->mc_stamp, self->move_legal,
                      self->move_role, self->group_of, self->occ_start, self->occ_rules,
                      self->missing, self->queue, self->result_moves, self->result_count,
                      self->sees_start, self->sees_atom, self->sees_percept};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) PyMem_Free(arrays[i]);
    self->rule_start = self->lit_start = self->lits = self->state_prog = NULL;
    self->move_prog = self->legal_start = self->legal_atom = self->legal_move = NULL;
    self->next_atom = self->next_fluent = self->goal_start = self->goal_atom = NULL;
    self->val = self->current = self->moving = NULL;
    self->choice = self->joint = self->rule_head = self->watch_start = NULL;
    self->watch_rules = self->always_start = self->always_rules = self->cand_next = NULL;
    self->sc_head = self->mc_head = self->move_legal = self->move_role = NULL;
    self->sc_stamp = self->mc_stamp = NULL;
    self->group_of = self->occ_start = self->occ_rules = self->missing = self->queue = NULL;
    self->result_moves = NULL;
    self->result_count = NULL;
    self->sees_start = self->sees_atom = self->sees_percept = NULL;
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
    if (!self->val || !self->current || !self->joint || !self->rule_head || !self->moving ||
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
push(Network *self, int32_t a)
{
    int move = self->moving[a];
    for (int32_t i = self->watch_start[a]; i < self->watch_start[a + 1]; i++) {
        int32_t r = self->watch_rules[i], h = self->rule_head[r];
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
    for (int32_t f = 0; f < self->n_fluents; f++) self->val[f] = state[f] != 0;
    if (self->watched) {
        next_state_epoch(self);
        for (int32_t f = 0; f < self->n_fluents; f++) if (self->val[f]) push(self, f);
    }
    run(self, self->state_prog, self->n_state_prog);
    memcpy(self->current, state, (size_t)self->n_fluents);
    self->has_current = 1;
}

/* The state after the joint move in self->joint (the state program has run). */
static void
successor(Network *self, uint8_t *out)
{
    uint8_t *moves = self->val + self->n_fluents;
    memset(moves, 0, (size_t)self->n_moves);
    for (int32_t r = 0; r < self->n_roles; r++) moves[self->joint[r]] = 1;
    if (self->watched) {
        next_move_epoch(self);
        for (int32_t r = 0; r < self->n_roles; r++)
            push(self, self->n_fluents + self->joint[r]);
    }
    run(self, self->move_prog, self->n_move_prog);
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

/* The installed state's legal moves into result_moves / result_count (C only). */
static void
collect_legal(Network *self)
{
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

static PyObject *
Network_legal(Network *self, PyObject *state)
{
    const uint8_t *s;
    if (enter(self) < 0) return NULL;
    if (state_arg(self, state, &s) < 0) { leave(self); return NULL; }
    install(self, s);
    collect_legal(self);
    PyObject *out = legal_result(self, NULL);
    leave(self);
    return out;
}

static PyObject *
Network_terminal(Network *self, PyObject *state)
{
    const uint8_t *s;
    if (enter(self) < 0) return NULL;
    if (state_arg(self, state, &s) < 0) { leave(self); return NULL; }
    install(self, s);
    int t = self->val[self->terminal];
    leave(self);
    return PyBool_FromLong(t);
}

static PyObject *
Network_goals(Network *self, PyObject *state)
{
    const uint8_t *s;
    if (enter(self) < 0) return NULL;
    if (state_arg(self, state, &s) < 0) { leave(self); return NULL; }
    install(self, s);
    /* the goal entries that hold, into the result buffer first (no allocation yet):
       result_moves has room for as many entries as legal moves only, so count here */
    PyObject *out = PyList_New(self->n_roles);
    if (!out) { leave(self); return NULL; }
    for (int32_t r = 0; r < self->n_roles; r++) {
        Py_ssize_t k = 0;
        for (int32_t i = self->goal_start[r]; i < self->goal_start[r + 1]; i++)
            k += self->val[self->goal_atom[i]] != 0;
        PyObject *vs = PyList_New(k);
        if (!vs) { Py_DECREF(out); leave(self); return NULL; }
        /* the lock is held: no other call can change val while the list is filled */
        Py_ssize_t j = 0;
        for (int32_t i = self->goal_start[r]; i < self->goal_start[r + 1] && j < k; i++) {
            if (!self->val[self->goal_atom[i]]) continue;
            PyObject *x = PyLong_FromLong(i - self->goal_start[r]);
            if (!x) { Py_DECREF(vs); Py_DECREF(out); leave(self); return NULL; }
            PyList_SET_ITEM(vs, j++, x);
        }
        PyList_SET_ITEM(out, r, vs);
    }
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

static PyObject *
Network_next(Network *self, PyObject *args)
{
    PyObject *state, *moves;
    const uint8_t *s;
    if (!PyArg_ParseTuple(args, "OO", &state, &moves)) return NULL;
    if (enter(self) < 0) return NULL;
    if (state_arg(self, state, &s) < 0) { leave(self); return NULL; }
    PyObject *out = PyBytes_FromStringAndSize(NULL, self->n_fluents);
    if (!out) { leave(self); return NULL; }
    install(self, s);
    if (joint_arg(self, moves, 0) == -2) { Py_DECREF(out); leave(self); return NULL; }
    successor(self, (uint8_t *)PyBytes_AS_STRING(out));
    leave(self);
    return out;
}

/* sees(state, joint) -> per role, the indices of its percepts (GDL-II's sees) when the
   joint move (one move index per role; legality is not checked) is played in state. */
static PyObject *
Network_sees(Network *self, PyObject *args)
{
    PyObject *state, *moves;
    const uint8_t *s;
    if (!PyArg_ParseTuple(args, "OO", &state, &moves)) return NULL;
    if (enter(self) < 0) return NULL;
    if (state_arg(self, state, &s) < 0) { leave(self); return NULL; }
    uint8_t *buf = ALLOC((Py_ssize_t)self->n_fluents + 1, uint8_t);
    if (!buf) { leave(self); return NULL; }
    install(self, s);
    if (joint_arg(self, moves, 0) == -2) { PyMem_Free(buf); leave(self); return NULL; }
    successor(self, buf);
    PyMem_Free(buf);
    /* the percepts that hold, counted then listed: val cannot change meanwhile (the
       network is held by this call) */
    PyObject *out = PyList_New(self->n_roles);
    for (int32_t r = 0; out && r < self->n_roles; r++) {
        Py_ssize_t k = 0;
        for (int32_t i = self->sees_start[r]; i < self->sees_start[r + 1]; i++)
            k += self->val[self->sees_atom[i]] != 0;
        PyObject *ps = PyList_New(k);
        if (!ps) { Py_CLEAR(out); break; }
        PyList_SET_ITEM(out, r, ps);
        Py_ssize_t j = 0;
        for (int32_t i = self->sees_start[r]; i < self->sees_start[r + 1] && j < k; i++) {
            if (!self->val[self->sees_atom[i]]) continue;
            PyObject *x = PyLong_FromLong(self->sees_percept[i]);
            if (!x) { Py_CLEAR(out); break; }
            PyList_SET_ITEM(ps, j++, x);
        }
    }
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

static inline uint64_t
next_random(Network *self)
{
    uint64_t x = self->rng;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    self->rng = x;
    return x * 0x2545F4914F6CDD1DULL;
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
        for (int32_t r = 0; r < self->n_roles; r++) {
            Py_ssize_t k = 0;
            for (int32_t i = self->legal_start[r]; i < self->legal_start[r + 1]; i++)
                if (self->val[self->legal_atom[i]]) self->choice[k++] = self->legal_move[i];
            if (k == 0) return -1 - (int64_t)r;
            self->joint[r] = self->choice[next_random(self) % (uint64_t)k];
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

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_network",
    "The compiled engine's network evaluator (one generic interpreter, no game code).",
    -1, NULL
};

PyMODINIT_FUNC
PyInit__network(void)
{
    if (PyType_Ready(&NetworkType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&NetworkType);
    if (PyModule_AddObject(m, "Network", (PyObject *)&NetworkType) < 0) {
        Py_DECREF(&NetworkType); Py_DECREF(m); return NULL;
    }
    return m;
}
