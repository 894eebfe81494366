/*  _network: the compiled engine's evaluator of a propositional network.

    One generic interpreter: a game's network arrives as integer arrays (see
    compiled/network.py for their meaning), never as code, so nothing of a game's
    text reaches C. A state is a bytes object with one byte (0 or 1) per fluent; a
    joint move is a list of move indices. Random playouts run entirely here, with
    their own seeded generator (xorshift64*).

    Every call holds the GIL: one Network object is used by one thread at a time.
*/

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    PyObject_HEAD
    int n_atoms, n_fluents, n_moves, n_roles;
    int32_t *rule_start;   /* n_atoms + 1 */
    int32_t *lit_start;    /* n_rules + 1 */
    int32_t *lits;
    int32_t *state_prog; int n_state_prog;
    int32_t *move_prog; int n_move_prog;
    int32_t *legal_start;  /* n_roles + 1, into legal_atom / legal_move */
    int32_t *legal_atom, *legal_move;
    int32_t *next_atom, *next_fluent; int n_next;
    int32_t terminal;
    int32_t *goal_start;   /* n_roles + 1 */
    int32_t *goal_atom, *goal_value;  /* value: the number, or -1 if not numeric */
    uint8_t *val;          /* every atom's value */
    uint8_t *current;      /* the state whose state program val holds */
    int has_current;
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
    int n_rules;
    int32_t *move_legal;   /* n_moves: the legal atom of each move (-1: never legal) */
    int32_t *move_role;    /* n_moves: the role whose legal atom it has */
    int32_t *choice;       /* scratch: legal moves of one role */
    int32_t *joint;        /* scratch: one move per role */
    uint64_t rng;
    PyObject *move_objects;  /* NULL, or a tuple: the object that stands for each move */
} Network;

static void *
alloc_ints(Py_ssize_t n)
{
    return PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof(int32_t));
}

/* A Python sequence of ints as a fresh int32 array; its length in *n. */
static int32_t *
ints(PyObject *seq, Py_ssize_t *n, const char *what)
{
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast) return NULL;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    int32_t *out = alloc_ints(len);
    if (!out) { Py_DECREF(fast); PyErr_NoMemory(); return NULL; }
    for (Py_ssize_t i = 0; i < len; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        if (v == -1 && PyErr_Occurred()) { PyMem_Free(out); Py_DECREF(fast); return NULL; }
        out[i] = (int32_t)v;
    }
    Py_DECREF(fast);
    if (n) *n = len;
    return out;
}

/* Per role, a list of (a, b) pairs: flattened into start/first/second arrays. */
static int
pairs_per_role(PyObject *seq, int n_roles, int32_t **start, int32_t **first, int32_t **second)
{
    PyObject *fast = PySequence_Fast(seq, "a list per role");
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != n_roles) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "one list per role expected");
        return -1;
    }
    Py_ssize_t total = 0;
    for (int r = 0; r < n_roles; r++) {
        Py_ssize_t k = PySequence_Size(PySequence_Fast_GET_ITEM(fast, r));
        if (k < 0) { Py_DECREF(fast); return -1; }
        total += k;
    }
    *start = alloc_ints(n_roles + 1);
    *first = alloc_ints(total);
    *second = alloc_ints(total);
    if (!*start || !*first || !*second) { Py_DECREF(fast); PyErr_NoMemory(); return -1; }
    Py_ssize_t at = 0;
    for (int r = 0; r < n_roles; r++) {
        (*start)[r] = (int32_t)at;
        PyObject *items = PySequence_Fast(PySequence_Fast_GET_ITEM(fast, r), "pairs");
        if (!items) { Py_DECREF(fast); return -1; }
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(items); i++) {
            int a, b;
            if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(items, i), "ii", &a, &b)) {
                Py_DECREF(items); Py_DECREF(fast); return -1;
            }
            (*first)[at] = a; (*second)[at] = b; at++;
        }
        Py_DECREF(items);
    }
    (*start)[n_roles] = (int32_t)at;
    Py_DECREF(fast);
    return 0;
}

