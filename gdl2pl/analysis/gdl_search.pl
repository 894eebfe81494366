/*  gdl_search: breadth-first search of a loaded game's state graph, and random
    walks, for gdl2pl's analyzer (analysis/analyze.py).

    The search runs on gdl_runtime's term-level questions (state_install/2,
    state_legal/3, state_next/3, ...) in the calling thread. Each search is a
    session: states (sorted fluent lists) are numbered in the order of discovery
    (0 is the initial state); search_state/3 facts hold each state once, packed
    with fast_term_serialized/2 (a few hundred bytes a state, where a trie took
    several kilobytes), and search_seen/3 facts find a state's number from its
    term_hash/2 (states with equal hashes are told apart by comparing them). Python
    expands the states in batches (so it can show progress and stop at a time
    limit) and receives, for each expanded state, only numbers and goal values:
    the graph itself stays small on the Python side.

    Terms cross to Python in the runtime's "py form": atoms, and lists
    [Functor, Arg...] for compound terms.
*/

:- module(gdl_search,
          [ search_open/3,      % +Module, +Session, -InitialId
            search_expand/6,    % +Module, +Session, +MaxStates, +Batch, +Seconds, -Result
            search_legal/4,     % +Module, +Session, +Id, -LegalPerRole (py form)
            search_fluents/3,   % +Session, +Id, -Fluents (py form)
            search_close/1,     % +Session
            search_walks/7      % +Module, +Count, +MaxDepth, +Seed, +Limit, +Seconds, -Walks
          ]).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(random)).
% The runtime's questions (state_roles/2, state_legal/3, ...), from the file the
% bridge loaded it from before this one (bridge.runtime()).
:- module_property(gdl_runtime, file(Runtime)), use_module(Runtime).
:- import(gdl_semantics:state_forget/1).

:- dynamic search_state/3.          % search_state(Session, Id, Packed)
:- dynamic search_seen/3.           % search_seen(Session, Hash, Id)

%!  search_open(+Module, +Session, -InitialId) is det.
%
%   Start a search session from the game's initial state (the state installed in
%   this thread is restored when the session is closed).

search_open(M0, S0, 0) :-
    atom_string(Module, M0),
    atom_string(Session, S0),
    search_close(Session),
    state_current(Module, Saved),
    findall(F, Module:init(F), Fs),
    sort(Fs, Init),
    remember(Session, Init, 0),
    nb_setval(Session, session(Module, Saved)),
    key(Session, count, CK), nb_setval(CK, 1),
    key(Session, next, NK), nb_setval(NK, 0).

key(Session, What, Key) :-
    atomic_list_concat(['$gdl_search', Session, What], :, Key).

%!  search_close(+Session) is det.
%
%   Forget a session and reinstall the state that was installed when it opened.

search_close(S0) :-
    atom_string(Session, S0),
    (   nb_current(Session, session(Module, Saved))
    ->  state_install(Module, Saved),
        nb_delete(Session)
    ;   true
    ),
    retractall(search_state(Session, _, _)),
    retractall(search_seen(Session, _, _)).

%!  search_expand(+Module, +Session, +MaxStates, +Batch, +Seconds, -Result) is det.
%
%   Expand up to Batch states, in order of discovery, while fewer than MaxStates
%   states were discovered and Seconds have not passed (the clock is read before
%   each state and each successor: a state the time cuts is left unexpanded, to be
%   expanded whole by the next call). Result = [Records, Discovered, Expanded]; a
%   record is [Id, Terminal, Goals, LegalCounts, Successors]: Terminal is 1 or 0;
%   Goals the sorted goal values of each role (in every state: monotonicity asks of
%   every state that each role has exactly one goal value, never decreasing);
%   LegalCounts, for a non-terminal state, the number of legal moves of each role
%   (else []); Successors the number of the state each joint move leads to, joint
%   moves in lexicographic order of the roles' sorted moves (empty when a role has
%   none).

search_expand(M0, S0, MaxStates, Batch, Seconds, Result) :-
    until(Seconds, Until),
    stoppable(M0, expand(S0, MaxStates, Batch, Until, Result)).

