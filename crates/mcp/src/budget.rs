//! Fitting terminal text into a caller's token budget.

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

/// Rough token estimate: about four bytes a token for terminal text.
fn tokens(line: &str) -> usize {
    line.len().div_ceil(4) + 1
}

impl TermpilotServer {
    /// The budget for one call: the caller's, else the default, capped by
    /// the server's ceiling.
    pub(crate) fn budget(&self, requested: Option<u32>) -> usize {
        let options = &self.options;
        requested
            .unwrap_or(options.default_max_tokens)
            .min(options.max_tokens_ceiling) as usize
    }

    /// Keeps whole lines from the start (a quarter of the budget) and the
    /// end (the rest), replacing the middle with one line saying what was
    /// left out.
    pub(crate) fn render_lines(&self, lines: &[String], budget: usize) -> Result<Fitted, String> {
        let total: usize = lines.iter().map(|l| tokens(l)).sum();
        let total_lines = lines.len();
        if total <= budget {
            return Ok(Fitted {
                text: lines.join("\n"),
                truncated: false,
                total_lines,
                omitted_lines: 0,
                omitted_bytes: 0,
                output_id: None,
            });
        }
        let head = take_within(lines.iter(), budget / 4);
        let tail = take_within(lines[head..].iter().rev(), budget - budget / 4);
        let omitted = &lines[head..total_lines - tail];
        let omitted_bytes: usize = omitted.iter().map(|l| l.len() + 1).sum();
        let mut text = lines[..head].join("\n");
        text.push_str(&format!(
            "\n[... {} lines ({} bytes) omitted; capture with a larger max_tokens to see them ...]\n",
            omitted.len(),
            omitted_bytes
        ));
        text.push_str(&lines[total_lines - tail..].join("\n"));
        Ok(Fitted {
            text,
            truncated: true,
            total_lines,
            omitted_lines: omitted.len(),
            omitted_bytes,
            output_id: None,
        })
    }
}

fn take_within<'a>(lines: impl Iterator<Item = &'a String>, budget: usize) -> usize {
    let mut used = 0;
    lines
        .take_while(|line| {
            used += tokens(line);
            used <= budget
        })
        .count()
}
