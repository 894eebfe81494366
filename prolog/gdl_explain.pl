/*  gdl_explain: why a ground atom holds in a state of a loaded game, or why not.

    A meta-interpreter over the clauses of a game module translated by gdl2pl
    (gdl2pl/translate.py). The game's own predicates decide every question of
    truth (they are tabled where needed, so they terminate); the meta-interpreter
    only looks for a justification:

    - for an atom that holds: a clause whose body can be satisfied, each positive
      body literal justified in turn (never by an atom that is its own ancestor,
      so a proof is well founded even through recursion);
    - for an atom that does not hold: for every clause whose head matches, the
      first body literal k such that literals 1..k have no common solution, with
      the first solution of literals 1..k-1 and why literal k fails there, to a
      given depth.

    State-independent relations are stored as facts at load (gdl_static/2 of the
    module gives the static_* rules they come from): their atoms are justified by
    those rules. Terms go to Python in py form (see gdl_runtime.pl); a variable
    left unbound is the list ['$var'].

    A tree is a list:
      [state, Fluent]                 Fluent is in the state (a true/1 literal)
      [no_state, Fluent]              Fluent is not in the state
      [does, Role, Move]              the joint move has Role doing Move
      [no_does, Role, Move]           it does not
      [rule, Line, Head, Lits, Subs]  Head by the clause at Line of the module
                                      text, instantiated as Lits, Subs the
                                      proof of each literal (1:1)
      [fails, Atom, Attempts]         no clause derives Atom; Attempts: for each
                                      clause whose head matches,
                                      [attempt, Line, Head, Lits, K, Solutions, Sub]
                                      (literal K, 1-based, fails after the first
                                      of Solutions solutions of those before it,
                                      Lits instantiated by that solution; Sub why)
      [not, Sub]                      a negative literal holds (Sub: why its atom
                                      fails, or [more, Atom] past the depth)
      [holds, Sub]                    a negative literal fails: its atom holds
      [distinct, A, B] / [same, A, B] a distinct literal holds / fails
      [more, Atom]                    not explained further (depth)
      [no_instance, Atom]             a non-ground literal with no solution
*/

:- module(gdl_explain,
          [ explain_atom/6,     % +Module, +State, +Joint, +Atom, +Depth, -Tree
            with_input/4,       % +Module, +State, +Joint, :Goal
            to_py/2,            % +Term, -Py
            from_py/2           % +Py, -Term
          ]).
:- use_module(library(lists)).
:- use_module(library(apply)).

:- import(gdl_runtime:gdl_bounded/3).
:- import(gdl_runtime:state_install/2).
:- import(gdl_runtime:state_current/2).
:- import(gdl_runtime:state_roles/2).

%!  explain_atom(+Module, +State, +Joint, +Atom, +Depth, -Tree) is det.
%
%   Explain Atom (py form, Prolog naming: legal, r_line, true_cell, ...) in State
%   (a list of fluents in py form) with the joint move Joint (one move per role, or
%   [] for none). Depth bounds the explanation of failures. The installed state and
%   every table of the module are restored (cleared) afterwards. It runs as a question
%   of the runtime (gdl_bounded/3): under the game's inference limit, and stoppable.

explain_atom(M0, PyState, PyJoint, PyAtom, Depth, Tree) :-
    atom_string(M, M0),
    maplist(from_py, PyState, Fs),
    sort(Fs, State),
    maplist(from_py, PyJoint, Joint),
    from_py(PyAtom, Atom),
    gdl_bounded(M, 1, with_input(M, State, Joint, explain(M, Atom, Depth, Tree))).

%!  with_input(+Module, +State, +Joint, :Goal) is semidet.
%
%   Run Goal once with State (a sorted list of fluents) installed and Joint (one move
%   per role, or []) as the does/2 facts of the game Module; the installed state,
%   the joint move and every table of the module are restored afterwards, so no
%   answer leaks into the runtime's later queries.

