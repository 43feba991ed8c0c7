//! Leader nodes: one ephemeral node whose owner leads, at a well-known name,
//! with data that says who the leader is.
//!
//! | service        | node                                   | data                          |
//! |----------------|----------------------------------------|-------------------------------|
//! | Kafka (ZK mode)| `controller`                           | JSON `{"version","brokerid","timestamp"}` |
//! | Hadoop HA      | `ActiveStandbyElectorLock`             | protobuf `ActiveNodeInfo`     |
//! | Helix          | `CONTROLLER/LEADER`                    | ZNRecord JSON                 |
//! | HBase 2        | `master`                               | `0xff`, id, `PBUF`, `Master`  |
//! | Solr           | `overseer_elect/leader`                | JSON `{"id": "<election node>"}` |
//!
//! A name alone is not enough (`controller` and `master` are common words):
//! the node must be ephemeral and its data must decode as that service's
//! record. Hadoop's persistent `ActiveBreadCrumb` beside the lock records
//! the last active node for fencing; it is no leader, so it is not shown.

use serde_json::Value as Json;

use super::hbase::{self, MAGIC};
use super::protobuf::{self, Field, WireValue};
use crate::lock::Dialect;
use crate::zk::path;

/// The service whose leader node `path` names by its name (and its parent's),
/// or `None`.
pub(crate) fn leader_dialect(node_path: &str) -> Option<Dialect> {
    let name = path::basename(node_path);
    let parent = path::parent(node_path).map(path::basename).unwrap_or("");
    match (parent, name) {
        (_, "controller") => Some(Dialect::Kafka),
        (_, "ActiveStandbyElectorLock") => Some(Dialect::Hadoop),
        ("CONTROLLER", "LEADER") => Some(Dialect::Helix),
        (_, "master") => Some(Dialect::Hbase),
        ("overseer_elect", "leader") => Some(Dialect::Solr),
        _ => None,
    }
}

/// Who leads, for people, from a leader node's data in `dialect`; `None`
/// when the data is not that service's record.
pub(super) fn owner(dialect: Dialect, data: &[u8]) -> Option<String> {
    match dialect {
        Dialect::Kafka => kafka(data),
        Dialect::Hadoop => hadoop(data),
        Dialect::Helix => helix(data),
        Dialect::Hbase => hbase_master(data),
        Dialect::Solr => solr(data),
        _ => None,
    }
}

fn json(data: &[u8]) -> Option<serde_json::Map<String, Json>> {
    match serde_json::from_slice(data).ok()? {
        Json::Object(map) => Some(map),
        _ => None,
    }
}

/// `broker N`, from `{"version":1,"brokerid":N,"timestamp":"..."}`.
fn kafka(data: &[u8]) -> Option<String> {
    let record = json(data)?;
    record.get("version")?;
    let broker = record.get("brokerid")?.as_i64()?;
    Some(format!("broker {broker}"))
}

/// `<controller id> (<pid>@<host>)` from a ZNRecord.
fn helix(data: &[u8]) -> Option<String> {
    let record = json(data)?;
    let id = record.get("id")?.as_str()?;
    record.get("simpleFields")?.as_object()?;
    let instance = record
        .get("simpleFields")
        .and_then(|fields| fields.get("LIVE_INSTANCE"))
        .and_then(Json::as_str);
    Some(match instance {
        Some(instance) => format!(
            "{} ({})",
            hbase::safe_text(id.as_bytes()),
            hbase::safe_text(instance.as_bytes())
        ),
        None => hbase::safe_text(id.as_bytes()),
    })
}

/// The node of the overseer, from `{"id":"<session>-<node>-n_<seq>"}`.
fn solr(data: &[u8]) -> Option<String> {
    let record = json(data)?;
    let id = record.get("id")?.as_str()?;
    let node = id
        .split_once('-')
        .and_then(|(_, rest)| rest.rsplit_once("-n_"))
        .map_or(id, |(node, _)| node);
    Some(hbase::safe_text(node.as_bytes()))
}

/// `<namenode> at <host>:<port> (<nameservice>, zkfc port <p>)`, from
/// Hadoop's `ActiveNodeInfo { nameserviceId = 1; namenodeId = 2;
/// hostname = 3; port = 4; zkfcPort = 5; }`.
fn hadoop(data: &[u8]) -> Option<String> {
    let mut text = [None, None, None];
    let mut ports = [None, None];
    for field in protobuf::fields(data) {
        match field.ok()? {
            Field {
                number: n @ 1..=3,
                value: WireValue::Bytes(bytes),
            } => text[n as usize - 1] = Some(hbase::safe_text(bytes)),
            Field {
                number: n @ 4..=5,
                value: WireValue::Varint(port),
            } => ports[n as usize - 4] = Some(port),
            _ => return None,
        }
    }
    let [Some(nameservice), Some(namenode), Some(host)] = text else {
        return None;
    };
    let port = ports[0]?;
    let zkfc = ports[1].map_or(String::new(), |p| format!(", zkfc port {p}"));
    Some(format!("{namenode} at {host}:{port} ({nameservice}{zkfc})"))
}

