//! termpilot-tmux (under construction).
