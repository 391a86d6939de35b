"""`type_secret` with `wait` (issue 22): one call types a configured secret at
a hidden prompt and returns what came next, the command's end here, from a
cursor taken before the secret, so nothing is missed, and never the value."""

from __future__ import annotations

import json
from pathlib import Path

import mcp_types as types
from conftest import PROMPT, SERVER_ENV, Client, poll, text_of

NAME = "db_password"
VARIABLE = "TP_E2E_WAIT_SECRET"
VALUE = "w4it-for-it-s3cret"
ENV = SERVER_ENV | {"SHELL": "/bin/bash", VARIABLE: VALUE}
# The tests' tmux configuration: panes run a plain interactive shell.
TMUX_CONFIG = str(Path(__file__).resolve().parents[2] / "crates/tmux/tests/support/tmux.conf")
ARGS = ["--secret", f"{NAME}=env:{VARIABLE}", "--tmux-config", TMUX_CONFIG]


async def bash_pane(client: Client) -> str:
    pane = (await client.ok("create_session", {"name": "secret-wait", "env": {"PS1": PROMPT}}))["pane"]

    async def prompted() -> bool:
        return (await client.capture(pane)).rstrip().endswith(PROMPT.rstrip())

    await poll(prompted, 10.0, f"the prompt in {pane}")
    return pane


def never_the_value(result: types.CallToolResult) -> None:
    seen = text_of(result) + json.dumps(result.structured_content)
    assert VALUE not in seen, f"the value was returned: {seen}"


def test_type_secret_waits_for_the_command_to_end(tp) -> None:
    async def body(client: Client) -> None:
        pane = await bash_pane(client)
        # The program prints the value back: the wait shows it by its name.
        command = "read -s -p 'Password: ' pw; echo; echo got ${#pw}; echo \"it was $pw\""
        asked = await client.ok("run_command", {"pane": pane, "command": command, "timeout_s": 15})
        assert asked["awaiting_input"] is True and asked["secret"] is True, asked

        result = await client.call("type_secret", {"pane": pane, "name": NAME, "wait": "command"})
        never_the_value(result)
        assert not result.is_error, text_of(result)
        typed = result.structured_content
        assert typed is not None and typed["name"] == NAME and typed["typed_by_person"] is False, typed
        waited = typed.get("wait")
        assert waited is not None, f"no wait result: {typed}"
        assert waited["exit_code"] == 0, waited
        assert f"got {len(VALUE)}" in waited["output"], waited
        assert f"it was [secret {NAME}]" in waited["output"], waited
        assert f"got {len(VALUE)}" in text_of(result), text_of(result)

        # Without wait, the call returns at once as before: no wait result.
        asked = await client.ok("run_command", {"pane": pane, "command": command, "timeout_s": 15})
        assert asked["awaiting_input"] is True, asked
        plain = await client.call("type_secret", {"pane": pane, "name": NAME})
        never_the_value(plain)
        assert not plain.is_error and "wait" not in (plain.structured_content or {}), plain

    tp.run(body, env=ENV, extra_args=ARGS)


def test_type_secret_waits_for_the_program_to_ask_again(tp) -> None:
    async def body(client: Client) -> None:
        pane = await bash_pane(client)
        command = "read -s -p 'Password: ' a; echo; read -s -p 'Again: ' b; echo; echo same $([ \"$a\" = \"$b\" ] && echo yes)"
        asked = await client.ok("run_command", {"pane": pane, "command": command, "timeout_s": 15})
        assert asked["awaiting_input"] is True and asked["prompt"] == "Password: ", asked

        first = await client.call("type_secret", {"pane": pane, "name": NAME, "wait": "command"})
        never_the_value(first)
        again = (first.structured_content or {}).get("wait")
        assert again is not None and again["awaiting_input"] is True, first.structured_content
        assert again["secret"] is True and again["prompt"] == "Again: ", again

        second = await client.call("type_secret", {"pane": pane, "name": NAME, "wait": "command"})
        never_the_value(second)
        done = (second.structured_content or {}).get("wait")
        assert done is not None and done["exit_code"] == 0 and "same yes" in done["output"], second.structured_content

    tp.run(body, env=ENV, extra_args=ARGS)
