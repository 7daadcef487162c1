"""Issue 10, point 6: releases and the ledger under kills, a locked ledger, a full disk, races.

The process is killed (SIGKILL, by ``strace -e inject=...:signal=KILL``) at
every rename, unlink, fsync and fdatasync it makes in the release's folder,
the ledger's commit included (SQLite's own syncs and journal unlink). After
each kill and the next use (a recovery), the files at the output paths are
all the old ones or all the new ones, a release is on disk only if the ledger
records it, nothing that existed before is gone, and no temporary stays.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from tests.patients import CONFIG, ROLES, write_patients

from kanonym.config import AnonymizationConfig
from kanonym.errors import InputError
from kanonym.io.write import recover, write_atomic
from kanonym.ledger import sqlite, storage
from kanonym.release.recorded import Ledger

SYSCALLS = "rename,renameat,renameat2,unlink,unlinkat,fsync,fdatasync"
OLD = {"out.csv": "old release\n", "out.json": "{}\n"}


def _strace_works() -> bool:
    if shutil.which("strace") is None:
        return False
    probe = subprocess.run(
        ["strace", "-f", "-qq", "-o", os.devnull, "-e", "trace=fsync", "true"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


needs_strace = pytest.mark.skipif(not _strace_works(), reason="needs strace (ptrace)")


def _env() -> dict[str, str]:
    # No bytecode or compile-cache writes, so two runs make the same system calls.
    return {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}


def _command(folder: Path, *, ledger: bool, seed: int) -> list[str]:
    verb = ["release", "--ledger", str(folder / "l.sqlite")] if ledger else ["anonymize"]
    return [
        sys.executable, "-m", "kanonym", verb[0], str(folder / "patients.csv"), *verb[1:],
        *ROLES, "--seed", str(seed),
        "--output", str(folder / "out.csv"), "--report", str(folder / "out.json"),
    ]  # fmt: skip


def _calls(folder: Path, command: list[str]) -> list[tuple[str, int]]:
    """The main thread's calls in ``folder``, each as (syscall, its occurrence number)."""
    trace = folder.parent / f"{folder.name}.trace"
    subprocess.run(
        ["strace", "-f", "-qq", "-y", "-o", str(trace), "-e", f"trace={SYSCALLS}", *command],
        env=_env(),
        check=True,
        capture_output=True,
    )
    lines = trace.read_text().splitlines()
    main = lines[0].split()[0]
    seen: Counter[str] = Counter()
    found = []
    for line in lines:
        match = re.match(r"(\d+)\s+(\w+)\(", line)
        if match is None or match.group(1) != main:
            continue
        seen[match.group(2)] += 1
        if str(folder) in line:
            found.append((match.group(2), seen[match.group(2)]))
    return found


def _killed_at(command: list[str], call: tuple[str, int]) -> int:
    name, occurrence = call
    done = subprocess.run(
        [
            "strace", "-f", "-qq", "-o", os.devnull, "-e", f"trace={SYSCALLS}",
            "-e", f"inject={name}:signal=KILL:when={occurrence}", *command,
        ],
        env=_env(),
        capture_output=True,
        check=False,
    )  # fmt: skip
    return done.returncode


def _state(folder: Path, new_release: str) -> tuple[str, ...]:
    """Per output path: 'old', 'new' or 'other' (a report's timings differ run to run)."""
    kinds = []
    for name, old in OLD.items():
        path = folder / name
        text = path.read_text() if path.exists() else None
        if text == old:
            kinds.append("old")
        elif name.endswith(".csv"):
            kinds.append("new" if text == new_release else "other")
        else:
            kinds.append("new" if text and json.loads(text).get("seed") == 2 else "other")
    return tuple(kinds)


def _leftovers(folder: Path) -> list[str]:
    """Hidden files left in ``folder``, but the ledger's (empty, kept) lock file."""
    return sorted(
        p.name for p in folder.iterdir() if p.name.startswith(".") and p.suffix != ".lock"
    )


