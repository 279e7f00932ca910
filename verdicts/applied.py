"""A failed manifest check in words and reasons (rule 6), one wording for rows and bisections.

A manifest check fails two ways (:class:`~counterfact.probes.manifest.Application`):

- a manifest *contradicts* a declared facet (it reports another value): the arm, or the
  baseline, did not take effect (``arm-not-applied`` / ``baseline-not-applied``);
- every mismatch is a declared facet the manifests do not *report* (the key is absent): whether
  it took effect cannot be checked (``arm-facet-not-reported`` /
  ``baseline-facet-not-reported``), and the fix is to report the facet or not declare it.

Both withhold the verdict and the test: without a report an arm's effect is as unchecked as
with a contradicting one, and a verdict on it would rest on an assumption. Only the words and
the reason differ.
"""

from __future__ import annotations

from typing import Literal

from counterfact.probes.manifest import Application
from counterfact.records.vocabulary import Reason

NOT_APPLIED: tuple[Reason, ...] = (
    "arm-not-applied",
    "arm-facet-not-reported",
    "baseline-not-applied",
    "baseline-facet-not-reported",
)
"""Reasons under which the runs are not evidence about the arm: no test is reported."""

BASELINE_NOT_APPLIED: tuple[Reason, ...] = ("baseline-not-applied", "baseline-facet-not-reported")
"""The baseline's: no arm is judged against it."""


def check_failed(app: Application | None) -> bool:
    """The manifests were checked and did not show the declared facets."""
    return app is not None and app.checked and app.applied is False


def reason_of(app: Application, side: Literal["arm", "baseline"]) -> Reason:
    """The reason for a failed check: contradicted, or only not reported."""
    if side == "arm":
        return "arm-facet-not-reported" if app.unreported else "arm-not-applied"
    return "baseline-facet-not-reported" if app.unreported else "baseline-not-applied"


def _facet(path: str) -> str:
    return f"`{path}`"


def what_failed(who: str, app: Application) -> str:
    """The failed check in one sentence, naming the first facet by lowest seed.

    Contradicted: ``arm 'x' declared k='v', but its run manifests reported 'w' (mismatched in 5
    of 5 manifests).`` Not reported: ``arm 'x' declared temperature=0.2, but its run manifests
    do not report `temperature`: report `temperature` in the manifest, or do not declare it.``
    """
    if app.unreported:
        return _not_reported(who, app)
    first = next((m for m in app.mismatches if m.observed_present), app.mismatches[0])
    seen = repr(first.observed) if first.observed_present else "nothing (the key is absent)"
    distinct = len(app.mismatches) + app.mismatches_omitted
    other = f"; {distinct} distinct mismatches" if distinct > 1 else ""
    return (
        f"{who} declared {first.facet}={first.declared!r}, but its run manifests reported "
        f"{seen} (mismatched in {app.manifests_mismatched} of {app.manifests_seen} "
        f"manifests{other})."
    )


def _not_reported(who: str, app: Application) -> str:
    missing = app.unreported_facets
    declared = ", ".join(f"{m.facet}={m.declared!r}" for m in missing)
    names = ", ".join(_facet(m.facet) for m in missing)
    which = (
        "its run manifests"
        if app.manifests_mismatched == app.manifests_seen
        else f"{app.manifests_mismatched} of its {app.manifests_seen} run manifests"
    )
    it = "it" if len(missing) == 1 else "them"
    return (
        f"{who} declared {declared}, but {which} do not report {names}: report {names} in the "
        f"manifest, or do not declare {it}."
    )


def consequence(app: Application, who: str) -> str:
    """What the failure means for the evidence (``who``: ``The arm`` or ``The baseline``)."""
    if app.unreported:
        return f"Without the report, whether {who.lower()} took effect cannot be checked"
    return f"{who} did not take effect"