expand(S0, MaxStates, Batch, Until, [Records, Count, Next]) :-
    atom_string(Session, S0),
    nb_getval(Session, session(Module, _)),
    state_roles(Module, Roles),
    key(Session, count, CK),
    key(Session, next, NK),
    nb_getval(NK, Next0),
    expand_loop(Batch-Until, Module, Session, Roles, MaxStates, CK, Next0, Next, Records),
    nb_setval(NK, Next),
    nb_getval(CK, Count).

expand_loop(Batch-Until, Module, Session, Roles, MaxStates, CK, Id, Next, Records) :-
    nb_getval(CK, Count),
    (   ( Batch =< 0 ; Id >= Count ; Count >= MaxStates ; past(Until) )
    ->  Next = Id,
        Records = []
    ;   state_of(Session, Id, State),
        state_install(Module, State),
        expand_state(Module, Session, Roles, CK, Until, Id, Record)
    ->  Records = [Record|Rest],
        Batch1 is Batch - 1,
        Id1 is Id + 1,
        expand_loop(Batch1-Until, Module, Session, Roles, MaxStates, CK, Id1, Next, Rest)
    ;   Next = Id,                      % Until came while expanding Id: not expanded
        Records = []
    ).

%   expand_state(+Module, +Session, +Roles, +CK, +Until, +Id, -Record): the record of
%   state Id (installed); fails if Until comes before its last successor is found
%   (the clock is read before each), so that a state with thousands of joint moves
%   does not hold the search long past its time. The successors found until then
%   stay discovered.

expand_state(Module, Session, Roles, CK, Until, Id, [Id, T, Goals, Counts, Succs]) :-
    maplist(state_goals(Module), Roles, Goals),
    (   state_terminal(Module)
    ->  T = 1,
        Counts = [],
        Succs = []
    ;   T = 0,
        maplist(state_legal(Module), Roles, Legal),
        maplist(length, Legal, Counts),
        (   memberchk([], Legal)
        ->  Succs = []
        ;   findall(Joint, maplist(member, Joint, Legal), Joints),
            maplist(successor(Module, Session, CK, Until), Joints, Succs)
        )
    ).

successor(Module, Session, CK, Until, Joint, Id) :-
    \+ past(Until),
    state_next(Module, Joint, Next),
    term_hash(Next, Hash),
    (   search_seen(Session, Hash, Id0),
        state_of(Session, Id0, Known),
        Known == Next
    ->  Id = Id0
    ;   nb_getval(CK, Id),
        Count is Id + 1,
        nb_setval(CK, Count),
        remember(Session, Next, Hash, Id)
    ).

%   remember(+Session, +State, +Id): number a new state.
remember(Session, State, Id) :-
    term_hash(State, Hash),
    remember(Session, State, Hash, Id).

remember(Session, State, Hash, Id) :-
    fast_term_serialized(State, Packed),
    assertz(search_seen(Session, Hash, Id)),
    assertz(search_state(Session, Id, Packed)).

%   until(+Seconds, -Until): the time (get_time/1) Seconds from now.
%   past(+Until): that time has come.

until(Seconds, Until) :-
    get_time(Now),
    Until is Now + Seconds.

past(Until) :-
    get_time(Now),
    Now >= Until.

%   stoppable(+Module, :Goal): run Goal, a question about Module, as one that
%   gdl_runtime:gdl_interrupt/0 may stop (it raises gdl_error(interrupted) while
%   the flag it reads is set; the flag is restored after, so a question inside
%   another leaves the outer one stoppable). On any exception this thread's state
%   of Module is forgotten (state_forget/1), as the runtime does for its own
%   questions: a question stopped while it switched states leaves no half-installed
%   state behind, and the next one installs its state whole.

:- meta_predicate stoppable(+, 0).
stoppable(M0, Goal) :-
    atom_string(Module, M0),
    (   nb_current('$gdl_busy', Old) -> true ; Old = false ),
    catch(setup_call_cleanup(nb_linkval('$gdl_busy', true),
                             Goal,
                             nb_linkval('$gdl_busy', Old)),
          E,
          ( state_forget(Module), throw(E) )).

%!  search_legal(+Module, +Session, +Id, -LegalPerRole) is det.
%
%   The sorted legal moves of each role in state Id, in py form.

