/*  gdl_runtime: the runtime that games translated by gdl2pl run on.

    A translated game is a module (see gdl2pl/translate.py) that defines GDL's
    keyword relations (role/1, init/1, legal/2, next/1, goal/2, terminal/0, ...),
    keeps the current state in thread-local true_F/N predicates and the joint
    move in does/2 (asserted here), and tells the runtime where each
    fluent is stored (gdl_store/2) and which tables must be cleared when the
    state changes.

    Terms cross the boundary to Python in "py form": a constant is an atom; a
    compound f(a1,...,an) goes out as the list [f, a1', ..., an'] and comes in as
    -(f, a1', ..., an') (janus' form of the Python tuple ('f', a1', ...)). Lists
    go out rather than tuples because janus-swi 1.5.3 leaks the elements of every
    tuple it builds. Strings coming from Python are read as atoms. States are
    sorted lists of fluents; answers are sorted sets.

    The state is per thread (thread_local stores, private tables, thread-local
    global variables): Python threads each attach their own Prolog engine.
*/

:- module(gdl_runtime,
          [ gdl_load/3,               % +Module, +Text, -Roles
            gdl_unload/2,             % +Module, -Done
            gdl_roles/2,              % +Module, -Roles
            gdl_initial_state/2,      % +Module, -State
            gdl_base/2,               % +Module, -Fluents
            gdl_input/3,              % +Module, +Role, -Moves
            gdl_legal/4,              % +Module, +State, +Role, -Moves
            gdl_legal_all/3,          % +Module, +State, -MovesPerRole
            gdl_next/4,               % +Module, +State, +JointMove, -Result
            gdl_terminal/3,           % +Module, +State, -Bool
            gdl_goals/3,              % +Module, +State, -ValuesPerRole
            gdl_state_info/3,         % +Module, +State, -info(Terminal, Legal, Goals)
            gdl_depth_charge/4,       % +Module, +State, +MaxDepth, -Result
            gdl_playouts/5,           % +Module, +State, +Count, +MaxDepth, -Result
            gdl_seed/2,               % +Seed, -Done
            gdl_set_limit/3,          % +Module, +Inferences, -Done
            gdl_interrupt/0,          % signalled to a thread: stop its query
            % The same questions on Prolog terms, for searches written in Prolog:
            state_roles/2,            % +Module, -Roles
            state_install/2,          % +Module, +SortedFluents
            state_current/2,          % +Module, -SortedFluents
            state_legal/3,            % +Module, +Role, -SortedMoves
            state_terminal/1,         % +Module
            state_goals/3,            % +Module, +Role, -SortedValues
            state_next/3              % +Module, +JointMove, -SortedFluents
          ]).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(ordsets)).
:- use_module(library(random)).
:- use_module(library(pairs)).
:- set_prolog_flag(optimise, true).   % for this file only: inline maplist/N,
:- use_module(library(apply_macros)).  % compiled arithmetic

%   Playouts erase clauses (the fluents of the previous state) at a high rate;
%   reclaiming them in the thread that erased them is cheaper than handing them
%   to SWI's garbage-collection thread (hanoi: about 12 % more states/s).
:- set_prolog_flag(gc_thread, false).

/** <module> Runtime for games translated by gdl2pl

Every exported predicate takes the game module first (an atom, or a string naming
it) and returns its answer in its last argument, in py form: atoms, and lists for
compound terms and compound results (janus turns them into Python strings and lists;
the bridge makes tuples of the compound terms), so that Python calls it with
janus' apply_once/3+. A State argument is either a list of fluents in py form, or
the atom '=', meaning "the state this thread installed last" (the caller keeps track
of that, which saves converting the state again).
*/

%   No term in a game is that large: a tabled relation building ever larger terms
%   (an endless recursion through function symbols) fails fast with a resource
%   error instead of filling the table space.
:- set_prolog_flag(max_table_subgoal_size, 2000).
:- set_prolog_flag(max_table_answer_size, 2000).

:- dynamic loading_error/2.          % loading_error(Module, Message)
:- dynamic game_roles/2.             % game_roles(Module, Roles): cached role list
:- dynamic game_limit/2.             % game_limit(Module, Inferences)
:- dynamic game_tables/4.            % game_tables(Module, Kind, Heads, FlagKey)
:- dynamic game_query_flags/3.       % game_query_flags(Module, Query, FlagKeys)

