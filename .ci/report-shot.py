#!/usr/bin/env python3
"""Headless Chromium helpers for .ci/report-render (standard library only).

    report-shot.py screenshot CHROMIUM FILE.html OUT.png WIDTH HEIGHT
    report-shot.py dump-dom CHROMIUM FILE.html OUT.dom WIDTH HEIGHT
    report-shot.py check-dom DOM.html STATUS

screenshot: a full-page PNG of FILE.html as a WIDTH x HEIGHT window shows it. Chromium's
`--screenshot` flag only captures the window, so this drives the same headless Chromium over the
DevTools protocol on a pipe (`--remote-debugging-pipe`: fd 3 in, fd 4 out, one JSON message per
NUL-terminated chunk): load the page in a WIDTH x HEIGHT viewport, read its content height
(Page.getLayoutMetrics), grow the viewport to it (Emulation.setDeviceMetricsOverride, no mobile
emulation, scale 1) and capture (Page.captureScreenshot). Exit 1 when Chromium fails, times out
or writes no PNG.

dump-dom: the DOM Chromium built from FILE.html after its load event, serialised
(document.documentElement.outerHTML, what `chromium --dump-dom` prints; that flag hangs in the
headless-shell build .ci/chromium-install unpacks, the protocol does not).

check-dom: DOM.html is what dump-dom wrote (the DOM Chromium built, serialised).
It must hold a `<section id="checks">` and the run's status badge, an element with the classes
`badge` and `run-STATUS`. Exit 1 naming what is missing.
"""

import base64
import html.parser
import json
import os
import select
import subprocess
import sys
import tempfile
import time

TIMEOUT_S = 120
# Chromium refuses a capture taller than this many CSS pixels (and a report that tall is broken).
MAX_HEIGHT = 100_000
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


def fail(message):
    print(f"report-shot: {message}", file=sys.stderr)
    sys.exit(1)


class Browser:
    """One headless Chromium driven over --remote-debugging-pipe."""

    def __init__(self, chromium, width, height, log):
        self.profile = tempfile.TemporaryDirectory(prefix="report-shot-profile-")
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()

        def child_fds():  # Chromium reads commands from fd 3 and writes replies to fd 4.
            # Through fresh copies: a pipe end may itself be fd 3 or 4, and dup2 onto itself
            # would leave it close-on-exec.
            read_end, write_end = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        self.process = subprocess.Popen(
            [chromium, *FLAGS, f"--user-data-dir={self.profile.name}",
             f"--window-size={width},{height}", "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            preexec_fn=child_fds, close_fds=False,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []
        self.deadline = time.monotonic() + TIMEOUT_S

    def _message(self):
        """The next message from Chromium (a reply or an event)."""
        while b"\0" not in self.buffer:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no answer from Chromium within {TIMEOUT_S} s")
            ready, _, _ = select.select([self.from_chrome], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.from_chrome, 1 << 20)
            if not chunk:
                raise RuntimeError(f"Chromium closed the pipe (exit {self.process.poll()})")
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method, session=None, **params):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self.to_chrome, data):]
        while True:
            reply = self._message()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method, session):
        while True:
            for i, event in enumerate(self.events):
                if event.get("method") == method and event.get("sessionId") == session:
                    return self.events.pop(i)
            self.events.append(self._message())

    def close(self):
        try:
            self.call("Browser.close")
        except (OSError, RuntimeError, TimeoutError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self.to_chrome)
        os.close(self.from_chrome)
        self.profile.cleanup()


def loaded(browser, url, width, height):
    """A session on a new tab that shows `url` in a WIDTH x HEIGHT viewport, after its load event."""
    target = browser.call("Target.createTarget", url="about:blank")["targetId"]
    session = browser.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
    browser.call("Page.enable", session)
    metrics = dict(width=width, height=height, deviceScaleFactor=1, mobile=False)
    browser.call("Emulation.setDeviceMetricsOverride", session, **metrics)
    navigation = browser.call("Page.navigate", session, url=url)
    if navigation.get("errorText"):
        raise RuntimeError(f"cannot load {url}: {navigation['errorText']}")
    browser.wait_event("Page.loadEventFired", session)
    return session, metrics


def with_page(chromium, page, out, width, height, action):
    """`action(browser, session, metrics)` on PAGE loaded in a fresh Chromium; exit 1 on failure."""
    url = "file://" + os.path.abspath(page)
    with open(out + ".chromium.log", "wb") as log:
        browser = Browser(chromium, width, height, log)
        try:
            session, metrics = loaded(browser, url, width, height)
            result = action(browser, session, metrics)
        except (OSError, RuntimeError, TimeoutError, KeyError, ValueError) as err:
            browser.close()
            fail(f"{page} at {width}x{height}: {err} (Chromium's log: {out}.chromium.log)")
        browser.close()
    os.remove(out + ".chromium.log")
    return result


def screenshot(chromium, page, out, width, height):
    def capture(browser, session, metrics):
        content = browser.call("Page.getLayoutMetrics", session)["cssContentSize"]
        full = max(height, int(content["height"] + 0.999))
        if full > MAX_HEIGHT:
            raise RuntimeError(f"the page is {full} px tall at {width} px (over {MAX_HEIGHT})")
        browser.call("Emulation.setDeviceMetricsOverride", session, **dict(metrics, height=full))
        return full, browser.call("Page.captureScreenshot", session, format="png")

    full, shot = with_page(chromium, page, out, width, height, capture)
    png = base64.b64decode(shot["data"])
    if not png.startswith(b"\x89PNG\r\n\x1a\n"):
        fail(f"{page} at {width}x{height}: Chromium returned no PNG")
    with open(out, "wb") as file:
        file.write(png)
    print(f"report-shot: {out} ({width}x{full}, {len(png)} bytes)")


def dump_dom(chromium, page, out, width, height):
    def serialise(browser, session, _metrics):
        expression = "document.documentElement.outerHTML"
        reply = browser.call("Runtime.evaluate", session, expression=expression, returnByValue=True)
        if "exceptionDetails" in reply:
            raise RuntimeError(f"{expression} threw: {reply['exceptionDetails'].get('text')}")
        return reply["result"]["value"]

    dom = with_page(chromium, page, out, width, height, serialise)
    with open(out, "w", encoding="utf-8") as file:
        file.write(dom)
    print(f"report-shot: {out} ({len(dom)} characters of DOM)")


class DomFacts(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.checks_section = False
        self.badges = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        if tag == "section" and attrs.get("id") == "checks":
            self.checks_section = True
        if "badge" in classes:
            self.badges.extend(c for c in classes if c.startswith("run-"))


def check_dom(dom_file, status):
    with open(dom_file, encoding="utf-8") as file:
        text = file.read()
    facts = DomFacts()
    facts.feed(text)
    missing = []
    if not facts.checks_section:
        missing.append('no <section id="checks">')
    if f"run-{status}" not in facts.badges:
        missing.append(f"no status badge with class run-{status} (badges: {facts.badges or 'none'})")
    if missing:
        fail(f"{dom_file}: " + "; ".join(missing))
    print(f"report-shot: {dom_file}: #checks and the run-{status} badge are in Chromium's DOM")


def main(argv):
    if len(argv) == 6 and argv[0] == "screenshot":
        _, chromium, page, out, width, height = argv
        screenshot(chromium, page, out, int(width), int(height))
    elif len(argv) == 6 and argv[0] == "dump-dom":
        _, chromium, page, out, width, height = argv
        dump_dom(chromium, page, out, int(width), int(height))
    elif len(argv) == 3 and argv[0] == "check-dom":
        check_dom(argv[1], argv[2])
    else:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv[1:])
