"""The player's log lines about its searches: one per move, one per match.

A move's line says what the strategy's searches did for it (``SearchReport``s; a GDL-II
move searches several sampled states): iterations, the depth reached, the chosen move's
visits and value (goal points, 0-100, averaged over the searches that chose it), the time
searched against the time the searches were given, and when the reply left against the
play clock. A match's line, at ``stop`` or ``abort``, sums them up.
"""

from __future__ import annotations

from dataclasses import dataclass

from gdl2pl.kif import kif_term

from .protocol import shown
from .strategy import SEARCH_MARGIN
from .strategy import SearchReport


def _seconds(s: float) -> str:
    return f"{s:.2f} s"


def move_line(reports: list[SearchReport], sent: str, reply: float, clock: float) -> str:
    """What was searched for one move, ``sent`` the reply (the move in KIF, or ``nil``)
    that left ``reply`` seconds after the ``play`` arrived, on a clock of ``clock`` s."""
    replied = f"replied {_seconds(reply)} into the {clock:g} s clock"
    shown_move = shown(sent, 200)  # the rules, hence the move's names, came from the network
    if not reports:
        return f"{shown_move}, nothing searched; {replied}"
    iterations = sum(r.iterations for r in reports)
    reused = sum(r.reused for r in reports)
    kept = f" (on {reused:,} visits kept from before)" if reused else ""
    depth = max(r.depth for r in reports)
    searched = sum(r.seconds for r in reports)
    given = sum(r.budget for r in reports)
    chose = [r for r in reports if kif_term(r.move) == sent]
    visits = sum(r.visits for r in chose)
    value = sum(r.value * r.visits for r in chose) / visits if visits else 0.0
    proofs = [r.proven for r in chose if r.proven is not None]
    proved = bool(chose) and len(proofs) == len(chose)  # every search of the move proved it
    worth = f"proved worth {min(proofs):.0f}" if proved else f"value {value:.1f}"
    over = f" over {len(reports)} states" if len(reports) > 1 else ""
    return (
        f"{shown_move}{over}: {iterations:,} iterations{kept}, "
        f"depth {depth}, the move {visits:,} visits, {worth}; "
        f"searched {_seconds(searched)} of its {_seconds(given)}; {replied}"
    )


@dataclass
class MatchSearches:
    """What a match's searches did, summed move by move (``add``), for its last line."""

    moves: int = 0  # plays answered
    searched: int = 0  # of them chosen by a search
    iterations: int = 0
    deepest: int = 0
    over: int = 0  # searches that ran past their budget and ``SEARCH_MARGIN``
    most_over: float = 0.0  # seconds past its budget, the most any search ran
    longest: SearchReport | None = None
    slowest_reply: float = 0.0  # seconds from a play's arrival to its reply
    late: int = 0  # replies sent before the search ended (the move offered so far)

    def add(self, reports: list[SearchReport], reply: float, late: bool = False) -> None:
        """One move's searches, replied ``reply`` seconds after its play arrived."""
        self.moves += 1
        self.searched += bool(reports)
        self.late += late
        self.slowest_reply = max(self.slowest_reply, reply)
        for r in reports:
            self.iterations += r.iterations
            self.deepest = max(self.deepest, r.depth)
            self.over += not r.kept
            self.most_over = max(self.most_over, r.over)
            if self.longest is None or r.seconds > self.longest.seconds:
                self.longest = r

    def line(self, clock: float) -> str:
        """The match's line (``clock``: its play clock, seconds)."""
        text = f"searched {self.searched} of {self.moves} moves"
        if self.searched:
            text += (
                f": {self.iterations:,} iterations "
                f"({self.iterations // self.searched:,} a move), deepest {self.deepest}, "
            )
            if self.longest is not None:
                text += (
                    f"longest {_seconds(self.longest.seconds)} "
                    f"of its {_seconds(self.longest.budget)}, "
                )
            late = f"{self.over} searches past their" if self.over else "none past its"
            text += (
                f"{late} budget by more than {_seconds(SEARCH_MARGIN)} "
                f"(at most {_seconds(self.most_over)})"
            )
        if self.moves:
            text += f"; slowest reply {_seconds(self.slowest_reply)} into the {clock:g} s clock"
        if self.late:
            text += f"; {self.late} sent before the search ended"
        return text
