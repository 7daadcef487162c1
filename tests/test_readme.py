"""The examples of the README and of the documentation site run as written.

Each page (``README.md`` and every ``docs/**/*.md``) runs in a folder of its
own, its fenced blocks in order:

* a block with a title (```` ```text title="patients.csv" ````) is a file the
  examples read, written under that name; a ``--8<-- "path"`` line in it
  includes that file of the repository, as the site's snippets extension does;
* a ``python`` block is executed, all of a page's blocks in one namespace;
* a ``bash`` block is run by ``bash -eu -o pipefail``, with the ``kanonym``
  command of this Python first on the ``PATH``;
* any other block (``sh``, ``text``, ``json``, an untitled ``toml``) is only
  shown: synopses and outputs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import kanonym

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]

FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```[ \t]*$", flags=re.DOTALL | re.MULTILINE)
TITLE = re.compile(r'title="([^"]+)"')
SNIPPET = re.compile(r'^--8<-- "([^"]+)"$', flags=re.MULTILINE)


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: its language, file title (if any) and text."""

    language: str
    title: str | None
    text: str


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of ``page``, in order, snippet includes resolved."""
    found = []
    for info, body in FENCE.findall(page.read_text(encoding="utf-8")):
        language = info.split(maxsplit=1)[0] if info.strip() else ""
        title = TITLE.search(info)
        text = SNIPPET.sub(
            lambda m: (ROOT / m.group(1)).read_text(encoding="utf-8").rstrip("\n"), body
        )
        found.append(Block(language, title.group(1) if title else None, text))
    return found


def runnable(page: Path) -> bool:
    return any(b.language in ("python", "bash") and b.title is None for b in blocks(page))


def run_page(page: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the examples of ``page`` in ``folder``, failing on the first that fails."""
    monkeypatch.chdir(folder)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    namespace: dict[str, object] = {"__name__": "__main__"}
    for number, block in enumerate(blocks(page), start=1):
        where = f"{page.relative_to(ROOT) if page.is_relative_to(ROOT) else page}, block {number}"
        if block.title is not None:
            (folder / block.title).write_text(block.text, encoding="utf-8")
        elif block.language == "python":
            exec(compile(block.text, where, "exec"), namespace)
        elif block.language == "bash":
            done = subprocess.run(
                ["bash", "-eu", "-o", "pipefail", "-c", block.text],
                cwd=folder,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert done.returncode == 0, f"{where} exited {done.returncode}:\n{done.stderr}"


@pytest.mark.parametrize("page", [p for p in PAGES if runnable(p)], ids=lambda p: p.name)
def test_examples_of_page_run(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_page(page, tmp_path, monkeypatch)
    if page == README:
        # The README's two examples: the command line's release, and Python's
        # release of Adult, which ends by checking that it is 5-anonymous.
        assert (tmp_path / "release.csv").exists() and (tmp_path / "release.json").exists()
        assert (tmp_path / "adult-k5.csv").exists()
        assert capsys.readouterr().out.strip().endswith("True")


def test_the_pages_have_examples_to_run() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in PAGES if runnable(p)}
    assert {"README.md", "docs/getting-started.md", "docs/python.md"} <= names


def test_the_runner_writes_files_runs_blocks_and_fails_loudly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        '```text title="t.csv"\n--8<-- "docs/examples/patients.csv"\n```\n\n'
        "```bash\nhead -1 t.csv > first\n```\n\n```sh\nfalse\n```\n"
    )
    run_page(page, tmp_path, monkeypatch)
    assert (tmp_path / "first").read_text() == "name,zip,age,sex,diagnosis\n"
    page.write_text("```bash\nfalse\n```\n")
    with pytest.raises(AssertionError, match="exited 1"):
        run_page(page, tmp_path, monkeypatch)


def test_reference_documents_every_public_name() -> None:
    """docs/reference.md has one ``::: kanonym.NAME`` entry per name of ``__all__``."""
    entries = re.findall(r"^::: kanonym\.(\w+)$", (DOCS / "reference.md").read_text(), re.M)
    assert sorted(entries) == sorted(kanonym.__all__)


def test_docs_cite_papers_not_seed_files() -> None:
    """Pages and docstrings cite papers by author and year, not by the seed files' numbers."""
    seed_file = re.compile(r"\bseeds?[ _]?0\d\d\b|\bseeds/", flags=re.IGNORECASE)
    texts = [README, *DOCS.rglob("*.md"), *(ROOT / "src" / "kanonym").rglob("*.py")]
    cited = [
        f"{p.relative_to(ROOT)}: {m.group(0)}"
        for p in texts
        for m in seed_file.finditer(p.read_text())
    ]
    assert cited == []
