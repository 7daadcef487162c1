"""The workbench's pages: a raw table to a filed release, one step per page.

Every page is rendered on the server and every action is a plain HTML form
POST answered by a redirect to the page that shows its outcome (an error is
one line at the top of the page). The only scripts are the vendored
Vega-Lite ones and ``static/workbench.js``, which draws the figures and
polls a running task's progress.

Steps: ``/table`` (upload or pick a table; preview and column statistics),
``/roles`` (every column's role, suggested by the quasi-identifier scan),
``/hierarchies`` (a builder or an ARX file per quasi-identifier, previewed
level by level), ``/models`` (k, suppression, metric, seed and the models of
the sensitive columns), ``/sweep`` (choosing k: :func:`kanonym.explore`),
``/run`` (the release in the background, cancellable) and ``/results``
(figures, the job as TOML, the files written into the workspace and, with a
ledger, recorded there).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any
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
from kanonym.errors import InputError, KanonymError, echo
from kanonym.figures.render import script_tags
from kanonym.hierarchy import preview as hierarchy_preview
from kanonym.io import load
from kanonym.io.toml import toml_document
from kanonym.metrics import METRICS
from kanonym.models import parse_model
from kanonym.release.pipeline import anonymize
from kanonym.result import Result
from kanonym.search import Progress
from kanonym.sweep import Exploration
from kanonym.workbench import results as result_pages
from kanonym.workbench.security import (
    CSRF_FIELD,
    Guard,
    GuardMiddleware,
    checked_form,
    inside,
    relative_name,
)
from kanonym.workbench.tasks import Task
from kanonym.workbench.workflow import (
    BUILDERS,
    PREVIEW_ROWS,
    ROLES,
    Workflow,
    build_hierarchy,
    column_stats,
    job_file_name,
    model_specs,
    read_job,
)

TABLE_SUFFIXES = (".csv", ".tsv", ".txt", ".csv.gz", ".parquet", ".pq")
"""The files the table page offers and accepts."""

HIERARCHY_FOLDER = "hierarchies"
"""Where uploaded hierarchy files go, inside the workspace."""

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
        ran: the job options of the latest release task (what filing writes).
        written: job key -> file name of the files of the filed release.
        messages: (kind, text) lines shown once, on the next page.
    """

    workspace: Path
    guard: Guard
    ledger: str | None = None
    flow: Workflow = field(default_factory=Workflow)
    run: Task[Result] | None = None
    sweep: Task[Exploration] | None = None
    ran: dict[str, object] = field(default_factory=dict)
    written: dict[str, str] = field(default_factory=dict)
    messages: list[tuple[str, str]] = field(default_factory=list)

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
        InputError: the workspace is not a folder, or the ledger is outside it.
    """
    if not workspace.is_dir():
        raise InputError(f"workspace {workspace} is not a folder")
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
        Route("/roles", pages.roles),
        Route("/roles", pages.post(pages.save_roles), methods=["POST"]),
        Route("/roles/suggested", pages.post(pages.take_suggestions), methods=["POST"]),
        Route("/hierarchies", pages.hierarchies),
        Route("/hierarchies/{column}", pages.post(pages.save_hierarchy), methods=["POST"]),
        Route("/hierarchies/{column}/arx.csv", pages.export_hierarchy),
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
    the workbench refers to anything outside it.

    Example:
        >>> spec_json({"$schema": "https://example.org/v6.json", "title": "</script>"})
        '{"title": "<\\\\/script>"}'
    """
    shown = {key: value for key, value in spec.items() if key != "$schema"}
    return json.dumps(shown).replace("</", "<\\/")


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
        files = self._files(TABLE_SUFFIXES)
        preview = None if flow.frame is None else flow.frame.head(PREVIEW_ROWS)
        stats = [] if flow.frame is None else column_stats(flow.frame)
        return self.page(
            request,
            "table.html",
            files=files,
            preview=preview,
            stats=stats,
            limit_mb=self.bench.guard.max_upload_bytes / 1e6,
        )

    def _files(self, suffixes: tuple[str, ...]) -> list[str]:
        """The workspace's files of those suffixes, without hidden ones and without links
        that lead out of it."""
        names = []
        for path in self.bench.workspace.rglob("*"):
            name = path.relative_to(self.bench.workspace).as_posix()
            if not path.name.lower().endswith(suffixes) or name.startswith(".") or "/." in name:
                continue
            try:
                if inside(self.bench.workspace, name).is_file():
                    names.append(name)
            except InputError:
                continue
        return sorted(names)

    async def upload(self, request: Request, form: FormData) -> Response:
        upload = form.get("file")
        if not isinstance(upload, UploadFile) or not upload.filename:
            raise InputError("choose a CSV or Parquet file to upload")
        name = Path(upload.filename.replace("\\", "/")).name
        if not name.lower().endswith(TABLE_SUFFIXES):
            raise InputError(f"{echo(name)} is not a CSV or Parquet file")
        target = await self._save(upload, name, replace=form.get("replace") == "on")
        self._load(target)
        return _redirect("/table")

    async def _save(self, upload: UploadFile, name: str, *, replace: bool) -> Path:
        """Store an upload in the workspace, never over an existing file unless asked."""
        target = inside(self.bench.workspace, name)
        if target.exists() and not replace:
            raise InputError(
                f"{name} is already in the workspace: tick 'replace' to overwrite it, or pick it"
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.part")
        with partial.open("wb") as handle:
            while chunk := await upload.read(1 << 20):
                handle.write(chunk)
        partial.replace(target)
        return target

    async def pick(self, request: Request, form: FormData) -> Response:
        self._load(inside(self.bench.workspace, str(form.get("name", ""))))
        return _redirect("/table")

    def _load(self, path: Path) -> None:
        if not path.is_file():
            raise InputError(f"{relative_name(self.bench.workspace, path)} is not a file")
        table = load(path)
        self.bench.flow.load(relative_name(self.bench.workspace, path), table.frame)
        self.bench.run, self.bench.sweep, self.bench.written = None, None, {}
        self.bench.say(f"loaded {self.bench.flow.table}: {table.frame.height:,} rows")

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
        return _redirect("/roles")

    # -- 3 hierarchies ----------------------------------------------------------------

    async def hierarchies(self, request: Request) -> Response:
        flow = self.bench.flow
        names = flow.with_role("quasi-identifying")
        column = request.query_params.get("column") or (names[0] if names else None)
        preview, error = None, None
        if column in names and column in flow.hierarchies and flow.frame is not None:
            try:
                built = build_hierarchy(
                    flow.hierarchies[column],
                    flow.frame.get_column(column),
                    self.bench.workspace,
                    flow.table or "",
                )
                preview = hierarchy_preview(built, flow.frame.get_column(column))
            except KanonymError as failure:
                error = " ".join(str(failure).split())
        files = [name for name in self._files((".csv",)) if name != flow.table]
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

    async def save_hierarchy(self, request: Request, form: FormData) -> Response:
        flow = self.bench.flow
        column = request.path_params["column"]
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
                saved = await self._save(upload, name, replace=form.get("replace") == "on")
                spec = relative_name(self.bench.workspace, saved)
            else:
                spec = relative_name(self.bench.workspace, inside(self.bench.workspace, argument))
        else:
            raise InputError(
                f"unknown builder {echo(builder)}; choose one of {', '.join(BUILDERS)}"
            )
        assert flow.frame is not None
        # Built once here so that a spec the column does not fit is refused at once.
        build_hierarchy(spec, flow.frame.get_column(column), self.bench.workspace, flow.table or "")
        flow.hierarchies[column] = spec
        return _redirect(f"/hierarchies?column={quote(column)}")

    async def export_hierarchy(self, request: Request) -> Response:
        flow = self.bench.flow
        column = request.path_params["column"]
        if column not in flow.hierarchies or flow.frame is None:
            raise HTTPException(404, f"no hierarchy for {echo(column)}")
        built = build_hierarchy(
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
            **result_pages.sweep_context(exploration),
        )

    async def start_sweep(self, request: Request, form: FormData) -> Response:
        if self.bench.sweep is not None and self.bench.sweep.running:
            raise InputError("a sweep is running already")
        flow = self.bench.flow
        job = read_job(flow.job_options(), self.bench.workspace)
        limits = result_pages.sweep_limits(flow.suppression)
        task = Task("sweep", lambda report: result_pages.sweep(job, limits, report))
        self.bench.sweep = task
        task.start()
        return _redirect("/sweep")

    async def use_point(self, request: Request, form: FormData) -> Response:
        flow = self.bench.flow
        flow.k = _whole(form, "k", low=1)
        flow.suppression = parse_fraction(str(form.get("suppression", "0")), "suppression")
        self.bench.say(
            f"the job now uses k = {flow.k} and a suppression limit of {flow.suppression:.0%}"
        )
        return _redirect("/run")

    # -- 6 run ----------------------------------------------------------------------

    async def run(self, request: Request) -> Response:
        flow = self.bench.flow
        blockers = flow.blockers()
        toml = None if blockers else toml_document(flow.job_options())
        return self.page(request, "run.html", blockers=blockers, task=self.bench.run, toml=toml)

    async def start_run(self, request: Request, form: FormData) -> Response:
        if self.bench.run is not None and self.bench.run.running:
            raise InputError("a release is running already")
        options = self.bench.flow.job_options()  # refuses while a column has no role
        job = read_job(options, self.bench.workspace)

        def work(report: Callable[[Progress], None]) -> Result:
            return anonymize(job.input, job.config, delimiter=job.delimiter, on_progress=report)

        self.bench.run = Task("release", work)
        self.bench.ran, self.bench.written = options, {}
        self.bench.run.start()
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
        result = self.bench.result
        if result is None:
            self.bench.say("run the release first", "error")
            return _redirect("/run")
        context = result_pages.results_context(result, self.bench.flow)
        return self.page(
            request,
            "results.html",
            written=self.bench.written,
            ledger=self.bench.ledger,
            outputs=result_pages.release_files(self.bench.ran),
            job_name=job_file_name(self.bench.ran),
            **context,
        )

    async def file_release(self, request: Request, form: FormData) -> Response:
        result = self.bench.result
        if result is None:
            raise InputError("run the release first")
        options = self.bench.ran
        names = [*result_pages.release_files(options).values(), job_file_name(options)]
        existing = [n for n in names if inside(self.bench.workspace, n).exists()]
        if existing and form.get("replace") != "on":
            raise InputError(
                f"{', '.join(existing)} already in the workspace: tick 'replace' to overwrite"
            )
        self.bench.written = await run_in_threadpool(
            result_pages.file_release, result, options, self.bench.workspace, self.bench.ledger
        )
        self.bench.say(f"filed the release: {', '.join(self.bench.written.values())}")
        return _redirect("/results")

    async def job_file(self, request: Request) -> Response:
        """The job as TOML: the latest release's (``?of=release``) or the one the pages
        describe now."""
        if request.query_params.get("of") == "release" and self.bench.result is not None:
            options = self.bench.ran
        else:
            try:
                options = self.bench.flow.job_options()
            except InputError as error:
                raise HTTPException(409, f"no job yet: {error}") from None
        return _attachment(toml_document(options), job_file_name(options), "application/toml")

    async def download(self, request: Request) -> Response:
        try:
            path = inside(self.bench.workspace, request.path_params["name"])
        except InputError as error:
            raise HTTPException(403, str(error)) from None
        if not path.is_file():
            raise HTTPException(404, "no such file in the workspace")
        return FileResponse(path, filename=path.name)


def _attachment(text: str, name: str, media_type: str) -> Response:
    return Response(
        text.encode("utf-8"),
        media_type=media_type,
        headers={"content-disposition": f'attachment; filename="{name}"'},
    )


def _back(request: Request) -> str:
    """The page a failed action returns to: the page its form was on."""
    path = request.url.path
    for step, _ in STEPS:
        if path.startswith(step):
            return step
    return "/table"


def _whole(form: FormData, key: str, *, low: int) -> int:
    text = str(form.get(key, "")).strip()
    if not text.isdigit() or int(text) < low:
        raise InputError(f"{key} must be a whole number >= {low}, got {echo(text)}")
    return int(text)


def frame_rows(frame: pl.DataFrame) -> list[list[str]]:
    """A frame's rows as text for a page (a missing value is empty)."""
    return [["" if cell is None else str(cell) for cell in row] for row in frame.rows()]


_TEMPLATES.globals.update(frame_rows=frame_rows, spec_json=spec_json)
