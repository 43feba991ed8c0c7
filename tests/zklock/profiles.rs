//! Cluster profiles: `-C/--cluster NAME` or ZKLOCK_CLUSTER selects a
//! `[clusters.NAME]` table of the configuration file (ZKLOCK_CONFIG) whose
//! keys are global options. A flag beats a variable, a variable beats the
//! profile, the profile beats the built-in default; a profile zklock cannot
//! use is a usage error (exit 2) that names the file and the line.
//!
//! Which root a command used is observed through `stat probe -o json`: a
//! node `probe` exists under each candidate root, and the JSON names the
//! node's path.

use std::path::PathBuf;

use crate::support::digest_acl;
use crate::support::secured::{scratch_dir, tls_server};
use crate::support::{Scratch, TestEnv, Zklock, dead_port};

/// Writes `text` as a configuration file of its own; returns its path.
fn config_file(text: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let file = scratch_dir().join(format!(
        "profiles-{}.toml",
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&file, text).expect("write the configuration file");
    file
}

/// The roots a test chooses between, each holding a node `probe`.
const ROOTS: [&str; 4] = ["/from-flag", "/from-env", "/from-profile", "/locks"];

fn with_probes() -> TestEnv {
    let env = TestEnv::new();
    for root in ROOTS {
        env.zk().create(root, b"");
        env.zk().create(&format!("{root}/probe"), b"");
    }
    env
}

/// The root `zklock` used: the parent of the `probe` that `stat` found.
fn root_used(zklock: Zklock) -> String {
    let run = zklock.args(["-o", "json", "stat", "probe"]).run();
    assert_eq!(run.code, Some(0), "{}: {}", run.cmdline, run.stderr);
    let stat: serde_json::Value = run.json();
    let path = stat["path"].as_str().expect("stat's JSON names the path");
    path.strip_suffix("/probe")
        .expect("a probe node")
        .to_owned()
}

#[test]
fn flag_beats_variable_beats_profile_beats_default() {
    let env = with_probes();
    let file = config_file(
        "[clusters.p]\nroot = \"/from-profile\"\n\n[clusters.q]\nroot = \"/from-env\"\n",
    );
    let base = || env.zklock(Vec::<&str>::new()).env("ZKLOCK_CONFIG", &file);
    let cases = [
        ("nothing given: the default", base(), "/locks"),
        (
            "profile over default",
            base().args(["-C", "p"]),
            "/from-profile",
        ),
        (
            "the variable selects a profile",
            base().env("ZKLOCK_CLUSTER", "p"),
            "/from-profile",
        ),
        (
            "--cluster over ZKLOCK_CLUSTER",
            base().env("ZKLOCK_CLUSTER", "q").args(["--cluster", "p"]),
            "/from-profile",
        ),
        (
            "variable over profile",
            base().env("ZKLOCK_ROOT", "/from-env").args(["-C", "p"]),
            "/from-env",
        ),
        (
            "flag over profile",
            base().args(["-C", "p", "--root", "/from-flag"]),
            "/from-flag",
        ),
        (
            "flag over variable",
            base()
                .env("ZKLOCK_ROOT", "/from-env")
                .args(["-C", "p", "--root", "/from-flag"]),
            "/from-flag",
        ),
    ];
    for (case, zklock, expected) in cases {
        assert_eq!(root_used(zklock), expected, "{case}");
    }
}

#[test]
fn the_file_is_zklock_config_else_under_xdg_config_home_else_under_home() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let (home, xdg) = (scratch.file("home"), scratch.file("xdg"));
    // Each place names a root of its own, which holds a probe.
    let place = |dir: &std::path::Path, root: &str| {
        std::fs::create_dir_all(dir).expect("make the directory");
        std::fs::write(
            dir.join("config.toml"),
            format!("[clusters.p]\nroot = \"{root}\"\n"),
        )
        .expect("write the configuration file");
        env.zk().create(root, b"");
        env.zk().create(&format!("{root}/probe"), b"");
    };
    place(&home.join(".config/zklock"), "/from-home");
    place(&xdg.join("zklock"), "/from-xdg");
    let named = config_file("[clusters.p]\nroot = \"/from-named\"\n");
    env.zk().create("/from-named", b"");
    env.zk().create("/from-named/probe", b"");
    let profile = || env.zklock(["-C", "p"]).env("HOME", &home);
    assert_eq!(root_used(profile()), "/from-home");
    let under_xdg = || profile().env("XDG_CONFIG_HOME", &xdg);
    assert_eq!(root_used(under_xdg()), "/from-xdg");
    assert_eq!(
        root_used(under_xdg().env("ZKLOCK_CONFIG", &named)),
        "/from-named"
    );
    // Without a profile selected, the file is not read at all.
    std::fs::write(xdg.join("zklock/config.toml"), "not toml at all [").expect("spoil the file");
    env.zk().mkdir_p("/locks/probe");
    let unselected = env
        .zklock(Vec::<&str>::new())
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", &xdg);
    assert_eq!(root_used(unselected), "/locks");
}

