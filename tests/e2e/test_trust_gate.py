"""End-to-end attacks on the input gate and on scopes (issue 21, classes 3 and 4),
with the official MCP Python SDK over stdio, each against a private tmux server
(the `tp` fixture).

The gate: `--confirm` judges the line a pane's program would get, whatever
spells it (key names, hex keys, pieces over several calls or in one batch, a
paste and a later Enter) and a new pane's command whole. Each attack aims at
deleting a directory in a shell; the person declines, and the directory must
still be there. The scope: `--allow-session 'agent-*'` must not let
`create_window` reach a foreign session through `victim:7`, `$N:6` or a
host-prefixed target, nor name it."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from conftest import Client, Termpilot, poll
from test_audit import lines, run, serve

# The line the attacks try to run, and a pattern that catches it only once it
# is submitted (the newline), so that no single piece of it matches alone.
DIR = "victim"
PATTERN = r"rm\s+-rf\s+victim\n"


class Person:
    """An elicitation callback that answers each question from a list (the
    last answer repeats), recording the questions."""

    def __init__(self, *approvals: bool) -> None:
        self.approvals = list(approvals) or [False]
        self.questions: list[str] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams), params
        approve = self.approvals[min(len(self.questions), len(self.approvals) - 1)]
        self.questions.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": approve})


async def shell(client: Client, cwd: Path) -> str:
    """A session running bash (readline editing, no startup files) in `cwd`,
    at its prompt."""
    arguments = {"name": "agent-work", "command": "bash --norc --noprofile", "cwd": str(cwd)}
    made = await client.ok("create_session", arguments)
    pane = made["pane"]
    await client.ok("run_command", {"pane": pane, "command": "true", "timeout_s": 20})
    return pane


def target(tmp_path: Path) -> Path:
    victim = tmp_path / DIR
    victim.mkdir()
    (victim / "precious").write_text("keep me\n")
    return victim


async def still_there(client: Client, pane: str, victim: Path) -> None:
    """The directory survives: checked after the shell has run what it got."""
    await client.ok("run_command", {"pane": pane, "command": "echo settled", "timeout_s": 20})
    await anyio.sleep(0.3)
    assert (victim / "precious").exists(), f"{victim} was deleted"


def keys_of(text: str) -> list[str]:
    return ["Space" if c == " " else c for c in text]


# Each attack: the calls that, added up, type `rm -rf victim` and Enter.
ATTACKS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "key names": [("send_keys", {"keys": [*keys_of("rm -rf victim"), "Enter"]})],
    "hex keys and C-m": [("send_keys", {"keys": [f"0x{ord(c):02x}" for c in "rm -rf victim"] + ["C-m"]})],
    "C-j after text": [("send_keys", {"text": "rm -rf victim", "enter": False, "keys": ["C-j"]})],
    "two send_keys calls": [
        ("send_keys", {"text": "rm -", "enter": False}),
        ("send_keys", {"text": "rf victim"}),
    ],
    "cursor editing": [
        ("send_keys", {"text": "rf victim", "enter": False}),
        ("send_keys", {"keys": ["Home"]}),
        ("send_keys", {"text": "rm -", "enter": False, "keys": ["End", "Enter"]}),
    ],
    "one send_keys_batch": [
        (
            "send_keys_batch",
            {"operations": [{"text": "rm -", "enter": False}, {"text": "rf vic", "enter": False}, {"text": "tim"}]},
        )
    ],
    "run_batch": [
        (
            "run_batch",
            {
                "steps": [
                    {"op": "send_keys", "text": "rm -r", "enter": False},
                    {"op": "wait_for_idle", "quiet_ms": 100, "timeout_s": 5},
                    {"op": "send_keys", "text": "f victim", "enter": False},
                    {"op": "send_keys", "keys": ["Enter"]},
                ]
            },
        )
    ],
    "a backslash continuing the line": [
        ("send_keys", {"text": "rm -rf \\"}),
        ("send_keys", {"text": "victim"}),
    ],
    "C-o (operate-and-get-next)": [("send_keys", {"text": "rm -rf victim", "enter": False, "keys": ["C-o"]})],
    "paste then Enter": [
        ("paste_text", {"text": "rm -rf victim", "bracketed": False}),
        ("send_keys", {"keys": ["Enter"]}),
    ],
}


def with_pane(arguments: dict[str, Any], pane: str) -> dict[str, Any]:
    """The call's arguments aimed at `pane` (its operations' and steps' too)."""
    out = dict(arguments)
    for field in ("operations", "steps"):
        if field in out:
            out[field] = [{**item, "pane": pane} for item in out[field]]
    if "operations" not in out and "steps" not in out:
        out["pane"] = pane
    return out


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_dangerous_line_however_typed_needs_approval(tp: Termpilot, tmp_path: Path, attack: str) -> None:
    victim = target(tmp_path)
    person = Person(False)

    async def body() -> None:
        async with serve(tp, ["--confirm", PATTERN], elicitation_callback=person) as client:
            pane = await shell(client, tmp_path)
            errors = []
            for tool, arguments in ATTACKS[attack]:
                result = await client.call(tool, with_pane(arguments, pane))
                if result.is_error:
                    errors.append((tool, result))
            await still_there(client, pane, victim)
            assert person.questions, f"{attack}: the person was never asked"
            assert "victim" in person.questions[-1], person.questions[-1]
            assert errors, f"{attack}: every call went through"


    run(body)


