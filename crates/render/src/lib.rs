//! termpilot-render (under construction).
