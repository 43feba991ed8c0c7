//! The fault suite: zklock on a real ZooKeeper's worst days.
//!
//! Every scenario runs its holders' critical sections through the fencing log
//! (support::fencing) and checks afterwards that no two exclusive holders
//! overlapped, that fences grew in grant order, and that no node of a dead
//! session was left in the lock directory. Faults come from signals to the
//! processes, from a TCP proxy between zklock and the server
//! (support::proxy), and from killing and restarting real servers.
//!
//! Timing: short session timeouts (2-3 s where a session is meant to die,
//! longer where it must survive a fault) and short --kill-after; tests on
//! the shared server run in chroots of their own, tests that kill servers get
//! dedicated ones.
//!
//! The harness pieces these scenarios rely on (the proxy, the fencing
//! checker) are tested on their own in `harness`.

use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

use support::fencing::{
    FOREVER, FenceLog, FencedCommand, Section, Stage, WAIT, assert_no_dead_nodes, grant_order,
    holder, now_ms, touch, wait_for_file,
};
use support::proxy::{FaultProxy, Mode, Trigger, op};
use support::{
    Run, Running, Scratch, TestEnv, ZkEnsemble, ZkOptions, ZkServer, Zklock, process_alive,
    wait_until,
};

/// Waits until a `-v` zklock has logged its `waiting` event `count` times,
/// and returns the last node it waits on.
fn watching(waiter: &Running, count: usize) -> String {
    wait_until(WAIT, &format!("wait number {count}"), || {
        waiter.log_events("waiting").len() >= count
    });
    let events = waiter.log_events("waiting");
    events[count - 1]["node"]
        .as_str()
        .expect("the node waited on")
        .to_owned()
}

/// The children of the stage's lock directory in queue order (by the
/// sequence suffix).
fn queue_of(stage: &Stage) -> Vec<String> {
    let mut children = stage.zk().children_if_any(stage.dir());
    children.sort_by_key(|c| {
        c[c.len().saturating_sub(10)..]
            .parse::<i32>()
            .unwrap_or(i32::MAX)
    });
    children
}

/// How many times a `-v` holder has logged that it reconnected.
fn reconnects(holder: &Running) -> usize {
    holder.log_events("reconnected").len()
}

/// Waits until a `-v` holder logs a reconnect beyond the `before` it had
/// logged when the fault began (a reconnect from an earlier fault does not
/// count); fails at once if it ends instead.
fn wait_for_reconnect(holder: &mut Running, before: usize) {
    wait_until(WAIT, "the holder reconnects", || {
        if let Some(run) = holder.try_wait() {
            panic!("the holder ended instead of reconnecting: {run:?}");
        }
        reconnects(holder) > before
    });
}

/// Fails unless zklock exited 4 having stopped the holder's command by its
/// own deadline, not on news of the session's end: the section ended on the
/// stop signal less than one `session` timeout after the fault began at
/// `fault_ms`, before the server could have expired the session.
#[track_caller]
fn assert_stopped_by_its_deadline(run: &Run, log: &FenceLog, fault_ms: u64, session: Duration) {
    run.assert_code(4);
    let end = log
        .entries()
        .into_iter()
        .find(|e| !e.start && e.who == "holder")
        .unwrap_or_else(|| panic!("the holder's section never ended\n{log}"));
    assert_eq!(end.note, "signal", "zklock stopped the command\n{log}");
    let after = end.ms as i64 - fault_ms as i64;
    assert!(
        (0..session.as_millis() as i64).contains(&after),
        "the holder's section ended {after} ms after the fault; the session timeout is \
         {session:?}\n{log}\n{run:?}"
    );
}

/// Fails unless `section` ended by itself, not stopped by a signal.
#[track_caller]
fn assert_ended_by_itself(stage: &Stage, section: &Section) {
    assert_eq!(
        section.end_note(),
        "",
        "{}'s command ended by itself\n{}",
        section.who,
        stage.log()
    );
}

// ---------------------------------------------------------------------------
// Holders and waiters meet signals.

#[test]
fn a_sigkilled_holder_takes_its_command_along_and_a_waiter_gets_the_lock_after_the_session_timeout()
{
    let stage = Stage::on_shared_server("k");
    let options = ["--session-timeout", "2s", "--kill-after", "500ms"];
    let (mut holder, fenced) = stage.holder(&stage.hosts(), &options, FOREVER);
    let mut waiter = stage.waiter();
    let killed_at = now_ms();
    holder.kill();
    // The fencing log below proves it died before the lock passed on; the
    // wait only gives a loaded machine its time.
    wait_until(WAIT, "the command dies with zklock", || {
        !process_alive(fenced.pid)
    });
    stage.log().record_end(fenced.fence, "holder");
    waiter.wait(WAIT).assert_success();
    let sections = stage.assert_granted(&["holder", "waiter"]);
    let waited = sections[1].start.ms - killed_at;
    assert!(
        (1000..9000).contains(&waited),
        "the waiter got the lock {waited} ms after the kill: only the session's expiry \
         (2 s after the server last heard from the holder) frees it\n{}",
        stage.log()
    );
    stage.assert_no_dead_nodes();
}

#[test]
fn a_sigtermed_holder_passes_the_signal_on_and_releases_at_once() {
    let stage = Stage::on_shared_server("t");
    let (mut holder, _) = stage.holder(&stage.hosts(), &["--session-timeout", "20s"], FOREVER);
    let mut waiter = stage.waiter();
    let termed_at = now_ms();
    holder.signal(libc::SIGTERM);
    // The command's trap ran (it exits 42 on the signal), and zklock passes
    // its exit code on.
    holder.wait(WAIT).assert_code(42);
    waiter.wait(WAIT).assert_success();
    let sections = stage.assert_granted(&["holder", "waiter"]);
    assert_eq!(sections[0].end_note(), "signal", "{}", stage.log());
    let waited = sections[1].start.ms - termed_at;
    assert!(
        waited < 3000,
        "the lock went to the waiter {waited} ms after SIGTERM; a release is immediate, \
         not a 20 s session expiry\n{}",
        stage.log()
    );
    stage.assert_no_dead_nodes();
}

