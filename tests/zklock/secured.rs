//! Secured ensembles: TLS, SASL DIGEST-MD5, ACLs on the nodes zklock makes,
//! secrets that never leak, and node text that cannot drive a terminal.

use crate::support;

use std::time::Duration;

use support::json::ErrorReport;
use support::kdc::kerberos;
use support::secured::{Certs, require_tool, sasl_server, secret_file, tls_server};
use support::{TestEnv, Zk, Zklock, unique, wait_until};

const WAIT: Duration = Duration::from_secs(20);

/// A lock name no other test uses, on the shared secured servers (which
/// have no per-test chroot).
fn fresh_lock(what: &str) -> String {
    format!("{what}-{}-{}", std::process::id(), unique())
}

// ---------------------------------------------------------------- TLS

/// zklock with alice's client certificate against the TLS port, by `host`.
fn over_tls(host: &str, args: &[&str]) -> Zklock {
    let tls = tls_server();
    Zklock::new(["--tls", "--tls-ca", &tls.certs.ca()])
        .args(tls.certs.alice_flags())
        .args(args)
        .hosts(format!("{host}:{}", tls.port))
}

#[test]
fn tls_lock_stat_and_ls_work() {
    let tls = tls_server();
    let lock = fresh_lock("tls");
    let holder = over_tls("localhost", &["lock", &lock, "--", "sleep", "600"]).spawn();
    let observer = Zk::connect(&tls.server.address());
    let dir = format!("/locks/{lock}");
    wait_until(WAIT, "the TLS holder's node", || {
        observer.children_if_any(&dir).len() == 1
    });
    let stat = over_tls("localhost", &["stat", &lock, "-o", "json"]).run();
    stat.assert_success();
    let report: serde_json::Value = serde_json::from_str(&stat.stdout).expect("stat JSON");
    assert_eq!(
        report["holders"].as_array().map(Vec::len),
        Some(1),
        "{report}"
    );
    let ls = over_tls("localhost", &["ls", "-o", "json"]).run();
    ls.assert_success();
    assert!(ls.stdout.contains(&dir), "{}", ls.stdout);
    // The same through a tcp+tls:// host instead of --tls.
    Zklock::new(["stat", &lock])
        .hosts(format!("tcp+tls://localhost:{}", tls.port))
        .args(["--tls-ca", &tls.certs.ca()])
        .args(tls.certs.alice_flags())
        .run()
        .assert_success();
    holder.signal(libc::SIGTERM);
    wait_until(WAIT, "the TLS holder to let go", || {
        observer.children_if_any(&dir).is_empty()
    });
}

#[test]
fn one_connect_string_may_name_tls_and_plain_hosts() {
    let tls = tls_server();
    let dead = support::dead_port();
    // One host refuses, so the other, in the protocol its prefix names,
    // is the one that answers.
    for hosts in [
        format!(
            "tcp+tls://localhost:{dead},tcp://127.0.0.1:{}",
            tls.server.port()
        ),
        format!("tcp://127.0.0.1:{dead},tcp+tls://localhost:{}", tls.port),
    ] {
        Zklock::new(["stat", "/", "--connect-timeout", "3s"])
            .args(["--tls-ca", &tls.certs.ca()])
            .args(tls.certs.alice_flags())
            .hosts(&hosts)
            .run()
            .assert_success();
    }
}

/// Where zklock reads the system's trusted CAs when `--tls-ca` is not given.
const SYSTEM_TRUST_STORE: &str = "/etc/ssl/certs/ca-certificates.crt";

#[test]
fn without_tls_ca_the_systems_trust_store_is_trusted() {
    let tls = tls_server();
    let stat = Zklock::new([
        "stat",
        "/",
        "-o",
        "json",
        "--tls",
        "--connect-timeout",
        "3s",
    ])
    .args(tls.certs.alice_flags())
    .hosts(format!("localhost:{}", tls.port));
    support::with_file_bound_over(&stat, &tls.certs.ca(), SYSTEM_TRUST_STORE).assert_success();
    let untrusted = support::with_file_bound_over(&stat, &tls.certs.rogue_ca(), SYSTEM_TRUST_STORE);
    assert_eq!(ErrorReport::of(&untrusted, 3).cause, "tls_handshake");
}

