"""GDL-II matches: the protocol's longer play/stop messages, a manager that plays chance
and tells each player only its own move and percepts, and a player that keeps its history
and moves by determinized sampling; hostile GDL-II messages get clear refusals."""

from __future__ import annotations

import random
import re
import time
from pathlib import Path

import pytest
from conftest import EXAMPLES

from gdl2pl.bridge import StateMachine
from gdl2pl.ggp.hidden import Knowledge
from gdl2pl.ggp.hidden import choose_move
from gdl2pl.ggp.manager import run_match
from gdl2pl.ggp.manager import summary
from gdl2pl.ggp.player import GamePlayer
from gdl2pl.ggp.player import Reply
from gdl2pl.ggp.protocol import Play
from gdl2pl.ggp.protocol import PlayII
from gdl2pl.ggp.protocol import ProtocolError
from gdl2pl.ggp.protocol import Stop
from gdl2pl.ggp.protocol import StopII
from gdl2pl.ggp.protocol import format_message
from gdl2pl.ggp.protocol import parse_message
from gdl2pl.ggp.server import serving
from gdl2pl.ggp.strategy import Budget
from gdl2pl.ggp.strategy import make_strategy
from gdl2pl.kif import parse_kif_term
from gdl2pl.load import read_game

MONTY = EXAMPLES / "montyHall.kif"
KUHN = EXAMPLES / "kuhnPoker.kif"


pytestmark = pytest.mark.usefixtures("prolog_main_thread")


# -- the messages -----------------------------------------------------------------------------


def test_gdl_ii_messages_read_and_write() -> None:
    first = parse_message("( PLAY m1 0 NIL NIL )")
    assert first == PlayII("m1", 0, None, None)
    later = parse_message("(play m1 3 (pick 1) ((opened 3)))")
    assert isinstance(later, PlayII) and later.turn == 3
    assert later.last_move == parse_kif_term("(pick 1)")
    assert later.percepts == (parse_kif_term("(opened 3)"),)
    assert format_message(later) == "(play m1 3 (pick 1) ((opened 3)))"
    assert parse_message(format_message(later)) == later
    stop = parse_message("(stop m1 4 stay ())")
    assert stop == StopII("m1", 4, parse_kif_term("stay"), ())
    # plain GDL keeps its messages
    assert isinstance(parse_message("(play m1 nil)"), Play)
    assert isinstance(parse_message("(stop m1 ((mark 1 1) noop))"), Stop)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("(play m 1 a)", "takes 2 argument(s) (or 4 in GDL-II), found 3"),
        ("(play m x nil nil)", "the turn must be a whole number"),
        ("(play m -1 nil nil)", "the turn must be a whole number"),
        ("(play m 12345678901 nil nil)", "the turn must be a whole number"),
        ("(play m 1 ?x nil)", "a variable (?x) is not a ground term"),
        ("(play m 1 a b)", "percepts must be nil or a list of terms"),
        ("(play m 1 a (?p))", "a percept: a variable"),
        ("(play m 1 a ((?f 1)))", "is not a function name"),
        ("(stop m 1 a (() b))", "a compound term must start with a symbol"),
        ("(play m 1 a " + "(" * 300 + ")" * 300 + ")", "nested deeper than 200"),
        ("(play (m) 1 a nil)", "the match id must be a symbol"),
    ],
)
def test_malformed_gdl_ii_messages_say_why(text: str, why: str) -> None:
    with pytest.raises(ProtocolError) as e:
        parse_message(text)
    assert why in str(e.value)


# -- the player, message by message -----------------------------------------------------------

START = "(start m1 contestant ({rules}) 10 1)"


def rules(path) -> str:  # type: ignore[no-untyped-def]
    from gdl2pl.ggp.protocol import one_line_rules

    return one_line_rules(read_game(path))


@pytest.fixture()
def monty_player():  # type: ignore[no-untyped-def]
    player = GamePlayer(lambda: make_strategy("mcts", 1), name="p", margin=0.2)
    try:
        reply = player.handle(START.format(rules=rules(MONTY)))
        assert reply == Reply(200, "ready")
        yield player
    finally:
        player.close()


def test_the_player_follows_its_history_and_switches(monty_player: GamePlayer) -> None:
    assert monty_player.handle("(play m1 0 nil nil)").body == "wait"
    assert monty_player.handle("(play m1 1 wait nil)").body.startswith("(pick ")
    assert monty_player.handle("(play m1 2 (pick 2) ())").body == "wait"
    # the host opened door 3: the car is behind door 1 two times in three
    assert monty_player.handle("(play m1 3 wait ((opened 3)))").body == "switch"
    assert monty_player.handle("(stop m1 4 switch ((car 1)))").body == "done"


