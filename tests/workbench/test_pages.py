"""The workbench's workflow through its pages (Starlette's test client, the real app).

The browser tests (test_browser.py) walk the same steps in Chromium; these
check, without a browser, what the server itself enforces: nothing runs
while a column has no role, the job it writes is the release's, a running
task can be cancelled, and no page names an address outside the server.
"""

from __future__ import annotations

import html
import re
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import polars as pl
import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.applications import Starlette

with warnings.catch_warnings():
    # Starlette now prefers the httpx2 package but still drives httpx (the dev extra's).
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from kanonym.datasets import adult_path
from kanonym.errors import InputError
from kanonym.release.pipeline import anonymize
from kanonym.release.recorded import Ledger
from kanonym.workbench import create_app
from kanonym.workbench.tasks import Task

PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"
PATIENTS = """name,zip,age,sex,diagnosis
Ann Lee,02138,34,F,flu
Bob Ray,02139,36,M,asthma
Cat Day,02141,41,F,flu
Dan Fox,02142,45,M,diabetes
Eve Kim,02138,33,F,asthma
Fay Ng,02139,38,F,flu
Gus Orr,02141,47,M,diabetes
Hal Poe,02142,42,M,flu
Ivy Qi,02138,31,F,diabetes
Jon Roe,02139,39,M,asthma
"""
ROLES = {
    "name": "identifying",
    "zip": "quasi-identifying",
    "age": "quasi-identifying",
    "sex": "quasi-identifying",
    "diagnosis": "sensitive",
}
SPECS = {"zip": ("mask", ""), "age": ("interval", "5,10,20"), "sex": ("suppress", "")}


class Session:
    """A signed-in client of a fresh app on a workspace holding patients.csv."""

    def __init__(self, workspace: Path, ledger: str | None = None) -> None:
        (workspace / "patients.csv").write_text(PATIENTS)
        self.workspace = workspace
        self.app: Starlette = create_app(workspace, port=PORT, ledger=ledger)
        self.client = TestClient(self.app, base_url=BASE)
        page = self.client.get(f"/table?token={self.app.state.guard.token}")
        match = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert match is not None
        self.csrf = match.group(1)
        self.pages: list[str] = [page.text]

    def post(self, path: str, **fields: str) -> str:
        response = self.client.post(path, data={"csrf": self.csrf, **fields})
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

    def errors(self, page: str) -> list[str]:
        found = re.findall(r'class="message error"[^>]*>([^<]*)<', page)
        return [html.unescape(text) for text in found]

    def prepare(self) -> None:
        """Load the table, give every role and hierarchy, set k=2 and a seed."""
        self.post("/table/pick", name="patients.csv")
        self.post("/roles", **{f"role:{column}": role for column, role in ROLES.items()})
        for column, (builder, argument) in SPECS.items():
            page = self.post(f"/hierarchies/{column}", builder=builder, argument=argument)
            assert self.errors(page) == []
        page = self.post(
            "/models",
            k="2",
            suppression="0",
            metric="loss",
            seed="7",
            name="out",
            **{"l:diagnosis": "2"},
        )
        assert self.errors(page) == []


@pytest.fixture
def session(tmp_path: Path) -> Session:
    workspace = tmp_path / "space"
    workspace.mkdir()
    return Session(workspace)


def test_nothing_runs_while_a_column_has_no_role(session: Session) -> None:
    session.post("/table/pick", name="patients.csv")
    roles = {column: role for column, role in ROLES.items() if column != "diagnosis"}
    page = session.post("/roles", **{f"role:{column}": role for column, role in roles.items()})
    assert "still without one: diagnosis" in page
    for column, (builder, argument) in SPECS.items():
        session.post(f"/hierarchies/{column}", builder=builder, argument=argument)
    run = session.get("/run")
    assert re.search(r'id="run-button"\s+disabled', run)
    refused = session.post("/run")
    assert any("without one: diagnosis" in error for error in session.errors(refused))
    assert session.app.state.bench.run is None
    job = session.client.get("/job.toml")  # no job either, only the reason
    assert job.status_code == 409 and "diagnosis" in job.text
    assert list(session.workspace.iterdir()) == [session.workspace / "patients.csv"]


def test_the_scan_suggests_the_name_as_identifying(session: Session) -> None:
    page = session.post("/table/pick", name="patients.csv")
    assert 'id="column-stats"' in page
    roles = session.get("/roles")
    assert re.search(r"<td>name</td>.*?identifying: unique on 100% of the rows", roles, re.S)
    session.post("/roles/suggested")
    assert session.app.state.bench.flow.roles["name"] == "identifying"
    flow = session.app.state.bench.flow
    assert flow.roles == {name: hint.role for name, hint in flow.suggestions.items()}
    assert flow.roles["zip"] == "quasi-identifying"


def test_a_hierarchy_the_column_does_not_fit_is_refused_in_one_line(session: Session) -> None:
    session.post("/table/pick", name="patients.csv")
    session.post("/roles", **{f"role:{column}": role for column, role in ROLES.items()})
    page = session.post("/hierarchies/zip", builder="interval", argument="5,7")
    errors = session.errors(page)
    assert len(errors) == 1 and "multiple of 5" in errors[0]
    assert "zip" not in session.app.state.bench.flow.hierarchies
    preview = session.post("/hierarchies/age", builder="interval", argument="5,10")
    assert "level 2" in preview and "30-39" in preview
    ordered = session.post("/hierarchies/age", builder="order", argument="2:numeric")
    assert session.errors(ordered) == []
    assert "[31, 33]" in ordered  # the two smallest ages, grouped in their order
    assert session.app.state.bench.flow.hierarchies["age"] == "order:2:numeric"


