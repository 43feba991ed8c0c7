//! ZooKeeper's snapshot of its data tree, read one node at a time.
//!
//! A snapshot (`version-2/snapshot.<last zxid in hex>`, from 3.6 on also
//! `.gz` or `.snappy` when `zookeeper.snapshot.compression.method` says so)
//! is, once uncompressed: a header (the magic `ZKSN`, the format version
//! and the database id); the sessions (a count, then each id and timeout);
//! the ACL cache (a count, then each id and its ACLs); then every node
//! depth first, the root first under the empty path, each as its path, its
//! data, its ACL id and its persisted stat; a path of `/` ends the tree.
//! The Adler-32 checksum of every byte before it follows, with another `/`;
//! 3.6 and later then add the tree's digest and 3.7 the last zxid, each
//! sealed the same way, which history does not need.
//!
//! The tree is streamed: one node's path and data are held at a time, in
//! buffers reused from node to node, so a snapshot of any size is read in
//! the memory of its largest node, bounded before it is allocated. Counts
//! drive loops, never allocations. A snapshot cut off or damaged is an
//! error naming the offset in its contents where the damage was found.
//!
//! The server writes the snapshot while it goes on applying transactions
//! (it is "fuzzy"): a node may already show transactions logged after the
//! zxid in the snapshot's name. The replay after it tolerates that.
//!
//! gzip is read with `flate2`. Snappy is xerial snappy-java's stream
//! format (what `SnappyOutputStream` writes): a 16-byte header (the magic
//! `\x82SNAPPY\0`, a version and the oldest compatible version), then
//! chunks, each a big-endian length and that many bytes of raw snappy; a
//! header may reappear where streams were concatenated. Raw snappy is
//! decoded with `snap`.

use std::cell::Cell;
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::rc::Rc;

use super::txnlog::{Adler32, MAX_RECORD};
use crate::zk;

/// The magic number at the start of every snapshot.
const SNAP_MAGIC: [u8; 4] = *b"ZKSN";

/// The magic at the start of xerial's snappy stream.
const SNAPPY_MAGIC: [u8; 8] = *b"\x82SNAPPY\0";

/// The largest chunk of xerial's stream read, compressed or not: it writes
/// 32 KiB chunks by default; a length past this is damage.
const MAX_CHUNK: usize = 16 << 20;

/// How a snapshot file is compressed, by its name's suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Compression {
    None,
    Gzip,
    Snappy,
}

/// The zxid a snapshot's name says it was taken at, and its compression
/// (`snapshot.1a2b`, `snapshot.1a2b.gz`, `snapshot.1a2b.snappy`).
pub(crate) fn snapshot_name(file: &Path) -> Option<(u64, Compression)> {
    let rest = file.file_name()?.to_str()?.strip_prefix("snapshot.")?;
    let (hex, compression) = match rest.split_once('.') {
        None => (rest, Compression::None),
        Some((hex, "gz")) => (hex, Compression::Gzip),
        Some((hex, "snappy")) => (hex, Compression::Snappy),
        Some(_) => return None,
    };
    Some((u64::from_str_radix(hex, 16).ok()?, compression))
}

/// Where a snapshot is damaged, and how.
#[derive(Debug)]
pub(crate) struct SnapError {
    /// The offset in the snapshot's (uncompressed) contents.
    pub offset: u64,
    /// How far into a compressed file its reading had come.
    pub compressed_at: Option<u64>,
    pub problem: SnapProblem,
}

/// What is wrong with a snapshot.
#[derive(Debug)]
pub(crate) enum SnapProblem {
    /// No `ZKSN` header.
    NotASnapshot,
    /// The contents end before the tree's end.
    CutOff,
    /// A length or count that no snapshot holds.
    BadLength(&'static str, i64),
    /// The tree's bytes do not match the checksum after them.
    Checksum { stored: u64, computed: u32 },
    /// The compressed stream cannot be decompressed.
    Compressed(String),
    /// The file could not be read.
    Io(io::Error),
}

impl fmt::Display for SnapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.problem_text(f)?;
        match self.compressed_at {
            Some(at) => write!(f, " (uncompressed; at byte {at} of the compressed file)"),
            None => Ok(()),
        }
    }
}