#[test]
fn a_waiter_interrupted_or_timed_out_leaves_no_node_and_the_next_does_not_jump_the_holder() {
    let stage = Stage::on_shared_server("w");
    let hosts = stage.hosts();
    let (mut holder, fenced) = stage.holder(&hosts, &[], &stage.until_done());
    let mut interrupted = stage.queued(2, stage.fenced(&hosts, &[], "w1", "true"));
    let mut timed_out = stage.queued(3, stage.fenced(&hosts, &["-w", "3s"], "w2", "true"));
    let mut last = stage.queued(4, stage.fenced(&hosts, &[], "w3", "true"));
    let queue = queue_of(&stage);
    let w1_node = format!("{}/{}", stage.dir(), queue[1]);
    assert!(watching(&last, 1).ends_with(&queue[2]), "w3 watches w2");

    // SIGINT: w1's node goes, and w2, which watched it, goes back to waiting
    // on the holder instead of taking the lock.
    assert_eq!(watching(&timed_out, 1), w1_node, "w2 watches w1");
    interrupted.signal(libc::SIGINT);
    interrupted.wait(WAIT).assert_died_of(libc::SIGINT);
    assert_eq!(
        stage.zk().children(stage.dir()).len(),
        3,
        "w1's node is gone"
    );
    assert_eq!(
        watching(&timed_out, 2),
        fenced.node,
        "w2 watches the holder now"
    );
    assert!(timed_out.stdout().is_empty(), "w2 did not jump the holder");

    // Timeout: w2's node goes, and w3 goes back to waiting on the holder.
    timed_out
        .wait(WAIT)
        .assert_code(1)
        .assert_stderr_contains("timed out");
    assert_eq!(
        stage.zk().children(stage.dir()).len(),
        2,
        "w2's node is gone"
    );
    assert_eq!(watching(&last, 2), fenced.node, "w3 watches the holder now");
    assert!(last.stdout().is_empty(), "w3 did not jump the holder");

    stage.finish();
    holder.wait(WAIT).assert_success();
    last.wait(WAIT).assert_success();
    stage.assert_granted(&["holder", "w3"]);
    stage.assert_no_dead_nodes();
}

#[test]
fn a_holder_paused_past_its_session_stops_its_command_and_exits_4_when_resumed() {
    let stage = Stage::on_shared_server("s");
    let hosts = stage.hosts();
    let options = ["--session-timeout", "2s", "--kill-after", "500ms"];
    let (mut holder, fenced) = stage.holder(&hosts, &options, FOREVER);
    let mut waiter = stage.queued(2, stage.fenced(&hosts, &[], "waiter", &stage.until_done()));
    holder.signal(libc::SIGSTOP);
    let got = FencedCommand::parse(&waiter.next_line(WAIT));
    assert!(got.fence > fenced.fence, "{got:?} after {fenced:?}");
    // What docs/GUARANTEES.md says: while zklock is paused, nothing stops its
    // command, which still runs while the waiter holds. Only the fence tells
    // them apart.
    assert!(
        process_alive(fenced.pid),
        "the paused holder's command still runs"
    );
    let resumed = Instant::now();
    holder.signal(libc::SIGCONT);
    let run = holder.wait(WAIT);
    run.assert_code(4).assert_stderr_contains("lost");
    // At once, give or take a loaded machine: not after a reconnect or a
    // wait of its own (the kill takes 500 ms).
    assert!(
        resumed.elapsed() < Duration::from_secs(10),
        "zklock stopped its command {:?} after it was resumed",
        resumed.elapsed()
    );
    assert!(!process_alive(fenced.pid), "the command was stopped");
    stage.finish();
    waiter.wait(WAIT).assert_success();
    let log = stage.log();
    let (sections, overlaps) = log.assert_fenced();
    assert_eq!(grant_order(&sections), ["holder", "waiter"]);
    assert_eq!(sections[0].end_note(), "signal", "zklock stopped it\n{log}");
    assert_eq!(overlaps.len(), 1, "{overlaps:?}\n{log}");
    assert!(
        overlaps[0].stale.starts_with("holder") && overlaps[0].newer.starts_with("waiter"),
        "{overlaps:?}"
    );
    stage.assert_no_dead_nodes();
}

// ---------------------------------------------------------------------------
// The network fails between zklock and the server (the proxy).

#[test]
fn a_holder_cut_off_stops_its_command_before_the_server_can_expire_its_session() {
    let (stage, proxy, through_proxy) = Stage::behind_a_proxy("f");
    let options = ["--session-timeout", "3s", "--kill-after", "1s"];
    let (mut holder, fenced) = stage.holder(&through_proxy, &options, FOREVER);
    let mut waiter = stage.waiter();
    let frozen = now_ms();
    proxy.freeze();
    let run = holder.wait(WAIT);
    assert_stopped_by_its_deadline(&run, stage.log(), frozen, Duration::from_secs(3));
    assert!(!process_alive(fenced.pid), "the command was stopped");
    waiter.wait(WAIT).assert_success();
    // The holder's command had ended (its TERM trap logged it) before the
    // waiter, granted once the server expired the session, began.
    let sections = stage.assert_granted(&["holder", "waiter"]);
    assert!(
        sections[0].end.ms <= sections[1].start.ms,
        "{}",
        stage.log()
    );
    proxy.pass();
    stage.assert_no_dead_nodes();
}

