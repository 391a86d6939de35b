"""End-to-end tests of the one output redactor (issue 21, class 2): an agent
that wants a secret tries to read it through waits (a regex that matches its
characters, anchored guesses whose matched-or-timed-out answer is an oracle,
run_batch wait steps), through awaiting-input prompts, through error messages
that quote text with escapes, through the approval question that names the
foreground program, through the log, and for a secret the person typed on
the secret page. Every result, question and log line must hide it. The client
is the official MCP Python SDK; each test has its own tmux server (`tp`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import BIN, SERVER_ENV, TEST_TIMEOUT, Client, Termpilot, poll, text_of
from mcp.client.client import Client as ModernClient
from mcp.client.stdio import StdioServerParameters
from test_audit import run
from test_elicitation import VALUE as TYPED_VALUE
from test_elicitation import Person as PagePerson
from test_elicitation import MODERN, Modern, secret_prompt, serve
from test_elicitation import FormPerson as ModernPerson
from test_person import Person as FormPerson

# Holds `"` and `\`, which Rust's {:?} and JSON escape; short enough to be a
# process name (15 bytes), so a program can be named after it.
SECRET = 'Dq"5\\Xq7w'
NAME = "pw"
SHOWN = f"[secret {NAME}]"
# A second secret that a program is named after (tmux shows process names
# with quotes cut short, so this one has none).
PROGRAM = "zq8Kx2mVw"
PROGRAM_SHOWN = "[secret prog]"
SECRET_ARGS = ["--secret", f"{NAME}=env:TP_E2E_REDACT", "--secret", "prog=env:TP_E2E_PROGRAM"]
SECRET_ENV = SERVER_ENV | {"TP_E2E_REDACT": SECRET, "TP_E2E_PROGRAM": PROGRAM}


def forms(value: str) -> list[str]:
    """The value as printed, JSON-escaped and escaped by Rust's {:?}."""
    return [value, json.dumps(value)[1:-1], value.replace("\\", "\\\\").replace('"', '\\"')]


def pieces(value: str, size: int = 3) -> list[str]:
    return [value[i : i + size] for i in range(len(value) - size + 1)]


def assert_hidden(seen: Any, value: str = SECRET, size: int = 3) -> None:
    """No form of the value, nor any `size` characters of it in a row, in
    `seen` (a string, a result, or structured content)."""
    if isinstance(seen, str):
        texts = [seen]
    else:
        texts = [json.dumps(seen), json.dumps(seen, ensure_ascii=False)]
        texts += [s for s in strings(seen)]
    for text in texts:
        for form in forms(value):
            for piece in pieces(form, size):
                assert piece not in text, f"{piece!r} of the secret shows in {text!r}"


def assert_not_logged(log: str, value: str = SECRET) -> None:
    """No form of the value in the log (the agent's own guesses, pieces of
    it, are logged as the requests they are)."""
    for form in forms(value):
        assert form not in log, f"{form!r} is in the log"


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


class Checked(Client):
    """A Client that checks every result it gets for the secrets."""

    async def call(self, name: str, arguments: dict[str, Any] | None = None):
        result = await super().call(name, arguments)
        for value in (SECRET, PROGRAM):
            assert_hidden(text_of(result), value)
            assert_hidden(result.structured_content or {}, value)
        return result


def secret_file(tmp_path: Path) -> Path:
    """The value where a pane's program can read it (the server's own
    environment is not promised to panes)."""
    path = tmp_path / "value"
    path.write_text(SECRET)
    return path


def checked_run(tp: Termpilot, body, extra: list[str] | None = None) -> None:
    args = [*SECRET_ARGS, "--log", "debug", *(extra or [])]

    async def checked(client: Client) -> None:
        client.__class__ = Checked
        await body(client)

    tp.run(checked, env=SECRET_ENV, extra_args=args)
    assert_not_logged(tp.log_path.read_text())
    assert_not_logged(tp.log_path.read_text(), PROGRAM)


