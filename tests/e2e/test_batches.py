"""End-to-end tests of the batch tools (issue 5): send_keys_batch and run_batch,
over stdio with the official MCP Python SDK, against a private tmux server per
test (the `server` fixture of test_waits: bash panes, the crate tests' tmux
config).

Bytes are checked where they land: sink panes put their tty in raw mode and
copy everything they read into a file, so the file holds exactly what tmux
typed, in the order it typed it.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import anyio
from conftest import CURSOR_RE, Client, poll, text_of
from jsonschema.validators import validator_for
from test_stdio import wait_for_command, wait_for_file
from test_waits import Server, WaitClient, bash_pane, server  # noqa: F401 (server is a fixture)

# How long a sink is watched for bytes that must NOT arrive.
QUIET_S = 0.4
STEP_OPS = {
    "send_keys",
    "paste_text",
    "wait_for_text",
    "wait_for_idle",
    "capture_pane",
    "capture_since",
    "run_command",
}


# --- helpers -----------------------------------------------------------------


async def sink(client: Client, name: str, path: Path) -> str:
    """Creates a session whose program copies every raw tty byte into `path`
    (and keeps reading, so late bytes would show); returns its pane once `cat`
    is reading."""
    path.touch()
    command = f"stty raw -echo; exec cat > {path}"
    pane = (await client.ok("create_session", {"name": name, "command": command}))["pane"]
    await wait_for_command(client, pane, "cat")
    return pane


async def exactly(path: Path, expected: bytes) -> None:
    """The file ends up holding exactly `expected`: nothing missing, nothing
    reordered, and nothing more after a short quiet time."""
    got = await wait_for_file(path, len(expected))
    assert got == expected, f"{path.name}: expected {expected!r}, got {got!r}"
    await anyio.sleep(QUIET_S)
    assert path.read_bytes() == expected, f"{path.name}: more arrived: {path.read_bytes()!r}"


async def stays_empty(path: Path) -> None:
    await anyio.sleep(QUIET_S)
    assert path.read_bytes() == b"", f"{path.name} received {path.read_bytes()!r}"


def check_shape(client: Client, tool: str, value: Any) -> None:
    """`value` matches `tool`'s published outputSchema."""
    schema = client.tools[tool].output_schema
    errors = [e.message for e in validator_for(schema)(schema).iter_errors(value)]
    assert not errors, f"not a {tool} result: {errors}: {value!r}"


def check_ops_ok(batch: dict[str, Any], panes: list[str]) -> None:
    """Every operation succeeded, reported in order, with a cursor."""
    results = batch["results"]
    assert [r["index"] for r in results] == list(range(len(panes))), results
    assert [r["pane"] for r in results] == panes, results
    bad = [r for r in results if not r["ok"] or r["error"] is not None]
    assert not bad, bad
    malformed = [r["cursor"] for r in results if not CURSOR_RE.match(r["cursor"] or "")]
    assert not malformed, f"cursors not of the form c1.n.n.n: {malformed}"
    assert (batch["succeeded"], batch["failed"], batch["skipped"]) == (len(panes), 0, 0), batch
    assert batch["stopped_at"] is None, batch


def typed(index: int) -> tuple[dict[str, Any], bytes]:
    """Operation `index`'s typing (text, every tenth also a Tab key) and the
    bytes it puts on the tty."""
    text = f"op{index};"
    if index % 10 == 9:
        return {"text": text, "keys": ["Tab"], "enter": False}, text.encode() + b"\t"
    return {"text": text, "enter": False}, text.encode()


# --- 1-2. many operations arrive complete and in order -------------------------


def test_50_operations_to_one_pane_arrive_complete_and_in_order(server: Server, tmp_path: Path) -> None:
    out = tmp_path / "one.out"

    async def body(client: WaitClient) -> None:
        pane = await sink(client, "one", out)
        ops, expected = [], b""
        for i in range(50):
            args, data = typed(i)
            ops.append({"pane": pane, **args})
            expected += data
        batch = await client.ok("send_keys_batch", {"operations": ops})
        check_ops_ok(batch, [pane] * 50)
        await exactly(out, expected)

    server.run(body)


