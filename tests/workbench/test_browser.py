"""The workbench end to end in headless Chromium (Debian's), driven by Playwright.

The real server runs (`kanonym serve`, its own process, on a free port) on a temporary
workspace; the browser walks the whole workflow as an officer would: upload,
roles, hierarchies with their preview, the sweep over k, the run, the
results, the downloads. Then the downloaded TOML job is run by the command
line, and its release must be byte for byte the one downloaded from the page.

Playwright's own browser download is never used: ``/usr/bin/chromium`` from
Debian (``apt-get install chromium``). Without it the tests fail under CI
(``CI`` set) and are skipped elsewhere.

With ``KANONYM_SCREENSHOTS=1`` each step's screenshot is written to
``docs/images/workbench/`` (the documentation's); otherwise to a temporary
folder.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("playwright.sync_api")

from playwright.sync_api import (
    Browser,
    ConsoleMessage,
    Page,
    Request,
    Response,
    sync_playwright,
)

from kanonym.datasets import adult_hierarchy_path, load_adult

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images" / "workbench"
TIMEOUT_MS = 300_000
"""The longest wait for a sweep or a run (a slow CI machine, another job beside it)."""


def _require_chromium() -> None:
    if CHROMIUM.exists():
        return
    reason = "Debian's Chromium is not installed (/usr/bin/chromium): apt-get install chromium"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


@dataclass
class Server:
    """The workbench served by ``kanonym serve`` in its own process, as a user starts it
    (a thread of this process would share the GIL with the browser's driver, and the
    release's compiled kernels hold it)."""

    workspace: Path
    url: str
    port: int


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    _require_chromium()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "kanonym", "serve", "--workspace", str(workspace)]
    command += ["--port", str(port), "--ledger", "ledger.sqlite"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # "kanonym workbench on DIR: open URL"
        assert "open http://127.0.0.1:" in line, line
        url = line.rsplit("open ", 1)[1].strip()
        deadline = time.monotonic() + 30
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline, "the server did not start"
            assert process.poll() is None, "the server ended"
            time.sleep(0.05)
        yield Server(workspace=workspace, url=url, port=port)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Walk:
    """A browser page walking the workflow, with numbered screenshots and checks that
    nothing is fetched from anywhere but the server and no script error occurs."""

    def __init__(self, page: Page, server: Server, shots: Path, prefix: str):
        self.page = page
        self.server = server
        self.shots = shots
        self.prefix = prefix
        self.count = 0
        self.origin = f"http://127.0.0.1:{server.port}"
        self.errors: list[str] = []
        self.foreign: list[str] = []
        page.on("request", self._request)
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("response", self._response)

    def _request(self, request: Request) -> None:
        if not request.url.startswith(self.origin):
            self.foreign.append(request.url)

    def _response(self, response: Response) -> None:
        if response.status >= 400:
            self.errors.append(f"{response.status} {response.url}")

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(message.text)

    def shot(self, step: str) -> None:
        self.count += 1
        self.page.screenshot(
            path=self.shots / f"{self.prefix}{self.count:02d}-{step}.png", full_page=True
        )

    def message_errors(self) -> list[str]:
        texts: list[str] = self.page.locator(".message.error").all_inner_texts()
        return texts


def _shots(tmp_path: Path) -> Path:
    if os.environ.get("KANONYM_SCREENSHOTS") == "1":
        DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
        return DOCS_IMAGES
    folder = tmp_path / "shots"
    folder.mkdir()
    return folder


@pytest.fixture
def browser() -> Iterator[Browser]:
    _require_chromium()
    with sync_playwright() as driver:
        launched = driver.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield launched
        finally:
            launched.close()


def _walk(
    browser: Browser,
    server: Server,
    tmp_path: Path,
    *,
    prefix: str,
    table: Path,
    roles: dict[str, str],
    hierarchies: Mapping[str, tuple[str, str, Path | None]],
    sensitive_l: dict[str, str],
    pick: tuple[int, float],
) -> Path:
    """Walk the workflow on ``table``; returns the folder of the downloads."""
    context = browser.new_context(accept_downloads=True, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    walk = Walk(page, server, _shots(tmp_path), prefix)
    downloads = tmp_path / f"{prefix}downloads"
    downloads.mkdir()

    # 1 table: the token leaves the address for a cookie; upload, preview, statistics.
    page.goto(server.url)
    assert "token" not in page.url and page.url.endswith("/table")
    page.set_input_files("#upload-file", str(table))
    page.click("#upload-button")
    page.wait_for_selector("#column-stats")
    assert (server.workspace / table.name).read_bytes() == table.read_bytes()
    assert page.locator("#column-stats tbody tr").count() == len(roles)
    walk.shot("table")

    # 2 roles: nothing can run while a column has none; then every one given.
    page.goto(f"{walk.origin}/run")
    assert page.locator("#run-button").is_disabled()
    page.goto(f"{walk.origin}/roles")
    for column, role in roles.items():
        page.select_option(f'select[data-column="{column}"]', role)
    walk.shot("roles")
    page.click("#save-roles")
    page.wait_for_url("**/hierarchies")

    # 3 hierarchies: each quasi-identifier's, previewed level by level, exported.
    for column, (builder, argument, upload) in hierarchies.items():
        page.goto(f"{walk.origin}/hierarchies?column={column}")
        page.check(f'input[name="builder"][value="{builder}"]')
        page.fill("#hierarchy-argument", argument)
        if upload is not None:
            page.set_input_files("#hierarchy-upload", str(upload))
        page.click("#save-hierarchy")
        page.wait_for_selector("#hierarchy-preview")
        assert walk.message_errors() == []
        levels = page.locator("#hierarchy-preview table.level")
        assert levels.count() >= 2
        assert "level 0" in levels.first.inner_text()
    walk.shot("hierarchy")
    column = next(iter(hierarchies))
    with page.expect_download() as exported:
        page.click(f'a.export[data-column="{column}"]')
    arx = downloads / "hierarchy.csv"
    exported.value.save_as(arx)
    assert len(arx.read_text().splitlines()) > 1

    # 4 models and limits.
    page.goto(f"{walk.origin}/models")
    page.fill("#k", "5")
    page.fill("#suppression", "2")
    page.fill("#seed", "42")
    for name, value in sensitive_l.items():
        page.fill(f'input[name="l:{name}"]', value)
    page.click("#save-models")
    assert walk.message_errors() == []
    walk.shot("models")

    # 5 choosing k: the sweep, its figure and table; a point picked with its button.
    page.goto(f"{walk.origin}/sweep")
    page.click("#start-sweep")
    page.wait_for_selector("#sweep-points", timeout=TIMEOUT_MS)
    page.wait_for_selector('#figure-sweep[data-drawn="true"]')
    assert page.locator("#sweep-points tbody tr").count() == 19 * 3
    walk.shot("sweep")
    # A click on a point of the figure picks it too (the figure's "pick" selection).
    page.locator("#figure-sweep path[role='graphics-symbol']").last.click(force=True)
    page.wait_for_url("**/run")
    assert "the job now uses k = " in page.inner_text(".message")
    page.goto(f"{walk.origin}/sweep")
    k, limit = pick
    page.click(f'button.use[data-k="{k}"][data-suppression="{limit}"]')
    page.wait_for_url("**/run")
    job_text = page.inner_text("#job-toml")
    assert f"k = {k}\n" in job_text
    assert (f"max-suppression = {limit}" in job_text) == bool(limit)

    # 6 run, with its progress polled until it ends.
    page.click("#run-button")
    page.wait_for_selector("#progress")
    walk.shot("run")
    page.wait_for_selector("#to-results", timeout=TIMEOUT_MS)

    # 7 results: every figure drawn live; the release filed; the files downloaded.
    page.click("#to-results")
    page.wait_for_url("**/results")
    page.wait_for_selector(".figure")
    figures = page.locator(".figure")
    assert figures.count() >= 3
    page.wait_for_function(
        "document.querySelectorAll('.figure[data-drawn=\"true\"]').length"
        " === document.querySelectorAll('.figure').length"
    )
    assert page.locator(".figure svg").count() == figures.count()
    walk.shot("results")
    # A release with warnings is filed only once they are acknowledged.
    assert page.locator("#warnings").count() == page.locator("#acknowledge").count()
    if page.locator("#acknowledge").count():
        page.check("#acknowledge")
    page.click("#file-button")
    page.wait_for_selector("#downloads", timeout=TIMEOUT_MS)
    assert walk.message_errors() == []
    saved: dict[str, Path] = {}
    for key in ("output", "report", "report-html", "job"):
        with page.expect_download() as download:
            page.click(f'#downloads a[data-key="{key}"]')
        saved[key] = downloads / download.value.suggested_filename
        download.value.save_as(saved[key])
    with page.expect_download() as download:
        page.click("#download-job")
    job = downloads / "downloaded-job.toml"
    download.value.save_as(job)
    assert job.read_bytes() == saved["job"].read_bytes()
    walk.shot("filed")

    assert walk.foreign == [], walk.foreign
    assert walk.errors == [], walk.errors
    context.close()
    return downloads


def _reproduce(server: Server, downloads: Path, release_name: str) -> None:
    """Run the downloaded job from the workspace folder; its release must be the page's."""
    job = server.workspace / "from-the-browser.toml"
    shutil.copyfile(downloads / "downloaded-job.toml", job)
    suffix = Path(release_name).suffix
    process = subprocess.run(
        [
            sys.executable,
            "-m",
            "kanonym",
            "anonymize",
            "--config",
            job.name,
            "--output",
            f"command-line{suffix}",
            "--no-report",
            "--no-report-html",
            "--quiet",
        ],
        cwd=server.workspace,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert process.returncode == 0, process.stderr
    again = (server.workspace / f"command-line{suffix}").read_bytes()
    assert again == (downloads / release_name).read_bytes()
    assert len(again) > 100


def test_adult_from_upload_to_a_release_the_command_line_reproduces(
    browser: Browser, server: Server, tmp_path: Path
) -> None:
    table = tmp_path / "adult.csv"
    load_adult().write_csv(table)
    hierarchies = {
        name: ("file", "", adult_hierarchy_path(name)) for name in ("age", "sex", "race")
    }
    roles = {
        "sex": "quasi-identifying",
        "age": "quasi-identifying",
        "race": "quasi-identifying",
        "marital-status": "insensitive",
        "education": "insensitive",
        "native-country": "insensitive",
        "workclass": "insensitive",
        "occupation": "insensitive",
        "salary-class": "sensitive",
    }
    downloads = _walk(
        browser,
        server,
        tmp_path,
        prefix="",
        table=table,
        roles=roles,
        hierarchies=hierarchies,
        sensitive_l={"salary-class": "2"},
        pick=(10, 0.02),
    )
    assert (server.workspace / "hierarchies" / "age.csv").exists()
    job = (downloads / "downloaded-job.toml").read_text()
    assert 'age = "hierarchies/age.csv"' in job
    assert "seed = 42" in job
    _reproduce(server, downloads, "adult-anonymized.csv")
    ledger = subprocess.run(
        [sys.executable, "-m", "kanonym", "ledger", "list", "ledger.sqlite"],
        cwd=server.workspace,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ledger.returncode == 0 and "adult" in ledger.stdout


def test_a_table_with_dates(browser: Browser, server: Server, tmp_path: Path) -> None:
    rows = 60
    table = tmp_path / "visits.csv"
    pl.DataFrame(
        {
            "patient": [f"P{i:04d}" for i in range(rows)],
            "birth_date": [
                f"19{50 + i % 40:02d}-{1 + i % 12:02d}-{1 + i % 28:02d}" for i in range(rows)
            ],
            "zip": [f"021{(i * 7) % 30:02d}" for i in range(rows)],
            "diagnosis": [("flu", "asthma", "diabetes", "cold")[i % 4] for i in range(rows)],
        }
    ).write_csv(table)
    downloads = _walk(
        browser,
        server,
        tmp_path,
        prefix="dates-",
        table=table,
        roles={
            "patient": "identifying",
            "birth_date": "quasi-identifying",
            "zip": "quasi-identifying",
            "diagnosis": "sensitive",
        },
        hierarchies={"zip": ("mask", "", None), "birth_date": ("date", "", None)},
        sensitive_l={"diagnosis": "2"},
        pick=(3, 0.0),
    )
    job = (downloads / "downloaded-job.toml").read_text()
    assert 'birth_date = "date"' in job and 'identifying = ["patient"]' in job
    _reproduce(server, downloads, "visits-anonymized.csv")
