//! A private OpenSSH server on 127.0.0.1 for tests that reach tmux over ssh
//! (the twin of `tests/e2e/sshd.py`): its own host and client keys in a
//! temporary directory, and a client configuration whose alias
//! `termpilot-test` reaches it with the host key already trusted. Neither
//! the system's sshd nor the user's `~/.ssh` takes part. The server is ended
//! by the pid this module started (and the per-connection servers it forked).
#![allow(dead_code)] // Each test binary uses part of this module.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The client configuration's alias for the server.
pub const ALIAS: &str = "termpilot-test";

/// How long sshd may take to accept its first connection.
const START_LIMIT: Duration = Duration::from_secs(10);

static NEXT: AtomicU32 = AtomicU32::new(0);

/// The absolute path of sshd (it refuses a relative one), if installed.
pub fn sshd_program() -> Option<PathBuf> {
    find_program("sshd", &["/usr/sbin", "/usr/local/sbin", "/sbin"])
}

fn find_program(name: &str, extra: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(extra.iter().map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_absolute() && candidate.is_file())
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Why ssh tests cannot run here, or `None` when they can.
pub fn missing_reason() -> Option<String> {
    if sshd_program().is_none() {
        return Some("sshd not found: install openssh-server to run the ssh tests".into());
    }
    for tool in ["ssh", "ssh-keygen"] {
        if find_program(tool, &[]).is_none() {
            return Some(format!(
                "{tool} not found: install openssh-client to run the ssh tests"
            ));
        }
    }
    if !Path::new("/run/sshd").is_dir() && !is_root() {
        return Some("sshd needs /run/sshd, which is missing and only root can create".into());
    }
    None
}

/// One private sshd, running until dropped.
pub struct Sshd {
    /// The temporary directory holding keys, configurations and the log.
    pub dir: PathBuf,
    /// The client configuration (`ssh -F`).
    pub config: PathBuf,
    /// The port it listens on, on 127.0.0.1.
    pub port: u16,
    server_config: PathBuf,
    log: PathBuf,
    child: Option<Child>,
}

impl Sshd {
    /// Starts a server and returns once `ssh ALIAS true` succeeds.
    pub fn start() -> Sshd {
        Sshd::start_with_env(&[])
    }

    /// [`Sshd::start`] with variables sshd sets in every session it starts
    /// (its `SetEnv`), e.g. a `TMUX_TMPDIR` that makes the far side's tmux a
    /// server of the caller's own.
    pub fn start_with_env(set_env: &[(&str, &str)]) -> Sshd {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("tp-sshd-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).expect("create the sshd directory");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|probe| probe.local_addr())
            .expect("a free port")
            .port();
        let user = user_name();
        let host_public = keygen(&dir.join("host_ed25519"));
        let client_public = keygen(&dir.join("client_ed25519"));
        std::fs::write(dir.join("authorized_keys"), format!("{client_public}\n"))
            .expect("write authorized_keys");
        let mut key = host_public.split_whitespace();
        let (kind, body) = (key.next().unwrap_or(""), key.next().unwrap_or(""));
        std::fs::write(
            dir.join("known_hosts"),
            format!("[127.0.0.1]:{port} {kind} {body}\n"),
        )
        .expect("write known_hosts");
        let server_config = dir.join("sshd_config");
        // Sessions get a home of their own, so the shells sshd starts read
        // none of the user's rc files (where a tool's setup, such as a
        // `pyenv rehash` waiting on a lock a killed shell left behind, can
        // hold every new shell for a minute). One `SetEnv` line for all:
        // sshd takes the first line of a keyword and ignores the others.
        let home = dir.join("home");
        std::fs::create_dir(&home).expect("create the sessions' home");
        let home = home.display().to_string();
        let mut variables = vec![("HOME", home.as_str())];
        variables.retain(|(name, _)| set_env.iter().all(|(other, _)| other != name));
        variables.extend_from_slice(set_env);
        let mut server_text = server_config_text(&dir, port, &user);
        let pairs: Vec<String> = (variables.iter())
            .map(|(name, value)| format!("\"{name}={value}\""))
            .collect();
        server_text.push_str(&format!("SetEnv {}\n", pairs.join(" ")));
        std::fs::write(&server_config, server_text).expect("write sshd_config");
        let config = dir.join("ssh_config");
        std::fs::write(&config, client_config_text(&dir, port, &user)).expect("write ssh_config");
        let mut sshd = Sshd {
            log: dir.join("sshd.log"),
            dir,
            config,
            port,
            server_config,
            child: None,
        };
        sshd.spawn();
        sshd
    }

    fn spawn(&mut self) {
        use std::os::unix::process::CommandExt;
        if !Path::new("/run/sshd").is_dir() && is_root() {
            std::fs::create_dir_all("/run/sshd").expect("create /run/sshd");
        }
        let log = std::fs::File::create(&self.log).expect("create the sshd log");
        let child = Command::new(sshd_program().expect("sshd installed"))
            .args(["-D", "-e", "-f"])
            .arg(&self.server_config)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log descriptor"))
            .stderr(log)
            .process_group(0)
            .spawn()
            .expect("sshd starts");
        self.child = Some(child);
        let deadline = Instant::now() + START_LIMIT;
        loop {
            if self.ssh(&["true"]).status.success() {
                return;
            }
            let exited = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            if exited.is_some() || Instant::now() >= deadline {
                panic!("sshd did not start ({exited:?}):\n{}", self.log_text());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `ssh -F CONFIG -T -o BatchMode=yes ALIAS`, ready for the remote
    /// command's words.
    pub fn command(&self) -> Command {
        let mut command = Command::new("ssh");
        command
            .arg("-F")
            .arg(&self.config)
            .args(["-T", "-o", "BatchMode=yes", ALIAS]);
        command
    }

    /// Runs a remote command with no input and returns its output.
    pub fn ssh(&self, words: &[&str]) -> Output {
        self.command()
            .args(words)
            .stdin(Stdio::null())
            .output()
            .expect("ssh runs")
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // The per-connection servers first: they are not in its group.
            for pid in descendants(child.id()) {
                let _ = Command::new("kill")
                    .args(["-TERM", &pid.to_string()])
                    .stderr(Stdio::null())
                    .status();
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn user_name() -> String {
    let out = Command::new("id").arg("-un").output().expect("id runs");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Writes an ed25519 key pair without passphrase; returns the public line.
fn keygen(path: &Path) -> String {
    let status = Command::new("ssh-keygen")
        .args([
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-C",
            "termpilot-test",
            "-f",
        ])
        .arg(path)
        .stdout(Stdio::null())
        .status()
        .expect("ssh-keygen runs");
    assert!(status.success(), "ssh-keygen failed");
    let public = path.with_extension("pub");
    std::fs::read_to_string(public)
        .expect("read the public key")
        .trim()
        .to_owned()
}

fn server_config_text(dir: &Path, port: u16, user: &str) -> String {
    let d = dir.display();
    format!(
        "ListenAddress 127.0.0.1:{port}\nHostKey {d}/host_ed25519\nPidFile {d}/sshd.pid\n\
         AuthorizedKeysFile {d}/authorized_keys\nAuthenticationMethods publickey\n\
         PasswordAuthentication no\nKbdInteractiveAuthentication no\n\
         PermitRootLogin prohibit-password\nAllowUsers {user}\nStrictModes no\nUsePAM no\n\
         UseDNS no\nPrintMotd no\nPrintLastLog no\nX11Forwarding no\nLogLevel VERBOSE\n"
    )
}

fn client_config_text(dir: &Path, port: u16, user: &str) -> String {
    let d = dir.display();
    format!(
        "Host {ALIAS}\n    HostName 127.0.0.1\n    Port {port}\n    User {user}\n\
         \x20   IdentityFile {d}/client_ed25519\n    IdentitiesOnly yes\n    IdentityAgent none\n\
         \x20   UserKnownHostsFile {d}/known_hosts\n    GlobalKnownHostsFile /dev/null\n\
         \x20   StrictHostKeyChecking yes\n    UpdateHostKeys no\n    ControlMaster no\n\
         \x20   ControlPath none\n    ConnectTimeout 5\n    LogLevel ERROR\n"
    )
}

/// The processes below `pid`, read from `/proc/PID/task/*/children`.
fn descendants(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let mut queue = vec![pid];
    while let Some(parent) = queue.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{parent}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let Ok(list) = std::fs::read_to_string(task.path().join("children")) else {
                continue;
            };
            let children: Vec<u32> = list
                .split_whitespace()
                .filter_map(|c| c.parse().ok())
                .collect();
            found.extend(&children);
            queue.extend(children);
        }
    }
    found
}
