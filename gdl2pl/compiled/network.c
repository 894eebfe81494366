/*  The network's lock and its building: see network.h. */

#include "network.h"

/* ---- the lock ------------------------------------------------------------------------ */

int
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

int
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

void
leave(Network *self)
{
    self->owner = 0;
    PyThread_release_lock(self->lock);
}

/* ---- building -------------------------------------------------------------------- */

void
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


/* Network_init's work, the lock held (a failure leaves the network not ready). */
int
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
    self->rng = FIRST_RNG;
    return 0;
}