#[test]
fn tls_handshake_failures_exit_3_and_say_why() {
    let tls = tls_server();
    let base = |host: &str, ca: &str| {
        Zklock::new(["stat", "/"])
            .hosts(format!("{host}:{}", tls.port))
            .args(["--tls", "--tls-ca", ca, "--connect-timeout", "3s"])
            .args(tls.certs.alice_flags())
    };
    let untrusted = base("localhost", &tls.certs.rogue_ca()).run();
    untrusted.assert_code(3);
    untrusted.assert_stderr_contains("trusted CA");
    // The server's certificate names localhost, not 127.0.0.1.
    let mismatch = base("127.0.0.1", &tls.certs.ca()).run();
    mismatch.assert_code(3);
    mismatch.assert_stderr_contains("not valid for the name");
    base("127.0.0.1", &tls.certs.ca())
        .arg("--tls-no-verify-hostname")
        .run()
        .assert_success();
    let anonymous = Zklock::new(["stat", "/"])
        .hosts(format!("localhost:{}", tls.port))
        .args([
            "--tls",
            "--tls-ca",
            &tls.certs.ca(),
            "--connect-timeout",
            "3s",
        ])
        .run();
    anonymous.assert_code(3);
    anonymous.assert_stderr_contains("client certificate");
}

#[test]
fn a_client_certificate_owns_nodes_made_with_acl_creator() {
    let tls = tls_server();
    let lock = fresh_lock("x509");
    let holder = over_tls(
        "localhost",
        &["lock", &lock, "--acl", "creator", "--", "sleep", "600"],
    )
    .spawn();
    let observer = Zk::connect(&tls.server.address());
    let dir = format!("/locks/{lock}");
    wait_until(WAIT, "the x509 holder's node", || {
        observer.children_if_any(&dir).len() == 1
    });
    let node = format!("{dir}/{}", observer.children(&dir)[0]);
    let acl = observer.get_acl(&node);
    assert!(
        acl.iter()
            .any(|a| a.scheme() == "x509" && a.id() == Certs::ALICE_DN),
        "{acl:?}"
    );
    assert_eq!(
        observer.try_delete(&node),
        Err(zookeeper_client::Error::NoAuth)
    );
    holder.signal(libc::SIGTERM);
    wait_until(WAIT, "the x509 holder to let go", || {
        observer.children_if_any(&dir).is_empty()
    });
}

// ---------------------------------------------------------------- SASL

fn over_sasl(user: &str, password: &str, args: &[&str]) -> Zklock {
    let password_file = secret_file(&format!("{user}-{password}"), &format!("{password}\n"));
    Zklock::new(["--sasl", "digest-md5", "--sasl-user", user])
        .args(["--sasl-password-file", &password_file])
        .args(args)
        .hosts(sasl_server().address())
}

#[test]
fn sasl_digest_md5_locks_on_a_server_that_enforces_it() {
    let lock = fresh_lock("sasl");
    over_sasl("alice", "alice-pw", &["lock", &lock, "--", "true"])
        .run()
        .assert_success();
    over_sasl("alice", "alice-pw", &["ls", "-o", "json"])
        .run()
        .assert_success();
    // Without SASL the server refuses every request.
    Zklock::new(["lock", &lock, "--", "true"])
        .hosts(sasl_server().address())
        .run()
        .assert_code(5);
    let refused = over_sasl("alice", "wrong", &["lock", &lock, "--", "true"]).run();
    refused.assert_code(5);
    refused.assert_stderr_contains("DIGEST-MD5");
    assert!(!refused.stderr.contains("wrong"), "{}", refused.stderr);
}

