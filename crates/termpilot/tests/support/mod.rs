//! What the binary's tests share.

use std::path::PathBuf;

/// Where tmux puts the socket named `name`: `$TMUX_TMPDIR/tmux-UID/name`.
/// tmux leaves the file behind when its server ends, so tests remove it.
pub fn socket_path(name: &str) -> PathBuf {
    use std::os::unix::fs::MetadataExt;
    let dir = std::env::var_os("TMUX_TMPDIR").unwrap_or_else(|| "/tmp".into());
    let uid = std::fs::metadata("/proc/self").map_or(0, |m| m.uid());
    PathBuf::from(dir).join(format!("tmux-{uid}")).join(name)
}
