"""Infix GDL (the Stanford course syntax): reading with a pyparsing grammar, and printing.

Syntax accepted by ``parse_infix``::

    clause   := head [(':-' | '<=') body] ['.']      a rule body may span lines
    head     := symbol ['(' [term {',' term}] ')']    'p' is a Const, 'p()' a Func with no args
    body     := conj {'|' conj}  |  (nothing, before a '.': ``p :- .`` is a rule with no body)
    conj     := literal {'&' literal}
    literal  := ('~' | '-') literal                  negation (the seeds write both)
              | 'distinct' '(' term ',' term ')'  |  term '!=' term
              | '(' group ')'  |  head
    group    := body ['|' | '&']  |  '|'  |  '&'

Clauses are separated by white space (several facts may share a line) or by '.'; a clause
may not follow a rule body on the same line unless that rule ends with '.', which catches
a forgotten '&'. ``%`` starts a comment. The logic signs of the slides (U+2227 and, U+2228
or, U+00AC not, U+2260 not equal) are accepted for ``& | ~ !=``.

Names: variables start with an uppercase letter or '_' (``X``, ``_``; every ``_`` is the
same variable, as in KIF ``?_``); symbols start with a lowercase letter or digit and go on
with letters, digits and '_'. Any other symbol (``'CELL'``, ``'not-filled'``, ``'+'``) is
written between single quotes, with ``\\'`` and ``\\\\`` as the only escapes; a quoted
``'distinct'`` is an ordinary relation name.

Groups: ``(a & b)`` is ``And``, ``(a | b)`` is ``Or`` (``&`` binds tighter than ``|``, so
``a & b | c`` is ``Or(And(a, b), c)``); ``(a)`` is just ``a``. A top-level ``a | b`` body is
one ``Or`` literal. The printer's rarely needed forms: ``(a |)`` and ``(a &)`` are one-literal
``Or``/``And``, ``(|)`` and ``(&)`` the empty ones.

Printing (``print_infix``) writes what ``parse_infix`` reads back to the same AST. Variables
keep their names when those are valid infix variables. Other names (KIF's ``?x``) get, per
clause, their first letter upper-cased (``x`` -> ``X``), other invalid characters replaced by
'_', a leading ``V`` if still needed (``?1`` -> ``V1``), and a ``_2``, ``_3``... suffix when the
result collides with another variable of the same clause. So a KIF-born description reads
back equal up to a consistent renaming of variables within each clause.
"""

from __future__ import annotations

import bisect
import re
import threading
from collections.abc import Iterable

import pyparsing as pp

from gdl2pl.errors import GdlSyntaxError
from gdl2pl.source import MAX_NESTING
from gdl2pl.source import check_characters
from gdl2pl.source import nesting_error
from gdl2pl.syntax import And
from gdl2pl.syntax import Clause
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Distinct
from gdl2pl.syntax import Fact
from gdl2pl.syntax import Func
from gdl2pl.syntax import Literal
from gdl2pl.syntax import Not
from gdl2pl.syntax import Or
from gdl2pl.syntax import Pos
from gdl2pl.syntax import Rule
from gdl2pl.syntax import Sentence
from gdl2pl.syntax import Term
from gdl2pl.syntax import Var
from gdl2pl.syntax import variables

_VAR_RE = re.compile(r"[A-Z_][A-Za-z0-9_]*")
_BARE_RE = re.compile(r"[a-z0-9][A-Za-z0-9_]*")
_QUOTED = r"'(?:[^'\\\r\n]|\\['\\])*'"

# White space between tokens: the usual, plus form feeds and the no-break spaces that text
# copied from web pages carries.
_WHITE = " \t\r\n\f\v\xa0\ufeff"


# -- source positions -------------------------------------------------------------------


class _Context:
    """The text being parsed, for turning pyparsing offsets into ``Pos`` values."""

    def __init__(self) -> None:
        self.file: str | None = None
        self.starts: list[int] = [0]

    def reset(self, text: str, file: str | None) -> None:
        self.file = file
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def pos(self, offset: int) -> Pos:
        line = bisect.bisect_right(self.starts, offset)
        return Pos(line, offset - self.starts[line - 1] + 1, self.file)


