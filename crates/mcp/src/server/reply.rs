//! A tool's successful result before it goes out.

use rmcp::model::ContentBlock;
use serde::Serialize;
use serde_json::Value;

use crate::error::{ToolError, ToolResult};

/// A successful tool result: structured content and its short text form.
pub(crate) struct Done {
    pub(crate) structured: Value,
    pub(crate) text: String,
    /// Content after the text (a picture of a screen).
    pub(crate) content: Vec<ContentBlock>,
}

/// A tool's result before it is encoded: its structured content, typed,
/// and its short text form.
pub(crate) struct Reply<T> {
    pub(crate) entry: T,
    pub(crate) text: String,
}

impl<T: Serialize> Reply<T> {
    /// The result as it goes out.
    pub(crate) fn done(self) -> ToolResult<Done> {
        Done::new(&self.entry, self.text)
    }
}

impl Done {
    pub(crate) fn new<T: Serialize>(value: &T, text: String) -> ToolResult<Done> {
        let structured = serde_json::to_value(value)
            .map_err(|e| ToolError::Failed(format!("cannot encode the result: {e}")))?;
        Ok(Done {
            structured,
            text,
            content: Vec::new(),
        })
    }
}