@pytest.mark.parametrize(
    ("messages", "status", "why"),
    [
        (["(play m1 1 wait nil)"], 400, "turn 1 out of order: expected turn 0"),
        (["(play m1 0 wait nil)"], 400, "turn 0 has no last move"),
        (["(play m1 0 nil nil)", "(play m1 0 nil nil)"], 400, "out of order: expected turn 1"),
        (["(play m1 0 nil nil)", "(play m1 1 nil nil)"], 400, "must say the move made"),
        (["(play other 0 nil nil)"], 404, "unknown match id"),
    ],
)
def test_hostile_gdl_ii_plays_are_refused(
    monty_player: GamePlayer, messages: list[str], status: int, why: str
) -> None:
    for text in messages[:-1]:
        assert monty_player.handle(text).status == 200
    reply = monty_player.handle(messages[-1])
    assert reply.status == status, reply
    assert why in reply.body


def test_a_refused_first_turn_is_not_kept(monty_player: GamePlayer) -> None:
    """A play out of order is refused and forgotten: the turns that follow are taken."""
    refused = monty_player.handle("(play m1 1 (pick 9) nil)")
    assert refused.status == 400 and "out of order" in refused.body
    assert monty_player.handle("(play m1 0 nil nil)").body == "wait"
    assert monty_player.handle("(play m1 1 wait nil)").body.startswith("(pick ")


def test_withdrawing_the_turn_just_learned_restores_the_knowledge() -> None:
    """Law, at every turn of a match: learn turn t, withdraw it, and the knowledge is as
    before (so that turn t can be learned again); withdrawing any other turn changes
    nothing."""
    history = [(None, ()), ("wait", ()), ("(pick 2)", ()), ("wait", ("(opened 3)",))]
    with StateMachine.from_file(MONTY) as sm:
        knowledge = Knowledge()
        for turn, (move, seen) in enumerate(history):
            before = (knowledge.started, list(knowledge.history))
            args = (
                sm,
                turn,
                None if move is None else parse_kif_term(move),
                tuple(parse_kif_term(p) for p in seen) if turn else None,
            )
            knowledge.learn(*args)
            learned = (knowledge.started, list(knowledge.history))
            for other in {turn - 1, turn + 1, turn + 5} - {-1}:
                knowledge.withdraw(other)
                assert (knowledge.started, knowledge.history) == learned
            knowledge.withdraw(turn)
            assert (knowledge.started, knowledge.history) == before
            knowledge.learn(*args)


PICKS = {"(pick 1)", "(pick 2)", "(pick 3)"}