def test_50_operations_across_3_panes_arrive_complete_and_in_order(server: Server, tmp_path: Path) -> None:
    outs = [tmp_path / f"pane{k}.out" for k in range(3)]

    async def body(client: WaitClient) -> None:
        panes = [await sink(client, f"multi-{k}", out) for k, out in enumerate(outs)]
        # Runs of one pane and alternations both, so chains mix panes.
        order = [k % 3 for k in range(12)] + random.Random(5).choices(range(3), k=38)
        ops, expected = [], [b"", b"", b""]
        for i, k in enumerate(order):
            args, data = typed(i)
            ops.append({"pane": panes[k], **args})
            expected[k] += data
        batch = await client.ok("send_keys_batch", {"operations": ops})
        check_ops_ok(batch, [panes[k] for k in order])
        for out, data in zip(outs, expected, strict=True):
            await exactly(out, data)

    server.run(body)


# --- 3. on_error: stop vs continue ------------------------------------------------


def test_run_batch_stop_and_continue_around_a_failing_step(server: Server, tmp_path: Path) -> None:
    outs = {mode: tmp_path / f"{mode}.out" for mode in ("stop", "continue")}

    async def body(client: WaitClient) -> None:
        # run_command in a pane whose program is cat, not a shell: refused at run time.
        busy = (await client.ok("create_session", {"name": "busy", "command": "exec cat"}))["pane"]
        await wait_for_command(client, busy, "cat")
        for mode, out in outs.items():
            pane = await sink(client, f"rb-{mode}", out)
            steps = [
                {"op": "send_keys", "pane": pane, "text": "one;", "enter": False},
                {"op": "run_command", "pane": busy, "command": "echo never", "timeout_s": 3},
                {"op": "send_keys", "pane": pane, "text": "three;", "enter": False},
            ]
            batch = await client.ok("run_batch", {"steps": steps, "on_error": mode})
            entries = batch["steps"]
            assert [s["op"] for s in entries] == ["send_keys", "run_command", "send_keys"], entries
            assert entries[0]["ok"] and entries[0]["error"] is None, entries[0]
            check_shape(client, "send_keys", entries[0]["result"])
            assert not entries[1]["ok"] and "not at a shell prompt" in (entries[1]["error"] or ""), entries[1]
            assert entries[1]["result"] is None, entries[1]
            if mode == "stop":
                assert not entries[2]["ok"], entries[2]
                assert "not run" in entries[2]["error"], entries[2]
                assert (batch["succeeded"], batch["failed"], batch["skipped"]) == (1, 1, 1), batch
                assert batch["stopped_at"] == 1, batch
                await exactly(out, b"one;")
            else:
                assert entries[2]["ok"] and entries[2]["error"] is None, entries[2]
                check_shape(client, "send_keys", entries[2]["result"])
                assert (batch["succeeded"], batch["failed"], batch["skipped"]) == (2, 1, 0), batch
                assert batch["stopped_at"] is None, batch
                await exactly(out, b"one;three;")

    server.run(body)


def test_run_batch_continue_does_not_report_a_stop(server: Server, tmp_path: Path) -> None:
    """A step that fails on its arguments at run time (a bad cursor) in
    continue mode: the steps after it run, and stopped_at stays null as in
    send_keys_batch (it once named the failed step)."""
    out = tmp_path / "continue.out"

    async def body(client: WaitClient) -> None:
        pane = await sink(client, "rb-stopped-at", out)
        steps = [
            {"op": "send_keys", "pane": pane, "text": "one;", "enter": False},
            {"op": "capture_since", "pane": pane, "cursor": "not-a-cursor"},
            {"op": "send_keys", "pane": pane, "text": "three;", "enter": False},
        ]
        batch = await client.ok("run_batch", {"steps": steps, "on_error": "continue"})
        assert [s["ok"] for s in batch["steps"]] == [True, False, True], batch
        assert batch["stopped_at"] is None, f"stopped_at {batch['stopped_at']} though all steps ran"
        assert batch["steps"][1]["error"], batch
        await exactly(out, b"one;three;")

    server.run(body)


