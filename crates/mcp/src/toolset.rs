//! Toolsets: groups of tools a server operator turns on or off.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

/// A group of tools with the same kind of effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Toolset {
    /// Tools that only look: listing, capturing.
    ReadOnly,
    /// Tools that type into panes.
    Input,
    /// Tools that create sessions, windows and panes.
    Lifecycle,
    /// Tools that kill sessions, windows and panes. Off by default.
    Destructive,
}

impl Toolset {
    /// Every toolset, in a stable order.
    pub const ALL: [Toolset; 4] = [
        Toolset::ReadOnly,
        Toolset::Input,
        Toolset::Lifecycle,
        Toolset::Destructive,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Toolset::ReadOnly => "read-only",
            Toolset::Input => "input",
            Toolset::Lifecycle => "lifecycle",
            Toolset::Destructive => "destructive",
        }
    }
}

impl fmt::Display for Toolset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A toolset name that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown toolset '{0}'; the toolsets are read-only, input, lifecycle, destructive (or all)"
)]
pub struct UnknownToolset(pub String);

impl FromStr for Toolset {
    type Err = UnknownToolset;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Toolset::ALL
            .into_iter()
            .find(|set| set.name() == name.trim())
            .ok_or_else(|| UnknownToolset(name.to_owned()))
    }
}

/// The toolsets a server exposes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolsets(BTreeSet<Toolset>);

impl Default for Toolsets {
    /// Everything but the destructive tools.
    fn default() -> Self {
        Toolsets([Toolset::ReadOnly, Toolset::Input, Toolset::Lifecycle].into())
    }
}

impl Toolsets {
    /// Parses a comma-separated list such as `read-only,input` or `all`.
    /// An unknown name is an error, so a typo cannot silently disable tools.
    pub fn parse(list: &str) -> Result<Toolsets, UnknownToolset> {
        let mut sets = BTreeSet::new();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if name == "all" {
                sets.extend(Toolset::ALL);
            } else {
                sets.insert(name.parse()?);
            }
        }
        if sets.is_empty() {
            return Err(UnknownToolset(list.to_owned()));
        }
        Ok(Toolsets(sets))
    }

    /// Whether `set` is enabled.
    pub fn contains(&self, set: Toolset) -> bool {
        self.0.contains(&set)
    }

    /// The tools a server with these toolsets publishes, as `tools/list`
    /// returns them.
    pub fn tools(&self) -> Vec<rmcp::model::Tool> {
        crate::catalog::enabled(self)
            .into_iter()
            .map(crate::catalog::Spec::tool)
            .collect()
    }
}

impl fmt::Display for Toolsets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.0.iter().map(|set| set.name()).collect();
        f.write_str(&names.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_leaves_destructive_off() {
        let sets = Toolsets::default();
        assert!(sets.contains(Toolset::Input));
        assert!(!sets.contains(Toolset::Destructive));
    }

    #[test]
    fn parses_lists_and_all() {
        let sets = Toolsets::parse("read-only, destructive").unwrap();
        assert!(sets.contains(Toolset::Destructive));
        assert!(!sets.contains(Toolset::Input));
        assert_eq!(
            Toolsets::parse("all").unwrap().to_string(),
            "read-only,input,lifecycle,destructive"
        );
    }

    #[test]
    fn unknown_names_fail() {
        let err = Toolsets::parse("read-only,destructve").unwrap_err();
        assert!(err.to_string().contains("destructve"));
        assert!(Toolsets::parse("").is_err());
    }
}
