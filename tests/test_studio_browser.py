"""The studio in a real browser: Debian's chromium, headless, driven by Selenium through
the system's chromedriver (nothing is downloaded). A student's path through the page:
type a game with an error and see it marked at its line, fix it, see the Prolog linked to
the rule, play tic-tac-toe to the end by clicking the board, go back and forth in the
history, ask why a line holds and open the tree. Each stage leaves a screenshot in
``build/studio-screenshots/`` (for a CI job to keep as artifacts)."""

from __future__ import annotations

import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from prolog_env import require_module
from prolog_env import unavailable

SHOTS = REPO / "build" / "studio-screenshots"
CHROMIUM = ("chromium", "/usr/bin/chromium")
CHROMEDRIVER = ("chromedriver", "/usr/bin/chromedriver")
#: Headless and quiet: no GPU, no sandbox (CI runs as root), no network of its own.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=1400,900",
)
WAIT = 20  # seconds for any one thing to appear


def _program(names: tuple[str, ...]) -> str:
    for name in names:
        found = shutil.which(name) or (name if Path(name).is_file() else None)
        if found:
            return found
    unavailable(f"{names[0]} is not installed (scripts/install-extras installs it)")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The studio on a free local port, in a thread; its URL."""
    uvicorn = require_module("uvicorn")
    require_module("starlette")
    from gdl2pl.studio.app import create_app

    sock = socket.create_server(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(create_app(), log_level="warning"))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT
    while not srv.started:
        assert time.monotonic() < deadline, "the studio server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/"
    srv.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    require_module("selenium")
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = _program(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="studio-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    driver = webdriver.Chrome(options=options, service=Service(_program(CHROMEDRIVER)))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def shot(driver: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SHOTS / f"{name}.png"))


def wait(driver: Any, what: Any, message: str) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT).until(what, message)


def css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, selector))


def text_of(driver: Any, element_id: str) -> str:
    return str(driver.execute_script(f"return document.getElementById('{element_id}').textContent"))


def test_a_student_edits_reads_plays_and_asks_why(server: str, browser: Any) -> None:
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    d = browser
    d.get(server)
    wait(d, lambda d: text_of(d, "check-status").startswith("no problems"), "the example loads")
    shot(d, "01-loaded")

    # type a rule with an unsafe variable at the end: the checker marks that line
    editor = css(d, "#editor")[0]
    editor.click()
    editor.send_keys(Keys.CONTROL, Keys.END)
    editor.send_keys("(<= (next (cell ?m ?n ?q)) (true (control ?r)))")
    line = int(
        d.execute_script("return document.getElementById('editor').value.split('\\n').length;")
    )
    wait(d, lambda d: "error" in text_of(d, "check-status"), "the error is found")
    assert css(d, f'#gutter div[data-line="{line}"].error'), "the gutter marks the line"
    assert css(d, f'#backdrop div[data-line="{line}"].error'), "the line is coloured"
    findings = css(d, f'#findings li[data-line="{line}"]')
    assert findings and "unsafe" in findings[0].text
    findings[0].click()  # takes the editor to the line
    caret = d.execute_script(
        "const e = document.getElementById('editor');"
        "return e.value.slice(0, e.selectionStart).split('\\n').length"
    )
    assert caret == line
    shot(d, "02-error-marked")

    # fix it: the marks go away
    editor.send_keys(Keys.END)
    editor.send_keys(Keys.SHIFT, Keys.HOME)
    editor.send_keys(Keys.BACKSPACE)
    wait(d, lambda d: text_of(d, "check-status").startswith("no problems"), "the fix is seen")
    assert not css(d, "#gutter div.error")

    # the Prolog, linked to the rules: the legal rule (lines 23-25) and its clause
    css(d, '.tabs button[data-tab="prolog"]')[0].click()
    wait(d, lambda d: css(d, '#prolog .clause[data-gdl="23"]'), "the Prolog is shown")
    clause = css(d, '#prolog .clause[data-gdl="23"]')[0]
    assert clause.text.startswith("legal(R, mark(M, N)) :-")
    clause.click()
    wait(d, lambda d: css(d, '#backdrop div[data-line="25"].linked'), "the rule is highlighted")
    assert "linked" in clause.get_attribute("class")
    assert not css(d, '#backdrop div[data-line="26"].linked')
    assert "translated by gdl2pl from ticTacToe.kif." in text_of(d, "prolog")  # its name
    shot(d, "03-prolog-linked")

    # play to the end by clicking the board: both roles played from the page
    css(d, '.tabs button[data-tab="play"]')[0].click()
    wait(d, lambda d: css(d, '#players select[data-role="oplayer"]'), "the players are shown")
    Select(css(d, '#players select[data-role="oplayer"]')[0]).select_by_value("human")
    # (mark m n) is the cell (cell m n ...): row m, column n, as the game's row rule says
    cells = [("1", "1"), ("2", "1"), ("1", "2"), ("2", "2"), ("1", "3")]
    for k, (m, n) in enumerate(cells, 1):
        selector = f'#board td.playable[data-row="{m}"][data-col="{n}"]'
        wait(d, lambda d, s=selector: css(d, s), f"cell {m} {n} can be played")
        css(d, selector)[0].click()
        wait(d, lambda d, k=k: text_of(d, "step-label") == f"move {k} of {k}", f"move {k}")
    wait(d, lambda d: text_of(d, "match-status").startswith("Terminal"), "the match ends")
    assert "xplayer 100" in text_of(d, "match-status")
    assert "oplayer 0" in text_of(d, "match-status")
    row1 = [td.text for td in css(d, '#board td[data-row="1"]')]
    assert row1 == ["x", "x", "x"]  # the notes' (row 1 x): the top row
    shot(d, "04-played-to-the-end")

    # back and forward through the history
    css(d, "#back")[0].click()
    wait(d, lambda d: text_of(d, "step-label") == "move 4 of 5", "one move back")
    assert text_of(d, "match-status").startswith("Not terminal")
    css(d, "#forward")[0].click()
    wait(d, lambda d: text_of(d, "step-label") == "move 5 of 5", "and forward again")
    wait(d, lambda d: text_of(d, "match-status").startswith("Terminal"), "the end again")

    # why does x have a line? ask, then open the tree one node further
    css(d, '.tabs button[data-tab="why"]')[0].click()
    atom = css(d, "#why-atom")[0]
    atom.clear()
    atom.send_keys("(line x)")
    css(d, "#why-ask")[0].click()
    wait(d, lambda d: css(d, "#why-tree > details"), "the tree is shown")
    root = css(d, "#why-tree > details")[0]
    assert root.get_attribute("open") is not None
    assert "(line x) holds" in text_of(d, "why-tree")
    assert "rule at line 43" in root.text
    child = css(d, "#why-tree > details > details")[0]
    assert child.get_attribute("open") is None  # closed until asked
    child.find_element("css selector", "summary").click()
    wait(d, lambda d: child.get_attribute("open") is not None, "the node opens")
    assert "(row 1 x)" in child.text and "rule at line 39" in child.text
    assert len(css(d, "#why-tree details details details")) >= 1  # and it goes deeper
    shot(d, "05-why-tree")

    # share: the link holds the game and the moves; opened, it shows the same match
    css(d, "#share")[0].click()
    url = css(d, "#share-url")[0].get_attribute("value")
    assert url.startswith(server) and "#s=" in url
    d.get("about:blank")
    d.get(url)
    # a link may come from any site: its game is shown, and runs only when asked to
    wait(d, lambda d: css(d, "#link-box")[0].is_displayed(), "the link asks first")
    wait(d, lambda d: "has not been run" in text_of(d, "check-status"), "nothing ran")
    assert "(role xplayer)" in css(d, "#editor")[0].get_attribute("value")
    css(d, "#link-run")[0].click()
    wait(d, lambda d: text_of(d, "check-status").startswith("no problems"), "the game is back")
    assert not css(d, "#link-box")[0].is_displayed()
    css(d, '.tabs button[data-tab="play"]')[0].click()
    wait(d, lambda d: text_of(d, "step-label") == "move 5 of 5", "the shared match is back")
    wait(d, lambda d: text_of(d, "match-status").startswith("Terminal"), "at its end")
    css(d, '.tabs button[data-tab="prolog"]')[0].click()
    wait(d, lambda d: "from ticTacToe.kif." in text_of(d, "prolog"), "the link keeps the name")

    # the first lesson: a plain program and its minimal model
    Select(css(d, "#examples")[0]).select_by_value("paths.kif")
    wait(d, lambda d: "logic program" in text_of(d, "check-status"), "read as a program")
    css(d, "#model-run")[0].click()
    wait(d, lambda d: "path/2" in text_of(d, "model-result"), "the model is shown")
    model = text_of(d, "model-result")
    assert "stuck/1: 1 atom" in model and "(stuck d)" in model and "(path a a)" in model
    shot(d, "06-model")

    logs = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
    assert not logs, logs


# -- issue 43: answered in the student's own syntax, boards as the notes draw them -----------


def set_text(driver: Any, text: str) -> None:
    """Replace the editor's text as typing would (the page sees an input event)."""
    driver.execute_script(
        "const e = document.getElementById('editor'); e.value = arguments[0];"
        "e.dispatchEvent(new Event('input'));",
        text,
    )