#[test]
fn a_holder_whose_network_heals_before_the_deadline_keeps_the_lock_and_its_command() {
    let (stage, proxy, through_proxy) = Stage::behind_a_proxy("h");
    // Deadline: the latest evidence that the leader heard of the session
    // (at most a quarter of the session and two heartbeats, 2.8 s, behind
    // the last answered sync) + 8 s - 1 s - 0.16 s of clock slack: at least
    // 4 s after any fault begins. Each fault below is healed well before
    // that.
    let (mut holder, fenced) = stage.holder(
        &through_proxy,
        &["--session-timeout", "8s", "--kill-after", "1s"],
        &stage.until_done(),
    );
    let mut waiter = stage.waiter();
    // A freeze of 2 s: the client may or may not give up on the connection.
    proxy.freeze();
    std::thread::sleep(Duration::from_secs(2)); // the fault's length
    proxy.pass();
    proxy.wait_for_traffic(WAIT);
    // A cut of 1 s: the connection is reset, and reconnecting is refused
    // until the network heals.
    let before = reconnects(&holder);
    proxy.cut();
    std::thread::sleep(Duration::from_secs(1)); // the fault's length
    proxy.pass();
    wait_for_reconnect(&mut holder, before);
    assert!(
        holder.is_running() && process_alive(fenced.pid),
        "the command runs on"
    );
    stage.assert_keeps_its_node(&fenced);
    assert!(waiter.stdout().is_empty(), "the waiter still waits");
    stage.finish();
    holder.wait(WAIT).assert_success();
    waiter.wait(WAIT).assert_success();
    let sections = stage.assert_granted(&["holder", "waiter"]);
    assert_ended_by_itself(&stage, &sections[0]);
    stage.assert_no_dead_nodes();
}

#[test]
fn with_the_defaults_a_holder_rides_through_3_5_s_of_silence_on_debian_s_timing() {
    // Debian's server timing (a tick of 2 s) and zklock's defaults: a 10 s
    // session and 2 s of --kill-after leave at least 4.3 s of silence from
    // the leader before the command must be stopped.
    let server = ZkServer::with_options(
        &ZkOptions::default()
            .config("tickTime=2000")
            .config("minSessionTimeout=4000")
            .config("maxSessionTimeout=40000"),
    );
    let stage = Stage::new(TestEnv::with_server(&server), "ride");
    let proxy = FaultProxy::start(&server.address());
    let (mut holder, fenced) = stage.holder(&proxy.hosts(stage.env()), &[], &stage.until_done());
    // A new session's evidence is its connect: fresher than it will be
    // from now on. After a ping gap (2.5 s) of syncs, one each 0.5 s, the
    // evidence lags as it always will.
    wait_until(WAIT, "eight syncs", || proxy.requests_of(&[op::SYNC]) >= 8);
    proxy.freeze();
    std::thread::sleep(Duration::from_millis(3500)); // the fault's length
    proxy.pass();
    proxy.wait_for_traffic(WAIT);
    assert!(
        holder.is_running() && process_alive(fenced.pid),
        "the command was stopped within 3.5 s of silence"
    );
    stage.assert_keeps_its_node(&fenced);
    stage.finish();
    holder.wait(WAIT).assert_success();
    let sections = stage.assert_granted(&["holder"]);
    assert_ended_by_itself(&stage, &sections[0]);
}

#[test]
fn a_lock_taken_after_slow_handshakes_is_held_in_full() {
    let (stage, proxy, through_proxy) = Stage::behind_a_proxy("slow");
    // Each of the first four handshakes is answered after the client's
    // silence limit (a tenth of the 10 s session): it gives up and tries
    // again, with a growing pause, for about 5.5 s in all. The session's
    // creation is evidence from the handshake that made it, not from the
    // first try: counted from there, the 7.8 s that the default session and
    // --kill-after leave would run out before the heartbeat has evidence of
    // its own (a ping gap, 2.5 s, and a heartbeat after the connect).
    proxy.slow_handshakes(4, Duration::from_millis(1500));
    let run = stage
        .fenced(
            &through_proxy,
            &["--connect-timeout", "20s"],
            "holder",
            "sleep 4",
        )
        .run();
    run.assert_success();
    let sections = stage.assert_granted(&["holder"]);
    assert_ended_by_itself(&stage, &sections[0]);
    stage.assert_no_dead_nodes();
}

#[test]
fn a_waiter_granted_past_its_deadline_gives_up_with_exit_3_never_4() {
    let (stage, proxy, through_proxy) = Stage::behind_a_proxy("late");
    let (mut holder, _) = stage.holder(&stage.hosts(), &[], &stage.until_done());
    // With 5 s to stop a command in, 4.8 s without word from the leader is
    // the most the waiter may have when the lock comes to it.
    let options = ["--kill-after", "5s", "-o", "json"];
    let mut waiter = stage.queued(2, stage.fenced(&through_proxy, &options, "waiter", "true"));
    wait_until(WAIT, "eight syncs", || proxy.requests_of(&[op::SYNC]) >= 8);
    // The holder lets go while the waiter is cut off for 5 s, well inside
    // the session: the waiter hears of it once it is back, past its
    // deadline, and must not count the lock as held for a moment.
    proxy.freeze();
    stage.finish();
    holder.wait(WAIT).assert_success();
    std::thread::sleep(Duration::from_secs(5)); // the fault's length
    proxy.pass();
    let run = waiter.wait(WAIT);
    let report = support::json::ErrorReport::of(&run, 3);
    assert_eq!(report.cause, "session_lost", "{run:?}");
    stage.assert_granted(&["holder"]);
    stage.assert_no_dead_nodes();
}

