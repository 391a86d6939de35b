"""End-to-end tests of context economy (issue 4): capture_pane's token budget,
kept outputs read back with read_output, and capture_since, over stdio with the
official MCP Python SDK. Server, fixtures and helpers come from test_waits."""

from __future__ import annotations

import re
from test_waits import Server, WaitClient, bash_pane, send, server, wait_text  # noqa: F401 (fixture)

LINES = 20_000
# The renderer's documented estimate is about 3 bytes a token; the issue's
# target for a default capture of 20,000 lines is 2,500 tokens.
BYTES_PER_TOKEN = 3
TOKEN_TARGET = 2_500
ELISION_RE = re.compile(
    r"^\[\.\.\. lines (?P<first>[\d,]+)-(?P<last>[\d,]+) omitted \((?P<count>[\d,]+) lines, [^)]*\); "
    r"read_output id=(?P<id>o\d+) offset=(?P<offset>\d+) shows them \.\.\.\]$"
)
PAGE_LIMIT = 5_000


def number(text: str) -> int:
    return int(text.replace(",", ""))


async def pane_with_numbers(server: Server, client: WaitClient, name: str) -> str:
    """A bash pane whose history holds the output of `seq 1 20000`, finished."""
    # tmux keeps 2,000 lines by default; this pane must keep them all, with room to
    # spare (a history within a tenth of its limit counts as full).
    server.tmux("set-option", "-g", "history-limit", str(LINES * 2))
    pane = await bash_pane(client, name)
    cursor = await send(client, pane, f"seq 1 {LINES}; echo seq-end-$((1+1))")
    done = await wait_text(client, pane, "seq-end-2", since=cursor, timeout_s=20)
    assert done["outcome"] == "matched", done
    return pane


async def read_all(client: WaitClient, output_id: str) -> list[str]:
    """Every line of a kept output, page after page."""
    lines: list[str] = []
    offset: int | None = 0
    while offset is not None:
        page = await client.ok(
            "read_output", {"output_id": output_id, "offset": offset, "limit": PAGE_LIMIT, "max_tokens": 20_000}
        )
        assert page["first_line"] == offset + 1, page | {"text": "..."}
        shown = page["text"].split("\n")
        assert len(shown) == page["lines"], (len(shown), page["lines"])
        assert page["remaining_lines"] == page["total_lines"] - offset - page["lines"], page | {"text": "..."}
        lines += shown
        offset = page["next_offset"]
        assert len(lines) <= page["total_lines"], "read_output pages past the end"
    return lines


def elision_of(text: str) -> tuple[int, re.Match[str]]:
    """The index and parts of the one elision line of a rendered text."""
    found = [(i, m) for i, line in enumerate(text.split("\n")) if (m := ELISION_RE.match(line))]
    assert len(found) == 1, f"expected exactly one elision line, found {len(found)}"
    return found[0]


# --- 12. the budget, and the full text recovered -----------------------------------


def test_capture_of_20000_lines_fits_the_budget_and_read_output_recovers_it(server: Server) -> None:
    async def body(client: WaitClient) -> None:
        pane = await pane_with_numbers(server, client, "budget")
        captured = await client.ok("capture_pane", {"pane": pane, "scrollback": "all"})
        text = captured["text"]
        assert len(text.encode()) / BYTES_PER_TOKEN <= TOKEN_TARGET, f"{len(text.encode())} bytes returned"
        assert captured["truncated"] is True, captured["total_lines"]
        assert captured["omitted_lines"] > 0 and captured["omitted_bytes"] > 0, captured["omitted_lines"]
        output_id = captured["output_id"]
        assert output_id, "a cut capture names no output_id"

        shown = text.split("\n")
        at, elision = elision_of(text)
        assert elision["id"] == output_id, (elision["id"], output_id)
        assert number(elision["count"]) == captured["omitted_lines"]
        assert number(elision["last"]) - number(elision["first"]) + 1 == captured["omitted_lines"]
        head, tail = shown[:at], shown[at + 1 :]
        # The first line is the command line; the output's first and last lines follow.
        assert f"seq 1 {LINES}" in head[0] and head[1] == "1", head[:3]
        assert str(LINES) in tail and "seq-end-2" in tail, tail[-5:]

        full = await read_all(client, output_id)
        assert len(full) == captured["total_lines"], (len(full), captured["total_lines"])
        assert full[: len(head)] == head, "the head differs from the kept output's start"
        assert full[len(full) - len(tail) :] == tail, "the tail differs from the kept output's end"
        omitted = full[len(head) : len(full) - len(tail)]
        assert len(omitted) == captured["omitted_lines"]
        assert number(elision["first"]) == len(head) + 1 and number(elision["offset"]) == len(head)
        numbers = [line for line in full if line.isdigit()]
        assert numbers == [str(n) for n in range(1, LINES + 1)], "the numbers are not all there, in order"

    server.run(body, limit=60.0)


