//! Helpers shared by the viewer's tests: a WebSocket client that speaks the
//! viewer's protocol, and a plain HTTP GET.
#![allow(dead_code)]

use archipelago_viewer::protocol::{self, Frame, ReceivedState};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};
use tungstenite::{Message, WebSocket};

/// How long a test waits for the viewer before it fails.
pub const PATIENCE: Duration = Duration::from_secs(60);

pub struct Client {
    pub ws: WebSocket<TcpStream>,
    pub state: ReceivedState,
    pub frames: Vec<Frame>,
    pub texts: Vec<serde_json::Value>,
}

impl Client {
    pub fn connect(port: u16) -> Self {
        let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        let url = format!("ws://127.0.0.1:{port}/ws");
        let (ws, _) = tungstenite::client(url.as_str(), stream).unwrap();
        Self {
            ws,
            state: ReceivedState::default(),
            frames: Vec::new(),
            texts: Vec::new(),
        }
    }

    pub fn send(&mut self, json: serde_json::Value) {
        self.ws.send(Message::text(json.to_string())).unwrap();
    }

    /// Reads messages until a frame satisfies `done` (applying each frame).
    pub fn until_frame(&mut self, done: impl Fn(&Frame) -> bool) -> Frame {
        let start = Instant::now();
        loop {
            assert!(start.elapsed() < PATIENCE, "no such frame in {PATIENCE:?}");
            match self.ws.read().unwrap() {
                Message::Binary(b) => {
                    let f = protocol::decode_frame(&b).expect("a well-formed frame");
                    self.state.apply(&f);
                    self.frames.push(f.clone());
                    if done(&f) {
                        return f;
                    }
                }
                Message::Text(t) => self.texts.push(serde_json::from_str(&t).unwrap()),
                _ => {}
            }
        }
    }

    /// Reads messages until a text message of this `type` comes.
    pub fn until_text(&mut self, kind: &str) -> serde_json::Value {
        let start = Instant::now();
        loop {
            assert!(
                start.elapsed() < PATIENCE,
                "no `{kind}` message in {PATIENCE:?}"
            );
            match self.ws.read().unwrap() {
                Message::Binary(b) => {
                    let f = protocol::decode_frame(&b).expect("a well-formed frame");
                    self.state.apply(&f);
                    self.frames.push(f);
                }
                Message::Text(t) => {
                    let v: serde_json::Value = serde_json::from_str(&t).unwrap();
                    self.texts.push(v.clone());
                    if v["type"] == kind {
                        return v;
                    }
                }
                _ => {}
            }
        }
    }
}

/// `GET path`: (status code, body).
pub fn get(port: u16, path: &str) -> (u16, Vec<u8>) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut all = Vec::new();
    s.read_to_end(&mut all).unwrap();
    let end = all.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&all[..end]).to_string();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .unwrap()
        .parse()
        .unwrap();
    let body = all[end + 4..].to_vec();
    assert_eq!(body.len(), length, "{path}: body length");
    (status, body)
}
