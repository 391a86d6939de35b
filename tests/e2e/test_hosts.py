"""Hosts: terminals on other machines, over ssh and exec, through the
official MCP client.

The ssh host is the test's own sshd on loopback (see sshd.py). Its sessions
get a `TMUX_TMPDIR` of the test's own (sshd's `SetEnv`), so the far side's
`tmux -L termpilot` is a server of this test alone, killed at the end. The
`exec:` host runs tmux under another `TMUX_TMPDIR` the same way. The common
tests run once against `local` and once against the ssh host.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from conftest import BIN, REQUEST_TIMEOUT, SERVER_ENV, TEST_TIMEOUT, Client, poll, text_of
from sshd import Sshd, missing_reason

HOST_PANE_RE = re.compile(r"^ssh/%\d+$")
LOCAL_PANE_RE = re.compile(r"^%\d+$")


class Far:
    """A directory standing for another machine's /tmp, whose termpilot tmux
    server is killed (only it) at the end."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="tp-far-"))

    def tmux(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "TMUX_TMPDIR": str(self.dir)}
        return subprocess.run(
            ["tmux", "-L", "termpilot", *args], env=env, capture_output=True, text=True, timeout=10
        )

    def processes(self) -> list[int]:
        """The processes running with this directory as their TMUX_TMPDIR:
        the far server, its clients and its panes' programs, this test's
        alone. Found without asking the server, which may not answer."""
        mark = f"TMUX_TMPDIR={self.dir}".encode()
        found = []
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and mark in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
        return found

    def kill_server(self) -> None:
        """Kills the far server and waits until it, its clients and its
        panes' programs have ended. tmux 3.3a answers `kill-server` before
        its server exits, and a server whose control clients were cut off
        from their ssh connection (sshd stopped under them) may never finish
        exiting, refusing every client meanwhile ("server exited
        unexpectedly"): after a generous bound, what is left is ended by pid."""
        self.tmux("kill-server")
        pids = self.processes()
        if not ended(pids, 10):
            for pid in pids:
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)
            assert ended(pids, 5), f"a process of the far side outlived SIGKILL: {pids}"

    def close(self) -> None:
        try:
            self.kill_server()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def far_sshd():
    """A private sshd whose sessions run tmux under a directory of their own."""
    reason = missing_reason()
    if reason is not None:
        pytest.skip(reason)
    far = Far()
    server = Sshd(set_env={"TMUX_TMPDIR": str(far.dir)})
    try:
        server.start()
        yield server, far
    finally:
        print(f"--- sshd log (port {server.port}) ---\n{server.log_text()}")
        server.close()
        far.close()


def ssh_args(server: Sshd) -> list[str]:
    return ["--host", f"ssh=ssh:{server.alias}", "--ssh-config", str(server.config)]


def qualified(host: str, pane: str) -> bool:
    return bool((HOST_PANE_RE if host == "ssh" else LOCAL_PANE_RE).match(pane))


async def new_pane(client: Client, host: str, name: str) -> dict:
    args: dict = {"name": name}
    if host != "local":
        args["host"] = host
    created = await client.ok("create_session", args)
    assert qualified(host, created["pane"]), created
    return created


@pytest.mark.parametrize("host", ["local", "ssh"])
def test_run_command_capture_and_waits(tp, far_sshd, host):
    server, _ = far_sshd

    async def body(client: Client) -> None:
        created = await new_pane(client, host, "work")
        pane = created["pane"]
        ran = await client.ok("run_command", {"pane": pane, "command": "echo made-$((6*7)); echo via:$SSH_CONNECTION:"})
        assert ran["exit_code"] == 0, ran
        assert "made-42" in ran["output"], ran
        # The ssh host's shell runs under sshd, the local one does not.
        via = re.search(r"via:(.*):", ran["output"]).group(1)
        assert bool(via.strip()) == (host == "ssh"), ran["output"]
        assert ran["pane"] == pane
        if host == "ssh":
            assert ran["cursor"].startswith("ssh/"), ran["cursor"]
        typed = await client.ok("send_keys", {"pane": pane, "text": "echo later-$((2*3))", "enter": True})
        waited = await client.ok(
            "wait_for_text", {"pane": pane, "pattern": "later-6", "since": typed["cursor"], "timeout_s": 10}
        )
        assert waited["outcome"] == "matched", waited
        since = await client.ok("capture_since", {"pane": pane, "cursor": typed["cursor"]})
        assert "later-6" in since["text"], since
        screen = await client.capture(pane)
        assert "made-42" in screen

    tp.run(body, extra_args=ssh_args(server))


