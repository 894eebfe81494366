/*  gdl_runtime: the API that Python (janus) calls on games translated by gdl2pl.

    Loads the text of a translated game (gdl2pl/translate.py) into its own module
    after checking, term by term, that it holds only what the translator writes;
    converts terms to and from Python; runs every question under an inference
    limit, interruptibly; turns errors into gdl_error(...) terms whose messages read
    as sentences; and answers through gdl_semantics.pl, which gives the game's
    relations their meaning on Prolog terms. It also re-exports the term-level
    state_* questions of gdl_semantics for searches written in Prolog.

    Terms cross the boundary to Python in "py form": a constant is an atom; a
    compound f(a1,...,an) goes out as the list [f, a1', ..., an'] and comes in as
    -(f, a1', ..., an') (janus' form of the Python tuple ('f', a1', ...)). Lists
    go out rather than tuples because janus-swi 1.5.3 leaks the elements of every
    tuple it builds. Strings coming from Python are read as atoms. States are
    sorted lists of fluents; answers are sorted sets.

    Process-wide settings made when this file is loaded:

    - those of gdl_semantics.pl (gc_thread, max_table_subgoal_size,
      max_table_answer_size; see its header);
    - a clause of the multifile hook user:message_hook/3, which records the errors
      and warnings printed while this thread loads a game (and only then, as
      global variable gdl_loading says), so that gdl_load/3 can refuse the game;
    - clauses of the multifile prolog:message//1 for gdl_error(_) terms.
*/

:- module(gdl_runtime,
          [ gdl_load/3,               % +Module, +Text, -Roles
            gdl_unload/2,             % +Module, -Done
            gdl_roles/2,              % +Module, -Roles
            gdl_initial_state/2,      % +Module, -State
            gdl_base/2,               % +Module, -Fluents
            gdl_input/3,              % +Module, +Role, -Moves
            gdl_percept/3,            % +Module, +Role, -Percepts
            gdl_legal/4,              % +Module, +State, +Role, -Moves
            gdl_legal_all/3,          % +Module, +State, -MovesPerRole
            gdl_next/4,               % +Module, +State, +JointMove, -Result
            gdl_step/4,               % +Module, +State, +JointMove, -Result
            gdl_expand/3,             % +Module, +State, -Result
            gdl_percepts/5,           % +Module, +State, +JointMove, +Role, -Result
            gdl_consistent/7,         % +Module, +State, +Role, +Move, +Percepts, +Numbers, -Result
            gdl_symbols/3,            % +Module, +Ids, -Terms
            gdl_symbol_ids/3,         % +Module, +Terms, -Ids
            gdl_terminal/3,           % +Module, +State, -Bool
            gdl_goals/3,              % +Module, +State, -ValuesPerRole
            gdl_state_info/3,         % +Module, +State, -Info
            gdl_depth_charge/4,       % +Module, +State, +MaxDepth, -Result
            gdl_playouts/5,           % +Module, +State, +Count, +MaxDepth, -Result
            gdl_seed/2,               % +Seed, -Done
            gdl_set_limit/3,          % +Module, +Inferences, -Done
            gdl_bounded/3,            % +Module, +Factor, :Goal
            gdl_interrupt/0           % signalled to a thread: stop its query
          ]).
%   The same questions on Prolog terms, for searches written in Prolog (documented
%   in gdl_semantics.pl):
:- reexport(gdl_semantics,
            [ state_roles/2,          % +Module, -Roles
              state_install/2,        % +Module, +SortedFluents
              state_current/2,        % +Module, -SortedFluents
              state_legal/3,          % +Module, +Role, -SortedMoves
              state_terminal/1,       % +Module
              state_goals/3,          % +Module, +Role, -SortedValues
              state_next/3            % +Module, +JointMove, -SortedFluents
            ]).
:- use_module(gdl_semantics,
              [ game_prepare/1,
                game_release/1,
                game_initial_state/2,
                game_base/2,
                game_input/3,
                game_percepts/3,
                state_is_legal/3,
                state_advance/4,
                state_info/4,
                state_legal_all/2,
                state_check_joint/3,
                state_children/3,
                state_consistent/5,
                state_playout/3,
                state_playouts/5,
                state_percepts/4,
                state_forget/1
              ]).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(error)).
:- use_module(library(ordsets)).
:- use_module(library(random)).
:- use_module(library(occurs)).    % sub_term/2

