"""End-to-end tests of asking the person (issue 16) beyond form approvals:
secrets the person types on a one-shot page (URL-mode elicitation, for a
`type_secret` name that is not configured), and elicitation under protocol
2026-07-28, where questions go out as input-required results and come back
with the retried call (over stdio and stateless HTTP). The client is the
official MCP Python SDK; each test has its own tmux server (the `tp` fixture).
"""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from conftest import BIN, REQUEST_TIMEOUT, SERVER_ENV, TEST_TIMEOUT, Client, Termpilot, poll, text_of
from test_person import never_shows, shows
from mcp.client.client import Client as ModernClient
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from test_audit import lines, run
from test_http import http_server  # noqa: F401 (a fixture)

VALUE = "Pa55-w0rd-typed-by-the-person"
CONFIGURED = "db"
# A pane whose program waits at a hidden prompt, then prints the answer back.
READ_SECRET = "bash --norc --noprofile -c 'read -s -p \"Password: \" pw; echo; echo \"got ${#pw} chars: $pw\"; sleep 60'"
DANGER = "rm -rf ./nothing-here"
MODERN = "2026-07-28"


def env(**extra: str) -> dict[str, str]:
    return SERVER_ENV | {"TP_E2E_DB": "configured-value"} | extra


def args(*extra: str) -> list[str]:
    return ["--secret", f"{CONFIGURED}=env:TP_E2E_DB", *extra]


class RecordingClient(Client):
    """A Client that keeps the text of every result."""

    def __init__(self, session: ClientSession, tools: list[Any]) -> None:
        super().__init__(session, tools)
        self.seen: list[str] = []

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> types.CallToolResult:
        result = await self.session.call_tool(name, arguments or {}, read_timeout_seconds=TEST_TIMEOUT)
        self.seen.append(text_of(result))
        self.seen.append(json.dumps(result.structured_content))
        return result


class FormOnlySession(ClientSession):
    """A client that declares form-mode elicitation only, not URL mode."""

    def _build_capabilities(self, version: str) -> types.ClientCapabilities:
        capabilities = super()._build_capabilities(version)
        form = types.ElicitationCapability(form=types.FormElicitationCapability())
        return capabilities.model_copy(update={"elicitation": form})