#[test]
fn a_create_whose_answer_is_lost_is_found_again_never_made_twice() {
    let (stage, proxy, through_proxy) = Stage::behind_a_proxy("c");
    stage.zk().mkdir_p(stage.dir());
    proxy.drop_after(Trigger::on(op::CREATE_LIKE).path_contains("/locks/c/"));
    let (mut holder, fenced) = stage.holder(&through_proxy, &[], "true");
    let dropped = proxy.wait_for_drop(WAIT);
    let (zxid, err) = dropped.reply.expect("the server answered the create");
    assert_eq!(err, 0, "the create succeeded on the server: {dropped:?}");
    // The node zklock holds is the one that lost create made: its czxid is
    // that create's zxid, and it is the first node ever made in the
    // directory.
    assert_eq!(fenced.fence, zxid, "{fenced:?} {dropped:?}");
    assert!(fenced.node.ends_with("-lock-0000000000"), "{fenced:?}");
    holder.wait(WAIT).assert_success();
    stage.assert_granted(&["holder"]);
    stage.assert_no_dead_nodes();
    // One child was ever created and deleted: never a second node.
    let stat = stage
        .zk()
        .exists(stage.dir())
        .expect("the persistent directory");
    assert_eq!(stat.cversion, 2, "{stat:?}");
}

#[test]
fn a_create_whose_session_dies_before_the_answer_is_never_adopted() {
    let (stage, proxy, through_proxy) = Stage::behind_a_proxy("e");
    stage.zk().mkdir_p(stage.dir());
    proxy.drop_after(
        Trigger::on(op::CREATE_LIKE)
            .path_contains("/locks/e/")
            .then(Mode::Cut),
    );
    let options = ["--session-timeout", "2s", "--kill-after", "500ms"];
    let mut contender = stage
        .fenced(&through_proxy, &options, "contender", "true")
        .spawn();
    let dropped = proxy.wait_for_drop(WAIT);
    assert_eq!(dropped.reply.map(|(_, err)| err), Some(0), "{dropped:?}");
    // The node is there, owned by a session that can no longer reach the
    // server; it goes when the server expires that session.
    wait_until(WAIT, "the server expires the cut-off session", || {
        stage.zk().children_if_any(stage.dir()).is_empty()
    });
    proxy.pass();
    let run = contender.wait(WAIT);
    run.assert_code(3).assert_stderr_contains("session");
    assert!(run.stdout.is_empty(), "the command never ran: {run:?}");
    assert!(stage.log().entries().is_empty(), "{}", stage.log());
    stage.assert_no_dead_nodes();
    let stat = stage
        .zk()
        .exists(stage.dir())
        .expect("the persistent directory");
    assert_eq!(stat.cversion, 2, "one node made, one expired: {stat:?}");
}

#[test]
fn a_release_while_disconnected_goes_through_once_the_network_heals() {
    let (stage, proxy, through_proxy) = Stage::behind_a_proxy("r");
    for (round, who) in ["cut", "dropped"].into_iter().enumerate() {
        let done = stage.file(who);
        let (mut holder, fenced) = holder(stage.fenced(
            &through_proxy,
            &["--session-timeout", "20s"],
            who,
            &wait_for_file(&done),
        ));
        let waiter_name = format!("after-{who}");
        let waiter_section = stage.fenced(&stage.hosts(), &[], &waiter_name, "true");
        let mut waiter = stage.queued(2, waiter_section);
        let mut healed = now_ms();
        if round == 0 {
            // The network is cut when the command ends: the release cannot
            // reach the server, and zklock keeps trying until it can.
            proxy.cut();
            touch(&done);
            wait_until(WAIT, "the command ends", || !process_alive(fenced.pid));
            let refused = proxy.accepted();
            wait_until(WAIT, "zklock tries to reconnect, twice", || {
                proxy.accepted() >= refused + 2
            });
            assert!(holder.is_running(), "zklock still tries to release");
            assert!(
                stage.zk().exists(&fenced.node).is_some(),
                "the node is still there"
            );
            proxy.pass();
            healed = now_ms();
        } else {
            // The delete reaches the server, its answer is lost with the
            // connection.
            // It goes in one multi with the end record written into the
            // lock directory.
            proxy.drop_after(Trigger::on(&[op::DELETE, op::MULTI]).path_contains("/locks/r/"));
            touch(&done);
            let dropped = proxy.wait_for_drop(WAIT);
            assert_eq!(dropped.reply.map(|(_, err)| err), Some(0), "{dropped:?}");
        }
        holder.wait(WAIT).assert_success();
        waiter.wait(WAIT).assert_success();
        stage.assert_no_dead_nodes();
        // Released, not expired: the waiter got the lock soon after the
        // network healed (10 s leave a loaded machine room), not a 20 s
        // session timeout later.
        let start = stage.log().wait_for_start(&waiter_name, WAIT);
        assert!(
            start.ms < healed + 10_000,
            "{waiter_name} started {} ms after the heal\n{}",
            start.ms.saturating_sub(healed),
            stage.log()
        );
    }
    stage.assert_granted(&["cut", "after-cut", "dropped", "after-dropped"]);
}

