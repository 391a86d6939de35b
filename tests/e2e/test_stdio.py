"""End-to-end tests: the real `termpilot serve` binary over stdio, driven by the
official MCP Python SDK, against a private tmux server per test."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    BIN,
    CURSOR_RE,
    PANE_RE,
    PROMPT,
    REQUEST_TIMEOUT,
    SERVER_ENV,
    SHELL_ENV,
    Client,
    Termpilot,
    poll,
    text_of,
)
from mcp.shared.exceptions import MCPError

READ_ONLY = {
    "list_sessions",
    "list_panes",
    "capture_pane",
    "capture_since",
    "read_output",
    "export_recording",
    "wait_for_text",
    "wait_for_idle",
    "wait_for_channel",
    "wait_for_command",
}
# Tools that type or run commands: anything can happen, so they say so.
RUNS_COMMANDS = {"send_keys", "paste_text", "run_command", "send_keys_batch", "run_batch"}
NON_DESTRUCTIVE = READ_ONLY | RUNS_COMMANDS | {
    "create_session",
    "create_window",
    "split_pane",
    "signal_channel",
    "type_secret",
}
# The toolset that is off by default.
DESTRUCTIVE = {"kill_session", "kill_window", "kill_pane"}


# --- helpers -----------------------------------------------------------------


async def wait_for_command(client: Client, pane: str, command: str, timeout: float = 5.0) -> None:
    """Waits until `command` is the pane's foreground program."""

    async def running() -> bool:
        info = await client.pane(pane)
        return info is not None and info["current_command"] == command

    await poll(running, timeout, f"{command!r} to run in {pane}")


async def wait_for_prompt(client: Client, pane: str, count: int = 1, timeout: float = 5.0) -> str:
    """Waits until the pane shows at least `count` prompts, the last one at the end."""
    prompt = PROMPT.rstrip()
    last = ""

    async def prompted() -> str | None:
        nonlocal last
        last = await client.capture(pane)
        done = last.rstrip().endswith(prompt) and last.count(prompt) >= count
        return last if done else None

    try:
        return await poll(prompted, timeout, f"{count} prompt(s) in {pane}")
    except AssertionError:
        raise AssertionError(f"{pane} never showed {count} prompt(s) {prompt!r}; screen: {last!r}") from None


async def wait_for_file(path: Path, size: int, timeout: float = 5.0) -> bytes:
    """Waits until the file holds `size` bytes and returns them."""

    async def filled() -> bytes | None:
        data = path.read_bytes() if path.exists() else b""
        return data if len(data) >= size else None

    try:
        return await poll(filled, timeout, f"{size} bytes in {path}")
    except AssertionError:
        got = path.read_bytes() if path.exists() else b"<no file>"
        raise AssertionError(f"{path} never reached {size} bytes; it holds {got!r}") from None


async def raw_sink(client: Client, name: str, path: Path, size: int) -> str:
    """Creates a session whose program copies `size` raw tty bytes into `path`;
    returns its pane once the program is reading."""
    # tmux runs this with `sh -c`; `exec` makes head, not sh, the pane's foreground
    # program once it reads, so list_panes shows when it is ready.
    command = f"stty raw -echo; exec head -c {size} > {path}"
    created = await client.ok("create_session", {"name": name, "command": command})
    await wait_for_command(client, created["pane"], "head")
    return created["pane"]


async def shell(client: Client, name: str) -> str:
    """Creates a session running an interactive sh with a known prompt (no rc files,
    so nothing overrides PS1) and waits for that prompt."""
    created = await client.ok(
        "create_session", {"name": name, "command": "sh -i", "env": {"PS1": PROMPT, "ENV": ""}}
    )
    await wait_for_prompt(client, created["pane"])
    return created["pane"]


async def still_serving(client: Client) -> None:
    sessions = await client.session_names()
    assert "main" in sessions, sessions


# --- 1. handshake and tools/list ---------------------------------------------