#[test]
fn a_group_named_in_the_acl_can_take_give_up_and_break_the_lock() {
    let lock = fresh_lock("group");
    let group = "sasl:alice:cdrwa,sasl:bob:cdrwa";
    let mut alice = over_sasl(
        "alice",
        "alice-pw",
        &["lock", &lock, "--acl", group, "--", "sleep", "600"],
    )
    .spawn();
    // None while stat fails (before alice made the lock).
    let contenders = |user: &str, password: &str, which: &str| -> Option<usize> {
        let run = over_sasl(user, password, &["stat", &lock, "-o", "json"]).run();
        let report: serde_json::Value = serde_json::from_str(&run.stdout).ok()?;
        report[which].as_array().map(Vec::len)
    };
    let stat_holders = |user: &str, password: &str| contenders(user, password, "holders");
    wait_until(WAIT, "alice to hold", || {
        if let Some(ended) = alice.try_wait() {
            panic!("alice ended before holding: {ended:?}");
        }
        stat_holders("bob", "bob-pw") == Some(1)
    });
    // bob contends and gives up: deleting his own node needs DELETE on the
    // lock directory, which the ACL gives him. His node is a TTL node,
    // which outlives his session: only his delete removes it.
    over_sasl(
        "bob",
        "bob-pw",
        &["lock", &lock, "--acl", group, "--ttl", "60s", "-w", "1s"],
    )
    .run()
    .assert_code(1);
    assert_eq!(
        (
            stat_holders("bob", "bob-pw"),
            contenders("bob", "bob-pw", "waiters")
        ),
        (Some(1), Some(0)),
        "bob's node is gone and alice still holds"
    );
    // bob breaks alice's lock.
    over_sasl("bob", "bob-pw", &["release", &lock, "--holders", "--yes"])
        .run()
        .assert_success();
    alice.wait(WAIT).assert_code(4);
}

// ---------------------------------------------------------------- Kerberos

/// zklock with `--sasl gssapi` against the Kerberos server, with the ticket
/// cache `cache`.
fn over_kerberos(cache: &str, args: &[&str]) -> Zklock {
    let krb = kerberos();
    Zklock::new(["--sasl", "gssapi", "--connect-timeout", "5s"])
        .args(args)
        .hosts(format!("localhost:{}", krb.server.port()))
        .env("KRB5_CONFIG", krb.krb5_conf())
        .env("KRB5CCNAME", format!("FILE:{cache}"))
}

#[test]
fn kerberos_locks_with_the_ticket_kinit_got() {
    let krb = kerberos();
    let cache = krb.kinit_alice(&format!("cc-{}", unique()));
    let cache = cache.display().to_string();
    let lock = fresh_lock("krb");
    over_kerberos(&cache, &["lock", &lock, "--acl", "creator", "--", "true"])
        .run()
        .assert_success();
    let holder = over_kerberos(
        &cache,
        &["lock", &lock, "--acl", "creator", "--", "sleep", "600"],
    )
    .spawn();
    let stat_holders = || {
        let run = over_kerberos(&cache, &["stat", &lock, "-o", "json"]).run();
        let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap_or_default();
        report["holders"].as_array().map_or(0, Vec::len)
    };
    wait_until(WAIT, "alice to hold over Kerberos", || stat_holders() == 1);
    assert!(
        maps_gssapi(holder.pid()),
        "a Kerberos session opened the GSSAPI library"
    );
    holder.signal(libc::SIGTERM);
    let mut holder = holder;
    holder.wait(WAIT);
    wait_until(WAIT, "alice to let go", || stat_holders() == 0);
    // No ticket: the authentication is refused.
    let refused = over_kerberos("/nonexistent-ticket-cache", &["stat", "/"]).run();
    refused.assert_code(5);
    refused.assert_stderr_contains("GSSAPI");
}

