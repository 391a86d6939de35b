"""Tests of the private sshd fixture (sshd.py) that the ssh tests rest on: it
runs commands on loopback through `ssh -F CONFIG ALIAS`, nothing of the
user's own ssh setup takes part, and `stop()`/`start()` make the faults the
ssh tests need."""

from __future__ import annotations

import os
import pwd
import subprocess
from pathlib import Path

from sshd import COMMAND_TIMEOUT, Sshd


def test_runs_a_command_on_its_own_server(sshd: Sshd) -> None:
    version = sshd.run("tmux", "-V")
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith("tmux "), version.stdout
    # SSH_CONNECTION names the server's address and port: this server's.
    where = sshd.run("echo", "$SSH_CONNECTION")
    assert where.returncode == 0, where.stderr
    fields = where.stdout.split()
    assert fields[0] == "127.0.0.1" and fields[2:] == ["127.0.0.1", str(sshd.port)], fields


def test_every_variable_it_is_given_reaches_the_sessions(tmp_path: Path) -> None:
    """sshd reads only the first `SetEnv` line: all variables must be on it."""
    from sshd import missing_reason

    reason = missing_reason()
    if reason is not None:
        import pytest

        pytest.skip(reason)
    server = Sshd(set_env={"TP_FIRST": "one", "HOME": str(tmp_path), "TP_LAST": "three"})
    try:
        server.start()
        seen = server.run("echo", "$TP_FIRST:$HOME:$TP_LAST")
        assert seen.returncode == 0, seen.stderr
        assert seen.stdout.strip() == f"one:{tmp_path}:three", seen.stdout
    finally:
        server.close()


def test_the_config_file_selects_the_server_not_home(sshd: Sshd, tmp_path: Path) -> None:
    # A HOME whose ssh configuration sends the alias nowhere: ssh reads the
    # file given with -F (and takes its home from the password database), so
    # this HOME changes nothing.
    decoy = tmp_path / "home"
    (decoy / ".ssh").mkdir(parents=True)
    (decoy / ".ssh" / "config").write_text(f"Host {sshd.alias}\n    HostName 192.0.2.1\n    Port 9\n")
    env = os.environ | {"HOME": str(decoy)}
    user_ssh_dir = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".ssh"
    had_user_ssh_dir = user_ssh_dir.exists()

    resolved = subprocess.run(
        ["ssh", "-G", "-F", str(sshd.config), sshd.alias],
        capture_output=True,
        text=True,
        env=env,
        timeout=COMMAND_TIMEOUT,
        check=True,
    ).stdout.splitlines()
    assert "hostname 127.0.0.1" in resolved
    assert f"port {sshd.port}" in resolved
    assert "identitiesonly yes" in resolved
    assert "batchmode no" in resolved, "batch mode is the caller's choice"

    ran = sshd.run("echo", "reached", env=env)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "reached\n"
    assert user_ssh_dir.exists() == had_user_ssh_dir, f"{user_ssh_dir} was created"


def test_stop_fails_fast_in_batch_mode_and_start_serves_again(sshd: Sshd) -> None:
    # A connection that is open when the server stops ends too.
    held = subprocess.Popen(
        sshd.ssh_command("echo up; exec sleep 60"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert held.stdout is not None
        assert held.stdout.readline() == "up\n"
        sshd.stop()
        # Bounded: a connection that outlived the server would hang here.
        assert held.wait(timeout=COMMAND_TIMEOUT) != 0
    finally:
        if held.poll() is None:
            held.kill()
            held.wait(timeout=5)

    refused = sshd.run("true")
    assert refused.returncode == 255, refused
    assert "Connection refused" in refused.stderr, refused.stderr

    sshd.start()
    again = sshd.run("echo", "again")
    assert again.returncode == 0, again.stderr
    assert again.stdout == "again\n"


def test_an_unknown_host_key_is_asked_about_with_an_empty_known_hosts(sshd: Sshd, tmp_path: Path) -> None:
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    config = sshd.write_client_config(tmp_path / "ssh_config", known_hosts=empty, strict_host_key_checking="ask")
    # In batch mode ssh cannot ask, so it refuses the unknown key.
    refused = subprocess.run(
        ["ssh", "-F", str(config), "-T", "-o", "BatchMode=yes", sshd.alias, "true"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=COMMAND_TIMEOUT,
        check=False,
    )
    assert refused.returncode == 255, refused
    assert "Host key verification failed" in refused.stderr, refused.stderr
    assert empty.read_text() == ""
