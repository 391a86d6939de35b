//! termpilot-journal (under construction).
