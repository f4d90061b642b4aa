"""The page's HTTP server: the standard library's `ThreadingHTTPServer` on 127.0.0.1 (a local page for one
user: no dependency to install, and the answers are the lake's work, not the server's). Routes: `/` the
page, `/pgn` the games through the position as a PGN download, `/assets/…` the CSS and script shipped in
the package. A user error (a bad FEN, filter or move, a folder that is not a lake, a lake that changed while
it was read) is one line in the page, never a traceback; a bug's traceback goes to the server's stderr."""

from __future__ import annotations

import sys
import traceback
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import duckdb

from warehouse.errors import InputError, WarehouseError, describe
from warehouse.explorer_page import render
from warehouse.explorer_page.answers import Answers
from warehouse.explorer_page.view import View
from warehouse.sql import damaged_file

HOST = "127.0.0.1"
ASSETS = Path(__file__).resolve().parent / "assets"
CONTENT_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}


def user_error(error: BaseException) -> str | None:
    """The one line a user error shows, None for a bug."""
    if isinstance(error, (WarehouseError, OSError)):
        return describe(error)
    if isinstance(error, duckdb.Error):
        damage = damaged_file(error)
        if damage is not None:
            return str(damage)
        if isinstance(error, duckdb.IOException):  # a file gone or changed under the read
            return f"the lake changed while it was read ({describe(error)}): reload the page"
    return None


class Handler(BaseHTTPRequestHandler):
    server: ExplorerServer

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        try:
            if url.path == "/":
                self.explorer(query)
            elif url.path == "/pgn":
                self.pgn(query)
            elif url.path.removeprefix("/assets/") in asset_names():  # by name: no path leaves the folder
                path = ASSETS / url.path.removeprefix("/assets/")
                self.reply(HTTPStatus.OK, CONTENT_TYPES[path.suffix], path.read_bytes())
            else:
                self.reply_error(HTTPStatus.NOT_FOUND, f"{url.path}: no such page")
        except Exception as e:
            line = user_error(e)
            if line is None:
                traceback.print_exc(file=sys.stderr)
                line = f"internal error: {describe(e)} (the server's log has the details)"
                status = HTTPStatus.INTERNAL_SERVER_ERROR
            else:
                status = (
                    HTTPStatus.BAD_REQUEST if isinstance(e, InputError) else HTTPStatus.SERVICE_UNAVAILABLE
                )
            entered = {name: values[-1] for name, values in query.items() if name in ("fen", "line")}
            self.reply_error(status, line, entered)

    def explorer(self, query: dict[str, list[str]]) -> None:
        answers = self.server.answers
        view = View.from_query(query)
        if "line" in query:  # moves entered as SAN: to the URL every link uses
            self.send_response(HTTPStatus.SEE_OTHER)
            self.send_header("Location", f"/?{view.query()}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        moves, games, how = answers.answer(view)
        text = render.explorer_page(answers.location, view, moves, games, answers.opening(view), how)
        self.reply(HTTPStatus.OK, "text/html; charset=utf-8", text.encode())

    def pgn(self, query: dict[str, list[str]]) -> None:
        texts = self.server.answers.pgn(View.from_query(query))
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "application/x-chess-pgn; charset=utf-8")
        self.send_header("Content-Disposition", 'attachment; filename="explorer.pgn"')
        self.send_header("Connection", "close")  # the end of the stream ends the file
        self.end_headers()
        for text in texts:
            self.wfile.write(text.encode())

    def reply(self, status: HTTPStatus, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def reply_error(self, status: HTTPStatus, line: str, entered: dict[str, str] | None = None) -> None:
        body = render.error_page(self.server.answers.location, line, entered=entered)
        self.reply(status, "text/html; charset=utf-8", body.encode())

    def log_message(self, format: str, *args: object) -> None:
        if self.server.verbose:
            super().log_message(format, *args)


def asset_names() -> set[str]:
    return {path.name for path in ASSETS.iterdir()}


class ExplorerServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, answers: Answers, port: int, verbose: bool = False) -> None:
        self.answers = answers
        self.verbose = verbose
        super().__init__((HOST, port), Handler)