async def shell(client: Client, name: str) -> str:
    return (await client.ok("create_session", {"name": name, "command": "sh"}))["pane"]


def printing(path: Path) -> str:
    """A command line whose output is `got:` and the value; its own echo
    shows neither."""
    return f"printf 'go''t:%s\\n' \"$(cat {path})\""


def test_a_regex_never_matches_secret_characters(tp: Termpilot, tmp_path: Path) -> None:
    path = secret_file(tmp_path)

    async def body(client: Client) -> None:
        pane = await shell(client, "leak")
        sent = await client.ok("send_keys", {"pane": pane, "text": printing(path)})
        waited = await client.ok(
            "wait_for_text", {"pane": pane, "pattern": "got:.{8}", "regex": True, "since": sent["cursor"]}
        )
        assert waited["outcome"] == "matched", waited
        assert waited["line"].endswith(f"got:{SHOWN}"), waited
        assert waited["matched"] == f"got:{SHOWN}"[:12], waited

    checked_run(tp, body)


def test_anchored_guesses_are_no_oracle(tp: Termpilot, tmp_path: Path) -> None:
    path = secret_file(tmp_path)

    async def body(client: Client) -> None:
        pane = await shell(client, "oracle")
        sent = await client.ok("send_keys", {"pane": pane, "text": printing(path)})
        # The whole line is there before the guesses.
        first = await client.ok("wait_for_text", {"pane": pane, "pattern": "got:", "since": sent["cursor"]})
        assert first["outcome"] == "matched", first
        for guess in [f"got:{SECRET[0]}", "got:x", f"^got:{SECRET[:4]}", SECRET[2:6]]:
            for regex in (False, True):
                anchored = guess.startswith("^")
                pattern = ("^" if anchored else "") + re.escape(guess.lstrip("^")) if regex else guess.lstrip("^")
                waited = await client.ok(
                    "wait_for_text",
                    {"pane": pane, "pattern": pattern, "regex": regex, "since": sent["cursor"], "timeout_s": 1},
                )
                assert waited["outcome"] == "timeout", (guess, regex, waited)
        screen = await client.ok(
            "wait_for_text",
            {"pane": pane, "pattern": f"got:{SECRET[0]}", "include_screen": True, "timeout_s": 1},
        )
        assert screen["outcome"] == "timeout", screen

    checked_run(tp, body)


def test_a_cursor_inside_the_secret_shows_none_of_it(tp: Termpilot, tmp_path: Path) -> None:
    # Any offset can be put in a cursor: reads and waits from inside the
    # secret must not see its rest.
    path = secret_file(tmp_path)

    async def body(client: Client) -> None:
        pane = await shell(client, "forged")
        sent = await client.ok("send_keys", {"pane": pane, "text": printing(path)})
        waited = await client.ok("wait_for_text", {"pane": pane, "pattern": "got:", "since": sent["cursor"]})
        prefix, start = sent["cursor"].rsplit(".", 1)
        end = int(waited["cursor"].rsplit(".", 1)[1])
        for offset in range(int(start), end + 1):
            # Checked: no three characters of the secret in any result.
            read = await client.ok("capture_since", {"pane": pane, "cursor": f"{prefix}.{offset}"})
            assert "q7w" not in read["text"], (offset, read)
        secret_end = end - len("\r\n")
        for offset in range(secret_end - len(SECRET.encode()), secret_end):
            cursor = f"{prefix}.{offset}"
            for guess in [SECRET[-3:], "^q"]:
                args = {"pane": pane, "pattern": guess, "regex": guess.startswith("^"), "since": cursor}
                missed = await client.ok("wait_for_text", args | {"timeout_s": 0.3})
                assert missed["outcome"] == "timeout", (offset, guess, missed)

    checked_run(tp, body)