@pytest.mark.parametrize("host", ["local", "ssh"])
def test_wait_for_idle(tp, far_sshd, host):
    server, _ = far_sshd

    async def body(client: Client) -> None:
        pane = (await new_pane(client, host, "idle"))["pane"]
        sent = time.monotonic()
        loop = "for i in $(seq 1 12); do echo tick-$i; sleep 0.05; done"
        typed = await client.ok("send_keys", {"pane": pane, "text": loop, "enter": True})
        # Once the loop prints, it never pauses for 0.3 s until it is done.
        ticking = await client.ok(
            "wait_for_text", {"pane": pane, "pattern": "tick-1", "since": typed["cursor"], "timeout_s": 10}
        )
        assert ticking["outcome"] == "matched", ticking
        idle = await client.ok("wait_for_idle", {"pane": pane, "quiet_ms": 300, "timeout_s": 10})
        assert idle["outcome"] == "idle" and idle["pane"] == pane, idle
        assert idle["cursor"].startswith("ssh/") == (host == "ssh"), idle
        # The last tick comes at least 0.55 s after the loop starts, then 0.3 s of quiet.
        assert time.monotonic() - sent >= 0.85, idle
        assert "tick-12" in await client.capture(pane), "idle reported while the loop was still printing"

    tp.run(body, extra_args=ssh_args(server))


@pytest.mark.parametrize("host", ["local", "ssh"])
def test_a_command_picked_up_later_keeps_its_host(tp, far_sshd, host):
    server, _ = far_sshd

    async def body(client: Client) -> None:
        pane = (await new_pane(client, host, "slow"))["pane"]
        ran = await client.ok("run_command", {"pane": pane, "command": "sleep 1; echo finished", "timeout_s": 0.2})
        assert ran["timed_out"], ran
        assert ran["command_id"].startswith("ssh/") == (host == "ssh"), ran
        done = await client.ok("wait_for_command", {"command_id": ran["command_id"], "timeout_s": 10})
        assert done["exit_code"] == 0, done
        assert "finished" in done["output"], done

    tp.run(body, extra_args=ssh_args(server))


@pytest.mark.parametrize("host", ["local", "ssh"])
def test_batches(tp, far_sshd, host):
    server, _ = far_sshd

    async def body(client: Client) -> None:
        pane = (await new_pane(client, host, "batch"))["pane"]
        result = await client.ok(
            "run_batch",
            {
                "steps": [
                    {"op": "send_keys", "pane": pane, "text": "echo step-$((3*3))", "enter": True},
                    {"op": "wait_for_text", "pane": pane, "pattern": "step-9", "since": "$prev", "timeout_s": 10},
                    {"op": "capture_since", "pane": pane, "cursor": "$0"},
                ]
            },
        )
        assert result["succeeded"] == 3, result
        assert result["steps"][1]["result"]["outcome"] == "matched", result
        assert "step-9" in result["steps"][2]["result"]["text"], result

    tp.run(body, extra_args=ssh_args(server))


@pytest.mark.parametrize("host", ["local", "ssh"])
def test_create_list_and_kill(tp, far_sshd, host):
    server, far = far_sshd

    async def body(client: Client) -> None:
        created = await new_pane(client, host, "doomed")
        listed = await client.ok("list_sessions", {"host": host})
        names = [s["name"] for s in listed["sessions"]]
        assert "doomed" in names, listed
        assert all(s["host"] == host for s in listed["sessions"]), listed
        panes = (await client.ok("list_panes", {"host": host}))["panes"]
        mine = [p for p in panes if p["id"] == created["pane"]]
        assert mine and mine[0]["host"] == host, panes
        # Without `host`, every host is listed.
        everywhere = await client.ok("list_sessions")
        hosts = {s["host"] for s in everywhere["sessions"]}
        assert {"local", "ssh"} <= hosts, everywhere
        target = "doomed" if host == "local" else "ssh/doomed"
        await client.ok("kill_session", {"session": target})
        after = [s["name"] for s in (await client.ok("list_sessions", {"host": host}))["sessions"]]
        assert "doomed" not in after, after
        if host == "ssh":
            # It was the far side's server that lost the session.
            remaining = far.tmux("list-sessions", "-F", "#{session_name}").stdout.split()
            assert "doomed" not in remaining and remaining, remaining

    tp.run(body, toolsets="all", extra_args=ssh_args(server))