#[test]
fn a_profile_says_where_the_ensemble_is() {
    let env = with_probes();
    let file = config_file(&format!(
        "# test ensemble\n[clusters.here]\nhosts = \"{}\"\nroot = \"/from-profile\"\n\
         session-timeout = \"6s\"\nconnect-timeout = 4\nretries = 2\n\n\
         [clusters.nowhere]\nhosts = \"127.0.0.1:{}\"\nconnect-timeout = \"300ms\"\n",
        env.hosts(),
        dead_port()
    ));
    let profile = |name: &str| {
        Zklock::new(["-C", name])
            .no_hosts()
            .env("ZKLOCK_CONFIG", &file)
    };
    // Hosts, chroot and root from the profile alone.
    assert_eq!(root_used(profile("here")), "/from-profile");
    // The flag's hosts win over the profile's unreachable ones; so does the
    // environment's ZKLOCK_HOSTS, and ZK_HOSTS, its fallback.
    let root = ["--root", "/from-profile"];
    assert_eq!(
        root_used(profile("nowhere").hosts(env.hosts()).args(root)),
        "/from-profile"
    );
    for variable in ["ZKLOCK_HOSTS", "ZK_HOSTS"] {
        let zklock = profile("nowhere").env(variable, env.hosts()).args(root);
        assert_eq!(root_used(zklock), "/from-profile", "{variable}");
    }
    // The profile's hosts are the ones used when nothing overrides them.
    let run = profile("nowhere").args(["stat", "probe"]).run();
    assert_eq!(run.code, Some(3), "{}", run.stderr);
}

#[test]
fn an_unusable_profile_is_a_usage_error_naming_file_and_line() {
    let cases = [
        (
            "[clusters.p]\nroot = \"/x\"\nno-such-option = 1\n",
            "p",
            Some(3),
        ),
        ("[clusters.p]\nroot = \"/x\"\n", "missing", None),
        (
            "[clusters.p]\nroot = \"/x\"\nhosts = [unclosed\n",
            "p",
            Some(3),
        ),
        ("[clusters.p]\n\nconnect-timeout = \"soon\"\n", "p", Some(3)),
        ("[clusters.p]\ntls = \"yes\"\n", "p", Some(2)),
        ("[clusters.p]\nholder-secrets-fd = 3\n", "p", Some(2)),
        ("[clusters.p]\ncluster = \"q\"\n", "p", Some(2)),
    ];
    for (text, name, line) in cases {
        let file = config_file(text);
        let run = Zklock::new(["-C", name, "ls"])
            .hosts(format!("127.0.0.1:{}", dead_port()))
            .env("ZKLOCK_CONFIG", &file)
            .run();
        assert_eq!(run.code, Some(2), "{text}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{text}: {}", run.stdout);
        let place = match line {
            Some(line) => format!("{}:{line}", file.display()),
            None => file.display().to_string(),
        };
        assert!(
            run.stderr.contains(&place),
            "{text}: no {place} in {}",
            run.stderr
        );
    }
    let run = Zklock::new(["-C", "p", "ls"])
        .env("ZKLOCK_CONFIG", scratch_dir().join("no-such-config.toml"))
        .run();
    assert_eq!(run.code, Some(2), "{}", run.stderr);
}

