//! Looking at a remote pane's processes ahead, with a command's keys.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use termpilot_control::{Command, PaneId};

use super::{Procfs, Snapshot, dump_script};
use crate::client::{Answer, GroupReplies};
use crate::connection::Group;
use crate::engine::Engine;

/// How long the job sent with a command's keys (see [`LookAhead`]) waits on
/// the host for the shell to be done with them, in hundredths of a second
/// (what `/proc/uptime` counts): it holds its client's other commands
/// meanwhile, so a command that runs longer is looked at the usual way.
const LOOK_AHEAD_WAIT: u32 = 10;

/// How long a look-ahead may take before it counts as never coming.
const LOOK_AHEAD_LIMIT: Duration = Duration::from_secs(4);

/// A look at a remote pane's processes asked for together with a command's
/// keys, so that its reply can come with the command's end marker instead
/// of one round trip after it.
///
/// Right after the keys, on the client that carries the pane's output, a
/// `run-shell` job waits on the host (at most [`LOOK_AHEAD_WAIT`]) until
/// the shell has read something and sleeps again in charge of the
/// terminal, or has slept so all along; then a `display-message` runs, and a
/// second job dumps the pane's processes. tmux runs the `display-message`
/// only once the first job has ended, and writes its reply at once, after
/// all output it read before; the dump starts after it. So the journal's
/// end when that reply arrives was reached before the dump began: an end
/// marker before it was printed before the dump was taken, and the dump is
/// as good as a look taken after that marker was seen
/// ([`LookAhead::after`]). (The first job's own reply cannot date anything:
/// tmux 3.3a writes it when the job starts.) The first job only guesses
/// when to end; the order of the replies, not the guess, decides what the
/// dump may tell.
#[derive(Debug)]
pub(crate) struct LookAhead {
    taken: tokio::sync::watch::Receiver<Arrival>,
    /// Set once a marker has asked for it: a second look must be new.
    used: AtomicBool,
}

/// Where a [`LookAhead`]'s replies are.
#[derive(Debug, Clone)]
enum Arrival {
    /// On their way.
    Pending,
    /// Some did not come, or a command failed: nothing was looked at.
    Lost,
    /// The journal's end before the dump was taken, and the dump.
    Taken {
        before_dump: u64,
        snapshot: Arc<Snapshot>,
    },
}

impl LookAhead {
    /// The look, for an end marker whose bytes end at `marker_end`: once it
    /// has arrived, when the marker came before the dump was taken. Only
    /// the first call gets it.
    pub(crate) async fn after(&self, marker_end: u64) -> Option<Arc<dyn Procfs>> {
        if self.used.swap(true, Ordering::Relaxed) {
            return None;
        }
        let mut taken = self.taken.clone();
        let arrival = taken
            .wait_for(|arrival| !matches!(arrival, Arrival::Pending))
            .await
            .ok()?
            .clone();
        match arrival {
            Arrival::Taken {
                before_dump,
                snapshot,
            } if marker_end <= before_dump => Some(snapshot),
            _ => None,
        }
    }
}

impl Engine {
    /// The commands that take a [`LookAhead`] at `pane` (first process
    /// `pid`, terminal `tty`) once its shell `shell` is done with the keys
    /// they follow; `None` for a local server, whose `/proc` is read at
    /// once, and where the host cannot run the jobs.
    pub(crate) fn look_ahead_line(
        &self,
        pane: PaneId,
        shell: u32,
        pid: u32,
        tty: &str,
    ) -> Option<Group> {
        let dumps = &self.shared.dumps;
        if self.panes_are_local() || dumps.through_transport.load(Ordering::Relaxed) {
            return None;
        }
        let wait = format!(
            "{{\n{}}} >/dev/null 2>&1; true",
            settle_script(shell).replace('#', "##")
        );
        // tmux writes a `run-shell`'s reply when it starts the job (3.3a)
        // or when the job ends: the reply that marks the journal's end is
        // that of a command that runs once the first job has ended.
        let settle = [
            (Command::new("run-shell").arg(wait), None),
            (
                Command::new("display-message").flag("-p").arg(""),
                Some(pane),
            ),
        ];
        let dump = dumps.read_back(&dump_script(pid, tty));
        crate::engine::group(settle.into_iter().chain(dump)).ok()
    }

    /// Waits, in a task of its own, for the replies of a
    /// [`Engine::look_ahead_line`] sent after keys on terminal `tty`.
    pub(crate) fn look_ahead(&self, replies: GroupReplies, tty: String) -> LookAhead {
        let (tell, taken) = tokio::sync::watch::channel(Arrival::Pending);
        tokio::spawn(async move {
            let answers = tokio::time::timeout(LOOK_AHEAD_LIMIT, replies.answers()).await;
            let arrival = match answers {
                Ok(Ok(answers)) => dump_after(answers, &tty),
                _ => Arrival::Lost,
            };
            let _ = tell.send(arrival);
        });
        LookAhead {
            taken,
            used: AtomicBool::new(false),
        }
    }
}

