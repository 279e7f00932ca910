"""``report.html``'s per-question detail for a large eval set: every (question, arm) row in one
compact table, filtered and paged in the page itself, and full sections only for the questions
that moved most.

Up to :data:`SECTIONS_UP_TO` questions the page keeps a section and a figure per question (see
:mod:`~counterfact.verdicts.report.scenario`). Above that, a figure per question is what made the
page slow (about 155 CPU-ms each) and large, and nobody reads ten thousand of them: the rows go
into the page as one JSON block, drawn a page at a time by a small inline script (no network,
no library), with a filter box, an arm and a verdict choice, an order, and a link form
(``report.html#q=q12&arm=c1&verdict=confirmed``) that opens the page filtered. The questions
that moved most (each challenger's ``notable``) keep their sections, at most
:data:`NOTABLE_SECTIONS` of them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import Any

from counterfact.records.arms import ArmVerdictRecord
from counterfact.records.verdicts import VerdictRecord

SECTIONS_UP_TO = 20
"""Questions up to which every question gets its section and figure."""
NOTABLE_SECTIONS = 10
"""Questions given a section (and a figure) above :data:`SECTIONS_UP_TO`."""
PAGE_ROWS = 100
"""Rows per page of the per-question table."""
SIGNIFICANT_DIGITS = 3
"""p-values in the inline data are rounded to this many significant digits."""


def sectioned(rows: Sequence[VerdictRecord], arms: Sequence[ArmVerdictRecord]) -> list[str]:
    """The questions that get a section: every one of a small sweep; above
    :data:`SECTIONS_UP_TO`, the challengers' most-moved questions taken in turn (each arm's
    first, then each arm's second, ...), at most :data:`NOTABLE_SECTIONS`.
    """
    questions = list(dict.fromkeys(r.scenario for r in rows))
    if len(questions) <= SECTIONS_UP_TO:
        return questions
    known = set(questions)
    picked: dict[str, None] = {}
    lists = [a.notable for a in arms]
    for rank in range(max((len(x) for x in lists), default=0)):
        for moves in lists:
            if rank < len(moves) and moves[rank].question in known:
                picked.setdefault(moves[rank].question)
            if len(picked) == NOTABLE_SECTIONS:
                return list(picked)
    return list(picked)


def is_compact(rows: Sequence[VerdictRecord]) -> bool:
    """More questions than get a section each: the page uses the compact table."""
    return len({r.scenario for r in rows}) > SECTIONS_UP_TO


def _p(row: VerdictRecord) -> float | None:
    if row.test is None:
        return None
    p = row.test.p_adjusted if row.test.p_adjusted is not None else row.test.p_value
    return float(f"{p:.{SIGNIFICANT_DIGITS}g}")


def table_data(rows: Sequence[VerdictRecord]) -> dict[str, Any]:
    """The rows, columnar and indexed: each question id and each word (arm, tier, reason, test,
    standing, check) once, each row a list of small numbers — about 30 bytes a row, so 10,000
    questions x 10 arms stay a few MB.
    """
    questions: dict[str, int] = {}
    words: dict[str, int] = {}

    def word(text: str) -> int:
        return words.setdefault(text, len(words))

    table = []
    for r in rows:
        tier = "baseline" if r.is_baseline else str(r.verdict)
        stat = r.statistical_verdict or ("withheld" if r.statistical_verdict_withheld else "")
        doubts = len(r.reasons)
        table.append(
            [
                questions.setdefault(r.scenario, len(questions)),
                word(r.arm),
                word(tier),
                word(r.reason or ""),
                word(stat),
                r.flips,
                r.samples,
                _p(r),
                word(f"{r.standing} ({doubts})" if doubts else r.standing),
                word(r.check or ""),
            ]
        )
    return {"questions": list(questions), "words": list(words), "rows": table}


def _inline_json(data: object) -> str:
    """JSON safe inside ``<script>``: no ``<``, ``>`` or ``&`` survive as such (a question id
    ``</script>`` stays text).
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


COLUMNS = (
    "question",
    "arm",
    "verdict",
    "reason",
    "test",
    "flips",
    "p (adj.)",
    "standing",
    "check",
)

