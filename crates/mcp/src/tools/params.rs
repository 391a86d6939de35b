//! Arguments many tools share, declared once: [`pane_params!`] declares a
//! tool's arguments that start with the pane it works on.
//!
//! A macro and not a shared struct flattened into each: serde's `flatten`
//! cannot refuse unknown fields, and every tool's arguments do.

/// Declares a tool's argument struct whose first field is `pane` (a pane id
/// or target, as every tool takes it), then the fields given; unknown fields
/// are refused. Further derives may be given as attributes.
///
/// Given a second struct as `pub struct Call with { field }` after the
/// first (`Params`), it declares both: the tool's arguments (`Call`:
/// `Params`'s fields and one more, such as a wait after typing) and the same
/// without that field (`Params`, as a batch step takes them), with
/// `Call::split` parting them.
macro_rules! pane_params {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $($body:tt)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            /// Pane id (%3) or target.
            #[schemars(length(min = 1, max = 256))]
            pub pane: String,
            $($body)*
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

pub(crate) use pane_params;