def check_tool_metadata(tools: dict[str, Any]) -> None:
    for name, tool in tools.items():
        assert tool.title, f"{name} has no title"
        assert tool.description, f"{name} has no description"
        assert tool.input_schema.get("type") == "object", f"{name} inputSchema: {tool.input_schema}"
        assert tool.output_schema and tool.output_schema.get("type") == "object", f"{name} outputSchema"
        assert tool.annotations is not None, f"{name} has no annotations"
        assert (tool.annotations.read_only_hint is True) == (name in READ_ONLY), (
            f"{name} readOnlyHint={tool.annotations.read_only_hint}"
        )
        if name in DESTRUCTIVE | RUNS_COMMANDS:
            assert tool.annotations.destructive_hint is True, f"{name} destructiveHint"
        if name in READ_ONLY:
            assert tool.annotations.destructive_hint is not True, f"{name} destructiveHint"


def test_default_toolsets_list_exactly_the_non_destructive_tools(tp: Termpilot) -> None:
    async def body(client: Client) -> None:
        assert client.session.server_info is not None
        assert set(client.tools) == NON_DESTRUCTIVE
        check_tool_metadata(client.tools)

    tp.run(body)


def test_toolsets_all_adds_the_kill_tools(tp: Termpilot) -> None:
    async def body(client: Client) -> None:
        assert set(client.tools) == NON_DESTRUCTIVE | DESTRUCTIVE
        check_tool_metadata(client.tools)
        for name, target in [("kill_session", "session"), ("kill_window", "window"), ("kill_pane", "pane")]:
            assert client.tools[name].input_schema.get("required") == [target], client.tools[name].input_schema

    tp.run(body, toolsets="all")


# --- 2. create_session, list_panes, list_sessions ----------------------------


def test_create_session_is_listed(tp: Termpilot) -> None:
    async def body(client: Client) -> None:
        created = await client.ok("create_session", {"name": "e2e-two"})
        assert PANE_RE.match(created["pane"]), created
        assert created["session_name"] == "e2e-two"
        panes = {p["id"]: p for p in await client.panes()}
        assert created["pane"] in panes, panes
        assert panes[created["pane"]]["session_name"] == "e2e-two"
        assert panes[created["pane"]]["session"] == created["session"]
        assert "e2e-two" in await client.session_names()

    tp.run(body)


# --- 3. exactness of send_keys and paste_text --------------------------------

KEY_SENDS = [
    # Separators, quoting and expansion that tmux, a shell or a format could eat.
    "a;b \\; c $(whoami) `id` 'single' \"double\" #{pane_id} #S 100% %1 ~ ~/x\ttab é 日本 🎉 -- end;",
    # A leading dash must not be taken for an option.
    "-la --",
    "-",
    ";",
    "\\;",
]


def test_send_keys_text_arrives_byte_exact(tp: Termpilot, tmp_path: Path) -> None:
    expected = "".join(KEY_SENDS).encode()
    out = tmp_path / "keys.out"

    async def body(client: Client) -> None:
        pane = await raw_sink(client, "exact-keys", out, len(expected))
        for text in KEY_SENDS:
            sent = await client.ok("send_keys", {"pane": pane, "text": text, "enter": False})
            assert sent["pane"] == pane
            assert CURSOR_RE.match(sent["cursor"]), sent
        assert await wait_for_file(out, len(expected)) == expected

    tp.run(body)


PASTE = "line one\tcol2;\n  line two $(whoami) `id` 'q' \"d\" #{pane_id} %\n\ttabbed é 日本 🎉\n-- last \\;"


def test_paste_text_unbracketed_arrives_byte_exact(tp: Termpilot, tmp_path: Path) -> None:
    expected = PASTE.encode()
    out = tmp_path / "paste.out"

    async def body(client: Client) -> None:
        pane = await raw_sink(client, "exact-paste", out, len(expected))
        sent = await client.ok("paste_text", {"pane": pane, "text": PASTE, "bracketed": False})
        assert sent["pane"] == pane
        assert CURSOR_RE.match(sent["cursor"]), sent
        assert await wait_for_file(out, len(expected)) == expected

    tp.run(body)


# --- 4. read back ------------------------------------------------------------


def test_send_keys_then_capture_reads_the_output(tp: Termpilot) -> None:
    async def body(client: Client) -> None:
        # The default shell (a login sh here), as an agent would get it.
        pane = (await client.ok("create_session", {"name": "readback"}))["pane"]
        await poll(lambda: client.capture(pane), 5.0, f"a prompt in {pane}")
        sent = await client.ok("send_keys", {"pane": pane, "text": "echo tp-marker-$((6*7))", "enter": True})
        assert CURSOR_RE.match(sent["cursor"]), sent

        async def marker() -> bool:
            lines = (await client.capture(pane)).splitlines()
            return "tp-marker-42" in (line.strip() for line in lines)

        await poll(marker, 5.0, "tp-marker-42 on a line of its own")
        captured = await client.ok("capture_pane", {"pane": pane})
        assert captured["pane"] == pane
        assert CURSOR_RE.match(captured["cursor"]), captured
        assert captured["truncated"] is False

    tp.run(body)