#[test]
fn a_release_while_disconnected_ends_with_the_session_and_leaves_no_node() {
    let (stage, proxy, through_proxy) = Stage::behind_a_proxy("x");
    let (mut holder, fenced) = stage.holder(
        &through_proxy,
        &["--session-timeout", "3s", "--kill-after", "1s"],
        &stage.until_done(),
    );
    let mut waiter = stage.waiter();
    // The command ends just after the network is cut, well before the
    // deadline: it ran under the lock, and its exit code is zklock's.
    let cut = Instant::now();
    proxy.cut();
    stage.finish();
    let run = holder.wait(WAIT);
    run.assert_success();
    // Once the 3 s session could have expired, with room for a loaded
    // machine, not after retries of its own.
    assert!(
        cut.elapsed() < Duration::from_secs(12),
        "zklock gave up on the release {:?} after the cut",
        cut.elapsed()
    );
    assert!(!process_alive(fenced.pid));
    waiter.wait(WAIT).assert_success();
    stage.assert_granted(&["holder", "waiter"]);
    proxy.pass();
    stage.assert_no_dead_nodes();
}

// ---------------------------------------------------------------------------
// The server itself fails.

/// A dedicated server, which the test may stop, kill and restart, and a
/// stage for `lock` on it.
fn stage_on_a_server_of_its_own(lock: &str) -> (ZkServer, Stage) {
    let server = ZkServer::new();
    let stage = Stage::new(TestEnv::with_server(&server), lock);
    (server, stage)
}

#[test]
fn a_server_restarted_within_the_session_timeout_keeps_the_lock_and_the_command() {
    let (server, stage) = stage_on_a_server_of_its_own("sr");
    // The server's restart and the client's backoff between attempts (it
    // doubles: 0.1 s, 0.2 s, ... 6.4 s) take several seconds; the deadline is
    // at least 30 s - 1 s - 29 s / 3 after the crash.
    let options = ["--session-timeout", "30s", "--kill-after", "1s"];
    let (mut holder, fenced) = stage.holder(&stage.hosts(), &options, &stage.until_done());
    let mut waiter = stage.waiter_with(&options);
    let before = reconnects(&holder);
    server.restart();
    wait_for_reconnect(&mut holder, before);
    assert!(process_alive(fenced.pid), "the command runs on");
    stage.assert_keeps_its_node(&fenced);
    assert!(waiter.stdout().is_empty(), "the waiter still waits");
    stage.finish();
    holder.wait(WAIT).assert_success();
    waiter.wait(WAIT).assert_success();
    let sections = stage.assert_granted(&["holder", "waiter"]);
    assert_ended_by_itself(&stage, &sections[0]);
    stage.assert_no_dead_nodes();
}

#[test]
fn a_server_down_past_the_session_timeout_releases_the_lock_and_the_holder_exits_4() {
    let (server, stage) = stage_on_a_server_of_its_own("sd");
    let options = ["--session-timeout", "2s", "--kill-after", "500ms"];
    let (mut holder, fenced) = stage.holder(&stage.hosts(), &options, FOREVER);
    // A waiter whose session outlives the outage.
    let mut waiter = stage.waiter_with(&["--session-timeout", "30s"]);
    let killed = now_ms();
    server.kill();
    let run = holder.wait(WAIT);
    assert_stopped_by_its_deadline(&run, stage.log(), killed, Duration::from_secs(2));
    assert!(!process_alive(fenced.pid), "the command was stopped");
    server.start();
    // The restarted server still knows the holder's session, and expires it
    // one session timeout later: then the waiter gets the lock.
    waiter.wait(Duration::from_secs(40)).assert_success();
    let sections = stage.assert_granted(&["holder", "waiter"]);
    assert_eq!(sections[0].end_note(), "signal", "{}", stage.log());
    stage.assert_no_dead_nodes();
}

// ---------------------------------------------------------------------------
// Ensembles: members fail under a holder and its queue.

/// The index of the ensemble member that serves `session` (`0x...`), from
/// each member's `cons` four-letter word.
fn member_serving(ensemble: &ZkEnsemble, session: &str) -> usize {
    let needle = format!("sid={session},");
    support::wait_for(WAIT, &format!("a member serves session {session}"), || {
        (0..ensemble.len()).find(|&i| {
            ensemble
                .server(i)
                .try_four_letter("cons")
                .is_ok_and(|cons| cons.contains(&needle))
        })
    })
}

/// A holder and three waiters on `ensemble`; `fault` breaks the ensemble
/// while they hold and wait (given the holder's session). The holder must
/// keep the lock, and the waiters get it one by one, in queue order.
fn one_holder_and_a_queue_survive(
    ensemble: &ZkEnsemble,
    holder_hosts: impl FnOnce(&TestEnv) -> String,
    fault: impl FnOnce(&FencedCommand),
) {
    let stage = Stage::new(TestEnv::with_ensemble(ensemble), "q");
    // Long enough sessions that an election fits well before the deadline.
    let options = ["--session-timeout", "15s", "--kill-after", "1s"];
    let (mut holder, fenced) =
        stage.holder(&holder_hosts(stage.env()), &options, &stage.until_done());
    let mut waiters: Vec<Running> = (1..=3)
        .map(|i| {
            let who = format!("w{i}");
            let section = stage.fenced(&stage.hosts(), &options, &who, "sleep 0.1");
            stage.queued(i + 1, section)
        })
        .collect();
    let before = reconnects(&holder);
    fault(&fenced);
    // Whichever member it used, the holder was cut off: a follower drops its
    // clients when the leader goes.
    wait_for_reconnect(&mut holder, before);
    assert!(process_alive(fenced.pid), "the holder's command runs on");
    stage.assert_keeps_its_node(&fenced);
    for waiter in &waiters {
        assert!(waiter.stdout().is_empty(), "no one else holds");
    }
    stage.finish();
    holder.wait(WAIT).assert_success();
    for waiter in &mut waiters {
        waiter.wait(WAIT).assert_success();
    }
    let sections = stage.assert_granted(&["holder", "w1", "w2", "w3"]);
    assert_ended_by_itself(&stage, &sections[0]);
    stage.assert_no_dead_nodes();
}

