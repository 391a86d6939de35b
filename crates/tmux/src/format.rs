//! Reading tmux format output: one record a line, fields separated by the
//! unit separator (0x1f), which tmux never leaves raw in names it stores.

use crate::error::{Error, Result};

/// The field separator used in every `-F` format termpilot sends.
pub(crate) const SEP: char = '\x1f';

/// Joins format fields with [`SEP`].
pub(crate) fn fields(names: &[&str]) -> String {
    names
        .iter()
        .map(|name| format!("#{{{name}}}"))
        .collect::<Vec<_>>()
        .join(&SEP.to_string())
}

/// One line of format output, split into fields.
pub(crate) struct Record<'a> {
    command: &'static str,
    fields: Vec<&'a str>,
}

impl<'a> Record<'a> {
    pub(crate) fn new(command: &'static str, line: &'a str) -> Self {
        Record {
            command,
            fields: line.split(SEP).collect(),
        }
    }

    pub(crate) fn str(&self, index: usize) -> &'a str {
        self.fields.get(index).copied().unwrap_or_default()
    }

    pub(crate) fn parse<T: std::str::FromStr>(&self, index: usize) -> Result<T> {
        self.str(index).trim().parse().map_err(|_| Error::Protocol {
            command: self.command.to_owned(),
            detail: format!("field {index} is {:?}", self.str(index)),
        })
    }

    pub(crate) fn flag(&self, index: usize) -> bool {
        self.str(index).trim() == "1"
    }
}