# --- 5. keys -----------------------------------------------------------------


def test_ctrl_c_interrupts_a_running_program(tp: Termpilot) -> None:
    async def body(client: Client) -> None:
        pane = await shell(client, "keys")
        await client.ok("send_keys", {"pane": pane, "text": "sleep 30"})
        await wait_for_command(client, pane, "sleep")
        await client.ok("send_keys", {"pane": pane, "keys": ["C-c"]})
        text = await wait_for_prompt(client, pane, count=2)
        assert "sleep 30" in text
        info = await client.pane(pane)
        assert info is not None and info["current_command"] != "sleep", info

    tp.run(body)


# --- 6. bad inputs -----------------------------------------------------------


async def a_pane(client: Client) -> str:
    return (await client.panes())[0]["id"]


async def bad_pane(client: Client) -> None:
    for tool, extra in [("send_keys", {"text": "x"}), ("capture_pane", {})]:
        message = await client.err(tool, {"pane": "%9999", **extra})
        assert "%9999" in message, message
        assert "list_panes" in message, message


async def missing_window_of_a_real_session(client: Client) -> None:
    """tmux's display-message would answer with the session's current pane."""
    before = await client.capture(await a_pane(client))
    for target in ["main:9", "main:0.5", "main:nowindow"]:
        message = await client.err("send_keys", {"pane": target, "text": "typed-into-the-wrong-pane"})
        assert target in message and "list_panes" in message, message
    assert "typed-into-the-wrong-pane" not in await client.capture(await a_pane(client)), before


async def bad_key_name(client: Client) -> None:
    message = await client.err("send_keys", {"pane": await a_pane(client), "keys": ["Entr"]})
    assert "Entr" in message, message
    assert "Enter" in message, message  # "Entr" is not a substring of "Enter"


async def wrong_type(client: Client) -> None:
    message = await client.err("send_keys", {"pane": 3, "text": "x"})
    assert "pane" in message, message


async def missing_argument(client: Client) -> None:
    message = await client.err("send_keys", {"text": "x"})
    assert "pane" in message, message


async def oversized_text(client: Client) -> None:
    message = await client.err("send_keys", {"pane": await a_pane(client), "text": "x" * 70_000})
    assert "text" in message, message


async def oversized_text_message_is_short(client: Client) -> None:
    message = await client.err("send_keys", {"pane": await a_pane(client), "text": "x" * 70_000})
    # The caller's 70,000 characters should not come back into its context.
    assert len(message) < 1_000, f"{len(message)}-character message: {message[:200]}...{message[-200:]}"


async def unknown_tool(client: Client) -> None:
    # An unknown tool is a protocol error (invalid params), not a tool result.
    with pytest.raises(MCPError) as raised:
        await client.call("no_such_tool", {})
    assert raised.value.code == -32602, raised.value
    assert "unknown tool: no_such_tool" in raised.value.message, raised.value


async def destructive_tool_when_off(client: Client) -> None:
    # Not published, so unknown to this client, with a hint how to enable it.
    with pytest.raises(MCPError) as raised:
        await client.call("kill_session", {"session": "main"})
    assert raised.value.code == -32602, raised.value
    message = raised.value.message
    assert "kill_session" in message and "--toolsets" in message, message
    assert "main" in await client.session_names(), "kill_session killed 'main' while disabled"


async def duplicate_session(client: Client) -> None:
    message = await client.err("create_session", {"name": "main"})
    assert "main" in message, message


BAD_INPUTS = {
    "nonexistent_pane": bad_pane,
    "missing_window_of_a_real_session": missing_window_of_a_real_session,
    "unknown_key_name": bad_key_name,
    "wrong_type": wrong_type,
    "missing_argument": missing_argument,
    "oversized_text": oversized_text,
    "unknown_tool": unknown_tool,
    "destructive_tool_when_off": destructive_tool_when_off,
    "duplicate_session": duplicate_session,
}


