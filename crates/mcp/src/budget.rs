//! Every text a tool returns goes through the renderer here: cut to the
//! caller's token budget, with the full text kept for `read_output`.

use termpilot_render::{Budget, Plan};

use crate::error::{ToolError, ToolResult};
use crate::server::TermpilotServer;

/// Text cut to a budget, with the facts about what was cut.
#[derive(Debug, Clone)]
pub(crate) struct Fitted {
    pub(crate) text: String,
    pub(crate) truncated: bool,
    pub(crate) total_lines: usize,
    pub(crate) omitted_lines: usize,
    pub(crate) omitted_bytes: usize,
    pub(crate) output_id: Option<String>,
}

impl TermpilotServer {
    /// The budget for one call: the caller's, else `default` (or the
    /// server's default), capped by the server's ceiling.
    pub(crate) fn budget(&self, requested: Option<u32>, default: Option<u32>) -> Budget {
        let options = &self.options;
        let tokens = requested
            .or(default)
            .unwrap_or(options.default_max_tokens)
            .min(options.max_tokens_ceiling);
        Budget::tokens(tokens as usize)
    }

    /// Renders clean text within `budget`, keeping the full text when cut.
    pub(crate) fn fit_text(&self, text: &str, budget: &Budget) -> ToolResult<Fitted> {
        let text = self.redact_text(text);
        self.fit(termpilot_render::plan(&text, budget))
    }

    fn fit(&self, plan: Plan<'_>) -> ToolResult<Fitted> {
        let id = if plan.is_truncated() {
            let mut store = self.store.lock().unwrap_or_else(|e| e.into_inner());
            Some(
                store
                    .keep_for(plan.full_text(), crate::caller::Caller::current().as_str())
                    .map_err(|e| ToolError::Failed(format!("cannot keep the full output: {e}")))?,
            )
        } else {
            None
        };
        let rendered = plan.finish(id.as_ref());
        Ok(Fitted {
            text: rendered.text,
            truncated: rendered.truncated,
            total_lines: rendered.total_lines,
            omitted_lines: rendered.omitted_lines,
            omitted_bytes: rendered.omitted_bytes,
            output_id: id.map(|id| id.to_string()),
        })
    }
}