impl SnapError {
    fn at(offset: u64, problem: SnapProblem) -> SnapError {
        SnapError {
            offset,
            compressed_at: None,
            problem,
        }
    }

    fn problem_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let offset = self.offset;
        match &self.problem {
            SnapProblem::NotASnapshot => write!(f, "not a ZooKeeper snapshot (no ZKSN header)"),
            SnapProblem::CutOff => write!(f, "the snapshot is cut off at offset {offset}"),
            SnapProblem::BadLength(what, len) => write!(
                f,
                "the snapshot is corrupt at offset {offset}: a {what} of {len}"
            ),
            SnapProblem::Checksum { stored, computed } => write!(
                f,
                "the snapshot is corrupt: its checksum at offset {offset} is {stored:#x}, \
                 its bytes sum to {computed:#010x}"
            ),
            SnapProblem::Compressed(why) => write!(
                f,
                "the snapshot's compressed stream is corrupt after offset {offset}: {why}"
            ),
            SnapProblem::Io(err) => write!(f, "reading the snapshot at offset {offset}: {err}"),
        }
    }
}

/// One node of the tree, borrowed from the reader until the next.
pub(crate) struct SnapNode<'a> {
    pub path: &'a str,
    pub data: &'a [u8],
    pub stat: zk::Stat,
}

/// A snapshot being read.
pub(crate) struct Snapshot {
    input: Checked<Box<dyn BufRead>>,
    /// The last node's path and data, in buffers reused.
    path: String,
    data: Vec<u8>,
    /// Set once the tree's end and checksum were read.
    ended: bool,
    /// How many of the file's own bytes were read.
    read: Rc<Cell<u64>>,
    compressed: bool,
}

impl Snapshot {
    /// Opens `file`, read through the decompression its name says, and
    /// reads it up to its first node: header, sessions and ACLs.
    pub(crate) fn open(file: &Path) -> Result<Snapshot, SnapError> {
        let at_start = |problem| SnapError::at(0, problem);
        let compression = snapshot_name(file).map_or(Compression::None, |(_, c)| c);
        let read = Rc::new(Cell::new(0));
        let raw = Counted {
            input: File::open(file).map_err(|err| at_start(SnapProblem::Io(err)))?,
            read: read.clone(),
        };
        let raw = BufReader::with_capacity(1 << 16, raw);
        let contents: Box<dyn BufRead> = match compression {
            Compression::None => Box::new(raw),
            Compression::Gzip => Box::new(BufReader::with_capacity(
                1 << 16,
                flate2::bufread::MultiGzDecoder::new(raw),
            )),
            Compression::Snappy => {
                Box::new(BufReader::with_capacity(1 << 16, XerialSnappy::new(raw)?))
            }
        };
        let mut snapshot = Snapshot {
            input: Checked {
                input: contents,
                offset: 0,
                adler: Adler32::new(),
            },
            path: String::new(),
            data: Vec::new(),
            ended: false,
            read,
            compressed: compression != Compression::None,
        };
        snapshot.header().map_err(|err| snapshot.locate(err))?;
        Ok(snapshot)
    }

    /// `err`, with how far into the file a compressed one's reading came.
    fn locate(&self, err: SnapError) -> SnapError {
        SnapError {
            compressed_at: self.compressed.then(|| self.read.get()),
            ..err
        }
    }

    /// How many bytes of the file (compressed, when it is) were read.
    pub(crate) fn file_offset(&self) -> u64 {
        self.read.get()
    }

    /// Reads the header, the sessions and the ACL cache.
    fn header(&mut self) -> Result<(), SnapError> {
        let input = &mut self.input;
        let mut magic = [0u8; 4];
        input.fill(&mut magic)?;
        if magic != SNAP_MAGIC {
            return input.fail(SnapProblem::NotASnapshot);
        }
        input.int()?;
        input.long()?;
        for _ in 0..input.count("session count")? {
            input.long()?;
            input.int()?;
        }
        for _ in 0..input.count("ACL cache size")? {
            input.long()?;
            for _ in 0..input.count("ACL count")? {
                input.int()?;
                input.skip_buffer("ACL scheme")?;
                input.skip_buffer("ACL id")?;
            }
        }
        Ok(())
    }