_ctx = _Context()
_lock = threading.Lock()


# -- intermediate values (parse-action results that are not AST nodes yet) -----------------


class _Conj:
    __slots__ = ("items", "loc")

    def __init__(self, items: tuple[Literal, ...], loc: int) -> None:
        self.items = items
        self.loc = loc

    def literal(self) -> Literal:
        if len(self.items) == 1:
            return self.items[0]
        return And(self.items, _ctx.pos(self.loc))


class _Disj:
    __slots__ = ("conjs", "loc")

    def __init__(self, conjs: tuple[_Conj, ...], loc: int) -> None:
        self.conjs = conjs
        self.loc = loc

    def body(self) -> tuple[Literal, ...]:
        """The literals of a rule body: a plain conjunction, or one ``Or``."""
        if len(self.conjs) == 1:
            return self.conjs[0].items
        return (Or(tuple(c.literal() for c in self.conjs), _ctx.pos(self.loc)),)


class _Neck:
    """Marks that a clause has ':-' (and so is a rule, possibly with an empty body)."""


class _Dot:
    """Marks a clause that ended with '.'."""


_NECK = _Neck()
_DOT = _Dot()


def _fail(s: str, loc: int, msg: str) -> pp.ParseFatalException:
    return pp.ParseFatalException(s, loc, msg)


# -- parse actions ------------------------------------------------------------------------


def _unquote(text: str) -> str:
    if text.startswith("'"):
        return re.sub(r"\\(.)", r"\1", text[1:-1])
    return text


def _act_symbol(s: str, loc: int, toks: pp.ParseResults) -> str:
    name = _unquote(toks[0])
    if not name:
        raise _fail(s, loc, "empty quoted name ''")
    return name


def _act_bad_quote(s: str, loc: int, toks: pp.ParseResults) -> None:
    raise _fail(
        s, loc, "unterminated quoted name, or a backslash not followed by ' or \\ inside it"
    )


def _act_var(s: str, loc: int, toks: pp.ParseResults) -> Var:
    return Var(toks[0], _ctx.pos(loc))


def _act_leaf(s: str, loc: int, toks: pp.ParseResults) -> Var | Const:
    text = toks[0]
    if _VAR_RE.fullmatch(text):
        return Var(text, _ctx.pos(loc))
    return Const(_act_symbol(s, loc, toks), _ctx.pos(loc))


def _act_compound(s: str, loc: int, toks: pp.ParseResults) -> Const | Func:
    if len(toks) == 1:
        return Const(toks[0], _ctx.pos(loc))
    return Func(toks[0], tuple(toks[1]), _ctx.pos(loc))


def _act_atom(s: str, loc: int, toks: pp.ParseResults) -> Literal:
    if len(toks) == 2:
        return Distinct(toks[0], toks[1], _ctx.pos(loc))
    item = toks[0]
    if isinstance(item, Var):
        if re.match(r"[A-Za-z0-9_]*\s*\(", s[loc:]):
            raise _fail(
                s,
                loc,
                f"'{item.name}' starts with an uppercase letter or '_', so it is a variable; "
                f"relation names start with a lowercase letter (or quote it: '{item.name}')",
            )
        raise _fail(s, loc, f"the variable '{item.name}' alone is not a literal")
    return item


def _act_distinct(s: str, loc: int, toks: pp.ParseResults) -> Distinct:
    return Distinct(toks[0], toks[1], _ctx.pos(loc))


def _act_not(s: str, loc: int, toks: pp.ParseResults) -> Not:
    return Not(toks[1], _ctx.pos(loc))


def _act_conj(s: str, loc: int, toks: pp.ParseResults) -> _Conj:
    return _Conj(tuple(t for t in toks if not isinstance(t, str)), loc)


def _act_disj(s: str, loc: int, toks: pp.ParseResults) -> _Disj:
    return _Disj(tuple(t for t in toks if isinstance(t, _Conj)), loc)


