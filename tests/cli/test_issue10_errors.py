"""Issue 10, points 7-10 and 14: one-line errors that say how to fix, Ctrl-C, argument order.

Every bad input ends in one line on stderr and exit 2 with nothing written;
each test is named after the point of the issue it checks.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from tests.patients import patients, write_patients

from kanonym.cli import main

# The package's ``main`` attribute is the function; tests patch the module's names.
cli_main = sys.modules["kanonym.cli.main"]

QI = ["--qi", "birth_date=date", "sex=suppress", "zip=mask"]
ROLES = ["--identifying", "name", "ssn", "--insensitive", "diagnosis", "admission_date"]
ROLES += ["length_of_stay"]
SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_patients(tmp_path)
    return tmp_path


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _bad_input(argv: list[str], capsys: pytest.CaptureFixture[str], *needles: str) -> str:
    """Run ``argv``: exit 2, one line on stderr starting ``kanonym: error:``, holding needles."""
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("kanonym: error: "), err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


# Point 7: tracebacks become one-line errors.


def test_issue10_p7_no_writable_numba_cache_falls_back_to_a_temporary_folder(
    tmp_path: Path,
) -> None:
    # An installed package its user cannot write beside, and no usable HOME: every
    # __pycache__ of the copy is a regular file (unwritable even for root), and the
    # user-wide cache folder lies under a regular file too.
    package = tmp_path / "site" / "kanonym"
    shutil.copytree(
        SRC / "kanonym", package, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc")
    )
    for folder in {path.parent for path in package.rglob("*.py")}:
        (folder / "__pycache__").write_text("not a folder")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    (tmp_path / "tmp").mkdir()
    table = tmp_path / "t.csv"
    table.write_text("a,b\n1,x\n1,y\n2,x\n2,y\n")
    env = {
        key: value for key, value in os.environ.items() if not key.startswith(("NUMBA_", "HOME"))
    }
    env |= {
        "PYTHONPATH": str(package.parent),
        "XDG_CACHE_HOME": str(blocker / "cache"),
        "TMPDIR": str(tmp_path / "tmp"),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    argv = ["anonymize", str(table), "--qi", "a=suppress", "--insensitive", "b", "--k", "2"]
    argv += ["--output", str(tmp_path / "out.csv"), "--quiet"]
    done = subprocess.run(
        [sys.executable, "-m", "kanonym", *argv],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("kanonym: note: "), done.stderr
    assert "NUMBA_CACHE_DIR" in done.stderr
    assert (tmp_path / "out.csv").read_text().startswith("a,b\n")
    # The compiled kernels went to the temporary folder.
    assert list((tmp_path / "tmp").rglob("*.nbi"))


def _nested_parquet(folder: Path) -> Path:
    frame = patients(60).with_columns(
        codes=pl.col("diagnosis").str.split("a"), place=pl.struct("sex", "zip")
    )
    path = folder / "nested.parquet"
    frame.write_parquet(path)
    return path


@pytest.mark.parametrize(
    ("extra", "column", "kind"),
    [
        (["--qi", "codes=suppress", "--identifying", "place"], "codes", "lists"),
        (["--insensitive", "codes", "--identifying", "place"], "codes", "lists"),
        (["--keep-unlisted", "--identifying", "codes"], "place", "structs"),
    ],
)
def test_issue10_p7_nested_parquet_column_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], column: str, kind: str
) -> None:
    source = _nested_parquet(tmp_path)
    before = _files(tmp_path)
    argv = ["anonymize", str(source), *QI, "--k", "5", *ROLES, "--output", "out.csv", *extra]
    argv[argv.index("out.csv")] = str(tmp_path / "out.csv")
    _bad_input(argv, capsys, str(source), f"column '{column}' holds {kind}", "--identifying")
    assert _files(tmp_path) == before


def test_nested_parquet_column_dropped_as_identifying_is_still_released(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _nested_parquet(tmp_path)
    argv = ["anonymize", str(source), *QI, "--k", "5", *ROLES, "--identifying", "codes", "place"]
    argv += ["--output", str(tmp_path / "out.csv"), "--quiet"]
    assert main(argv) == 0
    assert (tmp_path / "out.csv").read_text().startswith("birth_date,sex,zip,diagnosis")


def test_issue10_p7_nested_sensitive_column_in_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _nested_parquet(tmp_path)
    argv = ["check", str(source), "--columns", "zip", "--k", "2", "--sensitive", "codes"]
    _bad_input(argv, capsys, str(source), "column 'codes' holds lists")


def test_issue10_p7_out_of_memory_is_a_one_line_error(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(cli_main, "run_job", exhausted)
    before = _files(folder)
    argv = ["anonymize", str(folder / "patients.csv"), *QI, "--k", "5", *ROLES]
    argv += ["--output", str(folder / "out.csv")]
    _bad_input(argv, capsys, "out of memory", "nothing written", "fewer")
    assert _files(folder) == before


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ('input = "p.csv"\n# caf\xe9\n'.encode("latin-1"), "not UTF-8"),
        (b"k = " + b"[" * 5000 + b"]" * 5000 + b"\n", "nested too deeply"),
    ],
)
def test_issue10_p7_unreadable_job_file_is_a_one_line_error(
    folder: Path, capsys: pytest.CaptureFixture[str], content: bytes, needle: str
) -> None:
    job = folder / "job.toml"
    job.write_bytes(content)
    _bad_input(["anonymize", "--config", str(job)], capsys, str(job), needle)


# Point 8: Ctrl-C.


def test_issue10_p8_ctrl_c_is_one_line_and_exit_130(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_main, "run_job", interrupted)
    before = _files(folder)
    argv = ["anonymize", str(folder / "patients.csv"), *QI, "--k", "5", *ROLES]
    assert main([*argv, "--output", str(folder / "out.csv")]) == 130
    assert capsys.readouterr().err == "kanonym: interrupted; nothing written\n"
    assert _files(folder) == before


def test_issue10_p8_ctrl_c_in_a_running_process(folder: Path) -> None:
    # The real signal, in the real program (run() ends the process with os._exit).
    script = (
        "import sys, time\n"
        "import kanonym.cli.main\n"
        "cli = sys.modules['kanonym.cli.main']\n"
        "def slow(*args, **kwargs):\n"
        "    print('searching', flush=True)\n"
        "    time.sleep(60)\n"
        "cli.run_job = slow\n"
        "cli.run()\n"
    )
    argv = ["anonymize", str(folder / "patients.csv"), *QI, "--k", "5", *ROLES]
    argv += ["--output", str(folder / "out.csv")]
    process = subprocess.Popen(
        [sys.executable, "-c", script, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline() == "searching\n"
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert err == "kanonym: interrupted; nothing written\n"
    assert not (folder / "out.csv").exists()


# Point 9: an input after a list option is not swallowed by the list.


def test_issue10_p9_input_after_the_qi_list_is_taken_as_the_input(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = str(folder / "patients.csv")
    argv = ["anonymize", *QI, source, "--k", "5", *ROLES, "--output", str(folder / "o.csv")]
    assert main(argv) == 0, capsys.readouterr().err
    assert (folder / "o.csv").read_text().startswith("birth_date,sex,zip,")


def test_issue10_p9_input_after_a_column_list_is_taken_as_the_input(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = str(folder / "patients.csv")
    argv = ["anonymize", *QI, "--k", "5", "--output", str(folder / "o.csv"), *ROLES, source]
    assert main(argv) == 0, capsys.readouterr().err
    assert (folder / "o.csv").exists()


def test_issue10_p9_input_after_the_list_wins_over_the_job_file_when_it_fits_no_item(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "job.toml").write_text(
        'input = "missing.csv"\nk = 5\nidentifying = ["name", "ssn"]\n'
        'insensitive = ["diagnosis", "admission_date", "length_of_stay"]\n'
    )
    source = str(folder / "patients.csv")
    argv = ["anonymize", "--config", str(folder / "job.toml"), "--output", str(folder / "o.csv")]
    assert main([*argv, *QI, source]) == 0, capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--columns", "zip", "sex", "{in}", "--k", "2"],
        ["check", "--k", "2", "--columns", "zip", "--sensitive", "diagnosis", "{in}"],
        ["risk", "--columns", "zip", "sex", "{in}"],
        ["disclosure", "--columns", "zip", "--sensitive", "diagnosis", "{in}"],
        ["qi-scan", "--max-size", "1", "--columns", "zip", "sex", "{in}"],
        ["link", "--on", "zip", "sex", "{in}", "{in2}"],
        ["link", "{in}", "--on", "zip", "sex", "{in2}"],
    ],
)
def test_issue10_p9_every_command_takes_its_input_after_a_list(
    folder: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    write_patients(folder, "other.csv")
    names = {"{in}": str(folder / "patients.csv"), "{in2}": str(folder / "other.csv")}
    status = main([names.get(item, item) for item in argv])
    out, err = capsys.readouterr()
    assert status in (0, 1), err
    assert not err
    if argv[0] == "link":
        assert f"linked {folder / 'other.csv'} against {folder / 'patients.csv'}" in out


def test_issue10_p9_a_missing_input_says_how_to_give_it(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _bad_input(
        ["check", "--columns", "zip", "sex", "--k", "2"],
        capsys,
        "required: input",
        "put the input before the options or end the list with --",
    )
    _bad_input(
        ["anonymize", *QI, "--k", "5", "--output", str(folder / "o.csv")],
        capsys,
        "'input' is required",
        "put the input before the options or end the list with --",
    )


# Point 10: errors that say how to fix them.


def _anonymize(folder: Path, *extra: str) -> list[str]:
    return ["anonymize", str(folder / "patients.csv"), "--k", "5", *ROLES, *extra]


def test_issue10_p10_wrong_delimiter_names_the_flag(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _anonymize(folder, *QI, "--delimiter", ";", "--output", str(folder / "o.csv"))
    _bad_input(argv, capsys, "looks ','-separated", "--delimiter ','")


@pytest.mark.parametrize("name", ["\\t", "tab"])
def test_issue10_p10_tab_delimiter_by_name(
    folder: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    patients().write_csv(folder / "tabs.tsv", separator="\t")
    argv = ["anonymize", str(folder / "tabs.tsv"), "--k", "5", *ROLES, *QI]
    argv += ["--delimiter", name, "--output", str(folder / "o.csv"), "--quiet"]
    assert main(argv) == 0, capsys.readouterr().err
    assert "\t" in (folder / "o.csv").read_text().splitlines()[0]


def test_issue10_p10_excel_workbook(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "patients.xlsx").write_bytes(b"PK\x03\x04" + b"\x00" * 100)
    argv = ["anonymize", str(folder / "patients.xlsx"), "--k", "5", *ROLES, *QI]
    _bad_input([*argv, "--output", str(folder / "o.csv")], capsys, "save it as CSV or Parquet")


def test_issue10_p10_unknown_builder(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = _anonymize(folder, "--qi", "birth_date=date", "sex=suppress", "zip=masking")
    err = _bad_input(
        [*argv, "--output", str(folder / "o.csv")],
        capsys,
        "unknown hierarchy builder 'masking'",
        "did you mean 'mask'",
        "interval:W1,W2,...",
        "quasi-identifier 'zip'",
    )
    assert "cannot read" not in err


def test_issue10_p10_us_dates_with_date(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = patients().with_columns(pl.col("birth_date").str.to_date().dt.strftime("%m/%d/%Y"))
    table.write_csv(folder / "us.csv")
    argv = ["anonymize", str(folder / "us.csv"), "--k", "5", *ROLES, *QI]
    _bad_input([*argv, "--output", str(folder / "o.csv")], capsys, "birth_date=date:%m/%d/%Y")


def test_issue10_p10_check_takes_column_names(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["check", str(folder / "patients.csv"), "--columns", "zip=mask", "sex", "--k", "2"]
    _bad_input(argv, capsys, "check", "column names", "--columns zip sex")


@pytest.mark.parametrize(
    ("model", "needles"),
    [
        ("ldiv", ["l-diversity:distinct:L:ATTR", "delta-disclosure:D:ATTR"]),
        ("l-diversty:distinct:3:diagnosis", ["did you mean 'l-diversity'", "l-diversity:"]),
        ("l-diversity:distnct:3:diagnosis", ["did you mean 'distinct'"]),
        ("t-closeness:equals:0.2:diagnosis", ["did you mean 'equal'"]),
    ],
)
def test_issue10_p10_model_typos_print_the_grammar(
    folder: Path, capsys: pytest.CaptureFixture[str], model: str, needles: list[str]
) -> None:
    roles = ["--identifying", "name", "ssn", "--insensitive", "admission_date", "length_of_stay"]
    argv = ["anonymize", str(folder / "patients.csv"), *QI, "--k", "5", *roles]
    argv += ["--model", model, "--output", str(folder / "o.csv")]
    err = _bad_input(argv, capsys, f"model '{model}'", *needles)
    assert "README" not in err


# Point 14 (command-line parts): what the commands print, and unsetting a job file's keys.


def _release_argv(folder: Path, *extra: str) -> list[str]:
    return ["anonymize", str(folder / "patients.csv"), *QI, "--k", "5", *ROLES, *extra]


def test_issue10_p14_summary_says_proven_optimal(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_release_argv(folder, "--output", str(folder / "o.csv"))) == 0
    out = capsys.readouterr().out
    assert "(proven optimal)" in out and "optimal: optimal" not in out


def test_issue10_p14_wrote_lists_every_file_written(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = [folder / name for name in ("o.csv", "o.json", "o.html")]
    argv = _release_argv(folder, "--output", str(paths[0]), "--report", str(paths[1]))
    assert main([*argv, "--report-html", str(paths[2])]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith(f"wrote {paths[0]}, {paths[1]} and {paths[2]}")


def test_issue10_p14_apply_prints_the_metric_anonymize_printed(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = folder / "o.json"
    argv = _release_argv(folder, "--output", str(folder / "o.csv"), "--report", str(report))
    assert main(argv) == 0
    printed = capsys.readouterr().out
    loss = printed.split("loss ")[1].split()[0]
    argv = ["apply", str(folder / "patients.csv"), "--from-report", str(report)]
    argv += ["--output", str(folder / "b.csv"), "--report", str(folder / "b.json")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"loss {loss}" in out and "precision" not in out
    assert out.rstrip().endswith(f"wrote {folder / 'b.csv'} and {folder / 'b.json'}")


def test_issue10_p14_risk_names_the_population_options(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["risk", str(folder / "patients.csv"), "--columns", "zip", "sex"]) == 0
    out = capsys.readouterr().out
    assert "--population-size" in out and "--population FILE" in out


def _job(folder: Path) -> Path:
    job = folder / "job.toml"
    job.write_text(
        'input = "patients.csv"\noutput = "o.csv"\nreport = "o.json"\n'
        'report-html = "o.html"\nk = 5\nseed = 3\nidentifying = ["name", "ssn"]\n'
        'insensitive = ["diagnosis", "admission_date", "length_of_stay"]\n'
        'qi = ["birth_date=date", "sex=suppress", "zip=mask"]\n'
    )
    return job


def test_issue10_p14_no_report_html_switches_off_the_job_files_page(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["anonymize", "--config", str(_job(folder)), "--no-report-html"]) == 0
    assert (folder / "o.json").exists() and not (folder / "o.html").exists()
    assert (
        capsys.readouterr()
        .out.rstrip()
        .endswith(f"wrote {folder / 'o.csv'} and {folder / 'o.json'}")
    )


def test_issue10_p14_no_report_and_unset(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["anonymize", "--config", str(_job(folder)), "--no-report", "--no-report-html"]
    assert main([*argv, "--unset", "seed", "--quiet"]) == 0
    assert (folder / "o.csv").exists()
    assert not (folder / "o.json").exists() and not (folder / "o.html").exists()


def test_issue10_p14_unset_names_job_file_keys(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["anonymize", "--config", str(_job(folder)), "--unset", "colour"]
    _bad_input(argv, capsys, "--unset", "'colour'", "report-html")
    _bad_input([*argv[:1], str(folder / "patients.csv"), "--unset", "seed"], capsys, "--config")


def test_issue10_p14_no_report_conflicts_with_report(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _release_argv(folder, "--output", "o.csv", "--report", "r.json", "--no-report")
    _bad_input(argv, capsys, "--no-report", "--report")


def test_issue10_p8_ctrl_c_while_files_are_put_in_place_waits_and_says_so(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An interrupt during the renames is held back: the group lands whole, and is named."""
    from kanonym.io import write as write_module

    real_replace = write_module._replace
    sent: list[bool] = []

    def replace_then_interrupt(temporary: Path, destination: Path) -> None:
        if not sent:
            sent.append(True)
            os.kill(os.getpid(), signal.SIGINT)  # arrives while SIGINT is blocked
        real_replace(temporary, destination)

    monkeypatch.setattr(write_module, "_replace", replace_then_interrupt)
    monkeypatch.setattr(write_module, "COMMITTED", [])
    monkeypatch.setattr(cli_main, "COMMITTED", write_module.COMMITTED)
    argv = ["anonymize", str(folder / "patients.csv"), *QI, "--k", "5", *ROLES, "--quiet"]
    argv += ["--output", str(folder / "out.csv"), "--report", str(folder / "out.json")]
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert err.startswith("kanonym: interrupted; wrote ") and "out.csv" in err
    assert (folder / "out.csv").exists() and (folder / "out.json").exists()
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]


def test_issue10_p14_a_closed_pipe_ends_quietly(folder: Path) -> None:
    """'kanonym ... | head' printed a BrokenPipeError traceback."""
    argv = ["anonymize", "--help"]
    process = subprocess.Popen(
        [sys.executable, "-m", "kanonym", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # the reader goes away before kanonym writes
    err = process.stderr.read().decode()
    assert process.wait(timeout=60) in (0, 141)
    assert "Traceback" not in err


@pytest.mark.parametrize("key", ["identifying", "qi", "k", "models"])
def test_issue10_p14_unset_never_drops_a_protecting_key(
    folder: Path, capsys: pytest.CaptureFixture[str], key: str
) -> None:
    """--unset identifying with keep-unlisted in the file would publish names unchanged."""
    argv = ["anonymize", "--config", str(_job(folder)), "--unset", key]
    _bad_input(argv, capsys, f"--unset {key}", "edit the job file")
    assert not (folder / "o.csv").exists()
