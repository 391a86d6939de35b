"""A private OpenSSH server for tests that reach tmux over ssh.

`Sshd` starts the test's own `sshd -D -e -f CONFIG` on 127.0.0.1 at a free
port, with a host key and a client key generated into a temporary directory,
and writes an ssh client configuration whose alias (`termpilot-test`) reaches
it with that key and with the host key already trusted. Everything the
server and the client use lives in that directory: neither the system's
sshd configuration nor the user's `~/.ssh` is read or written (`ssh -F`
skips `~/.ssh/config` and does not create `~/.ssh`).

The server is ended only by the pid this module started (and the
per-connection servers it forked, found through /proc); the directory is
removed at the end.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

ALIAS = "termpilot-test"
# Bounds: how long sshd may take to accept its first connection, and how long
# one ssh command run by these helpers may take.
START_TIMEOUT = 10.0
COMMAND_TIMEOUT = 10.0
# Debian's sshd checks for its privilege-separation directory at start-up.
PRIVSEP_DIR = Path("/run/sshd")


def sshd_program() -> str | None:
    """The absolute path of sshd (it refuses to run from a relative one), or
    None when openssh-server is not installed."""
    search = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin", "/sbin"])
    return shutil.which("sshd", path=search)


def missing_reason() -> str | None:
    """Why the ssh tests cannot run here, or None when they can."""
    if sshd_program() is None:
        return "sshd not found: install openssh-server to run the ssh tests (CI installs it)"
    for tool in ("ssh", "ssh-keygen"):
        if shutil.which(tool) is None:
            return f"{tool} not found: install openssh-client to run the ssh tests (CI installs it)"
    if not PRIVSEP_DIR.is_dir() and os.geteuid() != 0:
        return f"sshd needs {PRIVSEP_DIR}, which is missing and only root can create"
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def descendants(pid: int) -> list[int]:
    """The processes below `pid` (children first found, depth first)."""
    found: list[int] = []
    queue = [pid]
    while queue:
        parent = queue.pop()
        try:
            # A process may end while it is read: it then has no children.
            tasks = list(Path(f"/proc/{parent}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                children = [int(child) for child in (task / "children").read_text().split()]
            except (OSError, ValueError):
                continue
            found.extend(children)
            queue.extend(children)
    return found


def keygen(path: Path, comment: str) -> str:
    """Writes an ed25519 key pair at `path` (no passphrase); returns the
    public key line."""
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
        check=True,
        capture_output=True,
        timeout=COMMAND_TIMEOUT,
    )
    return path.with_name(path.name + ".pub").read_text().strip()


class Sshd:
    """One private sshd on loopback, with its client configuration."""

    alias = ALIAS

    def __init__(self, set_env: dict[str, str] | None = None) -> None:
        """`set_env`: variables sshd sets in every session it starts (its
        `SetEnv`), e.g. a `TMUX_TMPDIR` that makes the far side's tmux a
        server of the test's own.

        Sessions get a `HOME` of their own (an empty directory, unless
        `set_env` names one): the shells sshd starts do not read the user's
        rc files, where a tool's setup (a `pyenv rehash` waiting on a lock a
        killed shell left behind) can hold every new shell for a minute."""
        program = sshd_program()
        if program is None:
            raise RuntimeError(missing_reason())
        self.program = program
        self.dir = Path(tempfile.mkdtemp(prefix="tp-sshd-"))
        home = self.dir / "home"
        home.mkdir()
        self.set_env = {"HOME": str(home)} | dict(set_env or {})
        self.user = pwd.getpwuid(os.getuid()).pw_name
        self.port = free_port()
        self.host_key = self.dir / "host_ed25519"
        self.client_key = self.dir / "client_ed25519"
        self.known_hosts = self.dir / "known_hosts"
        self.server_config = self.dir / "sshd_config"
        self.config = self.dir / "ssh_config"
        self.log = self.dir / "sshd.log"
        self.pid_file = self.dir / "sshd.pid"
        self.process: subprocess.Popen[bytes] | None = None

        host_public = keygen(self.host_key, "termpilot-test-host")
        client_public = keygen(self.client_key, "termpilot-test-client")
        authorized = self.dir / "authorized_keys"
        authorized.write_text(client_public + "\n")
        # The host key, pre-trusted: `[host]:port` is how ssh names a host on
        # a port other than 22.
        key_type, key_body = host_public.split()[:2]
        self.host_key_line = f"[127.0.0.1]:{self.port} {key_type} {key_body}"
        self.known_hosts.write_text(self.host_key_line + "\n")
        self.server_config.write_text(self._server_config(authorized))
        self.write_client_config(self.config)

    def _server_config(self, authorized: Path) -> str:
        return "\n".join(
            [
                f"ListenAddress 127.0.0.1:{self.port}",
                f"HostKey {self.host_key}",
                f"PidFile {self.pid_file}",
                f"AuthorizedKeysFile {authorized}",
                "AuthenticationMethods publickey",
                "PubkeyAuthentication yes",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "HostbasedAuthentication no",
                "PermitRootLogin prohibit-password",
                f"AllowUsers {self.user}",
                "StrictModes no",
                "UsePAM no",
                "UseDNS no",
                "PrintMotd no",
                "PrintLastLog no",
                "X11Forwarding no",
                "PermitUserEnvironment no",
                "LogLevel VERBOSE",
                # One SetEnv line for all: sshd takes the first line of a keyword
                # and ignores later ones.
                *(
                    [
                        "SetEnv "
                        + " ".join(f'"{name}={value}"' for name, value in self.set_env.items())
                    ]
                    if self.set_env
                    else []
                ),
                "",
            ]
        )

    def write_client_config(
        self,
        path: Path,
        *,
        alias: str = ALIAS,
        known_hosts: Path | None = None,
        strict_host_key_checking: str = "yes",
    ) -> Path:
        """Writes an ssh client configuration whose `alias` reaches this
        server. By default the host key is trusted (this server's own
        known_hosts); pass another `known_hosts` file (e.g. an empty one)
        and `strict_host_key_checking="ask"` to meet ssh's unknown-host
        question."""
        lines = [
            f"Host {alias}",
            "    HostName 127.0.0.1",
            f"    Port {self.port}",
            f"    User {self.user}",
            f"    IdentityFile {self.client_key}",
            "    IdentitiesOnly yes",
            "    IdentityAgent none",
            f"    UserKnownHostsFile {known_hosts or self.known_hosts}",
            "    GlobalKnownHostsFile /dev/null",
            f"    StrictHostKeyChecking {strict_host_key_checking}",
            "    UpdateHostKeys no",
            "    HashKnownHosts no",
            "    CheckHostIP no",
            "    ControlMaster no",
            "    ControlPath none",
            "    ConnectTimeout 5",
            "    LogLevel ERROR",
            "",
        ]
        path.write_text("\n".join(lines))
        return path

    def ssh_command(self, *command: str, batch: bool = True) -> list[str]:
        """The argv of `ssh -F CONFIG -T [-o BatchMode=yes] ALIAS COMMAND...`."""
        argv = ["ssh", "-F", str(self.config), "-T"]
        if batch:
            argv += ["-o", "BatchMode=yes"]
        return argv + [self.alias, *command]

    def run(self, *command: str, timeout: float = COMMAND_TIMEOUT, **kwargs) -> subprocess.CompletedProcess[str]:
        """Runs COMMAND through ssh in batch mode; never raises on failure."""
        return subprocess.run(
            self.ssh_command(*command),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
            **kwargs,
        )

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        """Starts sshd (again, after `stop`) on the same port, and returns once
        `ssh ALIAS true` succeeds; raises with sshd's log otherwise."""
        if self.running():
            return
        if not PRIVSEP_DIR.is_dir() and os.geteuid() == 0:
            PRIVSEP_DIR.mkdir(mode=0o755, parents=True, exist_ok=True)
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [self.program, "-D", "-e", "-f", str(self.server_config)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        deadline = time.monotonic() + START_TIMEOUT
        last = None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"sshd exited with {self.process.returncode}:\n{self.log_text()}")
            try:
                last = self.run("true", timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                continue
            if last.returncode == 0:
                return
            time.sleep(0.05)
        self.stop()
        detail = last.stderr if last is not None else "no answer"
        raise RuntimeError(
            f"sshd did not accept `ssh {self.alias} true` in {START_TIMEOUT}s: {detail}\n{self.log_text()}"
        )

    def stop(self, drop_connections: bool = True) -> None:
        """Ends the sshd this object started (by its pid); with
        `drop_connections`, also the servers of connections already open, so
        that their clients see the connection end."""
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            connections = descendants(process.pid) if drop_connections else []
            process.send_signal(signal.SIGTERM)
            for pid in connections:
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
        self.process = None

    def close(self) -> None:
        """Stops the server and removes the directory."""
        try:
            self.stop()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""