#[test]
fn an_ensemble_that_loses_its_leader_grants_no_one_twice_and_keeps_the_queue_order() {
    let ensemble = ZkEnsemble::start(3);
    one_holder_and_a_queue_survive(&ensemble, TestEnv::hosts, |_| {
        let leader = ensemble.leader();
        ensemble.server(leader).kill();
    });
}

#[test]
fn an_ensemble_that_loses_the_holders_server_grants_no_one_twice_and_keeps_the_queue_order() {
    let ensemble = ZkEnsemble::start(3);
    // The holder knows only the followers, so the member it uses is one, and
    // it has another to move to.
    let followers = ensemble.followers();
    one_holder_and_a_queue_survive(
        &ensemble,
        |env| members_hosts(&ensemble, env, &followers),
        |fenced| {
            let serving = member_serving(&ensemble, &fenced.session);
            assert!(followers.contains(&serving));
            ensemble.server(serving).kill();
        },
    );
}

#[test]
fn an_ensemble_without_a_quorum_grants_no_one_and_its_queue_proceeds_once_restored() {
    let ensemble = ZkEnsemble::start(3);
    let stage = Stage::new(TestEnv::with_ensemble(&ensemble), "n");
    let (mut holder, fenced) = stage.holder(
        &stage.hosts(),
        &["--session-timeout", "3s", "--kill-after", "1s"],
        FOREVER,
    );
    // Waiters whose sessions outlive the outage.
    let mut waiters: Vec<Running> = (1..=2)
        .map(|i| {
            let who = format!("w{i}");
            let options = ["--session-timeout", "40s"];
            stage.queued(i + 1, stage.fenced(&stage.hosts(), &options, &who, "true"))
        })
        .collect();
    let leader = ensemble.leader();
    let down: Vec<usize> = [leader, (leader + 1) % 3].into();
    let lost_quorum = now_ms();
    for &i in &down {
        ensemble.server(i).kill();
    }
    // No quorum: the holder cannot tell whether it still holds, so it stops
    // its command before its session could expire.
    let run = holder.wait(WAIT);
    assert_stopped_by_its_deadline(&run, stage.log(), lost_quorum, Duration::from_secs(3));
    assert!(!process_alive(fenced.pid));
    // A bounded observation window: no one is granted while the quorum is
    // gone, though the holder has stopped.
    std::thread::sleep(Duration::from_secs(2));
    for waiter in &mut waiters {
        assert!(
            waiter.is_running() && waiter.stdout().is_empty(),
            "no grant without a quorum"
        );
    }
    let log = stage.log();
    assert_eq!(log.entries().len(), 2, "only the holder's section\n{log}");
    for &i in &down {
        ensemble.server(i).launch();
    }
    ensemble.leader();
    for waiter in &mut waiters {
        waiter.wait(Duration::from_secs(60)).assert_success();
    }
    let sections = stage.assert_granted(&["holder", "w1", "w2"]);
    assert_eq!(sections[0].end_note(), "signal", "{log}");
    // Through a new session: the test's own may have ended while no member
    // could serve it (the client gives up 1.4 session timeouts, 14 s, after
    // it last heard a server, and bringing two members back on a busy
    // machine can take longer).
    assert_no_dead_nodes(&stage.env().connect(), stage.dir(), &[], Duration::ZERO);
}

#[test]
fn only_a_read_only_server_reachable_locks_fail_and_never_grant() {
    let ensemble = ZkEnsemble::start_with(3, &ZkOptions::default().read_only_mode());
    let env = TestEnv::with_ensemble(&ensemble);
    let scratch = Scratch::new();
    let granted = scratch.file("granted");
    let dir = "/locks/ro";
    env.zk().mkdir_p(dir);
    // A holder from before the partition, as a persistent node (sessions do
    // not matter to a read-only server) of kazoo's, the one library whose
    // persistent nodes are contenders.
    let (_, node) = env.zk().create_with(
        &format!("{dir}/0123456789abcdef0123456789abcdef__lock__"),
        b"",
        &zookeeper_client::CreateMode::PersistentSequential
            .with_acls(zookeeper_client::Acls::anyone_all()),
    );
    let leader = ensemble.leader();
    let keep = (leader + 2) % 3;
    for i in (0..3).filter(|&i| i != keep) {
        ensemble.server(i).kill();
    }
    let survivor = ensemble.server(keep);
    wait_until(WAIT, "the survivor serves read-only", || {
        survivor.mode().as_deref() == Some("read-only")
    });
    let hosts = format!("{}{}", survivor.address(), env.chroot());
    let touch_granted = ["touch", granted.to_str().expect("utf-8 path")];
    // `--read-only` on lock is refused as a usage error (2) before
    // connecting; without it the server turns down the session that is not
    // read-only (3), or zklock refuses the read-only one (10).
    for (global, codes) in [(&["--read-only"][..], &[2][..]), (&[], &[3, 10])] {
        let run = Zklock::new(global)
            .hosts(&hosts)
            .args(["--connect-timeout", "2s", "lock", "-w", "2s", "ro", "--"])
            .args(touch_granted)
            .run();
        assert!(
            run.code.is_some_and(|code| codes.contains(&code)),
            "a lock on a read-only server must fail, not grant or wait: {run:?}"
        );
        assert!(!granted.exists(), "the command never runs: {run:?}");
    }
    // Inspection does work there.
    Zklock::new(["--read-only", "-o", "json", "stat", "ro"])
        .hosts(&hosts)
        .run()
        .assert_success()
        .assert_stdout_contains(node.rsplit('/').next().expect("a name"));
    for i in (0..3).filter(|&i| i != keep) {
        ensemble.server(i).launch();
    }
    ensemble.leader();
    // A new session: the first was local to its server (read-only mode
    // enables local sessions), which may have been killed.
    assert_eq!(
        env.connect().children(dir),
        [node.rsplit('/').next().expect("a name")],
        "no contender node was made"
    );
}

