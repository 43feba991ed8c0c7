//! Mixed contenders under faults: zklock and a real library
//! contending for one lock while holders are SIGKILLed at random, checked by
//! the fencing log.
//!
//! Curator and kazoo do not see each other's nodes (docs/GUIDE.md,
//! "Dialects"), so a lock shared by all three would not exclude them
//! from each other, and a soak of all three would prove nothing. Instead two
//! soaks run side by side, each on a lock whose contenders must exclude each
//! other: zklock (curator dialect) with Curator InterProcessMutex peers, and
//! zklock (kazoo dialect) with kazoo Lock peers. Every holder appends its
//! section to one fencing log (zklock's command, and the peers with --log);
//! the checker proves no two holders overlapped and that fences (the czxid of
//! each holder's node) grew in grant order. A killed holder's section is
//! closed in the log by the test once the process is seen dead.
//!
//! The faults come from a fixed seed, so a failing run's schedule can be
//! replayed (up to the timing of the processes).

use crate::support;

use std::time::{Duration, Instant};

use support::Running;
use support::fencing::{FenceLog, FencedCommand, Stage};
use support::peers::{Library, peer};
use support::{Zklock, process_alive};

/// How long each soak keeps starting contenders.
const SOAK: Duration = Duration::from_secs(45);
/// The seed of every schedule.
const SEED: u64 = 0x5eed_2026_0007;
/// Session timeout of every contender: a killed holder's lock frees this
/// long after its death.
const SESSION_MS: u64 = 2000;
/// How long a contender may wait for the lock before the soak counts it as
/// stuck: a few killed holders in a row, each holding its lock for a session
/// timeout, plus everyone's sections.
const STUCK: Duration = Duration::from_secs(60);

/// Closes the section of `who` in the log if the process died inside it;
/// true if it did.
fn close_if_open(log: &FenceLog, who: &str) -> bool {
    let entries: Vec<_> = log.entries().into_iter().filter(|e| e.who == who).collect();
    match entries.last() {
        Some(last) if last.start => {
            log.record_end(last.fence, who);
            true
        }
        _ => false,
    }
}

impl Tally {
    /// Counts a kill, as of a holder if it died inside its section.
    fn killed(&mut self, holding: bool) {
        if holding {
            self.killed_holding += 1;
        } else {
            self.killed_waiting += 1;
        }
    }
}

/// What one worker did.
#[derive(Default, Debug)]
struct Tally {
    runs: usize,
    killed_holding: usize,
    killed_waiting: usize,
}

/// A zklock worker: runs `zklock lock` again and again until the soak ends;
/// some runs it SIGKILLs while they hold, a few while they wait.
fn zklock_worker(stage: &Stage, dialect: &str, id: usize, rng: &mut fastrand::Rng) -> Tally {
    let log = stage.log();
    let mut tally = Tally::default();
    let end = Instant::now() + SOAK;
    let mut run = 0;
    while Instant::now() < end {
        run += 1;
        let who = format!("zklock{id}-{run}");
        let hold_ms = rng.u64(20..200);
        let zklock = Zklock::new(["lock", stage.lock(), "--dialect", dialect])
            .hosts(stage.hosts())
            .args(["--session-timeout", &format!("{SESSION_MS}ms")])
            .args(["--kill-after", "500ms", "--"])
            .args(log.command(&who, &format!("sleep {}", hold_ms as f64 / 1000.0)));
        let mut running = zklock.spawn();
        let fate = rng.u64(0..100);
        if fate < 25 {
            // Killed while it holds, part-way through its section.
            let fenced = FencedCommand::parse(&running.next_line(STUCK));
            std::thread::sleep(Duration::from_millis(rng.u64(0..hold_ms)));
            running.kill();
            // zklock's death takes its command along (parent-death signal).
            support::wait_until(
                Duration::from_secs(5),
                "the killed holder's command dies",
                || !process_alive(fenced.pid),
            );
            let holding = close_if_open(log, &who);
            tally.killed(holding);
        } else if fate < 35 {
            // Killed at a random moment, most likely while it waits.
            std::thread::sleep(Duration::from_millis(rng.u64(0..300)));
            let result = running.kill();
            if let Some(line) = result.stdout.lines().find(|l| l.starts_with("held ")) {
                let fenced = FencedCommand::parse(line);
                support::wait_until(Duration::from_secs(5), "the killed command dies", || {
                    !process_alive(fenced.pid)
                });
            }
            let holding = close_if_open(log, &who);
            tally.killed(holding);
        } else {
            running.wait(STUCK).assert_success();
        }
        tally.runs += 1;
    }
    tally
}