#[test]
fn every_security_setting_can_come_from_its_variable() {
    // TLS: the server's certificate names localhost, and it wants a client
    // certificate, so 127.0.0.1 works only with every TLS variable heeded.
    let tls = tls_server();
    let (cert, key) = tls.certs.alice();
    let on_tls = || {
        Zklock::new(["stat", "/", "--connect-timeout", "3s"])
            .hosts(format!("127.0.0.1:{}", tls.port))
            .env("ZKLOCK_TLS", "true")
            .env("ZKLOCK_TLS_CA", tls.certs.ca())
            .env("ZKLOCK_TLS_CERT", &cert)
            .env("ZKLOCK_TLS_KEY", &key)
    };
    on_tls()
        .env("ZKLOCK_TLS_NO_VERIFY_HOSTNAME", "true")
        .run()
        .assert_success();
    on_tls().run().assert_code(3);
    // SASL DIGEST-MD5, on a server that refuses anyone else.
    let password_file = secret_file("alice-alice-pw", "alice-pw\n");
    Zklock::new(["lock", &fresh_lock("sasl-env"), "--", "true"])
        .hosts(sasl_server().address())
        .env("ZKLOCK_SASL", "digest-md5")
        .env("ZKLOCK_SASL_USER", "alice")
        .env("ZKLOCK_SASL_PASSWORD_FILE", &password_file)
        .run()
        .assert_success();
    // Kerberos: the principal zookeeper/localhost, named by the variables
    // where the host connected to, 127.0.0.1, would name another.
    let krb = kerberos();
    let cache = krb.kinit_alice(&format!("cc-{}", unique()));
    let on_kerberos = |service: &str| {
        over_kerberos(&cache.display().to_string(), &["stat", "/"])
            .hosts(format!("127.0.0.1:{}", krb.server.port()))
            .env("ZKLOCK_SASL_SERVICE", service)
            .env("ZKLOCK_SASL_HOST", "localhost")
    };
    on_kerberos("zookeeper").run().assert_success();
    on_kerberos("no-such-service").run().assert_code(5);
    // The ACL of the nodes zklock makes, for the identity of the auth file.
    let env = TestEnv::new();
    // One identity a line: both own what zklock makes.
    let auth_file = secret_file("auth-alice-bob", "digest:alice:secret\ndigest:bob:secret\n");
    // A node there already keeps its ACL; what zklock makes gets the new one.
    env.zk().mkdir_p("/locks");
    let mut holder = env
        .zklock(["lock", "acl-env"])
        .env("ZKLOCK_AUTH_FILE", &auth_file)
        .env("ZKLOCK_ACL", "creator-only")
        .spawn();
    let token = holder.next_line(WAIT);
    assert_eq!(
        env.zk().try_get(&token).map(|_| ()),
        Err(zookeeper_client::Error::NoAuth),
        "the world may not even read"
    );
    let alice = Zk::connect(&env.hosts());
    alice.add_auth("digest", "alice:secret");
    let all = zookeeper_client::Permission::ALL;
    for made in [token.as_str(), "/locks/acl-env"] {
        let mut owners = alice.get_acl(made);
        owners.sort_by(|a, b| a.id().cmp(b.id()));
        let both = [
            support::digest_acl("alice", "secret", all),
            support::digest_acl("bob", "secret", all),
        ];
        assert_eq!(owners, both, "{made}");
    }
    assert_eq!(
        env.zk().get_acl("/locks"),
        zookeeper_client::Acls::anyone_all().to_vec()
    );
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
}

/// The GSSAPI library as the dynamic loader finds it.
fn gssapi_library() -> String {
    let cache = support::output_of("/sbin/ldconfig", &["-p"]);
    cache
        .lines()
        .find_map(|line| {
            let (name, path) = line.trim().split_once(" => ")?;
            name.starts_with("libgssapi_krb5.so.2 ")
                .then(|| path.to_owned())
        })
        .unwrap_or_else(|| panic!("no GSSAPI library: apt-get install libgssapi-krb5-2"))
}

