//! Hosts: the tmux servers one termpilot drives, on this machine and on
//! others.
//!
//! The machine termpilot runs on is host [`LOCAL`]. Every other host is a
//! name the person configured (`build=ssh:build-1`, `box=exec:docker exec -i
//! box-1`) and an engine connected on first use, so starting termpilot never
//! waits on a remote machine, and a host that cannot be reached fails only
//! the calls that name it.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::OnceCell;

use crate::config::EngineConfig;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::transport::{Local, Remote, SshOptions, Transport};

/// The name of the machine termpilot runs on.
pub const LOCAL: &str = "local";

/// How ssh connections wait by default before they count as failed.
pub const DEFAULT_HOST_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a host that could not be connected counts as unreachable for
/// calls that ask every host (see [`Hosts::recent_failure`]).
pub const UNREACHABLE_MEMORY: Duration = Duration::from_secs(30);

/// How a configured host is reached, as written after `NAME=`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// `ssh:DEST`: the system's `ssh` to `DEST`.
    Ssh(String),
    /// `exec:PREFIX`: `PREFIX` followed by the tmux command line.
    Exec(String),
}

/// One `--host NAME=ssh:DEST` or `NAME=exec:PREFIX`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSpec {
    /// The name targets use (`NAME/%3`).
    pub name: String,
    /// How to reach it.
    pub reach: Reach,
}

impl std::str::FromStr for HostSpec {
    type Err = String;

    fn from_str(spec: &str) -> std::result::Result<HostSpec, String> {
        let Some((name, reach)) = spec.split_once('=') else {
            return Err(format!(
                "{spec:?}: expected NAME=ssh:DEST or NAME=exec:PREFIX"
            ));
        };
        let name = name.trim();
        check_name(name)?;
        let reach = if let Some(dest) = reach.strip_prefix("ssh:") {
            let dest = dest.trim();
            if dest.is_empty() || dest.starts_with('-') || dest.contains(char::is_whitespace) {
                return Err(format!(
                    "host {name}: {dest:?} is not an ssh destination (user@host, host or an alias)"
                ));
            }
            Reach::Ssh(dest.to_owned())
        } else if let Some(prefix) = reach.strip_prefix("exec:") {
            match crate::transport::split_words(prefix) {
                None => return Err(format!("host {name}: unbalanced quotes in {prefix:?}")),
                Some(words) if words.is_empty() => {
                    return Err(format!("host {name}: the exec prefix is empty"));
                }
                Some(_) => Reach::Exec(prefix.trim().to_owned()),
            }
        } else {
            return Err(format!(
                "host {name}: {reach:?} must start with ssh: or exec:"
            ));
        };
        Ok(HostSpec {
            name: name.to_owned(),
            reach,
        })
    }
}

impl fmt::Display for HostSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.reach {
            Reach::Ssh(dest) => write!(f, "{}=ssh:{dest}", self.name),
            Reach::Exec(prefix) => write!(f, "{}=exec:{prefix}", self.name),
        }
    }
}

/// Whether `name` is written as a host name is: letters, digits, `-` and
/// `_`, at most 32 (ids carry it).
pub fn is_host_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A host name (see [`is_host_name`]), not `local`.
fn check_name(name: &str) -> std::result::Result<(), String> {
    if !is_host_name(name) {
        return Err(format!(
            "{name:?} is not a host name: use letters, digits, - and _ (at most 32)"
        ));
    }
    if name == LOCAL {
        return Err(format!(
            "{LOCAL:?} is the machine termpilot runs on; pick another name"
        ));
    }
    Ok(())
}

/// What every remote host shares.
#[derive(Debug, Clone)]
pub struct HostOptions {
    /// `-F PATH` for every ssh termpilot runs.
    pub ssh_config: Option<PathBuf>,
    /// How long connecting to a host may take.
    pub timeout: Duration,
    /// Where ssh's master connection sockets live (private to this process).
    pub control_dir: PathBuf,
}

impl Default for HostOptions {
    fn default() -> Self {
        HostOptions {
            ssh_config: None,
            timeout: DEFAULT_HOST_TIMEOUT,
            control_dir: std::env::temp_dir(),
        }
    }
}

