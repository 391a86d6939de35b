"""Scripted agents doing real interactive tasks through `termpilot serve` (the
official MCP Python SDK), printing for each task the calls made and the
o200k tokens of the result text read.

Run by hand (pytest does not collect it):

    cargo build -p termpilot -p termpilot-render --example o200k
    TERMPILOT_BIN=$CARGO_TARGET_DIR/debug/termpilot .venv/bin/python tests/e2e/bench_tasks.py

Each agent does what a careful agent does with the tools the server lists:
where `send_keys` takes a `wait`, it answers and waits in one call, else it
sends and then calls `wait_for_command`. Every task checks its own result
(the file edited, the commit found, the exit code), so a cheap but wrong run
fails instead of printing figures. Each task runs on a private tmux server
(`tmux -L`), killed at the end with its socket file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import BIN, SERVER_ENV, kill_server  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TMUX_CONFIG = str(REPO / "crates/tmux/tests/support/tmux.conf")
TARGET = os.environ.get("CARGO_TARGET_DIR") or str(REPO / "target")
COUNTER = os.environ.get("O200K_BIN") or str(Path(TARGET, "debug", "examples", "o200k"))
PROMPT = "$ "
ENV = SERVER_ENV | {"SHELL": "/bin/bash"}
TASK_LIMIT = 90.0
REQUEST_LIMIT = 60.0


class Agent:
    """A connected client that counts its calls and keeps every result's text."""

    def __init__(self, session: ClientSession, tools: list[types.Tool]) -> None:
        self.session = session
        self.tools = {tool.name: tool for tool in tools}
        self.texts: list[str] = []
        self.pane = ""

    def can_wait_on_input(self) -> bool:
        schema = self.tools["send_keys"].input_schema
        return "wait" in schema.get("properties", {})

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = await self.session.call_tool(name, arguments, read_timeout_seconds=REQUEST_LIMIT)
        text = "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
        self.texts.append(text)
        assert not result.is_error, f"{name}({arguments}) failed: {text}"
        return result.structured_content or {}

    async def run(self, command: str, **extra: Any) -> dict[str, Any]:
        return await self.call("run_command", {"pane": self.pane, "command": command} | extra)

    async def answer(self, report: dict[str, Any], text: str | None = None, keys: list[str] | None = None,
                     **extra: Any) -> dict[str, Any]:
        """Sends input to the command of `report` and returns what came next
        (the command asking again or ending)."""
        args: dict[str, Any] = {"pane": self.pane}
        if text is not None:
            args["text"] = text
        if keys:
            args["keys"] = keys
            args["enter"] = False
        if self.can_wait_on_input():
            sent = await self.call("send_keys", args | {"wait": {"for": "command"} | extra})
            return sent["wait"]
        await self.call("send_keys", args)
        return await self.call("wait_for_command", {"command_id": report["command_id"]} | extra)


Task = Callable[[Agent, Path], Awaitable[None]]


async def vim_edit(agent: Agent, work: Path) -> None:
    data = work / "data.txt"
    data.write_text("alpha cobalt beta\n" + "".join(f"{n:03} lorem ipsum dolor sit amet\n" for n in range(1, 200)))
    report = await agent.run(f"vim -u NONE {data}")
    assert report["awaiting_input"], report
    report = await agent.answer(report, ":1s/cobalt/harbor/")
    assert report.get("awaiting_input"), report
    report = await agent.answer(report, ":wq")
    assert report["exit_code"] == 0, report
    assert data.read_text().startswith("alpha harbor beta\n")


