//! Fills a ZooKeeper tree with locks for the benchmarks (bench/): LOCKS lock
//! directories `ROOT/lock-NNNNNN`, each with CONTENDERS ephemeral-sequential
//! contenders named as Curator and zklock name them (`_c_<uuid>-lock-N`),
//! carrying a zklock owner record. Requests are pipelined, so a hundred
//! thousand nodes take seconds.
//!
//! With a LAYOUT of `kazoo-semaphore` or `curator-semaphore`, each of the
//! LOCKS is instead a full semaphore `ROOT/sem-NNNNNN` in that library's
//! layout: CONTENDERS leases (kazoo's `<hex32>` with the maximum in the
//! semaphore's data; Curator's `leases/_c_<uuid>-lease-N`) and CONTENDERS
//! acquirers queued on its internal lock (kazoo's `<path>-__lock__`,
//! Curator's `locks/`). One session makes every node, so every lease
//! holder waits for a lease of its own: one knot per semaphore, the
//! largest wait-for graph such a tree makes.
//!
//! Usage: `populate HOSTS ROOT LOCKS CONTENDERS [LAYOUT]`. Prints `READY
//! <nodes>` once every node exists, then keeps the session (and so the
//! contenders) until stdin closes, and closes the session.

use std::process::ExitCode;

use futures::stream::{self, StreamExt};
use zklock::lock::Owner;
use zookeeper_client as zkc;

/// Creates outstanding at once.
const WINDOW: usize = 1024;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (hosts, root, locks, contenders, layout) = match args.as_slice() {
        [h, r, l, c] => (h, r, l, c, "mutex"),
        [h, r, l, c, layout] => (h, r, l, c, layout.as_str()),
        _ => {
            eprintln!("usage: populate HOSTS ROOT LOCKS CONTENDERS [LAYOUT]");
            return ExitCode::from(2);
        }
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
    let nodes = match layout {
        "mutex" => mutexes(&client, root, locks, contenders).await,
        "kazoo-semaphore" => kazoo_semaphores(&client, root, locks, contenders).await,
        "curator-semaphore" => curator_semaphores(&client, root, locks, contenders).await,
        _ => {
            eprintln!("populate: LAYOUT is mutex, kazoo-semaphore or curator-semaphore");
            return ExitCode::from(2);
        }
    };
    println!("READY {nodes}");
    // Wait on another thread, so this one keeps the session alive.
    let _ =
        tokio::task::spawn_blocking(|| std::io::copy(&mut std::io::stdin(), &mut std::io::sink()))
            .await;
    let mut state = client.state_watcher();
    drop(client);
    while !state.changed().await.is_terminated() {}
    ExitCode::SUCCESS
}

/// LOCKS mutexes of CONTENDERS each, as Curator and zklock name them;
/// returns how many nodes it made.
async fn mutexes(client: &zkc::Client, root: &str, locks: usize, contenders: usize) -> usize {
    let dirs = persistent_dirs(client, root, "lock", locks, &[""]).await;
    let prefixes = dirs.iter().flat_map(|dir| {
        (0..contenders).map(move |_| format!("{dir}/_c_{}-lock-", uuid::Uuid::new_v4()))
    });
    create_all(client, prefixes, &sequential(), |prefix| {
        Owner::of_this_process(None, Some(format!("bench {prefix}"))).to_bytes()
    })
    .await;
    locks * (contenders + 1)
}

/// LOCKS full kazoo semaphores of CONTENDERS leases and as many queued
/// acquirers; returns how many nodes it made.
async fn kazoo_semaphores(client: &zkc::Client, root: &str, locks: usize, leases: usize) -> usize {
    let dirs = persistent_dirs(client, root, "sem", locks, &["", "-__lock__"]).await;
    let semaphores = dirs.iter().filter(|dir| !dir.ends_with("__"));
    for dir in semaphores.clone() {
        client
            .set_data(dir, leases.to_string().as_bytes(), None)
            .await
            .unwrap_or_else(|e| panic!("set {dir}: {e}"));
    }
    let ephemeral = zkc::CreateMode::Ephemeral.with_acls(zkc::Acls::anyone_all());
    let hex = || uuid::Uuid::new_v4().simple().to_string();
    let lease_paths = semaphores
        .clone()
        .flat_map(|dir| (0..leases).map(move |_| format!("{dir}/{}", hex())));
    create_all(client, lease_paths, &ephemeral, |_| b"bench".to_vec()).await;
    let acquirers = semaphores
        .flat_map(|dir| (0..leases).map(move |_| format!("{dir}-__lock__/{}__lock__", hex())));
    create_all(client, acquirers, &sequential(), |_| b"bench".to_vec()).await;
    locks * (2 + 2 * leases)
}

/// LOCKS full Curator semaphores of CONTENDERS leases and as many queued
/// acquirers; returns how many nodes it made.
async fn curator_semaphores(
    client: &zkc::Client,
    root: &str,
    locks: usize,
    leases: usize,
) -> usize {
    let dirs = persistent_dirs(client, root, "sem", locks, &["", "/leases", "/locks"]).await;
    let queues = dirs
        .iter()
        .filter(|dir| dir.ends_with("/leases") || dir.ends_with("/locks"));
    let prefixes = queues.flat_map(|dir| {
        let what = if dir.ends_with("/leases") {
            "lease"
        } else {
            "lock"
        };
        (0..leases).map(move |_| format!("{dir}/_c_{}-{what}-", uuid::Uuid::new_v4()))
    });
    create_all(client, prefixes, &sequential(), |_| b"127.0.0.1".to_vec()).await;
    locks * (3 + 2 * leases)
}

/// Creates `ROOT/NAME-NNNNNN` followed by each of `suffixes` for each of
/// `count` locks, parents first; returns them in that order.
async fn persistent_dirs(
    client: &zkc::Client,
    root: &str,
    name: &str,
    count: usize,
    suffixes: &[&str],
) -> Vec<String> {
    let persistent = zkc::CreateMode::Persistent.with_acls(zkc::Acls::anyone_all());
    let mut all = Vec::new();
    for suffix in suffixes {
        let dirs: Vec<String> = (0..count)
            .map(|i| format!("{root}/{name}-{i:06}{suffix}"))
            .collect();
        create_all(client, dirs.iter().cloned(), &persistent, |_| Vec::new()).await;
        all.extend(dirs);
    }
    all
}

fn sequential() -> zkc::CreateOptions<'static> {
    zkc::CreateMode::EphemeralSequential.with_acls(zkc::Acls::anyone_all())
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
