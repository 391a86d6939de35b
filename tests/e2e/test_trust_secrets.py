"""End-to-end attacks on secrets (issue 21, class 1 and item 3): a secret
typed with `type_secret` must reach the program that asked for it and
nothing else.

An attacker here is anything running in another pane of the same tmux
server: it has `$TMUX`, so it can read tmux's message log (every command a
client sent: `show-messages`), list and show every paste buffer, read the
environment tmux gives panes and the tmux server's own environment
(`/proc/$PPID/environ`), and look for files left behind. The secret is
typed on each kind of host (this machine, an ssh host on the test's own
sshd, an exec host), by configuration and by the person on the secret page;
the attacker's findings are written to files the test reads directly (not
through termpilot, whose results would redact the value).

A secret bound to programs (`--secret NAME=env:VAR;for=python3`) is typed
into a python3 getpass prompt and refused at `cat` or bash's `read`.
"""

from __future__ import annotations

import hashlib
import os
import shlex
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import SERVER_ENV, Client, Termpilot, poll
from test_elicitation import Person, serve
from test_hosts import Far, far_sshd, ssh_args  # noqa: F401 (a fixture)

VALUE = "Tr4ce-free-s3cret-value"
NAME = "vault"
VARIABLE = "TP_TRUST_SECRET"
ENV = SERVER_ENV | {"SHELL": "/bin/sh", VARIABLE: VALUE}

# Where a trace of a file left behind would be.
TEMP_DIRS = [d for d in (os.environ.get("XDG_RUNTIME_DIR"), "/dev/shm", os.environ.get("TMPDIR"), "/tmp") if d]

# A program that waits at a hidden prompt, then prints only the length and a
# hash of what it read (the value itself would be redacted in results).
READ_SECRET = (
    "bash --norc --noprofile -c 'read -s -p \"Password: \" v; "
    'printf "\\nlen=%s sum=%s\\n" "${#v}" "$(printf %s "$v" | sha256sum | cut -c1-16)"; sleep 60\''
)


def received(value: str) -> str:
    """What READ_SECRET prints for `value`."""
    return f"len={len(value)} sum={hashlib.sha256(value.encode()).hexdigest()[:16]}"


def inspect_script(out: Path) -> str:
    """An attacker's look around from a pane: tmux's message log, every
    buffer, the environments; each into a file of `out`."""
    o = shlex.quote(str(out))
    return (
        f"tmux show-messages > {o}/messages 2>&1; "
        f"tmux list-buffers > {o}/buffers 2>&1; "
        f"for b in $(tmux list-buffers -F '#{{buffer_name}}'); do tmux show-buffer -b \"$b\"; done > {o}/contents 2>&1; "
        f"env > {o}/env; printenv {VARIABLE} | rev > {o}/printenv; "
        f"tr '\\0' '\\n' < /proc/$PPID/environ > {o}/server_environ; "
        f"tmux show-environment -g > {o}/global 2>&1; "
        "echo inspected-$((6*7))"
    )


def leftovers() -> list[str]:
    found = []
    for directory in TEMP_DIRS:
        try:
            found += [f"{directory}/{n}" for n in os.listdir(directory) if n.startswith("termpilot-secret-")]
        except OSError:
            pass
    return found


def where(host: str) -> dict[str, Any]:
    return {} if host == "local" else {"host": host}


async def hidden_prompt(client: Client, host: str, name: str, command: str = READ_SECRET) -> str:
    created = await client.ok("create_session", {"name": name, "command": command} | where(host))
    pane = created["pane"]
    waited = await client.ok("wait_for_text", {"pane": pane, "pattern": "tp-never-printed", "timeout_s": 10})
    assert waited["outcome"] == "awaiting_input" and waited["secret"] is True, waited
    return pane


async def shows(client: Client, pane: str, pattern: str, since: str | None = None) -> dict[str, Any]:
    args = {"pane": pane, "pattern": pattern, "timeout_s": 8, "input_settle_ms": 0}
    if since is not None:
        args["since"] = since
    found = await client.ok("wait_for_text", args)
    assert found["outcome"] == "matched", (found, await client.capture(pane))
    return found


async def look_around(client: Client, host: str, out: Path) -> None:
    """Runs the attacker's look around in a pane of its own, to its end."""
    command = f"sh -c {shlex.quote(inspect_script(out) + '; sleep 60')}"
    created = await client.ok("create_session", {"name": "attacker", "command": command} | where(host))
    pane = created["pane"]
    async def inspected() -> bool:
        return "inspected-42" in await client.capture(pane)

    await poll(inspected, 10, "the attacker's look around")


def assert_no_trace(out: Path, value: str) -> None:
    messages = (out / "messages").read_text(errors="replace")
    # The log was read: it holds the commands termpilot sent.
    assert "command:" in messages, messages
    for name in ("messages", "buffers", "contents", "env", "printenv", "server_environ", "global"):
        text = (out / name).read_text(errors="replace")
        for form in (value, value[::-1]):
            assert form not in text, f"the secret is in {name}: {text}"
    assert (out / "server_environ").read_text().strip(), "the tmux server's environment was not read"
    assert not leftovers(), leftovers()


def far_host(host: str, far_sshd_or_none: Any) -> tuple[list[str], Far | None]:
    """The serve arguments for `host`, and an exec host's directory."""
    if host == "ssh":
        server, _ = far_sshd_or_none
        return ssh_args(server), None
    if host == "exec":
        far = Far()
        return ["--host", f"exec=exec:env TMUX_TMPDIR={far.dir}"], far
    return [], None


