"""Makes docs/screen.png, the README's picture of a pane, with termpilot's own
capture_pane {"format": "png"} over the official MCP Python SDK.

    TERMPILOT_BIN=target/debug/termpilot tests/e2e/.venv/bin/python docs/make-screen-png.py

It runs on a private tmux server (socket tp-docs-<pid>) and kills only that
server at the end.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

REPO = Path(__file__).resolve().parents[1]
BIN = os.environ.get("TERMPILOT_BIN", str(REPO / "target/debug/termpilot"))
OUT = REPO / "docs/screen.png"
SOCKET = f"tp-docs-{os.getpid()}"
COMMANDS = [
    r"PS1='\[\e[1;32m\]agent@box\[\e[0m\]:\[\e[1;34m\]\W\[\e[0m\]$ '",
    "clear",
    "cd /tmp && mkdir -p demo && cd demo && touch notes.txt run.sh && chmod +x run.sh && mkdir -p src",
    "ls -l --color=always",
    r"printf '\e[1;31merror\e[0m: \e[1mexpected `;`\e[0m at \e[4msrc/main.rs:7\e[0m\n'",
    r"for i in $(seq 16 6 231); do printf '\e[48;5;%sm  ' $i; done; printf '\e[0m\n'",
    r"printf '\e[7m inverse \e[0m \e[32m12 passed\e[0m, \e[33m1 skipped\e[0m\n'",
]


async def main() -> None:
    env = {"SHELL": "/bin/bash", "TERM": "xterm-256color", "LANG": "C.UTF-8", "PATH": os.environ["PATH"]}
    params = StdioServerParameters(command=BIN, args=["serve", "-L", SOCKET], env=env)
    with anyio.fail_after(60):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            created = await session.call_tool(
                "create_session",
                {"name": "docs", "width": 96, "height": 22, "command": "bash --norc --noprofile"},
            )
            pane = created.structured_content["pane"]
            for command in COMMANDS:
                done = await session.call_tool("run_command", {"pane": pane, "command": command, "timeout_s": 10})
                assert not done.is_error, done
            await session.call_tool("wait_for_idle", {"pane": pane, "quiet_ms": 300, "timeout_s": 5})
            picture = await session.call_tool("capture_pane", {"pane": pane, "format": "png"})
            assert not picture.is_error, picture
            print(picture.content[0].text, file=sys.stderr)
            OUT.write_bytes(base64.b64decode(picture.content[1].data))


try:
    anyio.run(main)
finally:
    subprocess.run(["tmux", "-L", SOCKET, "kill-server"], capture_output=True, timeout=5, check=False)
    Path(f"/tmp/tmux-{os.getuid()}/{SOCKET}").unlink(missing_ok=True)
