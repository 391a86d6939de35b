"""Every configuration snippet in docs/clients.md parses and has the shape its
client documents (mcpServers, VS Code's servers with a type, Codex's
mcp_servers table), and each starts `termpilot serve` or names the /mcp URL."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "clients.md"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def snippets(kind: str) -> list[str]:
    return [body for lang, body in FENCE.findall(DOC.read_text()) if lang == kind]


def check_server(server: dict) -> None:
    if "command" in server:
        assert server["command"].endswith("termpilot"), server
        assert server["args"][0] == "serve", server
    else:
        assert server["url"] == "http://127.0.0.1:8787/mcp", server


def test_json_snippets_have_their_clients_shape() -> None:
    found = snippets("json")
    assert len(found) == 5
    for body in found:
        config = json.loads(body)
        if "servers" in config:  # VS Code
            server = config["servers"]["termpilot"]
            assert server["type"] in ("stdio", "http"), server
        else:
            server = config["mcpServers"]["termpilot"]
        check_server(server)


def test_toml_snippets_are_codex_tables() -> None:
    found = snippets("toml")
    assert len(found) == 2
    for body in found:
        check_server(tomllib.loads(body)["mcp_servers"]["termpilot"])


def test_shell_snippets_register_the_server() -> None:
    (body,) = snippets("sh")
    assert "claude mcp add termpilot -- termpilot serve" in body
    assert "--transport http termpilot http://127.0.0.1:8787/mcp" in body
