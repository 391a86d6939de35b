//! termpilot-mcp (under construction).
