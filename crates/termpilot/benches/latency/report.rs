//! The results: an aligned plain-text table for people, JSON for the README.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::stats::{Summary, human};

/// One timed measurement. `key` names it in the JSON.
struct Row {
    key: &'static str,
    label: String,
    summary: Summary,
}

/// A ratio of two medians, "how many times faster".
struct Ratio {
    key: &'static str,
    label: String,
    value: f64,
}

/// One numbered part of the benchmark.
pub struct Section {
    title: String,
    rows: Vec<Row>,
    ratios: Vec<Ratio>,
    notes: Vec<String>,
}

impl Section {
    pub fn new(title: impl Into<String>) -> Section {
        Section {
            title: title.into(),
            rows: Vec::new(),
            ratios: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub fn row(mut self, key: &'static str, label: impl Into<String>, summary: Summary) -> Self {
        let label = label.into();
        self.rows.push(Row {
            key,
            label,
            summary,
        });
        self
    }

    pub fn ratio(mut self, key: &'static str, label: impl Into<String>, value: f64) -> Self {
        let label = label.into();
        self.ratios.push(Ratio { key, label, value });
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }
}

/// Everything one run measured.
pub struct Report {
    context: Vec<(&'static str, String)>,
    sections: Vec<Section>,
}

impl Report {
    /// A report headed by facts about the machine and tmux (`key`, value).
    pub fn new(context: Vec<(&'static str, String)>) -> Report {
        Report {
            context,
            sections: Vec::new(),
        }
    }

    pub fn push(&mut self, section: Section) {
        self.sections.push(section);
    }

    /// The table, with every label padded to the widest one.
    pub fn table(&self) -> String {
        let width = self.label_width();
        let mut out = String::from("termpilot latency benchmark\n");
        for (key, value) in &self.context {
            let _ = writeln!(out, "  {key}: {value}");
        }
        let _ = writeln!(
            out,
            "\n  {:width$}  {:>6}  {:>10}  {:>10}  {:>10}",
            "", "runs", "median", "p95", "max"
        );
        for section in &self.sections {
            let _ = writeln!(out, "{}", section.title);
            for row in &section.rows {
                let (median, p95) = (human(row.summary.median), human(row.summary.p95));
                let (runs, max) = (row.summary.runs, human(row.summary.max));
                let _ = writeln!(
                    out,
                    "  {:width$}  {runs:>6}  {median:>10}  {p95:>10}  {max:>10}",
                    row.label
                );
            }
            for ratio in &section.ratios {
                let _ = writeln!(
                    out,
                    "  {:width$}  {:>6}  {:>9.1}x",
                    ratio.label, "", ratio.value
                );
            }
            for note in &section.notes {
                let _ = writeln!(out, "  note: {note}");
            }
            out.push('\n');
        }
        out
    }

    fn label_width(&self) -> usize {
        let rows = self
            .sections
            .iter()
            .flat_map(|s| s.rows.iter().map(|r| &r.label));
        let ratios = self
            .sections
            .iter()
            .flat_map(|s| s.ratios.iter().map(|r| &r.label));
        rows.chain(ratios)
            .map(|label| label.chars().count())
            .max()
            .unwrap_or(0)
    }

    /// The same figures as JSON: durations in microseconds, ratios as numbers.
    pub fn json(&self) -> Value {
        let mut measurements = Map::new();
        let mut ratios = Map::new();
        let mut notes = Vec::new();
        for section in &self.sections {
            for row in &section.rows {
                let value = json!({
                    "label": row.label,
                    "runs": row.summary.runs,
                    "median_us": micros(row.summary.median),
                    "p95_us": micros(row.summary.p95),
                    "max_us": micros(row.summary.max),
                });
                measurements.insert(row.key.to_owned(), value);
            }
            for ratio in &section.ratios {
                let value = json!({ "label": ratio.label, "value": round(ratio.value, 2) });
                ratios.insert(ratio.key.to_owned(), value);
            }
            notes.extend(section.notes.iter().cloned());
        }
        let context: Map<String, Value> = (self.context.iter())
            .map(|(key, value)| ((*key).to_owned(), Value::from(value.as_str())))
            .collect();
        json!({ "context": context, "measurements": measurements, "ratios": ratios, "notes": notes })
    }

    /// Writes [`Report::json`] to `dir/bench-latency.json` and returns the path.
    pub fn write_json(&self, dir: &Path) -> anyhow::Result<PathBuf> {
        let path = dir.join("bench-latency.json");
        let mut text = serde_json::to_string_pretty(&self.json())?;
        text.push('\n');
        std::fs::write(&path, text)?;
        Ok(path)
    }
}

fn micros(duration: std::time::Duration) -> f64 {
    round(duration.as_secs_f64() * 1e6, 1)
}

fn round(value: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (value * scale).round() / scale
}