def test_run_batch_wait_steps_match_redacted_text(tp: Termpilot, tmp_path: Path) -> None:
    path = secret_file(tmp_path)

    async def body(client: Client) -> None:
        pane = await shell(client, "batch")
        steps = [
            {"op": "send_keys", "pane": pane, "text": printing(path)},
            {"op": "wait_for_text", "pane": pane, "pattern": "got:.{6}", "regex": True, "since": "$prev"},
            {"op": "send_keys", "pane": pane, "text": printing(path)},
            {"op": "wait_for_text", "pane": pane, "pattern": f"got:{SECRET[0]}", "since": "$prev", "timeout_s": 1},
        ]
        batch = await client.ok("run_batch", {"steps": steps})
        outcomes = json.dumps(batch)
        assert "got:[secret" in outcomes, batch
        assert '"timeout"' in outcomes, batch

    checked_run(tp, body)


def test_a_prompt_holding_the_secret_is_hidden_in_every_form(tp: Termpilot, tmp_path: Path) -> None:
    path = secret_file(tmp_path)
    asking = f"printf 'Keep %s? ' \"$(cat {path})\"; read answer"

    async def body(client: Client) -> None:
        # bash: a plain sh reading a line looks the same at its prompt and in `read`.
        bash = {"name": "ask", "command": "bash --norc --noprofile"}
        pane = (await client.ok("create_session", bash))["pane"]
        sent = await client.ok("send_keys", {"pane": pane, "text": asking})
        args = {"pane": pane, "pattern": "tp-never-printed", "since": sent["cursor"], "timeout_s": 10}
        waited = await client.call("wait_for_text", args)
        assert waited.structured_content["outcome"] == "awaiting_input", waited.structured_content
        assert waited.structured_content["prompt"] == f"Keep {SHOWN}? ", waited.structured_content
        # The text shows where it waits (once with {:?}, which escaped `"` and `\`).
        assert f"Keep {SHOWN}? " in text_of(waited), text_of(waited)
        # So does the error refusing a command typed into the waiting shell.
        message = await client.err("run_command", {"pane": pane, "command": "true", "timeout_s": 5})
        assert f"'Keep {SHOWN}? '" in message, message

    checked_run(tp, body)


def named_after_the_secret(tmp_path: Path) -> Path:
    """A copy of `sleep` whose process name is a secret."""
    program = tmp_path / PROGRAM
    shutil.copy(shutil.which("sleep") or "/bin/sleep", program)
    os.chmod(program, 0o755)
    return program


async def in_foreground(client: Client, pane: str) -> None:
    """Waits until the program named after the secret runs in `pane`."""

    async def running() -> bool:
        listed = await client.ok("list_panes")
        return any(p["id"] == pane and p["current_command"] == PROGRAM_SHOWN for p in listed["panes"])

    await poll(running, 10, "the program named after the secret in the foreground")


def test_a_program_named_like_a_secret(tp: Termpilot, tmp_path: Path) -> None:
    program = named_after_the_secret(tmp_path)

    async def body(client: Client) -> None:
        pane = await shell(client, "named")
        await client.ok("send_keys", {"pane": pane, "text": f"{program} 60"})
        await in_foreground(client, pane)
        message = await client.err("run_command", {"pane": pane, "command": "true", "timeout_s": 5})
        assert PROGRAM_SHOWN in message, message

    checked_run(tp, body)


def test_the_approval_question_hides_the_program_name(tp: Termpilot, tmp_path: Path) -> None:
    program = named_after_the_secret(tmp_path)
    person = FormPerson("decline")
    args = [*SECRET_ARGS, "--confirm", r"rm\s+-rf", "--log", "debug"]

    async def body() -> None:
        async with serve(tp, args, SECRET_ENV, elicitation_callback=person) as client:
            client.__class__ = type("CheckedRecording", (Checked, type(client)), {})
            pane = (await client.ok("create_session", {"name": "q", "command": f"exec {program} 60"}))["pane"]
            await in_foreground(client, pane)
            message = await client.err("send_keys", {"pane": pane, "text": "rm -rf ./nothing"})
            assert "declined" in message, message
        (question,) = person.questions
        assert f"running {PROGRAM_SHOWN}" in question.message, question.message
        assert_hidden(question.message, PROGRAM)

    run(body)
    assert_not_logged(tp.log_path.read_text(), PROGRAM)


