"""End-to-end tests of a person in the loop (issue 16): approvals through MCP
elicitation (`--confirm`) and scopes (`--allow-session`, `--read-only`), over
stdio with the official MCP Python SDK and its elicitation callback, against a
private tmux server per test (the `tp` fixture)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from conftest import Client, Termpilot, poll, text_of
from test_audit import lines, run, serve
from test_http import http_server  # noqa: F401 (a fixture)

# How long a pane is watched for text that must NOT arrive.
QUIET_S = 0.5
DANGER = "rm -rf ./nothing-here"


class Person:
    """An elicitation callback that records each question and gives one answer."""

    def __init__(self, action: str, approve: bool | None = True) -> None:
        self.action = action
        self.approve = approve
        self.questions: list[types.ElicitRequestFormParams] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams), params
        self.questions.append(params)
        content = None if self.approve is None or self.action != "accept" else {"approve": self.approve}
        return types.ElicitResult(action=self.action, content=content)


async def cat_pane(client: Client, name: str) -> str:
    """A session running `cat`, which shows what it gets typed."""
    pane = (await client.ok("create_session", {"name": name, "command": "cat"}))["pane"]
    return pane


async def shows(client: Client, pane: str, text: str) -> None:
    async def check() -> bool:
        return text in await client.capture(pane)

    await poll(check, 10, f"{text!r} in {pane}")


async def never_shows(client: Client, pane: str, text: str) -> None:
    await anyio.sleep(QUIET_S)
    screen = await client.capture(pane)
    assert text not in screen, screen


def confirm_args(*extra: str) -> list[str]:
    return ["--confirm", r"rm\s+-rf", "--confirm", r"^reboot\n", *extra]


# --- approvals -----------------------------------------------------------------


def test_accepted_input_is_typed_after_one_question(tp: Termpilot, tmp_path: Path) -> None:
    person = Person("accept")
    log = tmp_path / "audit.log"

    async def body() -> None:
        async with serve(tp, confirm_args("--audit", str(log)), elicitation_callback=person) as client:
            pane = await cat_pane(client, "work")
            await client.ok("send_keys", {"pane": pane, "text": "harmless words"})
            assert person.questions == []
            await client.ok("send_keys", {"pane": pane, "text": DANGER, "enter": False})
            await shows(client, pane, DANGER)
            (question,) = person.questions
            assert pane in question.message and DANGER in question.message, question.message
            assert "session work" in question.message and "running " in question.message, question.message
            schema = question.requested_schema
            assert list(schema["properties"]) == ["approve"]
            assert schema["properties"]["approve"]["type"] == "boolean"

    run(body)
    records = [r for r in lines(log) if r["tool"] == "send_keys"]
    assert [r["approval"] for r in records] == [{"asked": False}, {"asked": True, "answer": "approve"}]


def refused(person: Person, expected: str) -> None:
    """Runs a matching send_keys, run_command and paste_text against `person`."""

    async def body(tp: Termpilot) -> None:
        async with serve(tp, confirm_args(), elicitation_callback=person) as client:
            pane = await cat_pane(client, "work")
            message = await client.err("send_keys", {"pane": pane, "text": DANGER})
            assert expected in message and r"rm\s+-rf" in message, message
            message = await client.err("paste_text", {"pane": pane, "text": "reboot", "enter": True})
            assert expected in message and "reboot" in message, message
            message = await client.err("run_command", {"pane": pane, "command": DANGER})
            assert expected in message, message
            await never_shows(client, pane, "nothing-here")
            await never_shows(client, pane, "reboot")
            assert len(person.questions) == 3

    return body


def test_declined_input_is_not_typed(tp: Termpilot) -> None:
    body = refused(Person("decline"), "the person declined")
    run(lambda: body(tp))


def test_cancelled_input_is_not_typed(tp: Termpilot) -> None:
    body = refused(Person("cancel"), "the person declined")
    run(lambda: body(tp))


def test_accept_without_approve_true_is_not_typed(tp: Termpilot) -> None:
    body = refused(Person("accept", approve=False), "the person declined")
    run(lambda: body(tp))


def test_a_client_without_elicitation_is_refused(tp: Termpilot) -> None:
    async def body() -> None:
        async with serve(tp, confirm_args()) as client:
            pane = await cat_pane(client, "work")
            message = await client.err("send_keys", {"pane": pane, "text": DANGER})
            assert "elicitation" in message and "approv" in message, message
            await never_shows(client, pane, "nothing-here")
            # Text no pattern matches goes through; key names are not text.
            await client.ok("send_keys", {"pane": pane, "text": "fine", "enter": False})
            await client.ok("send_keys", {"pane": pane, "keys": ["C-u"]})
            await client.ok("send_keys", {"pane": pane, "text": "rm -f x", "enter": False})
            await shows(client, pane, "rm -f x")

    run(body)


def test_a_batch_asks_once_and_types_nothing_on_decline(tp: Termpilot) -> None:
    person = Person("decline")

    async def body() -> None:
        async with serve(tp, confirm_args(), elicitation_callback=person) as client:
            pane = await cat_pane(client, "work")
            operations = [
                {"pane": pane, "text": "first-harmless", "enter": False},
                {"pane": pane, "text": "rm -rf ./one", "enter": False},
                {"pane": pane, "text": "rm  -rf ./two", "enter": False},
            ]
            message = await client.err("send_keys_batch", {"operations": operations})
            assert "the person declined" in message, message
            assert len(person.questions) == 1
            question = person.questions[0].message
            # The line as the pane would hold it: the pieces add up.
            assert "first-harmlessrm -rf ./onerm  -rf ./two" in question, question
            steps = [
                {"op": "send_keys", "pane": pane, "text": "second-harmless", "enter": False},
                {"op": "run_command", "pane": pane, "command": "rm -rf ./three"},
                {"op": "paste_text", "pane": pane, "text": "reboot", "enter": True},
            ]
            message = await client.err("run_batch", {"steps": steps})
            assert "the person declined" in message, message
            assert len(person.questions) == 2
            question = person.questions[1].message
            assert "./three" in question and "reboot" in question
            for text in ("harmless", "./one", "./two", "./three", "reboot"):
                await never_shows(client, pane, text)

    run(body)


def test_an_accepted_batch_types_everything(tp: Termpilot) -> None:
    person = Person("accept")

    async def body() -> None:
        async with serve(tp, confirm_args(), elicitation_callback=person) as client:
            pane = await cat_pane(client, "work")
            operations = [
                {"pane": pane, "text": "rm -rf ./one", "enter": False},
                {"pane": pane, "text": " and rm -rf ./two", "enter": False},
            ]
            await client.ok("send_keys_batch", {"operations": operations})
            await shows(client, pane, "rm -rf ./one and rm -rf ./two")
            assert len(person.questions) == 1

    run(body)


def test_no_tool_takes_an_approval(tp: Termpilot) -> None:
    async def body() -> None:
        async with serve(tp, confirm_args()) as client:
            for tool in client.tools.values():
                properties = json.dumps(tool.input_schema).lower()
                assert "approv" not in properties and "confirm" not in properties, tool.name
            pane = await cat_pane(client, "work")
            result = await client.call("send_keys", {"pane": pane, "text": DANGER, "approve": True})
            assert result.is_error, text_of(result)
            await never_shows(client, pane, "nothing-here")

    run(body)


# --- scopes --------------------------------------------------------------------


def private_session(tp: Termpilot) -> None:
    """Starts the test's tmux server with a session named `private`, running cat."""
    subprocess.run(
        ["tmux", "-L", tp.socket, "-f", "/dev/null", "new-session", "-d", "-s", "private", "cat"],
        check=True,
        timeout=10,
    )


