"""`termpilot serve --http`: MCP over streamable HTTP through the official SDK's
client, the bearer token, and the Host and Origin checks that keep web pages out."""

from __future__ import annotations

import logging
import os
import queue
import re
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
import pytest
from conftest import BIN, REQUEST_TIMEOUT, SERVER_ENV, TEST_TIMEOUT, WarningLog, _counter, kill_server, single_leaf
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

STARTUP_TIMEOUT = 10.0
ANNOUNCE_RE = re.compile(r"serving MCP at (http://\S+)")
TOKEN_RE = re.compile(r"bearer token (\S+)")
INITIALIZE = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    b'"capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}'
)


@dataclass
class HttpServer:
    url: str
    token: str
    stderr: list[str]


def start(socket: str, token: str | None) -> tuple[subprocess.Popen[str], HttpServer]:
    """Starts `serve --http 127.0.0.1:0` and reads its address (and made-up token)
    from stderr."""
    env = dict(SERVER_ENV, PATH=os.environ["PATH"])
    if token is not None:
        env["TERMPILOT_HTTP_TOKEN"] = token
    process = subprocess.Popen(
        [BIN, "serve", "-L", socket, "--http", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    seen: list[str] = []
    url = None
    while url is None or (token is None and not any(TOKEN_RE.search(line) for line in seen)):
        try:
            line = lines.get(timeout=STARTUP_TIMEOUT)
        except queue.Empty:
            break
        if line is None:
            break
        seen.append(line)
        if found := ANNOUNCE_RE.search(line):
            url = found.group(1)
    if url is None:
        process.kill()
        process.wait(timeout=5)
        raise AssertionError(f"termpilot serve --http did not announce its address: {seen}")
    if token is None:
        token = next(m.group(1) for line in seen if (m := TOKEN_RE.search(line)))
    return process, HttpServer(url, token, seen)


@pytest.fixture
def http_server() -> Iterator[Any]:
    """A factory: `http_server(token)` starts a server; all are stopped at the end."""
    started: list[tuple[subprocess.Popen[str], str]] = []
    # The SDK logs what it could not handle (a result off its schema, a
    # session it could not end): none of that may happen.
    warnings = WarningLog()
    logging.getLogger("mcp").addHandler(warnings)

    def factory(token: str | None = "e2e-token-0123") -> HttpServer:
        socket = f"tp-e2e-http-{os.getpid()}-{next(_counter)}"
        process, server = start(socket, token)
        started.append((process, socket))
        return server

    try:
        yield factory
    finally:
        logging.getLogger("mcp").removeHandler(warnings)
        stop(started)
    assert not warnings.records, [r.getMessage() for r in warnings.records]


def stop(started: list[tuple[subprocess.Popen[str], str]]) -> None:
    for process, socket in started:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        kill_server(socket)


@asynccontextmanager
async def session(server: HttpServer, token: str | None = None):
    headers = {"Authorization": f"Bearer {token or server.token}"}
    # trust_env=False: a proxy set in the environment must not carry loopback requests.
    timeout = httpx2.Timeout(REQUEST_TIMEOUT, read=TEST_TIMEOUT)
    async with httpx2.AsyncClient(headers=headers, timeout=timeout, trust_env=False) as http:
        async with streamable_http_client(server.url, http_client=http) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT) as client:
                await client.initialize()
                yield client


def run(body: Any) -> None:
    async def main() -> None:
        with anyio.fail_after(TEST_TIMEOUT):
            await body()

    try:
        anyio.run(main)
    except BaseExceptionGroup as group:
        raise single_leaf(group) from None


async def call(client: ClientSession, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None, result
    return result.structured_content


def post(url: str, headers: dict[str, str], body: bytes = INITIALIZE) -> int:
    """The HTTP status of one raw MCP request."""
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
    )
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with direct.open(request, timeout=REQUEST_TIMEOUT) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_the_official_client_runs_commands_over_http(http_server: Any) -> None:
    server = http_server()

    async def body() -> None:
        async with session(server) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert {"run_command", "wait_for_text", "send_keys_batch"} <= tools, tools
            pane = (await call(client, "create_session", {"name": "http"}))["pane"]
            result = await call(client, "run_command", {"pane": pane, "command": "echo $((6*7))", "timeout_s": 10})
            assert result["exit_code"] == 0 and result["output"] == "42", result
            # A second HTTP session works on the same tmux server.
            async with session(server) as other:
                panes = await call(other, "list_panes", {})
                assert pane in [p["id"] for p in panes["panes"]], panes

    run(body)


def test_requests_without_the_token_or_from_a_web_page_are_refused(http_server: Any) -> None:
    server = http_server()
    good = {"Authorization": f"Bearer {server.token}"}
    assert post(server.url, good) == 200
    assert post(server.url, {}) == 401
    assert post(server.url, {"Authorization": "Bearer wrong"}) == 401
    assert post(server.url, {"Authorization": f"Basic {server.token}"}) == 401
    assert post(server.url.replace("/mcp", "/other"), good) == 404
    # A page on another site, or one reached through a rebound DNS name.
    assert post(server.url, good | {"Origin": "https://evil.example"}) == 403
    assert post(server.url, good | {"Host": "evil.example"}) == 403
    # A page served from the same machine is a loopback origin and gets in.
    assert post(server.url, good | {"Origin": "http://localhost:3000"}) == 200


def test_a_made_up_token_is_printed_and_works(http_server: Any) -> None:
    server = http_server(token=None)
    assert re.fullmatch(r"[0-9a-f]{32}", server.token), server.stderr
    assert post(server.url, {}) == 401

    async def body() -> None:
        async with session(server) as client:
            assert (await call(client, "list_sessions", {}))["sessions"] is not None

    run(body)
