//! Property tests: arbitrary names of every script and arbitrary bytes as
//! data, through every parser of outside data and through the whole model,
//! from a directory listing to a lock's JSON. Nothing may panic, and the
//! formats that have a round trip (sequence suffixes, zklock's own names,
//! owner records, paths) keep it.

use std::collections::HashMap;

use proptest::prelude::*;

use super::layout::{self, ChildrenByDir, Depth};
use super::locks::{self, NodeRead};
use super::{hbase, leaders, protobuf};
use crate::lock::name::{self, ContenderKind, Dialect};
use crate::lock::owner::Owner;
use crate::lock::{node, semaphore};
use crate::zk::{self, path};

/// Cases per property: enough to reach the odd corners of Unicode that
/// `any::<char>()` leans towards, small enough for a loaded machine.
const CASES: u32 = 1024;

/// Every dialect, for the decoders that take one.
const DIALECTS: [Dialect; 11] = [
    Dialect::Curator,
    Dialect::Kazoo,
    Dialect::Hbase,
    Dialect::ZkRecipe,
    Dialect::ZkCRecipe,
    Dialect::GoZookeeper,
    Dialect::Solr,
    Dialect::Kafka,
    Dialect::Hadoop,
    Dialect::Helix,
    Dialect::Generic,
];

/// Characters that break naive parsers: multi-byte letters of several
/// scripts, combining marks, bidi controls, digits of other scripts, and
/// the ASCII that names are made of.
fn tricky_char() -> impl Strategy<Value = char> {
    prop_oneof![
        any::<char>(),
        prop::sample::select(vec![
            'é', 'ß', 'ж', '配', '置', 'ア', '\u{301}', '\u{202e}', '\u{2066}', '\u{200f}',
            '\u{660}', '\u{669}', '\u{ff10}', '\u{ff19}', '\u{966}', '-', '_', '0', '9', '/', '\n',
            '\u{1b}', '\u{7f}', '\u{85}',
        ]),
    ]
}

fn tricky_string(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(tricky_char(), 0..max).prop_map(String::from_iter)
}

/// A child name: anything, or a dialect's stem in front of a sequence
/// suffix or of arbitrary text.
fn child_name() -> impl Strategy<Value = String> {
    let stems = prop::sample::select(vec![
        "_c_2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f-lock-",
        "_c_2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f-__READ__",
        "_c_2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f-lease-",
        "2f1c4d9e8a7b4c3d9e2f1a2b3c4d5e6f__lock__",
        "2f1c4d9e8a7b4c3d9e2f1a2b3c4d5e6f__rlock__",
        "write-",
        "read-",
        "lock-",
        "x-72057594037927936-",
        "n_",
        "配置文件-lock-",
        "déploiement-lock-",
        "leases",
        "locks",
    ]);
    let suffix = prop_oneof![
        any::<i32>().prop_map(|n| format!("{n:010}")),
        tricky_string(12),
    ];
    prop_oneof![
        tricky_string(24),
        (stems, suffix).prop_map(|(stem, suffix)| format!("{stem}{suffix}")),
    ]
}

/// Sequences whose `%010d` form says which they are: a wrapped counter
/// from -1000000000 down prints eleven characters, `-` and ten digits,
/// which read as the positive ten digits after a stem ending in `-`
/// (`lock--1000000000`), and the positive reading is the one taken.
fn unambiguous_sequence() -> impl Strategy<Value = i32> {
    prop_oneof![-999_999_999..=i32::MAX, Just(i32::MIN)]
}