// ---------------------------------------------------------------------------
// Self-fencing: the command is gone before the lock can pass on, whatever
// breaks between zklock, its guard, its command and the leader.

/// Shell code that appends the time (ms) to `beats` every 20 ms until
/// stopped: its last sign of life, however it dies.
fn beating(beats: &Path) -> String {
    format!(
        "while :; do date +%s%3N >> '{}'; sleep 0.02; done",
        beats.display()
    )
}

/// Waits until the command `held.pid` is gone, and returns its last
/// heartbeat (ms).
fn wait_for_death(fenced: &FencedCommand, beats: &Path, within: Duration) -> u64 {
    wait_until(within, "the holder's command is gone", || {
        !process_alive(fenced.pid)
    });
    let beats = std::fs::read_to_string(beats).expect("the command's heartbeat");
    // A line cut short by the kill does not count.
    beats
        .lines()
        .filter_map(|line| line.parse().ok())
        .max()
        .expect("a heartbeat")
}

/// Fails unless the only other section in `log`, the waiter's, began after
/// the holder's command (last seen alive at `last_beat`) was gone.
#[track_caller]
fn assert_waiter_began_after(log: &FenceLog, last_beat: u64) {
    let starts: Vec<_> = log.entries().into_iter().filter(|e| e.start).collect();
    let order: Vec<&str> = starts.iter().map(|e| e.who.as_str()).collect();
    assert_eq!(order, ["holder", "waiter"], "{log}");
    let overlap = last_beat as i64 - starts[1].ms as i64;
    assert!(
        overlap < 0,
        "the holder's command ran {overlap} ms into the waiter's section\n{log}"
    );
    eprintln!(
        "the holder's command was gone {} ms before the waiter began",
        -overlap
    );
}

/// The parent of `pid`, from /proc.
fn parent_of(pid: i32) -> i32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("a live process");
    let after_name = &stat[stat.rfind(')').expect("a name") + 1..];
    after_name
        .split_whitespace()
        .nth(1)
        .and_then(|ppid| ppid.parse().ok())
        .expect("a parent pid")
}

/// The guard between zklock and the command `held.pid`.
fn guard_of(fenced: &FencedCommand) -> i32 {
    let guard = parent_of(fenced.pid);
    let name = std::fs::read_to_string(format!("/proc/{guard}/comm")).unwrap_or_default();
    assert_eq!(
        name.trim(),
        "zklock-guard",
        "the command's parent is the guard"
    );
    guard
}

fn kill(pid: i32, signal: i32) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(pid, signal);
    }
}

/// True while any process of process group `group` exists.
fn group_alive(group: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::kill(-group, 0) == 0 }
}

#[test]
fn a_killed_guard_is_not_taken_for_the_command_s_end_and_the_group_dies_before_the_release() {
    let stage = Stage::on_shared_server("guard");
    let beats = stage.file("beats");
    let (mut holder, fenced) = stage.holder(&stage.hosts(), &[], &beating(&beats));
    let mut waiter = stage.waiter();
    let guard = guard_of(&fenced);
    kill(guard, libc::SIGKILL);
    let run = holder.wait(WAIT);
    let group_left = group_alive(guard);
    let last_beat = wait_for_death(&fenced, &beats, WAIT);
    waiter.wait(WAIT).assert_success();
    kill(-guard, libc::SIGKILL);
    // Not the guard's 137 passed off as the command's: an error of its own.
    run.assert_code(10);
    assert!(
        !group_left,
        "zklock ended while the command's group still ran\n{run:?}"
    );
    assert_waiter_began_after(stage.log(), last_beat);
    stage.assert_no_dead_nodes();
}

#[test]
fn zklock_and_its_guard_killed_together_take_the_command_along_before_the_session_can_expire() {
    let stage = Stage::on_shared_server("both");
    let beats = stage.file("beats");
    let (mut holder, fenced) = stage.holder(
        &stage.hosts(),
        &["--session-timeout", "3s"],
        &beating(&beats),
    );
    let mut waiter = stage.waiter();
    // What `pkill -9 zklock` does: both processes match.
    let guard = guard_of(&fenced);
    kill(guard, libc::SIGKILL);
    holder.kill();
    // Well before the 3 s session can expire.
    let last_beat = wait_for_death(&fenced, &beats, Duration::from_secs(1));
    waiter.wait(WAIT).assert_success();
    kill(-guard, libc::SIGKILL);
    assert_waiter_began_after(stage.log(), last_beat);
    stage.assert_no_dead_nodes();
}

#[test]
fn a_command_s_background_worker_holds_the_lock_until_it_ends_unless_it_left_the_group() {
    let stage = Stage::on_shared_server("worker");
    let worker_done = stage.file("worker-done");
    // `sh -c 'worker &'`: the shell ends at once, its worker 1 s later.
    let worker = format!("( sleep 1; date +%s%3N > '{}' ) &", worker_done.display());
    let (mut holder, _) = stage.holder(&stage.hosts(), &[], &worker);
    let mut waiter = stage.waiter();
    holder.wait(WAIT).assert_success();
    waiter.wait(WAIT).assert_success();
    let done: u64 = std::fs::read_to_string(&worker_done)
        .expect("the worker ran to its end")
        .trim()
        .parse()
        .expect("a time");
    let sections = stage.assert_granted(&["holder", "waiter"]);
    assert!(
        done <= sections[1].start.ms,
        "the worker ended at {done}, after the next holder began\n{}",
        stage.log()
    );

    // A daemon started in a session of its own is not waited for.
    let daemon_pid = stage.file("daemon-pid");
    let daemon = format!(
        "setsid sh -c 'echo $$ > {}; exec sleep 30' & while [ ! -s '{}' ]; do sleep 0.02; done",
        daemon_pid.display(),
        daemon_pid.display()
    );
    let run = Zklock::new(["lock", stage.lock(), "--"])
        .hosts(stage.hosts())
        .args(["sh", "-c", &daemon])
        .run();
    run.assert_success()
        .assert_faster_than(Duration::from_secs(10));
    let pid: i32 = std::fs::read_to_string(&daemon_pid)
        .expect("the daemon's pid")
        .trim()
        .parse()
        .expect("a pid");
    assert!(process_alive(pid), "the daemon runs on");
    kill(pid, libc::SIGKILL);
}

