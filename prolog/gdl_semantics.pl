/*  gdl_semantics: GDL's meaning for games translated by gdl2pl, on Prolog terms.

    A translated game is a module (see gdl2pl/translate.py) that defines GDL's
    keyword relations (role/1, init/1, legal/2, next/1, goal/2, terminal/0, ...),
    keeps the current state in thread-local true_F/N predicates and the joint move
    in does/2, and tells the runtime where each fluent is stored (gdl_store/2),
    which state-independent relations to compute at load (gdl_static/2) and which
    tables must be cleared when the state changes (gdl_true_table/1,
    gdl_does_table/1, gdl_query_tables/2).

    This module gives those relations their meaning: it computes the
    state-independent relations once (game_prepare/1), installs a state by
    asserting and erasing only its difference with the installed one, asks the
    game's legal/next/terminal/goal about the installed state, and plays random
    playouts. Everything here works on Prolog terms; gdl_runtime.pl converts to and
    from Python, bounds every query, and loads and unloads the game text.

    The installed state is per thread (thread_local stores, private tables,
    thread-local global variables): each thread has its own state of each game.

    Process-wide flags set when this file is loaded:

    - gc_thread = false: playouts erase clauses (the fluents of the previous
      state) at a high rate; reclaiming them in the thread that erased them is
      cheaper than handing them to SWI's garbage-collection thread (hanoi: about
      12 % more states/s). Clause garbage is then collected by the threads that
      make it, in every program of the process.
    - max_table_subgoal_size = max_table_answer_size = 2000: no term in a game is
      that large, so a tabled relation that builds ever larger terms (an endless
      recursion through function symbols) fails fast with a resource error
      instead of filling the table space. These bound every table of the process.

    While game_prepare/1 computes the state-independent relations, table_space is
    lowered to at most 256 MB and restored afterwards (process-wide for that time).

    The file itself is compiled with optimise = true (a file-scoped flag:
    arithmetic compiled, maplist/N inlined by library(apply_macros)).
*/

:- module(gdl_semantics,
          [ game_prepare/1,           % +Module
            game_release/1,           % +Module
            game_initial_state/2,     % +Module, -SortedFluents
            game_base/2,              % +Module, -SortedFluents
            game_input/3,             % +Module, +Role, -SortedMoves
            game_percepts/3,          % +Module, +Role, -SortedPercepts
            state_roles/2,            % +Module, -Roles
            state_install/2,          % +Module, +SortedFluents
            state_current/2,          % +Module, -SortedFluents
            state_legal/3,            % +Module, +Role, -SortedMoves
            state_is_legal/3,         % +Module, +Role, +Move
            state_terminal/1,         % +Module
            state_goals/3,            % +Module, +Role, -SortedValues
            state_next/3,             % +Module, +JointMove, -SortedFluents
            state_advance/4,          % +Module, +JointMove, -Added, -Removed
            state_info/4,             % +Module, -Terminal, -LegalPerRole, -Goals
            state_legal_all/2,        % +Module, -LegalPerRole
            state_check_joint/3,      % +Module, +JointMove, -Check
            state_children/3,         % +Module, +JointMoves, -Children
            state_playout/3,          % +Module, +MaxDepth, -Depth
            state_playouts/5,         % +Module, +Count, +MaxDepth, -PerRole, -Steps
            state_percepts/4,         % +Module, +JointMove, +Role, -SortedPercepts
            state_consistent/5,       % +Module, +JointMove, +Role, +Percepts, -Next
            state_forget/1,           % +Module
            goal_number/2             % +Value, -Number
          ]).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(pairs)).
:- use_module(library(solution_sequences)).
:- set_prolog_flag(optimise, true).    % for this file only (file-scoped flag)
:- use_module(library(apply_macros)).

:- set_prolog_flag(gc_thread, false).
:- set_prolog_flag(max_table_subgoal_size, 2000).
:- set_prolog_flag(max_table_answer_size, 2000).

/** <module> GDL semantics of games translated by gdl2pl

The state-level questions a game answers, on Prolog terms: fluents and moves are
terms whose atoms are the GDL symbols (`cell('1', '1', b)`). A state is a sorted,
duplicate-free list of fluents; answers are sorted sets. Every predicate takes the
game module (an atom) first. The state_* predicates answer about the state this
thread installed last with state_install/2 (or state_advance/4, or a playout);
they run under no inference limit of their own, so a caller bounds its search
itself (gdl_runtime.pl does).
*/

