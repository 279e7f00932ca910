"""Headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
JSON messages ended by NUL on file descriptors 3 and 4, as Puppeteer's pipe transport), with the
standard library only. For pages whose scripts must run over time (the viewer's live panel),
where ``--dump-dom`` gives one snapshot of a page that then closes.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from typing import Any

CHROMIUM = next(
    (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None
)


_NAVIGATING = (
    "navigated or closed",
    "Cannot find context",
    "Execution context was destroyed",
)
"""What Chromium answers when a page is asked something while it navigates away."""


class Browser:
    """One headless Chromium with one page; stop it with :meth:`close` (or ``with``)."""

    def __init__(self) -> None:
        assert CHROMIUM is not None
        self._profile = tempfile.TemporaryDirectory(prefix="cdp-", ignore_cleanup_errors=True)
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def child_fds() -> None:  # the pipe ends at 3 (commands in) and 4 (replies out)
            read_end, write_end = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        self.process = subprocess.Popen(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--remote-debugging-pipe",
                f"--user-data-dir={self._profile.name}",
                "about:blank",
            ],
            preexec_fn=child_fds,
            close_fds=False,  # 3 and 4 must survive; Python's own descriptors are not inheritable
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        self.call("Page.enable", session=True)
        self.call("Runtime.enable", session=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop this Chromium (only the process this object started)."""
        os.close(self._to_chrome)
        os.close(self._from_chrome)
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        # Chromium's helper processes (crashpad, utility) may still write into the profile for a
        # moment after the browser exits: retry, then leave what is left to the temp cleaner
        for _ in range(20):
            try:
                shutil.rmtree(self._profile.name)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.1)

    def _read(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_chrome], [], [], left)[0]:
                msg = "Chromium did not answer in time"
                raise TimeoutError(msg)
            chunk = os.read(self._from_chrome, 1 << 20)
            if not chunk:
                msg = "Chromium closed the pipe"
                raise RuntimeError(msg)
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def call(
        self, method: str, params: dict[str, Any] | None = None, *, session: bool = False
    ) -> dict[str, Any]:
        """Send one command and return its result (events that come first are kept)."""
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self._session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read(60)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            self.events.append(reply)

    def _wait_event(self, method: str, timeout: float) -> dict[str, Any]:
        for i, event in enumerate(self.events):
            if event.get("method") == method:
                return self.events.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            event = self._read(max(0.01, deadline - time.monotonic()))
            if event.get("method") == method:
                return event
            self.events.append(event)

    def open(self, url: str) -> None:
        """Load ``url``: wait for a load event, then until the page is a new, complete document
        (a load event of an earlier navigation, such as a form a test submitted, may still be
        on its way when this one starts).
        """
        self.events = [e for e in self.events if e.get("method") != "Page.loadEventFired"]
        self.wait_for("(window.__cf_left = true)")  # on the page now, even one still arriving
        self.call("Page.navigate", {"url": url}, session=True)
        self._wait_event("Page.loadEventFired", 60)
        self.wait_for("window.__cf_left === undefined && document.readyState === 'complete'", 60)

    def js(self, expression: str) -> Any:
        """The value of a JavaScript expression on the page (JSON-serialisable)."""
        result = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            session=True,
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 15.0) -> Any:
        """Poll ``expression`` until it is truthy; its value (TimeoutError after ``timeout``)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = self.js(expression)
            except RuntimeError as exc:  # the page navigated while it was asked: ask the new one
                if not any(word in str(exc) for word in _NAVIGATING):
                    raise
                value = None
            if value:
                return value
            if time.monotonic() > deadline:
                msg = f"still falsy after {timeout} s: {expression}"
                raise TimeoutError(msg)
            time.sleep(0.1)

    def dialogs(self) -> list[dict[str, Any]]:
        """``alert``/``confirm`` dialogs a page tried to open."""
        return [e for e in self.events if e.get("method") == "Page.javascriptDialogOpening"]
