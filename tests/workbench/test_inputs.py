"""What the workbench takes in: uploads, names, numbers and models, on the real app.

Starlette's test client talks HTTP to the application built on a temporary
workspace; no mocks. Each test checks what a careless or hostile input must
not do: destroy a good file, leave personal data behind, follow a planted
link, crash a page, or break the page it is shown on.
"""

from __future__ import annotations

import gzip
import json
import re
import time
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")


from tests.workbench.client import Client, errors

from kanonym.search import Progress
from kanonym.workbench.tasks import Task

TABLE = "zip,age\n02138,34\n02139,36\n02141,41\n02142,45\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    space = tmp_path / "space"
    space.mkdir()
    (space / "t.csv").write_text(TABLE)
    return space


def _hidden(workspace: Path) -> list[str]:
    return sorted(p.name for p in workspace.rglob(".*"))


def test_a_broken_upload_replaces_nothing_and_leaves_no_file(workspace: Path) -> None:
    client = Client(workspace)
    client.post("/table/pick", name="t.csv")
    # A zip archive named .csv: it does not read as a table.
    page = client.upload("t.csv", b"PK\x03\x04 not a table", replace="on")
    (error,) = errors(page)
    assert "t.csv" in error and ".kanonym-upload" not in error
    assert (workspace / "t.csv").read_text() == TABLE
    assert client.bench.flow.table == "t.csv" and client.bench.flow.frame.height == 4
    assert _hidden(workspace) == []
    # A good one replaces it, and is the table loaded.
    client.upload("t.csv", b"zip,age\n1,2\n", replace="on")
    assert (workspace / "t.csv").read_bytes() == b"zip,age\n1,2\n"
    assert client.bench.flow.frame.height == 1 and _hidden(workspace) == []