def test_send_keys_batch_stop_and_continue_around_a_held_pane(server: Server, tmp_path: Path) -> None:
    held_out = tmp_path / "held.out"
    outs = {mode: tmp_path / f"{mode}.out" for mode in ("stop", "continue")}

    async def body(client: WaitClient) -> None:
        held = await sink(client, "held", held_out)
        server.tmux("set-option", "-p", "-t", held, "@termpilot_held", "someone")
        for mode, out in outs.items():
            pane = await sink(client, f"kb-{mode}", out)
            ops = [
                {"pane": pane, "text": "a0;", "enter": False},
                {"pane": held, "text": "h1;", "enter": False},
                {"pane": pane, "text": "a2;", "enter": False},
            ]
            batch = await client.ok("send_keys_batch", {"operations": ops, "on_error": mode})
            first, failed, last = batch["results"]
            assert first["ok"] and CURSOR_RE.match(first["cursor"]), first
            assert not failed["ok"] and "held by a person" in failed["error"], failed
            assert failed["cursor"] is None and failed["pane"] == held, failed
            if mode == "stop":
                assert not last["ok"] and last["cursor"] is None and last["error"], last
                assert (batch["succeeded"], batch["failed"], batch["skipped"]) == (1, 1, 1), batch
                assert batch["stopped_at"] == 1, batch
                await exactly(out, b"a0;")
            else:
                assert last["ok"] and CURSOR_RE.match(last["cursor"]), last
                assert (batch["succeeded"], batch["failed"], batch["skipped"]) == (2, 1, 0), batch
                assert batch["stopped_at"] is None, batch
                await exactly(out, b"a0;a2;")
        await stays_empty(held_out)

    server.run(body)


# --- 3b. a missing or vanished pane fails its own operation -------------------------

# A pane id that names no pane.
MISSING_PANE = "%99999"


async def echo_pane(client: Client, name: str) -> str:
    """Creates a session whose program prints back every line typed into it,
    without the terminal's echo: the pane shows each delivered line once."""
    command = "stty -echo; exec cat"
    pane = (await client.ok("create_session", {"name": name, "command": command}))["pane"]
    await wait_for_command(client, pane, "cat")
    return pane


def pane_lines(server: Server, pane: str) -> list[str]:
    """The non-empty lines of a pane, read through tmux itself."""
    return [line for line in server.tmux("capture-pane", "-p", "-t", pane).splitlines() if line.strip()]


async def shows_exactly(server: Server, pane: str, expected: list[str]) -> None:
    """The pane ends up showing exactly these lines, and nothing more arrives."""

    async def arrived() -> list[str] | None:
        lines = pane_lines(server, pane)
        return lines if len(lines) >= len(expected) else None

    try:
        await poll(arrived, 5.0, f"{len(expected)} lines in {pane}")
    except AssertionError:
        raise AssertionError(f"{pane} shows {pane_lines(server, pane)}, expected {expected}") from None
    await anyio.sleep(QUIET_S)
    assert pane_lines(server, pane) == expected, f"{pane}: expected {expected}"


async def cursors_precede_their_lines(client: Client, pane: str, cursors: dict[int, str], tag: str) -> None:
    """Each delivered operation's cursor comes before its line: the output
    after it holds the line that operation typed."""
    for index, cursor in cursors.items():
        assert CURSOR_RE.match(cursor or ""), (index, cursor)
        since = await client.ok("capture_since", {"pane": pane, "cursor": cursor})
        assert f"{tag}{index}" in since["text"].split(), (index, since["text"])