def _act_group(s: str, loc: int, toks: pp.ParseResults) -> Literal:
    pos = _ctx.pos(loc)
    if len(toks) == 1 and isinstance(toks[0], str):  # '(|)' or '(&)'
        return Or((), pos) if toks[0] == "|" else And((), pos)
    disj: _Disj = toks[0]
    trailing = toks[1] if len(toks) > 1 else None
    if trailing == "|":
        return Or(tuple(c.literal() for c in disj.conjs), pos)
    if trailing == "&":
        if len(disj.conjs) != 1:
            raise _fail(s, loc, "a trailing '&' marks a group that is a single conjunction")
        return And(disj.conjs[0].items, pos)
    if len(disj.conjs) > 1:
        return Or(tuple(c.literal() for c in disj.conjs), pos)
    conj = disj.conjs[0]
    return conj.items[0] if len(conj.items) == 1 else And(conj.items, pos)


def _act_clause(s: str, loc: int, toks: pp.ParseResults) -> list[object]:
    head = toks[0]
    rest = list(toks[1:])
    dot = bool(rest) and rest[-1] is _DOT
    if dot:
        rest.pop()
    clause: Clause
    if rest:  # _NECK, then an optional _Disj
        body = rest[1].body() if len(rest) > 1 else ()
        clause = Rule(head, body, _ctx.pos(loc))
    else:
        clause = Fact(head, _ctx.pos(loc))
    return [clause, dot]


_START_HINTS = {
    "(": "a clause cannot start with '(' (is this KIF? then read it as KIF)",
    "~": "a negation can only stand in a rule body (is an '&' missing before it?)",
    "-": "a negation can only stand in a rule body (is an '&' missing before it?)",
    "\u00ac": "a negation can only stand in a rule body (is an '&' missing before it?)",
    ")": "unbalanced ')'",
    ":=": "':=' is not GDL; a rule is written 'head :- body'",
    ":-": "':-' must follow a rule head on the same clause",
    "&": "'&' must join two literals of a rule body",
    "|": "'|' must join two alternatives of a rule body",
    ",": "',' does not join literals in infix GDL: a rule body is written with '&' and "
    "negation with '~' (Prolog's 'p :- q, \\+ r' is 'p :- q & ~r')",
}

#: What a Prolog habit that the grammar stops at is written as in infix GDL.
_PROLOG_HINT = "infix GDL writes '&' for Prolog's ',' and '~' for 'not' and '\\+'"


def _act_bad_start(s: str, loc: int, toks: pp.ParseResults) -> None:
    found = toks[0]
    if found == "'":
        _act_bad_quote(s, loc, toks)
    if _VAR_RE.fullmatch(found):
        raise _fail(
            s,
            loc,
            f"a clause cannot start with the variable '{found}': heads are relations or "
            "propositions, which start with a lowercase letter (or are quoted)",
        )
    for prefix, hint in sorted(_START_HINTS.items(), key=lambda kv: -len(kv[0])):
        if found.startswith(prefix):
            raise _fail(s, loc, hint)
    raise _fail(s, loc, f"expected a fact or a rule, found {found!r}")


# -- the grammar --------------------------------------------------------------------------


def _grammar() -> tuple[pp.ParserElement, pp.ParserElement]:
    # Elements take the default white space when created; restore it for other users after.
    saved = "".join(pp.ParserElement.DEFAULT_WHITE_CHARS)
    pp.ParserElement.set_default_whitespace_chars(_WHITE)
    try:
        return _build_grammar()
    finally:
        pp.ParserElement.set_default_whitespace_chars(saved)


