"""End-to-end tests of showing what happened (issue 23): capture_pane's
pictures of a screen, over stdio with the official MCP Python SDK (the
recordings are test_record's).

The PNG is decoded here with the standard library only (zlib and the five
PNG row filters), so the test checks the pixels the server sent, not what
some image library makes of them.
"""

from __future__ import annotations

import base64
import re
import struct
import zlib
from typing import Any

import mcp_types as types
from conftest import Termpilot, text_of
from test_waits import BASH_ENV, PROMPT, TMUX_CONFIG, WaitClient, at_prompt, bash_pane, run, send, wait_text

# The palette the pictures use (xterm's), and their default colours.
RED = (0xCD, 0x00, 0x00)
GREEN = (0x00, 0xCD, 0x00)
BLUE = (0x00, 0x00, 0xEE)
DEFAULT_FG = (0xD4, 0xD4, 0xD4)
DEFAULT_BG = (0x1E, 0x1E, 0x1E)
SUMMARY_RE = re.compile(
    r"^(?P<kind>PNG|SVG) of (?P<pane>%\d+)'s screen \((?P<cols>\d+)x(?P<rows>\d+) cells, [^)]*\); "
    r"cursor at line (?P<line>\d+), column (?P<column>\d+)"
)
SECRET_VALUE = "hunter2-e2e-value"


class Png:
    """An 8-bit RGB PNG, decoded."""

    def __init__(self, data: bytes) -> None:
        assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
        at, idat = 8, b""
        while at < len(data):
            (length,) = struct.unpack(">I", data[at : at + 4])
            kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
            (crc,) = struct.unpack(">I", data[at + 8 + length : at + 12 + length])
            assert zlib.crc32(kind + body) == crc, f"bad CRC in {kind!r}"
            if kind == b"IHDR":
                self.width, self.height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
                assert (depth, color, interlace) == (8, 2, 0), (depth, color, interlace)
            elif kind == b"IDAT":
                idat += body
            at += 12 + length
        self.rows = unfiltered(zlib.decompress(idat), self.width * 3, self.height)

    def pixel(self, x: int, y: int) -> tuple[int, int, int]:
        row = self.rows[y]
        return (row[3 * x], row[3 * x + 1], row[3 * x + 2])


def unfiltered(raw: bytes, stride: int, height: int) -> list[bytearray]:
    """The scanlines of a PNG's inflated image data, filters undone."""
    rows: list[bytearray] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - 3] if i >= 3 else 0
            up, corner = previous[i], previous[i - 3] if i >= 3 else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                predictor = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + predictor) & 0xFF
            else:
                assert kind == 0, f"unknown filter {kind}"
        rows.append(line)
        previous = line
    return rows


class Cells:
    """A picture of a screen seen as cells of equal size."""

    def __init__(self, png: Png, cols: int, rows: int) -> None:
        assert png.width % cols == 0 and png.height % rows == 0, (png.width, png.height, cols, rows)
        self.png, self.width, self.height = png, png.width // cols, png.height // rows

    def colors(self, row: int, col: int) -> set[tuple[int, int, int]]:
        """Every colour drawn in the cell."""
        left, top = col * self.width, row * self.height
        return {
            self.png.pixel(x, y) for y in range(top, top + self.height) for x in range(left, left + self.width)
        }


async def picture(client: WaitClient, pane: str, kind: str) -> tuple[types.CallToolResult, re.Match[str]]:
    """capture_pane with a picture; checks the result's shape and returns it with
    its parsed summary line."""
    result = await client.call("capture_pane", {"pane": pane, "format": kind})
    assert not result.is_error, text_of(result)
    assert isinstance(result.content[0], types.TextContent), result.content
    summary = SUMMARY_RE.match(result.content[0].text)
    assert summary and summary["kind"] == kind.upper() and summary["pane"] == pane, result.content[0].text
    assert len(result.content) == 2, result.content
    assert result.structured_content is not None and result.structured_content["pane"] == pane
    return result, summary


def png_of(result: types.CallToolResult) -> Png:
    block = result.content[1]
    assert isinstance(block, types.ImageContent) and block.mime_type == "image/png", block
    return Png(base64.b64decode(block.data))


def svg_of(result: types.CallToolResult) -> str:
    block = result.content[1]
    assert isinstance(block, types.EmbeddedResource), block
    resource: Any = block.resource
    assert resource.mime_type == "image/svg+xml", resource
    assert str(resource.uri).endswith("/screen.svg"), resource.uri
    return resource.text


