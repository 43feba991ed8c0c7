//! Whose list of connections counts for which member: a session is called
//! disconnected only when every member's own list is in hand and the lists
//! cover the ensemble, whatever asks (`ls`, `stat`, `top`, `reap`), else
//! unknown, and nothing is reaped on unknown. The members here share one
//! host, as in a test ensemble or a small deployment, each with an
//! AdminServer on a port of its own and the four-letter words it allows:
//! only `srvr` by default since 3.5 (the harness's own `conf`, `mntr` and
//! `ruok` besides, which zklock never sends).

use crate::liveness::{cell, connection_of, spared_as_unknown};
use crate::support;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use support::json::{Contender, Lock, ReapDryRun, ReapReport};
use support::peers::{Library, acquired, peer_on};
use support::proxy::FaultProxy;
use support::tmux::{Tmux, command_line};
use support::{Running, Scratch, TestEnv, Zk, ZkEnsemble, ZkOptions, Zklock, wait_for};

const WAIT: Duration = Duration::from_secs(30);

/// A member that answers `cons` and `wchc`, or only the default `srvr`;
/// with an AdminServer of its own either way.
fn member(cons: bool) -> ZkOptions {
    let member = ZkOptions::default().admin_server();
    if cons {
        member.four_letter_words(&["cons", "wchc"])
    } else {
        member.harness_words_only()
    }
}

/// `--admin-port HOST:CLIENTPORT=PORT` for each member of `members`.
fn admin_port_of(ensemble: &ZkEnsemble, members: &[usize]) -> Vec<String> {
    members
        .iter()
        .flat_map(|&i| {
            let server = ensemble.server(i);
            [
                "--admin-port".to_owned(),
                format!("{}={}", server.address(), server.admin_port()),
            ]
        })
        .collect()
}

/// `--admin-port PORT` of member `i`'s AdminServer, for every member.
fn one_admin_port(ensemble: &ZkEnsemble, i: usize) -> Vec<String> {
    vec![
        "--admin-port".to_owned(),
        ensemble.server(i).admin_port().to_string(),
    ]
}

/// Holders connected to one member alone, each in a lock of its own: a
/// kazoo, a Curator and a zklock holder alive, and a kazoo holder frozen
/// (SIGSTOP) and cut off (its connection reset, as a lost network does),
/// whose session lives on for a minute with no connection.
struct Holders {
    /// The live holders and their nodes.
    live: Vec<(Running, String)>,
    cut: (Running, String),
    _proxy: FaultProxy,
}

impl Holders {
    fn on(env: &TestEnv, member: &str) -> Holders {
        let on = format!("{member}{}", env.chroot());
        let library = |library, lock: &str| {
            let mut holder = peer_on(&on, library, lock, "mutex", &[]);
            let node = acquired(&mut holder, WAIT);
            (holder, node)
        };
        let mut zklock = env.zklock(["lock", "zklock"]).hosts(&on).spawn();
        let zklock_node = zklock.next_line(WAIT);
        let live = vec![
            library(Library::Kazoo, "/locks/kazoo"),
            library(Library::Curator, "/locks/curator"),
            (zklock, zklock_node),
        ];
        let proxy = FaultProxy::start(member);
        let mut cut = peer_on(
            &proxy.hosts(env),
            Library::Kazoo,
            "/locks/cut",
            "mutex",
            &["--session-timeout-ms", "60000"],
        );
        let cut_node = acquired(&mut cut, WAIT);
        cut.signal(libc::SIGSTOP);
        proxy.cut();
        Holders {
            live,
            cut: (cut, cut_node),
            _proxy: proxy,
        }
    }

    fn nodes(&self) -> Vec<&str> {
        self.live
            .iter()
            .chain([&self.cut])
            .map(|(_, node)| node.as_str())
            .collect()
    }

    fn live_nodes(&self) -> Vec<&str> {
        self.live.iter().map(|(_, node)| node.as_str()).collect()
    }
}

impl Drop for Holders {
    fn drop(&mut self) {
        self.cut.0.signal(libc::SIGCONT);
    }
}