def check_bad_input(tp: Termpilot, case: Callable[[Client], Awaitable[None]]) -> None:
    async def body(client: Client) -> None:
        await still_serving(client)
        await case(client)
        await still_serving(client)

    tp.run(body)


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_a_tool_error_and_the_server_keeps_serving(tp: Termpilot, case: str) -> None:
    check_bad_input(tp, BAD_INPUTS[case])


def test_oversized_text_error_does_not_echo_the_text(tp: Termpilot) -> None:
    check_bad_input(tp, oversized_text_message_is_short)


# --- the environment a real MCP client gives ----------------------------------


def test_serves_utf8_without_a_locale_in_the_environment(tp: Termpilot, tmp_path: Path) -> None:
    """The SDK starts servers with only HOME, LOGNAME, PATH, SHELL, TERM and USER:
    no LANG or LC_*. termpilot must still work, and keep UTF-8 intact both ways."""
    text = "é 日本 🎉;"
    out = tmp_path / "bare.out"

    async def body(client: Client) -> None:
        await still_serving(client)
        pane = await raw_sink(client, "bare-env", out, len(text.encode()))
        await client.ok("send_keys", {"pane": pane, "text": text, "enter": False})
        assert await wait_for_file(out, len(text.encode())) == text.encode()

        # head has its bytes, so its session ends. tmux 3.3a can crash when a
        # control client connects (as create_session does) while another is
        # being detached from an ending session: let that finish first.
        async def sink_gone() -> bool:
            return "bare-env" not in await client.session_names()

        await poll(sink_gone, 5.0, "the bare-env session to end")
        echo = await shell(client, "bare-echo")
        await client.ok("send_keys", {"pane": echo, "text": "echo tp-utf8-é-日本"})

        async def echoed() -> bool:
            return "tp-utf8-é-日本" in (line.strip() for line in (await client.capture(echo)).splitlines())

        await poll(echoed, 5.0, "the UTF-8 echo read back intact")

    tp.run(body, env=SHELL_ENV)


# --- 7. kill_session ---------------------------------------------------------


def test_kill_session_removes_it(tp: Termpilot) -> None:
    async def body(client: Client) -> None:
        created = await client.ok("create_session", {"name": "doomed"})
        assert "doomed" in await client.session_names()
        killed = await client.ok("kill_session", {"session": "doomed"})
        assert killed["session"] == created["session"], killed
        assert created["pane"] in killed["panes"], killed
        assert "doomed" not in await client.session_names()
        assert created["pane"] not in {p["id"] for p in await client.panes()}
        assert "main" in await client.session_names()

    tp.run(body, toolsets="all")


# --- 8. structuredContent matches outputSchema for every tool -----------------


def test_every_tool_result_matches_its_output_schema(tp: Termpilot) -> None:
    async def body(client: Client) -> None:
        # `ok` checks each result against the tool's outputSchema, as the SDK does.
        created = await client.ok("create_session", {"name": "schemas", "width": 80, "height": 24})
        window = await client.ok("create_window", {"session": "schemas", "name": "second"})
        assert window["session"] == created["session"] and window["window"] != created["window"]
        split = await client.ok("split_pane", {"pane": window["pane"], "direction": "below"})
        assert PANE_RE.match(split["pane"]) and split["window"] == window["window"]
        await client.ok("list_sessions")
        await client.ok("list_panes", {"session": "schemas"})
        await client.ok("list_panes", {"window": window["window"]})
        await client.ok("send_keys", {"pane": split["pane"], "text": "echo hi"})
        await client.ok("paste_text", {"pane": split["pane"], "text": "echo pasted\n"})
        await client.ok("capture_pane", {"pane": split["pane"], "scrollback": "all", "max_tokens": 100})
        killed = await client.ok("kill_pane", {"pane": split["pane"]})
        assert killed["panes"] == [split["pane"]] and killed["windows"] == [], killed
        killed = await client.ok("kill_window", {"window": window["window"]})
        assert killed["windows"] == [window["window"]] and killed["panes"] == [window["pane"]], killed
        killed = await client.ok("kill_session", {"session": "schemas"})
        assert killed["session"] == created["session"] and created["pane"] in killed["panes"], killed
        in_session = await client.ok("list_panes", {"session": "main"})
        assert in_session["panes"] and all(p["session_name"] == "main" for p in in_session["panes"])

    tp.run(body, toolsets="all")


