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
import threading
import time
import tomllib
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")


from tests.workbench.client import Client, errors

from kanonym.datasets import adult_path
from kanonym.errors import InputError
from kanonym.ledger import table_fingerprint
from kanonym.release.pipeline import anonymize
from kanonym.release.recorded import Ledger
from kanonym.result import Result
from kanonym.search import Progress
from kanonym.workbench import create_app
from kanonym.workbench.tasks import Task

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


class Session(Client):
    """A signed-in client of a fresh app on a workspace holding patients.csv."""

    def __init__(self, workspace: Path, ledger: str | None = None) -> None:
        (workspace / "patients.csv").write_text(PATIENTS)
        super().__init__(workspace, ledger=ledger)

    def errors(self, page: str) -> list[str]:
        return errors(page)

    def prepare(self) -> None:
        """Load the table, give every role and hierarchy, set k=2 and a seed."""
        self.post("/table/pick", name="patients.csv")
        self.post("/roles", **{f"role:{column}": role for column, role in ROLES.items()})
        for column, (builder, argument) in SPECS.items():
            page = self.post("/hierarchies/save", column=column, builder=builder, argument=argument)
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
        session.post("/hierarchies/save", column=column, builder=builder, argument=argument)
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
    page = session.post("/hierarchies/save", column="zip", builder="interval", argument="5,7")
    errors = session.errors(page)
    assert len(errors) == 1 and "multiple of 5" in errors[0]
    assert "zip" not in session.app.state.bench.flow.hierarchies
    preview = session.post("/hierarchies/save", column="age", builder="interval", argument="5,10")
    assert "level 2" in preview and "30-39" in preview
    ordered = session.post("/hierarchies/save", column="age", builder="order", argument="2:numeric")
    assert session.errors(ordered) == []
    assert "[31, 33]" in ordered  # the two smallest ages, grouped in their order
    assert session.app.state.bench.flow.hierarchies["age"] == "order:2:numeric"


def test_the_job_reproduces_the_filed_release_from_the_command_line(session: Session) -> None:
    session.prepare()
    session.post("/run")
    session.app.state.bench.run.join(timeout=300)
    results = session.get("/results")
    assert 'id="risk"' in results and "distribution:age" in results
    job_text = session.client.get("/job.toml?of=release").text
    job = tomllib.loads(job_text)
    assert job["qi"] == {"zip": "mask", "age": "interval:5,10,20", "sex": "suppress"}
    assert job["models"] == ["l-diversity:distinct:2:diagnosis"]
    assert job["seed"] == 7 and job["identifying"] == ["name"]
    filed = session.post("/results/file", acknowledge="on")
    assert session.errors(filed) == []
    assert 'id="file-form"' not in filed and 'id="downloads"' in filed
    # The next release gets a seed of its own; the filed release's job stays its own.
    assert session.app.state.bench.flow.seed != 7
    assert session.client.get("/job.toml?of=release").text == job_text
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
    # The same release is filed once.
    refused = session.post("/results/file", acknowledge="on", replace="on")
    assert any("filed already" in error for error in session.errors(refused))


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


def test_a_cancel_stops_the_pipeline_at_its_next_report() -> None:
    def release(report: Callable[[Progress], None]) -> Result:
        return anonymize(
            adult_path(),
            quasi_identifiers={"age": "interval:5,10,20"},
            k=5,
            keep_unlisted=True,
            on_progress=report,
        )

    task = Task("release", release)
    task.cancel()  # before it starts: the pipeline's first progress report stops it
    task.start()
    task.join(timeout=120)
    assert task.state == "cancelled" and task.value is None


def _until_cancelled(report: Callable[[Progress], None]) -> Result:
    """Work that only a cancel ends: it reports progress until the report raises."""
    while True:
        report(Progress.of_stage("searching", detail="until cancelled"))
        time.sleep(0.01)


def test_the_cancel_button_stops_the_running_release(session: Session) -> None:
    session.prepare()
    bench = session.app.state.bench
    bench.run = Task("release", _until_cancelled)
    bench.run.start()
    time.sleep(0.3)
    assert session.client.get("/status/release").json()["state"] == "running"
    page = session.post("/cancel/release")
    bench.run.join(timeout=30)
    assert bench.run.state == "cancelled"
    status = session.client.get("/status/release").json()
    # An ended task's elapsed time is the one it ended with, never 0.
    assert status["state"] == "cancelled" and status["elapsed"] >= 0.3
    assert "cancelled" in session.get("/run") and 'id="to-results"' not in page
    refused = session.post("/results/file", acknowledge="on")
    assert any("run the release first" in error for error in session.errors(refused))
    assert list(session.workspace.iterdir()) == [session.workspace / "patients.csv"]


def test_a_release_filed_with_a_ledger_is_recorded_there(tmp_path: Path) -> None:
    workspace = tmp_path / "space"
    workspace.mkdir()
    session = Session(workspace, ledger="releases.sqlite")
    session.prepare()
    session.post("/run")
    session.app.state.bench.run.join(timeout=300)
    reviewed = session.app.state.bench.run.value
    filed = session.post("/results/file", acknowledge="on")
    assert session.errors(filed) == []
    entries = Ledger(workspace / "releases.sqlite").entries()
    assert len(entries) == 1 and entries[0].seed == 7
    # The ledger recorded the release the results page showed.
    assert entries[0].release_sha256 == table_fingerprint(reviewed.table)
    # A run with the seed the ledger holds for this table is refused before any search.
    session.post(
        "/models",
        k="2",
        suppression="0",
        metric="loss",
        seed="7",
        name="out2",
        **{"l:diagnosis": "2"},
    )
    refused = session.post("/run")
    assert any("seed 7 was already used" in error for error in session.errors(refused))
    assert session.app.state.bench.run is None
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
        session.post("/hierarchies/save", column=column, builder=builder, argument=argument)
    session.post("/models", k="2", suppression="0", metric="loss", seed="3", name="pq")
    session.post("/run")
    session.app.state.bench.run.join(timeout=300)
    assert session.errors(session.post("/results/file", acknowledge="on")) == []
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


