//! A port-forward session of `kubectl port-forward` (client-go's SPDY
//! tunnel over WebSocket): per forwarded connection the client opens an
//! error stream and a data stream (headers `streamType`, `port`,
//! `requestID`); the data stream carries the bytes, the error stream the
//! kubelet's message when the port refuses. Each stream gets a SYN_REPLY;
//! when the client half-closes the data stream, both of its streams are
//! finished (FIN), which ends kubectl's copy.

use std::collections::HashMap;

use bytes::{Bytes, BytesMut};
use futures::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;

use super::portforward::{Conn, Service, refused};
use super::session::Ws;
use super::spdy::{self, Deflater, FIN, Frame, Inflater};

/// Streams open at once in one session.
const MAX_STREAMS: usize = 256;

#[derive(Default)]
struct Pair {
    data: Option<u32>,
    error: Option<u32>,
    port: u16,
    conn: Option<Conn>,
}

struct Session<'a> {
    declared: &'a [(u16, Service)],
    inflater: Inflater,
    deflater: Deflater,
    /// Stream id → request id.
    streams: HashMap<u32, String>,
    pairs: HashMap<String, Pair>,
    out: Vec<Vec<u8>>,
}

/// Runs the session until the client goes away or sends nonsense.
pub(crate) async fn run(ws: Ws, declared: &[(u16, Service)]) {
    let (mut sink, mut source) = ws.split();
    let mut s = Session {
        declared,
        inflater: Inflater::new(),
        deflater: Deflater::default(),
        streams: HashMap::new(),
        pairs: HashMap::new(),
        out: Vec::new(),
    };
    let mut buf = BytesMut::new();
    while let Some(Ok(msg)) = source.next().await {
        match msg {
            Message::Binary(b) => buf.extend_from_slice(&b),
            Message::Close(_) => break,
            _ => continue,
        }
        loop {
            match spdy::parse_frame(&mut buf) {
                Ok(Some(frame)) => {
                    if !s.handle(frame) {
                        let _ = sink.close().await;
                        return;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    tracing::debug!(error = %e, "port-forward: bad SPDY input");
                    let _ = sink.close().await;
                    return;
                }
            }
        }
        for frame in s.out.drain(..) {
            if sink
                .send(Message::Binary(Bytes::from(frame)))
                .await
                .is_err()
            {
                return;
            }
        }
    }
    let _ = sink.close().await;
}

impl Session<'_> {
    /// Handles one frame; `false` ends the session.
    fn handle(&mut self, frame: Frame) -> bool {
        match frame {
            Frame::Control {
                kind: spdy::SYN_STREAM,
                data,
                ..
            } => self.syn_stream(&data),
            Frame::Control {
                kind: spdy::RST_STREAM,
                data,
                ..
            } => {
                if let Ok(id) = spdy::rst_stream(&data)
                    && let Some(req) = self.streams.remove(&id)
                {
                    self.pairs.remove(&req);
                }
                true
            }
            Frame::Control {
                kind: spdy::PING,
                data,
                ..
            } => {
                self.out.push(spdy::ping(&data));
                true
            }
            Frame::Control {
                kind: spdy::GOAWAY, ..
            } => false,
            // SETTINGS, WINDOW_UPDATE, HEADERS: nothing to do here.
            Frame::Control { .. } => true,
            Frame::Data {
                stream,
                flags,
                data,
            } => {
                self.data(stream, flags, &data);
                true
            }
        }
    }

    fn syn_stream(&mut self, data: &Bytes) -> bool {
        let Ok((id, block)) = spdy::syn_stream(data) else {
            return false;
        };
        let headers = match self
            .inflater
            .inflate(&block)
            .and_then(|raw| spdy::parse_headers(&raw))
        {
            Ok(h) => h,
            Err(e) => {
                tracing::debug!(error = %e, "port-forward: bad SPDY headers");
                return false;
            }
        };
        if self.streams.len() >= MAX_STREAMS {
            return false;
        }
        let get = |k: &str| {
            headers
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.as_str())
        };
        let request = get("requestid").unwrap_or("").to_owned();
        let port = get("port").and_then(|p| p.parse::<u16>().ok()).unwrap_or(0);
        let empty = self.deflater.deflate(&spdy::encode_headers(&[]));
        self.out.push(spdy::syn_reply(id, 0, &empty));
        self.streams.insert(id, request.clone());
        let pair = self.pairs.entry(request.clone()).or_default();
        pair.port = port;
        match get("streamtype") {
            Some("error") => pair.error = Some(id),
            Some("data") => {
                pair.data = Some(id);
                pair.conn = self
                    .declared
                    .iter()
                    .find(|(p, _)| *p == port)
                    .map(|(p, s)| Conn::new(*s, format!("hello from port {p}")));
                if pair.conn.is_none() {
                    let msg = refused(port);
                    if let Some(e) = pair.error {
                        self.out.push(spdy::data(e, 0, msg.as_bytes()));
                    }
                    self.finish(&request);
                }
            }
            _ => {}
        }
        true
    }

    fn data(&mut self, stream: u32, flags: u8, payload: &[u8]) {
        let Some(req) = self.streams.get(&stream).cloned() else {
            return;
        };
        let Some(pair) = self.pairs.get_mut(&req) else {
            return;
        };
        if pair.data == Some(stream)
            && let Some(conn) = &mut pair.conn
        {
            for reply in conn.feed(payload) {
                for piece in reply.chunks(32 << 10) {
                    self.out.push(spdy::data(stream, 0, piece));
                }
            }
        }
        if flags & FIN != 0 && pair.data == Some(stream) {
            self.finish(&req);
        }
    }

    /// FIN on both streams of a request; forgets it.
    fn finish(&mut self, req: &str) {
        if let Some(pair) = self.pairs.remove(req) {
            for id in [pair.data, pair.error].into_iter().flatten() {
                self.out.push(spdy::data(id, FIN, &[]));
                self.streams.remove(&id);
            }
        }
    }
}
