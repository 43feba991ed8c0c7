//! HBase's lock nodes as HBase writes them: HBase is no library a test can
//! run, so tests that need its locks make its nodes themselves.

/// A protobuf varint.
fn varint(mut value: u64) -> Vec<u8> {
    let mut out = Vec::new();
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

fn field_varint(number: u64, value: u64) -> Vec<u8> {
    [varint(number << 3), varint(value)].concat()
}

fn field_bytes(number: u64, bytes: &[u8]) -> Vec<u8> {
    [
        varint(number << 3 | 2),
        varint(bytes.len() as u64),
        bytes.to_vec(),
    ]
    .concat()
}

/// What HBase 1.x writes into a table-lock node (`write-N` or `read-N`):
/// `PBUF`, then its `TableLock` message.
pub fn table_lock(namespace: &str, table: &str, shared: bool, purpose: &str) -> Vec<u8> {
    let table_name = [
        field_bytes(1, namespace.as_bytes()),
        field_bytes(2, table.as_bytes()),
    ]
    .concat();
    let server = [
        field_bytes(1, b"rs1.example.com"),
        field_varint(2, 16020),
        field_varint(3, 1_700_000_000_123),
    ]
    .concat();
    let message = [
        field_bytes(1, &table_name),
        field_bytes(2, &server),
        field_varint(3, 77),
        field_varint(4, shared as u64),
        field_bytes(5, purpose.as_bytes()),
        field_varint(6, 1_700_000_001_000),
    ]
    .concat();
    [b"PBUF".as_slice(), &message].concat()
}
