//! Tool schemas in the portable subset of JSON Schema every client reads
//! alike, made from the Rust types of each tool's arguments and result.

use std::sync::Arc;

use rmcp::model::JsonObject;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The published schema of a tool's arguments.
pub(crate) fn input<T: JsonSchema>() -> Arc<JsonObject> {
    schema_for::<T>(Side::Input)
}

/// The published schema of a tool's result.
pub(crate) fn output<T: JsonSchema>() -> Arc<JsonObject> {
    schema_for::<T>(Side::Output)
}
/// Which way a schema describes data: what a tool accepts, or what it returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Input,
    Output,
}

/// A type's schema in the portable subset every client reads alike: JSON Schema
/// 2020-12 without `$schema`, `$ref` or `$defs`, without `type` arrays, with only
/// standard `format`s, and with `properties` on every object schema.
fn schema_for<T: JsonSchema>(side: Side) -> Arc<JsonObject> {
    let mut settings = match side {
        Side::Input => SchemaSettings::draft2020_12(),
        Side::Output => SchemaSettings::draft2020_12().for_serialize(),
    };
    settings.inline_subschemas = true;
    settings.meta_schema = None;
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut value = serde_json::to_value(schema).expect("a schema serialises");
    let Value::Object(root) = &mut value else {
        panic!(
            "the schema of {} is not an object",
            std::any::type_name::<T>()
        );
    };
    // The tool's description says what the arguments and the result are for.
    root.remove("title");
    root.remove("description");
    portable(&mut value, side);
    let Value::Object(root) = value else {
        unreachable!("still an object")
    };
    Arc::new(root)
}

/// The `format` values JSON Schema 2020-12 defines; schemars adds others
/// (`uint32`, `int64`, ...) that validators warn about.
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

/// Rewrites a schema and its subschemas into the portable subset.
///
/// A nullable type (`["integer", "null"]`, or `anyOf` with a `null` branch)
/// becomes, in an input, the plain type: an optional argument is one that is
/// not required, never one that may be null. In an output, where absent
/// values are written as null, it becomes `anyOf: [{type: X}, {type: null}]`.
fn portable(schema: &mut Value, side: Side) {
    let Value::Object(object) = schema else {
        return;
    };
    for key in ["properties", "$defs"] {
        if let Some(Value::Object(children)) = object.get_mut(key) {
            children
                .values_mut()
                .for_each(|child| portable(child, side));
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(child) = object.get_mut(key) {
            portable(child, side);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(children)) = object.get_mut(key) {
            children.iter_mut().for_each(|child| portable(child, side));
        }
    }
    drop_null_branch(object, side);
    split_type_array(object, side);
    consts_to_enum(object);
    if side == Side::Input {
        terse_parts(object);
    }
    if let Some(Value::String(format)) = object.get("format")
        && !STANDARD_FORMATS.contains(&format.as_str())
    {
        if format.starts_with('u') && !object.contains_key("minimum") {
            object.insert("minimum".into(), 0.into());
        }
        object.remove("format");
    }
    if object.get("type") == Some(&Value::from("object")) && !object.contains_key("properties") {
        object.insert("properties".into(), Value::Object(Map::new()));
    }
}

/// Turns a `oneOf` of string constants (what schemars makes of an enum whose
/// variants have doc comments) into a plain `enum`.
fn consts_to_enum(object: &mut JsonObject) {
    let Some(Value::Array(branches)) = object.get("oneOf") else {
        return;
    };
    let plain = |branch: &Value| {
        branch.get("const").is_some_and(Value::is_string)
            && branch.as_object().is_some_and(|b| {
                b.keys()
                    .all(|k| matches!(k.as_str(), "const" | "type" | "description"))
            })
    };
    if !branches.iter().all(plain) {
        return;
    }
    let values: Vec<Value> = branches.iter().map(|b| b["const"].clone()).collect();
    object.remove("oneOf");
    object.insert("type".into(), "string".into());
    object.insert("enum".into(), Value::Array(values));
}

/// Drops, from an input schema, the descriptions of the parts of an argument
/// (an array's items, the branches of an `anyOf`): the argument's own
/// description covers them, and an agent reads every word of the tool list.
/// Batch steps are the arguments of single tools, described there.
fn terse_parts(object: &mut JsonObject) {
    if let Some(items) = object.get_mut("items") {
        drop_descriptions(items);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = object.get_mut(key) {
            branches.iter_mut().for_each(drop_descriptions);
        }
    }
}

/// Removes every `description` in a schema and its subschemas.
fn drop_descriptions(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            if object.get("description").is_some_and(Value::is_string) {
                object.remove("description");
            }
            object.values_mut().for_each(drop_descriptions);
        }
        Value::Array(list) => list.iter_mut().for_each(drop_descriptions),
        _ => {}
    }
}

fn is_null_type(schema: &Value) -> bool {
    schema.get("type") == Some(&Value::from("null"))
}

/// In an input, removes the `null` branch of an `anyOf`/`oneOf`, and merges a
/// lone remaining branch into the schema.
fn drop_null_branch(object: &mut JsonObject, side: Side) {
    if side != Side::Input {
        return;
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = object.get_mut(key) else {
            continue;
        };
        branches.retain(|branch| !is_null_type(branch));
        if branches.len() == 1 {
            let Some(Value::Object(only)) = branches.pop() else {
                continue;
            };
            object.remove(key);
            for (name, value) in only {
                // The outer schema's own words (its description) win.
                object.entry(name).or_insert(value);
            }
        }
    }
}

/// Replaces `type: [X, "null"]` as the module says.
fn split_type_array(object: &mut JsonObject, side: Side) {
    let Some(Value::Array(types)) = object.get("type") else {
        return;
    };
    let real: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
    let nullable = real.len() < types.len();
    let [only] = real.as_slice() else {
        panic!("a schema accepts several types: {types:?}; use anyOf");
    };
    let only = only.clone();
    if side == Side::Input || !nullable {
        object.insert("type".into(), only);
        return;
    }
    // The words about the value stay outside; what constrains it moves into
    // the non-null branch.
    let mut branch = Map::new();
    branch.insert("type".into(), only);
    let keys: Vec<String> = object.keys().cloned().collect();
    for key in keys {
        if !matches!(key.as_str(), "type" | "description" | "title" | "default") {
            let value = object.remove(&key).expect("listed");
            branch.insert(key, value);
        }
    }
    object.remove("type");
    let mut branch = Value::Object(branch);
    portable(&mut branch, side);
    let null = serde_json::json!({"type": "null"});
    object.insert("anyOf".into(), Value::Array(vec![branch, null]));
}