def counts(batch: dict[str, Any]) -> tuple[int, int, int, int | None]:
    return batch["succeeded"], batch["failed"], batch["skipped"], batch["stopped_at"]


def test_send_keys_batch_missing_pane_in_the_middle_stop_and_continue(server: Server) -> None:
    """Operation 5 of 10 names a pane that does not exist: with stop, 0-4 are
    delivered and 6-9 are not sent; with continue, everything but 5 is
    delivered in order. The whole batch was once refused, nothing delivered."""

    async def body(client: WaitClient) -> None:
        for mode, tag in (("stop", "s"), ("continue", "c")):
            pane = await echo_pane(client, f"missing-{mode}")
            ops = [
                {"pane": MISSING_PANE if i == 5 else pane, "text": f"{tag}{i}", "enter": True} for i in range(10)
            ]
            batch = await client.ok("send_keys_batch", {"operations": ops, "on_error": mode})
            results = batch["results"]
            assert [r["index"] for r in results] == list(range(10)), results
            failed = results[5]
            assert not failed["ok"] and failed["cursor"] is None, failed
            assert failed["pane"] == MISSING_PANE and "not found" in failed["error"], failed
            delivered = [i for i in range(10) if i != 5] if mode == "continue" else list(range(5))
            for r in results:
                if r["index"] in delivered:
                    assert r["ok"] and r["error"] is None, r
                elif r["index"] != 5:
                    assert not r["ok"] and r["cursor"] is None and "not sent" in r["error"], r
            if mode == "stop":
                assert counts(batch) == (5, 1, 4, 5), batch
            else:
                assert counts(batch) == (9, 1, 0, None), batch
            await shows_exactly(server, pane, [f"{tag}{i}" for i in delivered])
            await cursors_precede_their_lines(client, pane, {i: results[i]["cursor"] for i in delivered}, tag)

    server.run(body)


def test_run_batch_missing_pane_in_the_middle_stop_and_continue(server: Server) -> None:
    """The same with run_batch, a target by name that names nothing, and
    steps of every keystroke kind plus a wait around it."""

    async def body(client: WaitClient) -> None:
        for mode, tag in (("stop", "s"), ("continue", "c")):
            pane = await echo_pane(client, f"rb-missing-{mode}")
            steps: list[dict[str, Any]] = []
            for i in range(10):
                target = "no-such-session:0.0" if i == 5 else pane
                if i == 3:
                    paste = {"text": f"{tag}{i}", "bracketed": False, "enter": True}
                    steps.append({"op": "paste_text", "pane": target, **paste})
                elif i == 7:
                    steps.append({"op": "wait_for_idle", "pane": pane, "quiet_ms": 100, "timeout_s": 5})
                else:
                    steps.append({"op": "send_keys", "pane": target, "text": f"{tag}{i}"})
            batch = await client.ok("run_batch", {"steps": steps, "on_error": mode})
            entries = batch["steps"]
            assert [s["index"] for s in entries] == list(range(10)), entries
            assert [s["op"] for s in entries] == [s["op"] for s in steps], entries
            failed = entries[5]
            assert not failed["ok"] and failed["result"] is None, failed
            assert "not found" in failed["error"] and "steps[5]" not in failed["error"], failed
            if mode == "stop":
                assert all(s["ok"] for s in entries[:5]), entries
                assert all(not s["ok"] and "not run" in s["error"] for s in entries[6:]), entries
                assert counts(batch) == (5, 1, 4, 5), batch
                delivered = list(range(5))
            else:
                assert all(s["ok"] for s in entries if s["index"] != 5), entries
                assert entries[7]["result"]["outcome"] == "idle", entries[7]
                assert counts(batch) == (9, 1, 0, None), batch
                delivered = [0, 1, 2, 3, 4, 6, 8, 9]
            await shows_exactly(server, pane, [f"{tag}{i}" for i in delivered])
            cursors = {i: entries[i]["result"]["cursor"] for i in delivered}
            await cursors_precede_their_lines(client, pane, cursors, tag)

    server.run(body)


