/*  gdl_model: every answer of given relations of a loaded program (a game or any
    logic program translated by gdl2pl), for `gdl2pl model`.

    The input model of a game (its state, and a joint move as does/2) is installed
    first; every table of the module is cleared before and after, so no answer
    leaks into the runtime's later queries. Terms go out in py form (atoms, and
    lists [Functor, Arg...] for compound terms).
*/

:- module(gdl_model, [ model_answers/6 ]).  % +Module, +State, +Joint, +Preds, +Limit, -Answers
:- use_module(library(apply)).
:- use_module(library(lists)).

% the runtime is gdl2pl/prolog/ installed, prolog/ at the top of a source tree
:- if(exists_source('../prolog/gdl_explain')).
:- use_module('../prolog/gdl_explain', [with_input/4, to_py/2, from_py/2]).
:- else.
:- use_module('../../prolog/gdl_explain', [with_input/4, to_py/2, from_py/2]).
:- endif.

%!  model_answers(+Module, +State, +Joint, +Preds, +Limit, -Answers) is det.
%
%   Preds is a list of [Name, Arity] (Prolog predicate names); Answers the sorted
%   answers of each, as lists of arguments in py form. Raises
%   gdl_model(inference_limit) past Limit inferences in all.

model_answers(M0, PyState, PyJoint, Preds, Limit, Answers) :-
    atom_string(M, M0),
    maplist(from_py, PyState, Fs),
    sort(Fs, State),
    maplist(from_py, PyJoint, Joint),
    with_input(M, State, Joint,
               ( call_with_inference_limit(maplist(answers(M), Preds, Answers), Limit, R),
                 ( R == inference_limit_exceeded -> throw(gdl_model(inference_limit)) ; true ) )).

answers(M, [N0, Arity], Sorted) :-
    atom_string(N, N0),
    functor(G, N, Arity),
    (   current_predicate(M:N/Arity)
    ->  findall(Args, ( call(M:G), G =.. [_|As], maplist(to_py, As, Args) ), All)
    ;   All = []
    ),
    sort(All, Sorted).
