//! ZooKeeper's transaction log, read one record at a time.
//!
//! A log file (`version-2/log.<first zxid in hex>`) starts with a header:
//! the magic `ZKLG`, the format version and the database id. Each record
//! after it is the Adler-32 checksum of its bytes (a long), their length (an
//! int), the bytes, and an end-of-record byte `B`. The bytes are a
//! transaction header (session, cxid, zxid, time, type), the transaction's
//! own record and, from 3.6 on, a digest of the tree, which history skips.
//! The server preallocates its log in blocks of zeros, so a length of zero
//! is where the written part ends.
//!
//! A reader holds one record at a time, so a log of any size is read in the
//! memory of its largest record, and that is bounded ([`MAX_RECORD`]) before
//! it is allocated. A transaction borrows its paths and data from that
//! record, and a multi's operations are read from it one at a time as they
//! are applied: a record of millions of operations costs no more than its
//! bytes. A record cut off part-way or whose checksum does not match is an
//! error naming its offset; everything before it was already handed out.

use std::borrow::Cow;
use std::fmt;
use std::io::{self, Read};

use super::jute::{Jute, JuteError};

/// The magic number at the start of every transaction log.
pub(crate) const LOG_MAGIC: [u8; 4] = *b"ZKLG";

/// The largest record read. The server refuses requests above
/// `jute.maxbuffer` (1 MiB by default; raised on some ensembles), and a
/// multi's transaction is bounded by its request: a length above this is a
/// damaged file, not a record.
pub(crate) const MAX_RECORD: usize = 64 << 20;

/// The operation codes of the transactions history reads.
mod code {
    pub(super) const CREATE: i32 = 1;
    pub(super) const DELETE: i32 = 2;
    pub(super) const SET_DATA: i32 = 5;
    pub(super) const MULTI: i32 = 14;
    pub(super) const CREATE2: i32 = 15;
    pub(super) const CREATE_CONTAINER: i32 = 19;
    pub(super) const DELETE_CONTAINER: i32 = 20;
    pub(super) const CREATE_TTL: i32 = 21;
    pub(super) const CREATE_SESSION: i32 = -10;
    pub(super) const CLOSE_SESSION: i32 = -11;
    pub(super) const ERROR: i32 = -1;
}

/// One transaction, as its header and record say, borrowed from the record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Txn<'a> {
    /// The session that asked for it (the one that closes, for a close).
    pub session: i64,
    /// The client's request number; 0 for what the server does by itself
    /// (a session's expiry, a container's or a TTL node's removal).
    pub cxid: i32,
    pub zxid: i64,
    /// The leader's clock when it was made, in ms since the epoch.
    pub time_ms: i64,
    pub op: Op<'a>,
}

/// What a transaction changed, as far as history cares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Op<'a> {
    Create(Create<'a>),
    /// A delete; `by_server` for the server's own removal of an empty
    /// container or an expired TTL node.
    Delete {
        path: Cow<'a, str>,
        by_server: bool,
    },
    SetData {
        path: Cow<'a, str>,
        data: &'a [u8],
    },
    CreateSession,
    /// The session's end; its ephemeral nodes go with it (3.6 and later
    /// list them in the record, 3.5 does not; history knows them anyway).
    CloseSession,
    /// A multi transaction's operations, applied together. A multi that
    /// failed is written as errors and reads as [`Op::Other`].
    Multi(Multi<'a>),
    /// Anything else (a failed request, an ACL change, a version check, a
    /// reconfiguration): nothing a lock's history shows.
    Other,
}

/// A node's creation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Create<'a> {
    pub path: Cow<'a, str>,
    pub data: &'a [u8],
    /// Owned by the creating session, and gone with it.
    pub ephemeral: bool,
}

/// Where a record starts and what is wrong with it.
#[derive(Debug)]
pub(crate) struct RecordError {
    /// The record's offset in its file.
    pub offset: u64,
    pub problem: Problem,
}

