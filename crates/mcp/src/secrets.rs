//! Secrets the person configures (`--secret NAME=env:VAR`,
//! `--secret NAME=file:PATH`, either followed by `;for=PROGRAM,...`) and the
//! agent types with `type_secret` without ever seeing them: a value is read
//! only when it is typed or redacted, is never logged or printed (`Debug`
//! shows `[secret NAME]`), and wherever a result would show it (a program
//! printing it back), `[secret NAME]` is shown instead. A secret bound to
//! programs (`for=`) is typed only where they alone are in the foreground.
//!
//! A secret the person typed on a page (`crate::secret_page`) is not kept:
//! only its fingerprints are, so that results can hide it too. Hiding is
//! the work of the one [`Redactor`] (`termpilot_journal::redact`, re-exported by the engine), which the
//! engine's waits match through as well.

use std::borrow::Cow;
use std::path::PathBuf;

use rmcp::model::InputRequiredResult;
use serde_json::Value;
use termpilot_journal::{Redaction, Redactor};
use termpilot_tmux::Recipients;

use crate::error::ToolResult;
use crate::server::{Done, TermpilotServer};

/// Where a secret's value comes from (never the value itself).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    /// An environment variable of the server.
    Env(String),
    /// A file (its trailing newline removed).
    File(PathBuf),
}

/// One configured secret: a name, where its value is read from, and the
/// programs it may be typed into.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret {
    name: String,
    source: Source,
    recipients: Recipients,
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[secret {}]", self.name)
    }
}

impl std::str::FromStr for Secret {
    type Err = String;

    /// Parses `NAME=env:VAR` or `NAME=file:PATH`, either followed by
    /// `;for=PROGRAM,...` (names or absolute paths).
    fn from_str(spec: &str) -> Result<Secret, String> {
        let usage = "a secret is NAME=env:VARIABLE or NAME=file:PATH, optionally followed by \
                     ;for=PROGRAM,... (the programs it may be typed into)";
        let (spec, recipients) = match spec.rsplit_once(";for=") {
            Some((spec, list)) => (spec, recipients(list)?),
            None => (spec, Recipients::default()),
        };
        let (name, source) = spec.split_once('=').ok_or(usage)?;
        if !valid_name(name) {
            return Err(format!(
                "secret name {name:?}: use 1-64 letters, digits, '_', '-' or '.'"
            ));
        }
        let source = match source.split_once(':') {
            Some(("env", var)) if !var.is_empty() => Source::Env(var.to_owned()),
            Some(("file", path)) if !path.is_empty() => Source::File(PathBuf::from(path)),
            _ => return Err(format!("secret {name}: {usage}")),
        };
        Ok(Secret {
            name: name.to_owned(),
            source,
            recipients,
        })
    }
}

/// The programs of a `for=` list: comma-separated names or absolute paths.
fn recipients(list: &str) -> Result<Recipients, String> {
    let programs: Vec<String> = list.split(',').map(|p| p.trim().to_owned()).collect();
    let valid = |p: &String| {
        !p.is_empty()
            && !p.ends_with('/')
            && (p.starts_with('/') || !p.contains('/'))
            && !p.chars().any(|c| c.is_control() || c.is_whitespace())
    };
    match programs.iter().find(|p| !valid(p)) {
        Some(bad) => Err(format!(
            "for={list}: {bad:?} is not a program; give names (sudo) or absolute paths \
             (/usr/bin/sudo), comma-separated"
        )),
        None => Ok(Recipients(programs)),
    }
}

impl Secret {
    /// The secret's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The programs it may be typed into (empty: any).
    pub fn recipients(&self) -> &Recipients {
        &self.recipients
    }

    /// The environment variable its value is read from, if any.
    pub fn variable(&self) -> Option<&str> {
        match &self.source {
            Source::Env(var) => Some(var),
            Source::File(_) => None,
        }
    }

    /// Reads the value now; the error never contains it.
    pub(crate) fn value(&self) -> Result<String, String> {
        let value = match &self.source {
            Source::Env(var) => std::env::var(var).map_err(|_| {
                format!(
                    "secret {}: environment variable {var} is not set",
                    self.name
                )
            })?,
            Source::File(path) => std::fs::read_to_string(path)
                .map_err(|e| format!("secret {}: cannot read {}: {e}", self.name, path.display()))?
                .trim_end_matches(['\n', '\r'])
                .to_owned(),
        };
        if value.is_empty() {
            return Err(format!("secret {} is empty", self.name));
        }
        Ok(value)
    }
}

