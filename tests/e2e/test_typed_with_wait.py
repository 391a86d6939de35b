"""A call that types and then waits (`send_keys` or `paste_text` with `wait`)
is judged by `--confirm` like one that does not wait: the person is asked
about the line it would submit, and a declined line never runs. Each test runs
against a private tmux server (the `tp` fixture)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import Termpilot
from test_audit import run, serve
from test_trust_gate import PATTERN, Person, shell, still_there, target

CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "send_keys": ("send_keys", {"text": "rm -rf victim", "wait": {"for": "command", "timeout_s": 5}}),
    "paste_text": ("paste_text", {"text": "rm -rf victim", "bracketed": False, "enter": True, "wait": "command"}),
}


@pytest.mark.parametrize("call", list(CALLS))
def test_a_line_typed_before_a_wait_is_asked_about(tp: Termpilot, tmp_path: Path, call: str) -> None:
    victim = target(tmp_path)
    person = Person(False)
    tool, arguments = CALLS[call]

    async def body() -> None:
        async with serve(tp, ["--confirm", PATTERN], elicitation_callback=person) as client:
            pane = await shell(client, tmp_path)
            message = await client.err(tool, {**arguments, "pane": pane})
            assert "declined" in message, message
            assert len(person.questions) == 1, person.questions
            assert "victim" in person.questions[0], person.questions
            await still_there(client, pane, victim)

    run(body)
