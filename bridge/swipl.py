"""SWI-Prolog in this process, through janus: starting it (with clear errors when it
cannot be done), one Prolog engine per Python thread, interrupting a query.

``runtime()`` imports janus-swi once per process, after checking that the SWI-Prolog
it will run is recent enough and is the one janus was built against, and loads
``prolog/gdl_runtime.pl``. janus aborts the whole process when it starts an SWI-Prolog
home that does not match its library, so the checks happen before the import.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Callable
from collections.abc import Iterator
from importlib import resources
from importlib.util import find_spec
from pathlib import Path
from types import ModuleType
from typing import Any
from typing import TypeVar

T = TypeVar("T")

MIN_VERSION = 90112  # janus-swi needs SWI-Prolog 9.1.12 or later
RUNTIME_MODULE = "gdl_runtime"

_lock = threading.Lock()
_janus: ModuleType | None = None
_thread = threading.local()

INSTALL_HINT = (
    "Install SWI-Prolog >= 9.1.12 (e.g. run scripts/install-swipl from the gdl2pl source tree, "
    "or your distribution's swi-prolog-nox if recent enough, the SWI-Prolog PPA, or Homebrew), "
    "then reinstall janus-swi so that it is built against it "
    "(pip install --force-reinstall --no-binary janus-swi janus-swi)."
)


class PrologUnavailableError(RuntimeError):
    """SWI-Prolog or janus-swi is missing, too old, or not the one janus was built for."""


def _version_string(v: int) -> str:
    return f"{v // 10000}.{v // 100 % 100}.{v % 100}"


def _dump_runtime_variables(swipl: str) -> dict[str, str]:
    out = subprocess.run(
        [swipl, "--dump-runtime-variables"], capture_output=True, text=True, timeout=30
    ).stdout
    return dict(re.findall(r'^(\w+)="(.*)";$', out, re.MULTILINE))


def _linked_home(extension: Path) -> Path | None:
    """The SWI-Prolog home whose libswipl the janus extension is linked against."""
    ldd = shutil.which("ldd")
    if not ldd:
        return None
    try:
        out = subprocess.run([ldd, str(extension)], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"libswipl\.so[.\d]* => (\S+)", out.stdout)
    if not m:
        return None
    lib = Path(m.group(1)).resolve()
    # <home>/lib/<arch>/libswipl.so.N  (or <prefix>/lib/libswipl.so.N with home beside it)
    for home in (lib.parents[2], lib.parent / "swipl"):
        if (home / "boot.prc").exists() or (home / "swipl.home").exists():
            return home
    return None


def _home_version(home: Path) -> int | None:
    for exe in (home / "bin").glob("*/swipl"):
        v = _dump_runtime_variables(str(exe)).get("PLVERSION")
        if v and v.isdigit():
            return int(v)
    return None


def check_environment() -> None:
    """Raise ``PrologUnavailableError`` unless janus can start a suitable SWI-Prolog.

    When ``SWI_HOME_DIR`` is not set and an older ``swipl`` comes first on PATH, the
    home of the library janus is linked against is selected explicitly instead.
    """
    spec = find_spec("janus_swi")
    if spec is None or not spec.submodule_search_locations:
        raise PrologUnavailableError(
            "the Python package janus-swi is not installed. " + INSTALL_HINT
        )
    pkg = Path(next(iter(spec.submodule_search_locations)))
    ext = next(iter(pkg.glob("_swipl*.so")), None) or next(iter(pkg.glob("_swipl*")), None)
    linked = _linked_home(ext) if ext else None
    explicit = os.environ.get("SWI_HOME_DIR")
    if explicit:
        if linked and Path(explicit).resolve() != linked.resolve():
            raise PrologUnavailableError(
                f"SWI_HOME_DIR={explicit} but janus-swi is built against the SWI-Prolog at "
                f"{linked}; unset SWI_HOME_DIR or point it there."
            )
        return
    swipl = shutil.which("swipl")
    path_home: Path | None = None
    path_version: int | None = None
    if swipl:
        props = _dump_runtime_variables(swipl)
        if props.get("PLBASE"):
            path_home = Path(props["PLBASE"]).resolve()
        if props.get("PLVERSION", "").isdigit():
            path_version = int(props["PLVERSION"])
    if linked is not None:
        linked_version = _home_version(linked)
        if linked_version is not None and linked_version < MIN_VERSION:
            raise PrologUnavailableError(
                f"janus-swi is built against SWI-Prolog {_version_string(linked_version)} at "
                f"{linked}, older than 9.1.12. " + INSTALL_HINT
            )
        if path_home is None or path_home != linked.resolve():
            if swipl and path_version is not None:
                shadow = (
                    f"the swipl first on PATH ({swipl}, version "
                    f"{_version_string(path_version)}) is not the SWI-Prolog janus-swi was "
                    f"built against ({linked}); "
                )
            else:
                shadow = ""
            # Starting janus with the wrong home aborts the process: select the right one.
            os.environ["SWI_HOME_DIR"] = str(linked)
            if shadow and os.environ.get("GDL2PL_DEBUG"):
                print(f"gdl2pl: {shadow}using SWI_HOME_DIR={linked}")
        return
    if swipl is None:
        raise PrologUnavailableError("no swipl found on PATH. " + INSTALL_HINT)
    if path_version is not None and path_version < MIN_VERSION:
        raise PrologUnavailableError(
            f"the swipl first on PATH ({swipl}) is SWI-Prolog {_version_string(path_version)}; "
            "janus needs 9.1.12 or later and would abort with it. Put a newer swipl first on "
            "PATH or set SWI_HOME_DIR. " + INSTALL_HINT
        )


def runtime() -> ModuleType:
    """The janus module, with the gdl2pl runtime loaded (once per process)."""
    global _janus
    if _janus is not None:
        return _janus
    with _lock:
        if _janus is None:
            check_environment()
            try:
                import janus_swi as janus
            except ImportError as e:
                raise PrologUnavailableError(f"cannot import janus-swi: {e}. {INSTALL_HINT}") from e
            version = int(janus.query_once("current_prolog_flag(version, V)")["V"])
            if version < MIN_VERSION:
                raise PrologUnavailableError(
                    f"janus runs SWI-Prolog {_version_string(version)}; 9.1.12 or later is "
                    "needed. " + INSTALL_HINT
                )
            path = resources.files("gdl2pl.prolog") / "gdl_runtime.pl"
            with resources.as_file(path) as p:
                janus.query_once("use_module(F)", {"F": str(p)})
            _janus = janus
            _thread.initial = True  # janus started Prolog here: this thread has its engine
    return _janus


class _Engine:
    """The Prolog engine janus attached to one Python thread. It is detached (and its
    memory freed) when the thread ends: Python then clears the thread's locals, in that
    thread, which runs ``__del__`` there."""

    def __init__(self, janus: ModuleType) -> None:
        janus.attach_engine()
        self._janus = janus
        self._ident = threading.get_ident()

    def __del__(self) -> None:
        if threading.get_ident() == self._ident:
            with contextlib.suppress(Exception):
                self._janus.detach_engine()


def attach_thread() -> None:
    """Give the calling thread its own Prolog engine, once; every janus call of gdl2pl
    goes through this first (janus crashes in a thread without an engine). The engine
    is detached when the thread ends."""
    if getattr(_thread, "engine", None) is None and not getattr(_thread, "initial", False):
        janus = runtime()
        if not getattr(_thread, "initial", False):
            _thread.engine = _Engine(janus)


def prolog_thread_id() -> int:
    """The id of the Prolog engine of the calling thread (attached if need be), for
    ``interrupt`` from another thread."""
    attach_thread()
    known = getattr(_thread, "prolog_id", None)
    if known is None:
        found = runtime().query_once("thread_self(_T), thread_property(_T, id(Id))")
        known = _thread.prolog_id = int(found["Id"])
    return int(known)


def interrupt(thread_id: int) -> None:
    """Make the Prolog query running in the engine ``thread_id`` stop at its next call:
    it raises ``QueryInterrupted`` (a ``ReasonerError``) in the thread that made it.
    Does nothing if that engine is gone or idle (an idle engine ignores it)."""
    attach_thread()
    runtime().query_once(
        "catch(thread_signal(Id, gdl_runtime:gdl_interrupt), _, true)", {"Id": thread_id}
    )


@contextlib.contextmanager
def interrupt_after(seconds: float) -> Iterator[None]:
    """Run the block with this thread's Prolog queries interrupted after ``seconds``
    (they raise ``QueryInterrupted``). A signal sent as the block ends (the timer firing
    just as the query returned) is taken by an idle query before this returns, so it
    cannot stop the thread's next question."""
    tid = prolog_thread_id()
    fired = threading.Event()

    def fire() -> None:
        fired.set()
        interrupt(tid)

    timer = threading.Timer(seconds, fire)
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        timer.join()
        if fired.is_set():  # the signal may still be queued: an idle engine ignores it
            runtime().query_once("true")


