"""End-to-end tests of recordings (issue 23): export_recording writes a
pane's journal as asciicast v3, over stdio with the official MCP Python SDK.

Every recording is parsed here line by line and replayed through a terminal
emulator (pyte, given the alternate screen full-screen programs draw on) to
the screen capture_pane shows.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import mcp_types as types
import pyte
from conftest import Termpilot, poll, text_of
from test_show import SECRET_VALUE, secret_pane
from test_waits import BASH_ENV, TMUX_CONFIG, at_prompt, run, send, wait_text

SECRET_ARGS = ["--tmux-config", TMUX_CONFIG, "--secret", "pw=env:TP_E2E_PW"]
SECRET_ENV = BASH_ENV | {"TP_E2E_PW": SECRET_VALUE}
Events = list[tuple[float, str, str]]


async def export(client: Any, pane: str, **span: str) -> tuple[str, Path]:
    """export_recording; checks the result's shape and returns the file's
    text and path."""
    result = await client.call("export_recording", {"pane": pane, **span})
    assert not result.is_error, text_of(result)
    assert result.content[0].text.startswith(f"Recording of {pane} ("), result.content[0].text
    link = result.content[-1]
    assert isinstance(link, types.ResourceLink), result.content
    assert str(link.uri) == f"termpilot://pane/{pane}/recording.cast", link.uri
    assert link.mime_type == "application/x-asciicast", link
    path = Path(result.structured_content["path"])
    assert path.is_file() and path.name.endswith(f"-{pane.removeprefix('%')}.cast"), path
    return path.read_text(encoding="utf-8"), path


def parse_v3(text: str) -> tuple[dict[str, Any], Events]:
    """The header and events of an asciicast v3 file, checked line by line."""
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    header = json.loads(lines[0])
    assert header["version"] == 3 and header["term"]["cols"] > 0 and header["term"]["rows"] > 0, header
    events = []
    for line in lines[1:]:
        interval, code, data = json.loads(line)
        assert isinstance(interval, (int, float)) and interval >= 0, line
        assert code in {"o", "i", "m", "r", "x"} and isinstance(data, str), line
        if code == "r":
            assert re.fullmatch(r"\d+x\d+", data), line
        events.append((float(interval), code, data))
    return header, events


class Terminal(pyte.Screen):
    """pyte's screen with the alternate screen (private modes 47, 1047 and
    1049), which full-screen programs draw on and leave for the shell's
    screen as it was."""

    ALTERNATE = {47, 1047, 1049}

    def __init__(self, columns: int, lines: int) -> None:
        super().__init__(columns, lines)
        self.saved: tuple[Any, Any] | None = None

    def set_mode(self, *modes: int, **kwargs: Any) -> None:
        if kwargs.get("private") and self.ALTERNATE & set(modes):
            if self.saved is None:
                self.saved = (copy.deepcopy(self.buffer), copy.copy(self.cursor))
                self.erase_in_display(2)
            modes = tuple(m for m in modes if m not in self.ALTERNATE)
        if modes:
            super().set_mode(*modes, **kwargs)

    def reset_mode(self, *modes: int, **kwargs: Any) -> None:
        if kwargs.get("private") and self.ALTERNATE & set(modes):
            if self.saved is not None:
                self.buffer, self.cursor = self.saved
                self.saved = None
                self.dirty.update(range(self.lines))
            modes = tuple(m for m in modes if m not in self.ALTERNATE)
        if modes:
            super().reset_mode(*modes, **kwargs)


def replayed(header: dict[str, Any], events: Events) -> list[str]:
    """The screen the recording ends on: its output fed to a terminal that
    is resized where the recording says, trailing blank lines dropped."""
    screen = Terminal(header["term"]["cols"], header["term"]["rows"])
    stream = pyte.ByteStream(screen)
    for _, code, data in events:
        if code == "o":
            stream.feed(data.encode())
        elif code == "r":
            cols, rows = (int(n) for n in data.split("x"))
            screen.resize(lines=rows, columns=cols)
    lines = [line.rstrip() for line in screen.display]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def test_a_recording_is_v3_hides_wrappers_and_secrets_and_replays_to_the_screen(tp: Termpilot) -> None:
    """The pane's output as asciicast v3; replayed through a terminal emulator
    it ends on the screen capture_pane shows."""

    async def body(client: Any) -> None:
        pane = await secret_pane(client, "cast")
        await run(client, pane, r'printf "\e[H\e[2J\e[1;5Hdrawn\e[2;1H"; echo back')
        await run(client, pane, r'printf "\e[32mgreen\e[0m\n"; sleep 0.3; echo later')
        await run(client, pane, r'printf "%s\n" "$TP_E2E_PW"')
        await at_prompt(client, pane)
        text, path = await export(client, pane)
        header, events = parse_v3(text)
        output = "".join(data for _, code, data in events if code == "o")
        assert "green" in output and "later" in output and "back" in output
        assert SECRET_VALUE not in text and "[secret pw]" in output
        assert "__termpilot" not in output and "printf '\\033]7770" not in output, output
        # A marker and the typed line for each run_command.
        markers = [data for _, code, data in events if code == "m" and data.startswith("run_command ")]
        typed = [data for _, code, data in events if code == "i"]
        assert len(markers) == 3 and all(re.search(r"\(call \d+\)$", m) for m in markers), markers
        assert typed[1] == 'printf "\\e[32mgreen\\e[0m\\n"; sleep 0.3; echo later\r', typed
        # The sleep shows as time between the output before it and after.
        assert sum(interval for interval, _, _ in events) >= 0.3, events
        assert replayed(header, events) == (await client.capture(pane)).split("\n"), path

    tp.run(body, env=SECRET_ENV, extra_args=SECRET_ARGS)


def test_a_session_with_a_command_a_secret_and_a_full_screen_program_replays(tp: Termpilot) -> None:
    """run_command, a hidden prompt answered with type_secret, and vi opened
    and quit: the recording parses as v3, replays to the screen, has a marker
    for each of those calls and the secret only by its name. A recording
    from a cursor holds only what came after it, one up to it only what came
    before."""

    async def body(client: Any) -> None:
        pane = await secret_pane(client, "whole")
        await run(client, pane, "echo RUN-$((6*7))")
        cursor = await send(client, pane, "read -rs -p 'Password: ' pw; echo; echo \"got ${#pw}\"")
        await wait_text(client, pane, "Password: ", since=cursor, timeout_s=10)
        await client.ok("type_secret", {"pane": pane, "name": "pw"})
        await wait_text(client, pane, f"got {len(SECRET_VALUE)}", since=cursor, timeout_s=10)
        await at_prompt(client, pane)
        before_vi = await send(client, pane, "vi -u NONE")

        async def on_alternate_screen() -> bool:
            return (await client.ok("capture_pane", {"pane": pane}))["alternate_screen"]

        await poll(on_alternate_screen, 10, "vi on the alternate screen")
        await client.ok("send_keys", {"pane": pane, "text": ":q!", "enter": True})
        await at_prompt(client, pane)
        await run(client, pane, "echo AFTER-VI")
        await at_prompt(client, pane)

        text, path = await export(client, pane)
        header, events = parse_v3(text)
        assert SECRET_VALUE not in text, path
        output = "".join(data for _, code, data in events if code == "o")
        assert "RUN-42" in output and "got 17" in output and "AFTER-VI" in output, output
        assert "\x1b[?1049h" in output, "vi's switch to the alternate screen"
        markers = [data for _, code, data in events if code == "m"]
        for tool, calls in [("run_command", 2), ("type_secret", 1), ("send_keys", 3)]:
            mine = [m for m in markers if m.startswith(f"{tool} ")]
            assert len(mine) == calls, (tool, markers)
        assert all(re.search(r"\(call \d+\)$", m) for m in markers), markers
        assert "[secret pw]" in [data.rstrip("\r") for _, code, data in events if code == "i"], events
        assert replayed(header, events) == (await client.capture(pane)).split("\n"), path

        # From the cursor before vi: neither the earlier output nor the
        # earlier calls, but vi's own call and those after it.
        text, _ = await export(client, pane, since=before_vi)
        _, events = parse_v3(text)
        output = "".join(data for _, code, data in events if code == "o")
        assert "RUN-42" not in output and "got 17" not in output and "AFTER-VI" in output, output
        markers = [data for _, code, data in events if code == "m"]
        assert not any("RUN-42" in m or m.startswith("type_secret ") for m in markers), markers
        assert any(m.startswith('send_keys text="vi -u NONE"') for m in markers), markers
        assert any("AFTER-VI" in m for m in markers), markers
        # Up to that cursor: the earlier output and calls, nothing of vi.
        text, _ = await export(client, pane, until=before_vi)
        _, events = parse_v3(text)
        output = "".join(data for _, code, data in events if code == "o")
        assert "RUN-42" in output and "got 17" in output, output
        assert "AFTER-VI" not in output and "\x1b[?1049h" not in output, output
        markers = [data for _, code, data in events if code == "m"]
        assert any(m.startswith("type_secret ") for m in markers), markers
        # The call that returned the cursor began before it: a marker is
        # dated when its call began, so it is on both sides of its cursor.
        assert any(m.startswith('send_keys text="vi -u NONE"') for m in markers), markers
        assert not any("AFTER-VI" in m or ":q!" in m for m in markers), markers
        assert events[-1][1] != "x", events

    tp.run(body, env=SECRET_ENV, extra_args=SECRET_ARGS)


def test_a_pane_resized_mid_recording_replays_at_its_new_size(tp: Termpilot) -> None:
    """resize-window between two commands: the recording starts at the old
    size and says `r` where the pane grew, so a line wider than the old
    width and 30 rows (24 before) replay as capture_pane shows them."""

    async def body(client: Any) -> None:
        made = {"name": "grows", "width": 80, "height": 24, "env": {"PS1": "tp-prompt$ "}}
        pane = (await client.ok("create_session", made))["pane"]
        await run(client, pane, "echo BEFORE")
        subprocess.run(
            ["tmux", "-L", tp.socket, "resize-window", "-t", "grows", "-x", "100", "-y", "30"],
            check=True,
            timeout=5,
        )

        async def grown() -> bool:
            return (await client.pane(pane) or {}).get("width") == 100

        await poll(grown, 10, f"{pane} 100 columns wide")
        await run(client, pane, r"printf '\e[H\e[2J%095d|\n' 0; seq 2 28; echo bottom")
        await at_prompt(client, pane)
        text, path = await export(client, pane)
        header, events = parse_v3(text)
        assert (header["term"]["cols"], header["term"]["rows"]) == (80, 24), header
        resizes = [i for i, (_, code, _) in enumerate(events) if code == "r"]
        assert [events[i][2] for i in resizes] == ["100x30"], events
        # Between the output before the resize and the output after it.
        output_at = [i for i, (_, code, data) in enumerate(events) if code == "o"]
        before = max(i for i in output_at if "BEFORE" in events[i][2])
        after = min(i for i in output_at if "0" * 95 in events[i][2])
        assert before < resizes[0] < after, events
        screen = (await client.capture(pane)).split("\n")
        assert screen[0] == "0" * 95 + "|" and screen[28:] == ["bottom", "tp-prompt$"], screen
        assert replayed(header, events) == screen, path

    tp.run(body, env=BASH_ENV, extra_args=["--tmux-config", TMUX_CONFIG])


def test_a_recording_ends_with_the_exit_status_of_a_program_that_ended(tp: Termpilot) -> None:
    async def body(client: Any) -> None:
        subprocess.run(
            ["tmux", "-L", tp.socket, "set-option", "-g", "remain-on-exit", "on"], check=True, timeout=5
        )
        # tmux 3.3a now and then marks such a pane dead with no exit status
        # (and none of its output) at all; the recording can only say what
        # tmux knows, so the program runs again (at most 3 times) until tmux
        # has its status.
        pane = ""
        for attempt in range(3):
            created = await client.ok(
                "create_session", {"name": f"ends{attempt}", "command": "echo bye; sleep 0.2; exit 3"}
            )
            pane = created["pane"]

            async def dead() -> bool:
                return bool((await client.pane(pane) or {}).get("dead"))

            await poll(dead, 10.0, f"{pane}'s program to end")
            status = subprocess.run(
                ["tmux", "-L", tp.socket, "display-message", "-p", "-t", pane, "#{pane_dead_status}"],
                capture_output=True,
                text=True,
                timeout=5,
            ).stdout.strip()
            if status:
                break
        assert status == "3", f"tmux never had the exit status of {pane}"
        events: Events = []

        async def ended() -> bool:
            nonlocal events
            _, events = parse_v3((await export(client, pane))[0])
            return events[-1][1] == "x"

        await poll(ended, 5.0, "the exit status in the recording")
        assert events[-1][1:] == ("x", "3"), events
        assert "bye" in "".join(data for _, code, data in events if code == "o"), events

    tp.run(body, env=BASH_ENV, extra_args=["--tmux-config", TMUX_CONFIG])
