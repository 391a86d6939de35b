//! The tools, one module per family. Each tool is declared once, with its
//! name, description, argument and result types and handler together (see
//! [`crate::catalog::Tool`]).

pub(crate) mod batch;
pub(crate) mod batch_step;
pub(crate) mod capture;
pub(crate) mod channels;
pub(crate) mod commands;
pub(crate) mod export_recording;
pub(crate) mod input;
pub(crate) mod lifecycle;
pub(crate) mod params;
pub(crate) mod picture;
pub(crate) mod recording;
pub(crate) mod run_batch;
pub(crate) mod secrets;
pub(crate) mod sessions;
pub(crate) mod then_wait;
pub(crate) mod waits;
