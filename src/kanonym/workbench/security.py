"""The workbench's guard: who may talk to it, what a request may carry, where files may go.

The workbench serves person-specific tables on a port of this machine, so
every request must prove it comes from the person who started it:

* ``kanonym serve`` prints a URL holding a random access token
  (:func:`secrets.token_urlsafe`); the first request carrying it gets a
  session cookie (HttpOnly, SameSite=Strict) and is redirected to the same
  page without the token, so the token leaves the address bar and history.
  The token buys one session only: a URL copied from the terminal, the
  history or a shoulder-surfed screen is worth nothing once the officer's
  browser used it. Any request with neither a valid token nor a valid
  cookie gets 403.
* The ``Host`` header must name the address the server was started on
  (a DNS-rebinding page on another site cannot reach it through its own
  name); a request's ``Origin`` (or ``Referer``), when the browser sends
  one, must be that host too.
* Every POST carries the session's CSRF token in a form field; the routes
  check it (:func:`checked_form`) before acting.
* A request body larger than the upload limit is refused with 413, while
  it streams in, before it fills memory or disk.
* Every response forbids framing and restricts scripts to the server's own
  files (Content-Security-Policy), so nothing is fetched from elsewhere.

:func:`inside` confines every file name a request gives to the workspace
folder; :func:`refused_workspace` keeps the workspace off the home folder
and the file system's root, whose files (keys, mail, other projects) the
workbench has no business listing or serving.

Example:
    >>> from pathlib import Path
    >>> import tempfile
    >>> space = Path(tempfile.mkdtemp())
    >>> inside(space, "adult.csv") == space.resolve() / "adult.csv"
    True
    >>> inside(space, "../secret.csv")
    Traceback (most recent call last):
    ...
    kanonym.errors.InputError: '../secret.csv' is outside the workspace: give a file name inside it
"""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from kanonym.errors import InputError, echo

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

COOKIE = "kanonym_session"
"""The session cookie's name, before the port (:attr:`Guard.cookie`)."""

CSRF_FIELD = "csrf"
"""The form field every POST carries the session's CSRF token in."""

LOOPBACK = "127.0.0.1"
"""The default address: reachable from this machine only."""

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; "
    # vega-embed adds a <style> element and Vega writes style attributes on the SVG.
    "style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
)
"""Scripts only from the server itself: no inline script, no CDN, no eval."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (127.0.0.0/8, ::1, localhost).

    Example:
        >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("0.0.0.0")
        (True, True, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass
class Guard:
    """The server's secrets and limits, shared by the middleware and the routes.

    Attributes:
        host: the address the server listens on.
        port: its port.
        max_upload_bytes: the largest request body accepted.
        token: the access token printed in the URL.
        token_spent: whether the token bought its session already (it buys one).
        sessions: session id (the cookie) -> that session's CSRF token.
    """

    host: str
    port: int
    max_upload_bytes: int
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    token_spent: bool = False
    sessions: dict[str, str] = field(default_factory=dict)

    @property
    def cookie(self) -> str:
        """The session cookie's name, with the port: browsers send a host's cookies to
        every port of it, so two workbenches on one machine would otherwise overwrite
        each other's session."""
        return f"{COOKIE}_{self.port}"

    @property
    def max_decoded_bytes(self) -> int:
        """The most a compressed upload (``.csv.gz``) may decompress to: ten times the
        upload limit, so a small bomb cannot fill the memory the table is read into."""
        return 10 * self.max_upload_bytes

    @property
    def url(self) -> str:
        """The URL to open, with the access token."""
        shown = f"[{self.host}]" if ":" in self.host else self.host
        if self.host in ("0.0.0.0", "::"):
            shown = LOOPBACK  # a wildcard address is not one a browser can open
        return f"http://{shown}:{self.port}/?token={self.token}"

    def allowed_host(self, header: str) -> bool:
        """Whether a ``Host`` header names this server.

        Listening on a wildcard address (``0.0.0.0``), the server has no one
        name to check against; only the Origin check (against the Host the
        browser sent) remains then.
        """
        if self.host in ("0.0.0.0", "::"):
            return True
        names = {self.host}
        if is_loopback(self.host):
            names |= {LOOPBACK, "localhost", "[::1]"}
        return header.lower() in {f"{name}:{self.port}" for name in names}

    def new_session(self) -> str:
        """A new session id, with its own CSRF token."""
        session = secrets.token_urlsafe(32)
        self.sessions[session] = secrets.token_urlsafe(32)
        return session

    def csrf_of(self, session: str | None) -> str | None:
        """The CSRF token of a session (None for an unknown one)."""
        return None if session is None else self.sessions.get(session)


class UploadTooLargeError(Exception):
    """A request body grew beyond the upload limit while it was read."""


