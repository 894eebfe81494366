/*  gdl_ground: the ground instances of a game's rules that can fire in a reachable
    state, computed by the reasoner (compiled/ground.py builds the network from them).

    The game comes as DATA: flat rules whose symbols are already numbers (Python
    names them; no text of the game reaches this module as a name). A term is an
    integer >= 0 (a constant), an integer < 0 (a variable of its rule) or a list
    [FunctorId, Arg...] (a compound). A relation atom is a list [RelationId, Arg...].
    A body literal is a list whose first element says what it is:

      [s, A]   a positive literal over a static relation (independent of the state)
      [p, A]   a positive literal over a dynamic relation
      [t, F]   (true F)           [m, R, M]   (does R M)
      [ns, A]  a negated static literal       [nd, A]  a negated dynamic literal
      [nt, F]  (not (true F))     [nm, R, M]  (not (does R M))
      [ne, X, Y] (distinct X Y)   [eq, X, Y]  (not (distinct X Y))

    Static relations are computed exactly (stratified negation, tabled). Dynamic
    ones are over-approximated by the relaxation: (true F) holds for every F of
    init or next, (does R M) for every legal R M, and a negated dynamic literal is
    dropped. Every dynamic rule is then instantiated by its positive literals
    against that model: static literals and distinct are decided here, a negated
    dynamic atom outside the model is always true (dropped), other literals stay as
    ground atoms. Every ground atom gets a number.

    Budgets: an inference limit, a cap on ground rules, and gdl_interrupt/0 (the
    bridge's timer). This thread's tables are abolished afterwards, whatever happened.
*/

:- module(gdl_ground, [ ground_game/4 ]).
% ground_game(+Rules, +Keywords, +Limits, -Result)
:- use_module(library(lists)).
:- use_module(library(apply)).

:- thread_local srule/2, drule/2, keyword/2, out_rule/3.
:- table s/1, r/1, fluent/1, move/2.

%!  ground_game(+Rules, +Keywords, +Limits, -Result) is det.
%
%   Rules: [[Kind, Head, Body], ...] with Kind s (static) or d (dynamic).
%   Keywords: [InitId, NextId, LegalId, TerminalId, GoalId, SeesId] (relation ids).
%   Limits: [Inferences, MaxRules].
%   Result: [ok, Base, Moves, Atoms, GroundRules] where Base lists the fluents of
%   the relaxation, Moves its legal moves ([[Role, Move], ...]), Atoms is [[Id, Key], ...] (Key: [t, F], [m, R, M] or [RelId, Arg...],
%   py form) and GroundRules is [[Head, Pos, Neg], ...] in atom ids;
%   or [budget, What, Figure] (What: inferences, rules) ; [unsafe, Head] (a rule
%   whose head is not ground after its body: py form); [interrupted].

ground_game(Rules, Keywords, [Inferences, MaxRules], Result) :-
    setup_call_cleanup(
        load_rules(Rules, Keywords),
        catch(setup_call_cleanup(
                  nb_linkval('$gdl_busy', true),   % gdl_interrupt/0 may stop it
                  call_with_inference_limit(run(MaxRules, Result0), Inferences, Outcome),
                  nb_linkval('$gdl_busy', false)),
              E, caught(E, Result0, Outcome)),
        forget),
    (   Outcome == inference_limit_exceeded
    ->  Result = [budget, inferences, Inferences]
    ;   Result = Result0
    ).

caught(gdl_error(interrupted), [interrupted], done) :- !.
caught(ground_stop(Result), Result, done) :- !.
caught(error(resource_error(tripwire(What, _)), _), [budget, tripwire, What], done) :- !.
caught(error(resource_error(What), _), [budget, memory, Name], done) :-
    !,
    (   atom(What) -> Name = What ; Name = resource ).
caught(E, _, _) :- throw(E).

forget :-
    retractall(srule(_, _)),
    retractall(drule(_, _)),
    retractall(keyword(_, _)),
    retractall(out_rule(_, _, _)),
    abolish_private_tables.     % with their subgoals' nodes (gdl_semantics:game_release/1)

