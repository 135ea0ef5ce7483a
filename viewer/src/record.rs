//! `--record FILE` and `--replay FILE`: a run as the page saw it.
//!
//! The file is `MAGIC`, a `u32` version, then chunks, each a tag byte and
//! a `u32` length: `T` a body table (the JSON message the page gets), `F`
//! a frame in the stream's own binary layout (`protocol.rs`) holding the
//! bodies whose record changed since the frame before (so sleeping bodies
//! cost nothing after the step they fell asleep). A pyramid run of 600
//! steps takes about 30 MB, the rain after it has settled almost nothing
//! per step.

use crate::protocol::{self, BodyRecord, Frame};
use std::io::{BufWriter, Write};
use std::path::Path;

pub const MAGIC: &[u8; 8] = b"ARCHVREC";
pub const VERSION: u32 = 1;
const TABLE_TAG: u8 = b'T';
const FRAME_TAG: u8 = b'F';

/// Writes a run as it is stepped. Write errors are reported once and end
/// the recording; they never stop the simulation.
pub struct Recorder {
    out: Option<BufWriter<Box<dyn Write + Send>>>,
    /// The records of the last frame written (deltas are against these).
    last: Vec<Option<BodyRecord>>,
    last_table: u32,
    scratch: Vec<u8>,
    changed: Vec<BodyRecord>,
}

impl Recorder {
    pub fn create(path: &Path) -> std::io::Result<Self> {
        let file = std::fs::File::create(path)?;
        Self::to_writer(Box::new(file))
    }

    pub fn to_writer(w: Box<dyn Write + Send>) -> std::io::Result<Self> {
        let mut out = BufWriter::new(w);
        out.write_all(MAGIC)?;
        out.write_all(&VERSION.to_le_bytes())?;
        Ok(Self {
            out: Some(out),
            last: Vec::new(),
            last_table: 0,
            scratch: Vec::new(),
            changed: Vec::new(),
        })
    }

    fn chunk(&mut self, tag: u8, bytes_from_scratch: bool, text: &str) {
        let Some(out) = &mut self.out else { return };
        let body = if bytes_from_scratch {
            &self.scratch[..]
        } else {
            text.as_bytes()
        };
        let r = out
            .write_all(&[tag])
            .and_then(|_| out.write_all(&(body.len() as u32).to_le_bytes()))
            .and_then(|_| out.write_all(body));
        if let Err(e) = r {
            eprintln!("viewer: recording stopped: {e}");
            self.out = None;
        }
    }

    /// A new body table (before the frames that use it).
    pub fn table(&mut self, json: &str) {
        self.chunk(TABLE_TAG, false, json);
    }

    /// The state after `step`: writes the records that changed since the
    /// last frame (all of them under a new table).
    pub fn frame(&mut self, step: u32, table_version: u32, records: &[Option<BodyRecord>]) {
        let new_table = table_version != self.last_table;
        self.changed.clear();
        for (i, r) in records.iter().enumerate() {
            let Some(r) = r else { continue };
            let same = !new_table
                && self
                    .last
                    .get(i)
                    .copied()
                    .flatten()
                    .is_some_and(|l| l.same_bits(r));
            if !same {
                self.changed.push(*r);
            }
        }
        self.last.clear();
        self.last.extend_from_slice(records);
        self.last_table = table_version;
        let mut scratch = std::mem::take(&mut self.scratch);
        protocol::encode_frame(
            step,
            table_version,
            self.changed.iter(),
            &[],
            &[],
            &mut scratch,
        );
        self.scratch = scratch;
        self.chunk(FRAME_TAG, true, "");
    }

    pub fn flush(&mut self) {
        if let Some(out) = &mut self.out {
            if let Err(e) = out.flush() {
                eprintln!("viewer: recording stopped: {e}");
                self.out = None;
            }
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.flush();
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Chunk {
    Table(String),
    Frame(Frame),
}

/// A recording read back whole.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    pub chunks: Vec<Chunk>,
}

impl Recording {
    pub fn open(path: &Path) -> Result<Self, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Self::parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn parse(bytes: &[u8]) -> Result<Self, String> {
        let mut r = protocol::Reader { bytes, at: 0 };
        if r.bytes(8) != Some(&MAGIC[..]) {
            return Err("not an archipelago viewer recording".into());
        }
        match r.u32() {
            Some(VERSION) => {}
            v => {
                return Err(format!(
                    "recording version {v:?}, this viewer reads {VERSION}"
                ))
            }
        }
        let mut chunks = Vec::new();
        while r.at < bytes.len() {
            let at = r.at;
            let bad = || format!("truncated or corrupt chunk at byte {at}");
            let tag = r.bytes(1).ok_or_else(bad)?[0];
            let len = r.u32().ok_or_else(bad)? as usize;
            let body = r.bytes(len).ok_or_else(bad)?;
            chunks.push(match tag {
                TABLE_TAG => Chunk::Table(String::from_utf8(body.to_vec()).map_err(|_| bad())?),
                FRAME_TAG => Chunk::Frame(protocol::decode_frame(body).ok_or_else(bad)?),
                _ => return Err(bad()),
            });
        }
        Ok(Self { chunks })
    }

    pub fn frames(&self) -> usize {
        self.chunks
            .iter()
            .filter(|c| matches!(c, Chunk::Frame(_)))
            .count()
    }
}