@asynccontextmanager
async def serve(tp: Termpilot, extra: list[str], server_env: dict[str, str] | None = None, session_class=ClientSession, **session: Any):
    params = StdioServerParameters(command=BIN, args=["serve", "-L", tp.socket, *extra], env=server_env or env())
    with open(tp.log_path, "a", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with session_class(read, write, read_timeout_seconds=TEST_TIMEOUT, **session) as s:
                await s.initialize()
                client = RecordingClient(s, (await s.list_tools()).tools)
                yield client
                for seen in client.seen:
                    assert VALUE not in seen, f"the value was returned: {seen}"


def http() -> httpx2.Client:
    # trust_env=False: a proxy set in the environment must not carry loopback requests.
    return httpx2.Client(timeout=REQUEST_TIMEOUT, trust_env=False)


def submit(url: str, value: str = VALUE) -> int:
    with http() as client:
        return client.post(url, data={"secret": value}).status_code


class Person:
    """A URL-mode elicitation callback: records each question and answers
    `action`; on accept it first checks the page, then submits `value` on it
    (unless `submit` is false)."""

    def __init__(self, action: str = "accept", submit: bool = True) -> None:
        self.action = action
        self.submit = submit
        self.questions: list[Any] = []
        self.checks: list[str] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        assert getattr(params, "mode", None) == "url", params
        self.questions.append(params)
        if self.action == "accept" and self.submit:
            await anyio.to_thread.run_sync(self.use_page, params.url)
        return types.ElicitResult(action=self.action)

    def use_page(self, url: str) -> None:
        with http() as client:
            page = client.get(url)
            assert page.status_code == 200, page.text
            assert 'type="password"' in page.text and 'autocomplete="off"' in page.text
            assert "default-src 'none'" in page.headers["content-security-policy"]
            assert page.headers["cache-control"] == "no-store"
            assert "<script" not in page.text and "src=" not in page.text
            host = url.split("/")[2]
            port = host.split(":")[1]
            wrong_path = url[:-4] + ("0000" if not url.endswith("0000") else "1111")
            assert client.get(wrong_path).status_code == 404
            assert client.get(f"http://{host}/").status_code == 404
            for wrong_host in ("evil.example", f"evil.example:{port}", f"127.0.0.1:{int(port) + 1}"):
                refused = client.get(url, headers={"Host": wrong_host})
                assert refused.status_code in (400, 421), (wrong_host, refused.status_code)
            cross = client.post(url, data={"secret": VALUE}, headers={"Origin": "http://evil.example"})
            assert cross.status_code == 403, cross.status_code
            # Still open: an empty or multi-line value is refused, then the real one taken.
            assert client.post(url, data={"secret": ""}).status_code == 400
            assert client.post(url, data={"secret": "a\nb"}).status_code == 400
            localhost = url.replace("127.0.0.1", "localhost")
            assert client.get(localhost).status_code == 200
            taken = client.post(url, data={"secret": VALUE})
            assert taken.status_code == 200, taken.text
            assert VALUE not in taken.text
            assert client.post(url, data={"secret": "again"}).status_code == 410
            assert client.get(url).status_code == 410
        self.checks.append(url)


async def secret_prompt(client: Client, name: str) -> str:
    """A session whose program waits at a hidden prompt."""
    pane = (await client.ok("create_session", {"name": name, "command": READ_SECRET}))["pane"]
    waited = await client.ok("wait_for_text", {"pane": pane, "pattern": "tp-never-printed", "timeout_s": 10})
    assert waited["outcome"] == "awaiting_input" and waited["secret"] is True, waited
    return pane


# --- secrets typed by the person (protocol 2025-11-25) -------------------------


def test_the_person_types_a_secret_on_the_page(tp: Termpilot, tmp_path: Path) -> None:
    person = Person()
    log = tmp_path / "audit.log"
    completed: list[Any] = []

    async def notified(message: Any) -> None:
        if isinstance(message, types.ElicitCompleteNotification):
            completed.append(message.params.elicitation_id)

    async def body() -> None:
        extra = args("--audit", str(log), "--audit-payloads")
        async with serve(tp, extra, elicitation_callback=person, message_handler=notified) as client:
            pane = await secret_prompt(client, "vault")
            typed = await client.ok("type_secret", {"pane": pane, "name": "vault_password"})
            assert typed["typed_by_person"] is True and typed["name"] == "vault_password", typed
            assert typed["pane"] == pane
            # The program printed it back: results show its name instead.
            await shows(client, pane, f"got {len(VALUE)} chars: [secret vault_password]")
            (question,) = person.questions
            assert person.checks == [question.url]
            assert question.url.startswith("http://127.0.0.1:"), question.url
            assert "vault_password" in question.message and pane in question.message, question.message
            assert len(question.url.rsplit("/", 1)[1]) >= 32  # at least 128 bits, in hex
            async def notified_yet() -> list[Any]:
                return completed

            await poll(notified_yet, 5, "notifications/elicitation/complete")
            assert completed == [question.elicitation_id]

    run(body)
    assert VALUE not in log.read_text(), "the value is in the audit log"
    assert VALUE not in tp.log_path.read_text(), "the value was logged"
    (record,) = [r for r in lines(log) if r["tool"] == "type_secret"]
    assert record["outcome"] == "ok" and record["approval"] == {"asked": True, "answer": "typed"}, record
    assert "typed" not in record or not record["typed"], record


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_a_declined_page_types_nothing(tp: Termpilot, action: str) -> None:
    person = Person(action)

    async def body() -> None:
        async with serve(tp, args(), elicitation_callback=person) as client:
            pane = await secret_prompt(client, "vault")
            message = await client.err("type_secret", {"pane": pane, "name": "vault_password"})
            assert "the person declined" in message, message
            (question,) = person.questions
            with http() as page:
                assert page.get(question.url).status_code == 410
            assert submit(question.url) == 410
            await never_shows(client, pane, "chars")
            waited = await client.ok("wait_for_text", {"pane": pane, "pattern": "tp-never", "timeout_s": 10})
            assert waited["outcome"] == "awaiting_input", waited

    run(body)


def test_a_page_expires(tp: Termpilot) -> None:
    # Accepted, but nothing submitted before the (shortened, for tests) expiry.
    person = Person("accept", submit=False)

    async def body() -> None:
        server_env = env(TERMPILOT_TEST_SECRET_PAGE_TTL_MS="1500")
        async with serve(tp, args(), server_env, elicitation_callback=person) as client:
            pane = await secret_prompt(client, "vault")
            message = await client.err("type_secret", {"pane": pane, "name": "vault_password"})
            assert "expired" in message, message
            (question,) = person.questions
            assert submit(question.url) == 410
            await never_shows(client, pane, "chars")

    run(body)


def test_a_client_without_url_elicitation_is_told_what_it_needs(tp: Termpilot) -> None:
    person = Person()

    async def body() -> None:
        async with serve(tp, args(), session_class=FormOnlySession, elicitation_callback=person) as client:
            pane = await secret_prompt(client, "vault")
            message = await client.err("type_secret", {"pane": pane, "name": "vault_password"})
            assert "URL-mode elicitation" in message and f"configured: {CONFIGURED}" in message, message
            assert person.questions == []
        async with serve(tp, args()) as client:
            message = await client.err("type_secret", {"pane": pane, "name": "vault_password"})
            assert "URL-mode elicitation" in message, message
            await never_shows(client, pane, "chars")

    run(body)


def test_an_unconfigured_name_needs_a_hidden_prompt(tp: Termpilot) -> None:
    person = Person()

    async def body() -> None:
        async with serve(tp, args(), elicitation_callback=person) as client:
            pane = (await client.ok("create_session", {"name": "plain", "command": "cat"}))["pane"]
            message = await client.err("type_secret", {"pane": pane, "name": "vault_password"})
            assert f"configured: {CONFIGURED}" in message and "hidden prompt" in message, message
            assert person.questions == []

    run(body)


# --- protocol 2026-07-28: input-required results -------------------------------


class FormPerson:
    """A form-mode elicitation callback for approvals."""

    def __init__(self, action: str, approve: bool = True) -> None:
        self.action = action
        self.approve = approve
        self.questions: list[Any] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        assert getattr(params, "mode", "form") == "form", params
        self.questions.append(params)
        content = {"approve": self.approve} if self.action == "accept" else None
        return types.ElicitResult(action=self.action, content=content)


def stdio_modern(tp: Termpilot, extra: list[str], callback: Any) -> ModernClient:
    params = StdioServerParameters(command=BIN, args=["serve", "-L", tp.socket, *extra], env=env())
    return ModernClient(params, mode=MODERN, elicitation_callback=callback, read_timeout_seconds=TEST_TIMEOUT)


class Modern(Client):
    """The checked helpers of conftest's Client over a 2026-07-28 client."""

    def __init__(self, client: ModernClient) -> None:
        self.modern = client
        self.session = client.session
        self.tools = {}
        self.seen: list[str] = []

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> types.CallToolResult:
        result = await self.modern.call_tool(name, arguments or {})
        self.seen.append(text_of(result) + json.dumps(result.structured_content))
        return result

    async def ok(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        result = await self.call(name, arguments)
        assert not result.is_error, f"{name}({arguments!r}) failed: {text_of(result)}"
        return result.structured_content


async def approvals_by_input_required(modern: ModernClient, person: FormPerson) -> None:
    client = Modern(modern)
    pane = (await client.ok("create_session", {"name": "work", "command": "cat"}))["pane"]
    await client.ok("send_keys", {"pane": pane, "text": "harmless", "enter": False})
    assert person.questions == []
    person.action = "decline"
    message = await client.err("send_keys", {"pane": pane, "text": DANGER})
    assert "the person declined" in message, message
    await never_shows(client, pane, "nothing-here")
    person.action = "accept"
    await client.ok("send_keys", {"pane": pane, "text": DANGER, "enter": False})
    await shows(client, pane, DANGER)
    assert len(person.questions) == 2
    assert DANGER in person.questions[1].message and pane in person.questions[1].message


def test_approvals_through_input_required_over_stdio(tp: Termpilot) -> None:
    person = FormPerson("accept")

    async def body() -> None:
        async with stdio_modern(tp, ["--confirm", r"rm\s+-rf"], person) as modern:
            assert modern.protocol_version == MODERN
            await approvals_by_input_required(modern, person)

    run(body)


@asynccontextmanager
async def http_modern(server: Any, callback: Any):
    headers = {"Authorization": f"Bearer {server.token}"}
    timeout = httpx2.Timeout(REQUEST_TIMEOUT, read=TEST_TIMEOUT)
    async with httpx2.AsyncClient(headers=headers, timeout=timeout, trust_env=False) as http_client:
        transport = streamable_http_client(server.url, http_client=http_client)
        client = ModernClient(transport, mode=MODERN, elicitation_callback=callback, read_timeout_seconds=TEST_TIMEOUT)
        async with client as modern:
            yield modern


def test_approvals_through_input_required_over_stateless_http(http_server: Any, monkeypatch: Any) -> None:
    import test_http

    monkeypatch.setattr(test_http, "SERVER_ENV", dict(test_http.SERVER_ENV, TERMPILOT_CONFIRM="rm\\s+-rf"))
    server = http_server()
    person = FormPerson("accept")

    async def body() -> None:
        async with http_modern(server, person) as modern:
            await approvals_by_input_required(modern, person)

    run(body)


def test_a_made_up_or_replayed_request_state_approves_nothing(tp: Termpilot) -> None:
    person = FormPerson("accept")
    yes = {"approve": types.ElicitResult(action="accept", content={"approve": True})}

    async def body() -> None:
        async with stdio_modern(tp, ["--confirm", r"rm\s+-rf"], person) as modern:
            client = Modern(modern)
            session = modern.session
            pane = (await client.ok("create_session", {"name": "work", "command": "cat"}))["pane"]
            arguments = {"pane": pane, "text": "rm -rf ./one", "enter": False}

            async def call(args: dict[str, Any], **extra: Any) -> Any:
                return await session.call_tool("send_keys", args, allow_input_required=True, **extra)

            # An answer the server never asked for.
            for state in ("made-up", "0" * 32, None):
                result = await call(arguments, input_responses=yes, request_state=state)
                if state is None:
                    # Without a state, answers are ignored: the person is asked.
                    assert isinstance(result, types.InputRequiredResult), result
                else:
                    assert isinstance(result, types.CallToolResult) and result.is_error, result
                    assert "unknown" in text_of(result), text_of(result)
            await never_shows(client, pane, "one")
            asked = await call(arguments)
            assert isinstance(asked, types.InputRequiredResult), asked
            assert list(asked.input_requests or {}) == ["approve"]
            assert asked.request_state and len(asked.request_state) >= 32
            # Other text than what the person was asked about.
            other = {"pane": pane, "text": "rm -rf ./two", "enter": False}
            moved = await call(other, input_responses=yes, request_state=asked.request_state)
            assert moved.is_error and "other arguments" in text_of(moved), text_of(moved)
            # That spent the state: asking again is needed.
            spent = await call(arguments, input_responses=yes, request_state=asked.request_state)
            assert spent.is_error and "already used" in text_of(spent), text_of(spent)
            await never_shows(client, pane, "two")
            await never_shows(client, pane, "one")
            asked = await call(arguments)
            done = await call(arguments, input_responses=yes, request_state=asked.request_state)
            assert isinstance(done, types.CallToolResult) and not done.is_error, text_of(done)
            await shows(client, pane, "rm -rf ./one")
            replayed = await call(arguments, input_responses=yes, request_state=asked.request_state)
            assert replayed.is_error and "already used" in text_of(replayed), text_of(replayed)
            screen = await client.capture(pane)
            assert screen.count("rm -rf ./one") == 1, screen
            # An answer without approve: true approves nothing.
            asked = await call(arguments)
            no = {"approve": types.ElicitResult(action="accept", content={"approve": False})}
            refused = await call(arguments, input_responses=no, request_state=asked.request_state)
            assert refused.is_error and "the person declined" in text_of(refused), text_of(refused)

    run(body)


def test_the_person_types_a_secret_through_input_required(tp: Termpilot, tmp_path: Path) -> None:
    person = Person()
    log = tmp_path / "audit.log"

    async def body() -> None:
        async with stdio_modern(tp, args("--audit", str(log)), person) as modern:
            client = Modern(modern)
            pane = (await client.ok("create_session", {"name": "vault", "command": READ_SECRET}))["pane"]
            waited = await client.ok("wait_for_text", {"pane": pane, "pattern": "tp-never", "timeout_s": 10})
            assert waited["outcome"] == "awaiting_input" and waited["secret"] is True, waited
            typed = await client.ok("type_secret", {"pane": pane, "name": "vault_password"})
            assert typed["typed_by_person"] is True, typed
            await shows(client, pane, f"got {len(VALUE)} chars: [secret vault_password]")
            (question,) = person.questions
            assert person.checks == [question.url]
            # Declined: nothing typed, and the page is gone.
            other = (await client.ok("create_session", {"name": "other", "command": READ_SECRET}))["pane"]
            await client.ok("wait_for_text", {"pane": other, "pattern": "tp-never", "timeout_s": 10})
            person.action = "decline"
            message = await client.err("type_secret", {"pane": other, "name": "vault_password"})
            assert "the person declined" in message, message
            assert submit(person.questions[1].url) == 410
            await never_shows(client, other, "chars")
            for seen in client.seen:
                assert VALUE not in seen, seen

    run(body)
    assert VALUE not in log.read_text()
    records = [r for r in lines(log) if r["tool"] == "type_secret"]
    assert [r["outcome"] for r in records] == ["input_required", "ok", "input_required", "error"], records
    answers = [r["approval"].get("answer") for r in records]
    assert answers == ["pending", "typed", "pending", "decline"], records
    # The client named itself in the request (no initialize under 2026-07-28).
    assert all(r.get("client", {}).get("name") for r in records), records


def test_the_person_types_a_secret_over_stateless_http(http_server: Any) -> None:
    server = http_server()
    person = Person()

    async def body() -> None:
        async with http_modern(server, person) as modern:
            client = Modern(modern)
            pane = (await client.ok("create_session", {"name": "vault", "command": READ_SECRET}))["pane"]
            waited = await client.ok("wait_for_text", {"pane": pane, "pattern": "tp-never", "timeout_s": 10})
            assert waited["outcome"] == "awaiting_input" and waited["secret"] is True, waited
            typed = await client.ok("type_secret", {"pane": pane, "name": "api_token", "enter": True})
            assert typed["typed_by_person"] is True and typed["pane"] == pane, typed
            await shows(client, pane, f"got {len(VALUE)} chars: [secret api_token]")
            assert len(person.checks) == 1
            for seen in client.seen:
                assert VALUE not in seen, seen

    run(body)
