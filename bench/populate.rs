//! Fills a ZooKeeper tree with locks for the benchmarks (bench/): LOCKS lock
//! directories `ROOT/lock-NNNNNN`, each with CONTENDERS ephemeral-sequential
//! contenders named as Curator and zklock name them (`_c_<uuid>-lock-N`),
//! carrying a zklock owner record. Requests are pipelined, so a hundred
//! thousand nodes take seconds.
//!
//! Usage: `populate HOSTS ROOT LOCKS CONTENDERS`. Prints `READY <nodes>` once
//! every node exists, then keeps the session (and so the contenders) until
//! stdin closes, and closes the session.

use std::process::ExitCode;

use futures::stream::{self, StreamExt};
use zklock::lock::Owner;
use zookeeper_client as zkc;

/// Creates outstanding at once.
const WINDOW: usize = 1024;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [hosts, root, locks, contenders] = args.as_slice() else {
        eprintln!("usage: populate HOSTS ROOT LOCKS CONTENDERS");
        return ExitCode::from(2);
    };
    let (Ok(locks), Ok(contenders)) = (locks.parse::<usize>(), contenders.parse::<usize>()) else {
        eprintln!("populate: LOCKS and CONTENDERS must be numbers");
        return ExitCode::from(2);
    };
    let client = zkc::Client::connector()
        .with_session_timeout(std::time::Duration::from_secs(30))
        .connect(hosts)
        .await
        .expect("connect");
    let persistent = zkc::CreateMode::Persistent.with_acls(zkc::Acls::anyone_all());
    client.mkdir(root, &persistent).await.expect("create ROOT");
    let dirs: Vec<String> = (0..locks).map(|i| format!("{root}/lock-{i:06}")).collect();
    create_all(&client, dirs.iter().cloned(), &persistent, |_| Vec::new()).await;
    let sequential = zkc::CreateMode::EphemeralSequential.with_acls(zkc::Acls::anyone_all());
    let prefixes = dirs.iter().flat_map(|dir| {
        (0..contenders).map(move |_| format!("{dir}/_c_{}-lock-", uuid::Uuid::new_v4()))
    });
    create_all(&client, prefixes, &sequential, |prefix| {
        Owner::of_this_process(None, Some(format!("bench {prefix}"))).to_bytes()
    })
    .await;
    println!("READY {}", locks * (contenders + 1));
    // Wait on another thread, so this one keeps the session alive.
    let _ =
        tokio::task::spawn_blocking(|| std::io::copy(&mut std::io::stdin(), &mut std::io::sink()))
            .await;
    let mut state = client.state_watcher();
    drop(client);
    while !state.changed().await.is_terminated() {}
    ExitCode::SUCCESS
}

/// Creates every path, at most [`WINDOW`] at a time, with `data(path)`.
async fn create_all(
    client: &zkc::Client,
    paths: impl Iterator<Item = String>,
    options: &zkc::CreateOptions<'_>,
    data: impl Fn(&str) -> Vec<u8>,
) {
    stream::iter(paths)
        .map(|path| {
            let bytes = data(&path);
            async move {
                client
                    .create(&path, &bytes, options)
                    .await
                    .unwrap_or_else(|e| panic!("create {path}: {e}"));
            }
        })
        .buffer_unordered(WINDOW)
        .collect::<()>()
        .await;
}