def _ran(session: Session) -> None:
    session.post("/run")
    session.app.state.bench.run.join(timeout=300)
    assert session.app.state.bench.run.state == "done"


def _released(session: Session) -> list[str]:
    """The files of the release in the workspace (the table and hierarchy files aside)."""
    return sorted(path.name for path in session.workspace.glob("out*"))


def test_a_role_changed_after_the_run_drops_the_release(session: Session) -> None:
    session.prepare()
    session.post("/sweep")
    session.app.state.bench.sweep.join(timeout=300)
    _ran(session)
    # k is the sweep's own axis: the sweep still holds; the release does not.
    session.post("/sweep/use", k="3", suppression="0")
    assert session.app.state.bench.sweep is not None
    assert session.app.state.bench.run is None
    session.post("/sweep/use", k="2", suppression="0")
    _ran(session)
    roles = {**ROLES, "diagnosis": "insensitive"}
    page = session.post("/roles", **{f"role:{column}": role for column, role in roles.items()})
    assert "the job changed since the latest release ran" in page
    assert session.app.state.bench.sweep is None  # it swept another job
    results = session.get("/results")
    assert "run the release first" in session.errors(results)
    refused = session.post("/results/file", acknowledge="on")
    assert "run the release first" in session.errors(refused)
    assert session.client.get("/job.toml?of=release").status_code == 409
    assert _released(session) == []


def test_a_hierarchy_file_replaced_after_the_run_refuses_the_release(session: Session) -> None:
    (session.workspace / "sex.csv").write_text("F;*\nM;*\n")
    session.prepare()
    page = session.post("/hierarchies/save", column="sex", builder="file", argument="sex.csv")
    assert session.errors(page) == []
    _ran(session)
    # The same name, other content: the job's options are the same, its file is not.
    (session.workspace / "sex.csv").write_text("F;person\nM;person\n")
    stale = "the job changed since this release ran: run it again"
    results = session.get("/results")
    assert stale in session.errors(results)
    refused = session.post("/results/file", acknowledge="on")
    assert stale in session.errors(refused)
    assert _released(session) == []
    assert session.client.get("/results", follow_redirects=False).status_code == 303


def test_warnings_are_shown_and_filing_needs_their_acknowledgement(session: Session) -> None:
    session.post("/table/pick", name="patients.csv")
    roles = {**ROLES, "name": "insensitive"}  # a direct identifier, released unchanged
    session.post("/roles", **{f"role:{column}": role for column, role in roles.items()})
    for column, (builder, argument) in SPECS.items():
        session.post("/hierarchies/save", column=column, builder=builder, argument=argument)
    session.post("/models", k="2", suppression="0", metric="loss", seed="7", name="out")
    run = session.get("/run")
    assert re.search(r'id="unprotected">[^<]*diagnosis', run)  # no model protects it
    _ran(session)
    results = session.get("/results")
    found = re.search(r'role="alert" id="warnings">(.*?)</div>', results, re.S)
    assert found is not None
    warning = html.unescape(found.group(1))
    assert "'name'" in warning and "likely a direct identifier" in warning
    assert 'id="acknowledge"' in results
    refused = session.post("/results/file")
    assert any("tick that you did" in error for error in session.errors(refused))
    assert _released(session) == []
    filed = session.post("/results/file", acknowledge="on")
    assert session.errors(filed) == []
    assert "out.csv" in _released(session)


def test_a_model_for_every_sensitive_column_leaves_no_run_warning(session: Session) -> None:
    session.prepare()  # l-diversity for diagnosis
    assert 'id="unprotected"' not in session.get("/run")


def test_the_release_job_is_409_before_a_release_finished(session: Session) -> None:
    session.prepare()
    assert session.client.get("/job.toml").status_code == 200
    response = session.client.get("/job.toml?of=release")
    assert response.status_code == 409 and "no finished release" in response.text


def test_the_sweep_page_names_the_limits_it_sweeps(session: Session) -> None:
    session.prepare()
    assert "3 suppression limits, 0%, 2%, 5% (" in session.get("/sweep")
    session.post("/models", k="2", suppression="10", metric="loss", seed="7", name="out")
    assert "4 suppression limits, 0%, 2%, 5%, 10% (" in session.get("/sweep")


def test_a_release_submitted_twice_at_once_is_filed_once(session: Session) -> None:
    session.prepare()
    _ran(session)
    pages: list[str] = []

    def submit() -> None:
        pages.append(session.post("/results/file", acknowledge="on"))

    threads = [threading.Thread(target=submit) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    # Messages go to whichever page is shown next: the two pages hold one refusal.
    assert len(pages) == 2
    errors = [error for page in pages for error in session.errors(page)]
    assert len(errors) == 1 and "filed already" in errors[0]
    assert "out.csv" in _released(session)


def test_every_table_loaded_gets_a_seed_of_its_own(session: Session) -> None:
    flow = session.app.state.bench.flow
    seeds: set[int] = set()
    for _ in range(3):
        session.post("/table/pick", name="patients.csv")
        seeds.add(flow.seed)
    assert len(seeds) == 3