:- dynamic loaded_roles/2.           % loaded_roles(Module, Roles)
:- dynamic game_tables/4.            % game_tables(Module, Kind, Heads, FlagKey)
:- dynamic game_query_flags/3.       % game_query_flags(Module, Query, FlagKeys)
:- dynamic kept_rules/2.             % kept_rules(Module, FactsHead): not materialized


		 /*******************************
		 *       LOADING A GAME         *
		 *******************************/

%!  game_prepare(+Module) is det.
%
%   Make the loaded game module Module ready to answer questions: compute its
%   state-independent relations (materialize/1) and record its roles and the
%   tables its state changes must clear.

game_prepare(Module) :-
    materialize(Module),
    record_roles(Module),
    record_tables(Module).

%!  game_release(+Module) is det.
%
%   Forget what this module recorded about Module, its tables and this thread's
%   state of it. The caller removes the module itself.
%
%   All of this thread's tables go (games' tables are private), not only
%   Module's: abolish_module_tables/1 empties a game's tables but leaves the
%   nodes of this thread's table of subgoals they had, so a process that loads
%   game after game grew by every game's subgoals (gt_two_thirds_4p: 19 MB a
%   load). The tables of another game loaded in this thread are computed again
%   when next asked.

game_release(Module) :-
    retractall(loaded_roles(Module, _)),
    retractall(kept_rules(Module, _)),
    forall(retract(game_tables(Module, _, _, Flag)), nb_delete(Flag)),
    retractall(game_query_flags(Module, _, _)),
    catch(abolish_private_tables, _, true),
    state_key(Module, Key),
    nb_delete(Key),
    legal_key(Module, LegalKey),
    nb_delete(LegalKey).

%   materialize(+Module): give each state-independent relation (gdl_static/2 lists
%   them, dependencies first) the facts its rules derive, computed once by calling
%   the rules with unbound arguments. That is the relation's meaning only when the
%   call's bindings cannot change an answer, so a relation keeps calling its rules
%   (evaluated with the bindings present at call time, as any other relation is)
%   when
%   - one of its rules has a negation or distinct with a variable that no earlier
%     positive literal binds (outside GDL; gdl2pl check reports it), or calls a
%     relation that keeps its rules for that reason (unsafe_rules/3);
%   - an answer is not ground (a head variable no positive literal binds);
%   - it has more answers than its limit: a non-recursive one with more than 1,000
%     answers, as its rules answer a bound call in a few inferences where SWI's
%     clause indexing would scan many facts (a ground call is answered once, as a
%     fact would be); a recursive one (its rules are tabled) past 1,000,000.

materialize(Module) :-
    forall(Module:gdl_static(Facts, Rules), materialize(Module, Facts, Rules)),
    abolish_private_tables.             % with their subgoals' nodes (game_release/1)

materialize(Module, Facts, Rules) :-
    (   unsafe_rules(Module, Rules)
    ->  keep_rules(Module, Facts, Rules)
    ;   static_answers(Module, Facts, Rules, Answers),
        (   Answers == too_many
        ->  assert_rules(Module, Facts, Rules)
        ;   \+ maplist(ground, Answers)
        ->  keep_rules(Module, Facts, Rules)
        ;   forall(member(A, Answers), assertz(Module:A))
        )
    ).

keep_rules(Module, Facts, Rules) :-
    functor(Facts, N, A),
    functor(Head, N, A),
    assertz(kept_rules(Module, Head)),
    assert_rules(Module, Facts, Rules).

assert_rules(Module, Facts, Rules) :-
    assertz(Module:(Facts :- ( ground(Facts) -> once(Rules) ; Rules ))).

%   static_answers(+Module, +Facts, +Rules, -Answers): the sorted instances of
%   Facts the rules derive, or too_many past the relation's limit (or the table
%   space while computing them). They are collected as a set (distinct/2), so
%   the limit counts answers, not proofs, and the list holds each answer once.

