//! The HTTP side: the page and its scripts (embedded in the binary), and
//! `/ws`, the WebSocket each page streams frames from and sends commands
//! on. One thread per connection; nothing here touches the world, which
//! belongs to the stepping thread (`sim.rs`).

use crate::protocol;
use crate::sim::{self, Command, Shared, Source};
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The files the page is made of, embedded so the binary serves them with
/// no network and no install: path, content type, bytes.
const FILES: &[(&str, &str, &[u8])] = &[
    (
        "/",
        "text/html; charset=utf-8",
        include_bytes!("../static/index.html"),
    ),
    (
        "/index.html",
        "text/html; charset=utf-8",
        include_bytes!("../static/index.html"),
    ),
    (
        "/viewer.js",
        "text/javascript",
        include_bytes!("../static/viewer.js"),
    ),
    (
        "/vendor/three.module.min.js",
        "text/javascript",
        include_bytes!("../static/vendor/three.module.min.js"),
    ),
    (
        "/vendor/OrbitControls.js",
        "text/javascript",
        include_bytes!("../static/vendor/OrbitControls.js"),
    ),
    (
        "/vendor/LICENSE-three.txt",
        "text/plain; charset=utf-8",
        include_bytes!("../static/vendor/LICENSE-three.txt"),
    ),
];

/// Longest request head read before a connection is dropped.
const MAX_HEAD: usize = 16 * 1024;
/// How long a connection may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(5);
/// A connection's loop reads the page's commands with this timeout, then
/// looks for a new snapshot.
const POLL: Duration = Duration::from_millis(4);

/// How to start a viewer.
#[derive(Debug, Clone)]
pub struct Options {
    /// A name of [`sim::scene_names`]: `archipelago::scenes::NAMES` and
    /// `avalanche` (4,096 bodies).
    pub scene: String,
    /// 0: any free port.
    pub port: u16,
    /// Workers of the pinned pool (`None`: one per physical core).
    pub threads: Option<usize>,
    /// Start paused (step from the page).
    pub paused: bool,
    /// Write the run to this file as it is stepped.
    pub record: Option<PathBuf>,
    /// Play this recording instead of simulating.
    pub replay: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            scene: "pyramid".into(),
            port: 0,
            threads: None,
            paused: false,
            record: None,
            replay: None,
        }
    }
}

/// A running viewer: the stepping thread and the server. Stops when
/// dropped.
pub struct Viewer {
    pub port: u16,
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl Viewer {
    pub fn start(opts: &Options) -> Result<Self, String> {
        let source = match &opts.replay {
            Some(path) => Source::Replay(Box::new(sim::Replay::new(
                crate::record::Recording::open(path)?,
            ))),
            None => {
                let recorder = match &opts.record {
                    Some(p) => Some(
                        crate::record::Recorder::create(p)
                            .map_err(|e| format!("{}: {e}", p.display()))?,
                    ),
                    None => None,
                };
                Source::Live(Box::new(sim::Live::new(
                    &opts.scene,
                    opts.threads,
                    recorder,
                )?))
            }
        };
        let listener = TcpListener::bind(("127.0.0.1", opts.port))
            .map_err(|e| format!("127.0.0.1:{}: {e}", opts.port))?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        let shared = Shared::new();
        let (tx, rx) = mpsc::channel();
        let playing = !opts.paused;
        let stepping = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("viewer-sim".into())
                .spawn(move || sim::run(shared, rx, source, playing))
                .map_err(|e| e.to_string())?
        };
        let accepting = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("viewer-accept".into())
                .spawn(move || accept_loop(listener, shared, tx))
                .map_err(|e| e.to_string())?
        };
        Ok(Self {
            port,
            shared,
            threads: vec![stepping, accepting],
        })
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }

    /// Blocks until the viewer stops (never, unless a thread ends).
    pub fn wait(mut self) {
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for Viewer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.published.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>, commands: Sender<Command>) {
    while !shared.stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, _)) => {
                let (shared, commands) = (shared.clone(), commands.clone());
                let _ = std::thread::Builder::new()
                    .name("viewer-conn".into())
                    .spawn(move || {
                        let _ = connection(stream, &shared, commands);
                    });
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(10))
            }
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// Reads the request head without consuming it (the WebSocket handshake
/// reads it again) and returns its path.
fn peek_path(stream: &TcpStream) -> std::io::Result<Option<String>> {
    let start = Instant::now();
    let mut buf = vec![0u8; MAX_HEAD];
    loop {
        let n = stream.peek(&mut buf)?;
        if let Some(end) = buf[..n].windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]);
            let path = head
                .lines()
                .next()
                .and_then(|l| l.split_whitespace().nth(1))
                .map(str::to_string);
            return Ok(path);
        }
        if n == 0 || n == MAX_HEAD || start.elapsed() > HEAD_TIMEOUT {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn connection(
    stream: TcpStream,
    shared: &Shared,
    commands: Sender<Command>,
) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(HEAD_TIMEOUT))?;
    let Some(path) = peek_path(&stream)? else {
        return Ok(());
    };
    let path = path.split('?').next().unwrap_or("/").to_string();
    if path == "/ws" {
        return websocket(stream, shared, commands);
    }
    serve_file(stream, &path)
}