def test_sshd_stopping_mid_wait_ends_it_with_host_lost(tp, far_sshd):
    server, _ = far_sshd

    async def body(client: Client) -> None:
        pane = (await new_pane(client, "ssh", "lost"))["pane"]
        outcome: dict = {}

        async def wait() -> None:
            outcome.update(
                await client.ok("wait_for_text", {"pane": pane, "pattern": "never-printed", "timeout_s": 25})
            )

        async with anyio.create_task_group() as group:
            group.start_soon(wait)
            await anyio.sleep(0.5)
            started = time.monotonic()
            server.stop()
        assert outcome["outcome"] == "host_lost", outcome
        assert time.monotonic() - started < 10
        server.start()
        # The next call on that host connects again; the pane is still there.
        panes = (await client.ok("list_panes", {"host": "ssh"}))["panes"]
        assert pane in [p["id"] for p in panes], panes

    tp.run(body, extra_args=ssh_args(server))


async def run_cut_by_a_stop(client: Client, server, pane: str, command: str) -> tuple[dict, float]:
    """Runs `command` in `pane` on the ssh host and stops its sshd a second
    later: the run_command result, which says the host was lost and has no
    exit code, and how many seconds after the stop it came."""
    ran: dict = {}

    async def run() -> None:
        ran.update(await client.ok("run_command", {"pane": pane, "command": command, "timeout_s": 25}))

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        await anyio.sleep(1)
        stopped = time.monotonic()
        server.stop()
    assert ran["host_lost"] and ran["exit_code"] is None, ran
    return ran, time.monotonic() - stopped


def test_sshd_stopping_mid_run_command_ends_it_with_host_lost(tp, far_sshd):
    server, _ = far_sshd

    async def body(client: Client) -> None:
        pane = (await new_pane(client, "ssh", "lost-run"))["pane"]
        ran, took = await run_cut_by_a_stop(client, server, pane, "sleep 6; echo finished-$((6*7))")
        assert not ran["timed_out"], ran
        assert ran["command_id"].startswith("ssh/"), ran
        assert took < 5
        server.start()
        # The id survives: the next call connects again and picks the command up.
        done = await client.ok("wait_for_command", {"command_id": ran["command_id"], "timeout_s": 15})
        assert done["exit_code"] == 0 and not done["host_lost"], done
        assert "finished-42" in done["output"], done

    tp.run(body, extra_args=ssh_args(server))


# Without input_settle_ms the wait would take the shell idle at its prompt
# for a program awaiting input; with 0 it would wait for an end marker that
# never comes.
@pytest.mark.parametrize("settle", [None, 0])
def test_a_command_that_ends_while_sshd_is_stopped_ends_unseen_after_the_reconnect(tp, far_sshd, settle):
    server, _ = far_sshd

    async def body(client: Client) -> None:
        pane = (await new_pane(client, "ssh", "unseen"))["pane"]
        ran, _ = await run_cut_by_a_stop(client, server, pane, "sleep 2; echo finished-$((6*7))")
        # The command ends while nothing reads the pane: its end marker goes
        # with the output printed meanwhile, which tmux never sends again.
        await anyio.sleep(2.5)
        server.start()
        started = time.monotonic()
        arguments = {"command_id": ran["command_id"], "timeout_s": 8}
        if settle is not None:
            arguments["input_settle_ms"] = settle
        result = await client.call("wait_for_command", arguments)
        took = time.monotonic() - started
        done, text = result.structured_content, text_of(result)
        assert not result.is_error, text
        assert took < 5, f"found ended at once, not at the timeout ({took:.1f} s): {done}"
        assert done["ended_unseen"] and done["exit_code"] is None, done
        assert not (done["host_lost"] or done["timed_out"] or done["interrupted"]), done
        assert done["command_id"] is None, done
        assert "connection to host ssh was down" in text and "capture_pane" in text, text
        # The screen still shows what the journal never got.
        assert "finished-42" in await client.capture(pane)
        # The pane takes the next command as usual.
        again = await client.ok("run_command", {"pane": pane, "command": "echo again-$((2*3))"})
        assert again["exit_code"] == 0 and "again-6" in again["output"], again

    tp.run(body, extra_args=ssh_args(server))


