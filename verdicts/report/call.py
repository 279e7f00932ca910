"""The blamed call on the report page: its messages, part by part, the culprits marked.

Each message is drawn with its parts in the order sent: a culprit part highlighted and labelled
with its id, a part that was searched plain, a part that was not (the question, ``--keep``)
greyed. Text is escaped: a recorded call is data from elsewhere.
"""

from __future__ import annotations

from html import escape
from itertools import groupby

from counterfact.records.blame import BlameRecord, PartRecord

CALL_STYLE = """
.call{border:1px solid #ddd;border-radius:4px;padding:.4em .7em;margin:.5em 0}
.call .role{font-size:.8em;color:#666;text-transform:uppercase}
.call p{margin:.3em 0;white-space:pre-wrap}.call mark{background:#ffd6d6;padding:0 .15em}
.call .kept{color:#888}.call .pid{font-size:.75em;color:#b00020;margin-left:.3em}
"""


def _part(part: PartRecord, culprits: set[str]) -> str:
    text = escape(part.text)
    if part.id in culprits:
        return f'<p><mark>{text}</mark><span class="pid">{escape(part.id)}</span></p>'
    if not part.suspect:
        return f'<p class="kept" title="{escape(part.id)}: not a suspect">{text}</p>'
    return f'<p title="{escape(part.id)}">{text}</p>'


def call_section(record: BlameRecord) -> str:
    """The call's messages with its culprit parts marked."""
    culprits = {p for c in record.culprits for p in c}
    boxes = []
    for index, parts in groupby(record.parts, key=lambda p: p.message):
        items = list(parts)
        role = escape(items[0].role)
        body = "".join(_part(p, culprits) for p in items)
        boxes.append(f'<div class="call"><div class="role">m{index} · {role}</div>{body}</div>')
    answer = record.replay.recorded_answer
    shown = f"<p>Recorded answer: <code>{escape(answer)}</code></p>" if answer else ""
    expect = f"<p>Expected: <code>{escape(record.expect)}</code></p>" if record.expect else ""
    return (
        f"<style>{CALL_STYLE}</style><h2>The call: {escape(record.call)} "
        f"({escape(record.model)})</h2>{shown}{expect}"
        '<p class="claim">Culprit parts are marked; greyed parts were not searched (the question, '
        "--keep).</p>" + "".join(boxes)
    )
