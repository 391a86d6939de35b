//! termpilot-control (under construction).