def test_the_input_required_question_hides_the_program_name(tp: Termpilot, tmp_path: Path) -> None:
    # Protocol 2026-07-28: the question goes out as an input-required result.
    program = named_after_the_secret(tmp_path)
    person = ModernPerson("decline")
    args = ["serve", "-L", tp.socket, *SECRET_ARGS, "--confirm", r"rm\s+-rf"]
    params = StdioServerParameters(command=BIN, args=args, env=SECRET_ENV)

    async def body() -> None:
        modern = ModernClient(params, mode=MODERN, elicitation_callback=person, read_timeout_seconds=TEST_TIMEOUT)
        async with modern:
            client = Modern(modern)
            created = await client.ok("create_session", {"name": "q", "command": f"exec {program} 60"})
            await in_foreground(client, created["pane"])
            message = await client.err("send_keys", {"pane": created["pane"], "text": "rm -rf ./nothing"})
            assert "declined" in message, message
            for seen in client.seen:
                assert_hidden(seen, PROGRAM)
        (question,) = person.questions
        assert f"running {PROGRAM_SHOWN}" in question.message, question.message
        assert_hidden(question.message, PROGRAM)

    run(body)


def test_a_secret_the_person_typed_is_no_oracle(tp: Termpilot) -> None:
    person = PagePerson()

    async def body() -> None:
        async with serve(tp, [], elicitation_callback=person) as client:
            pane = await secret_prompt(client, "vault")
            typed = await client.ok("type_secret", {"pane": pane, "name": "vault_password"})
            since = typed["cursor"]
            waited = await client.ok(
                "wait_for_text", {"pane": pane, "pattern": "chars: .{6}", "regex": True, "since": since}
            )
            assert waited["outcome"] == "matched", waited
            assert waited["line"].endswith("chars: [secret vault_password]"), waited
            assert_hidden(waited, TYPED_VALUE, 6)
            for guess in [f"chars: {TYPED_VALUE[0]}", TYPED_VALUE[3:9]]:
                missed = await client.ok(
                    "wait_for_text", {"pane": pane, "pattern": guess, "since": since, "timeout_s": 1}
                )
                assert missed["outcome"] == "timeout", (guess, missed)

    run(body)
    assert_not_logged(tp.log_path.read_text(), TYPED_VALUE)


@pytest.mark.parametrize("split", [3, 5])
def test_a_secret_printed_in_pieces_shows_no_first_characters(tp: Termpilot, tmp_path: Path, split: int) -> None:
    head, rest = tmp_path / "head", tmp_path / "rest"
    head.write_text(SECRET[:split])
    rest.write_text(SECRET[split:])
    slow = f"printf 'go''t:%s' \"$(cat {head})\"; sleep 2; printf '%s\\n' \"$(cat {rest})\""

    async def body(client: Client) -> None:
        pane = await shell(client, "pieces")
        sent = await client.ok("send_keys", {"pane": pane, "text": slow})
        early = await client.ok(
            "wait_for_text",
            {"pane": pane, "pattern": "got:.+", "regex": True, "since": sent["cursor"], "timeout_s": 1.5},
        )
        assert early["outcome"] == "timeout", early
        # Checked: no three characters of the secret in any result.
        async def printed() -> str:
            text = (await client.ok("capture_since", {"pane": pane, "cursor": sent["cursor"]}))["text"]
            return text if "got:" in text else ""

        text = await poll(printed, 10, "got: in the output")
        line = text[text.rindex("got:") :].splitlines()[0]
        assert line in ("got:", f"got:{SHOWN}"), text
        whole = await client.ok(
            "wait_for_text", {"pane": pane, "pattern": "got:.+", "regex": True, "since": sent["cursor"]}
        )
        assert whole["line"].endswith(f"got:{SHOWN}"), whole

    checked_run(tp, body)