/// What is wrong with a log or one of its records.
#[derive(Debug)]
pub(crate) enum Problem {
    /// The file does not start with a transaction log's header.
    NotALog,
    /// The file ends inside the record.
    CutOff,
    /// The length field is negative or beyond [`MAX_RECORD`].
    BadLength(i64),
    /// The bytes do not match the record's checksum.
    Checksum { stored: u32, computed: u32 },
    /// No end-of-record mark after the bytes.
    NoEndMark,
    /// The bytes match their checksum but do not read as a transaction.
    Unreadable(JuteError),
    /// The file could not be read.
    Io(io::Error),
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let offset = self.offset;
        match &self.problem {
            Problem::NotALog => write!(f, "not a ZooKeeper transaction log (no ZKLG header)"),
            Problem::CutOff => write!(f, "the record at offset {offset} is cut off"),
            Problem::BadLength(len) => write!(
                f,
                "the record at offset {offset} is corrupt: a length of {len} bytes"
            ),
            Problem::Checksum { stored, computed } => write!(
                f,
                "the record at offset {offset} is corrupt: its checksum is {stored:#010x}, \
                 its bytes sum to {computed:#010x}"
            ),
            Problem::NoEndMark => write!(
                f,
                "the record at offset {offset} is corrupt: no end-of-record mark"
            ),
            Problem::Unreadable(why) => write!(
                f,
                "the record at offset {offset} is corrupt: its checksum matches, but {why}"
            ),
            Problem::Io(err) => write!(f, "reading at offset {offset}: {err}"),
        }
    }
}

/// A transaction log being read.
pub(crate) struct TxnLog<R> {
    input: R,
    /// The offset of the next record.
    offset: u64,
    /// The record's bytes, reused from one record to the next.
    record: Vec<u8>,
    /// Set once the written part has ended, or a record failed.
    ended: bool,
}

/// The length of a log's file header: magic, version, database id.
pub(crate) const HEADER_LEN: u64 = 16;

impl<R: Read> TxnLog<R> {
    /// Reads the file header of `input`.
    pub(crate) fn open(mut input: R) -> Result<TxnLog<R>, RecordError> {
        let mut header = [0u8; HEADER_LEN as usize];
        let at_start = |problem| RecordError { offset: 0, problem };
        match read_full(&mut input, &mut header).map_err(|err| at_start(Problem::Io(err)))? {
            Filled::Whole if header[..4] == LOG_MAGIC => {}
            _ => return Err(at_start(Problem::NotALog)),
        }
        Ok(TxnLog {
            input,
            offset: HEADER_LEN,
            record: Vec::new(),
            ended: false,
        })
    }

    /// How far the reader has come, in bytes.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// The next transaction; `None` where the written part of the log ends.
    pub(crate) fn next_txn(&mut self) -> Result<Option<Txn<'_>>, RecordError> {
        let Some(start) = self.advance()? else {
            return Ok(None);
        };
        parse_txn(&self.record).map(Some).map_err(|why| {
            self.ended = true;
            RecordError {
                offset: start,
                problem: Problem::Unreadable(why),
            }
        })
    }

    /// The zxid of the next transaction, its record checked but read no
    /// further; `None` where the written part of the log ends.
    pub(crate) fn next_zxid(&mut self) -> Result<Option<i64>, RecordError> {
        let Some(start) = self.advance()? else {
            return Ok(None);
        };
        let mut jute = Jute::new(&self.record);
        let zxid = (|| {
            jute.long("session")?;
            jute.int("cxid")?;
            jute.long("zxid")
        })();
        zxid.map(Some).map_err(|why| {
            self.ended = true;
            RecordError {
                offset: start,
                problem: Problem::Unreadable(why),
            }
        })
    }

    /// Reads the next record into `self.record`; its offset, or `None`
    /// where the written part of the log ends.
    fn advance(&mut self) -> Result<Option<u64>, RecordError> {
        if self.ended {
            return Ok(None);
        }
        let start = self.offset;
        let read = self.read_record();
        self.ended = !matches!(read, Ok(Some(_)));
        let Some(len) = read.map_err(|problem| RecordError {
            offset: start,
            problem,
        })?
        else {
            return Ok(None);
        };
        self.offset = start + 13 + len as u64;
        Ok(Some(start))
    }

    /// Reads one record's bytes into `self.record` and checks them; its
    /// length, or `None` at the end of the written part.
    fn read_record(&mut self) -> Result<Option<usize>, Problem> {
        let mut head = [0u8; 12];
        match read_full(&mut self.input, &mut head).map_err(Problem::Io)? {
            Filled::Nothing => return Ok(None),
            Filled::Part => return Err(Problem::CutOff),
            Filled::Whole => {}
        }
        let stored = i64::from_be_bytes(head[..8].try_into().expect("8 bytes"));
        let len = i32::from_be_bytes(head[8..].try_into().expect("4 bytes"));
        if len == 0 {
            return Ok(None);
        }
        if len < 0 || len as usize > MAX_RECORD {
            return Err(Problem::BadLength(len.into()));
        }
        let len = len as usize;
        self.record.resize(len + 1, 0);
        match read_full(&mut self.input, &mut self.record).map_err(Problem::Io)? {
            Filled::Whole => {}
            Filled::Nothing | Filled::Part => return Err(Problem::CutOff),
        }
        match self.record.pop() {
            Some(b'B') => {}
            // Zeros where the mark should be: the server stopped part-way
            // through writing the record into its preallocated space.
            Some(0) => return Err(Problem::CutOff),
            _ => return Err(Problem::NoEndMark),
        }
        let computed = adler32(&self.record);
        if stored != i64::from(computed) {
            return Err(Problem::Checksum {
                stored: stored as u32,
                computed,
            });
        }
        Ok(Some(len))
    }
}