:- meta_predicate with_input(+, +, +, 0).
with_input(M, State, Joint, Goal) :-
    state_current(M, Saved),
    setup_call_cleanup(
        enter(M, State, Joint, Refs),
        once(Goal),
        leave(M, Saved, Refs)).

enter(M, State, Joint, Refs) :-
    state_install(M, State),
    (   Joint == []
    ->  Refs = []
    ;   state_roles(M, Roles),
        maplist(assert_does(M), Roles, Joint, Refs)
    ),
    abolish_module_tables(M).

assert_does(M, Role, Move, Ref) :-
    assertz(M:does(Role, Move), Ref).

leave(M, Saved, Refs) :-
    maplist(erase, Refs),
    abolish_module_tables(M),
    state_install(M, Saved).

explain(M, Atom, Depth, Tree) :-
    (   call(M:Atom)
    ->  once(prove(M, Atom, [], Depth, Tree))
    ;   refute(M, Atom, Depth, Tree)
    ).

		 /*******************************
		 *            PROOFS            *
		 *******************************/

%   prove(+M, +Goal, +Ancestors, +Depth, -Tree): Goal (ground, and true) has proof
%   Tree; Depth bounds the explanation of the atoms under a negation.

prove(M, G, Anc, D, Tree) :-
    (   fluent_goal(M, G, F)
    ->  call(M:G), to_py(F, PF), Tree = [state, PF]
    ;   G = does(R, Mv)
    ->  call(M:G), to_py(R, PR), to_py(Mv, PM), Tree = [does, PR, PM]
    ;   rules_goal(M, G, RG),
        clause(M:RG, Body, Ref),
        body_literals(Body, Lits),
        prove_body(Lits, M, [G|Anc], D, Subs),
        line_of(Ref, Line),
        to_py(G, PG),
        maplist(literal_py, Lits, PLits),
        Tree = [rule, Line, PG, PLits, Subs]
    ).

prove_body([], _, _, _, []).
prove_body([L|Ls], M, Anc, D, [T|Ts]) :-
    prove_literal(L, M, Anc, D, T),
    prove_body(Ls, M, Anc, D, Ts).

prove_literal(L, M, Anc, D, T) :-
    (   negative(L, A)
    ->  \+ call(M:A),
        refute(M, A, D, Sub),
        T = [not, Sub]
    ;   L = (A \== B)
    ->  A \== B, to_py(A, PA), to_py(B, PB), T = [distinct, PA, PB]
    ;   L = (A == B)
    ->  A == B, to_py(A, PA), T = [same, PA, PA]
    ;   L = (\+ \+ A)                 % a positive literal ground when called
    ->  call(M:A),
        \+ ( member(X, Anc), X =@= A ),
        once(prove(M, A, Anc, D, T))
    ;   call(M:L),
        \+ ( member(X, Anc), X =@= L ),
        once(prove(M, L, Anc, D, T))
    ).

negative(\+ A, A) :- A \= (\+ _).
negative(tnot(A), A).

%   fluent_goal(+M, +Goal, -Fluent): Goal is a lookup of Fluent in the state.

fluent_goal(M, G, F) :-
    (   G = true(F0) -> F = F0
    ;   G = true_other(F0) -> F = F0
    ;   callable(G), M:gdl_store(F, G), \+ G = true_other(_)
    ).

%   rules_goal(+M, +Goal, -RulesGoal): the head of the rules that derive Goal (the
%   static_* rules of a relation stored as facts at load).

rules_goal(M, G, RG) :-
    (   catch(M:gdl_static(G, R0), _, fail) -> RG = R0 ; RG = G ).

body_literals(true, []) :- !.
body_literals((_ -> G ; true), [G]) :- !.  % a guard; the head is ground here, so it is G
body_literals((A, B), Ls) :- !,
    body_literals(A, LA),
    body_literals(B, LB),
    append(LA, LB, Ls).
body_literals(L, [L]).

line_of(Ref, Line) :-
    (   clause_property(Ref, line_count(L)) -> Line = L ; Line = 0 ).

		 /*******************************
		 *          REFUTATIONS         *
		 *******************************/