def _build_grammar() -> tuple[pp.ParserElement, pp.ParserElement]:
    lpar, rpar, comma = pp.Suppress("("), pp.Suppress(")"), pp.Suppress(",")
    and_op = pp.Regex("[&\u2227]").set_parse_action(lambda: "&").set_name("'&'")
    or_op = pp.Regex("[|\u2228]").set_parse_action(lambda: "|").set_name("'|'")
    not_op = pp.Regex("[~\u00ac-]").set_name("'~'")
    neq = pp.Suppress(pp.Regex("!=|\u2260")).set_name("'!='")
    neck = pp.Regex(r":-|<=").set_parse_action(lambda: _NECK).set_name("':-'")
    dot = pp.Literal(".").set_parse_action(lambda: _DOT)

    var = pp.Regex(_VAR_RE.pattern).set_parse_action(_act_var).set_name("variable")
    symbol = (
        pp.Regex(_BARE_RE.pattern + "|" + _QUOTED).set_parse_action(_act_symbol).set_name("name")
    )
    bad_quote = pp.Regex(r"'[^\r\n]*").set_parse_action(_act_bad_quote)

    # A leaf (a variable, or a name with no '(' after it) is one regular expression: most
    # terms are leaves, and each failed alternative costs pyparsing an exception.
    leaf = pp.Regex(
        rf"{_VAR_RE.pattern}|(?>{_BARE_RE.pattern}|{_QUOTED})(?![{_WHITE}]*\()"
    ).set_parse_action(_act_leaf)
    term = pp.Forward()
    args = lpar - pp.Group(pp.Opt(term + pp.ZeroOrMore(comma - term)) + rpar)
    compound = (symbol + pp.Opt(args)).set_parse_action(_act_compound).set_name("sentence")
    term <<= (leaf | compound | bad_quote).set_name("a term")

    literal = pp.Forward()
    negation = (not_op - literal).set_parse_action(_act_not)
    distinct = (
        pp.Suppress(pp.Regex(rf"distinct(?=[{_WHITE}]*\()")) - (lpar + term + comma + term + rpar)
    ).set_parse_action(_act_distinct)
    # In a body, an unquoted 'distinct(' is the built-in, not a relation.
    body_symbol = pp.Regex(rf"(?!distinct[{_WHITE}]*\()(?:{_BARE_RE.pattern}|{_QUOTED})")
    body_compound = (body_symbol.set_parse_action(_act_symbol) + pp.Opt(args)).set_parse_action(
        _act_compound
    )
    atom = ((body_compound | var) + pp.Opt(neq - term)).set_parse_action(_act_atom)

    conj = (literal + pp.ZeroOrMore(and_op + ~rpar - literal)).set_parse_action(_act_conj)
    disj = (conj + pp.ZeroOrMore(or_op + ~rpar - conj)).set_parse_action(_act_disj)

    closing = pp.FollowedBy(rpar)
    group_inner = (or_op + closing) | (and_op + closing) | disj + pp.Opt((or_op | and_op) + closing)
    group_inner.set_name("a rule body")
    group = (lpar - (group_inner + rpar)).set_parse_action(_act_group)
    literal <<= (atom | negation | group | distinct | bad_quote).set_name("a literal")

    body = (pp.FollowedBy(".") | disj).set_name("a rule body")
    clause = pp.Located(
        (compound + pp.Opt(neck - body) + pp.Opt(dot)).set_parse_action(_act_clause)
    )
    bad_start = pp.Regex(r":=|:-|[A-Za-z0-9_]+|\S").set_parse_action(_act_bad_start)
    description = pp.ZeroOrMore(clause | bad_start) + pp.StringEnd()
    only_term = term + pp.StringEnd()

    for top in (description, only_term):
        top.parse_with_tabs()
    return description, only_term


_DESCRIPTION, _TERM = _grammar()


def _found(text: str, loc: int) -> str:
    if loc >= len(text):
        return "end of input"
    m = re.match(r"[A-Za-z0-9_]+|'[^'\n]*'?|:-|!=|<=|\S", text[loc:])
    return repr(m.group(0)) if m else repr(text[loc])


def _syntax_error(e: pp.ParseBaseException, text: str, file: str | None) -> GdlSyntaxError:
    loc = min(max(e.loc, 0), len(text))
    found = _found(text, loc)
    if not text[loc:].strip(_WHITE):  # at the end: point just after the last token
        loc = len(text[:loc].rstrip(_WHITE))
        found = "end of input"
    message = e.msg
    if message.startswith("Expected"):
        message = "expected " + message[len("Expected ") :] + ", found " + found
    if found == repr("\\"):  # Prolog's negation '\+'
        message += f" ({_PROLOG_HINT})"
    return GdlSyntaxError(message, _ctx.pos(loc), text)