/// The configured secrets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Secrets(Vec<Secret>);

impl Secrets {
    /// Parses specs (`NAME=env:VAR`, `NAME=file:PATH`, each optionally
    /// followed by `;for=PROGRAM,...`); each spec may hold several,
    /// comma-separated (see [`split_specs`]). A name given twice is an
    /// error.
    pub fn parse<S: AsRef<str>>(specs: &[S]) -> Result<Secrets, String> {
        let mut secrets: Vec<Secret> = Vec::new();
        for spec in specs.iter().flat_map(|s| split_specs(s.as_ref())) {
            let secret: Secret = spec.trim().parse()?;
            if secrets.iter().any(|s| s.name == secret.name) {
                return Err(format!("secret {} is configured twice", secret.name));
            }
            secrets.push(secret);
        }
        Ok(Secrets(secrets))
    }

    /// The configured secrets.
    pub fn iter(&self) -> impl Iterator<Item = &Secret> {
        self.0.iter()
    }

    /// The secret of this name.
    pub(crate) fn get(&self, name: &str) -> Option<&Secret> {
        self.0.iter().find(|s| s.name == name)
    }

    /// The configured names, for an error message.
    pub(crate) fn names(&self) -> String {
        match self.0.is_empty() {
            true => "none are configured (the person starts termpilot with --secret NAME=env:VAR)"
                .into(),
            false => {
                let names: Vec<&str> = self.0.iter().map(|s| s.name.as_str()).collect();
                format!("configured: {}", names.join(", "))
            }
        }
    }

    /// Each secret's name and value, for those that can be read now: what
    /// the redactor hides.
    fn readable(&self) -> Vec<(String, String)> {
        self.0
            .iter()
            .filter_map(|s| Some((s.name.clone(), s.value().ok()?)))
            .collect()
    }
}

/// The specs in a comma-separated list (`TERMPILOT_SECRETS`, or one
/// `--secret` holding several): a comma starts a new spec only where what
/// follows names one (`NAME=...`); else it belongs to the spec before, as
/// in `for=sudo,ssh` or a path holding a comma.
pub fn split_specs(list: &str) -> Vec<String> {
    let mut specs: Vec<String> = Vec::new();
    for piece in list.split(',') {
        match specs.last_mut() {
            Some(last) if !starts_spec(piece) => {
                last.push(',');
                last.push_str(piece);
            }
            _ => specs.push(piece.to_owned()),
        }
    }
    specs.retain(|spec| !spec.trim().is_empty());
    specs
}

/// Whether `piece` begins with `NAME=`.
fn starts_spec(piece: &str) -> bool {
    piece
        .trim_start()
        .split_once('=')
        .is_some_and(|(name, _)| valid_name(name))
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
}

