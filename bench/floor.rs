//! The floor for the benchmarks: one uncontended lock-run-release
//! with the fewest round trips a client can make, on the same client crate.
//!
//! Usage: `floor HOSTS LOCK_DIR COMMAND...`. It connects, creates its
//! ephemeral-sequential node and lists the directory in one round trip,
//! checks that it holds the lock, runs the command, and closes the session
//! (which deletes the node) without a separate delete. No retries, no
//! watches, no owner record: zklock can only be slower.

use std::process::ExitCode;

use zookeeper_client as zkc;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [hosts, dir, command @ ..] = args.as_slice() else {
        eprintln!("usage: floor HOSTS LOCK_DIR COMMAND...");
        return ExitCode::from(2);
    };
    let client = zkc::Client::connector()
        .with_session_timeout(std::time::Duration::from_secs(10))
        .connect(hosts)
        .await
        .expect("connect");
    let prefix = format!("{dir}/lock-");
    let options = zkc::CreateMode::EphemeralSequential.with_acls(zkc::Acls::anyone_all());
    let create = client.create(&prefix, b"", &options);
    let list = client.list_children(dir);
    let (created, children) = tokio::join!(create, list);
    let (_, sequence) = created.expect("create (the lock directory must exist)");
    let mine = format!("lock-{sequence}");
    let children = children.expect("list");
    let first = children
        .iter()
        .min_by_key(|c| c.rsplit('-').next().map(str::to_owned));
    assert_eq!(
        first,
        Some(&mine),
        "the floor measures an uncontended lock only"
    );
    let status = tokio::process::Command::new(&command[0])
        .args(&command[1..])
        .status()
        .await
        .expect("run the command");
    let mut state = client.state_watcher();
    drop(client);
    while !state.changed().await.is_terminated() {}
    ExitCode::from(status.code().unwrap_or(1) as u8)
}