def tab(driver: Any, name: str) -> None:
    css(driver, f'.tabs button[data-tab="{name}"]')[0].click()


def ask_why(driver: Any, question: str, answer: str, message: str) -> str:
    """Ask the Why box ``question`` and wait until its tree says ``answer``; its text."""
    atom = css(driver, "#why-atom")[0]
    atom.clear()
    atom.send_keys(question)
    css(driver, "#why-ask")[0].click()
    wait(driver, lambda d: answer in text_of(d, "why-tree"), message)
    return text_of(driver, "why-tree")


def texts(driver: Any, selector: str) -> list[str]:
    """The text of each element ``selector`` finds, as the page holds it (white space
    kept, unlike Selenium's rendered ``.text``)."""
    found = driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map(e => e.textContent)", selector
    )
    return [str(t) for t in found]


TTT = (REPO / "gdl2pl" / "examples" / "ticTacToe.kif").read_text(encoding="utf-8")
INFIX_TTT = (REPO / "gdl2pl" / "examples" / "ticTacToe.gdl").read_text(encoding="utf-8")


def test_an_infix_writer_reads_every_answer_in_infix(server: str, browser: Any) -> None:
    from selenium.webdriver.support.ui import Select

    d = browser
    d.get(server)
    wait(d, lambda d: text_of(d, "check-status").startswith("no problems"), "the page loads")
    Select(css(d, "#examples")[0]).select_by_value("ticTacToe.gdl")
    wait(d, lambda d: text_of(d, "check-status") == "no problems (infix)", "the infix example")

    # findings quote the rule as written, whole; KIF only when asked for
    set_text(d, INFIX_TTT + "next(cell(M,N,Q)) :- true(control(R))\n")
    wait(d, lambda d: "error" in text_of(d, "check-status"), "the unsafe rule is found")
    unsafe = [li for li in css(d, "#findings li") if "unsafe" in li.text]
    assert unsafe and "the variable M in the head" in unsafe[0].text
    rule = unsafe[0].find_element("css selector", "code.rule").text
    assert rule == "next(cell(M,N,Q)) :- true(control(R))"
    assert "?" not in text_of(d, "findings") and "(<=" not in text_of(d, "findings")
    Select(css(d, "#answer-syntax")[0]).select_by_value("kif")
    wait(d, lambda d: "(<= (next (cell ?M ?N ?Q)) (true (control ?R)))" in text_of(d, "findings"),
         "the same finding in KIF, on request")
    assert "the variable ?M in the head" in text_of(d, "findings")
    Select(css(d, "#answer-syntax")[0]).select_by_value("auto")
    set_text(d, INFIX_TTT)
    wait(d, lambda d: text_of(d, "check-status") == "no problems (infix)", "fixed")
    shot(d, "11-infix-findings")

    # the state, the moves and the history in infix; the board as the notes draw it
    tab(d, "play")
    wait(d, lambda d: css(d, '#players select[data-role="oplayer"]'), "the players are shown")
    Select(css(d, '#players select[data-role="oplayer"]')[0]).select_by_value("human")
    wait(d, lambda d: "cell(1,1,b)" in texts(d, "#fluents li"), "the state in infix")
    assert "control(xplayer)" in texts(d, "#fluents li")
    assert "mark(1,1)" in texts(d, '#legal .role[data-role="xplayer"] button.move')
    for k, (m, n) in enumerate([("1", "1"), ("2", "1"), ("1", "2"), ("2", "2"), ("1", "3")], 1):
        selector = f'#board td.playable[data-row="{m}"][data-col="{n}"]'
        wait(d, lambda d, s=selector: css(d, s), f"cell {m} {n} can be played")
        css(d, selector)[0].click()
        wait(d, lambda d, k=k: text_of(d, "step-label") == f"move {k} of {k}", f"move {k}")
    wait(d, lambda d: text_of(d, "match-status").startswith("Terminal"), "x completes row 1")
    rows = [texts(d, f"#board tr:nth-child({i}) td") for i in (2, 3, 4)]
    assert rows == [["x", "x", "x"], ["o", "o", "b"], ["b", "b", "b"]]
    assert texts(d, "#board tr:first-child th")[1:] == ["1", "2", "3"]  # the columns
    assert texts(d, "#board tr td:first-child") == []  # (row names are th)
    assert [t for t in texts(d, "#board tr th") if t][3:] == ["1", "2", "3"]  # the rows
    assert texts(d, "#history li")[0] == "mark(1,1)  noop"
    assert "cell(1,3,x)" in texts(d, "#fluents li")
    shot(d, "12-infix-board")

    # Why: the notes' row(1,x) holds, in infix; a KIF question is answered too
    tab(d, "why")
    tree = ask_why(d, "row(1,x)", "row(1,x) holds", "row 1 of x holds")
    assert "row(M,F) :- true(cell(M,1,F)) & true(cell(M,2,F)) & true(cell(M,3,F))" in tree
    assert "M = 1" in tree and "F = x" in tree and "?" not in tree
    ask_why(d, "(line x)", "line(x) holds", "a KIF question, answered")
    # the question on the built-in infix example, then a malformed one: its fault
    question = "legal(xplayer,mark(1,1))"
    ask_why(d, question, f"{question} does not hold", "the infix question is read")
    said = ask_why(d, question[:-1], "could not be read", "the question is refused")
    assert "the question 'legal(xplayer,mark(1,1)' could not be read" in said
    assert "the game is not at fault" in said and "line 1" not in said
    assert not css(d, "#gutter div.error"), "no line of the game is marked"
    shot(d, "13-infix-why")

    # Prolog: the standalone module, its rules quoted in infix, linked to the game
    tab(d, "prolog")
    wait(d, lambda d: css(d, "#prolog .clause"), "the runtime's module")
    assert "% ticTacToe.gdl:38  row(M,F) :- true(cell(M,1,F))" in text_of(d, "prolog")
    css(d, "#prolog-standalone")[0].click()
    wait(d, lambda d: "load it in plain SWI-Prolog" in text_of(d, "prolog"), "standalone")
    prolog = text_of(d, "prolog")
    assert "step(JointMove) :-" in prolog and "joint_move_problem" in prolog
    assert "% ticTacToe.gdl:38  row(M,F) :- true(cell(M,1,F)) & true(cell(M,2,F))" in prolog
    clause = css(d, '#prolog .clause[data-gdl="38"]')[0]
    assert clause.text.startswith("row(M, F) :-")
    clause.click()
    wait(d, lambda d: css(d, '#backdrop div[data-line="38"].linked'), "its rule is shown")
    assert "translate --standalone" in text_of(d, "prolog-hint")
    css(d, "#prolog-runtime")[0].click()
    wait(d, lambda d: "set_module(base(system))" in text_of(d, "prolog"), "back to the runtime's")
    shot(d, "14-standalone-prolog")

    # Analyze: the button waits for the report; both strong winnabilities, labelled
    tab(d, "analyze")
    disabled = d.execute_script(
        "const b = document.getElementById('analyze-run'); b.click(); return b.disabled;"
    )
    assert disabled is True, "the button is disabled while the analysis runs"
    wait(d, lambda d: css(d, '#analyze-report tr[data-property="strong_winnability"]'),
         "the report")
    assert css(d, "#analyze-run")[0].is_enabled()
    labels = texts(d, "#analyze-report tr td:first-child")
    at = labels.index("strong winnability (a sequence of the player's own moves, the notes' "
                      "definition)")
    assert labels[at + 1] == (
        "strong winnability (a strategy: each move may follow the others' moves)"
    )
    assert "witness for xplayer: [mark(1,1) noop]" in text_of(d, "analyze-report")
    shot(d, "15-infix-analyze")

    # the one error the browser saw: the 422 that refused the malformed question
    logs = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
    assert [e["message"].split(" - ")[0].split("/")[-1] for e in logs] == ["explain"], logs
    assert "422" in logs[0]["message"]


