"""End-to-end tests of panes as MCP resources (issue 23): resources/list,
resources/templates/list, resources/read of a pane's screen, picture and
recording, and subscriptions to a pane's screen, over stdio with the official
MCP Python SDK, in both protocol generations (2025-11-25 with initialize and
resources/subscribe; 2026-07-28 with subscriptions/listen).
"""

from __future__ import annotations

import base64
import json
import subprocess
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from conftest import BIN, REQUEST_TIMEOUT, SERVER_ENV, TEST_TIMEOUT, Client, Termpilot, poll, single_leaf
from mcp.client.client import Client as ModernClient
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from test_show import Png

# resources/subscribe is what 2025-11-25 clients use; the SDK warns that 2026-07-28 drops it.
pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

MODERN = "2026-07-28"
UPDATED = "notifications/resources/updated"
SECRET_VALUE = "hunter2-resource-value"


def screen_uri(pane: str) -> str:
    return f"termpilot://pane/{pane}/screen"


class Notes:
    """The resources/updated notifications the server sent, with arrival times."""

    def __init__(self) -> None:
        self.updated: list[tuple[float, str]] = []

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.updated.append((time.monotonic(), str(message.params.uri)))

    def of(self, uri: str) -> list[float]:
        return [at for at, u in self.updated if u == uri]