search_legal(_M0, S0, Id, PyLegal) :-
    atom_string(Session, S0),
    nb_getval(Session, session(Module, _)),
    state_of(Session, Id, State),
    state_install(Module, State),
    state_roles(Module, Roles),
    maplist(state_legal(Module), Roles, Legal),
    maplist(maplist(to_py), Legal, PyLegal).

%!  search_fluents(+Session, +Id, -Fluents) is det.

search_fluents(S0, Id, PyFluents) :-
    atom_string(Session, S0),
    state_of(Session, Id, State),
    maplist(to_py, State, PyFluents).

%   state_of(+Session, +Id, -State): the state numbered Id, unpacked.
state_of(Session, Id, State) :-
    search_state(Session, Id, Packed),
    fast_term_serialized(State, Packed).

%!  search_walks(+Module, +Count, +MaxDepth, +Seed, +Limit, +Seconds, -Walks) is det.
%
%   Count random walks from the initial state, each a list
%   [Kind, JointMoves, Detail]: Kind is terminal (Detail: each role's sorted goal
%   values), stuck (Detail: the 0-based index of a role without a legal move),
%   cycle (the last state occurred earlier on the walk; Detail: the step at which it
%   first occurred) or long (MaxDepth steps without reaching a terminal state;
%   JointMoves is then []). Limit bounds the inferences of each walk (a walk over
%   it ends as long). A walk still running when Seconds have passed (the clock is
%   read before each step) ends as stopped, as do the walks after it; they prove
%   nothing. The installed state is restored.

search_walks(M0, Count, MaxDepth, Seed, Limit, Seconds, Walks) :-
    until(Seconds, Until),
    stoppable(M0, walks(M0, Count, MaxDepth-Until, Seed, Limit, Walks)).

walks(M0, Count, Bounds, Seed, Limit, Walks) :-
    atom_string(Module, M0),
    state_current(Module, Saved),
    set_random(seed(Seed)),
    state_roles(Module, Roles),
    findall(F, Module:init(F), Fs),
    sort(Fs, Init),
    numlist(1, Count, Ns),
    call_cleanup(maplist(walk_from(Module, Roles, Init, Bounds, Limit), Ns, Walks),
                 state_install(Module, Saved)).

walk_from(Module, Roles, Init, Bounds, Limit, _, Walk) :-
    trie_new(Seen),
    call_cleanup(
        ( call_with_inference_limit(walk(Module, Roles, Seen, Bounds, 0, Init, Walk0),
                                    Limit, R),
          (   R == inference_limit_exceeded -> Walk = [long, [], []] ; Walk = Walk0 )
        ),
        trie_destroy(Seen)).

walk(Module, Roles, Seen, Bounds, D, State, Walk) :-
    (   trie_lookup(Seen, State, First)
    ->  Walk = [cycle, [], First]
    ;   trie_insert(Seen, State, D),
        state_install(Module, State),
        walk_step(Module, Roles, Seen, Bounds, D, Walk)
    ).

walk_step(Module, Roles, Seen, MaxDepth-Until, D, Walk) :-
    (   past(Until)
    ->  Walk = [stopped, [], []]
    ;   state_terminal(Module)
    ->  maplist(state_goals(Module), Roles, Goals),
        Walk = [terminal, [], Goals]
    ;   D >= MaxDepth
    ->  Walk = [long, [], []]
    ;   maplist(state_legal(Module), Roles, Legal),
        (   nth0(I, Legal, [])
        ->  Walk = [stuck, [], I]
        ;   maplist(random_member, Joint, Legal),
            state_next(Module, Joint, Next),
            D1 is D + 1,
            walk(Module, Roles, Seen, MaxDepth-Until, D1, Next, [Kind, Rest, Detail]),
            (   ( Kind == long ; Kind == stopped )
            ->  Walk = [Kind, [], []]
            ;   maplist(to_py, Joint, PyJoint),
                Walk = [Kind, [PyJoint|Rest], Detail]
            )
        )
    ).

to_py(T, P) :-
    (   atomic(T)
    ->  P = T
    ;   compound_name_arguments(T, N, As),
        maplist(to_py, As, Ps),
        P = [N|Ps]
    ).
