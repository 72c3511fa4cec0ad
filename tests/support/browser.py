"""What the browser tests share: a served site and a page that nothing leaves the machine from."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from playwright.sync_api import Browser, Page, Route


@contextmanager
def served(folder: Path) -> Iterator[str]:
    """A real http server on 127.0.0.1 (a free port) serving ``folder``; yields its URL."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


class Watched:
    """A page whose off-machine requests are blocked and whose errors are recorded."""

    def __init__(self, browser: Browser, **context: Any) -> None:
        self.context = browser.new_context(**context)
        self.blocked: list[str] = []
        self.errors: list[str] = []
        self.context.route("**/*", self._route)
        self.page: Page = self.context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def _route(self, route: Route) -> None:
        url = urlparse(route.request.url)
        if url.scheme in ("file", "data", "blob") or url.hostname == "127.0.0.1":
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort()

    def check(self) -> None:
        assert self.blocked == [], f"requests left the machine: {self.blocked}"
        assert self.errors == [], f"console errors: {self.errors}"
        self.context.close()