def _setup(folder: Path, *, ledger: bool) -> tuple[list[str], str]:
    """The folder with a source and old outputs; the command and the release it writes."""
    folder.mkdir()
    write_patients(folder, rows=60)
    clean = folder.parent / f"{folder.name}-clean"
    clean.mkdir()
    write_patients(clean, rows=60)
    if ledger:
        # A first release recorded, so that the killed one is release 2.
        first = _command(clean, ledger=True, seed=1)
        first[first.index("--output") + 1] = str(clean / "first.csv")
        first[first.index("--report") + 1] = str(clean / "first.json")
        subprocess.run(first, env=_env(), check=True)
        shutil.copy(clean / "l.sqlite", folder / "l.sqlite")
    subprocess.run(_command(clean, ledger=ledger, seed=2), env=_env(), check=True)
    new = (clean / "out.csv").read_text()
    for name, text in OLD.items():
        (folder / name).write_text(text)
    return _command(folder, ledger=ledger, seed=2), new


@needs_strace
@pytest.mark.parametrize("ledger", [False, True], ids=["anonymize", "release"])
def test_issue10_p6_a_kill_at_any_point_leaves_all_old_or_all_new(
    tmp_path: Path, ledger: bool
) -> None:
    template = tmp_path / "template"
    command, new = _setup(template, ledger=ledger)
    probe = tmp_path / "probe"
    shutil.copytree(template, probe)
    points = _calls(probe, [c.replace(str(template), str(probe)) for c in command])
    assert _state(probe, new) == ("new", "new")  # the traced run completed
    assert len(points) >= 8, points
    outcomes: Counter[str] = Counter()
    for number, point in enumerate(points):
        folder = tmp_path / f"kill{number}"
        shutil.copytree(template, folder)
        run = [c.replace(str(template), str(folder)) for c in command]
        assert _killed_at(run, point) == -9, point
        # Right after the kill: every output path still holds a whole file, old or new.
        assert "other" not in _state(folder, new), point
        if ledger:
            # The ledger's next use finishes or undoes what the kill interrupted.
            Ledger(folder / "l.sqlite").recover()
            recorded = len(Ledger(folder / "l.sqlite", create=False).entries())
            assert recorded in (1, 2), point
        # The next kanonym write in the folder settles what is left there.
        recover(folder)
        state = _state(folder, new)
        assert state in (("old", "old"), ("new", "new")), (point, state)
        if ledger:
            assert (state == ("new", "new")) == (recorded == 2), (point, state)
        assert _leftovers(folder) == [], (point, _leftovers(folder))
        outcomes[state[0]] += 1
    # Kills both before and after the commit point were exercised.
    assert outcomes["old"] and outcomes["new"], outcomes


