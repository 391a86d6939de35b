//! The environment variables no process termpilot starts may inherit.
//!
//! A secret configured as `env:VAR` is in termpilot's environment, and a
//! child inherits its parent's: a tmux server termpilot starts would keep it
//! in its global environment, and every pane would see it (`printenv VAR`).
//! So the variables named here are removed from the environment of every
//! process the engine starts. Every such process is built by
//! `transport::Launcher`, which calls [`scrub`]; that is the one place.
//!
//! termpilot's own `/proc/PID/environ` still shows the values: the kernel
//! keeps the environment a process was started with, whatever it changes
//! later, and any process of the same user may read it.

use std::ffi::OsString;
use std::sync::RwLock;

/// The names hidden; set once at start-up, read at every spawn. A std lock:
/// held only to copy names, never across an `.await`.
static HIDDEN: RwLock<Vec<OsString>> = RwLock::new(Vec::new());

/// Keeps `names` out of the environment of every process started from now
/// on (in addition to those hidden before).
pub fn hide_from_children<I, S>(names: I)
where
    I: IntoIterator<Item = S>,
    S: Into<OsString>,
{
    let mut hidden = HIDDEN.write().unwrap_or_else(|e| e.into_inner());
    for name in names {
        let name = name.into();
        if !hidden.contains(&name) {
            hidden.push(name);
        }
    }
}

/// Removes the hidden variables from what `command` will run with.
pub(crate) fn scrub(command: &mut tokio::process::Command) {
    let hidden = HIDDEN.read().unwrap_or_else(|e| e.into_inner());
    for name in hidden.iter() {
        command.env_remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_hidden_variable_does_not_reach_a_child() {
        // A name no other test uses, set in the child's own command so the
        // test does not change this process's environment.
        hide_from_children(["TP_CHILD_ENV_TEST"]);
        let mut command = tokio::process::Command::new("sh");
        command
            .env("TP_CHILD_ENV_TEST", "x")
            .env("TP_CHILD_ENV_KEPT", "y");
        scrub(&mut command);
        let output = command
            .args([
                "-c",
                "echo \"${TP_CHILD_ENV_TEST-unset} $TP_CHILD_ENV_KEPT\"",
            ])
            .output()
            .await
            .expect("sh runs");
        assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "unset y");
    }
}