static_answers(Module, Facts, Rules, Answers) :-
    (   predicate_property(Module:Rules, tabled)
    ->  Limit = 1000000
    ;   Limit = 1000
    ),
    Max is Limit + 1,
    current_prolog_flag(table_space, Space),
    Bounded is min(Space, 256*1024*1024),
    setup_call_cleanup(
        set_prolog_flag(table_space, Bounded),
        catch(findall(Facts, limit(Max, distinct(Facts, Module:Rules)), Answers0),
              error(resource_error(_), _),
              Answers0 = too_many),
        set_prolog_flag(table_space, Space)),
    (   ( Answers0 == too_many ; length(Answers0, N), N > Limit )
    ->  Answers = too_many
    ;   sort(Answers0, Answers)
    ).

%   unsafe_rules(+Module, +Rules): a clause of Rules has a negative
%   literal (\+, tnot) or a distinct (\==, ==) with a variable that no earlier
%   positive literal binds, where a literal calling a relation kept as rules for
%   the same reason binds nothing (its answers may be non-ground). The bindings of
%   the call then decide the literal, so the answers of an unbound call are not
%   the relation. A guard before a recursive call, ( ground(X) -> \+ G ; true ), is
%   safe (it is skipped unbound, and asked again once X is bound) and binds nothing.

unsafe_rules(Module, Rules) :-
    functor(Rules, N, A),
    functor(H, N, A),
    clause(Module:H, Body),
    unsafe_body(Body, Module, []),
    !.

unsafe_body((A, B), Module, Bound0) :-
    !,
    (   unsafe_body(A, Module, Bound0)
    ->  true
    ;   binds(A, Module, Bound0, Bound),
        unsafe_body(B, Module, Bound)
    ).
unsafe_body(Lit, _, Bound) :-
    test_literal(Lit),
    term_variables(Lit, Vs),
    member(V, Vs),
    \+ ( member(B, Bound), B == V ),
    !.

test_literal(\+ _).
test_literal(tnot(_)).
test_literal(_ \== _).
test_literal(_ == _).

%   binds(+Literal, +Module, +Bound0, -Bound): the variables bound after a
%   literal. A positive literal binds its variables unless it calls a relation
%   kept as rules because of unsafe literals or non-ground answers.

binds(Lit, _, Bound, Bound) :-
    test_literal(Lit),
    !.
binds((_ -> _ ; true), _, Bound, Bound) :-   % a guard, asked only when bound
    !.
binds(once(G), Module, Bound0, Bound) :-
    !,
    binds(G, Module, Bound0, Bound).
binds(G, Module, Bound, Bound) :-
    kept_rules(Module, H),
    subsumes_term(H, G),
    !.
binds(G, _, Bound0, Bound) :-
    term_variables(G, Vs),
    append(Bound0, Vs, Bound).

record_roles(Module) :-
    findall(R, Module:role(R), Rs0),
    dedup(Rs0, Rs),
    retractall(loaded_roles(Module, _)),
    assertz(loaded_roles(Module, Rs)).

record_tables(Module) :-
    retractall(game_tables(Module, _, _, _)),
    retractall(game_query_flags(Module, _, _)),
    forall(member(Kind-Table, [true-gdl_true_table, does-gdl_does_table]),
           (   findall(H, call(Module:Table, H), Heads),
               Heads \== []
           ->  tables_flag(Module, Kind, Key),
               assertz(game_tables(Module, Kind, Heads, Key))
           ;   true
           )),
    forall(distinct(Query, Module:gdl_query_tables(Query, _)),
           (   findall(Key, ( Module:gdl_query_tables(Query, Kind),
                              tables_flag(Module, Kind, Key) ), Keys),
               assertz(game_query_flags(Module, Query, Keys))
           )).

dedup([], []).
dedup([X|Xs], [X|Ys]) :-
    exclude(==(X), Xs, Rest),
    dedup(Rest, Ys).


		 /*******************************
		 *   STATE-INDEPENDENT ANSWERS  *
		 *******************************/

%!  game_initial_state(+Module, -State) is det.
%
%   The sorted initial state of Module (its init/1 facts).

game_initial_state(Module, State) :-
    tables_used(Module, init),
    answers(F, Module:init(F), State).

%!  game_base(+Module, -Fluents) is det.
%
%   The sorted base propositions of Module (its base/1 facts).

game_base(Module, Fluents) :-
    tables_used(Module, base),
    answers(F, Module:base(F), Fluents).