/// Members `members` of `ensemble` as a connect string with `env`'s chroot.
fn members_hosts(ensemble: &ZkEnsemble, env: &TestEnv, members: &[usize]) -> String {
    let addresses: Vec<String> = members
        .iter()
        .map(|&i| ensemble.server(i).address())
        .collect();
    format!("{}{}", addresses.join(","), env.chroot())
}

/// A holder with default settings on a follower that is cut from the leader
/// (bytes held, no reset) must have its command gone before the leader
/// expires its session and grants the lock to a waiter on the other members,
/// even a command that ignores SIGTERM and so runs through the whole
/// --kill-after grace.
fn a_follower_cut_from_the_leader_stops_its_holder_in_time(ensemble: &ZkEnsemble) {
    let stage = Stage::new(TestEnv::with_ensemble(ensemble), "cut");
    let beats = stage.file("beats");
    let leader = ensemble.leader();
    let followers = ensemble.followers();
    let (cut_off, other) = (followers[0], followers[1]);
    let stubborn = format!("trap '' TERM; {}", beating(&beats));
    let (mut holder, fenced) = stage.holder(
        &members_hosts(ensemble, stage.env(), &[cut_off]),
        &[],
        &stubborn,
    );
    let mut waiter =
        stage.waiter_through(&members_hosts(ensemble, stage.env(), &[leader, other]), &[]);
    ensemble.partition(cut_off, leader);
    let run = holder.wait(Duration::from_secs(60));
    let last_beat = wait_for_death(&fenced, &beats, WAIT);
    waiter.wait(Duration::from_secs(60)).assert_success();
    ensemble.heal(cut_off, leader);
    run.assert_code(4);
    assert_waiter_began_after(stage.log(), last_beat);
    ensemble.leader();
    stage.assert_no_dead_nodes();
}

/// A holder with default settings whose follower freezes (SIGSTOP) for 6 s,
/// past the 5 s connect timeout but well short of the 10 s session, with the
/// other follower healthy: it moves there and keeps the lock.
fn a_frozen_follower_costs_its_holder_a_reconnect_not_the_lock(ensemble: &ZkEnsemble) {
    let stage = Stage::new(TestEnv::with_ensemble(ensemble), "frozen");
    let followers = ensemble.followers();
    let (mut holder, fenced) = stage.holder(
        &members_hosts(ensemble, stage.env(), &followers),
        &[],
        &stage.until_done(),
    );
    let mut waiter = stage.waiter();
    let serving = member_serving(ensemble, &fenced.session);
    let before = reconnects(&holder);
    let frozen_at = Instant::now();
    ensemble.server(serving).freeze();
    wait_for_reconnect(&mut holder, before);
    let freeze = Duration::from_secs(6);
    std::thread::sleep(freeze.saturating_sub(frozen_at.elapsed())); // the fault's length
    ensemble.server(serving).thaw();
    assert!(
        holder.is_running() && process_alive(fenced.pid),
        "the command runs on\n{}",
        holder.stderr()
    );
    stage.assert_keeps_its_node(&fenced);
    stage.finish();
    holder.wait(WAIT).assert_success();
    waiter.wait(WAIT).assert_success();
    stage.assert_granted(&["holder", "waiter"]);
    stage.assert_no_dead_nodes();
}

fn self_fencing_on(options: &ZkOptions) {
    let ensemble = ZkEnsemble::start_partitionable(3, options);
    a_frozen_follower_costs_its_holder_a_reconnect_not_the_lock(&ensemble);
    a_follower_cut_from_the_leader_stops_its_holder_in_time(&ensemble);
}

#[test]
fn self_fencing_holds_under_a_partition_and_a_frozen_follower_with_debian_s_timing() {
    self_fencing_on(
        &ZkOptions::default()
            .config("tickTime=2000")
            .config("initLimit=10")
            .config("syncLimit=5")
            .config("minSessionTimeout=4000")
            .config("maxSessionTimeout=40000"),
    );
}

#[test]
fn self_fencing_holds_under_a_partition_and_a_frozen_follower_with_a_short_tick() {
    self_fencing_on(&ZkOptions::default());
}

#[test]
fn kill_after_defaults_to_a_share_of_the_granted_session_and_one_leaving_no_room_is_refused() {
    let env = TestEnv::new();
    // A 2 s session needs no --kill-after of its own.
    env.zklock(["--session-timeout", "2s", "lock", "room", "--", "true"])
        .run()
        .assert_success();
    // The shared server grants at most 60 s of the 100 asked for: 40 s of
    // grace would leave no room to stop the command in time.
    let run = env
        .zklock([
            "--session-timeout",
            "100s",
            "lock",
            "room",
            "--kill-after",
            "40s",
            "--",
            "true",
        ])
        .run();
    run.assert_code(2);
    assert!(env.zk().children_if_any("/locks/room").is_empty());
}