def test_an_approved_paste_is_asked_again_before_enter_runs_it(tp: Termpilot, tmp_path: Path) -> None:
    victim = target(tmp_path)
    person = Person(True, False)

    async def body() -> None:
        # This pattern matches the paste as typed, without a newline.
        async with serve(tp, ["--confirm", r"rm\s+-rf"], elicitation_callback=person) as client:
            pane = await shell(client, tmp_path)
            await client.ok("paste_text", {"pane": pane, "text": "rm -rf victim", "bracketed": False})
            assert len(person.questions) == 1 and "not submitted" in person.questions[0], person.questions
            message = await client.err("send_keys", {"pane": pane, "keys": ["Enter"]})
            assert "declined" in message, message
            assert len(person.questions) == 2 and "[Enter]" in person.questions[1], person.questions
            await client.ok("send_keys", {"pane": pane, "keys": ["C-c"]})
            await still_there(client, pane, victim)

    run(body)


@pytest.mark.parametrize("tool", ["create_session", "create_window", "split_pane"])
def test_a_new_panes_command_is_judged_whole_and_audited(tp: Termpilot, tmp_path: Path, tool: str) -> None:
    victim = target(tmp_path)
    person = Person(False)
    log = tmp_path / "audit.log"
    command = "rm -rf victim"

    async def body() -> None:
        args = ["--confirm", PATTERN, "--audit", str(log), "--audit-payloads"]
        async with serve(tp, args, elicitation_callback=person) as client:
            pane = await shell(client, tmp_path)
            arguments: dict[str, Any] = {"command": command, "cwd": str(tmp_path)}
            if tool == "create_session":
                arguments["name"] = "agent-new"
            elif tool == "create_window":
                arguments["session"] = "agent-work"
            else:
                arguments["pane"] = pane
            message = await client.err(tool, arguments)
            assert "declined" in message, message
            assert len(person.questions) == 1 and command in person.questions[0], person.questions
            # An environment variable a shell would run is judged too.
            env_args = {k: v for k, v in arguments.items() if k != "command"}
            message = await client.err(tool, {**env_args, "env": {"PROMPT_COMMAND": command + "\n"}})
            assert "declined" in message, message
            await still_there(client, pane, victim)

    run(body)
    records = [r for r in lines(log) if r["tool"] == tool and r["approval"].get("asked")]
    assert len(records) == 2, lines(log)
    assert [t.get("payload") for t in records[0]["typed"]] == [command], records[0]
    assert records[0]["approval"] == {"asked": True, "answer": "decline"}, records[0]


def test_lines_the_pattern_does_not_match_go_through(tp: Termpilot, tmp_path: Path) -> None:
    victim = target(tmp_path)
    person = Person(False)

    async def body() -> None:
        async with serve(tp, ["--confirm", PATTERN], elicitation_callback=person) as client:
            pane = await shell(client, tmp_path)
            # Edited away before Enter: the line submitted is harmless.
            await client.ok("send_keys", {"pane": pane, "text": "rm -rf victim", "enter": False, "keys": ["C-u"]})
            await client.ok("send_keys", {"pane": pane, "keys": [*keys_of("ls"), "Enter"]})
            await client.ok("send_keys", {"pane": pane, "text": "echo rm -rf elsewhere"})
            assert person.questions == []

            async def listed() -> bool:
                return "elsewhere" in await client.capture(pane)

            await poll(listed, 10, "the echo")
            await still_there(client, pane, victim)

    run(body)


# --- scope by resolution -------------------------------------------------------


def tmux(tp: Termpilot, *args: str) -> str:
    done = subprocess.run(
        ["tmux", "-L", tp.socket, "-f", "/dev/null", *args], capture_output=True, text=True, timeout=10, check=True
    )
    return done.stdout.strip()


@pytest.mark.parametrize("form", ["victim:7", "$ID:6", "local/victim:7", "local/$ID:6", "$ID", "local/$ID"])
def test_create_window_cannot_reach_a_foreign_session(tp: Termpilot, form: str) -> None:
    async def body() -> None:
        async with serve(tp, ["--allow-session", "agent-*"]) as client:
            await client.ok("create_session", {"name": "agent-1", "command": "cat"})
            tmux(tp, "new-session", "-d", "-s", "victim", "cat")
            session_id = tmux(tp, "display-message", "-p", "-t", "victim:", "#{session_id}")
            target = form.replace("$ID", session_id)
            result = await client.call("create_window", {"session": target, "command": "cat"})
            assert result.is_error, result
            message = " ".join(b.text for b in result.content if isinstance(b, types.TextContent))
            if "victim" not in target:
                assert "victim" not in message, message
            assert "not found" in message, message
            assert tmux(tp, "list-windows", "-t", "victim:", "-F", "#{window_index}") == "0"
            # The agent's own session still works through every form.
            own = target.replace("victim", "agent-1").replace(session_id, "$NONE")
            if "$NONE" not in own:
                await client.ok("create_window", {"session": own, "command": "cat"})

    run(body)
