"""The model judge's ``judge.jsonl`` lines: one per call, written as it is answered and read
back on resume; a line that is not one this judge would write (another judge's, a torn one, an
edited one) is not trusted.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from counterfact.records.runs import MAX_RUN_COST


@dataclass(frozen=True)
class Judgment:
    """One judge call: its answer (None: not a verdict), the reply's start and what it cost."""

    key: str
    attempt: int
    """0 the judgment, 1 its recheck."""
    same: bool | None
    reply: str
    input_tokens: int
    output_tokens: int
    arm: str | None = None
    """The arm whose output asked for this call (it is charged to that arm's spend); None in
    lines written before it was kept, and for an output judged outside a batch."""

    def line(self, judge: str) -> str:
        """The ``judge.jsonl`` line."""
        return json.dumps({"judge": judge, **asdict(self)}, ensure_ascii=False)


def read_line(raw: str, identity: str) -> Judgment | None:
    """A ``judge.jsonl`` line of this judge, or None (another judge's, or a torn line)."""
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.pop("judge", None) != identity:
        return None
    try:
        found = Judgment(**data)
    except TypeError:
        return None
    return found if _well_typed(found) else None


def _well_typed(j: Judgment) -> bool:
    """A line read back holds what this judge writes: an edited or foreign one is not trusted
    (a 400-digit token count would overflow every cost from then on).
    """

    def count(n: object) -> bool:
        return isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= MAX_RUN_COST

    return (
        isinstance(j.key, str)
        and count(j.attempt)
        and (j.same is None or isinstance(j.same, bool))
        and isinstance(j.reply, str)
        and count(j.input_tokens)
        and count(j.output_tokens)
        and (j.arm is None or isinstance(j.arm, str))
    )
