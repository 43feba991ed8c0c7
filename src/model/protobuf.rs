//! A small, safe reader of the protobuf wire format: varints and
//! length-delimited fields, enough to read HBase's `TableLock` without a
//! protobuf dependency. It never panics on bad bytes: a malformed field ends
//! the reading with [`Malformed`], saying where.

use std::fmt;

/// A field's value as the wire format carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum WireValue<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
    Fixed32(u32),
}

/// One field: its number and value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Field<'a> {
    pub number: u32,
    pub value: WireValue<'a>,
}

/// Bytes that are not a well-formed message, from `offset` on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Malformed<'a> {
    pub offset: usize,
    /// The bytes from the first one that could not be read.
    pub rest: &'a [u8],
}

impl fmt::Display for Malformed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bad bytes at {}: {}",
            self.offset,
            self.rest.escape_ascii()
        )
    }
}

/// The fields of one message, in the order they were written. After a
/// [`Malformed`] item the iteration ends.
pub(super) struct Fields<'a> {
    message: &'a [u8],
    offset: usize,
}

/// Reads the fields of `message`.
pub(super) fn fields(message: &[u8]) -> Fields<'_> {
    Fields { message, offset: 0 }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<Field<'a>, Malformed<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.offset >= self.message.len() {
            return None;
        }
        let start = self.offset;
        match self.field() {
            Some(field) => Some(Ok(field)),
            None => {
                let rest = &self.message[start..];
                self.offset = self.message.len();
                Some(Err(Malformed {
                    offset: start,
                    rest,
                }))
            }
        }
    }
}

impl<'a> Fields<'a> {
    fn field(&mut self) -> Option<Field<'a>> {
        let key = self.varint()?;
        let number = u32::try_from(key >> 3).ok().filter(|&n| n != 0)?;
        let value = match key & 7 {
            0 => WireValue::Varint(self.varint()?),
            1 => WireValue::Fixed64(u64::from_le_bytes(self.take(8)?.try_into().ok()?)),
            2 => {
                let len = usize::try_from(self.varint()?).ok()?;
                WireValue::Bytes(self.take(len)?)
            }
            5 => WireValue::Fixed32(u32::from_le_bytes(self.take(4)?.try_into().ok()?)),
            // 3 and 4 are the deprecated groups; 6 and 7 do not exist.
            _ => return None,
        };
        Some(Field { number, value })
    }

    /// A base-128 varint of at most ten bytes.
    fn varint(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for (i, &byte) in self.message.get(self.offset..)?.iter().take(10).enumerate() {
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                self.offset += i + 1;
                return Some(value);
            }
        }
        None
    }

    fn take(&mut self, len: usize) -> Option<&'a [u8]> {
        let end = self.offset.checked_add(len)?;
        let bytes = self.message.get(self.offset..end)?;
        self.offset = end;
        Some(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(message: &[u8]) -> Vec<Result<Field<'_>, Malformed<'_>>> {
        fields(message).collect()
    }

    #[test]
    fn reads_varints_bytes_and_fixed_fields() {
        // 1: varint 150, 2: "hi", 3: fixed32 1, 4: fixed64 2
        let message = [
            0x08, 0x96, 0x01, 0x12, 0x02, b'h', b'i', 0x1d, 1, 0, 0, 0, 0x21, 2, 0, 0, 0, 0, 0, 0,
            0,
        ];
        assert_eq!(
            read(&message),
            [
                Ok(Field {
                    number: 1,
                    value: WireValue::Varint(150)
                }),
                Ok(Field {
                    number: 2,
                    value: WireValue::Bytes(b"hi")
                }),
                Ok(Field {
                    number: 3,
                    value: WireValue::Fixed32(1)
                }),
                Ok(Field {
                    number: 4,
                    value: WireValue::Fixed64(2)
                }),
            ]
        );
    }

    #[test]
    fn reads_a_ten_byte_varint() {
        let mut message = vec![0x08];
        message.extend([0xff; 9]);
        message.push(0x01);
        assert_eq!(
            read(&message),
            [Ok(Field {
                number: 1,
                value: WireValue::Varint(u64::MAX)
            })]
        );
    }

    #[test]
    fn stops_at_malformed_bytes_without_panicking() {
        let cases: [&[u8]; 7] = [
            &[0x12, 0x05, b'a'], // length beyond the end
            &[0x08],             // missing varint
            &[0x08, 0x80],       // truncated varint
            &[
                0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
            ], // too long
            &[0x0b],             // a group
            &[0x00, 0x01],       // field number 0
            &[
                0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
            ], // huge length
        ];
        for message in cases {
            let items = read(message);
            assert_eq!(items.len(), 1, "{message:?}");
            let err = items[0].unwrap_err();
            assert_eq!((err.offset, err.rest), (0, message), "{message:?}");
        }
        let items = read(&[0x08, 0x01, 0x1d, 0x01]);
        assert!(items[0].is_ok());
        assert_eq!(
            items[1].unwrap_err().to_string(),
            "bad bytes at 2: \\x1d\\x01"
        );
    }

    #[test]
    fn never_panics_on_any_short_input() {
        for a in 0..=255u8 {
            for b in [0u8, 1, 0x7f, 0x80, 0xff] {
                let _ = read(&[a, b]).len();
                let _ = read(&[a, b, a]).len();
            }
        }
    }
}
