/*  Evaluating one game's network: see evaluate.h. */

#include "evaluate.h"

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
void
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
void
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

void
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
void
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
compare_ints(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* The installed state's legal moves into result_moves / result_count (C only), each
   role's in the network's order. */
void
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

static inline uint64_t
next_random(Network *self)
{
    return xorshift_next(&self->rng);
}

int64_t
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
int32_t
goal_of(Network *self, int32_t r)
{
    int32_t found = -1, count = 0;
    for (int32_t i = self->goal_start[r]; i < self->goal_start[r + 1]; i++)
        if (self->val[self->goal_atom[i]]) { found = i; count++; }
    return count == 1 ? found : -1;
}

Py_ssize_t
tune(Network *self, const uint8_t *start, Py_ssize_t steps, int64_t max_depth,
     double deadline)
{
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
        return -1;
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
        return -1;
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
    return done;
}