class GuardMiddleware:
    """The ASGI middleware that admits, limits and labels every HTTP request (module doc)."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        refusal = self._refusal(request)
        if refusal is not None:
            await _secured(refusal)(scope, receive, send)
            return
        token = request.query_params.get("token")
        session = request.cookies.get(self.guard.cookie)
        if self.guard.csrf_of(session) is None:
            if token is None or not same_secret(token, self.guard.token):
                await _secured(
                    _forbidden("no valid access token: open the URL kanonym serve printed")
                )(scope, receive, send)
                return
            if self.guard.token_spent:
                await _secured(
                    _forbidden(
                        "this access URL was used already: go on in the browser tab it "
                        "opened, or restart kanonym serve for a new URL"
                    )
                )(scope, receive, send)
                return
            # The token bought a session, its only one: set the cookie, drop the token
            # from the address.
            self.guard.token_spent = True
            response = RedirectResponse(request.url.remove_query_params("token"), status_code=303)
            response.set_cookie(
                self.guard.cookie,
                self.guard.new_session(),
                httponly=True,
                samesite="strict",
                path="/",
            )
            await _secured(response)(scope, receive, send)
            return
        scope.setdefault("state", {})["session"] = session
        await self._limited(scope, receive, send)

    def _refusal(self, request: Request) -> Response | None:
        """The response refusing a request from the wrong host, origin or of the wrong size."""
        host = request.headers.get("host", "")
        if not self.guard.allowed_host(host):
            return _forbidden(f"host {echo(host)} is not this workbench's address")
        source = request.headers.get("origin") or request.headers.get("referer")
        if source and source != "null":
            parts = urlsplit(source)
            if parts.netloc.lower() != host.lower() or parts.scheme != "http":
                return _forbidden("cross-origin request refused")
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > self.guard.max_upload_bytes:
            return _too_large(self.guard.max_upload_bytes)
        return None

    async def _limited(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Run the app, counting body bytes as they arrive; 413 once past the limit."""
        received = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.guard.max_upload_bytes:
                    raise UploadTooLargeError
            return message

        async def secured_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = list(message.get("headers", []))
                headers.extend(_SECURITY_HEADERS)
                message["headers"] = headers
            await send(message)

        try:
            await self.app(scope, counting_receive, secured_send)
        except UploadTooLargeError:
            if started:
                raise
            await _secured(_too_large(self.guard.max_upload_bytes))(scope, receive, send)


_SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]


def _secured(response: Response) -> Response:
    for name, value in _SECURITY_HEADERS:
        response.headers[name.decode()] = value.decode()
    return response


def _forbidden(why: str) -> Response:
    return PlainTextResponse(f"403 forbidden: {why}\n", status_code=403)


def _too_large(limit: int) -> Response:
    return PlainTextResponse(
        f"413 upload too large: the limit is {limit / 1e6:g} MB (kanonym serve --max-upload-mb)\n",
        status_code=413,
    )


async def checked_form(request: Request, guard: Guard) -> FormData:
    """The POSTed form, after its CSRF token was checked against the session's.

    Raises:
        HTTPException: 403 when the token is missing or wrong; 413 when the
            body grew beyond the upload limit while the form was parsed.
    """
    try:
        form = await request.form(max_files=4, max_fields=2000)
    except UploadTooLargeError:
        raise HTTPException(413, "upload too large") from None
    expected = guard.csrf_of(request.scope.get("state", {}).get("session"))
    given = form.get(CSRF_FIELD)
    if expected is None or not isinstance(given, str) or not same_secret(given, expected):
        await form.close()
        raise HTTPException(403, "missing or wrong CSRF token: reload the page and try again")
    return form


def same_secret(given: str, expected: str) -> bool:
    """Whether ``given`` is the secret ``expected``, compared in constant time.

    Compared as UTF-8 bytes: :func:`secrets.compare_digest` raises TypeError on
    text that is not ASCII, which any request can send (``?token=%C3%A9``).

    Example:
        >>> same_secret("é", "abc"), same_secret("abc", "abc")
        (False, True)
    """
    # "replace": a lone surrogate cannot be encoded, and "?" is in no token's alphabet.
    return secrets.compare_digest(given.encode("utf-8", "replace"), expected.encode("utf-8"))


def refused_workspace(workspace: Path) -> str | None:
    """Why ``workspace`` may not be the workbench's (None: it may).

    The home folder and the root hold far more than tables (keys, mail, other
    projects): the workbench would list and offer them. A dedicated folder is
    asked for instead.

    Example:
        >>> print(refused_workspace(Path("/")))
        the workspace may not be / (the whole file system): use a dedicated folder, e.g. ~/releases
    """
    resolved = workspace.resolve()
    if resolved == Path(resolved.anchor):
        what = f"{resolved} (the whole file system)"
    else:
        try:
            home = Path.home().resolve()
        except (RuntimeError, KeyError):  # no home folder known: none to keep out of
            return None
        if resolved != home:
            return None
        what = f"{resolved} (your home folder)"
    return f"the workspace may not be {what}: use a dedicated folder, e.g. ~/releases"


def inside(workspace: Path, name: str) -> Path:
    """``name`` as a path inside ``workspace``, resolved (symbolic links followed).

    Refused: an empty name, an absolute path (POSIX or Windows), a ``..``
    part, and a name whose resolved path leaves the workspace (a symbolic
    link pointing out of it).

    Raises:
        InputError: the name leaves the workspace.
    """
    root = workspace.resolve()
    outside = InputError(f"{echo(name)} is outside the workspace: give a file name inside it")
    if not name or "\x00" in name:
        raise outside
    posix, windows = PurePosixPath(name), PureWindowsPath(name)
    if posix.is_absolute() or windows.is_absolute() or windows.drive:
        raise outside
    if ".." in posix.parts or ".." in windows.parts:
        raise outside
    resolved = (root / name).resolve()
    if not resolved.is_relative_to(root):
        raise outside
    return resolved


def relative_name(workspace: Path, path: Path) -> str:
    """``path``, resolved inside the workspace, as the POSIX name a job file gives it."""
    return path.relative_to(workspace.resolve()).as_posix()
