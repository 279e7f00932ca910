"""Two run directories compared: which arms and which questions changed verdict (the before and
after of a pull request).

Arms pair by id, questions by (question id, arm); baseline rows have no verdict and are left out.
A question present on one side only counts as changed (``absent`` on the other).
"""

from __future__ import annotations

from dataclasses import dataclass

from counterfact.orchestrator.view.files import Unreadable
from counterfact.orchestrator.view.html import esc, link, page, pager, table, verdict_span
from counterfact.orchestrator.view.index import Row
from counterfact.orchestrator.view.rundir import RunView
from counterfact.records.arms import ArmVerdictRecord

PER_PAGE = 100
ABSENT = "absent"


@dataclass(frozen=True)
class Change:
    """One (question, arm) whose verdict differs between the two directories."""

    scenario: str
    arm: str
    before: str | None
    """The verdict before (:data:`ABSENT` when the question or arm was not there)."""
    after: str | None


def arm_pairs(
    a: RunView, b: RunView
) -> list[tuple[str, ArmVerdictRecord | None, ArmVerdictRecord | None]]:
    """Every challenger of either side with its arm-level verdict on each (None: absent)."""
    before = {r.arm: r for r in a.arms()}
    after = {r.arm: r for r in b.arms()}
    return [(arm, before.get(arm), after.get(arm)) for arm in dict.fromkeys([*after, *before])]


def question_changes(a: RunView, b: RunView, arm: str = "") -> tuple[list[Change], int]:
    """The (question, arm) rows whose verdict changed, and how many compared the same (of one
    arm, when ``arm`` is given).
    """

    def kept(row: Row) -> bool:
        return not row.is_baseline and (not arm or row.arm == arm)

    before = {k: r.verdict for k, r in a.verdicts.rows.items() if kept(r)}
    after = {k: r.verdict for k, r in b.verdicts.rows.items() if kept(r)}
    changed = []
    same = 0
    for key in dict.fromkeys([*after, *before]):
        old, new = before.get(key, ABSENT), after.get(key, ABSENT)
        if old == new:
            same += 1
        else:
            changed.append(Change(key[0], key[1], old, new))
    return changed, same


def _arm_table(a: RunView, b: RunView) -> str:
    rows = []
    for arm, old, new in arm_pairs(a, b):
        was = ABSENT if old is None else old.verdict
        now = ABSENT if new is None else new.verdict
        mark = '<strong class="changed">changed</strong>' if was != now else "same"
        rows.append(
            [
                link("/compare", arm, a=a.id, b=b.id, arm=arm),
                verdict_span(was) if old else esc(ABSENT),
                verdict_span(now) if new else esc(ABSENT),
                mark,
            ]
        )
    if not rows:
        return "<p>Neither directory has arm-level verdicts yet.</p>"
    return table(("arm", "before", "after", "changed"), rows, "arm-changes")


def _question_rows(a: RunView, b: RunView, changes: list[Change]) -> list[list[str]]:
    rows = []
    for c in changes:
        old = verdict_span(c.before) if c.before != ABSENT else esc(ABSENT)
        new = verdict_span(c.after) if c.after != ABSENT else esc(ABSENT)
        if c.before != ABSENT:
            old = link("/question", c.before, run=a.id, arm=c.arm, q=c.scenario)
        if c.after != ABSENT:
            new = link("/question", c.after, run=b.id, arm=c.arm, q=c.scenario)
        rows.append([esc(c.scenario), esc(c.arm), old, new])
    return rows


def compare_page(a: RunView, b: RunView, arm: str, number: int) -> str:
    """The comparison: arm-level verdicts, then the questions that changed (paged)."""
    title = f"{a.id} → {b.id}"
    try:
        a.indexed()
        b.indexed()
        arms = _arm_table(a, b)
        changes, same = question_changes(a, b, arm)
    except Unreadable as exc:
        return page(title, f"<p>unreadable: {esc(exc)}</p>")
    shown = changes[(number - 1) * PER_PAGE : number * PER_PAGE]
    sides = (
        f"<p>Before: {link('/sweep', a.id, run=a.id)} ({esc(a.name())}); "
        f"after: {link('/sweep', b.id, run=b.id)} ({esc(b.name())}).</p>"
    )
    counts = (
        f'<p class="counts">{len(changes):,} question verdict(s) changed'
        f"{' for arm ' + esc(arm) if arm else ''}; {same:,} the same.</p>"
    )
    headers = ("question", "arm", "before", "after")
    questions = table(headers, _question_rows(a, b, shown), "q-changes")
    paging = pager(len(changes), number, PER_PAGE, "/compare", a=a.id, b=b.id, arm=arm)
    body = sides + "<h2>Arms</h2>" + arms + "<h2>Questions that changed verdict</h2>"
    return page(title, body + counts + paging + questions)