/// Every contender of `ls -o json` with `args`.
fn contenders(env: &TestEnv, args: &[String]) -> Vec<Contender> {
    let locks: Vec<Lock> = env
        .zklock(["ls", "-o", "json"])
        .args(args)
        .run()
        .assert_success()
        .json();
    locks
        .into_iter()
        .flat_map(|lock| lock.holders.into_iter().chain(lock.waiters))
        .collect()
}

/// The `connection` of each of `nodes` as `ls` with `args` shows it.
fn connections(env: &TestEnv, args: &[String], nodes: &[&str]) -> Vec<Option<String>> {
    let all = contenders(env, args);
    nodes.iter().map(|node| connection_of(&all, node)).collect()
}

fn unknown(n: usize) -> Vec<Option<String>> {
    vec![Some("unknown".to_owned()); n]
}

/// Waits until the members have dropped the cut holder's connection, as
/// `ls` with `args` (which must prove every list) sees it.
fn wait_for_the_cut(env: &TestEnv, args: &[String], holders: &Holders) {
    wait_for(WAIT, "the server drops the cut connection", || {
        (connections(env, args, &[&holders.cut.1])[0].as_deref() == Some("disconnected"))
            .then_some(())
    });
}

fn reap(env: &TestEnv, args: &[String], code: i32) -> ReapReport {
    env.zklock(["-o", "json", "reap", "--disconnected-for", "1s", "--yes"])
        .args(args)
        .run()
        .assert_code(code)
        .json()
}

fn dry_run(env: &TestEnv, args: &[String]) -> ReapDryRun {
    env.zklock([
        "-o",
        "json",
        "reap",
        "--disconnected-for",
        "1s",
        "--dry-run",
    ])
    .args(args)
    .run()
    .assert_success()
    .json()
}

/// The example: three members on one host, `cons` refused, AdminServers on
/// their own ports, holders on the second member. One `--admin-port` is
/// every member's: the first member's AdminServer answers for the second
/// and third, and its list leaves out the holders. No survey is whole:
/// every command says unknown, and `reap --disconnected-for` deletes
/// nothing (exit 10, each holder reported). Given a port per member, each
/// list is proven: the live holders are connected, to the second member,
/// and the cut-off one alone is found and reaped.
#[test]
fn one_admin_port_for_members_on_one_host_proves_nothing_and_one_each_proves_every_list() {
    let ensemble = ZkEnsemble::start_members_with(&[member(false), member(false), member(false)]);
    let env = TestEnv::with_ensemble(&ensemble);
    let second = ensemble.server(1).address();
    let holders = Holders::on(&env, &second);
    let each = admin_port_of(&ensemble, &[0, 1, 2]);
    wait_for_the_cut(&env, &each, &holders);

    let once = one_admin_port(&ensemble, 0);
    let nodes = holders.nodes();
    assert_eq!(connections(&env, &once, &nodes), unknown(nodes.len()));
    let stat: Lock = env
        .zklock(["-o", "json", "stat", "/locks/kazoo"])
        .args(&once)
        .run()
        .assert_success()
        .json();
    assert_eq!(stat.holders[0].connection.as_deref(), Some("unknown"));
    assert_eq!(stat.holders[0].client, None, "{stat:#?}");
    let wide = env.zklock(["ls", "-o", "wide"]).args(&once).run();
    assert_eq!(
        cell(&wide.stdout, "/locks/kazoo ").as_deref(),
        Some("unknown"),
        "{}",
        wide.stdout
    );
    assert!(
        wide.stderr.contains("is that of server.1"),
        "the note says whose AdminServer answered: {}",
        wide.stderr
    );
    let planned = dry_run(&env, &once);
    assert!(planned.would_delete.is_empty(), "{planned:#?}");
    let mut spared = spared_as_unknown(&planned.skipped);
    spared.sort_unstable();
    let mut expected = nodes.clone();
    expected.sort_unstable();
    assert_eq!(spared, expected, "{planned:#?}");
    let reaped = reap(&env, &once, 10);
    assert!(reaped.deleted.is_empty(), "{reaped:#?}");
    assert_eq!(spared_as_unknown(&reaped.skipped).len(), nodes.len());
    for node in &nodes {
        assert!(env.zk().exists(node).is_some(), "{node} was deleted");
    }
    top_shows_unknown(&env, &once);

    // A port for each member: every list proven.
    let seen = connections(&env, &each, &nodes);
    let mut expected = vec![Some("connected".to_owned()); holders.live.len()];
    expected.push(Some("disconnected".to_owned()));
    assert_eq!(seen, expected, "{nodes:?}");
    let stat: Lock = env
        .zklock(["-o", "json", "stat", "/locks/curator"])
        .args(&each)
        .run()
        .assert_success()
        .json();
    let client = stat.holders[0].client.as_ref().expect("a client");
    assert_eq!(client.server.as_deref(), Some(second.as_str()), "{stat:#?}");
    let reaped = reap(&env, &each, 0);
    assert_eq!(reaped.deleted, [holders.cut.1.as_str()], "{reaped:#?}");
    for node in holders.live_nodes() {
        assert!(env.zk().exists(node).is_some(), "{node} was deleted");
    }
}

