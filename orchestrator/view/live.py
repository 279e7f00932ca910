"""The live panel of a running sweep: its fields in words, the JSON the page polls, and the
script that polls it.

The server formats every field (``12 of 32 (38%)``, ``8 of at most 16``, ``1 min``), so the
script only copies strings into elements with ``textContent`` — it never parses or inserts HTML.
It polls ``/api/live`` every second and stops once the sweep has ended, saying to reload for the
verdicts.
"""

from __future__ import annotations

from typing import Any

from counterfact.orchestrator.view.html import esc, href
from counterfact.orchestrator.view.rundir import ACTIVE, age_s, duration, stale_note
from counterfact.records.live import LiveState

POLL_MS = 1000
"""How often the page asks for the live state."""

FIELDS = (
    ("status", "status"),
    ("runs", "runs done"),
    ("failed", "failed"),
    ("in_flight", "in flight"),
    ("waited_429", "429s waited"),
    ("concurrency", "concurrency"),
    ("spend", "spend"),
    ("rate", "rate"),
    ("eta", "ETA"),
    ("updated", "updated"),
)
"""(key, label) of each line of the panel, in order."""


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.4g}"


def _spend(live: LiveState) -> str:
    if not live.spend and not live.budget:
        return "none reported"
    parts = []
    for unit in [*live.spend, *(u for u in live.budget if u not in live.spend)]:
        spent = _number(live.spend.get(unit, 0.0))
        limit = live.budget.get(unit)
        parts.append(f"{unit} {spent}" + (f" of {_number(limit)}" if limit is not None else ""))
    return "; ".join(parts)


def _concurrency(live: LiveState) -> str:
    if live.concurrency is None:
        return "not limited" if live.concurrency_max is None else f"at most {live.concurrency_max}"
    ceiling = f" of at most {live.concurrency_max}" if live.concurrency_max is not None else ""
    return f"{live.concurrency}{ceiling}"


def _status(live: LiveState, age: float | None) -> str:
    note = stale_note(live, age)
    return live.status if note is None else f"{live.status} ({note})"


def fields(live: LiveState) -> dict[str, str]:
    """Every panel line of ``live`` in words."""
    age = age_s(live.updated_at)
    share = f" ({live.runs_done / live.runs_planned:.0%})" if live.runs_planned else ""
    rate = "—" if live.runs_per_s is None else f"{live.runs_per_s:,.3g} runs/s"
    eta = "—" if live.eta_s is None else duration(live.eta_s)
    ago = "" if age is None else f"{duration(age)} ago, "
    return {
        "status": _status(live, age),
        "runs": f"{live.runs_done:,} of {live.runs_planned:,}{share}",
        "failed": f"{live.runs_failed:,}",
        "in_flight": f"{live.in_flight:,}",
        "waited_429": f"{live.waited_429:,}",
        "concurrency": _concurrency(live),
        "spend": _spend(live),
        "rate": rate,
        "eta": eta,
        "updated": f"{ago}{live.updated_at}",
    }


def payload(live: LiveState) -> dict[str, Any]:
    """What ``/api/live`` answers: the fields, the done fraction, and whether it ended."""
    fraction = min(1.0, live.runs_done / live.runs_planned) if live.runs_planned else None
    return {
        "status": live.status,
        "ended": live.status not in ACTIVE,
        "fraction": fraction,
        "fields": fields(live),
        "state": live.model_dump(mode="json"),
    }


def panel(run_id: str, live: LiveState) -> str:
    """The panel's HTML, filled with ``live`` now and updated by the script after."""
    shown = fields(live)
    rows = "".join(
        f'<dt>{esc(label)}</dt><dd data-live="{key}">{esc(shown[key])}</dd>'
        for key, label in FIELDS
    )
    fraction = payload(live)["fraction"]
    bar = f'<progress max="1" value="{fraction:.4f}"></progress>' if fraction is not None else ""
    return (
        f'<section class="live-panel" data-live-url="{href("/api/live", run=run_id)}" '
        f'data-status="{esc(live.status)}"><h2>Live</h2>{bar}<dl class="live">{rows}</dl>'
        '<p class="note" data-live="note" hidden></p></section>'
    )


SCRIPT = f"""\
"use strict";
(function () {{
  function show(panel, key, text) {{
    panel.querySelectorAll('[data-live="' + key + '"]').forEach(function (el) {{
      el.textContent = text;
      el.hidden = false;
    }});
  }}
  function watch(panel) {{
    var url = panel.getAttribute("data-live-url");
    var timer = null;
    var polls = 0;
    function tick() {{
      fetch(url, {{cache: "no-store"}}).then(function (reply) {{
        if (!reply.ok) {{ throw new Error("HTTP " + reply.status); }}
        return reply.json();
      }}).then(function (state) {{
        polls += 1;
        panel.setAttribute("data-polls", String(polls));
        panel.setAttribute("data-status", state.status);
        Object.keys(state.fields).forEach(function (key) {{
          show(panel, key, String(state.fields[key]));
        }});
        var bar = panel.querySelector("progress");
        if (bar && typeof state.fraction === "number") {{ bar.value = state.fraction; }}
        if (state.ended) {{
          clearInterval(timer);
          show(panel, "note", "The sweep has ended (" + state.status +
            "): reload the page for its verdicts.");
        }}
      }}).catch(function (err) {{
        show(panel, "note", "Live state unavailable (" + err.message + "); retrying.");
      }});
    }}
    timer = setInterval(tick, {POLL_MS});
    tick();
  }}
  document.querySelectorAll("[data-live-url]").forEach(watch);
}})();
"""
"""``/static/live.js``: polls each live panel's ``data-live-url`` and fills its fields."""
