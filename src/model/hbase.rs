//! HBase 1.x table-lock data: the magic `PBUF`, then a `TableLock` message
//! (hbase-protocol's ZooKeeper.proto and HBase.proto):
//!
//! ```text
//! message TableLock  { optional TableName table_name = 1; optional ServerName lock_owner = 2;
//!                      optional int64 thread_id = 3; optional bool is_shared = 4;
//!                      optional string purpose = 5; optional int64 create_time = 6; }
//! message TableName  { required bytes namespace = 1; required bytes qualifier = 2; }
//! message ServerName { required string host_name = 1; optional uint32 port = 2;
//!                      optional uint64 start_code = 3; }
//! ```
//!
//! HBase 0.9x wrote the table name as plain bytes in field 1; both forms are
//! read. Whatever cannot be decoded is kept, escaped, in
//! [`TableLock::undecoded`]: bad bytes are shown, never trusted.

use serde::Serialize;

use super::protobuf::{self, Field, WireValue};

/// What HBase puts before its protobuf messages in znode data.
pub(super) const MAGIC: &[u8] = b"PBUF";

/// A decoded `TableLock`; each field is `None` when absent.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TableLock {
    /// `qualifier` in the default namespace, else `namespace:qualifier`, as
    /// HBase prints table names.
    pub table: Option<String>,
    /// The lock owner as HBase prints a ServerName: `host,port,start_code`.
    pub owner: Option<String>,
    pub thread_id: Option<i64>,
    pub shared: Option<bool>,
    pub purpose: Option<String>,
    /// Milliseconds since the epoch.
    pub create_time_ms: Option<i64>,
    /// What could not be decoded (unknown fields, fields of the wrong type,
    /// bad bytes), escaped; `None` when everything was.
    pub undecoded: Option<String>,
}

/// Decodes HBase table-lock data; `None` when it does not start with `PBUF`.
pub(super) fn decode(data: &[u8]) -> Option<TableLock> {
    let message = data.strip_prefix(MAGIC)?;
    let mut lock = TableLock::default();
    let mut undecoded = Vec::new();
    for field in protobuf::fields(message) {
        match field {
            Ok(field) => {
                if !lock.take(field) {
                    undecoded.push(describe(field));
                }
            }
            Err(malformed) => undecoded.push(malformed.to_string()),
        }
    }
    lock.undecoded = (!undecoded.is_empty()).then(|| undecoded.join("; "));
    Some(lock)
}

impl TableLock {
    /// Stores a known field; false for an unknown one or a wrong wire type.
    fn take(&mut self, field: Field<'_>) -> bool {
        match (field.number, field.value) {
            (1, WireValue::Bytes(bytes)) => self.table = Some(table_name(bytes)),
            (2, WireValue::Bytes(bytes)) => match server_name(bytes) {
                Some(owner) => self.owner = Some(owner),
                None => return false,
            },
            (3, WireValue::Varint(n)) => self.thread_id = Some(n as i64),
            (4, WireValue::Varint(n)) => self.shared = Some(n != 0),
            (5, WireValue::Bytes(bytes)) => self.purpose = Some(safe_text(bytes)),
            (6, WireValue::Varint(n)) => self.create_time_ms = Some(n as i64),
            _ => return false,
        }
        true
    }

    /// One line for people: `owner host,port,code: table t (purpose)`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if let Some(owner) = &self.owner {
            parts.push(owner.clone());
        }
        if let Some(table) = &self.table {
            parts.push(format!("table {table}"));
        }
        if let Some(purpose) = &self.purpose {
            parts.push(format!("({purpose})"));
        }
        if let Some(undecoded) = &self.undecoded {
            parts.push(format!("[undecoded: {undecoded}]"));
        }
        if parts.is_empty() {
            "hbase table lock".to_owned()
        } else {
            parts.join(" ")
        }
    }
}

/// A `TableName` message, or the plain bytes of HBase 0.9x.
fn table_name(bytes: &[u8]) -> String {
    let mut namespace = None;
    let mut qualifier = None;
    for field in protobuf::fields(bytes) {
        match field {
            Ok(Field {
                number: 1,
                value: WireValue::Bytes(b),
            }) => namespace = Some(b),
            Ok(Field {
                number: 2,
                value: WireValue::Bytes(b),
            }) => qualifier = Some(b),
            _ => return safe_text(bytes),
        }
    }
    match (namespace, qualifier) {
        (Some(b"default") | None, Some(qualifier)) => safe_text(qualifier),
        (Some(namespace), Some(qualifier)) => {
            format!("{}:{}", safe_text(namespace), safe_text(qualifier))
        }
        _ => safe_text(bytes),
    }
}