game(M0, M) :-
    (   atom(M0) -> M = M0 ; atom_string(M, M0) ).

%!  gdl_load(+Module, +Text, -Roles) is det.
%
%   Compile the translated game Text (a module file declaring Module) into Module
%   and return its roles. Any error or warning while compiling makes the load fail
%   with gdl_error(load_failed(Module, Messages)); nothing is left loaded then.

gdl_load(M0, Text, PyRoles) :-
    game(M0, Module),
    (   current_module(Module)
    ->  throw(gdl_error(module_exists(Module)))
    ;   true
    ),
    retractall(loading_error(Module, _)),
    translation_terms(Module, Text),
    setup_call_cleanup(
        ( open_string(Text, In), nb_setval(gdl_loading, Module) ),
        catch(load_files(Module, [stream(In), silent(true), if(true)]), E,
              assertz(loading_error(Module, E))),
        ( close(In), nb_setval(gdl_loading, []) )),
    findall(Msg, retract(loading_error(Module, Msg)), Errors),
    (   Errors == []
    ->  catch(( materialize(Module), init_game(Module) ), E2,
              ( catch(unload(Module), _, true), throw(E2) )),
        gdl_roles(Module, PyRoles)
    ;   catch(unload(Module), _, true),
        maplist(message_text, Errors, Texts),
        throw(gdl_error(load_failed(Module, Texts)))
    ).

%   translation_terms(+Module, +Text): Text holds exactly what the translator
%   writes for Module, term by term: the module header, the declarations it emits
%   (set_module/1 of base(system) and class(temporary), dynamic, thread_local, discontiguous, table) and
%   clauses whose heads and goals name only the game's own predicates (keyword
%   relations, r_*, static_*, true_*, gdl_*) or the few built-ins translated rules
%   use (\+, tnot/1, ==, \==, true, fail). Anything else (another directive, a
%   module-qualified head or goal, a call to any other built-in) raises
%   gdl_error(load_failed(Module, [Reason])) before anything is loaded, so no text
%   from a game file or a network message can run as Prolog.

translation_terms(Module, Text) :-
    catch(setup_call_cleanup(
              open_string(Text, In),
              read_terms(In, Terms),
              close(In)),
          E,
          ( message_text(E, Msg), throw(gdl_error(load_failed(Module, [Msg]))) )),
    (   Terms = [(:- module(Module, []))|Rest]
    ->  true
    ;   throw(gdl_error(load_failed(Module, ["the text does not start with its module header"])))
    ),
    (   member(T, Rest), \+ safe_term(T)
    ->  term_string(T, S0),
        sub_string_max(S0, 200, S),
        format(string(Msg), "not a term the translator writes: ~s", [S]),
        throw(gdl_error(load_failed(Module, [Msg])))
    ;   true
    ).

read_terms(In, Terms) :-
    read_term(In, T, [syntax_errors(error)]),
    (   T == end_of_file
    ->  Terms = []
    ;   Terms = [T|Ts],
        read_terms(In, Ts)
    ).

sub_string_max(S, Max, Out) :-
    (   string_length(S, L), L > Max
    ->  sub_string(S, 0, Max, _, Out0), string_concat(Out0, "...", Out)
    ;   Out = S
    ).

safe_term(T) :- var(T), !, fail.
safe_term((:- D)) :- !, safe_directive(D).
safe_term((H :- B)) :- !, safe_goal(H), safe_body(B).
safe_term(H) :- safe_goal(H).

safe_directive(D) :- var(D), !, fail.
safe_directive(set_module(base(system))) :- !.
safe_directive(set_module(class(temporary))) :- !.
safe_directive(D) :-
    compound(D),
    compound_name_arguments(D, Decl, [PIs]),
    memberchk(Decl, [thread_local, dynamic, discontiguous, table]),
    safe_pis(PIs).

safe_pis(PIs) :- var(PIs), !, fail.
safe_pis((A, B)) :- !, safe_pis(A), safe_pis(B).
safe_pis(N/A) :- atom(N), integer(A), A >= 0, safe_name(N).

