"""Minimal models of logic programs in GDL syntax, outputs of open programs, and the
Herbrand universe and base.

``check_program`` checks that the program is safe (errors name the rule and line) and
tells whether it is stratified; ``evaluate`` takes a stratified program, with its input
model (facts of the input relations) added and translated into a Prolog module by gdl2pl's
translator (which evaluates stratified negation by strata and recursion by tabling), and
reads every answer of every relation. For a game, a state and a joint move are the input
model of ``true`` and ``does``. A program that is not stratified has a well-founded model
instead (``wellfounded``).

A relation is its ``gdl2pl.flatten.relation_key``, as the translator reads it: ``(p)``,
written with empty parentheses, is ``("p()", 0)``, another relation than the proposition
``p`` (``("p", 0)``); ``relation_label`` writes it ``(p)`` or ``p()``.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from gdl2pl.bridge.pyform import py_of_term
from gdl2pl.bridge.pyform import term_of_py
from gdl2pl.check import check_description
from gdl2pl.check import format_finding
from gdl2pl.depgraph import body_atoms
from gdl2pl.errors import GdlError
from gdl2pl.flatten import relation_atom
from gdl2pl.flatten import relation_key
from gdl2pl.flatten import term_args
from gdl2pl.kif import kif_term
from gdl2pl.syntax import And
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Distinct
from gdl2pl.syntax import Fact
from gdl2pl.syntax import Func
from gdl2pl.syntax import Literal
from gdl2pl.syntax import Not
from gdl2pl.syntax import Or
from gdl2pl.syntax import Rule
from gdl2pl.syntax import Sentence
from gdl2pl.syntax import Term
from gdl2pl.syntax import is_ground
from gdl2pl.syntax import walk
from gdl2pl.translate import predicate_name

#: Checker findings that make a minimal model undefined or unreadable.
FATAL = frozenset(
    {
        "unsafe-variable",
        "variable-in-fact",
        "unstratified-negation",
        "negation-cycle",
        "arity-mismatch",
        "defines-input",
        "negated-non-sentence",
        "keyword-as-function",
        "zero-arity-function",
    }
)
#: Findings after which the program has a well-founded model but no stratified one.
NOT_STRATIFIED = frozenset({"unstratified-negation"})
INFERENCE_LIMIT = 500_000_000
MODEL_MODULE = "gdl_model"


class ModelError(GdlError):
    """The program has no (computable) minimal model, or its input is ill-formed."""


def model_error(e: Exception) -> ModelError:
    """The error for Prolog's exception ``e`` while computing a model: too large (past
    the inference limit or memory), or what Prolog raised."""
    text = str(e)
    raised = str(getattr(e, "term", ""))
    if any(w in text for w in ("inference_limit", "too_many")) or "resource_error(" in raised:
        return ModelError(
            "the model is too large to compute (infinite, or beyond the inference "
            "limit or Prolog's memory: a rule may join too many atoms)"
        )
    return ModelError(f"Prolog raised: {text}")


Relation = tuple[str, int]


@dataclass(frozen=True)
class Model:
    """Each relation's atoms (KIF strings, sorted), in order of first appearance;
    ``inputs`` the relations taken as input (not printed as output)."""

    relations: dict[Relation, list[str]]
    inputs: frozenset[Relation]

    def output(self) -> dict[Relation, list[str]]:
        return {k: v for k, v in self.relations.items() if k not in self.inputs}


def relations(d: Description) -> dict[Relation, bool]:
    """Every relation (name, arity) of ``d`` in order of first appearance, mapped to
    whether some clause has it as its head."""
    out: dict[Relation, bool] = {}
    for c in d.clauses:
        key = _key(c.head)
        out[key] = True
        if isinstance(c, Rule):
            for s in _atoms(c.body):
                out.setdefault(_key(s), False)
    return out


def _key(s: Sentence) -> Relation:
    return relation_key(s)


def relation_label(rel: Relation, printer: Callable[[Term], str] = kif_term) -> str:
    """How the model names a relation: its name, or ``(p)`` (``p()`` in infix: as
    ``printer`` writes it) for a relation written with empty parentheses."""
    atom = relation_atom(rel)
    return printer(atom) if isinstance(atom, Func) and rel[1] == 0 else rel[0]


def _atoms(lits: Iterable[Literal]) -> Iterator[Sentence]:
    for lit in lits:
        if isinstance(lit, Const | Func):
            yield lit
        elif isinstance(lit, Not):
            yield from _atoms([lit.body])
        elif isinstance(lit, Or):
            yield from _atoms(lit.disjuncts)
        elif isinstance(lit, And):
            yield from _atoms(lit.conjuncts)


def check_program(d: Description, path: str) -> bool:
    """Whether the program is stratified (its negation: else only its well-founded model
    is computed, ``wellfounded``); raise ``ModelError`` naming each rule that makes it
    have no model at all (unsafe, a fact with variables, arities that disagree, ...)."""
    found = [f for f in check_description(d, path) if f.is_error and f.code in FATAL]
    bad = [f for f in found if f.code not in NOT_STRATIFIED]
    if bad:
        raise ModelError("\n".join(format_finding(f, path) for f in bad))
    return not found


def input_relations(d: Description, named: Iterable[str] = ()) -> frozenset[Relation]:
    """Relations in no clause head, and those ``named`` (which must head no rule; ``p()``
    names the relation written ``(p)``)."""
    rels = relations(d)
    names = set(named)
    for c in d.clauses:
        if isinstance(c, Rule) and _key(c.head)[0] in names:
            raise ModelError(
                f"{c.pos}: input relation {_key(c.head)[0]} is defined by a rule (an input "
                "relation may appear only in rule bodies)"
            )
    unknown = names - {n for n, _ in rels}
    if unknown:
        raise ModelError(f"--inputs: no relation named {', '.join(sorted(unknown))}")
    return frozenset(k for k, defined in rels.items() if not defined or k[0] in names)


def check_input(facts: Description, inputs: frozenset[Relation], path: str) -> None:
    """Each clause of an input model must be a ground fact of an input relation."""
    for c in facts.clauses:
        where = c.pos if c.pos and c.pos.file else f"{path}:{c.pos.line if c.pos else '?'}"
        if not isinstance(c, Fact):
            raise ModelError(f"{where}: an input model holds facts only, not rules")
        if not all(is_ground(a) for a in (c.head.args if isinstance(c.head, Func) else ())):
            raise ModelError(f"{where}: the input fact {kif_term(c.head)} is not ground")
        if _key(c.head) not in inputs:
            ins = ", ".join(f"{n}/{a}" for n, a in sorted(inputs)) or "none"
            raise ModelError(
                f"{where}: {kif_term(c.head)} is not an atom of an input relation "
                f"(input relations: {ins})"
            )


def model_runtime() -> Any:
    """The janus module with ``analysis/gdl_model.pl`` loaded (once per process)."""
    from gdl2pl.bridge.swipl import runtime_with

    return runtime_with("gdl2pl.analysis", "gdl_model.pl")


def evaluate(
    sm: Any,
    rels: Iterable[Relation],
    state: Iterable[Term] = (),
    joint: Iterable[Term] = (),
    inputs: frozenset[Relation] = frozenset(),
    inference_limit: int = INFERENCE_LIMIT,
    printer: Callable[[Term], str] = kif_term,
) -> Model:
    """The minimal model of the loaded program ``sm`` (a ``StateMachine``) with the
    state as ``true`` and the joint move as ``does``: every atom of each relation,
    written by ``printer`` (KIF, or ``infix_term``), in at most ``inference_limit``
    inferences (else ``ModelError``)."""
    janus = model_runtime()
    keys = list(rels)
    preds = [[_pred(n, a), a] for n, a in keys]
    try:
        with sm.using():
            answers = janus.apply_once(
                MODEL_MODULE,
                "model_answers",
                sm.module,
                [_py(f) for f in state],
                [_py(m) for m in joint],
                preds,
                inference_limit,
            )
    except janus.PrologError as e:
        raise model_error(e) from None
    out: dict[Relation, list[str]] = {}
    for (name, arity), rows in zip(keys, answers, strict=True):
        atoms = [_atom(name, row, printer) for row in rows]
        out[(name, arity)] = sorted(atoms) if arity else atoms
    return Model(out, inputs)


def _pred(name: str, arity: int) -> str:
    return name if name in ("true", "does") else predicate_name(name, arity)


def _py(t: Term) -> Any:
    return py_of_term(t, ModelError)


_term = term_of_py


def _atom(name: str, row: list[Any], printer: Callable[[Term], str] = kif_term) -> str:
    return printer(relation_atom((name, len(row)), tuple(_term(a) for a in row)))


# -- Herbrand universe and base ---------------------------------------------------------


@dataclass(frozen=True)
class Herbrand:
    """Object constants, function constants (name, arity), relations, and the sizes of
    the universe and base (None when infinite)."""

    constants: tuple[str, ...]
    functions: tuple[tuple[str, int], ...]
    relations: tuple[Relation, ...]

    @property
    def universe_size(self) -> int | None:
        return None if self.functions else len(self.constants)

    @property
    def base_size(self) -> int | None:
        u = self.universe_size
        if u is None:
            return None if any(a for _, a in self.relations) else len(self.relations)
        return sum(u**a for _, a in self.relations)

    def universe(self, printer: Callable[[Term], str] = kif_term) -> list[str]:
        """The object constants, each written by ``printer`` (KIF, or ``infix_term``)."""
        return [printer(Const(c)) for c in self.constants]

    def base(self, printer: Callable[[Term], str] = kif_term) -> Iterator[str]:
        """Every ground atom over the universe, each written by ``printer``."""
        from itertools import product

        for name, arity in self.relations:
            if arity == 0:
                yield printer(relation_atom((name, 0)))
            else:
                for args in product(self.constants, repeat=arity):
                    yield printer(Func(name, tuple(map(Const, args))))


def herbrand(d: Description) -> Herbrand:
    consts: dict[str, None] = {}
    funcs: dict[tuple[str, int], None] = {}
    for c in d.clauses:
        for lit in (c.head, *(c.body if isinstance(c, Rule) else ())):
            # the terms of a literal: its sentences' arguments and its distincts' sides
            terms = [a for s, _ in body_atoms(lit) for a in term_args(s)]
            terms += [x for n in walk(lit) if isinstance(n, Distinct) for x in (n.left, n.right)]
            for n in (n for t in terms for n in walk(t)):
                if isinstance(n, Const):
                    consts.setdefault(n.name, None)
                elif isinstance(n, Func):
                    funcs.setdefault((n.name, len(n.args)), None)
    return Herbrand(tuple(sorted(consts)), tuple(sorted(funcs)), tuple(relations(d)))