/** <module> Python's API to games translated by gdl2pl

Every gdl_* predicate takes the game module first (an atom, or a string naming it)
and returns its answer in its last argument, in py form: atoms, and lists for
compound terms and compound results (janus turns them into Python strings and lists;
the bridge makes tuples of the compound terms), so that Python calls it with
janus' apply_once/3+. A State argument is either a list of fluents in py form, or
the atom '=', meaning "the state this thread installed last" (the caller keeps track
of that, which saves converting the state again).

Every question runs under the game's inference limit (gdl_set_limit/3) and can be
stopped with gdl_interrupt/0; when one does not finish, this thread's state of the
game is forgotten (state_forget/1) and the error is raised as gdl_error(Reason)
where it is a resource error, with a message (prolog:message//1) that reads as a
sentence.
*/

:- dynamic loading_error/2.          % loading_error(Module, Message)
:- dynamic game_limit/2.             % game_limit(Module, Inferences)
:- dynamic symbol_table/2.           % symbol_table(Module, Trie): Term -> Id
:- dynamic symbol_term/3.            % symbol_term(Id, Module, Term)

game(M0, M) :-
    (   atom(M0) -> M = M0 ; atom_string(M, M0) ).


		 /*******************************
		 *     LOADING AND UNLOADING    *
		 *******************************/

%!  gdl_load(+Module, +Text, -Roles) is det.
%
%   Compile the translated game Text (a module file declaring Module) into Module
%   and return its roles (py form). Text must hold only what the translator writes
%   (translation_terms/2), and any error or warning while compiling or preparing it
%   makes the load fail with gdl_error(load_failed(Module, Messages)); nothing is
%   left loaded then. Raises gdl_error(module_exists(Module)) if a module of that
%   name exists. Loading can be interrupted (gdl_interrupt/0), like a query: a game
%   whose state-independent relations take long to compute is then not loaded.

gdl_load(M0, Text, PyRoles) :-
    setup_call_cleanup(
        nb_linkval('$gdl_busy', true),
        load_game(M0, Text, PyRoles),
        nb_linkval('$gdl_busy', false)).

load_game(M0, Text, PyRoles) :-
    game(M0, Module),
    (   current_module(Module)
    ->  throw(gdl_error(module_exists(Module)))
    ;   true
    ),
    retractall(loading_error(Module, _)),
    translation_terms(Module, Text),
    compile_game(Module, Text, Errors),
    (   Errors == []
    ->  catch(game_prepare(Module), E,
              ( catch(unload(Module), _, true), throw(E) )),
        gdl_roles(Module, PyRoles)
    ;   catch(unload(Module), _, true),
        (   interrupted_while_compiling(Errors)
        ->  throw(gdl_error(interrupted))
        ;   maplist(message_text, Errors, Texts),
            throw(gdl_error(load_failed(Module, Texts)))
        )
    ).

%   interrupted_while_compiling(+Errors): gdl_interrupt/0 struck while the text was
%   being compiled; the compiler reported it as an error of the text (directly, or
%   inside its own error term). The load then fails as an interrupted query does,
%   not as a text that could not be loaded.

interrupted_while_compiling(Errors) :-
    member(E, Errors),
    sub_term(T, E),
    T == gdl_error(interrupted),
    !.

%   compile_game(+Module, +Text, -Errors): compile Text into Module; Errors are
%   the exceptions raised and the errors and warnings printed meanwhile.

compile_game(Module, Text, Errors) :-
    setup_call_cleanup(
        ( open_string(Text, In), nb_setval(gdl_loading, Module) ),
        catch(load_files(Module, [stream(In), silent(true), if(true)]), E,
              assertz(loading_error(Module, E))),
        ( close(In), nb_setval(gdl_loading, []) )),
    findall(Msg, retract(loading_error(Module, Msg)), Errors).


%   translation_terms(+Module, +Text): Text holds exactly what the translator
%   writes for Module, term by term: the module header, the declarations it emits
%   (set_module/1 of base(system) and class(temporary), dynamic, thread_local,
%   discontiguous, table) and clauses whose heads and goals name only the game's
%   own predicates (keyword relations, r_*, static_*, true_*, gdl_*) or the few
%   built-ins translated rules use (\+, tnot/1, once/1 around a game goal, ==,
%   \==, true, fail). Anything else (another directive, a module-qualified head
%   or goal, a call to any other built-in) raises
%   gdl_error(load_failed(Module, [Reason])) before anything is loaded, so no text
%   from a game file or a network message can run as Prolog.

