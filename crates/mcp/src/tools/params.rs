//! Arguments many tools share, declared once: [`tool_params!`] declares a
//! tool's argument struct in which `..NAME` stands for a shared argument
//! (its name, type, bounds and the description its schema publishes), and
//! [`pane_params!`] one whose first argument is the pane it works on.
//!
//! Macros and not shared structs flattened into each: serde's `flatten`
//! cannot refuse unknown fields, and every tool's arguments do.
//!
//! The shared arguments:
//!
//! - `..pane`: the pane a tool works on, an id (`%3`) or a target.
//! - `..host`: the host a tool works on when no target names it.
//! - `..timeout_s`: how long a wait may last (default 30 s, capped by the
//!   server's ceiling: `TermpilotServer::wait_time`).
//! - `..input_settle_ms`: how long a program must stay quiet before a
//!   wait reports it awaiting input (`crate::awaiting::settle`).
//! - `..max_tokens(N)`: the token budget of the text returned, `N` when
//!   not given.
//! - `..program`: what a new pane runs and where (`command`, `cwd`, `env`).

/// Declares a tool's argument struct from its fields, each either written
/// out (`/// doc`, attributes, `pub name: Type`) or a shared argument
/// written `..NAME` (see the module's list); unknown fields are refused.
/// Further derives may be given as attributes.
macro_rules! tool_params {
    (@fields $head:tt [$($fields:tt)*] ..pane $(, $($rest:tt)*)?) => {
        $crate::tools::params::tool_params! { @fields $head [$($fields)*
            /// Pane id (%3) or target.
            #[schemars(length(min = 1, max = 256))]
            pub pane: String,
        ] $($($rest)*)? }
    };
    (@fields $head:tt [$($fields:tt)*] ..host $(, $($rest:tt)*)?) => {
        $crate::tools::params::tool_params! { @fields $head [$($fields)*
            /// Host (default local).
            #[schemars(length(min = 1, max = 64))]
            pub host: Option<String>,
        ] $($($rest)*)? }
    };
    (@fields $head:tt [$($fields:tt)*] ..timeout_s $(, $($rest:tt)*)?) => {
        $crate::tools::params::tool_params! { @fields $head [$($fields)*
            /// Default 30.
            #[schemars(range(min = 0.001, max = 86400.0))]
            pub timeout_s: Option<f64>,
        ] $($($rest)*)? }
    };
    (@fields $head:tt [$($fields:tt)*] ..input_settle_ms $(, $($rest:tt)*)?) => {
        $crate::tools::params::tool_params! { @fields $head [$($fields)*
            /// Quiet ms before awaiting_input (default 300).
            #[schemars(range(min = 0, max = 600000))]
            pub input_settle_ms: Option<u64>,
        ] $($($rest)*)? }
    };
    (@fields $head:tt [$($fields:tt)*] ..max_tokens($default:literal) $(, $($rest:tt)*)?) => {
        $crate::tools::params::tool_params! { @fields $head [$($fields)*
            #[doc = concat!("Default ", $default, ".")]
            #[schemars(range(min = 100, max = 100000))]
            pub max_tokens: Option<u32>,
        ] $($($rest)*)? }
    };
    (@fields $head:tt [$($fields:tt)*] ..program $(, $($rest:tt)*)?) => {
        $crate::tools::params::tool_params! { @fields $head [$($fields)*
            /// Run this instead of a shell; the pane closes when it exits.
            #[schemars(length(min = 1, max = 16384))]
            pub command: Option<String>,
            /// Working directory (absolute).
            #[schemars(length(min = 1, max = 4096))]
            pub cwd: Option<String>,
            /// Environment variables.
            pub env: Option<std::collections::BTreeMap<String, String>>,
        ] $($($rest)*)? }
    };
    (
        @fields $head:tt [$($fields:tt)*]
        $(#[$field_meta:meta])* pub $field:ident : $ty:ty $(, $($rest:tt)*)?
    ) => {
        $crate::tools::params::tool_params! { @fields $head [$($fields)*
            $(#[$field_meta])* pub $field: $ty,
        ] $($($rest)*)? }
    };
    (@fields [$(#[$meta:meta])* pub struct $name:ident] [$($fields:tt)*]) => {
        $(#[$meta])*
        #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($fields)*
        }
    };
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $($body:tt)*
        }
    ) => {
        $crate::tools::params::tool_params! {
            @fields [$(#[$meta])* pub struct $name] [] $($body)*
        }
    };
}

/// Declares a tool's argument struct as [`tool_params!`] does, whose first
/// field is `pane` (a pane id or target, as every tool takes it).
///
/// Given a second struct as `pub struct Call with { field }` after the
/// first (`Params`), it declares both: the tool's arguments (`Call`:
/// `Params`'s fields and one more, such as a wait after typing) and the same
/// without that field (`Params`, as a batch step takes them), with
/// `Call::split` parting them. Their fields are written out.
macro_rules! pane_params {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $($body:tt)*
        }
    ) => {
        $crate::tools::params::tool_params! {
            $(#[$meta])*
            pub struct $name {
                ..pane,
                $($body)*
            }
        }
    };
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $($(#[$field_meta:meta])* pub $field:ident : $ty:ty),* $(,)?
        }
        $(#[$call_meta:meta])*
        pub struct $call:ident with {
            $(#[$extra_meta:meta])* pub $extra:ident : $extra_ty:ty $(,)?
        }
    ) => {
        $crate::tools::params::pane_params! {
            $(#[$meta])*
            pub struct $name {
                $($(#[$field_meta])* pub $field: $ty,)*
            }
        }

        $crate::tools::params::pane_params! {
            $(#[$call_meta])*
            pub struct $call {
                $($(#[$field_meta])* pub $field: $ty,)*
                $(#[$extra_meta])* pub $extra: $extra_ty,
            }
        }

        impl $call {
            #[doc = concat!("The arguments as [`", stringify!($name), "`], and `",
                stringify!($extra), "`.")]
            pub(crate) fn split(self) -> ($name, $extra_ty) {
                let $call { pane, $($field,)* $extra } = self;
                ($name { pane, $($field),* }, $extra)
            }
        }
    };
}

pub(crate) use {pane_params, tool_params};

#[cfg(test)]
mod tests {
    use serde_json::json;

    tool_params! {
        /// Arguments of a tool that waits on a pane.
        pub struct Waits {
            ..pane,
            /// Words to wait for.
            pub words: Option<String>,
            ..timeout_s,
            ..max_tokens(400),
        }
    }

    #[test]
    fn shared_arguments_come_with_their_bounds_and_unknown_ones_are_refused() {
        let given = json!({"pane": "%1", "timeout_s": 2.5, "max_tokens": 500});
        let read: Waits = serde_json::from_value(given).unwrap();
        assert_eq!(
            (
                read.pane.as_str(),
                read.words,
                read.timeout_s,
                read.max_tokens
            ),
            ("%1", None, Some(2.5), Some(500))
        );
        let unknown = serde_json::from_value::<Waits>(json!({"pane": "%1", "timeout": 2}));
        let unknown = unknown.unwrap_err().to_string();
        assert!(unknown.contains("unknown field `timeout`"), "{unknown}");
        let schema = crate::schema::input::<Waits>();
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["required"], json!(["pane"]));
        let properties = &schema["properties"];
        assert_eq!(properties["max_tokens"]["description"], "Default 400.");
        assert_eq!(properties["max_tokens"]["minimum"], 100);
        assert_eq!(properties["timeout_s"]["maximum"], 86400.0);
        assert_eq!(properties["pane"]["maxLength"], 256);
    }
}
