//! The SSE events of HTTP sessions, kept so that a client whose stream was
//! cut mid-call gets the rest of it, the call's answer included, when it
//! reconnects with `Last-Event-ID` (protocol 2025-11-25 and before).
//!
//! rmcp 3.9 keeps a call's events only while the call runs: once the answer
//! is sent (into a stream nobody reads any more) they are gone, and a client
//! that reconnects a moment later gets an empty stream. Here the events of
//! each stream are kept in memory, bounded: the newest [`MAX_EVENTS`] of a
//! stream, at most [`MAX_STREAMS`] streams (the one quiet longest goes
//! first), a finished stream for [`FINISHED_TTL`] after its answer and any
//! other for the session's idle time after its last event.
//!
//! An event id is `TOKEN-INDEX`, TOKEN random per stream: ids are not
//! guessable, so one client cannot read another's stream by naming it.
//! A replay yields the events after the one named, then follows the stream
//! live until its answer.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::ServerJsonRpcMessage;
use rmcp::transport::streamable_http_server::session::{
    EventStore, EventStoreError, EventStream, ServerSseMessage,
};
use tokio::sync::watch;

/// Events kept per stream (the newest).
pub(crate) const MAX_EVENTS: usize = 64;
/// Streams kept at once.
pub(crate) const MAX_STREAMS: usize = 512;
/// How long a finished stream is kept after its answer.
pub(crate) const FINISHED_TTL: Duration = Duration::from_secs(120);

/// The kept events of every HTTP session's streams.
pub(crate) struct Events {
    inner: Arc<Mutex<Streams>>,
    /// How long an unfinished stream is kept after its last event.
    idle: Duration,
}

#[derive(Default)]
struct Streams {
    /// By rmcp's stream id.
    streams: HashMap<String, Kept>,
    /// Token → rmcp's stream id.
    tokens: HashMap<String, String>,
}

struct Kept {
    token: String,
    /// The index of `events[0]`.
    first: u64,
    events: VecDeque<ServerSseMessage>,
    /// When the answer was kept.
    finished: Option<Instant>,
    last: Instant,
    /// The index after the newest event, for replays following the stream.
    next: watch::Sender<u64>,
}

impl Kept {
    fn expired(&self, now: Instant, idle: Duration) -> bool {
        match self.finished {
            Some(at) => now.duration_since(at) >= FINISHED_TTL,
            None => now.duration_since(self.last) >= idle,
        }
    }
}

impl Events {
    pub(crate) fn new(idle: Duration) -> Events {
        Events {
            inner: Arc::default(),
            idle,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Streams> {
        lock(&self.inner)
    }

    /// Keeps `event` as the next of `stream`; returns its id.
    fn keep(&self, stream: &str, event: &ServerSseMessage) -> Result<String, String> {
        let now = Instant::now();
        let mut all = self.lock();
        let Streams { streams, tokens } = &mut *all;
        streams.retain(|_, kept| {
            let expired = kept.expired(now, self.idle);
            if expired {
                tokens.remove(&kept.token);
            }
            !expired
        });
        if !streams.contains_key(stream) {
            if streams.len() >= MAX_STREAMS {
                let oldest = streams
                    .iter()
                    .min_by_key(|(_, kept)| (kept.finished.is_none(), kept.last))
                    .map(|(id, _)| id.clone());
                if let Some(kept) = oldest.and_then(|id| streams.remove(&id)) {
                    tokens.remove(&kept.token);
                }
            }
            let token = crate::random::hex_token(16).ok_or("cannot read /dev/urandom")?;
            tokens.insert(token.clone(), stream.to_owned());
            let kept = Kept {
                token,
                first: 0,
                events: VecDeque::new(),
                finished: None,
                last: now,
                next: watch::Sender::new(0),
            };
            streams.insert(stream.to_owned(), kept);
        }
        let kept = streams.get_mut(stream).expect("inserted above");
        let index = kept.first + kept.events.len() as u64;
        let id = format!("{}-{index}", kept.token);
        let mut event = event.clone();
        event.event_id = Some(id.clone());
        if is_answer(&event) {
            kept.finished = Some(now);
        }
        kept.events.push_back(event);
        if kept.events.len() > MAX_EVENTS {
            kept.events.pop_front();
            kept.first += 1;
        }
        kept.last = now;
        kept.next.send_replace(index + 1);
        Ok(id)
    }

    /// The events after `last`, then the stream's later ones as they come,
    /// until its answer.
    fn after(&self, last: &str) -> Result<EventStream, String> {
        let (token, index) = last
            .rsplit_once('-')
            .and_then(|(token, index)| Some((token, index.parse::<u64>().ok()?)))
            .ok_or("not an event id of this server")?;
        let all = self.lock();
        let kept = all
            .tokens
            .get(token)
            .and_then(|stream| all.streams.get(stream))
            .ok_or("no such stream (unknown, or expired)")?;
        let changes = kept.next.subscribe();
        let replay = Replay {
            inner: self.inner.clone(),
            token: token.to_owned(),
            next: index + 1,
            changes,
        };
        drop(all);
        Ok(Box::pin(futures_util::stream::unfold(replay, Replay::step)))
    }
}

/// A replay of one stream, from `next`.
struct Replay {
    inner: Arc<Mutex<Streams>>,
    token: String,
    next: u64,
    changes: watch::Receiver<u64>,
}

impl Replay {
    async fn step(mut self) -> Option<(ServerSseMessage, Replay)> {
        loop {
            {
                let all = lock(&self.inner);
                let kept = all
                    .tokens
                    .get(&self.token)
                    .and_then(|stream| all.streams.get(stream))?;
                // Events dropped for room are skipped.
                self.next = self.next.max(kept.first);
                let at = (self.next - kept.first) as usize;
                if let Some(event) = kept.events.get(at) {
                    let event = event.clone();
                    drop(all);
                    self.next += 1;
                    return Some((event, self));
                }
                if kept.finished.is_some() {
                    return None;
                }
            }
            // Gone (the stream was dropped) ends the replay too.
            self.changes.changed().await.ok()?;
        }
    }
}

/// The answer to a call: the last event of its stream.
fn is_answer(event: &ServerSseMessage) -> bool {
    matches!(
        event.message.as_deref(),
        Some(ServerJsonRpcMessage::Response(_) | ServerJsonRpcMessage::Error(_))
    )
}

fn lock(inner: &Mutex<Streams>) -> std::sync::MutexGuard<'_, Streams> {
    inner.lock().unwrap_or_else(|e| e.into_inner())
}

#[async_trait::async_trait]
impl EventStore for Events {
    async fn store_event(
        &self,
        stream_id: &str,
        event: &ServerSseMessage,
    ) -> Result<String, EventStoreError> {
        self.keep(stream_id, event).map_err(Into::into)
    }

