//! Notification lines outside reply blocks (tmux 3.3a `control-notify.c`, plus the
//! `%exit` line that the client process prints in `client.c`).
//!
//! Names (sessions, windows, clients, buffers) may contain spaces, so a name is
//! always the rest of the line after the fixed fields.

use memchr::memchr;

use crate::event::{Event, Notification};
use crate::ids::{PaneId, SessionId, WindowId};

/// Classifies a line outside any block that is not a guard or pane-output line.
/// Lines that are not understood become [`Notification::Unknown`], never an error.
pub(crate) fn parse_notification_line(line: &[u8]) -> Event {
    if line == b"%exit" {
        return Event::Exit { reason: None };
    }
    if let Some(reason) = line.strip_prefix(b"%exit ") {
        return Event::Exit {
            reason: Some(lossy(reason)),
        };
    }
    let (keyword, rest) = split_first(line);
    let notification = parse_known(keyword, rest).unwrap_or_else(|| Notification::Unknown {
        line: line.to_vec(),
    });
    Event::Notification(notification)
}

/// Parses the fields of a known keyword, or `None` for an unknown keyword or
/// fields that do not parse.
fn parse_known(keyword: &[u8], rest: Option<&[u8]>) -> Option<Notification> {
    use Notification as N;
    let notification = match (keyword, rest) {
        (b"%sessions-changed", None) => N::SessionsChanged,
        (b"%session-changed", Some(rest)) => {
            let (session, name) = id_and_name(rest, SessionId::parse_bytes)?;
            N::SessionChanged { session, name }
        }
        (b"%session-renamed", Some(rest)) => {
            let (session, name) = id_and_name(rest, SessionId::parse_bytes)?;
            N::SessionRenamed { session, name }
        }
        (b"%session-window-changed", Some(rest)) => {
            let (session, window) = two_ids(rest, SessionId::parse_bytes, WindowId::parse_bytes)?;
            N::SessionWindowChanged { session, window }
        }
        (b"%client-session-changed", Some(rest)) => parse_client_session_changed(rest)?,
        (b"%client-detached", Some(client)) => N::ClientDetached {
            client: lossy(client),
        },
        (b"%window-add", Some(rest)) => N::WindowAdd {
            window: WindowId::parse_bytes(rest)?,
        },
        (b"%window-close", Some(rest)) => N::WindowClose {
            window: WindowId::parse_bytes(rest)?,
        },
        (b"%window-renamed", Some(rest)) => {
            let (window, name) = id_and_name(rest, WindowId::parse_bytes)?;
            N::WindowRenamed { window, name }
        }
        (b"%unlinked-window-add", Some(rest)) => N::UnlinkedWindowAdd {
            window: WindowId::parse_bytes(rest)?,
        },
        (b"%unlinked-window-close", Some(rest)) => N::UnlinkedWindowClose {
            window: WindowId::parse_bytes(rest)?,
        },
        (b"%unlinked-window-renamed", Some(rest)) => {
            let (window, name) = id_and_name(rest, WindowId::parse_bytes)?;
            N::UnlinkedWindowRenamed { window, name }
        }
        (b"%window-pane-changed", Some(rest)) => {
            let (window, pane) = two_ids(rest, WindowId::parse_bytes, PaneId::parse_bytes)?;
            N::WindowPaneChanged { window, pane }
        }
        (b"%layout-change", Some(rest)) => parse_layout_change(rest)?,
        (b"%pane-mode-changed", Some(rest)) => N::PaneModeChanged {
            pane: PaneId::parse_bytes(rest)?,
        },
        (b"%paste-buffer-changed", Some(name)) => N::PasteBufferChanged { name: lossy(name) },
        (b"%paste-buffer-deleted", Some(name)) => N::PasteBufferDeleted { name: lossy(name) },
        (b"%message", Some(text)) => N::Message { text: lossy(text) },
        (b"%config-error", Some(text)) => N::ConfigError { text: lossy(text) },
        (b"%subscription-changed", Some(_)) => N::SubscriptionChanged {
            line: join(keyword, rest),
        },
        _ => return None,
    };
    Some(notification)
}

