//! The files under contrib/ that plug zklock into other software, each
//! checked by that software: the Prometheus alert rules by `promtool check
//! rules` and by their unit tests under `promtool test rules` (each rule
//! fires on a series that should alert and stays quiet on one that should
//! not); the Grafana dashboard's queries against the metric names a live
//! exporter serves; and the systemd unit of the exporter by `systemd-analyze
//! verify`, with its hardening in place.

use crate::monitoring::{exporter, get};
use crate::support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use support::{Scratch, TestEnv};

const WAIT: Duration = Duration::from_secs(30);

fn contrib(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("contrib")
        .join(file)
}

/// A program from `PATH`, or a failure that names the package that installs it.
fn required(program: &str, package: &str) -> PathBuf {
    support::find_on_path(program).unwrap_or_else(|| {
        panic!("{program} is not installed: run scripts/setup (or: apt-get install {package})")
    })
}

/// Runs `program args` and asserts that it succeeded without a complaint on
/// stderr: `systemd-analyze verify` exits 0 even for a setting it ignores.
#[track_caller]
fn accepted(mut command: Command) -> String {
    let out = command.output().expect("run the checker");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.trim().is_empty(),
        "{command:?} refused:\n{}{stderr}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_alert_rules_pass_promtool_s_check_and_their_unit_tests() {
    let promtool = required("promtool", "prometheus");
    let mut check = Command::new(&promtool);
    check
        .args(["check", "rules"])
        .arg(contrib("prometheus/zklock-rules.yml"));
    let checked = accepted(check);
    assert!(checked.contains("SUCCESS: 7 rules found"), "{checked}");
    let mut test = Command::new(&promtool);
    test.current_dir(contrib("prometheus"))
        .args(["test", "rules", "zklock-rules.test.yml"]);
    accepted(test);
}

/// Every alert of the rules file has a unit test that expects it to fire.
#[test]
fn every_alert_rule_has_a_test_that_expects_it_to_fire() {
    let rules = std::fs::read_to_string(contrib("prometheus/zklock-rules.yml")).unwrap();
    let tests = std::fs::read_to_string(contrib("prometheus/zklock-rules.test.yml")).unwrap();
    let alerts: Vec<&str> = rules
        .lines()
        .filter_map(|line| line.trim().strip_prefix("- alert: "))
        .collect();
    assert_eq!(alerts.len(), 7, "{alerts:?}");
    for alert in alerts {
        let firing = tests
            .split(&format!("alertname: {alert}\n"))
            .skip(1)
            .any(|after| {
                after
                    .lines()
                    .next()
                    .is_some_and(|line| line.trim() == "exp_alerts:")
            });
        assert!(firing, "no test expects {alert} to fire");
    }
}

/// The metric names a query uses: every `zklock_…` word in it.
fn metric_names(query: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = query;
    while let Some(at) = rest.find("zklock_") {
        let name: String = rest[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        rest = &rest[at + name.len()..];
        names.insert(name);
    }
    names
}

/// The names of the series a scrape serves, histograms' `_bucket`, `_sum`
/// and `_count` included.
fn served_names(scrape: &str) -> BTreeSet<String> {
    scrape
        .lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .filter_map(|line| line.split(['{', ' ']).next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_dashboard_queries_only_metrics_a_live_exporter_serves() {
    let text = std::fs::read_to_string(contrib("grafana/zklock-dashboard.json")).unwrap();
    let dashboard: serde_json::Value = serde_json::from_str(&text).expect("the dashboard is JSON");
    let queries: Vec<String> = dashboard["panels"]
        .as_array()
        .expect("panels")
        .iter()
        .flat_map(|panel| panel["targets"].as_array().cloned().unwrap_or_default())
        .map(|target| target["expr"].as_str().expect("a query").to_owned())
        .chain(
            dashboard["templating"]["list"]
                .as_array()
                .expect("variables")
                .iter()
                .filter_map(|variable| variable["query"].as_str().map(str::to_owned)),
        )
        .collect();
    let used: BTreeSet<String> = queries.iter().flat_map(|q| metric_names(q)).collect();
    assert!(used.len() >= 10, "the dashboard shows too little: {used:?}");

    // A hold begun and ended under the exporter's eyes, and one still
    // waited on, so that every family has a series to show.
    let env = TestEnv::new();
    let (mut exporter, address) = exporter(env.zklock(Vec::<&str>::new()), &[]);
    env.zklock(["lock", "dash", "--", "true"])
        .run()
        .assert_success();
    let mut holder = env.zklock(["lock", "dash"]).spawn();
    holder.next_line(WAIT);
    let mut waiter = env.zklock(["lock", "dash"]).spawn();
    let deadline = Instant::now() + WAIT;
    loop {
        let served = get(&address, "/metrics", None)
            .map_or_else(BTreeSet::new, |(_, _, body)| served_names(&body));
        let missing: Vec<&String> = used.difference(&served).collect();
        if missing.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the exporter never served {missing:?}; it serves {served:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
    waiter.signal(libc::SIGTERM);
    waiter.wait(WAIT);
    exporter.signal(libc::SIGTERM);
    exporter.wait(WAIT).assert_success();
}

#[test]
fn the_exporter_s_systemd_unit_verifies_and_is_hardened() {
    let analyze = required("systemd-analyze", "systemd");
    let unit = std::fs::read_to_string(contrib("systemd/zklock-exporter.service")).unwrap();
    for setting in [
        "DynamicUser=yes",
        "ProtectSystem=strict",
        "NoNewPrivileges=yes",
        "ProtectHome=yes",
        "CapabilityBoundingSet=\n",
    ] {
        assert!(unit.contains(setting), "the unit lacks {setting:?}");
    }
    assert!(
        unit.contains("ExecStart=/usr/bin/zklock exporter "),
        "{unit}"
    );
    // The unit as installed: its program where the package puts it, here
    // the binary under test, and its man page where `man` finds it.
    let scratch = Scratch::new();
    let man1 = scratch.file("man/man1");
    std::fs::create_dir_all(&man1).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("man/zklock.1"),
        man1.join("zklock.1"),
    )
    .unwrap();
    let installed = scratch.file("zklock-exporter.service");
    std::fs::write(
        &installed,
        unit.replace("/usr/bin/zklock", support::cmd::ZKLOCK),
    )
    .unwrap();
    let mut verify = Command::new(analyze);
    verify
        .env("MANPATH", scratch.file("man"))
        .arg("verify")
        .arg(&installed);
    accepted(verify);
}