/// `host,port,start_code` of the active master, from HBase 2's master node:
/// `0xff`, a 4-byte length and that many bytes of writer id, then `PBUF`
/// and `Master { ServerName master = 1; uint32 rpc_version = 2; uint32
/// info_port = 3; }`.
fn hbase_master(data: &[u8]) -> Option<String> {
    let rest = data.strip_prefix(&[0xff])?;
    let (len, rest) = rest.split_first_chunk::<4>()?;
    let id_len = usize::try_from(u32::from_be_bytes(*len)).ok()?;
    let message = rest.get(id_len..)?.strip_prefix(MAGIC)?;
    let mut server = None;
    for field in protobuf::fields(message) {
        match field.ok()? {
            Field {
                number: 1,
                value: WireValue::Bytes(bytes),
            } => server = Some(hbase::server_name(bytes)?),
            Field {
                number: 2 | 3,
                value: WireValue::Varint(_),
            } => {}
            _ => return None,
        }
    }
    server
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A protobuf length-delimited field.
    pub(crate) fn bytes_field(number: u8, bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![number << 3 | 2, bytes.len() as u8];
        out.extend_from_slice(bytes);
        out
    }

    /// A protobuf varint field (values below 2^14).
    pub(crate) fn varint_field(number: u8, value: u16) -> Vec<u8> {
        let mut out = vec![number << 3];
        if value < 0x80 {
            out.push(value as u8);
        } else {
            out.extend([(value as u8 & 0x7f) | 0x80, (value >> 7) as u8]);
        }
        out
    }

    pub(crate) fn active_node_info() -> Vec<u8> {
        [
            bytes_field(1, b"mycluster"),
            bytes_field(2, b"nn1"),
            bytes_field(3, b"nn1.example.com"),
            varint_field(4, 8020),
            varint_field(5, 8019),
        ]
        .concat()
    }

    pub(crate) fn hbase_master_data() -> Vec<u8> {
        let server = [
            bytes_field(1, b"hmaster-1.example.com"),
            varint_field(2, 16000),
        ]
        .concat();
        let master = [bytes_field(1, &server), varint_field(3, 16010)].concat();
        let id = b"master:16000";
        let mut data = vec![0xff];
        data.extend((id.len() as u32).to_be_bytes());
        data.extend(id);
        data.extend(MAGIC);
        data.extend(master);
        data
    }

    #[test]
    fn names_leader_nodes_by_name_and_parent() {
        assert_eq!(leader_dialect("/controller"), Some(Dialect::Kafka));
        assert_eq!(leader_dialect("/kafka/controller"), Some(Dialect::Kafka));
        assert_eq!(
            leader_dialect("/hadoop-ha/mycluster/ActiveStandbyElectorLock"),
            Some(Dialect::Hadoop)
        );
        assert_eq!(
            leader_dialect("/c1/CONTROLLER/LEADER"),
            Some(Dialect::Helix)
        );
        assert_eq!(leader_dialect("/hbase/master"), Some(Dialect::Hbase));
        assert_eq!(
            leader_dialect("/solr/overseer_elect/leader"),
            Some(Dialect::Solr)
        );
        for other in [
            "/LEADER",
            "/x/leader",
            "/hadoop-ha/mycluster/ActiveBreadCrumb",
            "/",
        ] {
            assert_eq!(leader_dialect(other), None, "{other}");
        }
    }

    #[test]
    fn decodes_each_services_record() {
        let kafka_record = br#"{"version":1,"brokerid":3,"timestamp":"1700000000000"}"#;
        assert_eq!(
            owner(Dialect::Kafka, kafka_record).as_deref(),
            Some("broker 3")
        );
        assert_eq!(
            owner(Dialect::Hadoop, &active_node_info()).as_deref(),
            Some("nn1 at nn1.example.com:8020 (mycluster, zkfc port 8019)")
        );
        let helix_record = br#"{"id":"controller_0","simpleFields":{"LIVE_INSTANCE":"4242@ctl-host","SESSION_ID":"1"},"listFields":{},"mapFields":{}}"#;
        assert_eq!(
            owner(Dialect::Helix, helix_record).as_deref(),
            Some("controller_0 (4242@ctl-host)")
        );
        assert_eq!(
            owner(Dialect::Hbase, &hbase_master_data()).as_deref(),
            Some("hmaster-1.example.com,16000")
        );
        let solr_record = br#"{"id":"72057594037927936-10.0.0.5:8983_solr-n_0000000001"}"#;
        assert_eq!(
            owner(Dialect::Solr, solr_record).as_deref(),
            Some("10.0.0.5:8983_solr")
        );
    }

    #[test]
    fn other_data_is_no_leader_record() {
        for dialect in [
            Dialect::Kafka,
            Dialect::Hadoop,
            Dialect::Helix,
            Dialect::Hbase,
            Dialect::Solr,
        ] {
            for data in [
                &b""[..],
                b"config",
                b"{}",
                b"[1]",
                b"\xff\x00\x00\x00\x09PBUF",
                b"\x0a\x05ab",
            ] {
                assert_eq!(owner(dialect, data), None, "{dialect} {data:?}");
            }
        }
        assert_eq!(owner(Dialect::Kafka, br#"{"brokerid":1}"#), None);
        assert_eq!(
            owner(Dialect::Curator, br#"{"version":1,"brokerid":1}"#),
            None
        );
    }
}