/// A library worker: a peer that acquires, holds and releases in a loop
/// until it is SIGKILLed at a random moment; then a new one, until the soak
/// ends, when the last one is let go with SIGTERM.
fn library_worker(stage: &Stage, library: Library, rng: &mut fastrand::Rng) -> Tally {
    let log = stage.log();
    let mut tally = Tally::default();
    let end = Instant::now() + SOAK;
    let log_path = log.path().display().to_string();
    while Instant::now() < end {
        let hold_ms = rng.u64(20..200).to_string();
        let session_ms = SESSION_MS.to_string();
        let mut running: Running = peer(
            stage.env(),
            library,
            stage.dir(),
            "mutex",
            &[
                "--hold-ms",
                &hold_ms,
                "--loops",
                "1000000",
                "--session-timeout-ms",
                &session_ms,
                "--log",
                &log_path,
            ],
        );
        let who = format!("{}-{}", library.dialect(), running.pid());
        let life = Duration::from_millis(rng.u64(500..5000));
        let born = Instant::now();
        while born.elapsed() < life && Instant::now() < end {
            if let Some(run) = running.try_wait() {
                panic!("a {library:?} peer ended by itself: {run:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if Instant::now() < end {
            // Most deaths come inside a section: right after an ACQUIRED.
            if rng.u64(0..100) < 50 {
                let acquired = running.stdout().matches("ACQUIRED").count();
                running.wait_for_stdout(STUCK, "the peer acquires again", |out| {
                    out.matches("ACQUIRED").count() > acquired
                });
                let hold: u64 = hold_ms.parse().expect("a number");
                std::thread::sleep(Duration::from_millis(rng.u64(5..hold / 2 + 6)));
            }
            running.kill();
            let holding = close_if_open(log, &who);
            tally.killed(holding);
        } else {
            running.signal(libc::SIGTERM);
            running.wait(STUCK).assert_success();
        }
        tally.runs += running.stdout().matches("RELEASED").count();
    }
    tally
}

/// Two zklock workers and two `library` workers on one lock for [`SOAK`];
/// then the fencing log must show strict exclusion, growing fences, and
/// sections of both kinds of contender.
fn soak(library: Library, dialect: &str, seed: u64) {
    eprintln!("soak {library:?} + zklock --dialect {dialect}: seed {seed:#x}");
    // Borrowed by every worker thread.
    let stage = &Stage::on_shared_server("soak");
    let log = stage.log();
    let tallies: Vec<(String, Tally)> = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for id in 1..=2 {
            let mut rng = fastrand::Rng::with_seed(seed ^ id as u64);
            handles.push((
                format!("zklock{id}"),
                scope.spawn(move || zklock_worker(stage, dialect, id, &mut rng)),
            ));
        }
        for id in 1..=2 {
            let mut rng = fastrand::Rng::with_seed(seed ^ (100 + id as u64));
            handles.push((
                format!("{library:?}{id}"),
                scope.spawn(move || library_worker(stage, library, &mut rng)),
            ));
        }
        handles
            .into_iter()
            .map(|(name, handle)| (name, handle.join().expect("a soak worker failed")))
            .collect()
    });
    let sections = log.assert_exclusive();
    let by_zklock = sections
        .iter()
        .filter(|h| h.who.starts_with("zklock"))
        .count();
    let by_library = sections.len() - by_zklock;
    eprintln!(
        "soak {library:?}: {} sections ({by_zklock} zklock, {by_library} {library:?}); {tallies:?}",
        sections.len()
    );
    let killed = |zklock: bool| {
        sections
            .iter()
            .filter(|h| h.who.starts_with("zklock") == zklock && h.end_note() == "killed")
            .count()
    };
    assert!(
        by_zklock >= 8 && by_library >= 8,
        "too little happened to prove anything: {by_zklock} zklock and {by_library} \
         {library:?} sections\n{log}"
    );
    assert!(
        killed(true) >= 2 && killed(false) >= 2,
        "too few holders were killed in their sections: {} zklock, {} {library:?}\n{tallies:?}",
        killed(true),
        killed(false)
    );
    // Every contender has ended; those killed had a session timeout to go.
    stage.assert_no_dead_nodes_within(Duration::from_millis(SESSION_MS + 3000));
}

#[test]
fn zklock_and_curator_mutexes_exclude_each_other_while_holders_are_killed() {
    soak(Library::Curator, "curator", SEED);
}

#[test]
fn zklock_and_kazoo_locks_exclude_each_other_while_holders_are_killed() {
    soak(Library::Kazoo, "kazoo", SEED.rotate_left(17));
}