%!  game_input(+Module, +Role, -Moves) is det.
%
%   The sorted input moves of Role in Module (its input/2 facts).

game_input(Module, Role, Moves) :-
    tables_used(Module, input),
    answers(M, Module:input(Role, M), Moves).

%!  game_percepts(+Module, +Role, -Percepts) is det.
%
%   The sorted percepts Module declares for Role (GDL-II's percept/2 facts); []
%   in a game that declares none.

game_percepts(Module, Role, Percepts) :-
    (   current_predicate(Module:percept/2)
    ->  tables_used(Module, percept),
        answers(P, Module:percept(Role, P), Percepts)
    ;   Percepts = []
    ).

%!  state_roles(+Module, -Roles) is det.
%
%   The roles of a loaded game, in the order the game states them. Raises
%   gdl_error(not_loaded(Module)) if Module is not a loaded game.

state_roles(Module, Roles) :-
    (   loaded_roles(Module, Roles0)
    ->  Roles = Roles0
    ;   throw(gdl_error(not_loaded(Module)))
    ).

%   answers(+Template, :Goal, -Set): the sorted set of instances of Template for
%   which Goal holds. The legal, next and goal queries of a state have few answers
%   and are asked at every step of a playout, so duplicate proofs stay in the list
%   until the sort: collecting through distinct/2 (a trie per call) made playouts
%   1.2 to 3.5 times slower (ticTacToe 33k -> 20k states/s, dotsAndBoxes 15k ->
%   4k), and a findall/3 that switches to distinct/2 past 4,096 proofs (limit/2
%   counting each) 0 to 25 % slower. The proofs of one query are bounded anyway by
%   the inference limit of the question (gdl_runtime.pl) and the stacks. The
%   state-independent relations, computed once, are collected as sets
%   (static_answers/4).

answers(Template, Goal, Set) :-
    findall(Template, Goal, List),
    sort(List, Set).


		 /*******************************
		 *   QUESTIONS ABOUT THE STATE  *
		 *******************************/

%!  state_install(+Module, +Fluents) is det.
%
%   Make the sorted, duplicate-free list Fluents this thread's state of Module,
%   asserting and erasing only its difference with the installed state.

state_install(Module, State) :-
    installed(Module, Old),
    (   pairs_keys(Old, State)
    ->  true
    ;   switch(Module, Old, State, Pairs, _, _),
        set_installed(Module, Pairs)
    ).

%!  state_current(+Module, -Fluents) is det.
%
%   The state this thread installed last (a sorted list; [] if none).

state_current(Module, State) :-
    installed(Module, Pairs),
    pairs_keys(Pairs, State).

%!  state_legal(+Module, +Role, -Moves) is det.
%
%   The sorted legal moves of Role in the installed state.

state_legal(Module, Role, Moves) :-
    tables_used(Module, legal),
    answers(M, Module:legal(Role, M), Moves).

%!  state_is_legal(+Module, +Role, +Move) is semidet.
%
%   True if Move is a legal move of Role in the installed state.

state_is_legal(Module, Role, Move) :-
    tables_used(Module, legal),
    once(Module:legal(Role, Move)).

%!  state_terminal(+Module) is semidet.
%
%   True if the installed state is terminal.

state_terminal(Module) :-
    tables_used(Module, terminal),
    once(Module:terminal).

%!  state_goals(+Module, +Role, -Values) is det.
%
%   The sorted goal values of Role in the installed state (atoms such as '100').

state_goals(Module, Role, Values) :-
    tables_used(Module, goal),
    answers(V, Module:goal(Role, V), Values).

%!  state_next(+Module, +Joint, -Next) is det.
%
%   The sorted successor of the installed state under Joint (one move per role,
%   in role order; legality is not checked). The installed state does not change.

state_next(Module, Joint, Next) :-
    state_roles(Module, Roles),
    next_state(Module, Roles, Joint, Next).

%!  state_percepts(+Module, +Joint, +Role, -Percepts) is det.
%
%   The sorted percepts of Role (GDL-II's sees/2) when Joint is played in the
%   installed state (legality is not checked); [] in a game without sees rules.
%   The installed state does not change.

state_percepts(Module, Joint, Role, Percepts) :-
    (   current_predicate(Module:sees/2)
    ->  state_roles(Module, Roles),
        tables_used(Module, sees),
        assert_joint(Module, Roles, Joint, Refs),
        catch(answers(P, Module:sees(Role, P), Seen), E,
              ( erase_joint(Module, Refs), throw(E) )),
        erase_joint(Module, Refs),
        Percepts = Seen
    ;   Percepts = []
    ).

%!  state_consistent(+Module, +Joint, +Role, +Percepts, -Next) is semidet.
%
%   Next is the sorted successor of the installed state under Joint (legality is
%   not checked) if Role's percepts of Joint (state_percepts/4) are exactly the
%   sorted set Percepts; fails if they are not, before computing Next. The
%   moves of Joint are asserted once for both questions. The installed state
%   does not change.

state_consistent(Module, Joint, Role, Percepts, Next) :-
    state_roles(Module, Roles),
    tables_used(Module, sees),
    tables_used(Module, next),
    assert_joint(Module, Roles, Joint, Refs),
    catch(seen_next(Module, Role, Percepts, Next0), E,
          ( erase_joint(Module, Refs), throw(E) )),
    erase_joint(Module, Refs),
    Next0 = next(Next).

%   seen_next(+Module, +Role, +Percepts, -Next): next(Fluents) if Role perceives
%   exactly Percepts under the asserted joint move, else none.

seen_next(Module, Role, Percepts, Next) :-
    (   current_predicate(Module:sees/2)
    ->  answers(P, Module:sees(Role, P), Seen)
    ;   Seen = []
    ),
    (   Seen == Percepts
    ->  answers(F, Module:next(F), Fluents),
        Next = next(Fluents)
    ;   Next = none
    ).

%!  state_advance(+Module, +Joint, -Added, -Removed) is det.
%
%   Install the successor of the installed state under Joint (legality is not
%   checked); Added and Removed are the sorted fluents it adds and removes.

state_advance(Module, Joint, Added, Removed) :-
    state_roles(Module, Roles),
    next_state(Module, Roles, Joint, Next),
    installed(Module, Old),
    switch(Module, Old, Next, Pairs, Added, Removed),
    set_installed(Module, Pairs).

%!  state_info(+Module, -Terminal, -LegalPerRole, -Goals) is det.
%
%   What a search asks about the installed state, in one go: Terminal is true or
%   false, LegalPerRole the sorted legal moves of each role (in role order), and
%   Goals, only when the state is terminal, the sorted goal values of each role
%   (state_goals/3); [] when it is not terminal.

state_info(Module, Terminal, Legal, Goals) :-
    state_roles(Module, Roles),
    (   state_terminal(Module)
    ->  Terminal = true,
        maplist(state_goals(Module), Roles, Goals)
    ;   Terminal = false,
        Goals = []
    ),
    state_legal_all(Module, Legal).

%!  state_legal_all(+Module, -LegalPerRole) is det.
%
%   The sorted legal moves of each role (in role order) in the installed state.
%   They are kept (per thread, until the state changes) for state_check_joint/3.

state_legal_all(Module, Legal) :-
    state_roles(Module, Roles),
    maplist(state_legal(Module), Roles, Legal),
    legal_key(Module, Key),
    nb_setval(Key, known(Legal)).

%!  state_check_joint(+Module, +Joint, -Check) is det.
%
%   Check is ok if Joint has one move per role and each is a legal move of its role
%   in the installed state, else [arity, N] (N roles) or [illegal, I] for the first
%   role (0-based index I) whose move is not legal. Legality is looked up in the
%   legal moves state_legal_all/2 computed for the installed state, if it did (a
%   search step asks them of every state it reaches), else asked of the game.

state_check_joint(Module, Joint, Check) :-
    state_roles(Module, Roles),
    length(Roles, N),
    (   \+ length(Joint, N)
    ->  Check = [arity, N]
    ;   legal_key(Module, Key),
        nb_current(Key, known(Legal))
    ->  (   nth0(I, Legal, Moves), nth0(I, Joint, M), \+ memberchk(M, Moves)
        ->  Check = [illegal, I]
        ;   Check = ok
        )
    ;   nth0(I, Roles, R), nth0(I, Joint, M), \+ state_is_legal(Module, R, M)
    ->  Check = [illegal, I]
    ;   Check = ok
    ).

%!  state_children(+Module, +JointMoves, -Children) is det.
%
%   For each joint move (in order; legality is not checked), the successor of the
%   installed state as child(Added, Removed, Terminal, LegalPerRole, Goals): the
%   sorted fluents it adds to and removes from the installed state, and what
%   state_info/4 says about it. The installed state is the same afterwards (each
%   successor is installed in turn by its difference, and the parent again at the
%   end).

state_children(Module, Joints, Children) :-
    state_roles(Module, Roles),
    installed(Module, Parent),
    catch(maplist(child(Module, Roles, Parent), Joints, Children), E,
          ( reinstall(Module, Parent), throw(E) )),
    reinstall(Module, Parent).

child(Module, Roles, Parent, Joint, child(Add, Del, Terminal, Legal, Goals)) :-
    installed(Module, Now),
    (   Now == Parent
    ->  Pairs = Parent
    ;   pairs_keys(Parent, Fluents),
        switch(Module, Now, Fluents, Pairs, _, _),
        set_installed(Module, Pairs)
    ),
    next_state(Module, Roles, Joint, Next),
    switch(Module, Pairs, Next, Pairs1, Add, Del),
    set_installed(Module, Pairs1),
    state_info(Module, Terminal, Legal, Goals).

%   reinstall(+Module, +Pairs): install the state of Pairs (as installed/2 gives
%   it) by its difference with the one installed now.

reinstall(Module, Pairs) :-
    installed(Module, Now),
    (   Now == Pairs
    ->  true
    ;   pairs_keys(Pairs, Fluents),
        switch(Module, Now, Fluents, Pairs1, _, _),
        set_installed(Module, Pairs1)
    ).

%!  state_forget(+Module) is det.
%
%   Leave this thread with no state of Module at all (no fluent, no joint move, no
%   table of the state), whatever a failed query left behind, so that what a
%   caller believes is installed and what is installed cannot differ: the next
%   question installs its state whole. Never raises.

state_forget(Module) :-
    catch(( forall(Module:gdl_store(_, Fact), retractall(Module:Fact)),
            retractall(Module:does(_, _)),
            set_installed(Module, []),
            forall(game_tables(Module, _, Heads, _),
                   forall(member(H, Heads), abolish_table_subgoals(Module:H))) ),
          _, true).


		 /*******************************
		 *          PLAYOUTS            *
		 *******************************/

%!  state_playout(+Module, +MaxDepth, -Depth) is det.
%
%   Play uniformly random joint moves from the installed state until a terminal
%   state, or until MaxDepth moves were made (Depth of them); the final state is
%   then installed. Raises gdl_no_legal_move(Role, State) if a role has no legal
%   move in the non-terminal State (then installed).

state_playout(Module, MaxDepth, Depth) :-
    state_roles(Module, Roles),
    installed(Module, Start),
    playout(Module, Roles, MaxDepth, Start, 0, Depth, Final),
    set_installed(Module, Final).

%!  state_playouts(+Module, +Count, +MaxDepth, -PerRole, -Steps) is det.
%
%   Run Count playouts (state_playout/3) from the installed state. PerRole has, for
%   each role in order, the list of [Value, Depth] of every playout, Value being
%   the role's goal value at the end as an integer, or -1 when the role has no
%   unique integer goal value there. Steps is the total number of moves made.
%   Raises gdl_no_legal_move(Role, State) as state_playout/3 does.

state_playouts(Module, Count, MaxDepth, PerRole, Steps) :-
    state_current(Module, Start),
    state_roles(Module, Roles),
    numlist(1, Count, Ns),
    foldl(one_playout(Module, Roles, Start, MaxDepth), Ns, Results, 0, Steps),
    transpose_results(Roles, Results, PerRole).

one_playout(Module, Roles, Start, MaxDepth, _, Depth-Goals, S0, S) :-
    state_install(Module, Start),
    installed(Module, Pairs),
    playout(Module, Roles, MaxDepth, Pairs, 0, Depth, Final),
    set_installed(Module, Final),
    maplist(unique_goal(Module), Roles, Goals),
    S is S0 + Depth.

unique_goal(Module, Role, V) :-
    state_goals(Module, Role, Vs),
    (   Vs = [A], goal_number(A, N) -> V = N ; V = -1 ).

%!  goal_number(+Value, -Number) is semidet.
%
%   A goal value read as GDL writes numbers: an atom of decimal digits only (at most
%   4000 of them), never SWI-Prolog's other number syntax (0x32, 0'c, 1 000, 1.0e2).
%   The Python side reads goal values the same way (gdl2pl.vocabulary.goal_number).

goal_number(A, N) :-
    atom(A),
    atom_length(A, L),
    L > 0, L =< 4000,
    atom_codes(A, Cs),
    forall(member(C, Cs), ( C >= 0'0, C =< 0'9 )),
    number_codes(N, Cs).

transpose_results(Roles, Results, PerRole) :-
    length(Roles, N),
    numlist(1, N, Is),
    maplist(role_column(Results), Is, PerRole).

role_column(Results, I, Column) :-
    findall([V, D], ( member(D-Gs, Results), nth1(I, Gs, V) ), Column).

%   playout(+Module, +Roles, +MaxDepth, +Pairs, +Depth0, -Depth, -Final)
%   Pairs (see installed/2) is installed, but only the caller records Final.

playout(Module, Roles, MaxDepth, Pairs, D0, D, Final) :-
    (   ( D0 >= MaxDepth ; state_terminal(Module) )
    ->  D = D0,
        Final = Pairs
    ;   maplist(random_legal(Module, Pairs), Roles, Joint),
        next_state(Module, Roles, Joint, Next),
        switch(Module, Pairs, Next, Pairs1, _, _),
        D1 is D0 + 1,
        playout(Module, Roles, MaxDepth, Pairs1, D1, D, Final)
    ).

random_legal(Module, Pairs, Role, Move) :-
    state_legal(Module, Role, Moves),
    (   Moves == []
    ->  set_installed(Module, Pairs),
        pairs_keys(Pairs, State),
        throw(gdl_no_legal_move(Role, State))
    ;   length(Moves, N),
        I is random(N),
        nth0(I, Moves, Move)
    ).


		 /*******************************
		 *     STATE AND JOINT MOVE     *
		 *******************************/

%   next_state(+Module, +Roles, +Joint, -Next): the sorted successor fluents. The
%   joint move is asserted as the game's does/2 facts meanwhile (and erased after,
%   by reference).