    /// The next node; `None` once the tree has ended and its checksum
    /// matched.
    pub(crate) fn next_node(&mut self) -> Result<Option<SnapNode<'_>>, SnapError> {
        match self.read_node() {
            Ok(Some(stat)) => Ok(Some(SnapNode {
                path: &self.path,
                data: &self.data,
                stat,
            })),
            Ok(None) => Ok(None),
            Err(err) => Err(self.locate(err)),
        }
    }

    /// Reads the next node's path and data into `path` and `data`; its
    /// stat, or `None` at the tree's end.
    fn read_node(&mut self) -> Result<Option<zk::Stat>, SnapError> {
        if self.ended {
            return Ok(None);
        }
        let input = &mut self.input;
        input.buffer_into("path", &mut self.data)?;
        if self.data == b"/" {
            self.ended = true;
            input.seal()?;
            return Ok(None);
        }
        self.path.clear();
        self.path.push_str(&String::from_utf8_lossy(&self.data));
        input.buffer_into("data", &mut self.data)?;
        input.long()?;
        let czxid = input.long()?;
        let mzxid = input.long()?;
        let ctime = input.long()?;
        let mtime = input.long()?;
        let version = input.int()?;
        let cversion = input.int()?;
        let aversion = input.int()?;
        let ephemeral_owner = input.long()?;
        let pzxid = input.long()?;
        Ok(Some(zk::Stat {
            czxid,
            mzxid,
            pzxid,
            ctime,
            mtime,
            version,
            cversion,
            aversion,
            ephemeral_owner,
            data_length: self.data.len() as i32,
            num_children: 0,
        }))
    }
}

/// The snapshot's contents read field by field, with their offset and
/// running checksum.
struct Checked<R> {
    input: R,
    offset: u64,
    adler: Adler32,
}

impl<R: BufRead> Checked<R> {
    fn fail<T>(&self, problem: SnapProblem) -> Result<T, SnapError> {
        Err(SnapError::at(self.offset, problem))
    }

    /// Fills `buf` from the contents, or fails naming where they end.
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), SnapError> {
        let mut filled = 0;
        while filled < buf.len() {
            let available = match self.input.fill_buf() {
                Ok(available) => available,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return self.fail(read_problem(err)),
            };
            if available.is_empty() {
                self.offset += filled as u64;
                return self.fail(SnapProblem::CutOff);
            }
            let n = available.len().min(buf.len() - filled);
            buf[filled..filled + n].copy_from_slice(&available[..n]);
            self.input.consume(n);
            filled += n;
        }
        self.adler.update(buf);
        self.offset += buf.len() as u64;
        Ok(())
    }

    fn int(&mut self) -> Result<i32, SnapError> {
        let mut bytes = [0; 4];
        self.fill(&mut bytes)?;
        Ok(i32::from_be_bytes(bytes))
    }

    fn long(&mut self) -> Result<i64, SnapError> {
        let mut bytes = [0; 8];
        self.fill(&mut bytes)?;
        Ok(i64::from_be_bytes(bytes))
    }

    /// A count; -1 (a null vector) reads as none.
    fn count(&mut self, what: &'static str) -> Result<u32, SnapError> {
        let at = self.offset;
        match self.int()? {
            -1 => Ok(0),
            n if n < 0 => Err(SnapError::at(at, SnapProblem::BadLength(what, n.into()))),
            n => Ok(n as u32),
        }
    }

    /// A length-prefixed buffer into `out` (a null one, -1, reads empty);
    /// no longer than a record can be.
    fn buffer_into(&mut self, what: &'static str, out: &mut Vec<u8>) -> Result<(), SnapError> {
        let at = self.offset;
        let len = match self.int()? {
            -1 => 0,
            len if len < 0 || len as usize > MAX_RECORD => {
                return Err(SnapError::at(at, SnapProblem::BadLength(what, len.into())));
            }
            len => len as usize,
        };
        out.resize(len, 0);
        self.fill(out)
    }

    fn skip_buffer(&mut self, what: &'static str) -> Result<(), SnapError> {
        let mut skipped = Vec::new();
        self.buffer_into(what, &mut skipped)
    }

    /// The checksum after the tree, which must be that of every byte
    /// before it.
    fn seal(&mut self) -> Result<(), SnapError> {
        let computed = self.adler.value();
        let at = self.offset;
        let stored = self.long()? as u64;
        if stored != u64::from(computed) {
            return Err(SnapError::at(
                at,
                SnapProblem::Checksum { stored, computed },
            ));
        }
        Ok(())
    }
}

