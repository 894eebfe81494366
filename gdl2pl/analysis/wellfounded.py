"""The well-founded model of a normal logic program in GDL syntax: three-valued, each
ground atom true, undefined or false.

For a program whose negation is not stratified (``(<= (win ?x) (move ?x ?y) (not (win
?y)))``) there may be no minimal model that fits the program's intended reading; the
well-founded semantics gives every program one model, in which the atoms caught in a
cycle through negation (``win a`` when ``a`` and ``b`` move to each other) are
*undefined*. When no atom is undefined the model is two-valued, and it is then the
program's unique stable model (and, for a stratified program, its stratified model).

``well_founded_model(d)`` sends the program to ``analysis/gdl_wfs.pl`` as data (relation
numbers, constants and variable numbers, never Prolog text), which computes it as the
alternating fixpoint: the true atoms grow as the least model of the program read with
``not A`` true exactly when ``A`` is not among the atoms that may still hold, and the atoms
that may hold shrink in turn, until neither changes (each step a positive program,
evaluated with SWI-Prolog's tabling), within an inference limit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gdl2pl.bridge.errors import QueryInterrupted
from gdl2pl.bridge.pyform import term_of_py
from gdl2pl.flatten import BodyLiteral
from gdl2pl.flatten import TranslationError
from gdl2pl.flatten import normalize_clause
from gdl2pl.flatten import relation_atom
from gdl2pl.flatten import relation_key
from gdl2pl.kif import kif_term
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Distinct
from gdl2pl.syntax import Func
from gdl2pl.syntax import Not
from gdl2pl.syntax import Rule
from gdl2pl.syntax import Sentence
from gdl2pl.syntax import Term
from gdl2pl.syntax import Var

from .model import INFERENCE_LIMIT
from .model import ModelError
from .model import Relation
from .model import _atoms
from .model import model_error

WFS_MODULE = "gdl_wfs"
#: The most memory (megabytes) an evaluation may add to the process: besides its tables,
#: each step of the fixpoint holds its answers as lists and as the facts the next step
#: reads, which no Prolog limit counts (as the stratified path, which stops at its table
#: space, it keeps the process near 600 MB).
MEGABYTES = 512

#: How an atom is written: a term printer (``kif_term`` or ``infix_term``).
Printer = Callable[[Term], str]


@dataclass(frozen=True)
class WellFoundedModel:
    """Per relation (``model.relations``' keys: ``(p)`` apart from ``p``), in order of
    first appearance: the atoms that are true and those that are undefined (each list
    sorted); every other ground atom is false. ``inputs`` are the relations taken as
    input (not shown as output)."""

    true: dict[Relation, list[str]]
    undefined: dict[Relation, list[str]]
    inputs: frozenset[Relation] = frozenset()

    @property
    def two_valued(self) -> bool:
        """No atom is undefined: the model is then the program's unique stable model."""
        return not any(self.undefined.values())

    def output(self) -> list[Relation]:
        """The relations to show: all, or those that are not inputs."""
        return [k for k in self.true if k not in self.inputs]


def well_founded_model(
    d: Description,
    rels: list[Relation],
    inputs: frozenset[Relation] = frozenset(),
    printer: Printer = kif_term,
    inference_limit: int = INFERENCE_LIMIT,
    megabytes: float = MEGABYTES,
) -> WellFoundedModel:
    """The well-founded model of ``d`` (normalized, safe: see ``model.check_program``)
    over the relations ``rels`` (``model.relations(d)``), atoms written by ``printer``.
    Raises ``ModelError`` when it is beyond ``inference_limit``, ``megabytes`` more
    memory, Prolog's table space and stacks (see ``gdl_wfs.pl``) or a million atoms;
    ``QueryInterrupted`` when another thread interrupts it. Its tables are freed
    afterwards."""
    from gdl2pl.bridge.errors import prolog_message
    from gdl2pl.bridge.swipl import interrupt_past_memory
    from gdl2pl.bridge.swipl import runtime_with

    keys: dict[tuple[str, int], int] = {}
    clauses: list[Any] = []
    for c in d.clauses:
        try:
            flats = normalize_clause(c)  # safe order: tests after what binds them
        except TranslationError as e:
            raise ModelError(str(e)) from None
        for flat in flats:
            numbers: dict[str, int] = {}
            head = _goal(flat.head, keys, numbers)
            body = [_literal(lit, keys, numbers) for lit in flat.body]
            clauses.append([head, body])
    for s in _body_sentences(d):
        keys.setdefault(relation_key(s), len(keys))
    arities = [arity for _, arity in keys]
    janus = runtime_with("gdl2pl.analysis", "gdl_wfs.pl")
    try:
        with interrupt_past_memory(megabytes) as too_large:
            answers = janus.apply_once(WFS_MODULE, "wfs_answers", arities, clauses, inference_limit)
    except janus.PrologError as e:
        if prolog_message(e) == "interrupted":
            if too_large.is_set():
                raise ModelError(
                    f"the model is too large to compute: it needs more than {megabytes:g} MB "
                    "of memory (a rule may join too many atoms)"
                ) from None
            raise QueryInterrupted("well-founded model: interrupted") from None
        raise model_error(e) from None
    found: dict[tuple[str, int], list[list[Any]]] = dict(zip(keys, answers, strict=True))
    true: dict[Relation, list[str]] = {}
    undefined: dict[Relation, list[str]] = {}
    for rel in rels:
        rows = found.get(rel, [])
        holds = {_atom(rel, args, printer) for args, truth in rows if truth == "true"}
        maybe = {_atom(rel, args, printer) for args, truth in rows if truth != "true"}
        true[rel] = sorted(holds)
        undefined[rel] = sorted(maybe - holds)
    return WellFoundedModel(true, undefined, inputs)


def _body_sentences(d: Description) -> list[Sentence]:
    return [s for c in d.clauses if isinstance(c, Rule) for s in _atoms(c.body)]


def _goal(s: Sentence, keys: dict[tuple[str, int], int], numbers: dict[str, int]) -> Any:
    index = keys.setdefault(relation_key(s), len(keys))
    args = s.args if isinstance(s, Func) else ()
    return [index, [_term(a, numbers) for a in args]]


def _literal(lit: BodyLiteral, keys: dict[tuple[str, int], int], numbers: dict[str, int]) -> Any:
    if isinstance(lit, Distinct):
        return ["distinct", _term(lit.left, numbers), _term(lit.right, numbers)]
    if isinstance(lit, Not):
        body = lit.body
        if isinstance(body, Distinct):  # the two terms are identical
            return ["same", _term(body.left, numbers), _term(body.right, numbers)]
        if isinstance(body, Not) and isinstance(body.body, Const | Func):
            return ["pos", *_goal(body.body, keys, numbers)]  # (not (not p)) is p
        return ["neg", *_goal(body, keys, numbers)]  # type: ignore[arg-type]
    return ["pos", *_goal(lit, keys, numbers)]


def _term(t: Term, numbers: dict[str, int]) -> Any:
    """A term in the py form of ``gdl_wfs.pl``: a variable is its number."""
    if isinstance(t, Var):
        return numbers.setdefault(t.name, len(numbers))
    if isinstance(t, Func):
        return [t.name, *(_term(a, numbers) for a in t.args)]
    return t.name


def _atom(rel: Relation, args: list[Any], printer: Printer) -> str:
    return printer(relation_atom(rel, tuple(term_of_py(a) for a in args)))