def test_run_batch_pane_killed_while_a_wait_step_runs(server: Server) -> None:
    """Pane A is killed (through tmux, by the test) while the batch waits on
    pane B; the later steps on A fail there, and the steps after the first
    of them run only with continue."""

    async def body(client: WaitClient) -> None:
        for mode in ("stop", "continue"):
            doomed = await echo_pane(client, f"doomed-{mode}")
            other = await echo_pane(client, f"other-{mode}")
            steps = [
                {"op": "send_keys", "pane": doomed, "text": "a0"},
                {"op": "send_keys", "pane": other, "text": "b0"},
                {"op": "wait_for_text", "pane": other, "pattern": "go-on", "timeout_s": 8},
                {"op": "send_keys", "pane": doomed, "text": "a1"},
                {"op": "send_keys", "pane": other, "text": "b1"},
                {"op": "capture_pane", "pane": doomed},
            ]
            results: list[dict[str, Any]] = []

            async def run_it() -> None:
                results.append(await client.ok("run_batch", {"steps": steps, "on_error": mode}))

            async with anyio.create_task_group() as group:
                group.start_soon(run_it)

                async def b0_typed() -> bool:
                    return "b0" in pane_lines(server, other)

                await poll(b0_typed, 5.0, "b0 in the other pane")
                server.tmux("kill-pane", "-t", doomed)
                server.tmux("send-keys", "-t", other, "go-on", "Enter")
            (batch,) = results
            entries = batch["steps"]
            assert [s["ok"] for s in entries[:3]] == [True, True, True], entries
            assert entries[2]["result"]["outcome"] == "matched", entries[2]
            killed = entries[3]
            assert not killed["ok"] and "not found" in killed["error"] and doomed in killed["error"], killed
            if mode == "stop":
                assert all(not s["ok"] and "not run" in s["error"] for s in entries[4:]), entries
                assert counts(batch) == (3, 1, 2, 3), batch
                await shows_exactly(server, other, ["b0", "go-on"])
            else:
                assert entries[4]["ok"], entries[4]
                assert not entries[5]["ok"] and "not found" in entries[5]["error"], entries[5]
                assert counts(batch) == (4, 2, 0, None), batch
                await shows_exactly(server, other, ["b0", "go-on", "b1"])

    server.run(body)


# --- 4. validation happens before anything is sent ---------------------------------


def test_validation_errors_name_the_operation_and_nothing_is_sent(server: Server, tmp_path: Path) -> None:
    out = tmp_path / "valid.out"

    async def body(client: WaitClient) -> None:
        pane = await sink(client, "valid", out)
        ops = [{"pane": pane, "text": f"v{i};", "enter": False} for i in range(40)]

        bad_key = [dict(op) for op in ops]
        bad_key[37]["keys"] = ["Entr"]
        message = await client.err("send_keys_batch", {"operations": bad_key})
        assert "operations[37].keys[0]" in message and "Entr" in message, message

        # 17 texts of 64 KiB each: 1.06 MiB in all, over the 1 MiB cap.
        big = [{"pane": pane, "text": "x" * 65_536, "enter": False} for _ in range(17)]
        message = await client.err("send_keys_batch", {"operations": big})
        assert "1048576" in message or "MiB" in message, message
        assert len(message) < 1_000, f"{len(message)}-character message"

        for count, bound in ((0, "1"), (101, "100")):
            message = await client.err("send_keys_batch", {"operations": ops[:1] * count})
            assert "operations" in message and bound in message, message
            assert len(message) < 1_000, f"{len(message)}-character message"

        steps = [{"op": "send_keys", "pane": pane, "text": "s;", "enter": False}] * 3
        steps = [*steps, {"op": "send_keys", "pane": pane, "keys": ["Enter", "Entr"]}]
        message = await client.err("run_batch", {"steps": steps})
        assert "steps[3].keys[1]" in message and "Entr" in message, message

        await stays_empty(out)

    server.run(body)


