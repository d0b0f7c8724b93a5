"""Headless Chromium for the tests of the HTML page, driven over the DevTools protocol.

:class:`Browser` starts Chromium with ``--remote-debugging-pipe`` (the
protocol's JSON messages over two pipes, no socket, no extra package), opens
one tab at an exact viewport width (``Emulation.setDeviceMetricsOverride``:
a plain ``--window-size`` cannot go below about 500 px), loads a page, runs
JavaScript in it, takes screenshots, and keeps every console message, error
and CSP violation the page logs. Chromium is found on the PATH (``chromium``
or ``chromium-browser``); the tests that need it skip when it is absent.

``benchmarks/html_report.py`` uses it too.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

try:
    import pytest

    needs_chromium = pytest.mark.skipif(
        (shutil.which("chromium") or shutil.which("chromium-browser")) is None,
        reason="no Chromium installed (apt-get install chromium)",
    )
except ImportError:  # the benchmark, without pytest
    pass

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

#: Flags that keep a headless Chromium from reaching anything but the page.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--no-first-run",
    "--no-default-browser-check",
    "--mute-audio",
]


def fragment(**view: Any) -> str:
    """``#samples?k=v&...``, the names percent-encoded."""
    return "#samples?" + "&".join(f"{k}={quote(str(v), safe='')}" for k, v in view.items())


_LAUNCHER = """
import fcntl, os, sys
r, w = (fcntl.fcntl(int(fd), fcntl.F_DUPFD, 10) for fd in sys.argv[1:3])
for fd in sys.argv[1:3]:
    os.close(int(fd))
os.dup2(r, 3)
os.dup2(w, 4)
os.close(r)
os.close(w)
os.execv(sys.argv[3], sys.argv[3:])
"""


class BrowserError(RuntimeError):
    pass


class Browser:
    """One headless Chromium with one tab; use as a context manager."""

    def __init__(self, *, timeout: float = 120.0) -> None:
        if CHROMIUM is None:
            raise BrowserError("no Chromium on the PATH")
        self.timeout = timeout
        self.messages: list[str] = []
        self._id = 0
        self._buffer = b""
        self._events: list[dict[str, Any]] = []
        self._profile = tempfile.TemporaryDirectory()
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        # The protocol's pipes are fds 3 (commands in) and 4 (replies out) of Chromium:
        # a small launcher puts them there and becomes Chromium.
        self._proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                _LAUNCHER,
                str(to_chrome_r),
                str(from_chrome_w),
                CHROMIUM,
                *FLAGS,
                "--remote-debugging-pipe",
                f"--user-data-dir={self._profile.name}",
                "about:blank",
            ],
            pass_fds=(to_chrome_r, from_chrome_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._from_chrome, selectors.EVENT_READ)
        self.session: str | None = None
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")

    # --- the protocol ---

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not self._selector.select(left):
                raise BrowserError("Chromium did not answer in time")
            chunk = os.read(self._from_chrome, 1 << 20)
            if not chunk:
                raise BrowserError("Chromium closed its pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message = json.loads(raw)
        if "method" in message:
            self._note(message)
        return message

    def _note(self, event: dict[str, Any]) -> None:
        method, params = event["method"], event.get("params", {})
        if method == "Runtime.consoleAPICalled":
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
            self.messages.append(f"console.{params['type']}: {args}")
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            exc = details.get("exception", {}).get("description", details.get("text"))
            self.messages.append(f"exception: {exc}")
        elif method == "Log.entryAdded":
            entry = params["entry"]
            self.messages.append(f"log {entry['level']} {entry['source']}: {entry['text']}")
        self._events.append(event)

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if self.session is not None and not method.startswith("Target."):
            message["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def _wait_for(self, method: str) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while True:
            for i, event in enumerate(self._events):
                if event["method"] == method:
                    del self._events[: i + 1]
                    return event
            self._events.clear()
            self._read(deadline)

    # --- what the tests use ---

    def open(
        self, page: Path | str, *, width: int = 1280, height: int = 900, hash: str = ""
    ) -> float:
        """Load ``page`` in a viewport ``width`` px wide; the seconds until its load event."""
        self.send(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=width < 600,
        )
        url = page if isinstance(page, str) else Path(page).resolve().as_uri()
        # A new document each time: a navigation that changes only the fragment
        # would fire no load event.
        self._events.clear()
        self.send("Page.navigate", url="about:blank")
        self._wait_for("Page.loadEventFired")
        self.messages.clear()
        start = time.monotonic()
        self.send("Page.navigate", url=url + hash)
        self._wait_for("Page.loadEventFired")
        return time.monotonic() - start

    def run(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (awaited when a promise)."""
        found = self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in found:
            raise BrowserError(f"{expression!r}: {found['exceptionDetails']}")
        return found["result"].get("value")

    def screenshot(self, out: Path, *, full_page: bool = True) -> Path:
        """A PNG of the page (the whole page, not only the viewport, by default)."""
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
            size = self.send("Page.getLayoutMetrics")["cssContentSize"]
            params["clip"] = {
                "x": 0,
                "y": 0,
                "width": size["width"],
                "height": min(size["height"], 16000),
                "scale": 1,
            }
        data = self.send("Page.captureScreenshot", **params)["data"]
        out.write_bytes(base64.b64decode(data))
        return out

    def close(self) -> None:
        try:
            if self._proc.poll() is None:
                try:
                    self.session = None
                    self._id += 1
                    os.write(
                        self._to_chrome,
                        json.dumps({"id": self._id, "method": "Browser.close"}).encode() + b"\0",
                    )
                    self._proc.wait(timeout=20)
                except (OSError, subprocess.TimeoutExpired):
                    self._proc.kill()
                    self._proc.wait(timeout=20)
        finally:
            self._selector.close()
            for fd in (self._to_chrome, self._from_chrome):
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._profile.cleanup()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