safe_body(B) :- var(B), !, fail.
safe_body((A, B)) :- !, safe_body(A), safe_body(B).
safe_body(\+ G) :- !, safe_body(G).
safe_body(tnot(G)) :- !, safe_goal(G).
safe_body(_ \== _) :- !.
safe_body(_ == _) :- !.
safe_body(true) :- !.
safe_body(fail) :- !.
safe_body(G) :- safe_goal(G).

safe_goal(G) :- var(G), !, fail.
safe_goal(_:_) :- !, fail.
safe_goal(G) :-
    callable(G),
    functor(G, Name, _),
    safe_name(Name).

safe_name(N) :-
    memberchk(N, [role, base, input, init, legal, next, goal, terminal, true, does]),
    !.
safe_name(N) :-
    member(Prefix, [r_, static_, true_, gdl_]),
    sub_atom(N, 0, _, _, Prefix),
    !.

message_text(Term, Text) :-
    (   catch(( '$messages':translate_message(Term, Lines, []),
                with_output_to(string(Text),
                               print_message_lines(current_output, '', Lines)) ),
              _, fail)
    ->  true
    ;   term_string(Term, Text)
    ).

:- multifile user:message_hook/3.
user:message_hook(Term, Kind, _Lines) :-
    memberchk(Kind, [error, warning]),
    nb_current(gdl_loading, Module),
    Module \== [],
    assertz(loading_error(Module, Term)).

%   materialize(+Module): give each state-independent relation (gdl_static/2 lists
%   them, dependencies first) the facts its rules derive. Recursive ones (their
%   rules are tabled) always get facts; a non-recursive one with more than 1,000
%   answers keeps calling its rules, which answer a bound call in a few inferences
%   where SWI's clause indexing would scan many facts (a ground call is answered
%   once, as a fact would be).

materialize(Module) :-
    forall(Module:gdl_static(Facts, Rules), materialize(Module, Facts, Rules)),
    abolish_module_tables(Module).

materialize(Module, Facts, Rules) :-
    (   predicate_property(Module:Rules, tabled)
    ->  Limit = 1000000
    ;   Limit = 1000
    ),
    Max is Limit + 1,
    current_prolog_flag(table_space, Space),
    Bounded is min(Space, 256*1024*1024),
    setup_call_cleanup(
        set_prolog_flag(table_space, Bounded),
        catch(findall(Facts, limit(Max, Module:Rules), Answers0),
              error(resource_error(_), _),
              Answers0 = too_many),
        set_prolog_flag(table_space, Space)),
    (   ( Answers0 == too_many ; length(Answers0, N), N > Limit )
    ->  assertz(Module:(Facts :- ( ground(Facts) -> once(Rules) ; Rules )))
    ;   sort(Answers0, Answers),
        forall(member(A, Answers), assertz(Module:A))
    ).

init_game(Module) :-
    findall(R, Module:role(R), Rs0),
    dedup(Rs0, Rs),
    retractall(game_roles(Module, _)),
    assertz(game_roles(Module, Rs)),
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

%!  gdl_unload(+Module, -Done) is det.
%
%   Remove a loaded game: its clauses, tables and this thread's state of it.

gdl_unload(M0, true) :-
    game(M0, Module),
    unload(Module).

unload(Module) :-
    retractall(game_roles(Module, _)),
    retractall(game_limit(Module, _)),
    forall(retract(game_tables(Module, _, _, Flag)), nb_delete(Flag)),
    retractall(game_query_flags(Module, _, _)),
    catch(abolish_module_tables(Module), _, true),
    state_key(Module, Key),
    nb_delete(Key),
    (   source_file_property(Module, module(Module))
    ->  unload_file(Module)
    ;   true
    ),
    forall(( current_predicate(_, Module:Head),
             \+ predicate_property(Module:Head, imported_from(_)) ),
           (   predicate_property(Module:Head, thread_local)
           ->  retractall(Module:Head)          % this thread's clauses
           ;   functor(Head, N, A),
               catch(abolish(Module:N/A), _, retractall(Module:Head))
           )),
    (   current_module(Module)
    ->  % The translated module declares itself temporary (class(temporary)), the
        % only kind SWI-Prolog destroys; it offers no public predicate for that
        % outside in_temporary_module/3, which cannot keep a game loaded across calls.
        catch('$destroy_module'(Module), _, true)
    ;   true
    ).