next_state(Module, Roles, Joint, Next) :-
    tables_used(Module, next),
    assert_joint(Module, Roles, Joint, Refs),
    catch(answers(F, Module:next(F), Next), E,
          ( erase_joint(Module, Refs), throw(E) )),
    erase_joint(Module, Refs).

assert_joint(Module, Roles, Joint, Refs) :-
    maplist(assert_does(Module), Roles, Joint, Refs),
    clear_tables(Module, does).

assert_does(Module, Role, Move, Ref) :-
    assertz(Module:does(Role, Move), Ref).

erase_joint(Module, Refs) :-
    maplist(erase, Refs),
    clear_tables(Module, does).

%   The tables of state-dependent recursive relations are private to the thread
%   and cleared when the state (Kind true) or the joint move (Kind does) changes,
%   but only if a query that may fill them (gdl_query_tables/2 of the game) ran
%   since they were last cleared: a thread-local flag per game and Kind says so.

clear_tables(Module, Kind) :-
    (   game_tables(Module, Kind, Heads, Flag),
        nb_current(Flag, used)
    ->  nb_linkval(Flag, clean),
        forall(member(H, Heads), abolish_table_subgoals(Module:H))
    ;   true
    ).

%   tables_used(+Module, +Query): Query (legal, next, terminal, goal, ...) is
%   about to run; mark the tables it may fill.

