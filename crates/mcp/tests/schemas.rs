//! The published tool list: every schema stays in the portable subset of JSON
//! Schema that every MCP client reads alike (LangChain adapters, the Inspector,
//! ajv in the TypeScript SDK, pydantic in the Python SDK), and the default
//! list stays cheap for an agent's context.

use std::sync::OnceLock;

use serde_json::Value;
use termpilot_mcp::Toolsets;
use tiktoken_rs::CoreBPE;

/// `format` values JSON Schema 2020-12 defines.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Walks a schema and its subschemas, noting each portability problem with
/// its JSON pointer.
fn walk(schema: &Value, at: &str, input: bool, problems: &mut Vec<String>) {
    let Value::Object(object) = schema else {
        return;
    };
    if let Some(Value::Array(types)) = object.get("type") {
        problems.push(format!("{at}: type array {types:?}"));
    }
    if input {
        for key in ["$ref", "$defs", "definitions", "$schema"] {
            if object.contains_key(key) {
                problems.push(format!("{at}: {key}"));
            }
        }
    }
    let is_object = object.get("type") == Some(&Value::from("object"));
    if is_object && !matches!(object.get("properties"), Some(Value::Object(_))) {
        problems.push(format!("{at}: object schema without properties"));
    }
    if let Some(format) = object.get("format") {
        let standard = format
            .as_str()
            .is_some_and(|f| STANDARD_FORMATS.contains(&f));
        if !standard {
            problems.push(format!("{at}: non-standard format {format}"));
        }
    }
    if object
        .keys()
        .all(|key| key == "description" || key == "title")
    {
        problems.push(format!("{at}: accepts anything (no type)"));
    }
    for key in ["properties", "$defs", "definitions"] {
        if let Some(Value::Object(children)) = object.get(key) {
            for (name, child) in children {
                walk(child, &format!("{at}/{key}/{name}"), input, problems);
            }
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(child) = object.get(key) {
            walk(child, &format!("{at}/{key}"), input, problems);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(children)) = object.get(key) {
            for (i, child) in children.iter().enumerate() {
                walk(child, &format!("{at}/{key}/{i}"), input, problems);
            }
        }
    }
}

fn all_tools() -> Vec<rmcp::model::Tool> {
    Toolsets::parse("all")
        .expect("all is a toolset list")
        .tools()
}

#[test]
fn every_schema_is_portable() {
    let tools = all_tools();
    assert_eq!(tools.len(), 23, "every tool is walked");
    let mut problems = Vec::new();
    for tool in &tools {
        let input = Value::Object(tool.input_schema.as_ref().clone());
        walk(&input, &format!("{} input", tool.name), true, &mut problems);
        let output = tool
            .output_schema
            .as_ref()
            .unwrap_or_else(|| panic!("{} has an output schema", tool.name));
        let output = Value::Object(output.as_ref().clone());
        walk(
            &output,
            &format!("{} output", tool.name),
            false,
            &mut problems,
        );
        assert!(
            output.get("$ref").is_none(),
            "{}: the output root is inline",
            tool.name
        );
    }
    assert!(
        problems.is_empty(),
        "{} portability problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// Every integer argument publishes its bounds, since the formats that used
/// to hint at them (`uint32`, ...) are gone.
#[test]
fn every_integer_argument_is_bounded() {
    fn check(schema: &Value, at: &str, unbounded: &mut Vec<String>) {
        let Value::Object(object) = schema else {
            return;
        };
        if object.get("type") == Some(&Value::from("integer"))
            && !(object.contains_key("minimum") && object.contains_key("maximum"))
        {
            unbounded.push(at.to_owned());
        }
        for (key, child) in object {
            match child {
                Value::Object(map) if key == "properties" => {
                    for (name, grandchild) in map {
                        check(grandchild, &format!("{at}/{name}"), unbounded);
                    }
                }
                Value::Object(_) => check(child, &format!("{at}/{key}"), unbounded),
                Value::Array(list) => {
                    for (i, item) in list.iter().enumerate() {
                        check(item, &format!("{at}/{key}/{i}"), unbounded);
                    }
                }
                _ => {}
            }
        }
    }
    let mut unbounded = Vec::new();
    for tool in all_tools() {
        let input = Value::Object(tool.input_schema.as_ref().clone());
        check(&input, tool.name.as_ref(), &mut unbounded);
    }
    assert!(unbounded.is_empty(), "unbounded integers: {unbounded:?}");
}

/// The shapes clients rely on: an optional argument is not required and has
/// one type; `pattern` takes a string or a list; a nullable result field is
/// present and may be null.
#[test]
fn optional_arguments_and_nullable_results_have_plain_shapes() {
    let tools = all_tools();
    let find = |name: &str| {
        tools
            .iter()
            .find(|tool| tool.name == name)
            .unwrap_or_else(|| panic!("{name} is published"))
    };
    let create = Value::Object(find("create_session").input_schema.as_ref().clone());
    assert_eq!(
        create["properties"]["height"]["type"], "integer",
        "{create}"
    );
    assert_eq!(create["properties"]["height"]["minimum"], 5);
    assert_eq!(create["properties"]["height"]["maximum"], 500);
    let required = create.get("required").cloned().unwrap_or(Value::Null);
    assert!(
        !required.to_string().contains("height"),
        "{required}: height is optional"
    );

    let wait = Value::Object(find("wait_for_text").input_schema.as_ref().clone());
    let pattern = &wait["properties"]["pattern"]["anyOf"];
    let kinds: Vec<&Value> = pattern
        .as_array()
        .expect("pattern is anyOf")
        .iter()
        .map(|branch| &branch["type"])
        .collect();
    assert_eq!(kinds, ["string", "array"], "{wait}");
    let stop = &wait["properties"]["stop"]["anyOf"];
    assert_eq!(stop.as_array().map(Vec::len), Some(2), "{wait}");

    let sessions = Value::Object(find("list_sessions").input_schema.as_ref().clone());
    assert_eq!(sessions["type"], "object");
    // Its one argument, `host`, is an optional plain string.
    let properties = sessions["properties"].as_object().expect("properties");
    assert_eq!(
        properties.keys().collect::<Vec<_>>(),
        ["host"],
        "{sessions}"
    );
    assert_eq!(sessions["properties"]["host"]["type"], "string");
    assert!(
        sessions
            .get("required")
            .is_none_or(|r| r.as_array().is_some_and(Vec::is_empty))
    );

    let run = find("run_command").output_schema.clone().expect("output");
    let exit = &run["properties"]["exit_code"];
    assert_eq!(
        exit["anyOf"][1],
        serde_json::json!({"type": "null"}),
        "{exit}"
    );
    assert_eq!(exit["anyOf"][0]["type"], "integer", "{exit}");
    assert!(
        run["required"].to_string().contains("exit_code"),
        "a null exit code is still written"
    );
}

/// The most tokens the default tool list may cost.
const DEFAULT_LIST_BUDGET: usize = 6_000;

/// Tokens of `text` for `o200k_base` (bundled in `tiktoken-rs`; no network).
fn o200k_tokens(text: &str) -> usize {
    static LOADED: OnceLock<CoreBPE> = OnceLock::new();
    let bpe = LOADED.get_or_init(|| tiktoken_rs::o200k_base().expect("o200k_base is bundled"));
    bpe.encode_with_special_tokens(text).len()
}

/// JSON as Python's `json.dumps` writes it by default: a space after each
/// `,` and `:`.
struct Spaced;

impl serde_json::ser::Formatter for Spaced {
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
    ) -> std::io::Result<()> {
        writer.write_all(b": ")
    }
}

/// The ways a client may write a schema out: compact, spaced, indented.
fn serialisations(schema: &Value) -> [String; 3] {
    let mut spaced = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut spaced, Spaced);
    serde::Serialize::serialize(schema, &mut serializer).expect("a schema serialises");
    [
        serde_json::to_string(schema).expect("a schema serialises"),
        String::from_utf8(spaced).expect("JSON is UTF-8"),
        serde_json::to_string_pretty(schema).expect("a schema serialises"),
    ]
}

/// What the default tool list costs an agent before it does anything: each
/// tool's name, description and input schema, for each way of writing the
/// schema.
fn default_list_costs() -> [usize; 3] {
    let mut totals = [0; 3];
    for tool in Toolsets::default().tools() {
        let words =
            o200k_tokens(&tool.name) + o200k_tokens(tool.description.as_deref().unwrap_or(""));
        let schema = Value::Object(tool.input_schema.as_ref().clone());
        for (total, json) in totals.iter_mut().zip(serialisations(&schema)) {
            *total += words + o200k_tokens(&json);
        }
    }
    totals
}

#[test]
fn the_default_tool_list_fits_its_token_budget() {
    let [compact, spaced, pretty] = default_list_costs();
    eprintln!("default tool list (o200k): {compact} compact, {spaced} spaced, {pretty} indented");
    for (cost, how) in [
        (compact, "compact"),
        (spaced, "spaced"),
        (pretty, "indented"),
    ] {
        assert!(
            cost <= DEFAULT_LIST_BUDGET,
            "the default tool list costs {cost} tokens ({how} JSON), over {DEFAULT_LIST_BUDGET}"
        );
    }
}