/// What the replies of a look-ahead's line brought: every command ran and
/// succeeded, or nothing.
fn dump_after(answers: Vec<Answer>, tty: &str) -> Arrival {
    let Ok([waited, marked, dumped, shown, _deleted]) = <[Answer; 5]>::try_from(answers) else {
        return Arrival::Lost;
    };
    match marked.cursor {
        Some(before_dump)
            if waited.reply.ok && marked.reply.ok && dumped.reply.ok && shown.reply.ok =>
        {
            Arrival::Taken {
                before_dump,
                snapshot: Arc::new(Snapshot::parse(&shown.reply.text(), tty)),
            }
        }
        _ => Arrival::Lost,
    }
}

/// The script of a look-ahead's first job: it looks at `shell` every few
/// milliseconds until the shell has read something since the job started
/// (its `rchar` moved) and sleeps in charge of its terminal (its own process
/// group in the foreground, no child), until it has been found so
/// [`QUIET_LOOKS`] times in a row without reading (it was done before the
/// job started, or the keys have not reached it), or for
/// [`LOOK_AHEAD_WAIT`]. Then it gives tmux a moment to read what the shell
/// printed last. It sleeps between looks rather than spinning, which on a
/// busy host would take the processor from the shell and tmux it waits for;
/// `/proc` is read with the shell's own `read`, the long `stat` only when
/// the shell has no child.
fn settle_script(shell: u32) -> String {
    format!(
        r#"p={shell}
read -r t x < /proc/uptime; t=${{t%.*}}${{t#*.}}
read -r k r0 < /proc/$p/io
q=0; moved=
while :; do
  sleep 0.002 || exit 0
  read -r k r < /proc/$p/io || exit 0
  [ "$r" = "$r0" ] || moved=1
  c=; read -r c < /proc/$p/task/$p/children
  s=
  [ -n "$c" ] || read -r s < /proc/$p/stat || exit 0
  s=${{s##*) }}; set -- $s x
  if [ "$1" = S ] && [ "$3" = $p ] && [ "$6" = $p ]; then
    [ -z "$moved" ] || break
    q=$((q+1)); [ $q -lt {QUIET_LOOKS} ] || break
  else
    q=0
  fi
  read -r u x < /proc/uptime; u=${{u%.*}}${{u#*.}}
  [ $((u - t)) -lt {LOOK_AHEAD_WAIT} ] || exit 0
done
sleep 0.002
"#
    )
}

/// How many looks in a row must find the shell asleep in charge, having
/// read nothing, before a look-ahead's first job stops waiting for it to
/// read the keys (about ten milliseconds).
const QUIET_LOOKS: u32 = 3;

#[cfg(test)]
mod tests {
    use super::*;

    /// A reply as a look-ahead's line gets it, taken at journal end `cursor`.
    fn answer(command: &'static str, ok: bool, text: &str, cursor: Option<u64>) -> Answer {
        Answer {
            command,
            reply: termpilot_control::Reply {
                time: 1,
                number: 1,
                flags: 1,
                ok,
                lines: text.lines().map(|line| line.as_bytes().to_vec()).collect(),
            },
            cursor,
            received: std::time::Instant::now(),
        }
    }

    fn look_ahead(arrival: Arrival) -> LookAhead {
        let (_tell, taken) = tokio::sync::watch::channel(arrival);
        LookAhead {
            taken,
            used: AtomicBool::new(false),
        }
    }

    #[test]
    fn a_look_ahead_is_dated_by_the_reply_that_comes_after_its_first_job() {
        // tmux 3.3a answers a `run-shell` when it starts its job: the first
        // job's reply comes before anything the keys made the shell print,
        // so only the next command's reply dates the dump.
        let dump = "P 10\nstat 10 (bash) S 1 10 10 34816 10 \nkids \n";
        let answers = vec![
            answer("run-shell", true, "", Some(5)),
            answer("display-message", true, "", Some(90)),
            answer("run-shell", true, "", Some(95)),
            answer("show-buffer", true, dump, None),
            answer("delete-buffer", true, "", None),
        ];
        let Arrival::Taken {
            before_dump,
            snapshot,
        } = dump_after(answers, "/dev/pts/3")
        else {
            panic!("the dump was taken");
        };
        assert_eq!(before_dump, 90);
        assert_eq!(snapshot.children(10), Vec::<u32>::new());
    }

    #[test]
    fn a_look_ahead_with_a_failed_or_missing_reply_is_lost() {
        let failed = vec![
            answer("run-shell", true, "", None),
            answer("display-message", true, "", Some(90)),
            answer("run-shell", true, "", None),
            answer("show-buffer", false, "no buffer termpilot-dump-1", None),
        ];
        assert!(matches!(dump_after(failed, "/dev/pts/3"), Arrival::Lost));
        let cut = vec![answer("run-shell", false, "unknown command", None)];
        assert!(matches!(dump_after(cut, "/dev/pts/3"), Arrival::Lost));
    }

    #[tokio::test]
    async fn a_look_ahead_serves_only_a_marker_that_came_before_its_dump_and_only_once() {
        let taken = || Arrival::Taken {
            before_dump: 100,
            snapshot: Arc::new(Snapshot::default()),
        };
        // A marker whose last byte came after the dump began: a forged one
        // printed after the shell was seen in charge must not ride on it.
        assert!(look_ahead(taken()).after(101).await.is_none());
        let ahead = look_ahead(taken());
        assert!(ahead.after(100).await.is_some());
        // A second marker needs a look of its own (`MarkerDoubt`).
        assert!(ahead.after(60).await.is_none());
        assert!(look_ahead(Arrival::Lost).after(10).await.is_none());
    }
}
