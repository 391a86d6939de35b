"""End-to-end tests of real interactive tasks (issue 22): full-screen programs
shown as screens and not streams, interrupts reported as such, waits that see
a program's redraw of a word that was typed, and input tools that wait for
what comes next, over stdio with the official MCP Python SDK against a
private tmux server per test (bash without rc files, the crate tests' tmux
configuration).
"""

from __future__ import annotations

import subprocess
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import BIN, REQUEST_TIMEOUT, SERVER_ENV, Client, poll, single_leaf, text_of
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

TMUX_CONFIG = str(Path(__file__).resolve().parents[2] / "crates/tmux/tests/support/tmux.conf")
PROMPT = "tp-prompt$ "
ENV = SERVER_ENV | {"SHELL": "/bin/bash"}
TEST_LIMIT = 60.0


class TaskClient(Client):
    """A Client whose calls may last their own timeout, keeping each result's text."""

    texts: list[str]

    async def call(self, name: str, arguments: dict[str, Any] | None = None):
        arguments = arguments or {}
        wait = arguments.get("wait")
        wait = wait if isinstance(wait, dict) else {}
        timeout = float(arguments.get("timeout_s") or wait.get("timeout_s") or 30)
        result = await self.session.call_tool(name, arguments, read_timeout_seconds=REQUEST_TIMEOUT + timeout)
        self.texts.append(text_of(result))
        return result


class Server:
    def __init__(self, socket: str, log: Path) -> None:
        self.socket = socket
        self.log = log

    @asynccontextmanager
    async def connect(self):
        args = ["serve", "-L", self.socket, "--tmux-config", TMUX_CONFIG]
        params = StdioServerParameters(command=BIN, args=args, env=ENV)
        with open(self.log, "a", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT) as session:
                    await session.initialize()
                    client = TaskClient(session, (await session.list_tools()).tools)
                    client.texts = []
                    yield client

    def run(self, body) -> None:
        async def main() -> None:
            with anyio.fail_after(TEST_LIMIT):
                async with self.connect() as client:
                    await body(client)

        try:
            anyio.run(main)
        except BaseExceptionGroup as group:
            raise single_leaf(group) from None


@pytest.fixture
def server(tp) -> Server:
    return Server(tp.socket, tp.log_path)


async def bash_pane(client: Client, name: str) -> str:
    pane = (await client.ok("create_session", {"name": name, "env": {"PS1": PROMPT}}))["pane"]
    await at_prompt(client, pane)
    return pane


async def at_prompt(client: Client, pane: str) -> None:
    async def prompted() -> bool:
        return (await client.capture(pane)).rstrip().endswith(PROMPT.rstrip())

    await poll(prompted, 10.0, f"the prompt back in {pane}")


def data_file(tmp_path: Path) -> Path:
    data = tmp_path / "data.txt"
    lines = [f"{n:03} lorem ipsum dolor sit amet" for n in range(1, 200)]
    data.write_text("\n".join(["alpha cobalt beta", *lines]) + "\n")
    return data


async def vim_on(client: TaskClient, pane: str, data: Path) -> dict[str, Any]:
    opened = await client.ok("run_command", {"pane": pane, "command": f"vim -u NONE -n {data}", "timeout_s": 15})
    assert opened["awaiting_input"] and opened["alternate_screen"], opened
    return opened


def test_a_full_screen_program_waiting_shows_its_screen(server: Server, tmp_path: Path) -> None:
    """vim's drawn stream joins screen lines and carries stray bytes; the
    screen as capture_pane renders it has one line per row."""
    data = data_file(tmp_path)

    async def body(client: TaskClient) -> None:
        pane = await bash_pane(client, "vimscreen")
        opened = await vim_on(client, pane, data)
        lines = opened["output"].splitlines()
        assert "alpha cobalt beta" in lines, opened["output"]
        assert "001 lorem ipsum dolor sit amet" in lines, opened["output"]
        assert "▽" not in opened["output"], opened["output"]
        # Shown again, the screen shows only the rows that changed.
        wait = {"for": "command", "timeout_s": 15}
        edited = (await client.ok("send_keys", {"pane": pane, "text": ":1s/cobalt/harbor/", "wait": wait}))["wait"]
        assert edited["awaiting_input"], edited
        changed = edited["output"].splitlines()
        assert changed[0] == "alpha harbor beta" and "unchanged]" in changed[1], edited["output"]
        assert "001 lorem ipsum dolor sit amet" not in changed, edited["output"]
        await client.ok("send_keys", {"pane": pane, "text": ":q!"})
        done = await client.ok("wait_for_command", {"command_id": opened["command_id"], "timeout_s": 15})
        assert done["exit_code"] == 0, done

    server.run(body)