struct Host {
    transport: Arc<dyn Transport>,
    engine: OnceCell<Engine>,
    /// The last connect that failed, when no call has connected since. A
    /// std `Mutex`: held to read or replace it, never across an `.await`.
    failed: Mutex<Option<Failure>>,
}

impl Host {
    fn new(transport: Arc<dyn Transport>) -> Host {
        Host {
            transport,
            engine: OnceCell::new(),
            failed: Mutex::new(None),
        }
    }

    fn failed(&self) -> std::sync::MutexGuard<'_, Option<Failure>> {
        self.failed.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A connect that failed: when, and the error it gave.
#[derive(Debug, Clone)]
struct Failure {
    at: tokio::time::Instant,
    error: Error,
}

/// Whether an error says that the host could not be connected (rather
/// than that tmux there refused a command).
fn is_connect_failure(error: &Error) -> bool {
    matches!(error, Error::Connect { .. } | Error::TmuxMissing { .. })
}

/// Every host's engine, connected on first use.
pub struct Hosts {
    config: EngineConfig,
    hosts: BTreeMap<String, Host>,
    /// The names in the order the person gave them, `local` first.
    order: Vec<String>,
}

impl fmt::Debug for Hosts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.order).finish()
    }
}

impl Hosts {
    /// The local server `config` names, and `specs` besides. Connects to
    /// nothing yet.
    pub fn new(config: EngineConfig, specs: &[HostSpec], options: &HostOptions) -> Result<Hosts> {
        let mut hosts = BTreeMap::new();
        let mut order = vec![LOCAL.to_owned()];
        let local: Arc<dyn Transport> = Arc::new(Local::new(&config));
        hosts.insert(LOCAL.to_owned(), Host::new(local));
        let ssh = SshOptions {
            config: options.ssh_config.clone(),
            control_dir: options.control_dir.clone(),
            timeout: options.timeout,
            tmux: "tmux".to_owned(),
        };
        for spec in specs {
            let transport: Arc<dyn Transport> = match &spec.reach {
                Reach::Ssh(dest) => Arc::new(Remote::ssh(&spec.name, dest, &ssh)),
                Reach::Exec(prefix) => Arc::new(Remote::exec(&spec.name, prefix, options.timeout)?),
            };
            if hosts
                .insert(spec.name.clone(), Host::new(transport))
                .is_some()
            {
                return Err(Error::InvalidArgument(format!(
                    "host {} is configured twice",
                    spec.name
                )));
            }
            order.push(spec.name.clone());
        }
        Ok(Hosts {
            config,
            hosts,
            order,
        })
    }

    /// Every host's name, `local` first.
    pub fn names(&self) -> &[String] {
        &self.order
    }

    /// Whether `name` is a configured host.
    pub fn contains(&self, name: &str) -> bool {
        self.hosts.contains_key(name)
    }

    /// The engine of host `name`, connecting it on first use. A host that
    /// cannot be reached fails this call only: the next one tries again.
    pub async fn engine(&self, name: &str) -> Result<Engine> {
        let host =
            (self.hosts.get(name)).ok_or_else(|| Error::UnknownHost { name: name.into() })?;
        let engine = host
            .engine
            .get_or_try_init(|| {
                Engine::connect_with(self.config.clone(), Arc::clone(&host.transport))
            })
            .await;
        self.note(name, engine.as_ref().err());
        Ok(engine?.clone())
    }

    /// Records how a call on host `name` went: a failure to connect (the
    /// first one, or a reconnect after the connection dropped) is kept for
    /// [`Hosts::recent_failure`]; anything else forgets the last failure.
    pub fn note(&self, name: &str, error: Option<&Error>) {
        let Some(host) = self.hosts.get(name) else {
            return;
        };
        *host.failed() = error.filter(|e| is_connect_failure(e)).map(|e| Failure {
            at: tokio::time::Instant::now(),
            error: e.clone(),
        });
    }