static void
Network_dealloc(Network *self)
{
    void *arrays[] = {self->rule_start, self->lit_start, self->lits, self->state_prog,
                      self->move_prog, self->legal_start, self->legal_atom, self->legal_move,
                      self->next_atom, self->next_fluent, self->goal_start, self->goal_atom,
                      self->goal_value, self->val, self->current, self->choice, self->joint,
                      self->rule_head, self->moving, self->watch_start, self->watch_rules,
                      self->always_start, self->always_rules, self->cand_next, self->sc_head,
                      self->mc_head, self->sc_stamp, self->mc_stamp, self->move_legal,
                      self->move_role};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) PyMem_Free(arrays[i]);
    Py_CLEAR(self->move_objects);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
in_range(const int32_t *xs, Py_ssize_t n, int32_t lo, int32_t hi)
{
    for (Py_ssize_t i = 0; i < n; i++) if (xs[i] < lo || xs[i] >= hi) return 0;
    return 1;
}

/* Every cycle marker -k of a program is followed by k atoms (>= 0). */
static int
program_fits(const int32_t *prog, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    while (i < n) {
        if (prog[i] >= 0) { i++; continue; }
        Py_ssize_t k = -(Py_ssize_t)prog[i];
        if (i + k >= n) return 0;
        for (Py_ssize_t j = 1; j <= k; j++) if (prog[i + j] < 0) return 0;
        i += k + 1;
    }
    return 1;
}

/* Network(n_atoms, n_fluents, n_moves, rule_start, lit_start, lits, state_program,
           move_program, legal, next, terminal, goals) */
static int
Network_init(Network *self, PyObject *args, PyObject *kw)
{
    PyObject *rs, *ls, *lits, *sp, *mp, *legal, *next, *goals;
    int terminal;
    if (self->val) {
        PyErr_SetString(PyExc_RuntimeError, "a Network is initialized once");
        return -1;
    }
    if (!PyArg_ParseTuple(args, "iiiOOOOOOOiO", &self->n_atoms, &self->n_fluents,
                          &self->n_moves, &rs, &ls, &lits, &sp, &mp, &legal, &next,
                          &terminal, &goals))
        return -1;
    if (self->n_atoms < self->n_fluents + self->n_moves + 1 || self->n_fluents < 0 ||
        self->n_moves < 0) {
        PyErr_SetString(PyExc_ValueError, "inconsistent network sizes");
        return -1;
    }
    Py_ssize_t n_rs, n_ls, n_lits, n, n_roles = PySequence_Size(legal);
    if (n_roles < 0) return -1;
    self->n_roles = (int)n_roles;
    if (!(self->rule_start = ints(rs, &n_rs, "rule_start"))) return -1;
    if (!(self->lit_start = ints(ls, &n_ls, "lit_start"))) return -1;
    if (!(self->lits = ints(lits, &n_lits, "lits"))) return -1;
    Py_ssize_t nsp, nmp;
    if (!(self->state_prog = ints(sp, &nsp, "state_program"))) return -1;
    if (!(self->move_prog = ints(mp, &nmp, "move_program"))) return -1;
    self->n_state_prog = (int)nsp; self->n_move_prog = (int)nmp;
    if (n_rs != self->n_atoms + 1 || !in_range(self->rule_start, n_rs, 0, (int32_t)n_ls) ||
        !in_range(self->lit_start, n_ls, 0, (int32_t)n_lits + 1) ||
        !in_range(self->lits, n_lits, 0, 2 * self->n_atoms) ||
        !in_range(self->state_prog, nsp, -self->n_atoms, self->n_atoms) ||
        !in_range(self->move_prog, nmp, -self->n_atoms, self->n_atoms) ||
        terminal < 0 || terminal >= self->n_atoms) {
        PyErr_SetString(PyExc_ValueError, "network arrays out of range");
        return -1;
    }
    if (!program_fits(self->state_prog, nsp) || !program_fits(self->move_prog, nmp)) {
        PyErr_SetString(PyExc_ValueError, "a cycle of a program runs past its end");
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
    self->terminal = terminal;
    if (pairs_per_role(legal, self->n_roles, &self->legal_start, &self->legal_atom,
                       &self->legal_move) < 0)
        return -1;
    if (pairs_per_role(goals, self->n_roles, &self->goal_start, &self->goal_atom,
                       &self->goal_value) < 0)
        return -1;
    n = self->legal_start[self->n_roles];
    if (!in_range(self->legal_atom, n, 0, self->n_atoms) ||
        !in_range(self->legal_move, n, 0, self->n_moves) ||
        !in_range(self->goal_atom, self->goal_start[self->n_roles], 0, self->n_atoms)) {
        PyErr_SetString(PyExc_ValueError, "legal or goal atoms out of range");
        return -1;
    }
    PyObject *nexts = PySequence_Fast(next, "next pairs");
    if (!nexts) return -1;
    self->n_next = (int)PySequence_Fast_GET_SIZE(nexts);
    self->next_atom = alloc_ints(self->n_next);
    self->next_fluent = alloc_ints(self->n_next);
    for (int i = 0; i < self->n_next; i++) {
        int a, f;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(nexts, i), "ii", &a, &f)) {
            Py_DECREF(nexts); return -1;
        }
        if (a < 0 || a >= self->n_atoms || f < 0 || f >= self->n_fluents) {
            Py_DECREF(nexts);
            PyErr_SetString(PyExc_ValueError, "next pair out of range");
            return -1;
        }
        self->next_atom[i] = a; self->next_fluent[i] = f;
    }
    Py_DECREF(nexts);
    self->val = PyMem_Calloc((size_t)self->n_atoms, 1);
    self->current = PyMem_Calloc((size_t)self->n_fluents + 1, 1);
    self->choice = alloc_ints(self->n_moves + 1);
    self->joint = alloc_ints(self->n_roles + 1);
    if (!self->val || !self->current || !self->choice || !self->joint) {
        PyErr_NoMemory(); return -1;
    }
    self->has_current = 0;
    self->rng = 0x9E3779B97F4A7C15ULL;
    self->n_rules = (int)(n_ls - 1);
    self->rule_head = alloc_ints(self->n_rules);
    self->moving = PyMem_Calloc((size_t)self->n_atoms, 1);
    if (!self->rule_head || !self->moving) { PyErr_NoMemory(); return -1; }
    for (int a = 0; a < self->n_atoms; a++)
        for (int32_t r = self->rule_start[a]; r < self->rule_start[a + 1]; r++)
            self->rule_head[r] = a;
    memset(self->moving + self->n_fluents, 1, (size_t)self->n_moves);
    for (int i = 0; i < self->n_move_prog; i++)
        if (self->move_prog[i] >= 0) self->moving[self->move_prog[i]] = 1;
    self->watched = 0;
    self->move_legal = alloc_ints(self->n_moves);
    self->move_role = alloc_ints(self->n_moves);
    if (!self->move_legal || !self->move_role) { PyErr_NoMemory(); return -1; }
    for (int m = 0; m < self->n_moves; m++) self->move_legal[m] = self->move_role[m] = -1;
    for (int r = 0; r < self->n_roles; r++)
        for (int32_t i = self->legal_start[r]; i < self->legal_start[r + 1]; i++) {
            self->move_legal[self->legal_move[i]] = self->legal_atom[i];
            self->move_role[self->legal_move[i]] = r;
        }
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