/// How much of a buffer a read filled.
enum Filled {
    Nothing,
    Part,
    Whole,
}

fn read_full(input: &mut impl Read, buf: &mut [u8]) -> io::Result<Filled> {
    let mut filled = 0;
    while filled < buf.len() {
        match input.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(match filled {
        0 => Filled::Nothing,
        n if n < buf.len() => Filled::Part,
        _ => Filled::Whole,
    })
}

/// The Adler-32 checksum ZooKeeper keeps of each record.
pub(crate) fn adler32(bytes: &[u8]) -> u32 {
    let mut adler = Adler32::new();
    adler.update(bytes);
    adler.value()
}

/// An Adler-32 checksum summed piece by piece, as a snapshot is read.
/// The sums are simd-adler32's: a log's every byte passes through them,
/// and summing a byte at a time was a tenth of the whole read.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Adler32(u32);

impl Adler32 {
    pub(crate) fn new() -> Adler32 {
        Adler32(1)
    }

    pub(crate) fn update(&mut self, bytes: &[u8]) {
        let mut sums = simd_adler32::Adler32::from_checksum(self.0);
        sums.write(bytes);
        self.0 = sums.finish();
    }

    pub(crate) fn value(&self) -> u32 {
        self.0
    }
}

/// Reads a record's bytes as a transaction: its header, then its record.
/// What follows the record (3.6's digest, 3.6's list of a closing
/// session's ephemeral nodes) is not needed and not read.
pub(crate) fn parse_txn(bytes: &[u8]) -> Result<Txn<'_>, JuteError> {
    let mut jute = Jute::new(bytes);
    let session = jute.long("session")?;
    let cxid = jute.int("cxid")?;
    let zxid = jute.long("zxid")?;
    let time_ms = jute.long("time")?;
    let kind = jute.int("type")?;
    let op = match kind {
        code::MULTI => Multi::read(&mut jute)?,
        code::CREATE_SESSION => Op::CreateSession,
        code::CLOSE_SESSION => Op::CloseSession,
        kind => parse_op(kind, &mut jute)?,
    };
    Ok(Txn {
        session,
        cxid,
        zxid,
        time_ms,
        op,
    })
}

/// A multi transaction's operations, still in its record: a count, then
/// each operation's type and bytes. Every one was read once when the
/// record was, so a damaged one fails the record before anything of it is
/// applied; [`Multi::ops`] reads them again, one at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Multi<'a> {
    count: usize,
    ops: &'a [u8],
}