def private_pane(tp: Termpilot) -> str:
    done = subprocess.run(
        ["tmux", "-L", tp.socket, "display-message", "-p", "-t", "private:", "#{pane_id}"],
        check=True,
        timeout=10,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def same_error(outside: str, outside_target: str, missing: str, missing_target: str) -> None:
    """The two messages are the same but for the targets (or their session names)."""

    def masked(message: str, target: str) -> str:
        return message.replace(target, "TARGET").replace(target.split(":")[0], "SESSION")

    assert masked(outside, outside_target) == masked(missing, missing_target), (
        outside,
        missing,
    )


def test_sessions_outside_the_scope_are_hidden_and_refused(tp: Termpilot) -> None:
    private_session(tp)
    hidden = private_pane(tp)

    async def body() -> None:
        async with serve(tp, ["--allow-session", "agent-*", "--toolsets", "all"]) as client:
            message = await client.err("create_session", {"name": "mine"})
            assert "agent-*" in message, message
            await client.err("create_session", {})
            pane = (await client.ok("create_session", {"name": "agent-1"}))["pane"]
            assert await client.session_names() == ["agent-1"]
            assert [p["id"] for p in await client.panes()] == [pane]
            text = text_of(await client.call("list_panes"))
            assert "private" not in text and hidden not in text

            for tool, field, extra in [
                ("capture_pane", "pane", {}),
                ("send_keys", "pane", {"text": "leak"}),
                ("paste_text", "pane", {"text": "leak"}),
                ("wait_for_idle", "pane", {"timeout_s": 1}),
                ("split_pane", "pane", {"direction": "right"}),
                ("kill_pane", "pane", {}),
            ]:
                for outside, missing in [(hidden, "%9999"), ("private:0.0", "nosuch:0.0")]:
                    got = await client.err(tool, {field: outside, **extra})
                    want = await client.err(tool, {field: missing, **extra})
                    if "not found" not in want:
                        # Some tools report a missing pane id less plainly; the
                        # scope answers with the engine's not-found error.
                        want = f"pane {missing} not found; call list_panes to see the panes"
                    same_error(got, outside, want, missing)
            for tool, field in [("list_panes", "session"), ("create_window", "session"), ("kill_session", "session")]:
                got = await client.err(tool, {field: "private"})
                want = await client.err(tool, {field: "nosuch"})
                same_error(got, "private", want, "nosuch")
            got = await client.err("kill_window", {"window": "private:0"})
            want = await client.err("kill_window", {"window": "nosuch:0"})
            same_error(got, "private:0", want, "nosuch:0")
            # In a batch, such a target fails its own operation, as a missing one does.
            for outside, missing in [(hidden, "%9999"), ("private:0.0", "nosuch:0.0")]:
                reports = []
                for target in (outside, missing):
                    operations = [{"pane": pane, "text": "in-scope"}, {"pane": target, "text": "leak"}]
                    batch = await client.ok("send_keys_batch", {"operations": operations, "on_error": "continue"})
                    assert [r["ok"] for r in batch["results"]] == [True, False], batch
                    steps = [
                        {"op": "capture_pane", "pane": target},
                        {"op": "send_keys", "pane": target, "text": "leak"},
                    ]
                    run = await client.ok("run_batch", {"steps": steps, "on_error": "continue"})
                    reports.append((batch["results"][1], run["steps"]))
                (batch_out, steps_out), (batch_missing, steps_missing) = reports
                assert batch_out["pane"] == outside and batch_missing["pane"] == missing
                same_error(batch_out["error"], outside, batch_missing["error"], missing)
                assert [s["ok"] for s in steps_out] == [s["ok"] for s in steps_missing] == [False, False]
                for got, want in zip(steps_out, steps_missing):
                    if "not found" not in want["error"]:
                        want = {"error": f"pane {missing} not found; call list_panes to see the panes"}
                    same_error(got["error"], outside, want["error"], missing)
            # The agent's own session works as usual.
            await client.ok("send_keys", {"pane": pane, "text": "echo scoped"})

    run(body)
    # Nothing reached the private pane, which still lives.
    screen = subprocess.run(
        ["tmux", "-L", tp.socket, "capture-pane", "-p", "-t", hidden],
        check=True,
        timeout=10,
        capture_output=True,
        text=True,
    ).stdout
    assert "leak" not in screen, screen


def test_read_only_publishes_only_the_read_only_tools(tp: Termpilot) -> None:
    async def body() -> None:
        async with serve(tp, ["--read-only"]) as client:
            assert "list_panes" in client.tools and "capture_pane" in client.tools
            for tool in ("send_keys", "create_session", "run_command", "kill_pane"):
                assert tool not in client.tools, tool
            try:
                result = await client.call("send_keys", {"pane": "%0", "text": "x"})
            except Exception as error:  # an unknown tool is a protocol error
                message = str(error)
            else:
                assert result.is_error
                message = text_of(result)
            assert "toolset" in message, message

    run(body)


# --- over HTTP, configured through the environment -----------------------------


def test_approvals_and_audit_over_http(http_server: Any, monkeypatch: Any, tmp_path: Path) -> None:
    import httpx2
    import test_http
    from conftest import REQUEST_TIMEOUT, TEST_TIMEOUT
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    log = tmp_path / "audit.log"
    env = dict(test_http.SERVER_ENV, TERMPILOT_AUDIT=str(log), TERMPILOT_CONFIRM="rm\\s+-rf\n^reboot")
    monkeypatch.setattr(test_http, "SERVER_ENV", env)
    server = http_server()
    person = Person("decline")

    async def body() -> None:
        headers = {"Authorization": f"Bearer {server.token}"}
        timeout = httpx2.Timeout(REQUEST_TIMEOUT, read=TEST_TIMEOUT)
        async with httpx2.AsyncClient(headers=headers, timeout=timeout, trust_env=False) as http:
            async with streamable_http_client(server.url, http_client=http) as (read, write):
                async with ClientSession(read, write, elicitation_callback=person) as session:
                    await session.initialize()
                    client = Client(session, (await session.list_tools()).tools)
                    pane = await cat_pane(client, "web")
                    message = await client.err("send_keys", {"pane": pane, "text": DANGER})
                    assert "the person declined" in message, message
                    message = await client.err("send_keys", {"pane": pane, "text": "reboot"})
                    assert "the person declined" in message and "reboot" in message, message
                    person.action = "accept"
                    await client.ok("send_keys", {"pane": pane, "text": "reboot", "enter": False})
                    await shows(client, pane, "reboot")
                    await never_shows(client, pane, "nothing-here")
                    assert len(person.questions) == 3

    run(body)
    # The server is still running: its audit writer may be a moment behind.
    deadline = time.monotonic() + 10
    records = [r for r in lines(log) if r["tool"] == "send_keys"]
    while len(records) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
        records = [r for r in lines(log) if r["tool"] == "send_keys"]
    assert [r["transport"] for r in records] == ["http"] * 3
    assert [r["outcome"] for r in records] == ["error", "error", "ok"]
    assert [r["approval"].get("answer") for r in records] == ["decline", "decline", "approve"]
    assert "nothing-here" not in log.read_text()


def test_an_invalid_pattern_fails_start_up(tp: Termpilot) -> None:
    from conftest import BIN, SERVER_ENV

    done = subprocess.run(
        [BIN, "serve", "-L", tp.socket, "--confirm", "rm(", "--allow-session", "a*"],
        env=SERVER_ENV,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert done.returncode != 0
    assert "--confirm" in done.stderr and "regex" in done.stderr, done.stderr
