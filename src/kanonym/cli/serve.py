"""``kanonym serve``: start the local web workbench (:mod:`kanonym.workbench`).

It needs the ``web`` extra; without it the command says so in one line and
exits 2. The server listens on 127.0.0.1 unless ``--host`` says otherwise,
which prints a warning: anyone who can reach the port and learns the token
could read the tables in the workspace. The workspace may be neither the
home folder nor the root (:func:`kanonym.workbench.security.refused_workspace`):
one line, exit 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Any, TypeVar

from kanonym.cli.help import examples
from kanonym.errors import InputError

ParserT = TypeVar("ParserT", bound=argparse.ArgumentParser)

EXIT_BAD_INPUT = 2
DEFAULT_PORT = 8765
WEB_MODULES = ("starlette", "uvicorn", "jinja2", "multipart")
"""What the ``web`` extra installs that the workbench imports."""


def add_command(commands: argparse._SubParsersAction[ParserT]) -> None:
    """Register ``serve`` on the ``kanonym`` parser."""
    serve = commands.add_parser(
        "serve",
        help="the local web workbench: from a raw table to a filed release in a browser",
        description="Serve the workbench on this machine. Open the URL it prints (it holds "
        "the access token). Files are read and written only inside the workspace.",
        epilog=examples(
            "kanonym serve --workspace ~/releases",
            "kanonym serve --port 9000 --workspace . --ledger releases.sqlite",
        ),
    )
    serve.add_argument(
        "--workspace",
        type=Path,
        default=Path.cwd(),
        help="folder the workbench reads tables from and writes releases to "
        "(default: the working directory; never the home folder or /)",
    )
    serve.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})"
    )
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only); any other "
        "prints a warning",
    )
    serve.add_argument(
        "--max-upload-mb",
        type=float,
        default=200.0,
        help="largest upload accepted, in MB (default 200); larger ones get 413",
    )
    serve.add_argument(
        "--ledger",
        metavar="FILE",
        help="a ledger file in the workspace: filed releases are recorded in it",
    )


def missing_web_extra() -> str | None:
    """The one-line message when the ``web`` extra is not installed, else None."""
    for module in WEB_MODULES:
        try:
            importlib.import_module(module)
        except ImportError:
            return (
                f"kanonym serve needs the web extra ({module} is not installed): "
                "pip install 'kanonym[web]'"
            )
    return None


def non_loopback_warning(host: str) -> str | None:
    """The warning printed for an address other machines can reach (None for loopback).

    Example:
        >>> non_loopback_warning("127.0.0.1") is None
        True
        >>> non_loopback_warning("0.0.0.0").startswith("kanonym: warning")
        True
    """
    from kanonym.workbench.security import is_loopback

    if is_loopback(host):
        return None
    return (
        f"kanonym: warning: listening on {host}, reachable from other machines: anyone who "
        "learns the URL's token can read the workspace's tables; traffic is not encrypted"
    )


def _serve(args: argparse.Namespace) -> int:
    missing = missing_web_extra()
    if missing is not None:
        print(f"kanonym: error: {missing}", file=sys.stderr)
        return EXIT_BAD_INPUT
    import uvicorn

    from kanonym.workbench import create_app

    warning = non_loopback_warning(args.host)
    if warning is not None:
        print(warning, file=sys.stderr)
    if not args.max_upload_mb > 0:
        raise InputError(f"--max-upload-mb must be above 0, got {args.max_upload_mb}")
    app = create_app(
        args.workspace,
        host=args.host,
        port=args.port,
        max_upload_mb=args.max_upload_mb,
        ledger=args.ledger,
    )
    print(f"kanonym workbench on {args.workspace.resolve()}: open {app.state.guard.url}")
    sys.stdout.flush()
    config: dict[str, Any] = {"host": args.host, "port": args.port, "log_level": "warning"}
    uvicorn.run(app, **config)
    return 0


HANDLERS = {"serve": _serve}
"""Subcommand -> handler returning the exit status."""