impl<'a> Multi<'a> {
    /// Reads and checks a multi's record; a multi that failed (all errors:
    /// nothing happened) reads as [`Op::Other`].
    pub(crate) fn read(jute: &mut Jute<'a>) -> Result<Op<'a>, JuteError> {
        let count = jute.count("multi count", 8)?;
        let ops = jute.rest();
        let mut each = Jute::new(ops);
        for _ in 0..count {
            let (kind, bytes) = next_op(&mut each)?;
            if kind == code::ERROR {
                return Ok(Op::Other);
            }
            parse_op(kind, &mut Jute::new(bytes))?;
        }
        Ok(Op::Multi(Multi { count, ops }))
    }

    /// The operations, in order.
    pub(crate) fn ops(&self) -> impl Iterator<Item = Op<'a>> + use<'a> {
        let mut each = Jute::new(self.ops);
        // Every operation was read before: none fails now.
        (0..self.count).map_while(move |_| {
            let (kind, bytes) = next_op(&mut each).ok()?;
            parse_op(kind, &mut Jute::new(bytes)).ok()
        })
    }
}

/// One operation of a multi: its type and bytes.
fn next_op<'a>(jute: &mut Jute<'a>) -> Result<(i32, &'a [u8]), JuteError> {
    Ok((jute.int("multi op type")?, jute.buffer("multi op")?))
}