/// `CLIENT $S NAME`.
fn parse_client_session_changed(rest: &[u8]) -> Option<Notification> {
    let (client, rest) = split_first(rest);
    let (session, name) = id_and_name(rest?, SessionId::parse_bytes)?;
    Some(Notification::ClientSessionChanged {
        client: lossy(client),
        session,
        name,
    })
}

/// `@W LAYOUT VISIBLE_LAYOUT FLAGS`, where FLAGS may be empty (the line then ends in
/// a space) and a tmux older than 2.2 sent no visible layout at all.
fn parse_layout_change(rest: &[u8]) -> Option<Notification> {
    let (window, rest) = split_first(rest);
    let window = WindowId::parse_bytes(window)?;
    let (layout, rest) = split_first(rest?);
    let (visible_layout, flags) = match rest {
        Some(rest) => split_first(rest),
        None => (layout, None),
    };
    Some(Notification::LayoutChange {
        window,
        layout: lossy(layout),
        visible_layout: lossy(visible_layout),
        flags: flags.map(lossy).unwrap_or_default(),
    })
}

/// `ID NAME`, where NAME is the rest of the line (possibly empty or with spaces).
fn id_and_name<T>(rest: &[u8], parse_id: fn(&[u8]) -> Option<T>) -> Option<(T, String)> {
    let (id, name) = split_first(rest);
    Some((parse_id(id)?, lossy(name.unwrap_or_default())))
}

/// Exactly two ids separated by one space.
fn two_ids<A, B>(
    rest: &[u8],
    parse_a: fn(&[u8]) -> Option<A>,
    parse_b: fn(&[u8]) -> Option<B>,
) -> Option<(A, B)> {
    let (a, b) = split_first(rest);
    Some((parse_a(a)?, parse_b(b?)?))
}

/// Splits at the first space: the word before it and, if there was a space, the rest.
fn split_first(text: &[u8]) -> (&[u8], Option<&[u8]>) {
    match memchr(b' ', text) {
        Some(space) => (&text[..space], Some(&text[space + 1..])),
        None => (text, None),
    }
}