#[test]
fn without_the_gssapi_library_sasl_gssapi_is_a_usage_error_naming_it() {
    // Where nothing listens: a failure to connect would be exit 3.
    let zklock = Zklock::new(["--sasl", "gssapi", "stat", "/"])
        .hosts(format!("127.0.0.1:{}", support::dead_port()));
    // In a mount namespace of its own, the library is an empty file.
    let run = support::with_file_bound_over(&zklock, "/dev/null", &gssapi_library());
    run.assert_code(2).assert_stderr_contains("libgssapi_krb5");
    assert!(run.stdout.is_empty(), "{run:?}");
}

/// Whether process `pid` has the GSSAPI library (or Kerberos's) mapped.
fn maps_gssapi(pid: u32) -> bool {
    let maps = proc_file(pid, "maps");
    maps.contains("libgssapi") || maps.contains("libkrb5")
}

#[test]
fn only_kerberos_sessions_load_the_gssapi_library() {
    let env = TestEnv::new();
    let holder = env.zklock(["lock", "plain", "--", "sleep", "600"]).spawn();
    wait_until(WAIT, "the plain holder to hold", || {
        env.zk().children_if_any("/locks/plain").len() == 1
    });
    assert!(
        !proc_file(holder.pid(), "maps").is_empty(),
        "the holder's maps can be read"
    );
    assert!(
        !maps_gssapi(holder.pid()),
        "a session without Kerberos left GSSAPI unloaded"
    );
    holder.signal(libc::SIGTERM);
    let mut holder = holder;
    holder.wait(WAIT);
}

// ---------------------------------------------------------------- ACLs

/// Tries, as an anonymous kazoo client, to delete `node`, overwrite its
/// data and plant a fake contender beside it; prints one word per try.
const KAZOO_INTRUDER: &str = r#"
import sys
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError
zk = KazooClient(hosts=sys.argv[1]); zk.start(timeout=15)
node = sys.argv[2]
parent = node.rsplit('/', 1)[0]
for name, attempt in [
    ('delete', lambda: zk.delete(node)),
    ('set', lambda: zk.set(node, b'{"tool":"zklock","fake":1}')),
    ('plant', lambda: zk.create(parent + '/_c_fake-lock-', b'', ephemeral=True, sequence=True)),
]:
    try:
        attempt(); print(name, 'done')
    except NoAuthError:
        print(name, 'refused')
zk.stop()
"#;

#[test]
fn with_acl_creator_anonymous_clients_cannot_touch_the_holders_node() {
    let env = TestEnv::new();
    let secret = "digest:alice:alice-S3CRET";
    let holder = env
        .zklock(["lock", "guarded", "--acl", "creator", "--", "sleep", "600"])
        .env("ZKLOCK_AUTH", secret)
        .spawn();
    let dir = "/locks/guarded";
    wait_until(WAIT, "the holder's node", || {
        env.zk().children_if_any(dir).len() == 1
    });
    let node = format!("{dir}/{}", env.zk().children(dir)[0]);
    for how in [&["--holders", "--yes"][..], &["--revoke"][..]] {
        let mut args = vec!["release", "guarded"];
        args.extend_from_slice(how);
        env.zklock(args).run().assert_code(5);
    }
    require_tool("python3", "python3-kazoo");
    let kazoo = std::process::Command::new("/usr/bin/python3")
        .args(["-c", KAZOO_INTRUDER, &env.hosts(), &node])
        .output()
        .expect("run kazoo");
    let said = String::from_utf8_lossy(&kazoo.stdout);
    assert_eq!(
        said.lines().collect::<Vec<_>>(),
        ["delete refused", "set refused", "plant refused"],
        "{}",
        String::from_utf8_lossy(&kazoo.stderr)
    );
    let (data, _) = env.zk().get(&node);
    assert!(!String::from_utf8_lossy(&data).contains("fake"));
    // The holder ran undisturbed, and gives up its lock as usual.
    let mut holder = holder;
    assert!(holder.is_running());
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT);
    assert!(env.zk().children_if_any(dir).is_empty());
}

