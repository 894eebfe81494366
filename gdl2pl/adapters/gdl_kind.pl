/*  gdl_kind: is a loaded game turn-taking? The reachability search behind the
    game-AI adapters' game kind (adapters/game.py), run in Prolog on gdl_runtime's
    term-level questions so that loading a game stays fast.

    A state is turn-taking when at most one role has more than one legal move.
    The search enumerates the reachable states breadth-first, up to a budget; if
    there are more, it plays random matches (a small deterministic generator, so
    a load gives the same answer every time) for a number of steps instead.
    Along the way it checks what the adapters need of every state it sees: a legal
    move for every role of a non-terminal state, exactly one numeric goal value
    per role at the end. The first state that breaks this is returned in py form
    (the runtime's: atoms, and lists [Functor, Arg...] for compound terms), so that
    Python can name the game, the state and the role in its error.

    The state installed in the calling thread is restored afterwards: the bridge
    remembers which state Prolog holds.
*/

:- module(gdl_kind, [ kind_search/8 ]).
% kind_search(+Module, +MaxStates, +MaxEdges, +MaxSteps, +Seed, +Limit, +Missing, -Result)
:- use_module(library(lists)).
:- use_module(library(apply)).
% The runtime's questions (state_roles/2, state_legal/3, ...), from the file the
% bridge loaded it from before this one (bridge.runtime()).
:- module_property(gdl_runtime, file(Runtime)), use_module(Runtime).
:- import(gdl_semantics:state_forget/1).  % after an interrupt: tables, facts unknown

%!  kind_search(+Module, +MaxStates, +MaxEdges, +MaxSteps, +Seed, +Limit, +Missing,
%!              -Result) is det.
%
%   Missing is the goal value a role without one gets in a terminal state (an
%   integer), or `none` (such a state is bad).
%   Result = [Verdict, States, MaxDepth, GoalSums, Bad, Missed, Layered]:
%   - Verdict: proved (every reachable state seen, all turn-taking), simultaneous
%     (a state where two roles choose was found), sampled (past the budget; random matches for MaxSteps steps found no such state), bad (Bad is
%     a state breaking the contract above, py form), or unknown (the search used
%     more than Limit inferences);
%   - the enumeration stops at MaxStates states or MaxEdges successor computations
%     (joint moves tried), whichever comes first;
%   - States: states enumerated; MaxDepth: the longest play seen (for proved: the
%     deepest level of the breadth-first search, which is the longest play only if
%     Layered);
%   - Layered: true when every joint move leads from a state of level D to one of
%     level D+1 (new, or met at that level already): then every play to a state is
%     as long as its level, and MaxDepth is the longest play; false when one leads
%     back to an earlier level (a cycle, or two ways of different lengths);
%   - GoalSums: for proved, the sorted sums of the goal values over the roles in
%     the terminal states;
%   - Missed: the first terminal state seen where a role has no goal and got
%     Missing (py form), or [].

kind_search(M0, MaxStates, MaxEdges, MaxSteps, Seed, Limit, Missing, Result) :-
    atom_string(Module, M0),
    nb_setval(gdl_kind_missing_goal, Missing),
    nb_setval(gdl_kind_missed, []),
    nb_setval(gdl_kind_layered, true),
    state_current(Module, Saved),
    setup_call_cleanup(
        true,
        catch(setup_call_cleanup(
                  nb_linkval('$gdl_busy', true),    % gdl_interrupt/0 may stop it
                  call_with_inference_limit(
                      search(Module, budget(MaxStates, MaxEdges, edges(0)), MaxSteps, Seed,
                             Result0),
                      Limit, Outcome),
                  nb_linkval('$gdl_busy', false)),
              gdl_error(interrupted),
              ( state_forget(Module), Outcome = interrupted )),
        state_install(Module, Saved)),
    nb_getval(gdl_kind_missed, Missed),
    nb_getval(gdl_kind_layered, Layered),
    (   memberchk(Outcome, [inference_limit_exceeded, interrupted])
    ->  Result = [unknown, 0, 0, [], [], Missed, false]
    ;   append(Result0, [Missed, Layered], Result)
    ).

search(Module, Budget, MaxSteps, Seed, Result) :-
    state_roles(Module, Roles),
    findall(F, Module:init(F), Fs),
    sort(Fs, Init),
    trie_new(Seen),
    trie_insert(Seen, Init, 0),             % each state with its level
    catch(bfs([Init], 0, 1, Module, Roles, Seen, Budget, [], Sums, Depth, States),
          kind_stop(Verdict0, Bad0, Depth0, States0), true),
    (   var(Verdict0)
    ->  sort(Sums, GoalSums),
        Result = [proved, States, Depth, GoalSums, []]
    ;   Verdict0 == budget
    ->  catch(walks(MaxSteps, Seed, Module, Roles, Init, Depth0, WalkDepth),
              kind_stop(Verdict1, Bad1, _, _), true),
        (   var(Verdict1)
        ->  Result = [sampled, States0, WalkDepth, [], []]
        ;   Result = [Verdict1, States0, Depth0, [], Bad1]
        )
    ;   Result = [Verdict0, States0, Depth0, [], Bad0]
    ).

%   bfs(+Level, +Depth, +Count, ...): expand the states of one level (all at Depth),
%   collect the next level; throws kind_stop(Verdict, Bad, Depth, Count) to stop early.

bfs([], Depth0, Count, _, _, _, _, Sums, Sums, Depth, Count) :-
    !,
    Depth is max(0, Depth0 - 1).
