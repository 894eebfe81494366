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
    # (mark m n) is the cell (cell m n ...): column m, row n
    cells = [("1", "1"), ("2", "1"), ("1", "2"), ("2", "2"), ("1", "3")]
    for k, (m, n) in enumerate(cells, 1):
        selector = f'#board td.playable[data-col="{m}"][data-row="{n}"]'
        wait(d, lambda d, s=selector: css(d, s), f"cell {m} {n} can be played")
        css(d, selector)[0].click()
        wait(d, lambda d, k=k: text_of(d, "step-label") == f"move {k} of {k}", f"move {k}")
    wait(d, lambda d: text_of(d, "match-status").startswith("Terminal"), "the match ends")
    assert "xplayer 100" in text_of(d, "match-status")
    assert "oplayer 0" in text_of(d, "match-status")
    column1 = [td.text for td in css(d, '#board td[data-col="1"]')]
    assert column1 == ["x", "x", "x"]
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