@pytest.mark.parametrize(
    ("messages", "moves"),
    [
        # the host never opens the door the contestant picked: no state agrees
        (
            [
                "(play m1 0 nil nil)",
                "(play m1 1 wait nil)",
                "(play m1 2 (pick 2) ())",
                "(play m1 3 wait ((opened 2)))",
            ],
            {"stay", "switch"},
        ),
        # a percept that is no term of the game: nothing agrees with it either
        (["(play m1 0 nil nil)", "(play m1 1 wait ((halt) (shell rm)))"], PICKS),
        # a move the player could not have made (a manager plays a legal one instead)
        (["(play m1 0 nil nil)", "(play m1 1 (pick 9) nil)"], PICKS),
    ],
)
def test_a_history_that_cannot_have_happened_gets_a_guessed_move_and_a_log_line(
    monty_player: GamePlayer,
    messages: list[str],
    moves: set[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A manager reads any reply to play as a move: the player guesses one legal after
    its last move from what it knew, and says why in its log."""
    for text in messages[:-1]:
        assert monty_player.handle(text).status == 200
    with caplog.at_level("WARNING", logger="gdl2pl.player"):
        reply = monty_player.handle(messages[-1])
    assert reply.status == 200 and not reply.body.startswith("error"), reply
    assert reply.body in moves, reply
    assert "cannot have happened" in caplog.text and "playing a guess" in caplog.text


def test_choose_move_weighs_each_state_by_its_probability() -> None:
    with StateMachine.from_file(MONTY) as sm:
        role = sm.term("contestant")
        knowledge = Knowledge()
        knowledge.learn(sm, 0, None, None)
        for turn, (move, seen) in enumerate(
            [("wait", ()), ("(pick 1)", ()), ("wait", ("(opened 2)",))], 1
        ):
            knowledge.learn(sm, turn, parse_kif_term(move), tuple(parse_kif_term(p) for p in seen))
        strategy = make_strategy("mcts", 3)
        strategy.metagame(sm, role, Budget.seconds(1))
        offered: list[object] = []
        move = choose_move(
            sm, role, knowledge, strategy, Budget.seconds(1.0), offered.append, random.Random(1)
        )
        assert str(move) == "switch"
        assert offered


# -- whole matches ------------------------------------------------------------------------------


class _Spy(GamePlayer):
    """A player that records the messages it gets."""

    def __init__(self, kind: str = "random", seed: int = 5) -> None:
        super().__init__(lambda: make_strategy(kind, seed), name="spy", margin=0.2)
        self.seen: list[str] = []

    def handle(self, text: str, received: float | None = None) -> Reply:
        self.seen.append(text)
        return super().handle(text, received)


def match(path, spies: list[_Spy], seed: int, scramble: bool = False, play_clock: int = 1):  # type: ignore[no-untyped-def]
    with serving(spies) as servers:
        return run_match(
            read_game(path),
            [s.url for s in servers],
            start_clock=5,
            play_clock=play_clock,
            seed=seed,
            scramble=scramble,
        )


def test_a_monty_hall_match_the_manager_plays_chance() -> None:
    spy = _Spy("mcts")
    rec = match(MONTY, [spy], seed=11)
    assert rec["isCompleted"] and rec["gdlII"]
    assert rec["roles"] == ["contestant", "random"]
    assert rec["playerURLs"][1] is None and rec["playerNamesFromHost"][1] == "chance (the manager)"
    assert len(rec["moves"]) == 4 and len(rec["percepts"]) == 4
    car = rec["moves"][0][1]  # (hide N), chosen by the manager
    assert car.startswith("(hide ")
    plays = [m for m in spy.seen if m.startswith(("(play", "(stop"))]
    assert plays[0].endswith(" 0 nil nil)")
    assert [int(m.split()[2]) for m in plays] == [0, 1, 2, 3, 4]
    # the player sees the opened door, and the car only at the end
    door = car.removeprefix("(hide ").rstrip(")")
    assert all(f"(car {door})" not in m for m in plays[:-1])
    assert f"(car {door})" in plays[-1] and plays[-1].startswith("(stop")
    assert "(opened " in plays[3]
    # nothing of the random role's moves reaches the player but what it perceives
    assert all("(hide" not in m and "(open " not in m for m in plays)
    with StateMachine.from_file(MONTY) as sm:
        state = sm.initial_state
        for joint, percepts in zip(rec["moves"], rec["percepts"], strict=True):
            assert [str(p) for p in sm.percepts(state, joint, "contestant")] == percepts[0]
            state = sm.next_state(state, joint)
        assert sm.is_terminal(state) and rec["goalValues"] == sm.goals(state)
    assert "chance (the manager)" in summary(rec)


def test_a_kuhn_poker_match_tells_each_player_only_its_own_card() -> None:
    spies = [_Spy(), _Spy()]
    rec = match(KUHN, spies, seed=4)
    assert rec["isCompleted"] and len(rec["playerURLs"]) == 3
    deal = re.fullmatch(r"\(deal (\w+) (\w+)\)", rec["moves"][0][2])
    assert deal is not None
    first, second = deal.groups()
    for spy, mine, theirs in ((spies[0], first, second), (spies[1], second, first)):
        plays = [m for m in spy.seen if m.startswith("(play")]
        assert f"(card {mine})" in plays[1]
        assert all(f"(card {theirs})" not in m for m in plays)
        assert all("shows" not in m for m in plays)  # the showdown comes with stop
    assert sum(rec["goalValues"][:2]) == 100


def test_the_number_of_players_leaves_out_random() -> None:
    with pytest.raises(ValueError, match="1 roles besides random"):
        run_match(read_game(MONTY), ["127.0.0.1:1", "127.0.0.1:2"])


def test_a_scrambled_gdl_ii_match_renames_percepts_too() -> None:
    spy = _Spy("legal")
    rec = match(MONTY, [spy], seed=5, scramble=True)
    assert rec["isCompleted"] and all(not e for errors in rec["errors"] for e in errors)
    sent = " ".join(m for m in spy.seen if m.startswith(("(play", "(stop")))
    assert "opened" not in sent and "car" not in sent and "wait" not in sent
    assert "random" in spy.seen[1]  # the keyword stays: the player knows chance
    # the record speaks the game's own names
    assert [step[0] for step in rec["percepts"]][2][0].startswith("(opened ")


# -- whole matches against a GameController-like manager: a legal move within the clock ---

GDL2_GAMES = Path(__file__).parent / "games" / "gdl2"


class _Clocked(_Spy):
    """A player that records how long each reply to play took, and the reply."""

    def __init__(self, kind: str, seed: int = 5) -> None:
        super().__init__(kind, seed)
        self.plays: list[tuple[str, str, float]] = []

    def handle(self, text: str, received: float | None = None) -> Reply:
        start = time.monotonic()
        reply = super().handle(text, start)
        if text.startswith("(play"):
            self.plays.append((text, reply.body, time.monotonic() - start))
        return reply


def _all_replies_legal_and_in_time(rec: dict, players: list[_Clocked], clock: float) -> None:  # type: ignore[type-arg]
    assert rec["isCompleted"], rec.get("abortReason")
    seats = [i for i, url in enumerate(rec["playerURLs"]) if url is not None]
    for step, errors in enumerate(rec["errors"][1:], 1):  # [0]: the start, per player
        assert [errors[i] for i in seats] == [""] * len(seats), f"step {step}: {errors}"
    for player in players:
        assert len(player.plays) == len(rec["moves"])
        for text, body, took in player.plays:
            assert body != "nil" and not body.startswith("error"), (text, body)
            assert took < clock, (text, body, took)


@pytest.mark.parametrize(("seed", "kinds"), [(3, ("mcts", "random")), (4, ("random", "mcts"))])
def test_blind_marks_matches_get_a_legal_move_every_turn_within_the_clock(
    seed: int, kinds: tuple[str, str]
) -> None:
    """Blind marks on 5x5: the exact belief soon needs seconds a turn (thousands of
    states); both players keep particles and answer within a 3 s clock all the same."""
    players = [_Clocked(kinds[0], 1), _Clocked(kinds[1], 2)]
    path = GDL2_GAMES / "blind_marks_5x5.kif"
    rec = match(path, players, seed=seed, play_clock=3)  # type: ignore[arg-type]
    _all_replies_legal_and_in_time(rec, players, 3.0)
    assert len(rec["moves"]) >= 6


def test_a_game_whose_sees_rules_name_no_role_is_accepted_and_played(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Coin calls writes sees rules as the Dresden GameController's games do, the role a
    variable nothing binds (every role sees whose turn it was and what was called): the
    players accept it at start, say so in their log, and play a whole match, every reply
    a legal move in time; each player hears every turn and every call, and the coin only
    on its own turns."""
    players = [_Clocked("random", 1), _Clocked("mcts", 2)]
    with caplog.at_level("WARNING", logger="gdl2pl.player"):
        rec = match(GDL2_GAMES / "coin_calls.kif", players, seed=3, play_clock=2)  # type: ignore[arg-type]
    _all_replies_legal_and_in_time(rec, players, 2.0)
    assert len(rec["moves"]) == 4
    assert "read as the managers read it" in caplog.text
    assert "as if (role ?p) were in the body" in caplog.text
    for step, (joint, seen) in enumerate(zip(rec["moves"], rec["percepts"], strict=True)):
        caller = step % 2  # red calls first
        call = joint[caller].removeprefix("(call ").rstrip(")")
        for seat in (0, 1):
            assert f"(called {call})" in seen[seat] and any("(turn " in p for p in seen[seat])
            assert any("(coin " in p for p in seen[seat]) == (seat == caller)


def test_dice_oracle_matches_get_a_legal_move_although_the_belief_held_an_end() -> None:
    for seed in (1, 2):
        player = _Clocked("mcts")
        rec = match(GDL2_GAMES / "dice_oracle.kif", [player], seed=seed)  # type: ignore[arg-type]
        _all_replies_legal_and_in_time(rec, [player], 1.0)


def test_a_start_with_the_random_role_is_refused_at_start() -> None:
    player = GamePlayer(lambda: make_strategy("random", 1), name="p", margin=0.2)
    try:
        reply = player.handle(f"(start m2 random ({rules(MONTY)}) 10 1)")
        assert reply.status == 400
        assert "random is the role of chance" in reply.body
        assert not player.busy  # the match was not kept: plays of it are unknown
        assert player.handle("(play m2 0 nil nil)").status == 404
    finally:
        player.close()
