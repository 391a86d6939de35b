//! The benchmark's own tmux servers and their configuration file, and the
//! guarantee that they go away.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};

/// A tmux server on a private socket name, killed when this value is dropped
/// (also while a panic unwinds), so a failed run leaves nothing behind.
pub struct PrivateServer {
    name: String,
    config: PathBuf,
    /// tmux leaves its socket file behind on `kill-server`; we remove it
    /// ourselves, since nobody else will ever use this name again.
    socket_path: Option<PathBuf>,
}

impl PrivateServer {
    /// Starts a server named `name` with a first session "main" (pane `%0`,
    /// 160x48), configured from `config` alone so the user's `~/.tmux.conf`
    /// plays no part.
    pub fn start(name: String, config: &Path) -> anyhow::Result<PrivateServer> {
        // The guard exists before the server does, so a failure below still kills it.
        let mut server = PrivateServer {
            name,
            config: config.to_owned(),
            socket_path: None,
        };
        server.launch()?;
        server.socket_path = Some(server.query_socket_path()?);
        Ok(server)
    }

    /// The socket name (`tmux -L NAME`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The configuration file the server starts with; `termpilot serve`
    /// gets it too, for when it starts the server itself.
    pub fn config(&self) -> &Path {
        &self.config
    }

    /// A `tmux -L NAME` command, cleared of the variables that would tie it to
    /// a tmux the benchmark itself might run in.
    pub fn tmux(&self) -> Command {
        let mut command = Command::new("tmux");
        command
            .arg("-L")
            .arg(&self.name)
            .env_remove("TMUX")
            .env_remove("TMUX_PANE");
        command
    }

    /// (Re)starts the server after [`PrivateServer::stop`].
    pub fn launch(&self) -> anyhow::Result<()> {
        let status = self
            .tmux()
            .arg("-f")
            .arg(&self.config)
            .args(["new-session", "-d", "-s", "main"])
            .args(["-x", "160", "-y", "48"])
            .status()
            .context("cannot run tmux")?;
        ensure!(status.success(), "tmux new-session failed: {status}");
        Ok(())
    }

    /// Kills the server and waits until it no longer answers.
    pub fn stop(&self) -> anyhow::Result<()> {
        let _ = self.quiet(&["kill-server"]);
        let deadline = Instant::now() + Duration::from_secs(3);
        while self.is_running() {
            ensure!(
                Instant::now() < deadline,
                "tmux server {} did not exit",
                self.name
            );
            thread::sleep(Duration::from_millis(5));
        }
        Ok(())
    }

    /// Whether the server answers at all.
    pub fn is_running(&self) -> bool {
        self.quiet(&["list-sessions"]).unwrap_or(false)
    }

    /// A second guard for the same server, for [`clean_up_on_interrupt`].
    pub fn guard(&self) -> PrivateServer {
        PrivateServer {
            name: self.name.clone(),
            config: self.config.clone(),
            socket_path: self.socket_path.clone(),
        }
    }

    fn quiet(&self, args: &[&str]) -> std::io::Result<bool> {
        let status = self
            .tmux()
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()?;
        Ok(status.success())
    }

    fn query_socket_path(&self) -> anyhow::Result<PathBuf> {
        let output = self
            .tmux()
            .args(["display-message", "-p", "#{socket_path}"])
            .output()?;
        let path = String::from_utf8(output.stdout)?;
        ensure!(
            output.status.success() && !path.trim().is_empty(),
            "no socket path"
        );
        Ok(PathBuf::from(path.trim()))
    }
}

impl Drop for PrivateServer {
    fn drop(&mut self) {
        let _ = self.stop();
        if let Some(path) = &self.socket_path {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The shell every bench pane runs: plain bash without startup files or
/// history, so `~/.bashrc` slows nothing and leaves no trace.
const TMUX_CONF: &str =
    "set -g default-command \"exec env HISTFILE=/dev/null bash --norc --noprofile\"\n";

/// A private temporary directory holding the benchmark's `tmux.conf`,
/// removed when this value is dropped.
pub struct ConfigDir {
    dir: PathBuf,
}

impl ConfigDir {
    /// Creates `<tmp>/<name>/tmux.conf`.
    pub fn create(name: &str) -> anyhow::Result<ConfigDir> {
        let dir = std::env::temp_dir().join(name);
        std::fs::create_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let config = ConfigDir { dir };
        std::fs::write(config.tmux_conf(), TMUX_CONF)?;
        Ok(config)
    }

    /// The `tmux.conf` to pass as `tmux -f` and `termpilot serve --tmux-config`.
    pub fn tmux_conf(&self) -> PathBuf {
        self.dir.join("tmux.conf")
    }

    /// A second guard for the same directory, for [`clean_up_on_interrupt`].
    pub fn guard(&self) -> ConfigDir {
        ConfigDir {
            dir: self.dir.clone(),
        }
    }
}

impl Drop for ConfigDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// On Ctrl-C, drops `guards` (killing servers, removing files) and exits:
/// `exit` skips destructors, so the guards held by `main` alone would leave
/// the servers running.
pub fn clean_up_on_interrupt(guards: Vec<Box<dyn Send>>) {
    thread::spawn(move || {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        if runtime.block_on(tokio::signal::ctrl_c()).is_ok() {
            drop(guards);
            std::process::exit(130);
        }
    });
}