/// A `ServerName` as `host,port,start_code` (the parts present), or `None`
/// when it is not one.
pub(crate) fn server_name(bytes: &[u8]) -> Option<String> {
    let mut host = None;
    let mut port = None;
    let mut start_code = None;
    for field in protobuf::fields(bytes) {
        match field.ok()? {
            Field {
                number: 1,
                value: WireValue::Bytes(b),
            } => host = Some(safe_text(b)),
            Field {
                number: 2,
                value: WireValue::Varint(n),
            } => port = Some(n),
            Field {
                number: 3,
                value: WireValue::Varint(n),
            } => start_code = Some(n),
            _ => return None,
        }
    }
    let mut text = host?;
    for part in [port, start_code].into_iter().flatten() {
        text += &format!(",{part}");
    }
    Some(text)
}

fn describe(field: Field<'_>) -> String {
    let value = match field.value {
        WireValue::Varint(n) | WireValue::Fixed64(n) => n.to_string(),
        WireValue::Fixed32(n) => n.to_string(),
        WireValue::Bytes(bytes) => format!("\"{}\"", bytes.escape_ascii()),
    };
    format!("field {}: {value}", field.number)
}

/// Text as it is when it is printable UTF-8; otherwise escaped byte by byte
/// (`\xNN`), so no byte can reach a terminal raw.
pub(super) fn safe_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) if !text.chars().any(char::is_control) => text.to_owned(),
        _ => bytes.escape_ascii().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes_field(number: u8, bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![number << 3 | 2, bytes.len() as u8];
        out.extend_from_slice(bytes);
        out
    }

    fn varint_field(number: u8, mut value: u64) -> Vec<u8> {
        let mut out = vec![number << 3];
        loop {
            let byte = (value & 0x7f) as u8;
            value >>= 7;
            if value == 0 {
                out.push(byte);
                return out;
            }
            out.push(byte | 0x80);
        }
    }

    /// What HBase 1.x writes for a table lock.
    pub(crate) fn hbase_table_lock(
        namespace: &str,
        table: &str,
        host: &str,
        shared: bool,
        purpose: &str,
    ) -> Vec<u8> {
        let table_name = [
            bytes_field(1, namespace.as_bytes()),
            bytes_field(2, table.as_bytes()),
        ]
        .concat();
        let server = [
            bytes_field(1, host.as_bytes()),
            varint_field(2, 16020),
            varint_field(3, 1_700_000_000_123),
        ]
        .concat();
        let message = [
            bytes_field(1, &table_name),
            bytes_field(2, &server),
            varint_field(3, 42),
            varint_field(4, shared as u64),
            bytes_field(5, purpose.as_bytes()),
            varint_field(6, 1_700_000_001_000),
        ]
        .concat();
        [MAGIC, &message].concat()
    }

    #[test]
    fn decodes_an_hbase_1_table_lock() {
        let data = hbase_table_lock("ns", "orders", "rs1.example.com", false, "alter");
        assert_eq!(
            decode(&data),
            Some(TableLock {
                table: Some("ns:orders".into()),
                owner: Some("rs1.example.com,16020,1700000000123".into()),
                thread_id: Some(42),
                shared: Some(false),
                purpose: Some("alter".into()),
                create_time_ms: Some(1_700_000_001_000),
                undecoded: None,
            })
        );
        let default_ns = decode(&hbase_table_lock("default", "t1", "h", true, "p")).unwrap();
        assert_eq!(default_ns.table.as_deref(), Some("t1"));
        assert_eq!(default_ns.shared, Some(true));
        assert_eq!(default_ns.summary(), "h,16020,1700000000123 table t1 (p)");
    }

    #[test]
    fn reads_the_plain_table_name_of_hbase_0_9() {
        let data = [MAGIC, &bytes_field(1, b"usertable")].concat();
        assert_eq!(decode(&data).unwrap().table.as_deref(), Some("usertable"));
    }

    #[test]
    fn keeps_what_it_cannot_decode_escaped() {
        assert_eq!(decode(b"10.0.0.7"), None);
        assert_eq!(decode(b"PBUF"), Some(TableLock::default()));
        let data = [
            MAGIC,
            &varint_field(9, 7),
            &varint_field(5, 1),
            &bytes_field(5, b"ok"),
            &[0x12, 0x09, 0xff],
        ]
        .concat();
        let lock = decode(&data).unwrap();
        assert_eq!(lock.purpose.as_deref(), Some("ok"));
        assert_eq!(
            lock.undecoded.as_deref(),
            Some("field 9: 7; field 5: 1; bad bytes at 8: \\x12\\t\\xff")
        );
        let bad_owner = [MAGIC, &bytes_field(2, &[0x08, 0x01])].concat();
        let lock = decode(&bad_owner).unwrap();
        assert_eq!(lock.owner, None);
        assert_eq!(lock.undecoded.as_deref(), Some("field 2: \"\\x08\\x01\""));
    }

    #[test]
    fn escapes_unprintable_text() {
        assert_eq!(safe_text(b"plain"), "plain");
        assert_eq!(safe_text(b"a\x1b[2Jb"), "a\\x1b[2Jb");
        assert_eq!(safe_text(&[0xff, b'a']), "\\xffa");
    }
}