#[test]
fn acl_creator_without_an_identity_is_a_usage_error() {
    let env = TestEnv::new();
    env.zklock(["lock", "x", "--acl", "creator", "--", "true"])
        .run()
        .assert_code(2);
    env.zklock(["lock", "x", "--acl", "sasl:alice:rw:x", "--", "true"])
        .run()
        .assert_code(2);
    assert!(env.zk().children_if_any("/locks/x").is_empty());
}

// ---------------------------------------------------------------- secrets

const SECRET: &str = "S3CRETpw";

/// Panics when any of `texts` holds the secret.
fn assert_no_secret(what: &str, text: &str) {
    assert!(!text.contains(SECRET), "{what} holds the secret: {text:?}");
}

fn proc_file(pid: u32, file: &str) -> String {
    String::from_utf8_lossy(&std::fs::read(format!("/proc/{pid}/{file}")).unwrap_or_default())
        .into_owned()
}

#[test]
fn no_secret_reaches_the_commands_environment_or_any_process() {
    let env = TestEnv::new();
    let probe = secret_file("probe", "");
    let out = std::path::Path::new(&probe);
    let script = format!(
        "cat /proc/self/environ > {out}.env; cat /proc/$PPID/environ > {out}.guard-env; \
         cat /proc/$PPID/cmdline > {out}.guard-argv; echo ready > {out}.ready; sleep 600",
        out = out.display()
    );
    let holder = env
        .zklock(["lock", "env", "-vvv", "--", "sh", "-c", &script])
        .env("ZKLOCK_AUTH", format!("digest:alice:{SECRET}"))
        .spawn();
    let ready = format!("{}.ready", out.display());
    wait_until(WAIT, "the command to look around", || {
        std::path::Path::new(&ready).exists()
    });
    for file in ["env", "guard-env", "guard-argv"] {
        let text = std::fs::read(format!("{}.{file}", out.display())).expect("command's report");
        assert_no_secret(file, &String::from_utf8_lossy(&text));
    }
    assert_no_secret("zklock's environ", &proc_file(holder.pid(), "environ"));
    let (data, _) = env.zk().get(&format!(
        "/locks/env/{}",
        env.zk().children("/locks/env")[0]
    ));
    let owner: serde_json::Value = serde_json::from_slice(&data).expect("owner record");
    assert_eq!(owner["command"], serde_json::json!(["sh"]));
    holder.signal(libc::SIGTERM);
    let mut holder = holder;
    let run = holder.wait(WAIT);
    assert_no_secret("-vvv log", &run.stderr);
}

#[test]
fn a_detached_holder_gets_its_credentials_off_its_command_line() {
    let env = TestEnv::new();
    let auth_file = secret_file("auth", &format!("digest:alice:{SECRET}\n"));
    let run = env
        .zklock(["lock", "detached", "--detach", "--acl", "creator-only"])
        .args([
            "--auth",
            &format!("digest:bob:{SECRET}"),
            "--auth-file",
            &auth_file,
        ])
        .run();
    run.assert_success();
    let token = run.stdout.trim().to_owned();
    // The holder authenticated with both identities: creator-only gave
    // them the node, and nobody else may even read it.
    let zk = env.zk();
    assert_eq!(
        zk.try_get(&token).err(),
        Some(zookeeper_client::Error::NoAuth)
    );
    zk.add_auth("digest", &format!("alice:{SECRET}"));
    let acl = zk.get_acl(&token);
    let ids: Vec<&str> = acl
        .iter()
        .map(|a| a.id().split(':').next().unwrap_or(""))
        .collect();
    assert!(ids.contains(&"alice") && ids.contains(&"bob"), "{acl:?}");
    let pid = {
        let (data, _) = zk.get(&token);
        let owner: serde_json::Value = serde_json::from_slice(&data).expect("owner");
        owner["pid"].as_u64().expect("pid") as u32
    };
    let argv = proc_file(pid, "cmdline");
    assert!(argv.contains("--detach"), "not the holder: {argv:?}");
    assert_no_secret("the holder's argv", &argv);
    assert!(!argv.contains(&auth_file), "{argv:?}");
    assert_no_secret("the holder's environ", &proc_file(pid, "environ"));
    env.zklock(["release", &token])
        .env("ZKLOCK_AUTH", format!("digest:alice:{SECRET}"))
        .run()
        .assert_success();
    wait_until(WAIT, "the holder to end", || {
        !std::path::Path::new(&format!("/proc/{pid}")).exists()
    });
}

