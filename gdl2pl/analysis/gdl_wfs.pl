/*  gdl_wfs: the well-founded model of a normal logic program given as data, for
    `gdl2pl model` on programs whose negation is not stratified.

    The program arrives as terms, never as text: relation I is the predicate
    r<I> of a temporary module. The model is computed as the alternating
    fixpoint (Van Gelder): Gamma(J) is the least model of the program in which
    a negated literal `not A` holds exactly when A is not in the set J.
    Starting from the empty set, True(k+1) = Gamma(Gamma(True(k))) grows to the
    true atoms; Gamma of those is every atom that is not false, so the atoms it
    adds are the undefined ones. Each Gamma is a positive program: its
    relations are tabled (recursion terminates) and `not A` is a lookup of the
    fact j<I>(Args) holding J. SWI-Prolog's own tnot/1 is not used: on 9.2 its
    answers for the same program now and then differed between runs of one
    process (an undefined atom that is true), which a model for students may
    never do.

    Terms in py form: an atom (a constant), an integer (the variable of that
    number in its clause), or a list [Functor, Arg...] (a compound term).
*/

:- module(gdl_wfs, [ wfs_answers/4 ]).  % +Arities, +Clauses, +Limit, -Answers
:- use_module(library(apply)).
:- use_module(library(lists)).
:- use_module(library(modules)).
:- use_module(library(ordsets)).
:- use_module(library(tables)).

%!  wfs_answers(+Arities, +Clauses, +Limit, -Answers) is det.
%
%   Arities lists the arity of each relation (relation I is the I-th, from 0).
%   Clauses is a list of [Head, Body]; Head is [I, Args]; Body a list of
%   ["pos", I, Args], ["neg", I, Args], ["distinct", T1, T2] or ["same", T1, T2]
%   (the terms are identical), in the order to
%   call them (safe: a negation or distinct comes after the literals binding its
%   variables). Answers holds, per relation, a sorted list of [Args, Truth] with
%   Truth "true" or "undefined". Raises gdl_wfs(inference_limit) past Limit
%   inferences and gdl_wfs(too_many) past max_answers/1 answers in one step of
%   the fixpoint. It can be interrupted (gdl_runtime:gdl_interrupt/0, from
%   another thread: the memory guard of analysis/wellfounded.py uses it). Its
%   tables are freed afterwards, whatever the outcome.

wfs_answers(Arities, Clauses, Limit, Answers) :-
    setup_call_cleanup(
        nb_linkval('$gdl_busy', true),          % gdl_runtime:gdl_interrupt/0 stops it
        in_temporary_module(M,
                            true,
                            setup_call_cleanup(true,
                                               gdl_wfs:limited(M, Arities,
                                                               Clauses, Limit,
                                                               Answers),
                                               abolish_module_tables(M))),
        nb_linkval('$gdl_busy', false)).

%!  max_answers(-Count) is det.
%
%   The answers one step of the fixpoint may collect (a million, as a game's
%   static relation). Its memory is bounded from Python (interrupt_past_memory): lowering
%   this thread's table_space and stack_limit flags for the call made the process
%   abort now and then in later evaluations.

max_answers(1000000).

limited(M, Arities, Clauses, Limit, Answers) :-
    call_with_inference_limit(evaluate(M, Arities, Clauses, Answers), Limit, R),
    (   R == inference_limit_exceeded
    ->  throw(gdl_wfs(inference_limit))
    ;   true
    ).

evaluate(M, Arities, Clauses, Answers) :-
    foldl(declare(M), Arities, 0, _),
    maplist(add_clause(M), Clauses),
    length(Arities, N),
    length(Nothing, N),
    maplist(=([]), Nothing),
    alternate(M, Arities, Nothing, True, Possible),
    maplist(truths, Possible, True, Answers).

%   alternate(+M, +Arities, +True0, -True, -Possible): from the atoms known true
%   (True0, per relation a sorted list of argument lists), the fixpoint True of
%   True = Gamma(Gamma(True)) and Possible = Gamma(True), the atoms not false.

alternate(M, Arities, True0, True, Possible) :-
    gamma(M, Arities, True0, Possible0),
    gamma(M, Arities, Possible0, True1),
    (   True1 == True0
    ->  True = True0,
        Possible = Possible0
    ;   alternate(M, Arities, True1, True, Possible)
    ).