def test_the_job_reproduces_the_filed_release_from_the_command_line(session: Session) -> None:
    session.prepare()
    session.post("/run")
    session.app.state.bench.run.join(timeout=300)
    results = session.get("/results")
    assert 'id="risk"' in results and "distribution:age" in results
    # Settings changed after the run change the next job, not the release made.
    session.post("/models", k="3", suppression="0", metric="loss", seed="8", name="other")
    assert "seed = 8" in session.client.get("/job.toml").text
    job_text = session.client.get("/job.toml?of=release").text
    job = tomllib.loads(job_text)
    assert job["qi"] == {"zip": "mask", "age": "interval:5,10,20", "sex": "suppress"}
    assert job["models"] == ["l-diversity:distinct:2:diagnosis"]
    assert job["seed"] == 7 and job["identifying"] == ["name"]
    filed = session.post("/results/file")
    assert session.errors(filed) == []
    released = session.client.get("/files/out.csv").content
    assert released == (session.workspace / "out.csv").read_bytes()
    assert (session.workspace / "out.toml").read_text() == job_text
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "kanonym",
            "anonymize",
            "--config",
            "out.toml",
            "--output",
            "again.csv",
            "--no-report",
            "--no-report-html",
            "--quiet",
        ],
        cwd=session.workspace,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 0, again.stderr
    assert (session.workspace / "again.csv").read_bytes() == released
    # Filing again would overwrite: refused unless asked.
    refused = session.post("/results/file")
    assert any("tick 'replace'" in error for error in session.errors(refused))


def test_no_page_names_an_address_outside_the_server(session: Session) -> None:
    session.prepare()
    session.post("/sweep")
    session.app.state.bench.sweep.join(timeout=300)
    session.get("/sweep")
    session.post("/run")
    session.app.state.bench.run.join(timeout=300)
    for path in ("/table", "/roles", "/hierarchies?column=age", "/models", "/run", "/results"):
        session.get(path)
    for page in session.pages:
        outside = [
            url
            for url in re.findall(r"https?://[^\s\"'<>]+", page)
            if not url.startswith("http://127.0.0.1")
        ]
        assert outside == []
    for name in ("vega.min.js", "vega-lite.min.js", "vega-embed.min.js"):
        assert session.client.get(f"/static/vendor/{name}").status_code == 200


def test_a_cancelled_release_stops_and_writes_nothing(tmp_path: Path) -> None:
    def release(report: object) -> object:
        return anonymize(
            adult_path(),
            quasi_identifiers={"age": "interval:5,10,20"},
            k=5,
            keep_unlisted=True,
            on_progress=report,  # type: ignore[arg-type]
        )

    task = Task("release", release)
    task.cancel()  # before it starts: its first progress report stops it
    task.start()
    task.join(timeout=120)
    assert task.state == "cancelled" and task.value is None


def test_the_cancel_button_reaches_the_running_task(session: Session) -> None:
    session.prepare()
    session.post("/run")
    bench = session.app.state.bench
    session.post("/cancel/release")
    bench.run.join(timeout=300)
    # A release this small may end before the cancel arrives; either way it says so.
    assert bench.run.state in ("cancelled", "done")
    assert bench.run.cancel_requested


def test_a_release_filed_with_a_ledger_is_recorded_there(tmp_path: Path) -> None:
    workspace = tmp_path / "space"
    workspace.mkdir()
    session = Session(workspace, ledger="releases.sqlite")
    session.prepare()
    session.post("/run")
    session.app.state.bench.run.join(timeout=300)
    filed = session.post("/results/file")
    assert session.errors(filed) == []
    entries = Ledger(workspace / "releases.sqlite").entries()
    assert len(entries) == 1 and entries[0].seed == 7
    # The ledger's release is the job's: the command line makes it again, byte for byte.
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "kanonym",
            "anonymize",
            "--config",
            "out.toml",
            "--output",
            "again.csv",
            "--no-report",
            "--no-report-html",
            "--quiet",
        ],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 0, again.stderr
    assert (workspace / "again.csv").read_bytes() == (workspace / "out.csv").read_bytes()


def test_a_ledger_outside_the_workspace_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="outside the workspace"):
        create_app(tmp_path, ledger="../releases.sqlite")


def test_a_parquet_table_is_released_as_parquet_the_command_line_reproduces(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "space"
    workspace.mkdir()
    session = Session(workspace)
    pl.read_csv(workspace / "patients.csv", infer_schema=False).write_parquet(
        workspace / "patients.parquet"
    )
    session.post("/table/pick", name="patients.parquet")
    session.post("/roles", **{f"role:{column}": role for column, role in ROLES.items()})
    for column, (builder, argument) in SPECS.items():
        session.post(f"/hierarchies/{column}", builder=builder, argument=argument)
    session.post("/models", k="2", suppression="0", metric="loss", seed="3", name="pq")
    session.post("/run")
    session.app.state.bench.run.join(timeout=300)
    assert session.errors(session.post("/results/file")) == []
    released = workspace / "pq.parquet"
    assert pl.read_parquet(released).height == 10
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "kanonym",
            "anonymize",
            "--config",
            "pq.toml",
            "--output",
            "again.parquet",
            "--no-report",
            "--no-report-html",
            "--quiet",
        ],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 0, again.stderr
    assert (workspace / "again.parquet").read_bytes() == released.read_bytes()
