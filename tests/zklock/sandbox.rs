//! scripts/sandbox: the local ZooKeeper for trying zklock out starts once
//! and answers, refuses a port it does not own, stops only the server it
//! started, and says which state it is in by its exit code.

use crate::support;

use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use support::server::four_letter;
use support::{Run, Running, Scratch, TestEnv, free_ports, process_alive};

const SANDBOX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/sandbox");

/// `scripts/sandbox ACTION` with its state in `dir` and its port `port`.
fn sandbox(action: &str, dir: &Path, port: u16) -> Run {
    let mut command = Command::new(SANDBOX);
    command
        .arg(action)
        .env("ZKLOCK_SANDBOX_DIR", dir)
        .env("ZKLOCK_SANDBOX_PORT", port.to_string());
    Running::start(command, format!("scripts/sandbox {action}"), None).wait(Duration::from_secs(90))
}

/// The pid in the sandbox's pid file.
fn pid_in(dir: &Path) -> i32 {
    std::fs::read_to_string(dir.join("zookeeper.pid"))
        .expect("the pid file")
        .trim()
        .parse()
        .expect("a pid")
}

#[test]
fn the_sandbox_starts_once_refuses_a_port_it_does_not_own_and_stops_only_its_own_server() {
    support::require_zookeeper();
    let scratch = Scratch::new();
    let dir = scratch.file("state");
    let port = free_ports(1)[0];
    sandbox("status", &dir, port).assert_code(1);

    sandbox("start", &dir, port).assert_success();
    assert_eq!(four_letter(port, "ruok").expect("ruok"), "imok");
    let pid = pid_in(&dir);
    // Starting again does nothing: the same server answers.
    sandbox("start", &dir, port).assert_success();
    assert_eq!(pid_in(&dir), pid, "no second server");
    sandbox("status", &dir, port).assert_success();
    // zklock works against it, TTL locks included.
    let env = TestEnv::on(&format!("127.0.0.1:{port}"));
    env.zklock(["lock", "tried", "--", "true"])
        .run()
        .assert_success();
    // Every four-letter word is allowed (so `stat` can name each session's
    // client), and its tick is ZooKeeper's usual 2 s.
    let conf = four_letter(port, "conf").expect("conf");
    assert!(conf.lines().any(|l| l == "tickTime=2000"), "{conf}");
    let cons = four_letter(port, "cons").expect("cons");
    assert!(cons.contains("queued="), "cons is refused: {cons}");
    let kept = env.zklock(["lock", "kept", "--ttl", "1h"]).run();
    kept.assert_success();
    let token = kept.stdout.trim().to_owned();

    // A port someone else holds is refused, and nothing is started.
    let taken = TcpListener::bind("127.0.0.1:0").expect("bind a port");
    let other = scratch.file("other");
    let taken_port = taken.local_addr().expect("address").port();
    sandbox("start", &other, taken_port).assert_code(1);
    assert!(!other.join("zookeeper.pid").exists(), "nothing was started");

    sandbox("stop", &dir, port).assert_success();
    assert!(!process_alive(pid), "the server is gone once stop returns");
    assert!(four_letter(port, "ruok").is_err(), "nothing answers");
    sandbox("status", &dir, port).assert_code(1);
    sandbox("stop", &dir, port).assert_success();

    // Its data survives a restart.
    sandbox("start", &dir, port).assert_success();
    assert!(
        env.connect().exists(&token).is_some(),
        "the TTL lock outlived the restart"
    );
    sandbox("stop", &dir, port).assert_success();

    // A pid file naming a process that is not this sandbox's server (a pid
    // reused since) gets no signal.
    let mut stranger = Command::new("sleep").arg("60").spawn().expect("sleep");
    std::fs::write(dir.join("zookeeper.pid"), stranger.id().to_string()).expect("pid file");
    sandbox("stop", &dir, port).assert_success();
    assert!(
        process_alive(stranger.id() as i32),
        "stop signalled a process it did not start"
    );
    stranger.kill().expect("kill sleep");
    stranger.wait().expect("reap sleep");
}
