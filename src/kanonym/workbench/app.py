"""The workbench's pages: a raw table to a filed release, one step per page.

Every page is rendered on the server and every action is a plain HTML form
POST answered by a redirect to the page that shows its outcome (an error is
one line at the top of the page). The only scripts are the vendored
Vega-Lite ones and ``static/workbench.js``, which draws the figures and
polls a running task's progress.

Steps: ``/table`` (upload or pick a table, or read one of a PostgreSQL
database: :mod:`.database`; preview and column statistics),
``/roles`` (every column's role, suggested by the quasi-identifier scan),
``/hierarchies`` (a builder or an ARX file per quasi-identifier, previewed
level by level), ``/models`` (k, suppression, metric, seed and the models of
the sensitive columns), ``/sweep`` (choosing k: :func:`kanonym.explore`),
``/run`` (the release in the background, cancellable) and ``/results``
(figures, the job as TOML, the files written into the workspace and, with a
ledger, recorded there).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import tempfile
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import polars as pl
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from kanonym.config import parse_fraction
from kanonym.engine.postgres import is_postgres_url
from kanonym.errors import InputError, KanonymError, echo
from kanonym.figures.render import script_tags
from kanonym.hierarchy import preview as hierarchy_preview
from kanonym.hierarchy.preview import LevelPreview
from kanonym.hierarchy.spec import spec_file
from kanonym.io import Table, load
from kanonym.io.toml import toml_document
from kanonym.metrics import METRICS
from kanonym.models import parse_model
from kanonym.release.recorded import Ledger, LedgerPlan
from kanonym.result import Result
from kanonym.sweep import Exploration
from kanonym.workbench import results as result_pages
from kanonym.workbench.database import MAX_ROWS, URL_FORM, read_database, release_name
from kanonym.workbench.security import (
    CSRF_FIELD,
    Guard,
    GuardMiddleware,
    checked_form,
    inside,
    refused_workspace,
    relative_name,
)
from kanonym.workbench.tasks import Task
from kanonym.workbench.workflow import (
    BUILDERS,
    PREVIEW_ROWS,
    ROLES,
    ColumnStats,
    JobStamp,
    Workflow,
    build_hierarchy,
    column_stats,
    fresh_seed,
    job_file_name,
    model_specs,
    read_job,
)

TABLE_SUFFIXES = (".csv", ".tsv", ".txt", ".csv.gz", ".parquet", ".pq")
"""The files the table page offers and accepts."""

HIERARCHY_FOLDER = "hierarchies"
"""Where uploaded hierarchy files go, inside the workspace."""

LIST_DEPTH = 4
"""How many folders deep the pages look for tables and hierarchy files."""

LIST_ENTRIES = 20_000
"""How many files and folders the pages look at, at most, to list the workspace's files
(a workspace that holds far more is not a dedicated folder)."""

PREVIEWS_KEPT = 64
"""Hierarchy previews kept, so that viewing a page does not build its hierarchy again."""

Value = TypeVar("Value")

Handler = Callable[[Request], Awaitable[Response]]
FormHandler = Callable[[Request, FormData], Awaitable[Response]]


@dataclass
class Workbench:
    """The server's state: the workspace, its workflow, its tasks and messages.

    Attributes:
        workspace: the folder files are read from and written to.
        guard: the access token, sessions and limits (:mod:`.security`).
        ledger: the ledger file in the workspace releases are recorded in, if any.
        flow: the workflow (:class:`~kanonym.workbench.workflow.Workflow`).
        run: the latest release task.
        sweep: the latest sweep over k.
        ran: the job and files the latest release task was made from (what filing
            writes, and what the pages' job must still be for it to be filed).
        plan: with a ledger, the ledger's plan the latest release was searched on.
        swept: what the latest sweep was made from (:meth:`JobStamp.swept`).
        filed: the release task whose files ``written`` lists, once filed.
        written: job key -> file name of the files of the filed release.
        filing: held while a release is filed (a second submit is refused).
        messages: (kind, text) lines shown once, on the next page.
        stats: the loaded table's column statistics (computed once, on loading).
        previews: (table, column, spec, file stamp) -> a hierarchy's preview or the
            one line saying why it has none (built once, not on every view).
        shown: the release task whose results page ``shown_context`` holds (its risk,
            measures and figures are computed once, not on every view).
    """

    workspace: Path
    guard: Guard
    ledger: str | None = None
    flow: Workflow = field(default_factory=Workflow)
    run: Task[Result] | None = None
    sweep: Task[Exploration] | None = None
    ran: JobStamp | None = None
    plan: LedgerPlan | None = None
    swept: JobStamp | None = None
    filed: Task[Result] | None = None
    written: dict[str, str] = field(default_factory=dict)
    filing: asyncio.Lock = field(default_factory=asyncio.Lock)
    messages: list[tuple[str, str]] = field(default_factory=list)
    stats: list[ColumnStats] = field(default_factory=list)
    previews: dict[tuple[object, ...], tuple[list[LevelPreview] | None, str | None]] = field(
        default_factory=dict
    )
    shown: Task[Result] | None = None
    shown_context: dict[str, Any] = field(default_factory=dict)

    def say(self, text: str, kind: str = "note") -> None:
        """Show ``text`` on the next page (``kind``: note or error)."""
        self.messages.append((kind, " ".join(text.split())))

    @property
    def result(self) -> Result | None:
        """The latest release, once its task is done."""
        return self.run.value if self.run is not None and self.run.state == "done" else None


def create_app(
    workspace: Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    max_upload_mb: float = 200,
    ledger: str | None = None,
) -> Starlette:
    """The workbench application for ``workspace`` (which must exist).

    ``ledger`` is a file name in the workspace; releases filed there are
    recorded in it (:class:`kanonym.Ledger`). The application's access token
    is ``app.state.guard.token`` and its URL ``app.state.guard.url``.

    Raises:
        InputError: the workspace is not a folder, is the home folder or the root
            (:func:`~kanonym.workbench.security.refused_workspace`), or the ledger
            is outside it.
    """
    if not workspace.is_dir():
        raise InputError(f"workspace {workspace} is not a folder")
    refusal = refused_workspace(workspace)
    if refusal is not None:
        raise InputError(refusal)
    guard = Guard(host=host, port=port, max_upload_bytes=int(max_upload_mb * 1_000_000))
    if ledger is not None:
        inside(workspace, ledger)
    bench = Workbench(workspace=workspace.resolve(), guard=guard, ledger=ledger)
    pages = _Pages(bench)
    routes = [
        Route("/", lambda request: _redirect("/table")),
        Route("/table", pages.table),
        Route("/table/upload", pages.post(pages.upload), methods=["POST"]),
        Route("/table/pick", pages.post(pages.pick), methods=["POST"]),
        Route("/table/database", pages.post(pages.database), methods=["POST"]),
        Route("/roles", pages.roles),
        Route("/roles", pages.post(pages.save_roles), methods=["POST"]),
        Route("/roles/suggested", pages.post(pages.take_suggestions), methods=["POST"]),
        Route("/hierarchies", pages.hierarchies),
        Route("/hierarchies/save", pages.post(pages.save_hierarchy), methods=["POST"]),
        Route("/hierarchies/arx.csv", pages.export_hierarchy),
        Route("/models", pages.models),
        Route("/models", pages.post(pages.save_models), methods=["POST"]),
        Route("/sweep", pages.sweep),
        Route("/sweep", pages.post(pages.start_sweep), methods=["POST"]),
        Route("/sweep/use", pages.post(pages.use_point), methods=["POST"]),
        Route("/run", pages.run),
        Route("/run", pages.post(pages.start_run), methods=["POST"]),
        Route("/cancel/{task}", pages.post(pages.cancel), methods=["POST"]),
        Route("/status/{task}", pages.status),
        Route("/results", pages.results),
        Route("/results/file", pages.post(pages.file_release), methods=["POST"]),
        Route("/job.toml", pages.job_file),
        Route("/files/{name:path}", pages.download),
        Mount("/static/vendor", StaticFiles(directory=_package_dir("kanonym.figures", "vendor"))),
        Mount("/static", StaticFiles(directory=_package_dir("kanonym.workbench", "static"))),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(GuardMiddleware, guard=guard)],
        exception_handlers={HTTPException: _http_error},
    )
    app.state.guard = guard
    app.state.bench = bench
    return app


def _package_dir(package: str, folder: str) -> str:
    """A folder of the installed package (a real directory: the package is installed
    from files, as setuptools does)."""
    return str(resources.files(package).joinpath(folder))


async def _http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    return PlainTextResponse(
        f"{error.status_code}: {error.detail}\n", status_code=error.status_code
    )


def _redirect(path: str) -> Response:
    return RedirectResponse(path, status_code=303)


_TEMPLATES = Environment(
    loader=PackageLoader("kanonym.workbench", "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)

STEPS = (
    ("/table", "1 Table"),
    ("/roles", "2 Roles"),
    ("/hierarchies", "3 Hierarchies"),
    ("/models", "4 Models"),
    ("/sweep", "5 Choose k"),
    ("/run", "6 Run"),
    ("/results", "7 Results"),
)
"""The navigation bar: each step's page and title."""


def spec_json(spec: dict[str, Any]) -> str:
    """A Vega-Lite spec as JSON safe inside a ``<script type="application/json">``.

    The ``$schema`` URL is dropped (the page names the mode instead): no page of
    the workbench refers to anything outside it. ``<``, ``>`` and ``&`` are
    written as JSON escapes, which mean the same characters to the JSON parser:
    a column named ``</script>`` or ``<!--<script>`` cannot end the element or
    switch the HTML parser into a state where the page's end is swallowed.

    Example:
        >>> spec_json({"$schema": "https://example.org/v6.json", "title": "<!--<script>&"})
        '{"title": "\\\\u003c!--\\\\u003cscript\\\\u003e\\\\u0026"}'
    """
    shown = {key: value for key, value in spec.items() if key != "$schema"}
    return script_safe_json(shown)


def script_safe_json(value: object) -> str:
    """``value`` as JSON with ``<``, ``>`` and ``&`` escaped (``\\u003c`` ...), safe to
    put inside any ``<script>`` element of an HTML page."""
    text = json.dumps(value)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


class _Pages:
    """The route handlers, sharing the :class:`Workbench`."""

    def __init__(self, bench: Workbench) -> None:
        self.bench = bench

    # -- plumbing -------------------------------------------------------------------

    def post(self, handler: FormHandler) -> Handler:
        """``handler`` behind the CSRF check; an InputError becomes a message on the page."""

        async def checked(request: Request) -> Response:
            form = await checked_form(request, self.bench.guard)
            try:
                return await handler(request, form)
            except KanonymError as error:
                self.bench.say(str(error), "error")
                return _redirect(_back(request))
            finally:
                await form.close()

        return checked

    def page(self, request: Request, template: str, **context: Any) -> Response:
        bench = self.bench
        session = request.scope.get("state", {}).get("session")
        messages, bench.messages = bench.messages, []
        html = _TEMPLATES.get_template(template).render(
            csrf_field=CSRF_FIELD,
            csrf=bench.guard.csrf_of(session) or "",
            steps=STEPS,
            here=request.url.path,
            messages=messages,
            flow=bench.flow,
            roles=ROLES,
            workspace=bench.workspace,
            vega=script_tags("/static/vendor"),
            figures_on_page=template in ("sweep.html", "results.html"),
            **context,
        )
        return HTMLResponse(html)

    # -- 1 table --------------------------------------------------------------------

    async def table(self, request: Request) -> Response:
        flow = self.bench.flow
        files = await self._files(TABLE_SUFFIXES)
        preview = None if flow.frame is None else flow.frame.head(PREVIEW_ROWS)
        return self.page(
            request,
            "table.html",
            files=files,
            preview=preview,
            stats=self.bench.stats,
            limit_mb=self.bench.guard.max_upload_bytes / 1e6,
            database_rows=MAX_ROWS,
            url_form=URL_FORM,
        )

    async def _files(self, suffixes: tuple[str, ...]) -> list[str]:
        """The workspace's files of those suffixes (:func:`workspace_files`), listed in a
        thread: a large workspace must not hold up the progress polls."""
        return await run_in_threadpool(workspace_files, self.bench.workspace, suffixes)

    async def upload(self, request: Request, form: FormData) -> Response:
        upload = form.get("file")
        if not isinstance(upload, UploadFile) or not upload.filename:
            raise InputError("choose a CSV or Parquet file to upload")
        name = Path(upload.filename.replace("\\", "/")).name
        if not name.lower().endswith(TABLE_SUFFIXES):
            raise InputError(f"{echo(name)} is not a CSV or Parquet file")
        target, table = await self._stored(
            upload, name, replace=form.get("replace") == "on", check=self._read_upload
        )
        await self._install(relative_name(self.bench.workspace, target), table.frame)
        return _redirect("/table")

    def _read_upload(self, path: Path) -> Table:
        """An uploaded table, read from its temporary file; a gzip file is refused when it
        decompresses to more than :attr:`~.security.Guard.max_decoded_bytes`."""
        limit = self.bench.guard.max_decoded_bytes
        with path.open("rb") as handle:
            compressed = handle.read(2) == b"\x1f\x8b"
        if compressed:
            decoded = 0
            try:
                with gzip.open(path, "rb") as stream:
                    while chunk := stream.read(1 << 20):
                        decoded += len(chunk)
                        if decoded > limit:
                            raise InputError(
                                f"it decompresses to more than {limit / 1e6:g} MB (ten times "
                                "the upload limit, kanonym serve --max-upload-mb)"
                            )
            except (OSError, EOFError, zlib.error) as error:
                raise InputError(f"it is not a readable gzip file ({error})") from None
        return load(path)

    async def _stored(
        self,
        upload: UploadFile,
        name: str,
        *,
        replace: bool,
        check: Callable[[Path], Value],
    ) -> tuple[Path, Value]:
        """Store an upload in the workspace under ``name`` once ``check`` accepted it,
        never over an existing file unless asked; returns the file and what ``check``
        returned (run in a thread: reading a table takes time).

        The upload goes to a new temporary file beside the target, created by
        :func:`tempfile.mkstemp` (exclusively, so never through a file or link
        planted under its name), is checked there, and only then moved over the
        target: a broken upload leaves the workspace, and the table the pages
        show, as they were. The temporary file is removed whatever happens: it
        holds the same personal data.
        """
        if any(part.startswith(".") for part in Path(name).parts):
            raise InputError(f"{echo(name)} is a hidden file name: rename the file")
        target = inside(self.bench.workspace, name)
        if target.exists() and not replace:
            raise InputError(
                f"{name} is already in the workspace: tick 'replace' to overwrite it, or pick it"
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        suffix = next((s for s in TABLE_SUFFIXES if name.lower().endswith(s)), "")
        handle, temporary = tempfile.mkstemp(
            prefix=".kanonym-upload-", suffix=suffix, dir=target.parent
        )
        partial = Path(temporary)
        try:
            with os.fdopen(handle, "wb") as stream:
                while chunk := await upload.read(1 << 20):
                    stream.write(chunk)
            try:
                value = await run_in_threadpool(check, partial)
            except KanonymError as error:
                # The message names the temporary file; the officer knows the upload's name.
                text = str(error).replace(str(partial), name).replace(partial.name, name)
                raise InputError(f"{echo(name)}: {text}" if name not in text else text) from None
            partial.replace(target)
        finally:
            partial.unlink(missing_ok=True)
        return target, value

    async def pick(self, request: Request, form: FormData) -> Response:
        await self._load(inside(self.bench.workspace, str(form.get("name", ""))))
        return _redirect("/table")

    async def _load(self, path: Path) -> None:
        """Load a table of the workspace: only one the table page lists (not hidden, a
        table's suffix), read in a thread so that progress polls stay answered."""
        name = relative_name(self.bench.workspace, path)
        if not listed(name, TABLE_SUFFIXES) or not path.is_file():
            raise InputError(f"{echo(name)} is not a table the workspace lists")
        table = await run_in_threadpool(load, path)
        await self._install(name, table.frame)

    async def database(self, request: Request, form: FormData) -> Response:
        """Read a table of a PostgreSQL database (:mod:`.database`): the job's input is its
        URL, so the release runs in the database."""
        url = str(form.get("url", "")).strip()
        frame = await run_in_threadpool(read_database, url)
        await self._install(url, frame)
        self.bench.flow.name = release_name(url)
        return _redirect("/table")

    async def _install(self, name: str, frame: pl.DataFrame) -> None:
        """Start over on a new table: the flow's state is the new table's; a sweep or
        release still running on the old one is cancelled (left alone, it would go on
        searching in its thread), and its results are dropped."""
        bench = self.bench
        for task in (bench.run, bench.sweep):
            if task is not None:
                task.cancel()
        if bench.result is not None:
            # A release made in a database holds its connection (and its temporary
            # table) until closed.
            bench.result.close()
        # The quasi-identifier scan and the statistics take seconds on a large table.
        await run_in_threadpool(bench.flow.load, name, frame)
        bench.stats = await run_in_threadpool(column_stats, frame)
        bench.run, bench.sweep, bench.written = None, None, {}
        bench.previews.clear()
        bench.say(f"loaded {bench.flow.table}: {frame.height:,} rows")

    # -- 2 roles --------------------------------------------------------------------

    async def roles(self, request: Request) -> Response:
        return self.page(request, "roles.html")

    async def save_roles(self, request: Request, form: FormData) -> Response:
        flow = self.bench.flow
        for name in flow.columns:
            role = form.get(f"role:{name}")
            if role in ROLES:
                flow.roles[name] = str(role)
            else:
                flow.roles.pop(name, None)
        for name in list(flow.hierarchies):
            if flow.roles.get(name) != "quasi-identifying":
                del flow.hierarchies[name]
        self._job_changed()
        if flow.unassigned:
            self.bench.say(
                "every column needs a role; still without one: " + ", ".join(flow.unassigned),
                "error",
            )
            return _redirect("/roles")
        return _redirect("/hierarchies")

    async def take_suggestions(self, request: Request, form: FormData) -> Response:
        flow = self.bench.flow
        for name, suggestion in flow.suggestions.items():
            flow.roles.setdefault(name, suggestion.role)
        self._job_changed()
        return _redirect("/roles")

    # -- 3 hierarchies ----------------------------------------------------------------

    async def hierarchies(self, request: Request) -> Response:
        flow = self.bench.flow
        names = flow.with_role("quasi-identifying")
        column = request.query_params.get("column") or (names[0] if names else None)
        preview, error = None, None
        if column is not None and column in names and column in flow.hierarchies:
            preview, error = await run_in_threadpool(
                self._preview, column, flow.hierarchies[column]
            )
        files = [name for name in await self._files((".csv",)) if name != flow.table]
        return self.page(
            request,
            "hierarchies.html",
            names=names,
            column=column,
            preview=preview,
            preview_error=error,
            builders=BUILDERS,
            files=files,
        )

    def _preview(self, column: str, spec: str) -> tuple[list[LevelPreview] | None, str | None]:
        """A hierarchy's preview, or the one line saying why it has none: built once per
        table, column, spec and (for a file) the file's size and time, then kept."""
        flow = self.bench.flow
        assert flow.frame is not None
        path = spec_file(spec, base_dir=self.bench.workspace)
        try:
            stamp = None if path is None else (path.stat().st_mtime_ns, path.stat().st_size)
        except OSError:
            stamp = None  # a missing file: building says so
        key = (flow.table, column, spec, stamp)
        previews = self.bench.previews
        if key not in previews:
            values = flow.frame.get_column(column)
            try:
                built = build_hierarchy(spec, values, self.bench.workspace, flow.table or "")
                found: tuple[list[LevelPreview] | None, str | None] = (
                    hierarchy_preview(built, values),
                    None,
                )
            except KanonymError as failure:
                found = (None, " ".join(str(failure).split()))
            if len(previews) >= PREVIEWS_KEPT:
                previews.clear()
            previews[key] = found
        return previews[key]

    def _column(self, name: str) -> pl.Series:
        """A column of the loaded table."""
        assert self.bench.flow.frame is not None
        return self.bench.flow.frame.get_column(name)

    async def save_hierarchy(self, request: Request, form: FormData) -> Response:
        flow = self.bench.flow
        column = str(form.get("column", ""))
        if column not in flow.with_role("quasi-identifying"):
            raise InputError(f"{echo(column)} is not a quasi-identifier")
        builder = str(form.get("builder", ""))
        argument = str(form.get("argument", "")).strip()
        if builder == "interval":
            spec = f"interval:{argument}"
        elif builder == "date":
            spec = f"date:{argument}" if argument else "date"
        elif builder in ("mask", "suppress"):
            spec = builder
        elif builder == "order":
            spec = f"order:{argument}"
        elif builder == "file":
            upload = form.get("upload")
            if isinstance(upload, UploadFile) and upload.filename:
                name = f"{HIERARCHY_FOLDER}/{Path(upload.filename.replace(chr(92), '/')).name}"
                values = self._column(column)
                # Checked against the column before it replaces a file of that name.
                saved, _ = await self._stored(
                    upload,
                    name,
                    replace=form.get("replace") == "on",
                    check=lambda path: build_hierarchy(
                        str(path), values, self.bench.workspace, flow.table or ""
                    ),
                )
                spec = file_spec(relative_name(self.bench.workspace, saved))
            else:
                path = inside(self.bench.workspace, argument)
                spec = file_spec(relative_name(self.bench.workspace, path))
        else:
            raise InputError(
                f"unknown builder {echo(builder)}; choose one of {', '.join(BUILDERS)}"
            )
        assert flow.frame is not None
        # Built once here so that a spec the column does not fit is refused at once.
        build_hierarchy(spec, flow.frame.get_column(column), self.bench.workspace, flow.table or "")
        flow.hierarchies[column] = spec
        # Also when the spec is the same name: the file under it may have been replaced.
        self._job_changed()
        return _redirect(f"/hierarchies?column={quote(column, safe='')}")

    async def export_hierarchy(self, request: Request) -> Response:
        """A quasi-identifier's hierarchy as an ARX file (``?column=NAME``)."""
        flow = self.bench.flow
        column = request.query_params.get("column", "")
        if column not in flow.hierarchies or flow.frame is None:
            raise HTTPException(404, f"no hierarchy for {echo(column)}")
        built = await run_in_threadpool(
            build_hierarchy,
            flow.hierarchies[column],
            flow.frame.get_column(column),
            self.bench.workspace,
            flow.table or "",
        )
        return _attachment(built.to_arx_csv(), f"{column}.csv", "text/csv")

    # -- 4 models -------------------------------------------------------------------

    async def models(self, request: Request) -> Response:
        return self.page(request, "models.html", metrics=sorted(METRICS))

    async def save_models(self, request: Request, form: FormData) -> Response:
        flow = self.bench.flow
        k = _whole(form, "k", low=1)
        suppression = parse_fraction(
            str(form.get("suppression", "0")).strip() + "%", "the suppression limit"
        )
        metric = str(form.get("metric", "loss"))
        if metric not in METRICS:
            raise InputError(f"unknown metric {echo(metric)}")
        seed = _whole(form, "seed", low=0)
        name = str(form.get("name", "")).strip()
        if not name or Path(name).name != name or name.startswith("."):
            raise InputError("the release name is a plain file name, without folders")
        models: dict[str, list[str]] = {}
        for column in flow.with_role("sensitive"):
            fields = {
                key: str(form.get(f"{key}:{column}", "")) for key in ("l", "t", "beta", "delta")
            }
            models[column] = model_specs(column, fields)
            for spec in models[column]:
                parse_model(spec)  # refuse a bad value now, with the model's own message
        flow.k, flow.suppression, flow.metric, flow.seed, flow.name = (
            k,
            suppression,
            metric,
            seed,
            name,
        )
        flow.models = models
        self._job_changed()
        self.bench.say("saved the models and limits")
        return _redirect("/models")

    # -- 5 sweep --------------------------------------------------------------------

    async def sweep(self, request: Request) -> Response:
        task = self.bench.sweep
        exploration = task.value if task is not None and task.state == "done" else None
        return self.page(
            request,
            "sweep.html",
            task=task,
            limits=result_pages.sweep_limits(self.bench.flow.suppression),
            **result_pages.sweep_context(exploration),
        )

    async def start_sweep(self, request: Request, form: FormData) -> Response:
        if self.bench.sweep is not None and self.bench.sweep.running:
            raise InputError("a sweep is running already")
        flow = self.bench.flow
        options = flow.job_options()
        job = read_job(options, self.bench.workspace)
        limits = result_pages.sweep_limits(flow.suppression)
        # A database table is swept on the rows the table page read (the sweep runs in
        # memory); the release itself runs in the database.
        rows = flow.frame if is_postgres_url(job.input) else None
        task = Task("sweep", lambda report: result_pages.sweep(job, limits, report, rows))
        self.bench.sweep = task
        self.bench.swept = JobStamp.of(options, self.bench.workspace).swept()
        task.start()
        return _redirect("/sweep")

    async def use_point(self, request: Request, form: FormData) -> Response:
        flow = self.bench.flow
        flow.k = _whole(form, "k", low=1)
        flow.suppression = parse_fraction(str(form.get("suppression", "0")), "suppression")
        self._job_changed()
        self.bench.say(
            f"the job now uses k = {flow.k} and a suppression limit of {flow.suppression:.0%}"
        )
        return _redirect("/run")

    # -- 6 run ----------------------------------------------------------------------

    def _job_now(self) -> JobStamp | None:
        """The job the pages describe now, with its files (None while it cannot run)."""
        try:
            options = self.bench.flow.job_options()
        except InputError:
            return None
        return JobStamp.of(options, self.bench.workspace)

    def _job_changed(self) -> None:
        """Drop what the job's change made stale: the latest release (one still running
        is refused when it ends, by :meth:`_stale`) and the sweep when it no longer
        sweeps the pages' job."""
        bench = self.bench
        now = self._job_now()
        if bench.run is not None and not bench.run.running and bench.ran != now:
            if bench.run.state == "done" and bench.run is not bench.filed:
                bench.say("the job changed since the latest release ran: run it again")
            bench.run, bench.ran, bench.plan = None, None, None
        swept = None if now is None else now.swept()
        if bench.sweep is not None and not bench.sweep.running and bench.swept != swept:
            bench.sweep, bench.swept = None, None

    def _stale(self) -> str | None:
        """Why the latest release may not be filed as the pages' job (None: it may):
        an option, the table or a hierarchy file changed since it ran."""
        if self.bench.ran != self._job_now():
            return "the job changed since this release ran: run it again"
        return None

    async def run(self, request: Request) -> Response:
        flow = self.bench.flow
        blockers = flow.blockers()
        toml = None if blockers else toml_document(flow.job_options())
        task = self.bench.run
        filed = task is not None and task is self.bench.filed
        return self.page(
            request,
            "run.html",
            blockers=blockers,
            task=task,
            toml=toml,
            unprotected=flow.unprotected,
            stale=None if filed or self.bench.result is None else self._stale(),
        )

    async def start_run(self, request: Request, form: FormData) -> Response:
        bench = self.bench
        if bench.run is not None and bench.run.running:
            raise InputError("a release is running already")
        options = bench.flow.job_options()  # refuses while a column has no role
        stamp = JobStamp.of(options, bench.workspace)
        job = read_job(options, bench.workspace)
        plan: LedgerPlan | None = None
        if bench.ledger is not None:
            # The ledger's policies (a seed used before for this table, a spent budget)
            # refuse the release now, not after its search; the search runs on the
            # ledger's plan, which filing then records as it is (Ledger.record).
            plan = await run_in_threadpool(
                Ledger(bench.workspace / bench.ledger).plan,
                job.input,
                job.config,
                delimiter=job.delimiter,
            )
        if bench.result is not None:
            # A database release is held in the server (a connection, a temporary table)
            # until it is filed or discarded: the new run replaces it, so it is let go.
            bench.result.close()
        bench.run = Task("release", lambda report: result_pages.release(job, plan, report))
        bench.ran, bench.plan, bench.filed, bench.written = stamp, plan, None, {}
        bench.run.start()
        return _redirect("/run")

    async def cancel(self, request: Request, form: FormData) -> Response:
        task = self._task(request.path_params["task"])
        task.cancel()
        return _redirect("/run" if task is self.bench.run else "/sweep")

    async def status(self, request: Request) -> Response:
        return JSONResponse(self._task(request.path_params["task"]).status())

    def _task(self, name: str) -> Task[Any]:
        task = {"release": self.bench.run, "sweep": self.bench.sweep}.get(name)
        if task is None:
            raise HTTPException(404, f"no task {echo(name)}")
        return task

    # -- 7 results ------------------------------------------------------------------

    async def results(self, request: Request) -> Response:
        bench = self.bench
        result = bench.result
        if result is None or bench.ran is None:
            bench.say("run the release first", "error")
            return _redirect("/run")
        filed = bench.filed is bench.run
        # A filed release stays shown as filed (filing drew the next release's seed).
        stale = None if filed else self._stale()
        if stale is not None:
            bench.say(stale, "error")
            return _redirect("/run")
        options = bench.ran.options
        if bench.shown is not bench.run:
            bench.shown_context = await run_in_threadpool(result_pages.results_context, result)
            bench.shown = bench.run
        context = bench.shown_context
        return self.page(
            request,
            "results.html",
            filed=filed,
            written=bench.written if filed else {},
            ledger=bench.ledger,
            outputs=result_pages.release_files(options),
            job_name=job_file_name(options),
            **context,
        )

    async def file_release(self, request: Request, form: FormData) -> Response:
        bench = self.bench
        # No await between this test and taking the lock: a second submit is refused.
        if bench.filing.locked():
            raise InputError("this release is being filed already")
        async with bench.filing:
            task, result, ran = bench.run, bench.result, bench.ran
            if task is None or result is None or ran is None:
                raise InputError("run the release first")
            if task is bench.filed:
                raise InputError("this release is filed already: run it again to file another")
            stale = self._stale()
            if stale is not None:
                raise InputError(stale)
            if result.warnings and form.get("acknowledge") != "on":
                raise InputError(
                    "this release has warnings: read them and tick that you did to file it"
                )
            options = ran.options
            names = [*result_pages.release_files(options).values(), job_file_name(options)]
            existing = [n for n in names if inside(bench.workspace, n).exists()]
            if existing and form.get("replace") != "on":
                raise InputError(
                    f"{', '.join(existing)} already in the workspace: tick 'replace' to overwrite"
                )
            ledger: tuple[str, LedgerPlan] | None = None
            if bench.ledger is not None:
                assert bench.plan is not None  # start_run plans every release with a ledger
                ledger = (bench.ledger, bench.plan)
            written = await run_in_threadpool(
                result_pages.file_release, result, options, bench.workspace, ledger
            )
            bench.filed, bench.written = task, written
            # The next release gets a seed of its own: a ledger refuses this one for the
            # same table now, and a second release with it would repeat this row order.
            bench.flow.seed = fresh_seed()
        bench.say(f"filed the release: {', '.join(written.values())}")
        return _redirect("/results")

    async def job_file(self, request: Request) -> Response:
        """The job as TOML: the latest finished release's (``?of=release``; 409 without
        one) or the one the pages describe now."""
        if request.query_params.get("of") == "release":
            if self.bench.result is None or self.bench.ran is None:
                raise HTTPException(409, "no finished release yet: run it first")
            options = self.bench.ran.options
        else:
            try:
                options = self.bench.flow.job_options()
            except InputError as error:
                raise HTTPException(409, f"no job yet: {error}") from None
        return _attachment(toml_document(options), job_file_name(options), "application/toml")

    async def download(self, request: Request) -> Response:
        """A file of the workspace: one the workbench wrote (the filed release) or a
        table or hierarchy file the pages list; nothing else of the folder (hidden
        files, a ledger, whatever else lives there) is served."""
        name = request.path_params["name"]
        if name not in self.bench.written.values() and not listed(name, TABLE_SUFFIXES):
            raise HTTPException(
                403, "only the tables and files the workbench lists or wrote are served"
            )
        try:
            path = inside(self.bench.workspace, name)
        except InputError as error:
            raise HTTPException(403, str(error)) from None
        if not path.is_file():
            raise HTTPException(404, "no such file in the workspace")
        return FileResponse(path, headers={"content-disposition": _disposition(path.name)})


def workspace_files(workspace: Path, suffixes: tuple[str, ...]) -> list[str]:
    """The workspace's files of those suffixes, sorted: none hidden or in a hidden folder,
    none more than :data:`LIST_DEPTH` folders down, none through a link that leads out
    of the workspace, and no more looked at than :data:`LIST_ENTRIES`.

    Example:
        >>> import tempfile
        >>> space = Path(tempfile.mkdtemp())
        >>> for name in ("a.csv", ".git/x.csv", "h/b.csv", "notes.txt.bak"):
        ...     (space / name).parent.mkdir(exist_ok=True)
        ...     _ = (space / name).write_text("x")
        >>> workspace_files(space, (".csv",))
        ['a.csv', 'h/b.csv']
    """
    root = workspace.resolve()
    names: list[str] = []
    seen = 0
    # os.walk does not follow links to folders: a link cannot lead the walk elsewhere.
    for folder, folders, files in os.walk(root):
        here = Path(folder).relative_to(root)
        seen += len(folders) + len(files)
        if seen > LIST_ENTRIES:
            break
        deeper = len(here.parts) < LIST_DEPTH
        folders[:] = sorted(f for f in folders if deeper and not f.startswith("."))
        for file in files:
            name = (here / file).as_posix()
            if listed(name, suffixes):
                try:
                    if inside(root, name).is_file():
                        names.append(name)
                except InputError:
                    continue
    return sorted(names)


def listed(name: str, suffixes: tuple[str, ...]) -> bool:
    """Whether ``name`` is one :func:`workspace_files` may list, from the name alone:
    no hidden part, not deeper than :data:`LIST_DEPTH`, one of ``suffixes``.

    Example:
        >>> listed("h/age.csv", (".csv",)), listed(".git/x.csv", (".csv",))
        (True, False)
        >>> listed("ledger.sqlite", (".csv",)), listed("a/./b.csv", (".csv",))
        (False, False)
    """
    parts = name.split("/")
    return (
        bool(name)
        and len(parts) <= LIST_DEPTH + 1
        and not any(part.startswith(".") or not part for part in parts)
        and name.lower().endswith(suffixes)
    )


def file_spec(name: str) -> str:
    """The hierarchy spec of a workspace file: its name, with ``./`` before it when the
    name would read as a builder (a file called ``mask`` or ``order:2.csv``).

    Example:
        >>> file_spec("hierarchies/age.csv"), file_spec("mask"), file_spec("order:2.csv")
        ('hierarchies/age.csv', './mask', './order:2.csv')
    """
    return f"./{name}" if spec_file(name) is None else name


def _attachment(text: str, name: str, media_type: str) -> Response:
    return Response(
        text.encode("utf-8"),
        media_type=media_type,
        headers={"content-disposition": _disposition(name)},
    )


def _disposition(name: str) -> str:
    """A ``Content-Disposition`` naming the download ``name``: an ASCII ``filename`` for
    old clients and the exact name as RFC 5987's ``filename*`` (a header is Latin-1:
    a name such as 患者.csv cannot go there as it is). Folders are not part of it.

    Example:
        >>> print(_disposition("患者.csv"))
        attachment; filename="__.csv"; filename*=UTF-8''%E6%82%A3%E8%80%85.csv
        >>> print(_disposition('a/b"c.csv'))
        attachment; filename="a_b_c.csv"; filename*=UTF-8''a_b%22c.csv
    """
    name = name.replace("/", "_").replace("\\", "_")
    fallback = "".join(c if c.isascii() and c.isprintable() and c != '"' else "_" for c in name)
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"


def _back(request: Request) -> str:
    """The page a failed action returns to: the page its form was on."""
    path = request.url.path
    for step, _ in STEPS:
        if path.startswith(step):
            return step
    return "/table"


WHOLE_LIMIT = 2**31 - 1
"""The largest whole number a form field takes (k, seed): more is a typing slip."""


def _whole(form: FormData, key: str, *, low: int) -> int:
    """A form field holding a whole number from ``low`` to :data:`WHOLE_LIMIT`.

    Only ASCII digits: ``"²".isdigit()`` is true but :func:`int` refuses it.
    """
    text = str(form.get(key, "")).strip()
    if (
        not (text.isascii() and text.isdecimal())
        or len(text) > 10
        or not (low <= int(text) <= WHOLE_LIMIT)
    ):
        raise InputError(
            f"{key} must be a whole number from {low} to {WHOLE_LIMIT}, got {echo(text)}"
        )
    return int(text)


def frame_rows(frame: pl.DataFrame) -> list[list[str]]:
    """A frame's rows as text for a page (a missing value is empty)."""
    return [["" if cell is None else str(cell) for cell in row] for row in frame.rows()]


def model_fields(column: str, specs: list[str]) -> dict[str, str]:
    """The models form's fields of a sensitive column (``l``, ``t``, ``beta``, ``delta``)
    its specs came from: :func:`~kanonym.workbench.workflow.model_specs` inverted by
    its own templates, so a column name holding ``:`` reads back as it was written.

    Example:
        >>> model_fields("a:b", model_specs("a:b", {"l": "2", "delta": "1.5"}))
        {'l': '2', 'delta': '1.5'}
    """
    marker = "\x00"
    fields: dict[str, str] = {}
    for key in ("l", "t", "beta", "delta"):
        (template,) = model_specs(column, {key: marker})
        head, tail = template.split(marker)
        for spec in specs:
            if spec.startswith(head) and spec.endswith(tail) and len(spec) > len(head + tail):
                fields[key] = spec[len(head) : len(spec) - len(tail)]
    return fields


_TEMPLATES.globals.update(frame_rows=frame_rows, spec_json=spec_json, model_fields=model_fields)
