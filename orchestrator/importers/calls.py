"""Recorded chat calls, read as data: what ``counterfact blame`` replays.

A call is an OpenAI chat-completions request and, when it was recorded, its reply. Accepted:

- a JSON file holding a bare request body (``{"model", "messages", ...}``);
- a JSON file holding ``{"request": ..., "response": ...}`` as ``counterfact record`` writes it
  (``status``, ``started_at`` and ``duration_s`` beside them);
- an OTLP JSON export (``{"resourceSpans": [...]}``): every span carrying OpenTelemetry's GenAI
  attributes (``gen_ai.input.messages``, ``gen_ai.system_instructions``,
  ``gen_ai.output.messages``, ``gen_ai.request.model``, ``gen_ai.request.temperature``,
  ``gen_ai.request.seed`` ...) is one call, named by its span id;
- a JSONL file, one call (either JSON form) a line;
- a folder of such files (``*.json``, ``*.jsonl``), in name order.

A call file is data: nothing in it is imported or called, and nothing in it chooses a check
(the comparator comes from the command line). Each file is read as a regular file up to
:data:`MAX_CALL_BYTES`; every problem is one :class:`~counterfact.ConfigError` naming the file
and the fix, before anything is sent.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from counterfact.exceptions import ConfigError
from counterfact.orchestrator.importers.otlp import is_otlp, otlp_calls
from counterfact.orchestrator.importers.recorded import RecordedCall, call_of, fail
from counterfact.orchestrator.storage.boundedread import (
    FileTooLarge,
    NotARegularFile,
    read_regular,
)

MAX_CALL_BYTES = 256 * 1024 * 1024
"""The most bytes one call file (or OTLP export) may hold."""
MAX_CALLS = 100_000
"""The most calls one ``blame`` reads."""


def _read(path: Path) -> str:
    try:
        data = read_regular(path, MAX_CALL_BYTES, follow=True)
    except FileNotFoundError as exc:
        raise fail(str(path), "no such file or folder") from exc
    except NotARegularFile as exc:
        raise fail(str(path), "not a regular file") from exc
    except FileTooLarge as exc:
        raise fail(str(path), f"more than {MAX_CALL_BYTES // 2**20} MiB") from exc
    except OSError as exc:
        raise fail(str(path), f"cannot be read ({exc.strerror or exc})") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(str(path), "is not UTF-8 text") from exc


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise fail(where, f"not JSON ({exc.msg}, line {exc.lineno})") from exc
    except RecursionError as exc:
        raise fail(where, "nests too deeply") from exc


def _jsonl(path: Path, text: str) -> Iterator[RecordedCall]:
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            where = f"{path} line {number}"
            yield call_of(_json(line, where), f"{path.stem}:{number}", where)


def _file(path: Path) -> list[RecordedCall]:
    text = _read(path)
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return list(_jsonl(path, text))
    data = _json(text, str(path))
    if is_otlp(data):
        return otlp_calls(data, str(path))
    return [call_of(data, path.stem, str(path))]


def read_calls(path: Path, span: str | None = None) -> list[RecordedCall]:
    """Every call ``path`` holds (one file or a folder of them); ``span`` keeps the one call of
    that id (an OTLP span id, or a call's name).

    Raises:
        ConfigError: a file that is not a call, no call at all, an unknown ``span``, two calls
            of one name, or more than :data:`MAX_CALLS`.
    """
    if path.is_dir():
        files = sorted(
            p for p in path.iterdir() if p.suffix.lower() in (".json", ".jsonl", ".ndjson")
        )
        calls = [c for f in files for c in _file(f)]
    else:
        calls = _file(path)
    if not calls:
        raise fail(str(path), "holds no recorded call (*.json or *.jsonl files)")
    if len(calls) > MAX_CALLS:
        raise fail(str(path), f"holds {len(calls):,} calls, more than {MAX_CALLS:,}; split it")
    names = [c.id for c in calls]
    twice = sorted(n for n, k in Counter(names).items() if k > 1)
    if twice:
        raise fail(str(path), f"two calls are named {twice[0]!r}; rename one file")
    if span is None:
        return calls
    found = [c for c in calls if c.id == span]
    if not found:
        shown = ", ".join(names[:8]) + (" ..." if len(names) > 8 else "")
        raise ConfigError(
            f"no call is named {span!r} in {path}; its calls: {shown}", field="--span"
        )
    return found