/// `top` on the first screen marks the kazoo holder's lock `unknown`.
fn top_shows_unknown(env: &TestEnv, args: &[String]) {
    let tmux = Tmux::start(120, 24);
    tmux.send(&[&command_line(&env.zklock(["top"]).args(args)), "Enter"]);
    tmux.screen_until(WAIT, "top marks the holder unknown", |screen| {
        cell(screen, "/locks/kazoo").as_deref() == Some("unknown")
    });
    tmux.send(&["q"]);
    tmux.wait_for_prompt();
}

/// The same port given every way `--admin-port` is taken: flags, the
/// variable (comma-separated) and a cluster profile (an array); each
/// proves the lists alike. The exporter asks the same way: the cut-off
/// holder is its one disconnected holder with a port per member, and with
/// one port for all the figure is absent, never 0.
#[test]
fn admin_ports_per_member_are_taken_from_flags_the_variable_a_profile_and_the_exporter() {
    let ensemble = ZkEnsemble::start_members_with(&[member(false), member(false), member(false)]);
    let env = TestEnv::with_ensemble(&ensemble);
    let holders = Holders::on(&env, &ensemble.server(2).address());
    let each = admin_port_of(&ensemble, &[0, 1, 2]);
    wait_for_the_cut(&env, &each, &holders);
    let values: Vec<&String> = each.iter().skip(1).step_by(2).collect();
    let scratch = Scratch::new();
    let file = scratch.file("config.toml");
    let listed: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    std::fs::write(
        &file,
        format!(
            "[clusters.here]\nhosts = {:?}\nadmin-port = [{}]\n",
            env.hosts(),
            listed.join(", ")
        ),
    )
    .expect("write the profile");
    let joined = values
        .iter()
        .map(|v| v.as_str())
        .collect::<Vec<_>>()
        .join(",");
    let nodes = holders.nodes();
    let ways: [(&str, Zklock); 3] = [
        ("flags", env.zklock(["ls", "-o", "json"]).args(&each)),
        (
            "ZKLOCK_ADMIN_PORT",
            env.zklock(["ls", "-o", "json"])
                .env("ZKLOCK_ADMIN_PORT", &joined),
        ),
        (
            "a profile",
            Zklock::new(["-C", "here", "ls", "-o", "json"])
                .no_hosts()
                .env("ZKLOCK_CONFIG", &file),
        ),
    ];
    for (way, ls) in ways {
        let locks: Vec<Lock> = ls.run().assert_success().json();
        let all: Vec<Contender> = locks
            .into_iter()
            .flat_map(|lock| lock.holders.into_iter().chain(lock.waiters))
            .collect();
        let seen: Vec<_> = nodes.iter().map(|n| connection_of(&all, n)).collect();
        assert_eq!(
            seen,
            ["connected", "connected", "connected", "disconnected"].map(|c| Some(c.to_owned())),
            "through {way}"
        );
    }
    // A value the option refuses is refused in a profile too, by its line.
    let bad = scratch.file("bad.toml");
    std::fs::write(
        &bad,
        "[clusters.here]\nadmin-port = [\"zk:2181=8081\", \"nope\"]\n",
    )
    .expect("write the profile");
    let run = Zklock::new(["-C", "here", "ls"])
        .no_hosts()
        .env("ZKLOCK_CONFIG", &bad)
        .run();
    run.assert_code(2);
    let at = format!("{}:2: admin-port", bad.display());
    assert!(run.stderr.contains(&at), "{}", run.stderr);

    let disconnected = |address: &str, lock: &str| {
        crate::monitoring::served(address, "zklock_lock_disconnected_holders", lock)
    };
    let (mut exporter, address) =
        crate::monitoring::exporter(env.zklock(each.clone()), &["--survey-interval", "1s"]);
    wait_for(WAIT, "the exporter counts the cut-off holder", || {
        (disconnected(&address, "/locks/cut") == Some(1.0)).then_some(())
    });
    assert_eq!(disconnected(&address, "/locks/kazoo"), Some(0.0));
    exporter.kill();
    // One port for all, the first member's, through a proxy that counts
    // the AdminServer's requests: every member is asked there, two
    // requests each a survey.
    let first = FaultProxy::start(&format!("127.0.0.1:{}", ensemble.server(0).admin_port()));
    let once = vec!["--admin-port".to_owned(), first.port().to_string()];
    let (mut exporter, address) =
        crate::monitoring::exporter(env.zklock(once.clone()), &["--survey-interval", "1s"]);
    wait_for(WAIT, "the exporter has taken a survey in", || {
        (first.accepted() >= 6).then_some(())
    });
    let rendered = crate::monitoring::served(&address, "zklock_exporter_last_update_seconds", "");
    wait_for(WAIT, "the exporter renders after the survey", || {
        let now = crate::monitoring::served(&address, "zklock_exporter_last_update_seconds", "");
        (now > rendered).then_some(())
    });
    assert_eq!(disconnected(&address, "/locks/cut"), None);
    assert_eq!(disconnected(&address, "/locks/kazoo"), None);
    exporter.kill();

    // A port for one member leaves the others on the bare port, as before.
    let bare = ensemble.server(2).admin_port().to_string();
    let one = [
        "--admin-port".to_owned(),
        format!(
            "{}={}",
            ensemble.server(0).address(),
            ensemble.server(0).admin_port()
        ),
        "--admin-port".to_owned(),
        format!(
            "{}={}",
            ensemble.server(1).address(),
            ensemble.server(1).admin_port()
        ),
        "--admin-port".to_owned(),
        bare,
    ];
    assert_eq!(
        connections(&env, &one, &[&holders.cut.1])[0].as_deref(),
        Some("disconnected")
    );
}