tables_used(Module, Query) :-
    (   game_query_flags(Module, Query, Flags)
    ->  maplist(flag_used, Flags)
    ;   true
    ).

%   Global variables whose value is an atom are set with nb_linkval/2: an atom
%   lives outside the stacks, so there is nothing for nb_setval/2 to copy (it
%   calls duplicate_term/2 first; several times a step, that was 10 % of a
%   hanoi step through gdl_step/4).

flag_used(Flag) :-
    nb_linkval(Flag, used).

tables_flag(Module, Kind, Flag) :-
    atomic_list_concat(['$gdl_tables', Kind, Module], :, Flag).

%   The installed state of a game (per thread) is a sorted list of Fluent-Ref
%   pairs, Ref being the clause that stores Fluent: changing state erases and
%   asserts clauses by reference, with no search.

state_key(Module, Key) :-
    atom_concat('$gdl_state:', Module, Key).

installed(Module, Pairs) :-
    state_key(Module, Key),
    (   nb_current(Key, P) -> Pairs = P ; Pairs = [] ).

set_installed(Module, Pairs) :-
    state_key(Module, Key),
    nb_setval(Key, Pairs),
    legal_key(Module, LegalKey),
    nb_linkval(LegalKey, unknown).

%   The legal moves of the installed state, once state_info/4 computed them (per
%   thread): known(LegalPerRole), or unknown since the state last changed.

