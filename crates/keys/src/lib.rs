//! tmux key names to terminal bytes, and a key-sequence matcher for raw passthrough.
//!
//! - [`name`] parses key names in tmux 3.3a syntax (`Enter`, `C-c`, `M-Up`, `F5`),
//!   prints their canonical names and encodes the bytes tmux writes to a pane for them.
//! - [`matcher`] intercepts configured key sequences in a raw input stream (longest match,
//!   with a timeout to tell a lone Escape from Alt+key) and forwards everything else.
//!
//! ```
//! use termpilot_keys::{parse_key, parse_sequence};
//!
//! let key = parse_key("C-c").unwrap();
//! assert_eq!(key.bytes(), b"\x03");
//! assert_eq!(parse_key("m-up").unwrap().tmux_name(), "M-Up");
//! assert_eq!(parse_sequence("Escape c").unwrap().len(), 2);
//! assert_eq!(
//!     parse_key("Entr").unwrap_err().to_string(),
//!     "unknown key name 'Entr' (did you mean 'Enter'?); \
//!      names are tmux key names such as Enter, C-c, M-x, F5, Up",
//! );
//! ```
//!
//! Intercepting Ctrl+C in a raw input stream while forwarding everything else:
//!
//! ```
//! use std::time::Instant;
//! use termpilot_keys::{DEFAULT_ESCAPE_TIMEOUT, KeySequenceMatcher, MatchSink, parse_sequence};
//!
//! #[derive(Default)]
//! struct Child {
//!     input: Vec<u8>,
//!     actions: Vec<&'static str>,
//! }
//!
//! impl MatchSink<&'static str> for Child {
//!     fn forward(&mut self, bytes: &[u8]) {
//!         self.input.extend_from_slice(bytes);
//!     }
//!     fn action(&mut self, action: &&'static str, _sequence: &[u8]) {
//!         self.actions.push(action);
//!     }
//! }
//!
//! let bindings = vec![(parse_sequence("C-c").unwrap(), "interrupt")];
//! let mut matcher = KeySequenceMatcher::from_key_bindings(bindings, DEFAULT_ESCAPE_TIMEOUT)?;
//! let mut child = Child::default();
//! matcher.feed(b"ls\x03pwd", Instant::now(), &mut child);
//! assert_eq!(child.input, b"lspwd");
//! assert_eq!(child.actions, ["interrupt"]);
//! assert_eq!(matcher.deadline(), None);
//! # Ok::<(), termpilot_keys::BindingError>(())
//! ```
#![deny(missing_docs)]

pub mod matcher;
pub mod name;

pub use matcher::{BindingError, DEFAULT_ESCAPE_TIMEOUT, KeySequenceMatcher, MatchSink};
pub use name::{Key, KeyCode, KeyError, Modifiers, NamedKey, parse_key, parse_sequence};