/// `cons` on the first and third members, only `srvr` on the second: the
/// first and third answer `cons` on their client ports, the second through
/// its AdminServer given for it alone, and the lists are whole. Without a
/// port for the second, or with another member's, they are not.
#[test]
fn cons_on_some_members_and_an_admin_server_on_the_other_make_whole_lists() {
    let ensemble = ZkEnsemble::start_members_with(&[member(true), member(false), member(true)]);
    let env = TestEnv::with_ensemble(&ensemble);
    let holders = Holders::on(&env, &ensemble.server(1).address());
    let third = format!("{}{}", ensemble.server(2).address(), env.chroot());
    let mut on_third = peer_on(&third, Library::Kazoo, "/locks/third", "mutex", &[]);
    let third_node = acquired(&mut on_third, WAIT);
    let second_only = admin_port_of(&ensemble, &[1]);
    wait_for_the_cut(&env, &second_only, &holders);
    let mut nodes = holders.nodes();
    nodes.push(&third_node);
    let seen = connections(&env, &second_only, &nodes);
    assert_eq!(
        seen,
        [
            "connected",
            "connected",
            "connected",
            "disconnected",
            "connected"
        ]
        .map(|c| Some(c.to_owned())),
        "{nodes:?}"
    );
    let wrong = one_admin_port(&ensemble, 0);
    for args in [Vec::new(), wrong] {
        let seen = connections(&env, &args, &nodes);
        assert_eq!(seen[3].as_deref(), Some("unknown"), "with {args:?}");
        assert_eq!(
            seen[4].as_deref(),
            Some("connected"),
            "listed by cons, with {args:?}"
        );
    }
    let reaped = reap(&env, &second_only, 0);
    assert_eq!(reaped.deleted, [holders.cut.1.as_str()], "{reaped:#?}");
}

