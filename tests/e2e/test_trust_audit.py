"""The audit log cannot be turned against the server (issue 21, class 5):
a FIFO put at its path from a pane does not hang later calls, a link at the
path is refused at start-up, a file readable by others is narrowed to 0600,
and typed text is fingerprinted with a keyed hash, so a short text (a PIN)
cannot be found by hashing every guess. Over stdio with the official MCP
Python SDK, against a private tmux server per test (the `tp` fixture)."""

from __future__ import annotations

import hashlib
import os
import shlex
import stat
import subprocess
import time
from pathlib import Path
from typing import Any

from conftest import BIN, SERVER_ENV, Client, Termpilot, poll, text_of
from test_audit import lines, run
from test_audit import serve as audit_serve

# A call that takes longer than this after the swap is "hanging" (generous:
# the machine is loaded; a hang is forever).
ANSWER_BOUND = 8.0
AUDIT_META = "termpilot/audit"


def serve(tp: Termpilot, args: list[str]):
    """A connection whose requests fail when not answered within ANSWER_BOUND."""
    return audit_serve(tp, args, read_timeout=ANSWER_BOUND)


async def shell_pane(client: Client, name: str) -> str:
    """A pane running `sh` (what is typed waits in the terminal until it reads)."""
    return (await client.ok("create_session", {"name": name, "command": "sh"}))["pane"]


async def swap_for_fifo(client: Client, pane: str, log: Path, reader: bool) -> None:
    """From the pane, as an agent could: the log is replaced by a FIFO (with
    `cat` reading it when `reader`)."""
    path = shlex.quote(str(log))
    # Renamed into place: the server cannot recreate the file in between.
    command = f"mkfifo {path}.new && mv -f {path}.new {path}"
    if reader:
        command += f" && cat {path}"
    await client.ok("send_keys", {"pane": pane, "text": command})

    async def swapped() -> bool:
        return log.exists() and stat.S_ISFIFO(os.lstat(log).st_mode)

    await poll(swapped, 10.0, "the FIFO at the log's path")


async def timed(client: Client, name: str, arguments: dict[str, Any] | None = None):
    started = time.monotonic()
    result = await client.call(name, arguments)
    elapsed = time.monotonic() - started
    assert elapsed < ANSWER_BOUND, f"{name} took {elapsed:.1f}s after the swap"
    return result


def test_a_fifo_swapped_in_from_a_pane_hangs_nothing_and_is_reported(tp: Termpilot, tmp_path: Path) -> None:
    log = tmp_path / "audit.log"

    async def body() -> None:
        async with serve(tp, ["--audit", str(log)]) as client:
            pane = await shell_pane(client, "fifo")
            await swap_for_fifo(client, pane, log, reader=False)
            # Each of these used to block for ever in open(2) (no reader).
            for _ in range(10):
                result = await timed(client, "list_sessions")
                assert not result.is_error, text_of(result)

            async def reported() -> str | None:
                result = await timed(client, "list_panes")
                return (result.meta or {}).get(AUDIT_META)

            problem = await poll(reported, 10.0, "the audit problem in a result's _meta")
            assert str(log) in problem and "FIFO" in problem, problem

    run(body)
    assert "cannot write the audit log" in tp.log_path.read_text()


def test_a_fifo_with_a_reader_in_a_pane_gets_no_audit_lines(tp: Termpilot, tmp_path: Path) -> None:
    log = tmp_path / "audit.log"

    async def body() -> None:
        async with serve(tp, ["--audit", str(log)]) as client:
            pane = await shell_pane(client, "reader")
            await swap_for_fifo(client, pane, log, reader=True)
            for _ in range(5):
                assert not (await timed(client, "list_panes")).is_error

            async def reported() -> str | None:
                return ((await timed(client, "list_sessions")).meta or {}).get(AUDIT_META)

            await poll(reported, 10.0, "the audit problem in a result's _meta")
            # The pane reading the FIFO never saw a line of the log.
            screen = await client.capture(pane)
            assert '"tool"' not in screen, screen

    run(body)


