"""End-to-end tests of long calls as MCP tasks the way protocol 2025-11-25
has them (issue 24): `task` in the params of a `tools/call`, then
`tasks/get`, `tasks/result` (where the task's questions reach the client as
`elicitation/create` requests), `tasks/list` and `tasks/cancel`. The
official Python SDK pinned here has the types but no client for them, so
these tests speak the JSON-RPC themselves over stdio, after an `initialize`
at 2025-11-25. Each test has its own tmux server (the `tp` fixture).

One test runs a 30 s command (the issue's example), polled to completion,
with its progress notifications; the others are short.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from itertools import count
from typing import Any

import httpx2
import pytest
from conftest import REQUEST_TIMEOUT, TEST_TIMEOUT, Termpilot
from test_stdio import RawStdio
from test_tasks import CONFIGURED, SECRET, Serve

RELATED = "io.modelcontextprotocol/related-task"
TERMINAL = {"completed", "failed", "cancelled"}
# A server request the client answers: elicitation/create params -> result.
Answerer = Callable[[dict[str, Any]], dict[str, Any]]


class Session:
    """A 2025-11-25 session over stdio: numbered requests, the server's
    notifications kept, its requests answered by `answer`."""

    def __init__(self, raw: RawStdio) -> None:
        self.raw = raw
        self.ids = count(1)
        self.notifications: list[dict[str, Any]] = []
        self.asked: list[dict[str, Any]] = []
        # Every message the server sent, as it came.
        self.seen: list[str] = []
        self.answer: Answerer = lambda params: {"action": "decline"}

    def reply(self, method: str, params: dict[str, Any], timeout: float = REQUEST_TIMEOUT) -> dict[str, Any]:
        """The reply (result or error) to one request, bounded by `timeout`."""
        request_id = next(self.ids)
        self.raw.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            message = self.raw.receive(max(0.1, deadline - time.monotonic()))
            self.seen.append(json.dumps(message))
            if "method" in message and "id" in message:
                self.asked.append(message)
                self.raw.send({"jsonrpc": "2.0", "id": message["id"], "result": self.answer(message["params"])})
            elif "method" in message:
                self.notifications.append(message)
            elif message.get("id") == request_id:
                return message

    def request(self, method: str, params: dict[str, Any], timeout: float = REQUEST_TIMEOUT) -> dict[str, Any]:
        reply = self.reply(method, params, timeout)
        assert "result" in reply, reply
        return reply["result"]

    def call(self, name: str, arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
        return self.request("tools/call", {"name": name, "arguments": arguments, **extra})

    def task(self, task_id: str) -> dict[str, Any]:
        return self.request("tasks/get", {"taskId": task_id})

    def until(self, task_id: str, *statuses: str, bound: float = TEST_TIMEOUT) -> dict[str, Any]:
        """Polls the task until it has one of `statuses` (bounded)."""
        deadline = time.monotonic() + bound
        while time.monotonic() < deadline:
            task = self.task(task_id)
            if task["status"] in statuses:
                return task
            assert task["status"] not in TERMINAL, task
            time.sleep(0.2)
        raise AssertionError(f"task {task_id} never reached {statuses}")


def opened(raw: RawStdio, elicitation: dict[str, Any]) -> Session:
    """A session at 2025-11-25 whose client elicits in these modes."""
    client = Session(raw)
    capabilities = {"elicitation": elicitation, "tasks": {"list": {}, "cancel": {}}}
    init = {"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "t", "version": "1"}}
    client.initialized = client.request("initialize", init)
    raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return client


@pytest.fixture
def session(tp: Termpilot) -> Iterator[Session]:
    raw = RawStdio(tp)
    try:
        yield opened(raw, {"form": {}})
    finally:
        raw.close()


def new_pane(session: Session) -> str:
    return session.call("create_session", {"name": "work"})["structuredContent"]["pane"]


def started(result: dict[str, Any]) -> str:
    task = result["task"]
    assert task["status"] == "working" and task["taskId"], result
    assert task["ttl"] > 0 and task["pollInterval"] > 0 and task["createdAt"], result
    return task["taskId"]


def test_the_server_says_which_tools_run_as_tasks(session: Session) -> None:
    tasks = session.initialized["capabilities"]["tasks"]
    assert tasks["requests"]["tools"]["call"] == {} and "list" in tasks and "cancel" in tasks, tasks
    tools = {tool["name"]: tool for tool in session.request("tools/list", {})["tools"]}
    for name in ["run_command", "wait_for_command", "wait_for_text", "wait_for_idle", "wait_for_channel", "run_batch"]:
        assert tools[name]["execution"] == {"taskSupport": "optional"}, tools[name]
    assert tools["list_panes"]["execution"] == {"taskSupport": "forbidden"}, tools["list_panes"]
    # A tool that does not run as a task, asked to: method not found.
    refused = session.reply("tools/call", {"name": "list_panes", "arguments": {}, "task": {}})
    assert refused["error"]["code"] == -32601, refused
    assert session.reply("tasks/get", {"taskId": "made-up"})["error"]["code"] == -32602


def test_a_30_s_command_runs_as_a_task_polled_to_completion_with_its_progress(session: Session) -> None:
    pane = new_pane(session)
    command = "for i in $(seq 1 30); do echo tick-$i; sleep 1; done; echo done-$((6*7))"
    arguments = {"pane": pane, "command": command, "timeout_s": 120}
    task_id = started(session.call("run_command", arguments, task={"ttl": 60_000}, _meta={"progressToken": "p30"}))
    # Polled every second while it runs: working, for longer and longer, the
    # pane's last line going from tick to tick.
    messages: list[str] = []
    deadline = time.monotonic() + 90
    while (task := session.task(task_id))["status"] == "working":
        assert time.monotonic() < deadline, messages[-3:]
        messages.append(task["statusMessage"])
        time.sleep(1)
    assert task["status"] == "completed", task
    working = [m for m in messages if "working for" in m and "last line: tick-" in m]
    assert len(working) >= 20, messages
    seconds = [int(m.split("working for ")[1].split(" s")[0]) for m in working]
    ticks = [int(m.split("last line: tick-")[1].split()[0]) for m in working]
    assert seconds == sorted(seconds) and seconds[-1] >= 25, working
    assert ticks == sorted(ticks) and ticks[-1] >= 25, working
    # The result: what the plain call returns, tied to its task.
    result = session.request("tasks/result", {"taskId": task_id})
    assert result["_meta"][RELATED] == {"taskId": task_id}, result
    entry = result["structuredContent"]
    assert result["isError"] is False and entry["exit_code"] == 0 and "done-42" in entry["output"], result
    listed = session.request("tasks/list", {})["tasks"]
    assert [t["status"] for t in listed if t["taskId"] == task_id] == ["completed"], listed
    # Progress on the call's token all along: one total, values that only
    # increase, the total reached when the task ended.
    progress = [n["params"] for n in session.notifications if n["method"] == "notifications/progress"]
    assert all(p["progressToken"] == "p30" for p in progress), progress
    assert len(progress) >= 20, progress
    assert {p["total"] for p in progress} == {120}, progress
    values = [p["progress"] for p in progress]
    assert all(a < b for a, b in zip(values, values[1:])), values
    assert values[-1] == 120 and "done after" in progress[-1]["message"], progress[-1]


def test_a_prompt_inside_a_task_is_asked_through_tasks_result(session: Session) -> None:
    pane = new_pane(session)
    command = "read -p 'Your name? ' name; echo hello-$name-done"
    task_id = started(session.call("run_command", {"pane": pane, "command": command, "timeout_s": 60}, task={}))
    session.until(task_id, "input_required")
    session.answer = lambda params: {"action": "accept", "content": {"answer": "world"}}
    result = session.request("tasks/result", {"taskId": task_id}, timeout=TEST_TIMEOUT)
    # The question came as a request of its own, tied to the task.
    [asked] = session.asked
    assert asked["method"] == "elicitation/create", asked
    assert asked["params"]["_meta"][RELATED] == {"taskId": task_id}, asked
    assert "Your name?" in asked["params"]["message"], asked
    entry = result["structuredContent"]
    assert entry["exit_code"] == 0 and "hello-world-done" in entry["output"], result
    assert session.task(task_id)["status"] == "completed"
    # The status changes are told too, each with the whole task (the server
    # looks every 100 ms: the notification may come a moment after the
    # result, and a short input_required may be missed).
    deadline = time.monotonic() + REQUEST_TIMEOUT
    while True:
        told = [n["params"] for n in session.notifications if n["method"] == "notifications/tasks/status"]
        if [t["status"] for t in told][-1:] == ["completed"] or time.monotonic() > deadline:
            break
        session.task(task_id)
        time.sleep(0.1)
    assert [t["status"] for t in told][-1:] == ["completed"], told
    assert all(t["taskId"] == task_id and t["createdAt"] for t in told), told


def test_a_hidden_prompt_inside_a_task_is_answered_by_the_person_on_the_secret_page(tp: Termpilot) -> None:
    # A configured secret named "prompt" is not typed: the person is asked.
    server = Serve(tp, ["--secret", "prompt=env:TP_E2E_PROMPT"])
    try:
        session = opened(server, {"url": {}})
        pane = new_pane(session)
        command = "stty -echo; printf 'Password: '; read pw; stty echo; echo; echo got-${#pw}-chars: $pw"
        task_id = started(session.call("run_command", {"pane": pane, "command": command, "timeout_s": 60}, task={}))
        session.until(task_id, "input_required")

        def person_types_it(params: dict[str, Any]) -> dict[str, Any]:
            # The person types the secret on the page; the client only says it is done.
            assert params["mode"] == "url" and params["url"].startswith("http://127.0.0.1:"), params
            with httpx2.Client(timeout=REQUEST_TIMEOUT, trust_env=False) as page:
                assert page.post(params["url"], data={"secret": SECRET}).status_code == 200
            return {"action": "accept"}

        session.answer = person_types_it
        result = session.request("tasks/result", {"taskId": task_id}, timeout=TEST_TIMEOUT)
        [asked] = session.asked
        assert asked["params"]["_meta"][RELATED] == {"taskId": task_id}, asked
        entry = result["structuredContent"]
        assert entry["exit_code"] == 0 and f"got-{len(SECRET)}-chars: [secret hidden prompt]" in entry["output"], entry
        assert f"got-{len(CONFIGURED)}-chars" not in entry["output"], entry
        assert all(SECRET not in message for message in session.seen), "the secret reached the client"
    finally:
        server.close()


def test_cancel_interrupts_the_command_and_answers_with_the_cancelled_task(session: Session) -> None:
    pane = new_pane(session)
    arguments = {"pane": pane, "command": "echo started; sleep 600", "timeout_s": 900}
    task_id = started(session.call("run_command", arguments, task={}))
    deadline = time.monotonic() + TEST_TIMEOUT
    while "started" not in session.task(task_id).get("statusMessage", "").partition("last line:")[2]:
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.2)
    cancelled = session.request("tasks/cancel", {"taskId": task_id}, timeout=TEST_TIMEOUT)
    assert cancelled["taskId"] == task_id and cancelled["status"] == "cancelled", cancelled
    assert "pressed C-c and the command stopped" in cancelled["statusMessage"], cancelled
    again = session.reply("tasks/cancel", {"taskId": task_id})
    assert again["error"]["code"] == -32602, again
    result = session.request("tasks/result", {"taskId": task_id})
    assert result["isError"] is True and "pressed C-c" in result["content"][0]["text"], result
    after = session.call("run_command", {"pane": pane, "command": "echo back", "timeout_s": 10})
    assert after["structuredContent"]["exit_code"] == 0, after