_COMMENT_OR_QUOTED = re.compile(r"%[^\n]*|" + _QUOTED)


def _blank_comments(text: str) -> str:
    """``text`` with each '%' comment replaced by spaces: offsets stay, and the grammar need
    not try a comment before every token (which made parsing twice as slow)."""
    if "%" not in text:
        return text

    def blank(m: re.Match[str]) -> str:
        s = m.group(0)
        return " " * len(s) if s.startswith("%") else s

    return _COMMENT_OR_QUOTED.sub(blank, text)


_PARENS = re.compile(_QUOTED + r"|[()]")


def _check_nesting(blanked: str, text: str, file: str | None) -> None:
    depth = 0
    for m in _PARENS.finditer(blanked):
        if m.group() == "(":
            depth += 1
            if depth > MAX_NESTING:
                raise nesting_error(text, m.start(), file)
        elif m.group() == ")":
            depth -= 1


def _parse(element: pp.ParserElement, text: str, file: str | None) -> pp.ParseResults:
    check_characters(text, file)
    _ctx.reset(text, file)
    blanked = _blank_comments(text)
    _check_nesting(blanked, text, file)
    try:
        return element.parse_string(blanked, parse_all=True)
    except pp.ParseBaseException as e:
        raise _syntax_error(e, text, file) from None
    except RecursionError:
        raise GdlSyntaxError("expression nested too deeply", _ctx.pos(0), text) from None


def _newline_before(text: str, offset: int) -> bool:
    """Whether the white space just before ``offset`` contains a line break."""
    while offset > 0 and text[offset - 1] in _WHITE:
        offset -= 1
        if text[offset] == "\n":
            return True
    return False


_PROLOG_NOT = re.compile(rf"(?<![A-Za-z0-9_'])not[{_WHITE}]*$")


def _same_line_error(text: str, start: int) -> GdlSyntaxError:
    """Why a clause cannot start at ``start``, just after an open rule body on its line:
    Prolog's ``not q`` (read as the proposition ``not``, then a clause ``q``) is named,
    at the ``not``."""
    m = _PROLOG_NOT.search(text, 0, start)
    if m:
        message = f"'not' is not negation in infix GDL: write '~' ({_PROLOG_HINT})"
        return GdlSyntaxError(message, _ctx.pos(m.start()), text)
    return GdlSyntaxError(
        "another clause follows a rule body on the same line: is an '&' missing? "
        "(or end the rule with '.')",
        _ctx.pos(start),
        text,
    )


def parse_infix(text: str, file: str | None = None) -> Description:
    """Parse a whole infix game description. Raises ``GdlSyntaxError`` with its position."""
    with _lock:
        results = _parse(_DESCRIPTION, text, file)
        clauses: list[Clause] = []
        open_rule = False  # the previous clause is a rule not closed by '.'
        for i in range(0, len(results), 3):
            start, (clause, dot) = results[i], results[i + 1]
            if open_rule and not _newline_before(text, start):
                raise _same_line_error(text, start)
            clauses.append(clause)
            open_rule = isinstance(clause, Rule) and not dot
        return Description(tuple(clauses), text, "infix")


def parse_infix_term(text: str) -> Term:
    """Parse one infix term, e.g. ``mark(1,2)``, ``noop`` or ``X``."""
    with _lock:
        return _parse(_TERM, text, None)[0]


# -- printing -----------------------------------------------------------------------------


def symbol_text(name: str) -> str:
    """A constant, function or relation name as infix text: bare if possible, else quoted."""
    if _BARE_RE.fullmatch(name):
        return name
    if not name or "\n" in name or "\r" in name:
        raise ValueError(f"cannot write the name {name!r} in infix GDL")
    return "'" + name.replace("\\", "\\\\").replace("'", "\\'") + "'"