def allocated_megabytes() -> float:
    """The memory the process holds allocated through malloc (SWI-Prolog's tables,
    stacks and clauses), in megabytes: glibc's count of bytes in use, which memory freed
    for reuse does not count; the resident memory where that count is unknown."""
    info = _mallinfo()
    if info is not None:
        return info() / 2**20
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


_MALLINFO2_FIELDS = (
    "arena",
    "ordblks",
    "smblks",
    "hblks",
    "hblkhd",
    "usmblks",
    "fsmblks",
    "uordblks",
    "fordblks",
    "keepcost",
)


@functools.cache
def _mallinfo() -> Callable[[], int] | None:
    """glibc's bytes in use (``mallinfo2``: small blocks and mapped ones), if present."""
    import ctypes

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in _MALLINFO2_FIELDS]

    try:
        fn = ctypes.CDLL(None).mallinfo2
    except (OSError, AttributeError):
        return None
    fn.restype = MallInfo2

    def in_use() -> int:
        info = fn()
        return int(info.uordblks + info.hblkhd)

    return in_use


@contextlib.contextmanager
def interrupt_past_memory(megabytes: float, every: float = 0.02) -> Iterator[threading.Event]:
    """Run the block with this thread's Prolog queries interrupted (``QueryInterrupted``)
    once the memory the process holds (``allocated_megabytes``) has grown more than
    ``megabytes`` above what it held at the start (checked every ``every`` seconds, so
    it may overshoot by what Prolog allocates in that time). Yields an event that is set
    if it fired. For work whose memory Prolog's own limits do not count (tabling's
    worklists and suspended negations hold far more than its table space)."""
    tid = prolog_thread_id()
    ceiling = allocated_megabytes() + megabytes
    fired = threading.Event()
    done = threading.Event()

    def watch() -> None:
        while not done.wait(every):
            if allocated_megabytes() > ceiling:
                fired.set()
                interrupt(tid)
                return

    watcher = threading.Thread(target=watch, name="gdl2pl-memory-guard", daemon=True)
    watcher.start()
    try:
        yield fired
    finally:
        done.set()
        watcher.join()
        if fired.is_set():  # the signal may still be queued: an idle engine ignores it
            runtime().query_once("true")


