"""A signed-in client of the real workbench app, shared by the workbench's tests.

Starlette's test client talks HTTP to the application built on a temporary
workspace (no server, no mocks): the access token is exchanged for the session
cookie as a browser would, and the page's CSRF token goes into every POST.
"""

from __future__ import annotations

import html
import re
import warnings
from pathlib import Path
from typing import Any

from starlette.applications import Starlette

with warnings.catch_warnings():
    # Starlette now prefers the httpx2 package but still drives httpx (the dev extra's).
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from kanonym.workbench import create_app

__all__ = ["BASE", "PORT", "Client", "TestClient", "csrf_of", "errors"]

PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"


def errors(page: str) -> list[str]:
    """The one-line errors a page shows."""
    found = re.findall(r'class="message error"[^>]*>([^<]*)<', page)
    return [html.unescape(text) for text in found]


def csrf_of(page: str) -> str:
    """The CSRF token a page's forms carry."""
    match = re.search(r'name="csrf" value="([^"]+)"', page)
    assert match is not None
    return match.group(1)


class Client:
    """A signed-in client of a fresh app on ``workspace``; ``pages`` keeps every page."""

    def __init__(self, workspace: Path, **options: Any) -> None:
        self.workspace = workspace
        self.app: Starlette = create_app(workspace, port=PORT, **options)
        self.client = TestClient(self.app, base_url=BASE)
        page = self.client.get(f"/table?token={self.app.state.guard.token}")
        self.csrf = csrf_of(page.text)
        self.pages: list[str] = [page.text]

    def post(self, path: str, files: Any = None, **fields: str) -> str:
        response = self.client.post(path, data={"csrf": self.csrf, **fields}, files=files)
        assert response.status_code == 200, response.text
        text: str = response.text
        self.pages.append(text)
        return text

    def get(self, path: str) -> str:
        response = self.client.get(path)
        assert response.status_code == 200, response.text
        text: str = response.text
        self.pages.append(text)
        return text

    def upload(self, name: str, content: bytes, **fields: str) -> str:
        return self.post("/table/upload", files={"file": (name, content, "text/csv")}, **fields)

    @property
    def bench(self) -> Any:
        return self.app.state.bench
