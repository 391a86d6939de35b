"""End-to-end tests of the audit log (`termpilot serve --audit PATH`, issue 16),
over stdio with the official MCP Python SDK, against a private tmux server per
test (the `tp` fixture)."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from conftest import BIN, SERVER_ENV, TEST_TIMEOUT, Client, Termpilot, poll, single_leaf, text_of
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

TIME_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
SECRET = "audit-payload-words"


@asynccontextmanager
async def serve(tp: Termpilot, args: list[str], read_timeout: float = TEST_TIMEOUT, **session: Any):
    """A connection to `termpilot serve -L <socket> ARGS`; a request not
    answered within `read_timeout` seconds fails."""
    params = StdioServerParameters(command=BIN, args=["serve", "-L", tp.socket, *args], env=SERVER_ENV)
    with open(tp.log_path, "a", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=read_timeout, **session) as s:
                await s.initialize()
                yield Client(s, (await s.list_tools()).tools)


def run(body) -> None:
    async def main() -> None:
        with anyio.fail_after(TEST_TIMEOUT * 2):
            await body()

    try:
        anyio.run(main)
    except BaseExceptionGroup as group:
        raise single_leaf(group) from None


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def written(path: Path, count: int) -> bool:
    """Whether the log has `count` lines yet (a queue writes them, soon after
    their calls return)."""
    return len(lines(path)) >= count


def test_every_call_of_fifty_concurrent_ones_gets_a_line_without_payload(tp: Termpilot, tmp_path: Path) -> None:
    log = tmp_path / "audit.log"

    async def body() -> None:
        async with serve(tp, ["--audit", str(log)]) as client:
            pane = (await client.ok("create_session", {"name": "audited", "command": "cat"}))["pane"]
            calls: list[tuple[str, dict[str, Any], str]] = []
            for i in range(50):
                match i % 5:
                    case 0:
                        calls.append(("send_keys", {"pane": pane, "text": f"{SECRET}-{i}"}, "ok"))
                    case 1:
                        calls.append(("capture_pane", {"pane": pane}, "ok"))
                    case 2:
                        calls.append(("wait_for_idle", {"pane": pane, "quiet_ms": 50, "timeout_s": 5}, "idle"))
                    case 3:
                        calls.append(("capture_pane", {"pane": "%999"}, "error"))
                    case 4:
                        calls.append(("paste_text", {"pane": pane, "text": f"{SECRET}-{i}"}, "ok"))
            errors: list[str] = []

            async def one(name: str, arguments: dict[str, Any], expected: str) -> None:
                result = await client.call(name, arguments)
                if result.is_error != (expected == "error"):
                    errors.append(f"{name}: {text_of(result)}")

            async with anyio.create_task_group() as group:
                for name, arguments, expected in calls:
                    group.start_soon(one, name, arguments, expected)
            assert not errors, errors

            # Lines are written by a queue no call waits for: soon after.
            await poll(lambda: written(log, 51), 10, "51 audit lines")
            records = lines(log)
            assert len(records) == 51, len(records)
            assert records[0]["tool"] == "create_session"
            assert pane in records[0]["panes"]
            want = sorted((name, expected) for name, _, expected in calls)
            got = sorted((r["tool"], r["outcome"]) for r in records[1:])
            assert got == want
            text = log.read_text()
            assert SECRET not in text
            for record in records:
                assert TIME_RE.match(record["time"]), record
                assert record["transport"] == "stdio"
                assert record["client"]["name"] == "mcp"
                assert isinstance(record["duration_ms"], int)
                assert record["approval"] == {"asked": False}
            typed = [r for r in records if r["tool"] in ("send_keys", "paste_text")]
            assert len(typed) == 20
            for record in typed:
                assert record["panes"] == [pane]
                (piece,) = record["typed"]
                assert set(piece) == {"pane", "bytes", "hmac"}
                assert re.fullmatch(r"[0-9a-f]{16}", piece["hmac"]), piece
                assert piece["bytes"] in (len(f"{SECRET}-{i}") + end for i in range(50) for end in (0, 1)), piece
            # A keyed fingerprint: distinct texts, distinct fingerprints.
            assert len({r["typed"][0]["hmac"] for r in typed}) == 20

    run(body)
    assert stat.S_IMODE(os.stat(log).st_mode) == 0o600


def test_payloads_only_with_the_flag(tp: Termpilot, tmp_path: Path) -> None:
    log = tmp_path / "audit.log"

    async def body() -> None:
        async with serve(tp, ["--audit", str(log), "--audit-payloads"]) as client:
            pane = (await client.ok("create_session", {"name": "p", "command": "cat"}))["pane"]
            await client.ok("send_keys", {"pane": pane, "text": SECRET})

    run(body)
    record = lines(log)[-1]
    assert record["typed"][0]["payload"] == SECRET + "\n"


def test_a_log_moved_away_is_reopened(tp: Termpilot, tmp_path: Path) -> None:
    log = tmp_path / "audit.log"
    rotated = tmp_path / "audit.log.1"

    async def body() -> None:
        async with serve(tp, ["--audit", str(log)]) as client:
            await client.ok("list_sessions")
            await poll(lambda: written(log, 1), 10, "the first line")
            log.rename(rotated)
            await client.ok("list_panes")

    run(body)
    assert [r["tool"] for r in lines(rotated)] == ["list_sessions"]
    assert [r["tool"] for r in lines(log)] == ["list_panes"]


def test_an_unwritable_path_fails_start_up(tp: Termpilot, tmp_path: Path) -> None:
    path = tmp_path / "missing-dir" / "audit.log"
    done = subprocess.run(
        [BIN, "serve", "-L", tp.socket, "--audit", str(path)],
        env=SERVER_ENV,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert done.returncode != 0
    assert "audit log" in done.stderr and str(path) in done.stderr, done.stderr
