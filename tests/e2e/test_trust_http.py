"""HTTP callers are isolated (issue 21, class 6): a kept output (`o…`) and a
question waiting for the person's answer (`requestState`) belong to the HTTP
session, or the stateless caller, that made them; any other caller gets the
answer for an id that never existed. Kept-output ids are random, not
sequential. Through the official MCP Python SDK (and raw HTTP where the SDK
would not send what an attacker sends)."""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
import httpx2
import mcp_types as types
from conftest import REQUEST_TIMEOUT, TEST_TIMEOUT, Client, poll, text_of
from test_elicitation import MODERN, FormPerson, Modern, http_modern
from test_http import http_server, run, session  # noqa: F401 (a fixture)
from test_person import never_shows, shows

ID_RE = re.compile(r"^o[1-9][0-9]{11}$")
MADE_UP = "o123456789012"


async def listed(client: Any) -> Client:
    return Client(client, (await client.list_tools()).tools)


async def cut_output(client: Client, name: str) -> str:
    """The id of a kept output: a capture of a long output, cut."""
    pane = (await client.ok("create_session", {"name": name, "command": "seq 1 3000; sleep 600"}))["pane"]

    async def cut() -> str | None:
        captured = await client.ok("capture_pane", {"pane": pane, "scrollback": "all", "max_tokens": 100})
        return captured.get("output_id")

    return await poll(cut, 10.0, f"a cut capture of {pane}")


def same_words(message: str, output_id: str, other: str, other_id: str) -> None:
    assert message.replace(output_id, "ID") == other.replace(other_id, "ID"), (message, other)


def test_a_kept_output_is_read_only_by_the_session_that_made_it(http_server: Any) -> None:
    server = http_server()

    async def body() -> None:
        async with session(server) as a_session, session(server) as b_session:
            a, b = await listed(a_session), await listed(b_session)
            first = await cut_output(a, "first")
            page = await a.ok("read_output", {"output_id": first, "offset": 0, "limit": 3})
            assert page["text"].splitlines()[:3] == ["1", "2", "3"], page
            # Another session: "not found", as for an id that never existed.
            stolen = await b.err("read_output", {"output_id": first})
            never = await b.err("read_output", {"output_id": MADE_UP})
            assert "1\n2\n3" not in stolen
            same_words(stolen, first, never, MADE_UP)
            # Ids are random: nothing to learn from one's own.
            second = await cut_output(a, "second")
            for output_id in (first, second):
                assert ID_RE.match(output_id), output_id
            assert abs(int(first[1:]) - int(second[1:])) > 1000, (first, second)
            # A stateless caller (protocol 2026-07-28) neither.
            async with http_modern(server, FormPerson("accept")) as modern:
                stateless = Modern(modern)
                stolen = await stateless.err("read_output", {"output_id": second})
                same_words(stolen, second, never, MADE_UP)
            # Still the maker's.
            assert (await a.ok("read_output", {"output_id": second, "limit": 1}))["text"] == "1"

    run(body)


class RawSession:
    """An HTTP session made by hand: initialize, then requests in the session
    with whatever headers an attacker chooses."""

    def __init__(self, server: Any, http: httpx2.AsyncClient) -> None:
        self.server = server
        self.http = http
        self.session_id = ""
        self.next_id = 1

    async def post(self, message: dict[str, Any], **headers: str) -> httpx2.Response:
        base = {
            "Authorization": f"Bearer {self.server.token}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        if self.session_id:
            base["Mcp-Session-Id"] = self.session_id
        return await self.http.post(self.server.url, content=json.dumps(message), headers=base | headers)

    async def open(self) -> None:
        initialize = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "other", "version": "1"}},
        }
        response = await self.post(initialize)
        assert response.status_code == 200, response.text
        self.session_id = response.headers["mcp-session-id"]
        done = await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert done.status_code in (200, 202), done.text

    async def call(self, name: str, arguments: dict[str, Any], **params: Any) -> dict[str, Any]:
        """A tools/call; its JSON-RPC answer (from JSON or an event stream)."""
        self.next_id += 1
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
            "io.modelcontextprotocol/clientInfo": {"name": "other", "version": "1"},
        }
        message = {
            "jsonrpc": "2.0",
            "id": self.next_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": meta, **params},
        }
        headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": name}
        response = await self.post(message, **headers)
        text = response.text
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
            answers = [json.loads(d) for d in data if d and json.loads(d).get("id") == self.next_id]
            assert answers, text
            return answers[0]
        return json.loads(text)


def test_a_pending_question_is_answered_only_by_the_caller_asked(http_server: Any, monkeypatch: Any) -> None:
    import test_http

    monkeypatch.setattr(test_http, "SERVER_ENV", dict(test_http.SERVER_ENV, TERMPILOT_CONFIRM="rm\\s+-rf"))
    server = http_server()
    yes = {"approve": types.ElicitResult(action="accept", content={"approve": True})}
    yes_json = {"approve": {"action": "accept", "content": {"approve": True}}}

    async def body() -> None:
        timeout = httpx2.Timeout(REQUEST_TIMEOUT, read=TEST_TIMEOUT)
        async with (
            http_modern(server, FormPerson("accept")) as modern,
            httpx2.AsyncClient(timeout=timeout, trust_env=False) as http,
        ):
            asker = Modern(modern)
            pane = (await asker.ok("create_session", {"name": "work", "command": "cat"}))["pane"]
            arguments = {"pane": pane, "text": "rm -rf ./stolen", "enter": False}
            asked = await modern.session.call_tool("send_keys", arguments, allow_input_required=True)
            assert isinstance(asked, types.InputRequiredResult), asked
            handle = asked.request_state
            assert handle
            # Another caller (an HTTP session) brings the answer with the handle.
            other = RawSession(server, http)
            await other.open()
            stolen = await other.call("send_keys", arguments, inputResponses=yes_json, requestState=handle)
            never = await other.call("send_keys", arguments, inputResponses=yes_json, requestState="0" * 32)
            stolen_result, never_result = stolen.get("result", {}), never.get("result", {})
            assert stolen_result.get("isError") is True, stolen
            assert stolen_result["content"] == never_result["content"], (stolen, never)
            await never_shows(asker, pane, "stolen")
            # The caller asked can still answer: the handle was not spent.
            done = await modern.session.call_tool(
                "send_keys", arguments, input_responses=yes, request_state=handle, allow_input_required=True
            )
            assert isinstance(done, types.CallToolResult) and not done.is_error, text_of(done)
            await shows(asker, pane, "rm -rf ./stolen")

    run(body)