def run_interruptibly(fn: Callable[[], T]) -> T:
    """Run ``fn()`` in a worker thread and return its result (or raise its exception),
    so that Ctrl-C is honoured while it runs Prolog: the main thread waits in short
    steps, and on ``KeyboardInterrupt`` interrupts the worker's query (within
    milliseconds) and re-raises. Without this, Python sees Ctrl-C only when a Prolog
    call returns."""
    box: dict[str, Any] = {}
    started = threading.Event()

    def work() -> None:
        try:
            box["thread"] = prolog_thread_id()
        except Exception:  # Prolog cannot start: fn will say so
            box["thread"] = None
        started.set()
        try:
            box["result"] = fn()
        except BaseException as e:
            box["error"] = e

    worker = threading.Thread(target=work, name="gdl2pl-command", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.05)
    except KeyboardInterrupt:
        started.wait(1.0)
        if box.get("thread") is not None:
            interrupt(box["thread"])
        worker.join(2.0)
        raise
    if "error" in box:
        raise box["error"]
    return box["result"]  # type: ignore[no-any-return]


_loaded_files: set[tuple[str, str]] = set()


def runtime_with(package: str, filename: str) -> ModuleType:
    """The janus module with the Prolog file ``filename`` of the Python package
    ``package`` loaded too (once per process; e.g. an analysis that searches in Prolog),
    and the calling thread attached to its engine."""
    janus = runtime()
    attach_thread()
    key = (package, filename)
    if key not in _loaded_files:
        with _lock:
            if key not in _loaded_files:
                with resources.as_file(resources.files(package) / filename) as p:
                    janus.query_once("use_module(F)", {"F": str(p)})
                _loaded_files.add(key)
    return janus
