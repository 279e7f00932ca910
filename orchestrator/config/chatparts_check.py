"""A chat sweep's parts checked before any run: every recorded request (``runner.call``) is a
request, and every id an arm ablates names a part of what each scenario sends.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from counterfact.exceptions import ConfigError
from counterfact.orchestrator.runners.chatparts import covers, query_ids, split, unknown
from counterfact.orchestrator.runners.chatplan import ChatPlan
from counterfact.probes.arms import ArmSpec
from counterfact.probes.scenarios import ScenarioSpec


def _request(plan: ChatPlan, sc: ScenarioSpec, origin: str) -> list[dict[str, object]]:
    try:
        messages, _ = plan.request(sc.inputs)
    except ValueError as exc:
        field = f"scenario {sc.id!r} input {plan.call!r}" if plan.call else origin
        raise ConfigError(str(exc), field=field) from exc
    return messages


def check_parts(
    plans: Sequence[ChatPlan],
    arms: Sequence[ArmSpec],
    origins: Sequence[str],
    scenarios: Sequence[ScenarioSpec],
) -> None:
    """Refuse a recorded request that cannot be sent, or an ablation id that names no part.

    Raises:
        ConfigError: names the scenario, the arm and the closest known part id.
    """
    for plan, arm, origin in zip(plans, arms, origins, strict=True):
        if plan.call is None and not arm.ablations:
            continue
        for sc in scenarios:
            messages = _request(plan, sc, origin)
            if not arm.ablations:
                continue
            parts = split(messages, plan.level)
            missing = unknown(arm.ablations, parts)
            if missing:
                known = [p.id for p in parts]
                close = difflib.get_close_matches(missing[0], known, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                msg = (
                    f"arm {arm.id!r} ablates {missing[0]!r}{hint}, which is no part of what "
                    f"scenario {sc.id!r} sends at runner.parts {plan.level!r}; its parts are "
                    f"{_listed(known)}"
                )
                raise ConfigError(msg, field=f"{origin}.ablations")


def suspect_parts(
    plan: ChatPlan, sc: ScenarioSpec, suspects: Sequence[str] | str, keep: Sequence[str]
) -> list[str]:
    """The bisection's suspects over a chat request: ``all`` expanded to every part but the
    question and ``keep``, in the order sent; named ids checked against the parts.

    Raises:
        ConfigError: an id that names no part, or fewer than two suspects.
    """
    messages = _request(plan, sc, "runner")
    parts = split(messages, plan.level)
    for field, ids in (
        ("bisect.keep", keep),
        ("bisect.suspects", [] if suspects == "all" else suspects),
    ):
        missing = unknown(ids, parts)
        if missing:
            close = difflib.get_close_matches(missing[0], [p.id for p in parts], n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            msg = (
                f"{missing[0]!r}{hint} is no part of what scenario {sc.id!r} sends at "
                f"runner.parts {plan.level!r}; its parts are {_listed([p.id for p in parts])}"
            )
            raise ConfigError(msg, field=field)
    if suspects != "all":
        return list(suspects)
    held = set(query_ids(messages, plan.level))
    found = [p.id for p in parts if p.id not in held and not any(covers(k, p.id) for k in keep)]
    if len(found) < 2:
        msg = (
            f"scenario {sc.id!r} sends {len(parts)} part(s) at runner.parts {plan.level!r}, "
            f"{len(found)} of them suspects once the question and bisect.keep are set aside; "
            "there is nothing to search between. Cut finer (runner.parts: sentences) or keep less"
        )
        raise ConfigError(msg, field="bisect.suspects")
    return found


def _listed(ids: Sequence[str]) -> str:
    return ", ".join(ids[:12]) + (" ..." if len(ids) > 12 else "")