/// What a read of a node may answer: gone, or arbitrary data and stat.
fn node_read() -> impl Strategy<Value = Option<NodeRead>> {
    let data = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..64),
        Just(b"2".to_vec()),
        Just(br#"{"tool":"zklock","version":"1","host":"h","pid":1,"user":"u","command":null,"time":"t","data":null}"#.to_vec()),
        Just(br#"{"version":1,"brokerid":7,"timestamp":"1"}"#.to_vec()),
    ];
    prop::option::weighted(
        0.9,
        (
            data,
            any::<i64>(),
            any::<i64>(),
            any::<i32>(),
            any::<i64>(),
            any::<i32>(),
        )
            .prop_map(
                |(data, czxid, owner, num_children, ctime, version)| NodeRead {
                    stat: zk::Stat {
                        data_length: i32::try_from(data.len()).unwrap_or(i32::MAX),
                        num_children,
                        ctime,
                        mtime: ctime,
                        version,
                        ..zk::test_stat(czxid, owner)
                    },
                    data,
                },
            ),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn any_name_parses_without_panic(name in tricky_string(40)) {
        if let Some(parsed) = name::parse(&name) {
            prop_assert!(name.ends_with(&format!("{:010}", parsed.sequence)), "{name:?}");
        }
        let _ = semaphore::parse_lease(&name);
        let _ = node::contender(&name, &zk::test_stat(1, 1), name.as_bytes());
    }

    #[test]
    fn sequences_round_trip_after_any_stem(stem in tricky_string(20), sequence in unambiguous_sequence()) {
        let name = format!("{stem}{sequence:010}");
        prop_assert_eq!(name::split_sequence(&name), Some((stem.as_str(), sequence)));
    }

    #[test]
    fn own_names_round_trip(sequence in unambiguous_sequence(), session in any::<i64>(),
                            dialect in prop::sample::select(DIALECTS.to_vec()),
                            kind in prop::sample::select(vec![
                                ContenderKind::Mutex, ContenderKind::Read, ContenderKind::Write])) {
        let token = "2f1c4d9e-8a7b-4c3d-9e2f-1a2b3c4d5e6f";
        if let Some(prefix) = name::own_prefix(dialect, kind, token, session) {
            let parsed = name::parse(&format!("{prefix}{sequence:010}"));
            prop_assert_eq!(parsed.map(|p| (p.dialect, p.kind.mode(), p.sequence)),
                            Some((dialect, kind.mode(), sequence)));
        }
    }

    #[test]
    fn owner_records_round_trip(host in tricky_string(20), user in tricky_string(20),
                                pid in any::<u32>(), data in prop::option::of(tricky_string(40)),
                                command in prop::option::of(prop::collection::vec(tricky_string(10), 0..4))) {
        let owner = Owner { host, user, pid, data, command, ..Owner::of_this_process(None, None) };
        prop_assert_eq!(Owner::parse(&owner.to_bytes()), Some(owner));
    }

    #[test]
    fn decoders_take_any_bytes(data in prop::collection::vec(any::<u8>(), 0..256), session in any::<i64>()) {
        let _ = Owner::parse(&data);
        let _ = hbase::decode(&data);
        let _ = hbase::server_name(&data);
        let _ = protobuf::fields(&data).count();
        let _ = semaphore::kazoo_max_leases(&data);
        for dialect in DIALECTS {
            let _ = leaders::owner(dialect, &data);
            let _ = locks::owner_text(dialect, &data, session);
        }
    }

    #[test]
    fn paths_resolve_and_split_back(root in prop::sample::select(vec!["/", "/locks", "/配置"]),
                                    name in tricky_string(30)) {
        if let Ok(full) = path::resolve(root, &name) {
            prop_assert!(path::validate(&full).is_ok());
            if let Some(parent) = path::parent(&full) {
                prop_assert_eq!(path::join(parent, path::basename(&full)), full.clone());
            }
        }
        let _ = zk::parse_session(&name);
        let _ = leaders::leader_dialect(&name);
    }

    #[test]
    fn any_tree_models_into_valid_json(
        children in prop::collection::vec(child_name(), 0..12),
        grandchildren in prop::collection::vec(child_name(), 0..6),
        reads in prop::collection::vec(node_read(), 64),
        now_ms in any::<i64>(),
    ) {
        let mut listing: ChildrenByDir = HashMap::new();
        let sub = children.iter().find(|c| name::parse(c).is_none() && !c.contains('/') && !c.is_empty());
        if let Some(sub) = sub {
            listing.insert(path::join("/l", sub), grandchildren);
        }
        listing.insert("/l".to_owned(), children);
        for site in layout::find_sites(listing, "/l", Depth::Tree, layout::Runs::Read) {
            let mut reads = reads.iter().cycle().cloned();
            let nodes: Vec<Option<NodeRead>> = (0..site.read_count()).map(|_| reads.next().flatten()).collect();
            for lock in site.build(nodes, now_ms) {
                let json = serde_json::to_string(&lock).expect("a lock serialises");
                prop_assert!(serde_json::from_str::<serde_json::Value>(&json).is_ok(), "{json}");
            }
        }
    }
}