@pytest.fixture
def maybe_sshd(request: Any) -> Any:
    """The private sshd, only for the ssh case."""
    if request.node.callspec.params.get("host") != "ssh":
        return None
    return request.getfixturevalue("far_sshd")


@pytest.mark.parametrize("host", ["local", "ssh", "exec"])
def test_a_configured_secret_leaves_no_trace_in_tmux(tp: Termpilot, tmp_path: Path, maybe_sshd: Any, host: str) -> None:
    extra, far = far_host(host, maybe_sshd)
    out = tmp_path / "found"
    out.mkdir()

    async def body(client: Client) -> None:
        pane = await hidden_prompt(client, host, "victim")
        typed = await client.ok("type_secret", {"pane": pane, "name": NAME})
        assert typed["typed_by_person"] is False, typed
        await shows(client, pane, received(VALUE), typed["cursor"])
        await look_around(client, host, out)

    try:
        tp.run(body, env=ENV, extra_args=[*extra, "--secret", f"{NAME}=env:{VARIABLE}"])
    finally:
        if far is not None:
            far.close()
    assert_no_trace(out, VALUE)


def test_a_secret_the_person_types_leaves_no_trace_in_tmux(tp: Termpilot, tmp_path: Path) -> None:
    person = Person()
    out = tmp_path / "found"
    out.mkdir()

    async def body() -> None:
        with anyio.fail_after(60):
            await typed_by_person()

    async def typed_by_person() -> None:
        async with serve(tp, [], elicitation_callback=person) as client:
            pane = await hidden_prompt(client, "local", "victim")
            typed = await client.ok("type_secret", {"pane": pane, "name": "vault_password"})
            assert typed["typed_by_person"] is True, typed
            await shows(client, pane, received(VALUE_BY_PERSON), typed["cursor"])
            await look_around(client, "local", out)

    anyio.run(body)
    assert person.checks, "the page was not used"
    assert_no_trace(out, VALUE_BY_PERSON)


# The value test_elicitation's Person submits on the page.
VALUE_BY_PERSON = "Pa55-w0rd-typed-by-the-person"


@pytest.mark.parametrize("host", ["local", "exec"])
def test_an_env_secret_is_in_no_environment_termpilot_starts(tp: Termpilot, tmp_path: Path, host: str) -> None:
    # Configured through TERMPILOT_SECRETS, which must not be passed on either.
    extra, far = far_host(host, None)
    out = tmp_path / "found"
    out.mkdir()
    env = ENV | {"TERMPILOT_SECRETS": f"{NAME}=env:{VARIABLE}"}

    async def body(client: Client) -> None:
        await look_around(client, host, out)

    try:
        tp.run(body, env=env, extra_args=extra)
    finally:
        if far is not None:
            far.close()
    for name in ("env", "server_environ", "global"):
        text = (out / name).read_text(errors="replace")
        assert VALUE not in text and VARIABLE not in text, f"{name}: {text}"
        assert "TERMPILOT_SECRETS" not in text, f"{name}: {text}"
    assert "PATH=" in (out / "server_environ").read_text(), "the tmux server's environment was not read"
    assert (out / "printenv").read_text().strip() == "", (out / "printenv").read_text()


GETPASS = (
    "python3 -c 'import getpass, hashlib; v = getpass.getpass(\"Token: \"); "
    'print("len=%d sum=%s" % (len(v), hashlib.sha256(v.encode()).hexdigest()[:16]))\'; sleep 60'
)


@pytest.mark.parametrize("host", ["local", "ssh"])
def test_a_bound_secret_goes_only_to_its_programs(tp: Termpilot, tmp_path: Path, maybe_sshd: Any, host: str) -> None:
    extra, _ = far_host(host, maybe_sshd)
    stolen = tmp_path / "stolen"
    stolen.write_text("")
    s = shlex.quote(str(stolen))
    attempts = {
        "cat": f"bash --norc --noprofile -c 'stty -echo; cat > {s}'",
        "bash": f"bash --norc --noprofile -c 'read -s -p \"Password: \" v; printf %s \"$v\" > {s}'",
    }

    async def body(client: Client) -> None:
        for program, command in attempts.items():
            pane = await hidden_prompt(client, host, f"thief-{program}", command)
            refused = await client.err("type_secret", {"pane": pane, "name": NAME})
            assert "refusing to type the secret" in refused, refused
            assert f"/{program} runs in its foreground" in refused, refused
            assert "only into python3" in refused and VALUE not in refused, refused
        for name, python in ((NAME, "python3"), ("by_path", python3)):
            getpass = f"bash --norc --noprofile -c {shlex.quote(python + GETPASS.removeprefix('python3'))}"
            pane = await hidden_prompt(client, host, f"allowed-{name}", getpass)
            typed = await client.ok("type_secret", {"pane": pane, "name": name})
            await shows(client, pane, received(VALUE), typed["cursor"])

    # By name, and by the path of the link that names it (python3 -> python3.X).
    python3 = "/usr/bin/python3"
    if not os.path.exists(python3):
        pytest.skip(f"{python3} is not installed")
    secrets = [f"{NAME}=env:{VARIABLE};for=python3", f"by_path=env:{VARIABLE};for={python3}"]
    if host == "ssh":
        # On another host a path is compared as /proc shows it (links resolved).
        secrets[1] = f"by_path=env:{VARIABLE};for={os.path.realpath(python3)}"
    args = [*extra, *(arg for secret in secrets for arg in ("--secret", secret))]
    tp.run(body, env=ENV, extra_args=args)
    assert stolen.read_text() == "", "a refused program got the secret"
    assert not leftovers(), leftovers()
