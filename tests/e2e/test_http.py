"""`termpilot serve --http`: MCP over streamable HTTP through the official SDK's
client, the bearer token, and the Host and Origin checks that keep web pages out."""

from __future__ import annotations

import json
import logging
import os
import queue
import re
import socket as sockets
import subprocess
import threading
import time
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
from mcp.shared.exceptions import MCPError

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


def start(socket: str, token: str | None, args: tuple[str, ...] = ()) -> tuple[subprocess.Popen[str], HttpServer]:
    """Starts `serve --http 127.0.0.1:0 ARGS...` and reads its address (and made-up
    token) from stderr."""
    env = dict(SERVER_ENV, PATH=os.environ["PATH"])
    if token is not None:
        env["TERMPILOT_HTTP_TOKEN"] = token
    process = subprocess.Popen(
        [BIN, "serve", "-L", socket, "--http", "127.0.0.1:0", *args],
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

    def factory(token: str | None = "e2e-token-0123", args: tuple[str, ...] = ()) -> HttpServer:
        socket = f"tp-e2e-http-{os.getpid()}-{next(_counter)}"
        process, server = start(socket, token, args)
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


# --- raw requests: protocol errors, limits, the stateless protocol -------------

ACCEPT = "application/json, text/event-stream"
META_2026 = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def raw_client() -> httpx2.Client:
    # trust_env=False: a proxy set in the environment must not carry loopback requests.
    return httpx2.Client(timeout=httpx2.Timeout(REQUEST_TIMEOUT, read=TEST_TIMEOUT), trust_env=False)


def headers(server: HttpServer, **extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.token}", "Content-Type": "application/json", "Accept": ACCEPT} | extra


def message_of(response: httpx2.Response) -> dict[str, Any]:
    """The one JSON-RPC message of an answer, sent as JSON or as an event stream."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        messages = [json.loads(d) for d in data if d]
        assert len(messages) == 1, response.text
        return messages[0]
    return response.json()


def error_of(response: httpx2.Response) -> tuple[Any, int]:
    body = response.json()
    assert response.headers["content-type"] == "application/json", response.headers
    return body["id"], body["error"]["code"]


def initialize(http: httpx2.Client, server: HttpServer) -> httpx2.Response:
    return http.post(server.url, headers=headers(server), content=INITIALIZE)


def address(server: HttpServer) -> tuple[str, int]:
    host_port = server.url.removeprefix("http://").split("/")[0]
    host, port = host_port.rsplit(":", 1)
    return host, int(port)


def test_malformed_bodies_get_json_rpc_errors_over_http(http_server: Any) -> None:
    server = http_server()
    with raw_client() as http:
        h = headers(server)
        for body in [b'{"jsonrpc":', b'{"jsonrpc":"2.0","id":1,"method":"\xff"}', b"[" * 100_000, b'{"a":' * 100_000]:
            response = http.post(server.url, headers=h, content=body)
            assert response.status_code == 400, (body[:20], response.status_code, response.text)
            assert error_of(response) == (None, -32700), response.text
        response = http.post(server.url, headers=h, content=b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":5}')
        assert error_of(response) == (7, -32600), response.text
        call = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "list_sessions", "arguments": []}}
        response = http.post(server.url, headers=h, json=call)
        assert error_of(response) == (9, -32602), response.text
        # The server still serves.
        assert initialize(http, server).status_code == 200


def test_a_repeated_host_or_origin_header_is_refused(http_server: Any) -> None:
    server = http_server()
    for repeated in [
        b"Host: 127.0.0.1\r\nHost: evil.example\r\n",
        b"Host: 127.0.0.1\r\nOrigin: http://localhost:3000\r\nOrigin: https://evil.example\r\n",
    ]:
        with sockets.create_connection(address(server), timeout=REQUEST_TIMEOUT) as conn:
            conn.sendall(
                b"POST /mcp HTTP/1.1\r\n" + repeated + f"Authorization: Bearer {server.token}\r\n"
                f"Content-Type: application/json\r\nAccept: {ACCEPT}\r\nContent-Length: {len(INITIALIZE)}\r\n"
                "Connection: close\r\n\r\n".encode() + INITIALIZE
            )
            status_line = conn.recv(64).split(b"\r\n")[0]
        assert status_line == b"HTTP/1.1 400 Bad Request", (repeated, status_line)


def test_sessions_over_the_cap_are_refused_until_one_ends(http_server: Any) -> None:
    server = http_server(args=("--http-max-sessions", "2"))
    with raw_client() as http:
        first, second = initialize(http, server), initialize(http, server)
        assert first.status_code == second.status_code == 200
        refused = initialize(http, server)
        assert refused.status_code == 503, refused.text
        assert error_of(refused) == (1, -32000), refused.text
        assert "--http-max-sessions" in refused.json()["error"]["message"]
        # Ending a session makes room.
        ended = http.delete(server.url, headers=headers(server, **{"Mcp-Session-Id": first.headers["mcp-session-id"]}))
        assert ended.status_code == 204, ended.text
        assert initialize(http, server).status_code == 200


def test_idle_sessions_expire(http_server: Any) -> None:
    server = http_server(args=("--http-session-idle-s", "1", "--http-max-sessions", "1"))
    with raw_client() as http:
        opened = initialize(http, server)
        session_id = opened.headers["mcp-session-id"]
        time.sleep(2.5)
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        gone = http.post(server.url, headers=headers(server, **{"Mcp-Session-Id": session_id}), json=listing)
        assert gone.status_code == 404, gone.text
        assert initialize(http, server).status_code == 200, "the expired session still counts against the cap"


def test_a_client_slow_to_send_its_headers_is_cut_off(http_server: Any) -> None:
    server = http_server(args=("--http-header-timeout-s", "1"))
    with sockets.create_connection(address(server), timeout=REQUEST_TIMEOUT) as conn:
        conn.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        started = time.monotonic()
        # The server closes the connection (perhaps after a 408): reads end.
        while conn.recv(1024):
            pass
        assert time.monotonic() - started < REQUEST_TIMEOUT


def test_connections_over_the_cap_get_503(http_server: Any) -> None:
    server = http_server(args=("--http-max-connections", "2"))
    held = [sockets.create_connection(address(server), timeout=REQUEST_TIMEOUT) for _ in range(2)]
    try:
        for conn in held:
            conn.sendall(b"POST /mcp HTTP/1.1\r\n")
        # Both are being served (their handlers run) before the third arrives.
        time.sleep(0.3)
        with sockets.create_connection(address(server), timeout=REQUEST_TIMEOUT) as third:
            assert third.recv(64).startswith(b"HTTP/1.1 503"), "a third connection was served"
    finally:
        for conn in held:
            conn.close()

    def served() -> bool:
        return post(server.url, {"Authorization": f"Bearer {server.token}"}) == 200

    deadline = time.monotonic() + REQUEST_TIMEOUT
    while not served():
        assert time.monotonic() < deadline, "no connection served after the others closed"
        time.sleep(0.05)


def test_a_request_id_in_flight_in_a_session_is_refused_not_lost(http_server: Any) -> None:
    server = http_server()
    with raw_client() as http:
        session_id = initialize(http, server).headers["mcp-session-id"]
        h = headers(server, **{"Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-06-18"})
        initialized = http.post(server.url, headers=h, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert initialized.status_code == 202, initialized.text
        wait = {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {"name": "wait_for_channel", "arguments": {"channel": "never", "timeout_s": 2}},
        }
        answers: queue.Queue[httpx2.Response] = queue.Queue()
        threading.Thread(target=lambda: answers.put(http.post(server.url, headers=h, json=wait)), daemon=True).start()
        time.sleep(0.5)
        again = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "list_sessions", "arguments": {}}}
        refused = http.post(server.url, headers=h, json=again)
        assert refused.status_code == 400, refused.text
        assert error_of(refused) == (5, -32600), refused.text
        first = answers.get(timeout=REQUEST_TIMEOUT)
        assert message_of(first)["id"] == 5 and "result" in message_of(first), first.text
        # Answered, the id is free again.
        assert "result" in message_of(http.post(server.url, headers=h, json=again))


def test_protocol_2026_07_28_is_stateless_over_http(http_server: Any) -> None:
    server = http_server()

    def ask(http: httpx2.Client, id: int, method: str, params: dict[str, Any], name: str | None = None) -> httpx2.Response:
        extra = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method} | ({"Mcp-Name": name} if name else {})
        body = {"jsonrpc": "2.0", "id": id, "method": method, "params": params | {"_meta": META_2026}}
        return http.post(server.url, headers=headers(server, **extra), json=body)

    def call(http: httpx2.Client, id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        response = ask(http, id, "tools/call", {"name": tool, "arguments": arguments}, tool)
        assert response.status_code == 200, response.text
        assert "mcp-session-id" not in response.headers, "a stateless request got a session"
        result = message_of(response)["result"]
        assert not result["isError"], result
        return result["structuredContent"]

    # No initialize; each request on its own connection, so nothing carries over
    # but what lives in tmux: panes and their ids.
    with raw_client() as http:
        listed = ask(http, 1, "tools/list", {})
        assert listed.status_code == 200 and "mcp-session-id" not in listed.headers, listed.text
        assert listed.headers["content-type"] == "application/json", listed.headers
        assert "run_command" in {tool["name"] for tool in listed.json()["result"]["tools"]}
        pane = call(http, 2, "create_session", {"name": "stateless"})["pane"]
    with raw_client() as http:
        result = call(http, 1, "run_command", {"pane": pane, "command": "echo $((6*7))", "timeout_s": 10})
        assert result["exit_code"] == 0 and result["output"] == "42", result
    with raw_client() as http:
        assert pane in [p["id"] for p in call(http, 1, "list_panes", {})["panes"]]
        unknown = ask(http, 3, "tools/call", {"name": "no_such_tool", "arguments": {}}, "no_such_tool")
        assert message_of(unknown)["error"]["code"] == -32602, unknown.text


def test_an_unknown_tool_is_a_protocol_error_over_http(http_server: Any) -> None:
    server = http_server()

    async def body() -> None:
        async with session(server) as client:
            with pytest.raises(MCPError) as raised:
                await client.call_tool("no_such_tool", {})
            assert raised.value.code == -32602 and "unknown tool: no_such_tool" in raised.value.message
            # Bad arguments to a real tool stay a tool error the model can read.
            result = await client.call_tool("capture_pane", {"pane": 5})
            assert result.is_error, result

    run(body)


def test_a_long_call_outlives_the_header_timeout(http_server: Any) -> None:
    server = http_server(args=("--http-header-timeout-s", "1"))

    async def body() -> None:
        async with session(server) as client:
            pane = (await call(client, "create_session", {"name": "slow"}))["pane"]
            result = await call(client, "run_command", {"pane": pane, "command": "sleep 2.5; echo done", "timeout_s": 10})
            assert result["output"] == "done", result
            # Idle longer than the timeout: the client reconnects as needed.
            await anyio.sleep(1.5)
            assert pane in [p["id"] for p in (await call(client, "list_panes", {}))["panes"]]

    run(body)
