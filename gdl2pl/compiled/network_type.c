/*  The Python type Network: see network_type.h. A state is a bytes object with one
    byte (0 or 1) per fluent; a joint move is a list of move indices, one per role.
    Random playouts run entirely here, with the network's own seeded generator
    (xorshift64*). Every method takes the network (enter) for its whole work and
    makes its Python objects from C buffers. */

#include "network_type.h"

#include "evaluate.h"
#include "pace.h"

static void
Network_dealloc(Network *self)
{
    release_arrays(self);
    if (self->lock) PyThread_free_lock(self->lock);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
Network_new(PyTypeObject *type, PyObject *Py_UNUSED(args), PyObject *Py_UNUSED(kw))
{
    Network *self = (Network *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->lock = PyThread_allocate_lock();
    if (!self->lock) { Py_DECREF(self); return PyErr_NoMemory(); }
    return (PyObject *)self;
}

/* Network(n_atoms, n_fluents, n_moves, rule_start, lit_start, lits, state_program,
           move_program, legal, next, terminal, goals[, sees]): see compiled/network.py.
   Integer arrays may be sequences or buffers of C ints; legal is per role a list of
   (atom, move index), goals per role a list of (atom, value: an int, -1 if none), sees
   (GDL-II) per role a list of (atom, percept index). */
static int
Network_init(Network *self, PyObject *args, PyObject *Py_UNUSED(kw))
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

static PyObject *
Network_seed(Network *self, PyObject *arg)
{
    unsigned long long s = PyLong_AsUnsignedLongLongMask(arg);
    if (s == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    if (enter(self) < 0) return NULL;
    self->rng = seeded_rng(s);
    leave(self);
    Py_RETURN_NONE;
}

/* The most bytes of results one playouts() call keeps (1 GiB). */
#define MAX_RESULT_BYTES ((Py_ssize_t)1 << 30)

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
    Py_ssize_t done = tune(self, start, steps, max_depth, deadline);
    leave(self);
    return done < 0 ? NULL : PyLong_FromSsize_t(done);
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

/* _evaluation(path=None) -> how the network evaluates: "every rule" (before tune()),
   "watched" or "events" (evaluate.h). A benchmark's hook (benchmarks/eval_paths.py):
   "watched" asks a tuned network evaluating by events to stop doing so, which changes
   its work, never its answers; any other change is refused. */
static PyObject *
Network_evaluation(Network *self, PyObject *args)
{
    const char *path = NULL;
    if (!PyArg_ParseTuple(args, "|s", &path)) return NULL;
    if (enter(self) < 0) return NULL;
    const char *now = !self->watched ? "every rule" : self->events ? "events" : "watched";
    if (path && strcmp(path, now) != 0) {
        if (strcmp(path, "watched") != 0 || !self->watched) {
            leave(self);
            PyErr_Format(PyExc_ValueError, "a network evaluating by %s cannot be made to "
                         "evaluate otherwise than by watched rules, after tune()", now);
            return NULL;
        }
        self->events = 0;
        self->has_current = 0;   /* the next state is installed afresh, every atom */
        now = "watched";
    }
    leave(self);
    return PyUnicode_FromString(now);
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
    {"_evaluation", (PyCFunction)Network_evaluation, METH_VARARGS,
     "_evaluation(path=None) -> 'every rule' | 'watched' | 'events': a benchmark's hook"},
    {NULL, NULL, 0, NULL}
};

PyTypeObject NetworkType = {
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

