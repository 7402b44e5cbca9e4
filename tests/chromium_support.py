"""Headless Chromium driven over the DevTools protocol, for the tests and benches that look at what
prdigest renders (the report page, the chat-card previews). Not a test module of its own.

`chromium(profile)` starts a browser with a fresh profile and ends it in teardown; `open_page` opens a
URL in a new target at a device size; `evaluate` returns a JavaScript value; `boxes` where elements lie
on the page; `full_page_screenshot` the whole page, not only its first screen.
"""

from __future__ import annotations

import base64
import json
import shutil
import struct
import subprocess
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-port=0",
)
PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}
DESKTOP = {"width": 1280, "height": 1400, "deviceScaleFactor": 1, "mobile": False}


class DevTools:
    """A minimal Chrome DevTools Protocol client over one websocket (flattened target sessions)."""

    def __init__(self, url: str):
        from websockets.sync.client import connect

        self.ws = connect(url, max_size=None)
        self.events: list[dict] = []
        self._id = 0

    def call(self, method: str, session: str | None = None, **params: object) -> dict:
        self._id += 1
        message: dict = {"id": self._id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        self.ws.send(json.dumps(message))
        while True:
            reply = json.loads(self.ws.recv(timeout=30))
            if reply.get("id") == self._id:
                assert "error" not in reply, reply["error"]
                return reply["result"]
            self.events.append(reply)

    def wait_for(self, method: str) -> dict:
        while True:
            for i, event in enumerate(self.events):
                if event.get("method") == method:
                    return self.events.pop(i)
            self.events.append(json.loads(self.ws.recv(timeout=30)))

    def of(self, method: str) -> list[dict]:
        return [e["params"] for e in self.events if e.get("method") == method]


@contextmanager
def chromium(profile: Path) -> Iterator[DevTools]:
    """Headless Chromium with a fresh profile, ended in teardown whatever happens."""
    proc = subprocess.Popen(
        [CHROMIUM or "chromium", *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        devtools = DevTools(_devtools_url(profile, proc))
        try:
            yield devtools
        finally:
            devtools.ws.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _devtools_url(profile: Path, proc: subprocess.Popen[bytes]) -> str:
    """Chromium writes the port it chose, and the browser's path, to DevToolsActivePort."""
    port_file = profile / "DevToolsActivePort"
    deadline = time.monotonic() + 30
    while not port_file.exists() or len(port_file.read_text().split()) < 2:
        assert proc.poll() is None, f"chromium exited with {proc.returncode}"
        assert time.monotonic() < deadline, "chromium did not open its DevTools port"
        time.sleep(0.05)
    port, path = port_file.read_text().split()[:2]
    return f"ws://127.0.0.1:{port}{path}"


def open_page(devtools: DevTools, url: str, metrics: dict) -> str:
    target = devtools.call("Target.createTarget", url="about:blank")["targetId"]
    session = devtools.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
    for domain in ("Page", "Network", "Runtime", "Log"):
        devtools.call(f"{domain}.enable", session)
    devtools.call("Emulation.setDeviceMetricsOverride", session, **metrics)
    devtools.call("Page.navigate", session, url=url)
    devtools.wait_for("Page.loadEventFired")
    return session


def evaluate(devtools: DevTools, session: str, expression: str) -> object:
    return devtools.call("Runtime.evaluate", session, expression=expression, returnByValue=True)["result"][
        "value"
    ]


def screenshot(devtools: DevTools, session: str, path: Path) -> bytes:
    png = base64.b64decode(devtools.call("Page.captureScreenshot", session, format="png")["data"])
    path.write_bytes(png)
    return png


def full_page_screenshot(devtools: DevTools, session: str, path: Path) -> tuple[int, int]:
    """The whole page as one PNG at its layout width (not only the viewport); its (width, height) in px."""
    width, height = page_size(devtools, session)
    clip = {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}
    shot = devtools.call(
        "Page.captureScreenshot", session, format="png", captureBeyondViewport=True, clip=clip
    )["data"]
    path.write_bytes(base64.b64decode(shot))
    return width, height


def page_size(devtools: DevTools, session: str) -> tuple[int, int]:
    """The laid-out document's full (scrollWidth, scrollHeight) in CSS px."""
    size = evaluate(
        devtools, session, "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
    )
    assert isinstance(size, list), size
    return int(size[0]), int(size[1])


def boxes(devtools: DevTools, session: str, selector: str) -> list[tuple[float, float]]:
    """The (top, bottom) in page px of every element ``selector`` finds, whatever the scroll position."""
    found = evaluate(
        devtools,
        session,
        f"Array.from(document.querySelectorAll({json.dumps(selector)}), e => {{"
        "const r = e.getBoundingClientRect(); return [r.top + scrollY, r.bottom + scrollY]; })",
    )
    assert isinstance(found, list), found
    return [(float(top), float(bottom)) for top, bottom in found]


def errors(devtools: DevTools) -> list[str]:
    console = [
        str(e["args"]) for e in devtools.of("Runtime.consoleAPICalled") if e["type"] in ("error", "assert")
    ]
    thrown = [str(e["exceptionDetails"]) for e in devtools.of("Runtime.exceptionThrown")]
    logged = [e["entry"]["text"] for e in devtools.of("Log.entryAdded") if e["entry"]["level"] == "error"]
    return console + thrown + logged


def png_colours(png: bytes) -> int:
    """Distinct colours of an 8-bit RGB(A) PNG, decoded with the standard library only."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, header = 8, [], b""
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos : pos + 8])
        body = png[pos + 8 : pos + 8 + length]
        header = body if kind == b"IHDR" else header
        chunks += [body] if kind == b"IDAT" else []
        pos += 12 + length
    width, height, depth, colour_type = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour_type in (2, 6)
    bpp = 3 if colour_type == 2 else 4
    raw, stride = zlib.decompress(b"".join(chunks)), width * bpp
    previous, colours = bytearray(stride), set()
    for y in range(height):
        start = y * (stride + 1)
        row = _unfilter(raw[start], bytearray(raw[start + 1 : start + 1 + stride]), previous, bpp)
        colours.update(bytes(row[x : x + 3]) for x in range(0, stride, bpp))
        previous = row
    return len(colours)


def _unfilter(kind: int, row: bytearray, up: bytearray, bpp: int) -> bytearray:
    if kind == 2:
        return bytearray((a + b) & 0xFF for a, b in zip(row, up, strict=True))
    for i in range(len(row)) if kind else ():
        left = row[i - bpp] if i >= bpp else 0
        if kind == 1:
            row[i] = (row[i] + left) & 0xFF
        elif kind == 3:
            row[i] = (row[i] + (left + up[i]) // 2) & 0xFF
        else:
            corner = up[i - bpp] if i >= bpp else 0
            p = left + up[i] - corner
            pa, pb, pc = abs(p - left), abs(p - up[i]), abs(p - corner)
            row[i] = (row[i] + (left if pa <= pb and pa <= pc else up[i] if pb <= pc else corner)) & 0xFF
    return row


def page_heights(pages: list[str], workdir: Path, selector: str, metrics: dict = PHONE) -> list[float]:
    """The height in px of the first element ``selector`` finds in each HTML page, laid out at ``metrics``."""
    out = []
    with chromium(workdir / "profile") as devtools:
        for i, page in enumerate(pages):
            path = workdir / f"page{i}.html"
            path.write_text(page, encoding="utf-8")
            session = open_page(devtools, path.as_uri(), metrics)
            height = evaluate(
                devtools, session, f"document.querySelector({json.dumps(selector)}).offsetHeight"
            )
            assert isinstance(height, int | float), height
            out.append(float(height))
    return out