# --- 5. send, wait, capture in one run_batch ----------------------------------------


def test_send_wait_capture_run_batch_returns_the_output(server: Server) -> None:
    async def body(client: WaitClient) -> None:
        pane = await bash_pane(client, "swc")
        steps = [
            {"op": "send_keys", "pane": pane, "text": "echo batch-$((6*7))"},
            {"op": "wait_for_text", "pane": pane, "pattern": "batch-42", "since": "$prev", "timeout_s": 5},
            {"op": "capture_since", "pane": pane, "cursor": "$0"},
        ]
        batch = await client.ok("run_batch", {"steps": steps})
        entries = batch["steps"]
        assert all(s["ok"] for s in entries), entries
        assert (batch["succeeded"], batch["failed"], batch["skipped"], batch["stopped_at"]) == (3, 0, 0, None)
        for step, entry in zip(steps, entries, strict=True):
            check_shape(client, step["op"], entry["result"])
        assert entries[1]["result"]["outcome"] == "matched", entries[1]
        assert "batch-42" in entries[2]["result"]["text"], entries[2]

        # run_command inside a batch: its exit code and output.
        steps = [{"op": "run_command", "pane": pane, "command": "echo rc-$((40+2)); (exit 3)", "timeout_s": 5}]
        batch = await client.ok("run_batch", {"steps": steps})
        (entry,) = batch["steps"]
        assert entry["ok"], entry
        check_shape(client, "run_command", entry["result"])
        assert entry["result"]["exit_code"] == 3, entry
        assert "rc-42" in entry["result"]["output"], entry

    server.run(body)


def test_run_batch_reference_to_a_later_step_fails_that_step(server: Server) -> None:
    async def body(client: WaitClient) -> None:
        pane = await bash_pane(client, "refs")
        steps = [
            {"op": "capture_since", "pane": pane, "cursor": "$1"},
            {"op": "send_keys", "pane": pane, "text": "true"},
        ]
        batch = await client.ok("run_batch", {"steps": steps, "on_error": "continue"})
        first, second = batch["steps"]
        assert not first["ok"] and "$1" in first["error"], first
        assert second["ok"], second

    server.run(body)


# --- 6. the published schema keeps the op tags ------------------------------------


def resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """Follows local `$ref`s ("#/$defs/Name")."""
    while "$ref" in node:
        ref = node["$ref"]
        assert ref.startswith("#/"), ref
        target: Any = schema
        for part in ref[2:].split("/"):
            target = target[part]
        node = target
    return node


def test_run_batch_schema_keeps_the_op_tags(server: Server) -> None:
    async def body(client: WaitClient) -> None:
        schema = client.tools["run_batch"].input_schema
        steps = resolve(schema, schema["properties"]["steps"])
        items = resolve(schema, steps["items"])
        variants = items.get("oneOf") or items.get("anyOf")
        assert variants, f"steps items have no oneOf/anyOf: {items}"
        tags = []
        for variant in variants:
            variant = resolve(schema, variant)
            op = resolve(schema, variant["properties"]["op"])
            assert "const" in op, f"op without const: {variant}"
            assert "op" in variant.get("required", []), f"op not required: {variant}"
            tags.append(op["const"])
        assert sorted(tags) == sorted(STEP_OPS), tags
        assert steps.get("minItems") == 1 and steps.get("maxItems") == 100, steps

    server.run(body)


# --- 7. progress ------------------------------------------------------------------