/// Rebuilds a line from its first word and the rest.
fn join(keyword: &[u8], rest: Option<&[u8]>) -> Vec<u8> {
    let mut line = keyword.to_vec();
    if let Some(rest) = rest {
        line.push(b' ');
        line.extend_from_slice(rest);
    }
    line
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use Notification as N;

    fn parse(line: &str) -> Event {
        parse_notification_line(line.as_bytes())
    }

    fn notification(line: &str) -> Notification {
        match parse(line) {
            Event::Notification(notification) => notification,
            other => panic!("{line:?} gave {other:?}"),
        }
    }

    fn unknown(line: &str) -> Notification {
        N::Unknown {
            line: line.as_bytes().to_vec(),
        }
    }

    #[test]
    fn exit_with_and_without_reason() {
        assert_eq!(parse("%exit"), Event::Exit { reason: None });
        assert_eq!(
            parse("%exit too far behind"),
            Event::Exit {
                reason: Some("too far behind".into())
            }
        );
    }

    #[test]
    fn session_notifications() {
        assert_eq!(notification("%sessions-changed"), N::SessionsChanged);
        assert_eq!(
            notification("%session-changed $1 my work"),
            N::SessionChanged {
                session: SessionId(1),
                name: "my work".into()
            }
        );
        assert_eq!(
            notification("%session-renamed $2 new"),
            N::SessionRenamed {
                session: SessionId(2),
                name: "new".into()
            }
        );
        assert_eq!(
            notification("%session-window-changed $2 @5"),
            N::SessionWindowChanged {
                session: SessionId(2),
                window: WindowId(5)
            }
        );
    }

    #[test]
    fn client_notifications() {
        assert_eq!(
            notification("%client-session-changed /dev/pts/3 $0 main"),
            N::ClientSessionChanged {
                client: "/dev/pts/3".into(),
                session: SessionId(0),
                name: "main".into()
            }
        );
        assert_eq!(
            notification("%client-detached client-42"),
            N::ClientDetached {
                client: "client-42".into()
            }
        );
    }

    #[test]
    fn window_notifications() {
        assert_eq!(
            notification("%window-add @1"),
            N::WindowAdd {
                window: WindowId(1)
            }
        );
        assert_eq!(
            notification("%window-close @1"),
            N::WindowClose {
                window: WindowId(1)
            }
        );
        assert_eq!(
            notification("%window-renamed @1 vim x"),
            N::WindowRenamed {
                window: WindowId(1),
                name: "vim x".into()
            }
        );
        assert_eq!(
            notification("%unlinked-window-add @9"),
            N::UnlinkedWindowAdd {
                window: WindowId(9)
            }
        );
        assert_eq!(
            notification("%unlinked-window-close @9"),
            N::UnlinkedWindowClose {
                window: WindowId(9)
            }
        );
        assert_eq!(
            notification("%unlinked-window-renamed @9 "),
            N::UnlinkedWindowRenamed {
                window: WindowId(9),
                name: String::new()
            }
        );
        assert_eq!(
            notification("%window-pane-changed @1 %4"),
            N::WindowPaneChanged {
                window: WindowId(1),
                pane: PaneId(4)
            }
        );
        assert_eq!(
            notification("%pane-mode-changed %4"),
            N::PaneModeChanged { pane: PaneId(4) }
        );
    }

    #[test]
    fn layout_change_with_and_without_flags() {
        assert_eq!(
            notification("%layout-change @2 b25d,80x24,0,0,2 b25d,80x24,0,0,2 *"),
            N::LayoutChange {
                window: WindowId(2),
                layout: "b25d,80x24,0,0,2".into(),
                visible_layout: "b25d,80x24,0,0,2".into(),
                flags: "*".into()
            }
        );
        assert_eq!(
            notification("%layout-change @2 a,1x1,0,0,1 b,1x1,0,0,1 "),
            N::LayoutChange {
                window: WindowId(2),
                layout: "a,1x1,0,0,1".into(),
                visible_layout: "b,1x1,0,0,1".into(),
                flags: String::new()
            }
        );
    }

    #[test]
    fn newer_tmux_notifications() {
        assert_eq!(
            notification("%paste-buffer-changed buffer0"),
            N::PasteBufferChanged {
                name: "buffer0".into()
            }
        );
        assert_eq!(
            notification("%paste-buffer-deleted b"),
            N::PasteBufferDeleted { name: "b".into() }
        );
        assert_eq!(
            notification("%message hi there"),
            N::Message {
                text: "hi there".into()
            }
        );
        assert_eq!(
            notification("%config-error f:1: bad"),
            N::ConfigError {
                text: "f:1: bad".into()
            }
        );
        let line = "%subscription-changed s $0 @1 0 %1 : v a l";
        assert_eq!(
            notification(line),
            N::SubscriptionChanged {
                line: line.as_bytes().to_vec()
            }
        );
    }

    #[test]
    fn unknown_and_malformed_lines_are_kept_raw() {
        for line in [
            "",
            "hello",
            "%future-thing @1",
            "%window-add 1",
            "%window-add @1 extra",
            "%window-pane-changed @1",
            "%session-window-changed $1 %2",
            "%sessions-changed now",
            "%client-session-changed c main",
            "%layout-change @1",
            "%end 1 2 1",
        ] {
            assert_eq!(notification(line), unknown(line));
        }
    }

    #[test]
    fn invalid_utf8_in_names_is_replaced() {
        let event = parse_notification_line(b"%window-renamed @1 a\xffb");
        assert_eq!(
            event,
            Event::Notification(N::WindowRenamed {
                window: WindowId(1),
                name: "a\u{fffd}b".into()
            })
        );
    }
}