#: A game whose negation is not stratified (p and q each under the other's not), in infix.
UNSTRATIFIED = """\
role(robot)
s(a)
p(X) :- s(X) & ~q(X)
q(X) :- s(X) & ~p(X)
legal(robot,go)
terminal :- p(a)
goal(robot,100)
"""


def test_kif_and_infix_views_of_one_game_and_the_small_things(
    server: str, browser: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.support.ui import Select

    d = browser
    d.get(server)
    wait(d, lambda d: text_of(d, "check-status").startswith("no problems"), "the page loads")
    Select(css(d, "#examples")[0]).select_by_value("ticTacToe.kif")
    wait(d, lambda d: text_of(d, "check-status") == "no problems (kif)", "the KIF example")

    # a KIF game's state in KIF, and in infix on request; the board is the same
    tab(d, "play")
    wait(d, lambda d: "(cell 1 1 b)" in texts(d, "#fluents li"), "the state in KIF")
    assert "(mark 1 1)" in texts(d, '#legal .role[data-role="xplayer"] button.move')
    Select(css(d, "#answer-syntax")[0]).select_by_value("infix")
    wait(d, lambda d: "cell(1,1,b)" in texts(d, "#fluents li"), "the state in infix")
    assert "mark(1,1)" in texts(d, '#legal .role[data-role="xplayer"] button.move')
    Select(css(d, '#players select[data-role="oplayer"]')[0]).select_by_value("human")
    css(d, '#board td.playable[data-row="1"][data-col="3"]')[0].click()
    wait(d, lambda d: text_of(d, "step-label") == "move 1 of 1", "one move")
    assert [td.text for td in css(d, '#board td[data-row="1"]')] == ["b", "b", "x"]
    assert texts(d, "#history li") == ["mark(1,3)  noop"]
    Select(css(d, "#answer-syntax")[0]).select_by_value("auto")
    wait(d, lambda d: "(cell 1 3 x)" in texts(d, "#fluents li"), "KIF again")

    # the Why box of a KIF game takes an infix question
    tab(d, "why")
    ask_why(
        d, "legal(oplayer,mark(1,1))", "(legal oplayer (mark 1 1)) holds",
        "answered in the game's syntax",
    )  # fmt: skip
    shot(d, "16-kif-why-infix-question")

    # the Graph tab draws a game with errors, its cycle through not in red
    Select(css(d, "#syntax")[0]).select_by_value("infix")
    set_text(d, UNSTRATIFIED)
    wait(d, lambda d: text_of(d, "check-status").endswith("(infix)")
         and "error" in text_of(d, "check-status"), "the errors are found")
    tab(d, "graph")
    wait(d, lambda d: css(d, "#graph svg") or text_of(d, "graph-dot"), "the graph is drawn")
    assert css(d, "#graph svg"), "drawn by Graphviz"
    assert css(d, "#graph-errors")[0].is_displayed()
    cycle = css(d, "#graph-cycle")[0]
    # said as gdl2pl check says it: here a ground atom may depend on its own negation
    assert cycle.is_displayed() and "not stratified by the notes' definition" in cycle.text
    assert "a ground atom may depend on its own negation" in cycle.text
    assert "the cycle goes through p, q" in cycle.text
    assert texts(d, "#strata tr.cycle td:first-child") == ["p", "q"]
    red = d.execute_script(
        "return [...document.querySelectorAll('#graph svg g.edge path')]"
        ".filter(p => p.getAttribute('stroke') === '#c00000' "
        "&& Number(p.getAttribute('stroke-width') || 1) >= 3).length"
    )
    assert red == 2, red  # p -> q and q -> p, bold red
    assert "fix the errors first" not in text_of(d, "message")
    shot(d, "17-graph-with-errors")

    # Open file: the Example menu lets go of the example, and choosing it again loads it
    stuck = REPO / "tests" / "games" / "analysis" / "stuck.kif"
    chooser = css(d, "#open-file")[0]
    d.execute_script("arguments[0].style.display = 'block';", chooser)
    chooser.send_keys(str(stuck))
    wait(d, lambda d: "(role blue)" in css(d, "#editor")[0].get_attribute("value"), "opened")
    assert Select(css(d, "#examples")[0]).first_selected_option.get_attribute("value") == ""
    # one move, said so: "(1 move)"
    tab(d, "analyze")
    css(d, "#analyze-run")[0].click()
    wait(d, lambda d: css(d, "#analyze-report button.replay"), "the report")
    replays = texts(d, "#analyze-report button.replay")
    assert "replay the counterexample (1 move)" in replays, replays
    assert not any("(1 moves)" in r for r in replays)
    Select(css(d, "#examples")[0]).select_by_value("ticTacToe.kif")
    wait(d, lambda d: "(role xplayer)" in css(d, "#editor")[0].get_attribute("value"),
         "the example is loaded again")
    shot(d, "18-small-things")

    logs = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
    assert not logs, logs


# -- issue 53: the course's own examples, a class, exercises -------------------------------


def link(server: str, exercise: dict[str, Any]) -> str:
    """A share link holding ``exercise``, as the page makes one (``#s=``, base64url JSON)."""
    import base64
    import json

    raw = base64.urlsafe_b64encode(json.dumps(exercise).encode()).decode().rstrip("=")
    return f"{server}#s={raw}"


def run_link(driver: Any, url: str) -> None:
    """Open a link, and run what it holds as a student does after reading it."""
    driver.get("about:blank")
    driver.get(url)
    wait(driver, lambda d: css(d, "#link-box")[0].is_displayed(), "the link asks first")
    css(driver, "#link-run")[0].click()
    wait(driver, lambda d: not css(d, "#link-box")[0].is_displayed(), "the link runs")


#: The notes' recursion example (issue 53, item 1): every command crashed on it in infix.
NOTES_PROGRAM = "p(a,b)\np(b,c)\nq(c)\nr(X,Y) :- p(X,Y)\nr(X,Z) :- r(X,Y) & r(Y,Z)\n"

#: The issue's rule whose clause tests the negation first (item 2), in a game blue wins
#: nowhere (item 5) and that never ends when blue waits.
BLUE = """\
role(blue)
init(at(1))
legal(blue,wait)
legal(blue,go) :- true(at(1))
next(at(2)) :- does(blue,go)
next(at(X)) :- does(blue,wait) & true(at(X))
terminal :- true(at(2))
goal(blue,100) :- true(at(3)) & ~true(at(1))
goal(blue,50) :- true(at(2))
goal(blue,0) :- true(at(1))
"""


def test_the_notes_recursion_and_literals_as_written(server: str, browser: Any) -> None:
    d = browser
    run_link(d, link(server, {"gdl2pl_studio": 1, "syntax": "infix", "text": NOTES_PROGRAM}))
    # checked as a logic program, its warnings in infix: no error, no 500
    wait(d, lambda d: "recursion restriction" in text_of(d, "findings"), "the warnings")
    assert "logic program: no roles" in text_of(d, "check-status")
    assert "0 errors" in text_of(d, "check-status")
    assert "the argument Y of r(X,Y)" in text_of(d, "findings")
    tab(d, "model")
    css(d, "#model-run")[0].click()
    wait(d, lambda d: "r/2" in text_of(d, "model-result"), "the model")
    assert "r(a,c)" in texts(d, "#model-result li")
    shot(d, "21-notes-recursion")

    # Why fails at the literal the student wrote second, which Prolog tests first
    set_text(d, BLUE)
    wait(d, lambda d: "no problems" in text_of(d, "check-status"), "the blue game")
    tab(d, "why")
    tree = ask_why(d, "goal(blue,100)", "goal(blue,100) does not hold", "why not")
    attempt = css(d, "#why-tree > details > details")[0]
    attempt.find_element("css selector", "summary").click()
    wait(d, lambda d: attempt.get_attribute("open") is not None, "the rule tried opens")
    assert texts(d, "#why-tree .rule .failing") == ["fails at literal 2 of the rule"]
    assert "goal(blue,100) :- true(at(3)) & ~true(at(1))" in tree
    shot(d, "22-why-as-written")

    # analyze says why blue wins nowhere, and the shortest cycle is one wait
    tab(d, "analyze")
    css(d, "#analyze-run")[0].click()
    wait(d, lambda d: css(d, "#analyze-report .why-not"), "the report says why not")
    assert "goal(blue,100) holds in no reachable terminal state" in text_of(d, "analyze-report")
    assert "counterexample: [wait]" in text_of(d, "analyze-report")
    assert "replay the best ending for blue (1 move)" in texts(d, "#analyze-report button.replay")
    logs = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
    assert not logs, logs


#: An exercise as a teacher writes it (docs/studio.md): starter text and properties.
EXERCISE = {
    "gdl2pl_studio": 1,
    "title": "Let blue win",
    "instructions": "Change the goal rules so that blue can win, in at most 3 moves.",
    "syntax": "infix",
    "text": BLUE,
    "properties": [
        "no errors",
        "blue is weakly winnable",
        "terminal is reached within 3 moves",
        "legal(blue,go) holds in the initial state",
        "the model contains r(a,c)",
        "blue flies",
    ],
}


def test_an_exercise_is_checked_property_by_property(server: str, browser: Any) -> None:
    d = browser
    run_link(d, link(server, EXERCISE))
    wait(d, lambda d: css(d, "#exercise-tab")[0].is_displayed(), "the exercise tab")
    tab(d, "exercise")
    assert text_of(d, "exercise-title") == "Let blue win"
    css(d, "#exercise-run")[0].click()
    wait(d, lambda d: text_of(d, "exercise-summary").endswith("hold"), "judged")
    items = css(d, "#exercise-properties li")
    verdicts = [li.get_attribute("class") for li in items]
    assert verdicts == ["holds", "fails", "fails", "holds", "fails", "unknown"], verdicts
    why = [texts(d, f'#exercise-properties li[data-property="{i}"] .why') for i in range(6)]
    assert why[1][0].startswith("goal(blue,100) holds in no reachable terminal state")
    assert "a match can go on for ever" in why[2][0]
    assert "the model has no r atom" in why[4][0]
    assert "not understood" in why[5][0]
    assert text_of(d, "exercise-summary") == "2 of 6 hold"
    shot(d, "23-exercise-refuted")

    # the answer: blue wins by going, and waiting ends the game too
    answer = (
        BLUE.replace("true(at(3)) & ~true(at(1))", "true(at(2))")
        .replace("goal(blue,50) :- true(at(2))\n", "")
        .replace("next(at(X)) :- does(blue,wait) & true(at(X))", "next(at(2)) :- does(blue,wait)")
    )
    answer += "p(a,b)\np(b,c)\nr(X,Y) :- p(X,Y)\nr(X,Z) :- r(X,Y) & r(Y,Z)\n"
    set_text(d, answer)
    wait(d, lambda d: text_of(d, "check-status").startswith(("no problems", "0 errors")), "edited")
    css(d, "#exercise-run")[0].click()
    wait(d, lambda d: text_of(d, "exercise-summary") == "5 of 6 hold", "judged again")
    shot(d, "24-exercise-answered")

    # the student's text is kept by the browser: a reload gives it back
    d.refresh()
    wait(d, lambda d: "Your text from your last visit is back" in text_of(d, "restored"),
         "the text is restored")
    assert css(d, "#restored")[0].is_displayed()
    assert "r(X,Z) :- r(X,Y) & r(Y,Z)" in css(d, "#editor")[0].get_attribute("value")
    assert css(d, "#exercise-tab")[0].is_displayed(), "with its exercise"
    logs = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
    assert not logs, logs


@pytest.fixture
def busy_server() -> Iterator[tuple[str, Any]]:
    """A studio with room for one front-end request, whose requests wait at most half a
    second for it; a check of a text holding ``; hold`` keeps the room until released."""
    uvicorn = require_module("uvicorn")
    from gdl2pl.studio.app import create_app
    from gdl2pl.studio.limits import Limits

    app = create_app(Limits(max_requests=1, max_front_end=1, wait_seconds=0.5))
    release = threading.Event()
    real = app.state.workers.ask

    def ask(request: dict[str, Any], seconds: float) -> dict[str, Any]:
        if "; hold" in request.get("text", ""):
            assert release.wait(120), "never released"
        return real(request, seconds)

    app.state.workers.ask = ask
    sock = socket.create_server(("127.0.0.1", 0))
    srv = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT
    while not srv.started:
        assert time.monotonic() < deadline, "the studio server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/", release
    release.set()
    srv.should_exit = True
    thread.join(10)


def test_a_busy_server_is_waited_for_visibly(busy_server: tuple[str, Any], browser: Any) -> None:
    """The server is busy with another student's request: the page's check is told to try
    again, says it is waiting, and is answered once the other request ends."""
    import httpx

    url, release = busy_server
    d = browser
    run_link(d, link(url, {"gdl2pl_studio": 1, "syntax": "kif", "text": TTT}))
    wait(d, lambda d: text_of(d, "check-status").startswith("no problems"), "the page loads")
    other = threading.Thread(
        target=lambda: httpx.post(url + "api/check", json={"text": TTT + "; hold\n"}, timeout=120)
    )
    other.start()  # another student's check takes the one place
    time.sleep(0.5)
    set_text(d, TTT + "\n(<= (next (cell ?m ?n ?q)) (true (control ?r)))\n")
    wait(d, lambda d: css(d, "#waiting")[0].is_displayed(), "the page says it waits")
    assert "waiting for the server" in text_of(d, "waiting")
    shot(d, "25-waiting")
    time.sleep(1.5)  # tried again at least once meanwhile, still waiting, no error shown
    assert css(d, "#waiting")[0].is_displayed() and not css(d, "#message")[0].is_displayed()
    release.set()
    wait(d, lambda d: "error" in text_of(d, "check-status"), "answered once the room is free")
    assert not css(d, "#waiting")[0].is_displayed()
    other.join(60)
