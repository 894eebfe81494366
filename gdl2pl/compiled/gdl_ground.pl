/*  gdl_ground: a game's rules grounded by the reasoner into a propositional network
    (compiled/ground.py reads what it answers).

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

    Three passes, all bottom-up over facts that SWI-Prolog indexes on demand (deep
    indexing on the compound atoms answers a join's lookups):

    1. The static relations, exactly: stratum after stratum (the relations' strongly
       connected components, in the order Python gives), each saturated semi-naively.
    2. The relaxation of the dynamic ones: (true F) holds for every F of init or next,
       (does R M) for every legal R M, a negated dynamic literal is dropped; saturated
       semi-naively as one program (true and next tie most of it into one cycle).
    3. Grounding: every dynamic rule instantiated against that model. A rule's body is
       joined in an order chosen by selectivity (the sizes of the relations and of
       their arguments' values: a literal whose variables are bound is a test, the
       smallest fan-out goes next), and cut into a chain of small joins: where a
       variable of the join is needed no more, the distinct bindings of the variables
       still needed become atoms of their own (x(Rule, Step, Values)), so that a rule
       such as "a cell is unchanged by a move elsewhere" is a chain of joins of a few
       thousand rows, not one product of millions. Static literals and distinct are
       decided here; a negated dynamic atom outside the model is always true (dropped).
       Passes 1 and 2 use the same plans, projecting the same way.

    Then the network: atoms numbered fluents first, moves, one false atom, then the
    derived atoms in evaluation order (by the stratum of their relation; a recursive
    stratum is one cyclic group, which Python splits into the cycles of its ground
    atoms, compiled/components.py, each evaluated by a worklist in C); atoms without a
    rule are constants (false) and folded away.

    Budgets: an inference limit, a cap on ground rules and on facts, a bound on the
    depth of a derived term (a relaxation that grows without end), and gdl_interrupt/0
    (the bridge's timer). Everything asserted here is retracted afterwards, and this
    thread's tables abolished, whatever happened.
*/

:- module(gdl_ground, [ ground_game/5 ]).
% ground_game(+Rules, +Relations, +Keywords, +Limits, -Result)
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(pairs)).

:- thread_local
       rule/3,          % rule(Id, Head, Body): Kind of rules below
       static_rule/1,   % static_rule(Id)
       rel/3,           % rel(Name, Stratum, Cyclic)
       keyword/2,       % keyword(Key, Name)
       store/2,         % store(Which, Module): the modules of the model (below)
       shape/3,         % shape(Key, Term, Fact): a fluent or move functor's facts
       known/1,         % known(Trie): every fact of the full model
       sizes/1,         % sizes(Trie): Key -> facts of one relation, fluent or move functor
       distinct/3,      % distinct(Shape, AtSize, Rows-Counts): see shape_stats/3
       out/3,           % out(Head, Pos, Neg): a ground rule, atoms by number
       atoms/1,         % atoms(Trie): ground atom -> its number (atom_number_of/2)
       profile/4,       % profile(Rule, Rows, Rules, CpuSeconds) of grounding
       plan_made/4,     % plan_made(Rule, Delta, AtFacts, Segments): a model round's plan
       limit/2.         % limit(What, N)

%!  ground_game(+Rules, +Relations, +Keywords, +Limits, -Result) is det.
%
%   Rules: [[Kind, Head, Body], ...], Kind s (static) or d (dynamic), numbered from 0
%   in this order. Relations: [[RelId, Arity, Stratum, Cyclic], ...] for every relation: the
%   position of its strongly connected component in an evaluation order, and 1 if
%   that component is recursive. Keywords: [InitId, NextId, LegalId, TerminalId,
%   GoalId, SeesId]. Limits: [Inferences, MaxRules, MaxDepth].
%
%   Result: [ok, Network, Outputs, Stats]:
%     Network = [Fluents, Moves, NAtoms, RuleStart, LitStart, Lits, StateProgram,
%                MoveProgram]  (Fluents: py form; Moves: [[Role, Move], ...] py form;
%                the arrays as compiled/network.py describes them)
%     Outputs = [Legal, Next, Terminal, Goals, Sees, Init]
%                Legal [[MoveIndex, Atom]], Next [[Atom, FluentIndex]], Terminal an
%                atom or -1, Goals [[Role, Value, Atom]] and Sees [[Role, Percept,
%                Atom]] (py form), Init [FluentIndex...]
%     Stats = [Facts, Rounds, GroundRules, Profile] with Profile [[Rule, Rows,
%                Rules, Cpu], ...]
%   or [budget, What, Figure, Rule, Profile, Sizes] (What: inferences, rules, tripwire,
%   memory; Rule: the rule at work, -1 if none; Profile as in Stats, of the rules done;
%   Sizes: [[Predicate, Arity, Facts], ...] of the model so far),
%   [unsafe, Where], [unstratified], [interrupted].

ground_game(Rules, Relations, Keywords, [Inferences, MaxRules, MaxDepth], Result) :-
    setup_call_cleanup(
        load(Rules, Relations, Keywords, MaxRules, MaxDepth),
        catch(setup_call_cleanup(
                  nb_linkval('$gdl_busy', true),   % gdl_interrupt/0 may stop it
                  call_with_inference_limit(run(Result0), Inferences, Outcome),
                  nb_linkval('$gdl_busy', false)),
              E, caught(E, Result0, Outcome)),
        forget),
    (   Outcome == inference_limit_exceeded
    ->  Result = [budget, inferences, Inferences]
    ;   Result = Result0
    ).

caught(gdl_error(interrupted), [interrupted], done) :- !.
caught(ground_stop([budget, What, Figure]), [budget, What, Figure, Rule, Profile, Sizes],
       done) :-
    !,                                   % which rule was at work, and what came before
    flag(gdl_ground_rule, Rule, Rule),
    findall([R, Rows, N, Cpu], profile(R, Rows, N, Cpu), Profile),
    findall([Name, Arity, Count],
            ( sizes(T), trie_gen(T, Name/Arity, Count), atom(Name) ), Sizes).
caught(ground_stop(Result), Result, done) :- !.
caught(error(resource_error(What), _), [budget, memory, Name], done) :-
    !,
    (   atom(What) -> Name = What ; Name = resource ).
caught(E, _, _) :- throw(E).

forget :-
    retractall(rule(_, _, _)), retractall(static_rule(_)), retractall(rel(_, _, _)),
    retractall(keyword(_, _)), forget_stores, retractall(shape(_, _, _)),
    forget_sizes, retractall(distinct(_, _, _)),
    retractall(out(_, _, _)), retractall(profile(_, _, _, _)), retractall(limit(_, _)),
    retractall(plan_made(_, _, _, _)),
    forall(retract(atoms(T)), trie_destroy(T)),
    abolish_private_tables.