# --- raw JSON-RPC: what a client that is not the SDK may send ------------------

INITIALIZE_2025 = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}
# 2026-07-28: no initialize; every request names its version and capabilities.
META_2026 = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


class RawStdio:
    """`termpilot serve` on pipes, for lines the SDK would never send."""

    def __init__(self, tp: Termpilot) -> None:
        env = dict(SERVER_ENV, PATH=os.environ["PATH"])
        self.process = subprocess.Popen(
            [BIN, "serve", "-L", tp.socket],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(tp.log_path, "ab"),
            env=env,
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, line: bytes | dict[str, Any]) -> None:
        data = json.dumps(line).encode() if isinstance(line, dict) else line
        assert self.process.stdin is not None
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def receive(self, timeout: float = REQUEST_TIMEOUT) -> dict[str, Any]:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no reply within {timeout}s") from None
        assert line is not None, f"the server closed stdout (exit {self.process.poll()})"
        return json.loads(line)

    def ask(self, line: bytes | dict[str, Any]) -> dict[str, Any]:
        self.send(line)
        return self.receive()

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)


@pytest.fixture
def raw(tp: Termpilot) -> Iterator[RawStdio]:
    server = RawStdio(tp)
    try:
        yield server
    finally:
        server.close()


def error_of(reply: dict[str, Any]) -> tuple[Any, int]:
    assert reply.get("jsonrpc") == "2.0" and "error" in reply, reply
    return reply["id"], reply["error"]["code"]


def test_malformed_messages_get_json_rpc_errors_and_the_server_keeps_serving(raw: RawStdio) -> None:
    assert raw.ask(INITIALIZE_2025)["result"]["protocolVersion"] == "2025-11-25"
    raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    # Not JSON, not UTF-8, nested beyond any parser's limit: parse errors, id null.
    assert error_of(raw.ask(b'{"jsonrpc":')) == (None, -32700)
    assert error_of(raw.ask(b'{"jsonrpc":"2.0","id":1,"method":"\xff"}')) == (None, -32700)
    assert error_of(raw.ask(b"[" * 100_000)) == (None, -32700)
    assert error_of(raw.ask(b'{"a":' * 100_000)) == (None, -32700)
    # JSON but not a request: invalid request, with the id when it can be read.
    assert error_of(raw.ask(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":5}')) == (7, -32600)
    assert error_of(raw.ask(b'{"id":"x","method":"tools/list"}')) == ("x", -32600)
    assert error_of(raw.ask(b'[{"jsonrpc":"2.0","id":8,"method":"ping"}]')) == (None, -32600)
    # A known method with parameters of the wrong shape: invalid params.
    bad_arguments = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "list_sessions", "arguments": []}}
    assert error_of(raw.ask(bad_arguments)) == (9, -32602)
    reply = raw.ask({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "list_sessions", "arguments": {}}})
    assert reply["id"] == 10 and not reply["result"]["isError"], reply


def test_a_parse_error_before_initialize_does_not_end_the_server(raw: RawStdio) -> None:
    assert error_of(raw.ask(b"not json")) == (None, -32700)
    assert raw.ask(INITIALIZE_2025)["id"] == 0


def test_a_request_id_still_in_flight_is_refused_not_lost(raw: RawStdio) -> None:
    raw.ask(INITIALIZE_2025)
    raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    wait = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": "wait_for_channel", "arguments": {"channel": "never", "timeout_s": 2}},
    }
    raw.send(wait)
    # The same id again while the wait runs: refused at once, with that id.
    again = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "list_sessions", "arguments": {}}}
    assert error_of(raw.ask(again)) == (5, -32600)
    # The first request still gets its own answer, and the id is free again after it.
    first = raw.receive()
    assert first["id"] == 5 and "result" in first, first
    assert raw.ask(again)["result"]["structuredContent"]["sessions"], "list_sessions after the wait"


def test_protocol_2026_07_28_needs_no_initialize_over_stdio(raw: RawStdio) -> None:
    listed = raw.ask({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META_2026}})
    assert "list_panes" in {tool["name"] for tool in listed["result"]["tools"]}, listed
    called = raw.ask(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "list_sessions", "arguments": {}, "_meta": META_2026},
        }
    )
    assert called["result"]["structuredContent"]["sessions"][0]["name"] == "main", called