fn redact_value(value: &mut Value, redaction: &Redaction) {
    match value {
        Value::String(s) => {
            if let Cow::Owned(redacted) = redaction.redact(s) {
                *s = redacted;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| redact_value(v, redaction)),
        Value::Object(map) => map.values_mut().for_each(|v| redact_value(v, redaction)),
        _ => {}
    }
}

impl TermpilotServer {
    /// The one redactor of every text that leaves the server (results,
    /// questions, errors, the log), shared with every host's engine, whose
    /// waits match over redacted text.
    pub(crate) fn redactor(&self) -> Redactor {
        self.local_engine().config().redactor.clone()
    }

    /// Makes the redactor read the configured secrets' values whenever it
    /// redacts (so a value is never kept by it).
    pub(crate) fn install_secrets(&self) {
        let secrets = self.options.secrets.clone();
        self.redactor().set_values(move || secrets.readable());
    }

    /// Remembers a value the person typed for the secret `name` (as
    /// fingerprints only), so that results hide it should a program print
    /// it back. Values shorter than 4 bytes are not looked for.
    pub(crate) fn remember_typed(&self, name: &str, value: &str) {
        if let Some(salt) = crate::random::hex_token(16) {
            self.redactor().remember_typed(name, value, salt.as_bytes());
        }
    }

    /// `text` with every secret's value (configured, or typed by the person)
    /// replaced by its name: applied to full texts before they are kept for
    /// `read_output`.
    pub(crate) fn redact_text(&self, text: &str) -> String {
        self.redactor().now().redact(text).into_owned()
    }

    /// An input-required result with every secret hidden in its questions
    /// (a prompt or a program name may hold one). Should it not convert to
    /// JSON and back, its questions are replaced by a note that says so:
    /// better no question than a secret in one.
    pub(crate) fn redact_question(&self, input: InputRequiredResult) -> InputRequiredResult {
        let redaction = self.redactor().now();
        if redaction.is_empty() {
            return input;
        }
        let redacted = serde_json::to_value(&input).ok().and_then(|mut value| {
            redact_value(&mut value, &redaction);
            serde_json::from_value(value).ok()
        });
        redacted.unwrap_or_else(|| InputRequiredResult::new(None, input.request_state))
    }

    /// A tool's outcome with every secret's value replaced by its name, in
    /// the text, the structured content and error messages.
    pub(crate) fn redact_outcome(&self, outcome: ToolResult<Done>) -> Result<Done, String> {
        let outcome = outcome.map_err(|error| error.to_string());
        let redaction = self.redactor().now();
        if redaction.is_empty() {
            return outcome;
        }
        match outcome {
            Ok(mut done) => {
                done.text = redaction.redact(&done.text).into_owned();
                redact_value(&mut done.structured, &redaction);
                Ok(done)
            }
            Err(message) => Err(redaction.redact(&message).into_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sources_and_hides_values_in_debug() {
        let secrets = Secrets::parse(&["db=env:TP_TEST_DB", "key=file:/tmp/k"]).unwrap();
        assert_eq!(format!("{:?}", secrets.0[0]), "[secret db]");
        assert_eq!(secrets.0[1].source, Source::File("/tmp/k".into()));
        assert!(Secrets::parse(&["db=env:A", "db=env:B"]).is_err());
        assert!(Secrets::parse(&["novalue"]).is_err());
        assert!(Secrets::parse(&["x=ftp:host"]).is_err());
        assert!(Secrets::parse(&["bad name=env:X"]).is_err());
    }

    #[test]
    fn a_secret_may_be_bound_to_programs() {
        let list = "db=env:DB;for=psql, pw=file:/k,v;for=sudo,/usr/bin/ssh,tok=env:T";
        let secrets = Secrets::parse(&[list]).unwrap();
        let names: Vec<&str> = secrets.iter().map(Secret::name).collect();
        assert_eq!(names, ["db", "pw", "tok"]);
        assert_eq!(secrets.0[0].recipients, Recipients(vec!["psql".into()]));
        assert_eq!(secrets.0[1].source, Source::File("/k,v".into()));
        assert_eq!(
            secrets.0[1].recipients,
            Recipients(vec!["sudo".into(), "/usr/bin/ssh".into()])
        );
        assert_eq!(secrets.0[2].recipients, Recipients::default());
        assert_eq!(secrets.0[0].variable(), Some("DB"));
        assert_eq!(secrets.0[1].variable(), None);
        for bad in [
            "a=env:X;for=",
            "a=env:X;for=sudo,",
            "a=env:X;for=bin/sudo",
            "a=env:X;for=a b",
        ] {
            assert!(Secrets::parse(&[bad]).is_err(), "{bad}");
        }
        assert!(Secrets::parse(&["a=env:X;for=sudo"; 1]).is_ok());
        assert!(Secrets::parse(&["a=env:X,", ""]).unwrap().0.len() == 1);
    }

    #[test]
    fn structured_values_are_redacted_everywhere() {
        let redactor = Redactor::default();
        redactor.set_values(|| vec![("pw".into(), "hunter2".into())]);
        let mut value = serde_json::json!({"a": ["x hunter2 y", 3], "b": {"c": "hunter2"}});
        redact_value(&mut value, &redactor.now());
        assert_eq!(
            value,
            serde_json::json!({"a": ["x [secret pw] y", 3], "b": {"c": "[secret pw]"}})
        );
    }

    #[test]
    fn a_missing_value_is_an_error_without_the_value() {
        let secret: Secret = "tok=env:TP_SURELY_UNSET_VARIABLE".parse().unwrap();
        let error = secret.value().unwrap_err();
        assert!(error.contains("TP_SURELY_UNSET_VARIABLE"), "{error}");
    }
}