def test_sshd_stopping_mid_channel_wait_ends_it_with_host_lost(tp, far_sshd):
    server, _ = far_sshd

    async def body(client: Client) -> None:
        await new_pane(client, "ssh", "lost-channel")
        outcome: dict = {}

        async def wait() -> None:
            arguments = {"channel": "tp-never-signalled", "host": "ssh", "timeout_s": 25}
            outcome.update(await client.ok("wait_for_channel", arguments))

        async with anyio.create_task_group() as group:
            group.start_soon(wait)
            await anyio.sleep(0.5)
            started = time.monotonic()
            server.stop()
        assert outcome["outcome"] == "host_lost", outcome
        assert time.monotonic() - started < 5

    tp.run(body, extra_args=ssh_args(server))


def test_cursors_from_before_a_far_server_restart_are_refused(tp, far_sshd):
    server, far = far_sshd

    async def body(client: Client) -> None:
        pane = (await new_pane(client, "ssh", "first"))["pane"]
        cursor = (await client.ok("send_keys", {"pane": pane, "text": "echo one", "enter": True}))["cursor"]
        # Only once the old server is gone does the next call start another.
        await anyio.to_thread.run_sync(far.kill_server)
        again = (await new_pane(client, "ssh", "second"))["pane"]
        message = await client.err("capture_since", {"pane": again, "cursor": cursor})
        assert "cursor" in message.lower(), message

    tp.run(body, extra_args=ssh_args(server))


def test_an_unreachable_host_fails_its_calls_only(tp, tmp_path):
    config = tmp_path / "ssh_config"
    # Nothing listens on port 1 of the loopback address.
    config.write_text("Host nowhere\n  HostName 127.0.0.1\n  Port 1\n  UserKnownHostsFile /dev/null\n")
    args = ["--host", "gone=ssh:nowhere", "--host", "nxdomain=ssh:no-such-host.invalid"]
    args += ["--ssh-config", str(config), "--host-timeout-s", "3"]

    async def body(client: Client) -> None:
        started = time.monotonic()
        message = await client.err("create_session", {"host": "gone", "name": "x"})
        assert "gone" in message and "refused" in message.lower(), message
        assert time.monotonic() - started < 8
        # A name ssh cannot resolve: ssh's own message.
        message = await client.err("create_session", {"host": "nxdomain"})
        assert "nxdomain" in message and "resolve" in message.lower(), message
        listed = await client.ok("list_sessions")
        assert [s for s in listed["sessions"] if s["host"] == "local"], listed
        unreachable = {u["host"]: u["error"] for u in listed["unreachable"]}
        assert "gone" in unreachable and "refused" in unreachable["gone"].lower(), listed
        assert "nxdomain" in unreachable, listed
        unknown = await client.err("create_session", {"host": "elsewhere"})
        assert "elsewhere" in unknown and "gone" in unknown, unknown
        await client.ok("list_panes", {"host": "local"})

    tp.run(body, extra_args=args)


def test_a_host_that_never_answers_fails_within_its_timeout(tp):
    # The exec prefix starts, then never runs tmux: only termpilot's bound on
    # the whole connection ends it.
    args = ["--host", "mute=exec:sh -c 'exec sleep 30' sh", "--host-timeout-s", "2"]

    async def body(client: Client) -> None:
        started = time.monotonic()
        message = await client.err("create_session", {"host": "mute"})
        assert "mute" in message and "no answer within 2 s" in message, message
        assert time.monotonic() - started < 3.5

    tp.run(body, extra_args=args)


