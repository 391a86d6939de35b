//! termpilot-keys (under construction).