def test_png_shows_colours_glyphs_and_the_cursor_at_known_cells(tp: Termpilot) -> None:
    """A red background, bold green text and the cursor block where the text
    result says they are."""

    async def body(client: Any) -> None:
        pane = await bash_pane(client, "png")
        cursor = await send(client, pane, r"printf '\e[41m RED \e[0m \e[1;32mGREEN\e[0m\n'")
        await wait_text(client, pane, "GREEN", since=cursor, timeout_s=10)
        await at_prompt(client, pane)
        result, summary = await picture(client, pane, "png")
        lines = result.structured_content["text"].split("\n")
        row = next(i for i, line in enumerate(lines) if line.startswith(" RED "))
        cells = Cells(png_of(result), int(summary["cols"]), int(summary["rows"]))
        # " RED ": a red space, then ink on red; "GREEN" starts at column 6.
        assert cells.colors(row, 0) == {RED}
        assert RED in cells.colors(row, 1) and len(cells.colors(row, 1)) > 2, cells.colors(row, 1)
        assert GREEN in cells.colors(row, 6), cells.colors(row, 6)
        assert cells.colors(row, 5) == {DEFAULT_BG}
        # The typed command line above it is in the default colours (grey
        # shades of the glyph's edges between them).
        ink = cells.colors(row - 1, 0) - {DEFAULT_BG}
        assert ink and all(r == g == b for r, g, b in ink), ink
        # The cursor, after the last prompt, is a block in the text colour.
        line, column = int(summary["line"]), int(summary["column"])
        assert lines[line - 1] == "tp-prompt$", lines
        assert column == len("tp-prompt$ ") + 1, summary[0]
        assert cells.colors(line - 1, column - 1) == {DEFAULT_FG}

    tp.run(body, env=BASH_ENV, extra_args=["--tmux-config", TMUX_CONFIG])


async def secret_pane(client: Any, name: str) -> str:
    """A bash pane whose environment holds the secret's value (termpilot
    keeps `env:` secrets out of the environment of the panes it starts, so
    the test hands the value to the pane itself)."""
    env = {"PS1": PROMPT, "TP_E2E_PW": SECRET_VALUE}
    pane = (await client.ok("create_session", {"name": name, "env": env}))["pane"]
    await at_prompt(client, pane)
    return pane


def test_svg_hides_the_wrapper_and_redacts_secrets(tp: Termpilot) -> None:
    """The picture shows what the text shows: run_command's line as typed
    (its wrapper is longer than the pane is wide), a secret by its name,
    and colours elsewhere."""

    async def body(client: Any) -> None:
        pane = await secret_pane(client, "svg")
        await run(client, pane, r'printf "\e[44mBLUE\e[0m\n"; printf "%s\n" "$TP_E2E_PW"')
        await at_prompt(client, pane)
        result, _ = await picture(client, pane, "svg")
        svg = svg_of(result)
        # The picture's text is the text capture's, wrapper lines that
        # wrapped over several rows included.
        assert result.structured_content["text"] == await client.capture(pane)
        assert svg.startswith("<svg xmlns=\"http://www.w3.org/2000/svg\""), svg[:100]
        text = result.structured_content["text"]
        assert "[secret pw]" in text and SECRET_VALUE not in text, text
        assert "[secret pw]" in svg and SECRET_VALUE not in svg
        assert "7770" not in svg and "__termpilot" not in svg, svg
        assert "fill=\"#0000ee\"" in svg, "the BLUE line's background"
        assert ">BLUE</text>" in svg

    tp.run(
        body,
        env=BASH_ENV | {"TP_E2E_PW": SECRET_VALUE},
        extra_args=["--tmux-config", TMUX_CONFIG, "--secret", "pw=env:TP_E2E_PW"],
    )


def test_a_picture_refuses_scrollback_and_a_batch_refuses_pictures(tp: Termpilot) -> None:
    async def body(client: Any) -> None:
        pane = await bash_pane(client, "refusals")
        message = await client.err("capture_pane", {"pane": pane, "format": "png", "scrollback": 10})
        assert "scrollback" in message, message
        result = await client.call(
            "run_batch", {"steps": [{"op": "capture_pane", "pane": pane, "format": "svg"}]}
        )
        assert result.is_error and "capture_pane for a picture" in text_of(result), text_of(result)

    tp.run(body, env=BASH_ENV, extra_args=["--tmux-config", TMUX_CONFIG])
