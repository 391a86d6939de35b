//! Integration tests of termpilot-render: rendered snapshots, properties of budgets and
//! round trips, and the token estimate against real tokenizers.

mod properties;
mod round_trip;
mod samples;
mod snapshots;
mod tokenizer;
