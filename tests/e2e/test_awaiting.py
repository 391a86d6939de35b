"""End-to-end tests of programs that wait for input (issue 14): the outcome
`awaiting_input` of waits and run_command, `type_secret` with a configured
secret, and the redaction of that secret from every result, over stdio with
the official MCP Python SDK against a private tmux server per test.

Panes run bash without rc files (the crate tests' tmux configuration). Real
programs ask where they can here: apt-get (as root, unable to change
anything), su (as a user who must give root's password), ssh to the test's
own sshd (sshd.py) with an empty known_hosts, git commit's editor. The
secret's value is recorded with every result the server returns and checked
absent from all of them at the end of each test.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import tempfile
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import BIN, REQUEST_TIMEOUT, SERVER_ENV, Client, poll, single_leaf, text_of
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from sshd import Sshd

TMUX_CONFIG = str(Path(__file__).resolve().parents[2] / "crates/tmux/tests/support/tmux.conf")
PROMPT = "tp-prompt$ "
SECRET_NAME = "db_password"
SECRET_VALUE = "s3cr3t-Zq8-value"
ENV = SERVER_ENV | {"SHELL": "/bin/bash", "TP_E2E_SECRET": SECRET_VALUE}
TEST_LIMIT = 60.0
# How long a program that does not wait for input is watched.
WATCH_S = 2.5


class RecordingClient(Client):
    """A Client that keeps every result, and lets a wait last its timeout."""

    def __init__(self, session: ClientSession, tools: list[Any]) -> None:
        super().__init__(session, tools)
        self.seen: list[str] = []

    async def call(self, name: str, arguments: dict[str, Any] | None = None):
        arguments = arguments or {}
        read_timeout = REQUEST_TIMEOUT + float(arguments.get("timeout_s") or 0)
        result = await self.session.call_tool(name, arguments, read_timeout_seconds=read_timeout)
        self.seen.append(text_of(result))
        self.seen.append(json.dumps(result.structured_content))
        return result


class Server:
    def __init__(
        self,
        socket: str,
        log: Path,
        prefix: tuple[str, ...] = (),
        env: dict[str, str] = ENV,
        secrets: tuple[str, ...] = (f"{SECRET_NAME}=env:TP_E2E_SECRET",),
        home: Path | None = None,
    ) -> None:
        self.socket = socket
        self.log = log
        # A command `termpilot` runs under (e.g. setpriv, to run as another user).
        self.prefix = prefix
        self.env = env
        # The --secret options (none: the environment may configure them).
        self.secrets = secrets
        # A directory of the server's own, for a server run as another user:
        # it holds copies of the binary and the tmux config and is the working
        # directory of the server and its panes, since the checkout may sit in
        # a directory that user cannot enter.
        self.home = home

    @asynccontextmanager
    async def connect(self):
        binary, config = BIN, TMUX_CONFIG
        if self.home is not None:
            binary, config = str(self.home / "termpilot"), str(self.home / "tmux.conf")
        args = ["serve", "-L", self.socket, "--tmux-config", config]
        for secret in self.secrets:
            args += ["--secret", secret]
        command, *before = [*self.prefix, binary]
        params = StdioServerParameters(command=command, args=[*before, *args], env=self.env, cwd=self.home)
        with open(self.log, "a", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT) as session:
                    await session.initialize()
                    listing = await session.list_tools()
                    client = RecordingClient(session, listing.tools)
                    yield client
                    for seen in client.seen:
                        assert SECRET_VALUE not in seen, f"the secret's value was returned: {seen}"

    def run(self, body) -> None:
        async def main() -> None:
            with anyio.fail_after(TEST_LIMIT):
                async with self.connect() as client:
                    await body(client)

        try:
            anyio.run(main)
        except BaseExceptionGroup as group:
            raise single_leaf(group) from None
        log = self.log.read_text() if self.log.exists() else ""
        assert SECRET_VALUE not in log, "the secret's value was logged"


@pytest.fixture
def server(tp) -> Server:
    return Server(tp.socket, tp.log_path)


async def bash_pane(client: Client, name: str) -> str:
    pane = (await client.ok("create_session", {"name": name, "env": {"PS1": PROMPT}}))["pane"]

    async def prompted() -> bool:
        return (await client.capture(pane)).rstrip().endswith(PROMPT.rstrip())

    await poll(prompted, 5.0, f"the prompt in {pane}")
    return pane


async def wait_after(client: Client, pane: str, command: str, timeout_s: float = 10, **extra: Any):
    cursor = (await client.ok("send_keys", {"pane": pane, "text": command}))["cursor"]
    args = {"pane": pane, "pattern": "tp-never-printed", "since": cursor, "timeout_s": timeout_s}
    return await client.ok("wait_for_text", args | extra)


WAITING = {
    "read_p": ("read -p 'Your name: ' name", {"secret": False, "line_mode": True, "prompt": "Your name: "}),
    "read_s": ("read -s -p 'Password: ' pw", {"secret": True, "line_mode": True, "prompt": "Password: "}),
    "cat": ("cat", {"secret": False, "line_mode": True, "program": "cat"}),
    "python_repl": ("python3 -q", {"secret": False, "line_mode": False}),
    "getpass": ("python3 -c 'import getpass; getpass.getpass(\"Token: \")'", {"secret": True, "prompt": "Token: "}),
    "less": ("less /etc/hostname", {"secret": False, "alternate_screen": True, "program": "less"}),
    "node_repl": ("node", {"secret": False, "line_mode": False, "program": "node"}),
    # The question apt-get asks, read with input() (the real apt-get has a test
    # of its own below; it needs root and package lists).
    "yes_no_question": (
        "python3 -c 'input(\"Do you want to continue? [Y/n] \")'",
        {"secret": False, "line_mode": True, "prompt": "Do you want to continue? [Y/n] "},
    ),
}


@pytest.mark.parametrize("case", list(WAITING))
def test_waits_end_when_the_program_waits_for_input(server: Server, case: str) -> None:
    command, expected = WAITING[case]
    program = command.split()[0]
    if program in ("python3", "node", "less") and shutil.which(program) is None:
        pytest.skip(f"{program} is not installed")

    async def body(client: RecordingClient) -> None:
        pane = await bash_pane(client, case.replace("_", "-"))
        result = await wait_after(client, pane, command)
        assert result["outcome"] == "awaiting_input", result
        for key, value in expected.items():
            assert result[key] == value, (key, result)
        assert result["elapsed_s"] < 10

    server.run(body)


NOT_WAITING = {
    "sleep": "sleep 5",
    "busy_loop": "while :; do :; done",
    "yes": "yes > /dev/null",
    "tail_f": "tail -f /etc/hostname",
    "pipe_reader": "sleep 4 | cat",
    "slow_output": "for i in 1 2 3 4; do echo tick $i; sleep 1; done",
    "shell_prompt": "echo finished",
    # A shell without a line editor reads its prompt in line mode, echoing.
    "sh_prompt": "PS1='sh$ ' ENV= sh -i",
}


@pytest.mark.parametrize("case", list(NOT_WAITING))
def test_programs_that_do_not_wait_for_input(server: Server, case: str) -> None:
    async def body(client: RecordingClient) -> None:
        pane = await bash_pane(client, case.replace("_", "-"))
        result = await wait_after(client, pane, NOT_WAITING[case], timeout_s=WATCH_S)
        assert result["outcome"] == "timeout", result
        assert "secret" not in result

    server.run(body)


def test_input_settle_zero_turns_detection_off_and_idle_waits_detect(server: Server) -> None:
    async def body(client: RecordingClient) -> None:
        pane = await bash_pane(client, "settle")
        off = await wait_after(client, pane, "cat", timeout_s=1.5, input_settle_ms=0)
        assert off["outcome"] == "timeout", off
        idle = await client.ok("wait_for_idle", {"pane": pane, "quiet_ms": 5000, "timeout_s": 10})
        assert idle["outcome"] == "awaiting_input", idle
        assert idle["program"] == "cat"

    server.run(body)


def test_run_command_password_prompt_type_secret_and_redaction(server: Server) -> None:
    async def body(client: RecordingClient) -> None:
        pane = await bash_pane(client, "secret")
        command = "read -s -p 'Password: ' pw; echo; echo \"you typed: $pw\"; seq 1 300"
        asked = await client.ok("run_command", {"pane": pane, "command": command, "timeout_s": 10})
        assert asked["awaiting_input"] is True, asked
        assert asked["secret"] is True and asked["prompt"] == "Password: ", asked
        assert asked["exit_code"] is None and not asked["timed_out"]
        command_id = asked["command_id"]
        assert command_id
        typed = await client.ok("type_secret", {"pane": pane, "name": SECRET_NAME})
        assert typed["name"] == SECRET_NAME
        done = await client.ok("wait_for_command", {"command_id": command_id, "timeout_s": 10, "max_tokens": 100})
        assert done["exit_code"] == 0, done
        assert done["output_id"], done
        page = await client.ok("read_output", {"output_id": done["output_id"], "grep": "you typed"})
        assert f"you typed: [secret {SECRET_NAME}]" in json.dumps(page), page
        screen = await client.ok("capture_pane", {"pane": pane, "scrollback": 400, "max_tokens": 20000})
        assert f"you typed: [secret {SECRET_NAME}]" in screen["text"], screen
        since = await client.ok("capture_since", {"pane": pane, "cursor": asked["cursor"]})
        assert f"[secret {SECRET_NAME}]" in since["text"], since

    server.run(body)


def test_run_command_of_a_pager_says_it_is_on_the_alternate_screen(server: Server, tmp_path: Path) -> None:
    if shutil.which("less") is None:
        pytest.skip("less is not installed")
    page = tmp_path / "page.txt"
    page.write_text("a page to read\n")

    async def body(client: RecordingClient) -> None:
        pane = await bash_pane(client, "pager")
        command = shlex.join(["less", str(page)])
        asked = await client.ok("run_command", {"pane": pane, "command": command, "timeout_s": 10})
        assert asked["awaiting_input"] is True and asked["program"] == "less", asked
        assert asked["alternate_screen"] is True and asked["line_mode"] is False, asked
        assert "screen" in client.seen[-2].splitlines()[0], client.seen[-2]
        await client.ok("send_keys", {"pane": pane, "keys": ["q"]})
        done = await client.ok("wait_for_command", {"command_id": asked["command_id"], "timeout_s": 10})
        assert done["exit_code"] == 0, done
        assert "alternate_screen" not in done, done

    server.run(body)


async def typed_secret_shows_as_its_name(client: RecordingClient, pane: str, name: str) -> None:
    """Answers a `read -s` with the secret `name`; the command prints what it
    read, which every result shows as `[secret NAME]`."""
    command = "read -s -p 'Password: ' pw; echo; echo \"you typed: $pw\""
    asked = await client.ok("run_command", {"pane": pane, "command": command, "timeout_s": 10})
    assert asked["awaiting_input"] is True and asked["secret"] is True, asked
    await client.ok("type_secret", {"pane": pane, "name": name})
    done = await client.ok("wait_for_command", {"command_id": asked["command_id"], "timeout_s": 10})
    assert done["exit_code"] == 0, done
    assert done["output"].splitlines()[-1] == f"you typed: [secret {name}]", done


# The server's environment without the variable the default secret reads.
ENV_WITHOUT_SECRET = {name: value for name, value in ENV.items() if name != "TP_E2E_SECRET"}


def test_a_secret_read_from_a_file(tp, tmp_path: Path) -> None:
    secret_file = tmp_path / "db_password"
    secret_file.write_text(SECRET_VALUE + "\n")
    secrets = (f"{SECRET_NAME}=file:{secret_file}",)
    server = Server(tp.socket, tp.log_path, env=ENV_WITHOUT_SECRET, secrets=secrets)

    async def body(client: RecordingClient) -> None:
        pane = await bash_pane(client, "file-secret")
        await typed_secret_shows_as_its_name(client, pane, SECRET_NAME)

    server.run(body)


def test_secrets_from_the_environment_variable(tp, tmp_path: Path) -> None:
    token_value = "t0ken-Xw3-value"
    token_file = tmp_path / "api_token"
    token_file.write_text(token_value)
    configured = f"{SECRET_NAME}=env:TP_E2E_SECRET,api_token=file:{token_file}"
    server = Server(tp.socket, tp.log_path, env=ENV | {"TERMPILOT_SECRETS": configured}, secrets=())

    async def body(client: RecordingClient) -> None:
        pane = await bash_pane(client, "env-secrets")
        unknown = await client.err("type_secret", {"pane": pane, "name": "nope"})
        assert f"{SECRET_NAME}, api_token" in unknown, unknown
        await typed_secret_shows_as_its_name(client, pane, SECRET_NAME)
        await typed_secret_shows_as_its_name(client, pane, "api_token")
        assert not any(token_value in seen for seen in client.seen), client.seen

    server.run(body)


def test_a_secret_never_appears_in_an_error_message(server: Server, tmp_path: Path) -> None:
    # A program that puts the secret into its question: the error refusing
    # the next run_command quotes that question.
    secret_file = tmp_path / "value"
    secret_file.write_text(SECRET_VALUE)
    command = f"printf 'Keep %s? ' \"$(cat {shlex.quote(str(secret_file))})\"; read answer"

    async def body(client: RecordingClient) -> None:
        pane = await bash_pane(client, "error-secret")
        asked = await wait_after(client, pane, command)
        assert asked["outcome"] == "awaiting_input", asked
        assert asked["prompt"] == f"Keep [secret {SECRET_NAME}]? ", asked
        refused = await client.err("run_command", {"pane": pane, "command": "echo next", "timeout_s": 5})
        assert f"waits for input at 'Keep [secret {SECRET_NAME}]? '" in refused, refused
        assert SECRET_VALUE not in refused, refused

    server.run(body)


def test_type_secret_refusals(server: Server) -> None:
    async def body(client: RecordingClient) -> None:
        pane = await bash_pane(client, "refusals")
        unknown = await client.err("type_secret", {"pane": pane, "name": "nope"})
        assert SECRET_NAME in unknown, unknown
        at_prompt = await client.err("type_secret", {"pane": pane, "name": SECRET_NAME})
        assert "not waiting for input" in at_prompt, at_prompt
        asked = await client.ok("run_command", {"pane": pane, "command": "read -p 'Name: ' n", "timeout_s": 10})
        assert asked["awaiting_input"] and asked["secret"] is False, asked
        echoing = await client.err("type_secret", {"pane": pane, "name": SECRET_NAME})
        assert "the terminal would echo it; wait for a password prompt" in echoing, echoing
        screen = await client.capture(pane)
        assert "Name: " in screen

    server.run(body)


def test_run_batch_wait_step_reports_awaiting_input(server: Server) -> None:
    async def body(client: RecordingClient) -> None:
        pane = await bash_pane(client, "batch")
        steps = [
            {"op": "send_keys", "pane": pane, "text": "read -p 'Continue? [Y/n] ' answer"},
            {"op": "wait_for_text", "pane": pane, "pattern": "tp-never-printed", "since": "$prev", "timeout_s": 10},
        ]
        batch = await client.ok("run_batch", {"steps": steps})
        wait = batch["steps"][1]
        assert "awaiting_input" in json.dumps(wait), wait
        assert "Continue? [Y/n] " in json.dumps(wait), wait

    server.run(body)


def test_wait_for_command_returns_awaiting_input_again_until_answered(server: Server) -> None:
    async def body(client: RecordingClient) -> None:
        pane = await bash_pane(client, "ask-twice")
        command = "read -p 'Your name: ' name; echo \"hello $name\""
        asked = await client.ok(
            "run_command", {"pane": pane, "command": command, "timeout_s": 10, "input_settle_ms": 100}
        )
        assert asked["awaiting_input"] is True and asked["prompt"] == "Your name: ", asked
        command_id = asked["command_id"]
        # Nothing answered: the command still waits at the same prompt.
        again = await client.ok("wait_for_command", {"command_id": command_id, "timeout_s": 10})
        assert again["awaiting_input"] is True and again["timed_out"] is False, again
        assert again["exit_code"] is None and again["command_id"] == command_id, again
        assert again["prompt"] == "Your name: " and again["line_mode"] is True, again
        assert again["elapsed_s"] < 10, again
        await client.ok("send_keys", {"pane": pane, "text": "ada", "enter": True})
        done = await client.ok("wait_for_command", {"command_id": command_id, "timeout_s": 10})
        assert done["exit_code"] == 0 and done["awaiting_input"] is False, done
        assert done["output"].splitlines()[-1] == "hello ada", done

    server.run(body)


def test_run_batch_command_and_idle_steps_stop_at_a_prompt(server: Server) -> None:
    async def body(client: RecordingClient) -> None:
        pane = await bash_pane(client, "batch-ask")
        command = "read -s -p 'Password: ' pw; echo; echo got-${#pw}"
        steps = [
            {"op": "run_command", "pane": pane, "command": command, "timeout_s": 10},
            {"op": "wait_for_idle", "pane": pane, "quiet_ms": 5000, "timeout_s": 10},
        ]
        batch = await client.ok("run_batch", {"steps": steps})
        assert [step["ok"] for step in batch["steps"]] == [True, True], batch
        ran, idle = (step["result"] for step in batch["steps"])
        assert ran["awaiting_input"] is True and ran["secret"] is True, ran
        assert ran["prompt"] == "Password: " and ran["command_id"], ran
        assert idle["outcome"] == "awaiting_input" and idle["secret"] is True, idle
        assert idle["prompt"] == "Password: ", idle
        text = client.seen[-2]
        assert "[0] run_command: awaiting input at 'Password: ', secret" in text, text
        await client.ok("type_secret", {"pane": pane, "name": SECRET_NAME})
        done = await client.ok("wait_for_command", {"command_id": ran["command_id"], "timeout_s": 10})
        assert done["exit_code"] == 0 and done["output"].endswith(f"got-{len(SECRET_VALUE)}"), done

    server.run(body)


async def answer_and_see(client: Client, pane: str, text: str, expected: str) -> dict[str, Any]:
    cursor = (await client.ok("send_keys", {"pane": pane, "text": text}))["cursor"]
    args = {"pane": pane, "pattern": expected, "since": cursor, "timeout_s": 20}
    seen = await client.ok("wait_for_text", args)
    assert seen["outcome"] == "matched", seen
    return seen


def apt_package_with_dependencies() -> str | None:
    """A package apt-get would install with others (so it asks before it goes
    on), or None; simulated, without taking apt's locks."""
    for package in ("fortune-mod", "cowsay", "figlet", "bsdgames", "ed"):
        simulated = subprocess.run(
            ["apt-get", "install", "-s", "-o", "Debug::NoLocking=1", package],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        installs = [line for line in simulated.stdout.splitlines() if line.startswith("Inst ")]
        if simulated.returncode == 0 and len(installs) >= 2:
            return package
    return None


def test_apt_get_install_asks_to_continue(server: Server, tmp_path: Path) -> None:
    if shutil.which("apt-get") is None:
        pytest.skip("apt-get is not installed")
    if os.geteuid() != 0:
        pytest.skip("apt-get install asks only when run as root")
    package = apt_package_with_dependencies()
    if package is None:
        pytest.skip("apt-get knows no uninstalled package with dependencies here (no package lists?)")
    archives = tmp_path / "archives"
    archives.mkdir()
    # Nothing can change the machine, whatever the answer: apt-get only
    # downloads (--download-only), into a directory of the test's own,
    # through a proxy on a closed port; it takes no lock, and is told to ask.
    options = {
        "Debug::NoLocking": "1",
        "Dir::Cache::Archives": f"{archives}/",
        "Acquire::http::Proxy": "http://127.0.0.1:9/",
        "Acquire::https::Proxy": "http://127.0.0.1:9/",
        "Acquire::Retries": "0",
        "APT::Get::Assume-Yes": "false",
    }
    words = ["apt-get", "install", "--download-only"]
    for name, value in options.items():
        words += ["-o", f"{name}={value}"]
    command = shlex.join([*words, package])

    async def body(client: RecordingClient) -> None:
        pane = await bash_pane(client, "apt")
        result = await wait_after(client, pane, command, timeout_s=30)
        assert result["outcome"] == "awaiting_input", result
        assert result["program"] == "apt-get", result
        assert result["prompt"].startswith("Do you want to continue? [Y/n]"), result
        assert result["secret"] is False and result["line_mode"] is True, result
        await answer_and_see(client, pane, "n", "Abort.")
        assert [p.name for p in archives.iterdir() if p.suffix == ".deb"] == []

    server.run(body)


NOBODY_UID = 65534
AS_NOBODY = ("setpriv", f"--reuid={NOBODY_UID}", f"--regid={NOBODY_UID}", "--clear-groups")


def su_command() -> str:
    """`su root -c true` as a user who must give root's password: this user
    when not root, else nobody (root itself is never asked)."""
    if os.geteuid() != 0:
        return "su root -c true"
    return shlex.join([*AS_NOBODY, "su", "root", "-c", "true"])


def test_su_password_prompt_is_secret(server: Server) -> None:
    # sudo asks the same way (through PAM, echo off), but is not installed
    # everywhere and never asks root; su is part of every Debian system.
    for program in ("su", "setpriv"):
        if shutil.which(program) is None:
            pytest.skip(f"{program} is not installed")

    async def body(client: RecordingClient) -> None:
        pane = await bash_pane(client, "su")
        result = await wait_after(client, pane, su_command())
        assert result["outcome"] == "awaiting_input", result
        assert result["program"] == "su", result
        assert result["secret"] is True and result["line_mode"] is True, result
        assert result["prompt"].rstrip().endswith("assword:"), result
        # Nothing is typed: C-c ends su without trying a password.
        await client.ok("send_keys", {"pane": pane, "keys": ["C-c"]})
        back = await client.ok("run_command", {"pane": pane, "command": "echo back", "timeout_s": 10})
        assert back["exit_code"] == 0 and "back" in back["output"], back

    server.run(body)


def test_su_password_prompt_seen_by_a_server_that_is_not_root(tp, tmp_path: Path) -> None:
    # su and sudo are set-user-id: a server running as the user who types
    # into them may not read how they wait (/proc hides their wait channel,
    # system call and descriptors). As root, this test runs termpilot (and
    # its tmux server) as nobody; as another user, the test above is this one.
    if os.geteuid() != 0:
        pytest.skip("test_su_password_prompt_is_secret covers this when not run as root")
    for program in ("su", "setpriv"):
        if shutil.which(program) is None:
            pytest.skip(f"{program} is not installed")
    sockets = Path(tempfile.mkdtemp(prefix="tp-nobody-"))
    # The checkout (binary, tmux config, working directory) may sit where
    # nobody cannot enter (a clone in /root): the server gets copies in a
    # directory it owns, and starts its panes there.
    shutil.copy2(BIN, sockets / "termpilot")
    shutil.copy2(TMUX_CONFIG, sockets / "tmux.conf")
    for path in (sockets, sockets / "termpilot", sockets / "tmux.conf"):
        os.chown(path, NOBODY_UID, NOBODY_UID)
    env = ENV | {"HOME": "/nonexistent", "TMUX_TMPDIR": str(sockets)}
    nobody = Server(tp.socket, tp.log_path, prefix=AS_NOBODY, env=env, home=sockets)

    async def body(client: RecordingClient) -> None:
        pane = await bash_pane(client, "su-nobody")
        assert (await client.ok("run_command", {"pane": pane, "command": "id -u"}))["output"].strip() == str(
            NOBODY_UID
        )
        result = await wait_after(client, pane, "su root -c true")
        assert result["outcome"] == "awaiting_input", result
        assert result["program"] == "su", result
        assert result["secret"] is True and result["line_mode"] is True, result
        assert result["prompt"].rstrip().endswith("assword:"), result
        await client.ok("send_keys", {"pane": pane, "keys": ["C-c"]})

    try:
        nobody.run(body)
    finally:
        subprocess.run(
            [*AS_NOBODY, "tmux", "-L", tp.socket, "kill-server"],
            env=os.environ | env,
            capture_output=True,
            timeout=10,
            check=False,
        )
        shutil.rmtree(sockets, ignore_errors=True)


def test_ssh_asks_about_an_unknown_host_key(server: Server, sshd: Sshd, tmp_path: Path) -> None:
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text("")
    config = sshd.write_client_config(
        tmp_path / "ssh_config", known_hosts=known_hosts, strict_host_key_checking="ask"
    )
    command = shlex.join(["ssh", "-F", str(config), "-T", sshd.alias, "echo", "reached"])

    async def body(client: RecordingClient) -> None:
        pane = await bash_pane(client, "ssh-ask")
        result = await wait_after(client, pane, command)
        assert result["outcome"] == "awaiting_input", result
        assert result["program"] == "ssh", result
        assert "(yes/no" in result["prompt"], result
        assert result["secret"] is False and result["line_mode"] is True, result
        await answer_and_see(client, pane, "no", "Host key verification failed")
        assert known_hosts.read_text() == ""

    server.run(body)


def test_ssh_running_a_remote_command_is_not_waiting(server: Server, sshd: Sshd) -> None:
    # ssh -T reads the terminal to forward it, in line mode: that is not a
    # question. (The remote command may or may not read; termpilot cannot see.)
    command = shlex.join([*sshd.ssh_command("sleep", "5")])

    async def body(client: RecordingClient) -> None:
        pane = await bash_pane(client, "ssh-sleep")
        result = await wait_after(client, pane, command, timeout_s=WATCH_S)
        assert result["outcome"] == "timeout", result
        screen = await client.capture(pane)
        assert "Permission denied" not in screen and "refused" not in screen, screen

    server.run(body)


def test_git_commit_opens_an_editor(server: Server, tmp_path: Path) -> None:
    for program in ("git", "vi"):
        if shutil.which(program) is None:
            pytest.skip(f"{program} is not installed")
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    git = ["git", "-C", str(repo), "-c", "user.name=termpilot", "-c", "user.email=termpilot@example.invalid"]
    command = "GIT_EDITOR='vi -u NONE' " + shlex.join([*git, "commit", "--allow-empty"])

    async def body(client: RecordingClient) -> None:
        pane = await bash_pane(client, "git-commit")
        result = await wait_after(client, pane, command)
        assert result["outcome"] == "awaiting_input", result
        assert result["program"] == "vi", result
        assert result["secret"] is False and result["line_mode"] is False, result
        assert result["alternate_screen"] is True, result
        # Quitting without saving aborts the commit.
        await client.ok("send_keys", {"pane": pane, "text": ":q!", "enter": True})
        await poll(lambda: prompt_shown(client, pane), 10.0, "the prompt after vi")
        log = subprocess.run(["git", "-C", str(repo), "log"], capture_output=True, text=True, timeout=30)
        assert log.returncode != 0, "the commit was made"

    server.run(body)


async def prompt_shown(client: Client, pane: str) -> bool:
    return (await client.capture(pane)).rstrip().endswith(PROMPT.rstrip())