translation_terms(Module, Text) :-
    catch(setup_call_cleanup(
              open_string(Text, In),
              read_terms(In, Terms),
              close(In)),
          E,
          (   E == gdl_error(interrupted)
          ->  throw(E)
          ;   message_text(E, Msg),
              throw(gdl_error(load_failed(Module, [Msg])))
          )),
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
safe_body((Test -> G ; true)) :- !, bound_test(Test), safe_body(G).
safe_body(once(G)) :- !, safe_goal(G).
safe_body(_ \== _) :- !.
safe_body(_ == _) :- !.
safe_body(true) :- !.
safe_body(fail) :- !.
safe_body(G) :- safe_goal(G).

%   bound_test(+Test): the test of a guard before a recursive call,
%   ground(X), ... on variables (see gdl2pl.translate.guarded).
bound_test(T) :- var(T), !, fail.
bound_test((A, B)) :- !, bound_test(A), bound_test(B).
bound_test(ground(V)) :- var(V).

safe_goal(G) :- var(G), !, fail.
safe_goal(_:_) :- !, fail.
safe_goal(G) :-
    callable(G),
    functor(G, Name, _),
    safe_name(Name).

safe_name(N) :-
    memberchk(N, [role, base, input, init, legal, next, goal, terminal, sees, percept,
                  true, does]),
    !.
safe_name(N) :-
    member(Prefix, [r_, static_, true_, gdl_]),
    sub_atom(N, 0, _, _, Prefix),
    !.

