"""End-to-end test: keys sent right after run_command returns are echoed once.

A shell with a line editor (bash, zsh, fish) runs its prompt's commands
(`PROMPT_COMMAND`, `precmd`) after the command line that run_command typed.
Until its line editor takes the terminal, the terminal itself echoes what is
typed, and the line editor echoes it again under the prompt: the line would
show twice on the screen and in a wait's tail, unless run_command returns
only once the shell is ready for input.
"""

from __future__ import annotations

import pytest
from conftest import poll
from test_waits import PROMPT, Server, WaitClient, server  # noqa: F401 (server is a fixture)

# A prompt whose command takes a while in the shell itself (no child process),
# as a git-aware prompt's functions may: keys sent while it runs would be
# echoed by the terminal, then by readline.
SLOW_PROMPT = "for ((i = 0; i < 50000; i++)); do :; done"


@pytest.mark.parametrize("trial", range(2))
def test_keys_sent_right_after_run_command_are_echoed_once(server: Server, trial: int) -> None:
    async def body(client: WaitClient) -> None:
        env = {"PS1": PROMPT, "PROMPT_COMMAND": SLOW_PROMPT}
        pane = (await client.ok("create_session", {"name": f"typeahead-{trial}", "env": env}))["pane"]

        async def prompted() -> bool:
            return (await client.capture(pane)).rstrip().endswith(PROMPT.rstrip())

        await poll(prompted, 5.0, f"the prompt in {pane}")
        ran = await client.ok("run_command", {"pane": pane, "command": "echo hi", "timeout_s": 10})
        assert ran["exit_code"] == 0 and ran["output"] == "hi", ran
        cursor = (await client.ok("send_keys", {"pane": pane, "text": "echo tw''o", "enter": True}))["cursor"]
        waited = await client.ok(
            "wait_for_text", {"pane": pane, "pattern": "two", "since": cursor, "timeout_s": 5}
        )
        assert waited["outcome"] == "matched" and waited["line"] == "two", waited
        assert waited["tail"].count("echo tw''o") == 1, waited["tail"]
        await poll(prompted, 5.0, f"the prompt back in {pane}")
        since = (await client.ok("capture_since", {"pane": pane, "cursor": cursor}))["text"]
        assert since.count("echo tw''o") == 1, since
        screen = await client.capture(pane)
        assert screen.count("echo tw''o") == 1, screen

    server.run(body)