#[test]
fn a_malformed_secret_is_never_echoed() {
    let env = TestEnv::new();
    let run = env.zklock(["ls", "--auth", SECRET]).run();
    run.assert_code(2);
    assert_no_secret("the error", &run.stderr);
    let file = secret_file("bad-auth", &format!("{SECRET}\n"));
    let run = env.zklock(["ls", "--auth-file", &file]).run();
    run.assert_code(2);
    assert_no_secret("the error", &run.stderr);
}

#[test]
fn the_whole_command_line_is_recorded_only_when_asked() {
    let env = TestEnv::new();
    let script = "zk=$(cat /dev/null); sleep 600";
    for (extra, expected) in [
        (None, serde_json::json!(["sh"])),
        (
            Some("--record-command"),
            serde_json::json!(["sleep", "600"]),
        ),
    ] {
        let mut args = vec!["lock", "recorded"];
        args.extend(extra);
        let holder = if extra.is_some() {
            env.zklock(args.into_iter().chain(["--", "sleep", "600"]))
                .spawn()
        } else {
            env.zklock(args.into_iter().chain(["--shell", "--", script]))
                .spawn()
        };
        wait_until(WAIT, "the holder's node", || {
            env.zk().children_if_any("/locks/recorded").len() == 1
        });
        let node = format!(
            "/locks/recorded/{}",
            env.zk().children("/locks/recorded")[0]
        );
        let owner: serde_json::Value = serde_json::from_slice(&env.zk().get(&node).0).unwrap();
        assert_eq!(owner["command"], expected);
        holder.signal(libc::SIGTERM);
        wait_until(WAIT, "the holder to let go", || {
            env.zk().children_if_any("/locks/recorded").is_empty()
        });
    }
}

// ---------------------------------------------------------------- inert text

/// Text that would retitle and clear a terminal, return the carriage,
/// reverse what follows and hide characters in it, if it reached one raw.
const HOSTILE: &str =
    "\u{1b}]0;pwned\u{7}\u{1b}[2J\r\u{202e}evil\u{9b}1m\u{7f}de\u{200b}ploy\u{2028}\u{feff}";

/// True when `text` holds a byte or character that could drive a terminal
/// or hide in it (those [`HOSTILE`] and the hostile names hold).
fn has_raw_control(text: &str) -> bool {
    text.chars().any(|c| {
        (c.is_control() && c != '\n')
            || matches!(
                c,
                '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}'
            )
    })
}

/// A lock whose holder's owner record is hostile, locks whose names hold a
/// bidi override and a zero-width space (ZooKeeper allows those in names,
/// not control characters), and a plain node whose data is hostile.
fn plant_hostile(env: &TestEnv, lock: &str) -> Zk {
    let planter = env.connect();
    let owner = serde_json::json!({
        "tool": "zklock", "version": "0", "host": HOSTILE, "pid": 1, "user": HOSTILE,
        "command": [HOSTILE], "time": "2026-01-01T00:00:00Z", "data": HOSTILE,
    });
    for dir in [
        format!("/locks/{lock}"),
        format!("/locks/{lock}-\u{202e}rev"),
        format!("/locks/{lock}-de\u{200b}ploy"),
    ] {
        planter.mkdir_p(&dir);
        planter.create_ephemeral_sequential(
            &format!("{dir}/_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-"),
            owner.to_string().as_bytes(),
        );
    }
    planter.create(&format!("/locks/plain-{lock}"), HOSTILE.as_bytes());
    planter
}