load(Rules, Relations, [Init, Next, Legal, Terminal, Goal, Sees], MaxRules, MaxDepth) :-
    forget,
    trie_new(Sizes),
    assertz(sizes(Sizes)),
    assertz(limit(rules, MaxRules)),
    assertz(limit(depth, MaxDepth)),
    forall(member(K-Id, [init-Init, next-Next, legal-Legal, terminal-Terminal,
                         goal-Goal, sees-Sees]),
           ( name_of(Id, Name), assertz(keyword(K, Name)) )),
    make_stores,
    forall(member([Id, Arity, Stratum, Cyclic], Relations),
           (   name_of(Id, Name),
               assertz(rel(Name, Stratum, Cyclic)),
               declare(Name/Arity)
           )),
    foldl(load_rule, Rules, 0, _).

load_rule([Kind, H0, B0], I, I1) :-
    I1 is I + 1,
    rule_term([H0|B0], [H|B]),
    assertz(rule(I, H, B)),
    (   atom_string(s, Kind) -> assertz(static_rule(I)) ; true ).

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

run([ok, Network, Outputs, [Facts, Rounds, Count, Profile]]) :-
    static_model,
    relaxed_model(Rounds),
    ground_rules,
    flag(gdl_ground_facts, Facts, Facts),
    aggregate_all(count, out(_, _, _), Count),
    findall([R, Rows, N, Cpu], profile(R, Rows, N, Cpu), Profile),
    network(Network, Outputs).

		 /*******************************
		 *     THE MODEL: FACTS, SIZES  *
		 *******************************/

%   The model is kept as facts in three modules of this thread: every fact (full),
%   the round's delta (delta) and what the round found (new). A relation atom is a
%   fact of its own predicate (g12(a, b)); a fluent F of a predicate t<functor> with
%   F's arguments (tg5(1, 2, x)); a move M of role R of m<functor>(R, M's arguments).
%   One predicate per relation and functor, so that SWI-Prolog's just-in-time
%   indexes answer a join's lookups on any bound argument.

make_stores :-
    trie_new(Known),
    assertz(known(Known)),
    thread_self(Me),
    forall(member(Which, [full, delta, new]),
           (   format(atom(M), 'gdl_ground_~w_~w', [Which, Me]),
               assertz(store(Which, M))
           )).

forget_stores :-
    forall(retract(known(T)), trie_destroy(T)),
    forall(retract(store(_, M)),
           forall(( current_predicate(M:N/A), functor(H, N, A),
                    predicate_property(M:H, dynamic) ),
                  ( retractall(M:H), abolish(M:N/A) ))).

declare(N/A) :-
    forall(store(_, M), dynamic(M:N/A)).

%   fact_term(+Kind, ?X, -Key, -Fact): the fact standing for X (a relation atom, a
%   fluent, or a move R-M) and the key of its predicate; X's functor must be known.
fact_term(atom, A, Key, A) :- functor(A, N, Ar), Key = N/Ar.
fact_term(fluent, F, Key, Fact) :-
    (   shape(Key, f(F), Fact) -> true ; new_shape(fluent, F, Key, Fact) ).
fact_term(move, R-M, Key, Fact) :-
    (   shape(Key, m(R, M), Fact) -> true ; new_shape(move, R-M, Key, Fact) ).

new_shape(fluent, F, Key, Fact) :-
    functor(F, N, Ar), functor(G, N, Ar),
    atom_concat(t, N, P),
    G =.. [_|As], Shape =.. [P|As],
    Key = P/Ar,
    assertz(shape(Key, f(G), Shape)), declare(Key),
    shape(Key, f(F), Fact), !.
new_shape(move, R-M, Key, Fact) :-
    functor(M, N, Ar), functor(G, N, Ar),
    atom_concat(m, N, P),
    G =.. [_|As], Shape =.. [P, S|As],
    Ar1 is Ar + 1, Key = P/Ar1,
    assertz(shape(Key, m(S, G), Shape)), declare(Key),
    shape(Key, m(R, M), Fact), !.

%   in(+Which, +Kind, ?X): X is a fact of the store (a fluent or move whose functor is
%   unbound: any of them). A ground question of the full model is a trie lookup.
in(full, Kind, X) :-
    ground(X), !,
    fact_term(Kind, X, _, Fact),
    known(T),
    trie_lookup(T, Fact, _).
in(Which, atom, A) :- store(Which, M), call(M:A).
in(Which, fluent, F) :-
    store(Which, Mod),
    (   var(F) -> shape(_, f(F), Fact) ; fact_term(fluent, F, _, Fact) ),
    call(Mod:Fact).
in(Which, move, R-M) :-
    store(Which, Mod),
    (   var(M) -> shape(_, m(R, M), Fact) ; fact_term(move, R-M, _, Fact) ),
    call(Mod:Fact).

fact(A) :- in(full, atom, A).
fl(F) :- in(full, fluent, F).
mv(R, M) :- in(full, move, R-M).

%   The key under which the facts matching a literal are counted.
literal_key(s(A), K) :- fact_term(atom, A, K, _).
literal_key(p(A), K) :- fact_term(atom, A, K, _).
literal_key(t(F), K) :- ( var(F) -> K = 'f*' ; fact_term(fluent, F, K, _) ).
literal_key(m(R, M), K) :- ( var(M) -> K = 'm*' ; fact_term(move, R-M, K, _) ).


%   The sizes are kept in a trie (updated in place): asserting and retracting a count
%   per new fact would leave the erased clauses for every later update to skip.
count(K, D) :-
    sizes(T),
    (   trie_lookup(T, K, N0)
    ->  N is N0 + D, trie_update(T, K, N)
    ;   trie_insert(T, K, D)
    ).

size_of(K, N) :- sizes(T), ( trie_lookup(T, K, N0) -> N = N0 ; N = 0 ).

forget_sizes :-
    forall(retract(sizes(T)), trie_destroy(T)).

%   add(+Kind, +X): X (a relation atom, a fluent, a move R-M) is a new fact of the
%   model, also kept for the next round's delta; fails if it is known.
add(Kind, X) :-
    fact_term(Kind, X, K, Fact),
    known(T),
    trie_insert(T, Fact, t),            % fails if known
    check_depth(X),
    store(full, Full),
    store(new, New),
    assertz(Full:Fact), assertz(New:Fact),
    count(K, 1),
    (   Kind == fluent -> count('f*', 1)
    ;   Kind == move -> count('m*', 1)
    ;   true
    ),
    grew.