def test_a_mistyped_host_is_named_not_read_as_local(tp):
    # A host that is never used: only its name matters here.
    args = ["--host", "box=exec:false"]

    async def body(client: Client) -> None:
        # A local session may have a slash in its name; its targets stay local.
        pane = (await client.ok("create_session", {"name": "typo/work"}))["pane"]
        assert LOCAL_PANE_RE.match(pane), pane
        screen = await client.ok("capture_pane", {"pane": "typo/work:0.0"})
        assert screen["pane"] == pane, screen
        for tool, arguments in [
            ("capture_pane", {"pane": f"typo/{pane}"}),
            ("capture_pane", {"pane": "bxo/work:0.0"}),
            ("list_panes", {"window": "bxo/work:0"}),
            ("list_panes", {"session": "bxo/$0"}),
            ("send_keys_batch", {"operations": [{"pane": f"bxo/{pane}", "text": "x"}]}),
        ]:
            message = await client.err(tool, arguments)
            mistyped = "typo" if "typo" in str(arguments) else "bxo"
            assert f"host '{mistyped}'" in message and "local, box" in message, (tool, message)

    tp.run(body, extra_args=args)


def test_listings_of_every_host_remember_an_unreachable_one_for_a_while(tp, tmp_path):
    # A host whose ssh hangs until its timeout: a proxy command that never answers.
    config = tmp_path / "ssh_config"
    config.write_text("Host stuck\n  ProxyCommand sleep 30\n")
    args = ["--host", "stuck=ssh:stuck", "--ssh-config", str(config), "--host-timeout-s", "2"]

    async def body(client: Client) -> None:
        async def unreachable(tool: str, arguments: dict) -> tuple[str, float]:
            """Why the listing says `stuck` is unreachable, and how long it took."""
            started = time.monotonic()
            listed = await client.ok(tool, arguments)
            errors = {u["host"]: u["error"] for u in listed["unreachable"]}
            assert "stuck" in errors, listed
            return errors["stuck"], time.monotonic() - started

        first, took = await unreachable("list_sessions", {})
        assert took > 0.8, (first, took)
        # Listing every host again does not wait on it again...
        again, took = await unreachable("list_panes", {})
        assert took < 0.5, (again, took)
        assert again.startswith(first) and "tries again" in again, (first, again)
        # ...but a call naming the host tries at once.
        named, took = await unreachable("list_sessions", {"host": "stuck"})
        assert took > 0.8 and "tries again" not in named, (named, took)

    tp.run(body, extra_args=args)


def test_the_scope_and_approvals_hold_on_a_host(tp):
    far = Far()
    # A session on the host that the operator's scope leaves out.
    far.tmux("-f", "/dev/null", "new-session", "-d", "-s", "private", "cat")
    hidden = far.tmux("display-message", "-p", "-t", "private:", "#{pane_id}").stdout.strip()
    assert hidden.startswith("%"), hidden
    args = ["--host", f"box=exec:env TMUX_TMPDIR={far.dir}", "--allow-session", "agent-*"]
    args += ["--confirm", r"rm\s+-rf"]

    async def body(client: Client) -> None:
        message = await client.err("create_session", {"host": "box", "name": "mine"})
        assert "agent-*" in message, message
        pane = (await client.ok("create_session", {"host": "box", "name": "agent-1", "command": "cat"}))["pane"]
        listed = (await client.ok("list_sessions", {"host": "box"}))["sessions"]
        assert [(s["host"], s["name"]) for s in listed] == [("box", "agent-1")], listed
        for target in (f"box/{hidden}", "box/private:0.0"):
            message = await client.err("send_keys", {"pane": target, "text": "leak"})
            assert "not found" in message, message
        # This client cannot answer an approval: text that needs one is refused.
        message = await client.err("send_keys", {"pane": pane, "text": "rm -rf ./nothing-here"})
        assert "elicitation" in message, message
        await client.ok("send_keys", {"pane": pane, "text": "fine", "enter": False})

    try:
        tp.run(body, toolsets="all", extra_args=args)
        screen = far.tmux("capture-pane", "-p", "-t", hidden).stdout
        assert "leak" not in screen, screen
    finally:
        far.close()