%!  gdl_roles(+Module, -Roles) is det.
%
%   The roles in the order the game states them (py form).

gdl_roles(M0, PyRoles) :-
    game(M0, Module),
    roles(Module, Roles),
    maplist(to_py, Roles, PyRoles).

roles(Module, Roles) :-
    (   game_roles(Module, Roles)
    ->  true
    ;   throw(gdl_error(not_loaded(Module)))
    ).

%!  gdl_initial_state(+Module, -State) is det.

gdl_initial_state_(M0, PyState) :-
    game(M0, Module),
    tables_used(Module, init),
    findall(F, Module:init(F), Fs),
    sort(Fs, State),
    maplist(to_py, State, PyState).

%!  gdl_base(+Module, -Fluents) is det.
%!  gdl_input(+Module, +Role, -Moves) is det.

gdl_base_(M0, Py) :-
    game(M0, Module),
    tables_used(Module, base),
    findall(F, Module:base(F), Fs),
    sort(Fs, Sorted),
    maplist(to_py, Sorted, Py).

gdl_input_(M0, PyRole, Py) :-
    game(M0, Module),
    from_py(PyRole, Role),
    tables_used(Module, input),
    findall(M, Module:input(Role, M), Ms),
    sort(Ms, Sorted),
    maplist(to_py, Sorted, Py).

%!  gdl_legal(+Module, +State, +Role, -Moves) is det.

gdl_legal_(M0, PyState, PyRole, PyMoves) :-
    game(M0, Module),
    install_py(Module, PyState),
    from_py(PyRole, Role),
    legal_moves(Module, Role, Moves),
    maplist(to_py, Moves, PyMoves).

legal_moves(Module, Role, Moves) :-
    tables_used(Module, legal),
    findall(M, Module:legal(Role, M), Ms),
    sort(Ms, Moves).

%!  gdl_legal_all(+Module, +State, -MovesPerRole) is det.
%
%   One sorted list of legal moves per role, in role order.

gdl_legal_all_(M0, PyState, PyPerRole) :-
    game(M0, Module),
    install_py(Module, PyState),
    roles(Module, Roles),
    maplist(legal_moves(Module), Roles, PerRole),
    maplist(maplist(to_py), PerRole, PyPerRole).