# --- 13. capture_since ---------------------------------------------------------------


def test_capture_since_returns_only_what_came_after_the_cursor(server: Server) -> None:
    async def body(client: WaitClient) -> None:
        pane = await bash_pane(client, "since")
        cursor = await send(client, pane, "echo first-$((0+1))-part")
        assert (await wait_text(client, pane, "first-1-part", since=cursor, timeout_s=5))["outcome"] == "matched"
        await client.ok("wait_for_idle", {"pane": pane, "quiet_ms": 200, "timeout_s": 5})
        c1 = (await client.ok("capture_pane", {"pane": pane}))["cursor"]
        await send(client, pane, "echo second-$((1+1))-part")
        await wait_text(client, pane, "second-2-part", since=c1, timeout_s=5)
        await client.ok("wait_for_idle", {"pane": pane, "quiet_ms": 200, "timeout_s": 5})

        since = await client.ok("capture_since", {"pane": pane, "cursor": c1})
        lines = since["text"].split("\n")
        assert "second-2-part" in lines, since["text"]
        assert "first" not in since["text"], since["text"]
        assert since["lost_bytes"] == 0 and since["truncated"] is False, since
        assert since["cursor"] != c1, since

        again = await client.ok("capture_since", {"pane": pane, "cursor": since["cursor"]})
        assert again["text"] == "", again
        assert again["cursor"] == since["cursor"], (again["cursor"], since["cursor"])

    server.run(body)


# --- 14. read_output grep and unknown ids ----------------------------------------------


def test_read_output_grep_and_unknown_id(server: Server) -> None:
    async def body(client: WaitClient) -> None:
        pane = await pane_with_numbers(server, client, "grep")
        captured = await client.ok("capture_pane", {"pane": pane, "scrollback": "all"})
        output_id = captured["output_id"]
        assert output_id, captured["truncated"]
        found = await client.ok("read_output", {"output_id": output_id, "grep": "^1999[0-9]$"})
        assert found["matching_lines"] == 10, found
        pairs = [line.split(":", 1) for line in found["text"].split("\n")]
        assert [value for _, value in pairs] == [str(n) for n in range(19990, 20000)], found["text"]
        numbers = [int(at) for at, _ in pairs]
        assert numbers == list(range(numbers[0], numbers[0] + 10)), numbers
        # The line numbers are real: reading at that line gives the same text.
        first = await client.ok("read_output", {"output_id": output_id, "offset": numbers[0] - 1, "limit": 1})
        assert first["text"] == "19990", first

        message = await client.err("read_output", {"output_id": "o999"})
        assert "o999" in message and "not found" in message, message
        path = await client.err("read_output", {"output_id": "../etc/passwd"})
        assert "root:" not in path, path

    server.run(body, limit=60.0)


# --- 15. cursors belong to one pane ----------------------------------------------------


def test_cursor_of_another_pane_is_refused(server: Server) -> None:
    async def body(client: WaitClient) -> None:
        one = await bash_pane(client, "one")
        other = await bash_pane(client, "other")
        cursor = await send(client, one, "echo hello")
        message = await client.err("capture_since", {"pane": other, "cursor": cursor})
        assert other in message and one in message, message
        waited = await client.err("wait_for_text", {"pane": other, "pattern": "x", "since": cursor, "timeout_s": 1})
        assert other in waited, waited

    server.run(body)


def test_malformed_cursor_is_refused(server: Server) -> None:
    async def body(client: WaitClient) -> None:
        pane = await bash_pane(client, "bad-cursor")
        message = await client.err("capture_since", {"pane": pane, "cursor": "not-a-cursor"})
        assert "cursor" in message, message

    server.run(body)



# --- capture_pane and tmux's history limit ------------------------------------------


def test_capture_says_when_tmux_history_was_full(server: Server) -> None:
    async def body(client: WaitClient) -> None:
        server.tmux("set-option", "-g", "history-limit", "100")
        pane = await bash_pane(client, "history-full")
        cursor = await send(client, pane, "seq 1 500; echo hist-end-$((1+1))")
        done = await wait_text(client, pane, "hist-end-2", since=cursor, timeout_s=20)
        assert done["outcome"] == "matched", done
        captured = await client.ok("capture_pane", {"pane": pane, "scrollback": "all"})
        assert captured["history_truncated"] is True, captured
        first = captured["text"].split("\n")[0]
        assert first.startswith("[tmux's history of this pane is full (100 lines)") and "capture_since" in first, first
        # The journal still has what tmux dropped.
        since = await client.ok("capture_since", {"pane": pane, "cursor": cursor, "max_tokens": 20_000})
        assert "\n1\n" in f"\n{since['text']}\n", since["text"][:200]
        screen = await client.ok("capture_pane", {"pane": pane})
        assert screen["history_truncated"] is False, screen

    server.run(body, limit=60.0)
