//! Promises of the docs that had no test of their own: free text cut to
//! `COLUMNS` in a pipe, a holder that `kill -TSTP` cannot stop, and an
//! exporter whose port is taken.

use crate::support;

use std::time::Duration;

use support::{Scratch, TestEnv, wait_until};

const WAIT: Duration = Duration::from_secs(30);

#[test]
fn off_a_terminal_free_text_is_cut_to_columns_when_it_is_set() {
    let env = TestEnv::new();
    let data = "x".repeat(4096);
    env.zklock(["lock", "cut", "--detach", "--lease", "2m", "--data", &data])
        .run()
        .assert_success();
    let piped = env.zklock(["ls"]).env("COLUMNS", "80").run();
    piped.assert_success();
    let lines = piped.stdout_lines();
    let row = lines.iter().find(|line| line.contains("/locks/cut"));
    let row = row.unwrap_or_else(|| panic!("no row for the lock: {piped:?}"));
    assert!(row.chars().count() <= 80 && row.ends_with('…'), "{row}");
}

#[test]
fn kill_tstp_does_not_stop_a_zklock_whose_command_runs() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let started = scratch.file("started");
    let mut holder = env
        .zklock([
            "lock",
            "tstp",
            "--",
            "sh",
            "-c",
            "touch \"$0\"; exec sleep 60",
        ])
        .arg(&started)
        .spawn();
    wait_until(WAIT, "the command to start", || started.exists());
    // A stopped zklock would leave the SIGTERM pending and never release.
    holder.signal(libc::SIGTSTP);
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_code(128 + libc::SIGTERM);
    assert_eq!(
        env.connect().children_if_any("/locks/tstp"),
        Vec::<String>::new()
    );
}

#[test]
fn an_exporter_that_cannot_listen_exits_10() {
    let env = TestEnv::new();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port of our own");
    let address = taken.local_addr().expect("its address").to_string();
    env.zklock(["exporter", "--listen", &address])
        .timeout(WAIT)
        .run()
        .assert_code(10);
}