%!  gdl_next(+Module, +State, +JointMove, -Result) is det.
%
%   Result is [next, Added, Removed]: the fluents the next state adds to and removes
%   from State (the next state is then this thread's installed state);
%   [illegal, RoleIndex] when the move of the role at RoleIndex (0-based) is not
%   legal, or [arity, N] when JointMove does not have one move per role (N roles).

gdl_next_(M0, PyState, PyJoint, Result) :-
    game(M0, Module),
    install_py(Module, PyState),
    roles(Module, Roles),
    maplist(from_py, PyJoint, Joint),
    length(Roles, N),
    (   length(Joint, N)
    ->  tables_used(Module, legal),
        (   nth0(I, Roles, R), nth0(I, Joint, M), \+ Module:legal(R, M)
        ->  Result = [illegal, I]
        ;   next_state(Module, Roles, Joint, Next),
            installed(Module, Old),
            switch(Module, Old, Next, Pairs, Add, Del),
            set_installed(Module, Pairs),
            maplist(to_py, Add, PyAdd),
            maplist(to_py, Del, PyDel),
            Result = [next, PyAdd, PyDel]
        )
    ;   Result = [arity, N]
    ).

%!  gdl_terminal(+Module, +State, -Bool) is det.

gdl_terminal_(M0, PyState, Bool) :-
    game(M0, Module),
    install_py(Module, PyState),
    (   is_terminal(Module) -> Bool = true ; Bool = false ).

is_terminal(Module) :-
    tables_used(Module, terminal),
    Module:terminal.

%!  gdl_goals(+Module, +State, -ValuesPerRole) is det.
%
%   For each role (in order) the sorted list of its goal values in State.

gdl_goals_(M0, PyState, PyValues) :-
    game(M0, Module),
    install_py(Module, PyState),
    goal_values(Module, Values),
    maplist(maplist(to_py), Values, PyValues).

goal_values(Module, Values) :-
    roles(Module, Roles),
    maplist(role_goals(Module), Roles, Values).

role_goals(Module, Role, Vs) :-
    tables_used(Module, goal),
    findall(V, Module:goal(Role, V), Vs0),
    sort(Vs0, Vs).

%!  gdl_state_info(+Module, +State, -Info) is det.
%
%   Info = [info, Terminal, LegalPerRole, GoalsPerRole]: everything a player asks
%   about one state, in one call.

gdl_state_info_(M0, PyState, [info, Terminal, PyLegal, PyGoals]) :-
    game(M0, Module),
    install_py(Module, PyState),
    (   is_terminal(Module) -> Terminal = true ; Terminal = false ),
    roles(Module, Roles),
    maplist(legal_moves(Module), Roles, Legal),
    maplist(maplist(to_py), Legal, PyLegal),
    goal_values(Module, Goals),
    maplist(maplist(to_py), Goals, PyGoals).

%!  gdl_depth_charge(+Module, +State, +MaxDepth, -Result) is det.
%
%   Play uniformly random joint moves from State until a terminal state, or until
%   MaxDepth steps were made. Result is [done, Final, Depth] (Final is then the
%   installed state) or [no_legal_move, Role, State].

gdl_depth_charge_(M0, PyState, MaxDepth, Result) :-
    game(M0, Module),
    install_py(Module, PyState),
    roles(Module, Roles),
    installed(Module, Start),
    catch(( playout(Module, Roles, MaxDepth, Start, 0, Depth, Final),
            set_installed(Module, Final),
            pairs_keys(Final, FinalState),
            maplist(to_py, FinalState, PyFinal),
            Result = [done, PyFinal, Depth] ),
          gdl_no_legal_move(Role, S),
          ( maplist(to_py, S, PyS), to_py(Role, PyRole),
            Result = [no_legal_move, PyRole, PyS] )).

%!  gdl_playouts(+Module, +State, +Count, +MaxDepth, -Result) is det.
%
%   Run Count depth charges from State. Result is [playouts, PerRole, Steps]: for
%   each role the list of [Value, Depth] of every playout (Value is -1 when the
%   role has no unique numeric goal value at the end), and the total number of
%   state changes; or [no_legal_move, Role, State].

gdl_playouts_(M0, PyState, Count, MaxDepth, Result) :-
    game(M0, Module),
    install_py(Module, PyState),
    current_state(Module, Start),
    roles(Module, Roles),
    numlist(1, Count, Ns),
    catch(( foldl(one_playout(Module, Roles, Start, MaxDepth), Ns, Results, 0, Steps),
            transpose_results(Roles, Results, PerRole),
            Result = [playouts, PerRole, Steps] ),
          gdl_no_legal_move(Role, S),
          ( maplist(to_py, S, PyS), to_py(Role, PyRole),
            Result = [no_legal_move, PyRole, PyS] )).

one_playout(Module, Roles, Start, MaxDepth, _, Depth-Goals, S0, S) :-
    install(Module, Start),
    installed(Module, Pairs),
    playout(Module, Roles, MaxDepth, Pairs, 0, Depth, Final),
    set_installed(Module, Final),
    maplist(unique_goal(Module), Roles, Goals),
    S is S0 + Depth.

unique_goal(Module, Role, V) :-
    role_goals(Module, Role, Vs),
    (   Vs = [A], atom_number(A, N), integer(N) -> V = N ; V = -1 ).

transpose_results(Roles, Results, PerRole) :-
    length(Roles, N),
    numlist(1, N, Is),
    maplist(role_column(Results), Is, PerRole).

role_column(Results, I, Column) :-
    findall([V, D], ( member(D-Gs, Results), nth1(I, Gs, V) ), Column).

%   playout(+Module, +Roles, +MaxDepth, +Pairs, +Depth0, -Depth, -Final)
%   Pairs (see installed/2) is installed, but only the caller records Final.

playout(Module, Roles, MaxDepth, Pairs, D0, D, Final) :-
    (   ( D0 >= MaxDepth ; is_terminal(Module) )
    ->  D = D0,
        Final = Pairs
    ;   maplist(random_legal(Module, Pairs), Roles, Joint),
        next_state(Module, Roles, Joint, Next),
        switch(Module, Pairs, Next, Pairs1, _, _),
        D1 is D0 + 1,
        playout(Module, Roles, MaxDepth, Pairs1, D1, D, Final)
    ).

random_legal(Module, Pairs, Role, Move) :-
    legal_moves(Module, Role, Moves),
    (   Moves == []
    ->  set_installed(Module, Pairs),
        pairs_keys(Pairs, State),
        throw(gdl_no_legal_move(Role, State))
    ;   length(Moves, N),
        I is random(N),
        nth0(I, Moves, Move)
    ).

%!  gdl_seed(+Seed, -Done) is det.
%
%   Seed this thread's random generator (playouts are then reproducible).

gdl_seed(Seed, true) :-
    set_random(seed(Seed)).

		 /*******************************
		 *       INFERENCE LIMITS       *
		 *******************************/

%   Every query runs under the game's inference limit (gdl_set_limit/3), so that a
%   hostile or broken game cannot make a query run forever: exceeding it raises
%   gdl_error(inference_limit(Limit)). A playout gets ten times the limit of a query
%   (so gdl_playouts/5 gets 10 * Count times); the depth cap of each playout is the
%   caller's (the bridge's default is in the thousands).