fn serve_file(mut stream: TcpStream, path: &str) -> std::io::Result<()> {
    // Consume the head we peeked.
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < MAX_HEAD {
        if stream.read(&mut byte)? == 0 {
            break;
        }
        head.push(byte[0]);
    }
    let response = match FILES.iter().find(|(p, _, _)| *p == path) {
        Some((_, kind, body)) => {
            let mut r = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
                body.len()
            )
            .into_bytes();
            r.extend_from_slice(body);
            r
        }
        None => {
            let body = format!("no file {path}\n");
            format!(
                "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .into_bytes()
        }
    };
    stream.write_all(&response)?;
    stream.flush()
}

/// One page: sends the table whenever it changes, then frames of the
/// bodies changed since the last frame it got, and the stats; reads its
/// commands in between.
fn websocket(stream: TcpStream, shared: &Shared, commands: Sender<Command>) -> std::io::Result<()> {
    use tungstenite::{Error, Message};
    let mut ws = tungstenite::accept(stream).map_err(|e| std::io::Error::other(e.to_string()))?;
    ws.get_ref().set_read_timeout(Some(POLL))?;
    let (reply_tx, reply_rx) = mpsc::channel::<String>();
    let (mut seen_serial, mut seen_table) = (0u64, u32::MAX);
    let mut frame = Vec::new();
    let closed = |e: &Error| !matches!(e, Error::Io(io) if matches!(io.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut));
    let to_io = |e: Error| std::io::Error::other(e.to_string());
    while !shared.stop.load(Ordering::Relaxed) {
        match ws.read() {
            Ok(Message::Text(text)) => match Command::parse(&text, &reply_tx) {
                Ok(cmd) => {
                    if commands.send(cmd).is_err() {
                        break;
                    }
                }
                Err(why) => {
                    let msg = serde_json::json!({"type": "error", "message": why}).to_string();
                    ws.send(Message::text(msg)).map_err(to_io)?;
                }
            },
            Ok(Message::Close(_)) => break,
            Ok(_) => {}
            Err(e) if closed(&e) => break,
            Err(_) => {}
        }
        while let Ok(reply) = reply_rx.try_recv() {
            ws.send(Message::text(reply)).map_err(to_io)?;
        }
        let (table, stats) = {
            let s = shared.snapshot.lock().unwrap_or_else(|e| e.into_inner());
            if s.serial == seen_serial {
                continue;
            }
            let new_table = s.table_version != seen_table;
            let changed = s
                .records
                .iter()
                .zip(&s.changed_at)
                .filter(|&(_, &at)| new_table || at > seen_serial)
                .filter_map(|(r, _)| r.as_ref());
            let changed: Vec<_> = changed.collect();
            protocol::encode_frame(
                s.step,
                s.table_version,
                changed.into_iter(),
                &s.contacts,
                &s.aabbs,
                &mut frame,
            );
            seen_serial = s.serial;
            let table = new_table.then(|| s.table.clone());
            seen_table = s.table_version;
            (table, s.stats.clone())
        };
        if let Some(table) = table {
            ws.send(Message::text(table.as_str())).map_err(to_io)?;
        }
        ws.send(Message::binary(frame.clone())).map_err(to_io)?;
        ws.send(Message::text(stats.as_str())).map_err(to_io)?;
    }
    let _ = ws.close(None);
    Ok(())
}
