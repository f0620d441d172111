"""Headless Chromium driven over the Chrome DevTools Protocol, through --remote-debugging-pipe: Chromium reads
commands from its file descriptor 3 and writes replies and events to 4, each a JSON object ended by a NUL byte.
No websocket, no package: what the tests need to open a page, run JavaScript in it and click as a mouse does."""

from __future__ import annotations

import fcntl
import json
import os
import select
import subprocess
import time


class Browser:
    """One headless Chromium, its profile in profile (a folder of the test's)."""

    def __init__(self, executable: str, profile: str):
        commands, replies = os.pipe(), os.pipe()
        # the ends Chromium gets, above 4, so that moving them to 3 and 4 in the child overwrites neither
        theirs = [fcntl.fcntl(commands[0], fcntl.F_DUPFD, 10), fcntl.fcntl(replies[1], fcntl.F_DUPFD, 10)]
        for end in (commands[0], replies[1]):
            os.close(end)

        def as_3_and_4():
            os.dup2(theirs[0], 3)
            os.dup2(theirs[1], 4)
        self.process = subprocess.Popen(
            [executable, "--headless", "--remote-debugging-pipe", "--no-sandbox", "--no-first-run", "--disable-gpu",
             "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
             f"--user-data-dir={profile}", "about:blank"],
            pass_fds=(3, 4), preexec_fn=as_3_and_4, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        for end in theirs:
            os.close(end)
        self.writer, self.reader = os.fdopen(commands[1], "wb", buffering=0), replies[0]
        self.pending, self.last = b"", 0

    def send(self, method: str, session: str | None = None, timeout: float = 120, **params):
        """A command's result (events that come before it are dropped: nothing here waits for one)."""
        self.last += 1
        message = {"id": self.last, "method": method, "params": params, **({"sessionId": session} if session else {})}
        self.writer.write(json.dumps(message).encode() + b"\0")
        end = time.monotonic() + timeout
        while True:
            reply = self.receive(end)
            if reply.get("id") == self.last:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def receive(self, end: float) -> dict:
        while b"\0" not in self.pending:
            ready, _, _ = select.select([self.reader], [], [], max(0.0, end - time.monotonic()))
            if not ready:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self.reader, 1 << 20)
            if not chunk:
                raise EOFError("Chromium closed its end of the pipe")
            self.pending += chunk
        message, self.pending = self.pending.split(b"\0", 1)
        return json.loads(message)

    def page(self, url: str, width: int = 1280, height: int = 900) -> Page:
        return Page(self, url, width, height)

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=10)
        except (OSError, RuntimeError, TimeoutError, EOFError):
            pass
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.writer.close()
        os.close(self.reader)


class Page:
    """A tab of its own, width x height CSS pixels, at url."""

    def __init__(self, browser: Browser, url: str, width: int, height: int):
        self.browser = browser
        self.target = browser.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = browser.send("Target.attachToTarget", targetId=self.target, flatten=True)["sessionId"]
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        self.send("Page.navigate", url=url)

    def send(self, method: str, **params):
        return self.browser.send(method, self.session, **params)

    def js(self, expression: str, timeout: float = 120):
        """The value of a JavaScript expression (a promise awaited), as JSON; an exception in it raises."""
        result = self.send("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True,
                           timeout=int(timeout * 1000))
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise RuntimeError(details.get("exception", {}).get("description") or details.get("text"))
        return result["result"].get("value")

    def wait(self, expression: str, timeout: float, what: str):
        """Poll expression until it is true; its value."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            value = self.js(expression)
            if value:
                return value
            time.sleep(0.2)
        raise TimeoutError(f"{timeout:.0f} s and still not {what}")

    def click(self, x: float, y: float) -> None:
        """A left click at (x, y) as a mouse makes it: moved there, pressed, released."""
        self.send("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def close(self) -> None:
        self.browser.send("Target.closeTarget", targetId=self.target)