/// An AdminServer that answers what the test tells it: each command's
/// body by name, and HTTP 404 for the others.
struct Impostor {
    port: u16,
}

type Body = Arc<dyn Fn(&mut dyn Write) -> std::io::Result<()> + Send + Sync>;

impl Impostor {
    fn start(answers: Vec<(&'static str, Body)>) -> Impostor {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the impostor");
        let port = listener.local_addr().expect("its address").port();
        let answers: HashMap<&'static str, Body> = answers.into_iter().collect();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let answers = answers.clone();
                std::thread::spawn(move || answer(stream, &answers));
            }
        });
        Impostor { port }
    }

    /// `text` as a body.
    fn text(text: String) -> Body {
        Arc::new(move |out| out.write_all(text.as_bytes()))
    }
}

fn answer(stream: TcpStream, answers: &HashMap<&'static str, Body>) {
    let mut reader = BufReader::new(stream);
    let mut request = String::new();
    if reader.read_line(&mut request).is_err() {
        return;
    }
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(n) if n > 2 => continue,
            _ => break,
        }
    }
    let command = request
        .split_whitespace()
        .nth(1)
        .and_then(|path| path.strip_prefix("/commands/"))
        .unwrap_or_default();
    let mut out = reader.into_inner();
    let _ = match answers.get(command) {
        Some(body) => out
            .write_all(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n")
            .and_then(|()| body(&mut out)),
        None => out.write_all(b"HTTP/1.0 404 Not Found\r\n\r\n"),
    };
}

/// The `configuration` answer of server `id` whose clients connect on
/// `port`.
fn configuration(port: u16, id: i64) -> Body {
    Impostor::text(format!(
        r#"{{"client_port":{port},"data_dir":"/d","server_id":{id},"command":"configuration","error":null}}"#
    ))
}

fn no_connections() -> Body {
    Impostor::text(
        r#"{"connections":[],"secure_connections":[],"command":"connections"}"#.to_owned(),
    )
}

/// An AdminServer that is another member's is not taken for this one's:
/// the third member's at the second's port (another client port), and an
/// impostor that gives the second's client port but the third's server id,
/// where the ensemble's configuration names server.2 at that address. The
/// same impostor giving server.2's id is believed: its empty list then
/// makes the second member's holder disconnected (an AdminServer is
/// trusted as far as its own `configuration` goes).
#[test]
fn an_admin_server_that_answers_for_another_member_is_rejected() {
    let dynamic = || member(false).client_addresses();
    let ensemble = ZkEnsemble::start_members_with(&[dynamic(), dynamic(), dynamic()]);
    let env = TestEnv::with_ensemble(&ensemble);
    let second = ensemble.server(1);
    let on_second = format!("{}{}", second.address(), env.chroot());
    let mut holder = peer_on(&on_second, Library::Kazoo, "/locks/kazoo", "mutex", &[]);
    let node = acquired(&mut holder, WAIT);
    let others = admin_port_of(&ensemble, &[0, 2]);
    let at = |port: u16| {
        let mut args = others.clone();
        args.extend([
            "--admin-port".to_owned(),
            format!("{}={port}", second.address()),
        ]);
        args
    };
    assert_eq!(
        connections(&env, &at(second.admin_port()), &[&node])[0].as_deref(),
        Some("connected")
    );

    let third = ensemble.server(2).admin_port();
    let run = env.zklock(["ls", "-o", "json"]).args(at(third)).run();
    run.assert_success();
    let whose = format!(
        "is that of server.3, whose client port is {}, not {}",
        ensemble.server(2).port(),
        second.port()
    );
    assert!(run.stderr.contains(&whose), "{}", run.stderr);
    assert_eq!(connections(&env, &at(third), &[&node]), unknown(1));

    let wrong_id = Impostor::start(vec![
        ("configuration", configuration(second.port(), 3)),
        ("connections", no_connections()),
    ]);
    let run = env
        .zklock(["ls", "-o", "json"])
        .args(at(wrong_id.port))
        .run();
    run.assert_success();
    assert!(
        run.stderr
            .contains(&format!("names server.2 at {}", second.address())),
        "{}",
        run.stderr
    );
    assert_eq!(connections(&env, &at(wrong_id.port), &[&node]), unknown(1));
    let reaped = reap(&env, &at(wrong_id.port), 10);
    assert!(reaped.deleted.is_empty(), "{reaped:#?}");

    let right_id = Impostor::start(vec![
        ("configuration", configuration(second.port(), 2)),
        ("connections", no_connections()),
    ]);
    assert_eq!(
        connections(&env, &at(right_id.port), &[&node])[0].as_deref(),
        Some("disconnected"),
        "the impostor's answer is read when it proves itself"
    );
}

