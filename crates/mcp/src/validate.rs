//! Run-time argument checks against the published input schemas.
//!
//! rmcp does not validate arguments. Validating them against the very schema
//! a tool publishes means every advertised bound is enforced, and no bound
//! is enforced that was not advertised.

use std::collections::HashMap;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::catalog::{self, SPECS};
use crate::error::{ToolError, ToolResult};

/// One compiled validator per tool.
pub(crate) struct Validators {
    by_tool: HashMap<&'static str, jsonschema::Validator>,
}

impl Validators {
    /// Compiles the input schema of every tool.
    pub(crate) fn new() -> Self {
        let by_tool = SPECS
            .iter()
            .map(|spec| {
                let schema = Value::Object(spec.tool().input_schema.as_ref().clone());
                let validator = jsonschema::validator_for(&schema)
                    .unwrap_or_else(|e| panic!("input schema of {} is invalid: {e}", spec.name));
                (spec.name, validator)
            })
            .collect();
        Validators { by_tool }
    }

    /// Checks `arguments` against the tool's schema; the error names each
    /// offending field.
    pub(crate) fn check(&self, tool: &str, arguments: &Value) -> Result<(), String> {
        let mut problems = self.problems(tool, arguments, "");
        if let Some(spec) = catalog::find(tool) {
            for nested in (spec.nested)(arguments) {
                problems.extend(self.problems(&nested.tool, &nested.arguments, &nested.prefix));
            }
        }
        problems.truncate(5);
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "invalid arguments for {tool}: {}",
                problems.join("; ")
            ))
        }
    }
}

impl Validators {
    /// What is wrong with `arguments` for `tool`, each naming its field after `prefix`.
    fn problems(&self, tool: &str, arguments: &Value, prefix: &str) -> Vec<String> {
        let Some(validator) = self.by_tool.get(tool) else {
            return Vec::new();
        };
        validator
            .iter_errors(arguments)
            .take(5)
            .map(|error| {
                let path = error.instance_path().to_string();
                let field = format!("{prefix}{}", path.trim_start_matches('/').replace('/', "."));
                let field = field.trim_end_matches('.');
                let message = shortened(&error.to_string());
                if field.is_empty() {
                    message
                } else {
                    format!("{field}: {message}")
                }
            })
            .collect()
    }
}

/// Keeps an error message short when it quotes a long argument back: the
/// caller needs the beginning and the reason at the end, not the whole value.
fn shortened(message: &str) -> String {
    const HEAD: usize = 60;
    const TAIL: usize = 80;
    let chars: Vec<char> = message.chars().collect();
    if chars.len() <= HEAD + TAIL + 20 {
        return message.to_owned();
    }
    let head: String = chars[..HEAD].iter().collect();
    let tail: String = chars[chars.len() - TAIL..].iter().collect();
    format!(
        "{head}[... {} characters ...]{tail}",
        chars.len() - HEAD - TAIL
    )
}

