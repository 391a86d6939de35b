//! The tmux control-mode protocol (tmux 3.3a, `tmux -C`), without I/O.
//!
//! termpilot talks to tmux through one long-lived control client per session. This
//! crate is the part of that conversation that needs no sockets or tasks:
//!
//! - [`Parser`] (in [`parser`]) turns the bytes a control client prints into
//!   [`Event`]s (in [`event`]): command replies framed by `%begin`/`%end`/`%error`,
//!   pane output with tmux's octal escapes decoded, flow control (`%pause`,
//!   `%continue`), `%exit`, and notifications with their ids parsed.
//! - [`Command`] and [`quote`] (in [`command`]) build command lines whose arguments
//!   reach tmux byte for byte, whatever they contain.
//! - [`PaneId`], [`WindowId`] and [`SessionId`] (in [`ids`]) keep tmux's `%3`, `@1`
//!   and `$0` strings out of the rest of the program.
//! - [`PaneTarget`], [`WindowTarget`] and [`SessionTarget`] (in [`target`]) accept only
//!   targets that name one thing outright, and [`Name`] (in [`name`]) only names tmux
//!   stores unchanged; [`escape_format`] keeps caller text out of tmux's formats.
//!   A [`Target`] is one of them parsed once where it enters, with its text as written:
//!   what the engine's entry points take.
//! - [`pane_sizes`] (in [`layout`]) reads the pane sizes of a `%layout-change`.
//!
//! Everything is bytes in, values out, so the engine that owns the tmux process can
//! be tested without tmux, and the parser can be fuzzed.
//!
//! ```
//! use termpilot_control::{Command, Event, PaneId, Parser};
//!
//! let line = Command::new("display-message").flag("-p").opt("-t", "%1").arg("#{pane_id}");
//! assert_eq!(line.build().unwrap(), b"display-message -p -t \"\\%1\" \"\\#\\{pane\\_id\\}\"\n");
//!
//! let mut parser = Parser::new();
//! parser.feed(b"%begin 1700000000 5 1\n%1\n%end 1700000000 5 1\n%output %1 $ \n");
//! let Some(Event::Reply(reply)) = parser.next_event() else { panic!("expected a reply") };
//! assert!(reply.ok);
//! assert_eq!(reply.text(), "%1");
//! assert_eq!(parser.next_event(), Some(Event::Output { pane: PaneId(1), data: b"$ ".to_vec() }));
//! assert_eq!(parser.next_event(), None);
//! ```
#![deny(missing_docs)]

pub mod command;
pub mod event;
mod guard;
pub mod ids;
pub mod layout;
pub mod name;
mod notification;
pub mod output;
pub mod parser;
pub mod target;

pub use command::{Command, CommandError, quote, unquote};
pub use event::{Event, Notification, Reply};
pub use ids::{PaneId, ParseIdError, SessionId, WindowId};
pub use layout::{PaneSize, pane_sizes};
pub use name::{Name, NameError, NameKind, escape_format};
pub use parser::Parser;
pub use target::{
    PaneTarget, SessionTarget, Target, TargetError, TargetKind, WindowRef, WindowSlot, WindowTarget,
};