/// `/zookeeper/config` behind an ACL: nothing says who the members are, so
/// a session no member lists is unknown, not disconnected, and nothing is
/// reaped. A standalone server says it runs alone (`srvr`), and is whole
/// with its configuration unreadable too.
#[test]
fn an_unreadable_configuration_makes_the_survey_unknown_unless_the_server_runs_alone() {
    let options = ZkOptions::default().super_user("root-pw");
    let ensemble = ZkEnsemble::start_with(3, &options);
    let env = TestEnv::with_ensemble(&ensemble);
    let holders = Holders::on(&env, &ensemble.server(0).address());
    let none = Vec::new();
    wait_for_the_cut(&env, &none, &holders);
    hide_the_configuration(&ensemble.connect_string());
    let nodes = holders.nodes();
    let seen = connections(&env, &none, &nodes);
    assert_eq!(seen[3].as_deref(), Some("unknown"), "{nodes:?}");
    let run = env.zklock(["ls"]).run();
    assert!(run.stderr.contains("/zookeeper/config"), "{}", run.stderr);
    let stat: Lock = env
        .zklock(["-o", "json", "stat", "/locks/cut"])
        .run()
        .assert_success()
        .json();
    assert_eq!(stat.holders[0].connection.as_deref(), Some("unknown"));
    let planned = dry_run(&env, &none);
    assert!(planned.would_delete.is_empty(), "{planned:#?}");
    assert_eq!(
        spared_as_unknown(&planned.skipped),
        [holders.cut.1.as_str()]
    );
    let reaped = reap(&env, &none, 10);
    assert!(reaped.deleted.is_empty(), "{reaped:#?}");
    assert_eq!(spared_as_unknown(&reaped.skipped), [holders.cut.1.as_str()]);

    let server = support::ZkServer::with_options(&options);
    let env = TestEnv::with_server(&server);
    let holders = Holders::on(&env, &server.address());
    hide_the_configuration(&server.connect_string());
    wait_for_the_cut(&env, &none, &holders);
    let reaped = reap(&env, &none, 0);
    assert_eq!(reaped.deleted, [holders.cut.1.as_str()], "{reaped:#?}");
}

/// Puts an ACL on `/zookeeper/config` that nobody but its owner (and the
/// super user who sets it) may read.
fn hide_the_configuration(servers: &str) {
    let root = Zk::connect(servers);
    root.add_auth("digest", "super:root-pw");
    root.set_acl(
        "/zookeeper/config",
        &[support::digest_acl(
            "owner",
            "pw",
            zookeeper_client::Permission::ALL,
        )],
    );
    let reader = Zk::connect(servers);
    assert!(
        reader.try_get("/zookeeper/config").is_err(),
        "the ACL hides the configuration"
    );
}