def variable_names(names: Iterable[str]) -> dict[str, str]:
    """An injective map from variable names to valid infix variable names (see module doc)."""
    ordered = list(dict.fromkeys(names))
    used = {n for n in ordered if _VAR_RE.fullmatch(n)}
    mapping: dict[str, str] = {}
    for n in ordered:
        if _VAR_RE.fullmatch(n):
            mapping[n] = n
            continue
        base = re.sub(r"[^A-Za-z0-9_]", "_", n[:1].upper() + n[1:])
        if not _VAR_RE.fullmatch(base):
            base = "V" + base
        candidate, i = base, 2
        while candidate in used:
            candidate, i = f"{base}_{i}", i + 1
        used.add(candidate)
        mapping[n] = candidate
    return mapping


class _Printer:
    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def term(self, t: Term) -> str:
        if isinstance(t, Var):
            return self.names[t.name]
        if isinstance(t, Const):
            return symbol_text(t.name)
        if isinstance(t, Func):
            return symbol_text(t.name) + "(" + ",".join(map(self.term, t.args)) + ")"
        raise TypeError(f"not a GDL term: {t!r}")

    def sentence(self, s: Sentence) -> str:
        if isinstance(s, Func) and s.name == "distinct":
            return "'distinct'(" + ",".join(map(self.term, s.args)) + ")"
        return self.term(s)

    def group(self, items: tuple[Literal, ...], op: str) -> str:
        if not items:
            return f"({op})"
        if len(items) == 1:
            return f"({self.literal(items[0])} {op})"
        return "(" + f" {op} ".join(map(self.literal, items)) + ")"

    def literal(self, lit: Literal | Term) -> str:
        if isinstance(lit, (Const, Func)):
            return self.sentence(lit)
        if isinstance(lit, Var):
            return self.term(lit)
        if isinstance(lit, Not):
            return "~" + self.literal(lit.body)
        if isinstance(lit, Distinct):
            return f"distinct({self.term(lit.left)},{self.term(lit.right)})"
        if isinstance(lit, Or):
            return self.group(lit.disjuncts, "|")
        if isinstance(lit, And):
            return self.group(lit.conjuncts, "&")
        raise TypeError(f"not a GDL literal: {lit!r}")


def clause_variable_names(c: Clause) -> dict[str, str]:
    """Each variable of ``c`` by the infix name its printing gives it (see module doc)."""
    found = [v.name for v in variables(c.head)]
    if isinstance(c, Rule):
        for b in c.body:
            found.extend(v.name for v in variables(b))
    return variable_names(found)


def infix_term(t: Term | Literal, clause: Clause | None = None) -> str:
    """Infix text of one term or literal, e.g. ``X``, ``cell(1,1,b)`` or ``~true(p)``.
    Given the ``clause`` it comes from, its variables are named as that clause's printing
    names them (so a message and the rule it quotes agree)."""
    names = variable_names(v.name for v in variables(t))
    if clause is not None:
        names |= clause_variable_names(clause)
    return _Printer(names).literal(t)


def infix_clause(c: Clause, width: int = 80) -> str:
    """Infix text of one clause; a rule longer than ``width`` gets one literal per line."""
    p = _Printer(clause_variable_names(c))
    head = p.sentence(c.head)
    if isinstance(c, Fact):
        return head
    if not c.body:
        return head + " :- ."
    if len(c.body) == 1 and isinstance(c.body[0], Or) and len(c.body[0].disjuncts) > 1:
        body, op = [p.literal(b) for b in c.body[0].disjuncts], " |"  # a top-level 'a | b'
    else:
        body, op = [p.literal(b) for b in c.body], " &"
    line = head + " :- " + f"{op} ".join(body)
    if len(line) <= width:
        return line
    return head + " :-\n    " + f"{op}\n    ".join(body)


def print_infix(d: Description) -> str:
    """The whole description as infix text, one clause per line (rules may wrap), with a
    blank line between runs of clauses about different relations."""
    out: list[str] = []
    previous: str | None = None
    for c in d.clauses:
        name = c.head.name
        if previous is not None and name != previous:
            out.append("")
        out.append(infix_clause(c))
        previous = name
    return "".join(line + "\n" for line in out)
