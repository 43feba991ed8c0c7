//! A connection that fails says why, server by server: no such host (at
//! once, not after the connect timeout, when no name resolves), refused,
//! no answer, hung up (a TLS port spoken to in plaintext), a TLS handshake
//! that fails, and any other error the system gives, as it gives it. Each
//! exits 3 (a refused authentication exits 5).
//!
//! The reasons are read from the declared `server_unreachable` events of
//! the JSON log (`server`, `reason`), and the human message must name each
//! server.

use std::time::Duration;

use crate::support::secured::{sasl_server, tls_server};
use crate::support::{
    Blackhole, Run, ZkEnsemble, Zklock, dead_port, in_an_empty_network, wait_until,
};

/// `stat /` against `hosts` with the JSON log on.
fn reach(hosts: &str, extra: &[&str]) -> Zklock {
    Zklock::new(["-v", "stat", "/"])
        .hosts(hosts)
        .args(extra)
        .json_log()
}

/// Runs [`reach`].
fn try_reach(hosts: &str, extra: &[&str]) -> Run {
    reach(hosts, extra).run()
}

/// The `reason` of each `server_unreachable` event, by server.
fn reasons(run: &Run) -> Vec<(String, String)> {
    run.stderr
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|line| line["event"] == "server_unreachable")
        .map(|line| {
            (
                line["server"].as_str().unwrap_or_default().to_owned(),
                line["reason"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn assert_reasons(run: &Run, expected: &[(&str, &str)]) {
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(server, reason)| ((*server).to_owned(), (*reason).to_owned()))
        .collect();
    assert_eq!(reasons(run), expected, "{}", run.stderr);
    for (server, _) in &expected {
        assert!(
            run.stderr
                .lines()
                .any(|l| l.starts_with("zklock: ") && l.contains(server.as_str())),
            "the message names no {server}: {}",
            run.stderr
        );
    }
}

#[test]
fn a_refused_port_says_refused() {
    let refused = format!("127.0.0.1:{}", dead_port());
    let run = try_reach(&refused, &["--connect-timeout", "1s"]);
    run.assert_code(3);
    assert_reasons(&run, &[(&refused, "refused")]);
}

#[test]
fn with_no_hosts_zklock_asks_127_0_0_1_2181_and_a_port_left_out_is_2181() {
    let unset = Zklock::new(["-v", "stat", "/", "--connect-timeout", "1s"]).json_log();
    let run = in_an_empty_network(&unset, "exec \"$@\"");
    run.assert_code(3);
    assert_reasons(&run, &[("127.0.0.1:2181", "refused")]);
    let run = in_an_empty_network(&unset.hosts("127.0.0.2"), "exec \"$@\"");
    run.assert_code(3);
    assert_reasons(&run, &[("127.0.0.2:2181", "refused")]);
}

#[test]
fn a_name_that_does_not_resolve_fails_at_once() {
    let run = try_reach("nohost.invalid:2181", &["--connect-timeout", "5s"]);
    run.assert_code(3)
        .assert_faster_than(Duration::from_secs(2));
    assert_reasons(&run, &[("nohost.invalid:2181", "no_such_host")]);
}

#[test]
fn each_server_has_its_own_reason() {
    let refused = format!("127.0.0.1:{}", dead_port());
    let hole = Blackhole::new();
    let hosts = format!("nohost.invalid:2181,{refused},{}", hole.address());
    let run = try_reach(&hosts, &["--connect-timeout", "1s"]);
    run.assert_code(3);
    assert_reasons(
        &run,
        &[
            ("nohost.invalid:2181", "no_such_host"),
            (&refused, "refused"),
            (&hole.address(), "no_answer"),
        ],
    );
}

#[test]
fn a_server_that_never_answers_says_so() {
    let hole = Blackhole::new();
    let run = try_reach(&hole.address(), &["--connect-timeout", "1s"]);
    run.assert_code(3)
        .assert_faster_than(Duration::from_secs(5));
    assert_reasons(&run, &[(&hole.address(), "no_answer")]);
}

#[test]
fn a_silent_server_is_given_up_once_the_connect_timeout_and_one_more_try_are_over() {
    // Half a second for the session, half a second more to find out why;
    // not the 3 s in which `stat` asks the members who is connected.
    let hole = Blackhole::new();
    let run = try_reach(&hole.address(), &["--connect-timeout", "500ms"]);
    run.assert_code(3);
    run.assert_took(Duration::from_millis(950)..Duration::from_millis(2_200));
}

#[test]
fn an_address_no_packet_reaches_times_out() {
    // Sent out loopback, where no address is its own, a SYN to the
    // documentation network is dropped unanswered: the connect times out.
    const NOWHERE: &str = "192.0.2.1:2181";
    let run = in_an_empty_network(
        &reach(NOWHERE, &["--connect-timeout", "1s"]),
        "/sbin/ip route add 192.0.2.0/24 dev lo || exit 97\nexec \"$@\"",
    );
    run.assert_code(3);
    run.assert_took(Duration::from_millis(1_900)..Duration::from_secs(6));
    assert_reasons(&run, &[(NOWHERE, "timed_out")]);
}

#[test]
fn an_address_with_no_route_says_other() {
    // In a namespace whose only route is loopback's, a connect to the
    // documentation network fails at once with "network unreachable": no
    // reason of its own, so the system's word is given as it is.
    const NOWHERE: &str = "192.0.2.1:2181";
    let run = in_an_empty_network(&reach(NOWHERE, &["--connect-timeout", "1s"]), "exec \"$@\"");
    run.assert_code(3);
    assert_reasons(&run, &[(NOWHERE, "other")]);
}

#[test]
fn a_lone_member_without_its_quorum_gives_no_session() {
    let ensemble = ZkEnsemble::start(2);
    // The follower learns at once that the leader is gone; a leader would
    // wait out the sync limit first.
    let lone = ensemble.server(ensemble.followers()[0]);
    ensemble.server(ensemble.leader()).kill();
    wait_until(
        Duration::from_secs(20),
        "the lone member to stop serving",
        || !lone.is_serving(),
    );
    let run = try_reach(&lone.address(), &["--connect-timeout", "1s"]);
    run.assert_code(3);
    assert_reasons(&run, &[(&lone.address(), "no_session")]);
}

#[test]
fn a_tls_port_spoken_to_in_plaintext_hangs_up() {
    let tls = tls_server();
    let server = format!("localhost:{}", tls.port);
    let run = try_reach(&server, &["--connect-timeout", "2s"]);
    run.assert_code(3);
    assert_reasons(&run, &[(&server, "hung_up")]);
}

#[test]
fn a_tls_server_with_an_untrusted_certificate_fails_the_handshake() {
    let tls = tls_server();
    let server = format!("localhost:{}", tls.port);
    let rogue = tls.certs.rogue_ca();
    let run = reach(
        &server,
        &["--tls", "--tls-ca", &rogue, "--connect-timeout", "2s"],
    )
    .args(tls.certs.alice_flags())
    .run();
    run.assert_code(3);
    assert_reasons(&run, &[(&server, "tls_handshake")]);
}

#[test]
fn refused_sasl_credentials_exit_5_not_3() {
    let password = crate::support::secured::scratch_dir().join("unreachable-wrong.pw");
    std::fs::write(&password, "wrong\n").expect("write the password file");
    let run = Zklock::new(["--sasl", "digest-md5", "--sasl-user", "alice"])
        .arg("--sasl-password-file")
        .arg(&password)
        .args(["--connect-timeout", "2s", "stat", "/"])
        .hosts(sasl_server().address())
        .run();
    run.assert_code(5);
}

#[test]
fn a_port_that_refuses_fails_at_once_not_after_the_connect_timeout() {
    let refused = format!("127.0.0.1:{}", dead_port());
    let run = try_reach(&refused, &["--connect-timeout", "10s"]);
    run.assert_code(3)
        .assert_faster_than(Duration::from_secs(2));
    assert_reasons(&run, &[(&refused, "refused")]);
    // A lock that may wait long fails as soon: nothing listens to wait for.
    let run = Zklock::new(["lock", "-w", "30s", "x", "--", "true"])
        .hosts(&refused)
        .args(["--connect-timeout", "10s"])
        .run();
    run.assert_code(3)
        .assert_faster_than(Duration::from_secs(2));
}

#[test]
fn one_member_that_listens_is_waited_for_when_the_others_refuse() {
    let refused = format!("127.0.0.1:{}", dead_port());
    let hole = Blackhole::new();
    let run = try_reach(
        &format!("{refused},{}", hole.address()),
        &["--connect-timeout", "1s"],
    );
    run.assert_code(3);
    run.assert_took(Duration::from_millis(950)..Duration::from_secs(5));
}