%   refute(+M, +Goal, +Depth, -Tree): Goal (ground, and false) fails because Tree.

refute(M, G, D, Tree) :-
    to_py(G, PG),
    (   fluent_goal(M, G, F)
    ->  to_py(F, PF), Tree = [no_state, PF]
    ;   G = does(R, Mv)
    ->  to_py(R, PR), to_py(Mv, PM), Tree = [no_does, PR, PM]
    ;   D =< 0
    ->  Tree = [more, PG]
    ;   rules_goal(M, G, RG),
        findall(A, ( clause(M:RG, Body, Ref), attempt(M, G, Body, Ref, D, A) ), As),
        Tree = [fails, PG, As]
    ).

attempt(M, G, Body, Ref, D, [attempt, Line, PG, PLits, K, N, Sub]) :-
    body_literals(Body, Lits),
    line_of(Ref, Line),
    first_failing(Lits, M, 1, K),
    K0 is K - 1,
    length(Before, K0),
    append(Before, [Failing|_], Lits),
    aggregate_all(count, limit(1000, solve(Before, M)), N),
    (   once(solve(Before, M)) -> true ; true ),
    to_py(G, PG),
    maplist(literal_py, Lits, PLits),
    D1 is D - 1,
    why_literal_fails(Failing, M, D1, Sub).

%   first_failing(+Lits, +M, +I, -K): literals 1..K-1 have a solution, 1..K none.
first_failing(Lits, M, I, K) :-
    length(Prefix, I),
    append(Prefix, _, Lits),
    (   \+ solve(Prefix, M)
    ->  K = I
    ;   I1 is I + 1,
        first_failing(Lits, M, I1, K)
    ).

solve([], _).
solve([L|Ls], M) :-
    call(M:L),
    solve(Ls, M).

why_literal_fails(L, M, D, Sub) :-
    (   negative(L, A)
    ->  once(prove(M, A, [], D, S)), Sub = [holds, S]
    ;   L = (A \== _)
    ->  to_py(A, PA), Sub = [same, PA, PA]
    ;   L = (A == B)
    ->  to_py(A, PA), to_py(B, PB), Sub = [distinct, PA, PB]
    ;   L = (\+ \+ A)
    ->  refute_any(M, A, D, Sub)
    ;   refute_any(M, L, D, Sub)
    ).

refute_any(M, A, D, Sub) :-
    (   ground(A)
    ->  refute(M, A, D, Sub)
    ;   to_py(A, PA), Sub = [no_instance, PA]
    ).

		 /*******************************
		 *            PY FORM           *
		 *******************************/

literal_py(L, P) :-
    (   negative(L, A) -> to_py(A, PA), P = ['\\+', PA]
    ;   L = (\+ \+ A) -> to_py(A, PA), P = ['\\+\\+', PA]
    ;   L = (A \== B) -> to_py(A, PA), to_py(B, PB), P = ['\\==', PA, PB]
    ;   L = (A == B) -> to_py(A, PA), to_py(B, PB), P = ['==', PA, PB]
    ;   to_py(L, P)
    ).

%!  to_py(+Term, -Py) is det.
%
%   Term in py form (atoms, numbers, and [Functor, Arg...] lists for compounds); a
%   variable is ['$var'].

to_py(T, P) :-
    (   var(T) -> P = ['$var']
    ;   atomic(T) -> P = T
    ;   compound_name_arguments(T, N, As),
        maplist(to_py, As, Ps),
        P = [N|Ps]
    ).

%!  from_py(+Py, -Term) is det.
%
%   The term a py-form value stands for (strings and integers become atoms; a list
%   [Name] is the compound of arity zero Name(), the GDL term (name)).

from_py(P, T) :-
    (   atom(P) -> T = P
    ;   string(P) -> atom_string(T, P)
    ;   integer(P) -> atom_number(T, P)
    ;   P = [N0|Ps]
    ->  from_py(N0, N),
        maplist(from_py, Ps, As),
        compound_name_arguments(T, N, As)     % [s] is s(), as the translation has it
    ;   throw(gdl_error(bad_term(P)))
    ).