%   message_text(+Message, -Text): the text SWI-Prolog prints for a message term
%   (through the public prolog:translate_message//1), or the term itself.

message_text(Term, Text) :-
    (   catch(( phrase(prolog:translate_message(Term), Lines),
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

%!  gdl_unload(+Module, -Done) is det.
%
%   Remove a loaded game: its clauses, tables and this thread's state of it, and
%   its module. Done is true.

gdl_unload(M0, true) :-
    game(M0, Module),
    unload(Module).

unload(Module) :-
    retractall(game_limit(Module, _)),
    forget_symbols(Module),
    game_release(Module),
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


		 /*******************************
		 *          QUESTIONS           *
		 *******************************/

%   Each question is a bounded call (limited/3) of its worker (the name ending in
%   an underscore), which converts the py form and asks gdl_semantics.

%!  gdl_roles(+Module, -Roles) is det.
%
%   The roles in the order the game states them (py form). Raises
%   gdl_error(not_loaded(Module)) if the game is not loaded.

gdl_roles(M0, PyRoles) :-
    game(M0, Module),
    state_roles(Module, Roles),
    maplist(to_py, Roles, PyRoles).

%!  gdl_initial_state(+Module, -State) is det.
%
%   The sorted initial state (py form).

gdl_initial_state(M0, State) :-
    limited(M0, 1, py_answer(M0, game_initial_state, State)).

%!  gdl_base(+Module, -Fluents) is det.
%
%   The sorted base propositions (py form).

gdl_base(M0, Fluents) :-
    limited(M0, 1, py_answer(M0, game_base, Fluents)).

%!  gdl_input(+Module, +Role, -Moves) is det.
%
%   The sorted input moves of Role (py form).

gdl_input(M0, Role, Moves) :-
    limited(M0, 1, py_role_answer(M0, game_input, Role, Moves)).

%!  gdl_percept(+Module, +Role, -Percepts) is det.
%
%   The sorted percepts declared for Role (GDL-II's percept/2; py form).

gdl_percept(M0, Role, Percepts) :-
    limited(M0, 1, py_role_answer(M0, game_percepts, Role, Percepts)).

%   py_answer(+Module, :Question, -Py): the list of terms call(Question, Game, Terms)
%   gives for the loaded game Module, in py form; py_role_answer/4 the same for
%   call(Question, Game, Role, Terms) with Role given in py form.

py_answer(M0, Question, Py) :-
    game(M0, Module),
    call(Question, Module, Terms),
    maplist(to_py, Terms, Py).

py_role_answer(M0, Question, PyRole, Py) :-
    game(M0, Module),
    from_py(PyRole, Role),
    call(Question, Module, Role, Terms),
    maplist(to_py, Terms, Py).

%   in_state(+Module, +PyState, :Question, -Py): the answer call(Question, Game, Py)
%   gives with the state PyState installed in the loaded game Module.

in_state(M0, PyState, Question, Py) :-
    game(M0, Module),
    install_py(Module, PyState),
    call(Question, Module, Py).

%!  gdl_legal(+Module, +State, +Role, -Moves) is det.
%
%   The sorted legal moves of Role in State (py form).

gdl_legal(M0, State, Role, Moves) :-
    limited(M0, 1, gdl_legal_(M0, State, Role, Moves)).

gdl_legal_(M0, PyState, PyRole, PyMoves) :-
    game(M0, Module),
    install_py(Module, PyState),
    from_py(PyRole, Role),
    state_legal(Module, Role, Moves),
    maplist(to_py, Moves, PyMoves).

%!  gdl_legal_all(+Module, +State, -MovesPerRole) is det.
%
%   One sorted list of legal moves per role, in role order (py form).

gdl_legal_all(M0, State, PerRole) :-
    limited(M0, 1, in_state(M0, State, legal_per_role, PerRole)).

legal_per_role(Module, PyPerRole) :-
    state_legal_all(Module, PerRole),
    maplist(maplist(to_py), PerRole, PyPerRole).

%!  gdl_next(+Module, +State, +JointMove, -Result) is det.
%
%   Result is [next, Added, Removed]: the fluents the next state adds to and removes
%   from State (the next state is then this thread's installed state);
%   [illegal, RoleIndex] when the move of the role at RoleIndex (0-based) is not
%   legal, or [arity, N] when JointMove does not have one move per role (N roles).

gdl_next(M0, State, Joint, Result) :-
    limited(M0, 1, gdl_next_(M0, State, Joint, Result)).

gdl_next_(M0, PyState, PyJoint, Result) :-
    advanced(M0, PyState, PyJoint, _Module, Add, Del, Check),
    (   Check == ok
    ->  maplist(to_py, Add, PyAdd),
        maplist(to_py, Del, PyDel),
        Result = [next, PyAdd, PyDel]
    ;   Result = Check
    ).

%   advanced(+M0, +PyState, +PyJoint, -Module, -Added, -Removed, -Check): installs
%   PyState in the game M0 names (Module) and, when Check (as checked_joint/4 gives it)
%   is ok, plays PyJoint: the fluents the successor adds to and removes from PyState
%   (the successor is then installed); Added and Removed stay unbound otherwise.

advanced(M0, PyState, PyJoint, Module, Add, Del, Check) :-
    game(M0, Module),
    install_py(Module, PyState),
    checked_joint(Module, PyJoint, Joint, Check),
    (   Check == ok
    ->  state_advance(Module, Joint, Add, Del)
    ;   true
    ).

%   checked_joint(+Module, +PyJoint, -Joint, -Check): Joint is the joint move
%   PyJoint stands for; Check as state_check_joint/3 gives it.

checked_joint(Module, PyJoint, Joint, Check) :-
    maplist(from_py, PyJoint, Joint),
    state_check_joint(Module, Joint, Check).

%!  gdl_step(+Module, +State, +JointMove, -Result) is det.
%
%   One step of a search in one call: gdl_next/4 followed by gdl_state_info/3 on
%   the successor. Result is [next, Added, Removed, Terminal, LegalPerRole, Goals]:
%   the fluents the successor adds to and removes from State, whether it is
%   terminal (true/false), the sorted legal moves of each role there, and, only if
%   it is terminal, the sorted goal values of each role ([] otherwise). Fluents
%   and moves are given by their symbol ids (gdl_symbols/3 names them): a game
%   has few, so an integer crosses to Python instead of a term each time. The
%   successor is then this thread's installed state. As gdl_next/4, Result is
%   [illegal, RoleIndex] or [arity, N] for a joint move that is not legal or not
%   one move per role (State stays installed).

gdl_step(M0, State, Joint, Result) :-
    limited(M0, 1, gdl_step_(M0, State, Joint, Result)).

gdl_step_(M0, PyState, PyJoint, Result) :-
    advanced(M0, PyState, PyJoint, Module, Add, Del, Check),
    (   Check == ok
    ->  state_info(Module, Terminal, Legal, Goals),
        symbols(Module, Symbols),
        child_py(Module, Symbols, child(Add, Del, Terminal, Legal, Goals), Py),
        Result = [next|Py]
    ;   Result = Check
    ).

%!  gdl_expand(+Module, +State, -Result) is det.
%
%   Every successor of State in one call. Result is [expand, Terminal,
%   LegalPerRole, Goals, Children]: what gdl_step/4 answers about State itself
%   (Goals is [] unless it is terminal), and for every legal joint move (the first
%   role's move varying slowest, as Python's itertools.product orders them) the
%   list [Added, Removed, Terminal1, LegalPerRole1, Goals1] that gdl_step/4 would
%   answer for it after `next`. Children is [] if a role has no legal move. State
%   is this thread's installed state afterwards. Finding the joint moves runs
%   under the game's inference limit, the successors under that limit times
%   their number.

gdl_expand(M0, State, [expand, Terminal, LegalIds, PyGoals, PyChildren]) :-
    limited(M0, 1, expand_parent(M0, State, Terminal, Legal, Goals, Joints)),
    length(Joints, N),
    Factor is max(1, N),
    limited(M0, Factor, expand_children(M0, Legal, Goals, Joints,
                                        LegalIds, PyGoals, PyChildren)).

expand_parent(M0, PyState, Terminal, Legal, Goals, Joints) :-
    game(M0, Module),
    install_py(Module, PyState),
    state_info(Module, Terminal, Legal, Goals),
    findall(Joint, maplist(member, Joint, Legal), Joints).

expand_children(M0, Legal, Goals, Joints, LegalIds, PyGoals, PyChildren) :-
    game(M0, Module),
    symbols(Module, Symbols),
    maplist(maplist(symbol_id(Module, Symbols)), Legal, LegalIds),
    maplist(maplist(to_py), Goals, PyGoals),
    state_children(Module, Joints, Children),
    maplist(child_py(Module, Symbols), Children, PyChildren).

%   child_py(+Module, +Symbols, +Child, -Py): a successor as gdl_step/4 and
%   gdl_expand/3 answer it, [Added, Removed, Terminal, LegalPerRole, Goals], fluents
%   and moves by symbol id.

child_py(Module, Symbols, child(Add, Del, Terminal, Legal, Goals),
         [AddIds, DelIds, Terminal, LegalIds, PyGoals]) :-
    maplist(symbol_id(Module, Symbols), Add, AddIds),
    maplist(symbol_id(Module, Symbols), Del, DelIds),
    maplist(maplist(symbol_id(Module, Symbols)), Legal, LegalIds),
    maplist(maplist(to_py), Goals, PyGoals).

%!  gdl_percepts(+Module, +State, +JointMove, +Role, -Result) is det.
%
%   Result is [percepts, Percepts]: the sorted percepts (GDL-II's sees/2) of Role
%   when the legal JointMove is played in State; or [illegal, RoleIndex] or
%   [arity, N] as gdl_next/4 answers. State stays installed.

gdl_percepts(M0, State, Joint, Role, Result) :-
    limited(M0, 1, gdl_percepts_(M0, State, Joint, Role, Result)).

gdl_percepts_(M0, PyState, PyJoint, PyRole, Result) :-
    game(M0, Module),
    install_py(Module, PyState),
    from_py(PyRole, Role),
    checked_joint(Module, PyJoint, Joint, Check),
    (   Check == ok
    ->  state_percepts(Module, Joint, Role, Percepts),
        maplist(to_py, Percepts, PyPercepts),
        Result = [percepts, PyPercepts]
    ;   Result = Check
    ).

%!  gdl_consistent(+Module, +State, +Role, +Move, +Percepts, +Numbers, -Result) is det.
%
%   Which of some joint moves a role that played Move in State and then perceived
%   Percepts (GDL-II) cannot tell apart from what happened. The joint moves are
%   those in which Role plays Move and every other role one of its legal moves,
%   numbered from 0 in the order of their product (the first role's move varying
%   slowest, each role's moves sorted: gdl_legal_all/3); Numbers are those to try
%   (gdl2pl.contract.consistent). Result is [children, Children]: for each of them
%   after which Role perceives exactly the set Percepts, in the order of Numbers,
%   [Position, Added, Removed]: its position in Numbers (from 0), and the fluents
%   its successor adds to and removes from State (py form). Result is [illegal] if
%   Move is not a legal move of Role in State, [no_role] if Role is not a role; a
%   number out of range is skipped. State stays installed. Runs under the game's
%   inference limit times the number of joint moves tried.

gdl_consistent(M0, State, Role, Move, Percepts, Numbers, Result) :-
    limited(M0, 1, consistent_joints(M0, State, Role, Move, Percepts, Found)),
    (   Found = joints(Moves, Seen)
    ->  length(Numbers, N),
        Factor is max(1, N),
        limited(M0, Factor, consistent_children(M0, Moves, Numbers, Seen, Result))
    ;   Result = Found
    ).

%   consistent_joints(+M0, +PyState, +PyRole, +PyMove, +PyPercepts, -Found): Found is
%   joints(Moves, seen(Role, Percepts)), Moves the legal moves of each role with
%   Role's replaced by Move, last role first, each as a term m(Move1, ...) for arg/3;
%   or [illegal] or [no_role].

consistent_joints(M0, PyState, PyRole, PyMove, PyPercepts, Found) :-
    game(M0, Module),
    install_py(Module, PyState),
    maplist(from_py, [PyRole, PyMove], [Role, Move]),
    maplist(from_py, PyPercepts, Percepts0),
    sort(Percepts0, Percepts),
    state_roles(Module, Roles),
    state_legal_all(Module, Legal),
    (   nth0(I, Roles, Role)
    ->  nth0(I, Legal, Own),
        (   memberchk(Move, Own)
        ->  nth0(I, Legal, _, Others),
            nth0(I, Fixed, [Move], Others),
            maplist(moves_term, Fixed, Terms),
            reverse(Terms, Moves),
            Found = joints(Moves, seen(Role, Percepts))
        ;   Found = [illegal]
        )
    ;   Found = [no_role]
    ).

moves_term(Moves, Term) :-
    Term =.. [m|Moves].

consistent_children(M0, Moves, Numbers, seen(Role, Percepts), [children, Children]) :-
    game(M0, Module),
    state_current(Module, Parent),
    findall([Position, PyAdd, PyDel],
            ( nth0(Position, Numbers, Number),
              joint_number(Moves, Number, [], Joint),
              state_consistent(Module, Joint, Role, Percepts, Next),
              ord_subtract(Next, Parent, Add),
              ord_subtract(Parent, Next, Del),
              maplist(to_py, Add, PyAdd),
              maplist(to_py, Del, PyDel) ),
            Children).

%   joint_number(+Moves, +Number, +Acc, -Joint): the joint move numbered Number,
%   Moves being each role's moves, last role first (the last role's move varies
%   fastest). Fails for a number out of range.

joint_number([], 0, Joint, Joint).
joint_number([T|Ts], Number, Acc, Joint) :-
    integer(Number),
    Number >= 0,
    functor(T, _, N),
    N > 0,
    Digit is Number mod N,
    Rest is Number // N,
    A is Digit + 1,
    arg(A, T, Move),
    joint_number(Ts, Rest, [Move|Acc], Joint).

%!  gdl_symbols(+Module, +Ids, -Terms) is det.
%
%   Terms are the fluents or moves (py form) that the symbol ids Ids stand for in
%   answers of gdl_step/4 and gdl_expand/3. Raises gdl_error(bad_term(Id)) for an
%   id that names nothing in Module.

gdl_symbols(M0, Ids, Terms) :-
    limited(M0, 1, gdl_symbols_(M0, Ids, Terms)).

gdl_symbols_(M0, Ids, PyTerms) :-
    game(M0, Module),
    maplist(symbol_py(Module), Ids, PyTerms).

symbol_py(Module, Id, Py) :-
    (   integer(Id), symbol_term(Id, Module, Term)
    ->  to_py(Term, Py)
    ;   throw(gdl_error(bad_term(Id)))
    ).

%!  gdl_symbol_ids(+Module, +Terms, -Ids) is det.
%
%   Ids are the symbol ids of the fluents or moves Terms (py form), made for those
%   that have none yet, so that a state can be sent as ids-[Id, ...] (see
%   install_py/2). At most 1,000,000 symbols per game are made: past that, Ids is
%   the atom full.

gdl_symbol_ids(M0, Terms, Ids) :-
    limited(M0, 1, gdl_symbol_ids_(M0, Terms, Ids)).

gdl_symbol_ids_(M0, PyTerms, Ids) :-
    game(M0, Module),
    maplist(from_py, PyTerms, Terms),
    symbols(Module, Symbols),
    (   trie_property(Symbols, value_count(N)), N > 1000000
    ->  Ids = full
    ;   maplist(symbol_id(Module, Symbols), Terms, Ids)
    ).

%   Symbol ids: each fluent or move of a game that gdl_step/4 or gdl_expand/3
%   answered gets a whole number, the same in every thread, kept until the game is
%   unloaded (a game has a bounded number of them). A trie per game maps the term
%   to its id; symbol_term/3 maps back. A new id is made under a mutex, its
%   symbol_term/3 fact asserted before the trie holds it, so any thread that finds
%   an id can name it.

symbols(Module, Trie) :-
    (   symbol_table(Module, T)
    ->  Trie = T
    ;   with_mutex(gdl_symbols,
                   (   symbol_table(Module, T)
                   ->  Trie = T
                   ;   trie_new(Trie),
                       assertz(symbol_table(Module, Trie))
                   ))
    ).

symbol_id(Module, Trie, Term, Id) :-
    (   trie_lookup(Trie, Term, Id0)
    ->  Id = Id0
    ;   with_mutex(gdl_symbols, new_symbol(Module, Trie, Term, Id))
    ).

new_symbol(Module, Trie, Term, Id) :-
    (   trie_lookup(Trie, Term, Id0)
    ->  Id = Id0
    ;   to_py(Term, _),                       % the depth check, before it is kept
        flag(gdl_symbol_ids, Id, Id + 1),
        assertz(symbol_term(Id, Module, Term)),
        trie_insert(Trie, Term, Id)
    ).

forget_symbols(Module) :-
    forall(retract(symbol_table(Module, Trie)), trie_destroy(Trie)),
    retractall(symbol_term(_, Module, _)).

%!  gdl_terminal(+Module, +State, -Bool) is det.
%
%   Bool is true if State is terminal, false otherwise.

gdl_terminal(M0, State, Bool) :-
    limited(M0, 1, in_state(M0, State, terminal_bool, Bool)).

terminal_bool(Module, Bool) :-
    (   state_terminal(Module) -> Bool = true ; Bool = false ).

%!  gdl_goals(+Module, +State, -ValuesPerRole) is det.
%
%   For each role (in order) the sorted list of its goal values in State.

gdl_goals(M0, State, Values) :-
    limited(M0, 1, in_state(M0, State, goals_per_role, Values)).

goals_per_role(Module, PyValues) :-
    state_roles(Module, Roles),
    maplist(state_goals(Module), Roles, Values),
    maplist(maplist(to_py), Values, PyValues).

%!  gdl_state_info(+Module, +State, -Info) is det.
%
%   Info = [info, Terminal, LegalPerRole, GoalsPerRole]: everything a player asks
%   about one state, in one call (as gdl_terminal/3, gdl_legal_all/3 and
%   gdl_goals/3 answer).

gdl_state_info(M0, State, Info) :-
    limited(M0, 1, gdl_state_info_(M0, State, Info)).

gdl_state_info_(M0, PyState, [info, Terminal, PyLegal, PyGoals]) :-
    game(M0, Module),
    install_py(Module, PyState),
    terminal_bool(Module, Terminal),
    legal_per_role(Module, PyLegal),
    goals_per_role(Module, PyGoals).

%!  gdl_depth_charge(+Module, +State, +MaxDepth, -Result) is det.
%
%   Play uniformly random joint moves from State until a terminal state, or until
%   MaxDepth steps were made. Result is [done, Final, Depth] (Final is then the
%   installed state) or [no_legal_move, Role, State]. Runs under ten times the
%   game's inference limit.

gdl_depth_charge(M0, State, MaxDepth, Result) :-
    limited(M0, 10, gdl_depth_charge_(M0, State, MaxDepth, Result)).

gdl_depth_charge_(M0, PyState, MaxDepth, Result) :-
    game(M0, Module),
    install_py(Module, PyState),
    no_legal_move_as_result(
        ( state_playout(Module, MaxDepth, Depth),
          state_current(Module, Final),
          maplist(to_py, Final, PyFinal),
          Result = [done, PyFinal, Depth] ),
        Result).

%!  gdl_playouts(+Module, +State, +Count, +MaxDepth, -Result) is det.
%
%   Run Count depth charges from State. Result is [playouts, PerRole, Steps]: for
%   each role the list of [Value, Depth] of every playout (Value is -1 when the
%   role has no unique numeric goal value at the end), and the total number of
%   state changes; or [no_legal_move, Role, State]. Runs under 10 * Count times
%   the game's inference limit.

gdl_playouts(M0, State, Count, MaxDepth, Result) :-
    Factor is 10 * max(1, Count),
    limited(M0, Factor, gdl_playouts_(M0, State, Count, MaxDepth, Result)).

gdl_playouts_(M0, PyState, Count, MaxDepth, Result) :-
    game(M0, Module),
    install_py(Module, PyState),
    no_legal_move_as_result(
        ( state_playouts(Module, Count, MaxDepth, PerRole, Steps),
          Result = [playouts, PerRole, Steps] ),
        Result).

%   no_legal_move_as_result(:Goal, -Result): run Goal, which binds Result, or
%   Result is [no_legal_move, Role, State] if a playout found a role without a
%   legal move.

no_legal_move_as_result(Goal, Result) :-
    catch(Goal,
          gdl_no_legal_move(Role, S),
          ( maplist(to_py, S, PyS),
            to_py(Role, PyRole),
            Result = [no_legal_move, PyRole, PyS] )).

%!  gdl_seed(+Seed, -Done) is det.
%
%   Seed this thread's random generator (playouts are then reproducible). Done is
%   true.

gdl_seed(Seed, true) :-
    set_random(seed(Seed)).

%   install_py(+Module, +State): make the state given in py form (a list) or as
%   ids-SymbolIds (Python's ("ids", [...]); gdl_symbol_ids/3) current; anything
%   else (the caller sends '=') stands for the state installed last.

install_py(Module, PyState) :-
    (   is_list(PyState)
    ->  maplist(from_py, PyState, Fs),
        sort(Fs, State),
        state_install(Module, State)
    ;   PyState = ids-Ids
    ->  maplist(symbol_fluent(Module), Ids, Fs),
        sort(Fs, State),
        state_install(Module, State)
    ;   true
    ).

symbol_fluent(Module, Id, Fluent) :-
    (   integer(Id), symbol_term(Id, Module, F)
    ->  Fluent = F
    ;   throw(gdl_error(bad_term(Id)))
    ).


		 /*******************************
		 *   LIMITS AND INTERRUPTS      *
		 *******************************/

%!  gdl_set_limit(+Module, +Inferences, -Done) is det.
%
%   Set the inference limit of every question on Module (default 100,000,000); a
%   playout gets ten times as many. Done is true.

gdl_set_limit(M0, Limit, true) :-
    game(M0, Module),
    must_be(positive_integer, Limit),
    retractall(game_limit(Module, _)),
    assertz(game_limit(Module, Limit)).

%!  gdl_interrupt is det.
%
%   Sent to a thread with thread_signal/2 (see bridge/swipl.py: interrupt()): the
%   query running there raises gdl_error(interrupted). A thread that is not inside a
%   gdl2pl query ignores it.

gdl_interrupt :-
    (   nb_current('$gdl_busy', true)
    ->  throw(gdl_error(interrupted))
    ;   true
    ).

%   limited(+Module, +Factor, :Goal): run Goal under Factor times the game's
%   inference limit, so that a hostile or broken game cannot make a question run
%   forever: exceeding it raises gdl_error(inference_limit(Limit)). On any
%   exception this thread's state of the game is forgotten, and resource errors
%   are raised as gdl_error/1 terms.

limited(M0, Factor, Goal) :-
    game(M0, Module),
    catch(gdl_bounded(Module, Factor, Goal), E,
          ( state_forget(Module), throw(E) )).

%!  gdl_bounded(+Module, +Factor, :Goal) is semidet.
%
%   Run Goal once as a question about the game Module: under Factor times the
%   game's inference limit (exceeding it raises gdl_error(inference_limit(Limit)))
%   and stoppable by gdl_interrupt/0. Resource errors are raised as gdl_error/1
%   terms. Unlike the questions above it leaves this thread's installed state
%   alone: for tools over the runtime (the explainer) that restore what they change.

:- meta_predicate gdl_bounded(+, +, 0).
gdl_bounded(M0, Factor, Goal) :-
    game(M0, Module),
    (   game_limit(Module, Limit0) -> true ; Limit0 = 100000000 ),
    Limit is Limit0 * Factor,
    catch(setup_call_cleanup(
              nb_linkval('$gdl_busy', true),
              call_with_inference_limit(Goal, Limit, Result),
              nb_linkval('$gdl_busy', false)),
          E,
          ( normalized(E, E1), throw(E1) )),
    (   Result == inference_limit_exceeded
    ->  throw(gdl_error(inference_limit(Limit)))
    ;   true
    ).

%   normalized(+Exception, -Error): resource errors as gdl_error/1 terms, whose
%   messages (below) read as sentences; others unchanged.

normalized(error(resource_error(tripwire(What, _)), _), gdl_error(tripwire(What))) :- !.
normalized(error(resource_error(What), _), gdl_error(resource(What))) :- !.
normalized(E, E).


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
gdl_message(fluent_too_large(Name/Arity, Max)) -->
    [ 'the rules make a fluent ~q/~d of more than ~D nodes (the cap on a fluent\'s \c
       size): the game grows a term without bound'-[Name, Arity, Max] ].
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


		 /*******************************
		 *        PY FORM TERMS         *
		 *******************************/

%   to_py(+Term, -Py): Term in py form. A term nested deeper than max_term_depth/1
%   levels raises gdl_error(term_too_deep(Limit)): Python could not take it apart
%   safely, and no real game builds one.
%
%   from_py(+Py, -Term): the term a py-form value stands for; anything else raises
%   gdl_error(bad_term(Py)).

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