@asynccontextmanager
async def legacy(tp: Termpilot, extra: list[str], notes: Notes, env: dict[str, str] | None = None):
    """A 2025-11-25 client (initialize, then requests), noting notifications."""
    params = StdioServerParameters(command=BIN, args=["serve", "-L", tp.socket, *extra], env=env or SERVER_ENV)
    with open(tp.log_path, "a", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(
                read, write, read_timeout_seconds=REQUEST_TIMEOUT, message_handler=notes
            ) as session:
                await session.initialize()
                listing = await session.list_tools()
                yield Client(session, listing.tools)


def run(body: Any) -> None:
    async def main() -> None:
        with anyio.fail_after(TEST_TIMEOUT):
            await body()

    try:
        anyio.run(main)
    except BaseExceptionGroup as group:
        raise single_leaf(group) from None


def text_contents(result: types.ReadResourceResult, uri: str) -> Any:
    assert len(result.contents) == 1, result.contents
    contents = result.contents[0]
    assert str(contents.uri) == uri, contents.uri
    return contents


async def shows(client: Client, pane: str, text: str) -> str:
    """Reads the pane's screen resource until it shows `text`."""

    async def read() -> str | None:
        contents = text_contents(await client.session.read_resource(screen_uri(pane)), screen_uri(pane))
        return contents.text if text in contents.text else None

    return await poll(read, 10, f"{text!r} on {pane}'s screen resource")


def test_list_templates_and_read_text_png_and_cast(tp: Termpilot, tmp_path: Path) -> None:
    """Every live pane in scope is listed; a session outside --allow-session
    is neither listed nor readable; the three views read as what they say,
    the secret redacted; each read is in the audit log as capture_pane."""
    log = tmp_path / "audit.jsonl"
    subprocess.run(
        ["tmux", "-L", tp.socket, "-f", "/dev/null", "new-session", "-d", "-s", "private", "cat"],
        check=True,
        timeout=10,
        env=SERVER_ENV,
    )
    hidden = subprocess.run(
        ["tmux", "-L", tp.socket, "display-message", "-p", "-t", "private", "#{pane_id}"],
        check=True,
        timeout=10,
        capture_output=True,
        text=True,
    ).stdout.strip()
    notes = Notes()

    async def body() -> None:
        extra = ["--allow-session", "agent-*", "--secret", "pw=env:TP_E2E_PW", "--audit", str(log)]
        async with legacy(tp, extra, notes, SERVER_ENV | {"TP_E2E_PW": SECRET_VALUE}) as client:
            made = {"name": "agent-1", "command": "sh", "env": {"TP_E2E_PW": SECRET_VALUE}}
            pane = (await client.ok("create_session", made))["pane"]
            templates = await client.session.list_resource_templates()
            assert sorted(t.uri_template for t in templates.resource_templates) == [
                "termpilot://pane/{id}/recording.cast",
                "termpilot://pane/{id}/screen",
                "termpilot://pane/{id}/screen.png",
            ]
            listed = await client.session.list_resources()
            uris = [str(r.uri) for r in listed.resources]
            assert uris == [screen_uri(pane)], uris
            assert all(hidden not in u for u in uris)

            # The screen as capture_pane shows it, the secret redacted.
            await client.ok("send_keys", {"pane": pane, "text": "echo RES-$((6*7)); echo $TP_E2E_PW"})
            text = await shows(client, pane, "RES-42")
            assert text == await client.capture(pane) or "RES-42" in text
            await shows(client, pane, "[secret pw]")
            assert SECRET_VALUE not in await shows(client, pane, "RES-42")

            png_uri = f"termpilot://pane/{pane}/screen.png"
            png = text_contents(await client.session.read_resource(png_uri), png_uri)
            assert png.mime_type == "image/png"
            picture = Png(base64.b64decode(png.blob))
            assert picture.width > 0 and picture.height > 0

            cast_uri = f"termpilot://pane/{pane}/recording.cast"
            cast = text_contents(await client.session.read_resource(cast_uri), cast_uri)
            assert cast.mime_type == "application/x-asciicast"
            lines = cast.text.splitlines()
            header = json.loads(lines[0])
            assert header["version"] == 3 and header["term"]["cols"] > 0, header
            events = [json.loads(line) for line in lines[1:]]
            assert any(e[1] == "o" and "RES-42" in e[2] for e in events), events
            assert all(SECRET_VALUE not in line for line in lines)

            # Outside the scope: not found, as a pane that does not exist.
            for uri in [screen_uri(hidden), f"termpilot://pane/{hidden}/screen.png", screen_uri("%999")]:
                try:
                    await client.session.read_resource(uri)
                except MCPError as error:
                    assert "private" not in str(error), error
                else:
                    raise AssertionError(f"{uri} was read")
            try:
                await client.session.subscribe_resource(screen_uri(hidden))
            except MCPError:
                pass
            else:
                raise AssertionError("a pane outside the scope was subscribed to")
            try:
                await client.session.read_resource("termpilot://pane/%1/keys")
            except MCPError as error:
                assert "screen" in str(error), error
            else:
                raise AssertionError("an unknown view was read")

            async def audited() -> list[dict[str, Any]]:
                records = [json.loads(line) for line in log.read_text().splitlines()]
                reads = [r for r in records if r["tool"] == "capture_pane"]
                return reads if len(reads) >= 5 else []

            reads = await poll(audited, 10, "the reads in the audit log")
            assert {r["outcome"] for r in reads} == {"ok", "error"}, reads
            assert all(pane in r["panes"] for r in reads if r["outcome"] == "ok"), reads
            assert SECRET_VALUE not in log.read_text()

    run(body)


def test_read_only_server_reads_resources(tp: Termpilot) -> None:
    """--read-only publishes no tool that types, yet resources read."""
    subprocess.run(
        ["tmux", "-L", tp.socket, "-f", "/dev/null", "new-session", "-d", "-s", "seen", "echo READ-ONLY-OK; cat"],
        check=True,
        timeout=10,
        env=SERVER_ENV,
    )

    async def body() -> None:
        async with legacy(tp, ["--read-only"], Notes()) as client:
            assert "send_keys" not in client.tools
            listed = await client.session.list_resources()
            assert len(listed.resources) == 1, listed
            uri = str(listed.resources[0].uri)
            pane = uri.removeprefix("termpilot://pane/").removesuffix("/screen")
            await shows(client, pane, "READ-ONLY-OK")

    run(body)


def test_subscription_notifies_on_output_and_stops_after_unsubscribe(tp: Termpilot) -> None:
    notes = Notes()

    async def body() -> None:
        async with legacy(tp, [], notes) as client:
            pane = (await client.ok("create_session", {"name": "sub", "command": "sh"}))["pane"]
            uri = screen_uri(pane)
            await client.session.subscribe_resource(uri)
            # Quiet first, so that the notification below is the command's.
            await anyio.sleep(0.5)
            before = len(notes.of(uri))
            await client.ok("send_keys", {"pane": pane, "text": "echo SUB-$((2+3))"})

            async def notified() -> bool:
                return len(notes.of(uri)) > before

            await poll(notified, 10, "a resources/updated notification")
            await shows(client, pane, "SUB-5")
            # A flood of output: at most one notification per 200 ms (and a few more for timing).
            flood_start = time.monotonic()
            await client.ok("send_keys", {"pane": pane, "text": "for i in $(seq 1 40); do echo $i; sleep 0.02; done"})
            await anyio.sleep(1.5)
            flood = [at for at in notes.of(uri) if at >= flood_start]
            assert 1 <= len(flood) <= 1.5 / 0.2 + 2, flood
            gaps = [b - a for a, b in zip(flood, flood[1:])]
            assert all(gap >= 0.15 for gap in gaps), gaps

            await client.session.unsubscribe_resource(uri)
            await anyio.sleep(0.5)
            count = len(notes.of(uri))
            await client.ok("send_keys", {"pane": pane, "text": "echo AFTER-$((1+1))"})
            await shows(client, pane, "AFTER-2")
            await anyio.sleep(0.6)
            assert len(notes.of(uri)) == count, notes.updated

    run(body)


def test_subscriptions_are_bounded_per_client(tp: Termpilot) -> None:
    async def body() -> None:
        async with legacy(tp, [], Notes()) as client:
            pane = (await client.ok("create_session", {"name": "many", "command": "cat"}))["pane"]
            number = pane.removeprefix("%")
            # One pane, many spellings of URIs naming it: each is its own subscription.
            uris = [f"termpilot://pane/{pane}/screen", f"termpilot://pane/{number}/screen"]
            uris += [f"termpilot://pane/{pane}/screen.png", f"termpilot://pane/{pane}/recording.cast"]
            while len(uris) < 65:
                made = (await client.ok("create_session", {"command": "cat"}))["pane"]
                for view in ["screen", "screen.png", "recording.cast"]:
                    uris.append(f"termpilot://pane/{made}/{view}")
                    uris.append(f"termpilot://pane/{made.removeprefix('%')}/{view}")
            for uri in uris[:64]:
                await client.session.subscribe_resource(uri)
            try:
                await client.session.subscribe_resource(uris[64])
            except MCPError as error:
                assert "64" in str(error), error
            else:
                raise AssertionError("a 65th subscription was accepted")
            # Unsubscribing one makes room.
            await client.session.unsubscribe_resource(uris[0])
            await client.session.subscribe_resource(uris[64])

    run(body)


def test_protocol_2026_reads_and_listens(tp: Termpilot) -> None:
    """A 2026-07-28 client (no initialize) reads the screen and hears of
    output through subscriptions/listen."""

    async def body() -> None:
        params = StdioServerParameters(command=BIN, args=["serve", "-L", tp.socket], env=SERVER_ENV)
        async with ModernClient(params, mode=MODERN, read_timeout_seconds=TEST_TIMEOUT) as modern:
            assert modern.protocol_version == MODERN
            created = await modern.call_tool("create_session", {"name": "modern", "command": "sh"})
            pane = created.structured_content["pane"]
            uri = screen_uri(pane)
            listed = await modern.list_resources()
            assert uri in [str(r.uri) for r in listed.resources], listed
            async with modern.listen(resource_subscriptions=[uri]) as subscription:
                assert list(subscription.honored.resource_subscriptions or []) == [uri]
                await modern.call_tool("send_keys", {"pane": pane, "text": "echo MODERN-$((3*3))"})
                with anyio.fail_after(10):
                    event = await subscription.__anext__()
                assert uri in repr(event), event

            async def read() -> str | None:
                result = await modern.read_resource(uri)
                text = result.contents[0].text
                return text if "MODERN-9" in text else None

            await poll(read, 10, "the command's output in the screen resource")

    run(body)


def test_serve_record_writes_every_pane_as_it_runs_within_its_bound(tp: Termpilot, tmp_path: Path) -> None:
    """--record DIR: each pane's recording appears as DIR/<session>-<n>.cast
    and follows the pane (output, a marker per call, no secret); --record-mb
    bounds it, the oldest events dropped with a marker."""
    record = tmp_path / "casts"

    def cast_of(path: Path) -> tuple[dict[str, Any], list[list[Any]]] | None:
        try:
            lines = path.read_text().splitlines()
        except FileNotFoundError:
            return None
        return json.loads(lines[0]), [json.loads(line) for line in lines[1:]]

    async def body() -> None:
        extra = ["--record", str(record), "--record-mb", "1", "--secret", "pw=env:TP_E2E_PW"]
        env = SERVER_ENV | {"TP_E2E_PW": SECRET_VALUE}
        async with legacy(tp, extra, Notes(), env) as client:
            made = {"name": "rec", "command": "sh", "env": {"TP_E2E_PW": SECRET_VALUE}}
            pane = (await client.ok("create_session", made))["pane"]
            path = record / f"rec-{pane.removeprefix('%')}.cast"
            await client.ok("send_keys", {"pane": pane, "text": "echo REC-$((5*5)); echo $TP_E2E_PW"})

            async def recorded() -> Any:
                cast = cast_of(path)
                if cast is None:
                    return None
                output = "".join(e[2] for e in cast[1] if e[1] == "o")
                return cast if "REC-25" in output and "[secret pw]" in output else None

            header, events = await poll(recorded, 15, f"the output in {path}")
            assert header["version"] == 3, header
            assert any(e[1] == "m" and e[2].startswith("send_keys ") for e in events), events
            assert SECRET_VALUE not in path.read_text()

            # Over 1 MB of output: the file stays under it and says what it dropped.
            await client.ok("send_keys", {"pane": pane, "text": "seq 1 300000; echo FLOOD-$((2*2))-DONE"})

            async def flooded() -> Any:
                cast = cast_of(path)
                if cast is None:
                    return None
                output = "".join(e[2] for e in cast[1] if e[1] == "o")
                return cast if "FLOOD-4-DONE" in output else None

            header, events = await poll(flooded, 25, "the end of the flood in the recording")
            assert path.stat().st_size <= 1 << 20, path.stat().st_size
            assert "earlier events dropped" in events[0][2], events[0]
            # A session that does not exist yet is recorded once it does.
            other = (await client.ok("create_session", {"name": "second", "command": "cat"}))["pane"]
            second = record / f"second-{other.removeprefix('%')}.cast"
            await poll(lambda: anyio.to_thread.run_sync(second.exists), 15, f"{second}")

    async def bounded() -> None:
        with anyio.fail_after(60):
            await body()

    try:
        anyio.run(bounded)
    except BaseExceptionGroup as group:
        raise single_leaf(group) from None
