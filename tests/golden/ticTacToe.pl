%   game: translated by gdl2pl from ticTacToe.kif.
%
%   How to read this module
%   -----------------------
%   Each clause below is one GDL rule, or one branch of a rule whose body has an
%   'or' (the rule is then split into one clause per branch); the comment above a
%   clause gives its source line, the branch, and the rule in KIF.
%
%   :- set_module(base(system)): the module sees only SWI-Prolog's built-ins, not
%      the user's predicates, so a game's relation can never call or clash with them.
%   :- set_module(class(temporary)): the module is destroyed when the game is closed.
%
%   Names: a keyword relation keeps its name (legal/2, goal/2, next/1, ...); every
%   other relation r becomes r_r; constants are quoted atoms with the GDL text.
%   The state: (true (cell 1 1 b)) is the fact true_cell('1', '1', b) of the
%   thread-local store true_cell/3 (one store per fluent functor and arity, so
%   Prolog indexes on every argument); fluents whose functor is not known when the
%   game is translated go to the fallback store true_/1, and true/1 looks a fluent
%   up in whichever store holds it. The joint move is held in does/2. The runtime
%   (prolog/gdl_runtime.pl) fills these in for each state.
%   static_r: the rules of a relation r that does not depend on the state; the
%   runtime computes their facts once, when the game is loaded, and asserts them
%   as r_r, which every other rule calls.
%   \+ G is negation as failure (GDL's not); X \== Y is (distinct X Y); tnot/1
%   is the tabled negation used inside a recursive component; \+ \+ G proves a
%   literal that is ground when it is called once only (it holds or it does not).

:- module(game, []).
:- set_module(base(system)).
:- set_module(class(temporary)).

% The state, and the joint move while the next state is computed:
% filled in by the runtime.
:- thread_local true_cell/3, true_control/1, true_/1, does/2.
% Independent of the state: the runtime asserts the facts that the
% static_* rules derive, once, when the game is loaded.
:- dynamic base/1, init/1, input/2.
:- discontiguous goal/2, legal/2, next/1, r_column/2, r_diagonal/1, r_filler/1, r_index/1, r_line/1, r_open/0, r_row/2, r_writes/2, role/1, static_base/1, static_init/1, static_input/2, terminal/0.

% ticTacToe.kif:6  (role xplayer)
role(xplayer).

% ticTacToe.kif:7  (role oplayer)
role(oplayer).

% ticTacToe.kif:9  (index 1)
r_index('1').

% ticTacToe.kif:9  (index 2)
r_index('2').

% ticTacToe.kif:9  (index 3)
r_index('3').

% ticTacToe.kif:10  (filler x)
r_filler(x).

% ticTacToe.kif:10  (filler o)
r_filler(o).

% ticTacToe.kif:10  (filler b)
r_filler(b).

% ticTacToe.kif:11  (writes xplayer x)
r_writes(xplayer, x).

% ticTacToe.kif:12  (writes oplayer o)
r_writes(oplayer, o).

% ticTacToe.kif:14  (<= (base (cell ?m ?n ?f)) (index ?m) (index ?n) (filler ?f))
static_base(cell(M, N, F)) :-
    r_index(M),
    r_index(N),
    r_filler(F).

% ticTacToe.kif:15  (<= (base (control ?r)) (role ?r))
static_base(control(R)) :-
    role(R).

% ticTacToe.kif:17  (<= (input ?r (mark ?m ?n)) (role ?r) (index ?m) (index ?n))
static_input(R, mark(M, N)) :-
    role(R),
    r_index(M),
    r_index(N).

% ticTacToe.kif:18  (<= (input ?r noop) (role ?r))
static_input(R, noop) :-
    role(R).

% ticTacToe.kif:20  (<= (init (cell ?m ?n b)) (index ?m) (index ?n))
static_init(cell(M, N, b)) :-
    r_index(M),
    r_index(N).

% ticTacToe.kif:21  (init (control xplayer))
static_init(control(xplayer)).

% ticTacToe.kif:23  (<= (legal ?r (mark ?m ?n)) (true (control ?r)) (true (cell ?m ?n b)))
legal(R, mark(M, N)) :-
    true_control(R),
    true_cell(M, N, b).

% ticTacToe.kif:26  (<= (legal xplayer noop) (true (control oplayer)))
legal(xplayer, noop) :-
    true_control(oplayer).

% ticTacToe.kif:27  (<= (legal oplayer noop) (true (control xplayer)))
legal(oplayer, noop) :-
    true_control(xplayer).

% ticTacToe.kif:30  (<= (next (cell ?m ?n ?f)) (does ?r (mark ?m ?n)) (writes ?r ?f))
next(cell(M, N, F)) :-
    does(R, mark(M, N)),
    r_writes(R, F).

% ticTacToe.kif:31  (<= (next (cell ?m ?n ?f)) (true (cell ?m ?n ?f)) (distinct ?f b))
next(cell(M, N, F)) :-
    true_cell(M, N, F),
    F \== b.

% ticTacToe.kif:32 (branch 1 of 2 of the rule's or)  (<= (next (cell ?m ?n b)) (true (cell ?m ?n b)) (does ?r (mark ?j ?k)) (or (distinct ?m ?j) (distinct ?n ?k)))
next(cell(M, N, b)) :-
    true_cell(M, N, b),
    does(_R, mark(J, _K)),
    M \== J.

% ticTacToe.kif:32 (branch 2 of 2 of the rule's or)  (<= (next (cell ?m ?n b)) (true (cell ?m ?n b)) (does ?r (mark ?j ?k)) (or (distinct ?m ?j) (distinct ?n ?k)))
next(cell(M, N, b)) :-
    true_cell(M, N, b),
    does(_R, mark(_J, K)),
    N \== K.

% ticTacToe.kif:36  (<= (next (control oplayer)) (true (control xplayer)))
next(control(oplayer)) :-
    true_control(xplayer).

% ticTacToe.kif:37  (<= (next (control xplayer)) (true (control oplayer)))
next(control(xplayer)) :-
    true_control(oplayer).

% ticTacToe.kif:39  (<= (row ?m ?f) (true (cell ?m 1 ?f)) (true (cell ?m 2 ?f)) (true (cell ?m 3 ?f)))
r_row(M, F) :-
    true_cell(M, '1', F),
    true_cell(M, '2', F),
    true_cell(M, '3', F).

% ticTacToe.kif:40  (<= (column ?n ?f) (true (cell 1 ?n ?f)) (true (cell 2 ?n ?f)) (true (cell 3 ?n ?f)))
r_column(N, F) :-
    true_cell('1', N, F),
    true_cell('2', N, F),
    true_cell('3', N, F).

% ticTacToe.kif:41  (<= (diagonal ?f) (true (cell 1 1 ?f)) (true (cell 2 2 ?f)) (true (cell 3 3 ?f)))
r_diagonal(F) :-
    true_cell('1', '1', F),
    true_cell('2', '2', F),
    true_cell('3', '3', F).

% ticTacToe.kif:42  (<= (diagonal ?f) (true (cell 1 3 ?f)) (true (cell 2 2 ?f)) (true (cell 3 1 ?f)))
r_diagonal(F) :-
    true_cell('1', '3', F),
    true_cell('2', '2', F),
    true_cell('3', '1', F).

% ticTacToe.kif:43  (<= (line ?f) (row ?m ?f))
r_line(F) :-
    r_row(_M, F).

% ticTacToe.kif:44  (<= (line ?f) (column ?n ?f))
r_line(F) :-
    r_column(_N, F).

% ticTacToe.kif:45  (<= (line ?f) (diagonal ?f))
r_line(F) :-
    r_diagonal(F).

% ticTacToe.kif:46  (<= open (true (cell ?m ?n b)))
r_open :-
    true_cell(_M, _N, b).

% ticTacToe.kif:48  (<= (goal xplayer 100) (line x))
goal(xplayer, '100') :-
    \+ \+ r_line(x).

% ticTacToe.kif:49  (<= (goal xplayer 50) (not (line x)) (not (line o)))
goal(xplayer, '50') :-
    \+ r_line(x),
    \+ r_line(o).

% ticTacToe.kif:50  (<= (goal xplayer 0) (line o))
goal(xplayer, '0') :-
    \+ \+ r_line(o).

% ticTacToe.kif:51  (<= (goal oplayer 100) (line o))
goal(oplayer, '100') :-
    \+ \+ r_line(o).

% ticTacToe.kif:52  (<= (goal oplayer 50) (not (line x)) (not (line o)))
goal(oplayer, '50') :-
    \+ r_line(x),
    \+ r_line(o).

% ticTacToe.kif:53  (<= (goal oplayer 0) (line x))
goal(oplayer, '0') :-
    \+ \+ r_line(x).

% ticTacToe.kif:55  (<= terminal (line x))
terminal :-
    \+ \+ r_line(x).

% ticTacToe.kif:56  (<= terminal (line o))
terminal :-
    \+ \+ r_line(o).

% ticTacToe.kif:57  (<= terminal (not open))
terminal :-
    \+ r_open.

% ---- Interface to the runtime ----

% true(?Fluent): the dispatcher for fluents not known statically.
true(cell(A1, A2, A3)) :- true_cell(A1, A2, A3).
true(control(A1)) :- true_control(A1).
true(F) :- true_(F).

% gdl_store(+Fluent, -Fact): where the runtime asserts a fluent.
gdl_store(cell(A1, A2, A3), true_cell(A1, A2, A3)).
gdl_store(control(A1), true_control(A1)).
gdl_store(F, true_(F)).

% gdl_static(?Facts, ?Rules): what the runtime computes at load, in order.
gdl_static(base(A1), static_base(A1)).
gdl_static(init(A1), static_init(A1)).
gdl_static(input(A1, A2), static_input(A1, A2)).

% Tables to clear when the state (true) or the joint move (does) changes.
gdl_true_table(_) :- fail.
gdl_does_table(_) :- fail.

% gdl_query_tables(?Query, ?Kind): the queries that may fill those tables;
% the runtime clears a kind of tables only when such a query ran since.
gdl_query_tables(_, _) :- fail.
