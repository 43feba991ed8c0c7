//! Curator, kazoo and go-zookeeper contenders (the programs under
//! tests/peers), so tests can prove that zklock and those libraries exclude
//! each other. Curator and kazoo come twice: Debian's packages, and the
//! newest releases that scripts/versions fetches.
//!
//! Both speak one line protocol: `READY`, `ACQUIRED <node> <ms>`,
//! `RELEASED <ms>`, `TIMEOUT`. A peer started here holds until SIGTERM.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use super::cmd::{Running, TestEnv};
use super::server::fetched;

/// The jars CuratorPeer needs, all from Debian's packages.
const CURATOR_CLASSPATH: &[&str] = &[
    "/usr/share/java/curator-recipes.jar",
    "/usr/share/java/curator-framework.jar",
    "/usr/share/java/curator-client.jar",
    "/usr/share/java/zookeeper.jar",
    "/usr/share/java/zookeeper-jute.jar",
    "/usr/share/java/guava.jar",
    "/usr/share/java/slf4j-api.jar",
    "/usr/share/java/slf4j-nop.jar",
];

/// Debian's Python, the one that sees python3-kazoo.
const PYTHON: &str = "/usr/bin/python3";

/// Which library a peer uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Library {
    /// Debian's Curator (5.4).
    Curator,
    /// Debian's kazoo (2.8).
    Kazoo,
    /// The newest Curator, from scripts/versions.
    NewestCurator,
    /// The newest kazoo, in scripts/versions' virtual environment.
    NewestKazoo,
    /// go-zookeeper's Lock (tests/peers/gozk, built by scripts/versions);
    /// mutex only.
    GoZookeeper,
}

impl Library {
    /// The `--dialect` under which zklock queues with this library's
    /// contenders. go-zookeeper orders every child by its sequence number
    /// alone, so zklock's default (Curator's layout) queues with it too.
    pub fn dialect(self) -> &'static str {
        match self {
            Library::Curator | Library::NewestCurator | Library::GoZookeeper => "curator",
            Library::Kazoo | Library::NewestKazoo => "kazoo",
        }
    }

    /// The library and its exact version, for messages: "Curator 5.9.0".
    pub fn describe(self) -> String {
        match self {
            Library::Curator => "Curator (Debian's)".to_owned(),
            Library::Kazoo => "kazoo (Debian's)".to_owned(),
            Library::NewestCurator => format!("Curator {}", fetched("curator").0),
            Library::NewestKazoo => format!("kazoo {}", fetched("kazoo").0),
            Library::GoZookeeper => format!("go-zookeeper {}", fetched("go-zookeeper").0),
        }
    }
}

fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers")
}

fn classpath() -> String {
    CURATOR_CLASSPATH.join(":")
}

/// Compiles CuratorPeer once per test binary and returns the class dir.
fn curator_classes() -> &'static Path {
    static CLASSES: OnceLock<PathBuf> = OnceLock::new();
    CLASSES.get_or_init(|| {
        let missing: Vec<&str> = CURATOR_CLASSPATH
            .iter()
            .copied()
            .filter(|jar| !Path::new(jar).is_file())
            .collect();
        if super::find_on_path("javac").is_none() || !missing.is_empty() {
            panic!(
                "Curator or a JDK is not installed (missing: javac? {missing:?}): run scripts/setup \
                 (or: apt-get install default-jdk-headless libcurator-recipes-java)"
            );
        }
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("curator-peer");
        std::fs::create_dir_all(&out).expect("create class dir");
        let status = Command::new("javac")
            .args(["-nowarn", "-cp", &classpath(), "-d"])
            .arg(&out)
            .arg(peers_dir().join("CuratorPeer.java"))
            .status()
            .expect("run javac");
        assert!(status.success(), "javac CuratorPeer.java failed");
        out
    })
}

fn require_kazoo() {
    static CHECKED: OnceLock<()> = OnceLock::new();
    CHECKED.get_or_init(|| {
        let ok = Command::new(PYTHON)
            .args(["-c", "import kazoo"])
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            panic!("kazoo is not installed: run scripts/setup (or: apt-get install python3-kazoo)");
        }
    });
}

/// Starts a `library` contender for `lock` (a path inside the test's chroot)
/// in `mode` (`mutex`, `read`, `write`) with `extra` peer options, and
/// returns once it is connected. Without `--timeout-ms` it waits forever;
/// once it holds, it holds until SIGTERM.
pub fn peer(env: &TestEnv, library: Library, lock: &str, mode: &str, extra: &[&str]) -> Running {
    peer_on(&env.hosts(), library, lock, mode, extra)
}

/// [`peer`] connecting to `hosts` (a connect string with chroot), e.g.
/// through a fault proxy.
pub fn peer_on(hosts: &str, library: Library, lock: &str, mode: &str, extra: &[&str]) -> Running {
    let mut command = match library {
        Library::Curator => curator_command(&classpath()),
        // CuratorPeer uses only what Curator 5 keeps stable, so the class
        // compiled against Debian's 5.4 runs on the newest 5.x as well.
        Library::NewestCurator => {
            curator_command(&format!("{}/lib/*", fetched("curator").1.display()))
        }
        Library::Kazoo => {
            require_kazoo();
            let mut command = Command::new(PYTHON);
            command.arg(peers_dir().join("kazoo_peer.py"));
            command
        }
        Library::NewestKazoo => {
            let mut command = Command::new(fetched("kazoo").1.join("venv/bin/python3"));
            command.arg(peers_dir().join("kazoo_peer.py"));
            command
        }
        Library::GoZookeeper => Command::new(fetched("go-zookeeper").1.join("zk-peer")),
    };
    // Java decodes its arguments in the locale's encoding: without a UTF-8
    // locale a lock named in another script would reach Curator as `?`s.
    command.env("LC_ALL", "C.UTF-8");
    command
        .args([
            hosts,
            lock,
            mode,
            "--hold-ms",
            "600000",
            "--session-timeout-ms",
            "4000",
        ])
        .args(extra);
    let cmdline = format!(
        "{} peer {lock} {mode} {}",
        library.describe(),
        extra.join(" ")
    );
    let mut running = Running::start(command, cmdline, None);
    assert_eq!(running.next_line(Duration::from_secs(30)), "READY");
    running
}

/// `java CuratorPeer` with Curator's jars on `classpath`.
fn curator_command(classpath: &str) -> Command {
    let mut command = Command::new("java");
    command
        .arg("-cp")
        .arg(format!("{}:{classpath}", curator_classes().display()))
        .arg("CuratorPeer");
    command
}

/// Waits for the peer's `ACQUIRED` line and returns its node path.
pub fn acquired(peer: &mut Running, timeout: Duration) -> String {
    let line = peer.next_line(timeout);
    let node = line
        .strip_prefix("ACQUIRED ")
        .unwrap_or_else(|| panic!("expected ACQUIRED, got {line:?}"));
    node.split(' ').next().unwrap_or_default().to_owned()
}

/// Asserts that the peer gives up with `TIMEOUT` (it could not get the lock).
pub fn times_out(peer: &mut Running, timeout: Duration) {
    let line = peer.next_line(timeout);
    assert_eq!(line, "TIMEOUT", "the peer was expected to be kept out");
    peer.wait(timeout).assert_code(1);
}

/// Releases a holding peer (SIGTERM) and waits until it exits.
pub fn release(mut peer: Running) {
    peer.signal(libc::SIGTERM);
    peer.wait(Duration::from_secs(20)).assert_success();
}
