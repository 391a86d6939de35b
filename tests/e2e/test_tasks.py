"""End-to-end tests of long calls as MCP tasks (issue 24): the
`io.modelcontextprotocol/tasks` extension of protocol 2026-07-28, which the
official Python SDK pinned here does not implement, so these tests speak its
JSON-RPC themselves, over stdio (`serve` on pipes) and stateless HTTP. Each
test has its own tmux server (the `tp` fixture).

The long command is 5 s, which spans several polls; the issue's 30 s example
runs once, in test_tasks_2025.py (the 2025-11-25 flavour of the same tasks).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import Iterator
from itertools import count
from typing import Any

import httpx2
import pytest
from conftest import BIN, REQUEST_TIMEOUT, SERVER_ENV, TEST_TIMEOUT, Termpilot
from test_http import headers, http_server, message_of, raw_client  # noqa: F401 (http_server: a fixture)
from test_stdio import RawStdio

TASKS = "io.modelcontextprotocol/tasks"
# A 2026-07-28 request names its version and what the client can do; this
# client takes tasks and answers form questions.
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "tasks-e2e", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}, "elicitation": {"form": {}}},
}
SECRET = "Pa55-typed-on-the-page"
CONFIGURED = "configured-never-typed-here"
PLAIN_META = META | {"io.modelcontextprotocol/clientCapabilities": {}}


class Rpc:
    """Numbered JSON-RPC requests over any transport that answers one."""

    def __init__(self, send: Any) -> None:
        self.send = send
        self.ids = count(1)
        # The server's notifications seen meanwhile (over stdio).
        self.notifications: list[dict[str, Any]] = []

    def request(self, method: str, params: dict[str, Any], meta: dict[str, Any] = META) -> dict[str, Any]:
        reply = self.send({"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": params | {"_meta": meta}})
        assert "result" in reply, reply
        return reply["result"]

    def call(self, name: str, arguments: dict[str, Any], meta: dict[str, Any] = META) -> dict[str, Any]:
        return self.request("tools/call", {"name": name, "arguments": arguments}, meta)

    def task(self, task_id: str) -> dict[str, Any]:
        return self.request("tasks/get", {"taskId": task_id})

    def until(self, task_id: str, *statuses: str) -> dict[str, Any]:
        """Polls the task until it has one of `statuses` (bounded)."""
        deadline = time.monotonic() + TEST_TIMEOUT
        seen: list[str] = []
        while time.monotonic() < deadline:
            task = self.task(task_id)
            if task["status"] in statuses:
                return task
            seen.append(task["status"])
            assert task["status"] not in {"completed", "failed", "cancelled"}, json.dumps(task)
            time.sleep(0.2)
        raise AssertionError(f"task {task_id} never reached {statuses}; saw {seen[-5:]}")


class Serve(RawStdio):
    """`termpilot serve` on pipes, with extra arguments."""

    def __init__(self, tp: Termpilot, args: list[str] | None = None) -> None:
        env = dict(SERVER_ENV, PATH=os.environ["PATH"], TP_E2E_PROMPT=CONFIGURED)
        command = [BIN, "serve", "-L", tp.socket, *(args or [])]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(tp.log_path, "ab"), env=env
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()


def stdio_rpc(raw: RawStdio) -> Rpc:
    def send(message: dict[str, Any]) -> dict[str, Any]:
        raw.send(message)
        while True:
            reply = raw.receive()
            if reply.get("id") == message["id"]:
                return reply
            if "method" in reply and "id" not in reply:
                rpc.notifications.append(reply)

    rpc = Rpc(send)
    return rpc


@pytest.fixture
def rpc(tp: Termpilot) -> Iterator[Rpc]:
    server = RawStdio(tp)
    try:
        yield stdio_rpc(server)
    finally:
        server.close()


def new_pane(rpc: Rpc, name: str = "work") -> str:
    made = rpc.call("create_session", {"name": name}, PLAIN_META)
    return made["structuredContent"]["pane"]


def started(result: dict[str, Any]) -> str:
    assert result["resultType"] == "task", result
    assert result["status"] == "working" and result["taskId"], result
    assert result["ttlMs"] > 0 and result["pollIntervalMs"] > 0, result
    return result["taskId"]


def test_a_long_command_runs_as_a_task_polled_to_completion(rpc: Rpc) -> None:
    pane = new_pane(rpc)
    command = "for i in 1 2 3 4 5; do echo tick-$i; sleep 1; done; echo done-$((6*7))"
    arguments = {"pane": pane, "command": command, "timeout_s": 60}
    task_id = started(rpc.call("run_command", arguments, META | {"progressToken": "p5"}))
    # While it runs: working, saying for how long and what the pane shows.
    working = rpc.until(task_id, "working")
    deadline = time.monotonic() + TEST_TIMEOUT
    while "last line: tick-" not in working.get("statusMessage", ""):
        assert time.monotonic() < deadline and working["status"] == "working", working
        time.sleep(0.2)
        working = rpc.task(task_id)
    assert "run_command: working for" in working["statusMessage"], working
    done = rpc.until(task_id, "completed")
    assert done["statusMessage"].startswith("run_command: done after"), done
    result = done["result"]
    assert result["isError"] is False, result
    assert result["structuredContent"]["exit_code"] == 0, result
    assert "done-42" in result["structuredContent"]["output"], result
    # The same result as a plain call: its text form too.
    assert result["content"][0]["text"].startswith("exit 0 in "), result
    # Its progress, on the call's token: one total (the call's timeout),
    # values that only increase, the total when it ended.
    progress = [n["params"] for n in rpc.notifications if n["method"] == "notifications/progress"]
    assert progress and all(p["progressToken"] == "p5" and p["total"] == 60 for p in progress), progress
    values = [p["progress"] for p in progress]
    assert all(a < b for a, b in zip(values, values[1:])) and values[-1] == 60, values
    # A client without the extension gets the plain result, not a task.
    plain = rpc.call("run_command", {"pane": pane, "command": "echo plain"}, PLAIN_META)
    assert "resultType" not in plain or plain["resultType"] == "complete", plain
    assert plain["structuredContent"]["exit_code"] == 0, plain


def test_a_task_id_nobody_made_is_an_error(rpc: Rpc) -> None:
    reply = rpc.send({"jsonrpc": "2.0", "id": 99, "method": "tasks/get", "params": {"taskId": "made-up", "_meta": META}})
    assert reply["error"]["code"] == -32602, reply


def only_question(task: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    requests = task["inputRequests"]
    assert len(requests) == 1, task
    key, request = next(iter(requests.items()))
    assert request["method"] == "elicitation/create", request
    return key, request["params"]


def test_a_prompt_inside_a_task_asks_the_client_and_the_task_goes_on(rpc: Rpc) -> None:
    pane = new_pane(rpc)
    command = "read -p 'Your name? ' name; sleep 1; echo hello-$name-done"
    task_id = started(rpc.call("run_command", {"pane": pane, "command": command, "timeout_s": 60}))
    asking = rpc.until(task_id, "input_required")
    key, question = only_question(asking)
    assert "Your name?" in question["message"] and "waits for input" in question["message"], question
    assert "answer" in question["requestedSchema"]["properties"], question
    rpc.request("tasks/update", {"taskId": task_id, "inputResponses": {key: {"action": "accept", "content": {"answer": "world"}}}})
    done = rpc.until(task_id, "completed")
    entry = done["result"]["structuredContent"]
    assert entry["exit_code"] == 0 and "hello-world-done" in entry["output"], entry
    assert entry["awaiting_input"] is False, entry


def test_a_declined_prompt_ends_the_task_with_the_awaiting_input_result(rpc: Rpc) -> None:
    pane = new_pane(rpc)
    task_id = started(rpc.call("run_command", {"pane": pane, "command": "read -p 'Sure? ' x; echo typed-$x"}))
    key, _ = only_question(rpc.until(task_id, "input_required"))
    rpc.request("tasks/update", {"taskId": task_id, "inputResponses": {key: {"action": "decline"}}})
    entry = rpc.until(task_id, "completed")["result"]["structuredContent"]
    assert entry["awaiting_input"] is True and "Sure?" in entry["prompt"], entry
    assert entry["command_id"], entry
    assert "typed-" not in entry["output"], entry


def test_cancel_interrupts_a_command_running_as_a_task(rpc: Rpc) -> None:
    pane = new_pane(rpc)
    task_id = started(rpc.call("run_command", {"pane": pane, "command": "echo started; sleep 600", "timeout_s": 900}))
    deadline = time.monotonic() + TEST_TIMEOUT
    while "started" not in rpc.task(task_id).get("statusMessage", "").partition("last line:")[2]:
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.2)
    assert rpc.request("tasks/cancel", {"taskId": task_id}).get("resultType", "complete") == "complete"
    cancelled = rpc.until(task_id, "cancelled")
    message = cancelled["statusMessage"]
    assert "pressed C-c" in message and "interrupted" in message, cancelled
    # The shell has its prompt back: a plain call runs at once.
    after = rpc.call("run_command", {"pane": pane, "command": "echo back-$((1+1))", "timeout_s": 10}, PLAIN_META)
    assert after["structuredContent"]["exit_code"] == 0 and "back-2" in after["structuredContent"]["output"], after


def test_cancel_stops_a_wait_running_as_a_task(rpc: Rpc) -> None:
    task_id = started(rpc.call("wait_for_channel", {"channel": "never-signalled", "timeout_s": 600}))
    rpc.until(task_id, "working")
    rpc.request("tasks/cancel", {"taskId": task_id})
    cancelled = rpc.until(task_id, "cancelled")
    assert "wait_for_channel call stopped" in cancelled["statusMessage"], cancelled


def test_a_hidden_prompt_inside_a_task_is_answered_by_the_person_on_the_secret_page(tp: Termpilot) -> None:
    # A configured secret named "prompt" is not typed: the person is asked.
    server = Serve(tp, ["--secret", "prompt=env:TP_E2E_PROMPT"])
    replies: list[str] = []
    plain = stdio_rpc(server)

    def send(message: dict[str, Any]) -> dict[str, Any]:
        reply = plain.send(message)
        replies.append(json.dumps(reply))
        return reply

    rpc = Rpc(send)
    url_mode = META | {
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}, "elicitation": {"url": {}}}
    }
    try:
        pane = new_pane(rpc)
        command = "stty -echo; printf 'Password: '; read pw; stty echo; echo; echo got-${#pw}-chars: $pw"
        task_id = started(rpc.call("run_command", {"pane": pane, "command": command, "timeout_s": 60}, url_mode))
        key, question = only_question(rpc.until(task_id, "input_required"))
        # The person types the secret on the page; the client only says it is done.
        assert question["mode"] == "url" and question["url"].startswith("http://127.0.0.1:"), question
        with httpx2.Client(timeout=REQUEST_TIMEOUT, trust_env=False) as page:
            assert page.post(question["url"], data={"secret": SECRET}).status_code == 200
        rpc.request("tasks/update", {"taskId": task_id, "inputResponses": {key: {"action": "accept"}}})
        entry = rpc.until(task_id, "completed")["result"]["structuredContent"]
        assert entry["exit_code"] == 0 and f"got-{len(SECRET)}-chars: [secret hidden prompt]" in entry["output"], entry
        assert f"got-{len(CONFIGURED)}-chars" not in entry["output"], entry
        assert all(SECRET not in reply for reply in replies), "the secret reached the client"
    finally:
        server.close()


def test_tasks_beyond_max_tasks_are_refused(tp: Termpilot) -> None:
    server = Serve(tp, ["--max-tasks", "1"])
    rpc = stdio_rpc(server)
    try:
        first = started(rpc.call("wait_for_channel", {"channel": "never-a", "timeout_s": 600}))
        second = rpc.call("wait_for_channel", {"channel": "never-b", "timeout_s": 600})
        assert second["isError"] is True and "--max-tasks" in second["content"][0]["text"], second
        rpc.request("tasks/cancel", {"taskId": first})
        rpc.until(first, "cancelled")
        started(rpc.call("wait_for_channel", {"channel": "never-c", "timeout_s": 600}))
    finally:
        server.close()


def http_rpc(http: httpx2.Client, server: Any) -> Rpc:
    def send(message: dict[str, Any]) -> dict[str, Any]:
        extra = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": message["method"]}
        name = message["params"].get("name", message["params"].get("taskId"))
        if name is not None:
            extra["Mcp-Name"] = name
        response = http.post(server.url, headers=headers(server, **extra), json=message)
        assert response.status_code == 200, response.text
        return message_of(response)

    return Rpc(send)


def test_a_task_is_read_from_a_new_http_connection_with_the_token(http_server: Any) -> None:
    server = http_server()
    with raw_client() as first:
        rpc = http_rpc(first, server)
        pane = new_pane(rpc)
        task_id = started(rpc.call("run_command", {"pane": pane, "command": "sleep 2; echo over-http", "timeout_s": 60}))
    # The first client is gone; another polls the task with the same token.
    with raw_client() as second:
        done = http_rpc(second, server).until(task_id, "completed")
        assert "over-http" in done["result"]["structuredContent"]["output"], done
        body = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"taskId": task_id, "_meta": META}}
        extra = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tasks/get", "Mcp-Name": task_id}
        wrong = headers(server, **extra) | {"Authorization": "Bearer not-the-token"}
        assert second.post(server.url, headers=wrong, json=body).status_code == 401


def test_cancel_while_a_task_asks_interrupts_the_waiting_command(rpc: Rpc) -> None:
    pane = new_pane(rpc)
    task_id = started(rpc.call("run_command", {"pane": pane, "command": "read -p 'Go on? ' x; echo went-$x"}))
    rpc.until(task_id, "input_required")
    rpc.request("tasks/cancel", {"taskId": task_id})
    cancelled = rpc.until(task_id, "cancelled")
    assert "pressed C-c and the command stopped" in cancelled["statusMessage"], cancelled
    after = rpc.call("run_command", {"pane": pane, "command": "echo back", "timeout_s": 10}, PLAIN_META)
    assert after["structuredContent"]["exit_code"] == 0, after


def test_an_approval_inside_a_task_is_asked_through_the_task_and_audited(tp: Termpilot, tmp_path: Any) -> None:
    log = tmp_path / "audit.jsonl"
    server = Serve(tp, ["--confirm", r"rm\s+-rf", "--audit", str(log)])
    rpc = stdio_rpc(server)
    try:
        pane = new_pane(rpc)
        command = "rm -rf ./nothing-here; echo removed-$?"
        task_id = started(rpc.call("run_command", {"pane": pane, "command": command, "timeout_s": 60}))
        key, question = only_question(rpc.until(task_id, "input_required"))
        assert "rm -rf ./nothing-here" in question["message"], question
        answer = {"action": "accept", "content": {"approve": True}}
        rpc.request("tasks/update", {"taskId": task_id, "inputResponses": {key: answer}})
        entry = rpc.until(task_id, "completed")["result"]["structuredContent"]
        assert entry["exit_code"] == 0 and "removed-0" in entry["output"], entry
        # A declined one types nothing.
        task_id = started(rpc.call("run_command", {"pane": pane, "command": "rm -rf ./other; echo never-typed"}))
        key, _ = only_question(rpc.until(task_id, "input_required"))
        rpc.request("tasks/update", {"taskId": task_id, "inputResponses": {key: {"action": "decline"}}})
        refused = rpc.until(task_id, "completed")["result"]
        assert refused["isError"] is True and "declined" in refused["content"][0]["text"], refused
        # What the task types on its own (an answer to a prompt, a C-c) is audited as send_keys.
        task_id = started(rpc.call("run_command", {"pane": pane, "command": "read -p 'Name? ' n; echo hi-$n"}))
        key, _ = only_question(rpc.until(task_id, "input_required"))
        rpc.request("tasks/update", {"taskId": task_id, "inputResponses": {key: {"action": "accept", "content": {"answer": "bob"}}}})
        assert "hi-bob" in rpc.until(task_id, "completed")["result"]["structuredContent"]["output"]
        task_id = started(rpc.call("run_command", {"pane": pane, "command": "echo started; sleep 600"}))
        # Cancelled once it runs (a C-c while the line is still being typed is
        # another case: test_cancel_interrupts_a_command_running_as_a_task).
        deadline = time.monotonic() + TEST_TIMEOUT
        while "started" not in rpc.task(task_id).get("statusMessage", "").partition("last line:")[2]:
            assert time.monotonic() < deadline, "the command never started"
            time.sleep(0.2)
        rpc.request("tasks/cancel", {"taskId": task_id})
        rpc.until(task_id, "cancelled")
    finally:
        server.close()
    records = [json.loads(line) for line in log.read_text().splitlines()]
    ran = [(r["outcome"], r["approval"].get("answer")) for r in records if r["tool"] == "run_command"]
    assert ran == [("ok", "approve"), ("error", "decline"), ("ok", None), ("ok", None)], records
    typed = [r for r in records if r["tool"] == "send_keys"]
    assert [r["outcome"] for r in typed] == ["ok", "ok"] and all(r["client"]["name"] == "tasks-e2e" for r in typed), typed


def test_finished_tasks_kept_are_bounded_too(tp: Termpilot) -> None:
    server = Serve(tp, ["--max-tasks", "1"])
    rpc = stdio_rpc(server)
    try:
        # One may run, eight (running or finished, with their results) are kept.
        for n in range(8):
            task_id = started(rpc.call("wait_for_channel", {"channel": f"c{n}", "timeout_s": 0.01}))
            assert rpc.until(task_id, "completed")["result"]["structuredContent"]["outcome"] == "timeout"
        refused = rpc.call("wait_for_channel", {"channel": "c9", "timeout_s": 0.01})
        assert refused["isError"] is True and "kept with their results" in refused["content"][0]["text"], refused
        # The kept ones can still be read.
        assert rpc.task(task_id)["status"] == "completed"
    finally:
        server.close()
