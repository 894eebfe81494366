/*  Writes gdl2pl/swi_reserved.txt: the predicates a standalone game module may not
    define under their own name (gdl2pl translate --standalone renames such a relation).
    They are SWI-Prolog's system predicates and the predicates its autoloadable libraries
    export (but library(backcomp), whose obsolete predicates a game may well name, such
    as index/1). Run from the repository root:  swipl scripts/swi_reserved.pl
*/

:- initialization(main, main).

reserved(Name/Arity) :-
    predicate_property(system:Head, defined),
    functor(Head, Name, Arity),
    \+ sub_atom(Name, 0, _, _, $).
reserved(Name/Arity) :-
    '$find_library'(lists, member, 2, _, _),   % loads the autoload index
    '$autoload':library_index(Head, Module, _File),
    Module \== backward_compatibility,         % obsolete names, free for games
    functor(Head, Name, Arity).

main :-
    setof(PI, reserved(PI), PIs),
    current_prolog_flag(version, Version),
    setup_call_cleanup(
        open('gdl2pl/swi_reserved.txt', write, Out, [encoding(utf8)]),
        ( format(Out, "# Reserved in SWI-Prolog ~w: written by scripts/swi_reserved.pl~n",
                 [Version]),
          forall(member(N/A, PIs), format(Out, "~a/~d~n", [N, A]))
        ),
        close(Out)).