/// A decoder's complaint is the compressed stream's damage; anything else
/// is the file's.
fn read_problem(err: io::Error) -> SnapProblem {
    match err.kind() {
        io::ErrorKind::UnexpectedEof => SnapProblem::CutOff,
        io::ErrorKind::InvalidData | io::ErrorKind::InvalidInput => {
            SnapProblem::Compressed(err.to_string())
        }
        _ => SnapProblem::Io(err),
    }
}

/// The file's bytes, counted as they are read.
struct Counted {
    input: File,
    read: Rc<Cell<u64>>,
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.input.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

/// xerial snappy-java's stream, decompressed one chunk at a time.
struct XerialSnappy<R> {
    input: R,
    decoder: snap::raw::Decoder,
    compressed: Vec<u8>,
    chunk: Vec<u8>,
    /// How much of `chunk` was handed out.
    at: usize,
}

fn invalid(why: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, why)
}

impl<R: Read> XerialSnappy<R> {
    fn new(mut input: R) -> Result<XerialSnappy<R>, SnapError> {
        let mut header = [0u8; 16];
        let not_snappy = || {
            SnapError::at(
                0,
                SnapProblem::Compressed("no snappy stream header".to_owned()),
            )
        };
        input.read_exact(&mut header).map_err(|_| not_snappy())?;
        if header[..8] != SNAPPY_MAGIC {
            return Err(not_snappy());
        }
        Ok(XerialSnappy {
            input,
            decoder: snap::raw::Decoder::new(),
            compressed: Vec::new(),
            chunk: Vec::new(),
            at: 0,
        })
    }

    /// Reads and decompresses the next chunk; false at the stream's end.
    fn next_chunk(&mut self) -> io::Result<bool> {
        let mut len = [0u8; 4];
        loop {
            match self.input.read_exact(&mut len) {
                Ok(()) => {}
                Err(err) if err.kind() == io::ErrorKind::UnexpectedEof => return Ok(false),
                Err(err) => return Err(err),
            }
            if len != SNAPPY_MAGIC[..4] {
                break;
            }
            // Another stream's header, where streams were concatenated:
            // its remaining 12 bytes, then its chunks.
            let mut rest = [0u8; 12];
            self.input.read_exact(&mut rest)?;
            if rest[..4] != SNAPPY_MAGIC[4..] {
                return Err(invalid("a damaged snappy stream header".to_owned()));
            }
        }
        let len = i32::from_be_bytes(len);
        if len < 0 || len as usize > MAX_CHUNK {
            return Err(invalid(format!("a snappy chunk of {len} bytes")));
        }
        self.compressed.resize(len as usize, 0);
        self.input.read_exact(&mut self.compressed)?;
        let size =
            snap::raw::decompress_len(&self.compressed).map_err(|err| invalid(err.to_string()))?;
        if size > MAX_CHUNK {
            return Err(invalid(format!(
                "a snappy chunk of {size} bytes uncompressed"
            )));
        }
        self.chunk.resize(size, 0);
        let size = self
            .decoder
            .decompress(&self.compressed, &mut self.chunk)
            .map_err(|err| invalid(err.to_string()))?;
        self.chunk.truncate(size);
        self.at = 0;
        Ok(true)
    }
}

