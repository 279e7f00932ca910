r"""Escaping and the page shell every page shares.

Every text that comes from a record goes through :func:`esc` (or :func:`text_block` for
outputs): HTML's special characters are escaped, and characters that would hide or disguise
text — control characters, lone surrogates, bidirectional overrides — are shown as visible
escapes (``\x1b``, ``\u202e``). No record text is ever placed in a script or a style; the
one script (the live panel's poller) is a file of this package, and the pages'
Content-Security-Policy lets no other run.

Every text is bounded: :func:`esc` shows at most :data:`TEXT_LIMIT` characters of a value and
:func:`text_block` its ``limit``, each cut marked with the original length (``… (truncated,
450,000,000 chars)``), and a run of hidden characters is one marked span, so escaping grows a
text at most about sixfold. A link whose address would be longer than :data:`URL_LIMIT` (more
than the server accepts) is shown as text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from html import escape
from urllib.parse import urlencode

HIDDEN = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff"
    "\ud800-\udfff]"
)
HIDDEN_RUN = re.compile(f"{HIDDEN.pattern}+")
TEXT_LIMIT = 2_000
"""Characters of a record's value (a name, a note, a claim, a failure) shown on a page."""
URL_LIMIT = 8_000
"""The longest link a page writes: a longer one is shown as text (the server would refuse it)."""
"""Characters shown as escapes: C0 and C1 controls but tab and newline, zero-width and
bidirectional marks, line separators, the byte-order mark and lone surrogates."""

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em auto;max-width:1300px;
padding:0 1em;color:#222;line-height:1.4}
nav{font-size:.9em;margin-bottom:1em;color:#555}nav a{margin-right:.3em}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
td,th{border:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f4f4f4}.confirmed{color:#b00020;font-weight:600}.changed{background:#fff4e5}
.not-confirmed{color:#1b5e20}.inconclusive{color:#8a6d00}.muted{color:#777}
pre.out{white-space:pre-wrap;overflow-wrap:anywhere;margin:0;max-height:24em;overflow:auto;
font-size:1em;background:#fafafa;padding:.3em}
.ctl{background:#fde7e9;color:#b00020}.flip{border-left:3px solid #b00020}
table.side{table-layout:fixed;width:100%}table.side th:first-child{width:4em}
dl.live{display:grid;grid-template-columns:max-content 1fr;gap:.15em 1em}dl.live dt{color:#666}
.live-panel{border:1px solid #ccc;padding:.6em 1em;background:#f8fbff}
progress{width:20em}.note{background:#fffbe6;padding:.3em .6em}
form.filter{margin:.5em 0}details{margin:.2em 0}
"""

CSP = (
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; "
    "img-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
"""Only this package's own script runs; nothing is loaded from elsewhere."""


def _shown(match: re.Match[str]) -> str:
    return "".join(
        f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" for code in map(ord, match.group())
    )


def clip(text: str, limit: int) -> tuple[str, str]:
    """(the first ``limit`` characters of ``text``, the cut's marker or ``""``)."""
    if len(text) <= limit:
        return text, ""
    return text[:limit], f" … (truncated, {len(text):,} chars)"


def visible(value: object, limit: int = TEXT_LIMIT) -> str:
    """``value`` as text, at most ``limit`` characters (the cut marked), with hidden
    characters written as escapes (not yet HTML-escaped).
    """
    shown, cut = clip(str(value), limit)
    return HIDDEN.sub(_shown, shown) + cut


def esc(value: object) -> str:
    """``value`` as HTML text or attribute value: escaped, hidden characters shown."""
    return escape(visible(value), quote=True)


def text_block(value: str, limit: int) -> str:
    """An output as a ``<pre>``: at most ``limit`` characters (the cut marked), hidden ones
    marked (a run of them as one span).
    """
    shown, cut = clip(value, limit)
    parts = []
    last = 0
    for match in HIDDEN_RUN.finditer(shown):
        parts.append(escape(shown[last : match.start()], quote=True))
        parts.append(f'<span class="ctl">{escape(_shown(match))}</span>')
        last = match.end()
    parts.append(escape(shown[last:], quote=True))
    marker = f'<span class="muted">{escape(cut)}</span>' if cut else ""
    return f'<pre class="out">{"".join(parts)}{marker}</pre>'


SURROGATE = re.compile("[\ud800-\udfff]")


def attr(value: object) -> str:
    """``value`` as a form field's value: escaped but kept as it is, so it submits unchanged
    (only lone surrogates, which no page can carry, are written as escapes).
    """
    return escape(SURROGATE.sub(_shown, str(value)), quote=True)


def href(path: str, **params: object) -> str:
    """A link to one of the viewer's pages, escaped for an attribute."""
    query = urlencode({k: str(v) for k, v in params.items() if v is not None and v != ""})
    return escape(f"{path}?{query}" if query else path, quote=True)


def link(path: str, label: object, **params: object) -> str:
    """``<a>`` to one of the viewer's pages; only the label, marked, when the address would be
    longer than :data:`URL_LIMIT`.
    """
    too_long = sum(len(str(v)) for v in params.values()) > URL_LIMIT
    target = "" if too_long else href(path, **params)
    if too_long or len(target) > URL_LIMIT:
        return f'{esc(label)} <span class="muted">(too long to link)</span>'
    return f'<a href="{target}">{esc(label)}</a>'


def verdict_span(verdict: str | None) -> str:
    """A verdict word, styled by its value (``—`` for none)."""
    if verdict is None:
        return '<span class="muted">—</span>'
    return f'<span class="{esc(verdict)}">{esc(verdict)}</span>'


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], cls: str = "") -> str:
    """A table; ``headers`` are plain words, the cells are HTML already."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    attr = f' class="{esc(cls)}"' if cls else ""
    return f"<table{attr}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def pager(total: int, page: int, per_page: int, path: str, **params: object) -> str:
    """``rows 101-200 of 9,000; page 2 of 90`` with previous / next links."""
    pages = max(1, -(-total // per_page))
    first = (page - 1) * per_page + 1 if total else 0
    last = min(total, page * per_page)
    parts = [f"rows {first:,}-{last:,} of {total:,}; page {page:,} of {pages:,}"]
    if page > 1:
        parts.append(link(path, "previous", **params, page=page - 1))
    if page < pages:
        parts.append(link(path, "next", **params, page=page + 1))
    return f'<p class="pager">{" · ".join(parts)}</p>'


def page(title: str, body: str, *, crumbs: Sequence[str] = (), live: bool = False) -> str:
    """A whole page: ``crumbs`` are HTML links above the title; ``live`` adds the poller."""
    nav = " / ".join([link("/", "run directories"), *crumbs])
    script = '<script src="/static/live.js" defer></script>' if live else ""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)} · counterfact view</title><style>{STYLE}</style>{script}</head>"
        f"<body><nav>{nav}</nav><h1>{esc(title)}</h1>{body}</body></html>"
    )