SCRIPT = """
(function(){
var PAGE=__PAGE_ROWS__;
var D=JSON.parse(document.getElementById("cf-data").textContent),W=D.words,Q=D.questions;
var el=function(id){return document.getElementById(id);};
var box=el("cf-filter"),arm=el("cf-arm"),ver=el("cf-verdict"),ord=el("cf-order");
var body=el("cf-rows"),info=el("cf-info"),page=0,shown=[];
function cells(r){return [Q[r[0]],W[r[1]],W[r[2]],W[r[3]],W[r[4]],
 r[5]===null?"n/a":r[5]+"/"+r[6],r[7]===null?"":String(r[7]),W[r[8]],W[r[9]]];}
function options(sel,col){var seen={};D.rows.forEach(function(r){seen[W[r[col]]]=1;});
 Object.keys(seen).sort().forEach(function(k){var o=document.createElement("option");
 o.value=k;o.textContent=k;sel.appendChild(o);});}
options(arm,1);options(ver,2);
function apply(){var terms=box.value.toLowerCase().split(/\\s+/).filter(Boolean);
 shown=D.rows.filter(function(r){
  if(arm.value&&W[r[1]]!==arm.value)return false;
  if(ver.value&&W[r[2]]!==ver.value)return false;
  if(!terms.length)return true;
  var c=cells(r).map(function(v){return v.toLowerCase();}),text=c.join(" ");
  return terms.every(function(t){var q=t.length>2&&t[0]==='"'&&t[t.length-1]==='"';
   return q?c.indexOf(t.slice(1,-1))>=0:text.indexOf(t)>=0;});});
 if(ord.value==="p")shown.sort(function(a,b){return (a[7]===null?2:a[7])-(b[7]===null?2:b[7]);});
 if(ord.value==="flips")shown.sort(function(a,b){return (b[5]||0)-(a[5]||0);});
 page=0;draw();}
function draw(){var n=shown.length,pages=Math.max(1,Math.ceil(n/PAGE));
 page=Math.min(Math.max(page,0),pages-1);body.textContent="";
 shown.slice(page*PAGE,(page+1)*PAGE).forEach(function(r){
  var tr=document.createElement("tr"),c=cells(r);
  tr.setAttribute("data-scenario",c[0]);tr.setAttribute("data-arm",c[1]);
  c.forEach(function(v,i){var td=document.createElement("td");td.textContent=v;
   if(i===2||i===4||i===7)td.className=v.split(" ")[0];tr.appendChild(td);});
  body.appendChild(tr);});
 info.textContent=n?("rows "+(page*PAGE+1)+"-"+Math.min(n,(page+1)*PAGE)+" of "+n+
  (n<D.rows.length?" (filtered from "+D.rows.length+")":"")+"; page "+(page+1)+" of "+pages):
  "no row matches";}
el("cf-prev").onclick=function(){page--;draw();};el("cf-next").onclick=function(){page++;draw();};
box.oninput=apply;arm.onchange=apply;ver.onchange=apply;ord.onchange=apply;
var h=new URLSearchParams(location.hash.slice(1));
box.value=h.get("q")||"";arm.value=h.get("arm")||"";ver.value=h.get("verdict")||"";
apply();})();
"""


def detail_table(rows: Sequence[VerdictRecord]) -> str:
    """Every (question, arm) row: the data inline, a filter, paging, and the script."""
    head = "".join(f"<th>{escape(c)}</th>" for c in COLUMNS)
    questions = len({r.scenario for r in rows})
    controls = (
        '<p class="controls"><input id="cf-filter" type="search" size="30" '
        'placeholder="filter: question, arm, verdict…" aria-label="filter rows"> '
        '<select id="cf-arm" aria-label="arm"><option value="">every arm</option></select> '
        '<select id="cf-verdict" aria-label="verdict"><option value="">every verdict</option>'
        '</select> <select id="cf-order" aria-label="order"><option value="">question order'
        '</option><option value="p">p, smallest first</option><option value="flips">flips, '
        'most first</option></select> <button id="cf-prev" type="button">previous</button> '
        '<button id="cf-next" type="button">next</button> <span id="cf-info"></span></p>'
    )
    script = SCRIPT.replace("__PAGE_ROWS__", str(PAGE_ROWS))
    return (
        f'<h2 id="questions">Every question ({questions:,} questions, {len(rows):,} rows)</h2>'
        "<p>Each question's verdict per arm (the baseline's row too). Type to filter: every "
        "word must be part of a cell (<code>q12 c1</code>), a word in double quotes must be a "
        'whole cell (<code>"q12"</code> is not q120); pick an arm or a verdict, order by p or '
        "flips. A link such as <code>report.html#q=q12&amp;arm=c1&amp;verdict=confirmed</code> "
        "opens the page filtered. The same rows are in <code>verdicts.jsonl</code>.</p>"
        f"{controls}<noscript><p>This table is drawn by the page's inline script; with "
        "scripts off, read <code>verdicts.jsonl</code>.</p></noscript>"
        f'<table class="verdicts compact"><thead><tr>{head}</tr></thead>'
        '<tbody id="cf-rows"></tbody></table>'
        f'<script type="application/json" id="cf-data">{_inline_json(table_data(rows))}'
        f"</script><script>{script}</script>"
    )