def test_audit_required_fails_closed_then_recovers(tp: Termpilot, tmp_path: Path) -> None:
    log = tmp_path / "audit.log"

    async def body() -> None:
        async with serve(tp, ["--audit", str(log), "--audit-required"]) as client:
            pane = await shell_pane(client, "required")
            await swap_for_fifo(client, pane, log, reader=False)

            async def refused() -> str | None:
                result = await timed(client, "list_sessions")
                return text_of(result) if result.is_error else None

            message = await poll(refused, 10.0, "a refused call")
            assert "--audit-required" in message and str(log) in message, message
            error = await client.err("send_keys", {"pane": pane, "text": "echo must-not-run"})
            assert "--audit-required" in error
            # The operator removes the FIFO: the next refused call's line
            # makes a fresh log, and calls are admitted again.
            log.unlink()

            async def admitted() -> bool:
                return not (await timed(client, "list_sessions")).is_error

            await poll(admitted, 10.0, "calls admitted again")
            assert "must-not-run" not in await client.capture(pane)

    run(body)
    records = lines(log)
    assert any(r.get("lost", 0) >= 1 for r in records), records
    assert any(r.get("outcome") == "refused" for r in records), records
    assert stat.S_IMODE(os.stat(log).st_mode) == 0o600


def start(tp: Termpilot, log: Path) -> subprocess.CompletedProcess[str]:
    """`serve --audit LOG` with stdin at its end: it starts, then ends."""
    return subprocess.run(
        [BIN, "serve", "-L", tp.socket, "--audit", str(log)],
        env=SERVER_ENV,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=20,
    )


def test_a_symlink_at_the_path_is_refused_at_start_up(tp: Termpilot, tmp_path: Path) -> None:
    target = tmp_path / "profile"
    target.write_text("export KEEP=1\n")
    log = tmp_path / "audit.log"
    log.symlink_to(target)
    done = start(tp, log)
    assert done.returncode != 0
    assert "symbolic link" in done.stderr and str(log) in done.stderr, done.stderr
    assert target.read_text() == "export KEEP=1\n"


def test_a_fifo_at_the_path_is_refused_at_start_up_at_once(tp: Termpilot, tmp_path: Path) -> None:
    log = tmp_path / "audit.log"
    os.mkfifo(log)
    done = start(tp, log)
    assert done.returncode != 0
    assert "FIFO" in done.stderr and str(log) in done.stderr, done.stderr


def test_a_file_readable_by_others_is_narrowed_to_0600(tp: Termpilot, tmp_path: Path) -> None:
    log = tmp_path / "audit.log"
    log.write_text("")
    log.chmod(0o644)

    async def body() -> None:
        async with serve(tp, ["--audit", str(log)]) as client:
            await client.ok("list_sessions")

    run(body)
    assert stat.S_IMODE(os.stat(log).st_mode) == 0o600
    assert "mode is now 0600" in tp.log_path.read_text()
    assert [r["tool"] for r in lines(log)] == ["list_sessions"]


def test_a_pin_is_not_recognisable_by_its_plain_digest(tp: Termpilot, tmp_path: Path) -> None:
    pin = "4821"
    logs = [tmp_path / "one.log", tmp_path / "two.log"]

    async def typed_by(log: Path) -> None:
        async with serve(tp, ["--audit", str(log)]) as client:
            pane = (await client.ok("create_session", {"name": log.stem, "command": "cat"}))["pane"]
            await client.ok("send_keys", {"pane": pane, "text": pin, "enter": False})
            await client.ok("send_keys", {"pane": pane, "text": pin, "enter": False})

    async def body() -> None:
        for log in logs:
            await typed_by(log)

    run(body)
    fingerprints = []
    for log in logs:
        pieces = [r["typed"][0] for r in lines(log) if r["tool"] == "send_keys"]
        assert len(pieces) == 2
        assert "sha256" not in pieces[0], pieces
        # The same text twice in one server's log: the same fingerprint.
        assert pieces[0]["hmac"] == pieces[1]["hmac"]
        fingerprints.append(pieces[0]["hmac"])
    # Not the plain digest anyone could compute for each of 10,000 PINs.
    for guess in range(10_000):
        plain = hashlib.sha256(f"{guess:04d}".encode()).hexdigest()
        assert not any(plain.startswith(f[:12]) for f in fingerprints), guess
    # A key of each server's own: the two servers disagree.
    assert fingerprints[0] != fingerprints[1]