load_rules(Rules, [Init, Next, Legal, Terminal, Goal, Sees]) :-
    forget,
    forall(member(K-Id, [init-Init, next-Next, legal-Legal, terminal-Terminal,
                         goal-Goal, sees-Sees]),
           ( name_of(Id, Name), assertz(keyword(K, Name)) )),
    forall(member([Kind, H0, B0], Rules),
           ( rule_term([H0|B0], [H|B]),
             (   atom_string(s, Kind)
             ->  assertz(srule(H, B))
             ;   assertz(drule(H, B))
             ) )).

%   The functor of relation or function id N: an atom made of the number only.
name_of(Id, Name) :- atom_concat(g, Id, Name).

%   rule_term(+Data, -Terms): a rule's head and literals as terms, with one fresh
%   variable per negative integer.
rule_term(Data, Terms) :-
    empty_assoc(V0),
    foldl(literal, Data, Terms, V0, _).

literal([Tag|Args0], L, V0, V) :-
    \+ integer(Tag), !,                % a tag: text (janus may give an atom)
    atom_string(TagA, Tag),
    foldl(term, Args0, Args, V0, V),
    L =.. [TagA|Args].
literal(Atom0, Atom, V0, V) :-       % the head
    atom(Atom0, Atom, V0, V).

atom([Id|Args0], Atom, V0, V) :-
    foldl(term, Args0, Args, V0, V),
    name_of(Id, N),
    Atom =.. [N|Args].

term(X, T, V0, V) :-
    integer(X), !,
    (   X >= 0
    ->  T = X, V = V0
    ;   get_assoc(X, V0, T)
    ->  V = V0
    ;   put_assoc(X, V0, T, V)
    ).
term([Id|Args0], T, V0, V) :-
    atom([Id|Args0], T, V0, V).

kw(K, Args, Atom) :- keyword(K, N), Atom =.. [N|Args].

		 /*******************************
		 *   STATIC: EXACT; DYNAMIC: RELAXED
		 *******************************/

s(A) :- srule(A, Body), static_body(Body).

static_body([]).
static_body([L|Ls]) :- static_literal(L), static_body(Ls).

static_literal(s(A)) :- s(A).
static_literal(ns(A)) :- \+ s(A).
static_literal(ne(X, Y)) :- X \== Y.
static_literal(eq(X, Y)) :- X == Y.

r(A) :- drule(A, Body), relaxed_body(Body).

relaxed_body([]).
relaxed_body([L|Ls]) :- relaxed_literal(L), relaxed_body(Ls).

relaxed_literal(s(A)) :- s(A).
relaxed_literal(p(A)) :- general(A, G), r(G), A = G.
relaxed_literal(t(F)) :- fluent(F).
relaxed_literal(m(R, M)) :- move(R, M).
relaxed_literal(ns(A)) :- \+ s(A).
relaxed_literal(nd(_)).
relaxed_literal(nt(_)).
relaxed_literal(nm(_, _)).
relaxed_literal(ne(X, Y)) :- X \== Y.
relaxed_literal(eq(X, Y)) :- X == Y.

%   any(+Atom): in the static model or the relaxed one (a keyword relation may
%   be either).
any(A) :- s(A).
any(A) :- general(A, G), r(G), A = G.

%   general(+Atom, -General): the atom of the same relation with only variables as
%   arguments. The relaxation is asked for whole relations, one table each: calls
%   with some arguments bound would each make a table of their own, and in a game
%   like chess there are very many of those.
general(A, G) :- functor(A, N, K), functor(G, N, K).

fluent(F) :- kw(init, [F], I), any(I).
fluent(F) :- kw(next, [F], N), any(N).

move(R, M) :- kw(legal, [R, M], L), any(L).

		 /*******************************
		 *          GROUNDING           *
		 *******************************/