def test_100_operation_batch_reports_progress_up_to_100(server: Server, tmp_path: Path) -> None:
    """The last count is reported too (a fast batch once sent only "16 of 100":
    the count published with the last reply was dropped)."""
    out = tmp_path / "progress.out"

    async def body(client: WaitClient) -> None:
        pane = await sink(client, "progress", out)
        progress: list[tuple[float, float | None]] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append((value, total))

        ops = [{"pane": pane, "text": f"{i};", "enter": False} for i in range(100)]
        result = await client.session.call_tool(
            "send_keys_batch", {"operations": ops}, read_timeout_seconds=10, progress_callback=on_progress
        )
        assert not result.is_error, text_of(result)
        assert result.structured_content["succeeded"] == 100, result.structured_content

        # Notifications may trail the response a little.
        async def finished() -> bool:
            return bool(progress) and progress[-1] == (100, 100)

        try:
            await poll(finished, 1.0, "progress 100 of 100")
        except AssertionError:
            raise AssertionError(f"no final 100-of-100 progress; received {progress}") from None
        values = [value for value, _ in progress]
        assert values == sorted(values), f"progress went backwards: {progress}"
        assert all(total == 100 for _, total in progress), progress
        await exactly(out, "".join(f"{i};" for i in range(100)).encode())

    server.run(body)


def test_run_batch_progress_counts_steps_and_only_increases(server: Server, tmp_path: Path) -> None:
    """One count per request: keystroke chains inside run_batch once reported
    their own "k of <chain length>", so the total changed and the value went
    back (18 of 35, then 16 of 17), which MCP forbids."""
    out = tmp_path / "rb-progress.out"

    async def body(client: WaitClient) -> None:
        pane = await sink(client, "rb-progress", out)
        progress: list[tuple[float, float | None, str | None]] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append((value, total, message))

        # A chain of 17, a short wait (its end is reported, past the 100 ms throttle),
        # then a chain of 17 big pastes that takes long enough to report on its own.
        steps = (
            [{"op": "send_keys", "pane": pane, "text": "k;", "enter": False}] * 17
            + [{"op": "wait_for_text", "pane": pane, "pattern": "never", "timeout_s": 0.15}]
            + [{"op": "paste_text", "pane": pane, "text": "p" * 60_000, "bracketed": False}] * 17
        )
        result = await client.session.call_tool(
            "run_batch", {"steps": steps}, read_timeout_seconds=10, progress_callback=on_progress
        )
        assert not result.is_error, text_of(result)
        assert result.structured_content["succeeded"] == len(steps), result.structured_content

        async def finished() -> bool:
            return bool(progress) and progress[-1][0] == len(steps)

        try:
            await poll(finished, 1.0, "progress of the last step")
        except AssertionError:
            raise AssertionError(f"no progress for the last step; received {progress}") from None
        values = [value for value, _, _ in progress]
        assert all(a < b for a, b in zip(values, values[1:])), f"progress did not only increase: {progress}"
        assert {total for _, total, _ in progress} == {len(steps)}, f"totals changed: {progress}"

    server.run(body)


def test_run_batch_progress_inside_a_waiting_step_stays_within_it(server: Server) -> None:
    """A wait step reports its own progress as a fraction of its step, on the
    batch's count: once sent "1.0006 of 10" (seconds of its timeout) between
    "1 of 2" and "2 of 2"."""

    async def body(client: WaitClient) -> None:
        pane = await echo_pane(client, "rb-wait-progress")
        progress: list[tuple[float, float | None, str | None]] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append((value, total, message))

        steps = [
            {"op": "send_keys", "pane": pane, "text": "w0"},
            # The echo pane reads its terminal: the wait must run to its timeout here.
            {"op": "wait_for_text", "pane": pane, "pattern": "never", "timeout_s": 2.5, "input_settle_ms": 0},
            {"op": "send_keys", "pane": pane, "text": "w2"},
        ]
        result = await client.session.call_tool(
            "run_batch", {"steps": steps}, read_timeout_seconds=10, progress_callback=on_progress
        )
        assert not result.is_error, text_of(result)
        assert result.structured_content["steps"][1]["result"]["outcome"] == "timeout", result.structured_content

        async def finished() -> bool:
            return bool(progress) and progress[-1][0] == len(steps)

        try:
            await poll(finished, 1.0, "progress of the last step")
        except AssertionError:
            raise AssertionError(f"no final {len(steps)}-of-{len(steps)} progress; received {progress}") from None
        values = [value for value, _, _ in progress]
        assert all(a < b for a, b in zip(values, values[1:])), f"progress did not only increase: {progress}"
        assert {total for _, total, _ in progress} == {len(steps)}, f"totals changed: {progress}"
        inside = [value for value in values if 1 < value < 2]
        assert len(inside) >= 2, f"the 2.5 s wait step reported no progress of its own: {progress}"

    server.run(body)


