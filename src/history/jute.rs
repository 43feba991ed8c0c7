//! Jute, ZooKeeper's serialisation, read from a byte slice: big-endian
//! integers, length-prefixed buffers and strings, counted vectors.
//!
//! Every length and count comes from a file anyone may have damaged, so
//! each is checked against the bytes that are left before anything is
//! taken: a length can only ever name bytes that are there, and nothing is
//! allocated from a count.

use std::borrow::Cow;
use std::fmt;

/// Why a record could not be read: what was being read, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct JuteError {
    /// What was being read (`"path"`, `"multi count"`).
    pub what: &'static str,
    /// The offset in the record where it began.
    pub at: usize,
    pub why: &'static str,
}

impl fmt::Display for JuteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at byte {} of the record: {}",
            self.what, self.at, self.why
        )
    }
}

/// A cursor over one record's bytes.
#[derive(Clone, Debug)]
pub(crate) struct Jute<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Jute<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Jute<'a> {
        Jute { bytes, at: 0 }
    }

    /// The bytes not read yet.
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }

    /// Fails reading `what`, which began at `at`.
    fn fail<T>(at: usize, what: &'static str, why: &'static str) -> Result<T, JuteError> {
        Err(JuteError { what, at, why })
    }

    /// The next `n` bytes, when that many are left.
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], JuteError> {
        if n > self.remaining() {
            return Jute::fail(self.at, what, "the record ends first");
        }
        let taken = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(taken)
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], JuteError> {
        let mut array = [0; N];
        array.copy_from_slice(self.take(N, what)?);
        Ok(array)
    }

    pub(crate) fn int(&mut self, what: &'static str) -> Result<i32, JuteError> {
        self.array(what).map(i32::from_be_bytes)
    }

    pub(crate) fn long(&mut self, what: &'static str) -> Result<i64, JuteError> {
        self.array(what).map(i64::from_be_bytes)
    }

    pub(crate) fn boolean(&mut self, what: &'static str) -> Result<bool, JuteError> {
        self.array::<1>(what).map(|[b]| b != 0)
    }

    /// A length-prefixed buffer; jute writes a null one as length -1, read
    /// here as empty.
    pub(crate) fn buffer(&mut self, what: &'static str) -> Result<&'a [u8], JuteError> {
        let at = self.at;
        match self.int(what)? {
            -1 => Ok(&[]),
            len if len < 0 => Jute::fail(at, what, "a negative length"),
            len => self.take(len as usize, what),
        }
    }

    /// A length-prefixed UTF-8 string (a path), borrowed from the record;
    /// bytes that are not UTF-8 are kept as U+FFFD, as they cannot name a
    /// node the server made.
    pub(crate) fn string(&mut self, what: &'static str) -> Result<Cow<'a, str>, JuteError> {
        self.buffer(what).map(String::from_utf8_lossy)
    }

    /// Every byte not read yet, taken.
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        let rest = &self.bytes[self.at..];
        self.at = self.bytes.len();
        rest
    }

    /// A vector's count; jute writes a null vector as -1, read here as
    /// empty. Each element takes at least `min_size` bytes, so a count the
    /// bytes left cannot hold is refused before any element is read.
    pub(crate) fn count(
        &mut self,
        what: &'static str,
        min_size: usize,
    ) -> Result<usize, JuteError> {
        let at = self.at;
        match self.int(what)? {
            -1 => Ok(0),
            n if n < 0 => Jute::fail(at, what, "a negative count"),
            n if (n as usize).saturating_mul(min_size) > self.remaining() => {
                Jute::fail(at, what, "more elements than the record has bytes for")
            }
            n => Ok(n as usize),
        }
    }

    /// Skips a vector of ACLs (`{int perms; {ustring scheme; ustring id}}`),
    /// which history has no use for.
    pub(crate) fn skip_acls(&mut self) -> Result<(), JuteError> {
        for _ in 0..self.count("acl count", 12)? {
            self.int("acl perms")?;
            self.buffer("acl scheme")?;
            self.buffer("acl id")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_big_endian_fields_and_refuses_lengths_past_the_end() {
        let mut bytes = Vec::new();
        bytes.extend(7i32.to_be_bytes());
        bytes.extend(b"/a/lock");
        bytes.extend((-1i32).to_be_bytes());
        bytes.extend(0x0102_0304_0506_0708i64.to_be_bytes());
        bytes.push(1);
        bytes.extend(1_000_000i32.to_be_bytes());
        let mut jute = Jute::new(&bytes);
        assert_eq!(jute.string("path").unwrap(), "/a/lock");
        assert_eq!(jute.buffer("data").unwrap(), b"");
        assert_eq!(jute.long("zxid").unwrap(), 0x0102_0304_0506_0708);
        assert!(jute.boolean("ephemeral").unwrap());
        let err = jute.count("count", 4).unwrap_err();
        assert_eq!(err.at, 24);
        assert_eq!(jute.remaining(), 0, "the count was read");
    }
}
