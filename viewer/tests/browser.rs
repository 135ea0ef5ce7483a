//! The page in a real browser: headless Chromium (Debian's `chromium`
//! package, which `.ci/run` installs) opens the viewer, driven over the
//! DevTools protocol; the page must count the pyramid's 1241 bodies, receive
//! frames, and draw something (a share of the screenshot's pixels differs
//! from the background). Skipped, saying so, only where no Chromium is
//! installed. Screenshots land in `target/viewer-screenshots/` (the ones in
//! `docs/` were taken by this test).

mod common;

use archipelago_viewer::{Options, Viewer};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tungstenite::{Message, WebSocket};

/// The page's background, `#1d2127`.
const BACKGROUND: [u8; 3] = [0x1d, 0x21, 0x27];
/// A pixel differs from the background when a channel is this far off
/// (beyond antialiasing and dithering noise).
const DIFFERS_BY: i32 = 24;
/// Share of the screenshot that must differ: the pyramid and its floor
/// make 48% of the view with the camera the page fits, the two panels'
/// text and plot alone 4.2% (both measured on
/// `docs/viewer-pyramid-split.png`).
const MIN_DRAWN_SHARE: f64 = 0.15;

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return Some(p.into());
    }
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

struct Browser {
    child: Child,
    ws: WebSocket<TcpStream>,
    next_id: u64,
    _profile: TempDir,
}

