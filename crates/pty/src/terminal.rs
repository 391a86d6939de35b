//! The user's side of a session: where input comes from and where output goes.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::event::{PollFd, PollFlags, poll};
use rustix::io::Errno;
use rustix::termios::{Winsize, isatty, tcgetwinsize};

/// The user's terminal (or whatever stands in for it: pipes, files).
///
/// Holds its own duplicates of the descriptors, so the session never closes the
/// process's standard streams.
#[derive(Debug)]
pub struct Terminal {
    input: OwnedFd,
    output: OwnedFd,
}

/// The size used when neither side of the terminal is a terminal.
const FALLBACK_SIZE: Winsize = Winsize {
    ws_row: 24,
    ws_col: 80,
    ws_xpixel: 0,
    ws_ypixel: 0,
};

impl Terminal {
    /// The process's standard input and output.
    pub fn stdio() -> io::Result<Terminal> {
        Ok(Terminal {
            input: io::stdin().as_fd().try_clone_to_owned()?,
            output: io::stdout().as_fd().try_clone_to_owned()?,
        })
    }

    /// Any pair of descriptors, e.g. the slave side of a PTY the embedder opened.
    pub fn from_fds(input: OwnedFd, output: OwnedFd) -> Terminal {
        Terminal { input, output }
    }

    /// Whether input comes from a terminal (and so is switched to raw mode).
    pub fn input_is_terminal(&self) -> bool {
        isatty(&self.input)
    }

    /// The terminal's size: from the input side, else the output side, else 24x80.
    pub fn size(&self) -> Winsize {
        tcgetwinsize(&self.input)
            .or_else(|_| tcgetwinsize(&self.output))
            .unwrap_or(FALLBACK_SIZE)
    }

    pub(crate) fn input(&self) -> BorrowedFd<'_> {
        self.input.as_fd()
    }

    /// Writes all of `bytes` to the output, waiting while a non-blocking output is full.
    pub(crate) fn write_output(&self, bytes: &[u8]) -> io::Result<()> {
        write_all(self.output.as_fd(), bytes)
    }
}

/// Writes all of `bytes`, retrying after signals and waiting out `EAGAIN` (the
/// descriptor may be shared with a parent that made it non-blocking).
fn write_all(fd: BorrowedFd<'_>, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        match rustix::io::write(fd, bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(written) => bytes = &bytes[written..],
            Err(Errno::INTR) => {}
            Err(Errno::AGAIN) => wait_writable(fd)?,
            Err(errno) => return Err(errno.into()),
        }
    }
    Ok(())
}

/// Waits until `fd` accepts output (or a signal interrupts the wait).
fn wait_writable(fd: BorrowedFd<'_>) -> io::Result<()> {
    let mut fds = [PollFd::from_borrowed_fd(fd, PollFlags::OUT)];
    match poll(&mut fds, None) {
        Ok(_) | Err(Errno::INTR) => Ok(()),
        Err(errno) => Err(errno.into()),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::os::unix::net::UnixStream;

    use super::*;

    #[test]
    fn pipes_are_not_terminals_and_get_the_fallback_size() {
        let (a, b) = UnixStream::pair().unwrap();
        let terminal = Terminal::from_fds(a.into(), b.into());
        assert!(!terminal.input_is_terminal());
        assert_eq!((terminal.size().ws_row, terminal.size().ws_col), (24, 80));
    }

    #[test]
    fn write_output_writes_everything() {
        let (a, mut b) = UnixStream::pair().unwrap();
        let terminal = Terminal::from_fds(a.try_clone().unwrap().into(), a.into());
        terminal.write_output(b"hello").unwrap();
        let mut read = [0; 5];
        b.read_exact(&mut read).unwrap();
        assert_eq!(&read, b"hello");
    }
}