legal_key(Module, Key) :-
    atom_concat('$gdl_legal:', Module, Key).

%   switch(+Module, +OldPairs, +New, -NewPairs, -Added, -Removed): replace the
%   installed fluents by the sorted list New.

switch(Module, Old, New, Pairs, Add, Del) :-
    sync(Old, New, Module, Pairs, Add, Del),
    clear_tables(Module, true).

%   sync(+OldPairs, +New, +Module, -Pairs, -Added, -Removed): merge the two
%   sorted lists, erasing the clauses of the fluents New lacks and asserting those
%   it adds (deterministic: first-argument indexing, no choice points).

sync([], New, Module, Pairs, New, []) :-
    maplist(assert_fluent(Module), New, Pairs).
sync([P|Ps], New, Module, Pairs, Add, Del) :-
    sync_old(New, P, Ps, Module, Pairs, Add, Del).

sync_old([], P, Ps, _, [], [], Del) :-
    maplist(erase_fluent, [P|Ps], Del).
sync_old([N|Ns], O-R, Os, Module, Pairs, Add, Del) :-
    (   O == N
    ->  Pairs = [O-R|Pairs1],
        sync(Os, Ns, Module, Pairs1, Add, Del)
    ;   O @< N
    ->  erase(R),
        Del = [O|Del1],
        sync(Os, [N|Ns], Module, Pairs, Add, Del1)
    ;   assert_fluent(Module, N, Pair),
        Pairs = [Pair|Pairs1],
        Add = [N|Add1],
        sync_old(Ns, O-R, Os, Module, Pairs1, Add1, Del)
    ).

