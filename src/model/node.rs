//! A node's stat as zkCli shows it, in the snake_case of zklock's JSON.

use serde::Serialize;

use crate::zk;

/// The zkCli stat fields, in snake_case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct NodeStat {
    pub czxid: i64,
    pub ctime_ms: i64,
    pub mzxid: i64,
    pub mtime_ms: i64,
    pub pzxid: i64,
    pub cversion: i32,
    pub data_version: i32,
    pub acl_version: i32,
    /// The owner session, `0x...`; `0x0` for a persistent node.
    pub ephemeral_owner: String,
    pub data_length: i32,
    pub num_children: i32,
}

impl From<&zk::Stat> for NodeStat {
    fn from(stat: &zk::Stat) -> NodeStat {
        NodeStat {
            czxid: stat.czxid,
            ctime_ms: stat.ctime,
            mzxid: stat.mzxid,
            mtime_ms: stat.mtime,
            pzxid: stat.pzxid,
            cversion: stat.cversion,
            data_version: stat.version,
            acl_version: stat.aversion,
            ephemeral_owner: zk::format_session(stat.ephemeral_owner),
            data_length: stat.data_length,
            num_children: stat.num_children,
        }
    }
}