/// One operation's record, alone or inside a multi.
fn parse_op<'a>(kind: i32, jute: &mut Jute<'a>) -> Result<Op<'a>, JuteError> {
    Ok(match kind {
        code::CREATE | code::CREATE2 => {
            let (path, data) = (jute.string("path")?, jute.buffer("data")?);
            jute.skip_acls()?;
            let ephemeral = jute.boolean("ephemeral")?;
            Op::Create(Create {
                path,
                data,
                ephemeral,
            })
        }
        code::CREATE_CONTAINER | code::CREATE_TTL => {
            let (path, data) = (jute.string("path")?, jute.buffer("data")?);
            Op::Create(Create {
                path,
                data,
                ephemeral: false,
            })
        }
        code::DELETE | code::DELETE_CONTAINER => Op::Delete {
            path: jute.string("path")?,
            by_server: kind == code::DELETE_CONTAINER,
        },
        code::SET_DATA => Op::SetData {
            path: jute.string("path")?,
            data: jute.buffer("data")?,
        },
        _ => Op::Other,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Builds records the way ZooKeeper writes them, for tests.
    #[derive(Default)]
    pub(crate) struct LogWriter {
        pub bytes: Vec<u8>,
    }

    impl LogWriter {
        pub(crate) fn new() -> LogWriter {
            let mut bytes = LOG_MAGIC.to_vec();
            bytes.extend(2i32.to_be_bytes());
            bytes.extend(0i64.to_be_bytes());
            LogWriter { bytes }
        }

        /// Appends one record of `body` after a header.
        pub(crate) fn txn(
            &mut self,
            session: i64,
            cxid: i32,
            zxid: i64,
            time: i64,
            kind: i32,
            body: &[u8],
        ) {
            let mut record = Vec::new();
            record.extend(session.to_be_bytes());
            record.extend(cxid.to_be_bytes());
            record.extend(zxid.to_be_bytes());
            record.extend(time.to_be_bytes());
            record.extend(kind.to_be_bytes());
            record.extend(body);
            // A 3.6 digest: history must skip it.
            record.extend(2i32.to_be_bytes());
            record.extend(0x1234i64.to_be_bytes());
            self.bytes.extend(i64::from(adler32(&record)).to_be_bytes());
            self.bytes.extend((record.len() as i32).to_be_bytes());
            self.bytes.extend(&record);
            self.bytes.push(b'B');
        }
    }

    pub(crate) fn string(text: &str) -> Vec<u8> {
        let mut bytes = (text.len() as i32).to_be_bytes().to_vec();
        bytes.extend(text.as_bytes());
        bytes
    }

    /// A CreateTxn's record.
    pub(crate) fn create(path: &str, data: &[u8], ephemeral: bool) -> Vec<u8> {
        let mut bytes = string(path);
        bytes.extend((data.len() as i32).to_be_bytes());
        bytes.extend(data);
        // One ACL: world:anyone, all.
        bytes.extend(1i32.to_be_bytes());
        bytes.extend(31i32.to_be_bytes());
        bytes.extend(string("world"));
        bytes.extend(string("anyone"));
        bytes.push(u8::from(ephemeral));
        bytes.extend(7i32.to_be_bytes());
        bytes
    }

    /// A multi's record of `(type, record)` operations.
    pub(crate) fn multi(ops: &[(i32, Vec<u8>)]) -> Vec<u8> {
        let mut bytes = (ops.len() as i32).to_be_bytes().to_vec();
        for (kind, op) in ops {
            bytes.extend(kind.to_be_bytes());
            bytes.extend((op.len() as i32).to_be_bytes());
            bytes.extend(op);
        }
        bytes
    }

    /// Every transaction of `bytes`, each with its record's bytes (which
    /// it borrows), and the error.
    /// A delete's operation in a multi.
    pub(crate) fn delete_op(path: &str) -> (i32, Vec<u8>) {
        (code::DELETE, string(path))
    }

    /// A data write's operation in a multi.
    pub(crate) fn set_data_op(path: &str, data: &[u8]) -> (i32, Vec<u8>) {
        let mut bytes = string(path);
        bytes.extend((data.len() as i32).to_be_bytes());
        bytes.extend(data);
        bytes.extend(0i32.to_be_bytes());
        (code::SET_DATA, bytes)
    }

    /// A multi's operations from its record (as [`multi`] writes it).
    pub(crate) fn multi_of(record: &[u8]) -> Op<'_> {
        Multi::read(&mut Jute::new(record)).expect("a multi's record")
    }

    fn read_all(bytes: &[u8]) -> (Vec<Txn<'static>>, Option<RecordError>) {
        let mut log = TxnLog::open(bytes).unwrap();
        let mut txns = Vec::new();
        loop {
            match log.next_txn() {
                Ok(Some(txn)) => txns.push(owned(txn)),
                Ok(None) => return (txns, None),
                Err(err) => return (txns, Some(err)),
            }
        }
    }

    /// `txn` with its record's bytes leaked, so that a test may keep it.
    fn owned(txn: Txn<'_>) -> Txn<'static> {
        let leak = |text: Cow<'_, str>| Cow::Borrowed(&*String::leak(text.into_owned()));
        let data = |data: &[u8]| &*Vec::leak(data.to_vec());
        let op = match txn.op {
            Op::Create(create) => Op::Create(Create {
                path: leak(create.path),
                data: data(create.data),
                ephemeral: create.ephemeral,
            }),
            Op::Delete { path, by_server } => Op::Delete {
                path: leak(path),
                by_server,
            },
            Op::SetData { path, data: bytes } => Op::SetData {
                path: leak(path),
                data: data(bytes),
            },
            Op::Multi(multi) => Op::Multi(Multi {
                count: multi.count,
                ops: data(multi.ops),
            }),
            Op::CreateSession => Op::CreateSession,
            Op::CloseSession => Op::CloseSession,
            Op::Other => Op::Other,
        };
        Txn { op, ..txn }
    }

    fn sample() -> LogWriter {
        let mut log = LogWriter::new();
        log.txn(
            5,
            1,
            0x100,
            1000,
            code::CREATE_SESSION,
            &30000i32.to_be_bytes(),
        );
        log.txn(
            5,
            2,
            0x101,
            1001,
            code::CREATE,
            &create("/l/lock-0000000001", b"me", true),
        );
        let mut set = string("/l");
        set.extend(3i32.to_be_bytes());
        set.extend(b"end");
        set.extend(0i32.to_be_bytes());
        let ops = [
            (code::SET_DATA, set),
            (code::DELETE, string("/l/lock-0000000001")),
        ];
        log.txn(5, 3, 0x102, 1002, code::MULTI, &multi(&ops));
        log.txn(5, 0, 0x103, 1003, code::CLOSE_SESSION, &[]);
        log
    }

    #[test]
    fn reads_every_kind_of_record_up_to_the_zero_tail() {
        let mut log = sample();
        log.bytes.extend([0u8; 4096]);
        let (txns, err) = read_all(&log.bytes);
        assert!(err.is_none(), "{err:?}");
        assert_eq!(txns[0].op, Op::CreateSession);
        assert_eq!(
            txns[1].op,
            Op::Create(Create {
                path: "/l/lock-0000000001".into(),
                data: b"me",
                ephemeral: true
            })
        );
        let Op::Multi(multi) = &txns[2].op else {
            panic!("{:?}", txns[2].op);
        };
        assert_eq!(
            multi.ops().collect::<Vec<_>>(),
            [
                Op::SetData {
                    path: "/l".into(),
                    data: b"end"
                },
                Op::Delete {
                    path: "/l/lock-0000000001".into(),
                    by_server: false
                }
            ]
        );
        assert_eq!(txns[3].op, Op::CloseSession);
        assert_eq!(
            (txns[3].session, txns[3].cxid, txns[3].zxid, txns[3].time_ms),
            (5, 0, 0x103, 1003)
        );
    }

    #[test]
    fn a_cut_off_record_is_reported_at_its_offset_after_the_ones_before_it() {
        let log = sample();
        let whole = read_all(&log.bytes).0.len();
        // Where each record ends: a log cut there is whole, only shorter.
        let mut ends = vec![HEADER_LEN as usize];
        while let Some(&end) = ends.last().filter(|&&end| end < log.bytes.len()) {
            let len = i32::from_be_bytes(log.bytes[end + 8..end + 12].try_into().unwrap());
            ends.push(end + 13 + len as usize);
        }
        for cut in (17..log.bytes.len()).filter(|cut| !ends.contains(cut)) {
            let (txns, err) = read_all(&log.bytes[..cut]);
            let complete = txns.len();
            assert!(complete < whole);
            match err {
                None => panic!("cut at {cut}: no error after {complete} records"),
                Some(err) => assert!(
                    matches!(err.problem, Problem::CutOff),
                    "cut at {cut}: {err}"
                ),
            }
        }
    }

    #[test]
    fn a_changed_byte_fails_the_checksum_at_that_record() {
        let mut log = sample();
        let second = HEADER_LEN as usize
            + 13
            + (i32::from_be_bytes(log.bytes[24..28].try_into().unwrap()) as usize);
        log.bytes[second + 20] ^= 0x40;
        let (txns, err) = read_all(&log.bytes);
        assert_eq!(txns.len(), 1);
        let err = err.expect("an error");
        assert_eq!(err.offset, second as u64);
        assert!(matches!(err.problem, Problem::Checksum { .. }), "{err}");
        assert!(
            err.to_string().contains(&format!("offset {second}")),
            "{err}"
        );
    }

    #[test]
    fn adler32_matches_known_sums() {
        assert_eq!(adler32(b""), 1);
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        let long = vec![0xffu8; 100_000];
        // zlib's adler32 of 100,000 bytes of 0xff.
        assert_eq!(adler32(&long), reference_adler(&long));
    }

    fn reference_adler(bytes: &[u8]) -> u32 {
        let (mut a, mut b) = (1u64, 0u64);
        for &byte in bytes {
            a = (a + u64::from(byte)) % 65521;
            b = (b + a) % 65521;
        }
        ((b << 16) | a) as u32
    }

    #[test]
    fn not_a_log_is_refused() {
        assert!(matches!(
            TxnLog::open(&b"ZKSN\0\0\0\x02"[..])
                .err()
                .map(|e| e.problem),
            Some(Problem::NotALog)
        ));
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
                let _ = parse_txn(&bytes);
                let mut log = LOG_MAGIC.to_vec();
                log.extend([0u8; 12]);
                log.extend(&bytes);
                let _ = read_all(&log);
            }

            #[test]
            fn damaged_logs_never_panic(flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8), cut in any::<usize>()) {
                let mut bytes = sample().bytes;
                for (at, value) in flips {
                    let at = 16 + at % (bytes.len() - 16);
                    bytes[at] = value;
                }
                bytes.truncate(16 + cut % (bytes.len() - 15));
                let _ = read_all(&bytes);
            }

            #[test]
            fn arbitrary_records_with_good_checksums_never_panic(record in proptest::collection::vec(any::<u8>(), 1..512)) {
                let mut bytes = LOG_MAGIC.to_vec();
                bytes.extend([0u8; 12]);
                bytes.extend(i64::from(adler32(&record)).to_be_bytes());
                bytes.extend((record.len() as i32).to_be_bytes());
                bytes.extend(&record);
                bytes.push(b'B');
                let _ = read_all(&bytes);
            }
        }
    }
}
