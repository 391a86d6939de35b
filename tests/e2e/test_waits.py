"""End-to-end tests of waiting and command execution (issue 3): wait_for_text,
wait_for_idle, wait_for_channel / signal_channel, run_command and
wait_for_command, over stdio with the official MCP Python SDK.

Panes run bash without rc files or a history file (the tmux config of the
crate tests), so prompts and timings do not depend on the machine. Apart
from the echo test, which does it on purpose, typed command lines never
contain the text a test waits for literally (`MARK''ER`, `$((40+2))`), so a
wait that wrongly matched the terminal's echo of the input could not pass by
accident.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from conftest import (
    BIN,
    REQUEST_TIMEOUT,
    SERVER_ENV,
    Client,
    Termpilot,
    poll,
    single_leaf,
    text_of,
)
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

TMUX_CONFIG = str(Path(__file__).resolve().parents[2] / "crates/tmux/tests/support/tmux.conf")
BASH_ENV = SERVER_ENV | {"SHELL": "/bin/bash"}
PROMPT = "tp-prompt$ "
# (arrival time, progress token) of one progress notification.
Progress = tuple[float, Any]
# Whole-test bound; the 100,000-line trials get a larger one.
TEST_LIMIT = 30.0


class WaitClient(Client):
    """A Client whose requests may last as long as the wait they ask for, and
    which records every progress notification the server sends (with its
    arrival time), including those for requests the client gave up on."""

    def __init__(self, session: ClientSession, tools: list[types.Tool], progress: list[Progress]) -> None:
        super().__init__(session, tools)
        self.progress = progress

    async def call(self, name: str, arguments: dict[str, Any] | None = None):
        arguments = arguments or {}
        # A wait of timeout_s seconds legitimately takes that long to answer.
        read_timeout = REQUEST_TIMEOUT + float(arguments.get("timeout_s") or 0)
        return await self.session.call_tool(name, arguments, read_timeout_seconds=read_timeout)


class Server:
    """`termpilot serve` with the test tmux config on the `tp` fixture's private
    socket (whose teardown kills that tmux server and shows the stderr log)."""

    def __init__(self, tp: Termpilot) -> None:
        self.tp = tp
        self.socket = tp.socket

    def tmux(self, *args: str) -> str:
        """Runs one tmux command against this test's server only."""
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=5, check=True
        )
        return done.stdout

    @asynccontextmanager
    async def connect(self, toolsets: str | None = None):
        args = ["serve", "-L", self.socket, "--tmux-config", TMUX_CONFIG]
        if toolsets is not None:
            args += ["--toolsets", toolsets]
        params = StdioServerParameters(command=BIN, args=args, env=BASH_ENV)
        progress: list[Progress] = []

        async def record(message: Any) -> None:
            if isinstance(message, types.ProgressNotification):
                progress.append((time.monotonic(), message.params.progress_token))

        with open(self.tp.log_path, "a", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(
                    read, write, read_timeout_seconds=REQUEST_TIMEOUT, message_handler=record
                ) as session:
                    await session.initialize()
                    listing = await session.list_tools()
                    yield WaitClient(session, listing.tools, progress)

    def run(
        self,
        body: Callable[[WaitClient], Awaitable[None]],
        toolsets: str | None = None,
        limit: float = TEST_LIMIT,
    ) -> None:
        """Runs `body` against a fresh connection, bounded by `limit` seconds."""

        async def main() -> None:
            with anyio.fail_after(limit):
                async with self.connect(toolsets) as client:
                    await body(client)

        try:
            anyio.run(main)
        except BaseExceptionGroup as group:
            raise single_leaf(group) from None
        assert not self.tp.warnings.records, [r.getMessage() for r in self.tp.warnings.records]


@pytest.fixture
def server(tp: Termpilot) -> Server:
    return Server(tp)


# --- helpers -----------------------------------------------------------------


async def bash_pane(client: Client, name: str) -> str:
    """Creates a session running bash with a known prompt and waits for it."""
    pane = (await client.ok("create_session", {"name": name, "env": {"PS1": PROMPT}}))["pane"]
    await at_prompt(client, pane)
    return pane


async def at_prompt(client: Client, pane: str) -> None:
    """Waits until the pane's shell shows its prompt (again)."""

    async def prompted() -> bool:
        return (await client.capture(pane)).rstrip().endswith(PROMPT.rstrip())

    await poll(prompted, 5.0, f"the prompt back in {pane}")


async def run(client: Client, pane: str, command: str) -> dict[str, Any]:
    """run_command once the shell is back at its prompt. Waiting first is needed
    only because of the bug test_back_to_back_run_commands_all_succeed records:
    run_command returns while the shell still runs the rest of the line."""
    await at_prompt(client, pane)
    return await client.ok("run_command", {"pane": pane, "command": command, "timeout_s": 10})


async def send(client: Client, pane: str, text: str) -> str:
    """Types a command line and returns the cursor from before it."""
    return (await client.ok("send_keys", {"pane": pane, "text": text}))["cursor"]


async def wait_text(client: Client, pane: str, pattern: Any, **options: Any) -> dict[str, Any]:
    return await client.ok("wait_for_text", {"pane": pane, "pattern": pattern, **options})


async def after(delay: float, action: Callable[[], Awaitable[Any]]) -> None:
    await anyio.sleep(delay)
    await action()


# --- 1. nothing that scrolled past is missed ------------------------------------

SCROLL_TRIALS = 10
SCROLL_LINES = 100_000


def test_marker_amid_100k_lines_is_found_every_time(server: Server) -> None:
    async def body(client: WaitClient) -> None:
        # The pane keeps only 2,000 lines, so the marker leaves its history long
        # before the output ends: a screen poller could not see it.
        server.tmux("set-option", "-g", "history-limit", "2000")
        pane = await bash_pane(client, "flood")
        found = []
        for trial in range(SCROLL_TRIALS):
            # `MARK''ER` in the typed line: only the program's output reads MARKER.
            command = (
                f"seq 1 {SCROLL_LINES} | sed 's/^50000$/MARK''ER-{trial}/'; echo flood-end-$(({trial}+0))"
            )
            cursor = await send(client, pane, command)
            # About a second per trial here; a miss costs the whole timeout.
            marker = await wait_text(client, pane, f"MARKER-{trial}", since=cursor, timeout_s=10)
            if marker["outcome"] == "matched" and marker["line"] == f"MARKER-{trial}":
                found.append(trial)
            assert marker["lost_bytes"] == 0, marker
            end = await wait_text(client, pane, f"flood-end-{trial}", since=marker["cursor"], timeout_s=20)
            assert end["outcome"] == "matched", end
        assert found == list(range(SCROLL_TRIALS)), f"marker found in trials {found} only"
        history = await client.ok("capture_pane", {"pane": pane, "scrollback": "all", "max_tokens": 20_000})
        assert history["truncated"] is False, history["total_lines"]
        assert history["history_size"] <= 2000, history["history_size"]
        assert f"MARKER-{SCROLL_TRIALS - 1}" not in history["text"], "the marker is still in the history"
        assert f"flood-end-{SCROLL_TRIALS - 1}" in history["text"]

    server.run(body, limit=150.0)


# --- 2-4. wait_for_text ---------------------------------------------------------


def test_wait_after_output_already_finished_still_matches(server: Server) -> None:
    async def body(client: WaitClient) -> None:
        pane = await bash_pane(client, "fast")
        cursor = await send(client, pane, "printf 'fast-%s\\n' $((40+2))")
        await anyio.sleep(0.5)  # the output is long finished before the wait starts
        result = await wait_text(client, pane, "fast-42", since=cursor, timeout_s=5)
        assert result["outcome"] == "matched", result
        assert result["line"] == "fast-42", result
        assert result["matched"] == "fast-42", result
        assert result["elapsed_s"] < 1.0, result

    server.run(body)


def test_echo_of_typed_input_never_matches(server: Server) -> None:
    async def body(client: WaitClient) -> None:
        pane = await bash_pane(client, "echo")
        cursor = await send(client, pane, "echo ECHO-ONLY")
        echo = await wait_text(client, pane, "echo ECHO-ONLY", since=cursor, timeout_s=1)
        assert echo["outcome"] == "timeout", f"the echo of the typed line matched: {echo}"
        output = await wait_text(client, pane, "ECHO-ONLY", since=cursor, timeout_s=5)
        assert output["outcome"] == "matched", output
        assert output["line"] == "ECHO-ONLY", output

    server.run(body)


def test_stop_pattern_ends_the_wait(server: Server) -> None:
    async def body(client: WaitClient) -> None:
        pane = await bash_pane(client, "stop")
        cursor = await send(client, pane, "echo building; sleep 0.2; echo err''or: boom")
        result = await wait_text(client, pane, "never-printed", stop="error:", since=cursor, timeout_s=10)
        assert result["outcome"] == "stopped", result
        assert result["pattern_index"] == 0, result
        assert result["line"] == "error: boom", result
        assert "building" in result["tail"], result

    server.run(body)


def test_pattern_list_regex_and_case(server: Server) -> None:
    async def body(client: WaitClient) -> None:
        pane = await bash_pane(client, "patterns")
        cursor = await send(client, pane, "echo Step-$((3*3)) done")
        listed = await wait_text(client, pane, ["absent", "Step-9"], since=cursor, timeout_s=5)
        assert listed["outcome"] == "matched" and listed["pattern_index"] == 1, listed
        regex = await wait_text(
            client, pane, r"step-\d+ DONE", regex=True, match_case=False, since=cursor, timeout_s=5
        )
        assert regex["outcome"] == "matched" and regex["matched"] == "Step-9 done", regex
        cased = await wait_text(client, pane, "step-9", since=cursor, timeout_s=0.5)
        assert cased["outcome"] == "timeout", cased
        message = await client.err("wait_for_text", {"pane": pane, "pattern": "(", "regex": True, "timeout_s": 1})
        assert "(" in message or "regex" in message.lower(), message

    server.run(body)


# --- 5. run_command and wait_for_command ----------------------------------------


def test_run_command_exit_codes_cwd_and_own_output(server: Server) -> None:
    async def body(client: WaitClient) -> None:
        pane = await bash_pane(client, "run")
        cd = await run(client, pane, "cd /tmp")
        assert cd["exit_code"] == 0 and cd["output"] == "", cd
        pwd = await run(client, pane, "pwd")
        assert pwd["exit_code"] == 0 and pwd["output"] == "/tmp", pwd
        own = await run(client, pane, "echo only-$((2+3))")
        assert own["output"] == "only-5", f"output is not just the command's own: {own['output']!r}"
        failed = await run(client, pane, "sh -c 'exit 3'")
        assert failed["exit_code"] == 3 and failed["timed_out"] is False, failed
        assert failed["command_id"] is None, failed

    server.run(body)


BACK_TO_BACK = 20


def test_back_to_back_run_commands_all_succeed(server: Server) -> None:
    """An agent runs one command after another. The shell's PROMPT_COMMAND takes
    0.3 s (as a git-aware prompt may), which makes the window in which the
    shell is not yet back at its prompt wide enough to hit every time; the
    wrapper's own history fix-up (`$(history 1)` forks) opens a narrower one."""

    async def body(client: WaitClient) -> None:
        created = await client.ok(
            "create_session", {"name": "back-to-back", "env": {"PS1": PROMPT, "PROMPT_COMMAND": "sleep 0.3"}}
        )
        pane = created["pane"]
        await at_prompt(client, pane)
        refused = []
        for i in range(BACK_TO_BACK):
            result = await client.call("run_command", {"pane": pane, "command": f"echo run-{i}", "timeout_s": 10})
            if result.is_error:
                refused.append((i, text_of(result)))
            else:
                assert result.structured_content["output"] == f"run-{i}", result.structured_content
        assert not refused, f"{len(refused)} of {BACK_TO_BACK} refused; first: {refused[0]}"

    server.run(body)


def test_run_command_cannot_be_ended_by_a_forged_marker(server: Server) -> None:
    async def body(client: WaitClient) -> None:
        pane = await bash_pane(client, "forged")
        command = (
            "printf '\\033]7770;tpfake;0\\007'; printf '\\033]7770;tp0123456789abcdef;0\\007'; "
            "echo after-forgery; sleep 0.3; echo real-end; sh -c 'exit 7'"
        )
        result = await client.ok("run_command", {"pane": pane, "command": command, "timeout_s": 10})
        assert result["timed_out"] is False, result
        assert result["exit_code"] == 7, f"a forged marker ended the command: {result}"
        assert result["output"].splitlines() == ["after-forgery", "real-end"], result["output"]

    server.run(body)


def test_run_command_timeout_is_picked_up_by_wait_for_command(server: Server) -> None:
    async def body(client: WaitClient) -> None:
        pane = await bash_pane(client, "slow")
        started = await client.ok("run_command", {"pane": pane, "command": "sleep 2; echo late", "timeout_s": 0.5})
        assert started["timed_out"] is True, started
        assert started["exit_code"] is None, started
        assert started["command_id"], started
        assert "late" not in started["output"], started
        done = await client.ok("wait_for_command", {"command_id": started["command_id"], "timeout_s": 10})
        assert done["timed_out"] is False and done["exit_code"] == 0, done
        assert done["output"] == "late", done
        message = await client.err("wait_for_command", {"command_id": "no-such-command", "timeout_s": 1})
        assert "no-such-command" in message, message

    server.run(body)


def test_an_interrupted_command_is_reported_as_such(server: Server) -> None:
    """C-c makes bash drop the rest of the wrapper, end marker included."""

    async def body(client: WaitClient) -> None:
        pane = await bash_pane(client, "interrupt")
        started = await client.ok("run_command", {"pane": pane, "command": "echo before; sleep 30", "timeout_s": 0.5})
        assert started["timed_out"] is True and started["interrupted"] is False, started
        await client.ok("send_keys", {"pane": pane, "keys": ["C-c"]})
        await at_prompt(client, pane)
        # The shell is idle under the prompt it showed before the command.
        ended = await client.ok("wait_for_command", {"command_id": started["command_id"], "timeout_s": 5})
        assert ended["interrupted"] is True and ended["timed_out"] is False, ended
        assert ended["exit_code"] is None and ended["command_id"] is None, ended
        assert ended["elapsed_s"] < 5, ended
        assert ended["output"].splitlines()[0] == "before", ended
        assert PROMPT.strip() not in ended["output"], ended
        message = await client.err("wait_for_command", {"command_id": started["command_id"], "timeout_s": 1})
        assert "no running command" in message, message
        after = await run(client, pane, "echo after-interrupt")
        assert after["exit_code"] == 0 and after["output"] == "after-interrupt", after

    server.run(body)


def test_run_command_leaves_no_wrapper_in_history(server: Server) -> None:
    async def body(client: WaitClient) -> None:
        pane = await bash_pane(client, "history")
        await run(client, pane, "echo hist-one")
        listed = await run(client, pane, "history 2")
        # The newest entry is `history 2` itself, still being run: only the one
        # before it is finished and must be the bare command line.
        previous = listed["output"].splitlines()[0]
        assert previous.split(maxsplit=1)[1] == "echo hist-one", listed["output"]

    server.run(body)


def test_screens_show_run_command_lines_as_typed(server: Server) -> None:
    """The shell echoes run_command's wrapper; what tools show is the bare command."""

    async def body(client: WaitClient) -> None:
        pane = await bash_pane(client, "screens")
        cursor = (await client.ok("wait_for_idle", {"pane": pane, "quiet_ms": 100, "timeout_s": 5}))["cursor"]
        await run(client, pane, "echo one; echo two")
        await run(client, pane, "for i in 1 2; do\n echo loop-$i\ndone")
        await at_prompt(client, pane)
        expected = [
            f"{PROMPT}echo one; echo two",
            "one",
            "two",
            f"{PROMPT}for i in 1 2; do",
            ">  echo loop-$i",
            "> done",
            "loop-1",
            "loop-2",
            PROMPT.rstrip(),
        ]
        screen = (await client.capture(pane)).splitlines()
        assert screen[-len(expected) :] == expected, screen
        since = (await client.ok("capture_since", {"pane": pane, "cursor": cursor}))["text"]
        # The cursor was taken after the first prompt, so the text starts after it.
        since_lines = [line.rstrip() for line in since.splitlines()]
        assert since_lines == ["echo one; echo two", *expected[1:]], since
        assert "7770" not in since and "__termpilot" not in since, since

    server.run(body)


@pytest.mark.parametrize("command", ["/usr/bin/python3 -q", "exec /usr/bin/python3 -q"])
def test_run_command_refuses_a_pane_not_at_a_shell_prompt(server: Server, command: str) -> None:
    """Without `exec`, tmux's `sh -c` stays the pane's foreground process and
    python3 runs as its child: termpilot must still see that sh is busy."""

    async def body(client: WaitClient) -> None:
        pane = (await client.ok("create_session", {"name": "repl", "command": command}))["pane"]

        async def repl_prompt() -> bool:
            return (await client.capture(pane)).rstrip().endswith(">>>")

        await poll(repl_prompt, 5.0, f"the python prompt in {pane}")
        message = await client.err("run_command", {"pane": pane, "command": "print(1)", "timeout_s": 2})
        assert "not at a shell prompt" in message, message
        assert "python3" in message, message
        # Nothing was typed into the REPL.
        assert (await client.capture(pane)).strip() == ">>>", await client.capture(pane)

    server.run(body)


# --- 6. wait_for_idle -------------------------------------------------------------


def test_wait_for_idle_returns_after_the_output_stops(server: Server) -> None:
    async def body(client: WaitClient) -> None:
        pane = await bash_pane(client, "idle")
        sent = time.monotonic()
        cursor = await send(client, pane, "for i in $(seq 1 12); do echo tick-$i; sleep 0.05; done")
        # Once the loop prints, it never pauses for 0.3 s until it is done.
        assert (await wait_text(client, pane, "tick-1", since=cursor, timeout_s=10))["outcome"] == "matched"
        result = await client.ok("wait_for_idle", {"pane": pane, "quiet_ms": 300, "timeout_s": 10})
        assert result["outcome"] == "idle", result
        assert result["elapsed_s"] >= 0.3, result
        # The last tick comes at least 0.55 s after the loop starts, then 0.3 s of quiet.
        assert time.monotonic() - sent >= 0.85, f"idle after {time.monotonic() - sent:.2f} s: {result}"
        assert "tick-12" in await client.capture(pane), "idle reported while the loop was still printing"

    server.run(body)


# --- 7. channels ------------------------------------------------------------------


def test_channel_signal_wakes_a_waiter_and_silence_times_out(server: Server) -> None:
    async def body(client: WaitClient) -> None:
        results: dict[str, Any] = {}

        async def waiter() -> None:
            results["wait"] = await client.ok("wait_for_channel", {"channel": "tp-chan", "timeout_s": 10})

        async def signal() -> None:
            results["signal"] = await client.ok("signal_channel", {"channel": "tp-chan"})

        async with anyio.create_task_group() as group:
            group.start_soon(waiter)
            group.start_soon(after, 0.3, signal)
        assert results["wait"]["outcome"] == "signalled", results
        assert 0.15 <= results["wait"]["elapsed_s"] < 5, results
        assert results["signal"]["outcome"] == "sent", results
        silent = await client.ok("wait_for_channel", {"channel": "tp-silent", "timeout_s": 0.3})
        assert silent["outcome"] == "timeout", silent
        assert silent["elapsed_s"] < 3, silent

    server.run(body)


# --- 8-10. a wait ends when its pane, the tmux server or the client goes away -----


KILLED_PANES = 16


def test_killed_pane_ends_the_wait_with_pane_exited(server: Server) -> None:
    """Sixteen panes each killed mid-wait (text and idle waits), so that a wrong
    outcome that shows up only some of the time shows up in this test."""

    async def body(client: WaitClient) -> None:
        panes = [
            (await client.ok("create_session", {"name": f"victim-{i}", "command": "sleep 60"}))["pane"]
            for i in range(KILLED_PANES)
        ]
        results: dict[str, tuple[str, float]] = {}

        async def waiter(pane: str, index: int) -> None:
            started = time.monotonic()
            if index % 2:
                wait = await client.ok("wait_for_idle", {"pane": pane, "quiet_ms": 20_000, "timeout_s": 20})
            else:
                wait = await wait_text(client, pane, "never", timeout_s=20)
            results[pane] = (wait["outcome"], time.monotonic() - started)

        async def kill(pane: str) -> None:
            await client.ok("kill_pane", {"pane": pane})

        async with anyio.create_task_group() as group:
            for index, pane in enumerate(panes):
                group.start_soon(waiter, pane, index)
                group.start_soon(after, 0.5, lambda pane=pane: kill(pane))
        slowest = max(took for _, took in results.values())
        assert slowest < 5, f"a wait took {slowest:.1f} s to notice its pane was killed"
        wrong = {pane: outcome for pane, (outcome, _) in results.items() if outcome != "pane_exited"}
        assert not wrong, f"{len(wrong)} of {KILLED_PANES} waits did not end with pane_exited: {wrong}"

    server.run(body, toolsets="all")


def test_killed_tmux_server_ends_the_wait_and_termpilot_keeps_serving(server: Server) -> None:
    async def body(client: WaitClient) -> None:
        pane = await bash_pane(client, "doomed")
        results: dict[str, Any] = {}

        async def waiter() -> None:
            started = time.monotonic()
            results["wait"] = await client.call("wait_for_text", {"pane": pane, "pattern": "never", "timeout_s": 20})
            results["took"] = time.monotonic() - started

        async def kill_tmux() -> None:
            await anyio.to_thread.run_sync(server.tmux, "kill-server")

        async with anyio.create_task_group() as group:
            group.start_soon(waiter)
            group.start_soon(after, 0.3, kill_tmux)
        assert results["took"] < 5, results
        wait = results["wait"]
        if wait.is_error:
            message = text_of(wait)
            assert "tmux" in message.lower() or "server" in message.lower(), message
        else:
            assert wait.structured_content["outcome"] in {"pane_exited", "lost"}, wait.structured_content

        async def serving() -> bool:
            return not (await client.call("list_sessions")).is_error

        await poll(serving, 5.0, "list_sessions to answer again", interval=0.2)

    server.run(body)


def test_cancelled_wait_returns_at_once_and_stops_in_the_server(server: Server) -> None:
    async def body(client: WaitClient) -> None:
        pane = await bash_pane(client, "cancel")

        async def ignore(value: float, total: float | None, message: str | None) -> None:
            pass

        started = time.monotonic()
        # Cancelled after the first progress notification (sent once a second),
        # so a wait still running in the server would show by sending more.
        with anyio.move_on_after(1.5) as scope:
            await client.session.call_tool(
                "wait_for_text",
                {"pane": pane, "pattern": "never", "timeout_s": 30},
                read_timeout_seconds=40,
                progress_callback=ignore,
            )
        cancelled = time.monotonic()
        assert scope.cancelled_caught, "the wait returned before it was cancelled"
        assert cancelled - started < 2.2
        with anyio.fail_after(1.0):
            assert "cancel" in await client.session_names()
        await anyio.sleep(1.5)
        assert client.progress, "no progress before the cancel: cannot tell whether the wait stopped"
        token = client.progress[0][1]
        late = [at - cancelled for at, t in client.progress if t == token and at > cancelled + 0.3]
        assert not late, f"the cancelled wait kept running in the server (progress {late} s after the cancel)"
        # Waiting on the same pane still works after the cancelled wait.
        cursor = await send(client, pane, "echo after-$((1+1))")
        again = await wait_text(client, pane, "after-2", since=cursor, timeout_s=5)
        assert again["outcome"] == "matched", again

    server.run(body)


# --- 11. progress -------------------------------------------------------------------


def test_long_wait_sends_progress_notifications(server: Server) -> None:
    async def body(client: WaitClient) -> None:
        pane = await bash_pane(client, "progress")
        progress: list[tuple[float, float | None, str | None]] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append((value, total, message))

        result = await client.session.call_tool(
            "wait_for_text",
            {"pane": pane, "pattern": "never", "timeout_s": 2.5},
            read_timeout_seconds=REQUEST_TIMEOUT,
            progress_callback=on_progress,
        )
        assert not result.is_error, text_of(result)
        assert result.structured_content["outcome"] == "timeout", result.structured_content
        assert len(progress) >= 2, progress
        values = [value for value, _, _ in progress]
        assert values == sorted(values), f"progress went backwards: {values}"

    server.run(body)


def test_wait_that_ends_early_ends_its_progress_at_the_total(server: Server) -> None:
    """One total, values that only increase, the last equal to the total: a
    match after 1.5 s of a 10 s wait once left the progress at 1 of 10."""

    async def body(client: WaitClient) -> None:
        pane = await bash_pane(client, "early")
        progress: list[tuple[float, float | None]] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append((value, total))

        sent = await send(client, pane, "sleep 1.5; echo early-$((40+2))")
        result = await client.session.call_tool(
            "wait_for_text",
            {"pane": pane, "pattern": "early-42", "since": sent, "timeout_s": 10},
            read_timeout_seconds=REQUEST_TIMEOUT,
            progress_callback=on_progress,
        )
        assert not result.is_error, text_of(result)
        assert result.structured_content["outcome"] == "matched", result.structured_content

        async def finished() -> bool:
            return bool(progress) and progress[-1] == (10, 10)

        try:
            await poll(finished, 1.0, "progress 10 of 10")
        except AssertionError:
            raise AssertionError(f"no final 10-of-10 progress; received {progress}") from None
        values = [value for value, _ in progress]
        assert all(a < b for a, b in zip(values, values[1:])), f"progress did not only increase: {progress}"
        assert {total for _, total in progress} == {10}, f"totals changed: {progress}"

    server.run(body)
