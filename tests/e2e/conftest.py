"""Shared fixtures for the end-to-end tests of `termpilot serve` over stdio.

Each test gets a private tmux server (socket name `tp-e2e-<pid>-<n>`) and
kills only that server when it ends. The client is the official MCP Python
SDK, so a result that does not match its tool's outputSchema fails the call.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import subprocess
import time
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from jsonschema.validators import validator_for
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from sshd import Sshd, missing_reason

REPO = Path(__file__).resolve().parents[2]


def _default_bin() -> str:
    """The debug binary in cargo's target directory (CARGO_TARGET_DIR or the
    repository's own `target`); scripts/test sets TERMPILOT_BIN exactly."""
    target = os.environ.get("CARGO_TARGET_DIR") or str(REPO / "target")
    return str(Path(target, "debug", "termpilot"))


BIN = os.environ.get("TERMPILOT_BIN") or _default_bin()

# Bounds on every wait. A test as a whole gets TEST_TIMEOUT; one request gets
# REQUEST_TIMEOUT, so a server that stops answering fails fast instead of hanging.
TEST_TIMEOUT = 30.0
REQUEST_TIMEOUT = 10.0
POLL_INTERVAL = 0.05

# Panes get a predictable shell: tmux's default-shell follows SHELL. Tests that
# look for the prompt run `sh -i` with PROMPT as PS1 and ENV empty (no rc file);
# the default shell is a login shell whose /etc/profile may set its own PS1.
PROMPT = "tp-prompt$ "
SHELL_ENV = {"SHELL": "/bin/sh", "TERM": "xterm-256color"}
# The SDK passes the server only HOME, LOGNAME, PATH, SHELL, TERM and USER, so no
# locale. Most tests give a UTF-8 one; test_stdio checks the bare environment too.
UTF8_LOCALE = {"LANG": "C.UTF-8"}
SERVER_ENV = SHELL_ENV | UTF8_LOCALE

CURSOR_RE = re.compile(r"^c1\.\d+\.\d+\.\d+$")
PANE_RE = re.compile(r"^%\d+$")

_counter = itertools.count()