    /// The error of the last connect to host `name` that failed within
    /// [`UNREACHABLE_MEMORY`], with how long ago, unless a call connected
    /// since. Listings of every host report it instead of waiting on the
    /// host again; a call that names the host tries again at once.
    pub fn recent_failure(&self, name: &str) -> Option<(Error, Duration)> {
        let failed = self.hosts.get(name)?.failed().clone()?;
        let ago = failed.at.elapsed();
        (ago < UNREACHABLE_MEMORY).then_some((failed.error, ago))
    }

    /// The engine of host `name` if it has connected already.
    pub fn connected(&self, name: &str) -> Option<Engine> {
        self.hosts.get(name)?.engine.get().cloned()
    }

    /// The same hosts with `engine`, connected already, as the local host's
    /// engine: the one engine that drives the local server, however a call
    /// names it (`%3` or `local/%3`).
    pub fn with_local(mut self, engine: Engine) -> Hosts {
        if let Some(host) = self.hosts.get_mut(LOCAL) {
            host.transport = Arc::clone(&engine.shared.transport);
            host.engine = OnceCell::from(engine);
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        let spec: HostSpec = "build=ssh:me@build-1".parse().unwrap();
        assert_eq!(spec.name, "build");
        assert_eq!(spec.reach, Reach::Ssh("me@build-1".into()));
        let spec: HostSpec = "box=exec:docker exec -i 'box 1'".parse().unwrap();
        assert_eq!(spec.reach, Reach::Exec("docker exec -i 'box 1'".into()));
        assert_eq!(spec.to_string(), "box=exec:docker exec -i 'box 1'");
        for bad in [
            "build",
            "=ssh:x",
            "local=ssh:x",
            "a/b=ssh:x",
            "build=ssh:",
            "build=ssh:-oProxyCommand=x",
            "build=ssh:a b",
            "build=exec:",
            "build=exec:docker 'x",
            "build=telnet:x",
        ] {
            assert!(bad.parse::<HostSpec>().is_err(), "{bad}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_connect_is_remembered_for_a_while() {
        let specs: Vec<HostSpec> = vec!["b=ssh:b".parse().unwrap()];
        let hosts = Hosts::new(EngineConfig::default(), &specs, &HostOptions::default()).unwrap();
        assert!(hosts.recent_failure("b").is_none());
        let refused = Error::Connect {
            socket: "host b (ssh b)".into(),
            reason: "ssh: connect to host b port 22: Connection refused".into(),
        };
        hosts.note("b", Some(&refused));
        let tick = Duration::from_millis(1);
        tokio::time::advance(UNREACHABLE_MEMORY - tick).await;
        let (error, ago) = hosts.recent_failure("b").expect("remembered");
        assert_eq!(
            (error.to_string(), ago),
            (refused.to_string(), UNREACHABLE_MEMORY - tick)
        );
        tokio::time::advance(tick).await;
        assert!(hosts.recent_failure("b").is_none(), "forgotten in time");
        // A call that went through, or failed for another reason, forgets.
        hosts.note("b", Some(&refused));
        hosts.note("b", None);
        assert!(hosts.recent_failure("b").is_none());
        hosts.note("b", Some(&refused));
        hosts.note("b", Some(&Error::InvalidArgument("no such window".into())));
        assert!(hosts.recent_failure("b").is_none());
    }

    #[test]
    fn hosts_keep_their_order_and_refuse_twins() {
        let options = HostOptions {
            ssh_config: None,
            timeout: DEFAULT_HOST_TIMEOUT,
            control_dir: std::env::temp_dir(),
        };
        let specs: Vec<HostSpec> = ["b=ssh:b", "a=exec:env"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        let hosts = Hosts::new(EngineConfig::default(), &specs, &options).unwrap();
        assert_eq!(hosts.names(), ["local", "b", "a"]);
        assert!(hosts.contains("a") && !hosts.contains("c"));
        assert!(hosts.connected("b").is_none());
        let twins: Vec<HostSpec> = ["b=ssh:b", "b=exec:env"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        assert!(Hosts::new(EngineConfig::default(), &twins, &options).is_err());
    }
}
