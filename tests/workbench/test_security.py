"""The workbench's guard, on the real application through Starlette's test client.

No mocks: each test builds the app on a temporary workspace and talks HTTP to
it as a browser (or an attacker's page) would.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.applications import Starlette
from starlette.routing import Route
from tests.workbench.client import BASE, PORT, TestClient, csrf_of

from kanonym.cli.main import _build_parser
from kanonym.cli.serve import DEFAULT_PORT, non_loopback_warning
from kanonym.errors import InputError
from kanonym.workbench import create_app
from kanonym.workbench.security import inside

TABLE = "zip,age\n02138,34\n02139,36\n02141,41\n02142,45\n"


def _app(workspace: Path, **options: float) -> Starlette:
    return create_app(workspace, port=PORT, **options)  # type: ignore[arg-type]


def _client(app: Starlette) -> TestClient:
    return TestClient(app, base_url=BASE)


def _signed_in(app: Starlette) -> tuple[TestClient, str]:
    """A client holding a session cookie, and its CSRF token read off a page."""
    client = _client(app)
    response = client.get(f"/table?token={app.state.guard.token}")
    assert response.status_code == 200
    return client, csrf_of(response.text)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    space = tmp_path / "space"
    space.mkdir()
    (space / "t.csv").write_text(TABLE)
    return space


def test_no_token_no_cookie_is_403_everywhere(workspace: Path) -> None:
    client = _client(_app(workspace))
    for path in ("/", "/table", "/static/workbench.js", "/static/vendor/vega.min.js", "/job.toml"):
        assert client.get(path).status_code == 403, path
    assert client.post("/table/pick", data={"name": "t.csv"}).status_code == 403


def test_a_wrong_token_or_cookie_is_403(workspace: Path) -> None:
    app = _app(workspace)
    client = _client(app)
    assert client.get("/table?token=not-the-token").status_code == 403
    client.cookies.set("kanonym_session", "forged")
    assert client.get("/table").status_code == 403


def test_the_token_buys_an_http_only_strict_cookie_and_leaves_the_url(workspace: Path) -> None:
    app = _app(workspace)
    client = _client(app)
    response = client.get(f"/table?token={app.state.guard.token}", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == f"{BASE}/table"
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    page = client.get("/table")
    assert page.status_code == 200
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "DENY"


def test_every_post_route_refuses_a_missing_or_wrong_csrf_token(workspace: Path) -> None:
    app = _app(workspace)
    client, csrf = _signed_in(app)
    posts = [
        route.path.replace("{column}", "zip").replace("{task}", "release")
        for route in app.routes
        if isinstance(route, Route) and route.methods and "POST" in route.methods
    ]
    assert len(posts) >= 10
    for path in posts:
        assert client.post(path, data={"name": "t.csv"}).status_code == 403, path
        assert client.post(path, data={"csrf": csrf + "x", "name": "t.csv"}).status_code == 403
    assert client.post("/table/pick", data={"csrf": csrf, "name": "t.csv"}).status_code == 200


def test_a_foreign_origin_or_host_is_refused(workspace: Path) -> None:
    app = _app(workspace)
    client, csrf = _signed_in(app)
    data = {"csrf": csrf, "name": "t.csv"}
    evil = client.post("/table/pick", data=data, headers={"origin": "http://evil.example"})
    assert evil.status_code == 403
    # DNS rebinding: the attacker's name resolving to 127.0.0.1 still sends its own Host.
    assert client.get("/table", headers={"host": f"evil.example:{PORT}"}).status_code == 403
    same = client.post("/table/pick", data=data, headers={"origin": BASE})
    assert same.status_code == 200


@pytest.mark.parametrize("name", ["../x.csv", "/etc/passwd", "a/../../x.csv", "C:\\x.csv", ""])
def test_names_outside_the_workspace_are_refused(workspace: Path, name: str) -> None:
    with pytest.raises(InputError, match="outside the workspace"):
        inside(workspace, name)
    app = _app(workspace)
    client, csrf = _signed_in(app)
    page = client.post("/table/pick", data={"csrf": csrf, "name": name})
    assert "outside the workspace" in page.text
    assert app.state.bench.flow.table is None


def test_a_symlink_out_of_the_workspace_is_refused(workspace: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.csv"
    secret.write_text(TABLE)
    (workspace / "link.csv").symlink_to(secret)
    (workspace / "inner.csv").symlink_to(workspace / "t.csv")  # a link inside is fine
    assert inside(workspace, "inner.csv") == (workspace / "t.csv").resolve()
    with pytest.raises(InputError, match="outside the workspace"):
        inside(workspace, "link.csv")
    client, csrf = _signed_in(_app(workspace))
    assert client.get("/files/link.csv").status_code == 403
    assert client.get("/files/..%2Fsecret.csv").status_code in (403, 404)
    assert client.get("/files/t.csv").text == TABLE
    assert "link.csv" not in client.get("/table").text  # not offered either
    page = client.post("/table/pick", data={"csrf": csrf, "name": "link.csv"})
    assert "outside the workspace" in page.text


def test_an_upload_beyond_the_limit_is_413_and_not_stored(workspace: Path) -> None:
    app = _app(workspace, max_upload_mb=0.01)
    client, csrf = _signed_in(app)
    big = b"zip,age\n" + b"02138,34\n" * 2000  # 18 kB > 10 kB
    response = client.post(
        "/table/upload", data={"csrf": csrf}, files={"file": ("big.csv", big, "text/csv")}
    )
    assert response.status_code == 413
    assert not (workspace / "big.csv").exists()
    small = client.post(
        "/table/upload",
        data={"csrf": csrf},
        files={"file": ("small.csv", TABLE.encode(), "text/csv")},
    )
    assert small.status_code == 200
    assert (workspace / "small.csv").read_text() == TABLE


def test_a_streamed_upload_without_a_length_is_cut_at_the_limit(workspace: Path) -> None:
    app = _app(workspace, max_upload_mb=0.01)
    client, csrf = _signed_in(app)
    boundary = "b0undary"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n{csrf}\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.csv"\r\n'
        "Content-Type: text/csv\r\n\r\nzip,age\r\n"
    ).encode()

    def chunks() -> Iterator[bytes]:  # no Content-Length: sent chunked
        yield head
        for _ in range(100):
            yield b"02138,34\r\n" * 100

    response = client.post(
        "/table/upload",
        content=chunks(),
        headers={"content-type": f"multipart/form-data; boundary={boundary}"},
    )
    assert response.status_code == 413
    assert not (workspace / "big.csv").exists()


def test_an_upload_never_overwrites_unless_asked(workspace: Path) -> None:
    client, csrf = _signed_in(_app(workspace))
    other = b"zip,age\n1,2\n3,4\n"
    page = client.post(
        "/table/upload", data={"csrf": csrf}, files={"file": ("t.csv", other, "text/csv")}
    )
    assert "already in the workspace" in page.text
    assert (workspace / "t.csv").read_text() == TABLE
    client.post(
        "/table/upload",
        data={"csrf": csrf, "replace": "on"},
        files={"file": ("t.csv", other, "text/csv")},
    )
    assert (workspace / "t.csv").read_bytes() == other


def test_an_upload_name_with_folders_lands_in_the_workspace(workspace: Path) -> None:
    client, csrf = _signed_in(_app(workspace))
    client.post(
        "/table/upload",
        data={"csrf": csrf},
        files={"file": ("../../escape.csv", TABLE.encode(), "text/csv")},
    )
    assert (workspace / "escape.csv").exists()
    assert not (workspace.parent.parent / "escape.csv").exists()


def test_default_bind_is_loopback_and_other_hosts_warn() -> None:
    args = _build_parser().parse_args(["serve"])
    assert args.host == "127.0.0.1"
    assert args.port == DEFAULT_PORT
    assert non_loopback_warning("127.0.0.1") is None
    warning = non_loopback_warning("0.0.0.0")
    assert warning is not None and "reachable from other machines" in warning


def test_serve_on_all_interfaces_prints_the_warning(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kanonym",
            "serve",
            "--host",
            "0.0.0.0",
            "--port",
            str(port),
            "--workspace",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None and process.stdout is not None
        warning = process.stderr.readline()
        assert "warning: listening on 0.0.0.0" in warning
        assert "reachable from other machines" in warning
        assert f"http://127.0.0.1:{port}/?token=" in process.stdout.readline()
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_serve_without_the_web_extra_names_it(tmp_path: Path) -> None:
    # A starlette that cannot be imported, as in an install without the extra.
    blocker = tmp_path / "blocker"
    (blocker / "starlette").mkdir(parents=True)
    (blocker / "starlette" / "__init__.py").write_text("raise ImportError('not installed')\n")
    process = subprocess.run(
        [sys.executable, "-m", "kanonym", "serve", "--workspace", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(blocker)},
    )
    assert process.returncode == 2
    lines = process.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'kanonym[web]'" in lines[0]


def test_a_token_or_csrf_that_is_not_ascii_is_403_not_a_crash(workspace: Path) -> None:
    app = _app(workspace)
    assert _client(app).get("/?token=%C3%A9").status_code == 403
    client, csrf = _signed_in(app)
    refused = client.post("/table/pick", data={"csrf": "é" + csrf, "name": "t.csv"})
    assert refused.status_code == 403 and "CSRF" in refused.text


def test_the_access_token_buys_one_session_only(workspace: Path) -> None:
    app = _app(workspace)
    first, _ = _signed_in(app)
    again = _client(app).get(f"/table?token={app.state.guard.token}")
    assert again.status_code == 403 and "used already" in again.text
    assert "restart kanonym serve" in again.text
    assert first.get("/table").status_code == 200  # the tab it opened goes on
    # The cookie's name holds the port: another workbench's session does not replace it.
    assert f"kanonym_session_{PORT}" in first.cookies


def test_the_home_folder_and_the_root_are_refused_as_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(InputError, match=r"may not be / .*dedicated folder"):
        create_app(Path("/"), port=PORT)
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(InputError, match="your home folder"):
        create_app(tmp_path, port=PORT)
    (tmp_path / "releases").mkdir()
    create_app(tmp_path / "releases", port=PORT)  # a folder of its own is fine
    process = subprocess.run(
        [sys.executable, "-m", "kanonym", "serve", "--port", "1"],
        cwd=tmp_path,  # the default workspace: the working directory, here the home folder
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert process.returncode == 2
    lines = process.stderr.strip().splitlines()
    assert len(lines) == 1 and "your home folder" in lines[0], process.stderr


def test_only_listed_tables_and_written_files_are_served(workspace: Path) -> None:
    (workspace / ".hidden.csv").write_text(TABLE)
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config.csv").write_text(TABLE)
    (workspace / "ledger.sqlite").write_bytes(b"SQLite format 3\x00")
    (workspace / "id_rsa").write_text("key")
    deep = workspace / "a" / "b" / "c" / "d" / "e"
    deep.mkdir(parents=True)
    (deep / "deep.csv").write_text(TABLE)
    client, _ = _signed_in(_app(workspace))
    for name in (".hidden.csv", ".git/config.csv", "ledger.sqlite", "id_rsa", "a/b/c/d/e/deep.csv"):
        assert client.get(f"/files/{name}").status_code == 403, name
    assert client.get("/files/t.csv").text == TABLE
    listing = client.get("/table").text
    assert "<option>t.csv</option>" in listing
    assert ".hidden.csv" not in listing and "config.csv" not in listing
    assert "deep.csv" not in listing