def test_an_exec_host(tp):
    far = Far()
    args = ["--host", f"box=exec:env TMUX_TMPDIR={far.dir}"]

    async def body(client: Client) -> None:
        created = await client.ok("create_session", {"host": "box", "name": "inside"})
        assert re.match(r"^box/%\d+$", created["pane"]), created
        ran = await client.ok("run_command", {"pane": created["pane"], "command": "echo $TMUX_TMPDIR"})
        assert ran["output"].strip() == str(far.dir), ran
        names = far.tmux("list-sessions", "-F", "#{session_name}").stdout.split()
        assert "inside" in names, names

    try:
        tp.run(body, extra_args=args)
    finally:
        far.close()


def test_start_up_never_waits_on_a_host(tp, tmp_path):
    # A host whose ssh would hang until its timeout: a proxy command that never answers.
    config = tmp_path / "ssh_config"
    config.write_text("Host stuck\n  ProxyCommand sleep 30\n")
    args = ["serve", "-L", tp.socket, "--host", "stuck=ssh:stuck", "--ssh-config", str(config)]
    args += ["--host-timeout-s", "5"]
    params = StdioServerParameters(command=BIN, args=args, env=SERVER_ENV)

    async def timed(what: Awaitable[Any]) -> tuple[Any, float]:
        """What `what` gives, and how many seconds it took."""
        started = time.monotonic()
        done = await what
        return done, time.monotonic() - started

    async def main() -> None:
        with anyio.fail_after(TEST_TIMEOUT), open(tp.log_path, "a", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT) as session:
                    # Waiting on the host would take its 5 s; the local server
                    # starts within these bounds.
                    _, took = await timed(session.initialize())
                    assert took < 3, f"initialize took {took:.2f} s"
                    listing, took = await timed(session.list_tools())
                    assert took < 1, f"tools/list took {took:.2f} s"
                    client = Client(session, listing.tools)
                    _, took = await timed(client.ok("list_panes", {"host": "local"}))
                    assert took < 1, f"a local call took {took:.2f} s"
                    message, took = await timed(client.err("create_session", {"host": "stuck"}))
                    assert "stuck" in message, message
                    assert took < 5.5, f"the host failed after {took:.2f} s"

    anyio.run(main)


def test_a_batch_stays_on_one_host(tp, far_sshd):
    server, _ = far_sshd

    async def body(client: Client) -> None:
        far_pane = (await new_pane(client, "ssh", "far"))["pane"]
        near_pane = (await new_pane(client, "local", "near"))["pane"]
        near_cursor = (await client.ok("send_keys", {"pane": near_pane, "text": "echo near", "enter": True}))["cursor"]
        mixed = await client.err(
            "run_batch",
            {"steps": [{"op": "capture_pane", "pane": far_pane}, {"op": "capture_pane", "pane": near_pane}]},
        )
        assert "one host" in mixed, mixed
        # A local cursor in a batch on the ssh host is refused for its step.
        result = await client.ok(
            "run_batch", {"steps": [{"op": "capture_since", "pane": far_pane, "cursor": near_cursor}]}
        )
        assert result["failed"] == 1, result
        assert "host" in result["steps"][0]["error"], result

    tp.run(body, extra_args=ssh_args(server))


def test_channels_belong_to_their_host(tp, far_sshd):
    server, _ = far_sshd

    async def body(client: Client) -> None:
        sent = await client.ok("signal_channel", {"channel": "tp-far-done", "host": "ssh"})
        assert sent["outcome"] == "sent", sent
        # The local server never saw that signal.
        near = await client.ok("wait_for_channel", {"channel": "tp-far-done", "timeout_s": 0.5})
        assert near["outcome"] == "timeout", near
        far = await client.ok("wait_for_channel", {"channel": "tp-far-done", "host": "ssh", "timeout_s": 10})
        assert far["outcome"] == "signalled", far

    tp.run(body, extra_args=ssh_args(server))


@pytest.mark.parametrize("host", ["local", "ssh"])
def test_progress_names_the_pane_with_its_host(tp, far_sshd, host):
    server, _ = far_sshd

    async def body(client: Client) -> None:
        pane = (await new_pane(client, host, "progress"))["pane"]
        messages: list[str] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            messages.append(message or "")

        result = await client.session.call_tool(
            "run_command",
            {"pane": pane, "command": "sleep 2.5; echo done", "timeout_s": 20},
            read_timeout_seconds=30,
            progress_callback=on_progress,
        )
        assert not result.is_error, text_of(result)
        assert result.structured_content["exit_code"] == 0, result.structured_content
        # Progress goes out every second; notifications may trail the response.
        async def reported() -> bool:
            return bool(messages)

        await poll(reported, 5.0, "a progress message")
        assert all(f"running a command in {pane}" in m for m in messages), messages

    tp.run(body, extra_args=ssh_args(server))


def alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def ended(pids: list[int], bound: float) -> bool:
    """Whether all of `pids` end within `bound` seconds."""
    deadline = time.monotonic() + bound
    while any(alive(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_the_ssh_master_ends_with_serve(tp, far_sshd):
    server, _ = far_sshd
    # serve's temporary directory, where its ssh sockets' directory goes: a
    # short path, as a socket's must be.
    serve_tmp = Path(tempfile.mkdtemp(prefix="tp-m-"))
    masters: list[int] = []

    async def body(client: Client) -> None:
        pane = (await new_pane(client, "ssh", "master"))["pane"]
        ran = await client.ok("run_command", {"pane": pane, "command": "echo up"})
        assert ran["exit_code"] == 0, ran
        sockets = list(serve_tmp.glob("termpilot-ssh-*/*"))
        assert sockets, "the master listens in serve's directory"
        for socket in sockets:
            check = subprocess.run(
                ["ssh", "-F", str(server.config), "-o", f"ControlPath={socket}", "-O", "check", server.alias],
                capture_output=True,
                text=True,
                timeout=10,
            )
            found = re.search(r"pid=(\d+)", check.stderr)
            assert found, check.stderr
            masters.append(int(found.group(1)))

    try:
        tp.run(body, env={**SERVER_ENV, "TMPDIR": str(serve_tmp)}, extra_args=ssh_args(server))
        assert masters
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(alive(pid) for pid in masters):
            time.sleep(0.05)
        assert not [pid for pid in masters if alive(pid)], "a master outlived serve"
        assert not list(serve_tmp.glob("termpilot-ssh-*")), "the sockets' directory is removed"
    finally:
        # A master that outlived serve (the test failing) ends here, by its pid.
        for pid in masters:
            if alive(pid):
                os.kill(pid, signal.SIGTERM)
        shutil.rmtree(serve_tmp, ignore_errors=True)


# Prompts that are not drawn again as the same text: (shell, the line that
# sets the prompt). zsh's right side is spaced out to the pane's edge and
# shows a clock; bash's clock moves on; a prompt wider than the pane wraps,
# leaving its tail on the cursor's line.
PROMPTS = {
    "zsh-rprompt": ("zsh -f", "PROMPT='z%# '; RPROMPT='[%*] right'"),
    "bash-clock": ("bash --norc --noprofile", r"PS1='[\t] \$ '"),
    "bash-wrapped": ("bash --norc --noprofile", "PS1=\"$(printf 'w%.0s' $(seq 300))-end\\$ \""),
}


@pytest.mark.parametrize("prompt", sorted(PROMPTS))
def test_a_command_ends_unseen_under_a_prompt_drawn_anew(tp, far_sshd, prompt):
    server, _ = far_sshd
    shell, setting = PROMPTS[prompt]
    if shutil.which(shell.split()[0]) is None:
        pytest.skip(f"{shell.split()[0]} is not installed")

    async def body(client: Client) -> None:
        created = await client.ok("create_session", {"host": "ssh", "name": "drawn-anew", "command": shell})
        pane = created["pane"]
        ran = await client.ok("run_command", {"pane": pane, "command": setting})
        assert ran["exit_code"] == 0, ran
        ran, _ = await run_cut_by_a_stop(client, server, pane, "sleep 2; echo finished-$((6*7))")
        await anyio.sleep(2.5)
        server.start()
        started = time.monotonic()
        done = await client.ok("wait_for_command", {"command_id": ran["command_id"], "timeout_s": 8})
        took = time.monotonic() - started
        assert took < 5, f"found ended at once, not at the timeout ({took:.1f} s): {done}"
        assert done["ended_unseen"] and done["exit_code"] is None, done
        after = await client.ok("run_command", {"pane": pane, "command": "echo after"})
        assert after["exit_code"] == 0 and after["output"] == "after", after

    tp.run(body, extra_args=ssh_args(server))
