"""A regex comparator's pattern tried on each reference with a time bound.

Python's ``re`` cannot be interrupted, and a pattern with nested quantifiers (``(a+)+$``) can
backtrack for hours on a reference it does not match. The check runs in a forked child process
that is killed after :data:`REGEX_CHECK_S`; a pattern that slow is refused before any run.
"""

from __future__ import annotations

import multiprocessing
import re
from multiprocessing.connection import Connection

from counterfact.probes.comparators import extract

REGEX_CHECK_S = 2.0
"""How long one pattern may take to search one reference at resolve time."""


def _child(pattern: re.Pattern[str], text: str, conn: Connection) -> None:
    conn.send(extract(pattern, text) is not None)
    conn.close()


def extracts_in_time(
    pattern: re.Pattern[str], text: str, timeout_s: float = REGEX_CHECK_S
) -> bool | None:
    """True when ``pattern`` extracts an answer from ``text``, False when it does not, None when
    it did not finish within ``timeout_s`` (its process is killed).
    """
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(pattern, text, child), daemon=True)
    proc.start()
    child.close()
    try:
        if parent.poll(timeout_s):
            return bool(parent.recv())
        return None
    except EOFError:  # the child died without answering: treat as no answer
        return False
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(timeout=5)
        parent.close()
