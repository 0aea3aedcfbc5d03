"""The headless browser the approval page's tests use (tests/conftest.py: ``browser``, ``page``).

A tiny page on 127.0.0.1, served with the strict Content-Security-Policy a local page of the
guard gets: its own script writes into the page and posts JSON back with ``fetch``; an inline
script is refused. If this passes, the system chromium and Playwright work together here.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from playwright.sync_api import Page, expect

CSP = "default-src 'none'; script-src 'self'; connect-src 'self'"

HTML = b"""<!doctype html>
<html>
<head><meta charset="utf-8"><title>smoke</title></head>
<body>
<p id="out">no script yet</p>
<form id="answer"><input name="answer" value="yes"><button type="submit">Send</button></form>
<script>document.body.dataset.inline = "ran";</script>
<script src="/app.js"></script>
</body>
</html>
"""

SCRIPT = b"""
const out = document.getElementById("out");
out.textContent = "ready";
document.getElementById("answer").addEventListener("submit", async (event) => {
  event.preventDefault();
  const answer = new FormData(event.target).get("answer");
  const reply = await fetch("/answer", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ answer }),
  });
  const body = await reply.json();
  out.textContent = "recorded: " + body.recorded;
});
"""


@dataclass
class Site:
    url: str
    posts: list[tuple[str, bytes]] = field(default_factory=list)


@pytest.fixture
def site() -> Iterator[Site]:
    """The page on 127.0.0.1 on a free port; ``posts`` holds each POST's content type and body."""
    posts: list[tuple[str, bytes]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def _send(self, body: bytes, content_type: str, status: int = 200) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Content-Security-Policy", CSP)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path == "/":
                self._send(HTML, "text/html; charset=utf-8")
            elif self.path == "/app.js":
                self._send(SCRIPT, "text/javascript")
            else:
                self._send(b"not found", "text/plain", 404)

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            posts.append((self.headers.get("Content-Type", ""), body))
            if self.path != "/answer":
                self._send(b"not found", "text/plain", 404)
                return
            answer = json.loads(body)["answer"]
            self._send(json.dumps({"recorded": answer}).encode(), "application/json")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Site(f"http://127.0.0.1:{server.server_address[1]}/", posts)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_the_page_script_and_fetch_run_under_a_strict_csp(page: Page, site: Site) -> None:
    response = page.goto(site.url)
    assert response is not None and response.ok
    assert response.headers["content-security-policy"] == CSP

    out = page.locator("#out")
    expect(out).to_have_text("ready")  # the same-origin script ran
    assert page.get_attribute("body", "data-inline") is None  # the inline one did not

    page.get_by_role("button", name="Send").click()
    expect(out).to_have_text("recorded: yes")
    assert site.posts == [("application/json", b'{"answer":"yes"}')]
