//! The floor of the reap benchmark: the job of `zklock reap
//! --all ROOT` on a tree of lock directories (ROOT/DIR/CONTENDER, as
//! bench/populate.rs makes them) with the fewest round trips a client
//! can make, on the same client crate.
//!
//! Usage: `delete_floor HOSTS ROOT`. It lists ROOT, lists every directory
//! (pipelined), deletes every child of them in multi transactions of
//! [`BATCH`] deletes (no version check, [`MULTI_WINDOW`] transactions in
//! flight), prints how many it deleted and closes its session, as zklock
//! does. No reading of data or versions, no model of the locks, no retries:
//! zklock can only be slower.

use std::process::ExitCode;

use futures::stream::{self, StreamExt};
use zookeeper_client as zkc;

/// Listings outstanding at once.
const WINDOW: usize = 1024;
/// Deletes in one multi transaction: few enough that a transaction of long
/// paths stays far below the server's 1 MB request limit.
const BATCH: usize = 1000;
/// Multi transactions outstanding at once.
const MULTI_WINDOW: usize = 8;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [hosts, root] = args.as_slice() else {
        eprintln!("usage: delete_floor HOSTS ROOT");
        return ExitCode::from(2);
    };
    let owned = zkc::Client::connector()
        .with_session_timeout(std::time::Duration::from_secs(30))
        .connect(hosts)
        .await
        .expect("connect");
    let client = &owned;
    let dirs: Vec<String> = client
        .list_children(root)
        .await
        .expect("list ROOT")
        .into_iter()
        .map(|name| format!("{root}/{name}"))
        .collect();
    let nodes: Vec<String> = stream::iter(&dirs)
        .map(|dir| async move {
            let children = client.list_children(dir).await.expect("list a directory");
            children
                .into_iter()
                .map(|name| format!("{dir}/{name}"))
                .collect::<Vec<_>>()
        })
        .buffer_unordered(WINDOW)
        .flat_map(stream::iter)
        .collect()
        .await;
    let deleted: usize = stream::iter(nodes.chunks(BATCH))
        .map(|batch| async move {
            let mut multi = client.new_multi_writer();
            for node in batch {
                multi.add_delete(node, None).expect("a valid path");
            }
            multi.commit().await.map_or(0, |results| results.len())
        })
        .buffer_unordered(MULTI_WINDOW)
        .collect::<Vec<usize>>()
        .await
        .into_iter()
        .sum();
    println!("{deleted}");
    let mut state = owned.state_watcher();
    drop(owned);
    while !state.changed().await.is_terminated() {}
    ExitCode::SUCCESS
}