gdl_initial_state(M0, A1) :-
    limited(M0, 1, gdl_initial_state_(M0, A1)).

gdl_base(M0, A1) :-
    limited(M0, 1, gdl_base_(M0, A1)).

gdl_input(M0, A1, A2) :-
    limited(M0, 1, gdl_input_(M0, A1, A2)).

gdl_legal(M0, A1, A2, A3) :-
    limited(M0, 1, gdl_legal_(M0, A1, A2, A3)).

gdl_legal_all(M0, A1, A2) :-
    limited(M0, 1, gdl_legal_all_(M0, A1, A2)).

gdl_next(M0, A1, A2, A3) :-
    limited(M0, 1, gdl_next_(M0, A1, A2, A3)).

gdl_terminal(M0, A1, A2) :-
    limited(M0, 1, gdl_terminal_(M0, A1, A2)).

gdl_goals(M0, A1, A2) :-
    limited(M0, 1, gdl_goals_(M0, A1, A2)).

gdl_state_info(M0, A1, A2) :-
    limited(M0, 1, gdl_state_info_(M0, A1, A2)).

gdl_depth_charge(M0, A1, A2, A3) :-
    limited(M0, 10, gdl_depth_charge_(M0, A1, A2, A3)).

gdl_playouts(M0, A1, Count, A3, A4) :-
    Factor is 10 * max(1, Count),
    limited(M0, Factor, gdl_playouts_(M0, A1, Count, A3, A4)).

limited(M0, Factor, Goal) :-
    game(M0, Module),
    (   game_limit(Module, Limit0) -> true ; Limit0 = 100000000 ),
    Limit is Limit0 * Factor,
    catch(setup_call_cleanup(
              nb_setval('$gdl_busy', true),
              call_with_inference_limit(Goal, Limit, Result),
              nb_setval('$gdl_busy', false)),
          E,
          ( forget_state(Module), normalized(E, E1), throw(E1) )),
    (   Result == inference_limit_exceeded
    ->  forget_state(Module),
        throw(gdl_error(inference_limit(Limit)))
    ;   true
    ).

%   normalized(+Exception, -Error): resource errors as gdl_error/1 terms, whose
%   messages (below) read as sentences; others unchanged.

normalized(error(resource_error(tripwire(What, _)), _), gdl_error(tripwire(What))) :- !.
normalized(error(resource_error(What), _), gdl_error(resource(What))) :- !.
normalized(E, E).

%   forget_state(+Module): after a query that did not finish, leave this thread with
%   no state of Module at all (no fluent, no joint move, no table), so that what the
%   caller believes is installed and what is installed cannot differ: the next query
%   installs its state whole.

forget_state(Module) :-
    catch(( forall(Module:gdl_store(_, Fact), retractall(Module:Fact)),
            retractall(Module:does(_, _)),
            set_installed(Module, []),
            forall(game_tables(Module, _, Heads, _),
                   forall(member(H, Heads), abolish_table_subgoals(Module:H))) ),
          _, true).

		 /*******************************
		 *           MESSAGES           *
		 *******************************/

:- multifile prolog:message//1.

prolog:message(gdl_error(E)) -->
    gdl_message(E).

