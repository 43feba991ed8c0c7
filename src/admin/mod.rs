//! Mutations of other clients' nodes: reaping stale contenders and empty lock
//! directories, and releasing or revoking a lock by hand. Kept apart from the read-only model, because every path here
//! deletes, and deletes only what the model proves to be a lock.

pub mod reap;
pub(crate) mod release;

use serde::Serialize;

use crate::lock::end::{DirRead, DirReads, directory_for};
use crate::zk::delete::Seen;
use crate::zk::{self, Session};

/// A lock directory whose nodes a break or a reap would delete, and whether
/// the end record would go into it: only over nothing or a record, never
/// over an application's data, where the deletes go alone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RecordInto {
    pub dir: String,
    pub end_record: bool,
}

/// The lock directories of `nodes` that take a record by their layout,
/// each as read now, but those `spared` (a reap deletes them too).
pub(crate) async fn records_into(
    session: &Session,
    nodes: &[Seen],
    spared: impl Fn(&str) -> bool,
) -> Result<Vec<RecordInto>, zk::Error> {
    let reads = DirReads::of(session, nodes).await?;
    let mut dirs: Vec<&str> = nodes
        .iter()
        .filter_map(|node| directory_for(&node.path))
        .filter(|dir| !spared(dir))
        .collect();
    dirs.sort_unstable();
    dirs.dedup();
    Ok(dirs
        .into_iter()
        .map(|dir| RecordInto {
            dir: dir.to_owned(),
            end_record: reads.get(dir).is_some_and(DirRead::takes_record),
        })
        .collect())
}

impl RecordInto {
    /// What it says, for people.
    pub(crate) fn line(&self) -> String {
        match self.end_record {
            true => format!("an end record goes into {}", self.dir),
            false => format!(
                "no end record goes into {}: it holds other data (or cannot be read)",
                self.dir
            ),
        }
    }
}
