//! Budgeted rendering of terminal output for language-model agents.
//!
//! Every termpilot tool that returns terminal content renders it here. A rendering
//! keeps the first lines and the last lines within a budget of tokens (and optionally
//! lines and bytes), and replaces the middle with exactly one elision line that says
//! how much was left out and how to read it:
//!
//! ```text
//! [... lines 101-19,600 omitted (19,500 lines, 1.7 MB); read_output id=o7 offset=100 shows them ...]
//! ```
//!
//! Raw terminal bytes go through [`plan_terminal`], which first strips control
//! sequences and collapses carriage-return redraws (with `termpilot-journal`'s
//! cleaner); [`plan`] and [`render`] take text that is already clean.
//!
//! The full text is kept in an [`OutputStore`] under an opaque id that `read_output`
//! pages through. Runs of identical lines fold into one line with a count
//! (`<line>  [×9,999 identical lines]`, or `[×40 blank lines]`), trailing blank screen
//! lines are dropped, and a single line larger than the whole budget is cut within
//! itself, at character boundaries, with a marker naming the bytes left out.
//!
//! ```
//! use termpilot_render::{Budget, OutputStore, plan};
//!
//! let build_log: String = (1..=20_000).map(|i| format!("   Compiling crate{i} v0.1.0\n")).collect();
//! let mut store = OutputStore::new(None, 64 << 20, false)?;
//!
//! let plan = plan(&build_log, &Budget::default());
//! let id = if plan.is_truncated() { Some(store.keep(plan.full_text())?) } else { None };
//! let rendered = plan.finish(id.as_ref());
//!
//! assert!(rendered.shown_tokens <= 2_000);
//! assert!(rendered.text.contains("omitted (19,"));
//! let id = id.expect("kept").to_string();
//! let page = store.page(&id, rendered.head_lines as i64, 3, None)?;
//! assert_eq!(page.lines[0].number, rendered.head_lines + 1);
//! # Ok::<(), termpilot_render::StoreError>(())
//! ```
//!
//! Tour: [`budget`](Budget) holds the limits and the accounting against them;
//! `tokens` estimates tokens ([`estimate_tokens`], calibrated against real BPE
//! tokenizers); `lines` finds lines from either end with `memchr`; `fold` turns lines
//! into shown rows with identical runs folded; `cut` cuts an enormous line; `plan`
//! decides what to show and writes it out; `marker` words the elision line and the
//! markers. `store` and `page` keep full outputs and page through them (`store` is the
//! only part that does I/O), under ids that `id` makes and parses strictly; `error`
//! words what can go wrong with a kept output.
#![deny(missing_docs)]

mod budget;
mod cut;
mod error;
mod fold;
mod id;
mod lines;
mod marker;
mod page;
mod plan;
mod store;
mod tokens;

pub use budget::Budget;
pub use error::StoreError;
pub use id::OutputId;
pub use page::{Page, PageLine};
pub use plan::{Plan, Rendered, plan, plan_terminal, render};
pub use store::OutputStore;
pub use tokens::estimate_tokens;