assert_fluent(Module, F, F-Ref) :-
    fluent_size_checked(F),
    (   Module:gdl_store(F, Fact) -> true ),
    assertz(Module:Fact, Ref).

%!  max_fluent_size(-Nodes) is det.
%
%   The most nodes (constants and compound terms, counted as a tree) a fluent may
%   have: 100,000. The rules of a game can grow a term without bound (a next rule
%   whose head holds a variable twice doubles it every step); within Prolog such
%   a term shares its parts, but storing it as a fact, hashing it or handing it to
%   Python takes exponential memory. A state holding a larger fluent is refused
%   with gdl_error(fluent_too_large(Name/Arity, Nodes)) where it is stored.

max_fluent_size(100000).

%   A fluent of at most 32 cells on the stack cannot reach the cap, however its
%   parts are shared: a compound of arity K takes K+1 cells and at most multiplies
%   the nodes below it by K, so N cells hold fewer than 2 * 1.32^N nodes.

fluent_size_checked(F) :-
    (   term_size(F, Cells),
        Cells =< 32
    ->  true
    ;   max_fluent_size(Max),
        nodes_left(F, Max, _)
    ->  true
    ;   max_fluent_size(Max),
        functor(F, Name, Arity),
        throw(gdl_error(fluent_too_large(Name/Arity, Max)))
    ).

%   nodes_left(+Term, +Budget, -Left): Term has fewer than Budget nodes as a tree,
%   and Left of the budget remain; fails as soon as the budget is spent.

nodes_left(T, N0, N) :-
    N0 > 0,
    N1 is N0 - 1,
    (   compound(T)
    ->  compound_name_arity(T, _, A),
        args_left(1, A, T, N1, N)
    ;   N = N1
    ).

args_left(I, A, T, N0, N) :-
    (   I > A
    ->  N = N0
    ;   arg(I, T, X),
        nodes_left(X, N0, N1),
        I1 is I + 1,
        args_left(I1, A, T, N1, N)
    ).

erase_fluent(F-Ref, F) :-
    erase(Ref).