def test_an_upload_never_writes_through_a_planted_link(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("untouched")
    # The old temporary name of an upload of u.csv, linked out of the workspace.
    (workspace / ".u.csv.part").symlink_to(outside)
    client = Client(workspace)
    assert errors(client.upload("u.csv", TABLE.encode())) == []
    assert outside.read_text() == "untouched"
    assert (workspace / "u.csv").read_text() == TABLE
    assert _hidden(workspace) == [".u.csv.part"]  # only the planted link


def test_a_gzip_upload_that_decompresses_beyond_ten_times_the_limit_is_refused(
    workspace: Path,
) -> None:
    client = Client(workspace, max_upload_mb=0.01)  # 10 kB: 100 kB decompressed at most
    bomb = gzip.compress(b"zip,age\n" + b"02138,34\n" * 20_000)  # 180 kB, 1 kB packed
    assert len(bomb) < 10_000
    (error,) = errors(client.upload("bomb.csv.gz", bomb))
    assert "decompresses to more than 0.1 MB" in error
    assert not (workspace / "bomb.csv.gz").exists() and _hidden(workspace) == []
    small = gzip.compress(TABLE.encode())
    assert errors(client.upload("small.csv.gz", small)) == []
    assert client.bench.flow.table == "small.csv.gz"


def test_a_hidden_upload_name_is_refused(workspace: Path) -> None:
    client = Client(workspace)
    (error,) = errors(client.upload(".profile.csv", TABLE.encode()))
    assert "hidden" in error and not (workspace / ".profile.csv").exists()


def test_a_column_with_a_slash_gets_a_hierarchy_and_a_table_name_beyond_latin_1(
    workspace: Path,
) -> None:
    client = Client(workspace)
    name = "患者.csv"
    rows = "a/b,.,age\n02138,x,34\n02139,y,36\n02141,x,41\n02142,y,45\n"
    assert errors(client.upload(name, rows.encode())) == []
    assert client.bench.flow.table == name
    roles = {"a/b": "quasi-identifying", ".": "quasi-identifying", "age": "insensitive"}
    client.post("/roles", **{f"role:{column}": role for column, role in roles.items()})
    for column in ("a/b", "."):
        page = client.post("/hierarchies/save", column=column, builder="mask", argument="")
        assert errors(page) == [] and 'id="hierarchy-preview"' in page
    assert client.bench.flow.hierarchies == {"a/b": "mask", ".": "mask"}
    exported = client.client.get("/hierarchies/arx.csv", params={"column": "a/b"})
    assert exported.status_code == 200 and "02138;" in exported.text
    assert "filename*=UTF-8''a_b.csv" in exported.headers["content-disposition"]
    download = client.client.get(f"/files/{name}")
    assert download.status_code == 200 and download.text == rows
    disposition = download.headers["content-disposition"]
    assert "filename*=UTF-8''%E6%82%A3%E8%80%85.csv" in disposition
    client.post("/models", k="2", suppression="0", metric="loss", seed="1", name="患者-out")
    job = client.client.get("/job.toml")
    assert job.status_code == 200 and "filename*=UTF-8''" in job.headers["content-disposition"]
    assert tomllib.loads(job.text)["input"] == name


def test_a_hierarchy_file_named_like_a_builder_is_read_as_the_file(workspace: Path) -> None:
    zips = ["02138", "02139", "02141", "02142"]
    arx = "".join(f"{z};{z[:4]}*;*\n" for z in zips)
    (workspace / "order:2.csv").write_text(arx)
    (workspace / "mask").write_text(arx)
    client = Client(workspace)
    client.post("/table/pick", name="t.csv")
    client.post("/roles", **{"role:zip": "quasi-identifying", "role:age": "insensitive"})
    for name, spec in (("order:2.csv", "./order:2.csv"), ("mask", "./mask")):
        page = client.post("/hierarchies/save", column="zip", builder="file", argument=name)
        assert errors(page) == [], name
        assert client.bench.flow.hierarchies["zip"] == spec
        assert "0213*" in page  # the file's level 1, which no builder makes
    client.post("/models", k="2", suppression="0", metric="loss", seed="1", name="out")
    job = tomllib.loads(client.get("/job.toml"))
    assert job["qi"] == {"zip": "./mask"}


def test_a_sensitive_column_named_with_colons_keeps_its_models(workspace: Path) -> None:
    (workspace / "s.csv").write_text("zip,a:b\n02138,flu\n02139,cold\n02141,flu\n02142,cold\n")
    client = Client(workspace)
    client.post("/table/pick", name="s.csv")
    client.post("/roles", **{"role:zip": "quasi-identifying", "role:a:b": "sensitive"})
    limits = {"k": "2", "suppression": "0", "metric": "loss", "seed": "1", "name": "s-out"}
    page = client.post("/models", **limits, **{"l:a:b": "2", "t:a:b": "0.5"})
    assert errors(page) == []
    assert re.search(r'name="l:a:b" value="2"', page)
    assert re.search(r'name="t:a:b" value="0.5"', page)
    models = client.bench.flow.models["a:b"]
    # Saved again as the page shows them: the models stay.
    client.post("/models", **limits, **{"l:a:b": "2", "t:a:b": "0.5"})
    assert client.bench.flow.models["a:b"] == models


@pytest.mark.parametrize("k", ["²", "٣", "99999999999999999999999", "-1", "1e3", ""])
def test_a_number_field_that_is_not_a_whole_number_is_one_line(workspace: Path, k: str) -> None:
    client = Client(workspace)
    client.post("/table/pick", name="t.csv")
    limits = {"suppression": "0", "metric": "loss", "seed": "1", "name": "out"}
    (error,) = errors(client.post("/models", k=k, **limits))
    assert error.startswith("k must be a whole number from 1 to 2147483647")


def test_a_hostile_column_name_leaves_the_results_page_intact(workspace: Path) -> None:
    hostile = "<!--<script>"
    rows = [
        f"{z},{a},{s}"
        for z, a, s in zip(
            ["02138", "02139", "02141", "02142"] * 2, [34, 36, 41, 45] * 2, "ab" * 4, strict=True
        )
    ]
    (workspace / "h.csv").write_text(f"{hostile},age,sex\n" + "\n".join(rows) + "\n")
    client = Client(workspace)
    client.post("/table/pick", name="h.csv")
    roles = {hostile: "quasi-identifying", "age": "quasi-identifying", "sex": "insensitive"}
    client.post("/roles", **{f"role:{column}": role for column, role in roles.items()})
    client.post("/hierarchies/save", column=hostile, builder="mask", argument="")
    client.post("/hierarchies/save", column="age", builder="interval", argument="5,10")
    client.post("/models", k="2", suppression="0", metric="loss", seed="1", name="out")
    client.post("/run")
    client.bench.run.join(timeout=300)
    page = client.get("/results")
    assert "<!--" not in page
    specs = re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', page, re.S)
    assert specs and page.count("<script") == page.count("</script>")
    assert any(hostile in json.dumps(json.loads(text), ensure_ascii=False) for text in specs)
    assert page.rstrip().endswith("</html>")


def test_loading_a_table_cancels_the_running_sweep_and_release(workspace: Path) -> None:
    client = Client(workspace)

    def endless(report: Callable[[Progress], None]) -> None:
        while True:  # a search that reports now and then, and only a cancel ends
            report(Progress.of_stage("searching"))
            time.sleep(0.01)

    tasks: list[Task[None]] = [Task("sweep", endless), Task("release", endless)]
    for task in tasks:
        task.start()
    client.bench.sweep, client.bench.run = tasks
    client.post("/table/pick", name="t.csv")
    for task in tasks:
        task.join(timeout=60)
        assert task.state == "cancelled"
    assert client.bench.sweep is None and client.bench.run is None


def test_a_hierarchy_upload_the_column_does_not_fit_replaces_nothing(workspace: Path) -> None:
    good = "".join(f"{z};{z[:4]}*;*\n" for z in ("02138", "02139", "02141", "02142"))
    (workspace / "hierarchies").mkdir()
    (workspace / "hierarchies" / "zip.csv").write_text(good)
    client = Client(workspace)
    client.post("/table/pick", name="t.csv")
    client.post("/roles", **{"role:zip": "quasi-identifying", "role:age": "insensitive"})
    lacking = b"02138;0213*;*\n"  # lacks three of the column's values
    page = client.post(
        "/hierarchies/save",
        files={"upload": ("zip.csv", lacking, "text/csv")},
        column="zip",
        builder="file",
        replace="on",
    )
    (error,) = errors(page)
    assert "zip.csv" in error and ".kanonym-upload" not in error
    assert (workspace / "hierarchies" / "zip.csv").read_text() == good
    assert _hidden(workspace) == [] and "zip" not in client.bench.flow.hierarchies