/// A static configuration gives no client addresses: with the connect
/// string naming one member of three on a host, nothing stands for the
/// other two, so a holder connected to one of them is unknown, not
/// disconnected (it used to be taken for the connect string's member on
/// its host). Named in the connect string, each answers for itself.
#[test]
fn members_the_configuration_names_without_an_address_and_nobody_asked_leave_the_survey_unknown() {
    let ensemble = ZkEnsemble::start(3);
    let env = TestEnv::with_ensemble(&ensemble);
    let on_second = format!("{}{}", ensemble.server(1).address(), env.chroot());
    let mut holder = peer_on(&on_second, Library::Kazoo, "/locks/kazoo", "mutex", &[]);
    let node = acquired(&mut holder, WAIT);
    let first_alone = format!("{}{}", ensemble.server(0).address(), env.chroot());
    let run = env.zklock(["ls", "-o", "json"]).hosts(&first_alone).run();
    run.assert_success();
    assert!(
        run.stderr.contains("without a client address"),
        "{}",
        run.stderr
    );
    let locks: Vec<Lock> = run.json();
    assert_eq!(locks[0].holders[0].connection.as_deref(), Some("unknown"));
    assert_eq!(
        connections(&env, &[], &[&node])[0].as_deref(),
        Some("connected")
    );
}

/// `{"connections":[...]}` of `count` connections with sessions from 1 on,
/// then `last`'s: some 55 bytes a connection.
fn many_connections(count: u64, last: i64) -> String {
    let mut body = String::from(r#"{"connections":["#);
    for session in (1..=count).map(|n| n as i64).chain([last]) {
        body += &format!(r#"{{"session_id":{session},"remote_socket_address":"10.0.0.1:4"}},"#);
    }
    body.pop();
    body + "]}"
}

/// An AdminServer's answer is outside input. One over the limit (128 MiB
/// of connections) is no answer: refused whole, never kept, and the survey
/// is unknown, where a list cut short would have left sessions out. One
/// just under it (15 MiB, some 280,000 connections, the holder's last) is
/// read whole, in memory near its size.
#[test]
fn an_admin_server_answer_over_the_limit_is_refused_in_bounded_memory() {
    let server = support::ZkServer::with_options(&ZkOptions::default().harness_words_only());
    let env = TestEnv::with_server(&server);
    let holder = env.connect();
    holder.mkdir_p("/locks/flood");
    let node = holder.create_ephemeral_sequential("/locks/flood/lock-", b"");
    let under = many_connections(280_000, holder.session_id());
    assert!(under.len() < 16 << 20, "{} bytes", under.len());
    let flood_chunk = many_connections(10_000, holder.session_id());
    let flood: Body = Arc::new(move |out| {
        out.write_all(br#"{"connections":["#)?;
        let entries = flood_chunk
            .trim_start_matches(r#"{"connections":["#)
            .trim_end_matches("]}");
        let mut written = 0;
        while written < support::proxy::FLOOD {
            out.write_all(entries.as_bytes())?;
            out.write_all(b",")?;
            written += entries.len() as u64 + 1;
        }
        out.write_all(br#"{}]}"#)
    });
    let ls = |impostor: &Impostor| {
        env.zklock(["ls", "-o", "json"])
            .args(["--admin-port", &impostor.port.to_string()])
    };
    let over = Impostor::start(vec![
        ("configuration", configuration(server.port(), 0)),
        ("connections", flood),
    ]);
    let (run, peak) = crate::hostile::run_measuring_memory(&ls(&over));
    run.assert_success();
    assert!(
        run.stderr.contains("an answer over 16384 KiB"),
        "{}",
        run.stderr
    );
    let locks: Vec<Lock> = run.json();
    assert_eq!(locks[0].holders[0].connection.as_deref(), Some("unknown"));
    // Measured: 35 MB, of which the answer is 16 MiB at most.
    assert!(peak < 48 << 20, "zklock grew to {peak} bytes");

    let under = Impostor::start(vec![
        ("configuration", configuration(server.port(), 0)),
        ("connections", Impostor::text(under)),
    ]);
    let (run, peak) = crate::hostile::run_measuring_memory(&ls(&under));
    run.assert_success();
    let locks: Vec<Lock> = run.json();
    assert_eq!(locks[0].holders[0].path, node);
    assert_eq!(locks[0].holders[0].connection.as_deref(), Some("connected"));
    // Measured: 58 MB, of which the answer is 16 MiB at most.
    assert!(peak < 80 << 20, "zklock grew to {peak} bytes");
}
