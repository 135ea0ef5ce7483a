//! # archipelago-viewer
//!
//! Watch a scene in the browser. The binary steps a world of
//! `archipelago::scenes` on the pinned pool and serves a page on 127.0.0.1
//! that draws it with three.js (vendored, embedded: no network at run
//! time), streaming poses over a WebSocket:
//!
//! ```text
//! cargo run --release -p archipelago-viewer -- --scene pyramid
//! ```
//!
//! The page: orbit camera, play / pause / step / speed, any scene, colour
//! by body, island, split or sleep state, contacts and boxes, click a body
//! to inspect it (a ray cast by the kernel), shift-click to shoot a ball,
//! and a live panel of the last steps' phase costs.
//!
//! - `protocol.rs`: the body table and the binary frames (deltas);
//! - `sim.rs`: the stepping thread, live or replaying, and its commands;
//! - `record.rs`: `--record` / `--replay` files;
//! - `server.rs`: HTTP for the page, WebSocket for the stream.

pub mod protocol;
pub mod record;
pub mod server;
pub mod sim;

pub use server::{Options, Viewer};