static void
run(Network *self, const int32_t *prog, int n)
{
    uint8_t *val = self->val;
    int i = 0;
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
        int k = -x;
        const int32_t *group = prog + i + 1;
        for (int j = 0; j < k; j++) val[group[j]] = 0;
        int changed = 1;
        while (changed) {
            changed = 0;
            for (int j = 0; j < k; j++) {
                uint8_t v = atom_value(self, group[j]);
                if (v != val[group[j]]) { val[group[j]] = v; changed = 1; }
            }
        }
        if (self->watched)
            for (int j = 0; j < k; j++) if (val[group[j]]) push(self, group[j]);
        i += 1 + k;
    }
}

static void
install(Network *self, const uint8_t *state)
{
    if (self->has_current && memcmp(self->current, state, (size_t)self->n_fluents) == 0)
        return;
    memcpy(self->val, state, (size_t)self->n_fluents);
    if (self->watched) {
        self->state_epoch++;
        for (int f = 0; f < self->n_fluents; f++) if (state[f]) push(self, f);
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
    for (int r = 0; r < self->n_roles; r++) moves[self->joint[r]] = 1;
    if (self->watched) {
        self->move_epoch++;
        for (int r = 0; r < self->n_roles; r++) push(self, self->n_fluents + self->joint[r]);
    }
    run(self, self->move_prog, self->n_move_prog);
    memset(out, 0, (size_t)self->n_fluents);
    for (int i = 0; i < self->n_next; i++)
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

/* ---- the step API ---------------------------------------------------------------- */

static PyObject *legal_lists(Network *self);

static PyObject *
Network_legal(Network *self, PyObject *state)
{
    const uint8_t *s;
    if (state_arg(self, state, &s) < 0) return NULL;
    install(self, s);
    return legal_lists(self);
}

static PyObject *
Network_terminal(Network *self, PyObject *state)
{
    const uint8_t *s;
    if (state_arg(self, state, &s) < 0) return NULL;
    install(self, s);
    return PyBool_FromLong(self->val[self->terminal]);
}

static PyObject *
Network_goals(Network *self, PyObject *state)
{
    const uint8_t *s;
    if (state_arg(self, state, &s) < 0) return NULL;
    install(self, s);
    PyObject *out = PyList_New(self->n_roles);
    if (!out) return NULL;
    for (int r = 0; r < self->n_roles; r++) {
        PyObject *vs = PyList_New(0);
        if (!vs) { Py_DECREF(out); return NULL; }
        for (int32_t i = self->goal_start[r]; i < self->goal_start[r + 1]; i++) {
            if (!self->val[self->goal_atom[i]]) continue;
            PyObject *k = PyLong_FromLong(i - self->goal_start[r]);
            if (!k || PyList_Append(vs, k) < 0) {
                Py_XDECREF(k); Py_DECREF(vs); Py_DECREF(out); return NULL;
            }
            Py_DECREF(k);
        }
        PyList_SET_ITEM(out, r, vs);
    }
    return out;
}

static PyObject *
Network_next(Network *self, PyObject *args)
{
    PyObject *state, *moves;
    const uint8_t *s;
    if (!PyArg_ParseTuple(args, "OO", &state, &moves)) return NULL;
    if (state_arg(self, state, &s) < 0) return NULL;
    Py_ssize_t n;
    int32_t *joint = ints(moves, &n, "a joint move");
    if (!joint) return NULL;
    if (n != self->n_roles || !in_range(joint, n, 0, self->n_moves)) {
        PyMem_Free(joint);
        PyErr_SetString(PyExc_ValueError, "a joint move is one move index per role");
        return NULL;
    }
    memcpy(self->joint, joint, sizeof(int32_t) * (size_t)n);
    PyMem_Free(joint);
    install(self, s);
    PyObject *out = PyBytes_FromStringAndSize(NULL, self->n_fluents);
    if (!out) return NULL;
    successor(self, (uint8_t *)PyBytes_AS_STRING(out));
    return out;   /* the state program's values still hold for the installed state */
}

static PyObject *
legal_lists(Network *self)
{
    PyObject *out = PyList_New(self->n_roles);
    if (!out) return NULL;
    for (int r = 0; r < self->n_roles; r++) {
        PyObject *ms = PyList_New(0);
        if (!ms) { Py_DECREF(out); return NULL; }
        for (int32_t i = self->legal_start[r]; i < self->legal_start[r + 1]; i++) {
            if (!self->val[self->legal_atom[i]]) continue;
            PyObject *m = PyLong_FromLong(self->legal_move[i]);
            if (!m || PyList_Append(ms, m) < 0) {
                Py_XDECREF(m); Py_DECREF(ms); Py_DECREF(out); return NULL;
            }
            Py_DECREF(m);
        }
        PyList_SET_ITEM(out, r, ms);
    }
    return out;
}

/* Per role, a tuple of the objects (set_moves) standing for its legal moves. */
static PyObject *
legal_objects(Network *self)
{
    PyObject *out = PyTuple_New(self->n_roles);
    if (!out) return NULL;
    for (int r = 0; r < self->n_roles; r++) {
        Py_ssize_t k = 0;
        for (int32_t i = self->legal_start[r]; i < self->legal_start[r + 1]; i++)
            k += self->val[self->legal_atom[i]] != 0;
        PyObject *ms = PyTuple_New(k);
        if (!ms) { Py_DECREF(out); return NULL; }
        k = 0;
        for (int32_t i = self->legal_start[r]; i < self->legal_start[r + 1]; i++) {
            if (!self->val[self->legal_atom[i]]) continue;
            PyObject *m = PyTuple_GET_ITEM(self->move_objects, self->legal_move[i]);
            Py_INCREF(m);
            PyTuple_SET_ITEM(ms, k++, m);
        }
        PyTuple_SET_ITEM(out, r, ms);
    }
    return out;
}

/* set_moves(objects): the tuple of objects, one per move index, that step(..., 2)
   answers legal moves with. */
static PyObject *
Network_set_moves(Network *self, PyObject *objects)
{
    if (!PyTuple_Check(objects) || PyTuple_GET_SIZE(objects) != self->n_moves) {
        PyErr_SetString(PyExc_ValueError, "set_moves takes a tuple of one object per move");
        return NULL;
    }
    Py_INCREF(objects);
    Py_XSETREF(self->move_objects, objects);
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
    if (full == 2 && !self->move_objects) {
        PyErr_SetString(PyExc_ValueError, "step(..., 2) needs set_moves first");
        return NULL;
    }
    if (state_arg(self, state, &s) < 0) return NULL;
    Py_ssize_t n;
    int32_t *joint = ints(moves, &n, "a joint move");
    if (!joint) return NULL;
    if (n != self->n_roles) {
        PyMem_Free(joint);
        PyErr_SetString(PyExc_ValueError, "a joint move is one move index per role");
        return NULL;
    }
    install(self, s);
    for (int r = 0; r < self->n_roles; r++) {
        int32_t m = joint[r];
        if (m < 0 || m >= self->n_moves || self->move_legal[m] < 0 ||
            self->move_role[m] != r || !self->val[self->move_legal[m]]) {
            PyMem_Free(joint);
            return Py_BuildValue("(si)", "illegal", r);
        }
    }
    memcpy(self->joint, joint, sizeof(int32_t) * (size_t)n);
    PyMem_Free(joint);
    PyObject *out = PyBytes_FromStringAndSize(NULL, self->n_fluents);
    if (!out) return NULL;
    successor(self, (uint8_t *)PyBytes_AS_STRING(out));
    if (!full) return out;
    install(self, (const uint8_t *)PyBytes_AS_STRING(out));
    PyObject *legal = full == 2 ? legal_objects(self) : legal_lists(self);
    if (!legal) { Py_DECREF(out); return NULL; }
    return Py_BuildValue("(NON)", out, self->val[self->terminal] ? Py_True : Py_False, legal);
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
    /* splitmix64 of the seed: never zero, well spread */
    uint64_t z = (uint64_t)s + 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    self->rng = z ? z : 1;
    Py_RETURN_NONE;
}

/* One random playout from the state in buf (overwritten with the final state).
   Returns the depth, or -1 - r when role r has no legal move (buf: that state). */
static long
playout(Network *self, uint8_t *buf, long max_depth)
{
    long depth = 0;
    for (;;) {
        install(self, buf);
        if (self->val[self->terminal] || depth >= max_depth) return depth;
        for (int r = 0; r < self->n_roles; r++) {
            int k = 0;
            for (int32_t i = self->legal_start[r]; i < self->legal_start[r + 1]; i++)
                if (self->val[self->legal_atom[i]]) self->choice[k++] = self->legal_move[i];
            if (k == 0) return -1 - r;
            self->joint[r] = self->choice[next_random(self) % (uint64_t)k];
        }
        successor(self, buf);
        depth++;
    }
}

static int
goal_of(Network *self, int r)
{
    int found = -1, count = 0;
    for (int32_t i = self->goal_start[r]; i < self->goal_start[r + 1]; i++)
        if (self->val[self->goal_atom[i]]) { found = self->goal_value[i]; count++; }
    return count == 1 ? found : -1;
}

/* depth_charge(state, max_depth) -> ("done", final state, depth) | ("stuck", role, state) */
static PyObject *
Network_depth_charge(Network *self, PyObject *args)
{
    PyObject *state;
    long max_depth;
    const uint8_t *s;
    if (!PyArg_ParseTuple(args, "Ol", &state, &max_depth)) return NULL;
    if (state_arg(self, state, &s) < 0) return NULL;
    PyObject *out = PyBytes_FromStringAndSize((const char *)s, self->n_fluents);
    if (!out) return NULL;
    long d = playout(self, (uint8_t *)PyBytes_AS_STRING(out), max_depth);
    if (d < 0) return Py_BuildValue("(slN)", "stuck", -1 - d, out);
    return Py_BuildValue("(sNl)", "done", out, d);
}

/* playouts(state, n, max_depth) -> ("playouts", per role [(goal or -1, depth)], steps)
                                  | ("stuck", role, state) */
static PyObject *
Network_playouts(Network *self, PyObject *args)
{
    PyObject *state;
    long n, max_depth;
    const uint8_t *s;
    if (!PyArg_ParseTuple(args, "Oll", &state, &n, &max_depth)) return NULL;
    if (state_arg(self, state, &s) < 0) return NULL;
    uint8_t *buf = PyMem_Malloc((size_t)self->n_fluents + 1);
    int32_t *results = PyMem_Malloc(sizeof(int32_t) * (size_t)(self->n_roles + 1) * (size_t)n);
    int32_t *depths = PyMem_Malloc(sizeof(int32_t) * (size_t)n);
    if (!buf || !results || !depths) {
        PyMem_Free(buf); PyMem_Free(results); PyMem_Free(depths);
        return PyErr_NoMemory();
    }
    long long steps = 0;
    for (long p = 0; p < n; p++) {
        memcpy(buf, s, (size_t)self->n_fluents);
        long d = playout(self, buf, max_depth);
        if (d < 0) {
            PyObject *stuck = PyBytes_FromStringAndSize((const char *)buf, self->n_fluents);
            PyMem_Free(buf); PyMem_Free(results); PyMem_Free(depths);
            if (!stuck) return NULL;
            return Py_BuildValue("(slN)", "stuck", -1 - d, stuck);
        }
        steps += d;
        depths[p] = (int32_t)d;
        for (int r = 0; r < self->n_roles; r++) results[p * self->n_roles + r] = goal_of(self, r);
        if ((p & 63) == 63 && PyErr_CheckSignals() < 0) {
            PyMem_Free(buf); PyMem_Free(results); PyMem_Free(depths);
            return NULL;
        }
    }
    PyObject *per_role = PyList_New(self->n_roles);
    for (int r = 0; per_role && r < self->n_roles; r++) {
        PyObject *col = PyList_New(n);
        if (!col) { Py_CLEAR(per_role); break; }
        for (long p = 0; p < n; p++)
            PyList_SET_ITEM(col, p, Py_BuildValue("(ii)", results[p * self->n_roles + r],
                                                  depths[p]));
        PyList_SET_ITEM(per_role, r, col);
    }
    PyMem_Free(buf); PyMem_Free(results); PyMem_Free(depths);
    if (!per_role) return NULL;
    return Py_BuildValue("(sNL)", "playouts", per_role, steps);
}

/* tune(state, steps, max_depth): play random playouts from state (at most `steps` steps in all) with
   every rule looked at, count how often each atom holds, then let each rule watch
   its positive literal that held least often (rules without one are always looked
   at). From then on a rule is looked at only once its watched atom holds. */
static PyObject *
Network_tune(Network *self, PyObject *args)
{
    PyObject *state;
    const uint8_t *start;
    long steps, max_depth;
    if (!PyArg_ParseTuple(args, "Oll", &state, &steps, &max_depth)) return NULL;
    if (state_arg(self, state, &start) < 0) return NULL;
    if (self->watched) return PyLong_FromLong(0);
    int32_t *count = alloc_ints(self->n_atoms);
    uint8_t *buf = PyMem_Malloc((size_t)self->n_fluents + 1);
    if (!count || !buf) { PyMem_Free(count); PyMem_Free(buf); return PyErr_NoMemory(); }
    uint64_t saved = self->rng;
    long done = 0;
    for (int p = 0; p < 1000 && done < steps; p++) {
        memcpy(buf, start, (size_t)self->n_fluents);
        long depth = 0;
        for (;;) {
            install(self, buf);
            if (self->val[self->terminal] || depth >= max_depth || done >= steps) break;
            int stuck = 0;
            for (int r = 0; r < self->n_roles; r++) {
                int k = 0;
                for (int32_t i = self->legal_start[r]; i < self->legal_start[r + 1]; i++)
                    if (self->val[self->legal_atom[i]]) self->choice[k++] = self->legal_move[i];
                if (k == 0) { stuck = 1; break; }
                self->joint[r] = self->choice[next_random(self) % (uint64_t)k];
            }
            if (stuck) break;
            successor(self, buf);
            for (int a = 0; a < self->n_atoms; a++) count[a] += self->val[a];
            depth++; done++;
        }
    }
    self->rng = saved;
    PyMem_Free(buf);
    /* the watch of each rule */
    int32_t *watch = alloc_ints(self->n_rules);
    self->watch_start = alloc_ints(self->n_atoms + 1);
    self->always_start = alloc_ints(self->n_atoms + 1);
    self->watch_rules = alloc_ints(self->n_rules);
    self->always_rules = alloc_ints(self->n_rules);
    self->cand_next = alloc_ints(self->n_rules);
    self->sc_head = alloc_ints(self->n_atoms);
    self->mc_head = alloc_ints(self->n_atoms);
    self->sc_stamp = PyMem_Calloc((size_t)self->n_atoms, sizeof(uint32_t));
    self->mc_stamp = PyMem_Calloc((size_t)self->n_atoms, sizeof(uint32_t));
    if (!watch || !self->watch_start || !self->always_start || !self->watch_rules ||
        !self->always_rules || !self->cand_next || !self->sc_head || !self->mc_head ||
        !self->sc_stamp || !self->mc_stamp) {
        PyMem_Free(count); PyMem_Free(watch);
        return PyErr_NoMemory();
    }
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
        if (watch[r] >= 0) self->watch_start[watch[r] + 1]++;
        else self->always_start[self->rule_head[r] + 1]++;
    }
    for (int a = 0; a < self->n_atoms; a++) {
        self->watch_start[a + 1] += self->watch_start[a];
        self->always_start[a + 1] += self->always_start[a];
    }
    int32_t *wfill = alloc_ints(self->n_atoms), *afill = alloc_ints(self->n_atoms);
    if (!wfill || !afill) {
        PyMem_Free(count); PyMem_Free(watch); PyMem_Free(wfill); PyMem_Free(afill);
        return PyErr_NoMemory();
    }
    for (int32_t r = 0; r < self->n_rules; r++) {
        if (watch[r] >= 0) {
            int32_t a = watch[r];
            self->watch_rules[self->watch_start[a] + wfill[a]++] = r;
        } else {
            int32_t h = self->rule_head[r];
            self->always_rules[self->always_start[h] + afill[h]++] = r;
        }
    }
    PyMem_Free(wfill); PyMem_Free(afill); PyMem_Free(count); PyMem_Free(watch);
    self->state_epoch = self->move_epoch = 1;
    self->watched = 1;
    self->has_current = 0;
    return PyLong_FromLong(done);
}

static PyMethodDef Network_methods[] = {
    {"step", (PyCFunction)Network_step, METH_VARARGS,
     "step(state, joint, full) -> ('illegal', role) | state | (state, terminal, legal); "
     "full 2: legal moves as set_moves' objects"},
    {"set_moves", (PyCFunction)Network_set_moves, METH_O,
     "set_moves(objects): the tuple of objects standing for the moves, by index"},
    {"tune", (PyCFunction)Network_tune, METH_VARARGS,
     "tune(state, steps, max_depth) -> steps played: let each rule watch its rarest "
     "literal"},
    {"legal", (PyCFunction)Network_legal, METH_O,
     "legal(state) -> per role, the indices of its legal moves (in the network's order)"},
    {"terminal", (PyCFunction)Network_terminal, METH_O, "terminal(state) -> bool"},
    {"goals", (PyCFunction)Network_goals, METH_O,
     "goals(state) -> per role, the indices of its goal values that hold"},
    {"next", (PyCFunction)Network_next, METH_VARARGS,
     "next(state, joint) -> the next state (legality is not checked)"},
    {"depth_charge", (PyCFunction)Network_depth_charge, METH_VARARGS,
     "depth_charge(state, max_depth) -> ('done', state, depth) | ('stuck', role, state)"},
    {"playouts", (PyCFunction)Network_playouts, METH_VARARGS,
     "playouts(state, n, max_depth) -> ('playouts', per role [(goal, depth)], steps) | "
     "('stuck', role, state)"},
    {"seed", (PyCFunction)Network_seed, METH_O, "seed(int): seed the playout generator"},
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
    .tp_new = PyType_GenericNew,
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
