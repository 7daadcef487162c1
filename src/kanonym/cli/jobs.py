"""A command's job: its job file (``--config``) merged with its flags, which win.

``anonymize`` and ``release`` read their options the same way: the job
file's keys, relative to the file's folder, then the flags, relative to the
working directory; ``--unset``, ``--no-report`` and ``--no-report-html``
switch keys of the file off.

Example:
    >>> import argparse
    >>> args = argparse.Namespace(config=None, command="anonymize", input="t.csv",
    ...                           **dict.fromkeys(_JOB_FLAGS[1:]))
    >>> options, _, where = job_options(args)
    >>> options, where
    ({'input': 't.csv'}, 'kanonym anonymize')
"""

from __future__ import annotations

import argparse
from pathlib import Path

from kanonym.config import JOB_KEYS, canonical_key, read_job_file
from kanonym.engine.choose import is_location
from kanonym.errors import InputError, clip, echo

INPUT_HINT = (
    "put the input before the options or end the list with -- "
    "(an option such as --qi takes every value up to the next option)"
)
"""Why the input went missing: a list option took it."""

_JOB_FLAGS = (
    "input",
    "qi",
    "identifying",
    "sensitive",
    "insensitive",
    "keep_unlisted",
    "model",
    "k",
    "max_suppression",
    "max_suppressed_rows",
    "algorithm",
    "metric",
    "policy",
    "time_limit",
    "weight",
    "min_level",
    "max_level",
    "delimiter",
    "seed",
    "technique",
    "output",
    "report",
    "numeric",
    "categorical",
    "report_html",
    "hierarchy_duplicates",
    "engine",
    "replace",
    "population",
    "check_lattice",
)
"""The flags that are job options (the ``argparse`` names of job-file keys)."""


def job_options(args: argparse.Namespace) -> tuple[dict[str, object], Path, str]:
    """The job file's options (if any) merged with the flags, which win; base folder; origin."""
    options: dict[str, object] = {}
    base_dir = Path.cwd()
    if args.config is not None:
        options = read_job_file(args.config)
        base_dir = args.config.resolve().parent
        where = str(args.config)
    else:
        where = f"kanonym {args.command}"
    flags = {name: getattr(args, name) for name in _JOB_FLAGS if getattr(args, name) is not None}
    # A flag replaces the file's value however the file spells the key.
    for key in [key for key in options if canonical_key(key) in map(canonical_key, flags)]:
        del options[key]
    if flags and args.config is not None:
        # Flags are relative to the working directory, the file's keys to its folder.
        for key in ("input", "output", "report", "report_html", "population"):
            if key in flags and not is_location(flags[key]):
                flags[key] = str(Path(flags[key]).resolve())
        if "qi" in flags:
            flags["qi"] = [_absolute_spec(item) for item in flags["qi"]]
        if {"max_suppression", "max_suppressed_rows"} & flags.keys():
            # A suppression flag replaces the file's limit, whichever form it used.
            for key in ("max-suppression", "max_suppression"):
                options.pop(key, None)
            for key in ("max-suppressed-rows", "max_suppressed_rows"):
                options.pop(key, None)
    # Switched off in the file only: a flag given as well still counts.
    for key in _unset_keys(args, options):
        for spelling in (key, key.replace("-", "_")):
            options.pop(spelling, None)
    options.update(flags)
    if options.get("input") is None:
        # The table is a positional argument, easily swallowed by a list option.
        raise InputError(f"{where}: 'input' is required; {INPUT_HINT}")
    return options, base_dir, where


_PROTECTING_KEYS = frozenset({"identifying", "qi", "k", "model", "models", "key"})
"""Job-file keys --unset refuses: without them the release protects less."""


def _unset_keys(args: argparse.Namespace, options: dict[str, object]) -> list[str]:
    """The job-file keys --no-report, --no-report-html and --unset switch off."""
    keys = [key.replace("_", "-") for key in getattr(args, "unset", None) or []]
    if keys and args.config is None:
        raise InputError("--unset ignores keys of a job file: give the job file with --config")
    # A key the file does not hold is still fine if it is a known one (nothing to unset).
    known = JOB_KEYS | {key.replace("_", "-") for key in options}
    for key in keys:
        if key not in known:
            raise InputError(
                f"--unset: {echo(key)} is not a job-file key; the keys are "
                f"{', '.join(clip(known_key) for known_key in sorted(known))}"
            )
        if key in _PROTECTING_KEYS:
            # Dropping one of these could publish what the file protects (with
            # keep-unlisted, an identifying column released unchanged): edit the file.
            raise InputError(
                f"--unset {key}: this key protects the release and is not switched off from "
                "the command line; edit the job file"
            )
    if getattr(args, "no_report", False):
        keys.append("report")
    if getattr(args, "no_report_html", False):
        keys.append("report-html")
    return keys


def _absolute_spec(item: str) -> str:
    """A ``--qi`` entry naming a file, with the file's absolute path (the flags' base)."""
    column, sep, spec = item.partition("=")
    return f"{column}={Path(spec).resolve()}" if sep and Path(spec).is_file() else item