@needs_strace
def test_issue10_p6_a_full_disk_leaves_no_ledger_and_no_files(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    write_patients(folder, rows=60)
    for name, text in OLD.items():
        (folder / name).write_text(text)
    done = subprocess.run(
        [
            "strace", "-f", "-qq", "-o", os.devnull, "-e", "trace=pwrite64,write",
            "-e", "inject=pwrite64:error=ENOSPC", *_command(folder, ledger=True, seed=1),
        ],
        env=_env(),
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "cannot create the ledger" in done.stderr
    assert not (folder / "l.sqlite").exists()
    assert _state(folder, "") == ("old", "old") and _leftovers(folder) == []


def test_issue10_p6_a_locked_ledger_keeps_the_previous_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ledger held past the busy timeout: nothing written, the old files stay."""
    write_patients(tmp_path, rows=60)
    config = CONFIG
    ledger = Ledger(tmp_path / "l.sqlite")
    ledger.release(tmp_path / "patients.csv", config, output=tmp_path / "first.csv")
    for name, text in OLD.items():
        (tmp_path / name).write_text(text)
    monkeypatch.setattr(sqlite, "BUSY_TIMEOUT_SECONDS", 0.2)
    holder = sqlite3.connect(tmp_path / "l.sqlite", isolation_level=None)
    real_prepare = storage.prepare_write

    def prepare_then_lock(*args: object, **kwargs: object) -> object:
        # Another process takes the ledger once the files are written beside their paths.
        prepared = real_prepare(*args, **kwargs)  # type: ignore[arg-type]
        holder.execute("BEGIN EXCLUSIVE")
        return prepared

    monkeypatch.setattr(storage, "prepare_write", prepare_then_lock)
    try:
        with pytest.raises(
            InputError, match=r"cannot record the release \(database is locked\); nothing written"
        ):
            ledger.release(
                tmp_path / "patients.csv",
                dataclasses.replace(config, seed=2),
                output=tmp_path / "out.csv",
                report=tmp_path / "out.json",
            )
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert _state(tmp_path, "") == ("old", "old") and _leftovers(tmp_path) == []
    assert [e.id for e in ledger.entries()] == [1]
    assert (tmp_path / "first.csv").exists()


def test_issue10_p6_concurrent_releases_into_one_new_ledger(tmp_path: Path) -> None:
    """Four releases of different sources race into one new ledger; exit codes tell the truth."""
    processes = []
    for number in range(4):
        source = write_patients(tmp_path, name=f"p{number}.csv", rows=40 + 10 * number)
        command = [
            sys.executable, "-m", "kanonym", "release", str(source),
            "--ledger", str(tmp_path / "l.sqlite"), *ROLES, "--seed", "1",
            "--output", str(tmp_path / f"out{number}.csv"),
        ]  # fmt: skip
        processes.append(subprocess.Popen(command, env=_env(), stderr=subprocess.PIPE, text=True))
    codes = [p.wait() for p in processes]
    errors = [p.stderr.read() if p.stderr else "" for p in processes]
    entries = Ledger(tmp_path / "l.sqlite", create=False).entries()
    recorded = {Path(e.output).name for e in entries}
    for number, (code, error) in enumerate(zip(codes, errors, strict=True)):
        output = tmp_path / f"out{number}.csv"
        assert code in (0, 2), error
        assert output.exists() == (code == 0) == (output.name in recorded), error
    # Issue 15, point 7: releases of different sources never block each other.
    assert codes == [0, 0, 0, 0], errors
    assert sorted(e.id for e in entries) == [1, 2, 3, 4]
    assert _leftovers(tmp_path) == []


def test_issue15_p7_releases_of_one_source_wait_for_each_other(tmp_path: Path) -> None:
    """Three releases of one table at once: each waits, and each is planned after the last."""
    source = write_patients(tmp_path, rows=60)
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kanonym",
                "release",
                str(source),
                "--ledger",
                str(tmp_path / "l.sqlite"),
                *ROLES,
                "--seed",
                str(seed),
                "--output",
                str(tmp_path / f"out{seed}.csv"),
            ],
            env=_env(),
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in (1, 2, 3)
    ]
    codes = [p.wait() for p in processes]
    errors = [p.stderr.read() if p.stderr else "" for p in processes]
    assert codes == [0, 0, 0], errors
    entries = Ledger(tmp_path / "l.sqlite", create=False).entries()
    assert sorted(e.seed for e in entries) == [1, 2, 3]
    # The later two were planned against the earlier ones: complementary releases.
    assert sorted(bool(e.complementary) for e in entries) == [False, True, True]
    assert _leftovers(tmp_path) == []


@needs_strace
def test_issue15_p9_the_next_run_removes_what_a_kill_left(tmp_path: Path) -> None:
    """kill -9 while the temporaries are written; the next run on the same path cleans up."""
    template = tmp_path / "template"
    command, new = _setup(template, ledger=False)
    probe = tmp_path / "probe"
    shutil.copytree(template, probe)
    trace = _calls(probe, [c.replace(str(template), str(probe)) for c in command])
    # The last sync before the commit point: every temporary is written by then.
    point = trace[[name for name, _ in trace].index("rename", 2) - 1]
    folder = tmp_path / "run"
    shutil.copytree(template, folder)
    run = [c.replace(str(template), str(folder)) for c in command]
    assert _killed_at(run, point) == -9
    assert any(p.suffix == ".tmp" for p in folder.iterdir())  # the kill left temporaries
    subprocess.run(run, env=_env(), check=True, capture_output=True)
    assert _state(folder, new) == ("new", "new")
    assert _leftovers(folder) == []


# Found by review of points 4 and 6 (scenarios kept as tests).


def test_issue10_p6_a_group_across_two_folders_is_recovered_from_either(tmp_path: Path) -> None:
    """Killed after the commit point; the next write to the second folder finishes both."""
    first, second = tmp_path / "A", tmp_path / "B"
    for folder in (first, second):
        folder.mkdir()
    (first / "release.csv").write_text("old\n")
    (second / "report.json").write_text("old\n")
    child = (
        "import os\n"
        "from pathlib import Path\n"
        "import kanonym.io.write as w\n"
        "real = w._replace\n"
        "calls = []\n"
        "def dying(t, d):\n"
        "    calls.append(1)\n"
        "    if len(calls) == 1:\n"
        "        return real(t, d)\n"
        "    os._exit(9)\n"
        "w._replace = dying\n"
        f"w.write_atomic([(Path({str(first / 'release.csv')!r}), b'new\\n'),\n"
        f"                (Path({str(second / 'report.json')!r}), b'new\\n')])\n"
    )
    assert subprocess.run([sys.executable, "-c", child], check=False).returncode == 9
    write_atomic([(second / "other.csv", b"x\n")])  # the next write, to folder B only
    assert (first / "release.csv").read_text() == "new\n"
    assert (second / "report.json").read_text() == "new\n"
    assert _leftovers(first) == [] and _leftovers(second) == []


def test_issue10_p6_ctrl_c_during_the_ledger_commit_leaves_a_written_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C as the transaction commits: the release is recorded and its file written."""
    import signal

    real = storage._commit

    def commit_then_interrupt(connection: sqlite3.Connection) -> None:
        real(connection)
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(storage, "_commit", commit_then_interrupt)
    table = write_patients(tmp_path, rows=60)
    config = AnonymizationConfig(
        quasi_identifiers={"zip": "mask"},
        identifying=("name", "ssn"),
        insensitive=("birth_date", "sex", "diagnosis", "admission_date", "length_of_stay"),
        k=3,
        seed=7,
    )
    ledger = Ledger(tmp_path / "l.sqlite")
    with pytest.raises(KeyboardInterrupt):
        ledger.release(table, config, output=tmp_path / "r1.csv")
    monkeypatch.undo()
    assert [e.id for e in Ledger(tmp_path / "l.sqlite").entries()] == [1]
    assert (tmp_path / "r1.csv").exists() and _leftovers(tmp_path) == []


def test_issue10_p6_an_unrecorded_ledger_write_is_undone_by_the_next_plain_write(
    tmp_path: Path,
) -> None:
    """A release killed before its ledger committed: the next write there removes its files."""
    write_patients(tmp_path, rows=60)
    # The process dies where the ledger would commit: files written beside their
    # paths, the release not recorded.
    child = (
        "import os, sys\n"
        "import kanonym.ledger.storage as storage\n"
        "storage._commit = lambda connection: os._exit(9)\n"
        "from kanonym.cli.main import run\n"
        "sys.argv = ['kanonym', *sys.argv[1:]]\n"
        "run()\n"
    )
    command = _command(tmp_path, ledger=True, seed=1)
    done = subprocess.run([sys.executable, "-c", child, *command[3:]], check=False, env=_env())
    assert done.returncode == 9
    assert any(p.suffix == ".tmp" for p in tmp_path.iterdir())
    write_atomic([(tmp_path / "other.csv", b"x\n")])  # the next write in that folder
    assert _leftovers(tmp_path) == []
    assert not (tmp_path / "out.csv").exists()
