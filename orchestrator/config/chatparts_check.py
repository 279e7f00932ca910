"""A chat sweep's parts checked before any run: every recorded request (``runner.call``) is a
request, every scenario's passages (``inputs.context``) are passages, every id an arm ablates
names a part of what each scenario sends, and every id it restores an optional passage.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from counterfact.exceptions import ConfigError
from counterfact.orchestrator.runners.chatcontext import Passage, names_passages
from counterfact.orchestrator.runners.chatparts import messages_of, query_ids, split, suspects_in
from counterfact.orchestrator.runners.chatplan import ChatPlan
from counterfact.probes.ablation import covers
from counterfact.probes.arms import ArmSpec
from counterfact.probes.scenarios import ScenarioSpec


@dataclass(frozen=True)
class _Sent:
    """What one scenario sends under one plan."""

    parts: list[str]
    """Its part ids in the order sent, its passages (not the optional ones) among them."""
    known: list[str]
    """Every id an arm may name: the parts, whole messages, optional passages."""
    question: tuple[str, ...]
    passages: tuple[Passage, ...]


def _sent(plan: ChatPlan, sc: ScenarioSpec, origin: str) -> _Sent:
    try:
        messages, _ = plan.request(sc.inputs)
        passages = plan.passages(sc.inputs)
    except ValueError as exc:
        field = f"scenario {sc.id!r} input {plan.call!r}" if plan.call else origin
        raise ConfigError(str(exc), field=field) from exc
    parts = suspects_in(messages, plan.level, passages)
    optional = [p.part for p in passages or () if p.optional]
    known = parts + optional + messages_of(split(messages, plan.level))
    return _Sent(parts, known, query_ids(messages, plan.level), tuple(passages or ()))


def _unknown(what: str, ids: Sequence[str], sent: _Sent, where: str) -> str:
    close = difflib.get_close_matches(ids[0], sent.known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    subject = f"{what} {ids[0]!r}{hint}, which is" if what else f"{ids[0]!r}{hint} is"
    return f"{subject} no part of what {where}; its parts are {_listed(sent.parts)}"


def check_parts(
    plans: Sequence[ChatPlan],
    arms: Sequence[ArmSpec],
    origins: Sequence[str],
    scenarios: Sequence[ScenarioSpec],
) -> None:
    """Refuse a request that cannot be sent, an ablation id that names no part, or a
    restoration that names no optional passage.

    Raises:
        ConfigError: names the scenario, the arm and the closest known part id.
    """
    checked: set[tuple[str, ...]] = set()
    for plan, arm, origin in zip(plans, arms, origins, strict=True):
        templates = tuple(t for _, t in plan.templates())
        named = plan.call is not None or arm.ablations or arm.restorations
        if not named and (not names_passages(templates) or templates in checked):
            continue  # nothing this arm names; each set of templates' passages checked once
        checked.add(templates)
        for sc in scenarios:
            sent = _sent(plan, sc, origin)
            where = f"scenario {sc.id!r} sends at runner.parts {plan.level!r}"
            missing = [a for a in arm.ablations if a not in sent.known]
            if missing:
                msg = _unknown(f"arm {arm.id!r} ablates", missing, sent, where)
                raise ConfigError(msg, field=f"{origin}.ablations")
            optional = {p.part for p in sent.passages if p.optional}
            extra = [r for r in arm.restorations if r not in optional]
            if extra:
                msg = (
                    f"arm {arm.id!r} restores {extra[0]!r}, which is no optional passage of "
                    f"scenario {sc.id!r} (restorations add back passages of inputs.context "
                    f"marked optional: {sorted(optional) or 'none'})"
                )
                raise ConfigError(msg, field=f"{origin}.restorations")


def suspect_parts(
    plan: ChatPlan, sc: ScenarioSpec, suspects: Sequence[str] | str, keep: Sequence[str]
) -> list[str]:
    """The bisection's suspects over a chat request: ``all`` expanded to every part but the
    question and ``keep``, in the order sent (a scenario's passages as ``context:<id>``);
    named ids checked against the parts.

    Raises:
        ConfigError: an id that names no part, or fewer than two suspects.
    """
    sent = _sent(plan, sc, "runner")
    where = f"scenario {sc.id!r} sends at runner.parts {plan.level!r}"
    named = [] if suspects == "all" else list(suspects)
    for field, ids in (("bisect.keep", keep), ("bisect.suspects", named)):
        missing = [i for i in ids if i not in sent.known]
        if missing:
            raise ConfigError(_unknown("", missing, sent, where), field=field)
    if suspects != "all":
        return named
    found = [
        i for i in sent.parts if i not in sent.question and not any(covers(k, i) for k in keep)
    ]
    if len(found) < 2:
        msg = (
            f"scenario {sc.id!r} sends {len(found)} suspect part(s) at runner.parts "
            f"{plan.level!r} once the question and bisect.keep are set aside; there is nothing "
            "to search between. Cut finer (runner.parts: sentences) or keep less"
        )
        raise ConfigError(msg, field="bisect.suspects")
    return found


def _listed(ids: Sequence[str]) -> str:
    return ", ".join(ids[:12]) + (" ..." if len(ids) > 12 else "")
