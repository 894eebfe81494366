"""Writing output files without writing through a link: a whole file goes to a new private
temporary file beside it (created exclusively, so never an existing file or a symlink's
target) and is then renamed over the target (which replaces a symlink, not what it points
to); an appended line goes only to a regular file opened without following a symlink."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

#: The process's file-creation mask (read once: reading it means setting it).
_UMASK = os.umask(0o022)
os.umask(_UMASK)


def write_file(path: Path, text: str) -> None:
    """Make ``path`` hold ``text`` (UTF-8) in one atomic step: a reader sees the old file or
    the new one, never a part; an existing file or symlink at ``path`` is replaced, never
    written through."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            os.fchmod(f.fileno(), 0o666 & ~_UMASK)  # as open() would have made it
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def append_text(path: Path, text: str) -> None:
    """Append ``text`` (UTF-8) to ``path``, creating it if absent. Raises ``OSError`` if
    ``path`` is a symlink (``ELOOP``) rather than write to what it points to."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o666)
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        f.write(text)
