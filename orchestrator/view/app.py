"""The viewer's routes (starlette): GET only, every run named by its id in the catalog.

``/`` the run directories; ``/sweep?run=`` one sweep; ``/arm?run=&arm=`` its questions;
``/question?run=&arm=&q=`` outputs side by side; ``/output?...&seed=`` one whole output as
text; ``/compare?a=&b=`` two directories compared; ``/report?run=`` the static report (in a
sandbox); ``/api/live?run=`` the live state as JSON; ``/static/live.js`` the poller.

Every response carries a Content-Security-Policy that lets only the poller run, and a request
whose ``Host`` is not the address served is refused (a web page elsewhere cannot reach the
viewer through DNS rebinding).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from counterfact.orchestrator.view.arm import arm_page
from counterfact.orchestrator.view.catalog import Catalog
from counterfact.orchestrator.view.compare import compare_page
from counterfact.orchestrator.view.files import Unreadable, read_whole
from counterfact.orchestrator.view.html import CSP, esc, page
from counterfact.orchestrator.view.live import SCRIPT, payload
from counterfact.orchestrator.view.pages import list_page, sweep_page
from counterfact.orchestrator.view.question import question_page, run_record
from counterfact.orchestrator.view.rundir import RunView
from counterfact.records.paths import RunPaths

REPORT_CSP = (
    "sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline'; "
    "style-src 'unsafe-inline'; img-src data:"
)
"""report.html is self-contained (inline styles, SVG and its table script): it runs sandboxed,
in an origin of its own that cannot call the viewer."""
REPORT_LIMIT = 256 << 20
HEADERS = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}


class _Headers:
    """Adds the security headers (and the CSP, unless a route set its own) to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {k.lower() for k, _ in headers}
                extra = {**HEADERS, "content-security-policy": CSP}
                headers += [
                    (k.encode(), v.encode()) for k, v in extra.items() if k.encode() not in names
                ]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, sending)


def finite(value: Any) -> Any:
    """``value`` with every Infinity or NaN float as text (``"inf"``, ``"-inf"``, ``"nan"``):
    JSON has no such numbers, and a record may hold them.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value


class _JSON(JSONResponse):
    """JSON whose non-finite numbers are written as text (plain JSON refuses them)."""

    def render(self, content: Any) -> bytes:
        return json.dumps(finite(content), ensure_ascii=False, separators=(",", ":")).encode()


def _unreadable(request: Request, exc: Exception) -> Response:
    """A record file the page needs cannot be read: 422, saying which and why."""
    body = f"<p>A record file of this run directory cannot be read: {esc(exc)}</p>"
    return HTMLResponse(page("Cannot read a record", body), status_code=422)


def _not_found(what: str) -> HTMLResponse:
    return HTMLResponse(page("Not found", f"<p>{esc(what)}</p>"), status_code=404)


def _page_number(request: Request) -> int:
    raw = request.query_params.get("page", "1")
    return max(1, min(int(raw), 10**9)) if raw.isdigit() else 1


class _Routes:
    """The handlers, over one catalog."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def _run(self, request: Request, key: str = "run") -> RunView | None:
        return self.catalog.get(request.query_params.get(key, ""))

    def index(self, request: Request) -> Response:
        listed = list_page(self.catalog.runs(), str(self.catalog.root))
        self.catalog.trim()
        return HTMLResponse(listed)

    def sweep(self, request: Request) -> Response:
        run = self._run(request)
        if run is None:
            return _not_found("No such run directory here.")
        with run.lock:
            return HTMLResponse(sweep_page(run))

    def arm(self, request: Request) -> Response:
        run = self._run(request)
        q = request.query_params
        found = None
        if run is not None:
            arm, verdict, text = q.get("arm", ""), q.get("verdict", ""), q.get("q", "")
            with run.lock:
                found = arm_page(run, arm, verdict, text, _page_number(request))
        return _not_found("No such arm here.") if found is None else HTMLResponse(found)

    def question(self, request: Request) -> Response:
        run = self._run(request)
        q = request.query_params
        found = None
        if run is not None:
            with run.lock:
                found = question_page(
                    run, q.get("arm", ""), q.get("q", ""), q.get("base", ""), _page_number(request)
                )
        return _not_found("No such question here.") if found is None else HTMLResponse(found)

    def output(self, request: Request) -> Response:
        run = self._run(request)
        q = request.query_params
        seed = q.get("seed", "")
        record, progress = None, ""
        if run is not None and seed.isdigit():
            with run.lock:
                progress = run.indexed().progress()
                record = run_record(run, q.get("arm", ""), q.get("q", ""), int(seed))
        if record is None and progress:
            reply = f"not found yet: {progress}; retry in a moment"
            return PlainTextResponse(reply, status_code=503, headers={"retry-after": "1"})
        if record is None or record.output is None:
            return PlainTextResponse("no such output", status_code=404)
        return PlainTextResponse(record.output)

    def compare(self, request: Request) -> Response:
        a, b = self._run(request, "a"), self._run(request, "b")
        if a is None or b is None:
            return _not_found("Name two run directories of this viewer: /compare?a=...&b=...")
        arm = request.query_params.get("arm", "")
        first, second = sorted((a, b), key=lambda r: r.id)  # one order: no deadlock
        with first.lock, second.lock:
            return HTMLResponse(compare_page(a, b, arm, _page_number(request)))

    def report(self, request: Request) -> Response:
        run = self._run(request)
        try:
            report = None if run is None else RunPaths(run.entry.path).report
            data = None if report is None else read_whole(report, REPORT_LIMIT)
        except Unreadable as exc:
            return _not_found(str(exc))
        if data is None:
            return _not_found("No report.html in this run directory.")
        return HTMLResponse(data, headers={"content-security-policy": REPORT_CSP})

    def live(self, request: Request) -> Response:
        run = self._run(request)
        if run is None:
            return _JSON({"error": "no such run directory"}, status_code=404)
        try:
            state = run.live()
        except Unreadable as exc:
            return _JSON({"error": str(exc)}, status_code=422)
        if state is None:
            return _JSON({"error": "this sweep wrote no live.json"}, status_code=404)
        return _JSON(payload(state))

    def script(self, request: Request) -> Response:
        return Response(SCRIPT, media_type="text/javascript")

    def routes(self) -> list[Route]:
        table: Sequence[tuple[str, Callable[[Request], Response]]] = (
            ("/", self.index),
            ("/sweep", self.sweep),
            ("/arm", self.arm),
            ("/question", self.question),
            ("/output", self.output),
            ("/compare", self.compare),
            ("/report", self.report),
            ("/api/live", self.live),
            ("/static/live.js", self.script),
        )
        return [Route(path, handler, methods=["GET"]) for path, handler in table]


def loopback_hosts(host: str) -> list[str]:
    """The ``Host`` headers accepted when serving on ``host``: every name of this machine's
    loopback, the address itself, or any for a wildcard address (``0.0.0.0``, ``::``).
    """
    if host in {"0.0.0.0", "::", ""}:
        return ["*"]
    return sorted({"127.0.0.1", "localhost", "[::1]", "::1", host, f"[{host}]"})


def build_app(catalog: Catalog, host: str = "127.0.0.1") -> Starlette:
    """The viewer as an ASGI application over ``catalog``, served on ``host``."""
    middleware = [
        Middleware(_Headers),
        Middleware(TrustedHostMiddleware, allowed_hosts=loopback_hosts(host)),
    ]
    return Starlette(
        routes=_Routes(catalog).routes(),
        middleware=middleware,
        exception_handlers={Unreadable: _unreadable},
    )
