use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use termpilot_journal::{Pattern, Scanner};

use super::*;

/// Bounds every wait in these tests, so a lock that blocks fails them
/// instead of hanging them.
const BOUND: Duration = Duration::from_secs(10);

const CLIENT: ClientId = ClientId(1);

#[test]
fn pruning_keeps_live_panes_and_the_newest_gone_ones() {
    let panes = Panes::new(1024);
    for id in 0..30 {
        panes.append(CLIENT, PaneId(id), b"output");
    }
    panes.prune(&[PaneId(0), PaneId(1)]);
    assert_eq!(panes.len(), 2 + DEAD_KEPT);
    assert_eq!(panes.end(PaneId(0)), 6, "live journals are untouched");
    panes.prune(&[PaneId(0)]);
    assert_eq!(
        panes.len(),
        1 + DEAD_KEPT,
        "pane 1 gone now, an older gone one dropped"
    );
    assert!(
        panes.with_journal(PaneId(1), |j| j.end()) == 6,
        "the newest gone pane is kept"
    );
}

#[test]
fn killed_panes_are_remembered_past_their_journal_until_the_server_changes() {
    let panes = Panes::new(1024);
    panes.mark_killed(PaneId(1), true);
    panes.mark_killed(PaneId(2), true);
    panes.remove(PaneId(1));
    assert!(
        panes.killed(PaneId(1)),
        "the journal goes, the kill is kept"
    );
    panes.mark_killed(PaneId(2), false);
    assert!(!panes.killed(PaneId(2)), "a refused kill is forgotten");
    for id in 10..10 + KILLED_KEPT as u32 {
        panes.mark_killed(PaneId(id), true);
    }
    assert!(!panes.killed(PaneId(1)), "only the newest are kept");
    assert!(panes.killed(PaneId(10)));
    panes.clear();
    assert!(!panes.killed(PaneId(10)), "a new server reuses pane ids");
}

#[test]
fn appends_do_not_wait_for_a_reader_of_any_pane() {
    let panes = Arc::new(Panes::new(1 << 20));
    panes.append(CLIENT, PaneId(1), b"before\n");
    // A slow scan of pane 1 is under way: the reader task must still be
    // able to append to pane 1 and to pane 2, and to take cursors.
    let seen = panes.with_journal(PaneId(1), |journal| {
        let (done_tx, done_rx) = mpsc::channel();
        let writer = Arc::clone(&panes);
        thread::spawn(move || {
            writer.append(CLIENT, PaneId(1), b"during\n");
            writer.append(CLIENT, PaneId(2), b"other pane\n");
            let cursors = (writer.end(PaneId(1)), writer.end(PaneId(2)));
            writer.notify(PaneId(1));
            done_tx.send(cursors).unwrap();
        });
        let cursors = done_rx.recv_timeout(BOUND).expect("an append waited");
        (journal.end(), cursors)
    });
    assert_eq!(seen, (7, (14, 11)), "the snapshot kept its own end");
    assert_eq!(*panes.subscribe(PaneId(1)).borrow(), 14);
}

#[test]
fn a_scan_of_snapshots_sees_every_byte_of_a_concurrent_flood() {
    const LINES: u32 = 20_000;
    let panes = Arc::new(Panes::new(1 << 20));
    let pane = PaneId(3);
    let writer = {
        let panes = Arc::clone(&panes);
        thread::spawn(move || {
            for n in 0..LINES {
                panes.append(CLIENT, pane, format!("line {n}\r\n").as_bytes());
                if n % 64 == 0 {
                    panes.notify(pane);
                }
            }
            panes.append(CLIENT, pane, b"DONE\r\n");
            panes.notify(pane);
        })
    };
    let mut scanner = Scanner::new(Pattern::literals(["DONE"], true).unwrap(), 0);
    // The scanner and the line reader each read from where they got to.
    let (mut scanned, mut read, mut next_line) = (0, 0, 0);
    let deadline = Instant::now() + BOUND;
    let found = loop {
        assert!(Instant::now() < deadline, "the scan never caught up");
        let scan = panes.with_journal_from(pane, scanned, |journal| scanner.scan(journal));
        let lines = panes.with_journal_from(pane, read, |journal| journal.lines(read));
        assert_eq!((scan.lost, lines.lost), (0, 0));
        for line in &lines.lines {
            if next_line < LINES {
                assert_eq!(line.text, format!("line {next_line}"));
                next_line += 1;
            }
        }
        // The next read starts after the last complete line, so no line is
        // split between two reads.
        read = lines.lines.last().map_or(read, |line| line.end);
        if let Some(found) = scan.found {
            break found;
        }
        scanned = scan.scanned_to;
        thread::yield_now();
    };
    writer.join().unwrap();
    assert_eq!(next_line, LINES, "every line was seen, in order");
    assert_eq!(found.line, "DONE");
    assert_eq!(found.line_end, panes.end(pane));
}