def test_a_finished_full_screen_program_leaves_no_stream(server: Server, tmp_path: Path) -> None:
    """After :wq, the command's output is what vim left on the normal screen
    (nothing) and a note of the program, not vim's drawing."""
    data = data_file(tmp_path)

    async def body(client: TaskClient) -> None:
        pane = await bash_pane(client, "vimdone")
        opened = await vim_on(client, pane, data)
        await client.ok("send_keys", {"pane": pane, "text": ":wq"})
        done = await client.ok("wait_for_command", {"command_id": opened["command_id"], "timeout_s": 15})
        assert done["exit_code"] == 0, done
        assert "lorem" not in done["output"], done
        assert "vim" in done["output"] and len(done["output"]) < 80, done
        assert len(client.texts[-1]) < 200, client.texts[-1]
        ran = await client.ok("run_command", {"pane": pane, "command": "echo before; vim -u NONE -n -c wq "
                                              f"{data}; echo after", "timeout_s": 15})
        assert ran["exit_code"] == 0 and ran["output"].splitlines()[0] == "before", ran
        assert ran["output"].splitlines()[-1] == "after" and "lorem" not in ran["output"], ran

    server.run(body)


def test_a_pager_s_pages_are_not_returned_again(server: Server, tmp_path: Path) -> None:
    """less without the alternate screen (git's LESS=FRX) draws on the normal
    screen: once shown as awaiting input, its page is not output again."""
    data = data_file(tmp_path)

    async def body(client: TaskClient) -> None:
        pane = await bash_pane(client, "pager")
        opened = await client.ok("run_command", {"pane": pane, "command": f"less -X {data}", "timeout_s": 15})
        assert opened["awaiting_input"], opened
        assert "001 lorem ipsum dolor sit amet" in opened["output"].splitlines(), opened
        await client.ok("send_keys", {"pane": pane, "text": "/lorem ipsum dolor sit amet$"})
        await client.ok("send_keys", {"pane": pane, "keys": ["q"]})
        done = await client.ok("wait_for_command", {"command_id": opened["command_id"], "timeout_s": 15})
        assert done["exit_code"] == 0, done
        assert "lorem" not in done["output"], done

    server.run(body)


@pytest.mark.parametrize(
    "command",
    ["sleep 100", "sleep 100 | cat", "python3 -m http.server 0 --bind 127.0.0.1 2>&1 | tee /dev/null"],
    ids=["plain", "pipeline", "server"],
)
def test_an_interrupted_command_says_interrupted(server: Server, command: str) -> None:
    async def body(client: TaskClient) -> None:
        pane = await bash_pane(client, "interrupt")
        started = await client.ok("run_command", {"pane": pane, "command": command, "timeout_s": 1.5})
        assert started["timed_out"], started
        await client.ok("send_keys", {"pane": pane, "keys": ["C-c"]})
        ended = await client.ok("wait_for_command", {"command_id": started["command_id"], "timeout_s": 10})
        assert ended["interrupted"] and not ended["awaiting_input"], ended
        status = client.texts[-1].splitlines()[0]
        assert status.startswith("interrupted"), status
        assert "next command" not in status, status

    server.run(body)


def test_an_interrupt_in_a_fresh_pane_says_interrupted(server: Server) -> None:
    """The prompt of a pane whose shell drew it before termpilot read the pane
    is not in its journal; the screen shows it."""

    async def body(client: TaskClient) -> None:
        pane = await bash_pane(client, "fresh")
        subprocess.run(["tmux", "-L", server.socket, "clear-history", "-t", pane], check=False, timeout=5)
        async with server.connect() as other:
            other.texts = []
            started = await other.ok("run_command", {"pane": pane, "command": "sleep 100", "timeout_s": 1})
            assert started["timed_out"], started
            await other.ok("send_keys", {"pane": pane, "keys": ["C-c"]})
            await at_prompt(other, pane)
            ended = await other.ok("wait_for_command", {"command_id": started["command_id"], "timeout_s": 10})
            assert ended["interrupted"] and not ended["awaiting_input"], ended

    server.run(body)


