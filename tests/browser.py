"""A real browser for the tests: headless Chromium (Debian's ``chromium`` package) driven over the DevTools
protocol through a pipe (``--remote-debugging-pipe``: JSON messages separated by NUL bytes on file
descriptors 3 and 4), so no WebDriver and no websocket client are needed.

``Browser.open(url)`` loads a page and collects what its console said (errors of scripts, of resources that
did not load, of the browser's own checks); ``evaluate`` runs an expression in it; ``layout`` measures it;
``screenshot`` saves the whole page, or one element, as PNG. The window is 1280 × 900 CSS pixels by default,
a common laptop screen.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time

import pytest

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")


def find_chromium() -> str | None:
    return next((path for path in map(shutil.which, CANDIDATES) if path), None)


def chromium() -> str:
    """Debian's chromium, which ``.ci/run`` installs: the test skips without it, or fails in CI."""
    executable = find_chromium()
    if executable is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (.ci/run installs Debian's chromium)")
        pytest.skip("chromium is not installed: apt-get install chromium (as .ci/run does)")
    return executable


class BrowserError(Exception):
    pass


class Browser:
    def __init__(self, executable: str, width: int = 1280, height: int = 900, timeout: float = 30.0):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="wire-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # The child reads commands on fd 3 and writes answers on fd 4.
        os.set_inheritable(to_browser_r, True)
        os.set_inheritable(from_browser_w, True)

        def child_fds():
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        args = [
            executable,
            "--headless",
            "--remote-debugging-pipe",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--hide-scrollbars",
            f"--user-data-dir={self.profile}",
            f"--window-size={width},{height}",
            "about:blank",
        ]
        self.process = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=child_fds,  # noqa: PLW1509 (the test process starts no thread before it)
            pass_fds=(3, 4),
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []
        self.session = ""
        self.width = width
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")

    # -- the protocol --------------------------------------------------------------------------------

    def call(self, method: str, **params) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if self.session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def _read(self) -> dict:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise BrowserError("no answer from the browser")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise BrowserError("the browser closed the pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def wait_for(self, method: str) -> dict:
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            event = self._read()
            self.events.append(event)
            if event.get("method") == method:
                return event

    # -- pages ---------------------------------------------------------------------------------------

    def open(self, url: str) -> None:
        self.events.clear()
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")
        self.evaluate("1")  # events sent while loading arrive before this answer

    def console_errors(self) -> list[str]:
        """What the page's console showed as errors: script exceptions, console.error, failed resources."""
        errors = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                errors.append(params["exceptionDetails"].get("text", "exception"))
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                errors.append(
                    " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
                )
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                errors.append(
                    f"{params['entry'].get('source')}: {params['entry'].get('text')} "
                    f"{params['entry'].get('url', '')}"
                )
        return errors

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression[:60]}: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def layout(self) -> dict[str, float]:
        """The page's size against the window's, in CSS pixels: ``height`` and ``width`` the document's
        scroll height and width, ``window`` its client width. ``width > window``: a horizontal scrollbar."""
        root = "document.documentElement"
        return self.evaluate(
            f"({{height: {root}.scrollHeight, width: {root}.scrollWidth, window: {root}.clientWidth}})"
        )

    def screenshot(self, path: str | os.PathLike, selector: str = "") -> None:
        """The whole page (or the first element matching ``selector``) as PNG."""
        if selector:
            box = self.evaluate(
                f"(() => {{ const r = document.querySelector({json.dumps(selector)})"
                ".getBoundingClientRect(); return [r.left + scrollX, r.top + scrollY, r.width, "
                "r.height]; })()"
            )
        else:
            size = self.call("Page.getLayoutMetrics")["cssContentSize"]
            box = [0, 0, self.width, size["height"]]
        clip = {"x": box[0], "y": box[1], "width": box[2], "height": box[3], "scale": 1}
        data = self.call("Page.captureScreenshot", format="png", clip=clip, captureBeyondViewport=True)[
            "data"
        ]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (BrowserError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