bfs(Level, Depth, Count0, Module, Roles, Seen, Budget, Sums0, Sums, MaxDepth, Count) :-
    expand_level(Level, Depth, Module, Roles, Seen, Budget, Count0, Count1,
                 Sums0, Sums1, Next, []),
    Depth1 is Depth + 1,
    bfs(Next, Depth1, Count1, Module, Roles, Seen, Budget, Sums1, Sums, MaxDepth, Count).

expand_level([], _, _, _, _, _, Count, Count, Sums, Sums, Next, Next).
expand_level([S|Ss], Depth, Module, Roles, Seen, Budget, C0, C, Sums0, Sums, Next0, Next) :-
    state_install(Module, S),
    look(Module, Roles, S, Depth, C0, Look),
    (   Look = terminal(Sum)
    ->  Sums1 = [Sum|Sums0],
        C1 = C0,
        Next0 = Next1
    ;   Look = moves(Legal),
        Sums1 = Sums0,
        findall(Joint, maplist(member, Joint, Legal), Joints),
        successors(Joints, Module, Seen, Depth, Budget, C0, C1, Next0, Next1)
    ),
    expand_level(Ss, Depth, Module, Roles, Seen, Budget, C1, C, Sums1, Sums, Next1, Next).

successors([], _, _, _, _, C, C, Next, Next).
successors([J|Js], Module, Seen, Depth, Budget, C0, C, Next0, Next) :-
    Budget = budget(MaxStates, MaxEdges, Edges),
    arg(1, Edges, E0),
    (   E0 >= MaxEdges
    ->  throw(kind_stop(budget, [], Depth, C0))
    ;   E is E0 + 1,
        nb_setarg(1, Edges, E)
    ),
    state_next(Module, J, S),
    Level is Depth + 1,
    (   trie_lookup(Seen, S, Was)
    ->  C1 = C0,
        Next0 = Next1,
        (   Was =:= Level
        ->  true
        ;   nb_setval(gdl_kind_layered, false)  % back to an earlier level
        )
    ;   C0 >= MaxStates
    ->  throw(kind_stop(budget, [], Depth, C0))
    ;   trie_insert(Seen, S, Level),
        C1 is C0 + 1,
        Next0 = [S|Next1]
    ),
    successors(Js, Module, Seen, Depth, Budget, C1, C, Next1, Next).

%   look(+Module, +Roles, +State, +Depth, +Count, -Look): the installed State is
%   terminal(GoalSum) or moves(LegalPerRole) with at most one role choosing; any
%   other state stops the search (simultaneous, or bad).

look(Module, Roles, S, Depth, Count, Look) :-
    (   state_terminal(Module)
    ->  maplist(state_goals(Module), Roles, Goals),
        nb_getval(gdl_kind_missing_goal, Missing),
        (   maplist(unique_number(Missing), Goals, Values)
        ->  note_missed(Goals, S),
            sum_list(Values, Sum),
            Look = terminal(Sum)
        ;   stop_bad(S, Depth, Count)
        )
    ;   maplist(state_legal(Module), Roles, Legal),
        (   memberchk([], Legal)
        ->  stop_bad(S, Depth, Count)
        ;   include(choice, Legal, [_, _|_])
        ->  throw(kind_stop(simultaneous, [], Depth, Count))
        ;   Look = moves(Legal)
        )
    ).

unique_number(Missing, [], Missing) :-
    integer(Missing),
    !.
unique_number(_, [A], N) :-
    gdl_semantics:goal_number(A, N).

choice([_, _|_]).

note_missed(Goals, S) :-
    (   memberchk([], Goals),
        nb_getval(gdl_kind_missed, [])
    ->  maplist(to_py, S, Py),
        nb_setval(gdl_kind_missed, Py)
    ;   true
    ).

stop_bad(S, Depth, Count) :-
    maplist(to_py, S, Py),
    throw(kind_stop(bad, Py, Depth, Count)).

to_py(T, P) :-
    (   compound(T)
    ->  compound_name_arguments(T, N, As),
        maplist(to_py, As, Ps),
        P = [N|Ps]
    ;   P = T
    ).

%   walks(+Steps, +Seed, +Module, +Roles, +Init, +Max0, -Max): random matches from
%   Init, Steps steps in all (reaching the end of a match counts as a step); the
%   longest is Max.

walks(Steps, Seed, Module, Roles, Init, Max0, Max) :-
    (   Steps =< 0
    ->  Max = Max0
    ;   walk(Steps, Seed, Module, Roles, Init, Init, 0, Max0, Max)
    ).

walk(Steps, Seed, Module, Roles, Init, S, Depth, Max0, Max) :-
    state_install(Module, S),
    look(Module, Roles, S, Depth, 0, Look),
    Steps1 is Steps - 1,
    Max1 is max(Max0, Depth),
    (   Look = terminal(_)
    ->  walks(Steps1, Seed, Module, Roles, Init, Max1, Max)
    ;   Look = moves(Legal),
        foldl(pick, Legal, Joint, Seed, Seed1),
        state_next(Module, Joint, Next),
        Depth1 is Depth + 1,
        (   Steps1 =< 0
        ->  Max is max(Max1, Depth1)
        ;   walk(Steps1, Seed1, Module, Roles, Init, Next, Depth1, Max1, Max)
        )
    ).

pick(Moves, Move, Seed0, Seed) :-
    Seed is (Seed0 * 1103515245 + 12345) mod 2147483648,
    length(Moves, N),
    I is (Seed >> 16) mod N,
    nth0(I, Moves, Move).
