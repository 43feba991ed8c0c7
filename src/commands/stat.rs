//! `zklock stat PATH`: a node's zkCli stat fields and data.

use anyhow::Result;
use comfy_table::Table;
use serde::Serialize;
use zookeeper_client as zkc;

use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::output::{self, Report};
use crate::zk;

/// What `stat` was asked for.
#[derive(Debug)]
pub struct StatArgs {
    /// The absolute path of the node.
    pub path: String,
}

/// A plain node: its path, stat and data (SPEC §7).
#[derive(Debug, Serialize)]
pub struct NodeReport {
    pub path: String,
    pub stat: NodeStat,
    pub data: Option<String>,
}

/// The zkCli stat fields, in snake_case.
#[derive(Debug, Serialize)]
pub struct NodeStat {
    pub czxid: i64,
    pub ctime_ms: i64,
    pub mzxid: i64,
    pub mtime_ms: i64,
    pub pzxid: i64,
    pub cversion: i32,
    pub data_version: i32,
    pub acl_version: i32,
    pub ephemeral_owner: String,
    pub data_length: i32,
    pub num_children: i32,
}

impl From<&zkc::Stat> for NodeStat {
    fn from(stat: &zkc::Stat) -> NodeStat {
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

impl Report for NodeReport {
    fn table(&self) -> Table {
        let s = &self.stat;
        let mut table = output::table(&[]);
        let rows: [(&str, String); 12] = [
            ("cZxid", format!("0x{:x}", s.czxid)),
            ("ctime", output::format_time_ms(s.ctime_ms)),
            ("mZxid", format!("0x{:x}", s.mzxid)),
            ("mtime", output::format_time_ms(s.mtime_ms)),
            ("pZxid", format!("0x{:x}", s.pzxid)),
            ("cversion", s.cversion.to_string()),
            ("dataVersion", s.data_version.to_string()),
            ("aclVersion", s.acl_version.to_string()),
            ("ephemeralOwner", s.ephemeral_owner.clone()),
            ("dataLength", s.data_length.to_string()),
            ("numChildren", s.num_children.to_string()),
            ("data", self.data.clone().unwrap_or_default()),
        ];
        for (field, value) in rows {
            table.add_row([field.to_owned(), value]);
        }
        table
    }
}

/// Reads the node and prints it; a missing node exits 6.
pub async fn run(globals: &Globals, args: StatArgs) -> Result<ExitStatus> {
    let session = zk::connect(&globals.connect).await?;
    let (data, stat) = session.get_data(&args.path).await?;
    session.close().await;
    let report = NodeReport {
        path: args.path,
        stat: NodeStat::from(&stat),
        data: output::data_text(&data),
    };
    globals.printer.report(&report)?;
    Ok(ExitStatus::Success)
}