class WarningLog(logging.Handler):
    """Collects warnings the SDK logs (e.g. a result it could not validate)."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def text_of(result: types.CallToolResult) -> str:
    """The text content blocks of a result, joined."""
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


class Client:
    """A connected MCP session plus the tool listing, with checked call helpers."""

    def __init__(self, session: ClientSession, tools: list[types.Tool]) -> None:
        self.session = session
        self.tools = {tool.name: tool for tool in tools}

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> types.CallToolResult:
        return await self.session.call_tool(name, arguments or {}, read_timeout_seconds=REQUEST_TIMEOUT)

    async def ok(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """Calls a tool that must succeed; returns its structuredContent, checked
        against the tool's outputSchema here too (the SDK checks it as well)."""
        result = await self.call(name, arguments)
        assert not result.is_error, f"{name}({arguments!r}) failed: {text_of(result)}"
        assert result.structured_content is not None, f"{name} returned no structuredContent"
        schema = self.tools[name].output_schema
        assert schema is not None, f"{name} has no outputSchema"
        validator = validator_for(schema)(schema)
        errors = [e.message for e in validator.iter_errors(result.structured_content)]
        assert not errors, f"{name} structuredContent does not match its outputSchema: {errors}"
        return result.structured_content

    async def err(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        """Calls a tool that must fail with a user-fixable error; returns the message."""
        result = await self.call(name, arguments)
        message = text_of(result)
        assert result.is_error, f"{name}({arguments!r}) should fail, got {result.structured_content!r}"
        assert message.strip(), f"{name} failed without a message"
        return message

    async def panes(self) -> list[dict[str, Any]]:
        return (await self.ok("list_panes"))["panes"]

    async def pane(self, pane_id: str) -> dict[str, Any] | None:
        return next((p for p in await self.panes() if p["id"] == pane_id), None)

    async def session_names(self) -> list[str]:
        return [s["name"] for s in (await self.ok("list_sessions"))["sessions"]]

    async def capture(self, pane_id: str) -> str:
        return (await self.ok("capture_pane", {"pane": pane_id}))["text"]


async def poll(
    check: Callable[[], Awaitable[Any]], timeout: float, what: str, interval: float = POLL_INTERVAL
) -> Any:
    """Calls `check` until it returns something truthy; fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = await check()
        if last:
            return last
        await anyio.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


class Termpilot:
    """Starts `termpilot serve` against one private tmux server."""

    def __init__(self, socket: str, log_path: Path) -> None:
        self.socket = socket
        self.log_path = log_path
        self.warnings = WarningLog()

    @asynccontextmanager
    async def connect(
        self,
        toolsets: str | None = None,
        env: dict[str, str] | None = None,
        extra_args: list[str] | None = None,
    ):
        args = ["serve", "-L", self.socket, *(extra_args or [])]
        if toolsets is not None:
            args += ["--toolsets", toolsets]
        params = StdioServerParameters(command=BIN, args=args, env=SERVER_ENV if env is None else env)
        with open(self.log_path, "a", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT) as session:
                    await session.initialize()
                    listing = await session.list_tools()
                    yield Client(session, listing.tools)

    def run(
        self,
        body: Callable[[Client], Awaitable[None]],
        toolsets: str | None = None,
        env: dict[str, str] | None = None,
        extra_args: list[str] | None = None,
    ) -> None:
        """Runs `body` against a fresh connection, bounded by TEST_TIMEOUT;
        `extra_args` go to `termpilot serve`."""

        async def main() -> None:
            with anyio.fail_after(TEST_TIMEOUT):
                async with self.connect(toolsets, env, extra_args) as client:
                    await body(client)

        try:
            anyio.run(main)
        except BaseExceptionGroup as group:
            # Task groups wrap a failed assertion; show the assertion itself.
            raise single_leaf(group) from None
        assert not self.warnings.records, [r.getMessage() for r in self.warnings.records]


def single_leaf(group: BaseExceptionGroup) -> BaseException:
    """The one exception inside nested groups, or the group when there are several."""
    error: BaseException = group
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


def kill_server(socket: str) -> None:
    """Kills the tmux server on this socket name only, then removes its socket
    file, which tmux leaves behind."""
    try:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, timeout=5, check=False)
    except subprocess.TimeoutExpired:
        return
    socket_dir = Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"
    (socket_dir / socket).unlink(missing_ok=True)


@pytest.fixture
def tp(tmp_path: Path):
    if not os.access(BIN, os.X_OK):
        pytest.fail(f"termpilot binary not found at {BIN} (build it or set TERMPILOT_BIN)")
    socket = f"tp-e2e-{os.getpid()}-{next(_counter)}"
    server = Termpilot(socket, tmp_path / "termpilot-stderr.log")
    mcp_logger = logging.getLogger("mcp")
    mcp_logger.addHandler(server.warnings)
    try:
        yield server
    finally:
        mcp_logger.removeHandler(server.warnings)
        kill_server(socket)
        if server.log_path.exists() and server.log_path.read_text().strip():
            # Shown by pytest only when the test fails.
            print(f"--- termpilot stderr ({socket}) ---\n{server.log_path.read_text()}")


@pytest.fixture
def sshd():
    """The test's own sshd on 127.0.0.1 (see sshd.py), running, with a client
    configuration whose alias `termpilot-test` reaches it; skipped with the
    reason when openssh-server is not installed. Stopped and removed at the end."""
    reason = missing_reason()
    if reason is not None:
        pytest.skip(reason)
    server = Sshd()
    try:
        server.start()
        yield server
    finally:
        # Shown by pytest only when the test fails.
        print(f"--- sshd log (port {server.port}) ---\n{server.log_text()}")
        server.close()