gdl_message(load_failed(_, Messages)) -->
    [ 'the translated game could not be loaded' ],
    load_messages(Messages).
gdl_message(inference_limit(Limit)) -->
    [ 'the query needed more than ~D inferences, the limit set for this game'-[Limit] ].
gdl_message(interrupted) -->
    [ 'interrupted' ].
gdl_message(not_loaded(_)) -->
    [ 'the game is not loaded (it was closed)' ].
gdl_message(module_exists(M)) -->
    [ 'a game module named ~q is already loaded'-[M] ].
gdl_message(bad_term(T)) -->
    [ 'not a GDL term: ~p'-[T] ].
gdl_message(term_too_deep(Limit)) -->
    [ 'a term nested deeper than ~D levels: the game builds terms larger than \c
       any real game does'-[Limit] ].

gdl_message(tripwire(What)) -->
    { current_prolog_flag(What, Limit) -> true ; Limit = '?' },
    [ 'a tabled relation built a term larger than ~w cells (SWI-Prolog flag ~w): \c
       the game builds ever larger terms'-[Limit, What] ].
gdl_message(resource(What)) -->
    [ 'out of a Prolog resource (~w): the query needs more memory than allowed'-[What] ].

load_messages([]) --> [].
load_messages([M|Ms]) --> [ nl, '  ~w'-[M] ], load_messages(Ms).

%!  gdl_interrupt is det.
%
%   Sent to a thread with thread_signal/2 (see bridge/engine.py: interrupt()): the
%   query running there raises gdl_error(interrupted). A thread that is not inside a
%   gdl2pl query ignores it.

gdl_interrupt :-
    (   nb_current('$gdl_busy', true)
    ->  throw(gdl_error(interrupted))
    ;   true
    ).

%!  gdl_set_limit(+Module, +Inferences, -Done) is det.
%
%   Set the inference limit of every query on Module (default 100,000,000).

gdl_set_limit(M0, Limit, true) :-
    game(M0, Module),
    must_be(positive_integer, Limit),
    retractall(game_limit(Module, _)),
    assertz(game_limit(Module, Limit)).


		 /*******************************
		 *   TERM-LEVEL QUESTIONS       *
		 *******************************/

%   These answer on Prolog terms (no py form) about the state this thread installed
%   with state_install/2; they run under no inference limit of their own, so a
%   caller bounds its search itself.

%!  state_roles(+Module, -Roles) is det.
%   The roles of a loaded game, in the order the game states them.
state_roles(Module, Roles) :-
    roles(Module, Roles).

%!  state_install(+Module, +Fluents) is det.
%   Make the sorted, duplicate-free list Fluents this thread's state of Module.
state_install(Module, State) :-
    install(Module, State).

%!  state_current(+Module, -Fluents) is det.
%   The state this thread installed last (a sorted list).
state_current(Module, State) :-
    current_state(Module, State).

%!  state_legal(+Module, +Role, -Moves) is det.
%   The sorted legal moves of Role in the installed state.
state_legal(Module, Role, Moves) :-
    legal_moves(Module, Role, Moves).

%!  state_terminal(+Module) is semidet.
%   True if the installed state is terminal.
state_terminal(Module) :-
    is_terminal(Module).

%!  state_goals(+Module, +Role, -Values) is det.
%   The sorted goal values of Role in the installed state.
state_goals(Module, Role, Values) :-
    role_goals(Module, Role, Values).

%!  state_next(+Module, +Joint, -Next) is det.
%   The sorted successor of the installed state under Joint (one move per role, in
%   role order; legality is not checked). The installed state does not change.
state_next(Module, Joint, Next) :-
    roles(Module, Roles),
    next_state(Module, Roles, Joint, Next).

		 /*******************************
		 *     STATE AND JOINT MOVE     *
		 *******************************/

%   next_state(+Module, +Roles, +Joint, -Next): the sorted successor fluents. The
%   joint move is asserted as the game's does/2 facts meanwhile (and erased after,
%   by reference).

next_state(Module, Roles, Joint, Next) :-
    tables_used(Module, next),
    assert_joint(Module, Roles, Joint, Refs),
    catch(findall(F, Module:next(F), Fs), E,
          ( erase_joint(Module, Refs), throw(E) )),
    erase_joint(Module, Refs),
    sort(Fs, Next).

assert_joint(Module, Roles, Joint, Refs) :-
    maplist(assert_does(Module), Roles, Joint, Refs),
    clear_does_tables(Module).

assert_does(Module, Role, Move, Ref) :-
    assertz(Module:does(Role, Move), Ref).

erase_joint(Module, Refs) :-
    maplist(erase, Refs),
    clear_does_tables(Module).

%   The tables of state-dependent recursive relations are private to the thread
%   and cleared when the state (Kind true) or the joint move (Kind does) changes,
%   but only if a query that may fill them (gdl_query_tables/2 of the game) ran
%   since they were last cleared: a thread-local flag per game and Kind says so.

clear_does_tables(Module) :-
    clear_tables(Module, does).

clear_true_tables(Module) :-
    clear_tables(Module, true).

clear_tables(Module, Kind) :-
    (   game_tables(Module, Kind, Heads, Flag),
        nb_current(Flag, used)
    ->  nb_setval(Flag, clean),
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

flag_used(Flag) :-
    nb_setval(Flag, used).

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
    nb_setval(Key, Pairs).

current_state(Module, State) :-
    installed(Module, Pairs),
    pairs_keys(Pairs, State).

%   install_py(+Module, +State): make the state given in py form (a list) current;
%   anything else (the caller sends '=') stands for the state installed last.

install_py(Module, PyState) :-
    (   \+ is_list(PyState)
    ->  true
    ;   maplist(from_py, PyState, Fs),
        sort(Fs, State),
        install(Module, State)
    ).

%   install(+Module, +State): make the sorted fluent list State current, asserting
%   and erasing only the difference with the installed state.

install(Module, State) :-
    installed(Module, Old),
    (   pairs_keys(Old, State)
    ->  true
    ;   switch(Module, Old, State, Pairs, _, _),
        set_installed(Module, Pairs)
    ).

%   switch(+Module, +OldPairs, +New, -NewPairs, -Added, -Removed): replace the
%   installed fluents by the sorted list New.

switch(Module, Old, New, Pairs, Add, Del) :-
    sync(Old, New, Module, Pairs, Add, Del),
    clear_true_tables(Module).

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
    (   Module:gdl_store(F, Fact) -> true ),
    assertz(Module:Fact, Ref).

erase_fluent(F-Ref, F) :-
    erase(Ref).

		 /*******************************
		 *        PY FORM TERMS         *
		 *******************************/

%!  to_py(+Term, -Py) is det.
%
%   Term in py form. A term nested deeper than max_term_depth/1 levels raises
%   gdl_error(term_too_deep(Limit)): Python could not take it apart safely, and no
%   real game builds one.
%
%!  from_py(+Py, -Term) is det.
%
%   The term a py-form value stands for.

max_term_depth(200).

to_py(T, P) :-
    max_term_depth(D),
    to_py(T, P, D).

to_py(T, P, D) :-
    (   atom(T)
    ->  P = T
    ;   D > 0
    ->  compound_name_arguments(T, N, As),
        D1 is D - 1,
        to_py_list(As, Ps, D1),
        P = [N|Ps]
    ;   max_term_depth(Limit),
        throw(gdl_error(term_too_deep(Limit)))
    ).

to_py_list([], [], _).
to_py_list([A|As], [P|Ps], D) :-
    to_py(A, P, D),
    to_py_list(As, Ps, D).

from_py(P, T) :-
    (   atom(P)
    ->  T = P
    ;   string(P)
    ->  atom_string(T, P)
    ;   P = [N0|Ps]
    ->  from_py(N0, N),
        maplist(from_py, Ps, As),
        compound_name_arguments(T, N, As)
    ;   compound(P), compound_name_arguments(P, -, [N0|Ps])
    ->  from_py(N0, N),
        maplist(from_py, Ps, As),
        compound_name_arguments(T, N, As)
    ;   integer(P)
    ->  atom_number(T, P)
    ;   P == @(true) -> T = true
    ;   P == @(false) -> T = false
    ;   throw(gdl_error(bad_term(P)))
    ).

dedup([], []).
dedup([X|Xs], [X|Ys]) :-
    exclude(==(X), Xs, Rest),
    dedup(Rest, Ys).