async def git_log_pager(agent: Agent, work: Path) -> None:
    repo = work / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=b", "-c", "user.email=b@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    for n in range(1, 121):
        (repo / "f").write_text(f"{n}\n")
        subprocess.run([*git, "add", "f"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", f"change number {n}"], check=True)
    report = await agent.run(f"cd {repo} && git log")
    assert report["awaiting_input"], report
    report = await agent.answer(report, "/change number 42$")
    assert "change number 42" in agent.texts[-1], agent.texts[-1]
    report = await agent.answer(report, keys=["q"])
    assert report["exit_code"] == 0, report


async def commit_in_vi(agent: Agent, work: Path) -> None:
    repo = work / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=b", "-c", "user.email=b@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "f").write_text("one\n")
    subprocess.run([*git, "add", "f"], check=True)
    env = "GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.com GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@example.com"
    report = await agent.run(f"cd {repo} && {env} GIT_EDITOR=vi git commit")
    assert report["awaiting_input"], report
    keys = ["Escape", ":", "w", "q", "Enter"]
    report = await agent.answer(report, "Otidy the greeting", keys=keys)
    assert report["exit_code"] == 0, report
    log = subprocess.run([*git, "log", "--format=%s"], capture_output=True, text=True, check=True)
    assert log.stdout.strip() == "tidy the greeting", log.stdout


async def python_repl(agent: Agent, work: Path) -> None:
    report = await agent.run("python3 -q")
    assert report["awaiting_input"], report
    report = await agent.answer(report, "sum(range(101))")
    assert "5050" in agent.texts[-1], agent.texts[-1]
    report = await agent.answer(report, "exit()")
    assert report["exit_code"] == 0, report


THREE_PROMPTS = """
import random, time
for question in ("Name? ", "Colour? ", "Quest? "):
    time.sleep(random.uniform(0.2, 1.0))
    answer = input(question)
print("done", answer)
"""


async def three_prompts(agent: Agent, work: Path) -> None:
    script = work / "ask.py"
    script.write_text(THREE_PROMPTS)
    report = await agent.run(f"python3 {script}")
    for answer in ("bob", "blue", "grail"):
        assert report["awaiting_input"], report
        report = await agent.answer(report, answer)
    assert report["exit_code"] == 0 and "done grail" in report["output"], report


async def interrupt(agent: Agent, work: Path) -> None:
    report = await agent.run("sleep 100", timeout_s=1)
    assert report["timed_out"], report
    report = await agent.answer(report, keys=["C-c"])
    assert report["interrupted"], report


async def http_server(agent: Agent, work: Path) -> None:
    report = await agent.run(f"cd {work} && python3 -m http.server 18765 --bind 127.0.0.1", timeout_s=2)
    assert report["timed_out"], report
    report = await agent.answer(report, keys=["C-c"])
    # http.server catches the interrupt and exits 0.
    assert report["interrupted"] or report["exit_code"] == 0, report


COMPILE = """
import sys
for n in range(1, 5001):
    print(f"compiling unit {n} of 5000 ... ok")
if len(sys.argv) > 1 and sys.argv[1] == "fixed":
    print("build finished")
else:
    print("error: unit 4321 failed: expected ';' at src/unit4321.c:17")
    sys.exit(1)
"""


async def long_output(agent: Agent, work: Path) -> None:
    script = work / "build.py"
    script.write_text(COMPILE)
    report = await agent.run(f"python3 {script}")
    assert report["exit_code"] == 1 and "unit4321.c:17" in report["output"], report
    report = await agent.run(f"python3 {script} fixed")
    assert report["exit_code"] == 0 and "build finished" in report["output"], report


TASKS: list[tuple[str, Task]] = [
    ("vim edit", vim_edit),
    ("git log pager", git_log_pager),
    ("commit message in vi", commit_in_vi),
    ("python REPL", python_repl),
    ("three prompts", three_prompts),
    ("C-c interrupt", interrupt),
    ("http.server start/stop", http_server),
    ("5,000-line output", long_output),
]


async def run_task(task: Task, socket: str, work: Path) -> list[str]:
    args = ["serve", "-L", socket, "--tmux-config", TMUX_CONFIG]
    params = StdioServerParameters(command=BIN, args=args, env=ENV)
    with open(work / "stderr.log", "a", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=REQUEST_LIMIT) as session:
                await session.initialize()
                agent = Agent(session, (await session.list_tools()).tools)
                created = await session.call_tool("create_session", {"name": "bench", "env": {"PS1": PROMPT}})
                agent.pane = created.structured_content["pane"]
                await agent.call("wait_for_idle", {"pane": agent.pane, "quiet_ms": 300})
                agent.texts.clear()
                with anyio.fail_after(TASK_LIMIT):
                    await task(agent, work)
                return agent.texts


def o200k_counts(texts: list[str]) -> list[int]:
    lines = "".join(json.dumps(text, ensure_ascii=False) + "\n" for text in texts)
    out = subprocess.run([COUNTER], input=lines, capture_output=True, text=True, check=True, timeout=60)
    return [int(n) for n in out.stdout.split()]


def main() -> None:
    only = sys.argv[1:]
    verbose = os.environ.get("BENCH_VERBOSE") == "1"
    print(f"{'task':<24} {'calls':>5} {'tokens':>7}")
    for n, (name, task) in enumerate(TASKS):
        if only and not any(word in name for word in only):
            continue
        socket = f"tp-bench-{os.getpid()}-{n}"
        with tempfile.TemporaryDirectory() as tmp:
            try:
                texts = anyio.run(run_task, task, socket, Path(tmp))
            except BaseException as e:  # noqa: BLE001 - a failed task is a figure too
                while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
                    e = e.exceptions[0]
                print(f"{name:<24} FAILED: {str(e)[:300]}", flush=True)
                continue
            finally:
                kill_server(socket)
        counts = o200k_counts(texts)
        print(f"{name:<24} {len(texts):>5} {sum(counts):>7}", flush=True)
        if verbose:
            for text, count in zip(texts, counts):
                print(f"  --- {count} tokens ---\n{text}")


if __name__ == "__main__":
    main()