    async fn replay_events_after(
        &self,
        last_event_id: &str,
    ) -> Result<EventStream, EventStoreError> {
        self.after(last_event_id).map_err(Into::into)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;
    use rmcp::model::{
        EmptyResult, JsonRpcResponse, NumberOrString, ServerNotification, ServerResult,
    };

    fn note() -> ServerSseMessage {
        let note =
            rmcp::model::ProgressNotification::new(rmcp::model::ProgressNotificationParam::new(
                rmcp::model::ProgressToken(NumberOrString::Number(1)),
                1.0,
            ));
        ServerSseMessage::from_message(ServerJsonRpcMessage::notification(
            ServerNotification::ProgressNotification(note),
        ))
    }

    fn answer() -> ServerSseMessage {
        ServerSseMessage::from_message(ServerJsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: Default::default(),
            id: NumberOrString::Number(3),
            result: ServerResult::EmptyResult(EmptyResult {}),
        }))
    }

    #[tokio::test]
    async fn a_replay_starts_after_the_event_named_and_follows_to_the_answer() {
        let events = Events::new(Duration::from_secs(60));
        let priming = ServerSseMessage::retry(Duration::from_secs(3));
        let first = events.keep("s", &priming).unwrap();
        let second = events.keep("s", &note()).unwrap();
        let replay = events.after(&first).unwrap();
        events.keep("s", &answer()).unwrap();
        let ids: Vec<_> = replay.map(|e| e.event_id.unwrap()).collect().await;
        assert_eq!(ids.len(), 2, "{ids:?}");
        assert_eq!(ids[0], second);
        // After the answer the replay ends at once, the answer last.
        let after_answer = events.after(&ids[1]).unwrap();
        assert_eq!(after_answer.count().await, 0);
        // Another stream's ids do not reach this one; made-up ids are refused.
        let other = events.keep("t", &priming).unwrap();
        assert_ne!(other.split('-').next(), first.split('-').next());
        assert!(events.after("0/1").is_err());
        assert!(events.after("00000000000000000000000000000000-0").is_err());
    }

    #[tokio::test]
    async fn a_stream_keeps_its_newest_events_and_the_streams_are_capped() {
        let events = Events::new(Duration::from_secs(60));
        let first = events.keep("s", &note()).unwrap();
        for _ in 0..MAX_EVENTS + 10 {
            events.keep("s", &note()).unwrap();
        }
        events.keep("s", &answer()).unwrap();
        let kept: Vec<_> = events.after(&first).unwrap().collect().await;
        assert_eq!(kept.len(), MAX_EVENTS);
        assert!(is_answer(kept.last().unwrap()));
        for n in 0..MAX_STREAMS + 5 {
            events.keep(&format!("x{n}"), &note()).unwrap();
        }
        let all = events.lock();
        assert_eq!(all.streams.len(), MAX_STREAMS);
        assert_eq!(all.tokens.len(), MAX_STREAMS);
        // The finished stream went first.
        assert!(!all.streams.contains_key("s"));
    }
}