#[test]
fn cursors_fall_between_whole_appends_and_never_go_back() {
    const APPENDS: usize = 5_000;
    const SIZE: usize = 100;
    let panes = Arc::new(Panes::new(1 << 20));
    let pane = PaneId(4);
    let writer = {
        let panes = Arc::clone(&panes);
        thread::spawn(move || {
            for n in 0..APPENDS {
                let byte = b'a' + (n % 26) as u8;
                panes.append(CLIENT, pane, &[byte; SIZE]);
            }
        })
    };
    let mut last = 0;
    while last < (APPENDS * SIZE) as u64 {
        let cursor = panes.end(pane);
        assert!(cursor >= last, "cursor went back from {last} to {cursor}");
        assert_eq!(cursor % SIZE as u64, 0, "cursor {cursor} splits an append");
        // What is read from a cursor starts exactly at an append's first byte.
        let first =
            panes.with_journal_from(pane, cursor, |j| j.read_from(cursor).bytes.first().copied());
        let expected = b'a' + ((cursor / SIZE as u64) % 26) as u8;
        assert!(first.is_none_or(|byte| byte == expected));
        last = cursor;
    }
    writer.join().unwrap();
}

#[test]
fn eviction_and_gaps_are_reported_through_snapshots() {
    let panes = Panes::new(64);
    let pane = PaneId(5);
    let mut rx = panes.subscribe(pane);
    for _ in 0..20 {
        panes.append(CLIENT, pane, b"0123456789");
    }
    panes.record_gap(pane, GapReason::Paused);
    assert!(rx.has_changed().unwrap(), "a gap wakes waiters");
    assert_eq!(*rx.borrow_and_update(), 201);
    let read = panes.with_journal_from(pane, 0, |j| {
        let read = j.read_from(0);
        (
            read.lost,
            read.gaps.len(),
            read.bytes.len() as u64,
            j.start(),
        )
    });
    let (lost, gaps, held, start) = read;
    assert!(start > 0, "old output was evicted");
    assert_eq!(gaps, 1);
    assert_eq!(lost, start + 1, "evicted offsets plus the gap");
    assert_eq!(start + held + 1, 201);
}

#[test]
fn output_of_a_client_that_does_not_own_the_pane_is_dropped() {
    let panes = Panes::new(1024);
    let pane = PaneId(6);
    assert_eq!(panes.claim(pane, ClientId(7)), ClientId(7));
    assert!(!panes.append(ClientId(8), pane, b"twice"));
    assert!(panes.append(ClientId(7), pane, b"once"));
    assert_eq!(panes.end(pane), 4);
    panes.release(ClientId(7));
    assert_eq!(panes.owner(pane), None);
    assert!(panes.append(ClientId(8), pane, b"!"));
    assert_eq!(panes.owner(pane), Some(ClientId(8)));
}

#[test]
fn removing_a_pane_closes_its_waiters_channel() {
    let panes = Panes::new(1024);
    let pane = PaneId(9);
    let rx = panes.subscribe(pane);
    panes.append(CLIENT, pane, b"x");
    panes.remove(pane);
    assert!(
        rx.has_changed().is_err(),
        "the wait learns the pane is gone"
    );
}