#[test]
fn a_secret_in_a_profile_is_never_printed() {
    let secret = "s3cret-never-shown";
    let file = config_file(&format!("[clusters.p]\nauth = [\"{secret}\"]\n"));
    let run = Zklock::new(["-C", "p", "ls"])
        .hosts(format!("127.0.0.1:{}", dead_port()))
        .env("ZKLOCK_CONFIG", &file)
        .run();
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(!run.stderr.contains(secret) && !run.stdout.contains(secret));
}

#[test]
fn commands_that_never_connect_read_no_profile() {
    let file = config_file("not toml at all [");
    for args in [["completions", "bash"], ["man", "ls"]] {
        let run = Zklock::new(["-C", "p"])
            .args(args)
            .env("ZKLOCK_CONFIG", &file)
            .run();
        assert_eq!(run.code, Some(0), "{args:?}: {}", run.stderr);
    }
}

#[test]
fn a_profile_sets_a_switch_with_true_and_a_repeatable_option_with_an_array() {
    // Switches: the TLS server names localhost, not 127.0.0.1, and wants
    // a client certificate.
    let tls = tls_server();
    let (cert, key) = tls.certs.alice();
    let secure = config_file(&format!(
        "[clusters.secure]\nhosts = \"127.0.0.1:{}\"\ntls = true\n\
         tls-no-verify-hostname = true\ntls-ca = \"{}\"\ntls-cert = \"{cert}\"\n\
         tls-key = \"{key}\"\nconnect-timeout = \"3s\"\n",
        tls.port,
        tls.certs.ca(),
    ));
    let run = Zklock::new(["-C", "secure", "stat", "/"])
        .env("ZKLOCK_CONFIG", &secure)
        .run();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // A repeatable option: both identities own what zklock makes.
    let env = TestEnv::new();
    let guarded = config_file(&format!(
        "[clusters.guarded]\nhosts = \"{}\"\n\
         auth = [\"digest:alice:secret\", \"digest:bob:secret\"]\nacl = [\"creator-only\"]\n",
        env.hosts()
    ));
    let mut holder = Zklock::new(["-C", "guarded", "lock", "both"])
        .env("ZKLOCK_CONFIG", &guarded)
        .spawn();
    let token = holder.next_line(std::time::Duration::from_secs(20));
    let alice = env.connect();
    alice.add_auth("digest", "alice:secret");
    let all = zookeeper_client::Permission::ALL;
    let mut owners = alice.get_acl(&token);
    owners.sort_by(|a, b| a.id().cmp(b.id()));
    assert_eq!(
        owners,
        [
            digest_acl("alice", "secret", all),
            digest_acl("bob", "secret", all)
        ]
    );
    holder.signal(libc::SIGTERM);
    holder
        .wait(std::time::Duration::from_secs(20))
        .assert_success();
}

#[test]
fn a_detached_holder_keeps_the_profiles_settings() {
    let env = with_probes();
    let file = config_file(&format!(
        "[clusters.here]\nhosts = \"{}\"\nroot = \"/from-profile\"\n",
        env.hosts()
    ));
    // Named relative to the working directory: the holder runs from `/`.
    let relative = relative_copy(&file);
    let profile = || {
        Zklock::new(["-C", "here"])
            .no_hosts()
            .env("ZKLOCK_CONFIG", &relative)
    };
    let run = profile().args(["lock", "held", "--detach"]).run();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let token = run.stdout.trim().to_owned();
    assert!(token.starts_with("/from-profile/held/"), "{token}");
    assert!(
        env.zk().exists(&token).is_some(),
        "the holder's node {token}"
    );
    let release = profile().args(["release", &token]).run();
    assert_eq!(release.code, Some(0), "{}", release.stderr);
    assert!(env.zk().exists(&token).is_none(), "{token} is still there");
}

/// A copy of configuration file `file` under the working directory, named
/// relative to it.
fn relative_copy(file: &std::path::Path) -> PathBuf {
    let cwd = std::env::current_dir().expect("the working directory");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(&dir).expect("create cargo's tmp dir");
    let name = file.file_name().expect("a file name");
    let copy = dir.join(format!("{}-{}", std::process::id(), name.to_string_lossy()));
    std::fs::copy(file, &copy).expect("copy the configuration file");
    copy.strip_prefix(&cwd)
        .expect("cargo's tmp dir is under the working directory")
        .to_owned()
}