def test_stopped_batches_report_progress_up_to_their_total(server: Server) -> None:
    """A batch that stops early still ends its progress at its total."""

    async def body(client: WaitClient) -> None:
        pane = await echo_pane(client, "stopped-progress")
        ops = [{"pane": MISSING_PANE if i == 5 else pane, "text": f"p{i}"} for i in range(10)]
        steps = [{"op": "send_keys", **op} for op in ops]
        for tool, arguments in (("send_keys_batch", {"operations": ops}), ("run_batch", {"steps": steps})):
            progress: list[tuple[float, float | None]] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                progress.append((value, total))

            result = await client.session.call_tool(
                tool, arguments, read_timeout_seconds=10, progress_callback=on_progress
            )
            assert not result.is_error, text_of(result)
            assert result.structured_content["stopped_at"] == 5, result.structured_content

            async def finished() -> bool:
                return bool(progress) and progress[-1] == (10, 10)

            try:
                await poll(finished, 1.0, "progress 10 of 10")
            except AssertionError:
                raise AssertionError(f"{tool}: no final 10-of-10 progress; received {progress}") from None
            values = [value for value, _ in progress]
            assert all(a < b for a, b in zip(values, values[1:])), f"{tool}: progress did not only increase: {progress}"
            assert {total for _, total in progress} == {10}, f"{tool}: totals changed: {progress}"

    server.run(body)


# --- 8. timing sanity ---------------------------------------------------------------


def test_50_operation_batch_takes_under_2_seconds(server: Server, tmp_path: Path) -> None:
    outs = [tmp_path / f"t{k}.out" for k in range(3)]

    async def body(client: WaitClient) -> None:
        panes = [await sink(client, f"time-{k}", out) for k, out in enumerate(outs)]
        ops = [{"pane": panes[i % 3], "text": f"t{i};", "keys": ["C-a"], "enter": False} for i in range(50)]
        started = time.monotonic()
        batch = await client.ok("send_keys_batch", {"operations": ops})
        took = time.monotonic() - started
        assert batch["succeeded"] == 50, batch
        assert took < 2.0, f"50 operations took {took:.3f} s"
        assert batch["elapsed_s"] <= took, batch["elapsed_s"]
        for k, out in enumerate(outs):
            await exactly(out, b"".join(f"t{i};".encode() + b"\x01" for i in range(k, 50, 3)))

    server.run(body)


# --- cancellation ------------------------------------------------------------------


def test_cancelled_run_batch_stops_between_steps(server: Server, tmp_path: Path) -> None:
    out = tmp_path / "cancel.out"

    async def body(client: WaitClient) -> None:
        pane = await sink(client, "cancel", out)
        steps = [
            {"op": "send_keys", "pane": pane, "text": "before;", "enter": False},
            # The sink reads its terminal: without input_settle_ms 0 the wait would end
            # at once with awaiting_input.
            {"op": "wait_for_text", "pane": pane, "pattern": "never", "timeout_s": 1.5, "input_settle_ms": 0},
            {"op": "send_keys", "pane": pane, "text": "after;", "enter": False},
        ]
        with anyio.move_on_after(0.5) as scope:
            await client.session.call_tool("run_batch", {"steps": steps}, read_timeout_seconds=10)
        assert scope.cancelled_caught, "the batch returned before it was cancelled"
        # Past the wait's own timeout: a batch still running would type "after;" by now.
        await anyio.sleep(1.5)
        await exactly(out, b"before;")
        assert "cancel" in await client.session_names()

    server.run(body)