run(MaxRules, [ok, Base, Moves, Atoms, Rules]) :-
    trie_new(Trie),
    Ids = ids(Trie, 0),
    Counter = count(0),
    forall(static_keyword_atom(A),
           emit(Ids, Counter, MaxRules, A, [], [])),
    forall(( drule(H, Body), instance(Body, Pos, Neg) ),
           (   ground(H)
           ->  emit(Ids, Counter, MaxRules, H, Pos, Neg)
           ;   py(H, PyH), throw(ground_stop([unsafe, PyH]))
           )),
    findall(F, fluent(F), Fs0),
    sort(Fs0, Fs),
    maplist(py, Fs, Base),
    findall([R, M], move(R, M), Ms0),
    sort(Ms0, Ms),
    maplist(py_move, Ms, Moves),
    findall([Id, Py], ( trie_gen(Trie, K, Id), py_key(K, Py) ), Atoms),
    trie_destroy(Trie),             % now, not at the next atom garbage collection
    findall([H, P, N], out_rule(H, P, N), Rules).

%   The keyword atoms that hold in every state: rules with an empty body.
static_keyword_atom(A) :-
    member(K-Arity, [legal-2, next-1, terminal-0, goal-2, sees-2]),
    keyword(K, N),
    functor(A, N, Arity),
    s(A).

emit(Ids, Counter, MaxRules, H, Pos, Neg) :-
    arg(1, Counter, C0),
    C is C0 + 1,
    (   C > MaxRules
    ->  throw(ground_stop([budget, rules, MaxRules]))
    ;   nb_setarg(1, Counter, C)
    ),
    atom_id(Ids, H, HI),
    maplist(atom_id(Ids), Pos, PI),
    maplist(atom_id(Ids), Neg, NI),
    assertz(out_rule(HI, PI, NI)).

atom_id(Ids, K, Id) :-
    arg(1, Ids, Trie),
    (   trie_lookup(Trie, K, Id0)
    ->  Id = Id0
    ;   arg(2, Ids, Id),
        Id1 is Id + 1,
        nb_setarg(2, Ids, Id1),
        trie_insert(Trie, K, Id)
    ).

%!  instance(+Body, -Pos, -Neg) is nondet.
%
%   A ground instance of a dynamic rule's body in the relaxed model: the dynamic
%   atoms it needs true (Pos) and false (Neg); static literals and distinct decided.

instance([], [], []).
instance([L|Ls], Pos, Neg) :-
    ground_literal(L, Pos, Pos1, Neg, Neg1),
    instance(Ls, Pos1, Neg1).

ground_literal(s(A), P, P, N, N) :- s(A).
ground_literal(p(A), [A|P], P, N, N) :- r(A).
ground_literal(t(F), [t(F)|P], P, N, N) :- fluent(F).
ground_literal(m(R, M), [m(R, M)|P], P, N, N) :- move(R, M).
ground_literal(ns(A), P, P, N, N) :- must_ground(A), \+ s(A).
ground_literal(nd(A), P, P, N0, N) :- must_ground(A), keep(r(A), A, N0, N).
ground_literal(nt(F), P, P, N0, N) :- must_ground(F), keep(fluent(F), t(F), N0, N).
ground_literal(nm(R, M), P, P, N0, N) :-
    must_ground(R-M), keep(move(R, M), m(R, M), N0, N).
ground_literal(ne(X, Y), P, P, N, N) :- must_ground(X-Y), X \== Y.
ground_literal(eq(X, Y), P, P, N, N) :- must_ground(X-Y), X == Y.

%   A negated atom outside the relaxed model never holds: its negation is true.
keep(InModel, Atom, [Atom|N], N) :- call(InModel), !.
keep(_, _, N, N).

must_ground(X) :-
    (   ground(X) -> true
    ;   throw(ground_stop([unsafe, negation]))
    ).

		 /*******************************
		 *           PY FORM            *
		 *******************************/

%   py(+Term, -Py): integers stay, compounds become [FunctorId, Arg...].
py(X, X) :- integer(X), !.
py(T, [Id|Args]) :-
    T =.. [N|As],
    atom_concat(g, IdA, N),
    atom_number(IdA, Id),
    maplist(py, As, Args).

py_move([R, M], [PR, PM]) :- py(R, PR), py(M, PM).

py_key(t(F), [t, P]) :- !, py(F, P).
py_key(m(R, M), [m, PR, PM]) :- !, py(R, PR), py(M, PM).
py_key(A, P) :- py(A, P).