#[test]
fn node_text_reaches_no_terminal_raw() {
    let env = TestEnv::new();
    let _planter = plant_hostile(&env, "hostile");
    // Wide, so that the owner is shown whole rather than cut to the width:
    // its escapes must show.
    for args in [
        vec!["ls", "-o", "wide"],
        vec!["stat", "hostile", "-o", "wide"],
        vec!["stat", "plain-hostile", "-o", "wide"],
        vec!["dump", "-o", "wide"],
    ] {
        let run = env.zklock(&args).run();
        run.assert_success();
        assert!(!has_raw_control(&run.stdout), "{args:?}: {:?}", run.stdout);
        assert!(
            run.stdout.contains("\\x1b"),
            "{args:?} shows the escape: {:?}",
            run.stdout
        );
    }
    let listed = env.zklock(["ls"]).run();
    assert!(
        listed.stdout.contains("de\\u{200b}ploy"),
        "{:?}",
        listed.stdout
    );
    // JSON stays faithful: the same text comes back when parsed.
    let run = env.zklock(["stat", "hostile", "-o", "json"]).run();
    assert!(!has_raw_control(&run.stdout), "{:?}", run.stdout);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(report["holders"][0]["owner"]["host"], HOSTILE);
}

#[test]
fn watch_shows_node_text_escaped() {
    let env = TestEnv::new();
    // Wide: at 80 columns a watch line leaves out an owner it cannot show
    // whole, and the owner's escapes must show.
    let mut watch = env.zklock(["watch", "hostile", "-o", "wide"]).spawn();
    let _planter = plant_hostile(&env, "hostile");
    watch.wait_for_stdout(WAIT, "an event about the hostile holder", |out| {
        out.contains("\\x1b")
    });
    watch.signal(libc::SIGTERM);
    let run = watch.wait(WAIT);
    assert!(!has_raw_control(&run.stdout), "{:?}", run.stdout);
}

/// Runs `zklock ARGS` on a pseudo-terminal (util-linux `script`), typing
/// `input`, and returns what it drew.
fn on_a_terminal(env: &TestEnv, args: &[&str], input: &str) -> String {
    use std::io::Write;
    use std::process::{Command, Stdio};
    require_tool("script", "util-linux");
    let quoted = env
        .zklock(args)
        .argv()
        .iter()
        .map(|a| format!("'{}'", a.to_string_lossy().replace('\'', "'\\''")))
        .collect::<Vec<_>>()
        .join(" ");
    let mut child = Command::new("script")
        .args([
            "-qfec",
            &format!("{} {quoted}", env!("CARGO_BIN_EXE_zklock")),
            "/dev/null",
        ])
        .env_remove("ZKLOCK_AUTH")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run script");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input.as_bytes()).expect("type the input");
    drop(stdin);
    let out = child.wait_with_output().expect("script's output");
    String::from_utf8_lossy(&[out.stdout, out.stderr].concat()).into_owned()
}

#[test]
fn the_spinner_and_the_reap_prompt_show_node_text_escaped() {
    let env = TestEnv::new();
    let _planter = plant_hostile(&env, "hostile");
    let drawn = on_a_terminal(&env, &["lock", "hostile", "-w", "2s", "--", "true"], "");
    assert!(
        drawn.contains("\\x1b]0;pwned"),
        "the spinner named the holder: {drawn:?}"
    );
    assert!(!drawn.contains("\u{1b}]0;pwned"), "{drawn:?}");
    assert!(!drawn.contains('\u{202e}'), "{drawn:?}");
    let prompt = on_a_terminal(&env, &["reap", "--all"], "n\n");
    assert!(
        prompt.contains("\\u{202e}rev"),
        "the prompt listed the node: {prompt:?}"
    );
    assert!(!prompt.contains('\u{202e}'), "{prompt:?}");
    assert_eq!(
        env.zk().children("/locks/hostile").len(),
        1,
        "nothing was deleted"
    );
}
