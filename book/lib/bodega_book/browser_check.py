"""The built book as a reader's browser shows it: Debian's chromium, driven through its chromedriver over the
W3C WebDriver protocol (plain HTTP, so no driver package), opens every page at 1400 px wide and fails on a page
taller than :data:`MAX_HEIGHT`, on an answer box whose bottom lies below the first screen, or on a command whose
rendered text cannot be copied as typed; it saves the first screen of the pages named in :data:`SCREENSHOTS`.

Why a real browser: a page's height, where its answer box lands and what a code block's text is after the theme
and the fonts have done their work are facts of the rendered page, not of its HTML.

    python -m bodega_book.browser_check book/_build/html --screenshots book/_build/screenshots
"""
from __future__ import annotations

import argparse
import base64
import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bodega_book.html_check import built_pages, typographic_dashes

WIDTH, SCREEN = 1400, 900
MAX_HEIGHT = 20_000
"""The tallest page, in CSS pixels at 1400 px wide, that a reader can be expected to finish."""
ANSWER_PAGES = ("intro.html", "atomeval.html")
"""The pages that open with the answer box (class ``answer-box``), which must end on the first screen."""
SCREENSHOTS = ("intro.html", "study.html")
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
         f"--window-size={WIDTH},{SCREEN}")
MEASURE = """
const box = document.querySelector('.answer-box');
const code = Array.from(document.querySelectorAll('pre, code')).map(e => e.innerText);
return {height: Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0),
        width: window.innerWidth, screen: window.innerHeight,
        answer_bottom: box ? box.getBoundingClientRect().bottom + window.scrollY : null, code: code};
"""


class BrowserError(RuntimeError):
    """chromium or its driver could not be started or answered out of protocol."""


@dataclass(frozen=True)
class PageView:
    """What the browser measured on one page: kept apart from the driver so the limits can be judged (and
    tested) without a browser."""

    page: str
    height: int
    answer_bottom: float | None
    dashed: tuple[str, ...]  # commands with a typographic dash, as rendered

    def problems(self) -> list[str]:
        """One line per limit this page breaks (height, answer box, copyable commands); empty when it passes."""
        found = []
        if self.height > MAX_HEIGHT:
            found.append(f"{self.page}: {self.height} px tall at {WIDTH} px wide (limit {MAX_HEIGHT})")
        if self.page in ANSWER_PAGES:
            if self.answer_bottom is None:
                found.append(f"{self.page}: no answer box")
            elif self.answer_bottom > SCREEN:
                found.append(f"{self.page}: the answer box ends at {self.answer_bottom:.0f} px, below the first "
                             f"screen ({SCREEN} px)")
        found += [f"{self.page}: a command with a typographic dash: {command!r}" for command in self.dashed]
        return found


class WebDriver:
    """One chromium session through chromedriver: navigate, run a script, take a screenshot."""

    def __init__(self, driver: str = CHROMEDRIVER, browser: str = CHROMIUM) -> None:
        for program in (driver, browser):
            if not shutil.which(program):
                raise BrowserError(f"{program} not found: install Debian's chromium and chromium-driver")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.process = subprocess.Popen([driver, f"--port={self.port}"], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        try:
            self._wait_ready()
            options = {"binary": browser, "args": list(FLAGS)}
            value = self._call("POST", "/session", {"capabilities": {"alwaysMatch": {
                "browserName": "chrome", "goog:chromeOptions": options}}})
            self.session = value["sessionId"]
            # the window's chrome takes its share of --window-size: the page itself gets exactly WIDTH x SCREEN
            self.cdp("Emulation.setDeviceMetricsOverride", {"width": WIDTH, "height": SCREEN,
                                                            "deviceScaleFactor": 1, "mobile": False})
        except BaseException:
            self.process.terminate()
            raise

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=120) as answer:
                return json.loads(answer.read())["value"]
        except urllib.error.HTTPError as error:
            raise BrowserError(f"{method} {path}: {error.read().decode(errors='replace')[:500]}") from None

    def _wait_ready(self, seconds: float = 30) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                if self._call("GET", "/status").get("ready"):
                    return
            except (OSError, BrowserError):
                pass
            time.sleep(0.2)
        raise BrowserError(f"chromedriver did not answer on port {self.port} within {seconds:.0f} s")

    def cdp(self, command: str, params: dict[str, Any]) -> Any:
        """A Chrome DevTools Protocol command, through chromedriver's own endpoint for it."""
        return self._call("POST", f"/session/{self.session}/goog/cdp/execute", {"cmd": command, "params": params})

    def open(self, url: str) -> None:
        """Load ``url`` and wait for it, so a measurement that follows sees the laid-out page."""
        self._call("POST", f"/session/{self.session}/url", {"url": url})

    def run(self, script: str) -> Any:
        """The value of a synchronous script in the page: how layout facts (heights, boxes, code text) are read."""
        return self._call("POST", f"/session/{self.session}/execute/sync", {"script": script, "args": []})

    def screenshot(self, path: Path) -> None:
        """The first screen (WIDTH x SCREEN) as the reader sees it, as PNG."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(self._call("GET", f"/session/{self.session}/screenshot")))

    def close(self) -> None:
        """End the session and the driver: a chromium left running would outlive the check and hold its port."""
        try:
            self._call("DELETE", f"/session/{self.session}")
        finally:
            self.process.terminate()
            self.process.wait(timeout=30)


def view(driver: WebDriver, html_root: Path, page: Path) -> PageView:
    """One page as the browser lays it out at WIDTH x SCREEN."""
    driver.open(page.resolve().as_uri())
    measured = driver.run(MEASURE)
    if (measured["width"], measured["screen"]) != (WIDTH, SCREEN):
        raise BrowserError(f"the page is shown {measured['width']} x {measured['screen']} px, not {WIDTH} x {SCREEN}")
    dashed = tuple(" ".join(code.split())[:160] for code in measured["code"] if typographic_dashes(code))
    return PageView(page.relative_to(html_root).as_posix(), int(measured["height"]), measured["answer_bottom"],
                    dashed)


def check_book(html_root: str | Path, screenshots: str | Path | None = None) -> tuple[list[PageView], list[str]]:
    """Every page's view and every problem found; the pages of :data:`SCREENSHOTS` saved under ``screenshots``."""
    root = Path(html_root)
    found = built_pages(root)
    driver = WebDriver()
    views, problems = [], []
    try:
        for page in found:
            seen = view(driver, root, page)
            views.append(seen)
            problems += seen.problems()
            if screenshots is not None and seen.page in SCREENSHOTS:
                driver.screenshot(Path(screenshots) / seen.page.replace(".html", ".png"))
    finally:
        driver.close()
    missing = [name for name in ANSWER_PAGES if name not in {v.page for v in views}]
    return views, problems + [f"{name}: not built" for name in missing]


def main(argv: list[str] | None = None) -> int:
    """The command line: print the tallest pages and every problem, exit 1 on any, so CI fails on a page a
    reader cannot finish."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html", help="the built book's HTML folder (book/_build/html)")
    parser.add_argument("--screenshots", help="folder for the screenshots (git-ignored, e.g. book/_build/screenshots)")
    args = parser.parse_args(argv)
    views, problems = check_book(args.html, args.screenshots)
    for seen in sorted(views, key=lambda v: -v.height)[:5]:
        print(f"{seen.page}: {seen.height} px")
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"{len(views)} pages at {WIDTH} px wide, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