/// Deserialises checked arguments into the tool's parameter type.
/// Drops object members whose value is `null`, at any depth. Schemas publish
/// an optional argument as one that is not required, never as nullable, but
/// many clients send `null` for an optional argument they leave out: it is
/// taken as absent rather than refused.
pub(crate) fn nulls_as_absent(value: Value) -> Value {
    match value {
        Value::Object(members) => Value::Object(
            members
                .into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, nulls_as_absent(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(nulls_as_absent).collect()),
        other => other,
    }
}

pub(crate) fn parse<T: DeserializeOwned>(tool: &str, arguments: Value) -> ToolResult<T> {
    serde_json::from_value(arguments)
        .map_err(|e| ToolError::Refused(format!("invalid arguments for {tool}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn null_arguments_count_as_absent() {
        let validators = Validators::new();
        let sent = json!({"pane": "%1", "max_tokens": null,
            "steps": [{"op": "capture_pane", "pane": "%1", "scrollback": null}]});
        let taken = nulls_as_absent(sent);
        assert_eq!(
            taken,
            json!({"pane": "%1", "steps": [{"op": "capture_pane", "pane": "%1"}]})
        );
        assert!(
            validators
                .check(
                    "capture_pane",
                    &nulls_as_absent(json!({"pane": "%1", "max_tokens": null}))
                )
                .is_ok()
        );
        assert!(
            validators
                .check("capture_pane", &json!({"pane": "%1", "max_tokens": null}))
                .is_err()
        );
    }

    #[test]
    fn missing_required_field_is_named() {
        let validators = Validators::new();
        let err = validators
            .check("send_keys", &json!({"text": "x"}))
            .unwrap_err();
        assert!(err.contains("pane"), "{err}");
    }

    #[test]
    fn wrong_type_is_reported() {
        let validators = Validators::new();
        let err = validators
            .check("send_keys", &json!({"pane": 3}))
            .unwrap_err();
        assert!(err.contains("pane"), "{err}");
    }

    #[test]
    fn oversized_text_is_refused() {
        let validators = Validators::new();
        let text = "x".repeat(crate::tools::input::MAX_TEXT + 1);
        let err = validators
            .check("send_keys", &json!({"pane": "%1", "text": text}))
            .unwrap_err();
        assert!(err.contains("text"), "{err}");
        assert!(
            err.len() < 400,
            "the message does not quote the whole text: {}",
            err.len()
        );
        assert!(err.contains("65536"), "the message keeps the limit: {err}");
        let fits = "é".repeat(crate::tools::input::MAX_TEXT);
        validators
            .check("send_keys", &json!({"pane": "%1", "text": fits}))
            .expect("the bound counts characters, as JSON Schema does");
    }

    #[test]
    fn unknown_fields_are_refused() {
        let validators = Validators::new();
        assert!(
            validators
                .check("list_sessions", &json!({"bogus": 1}))
                .is_err()
        );
        assert!(validators.check("list_sessions", &json!({})).is_ok());
    }

    #[test]
    fn run_batch_steps_keep_their_tools_bounds() {
        let validators = Validators::new();
        let low = json!({"steps": [
            {"op": "send_keys", "pane": "%1", "text": "ls"},
            {"op": "capture_pane", "pane": "%1", "max_tokens": 5}
        ]});
        let err = validators.check("run_batch", &low).unwrap_err();
        assert!(err.contains("steps.1.max_tokens"), "{err}");
        let missing = json!({"steps": [{"op": "wait_for_text", "pane": "%1"}]});
        let err = validators.check("run_batch", &missing).unwrap_err();
        assert!(err.contains("steps.0") && err.contains("pattern"), "{err}");
        let long =
            json!({"steps": [{"op": "run_command", "pane": "%1", "command": "x".repeat(16385)}]});
        assert!(validators.check("run_batch", &long).is_err());
    }

    #[test]
    fn run_batch_steps_are_tagged_by_op() {
        let validators = Validators::new();
        let good = json!({"steps": [
            {"op": "send_keys", "pane": "%1", "text": "ls"},
            {"op": "wait_for_text", "pane": "%1", "pattern": "x", "since": "$prev"},
            {"op": "capture_pane", "pane": "%1"}
        ]});
        validators.check("run_batch", &good).unwrap();
        let wrong_field = json!({"steps": [{"op": "capture_pane", "pane": "%1", "text": "ls"}]});
        assert!(validators.check("run_batch", &wrong_field).is_err());
        let unknown_op = json!({"steps": [{"op": "launch_missiles", "pane": "%1"}]});
        assert!(validators.check("run_batch", &unknown_op).is_err());
        let too_many = json!({"operations": vec![json!({"pane": "%1", "text": "x"}); 101]});
        assert!(validators.check("send_keys_batch", &too_many).is_err());
        let none = json!({"operations": []});
        assert!(validators.check("send_keys_batch", &none).is_err());
    }

    #[test]
    fn run_batch_schema_keeps_the_op_consts() {
        let spec = crate::catalog::find("run_batch").unwrap();
        let schema = serde_json::to_string(&spec.tool().input_schema).unwrap();
        for op in [
            "send_keys",
            "paste_text",
            "wait_for_text",
            "wait_for_idle",
            "capture_pane",
            "capture_since",
            "run_command",
        ] {
            assert!(schema.contains(&format!("\"{op}\"")), "{op} in {schema}");
        }
    }

    #[test]
    fn scrollback_takes_a_number_or_all() {
        let validators = Validators::new();
        for ok in [json!(0), json!(500), json!("all")] {
            validators
                .check("capture_pane", &json!({"pane": "%1", "scrollback": ok}))
                .unwrap();
        }
        for bad in [json!(-1), json!("most"), json!(1.5)] {
            assert!(
                validators
                    .check("capture_pane", &json!({"pane": "%1", "scrollback": bad}))
                    .is_err()
            );
        }
    }
}