add_fact(A) :-
    add(atom, A),
    (   kw(next, [F], A) -> add_fluent(F)
    ;   kw(legal, [R, M], A) -> add_move(R, M)
    ;   true
    ).

add_fluent(F) :- ( add(fluent, F) -> true ; true ).
add_move(R, M) :- ( add(move, R-M) -> true ; true ).

%   The dynamic facts of the model, at most MaxRules of them: each is the head of a
%   ground rule at least, so more would be more ground rules than allowed. (Static
%   facts become no rule: only the worker's memory bounds them.)
grew :-
    flag(gdl_ground_facts, N, N + 1),
    (   limit(phase, relaxed)
    ->  flag(gdl_ground_dynamic_facts, D, D + 1),
        limit(rules, Max),
        (   D >= Max -> throw(ground_stop([budget, rules, Max])) ; true )
    ;   true
    ).

%   A term deeper than the bound: a relaxation that grows without end.
check_depth(T) :-
    limit(depth, Max),
    (   depth_within(T, Max) -> true
    ;   throw(ground_stop([budget, tripwire, Max]))
    ).

depth_within(T, _) :- atomic(T), !.
depth_within(_, 0) :- !, fail.
depth_within(T, D) :-
    D1 is D - 1,
    T =.. [_|As],
    forall(member(A, As), depth_within(A, D1)).

%   shape_stats(+Literal, -Rows, -Counts): how many facts match the literal's shape
%   (its functors and constants, its variables free), and per variable of the literal
%   (term_variables/2 order) how many distinct values it takes in them. Cached per
%   shape; counted again once the facts of the literal's key have grown by a quarter
%   (or at all, for a shape that had none), and once the model is whole.
shape_stats(L, Rows, Counts) :-
    literal_key(L, K),
    size_of(K, N),
    copy_term(L, G),
    copy_term(G, Shape), numbervars(Shape, 0, _),
    (   distinct(Shape, At, Rows0-Counts0),
        N =< At + At // 4,                % a shape is counted again as its key grows,
        ( Rows0 > 0 ; N =:= At )          % and an empty one as soon as it grows at all
    ->  Rows = Rows0, Counts = Counts0
    ;   term_variables(G, Vs),
        model_goal(G, full, Goal),
        findall(Vs, call(Goal), Found),
        length(Found, Rows),
        length(Vs, Arity),
        (   Arity =:= 0 -> Counts = [] ; numlist(1, Arity, Ps), maplist(column_count(Found), Ps, Counts) ),
        retractall(distinct(Shape, _, _)),
        assertz(distinct(Shape, N, Rows-Counts))
    ).

column_count(Rows, P, C) :-
    findall(V, ( member(R, Rows), nth1(P, R, V) ), Vs),
    sort(Vs, S),
    length(S, C).

		 /*******************************
		 *           PLANNING           *
		 *******************************/

%   A body literal is a generator (positive: it binds its variables) or a test
%   (negation, distinct: all its variables must be bound by then).
generator(s(_)). generator(p(_)). generator(t(_)). generator(m(_, _)).

%!  plan(+Body, +Head, +Delta, -Segments) is det.
%
%   The body joined in an order chosen by selectivity (Delta: the literal index read
%   from the round's delta first, or none), cut where a variable is needed no more:
%   Segments is a list of seg(Prev, Steps, Next), Prev and Next the bindings carried
%   in and out (v(...) terms; Next of the last is the head), Steps the literals as
%   step(Literal, Source) with Source full or delta.

plan(Body, Head, Delta, Segments) :-
    numbered(Body, 0, Numbered),
    length(Body, N),
    (   Delta == none
    ->  (   N =< 10, best_order(Numbered, Head, none, Steps0)
        ->  Steps = Steps0
        ;   cheapest_order(Numbered, Head, Steps)
        )
    ;   select(Delta-L, Numbered, Rest),
        term_variables(L, Bound0),
        order(Rest, Bound0, Ordered),
        Greedy = [step(L, delta)|Ordered],
        (   N =< 10,
            best_order(Numbered, Head, Delta, Best, BestCost),
            steps_cost(Numbered, Head, Greedy, GreedyCost),
            GreedyCost > 3 * BestCost       % the greedy order is far off: the best one
        ->  Steps = Best
        ;   Steps = Greedy
        )
    ),
    segments(Steps, Head, Segments).

numbered([], _, []).
numbered([L|Ls], I, [I-L|Ns]) :- I1 is I + 1, numbered(Ls, I1, Ns).

%   The order of least estimated cost among those that start with one generator and
%   go on greedily (see order/3).
cheapest_order(Numbered, Head, Steps) :-
    findall(I, ( member(I-L, Numbered), generator(L) ), Starts),
    (   Starts == []
    ->  order(Numbered, [], Steps)
    ;   findall(Cost-I,                   % (findall copies: the order is made again)
                (   member(I, Starts),
                    greedy_from(I, Numbered, Order),
                    plan_cost(Order, Head, Cost)
                ),
                Costed),
        keysort(Costed, [_-Best|_]),
        greedy_from(Best, Numbered, Steps)
    ).

greedy_from(I, Numbered, [step(L, full)|Ordered]) :-
    selectchk(I-L, Numbered, Rest),
    term_variables(L, Bound0),
    order(Rest, Bound0, Ordered).

%   best_order(+Numbered, +Head, -Steps): the order of least estimated cost over all
%   orders (dynamic programming over the subsets of the body): a subset's cost is the
%   cheapest way to join it literal by literal, each prefix costing the rows it
%   carries on, and those rows are the join's size (the product of the literals'
%   rows divided, per variable shared by k of them, by its domain k - 1 times) or, if
%   fewer, the product of the domains of the variables still needed. A test counts
%   only once its variables are bound. First: the index of the literal that comes first
%   (the one read from the round's delta), or none. Fails for a body without a
%   generator.
best_order(Numbered, Head, First, Steps) :-
    best_order(Numbered, Head, First, Steps, _).

best_order(Numbered, Head, First, Steps, C) :-
    memberchk(_-G, Numbered), generator(G), !,
    term_variables(Numbered, Vars),
    length(Numbered, N),
    maplist(literal_info(Vars), Numbered, Infos),
    term_variables(Head, HeadVars0),
    var_indices(Vars, HeadVars0, HeadVars),
    Size is 1 << N,
    functor(Table, t, Size),
    nb_setarg(1, Table, 0.0-none),
    Full is Size - 1,
    forall(between(1, Full, S), dp_subset(S, Infos, HeadVars, First, Table)),
    Last is Full + 1,
    arg(Last, Table, C-_),
    C < inf,
    dp_steps(Full, Table, Infos, [], Steps0),
    (   First == none
    ->  Steps = Steps0
    ;   Steps0 = [step(L, full)|More],   % the delta's literal comes first, from the delta
        Steps = [step(L, delta)|More]
    ).

%   info(Index, Literal, Bit, Generator, VarIndices, Rows, Counts): the bit is the
%   index (literals are numbered from 0); Counts per variable of the literal, in the
%   order of VarIndices (its domain there).
literal_info(Vars, I-L, info(I, L, I, Gen, Vs, Rows, Counts)) :-
    term_variables(L, LVs),
    var_indices(Vars, LVs, Vs),
    (   generator(L)
    ->  Gen = true,
        shape_stats(L, Rows, Counts)
    ;   Gen = false, Rows = 1, Counts = []
    ).

var_indices(Vars, Vs, Is) :-
    maplist(var_index(Vars), Vs, Is).

var_index(Vars, V, I) :- nth0(I, Vars, X), X == V, !.

dp_subset(S, Infos, HeadVars, First, Table) :-
    (   valid_subset(S, Infos),
        (   First == none -> true ; S /\ (1 << First) =\= 0 )   % it starts with First
    ->  subset_rows(S, Infos, HeadVars, Rows),
        findall(C-B,
                (   member(Info, Infos),
                    info_bit(Info, B),
                    S /\ (1 << B) =\= 0,
                    ( B \== First ; S =:= 1 << B ),       % First is joined first
                    Prev is S /\ \ (1 << B),
                    Arg is Prev + 1,
                    arg(Arg, Table, C0-_),
                    C0 < inf,
                    C is C0 + Rows
                ),
                Cs),
        (   Cs == [] -> Best = inf-none ; msort(Cs, [Best|_]) )
    ;   Best = inf-none
    ),
    Arg1 is S + 1,
    nb_setarg(Arg1, Table, Best).

info_bit(info(_, _, B, _, _, _, _), B).

%   steps_cost(+Numbered, +Head, +Steps, -Cost): the cost best_order/5 gives an order:
%   the rows every prefix carries on.
steps_cost(Numbered, Head, Steps, Cost) :-
    term_variables(Numbered, Vars),
    maplist(literal_info(Vars), Numbered, Infos),
    term_variables(Head, HeadVars0),
    var_indices(Vars, HeadVars0, HeadVars),
    foldl(prefix_cost(Numbered, Infos, HeadVars), Steps, 0-0, _-Cost).

prefix_cost(Numbered, Infos, HeadVars, step(L, _), S0-C0, S-C) :-
    member(I-L0, Numbered), L0 == L, !,
    S is S0 \/ (1 << I),
    subset_rows(S, Infos, HeadVars, Rows),
    C is C0 + Rows.

%   Every test of the subset has its variables bound by its generators.
valid_subset(S, Infos) :-
    foldl(subset_gen_vars(S), Infos, [], Bound),
    forall(( member(info(_, _, B, false, Vs, _, _), Infos), S /\ (1 << B) =\= 0 ),
           subtract(Vs, Bound, [])).

subset_gen_vars(S, info(_, _, B, Gen, Vs, _, _), Acc0, Acc) :-
    (   Gen == true, S /\ (1 << B) =\= 0
    ->  append(Acc0, Vs, Acc1), sort(Acc1, Acc)
    ;   Acc = Acc0
    ).

subset_rows(S, Infos, HeadVars, Rows) :-
    include(in_subset(S), Infos, In),
    exclude(in_subset(S), Infos, Out),
    foldl(join_rows, In, 1.0-[], Join-Doms),
    findall(V, ( member(info(_, _, _, _, Vs, _, _), Out), member(V, Vs) ), OutVars),
    append(HeadVars, OutVars, Needed0), sort(Needed0, Needed),
    findall(D, ( member(V-D, Doms), memberchk(V, Needed) ), LiveDoms),
    foldl([D, P0, P]>>(P is P0 * D), LiveDoms, 1.0, DomProduct),
    Rows is min(Join, DomProduct).

in_subset(S, info(_, _, B, _, _, _, _)) :- S /\ (1 << B) =\= 0.

%   The join's rows so far, and per variable its domain (the least count seen).
join_rows(info(_, L, _, Gen, Vs, Rows, Counts), J0-D0, J-D) :-
    (   Gen == true
    ->  J1 is J0 * Rows,
        foldl(share_count, Vs, Counts, J1-D0, J2-D),
        J is max(J2, 1.0e-6)
    ;   L = ns(_) -> J is J0 * 0.5, D = D0
    ;   J = J0, D = D0
    ).

%   A variable the join already has: the rows divide by the larger domain (the usual
%   estimate of an equi-join), and its domain is the smaller.
share_count(V, C, J0-D0, J-D) :-
    (   selectchk(V-C0, D0, D1)
    ->  J is J0 / max(1, max(C, C0)),
        C1 is min(C, C0),
        D = [V-C1|D1]
    ;   J = J0, D = [V-C|D0]
    ).

dp_steps(0, _, _, Acc, Acc) :- !.
dp_steps(S, Table, Infos, Acc, Steps) :-
    Arg is S + 1,
    arg(Arg, Table, _-B),
    memberchk(info(_, L, B, _, _, _, _), Infos),
    Prev is S /\ \ (1 << B),
    dp_steps(Prev, Table, Infos, [step(L, full)|Acc], Steps).

%   Greedy: a test whose variables are bound, else the generator sharing a variable
%   with those bound so far (no cross product while one joins) of the smallest
%   estimated fan-out, else any generator; a test that can never be placed (an unsafe
%   rule) comes last, where evaluating it raises.
order([], _, []) :- !.
order(Ls, Bound, [step(L, full)|Steps]) :-
    best(Ls, Bound, I),
    selectchk(I-L, Ls, Rest),
    term_variables(L, Vs),
    append(Bound, Vs, Bound1),
    order(Rest, Bound1, Steps).

best(Ls, Bound, I) :-
    findall(C-I0, ( member(I0-L0, Ls), cost(L0, Bound, C) ), Cs),
    (   Cs == []
    ->  Ls = [I-_|_]
    ;   msort(Cs, [_-I|_])
    ).

cost(L, Bound, C) :-
    term_variables(L, Vs),
    exclude(bound_in(Bound), Vs, Free),
    (   generator(L)
    ->  (   Free == []
        ->  C = 0.5                       % a lookup: a test
        ;   estimate(L, Bound, E),
            (   Bound \== [], Free == Vs
            ->  C is 1.0e15 + E           % not connected: only if nothing else is
            ;   C is 1 + max(E, 1)
            )
        )
    ;   Free == [],
        C = 0                            % a test, its variables bound
    ).

bound_in(Bound, V) :- member(B, Bound), B == V, !.

%   The estimated cost of an order: the rows of every step's join, where the rows
%   carried on after a cut are at most the product of the live variables' domains.
plan_cost(Steps, Head, Cost) :-
    plan_cost(Steps, Head, [], 1, 0, Cost).

plan_cost([], _, _, _, Cost, Cost).
plan_cost([step(L, _)|Ss], Head, Bound, Rows0, Cost0, Cost) :-
    (   generator(L)
    ->  estimate(L, Bound, E),
        Rows1 is Rows0 * max(E, 1.0e-3)
    ;   L = ns(_)
    ->  Rows1 is Rows0 * 0.5
    ;   Rows1 = Rows0
    ),
    Cost1 is Cost0 + Rows1,
    term_variables(Bound-L, Bound1),
    term_variables(Head-Ss, Needed),
    include(bound_in(Needed), Bound1, Live),
    (   Ss \== []
    ->  domains_product(Live, [L|Ss], Dom),
        Rows is min(Rows1, Dom)
    ;   Rows = Rows1
    ),
    plan_cost(Ss, Head, Bound1, Rows, Cost1, Cost).

%   The product over variables of their domain: the fewest distinct values of a
%   position of a generator they fill (a large number if none says).
domains_product(Vars, Steps, P) :-
    foldl(domain_times(Steps), Vars, 1, P).

domain_times(Steps, V, P0, P) :-
    findall(D, ( member(step(L, _), Steps), generator(L), position_domain(L, V, D) ), Ds),
    (   Ds == [] -> D = 1.0e6 ; min_list(Ds, D) ),
    P is P0 * D.

position_domain(L, V, D) :-
    term_variables(L, Vs),
    nth1(P, Vs, X), X == V, !,
    shape_stats(L, _, Counts),
    nth1(P, Counts, D).

%   Estimated rows per binding: the facts matching the literal's shape, divided by
%   the distinct values of each of its variables that is bound (below 1 for a lookup
%   that may fail).
estimate(L, Bound, E) :-
    shape_stats(L, Rows, Counts),
    term_variables(L, Vs),
    foldl(selectivity(Bound), Vs, Counts, Rows, E).

selectivity(Bound, V, Count, E0, E) :-
    (   Count > 0, bound_in(Bound, V)
    ->  E is E0 / Count
    ;   E = E0
    ).

%   Cut the steps where a carried variable is needed no more and a generator is still
%   to come: the distinct bindings of the rest go on from there.
segments(Steps, Head, Segments) :-
    segments(Steps, Head, v, [], Segments).

segments([], Head, Prev, Acc, [seg(Prev, Steps, Head)]) :-
    reverse(Acc, Steps).
segments([S|Ss], Head, Prev, Acc, Segments) :-
    Acc1 = [S|Acc],
    (   Ss \== [],
        memberchk(step(G, _), Ss), generator(G),
        term_variables(Prev-Acc1, Carried),
        term_variables(Head-Ss, Needed),
        include(bound_in(Needed), Carried, Live),
        length(Live, NL), length(Carried, NC), NL < NC
    ->  Next =.. [v|Live],
        reverse(Acc1, Steps),
        Segments = [seg(Prev, Steps, Next)|More],
        segments(Ss, Head, Next, [], More)
    ;   segments(Ss, Head, Prev, Acc1, Segments)
    ).

		 /*******************************
		 *   STATIC: EXACT; DYNAMIC: RELAXED
		 *******************************/

%   model_goal(+Literal, +Source, -Goal): what the literal asks of the model (the
%   relaxation drops a negated dynamic literal).
model_goal(s(A), Source, in(Source, atom, A)).
model_goal(p(A), Source, in(Source, atom, A)).
model_goal(t(F), Source, in(Source, fluent, F)).
model_goal(m(R, M), Source, in(Source, move, R-M)).
model_goal(ns(A), _, ( must_ground(A), \+ fact(A) )).
model_goal(nd(_), _, true).
model_goal(nt(_), _, true).
model_goal(nm(_, _), _, true).
model_goal(ne(X, Y), _, ( must_ground(X-Y), X \== Y )).
model_goal(eq(X, Y), _, ( must_ground(X-Y), X == Y )).

must_ground(X) :-
    (   ground(X) -> true
    ;   throw(ground_stop([unsafe, negation]))
    ).

%   The heads a rule derives (Delta: which literal reads the delta, or none).
derive(Id, Delta, Heads) :-
    flag(gdl_ground_rule, _, Id),
    flag(gdl_ground_facts, Facts, Facts),
    (   plan_made(Id, Delta, At, Segments0), Facts =< 2 * At + 64
    ->  Segments = Segments0               % (a copy: its variables are its own)
    ;   rule(Id, Head, Body),
        plan(Body, Head, Delta, Segments),
        retractall(plan_made(Id, Delta, _, _)),
        assertz(plan_made(Id, Delta, Facts, Segments))
    ),
    foldl(join_model, Segments, [v], Heads).

join_model(seg(Prev, Steps, Next), Rows0, Rows) :-
    foldl(step_goal, Steps, Goals, []),
    list_conj(Goals, Goal),
    findall(Next, ( member(Prev, Rows0), Goal ), Rows1),
    sort(Rows1, Rows).

step_goal(step(L, Source), [G|Gs], Gs) :- model_goal(L, Source, G).

list_conj([], true).
list_conj([G], G) :- !.
list_conj([G|Gs], (G, C)) :- list_conj(Gs, C).

%!  saturate(+Rules, +Recursive) is det.
%
%   Derive every head of Rules until nothing new comes: a first round with every
%   rule on the whole model, then rounds that join one recursive literal (for which
%   call(Recursive, Literal) holds) with the last round's new facts.

saturate(Rules, Recursive, Rounds) :-
    clear_delta,
    forall(member(R, Rules), ( derive(R, none, Hs), maplist(add_head, Hs) )),
    saturate_rounds(Rules, Recursive, 1, Rounds).

saturate_rounds(Rules, Recursive, N, Rounds) :-
    next_delta(New),
    (   New == false
    ->  Rounds = N
    ;   forall(( member(R, Rules),
                 rule(R, _, Body),
                 nth0(I, Body, L),
                 call(Recursive, L),
                 delta_may_match(L) ),
               ( derive(R, I, Hs), maplist(add_head, Hs) )),
        N1 is N + 1,
        saturate_rounds(Rules, Recursive, N1, Rounds)
    ).

add_head(H) :- ( add_fact(H) -> true ; true ).

clear_delta :-
    forall(member(Which, [delta, new]), clear(Which)).

clear(Which) :-
    store(Which, M),
    forall(( current_predicate(M:N/A), functor(H, N, A) ), retractall(M:H)).

%   The round's new facts become the next round's delta; false if there are none.
%   (Copied, then retracted at once: retracting them one by one would leave each
%   retract to skip the ones erased before it.)
next_delta(New) :-
    clear(delta),
    store(new, N), store(delta, D),
    findall(H, ( current_predicate(N:P/A), functor(H, P, A), call(N:H) ), Hs),
    clear(new),
    (   Hs == [] -> New = false ; New = true ),
    forall(member(H, Hs), assertz(D:H)).

delta_may_match(s(A)) :- \+ \+ in(delta, atom, A).
delta_may_match(p(A)) :- \+ \+ in(delta, atom, A).
delta_may_match(t(F)) :- \+ \+ in(delta, fluent, F).
delta_may_match(m(R, M)) :- \+ \+ in(delta, move, R-M).

%   1. The static relations, stratum after stratum.
static_model :-
    flag(gdl_ground_facts, _, 0),
    flag(gdl_ground_rule, _, -1),
    findall(S-R, ( static_rule(R), rule(R, H, _), head_stratum(H, S) ), Pairs),
    keysort(Pairs, Sorted),
    group_pairs_by_key(Sorted, ByStratum),
    forall(member(S-Rs, ByStratum),
           (   stratified(S, Rs),
               saturate(Rs, in_stratum(S), _)
           )).

head_stratum(H, S) :- functor(H, N, _), rel(N, S, _).

in_stratum(S, s(A)) :- head_stratum(A, S).

%   A negated literal of a relation of the rule's own stratum: not stratified.
stratified(S, Rules) :-
    (   member(R, Rules), rule(R, _, Body), member(ns(A), Body), head_stratum(A, S)
    ->  throw(ground_stop([unstratified]))
    ;   true
    ).

%   2. The relaxation: fluents of init, moves and fluents of static legal and next
%   facts, then every dynamic rule until nothing new comes.
relaxed_model(Rounds) :-
    retractall(limit(phase, _)),
    assertz(limit(phase, relaxed)),
    flag(gdl_ground_dynamic_facts, _, 0),
    forall(( kw(init, [F], I), fact(I) ), add_fluent(F)),
    forall(( kw(next, [F], N), fact(N) ), add_fluent(F)),
    forall(( kw(legal, [R, M], L), fact(L) ), add_move(R, M)),
    findall(R, ( rule(R, _, _), \+ static_rule(R) ), Rules),
    saturate(Rules, dynamic_literal, Rounds).

dynamic_literal(p(_)).
dynamic_literal(t(_)).
dynamic_literal(m(_, _)).

		 /*******************************
		 *          GROUNDING           *
		 *******************************/

%   3. Every dynamic rule's ground instances, as chains of joins; the static keyword
%   atoms (legal, next, terminal, goal, sees of a static relation) as rules without
%   a body.
ground_rules :-
    retractall(distinct(_, _, _)),       % the model is whole now: count its shapes afresh
    flag(gdl_ground_rules, _, 0),
    flag(gdl_ground_atoms, _, 0),
    trie_new(Atoms),
    assertz(atoms(Atoms)),
    forall(( member(K-Arity, [legal-2, next-1, terminal-0, goal-2, sees-2]),
             keyword(K, N),
             \+ ( rule(R, H, _), \+ static_rule(R), functor(H, N, _) ),
             functor(A, N, Arity),
             fact(A) ),
           emit(A, [], [])),
    forall(( rule(R, _, _), \+ static_rule(R) ), ground_rule(R)).

ground_rule(Id) :-
    flag(gdl_ground_rule, _, Id),
    statistics(cputime, T0),
    rule(Id, Head, Body),
    plan(Body, Head, none, Segments),
    flag(gdl_ground_rules, N0, N0),
    chain(Id, Segments, Rules, Rows, Flat, Atoms),
    length(Rules, ChainRules),
    (   Segments = [_, _|_], Flat =< ChainRules + 16 * Atoms
    ->  flat(Segments, Head)             % the chain would not make the network cheaper
    ;   forall(member(r(H, B, N), Rules), emit(H, B, N))
    ),
    flag(gdl_ground_rules, N1, N1),
    statistics(cputime, T1),
    Cpu is T1 - T0,
    N is N1 - N0,
    assertz(profile(Id, Rows, N, Cpu)).

%   A chain's atom costs the evaluator about as much as sixteen rules (every atom of a
%   program is visited at every step, a rule only once the atom it watches holds: see
%   evaluate.c), so a rule keeps its chain only where that makes the network cheaper.

%!  chain(+Id, +Segments, -Rules, -Rows, -Flat, -Atoms) is det.
%
%   The ground rules of a rule's chain of joins (r(Head, Pos, Neg), not yet emitted),
%   the ground instances of its head (Rows), how many ground rules the rule would have
%   without the chain (Flat: each binding carries the number of whole body instances
%   it stands for), and the chain's atoms of its own (Atoms).
chain(Id, Segments, Rules, Rows, Flat, Atoms) :-
    length(Segments, Last),
    foldl(join_ground(Id, Last), Segments, Parts, 1-[v-1]-none-0, _-Final-_-Atoms),
    append(Parts, Rules),
    Final = final(Rows, Flat).

%   One segment: every binding carried in (Rows0, with its count) joined with its
%   steps; each row is a ground rule whose head is the segment's next bindings as an
%   atom x(Id, K, Next) (the rule's head for the last segment), whose body is the
%   previous segment's atom (if it had one) and the dynamic atoms of the steps.
join_ground(Id, Last, seg(Prev, Steps, Next), Rules, K-Rows0-PrevAux-A0, K1-Rows-Aux-A) :-
    K1 is K + 1,
    ground_goals(Steps, Goals, Pos, Neg),
    list_conj(Goals, Goal),
    findall(e(Prev, Next, Pos, Neg, C), ( member(Prev-C, Rows0), Goal ), Es),
    (   K =:= Last
    ->  Aux = head
    ;   Pos == [], Neg == [], PrevAux == none
    ->  Aux = none                         % static so far: no atom
    ;   Aux = K
    ),
    findall(r(H, B, N),
            (   Aux \== none,
                member(e(P, X, Ps, Ns, _), Es),
                ( Aux == head -> H = X ; H = x(Id, K, X) ),
                ( PrevAux == none -> B = Ps ; B = [x(Id, PrevAux, P)|Ps] ),
                append(Ns, N)
            ),
            Rules),
    (   Aux == head
    ->  length(Es, Count),
        foldl([e(_, _, _, _, C), F0, F]>>(F is F0 + C), Es, 0, Flat),
        Rows = final(Count, Flat),
        A = A0
    ;   findall(X-C, member(e(_, X, _, _, C), Es), XCs),
        msort(XCs, Sorted),
        sum_counts(Sorted, Rows),
        (   Aux == none -> A = A0 ; length(Rows, NA), A is A0 + NA )
    ).

%   Pairs Key-Count sorted by key, with the counts of equal keys added.
sum_counts([], []).
sum_counts([K-C|T], Out) :- sum_counts(T, K, C, Out).

sum_counts([], K, C, [K-C]).
sum_counts([K1-C1|T], K, C, Out) :-
    (   K1 == K
    ->  C2 is C + C1, sum_counts(T, K, C2, Out)
    ;   Out = [K-C|Out1], sum_counts(T, K1, C1, Out1)
    ).

%   The rule's ground instances as rules of their own, the whole body joined at once.
flat(Segments, Head) :-
    foldl(segment_steps, Segments, Steps, []),
    ground_goals(Steps, Goals, Pos, Neg),
    list_conj(Goals, Goal),
    forall(Goal, ( append(Neg, N), emit(Head, Pos, N) )).

segment_steps(seg(_, Steps, _), S0, S) :- append(Steps, S, S0).

%   ground_goal(+Step, -Goal, -Pos, -Neg): the goal of a step for grounding, with the
%   ground atoms it adds to the rule (Pos) and the negated ones it keeps (Neg: a list
%   per step, empty when the atom is outside the model: its negation always holds).
ground_goals([], [], [], []).
ground_goals([step(L, _)|Ss], [G|Gs], P0, N0) :-
    ground_goal(L, G, P0, P, N0, N),
    ground_goals(Ss, Gs, P, N).

ground_goal(s(A), fact(A), P, P, N, N).
ground_goal(p(A), fact(A), [A|P], P, N, N).
ground_goal(t(F), fl(F), [t(F)|P], P, N, N).
ground_goal(m(R, M), mv(R, M), [m(R, M)|P], P, N, N).
ground_goal(ns(A), ( must_ground(A), \+ fact(A) ), P, P, N, N).
ground_goal(nd(A), ( must_ground(A), ( fact(A) -> X = [A] ; X = [] ) ), P, P, [X|N], N).
ground_goal(nt(F), ( must_ground(F), ( fl(F) -> X = [t(F)] ; X = [] ) ), P, P, [X|N], N).
ground_goal(nm(R, M), ( must_ground(R-M), ( mv(R, M) -> X = [m(R, M)] ; X = [] ) ),
            P, P, [X|N], N).
ground_goal(ne(X, Y), ( must_ground(X-Y), X \== Y ), P, P, N, N).
ground_goal(eq(X, Y), ( must_ground(X-Y), X == Y ), P, P, N, N).

emit(H, Pos, Neg) :-
    (   ground(H) -> true
    ;   py(H, PyH), throw(ground_stop([unsafe, PyH]))
    ),
    flag(gdl_ground_rules, C, C + 1),
    limit(rules, Max),
    (   C >= Max -> throw(ground_stop([budget, rules, Max])) ; true ),
    atom_number_of(H, HI),
    maplist(atom_number_of, Pos, PI),
    maplist(atom_number_of, Neg, NI),
    assertz(out(HI, PI, NI)).

%   atom_number_of(+Atom, -N): each ground atom of a ground rule gets a number, in
%   order of first sight (the network's numbers come later: network/2).
atom_number_of(A, N) :-
    atoms(T),
    (   trie_lookup(T, A, N0)
    ->  N = N0
    ;   flag(gdl_ground_atoms, N, N + 1),
        trie_insert(T, A, N)
    ).

		 /*******************************
		 *          THE NETWORK         *
		 *******************************/

%!  network(-Network, -Outputs) is det.
%
%   The ground rules as the network's arrays (see ground_game/5).

network([Base, Moves, NAtoms, RuleStart, LitStart, Lits, StateProg, MoveProg],
        [Legal, Next, Terminal, Goals, Sees, Init]) :-
    atoms(T),
    flag(gdl_ground_atoms, NumberOf, NumberOf),
    findall(N-A, trie_gen(T, A, N), NA0),
    keysort(NA0, NA),
    pairs_values(NA, AtomList),
    Terms =.. [terms|AtomList],           % arg N + 1: the atom numbered N
    functor(Map, map, NumberOf),          % arg N + 1: its number in the network
    trie_new(Inputs),                     % t(F) or m(R, M) -> its number
    findall(F, fl(F), Fs0), sort(Fs0, Fs),
    foldl(number_input(T, Inputs, Map, t), Fs, 0, NF),
    findall(R-M, mv(R, M), Ms0), sort(Ms0, Ms),
    foldl(number_input(T, Inputs, Map, m), Ms, NF, False),
    First is False + 1,
    % the heads in evaluation order, then the rules grouped by head
    findall(H, out(H, _, _), Hs0), sort(Hs0, Hs),
    maplist(keyed_head(Terms), Hs, Keyed0),
    keysort(Keyed0, Keyed),
    pairs_keys_values(Keyed, Keys, Heads),
    foldl(number_head(Map), Heads, First, NAtoms),
    findall(FH-(P-N), ( out(H, P, N), I is H + 1, arg(I, Map, FH) ), ByHead0),
    keysort(ByHead0, ByHead1),
    group_pairs_by_key(ByHead1, ByHead),
    pairs_values(ByHead, Bodies),
    maplist(atom_rules(Map), Bodies, RuleLists),
    length(Pre, First), maplist(=(0), Pre),
    maplist(length, RuleLists, Counts),
    append(Pre, Counts, PerAtom),
    cumulative(PerAtom, 0, RuleStart),
    append(RuleLists, AllRules),
    maplist(length, AllRules, Lengths),
    cumulative(Lengths, 0, LitStart),
    append(AllRules, Lits),
    numlist_from(First, Heads, Atoms),
    programs(Atoms, Keys, RuleLists, NF, False, StateProg, MoveProg),
    maplist(py, Fs, Base),
    maplist(py_move, Ms, Moves),
    maplist(head_term(Terms), Heads, HeadTerms),
    outputs(Atoms, HeadTerms, Inputs, NF, Legal, Next, Terminal, Goals, Sees),
    findall(I, ( kw(init, [F], A), fact(A), trie_lookup(Inputs, t(F), I) ), Init0),
    sort(Init0, Init),
    trie_destroy(Inputs).

%   The fluents (moves) numbered in order; a number of the ground rules' atoms maps
%   to it.
number_input(T, Inputs, Map, Tag, X, I, I1) :-
    (   Tag == t -> Key = t(X) ; X = R-M, Key = m(R, M) ),
    trie_insert(Inputs, Key, I),
    (   trie_lookup(T, Key, N) -> J is N + 1, nb_setarg(J, Map, I) ; true ),
    I1 is I + 1.

keyed_head(Terms, H, Key-H) :-
    I is H + 1, arg(I, Terms, A),
    order_key(A, Key).

number_head(Map, H, I, I1) :-
    J is H + 1, nb_setarg(J, Map, I),
    I1 is I + 1.

head_term(Terms, H, A) :- I is H + 1, arg(I, Terms, A).

numlist_from(First, List, Numbers) :-
    length(List, N),
    (   N =:= 0 -> Numbers = [] ; Last is First + N - 1, numlist(First, Last, Numbers) ).

%   Evaluation order: the stratum of the head's relation, then a rule's chain atoms
%   in their order, then the relation's own atoms.
order_key(x(R, K, _), k(S, K)) :- !, rule(R, H, _), head_stratum(H, S).
order_key(H, k(S, inf)) :- head_stratum(H, S).

%   The rules of a derived atom as lists of literals (2 * atom, + 1 if negated),
%   each sorted, without repeats. A positive literal of an atom without rules never
%   holds (the rule is dropped); a negated one always holds (the literal is dropped).
atom_rules(Map, Bodies, Rules) :-
    findall(Lits, ( member(P-N, Bodies), rule_lits(Map, P, N, Lits) ), Rules0),
    sort(Rules0, Rules).

rule_lits(Map, P, N, Lits) :-
    maplist(positive(Map), P, PL),
    foldl(negative(Map), N, NL, []),
    append(PL, NL, L0),
    sort(L0, Lits).

positive(Map, A, L) :- I is A + 1, arg(I, Map, X), integer(X), L is 2 * X.

negative(Map, A, [L|T], T) :- I is A + 1, arg(I, Map, X), integer(X), !, L is 2 * X + 1.
negative(_, _, T, T).

cumulative([], N, [N]).
cumulative([C|Cs], N, [N|Ns]) :- N1 is N + C, cumulative(Cs, N1, Ns).

%   The state program (what depends on the state only) and the move program (what
%   depends on the joint move too), in evaluation order; a recursive stratum is one
%   cyclic group: -K followed by its K atoms.
programs(Atoms, Keys, RuleLists, NF, False, StateProg, MoveProg) :-
    maplist(triple, Atoms, Keys, RuleLists, Triples),
    group_by_stratum(Triples, Groups),
    length(Atoms, N),
    Size is False + N + 1,
    functor(Moving, moving, Size),        % arg A + 1: whether atom A moves
    maplist(program_group(NF, False, Moving), Groups, Parts),
    partition(moving_part, Parts, MoveParts, StateParts),
    pairs_values(MoveParts, MP), append(MP, MoveProg),
    pairs_values(StateParts, SP), append(SP, StateProg).

triple(A, k(S, _), Rs, t(A, S, Rs)).

moving_part(move-_).

%   The atoms grouped: a recursive stratum's atoms together, any other atom alone.
group_by_stratum([], []).
group_by_stratum([t(A, S, Rs)|T], [G|Gs]) :-
    (   rel(_, S, 1)
    ->  take_stratum(T, S, Members, Rest),
        G = cyclic([A-Rs|Members])
    ;   G = single(A-Rs), Rest = T
    ),
    group_by_stratum(Rest, Gs).

take_stratum([t(A, S, Rs)|T], S, [A-Rs|Ms], Rest) :- !, take_stratum(T, S, Ms, Rest).
take_stratum(Rest, _, [], Rest).

%   One group into the state or move program: it moves if a rule reads a move or a
%   moving atom (Moving: a term whose argument A + 1 is bound for a moving atom A).
program_group(NF, False, Moving, single(A-Rs), Kind-[A]) :-
    (   reads_moving(Rs, NF, False, Moving) -> Kind = move, moving(Moving, A)
    ;   Kind = state
    ).
program_group(NF, False, Moving, cyclic(Members), Kind-[Marker|Atoms]) :-
    pairs_keys(Members, Atoms),
    length(Atoms, K), Marker is -K,
    (   member(_-Rs, Members), reads_moving(Rs, NF, False, Moving)
    ->  Kind = move, maplist(moving(Moving), Atoms)
    ;   Kind = state
    ).

moving(Moving, A) :- I is A + 1, nb_setarg(I, Moving, t).

reads_moving(Rules, NF, False, Moving) :-
    member(Lits, Rules), member(L, Lits),
    A is L >> 1,
    (   A >= NF, A < False -> true ; I is A + 1, arg(I, Moving, X), X == t ), !.

%   What the network answers: legal atoms with their move, next atoms with their
%   fluent, terminal, goal and sees atoms with their role and value or percept.
outputs(Atoms, Terms, Inputs, NF, Legal, Next, Terminal, Goals, Sees) :-
    foldl(output(Inputs, NF), Atoms, Terms, o([], [], -1, [], [])-x, o(L, N, Terminal, G, S)-x),
    reverse(L, Legal), reverse(N, Next), reverse(G, Goals), reverse(S, Sees).

output(Inputs, NF, A, H, o(L, N, Tm, G, S)-x, Out-x) :-
    (   kw(legal, [R, M], H)
    ->  trie_lookup(Inputs, m(R, M), I), MI is I - NF,
        Out = o([[MI, A]|L], N, Tm, G, S)
    ;   kw(next, [F], H)
    ->  trie_lookup(Inputs, t(F), FI),
        Out = o(L, [[A, FI]|N], Tm, G, S)
    ;   kw(terminal, [], H)
    ->  Out = o(L, N, A, G, S)
    ;   kw(goal, [R, V], H)
    ->  py(R, PR), py(V, PV),
        Out = o(L, N, Tm, [[PR, PV, A]|G], S)
    ;   kw(sees, [R, P], H)
    ->  py(R, PR), py(P, PP),
        Out = o(L, N, Tm, G, [[PR, PP, A]|S])
    ;   Out = o(L, N, Tm, G, S)
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

py_move(R-M, [PR, PM]) :- py(R, PR), py(M, PM).