%   gamma(+M, +Arities, +J, -Model): the least model of the program with `not A`
%   true exactly when A is not in J (both per relation, sorted argument lists).

gamma(M, Arities, J, Model) :-
    abolish_module_tables(M),
    foldl(assume(M), Arities, J, 0, _),
    max_answers(Max),
    foldl(answers(M), Arities, Model, 0-Max, _).

assume(M, Arity, Atoms, I, I1) :-
    I1 is I + 1,
    negated(I, Name),
    functor(Head, Name, Arity),
    retractall(M:Head),
    forall(member(Args, Atoms),
           ( G =.. [Name|Args], assertz(M:G) )).

truths(Possible, True, Answers) :-
    maplist(truth(True), Possible, Answers).

truth(True, Args, [PyArgs, Truth]) :-
    (   ord_memberchk(Args, True)
    ->  Truth = "true"
    ;   Truth = "undefined"
    ),
    maplist(py, Args, PyArgs).

declare(M, Arity, I, I1) :-
    I1 is I + 1,
    relation(I, Name),
    M:table(Name/Arity),
    M:dynamic(Name/Arity),
    negated(I, Assumed),
    M:dynamic(Assumed/Arity).

relation(I, Name) :-
    atom_concat(r, I, Name).

negated(I, Name) :-
    atom_concat(j, I, Name).

add_clause(M, [[I, PyArgs], Body]) :-
    empty_assoc(Vs0),
    goal(I, PyArgs, Head, Vs0, Vs1),
    foldl(literal, Body, Goals, Vs1, _),
    conjunction(Goals, Conj),
    assertz(M:(Head :- Conj)).

literal([Kind0|Parts], G, Vs0, Vs) :-
    atom_string(Kind, Kind0),               % janus may pass a str as an atom
    literal(Kind, Parts, G, Vs0, Vs).

literal(pos, [I, PyArgs], G, Vs0, Vs) :-
    goal(I, PyArgs, G, Vs0, Vs).
literal(neg, [I, PyArgs], \+ G, Vs0, Vs) :-
    negated(I, Name),
    foldl(term, PyArgs, Args, Vs0, Vs),
    G =.. [Name|Args].
literal(distinct, [A, B], X \== Y, Vs0, Vs) :-
    term(A, X, Vs0, Vs1),
    term(B, Y, Vs1, Vs).
literal(same, [A, B], X == Y, Vs0, Vs) :-
    term(A, X, Vs0, Vs1),
    term(B, Y, Vs1, Vs).

goal(I, PyArgs, G, Vs0, Vs) :-
    relation(I, Name),
    foldl(term, PyArgs, Args, Vs0, Vs),
    G =.. [Name|Args].

conjunction([], true).
conjunction([G], G) :- !.
conjunction([G|Gs], (G, C)) :-
    conjunction(Gs, C).

%   term(+Py, -Term, +Vars0, -Vars): Vars maps variable numbers to variables.

term(N, V, Vs0, Vs) :-
    integer(N),
    !,
    (   get_assoc(N, Vs0, V)
    ->  Vs = Vs0
    ;   put_assoc(N, Vs0, V, Vs)
    ).
term([F0|Py], T, Vs0, Vs) :-
    !,
    atom_string(F, F0),
    foldl(term, Py, Args, Vs0, Vs),
    T =.. [F|Args].
term(S, A, Vs, Vs) :-
    atom_string(A, S).

%   answers(+M, +Arity, -Sorted, +I-Left0, -I1-Left): the argument lists of the
%   answers of relation I, sorted, at most Left0 of them (gdl_wfs(too_many) past
%   it); Left are left for the other relations.

answers(M, Arity, Sorted, I-Left0, I1-Left) :-
    I1 is I + 1,
    relation(I, Name),
    functor(G, Name, Arity),
    findall(Args, ( M:G, G =.. [_|Args] ), All),
    length(All, N),
    (   N > Left0
    ->  throw(gdl_wfs(too_many))
    ;   Left is Left0 - N
    ),
    sort(All, Sorted).

py(A, S) :-
    atomic(A),
    !,
    atom_string(A, S).
py(T, [F|Args]) :-
    compound(T),
    !,
    compound_name_arguments(T, F0, Args0),
    atom_string(F0, F),
    maplist(py, Args0, Args).
py(_, "?").
