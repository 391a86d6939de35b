//! Every option of `termpilot serve` is in a table of the README, with its
//! environment variable and its default, as `serve --help` states them.

use std::path::PathBuf;
use std::process::Command;

/// One option as `serve --help` describes it.
#[derive(Debug)]
struct HelpOption {
    long: String,
    env: Option<String>,
    default: Option<String>,
}

/// The options of `termpilot serve --help`, without `--help` and `--version`.
fn serve_options() -> Vec<HelpOption> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_termpilot"));
    command.args(["serve", "--help"]);
    // A variable set here would show its value in the help text.
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("TERMPILOT_") {
            command.env_remove(name);
        }
    }
    let output = command.output().expect("termpilot runs");
    assert!(output.status.success(), "serve --help failed");
    parse_help(&String::from_utf8_lossy(&output.stdout))
}

fn parse_help(help: &str) -> Vec<HelpOption> {
    let mut options: Vec<HelpOption> = Vec::new();
    for line in help.lines() {
        let flags = line.trim_start();
        let flags = flags
            .strip_prefix('-')
            .filter(|rest| !rest.starts_with('-'))
            .and_then(|rest| rest.get(3..))
            .unwrap_or(flags);
        if let Some(long) = flags.strip_prefix("--") {
            let name = long.split([' ', '<']).next().unwrap_or_default();
            options.push(HelpOption {
                long: format!("--{name}"),
                env: None,
                default: None,
            });
        } else if let Some(option) = options.last_mut() {
            option.env = option.env.take().or_else(|| bracketed(line, "[env: "));
            option.default = option
                .default
                .take()
                .or_else(|| bracketed(line, "[default: "));
        }
    }
    options.retain(|o| o.long != "--help" && o.long != "--version");
    options
}

/// The text after `opening` up to `]` (an env value after `=` left out).
fn bracketed(line: &str, opening: &str) -> Option<String> {
    let rest = &line[line.find(opening)? + opening.len()..];
    let text = &rest[..rest.find(']')?];
    Some(text.split('=').next().unwrap_or(text).to_owned())
}

/// The README's table rows that name `long` as an option (followed by a
/// space or the closing backtick, so `--http` is not `--http-token`).
fn rows_naming<'a>(readme: &'a str, long: &str) -> Vec<&'a str> {
    readme
        .lines()
        .filter(|line| line.starts_with('|'))
        .filter(|line| {
            line.match_indices(&format!("`{long}")).any(|(at, found)| {
                matches!(line[at + found.len()..].chars().next(), Some(' ' | '`'))
            })
        })
        .collect()
}

#[test]
fn the_readme_tables_every_serve_option_with_its_env_and_default() {
    let readme_path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let readme = std::fs::read_to_string(readme_path).expect("README.md is readable");
    let options = serve_options();
    assert!(
        options.iter().any(|o| o.long == "--tmux")
            && options.iter().any(|o| o.long == "--http-token"),
        "the help text was not parsed: {options:?}"
    );
    let mut missing = Vec::new();
    for option in &options {
        let rows = rows_naming(&readme, &option.long);
        if rows.is_empty() {
            missing.push(format!("{} has no row", option.long));
            continue;
        }
        let described = |text: &str| rows.iter().any(|row| row.contains(text));
        if let Some(env) = option.env.as_deref().filter(|env| !described(env)) {
            missing.push(format!("{}'s row lacks {env}", option.long));
        }
        if let Some(default) = option.default.as_deref().filter(|d| !described(d)) {
            missing.push(format!("{}'s row lacks its default {default}", option.long));
        }
    }
    assert!(missing.is_empty(), "README options tables: {missing:#?}");
}

#[test]
fn help_parsing_finds_flags_envs_and_defaults() {
    let help = "Options:\n  -L, --socket-name <SOCKET_NAME>\n          tmux socket name \
                [env: TERMPILOT_SOCKET_NAME=]\n\n      --log <LOG>\n          Log filter \
                [env: TERMPILOT_LOG=] [default: warn]\n  -h, --help\n          Print help\n";
    let options = parse_help(help);
    let summary: Vec<_> = options
        .iter()
        .map(|o| (o.long.as_str(), o.env.as_deref(), o.default.as_deref()))
        .collect();
    assert_eq!(
        summary,
        [
            ("--socket-name", Some("TERMPILOT_SOCKET_NAME"), None),
            ("--log", Some("TERMPILOT_LOG"), Some("warn")),
        ]
    );
}