impl<R: Read> Read for XerialSnappy<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at == self.chunk.len() {
            if !self.next_chunk()? {
                return Ok(0);
            }
        }
        let n = buf.len().min(self.chunk.len() - self.at);
        buf[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    /// A node for [`write_snapshot`]: path, data, ephemeral owner, czxid,
    /// ctime.
    pub(crate) type TestNode<'a> = (&'a str, &'a [u8], i64, i64, i64);

    /// A snapshot's contents as ZooKeeper writes them, uncompressed, with
    /// one session and one cached ACL, sealed, then a 3.6 digest.
    pub(crate) fn write_snapshot(nodes: &[TestNode<'_>]) -> Vec<u8> {
        let mut out = SNAP_MAGIC.to_vec();
        out.extend(2i32.to_be_bytes());
        out.extend((-1i64).to_be_bytes());
        out.extend(1i32.to_be_bytes());
        out.extend(0x77i64.to_be_bytes());
        out.extend(30000i32.to_be_bytes());
        out.extend(1i32.to_be_bytes());
        out.extend(1i64.to_be_bytes());
        out.extend(1i32.to_be_bytes());
        out.extend(31i32.to_be_bytes());
        for text in ["world", "anyone"] {
            out.extend((text.len() as i32).to_be_bytes());
            out.extend(text.as_bytes());
        }
        let string = |out: &mut Vec<u8>, bytes: &[u8]| {
            out.extend((bytes.len() as i32).to_be_bytes());
            out.extend(bytes);
        };
        for (path, data, owner, czxid, ctime) in nodes {
            string(&mut out, path.as_bytes());
            string(&mut out, data);
            out.extend(1i64.to_be_bytes());
            for long in [*czxid, *czxid, *ctime, *ctime] {
                out.extend(long.to_be_bytes());
            }
            out.extend([0u8; 12]);
            out.extend(owner.to_be_bytes());
            out.extend(czxid.to_be_bytes());
        }
        string(&mut out, b"/");
        let sum = Adler32::new();
        let mut sum = sum;
        sum.update(&out);
        out.extend(i64::from(sum.value()).to_be_bytes());
        string(&mut out, b"/");
        out.extend([0u8; 20]);
        out
    }

    /// `contents` in xerial's snappy stream, in chunks of `chunk` bytes.
    pub(crate) fn xerial(contents: &[u8], chunk: usize) -> Vec<u8> {
        let mut out = SNAPPY_MAGIC.to_vec();
        out.extend(1i32.to_be_bytes());
        out.extend(1i32.to_be_bytes());
        let mut encoder = snap::raw::Encoder::new();
        for piece in contents.chunks(chunk) {
            let compressed = encoder.compress_vec(piece).unwrap();
            out.extend((compressed.len() as i32).to_be_bytes());
            out.extend(compressed);
        }
        out
    }

    pub(crate) fn gzip(contents: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(contents).unwrap();
        encoder.finish().unwrap()
    }

    fn sample() -> Vec<u8> {
        write_snapshot(&[
            ("", b"", 0, 0, 0),
            ("/l", b"", 0, 2, 1000),
            ("/l/lock-0000000001", b"me", 0x77, 3, 1001),
        ])
    }

    /// A node as read: path, data, ephemeral owner.
    type ReadNode = (String, Vec<u8>, i64);

    /// Every node of `bytes` written as `name`, and the error.
    fn read(name: &str, bytes: &[u8]) -> (Vec<ReadNode>, Option<SnapError>) {
        let dir = std::env::temp_dir().join(format!("zklock-snap-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir(&dir).unwrap();
        let file = dir.join(name);
        std::fs::write(&file, bytes).unwrap();
        let mut nodes = Vec::new();
        let result = (|| {
            let mut snapshot = Snapshot::open(&file)?;
            while let Some(node) = snapshot.next_node()? {
                nodes.push((
                    node.path.to_owned(),
                    node.data.to_vec(),
                    node.stat.ephemeral_owner,
                ));
            }
            Ok(())
        })();
        std::fs::remove_dir_all(&dir).unwrap();
        (nodes, result.err())
    }

    #[test]
    fn names_give_the_zxid_and_compression() {
        let name = |text: &str| snapshot_name(Path::new(text));
        assert_eq!(name("snapshot.1a"), Some((0x1a, Compression::None)));
        assert_eq!(name("snapshot.1a.gz"), Some((0x1a, Compression::Gzip)));
        assert_eq!(
            name("snapshot.1a.snappy"),
            Some((0x1a, Compression::Snappy))
        );
        assert_eq!(name("snapshot.1a.zip"), None);
        assert_eq!(name("log.1a"), None);
    }

    #[test]
    fn plain_gzip_and_snappy_snapshots_read_alike() {
        let contents = sample();
        let expected = read("snapshot.3", &contents);
        assert!(expected.1.is_none(), "{:?}", expected.1);
        assert_eq!(expected.0.len(), 3);
        assert_eq!(
            expected.0[2],
            ("/l/lock-0000000001".to_owned(), b"me".to_vec(), 0x77)
        );
        for (name, bytes) in [
            ("snapshot.3.gz", gzip(&contents)),
            ("snapshot.3.snappy", xerial(&contents, 32)),
        ] {
            let (nodes, err) = read(name, &bytes);
            assert!(err.is_none(), "{name}: {err:?}");
            assert_eq!(nodes, expected.0, "{name}");
        }
        // Concatenated snappy streams read as one.
        let mut twice = xerial(&contents[..50], 16);
        twice.extend(xerial(&contents[50..], 16));
        let (nodes, err) = read("snapshot.3.snappy", &twice);
        assert!(err.is_none(), "{err:?}");
        assert_eq!(nodes, expected.0);
    }

    #[test]
    fn a_cut_off_snapshot_names_the_offset_in_every_form() {
        let contents = sample();
        // Where the tree's end marker is: cutting anywhere before it and
        // its checksum must fail.
        let sealed = contents.len() - 20 - 4 - 1;
        for cut in 0..sealed {
            for (name, bytes) in [
                ("snapshot.3", contents[..cut].to_vec()),
                ("snapshot.3.snappy", xerial(&contents[..cut], 40)),
                ("snapshot.3.gz", gzip(&contents[..cut])),
            ] {
                let (_, err) = read(name, &bytes);
                let err = err.unwrap_or_else(|| panic!("{name} cut at {cut}: no error"));
                assert!(
                    matches!(err.problem, SnapProblem::CutOff | SnapProblem::NotASnapshot),
                    "{name} cut at {cut}: {err}"
                );
                assert!(err.offset <= cut as u64, "{name} cut at {cut}: {err}");
            }
        }
        // A compressed stream cut part-way through.
        let snappy = xerial(&contents, 40);
        let (_, err) = read("snapshot.3.snappy", &snappy[..snappy.len() - 3]);
        assert!(matches!(err.unwrap().problem, SnapProblem::CutOff));
        let gz = gzip(&contents);
        let (_, err) = read("snapshot.3.gz", &gz[..gz.len() / 2]);
        assert!(err.is_some());
    }

    #[test]
    fn a_changed_byte_fails_the_checksum_at_the_tree_end() {
        let mut contents = sample();
        let at = contents.len() - 40;
        contents[at] ^= 0x01;
        let (_, err) = read("snapshot.3", &contents);
        let err = err.expect("an error");
        assert!(matches!(err.problem, SnapProblem::Checksum { .. }), "{err}");
        assert!(err.to_string().contains("offset"), "{err}");
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(64))]
            #[test]
            fn damaged_snapshots_never_panic(flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8), snappy in any::<bool>()) {
                let mut bytes = sample();
                if snappy {
                    bytes = xerial(&bytes, 24);
                }
                for (at, value) in flips {
                    let at = at % bytes.len();
                    bytes[at] = value;
                }
                let name = if snappy { "snapshot.3.snappy" } else { "snapshot.3" };
                let _ = read(name, &bytes);
            }
        }
    }
}
