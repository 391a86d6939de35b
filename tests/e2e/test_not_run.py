"""End-to-end: a command line the shell does not run ends at once.

A command line with a syntax error, or an unfinished one (an unclosed
quote), starts nothing: run_command says so (`not_run`) without waiting for
its timeout, gives the shell's message, and leaves the pane at its prompt
for the next command.
"""

from __future__ import annotations

import shutil

import pytest
from conftest import Client, Termpilot, poll, text_of

# Shells whose panes run_command types into, with their options for a clean
# start; the ones not installed are skipped, saying so.
SHELLS = {"bash": "bash --norc --noprofile", "sh": "sh", "zsh": "zsh -f", "fish": "fish --no-config"}


async def shell_pane(client: Client, shell: str) -> str:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    created = await client.ok("create_session", {"name": f"not-run-{shell}", "command": SHELLS[shell]})
    return created["pane"]


@pytest.mark.parametrize("shell", sorted(SHELLS))
def test_a_syntax_error_ends_the_call_with_the_shell_s_message(tp: Termpilot, shell: str) -> None:
    async def body(client: Client) -> None:
        pane = await shell_pane(client, shell)
        ran = await client.ok("run_command", {"pane": pane, "command": "echo )", "timeout_s": 20})
        assert ran["not_run"] == "syntax_error", ran
        assert ran["exit_code"] is None and not ran["timed_out"] and ran["command_id"] is None, ran
        assert ran["elapsed_s"] < 20, ran
        assert ":" in ran["output"] and "7770" not in ran["output"], ran
        after = await client.ok("run_command", {"pane": pane, "command": "echo after", "timeout_s": 20})
        assert after["exit_code"] == 0 and after["output"] == "after", after

    tp.run(body)


@pytest.mark.parametrize("shell", sorted(SHELLS))
def test_an_unfinished_line_gives_the_prompt_back(tp: Termpilot, shell: str) -> None:
    async def body(client: Client) -> None:
        pane = await shell_pane(client, shell)
        for unfinished in ("echo 'unclosed", "if true; then echo x", "echo $("):
            ran = await client.ok("run_command", {"pane": pane, "command": unfinished, "timeout_s": 20})
            # bash and zsh read on into the wrapper and reject it; the
            # result still says the line was unfinished, not where the
            # wrapper's text went wrong.
            assert ran["not_run"] == "incomplete", (unfinished, ran)
            assert not ran["timed_out"], ran
            assert "7770" not in ran["output"], ran
            if ran["output"]:
                assert "unfinished" in ran["output"], ran
            after = await client.ok("run_command", {"pane": pane, "command": "echo after", "timeout_s": 20})
            assert after["exit_code"] == 0 and after["output"] == "after", after

        async def no_marker_shown() -> bool:
            return "7770" not in await client.capture(pane)

        await poll(no_marker_shown, 5.0, f"a screen without wrapper text in {pane}")

    tp.run(body)


def test_a_broken_step_in_a_batch_is_reported_not_run(tp: Termpilot) -> None:
    async def body(client: Client) -> None:
        pane = await shell_pane(client, "bash")
        called = await client.call(
            "run_batch",
            {"steps": [{"op": "run_command", "pane": pane, "command": "echo )", "timeout_s": 20}]},
        )
        assert not called.is_error, text_of(called)
        step = called.structured_content["steps"][0]
        assert step["ok"] and step["result"]["not_run"] == "syntax_error", step
        assert "not run (syntax_error)" in text_of(called), text_of(called)

    tp.run(body)


def test_a_shell_quoting_the_line_it_ran_does_not_show_the_wrapper(tp: Termpilot) -> None:
    # fish quotes the source line of an unknown command in its message: that
    # line holds the wrapper around the agent's command.
    async def body(client: Client) -> None:
        pane = await shell_pane(client, "fish")
        ran = await client.ok("run_command", {"pane": pane, "command": "fi", "timeout_s": 20})
        assert ran["exit_code"] == 127 and ran.get("not_run") is None, ran
        assert "Unknown command: fi" in ran["output"], ran
        assert "7770" not in ran["output"] and "printf" not in ran["output"], ran

    tp.run(body)