def test_a_wait_sees_a_redraw_of_typed_words(server: Server, tmp_path: Path) -> None:
    """Typing :1s/cobalt/harbor/ in vim echoes `harbor` on the command line;
    vim then redraws line 1 in place with `harbor` in it, which is output."""
    data = data_file(tmp_path)

    async def body(client: TaskClient) -> None:
        pane = await bash_pane(client, "redraw")
        await vim_on(client, pane, data)
        sent = await client.ok("send_keys", {"pane": pane, "text": ":1s/cobalt/harbor/"})
        found = await client.ok(
            "wait_for_text", {"pane": pane, "pattern": "harbor", "since": sent["cursor"], "timeout_s": 10}
        )
        assert found["outcome"] == "matched", found
        await client.ok("send_keys", {"pane": pane, "text": ":q!"})
        await at_prompt(client, pane)

    server.run(body)


def test_send_keys_answers_and_waits(server: Server, tmp_path: Path) -> None:
    """One call answers a prompt and returns what came next: the next prompt,
    then the command's end."""
    script = tmp_path / "ask.py"
    script.write_text('a = input("Name? ")\nimport time; time.sleep(0.5)\nb = input("Colour? ")\nprint("got", a, b)\n')

    async def body(client: TaskClient) -> None:
        pane = await bash_pane(client, "answer")
        asked = await client.ok("run_command", {"pane": pane, "command": f"python3 {script}", "timeout_s": 15})
        assert asked["awaiting_input"] and asked["prompt"] == "Name? ", asked
        wait = {"for": "command", "timeout_s": 15}
        again = await client.ok("send_keys", {"pane": pane, "text": "ada", "wait": wait})
        assert again["wait"]["awaiting_input"] and again["wait"]["prompt"] == "Colour? ", again
        assert "Colour? " in client.texts[-1], client.texts[-1]
        done = await client.ok("send_keys", {"pane": pane, "text": "red", "wait": wait})
        assert done["wait"]["exit_code"] == 0 and done["wait"]["output"].endswith("got ada red"), done
        # A pattern, from before the input: the program's fast answer is not missed.
        wait = {"for": "text", "pattern": "^got-x$", "timeout_s": 10}
        typed = await client.ok("send_keys", {"pane": pane, "text": "echo got-x", "wait": wait})
        assert typed["wait"]["outcome"] == "matched", typed

    server.run(body)


def test_a_wait_tail_of_a_drawn_screen_is_the_screen(server: Server) -> None:
    """A program drawing rows by cursor addressing on the normal screen has
    them joined in its stream; the tail shows the rows."""

    async def body(client: TaskClient) -> None:
        pane = await bash_pane(client, "drawn")
        draw = "printf '\\033[H\\033[2J'; for i in 1 2 3; do printf '\\033[%d;1Hrow-%d' $i $i; done; read x"
        sent = await client.ok("send_keys", {"pane": pane, "text": draw})
        args = {"pane": pane, "pattern": "tp-never-printed", "since": sent["cursor"], "timeout_s": 10}
        idle = await client.ok("wait_for_text", args)
        assert idle["outcome"] == "awaiting_input", idle
        rows = idle["tail"].splitlines()
        assert "row-2" in rows and "row-3" in rows, idle["tail"]
        await client.ok("send_keys", {"pane": pane, "keys": ["C-c"], "wait": {"for": "idle", "timeout_s": 10}})

    server.run(body)


def test_paste_text_answers_and_waits(server: Server) -> None:
    async def body(client: TaskClient) -> None:
        pane = await bash_pane(client, "paste")
        repl = await client.ok("run_command", {"pane": pane, "command": "python3 -q", "timeout_s": 15})
        assert repl["awaiting_input"], repl
        pasted = await client.ok("paste_text", {"pane": pane, "text": "print(6 * 7)", "enter": True, "wait": "command"})
        answer = pasted["wait"]
        assert answer["awaiting_input"] and "42" in answer["output"].splitlines(), answer
        done = await client.ok("send_keys", {"pane": pane, "text": "exit()", "wait": {"for": "command"}})
        assert done["wait"]["exit_code"] == 0, done

    server.run(body)