struct TempDir(PathBuf);
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Browser {
    fn launch(bin: &Path) -> Self {
        let profile =
            std::env::temp_dir().join(format!("archipelago-chromium-{}", std::process::id()));
        std::fs::create_dir_all(&profile).unwrap();
        let mut child = Command::new(bin)
            .args([
                "--headless",
                "--no-sandbox",
                "--use-angle=swiftshader",
                "--enable-unsafe-swiftshader",
                "--ignore-gpu-blocklist",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--window-size=1280,800",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Chromium prints its DevTools address on stderr.
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    let _ = tx.send(url.trim().to_string());
                }
            }
        });
        let url = rx
            .recv_timeout(common::PATIENCE)
            .expect("Chromium printed no DevTools address");
        let hostport = url
            .trim_start_matches("ws://")
            .split('/')
            .next()
            .unwrap()
            .to_string();
        let stream = TcpStream::connect(hostport).unwrap();
        stream.set_read_timeout(Some(common::PATIENCE)).unwrap();
        let (ws, _) = tungstenite::client(url.as_str(), stream).unwrap();
        Self {
            child,
            ws,
            next_id: 0,
            _profile: TempDir(profile),
        }
    }

    /// One DevTools call (on a page's session if given): its result.
    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        self.ws.send(Message::text(msg.to_string())).unwrap();
        loop {
            let Message::Text(t) = self.ws.read().unwrap() else {
                continue;
            };
            let v: Value = serde_json::from_str(&t).unwrap();
            if v["id"] == id {
                assert!(v["error"].is_null(), "{method}: {}", v["error"]);
                return v["result"].clone();
            }
        }
    }

    /// Opens `url` in a new page; returns its session.
    fn open(&mut self, url: &str) -> String {
        let target = self.call(None, "Target.createTarget", json!({"url": url}));
        let attached = self.call(
            None,
            "Target.attachToTarget",
            json!({"targetId": target["targetId"], "flatten": true}),
        );
        attached["sessionId"].as_str().unwrap().to_string()
    }

    fn eval(&mut self, session: &str, expression: &str) -> Value {
        let r = self.call(
            Some(session),
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        r["result"]["value"].clone()
    }

    /// Polls the page's `viewerState` until `done` holds.
    fn wait_for(&mut self, session: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        loop {
            let s = self.eval(session, "JSON.stringify(window.viewerState || null)");
            let s: Value =
                serde_json::from_str(s.as_str().unwrap_or("null")).unwrap_or(Value::Null);
            if done(&s) {
                return s;
            }
            assert!(
                start.elapsed() < common::PATIENCE * 2,
                "page never showed {what}: {s}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// A PNG of the page, decoded: (width, height, RGB bytes), and the file.
    fn screenshot(&mut self, session: &str) -> (usize, usize, Vec<u8>, Vec<u8>) {
        let r = self.call(
            Some(session),
            "Page.captureScreenshot",
            json!({"format": "png"}),
        );
        let png_bytes = base64_decode(r["data"].as_str().unwrap());
        let decoder = png::Decoder::new(&png_bytes[..]);
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        let channels = info.color_type.samples();
        let rgb = buf[..info.buffer_size()]
            .chunks(channels)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect();
        (info.width as usize, info.height as usize, rgb, png_bytes)
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn base64_decode(s: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let digits: Vec<u8> = s.bytes().filter(|&c| c != b'=').map(value).collect();
    digits
        .chunks(4)
        .flat_map(|q| {
            let n = q
                .iter()
                .enumerate()
                .fold(0u32, |n, (k, &d)| n | (d as u32) << (18 - 6 * k));
            let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
            bytes.into_iter().take(q.len() - 1)
        })
        .collect()
}

/// Share of pixels that differ from the background.
fn drawn_share(rgb: &[u8]) -> f64 {
    let differs = rgb
        .chunks(3)
        .filter(|p| (0..3).any(|c| (p[c] as i32 - BACKGROUND[c] as i32).abs() > DIFFERS_BY))
        .count();
    differs as f64 / (rgb.len() / 3) as f64
}

fn save(name: &str, png: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/viewer-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, png).unwrap();
    path
}

/// After a few render frames, a screenshot of `page` (saved as `name`)
/// must not be blank.
fn assert_drawn(b: &mut Browser, page: &str, name: &str) {
    std::thread::sleep(Duration::from_millis(500));
    let (w, h, rgb, png) = b.screenshot(page);
    let share = drawn_share(&rgb);
    let path = save(name, &png);
    println!(
        "{name}: {w}x{h}, {:.1}% of pixels drawn ({})",
        100.0 * share,
        path.display()
    );
    assert!(
        share >= MIN_DRAWN_SHARE,
        "{name}: a blank page? {:.1}% drawn",
        100.0 * share
    );
}

#[test]
fn chromium_draws_the_pyramid_and_counts_its_bodies() {
    let Some(bin) = chromium() else {
        eprintln!(
            "SKIPPED: no Chromium found (/usr/bin/chromium; `apt-get install chromium`, which .ci/run does, or set CHROMIUM)"
        );
        return;
    };
    let viewer = Viewer::start(&Options {
        scene: "pyramid".into(),
        threads: Some(2),
        // the page's `run_to` starts it, so step 90 is the one it shows
        paused: true,
        ..Options::default()
    })
    .unwrap();
    let mut b = Browser::launch(&bin);

    // The pyramid, coloured by split, after it has landed.
    let page = b.open(&format!("{}?color=split&run_to=90", viewer.url()));
    let s = b.wait_for(&page, "the pyramid at step 90", |s| {
        s["bodies"] == 1241 && s["step"] == 90 && s["frames"].as_u64() >= Some(2)
    });
    assert_eq!(s["error"], "", "{s}");
    let shown = b.eval(&page, "document.getElementById('bodies').textContent");
    assert_eq!(shown, "1241", "the page's body count");
    assert_drawn(&mut b, &page, "pyramid-split.png");

    // A click on the pyramid inspects the cube under the mouse (a ray the
    // kernel casts); a shift-click shoots a ball, a new body.
    let click = |b: &mut Browser, modifiers: u32| {
        for kind in ["mousePressed", "mouseReleased"] {
            b.call(
                Some(&page),
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": 640, "y": 470, "button": "left", "clickCount": 1, "modifiers": modifiers}),
            );
        }
    };
    click(&mut b, 0);
    let s = b.wait_for(&page, "an inspected body", |s| s["picked"].is_number());
    let picked = s["picked"].as_i64().unwrap();
    assert!((1..1241).contains(&picked), "picked a cube: {s}");
    let text = b.eval(&page, "document.getElementById('inspect').textContent");
    let text = text.as_str().unwrap();
    assert!(
        text.contains(&format!("table index {picked}")) && text.contains("velocity"),
        "{text}"
    );
    println!("clicked: {}", text.lines().next().unwrap());
    click(&mut b, 8); // shift
    b.wait_for(&page, "the shot ball", |s| s["bodies"] == 1242);
    // Contacts and boxes on request.
    let page = b.open(&format!(
        "{}?scene=towers&run_to=30&contacts=1&aabbs=1&color=island",
        viewer.url()
    ));
    let s = b.wait_for(&page, "the towers with contacts", |s| {
        s["scene"] == "towers" && s["step"] == 30
    });
    assert!(s["contactPoints"].as_u64() > Some(0), "{s}");
    assert_eq!(s["aabbs"], s["bodies"], "{s}");
    assert_drawn(&mut b, &page, "towers-contacts.png");

    // The rain after 300 steps, coloured by sleep state.
    let page = b.open(&format!(
        "{}?scene=rain&run_to=300&color=sleep",
        viewer.url()
    ));
    let s = b.wait_for(&page, "the rain at step 300", |s| {
        s["scene"] == "rain" && s["step"] == 300
    });
    assert_eq!(s["bodies"], 4097, "{s}");
    assert_drawn(&mut b, &page, "rain-300.png");

    // The compounds (tables, dumbbells, Ls, maces: each drawn child by
    // child) after they have landed.
    let page = b.open(&format!("{}?scene=compounds&run_to=150", viewer.url()));
    let s = b.wait_for(&page, "the compounds at step 150", |s| {
        s["scene"] == "compounds" && s["step"] == 150
    });
    assert_eq!(s["bodies"], 501, "{s}");
    assert_eq!(s["error"], "", "{s}");
    assert_drawn(&mut b, &page, "compounds-150.png");
}
