//! `zklock verify`: a safety test of the lock on the user's own ensemble,
//! with their session timeout, their network and their host, in the way
//! Jepsen tests a database: real holders contend, faults are injected at
//! random moments, and what the holders did is checked afterwards
//! ([`checks`]).
//!
//! The holders are real zklock processes of this binary (`zklock lock
//! ... -- zklock verify-section`), started and reaped by verify
//! ([`family`]); each runs a critical section ([`section`]) through the
//! guard, the process group and the self-fencing of any command, and the
//! sections log what they do to a pipe verify reads. Every holder reaches
//! the ensemble through verify's proxy ([`proxy`]), which can hold its
//! bytes. The faults need neither root nor access to the servers: a
//! holder's connection held past its session timeout (a partition, seen
//! from the client), a holder paused past it (SIGSTOP of zklock, its guard
//! and its section), and zklock or its guard killed.
//!
//! The run is a sequence of rounds, each in a fresh lock directory
//! ([`tree`]): the contenders queue in loops, one fault hits one holder at
//! a random moment, the lock passes on, and the round drains (no new
//! contender, every waiter served) before the next begins. A fresh
//! directory restarts ZooKeeper's sequence numbers, so a fence that was
//! only a sequence number would repeat and be caught.
//!
//! verify touches nothing but its own: a path it creates and removes, the
//! processes it started (signalled through pidfds only), its proxy's
//! connections. Whatever ends the run (its time, a signal, a stranger's
//! node, its own session's end), every paused process is continued, every
//! cut healed, every holder ended, and what it made removed.

pub(crate) mod checks;
mod family;
mod proxy;
pub(crate) mod section;
mod tree;

use std::collections::{BTreeMap, HashMap};
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;

use anyhow::{Context, Result};
use futures::stream::{FuturesUnordered, StreamExt};

use crate::run::Signals;
use crate::sys;
use crate::usage::UsageError;
use crate::zk::{self, ConnectOptions};
use checks::{Exit, Fate, FaultRecord, Records, RunRecord, SectionRecord, Setting, Stopped};
pub(crate) use checks::{Verdict, shown_ms};
use family::{Below, Holder, Reaper};
use proxy::Proxy;
use section::{Line, Said};
use tree::{Seen, Tree};

/// The most contenders a run may have: their sessions count against the
/// host's connections to each server (`maxClientCnxns`), which the host's
/// applications need too.
pub(crate) const MAX_CONTENDERS: usize = 20;

/// The fewest: a lock that never passes on proves nothing.
pub(crate) const MIN_CONTENDERS: usize = 2;

/// Which lock the contenders take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `lock`: one holder at a time.
    Exclusive,
    /// `rlock` and `wlock` mixed: readers share, a writer is alone.
    ReadWrite,
}

impl Mode {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Mode::Exclusive => "exclusive",
            Mode::ReadWrite => "rw",
        }
    }
}

/// A fault verify can inject.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fault {
    /// The holder's bytes held, both ways, past its session timeout.
    Cut,
    /// The holder (zklock, its guard, its section) stopped past it.
    Pause,
    /// zklock, its guard or both killed with SIGKILL.
    Kill,
}

impl Fault {
    pub(crate) const ALL: [Fault; 3] = [Fault::Cut, Fault::Pause, Fault::Kill];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Fault::Cut => "cut",
            Fault::Pause => "pause",
            Fault::Kill => "kill",
        }
    }
}

/// What a kill kills.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KillTarget {
    Zklock,
    Guard,
    Both,
}

impl KillTarget {
    const ALL: [KillTarget; 3] = [KillTarget::Zklock, KillTarget::Guard, KillTarget::Both];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            KillTarget::Zklock => "zklock",
            KillTarget::Guard => "guard",
            KillTarget::Both => "both",
        }
    }
}

/// What a run is asked to do.
#[derive(Clone, Debug)]
pub struct Plan {
    pub duration: Duration,
    pub contenders: usize,
    pub mode: Mode,
    /// In the order given, each once.
    pub faults: Vec<Fault>,
    /// The path to create and work under.
    pub path: String,
    /// `--kill-after` for the holders; `None`: their default.
    pub kill_after: Option<Duration>,
}

/// How far a run has come, for its progress line.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tally {
    pub elapsed: Duration,
    pub round: usize,
    pub sections: usize,
    /// Per fault class, in [`Fault::ALL`]'s order.
    pub injected: [usize; 3],
}

/// How a run ended, for the command: the verdict, and the signal that cut
/// it short, if one did.
pub(crate) struct Outcome {
    pub verdict: Verdict,
    pub signal: Option<i32>,
}

/// Runs `plan` against the ensemble `connect` reaches; `tell` hears how far
/// it has come, about five times a second.
pub(crate) async fn run(
    plan: &Plan,
    connect: &ConnectOptions,
    tell: impl FnMut(&Tally),
) -> Result<Outcome> {
    refuse_what_cannot_be_relayed(connect)?;
    // From before the path exists: a signal then ends the run with it
    // removed, as any later.
    let signals = Signals::catch().context("cannot catch signals")?;
    let session = zk::connect(connect).await?;
    let timeout = session.session_timeout();
    let kill_after = match crate::lock::kill_after_for(&session, plan.kill_after)
        .and_then(|kill_after| room_for_the_faults(plan, timeout, kill_after).map(|()| kill_after))
    {
        Ok(kill_after) => kill_after,
        Err(err) => {
            session.close().await;
            return Err(err.into());
        }
    };
    let proxy = match Proxy::start(&connect.hosts.members()).await {
        Ok(proxy) => proxy,
        Err(err) => {
            session.close().await;
            return Err(
                anyhow::Error::new(err).context("cannot listen on 127.0.0.1 for the holders")
            );
        }
    };
    let tree = Tree::create(session, &plan.path, proxy.holder_sessions()).await?;
    let mut run = match Run::start(plan, connect, tree, proxy, signals, kill_after).await {
        Ok(run) => run,
        Err((tree, err)) => {
            tree.remove().await;
            return Err(err);
        }
    };
    run.drive(tell).await;
    Ok(run.finish().await)
}

/// The proxy relays bytes it must read: a TLS session is opaque to it, and
/// a certificate names the server, not 127.0.0.1. Kerberos names the
/// server's host too, which through the proxy is 127.0.0.1 unless given.
fn refuse_what_cannot_be_relayed(connect: &ConnectOptions) -> Result<(), UsageError> {
    if connect.secured.tls.is_some() || connect.hosts.any_tls() {
        return Err(UsageError::new(
            "verify relays its holders through a proxy of its own, which must read their \
             connections: it cannot run over TLS; run it against the ensemble's plain \
             client port",
        ));
    }
    if matches!(
        connect.secured.sasl,
        Some(zk::SaslConfig::Gssapi { host: None, .. })
    ) {
        return Err(UsageError::new(
            "with --sasl gssapi, verify's holders reach the servers through its proxy on \
             127.0.0.1: give the servers' Kerberos host with --sasl-host",
        ));
    }
    Ok(())
}

/// How long one round takes at most, roughly: the lead-in, the fault and
/// its aftermath (the session's expiry, the kill grace), and the drain.
fn round_length(contenders: usize, timeout: Duration, kill_after: Duration) -> Duration {
    2 * timeout
        + kill_after
        + Duration::from_millis(300) * contenders as u32
        + Duration::from_secs(1)
}

/// Refuses a duration that leaves no room for one round per fault asked.
fn room_for_the_faults(
    plan: &Plan,
    timeout: Duration,
    kill_after: Duration,
) -> Result<(), UsageError> {
    let needed = round_length(plan.contenders, timeout, kill_after) * plan.faults.len() as u32;
    if plan.duration < needed {
        return Err(UsageError::new(format!(
            "--duration {} is too short to inject {} fault(s) with a session timeout of {}: \
             each takes a round of about two session timeouts; give at least {}",
            humantime::format_duration(plan.duration),
            plan.faults.len(),
            humantime::format_duration(timeout),
            humantime::format_duration(Duration::from_secs(needed.as_secs() + 1)),
        )));
    }
    Ok(())
}

/// A run under way.
struct Run<'p> {
    plan: &'p Plan,
    exe: PathBuf,
    /// The options every holder takes before its subcommand.
    global_args: Vec<String>,
    /// The secured-connection settings, for each holder's pipe.
    secrets: String,
    tree: Tree,
    proxy: Proxy,
    reaper: Reaper,
    log: LogReader,
    /// The write end of the sections' log, each holder's stdout.
    log_end: OwnedFd,
    signals: Signals,
    /// The session timeout verify's own session was granted.
    timeout: Duration,
    kill_after: Duration,
    started_us: u64,
    rng: fastrand::Rng,
    /// The faults to come, in order: each class in turn.
    schedule: std::collections::VecDeque<Planned>,
    /// How many faults of each class were planned so far.
    planned: HashMap<Fault, usize>,
    kill_targets: std::iter::Cycle<std::array::IntoIter<KillTarget, 3>>,
    records: Records,
    live: HashMap<u64, Live>,
    runs_by_pid: HashMap<i32, u64>,
    /// Index of each run's section in `records.sections`.
    section_of: HashMap<u64, usize>,
    next_run: u64,
    round: Round,
    timers: BTreeMap<(u64, u64), Timer>,
    timer_seq: u64,
    deaths: FuturesUnordered<Pin<Box<dyn Future<Output = u64>>>>,
    cut_short: Option<String>,
    signal: Option<i32>,
}

/// A holder process that runs.
struct Live {
    contender: usize,
    round: usize,
    writes: bool,
    gives_up: bool,
    /// Its section ignores the kill signal.
    stubborn: bool,
    holder: Holder,
    below: Option<Rc<Below>>,
    /// The timer that ends its section, while one is set.
    end_timer: Option<(u64, u64)>,
    /// The fault that hit it.
    fault: Option<(Fault, Option<KillTarget>)>,
    /// Set when verify ends it: its exit is not checked.
    shut_down: bool,
}

/// The round under way.
struct Round {
    number: usize,
    dir: String,
    phase: Phase,
    /// Spawns a contender again when its holder ends.
    open: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    /// Contenders come and go; the fault is due at a timer.
    LeadIn,
    /// The fault is due: the next section to start (or one that runs with
    /// time left) is its victim.
    Seeking,
    /// A victim is chosen; the fault hits at a timer.
    Aimed(u64),
    /// The fault hit.
    Aftermath(Hit),
    /// No contender is started again; the round ends when the last holder
    /// does, or by `deadline_us`.
    Draining { deadline_us: u64, forced: bool },
}

/// A fault to come.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Planned {
    fault: Fault,
    target: Option<KillTarget>,
    /// Whether its victim's section ignores the kill signal.
    stubborn: bool,
}

/// A fault that hit, and what has come of it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Hit {
    run: u64,
    fault: Fault,
    at_us: u64,
    /// The cut's connections dropped, the paused processes continued.
    undone: bool,
    /// The holder did not end in time and was ended.
    forced: bool,
}

/// What a timer does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Timer {
    /// Starts the contender's next holder, if the round (the second
    /// number) is still open.
    Spawn(usize, usize),
    /// Tells the run's section to end.
    EndSection(u64),
    /// The round's fault is due.
    FaultDue,
    /// Injects the round's fault into the run.
    Inject(u64),
    /// Continues the paused run.
    Resume(u64),
}

/// What woke the run.
enum Event {
    Signal(i32),
    Reaped(HashMap<i32, family::WaitStatus>),
    Log,
    SectionGone(u64),
    Stranger(Seen),
    Timers,
    Tick,
}

impl<'p> Run<'p> {
    async fn start(
        plan: &'p Plan,
        connect: &ConnectOptions,
        tree: Tree,
        proxy: Proxy,
        signals: Signals,
        kill_after: Duration,
    ) -> Result<Run<'p>, (Tree, anyhow::Error)> {
        let timeout = tree.session_timeout();
        let parts = async {
            let exe = std::env::current_exe().context("cannot find zklock's own binary")?;
            let reaper = Reaper::start().context("cannot become the holders' subreaper")?;

            let (log_read, log_end) = sys::pipe().context("cannot make the sections' log")?;
            let log = LogReader::new(log_read)?;
            Ok::<_, anyhow::Error>((exe, reaper, log, log_end))
        };
        let (exe, reaper, log, log_end) = match parts.await {
            Ok(parts) => parts,
            Err(err) => return Err((tree, err)),
        };
        let global_args = holder_global_args(connect, &proxy);
        let mut run = Run {
            plan,
            exe,
            global_args,
            secrets: connect.secured.to_handover(),
            tree,
            proxy,
            reaper,
            log,
            log_end,
            signals,
            timeout,
            kill_after,
            started_us: sys::monotonic_us(),
            rng: fastrand::Rng::new(),
            schedule: std::collections::VecDeque::new(),
            planned: HashMap::new(),
            kill_targets: KillTarget::ALL.into_iter().cycle(),
            records: Records::default(),
            live: HashMap::new(),
            runs_by_pid: HashMap::new(),
            section_of: HashMap::new(),
            next_run: 1,
            round: Round {
                number: 0,
                dir: String::new(),
                phase: Phase::LeadIn,
                open: false,
            },
            timers: BTreeMap::new(),
            timer_seq: 0,
            deaths: FuturesUnordered::new(),
            cut_short: None,
            signal: None,
        };
        run.schedule_faults();
        Ok(run)
    }

    /// Runs rounds until the time is up or something cuts the run short.
    async fn drive(&mut self, mut tell: impl FnMut(&Tally)) {
        if let Err(err) = self.start_round().await {
            self.cut_short(format!("{err:#}"));
            return;
        }
        let mut tick = tokio::time::interval(Duration::from_millis(200));
        while self.cut_short.is_none() {
            match self.next_event(&mut tick).await {
                Event::Signal(signal) => {
                    self.signal = Some(signal);
                    self.cut_short(format!("interrupted by {}", signal_name(signal)));
                }
                Event::Reaped(reaped) => {
                    self.read_log();
                    self.reaped(reaped);
                }
                Event::Log => self.read_log(),
                Event::SectionGone(run) => {
                    self.read_log();
                    self.section_gone(run);
                }
                Event::Stranger(Seen::Stranger { path, owner }) => self.cut_short(format!(
                    "a node verify did not make appeared under its path: {path} (session {}); \
                     verify stopped at once and leaves it alone",
                    zk::format_session(owner)
                )),
                Event::Stranger(Seen::SessionEnded(how)) => {
                    self.cut_short(format!("verify's own session ended ({how})"));
                }
                Event::Timers => self.fire_timers(),
                Event::Tick => tell(&self.tally()),
            }
            match self.advance().await {
                Ok(true) => {}
                Ok(false) => break,
                Err(err) => self.cut_short(format!("{err:#}")),
            }
        }
        tell(&self.tally());
    }

    async fn next_event(&mut self, tick: &mut tokio::time::Interval) -> Event {
        let next_timer = self.timers.keys().next().map(|(at, _)| *at);

        tokio::select! {
            signal = self.signals.next() => Event::Signal(signal),
            reaped = self.reaper.next() => Event::Reaped(reaped),
            () = self.log.readable() => Event::Log,
            Some(run) = self.deaths.next(), if !self.deaths.is_empty() => Event::SectionGone(run),
            seen = self.tree.stranger() => Event::Stranger(seen),
            () = sleep_until_us(next_timer) => Event::Timers,
            _ = tick.tick() => Event::Tick,
        }
    }

    fn cut_short(&mut self, why: String) {
        tracing::warn!("{why}");
        self.cut_short.get_or_insert(why);
    }

    fn tally(&self) -> Tally {
        let mut injected = [0; 3];
        for fault in &self.records.faults {
            if let Some(at) = Fault::ALL.iter().position(|f| *f == fault.fault) {
                injected[at] += 1;
            }
        }
        Tally {
            elapsed: Duration::from_micros(sys::monotonic_us().saturating_sub(self.started_us)),
            round: self.round.number,
            sections: self.records.sections.len(),
            injected,
        }
    }

    fn timer(&mut self, after: Duration, timer: Timer) -> (u64, u64) {
        self.timer_seq += 1;
        let key = (
            sys::monotonic_us().saturating_add(after.as_micros() as u64),
            self.timer_seq,
        );
        self.timers.insert(key, timer);
        key
    }

    fn fire_timers(&mut self) {
        let now = sys::monotonic_us();
        while let Some(entry) = self.timers.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let timer = entry.remove();
            match timer {
                Timer::Spawn(contender, round) if round == self.round.number => {
                    self.spawn_or_say(contender);
                }
                Timer::Spawn(..) => {}
                Timer::EndSection(run) => {
                    if let Some(live) = self.live.get_mut(&run) {
                        live.end_timer = None;
                        live.holder.end_section();
                    }
                }
                Timer::FaultDue => self.seek_victim(),
                Timer::Inject(run) => self.inject(run),
                Timer::Resume(run) => self.resume(run),
            }
        }
    }

    /// Makes the next round's lock directory and starts every contender.
    async fn start_round(&mut self) -> Result<()> {
        let number = self.round.number + 1;
        let dir = self.tree.new_round(number).await?;
        tracing::info!(event = "round", round = number, dir = %dir, "round {number} in {dir}");
        self.round = Round {
            number,
            dir,
            phase: Phase::LeadIn,
            open: true,
        };
        for contender in 0..self.plan.contenders {
            self.spawn_or_say(contender);
        }
        let elapsed = Duration::from_micros(sys::monotonic_us().saturating_sub(self.started_us));
        let room = round_length(self.plan.contenders, self.timeout, self.kill_after);
        if self.schedule.is_empty() && elapsed + room <= self.plan.duration {
            self.schedule_faults();
        }
        let lead_in = self.between(self.timeout / 4, self.timeout / 2);
        self.timer(lead_in, Timer::FaultDue);
        Ok(())
    }

    /// Queues one fault of each class asked for, in a random order; kills
    /// take zklock, its guard and both in turn.
    fn schedule_faults(&mut self) {
        let mut faults = self.plan.faults.clone();
        self.rng.shuffle(&mut faults);
        for fault in faults {
            let target = (fault == Fault::Kill)
                .then(|| self.kill_targets.next())
                .flatten();
            let count = self.planned.entry(fault).or_default();
            // The first of each class hits a section that ignores the
            // kill signal: the case only the SIGKILL deadline covers.
            let stubborn = (*count).is_multiple_of(2);
            *count += 1;
            self.schedule.push_back(Planned {
                fault,
                target,
                stubborn,
            });
        }
    }

    /// A duration between `low` and `high`, at random.
    fn between(&mut self, low: Duration, high: Duration) -> Duration {
        let low = low.as_micros() as u64;
        let high = (high.as_micros() as u64).max(low + 1);
        Duration::from_micros(self.rng.u64(low..high))
    }

    fn spawn_or_say(&mut self, contender: usize) {
        if !self.round.open || self.cut_short.is_some() {
            return;
        }
        if let Err(err) = self.spawn(contender) {
            self.cut_short(format!("cannot start a holder: {err:#}"));
        }
    }

    /// Starts contender `contender`'s next holder in the round's directory.
    fn spawn(&mut self, contender: usize) -> Result<()> {
        let run = self.next_run;
        self.next_run += 1;
        let writes = self.plan.mode == Mode::Exclusive || self.rng.bool();
        let verb = match (self.plan.mode, writes) {
            (Mode::Exclusive, _) => "lock",
            (Mode::ReadWrite, true) => "wlock",
            (Mode::ReadWrite, false) => "rlock",
        };
        let mut args = self.global_args.clone();
        args.extend([verb.to_owned(), self.round.dir.clone()]);
        // Some waiters give up, so that a waiter sees the node it watches
        // go while the holder still holds.
        let gives_up = self.rng.u8(0..4) == 0;
        if gives_up {
            let patience = self.between(self.timeout / 4, self.timeout);
            args.extend(["-w".to_owned(), format!("{}ms", patience.as_millis())]);
        }
        if let Some(kill_after) = self.plan.kill_after {
            args.extend([
                "--kill-after".to_owned(),
                format!("{}ms", kill_after.as_millis()),
            ]);
        }
        args.extend([
            "--".to_owned(),
            self.exe.to_string_lossy().into_owned(),
            "verify-section".to_owned(),
            "--run".to_owned(),
            run.to_string(),
        ]);
        // Some sections ignore the kill signal: only the SIGKILL after
        // --kill-after stops them.
        let stubborn = self.rng.bool();
        if stubborn {
            args.push("--stubborn".to_owned());
        }
        let holder = family::spawn(&self.exe, &args, &self.log_end, &self.secrets)?;
        let pid = holder.zklock.pid();
        self.proxy.admit(pid, run);
        self.runs_by_pid.insert(pid, run);
        self.live.insert(
            run,
            Live {
                contender,
                round: self.round.number,
                writes,
                gives_up,
                stubborn,
                holder,
                below: None,
                end_timer: None,
                fault: None,
                shut_down: false,
            },
        );
        Ok(())
    }

    /// Reads the lines the sections have written so far.
    fn read_log(&mut self) {
        for line in self.log.drain() {
            self.said(line);
        }
    }

    fn said(&mut self, line: Line) {
        match line.said {
            Said::Start => self.section_started(line),
            Said::Tick | Said::Term => {}
            Said::Stop => self.section_stopped(line.run, line.at_us, Stopped::Signalled),
            Said::End => self.section_stopped(line.run, line.at_us, Stopped::Told),
        }
    }

    fn section_started(&mut self, line: Line) {
        let Some(live) = self.live.get_mut(&line.run) else {
            return;
        };
        self.section_of
            .insert(line.run, self.records.sections.len());
        self.records.sections.push(SectionRecord {
            run: line.run,
            contender: live.contender,
            writes: live.writes,
            fence: line.fence,
            pid: line.pid,
            start_us: line.at_us,
            stop: None,
        });
        if let Some(below) = Below::find(&live.holder.zklock, line.pid) {
            let below = Rc::new(below);
            live.below = Some(below.clone());
            let run = line.run;
            self.deaths.push(Box::pin(async move {
                below.section.ended().await;
                run
            }));
        }
        if self.fits_the_fault(line.run) {
            let delay = self.between(Duration::from_millis(20), Duration::from_millis(150));
            self.aim(line.run, delay);
        } else {
            let length = self.between(Duration::from_millis(100), Duration::from_millis(500));
            let key = self.timer(length, Timer::EndSection(line.run));
            if let Some(live) = self.live.get_mut(&line.run) {
                live.end_timer = Some(key);
            }
        }
    }

    fn section_stopped(&mut self, run: u64, at_us: u64, how: Stopped) {
        let Some(&index) = self.section_of.get(&run) else {
            return;
        };
        let section = &mut self.records.sections[index];
        if section.stop.is_some() {
            return;
        }
        section.stop = Some((at_us, how));
        // The server can expire a session one timeout after the bytes it
        // last had from the holder: those sent up to the command's stop.
        let last_sent = self.proxy.last_sent_us(run);
        if let Some(fault) = self.records.faults.iter_mut().find(|f| f.run == run) {
            fault.last_sent_us = last_sent;
        }
    }

    /// The section of `run` is gone, with or without its last line.
    fn section_gone(&mut self, run: u64) {
        self.section_stopped(run, sys::monotonic_us(), Stopped::Killed);
    }

    fn reaped(&mut self, reaped: HashMap<i32, family::WaitStatus>) {
        for (pid, status) in reaped {
            // Guards and sections adopted when their holder died are reaped
            // too, and need nothing more.
            let Some(run) = self.runs_by_pid.remove(&pid) else {
                continue;
            };
            self.proxy.forget(pid);
            let Some(live) = self.live.remove(&run) else {
                continue;
            };
            self.ended(run, live, Exit::of(status));
        }
    }

    /// Records how the holder of `run` ended, and starts its contender's
    /// next one.
    fn ended(&mut self, run: u64, mut live: Live, exit: Exit) {
        if let Some(key) = live.end_timer.take() {
            self.timers.remove(&key);
        }
        let ran = self.section_of.contains_key(&run);
        let stderr = read_tail(&live.holder.stderr);
        // A holder that could not reach ZooKeeper, or whose leader went
        // unheard too long before or while it held, says so (exit 3 or 4,
        // with the cause): a stall, not a breach of the lock, whose safety
        // the sections' log still shows.
        let unreachable = exit == Exit::Code(3)
            && error_cause(&stderr).is_some_and(|cause| UNREACHABLE.contains(&cause.as_str()));
        let fate = match (live.shut_down, live.fault, ran) {
            (true, ..) => Fate::ShutDown,
            (false, Some((fault, target)), _) => Fate::Faulted(fault, target),
            (false, None, true) if exit == Exit::Code(4) => Fate::LostHolding,
            (false, None, true) => Fate::Ran,
            (false, None, false) if unreachable => Fate::Unreachable,
            (false, None, false) if live.gives_up => Fate::GaveUp,
            (false, None, false) => Fate::Stranded,
        };
        self.records.runs.push(RunRecord {
            run,
            contender: live.contender,
            fate,
            exit: Some(exit),
            stderr,
        });
        if live.round == self.round.number && self.round.open {
            let pause = self.between(Duration::ZERO, Duration::from_millis(30));
            self.timer(pause, Timer::Spawn(live.contender, live.round));
        }
    }

    /// The round's fault is due: aims it at a section that runs with time
    /// left, or at the next to start.
    fn seek_victim(&mut self) {
        if self.schedule.is_empty() {
            self.round.phase = self.draining(sys::monotonic_us());
            return;
        }
        self.round.phase = Phase::Seeking;
        let soon = sys::monotonic_us() + 50_000;
        let mut running: Vec<u64> = self
            .live
            .iter()
            .filter(|(_, live)| live.end_timer.is_some_and(|(at, _)| at > soon))
            .map(|(run, _)| *run)
            .filter(|run| self.fits_the_fault(*run))
            .collect();
        running.sort_unstable();
        if !running.is_empty() {
            let run = running[self.rng.usize(..running.len())];
            self.aim(run, Duration::ZERO);
        }
    }

    /// True when the round seeks a victim and `run`'s section (which runs)
    /// is one: its guard and section are known, and it ignores the kill
    /// signal or not as the fault needs.
    fn fits_the_fault(&self, run: u64) -> bool {
        let wanted = self.schedule.front().map(|planned| planned.stubborn);
        self.round.phase == Phase::Seeking
            && self
                .live
                .get(&run)
                .is_some_and(|live| live.below.is_some() && Some(live.stubborn) == wanted)
    }

    /// Keeps `run`'s section running and has the fault hit it after `delay`.
    fn aim(&mut self, run: u64, delay: Duration) {
        if let Some(key) = self
            .live
            .get_mut(&run)
            .and_then(|live| live.end_timer.take())
        {
            self.timers.remove(&key);
        }
        self.round.phase = Phase::Aimed(run);
        self.timer(delay, Timer::Inject(run));
    }

    /// Injects the round's fault into `run`, whose section runs.
    fn inject(&mut self, run: u64) {
        let Some(Planned { fault, target, .. }) = self.schedule.front().copied() else {
            return;
        };
        let running = self
            .section_of
            .get(&run)
            .is_some_and(|&index| self.records.sections[index].stop.is_none());
        let below = self.live.get(&run).and_then(|live| live.below.clone());
        let (true, Some(below)) = (running, below) else {
            // Gone before it could be hit: the next section will be.
            self.round.phase = Phase::Seeking;
            return;
        };
        let timeout = self.holder_timeout(run);
        let live = self
            .live
            .get_mut(&run)
            .expect("a running section's holder lives");
        let at_us = sys::monotonic_us();
        match (fault, target) {
            (Fault::Cut, _) => self.proxy.cut(run),
            (Fault::Pause, _) => {
                for process in [&live.holder.zklock, &below.guard, &below.section] {
                    process.signal(libc::SIGSTOP);
                }
            }
            (Fault::Kill, target) => {
                let target = target.unwrap_or(KillTarget::Both);
                if target != KillTarget::Guard {
                    live.holder.zklock.signal(libc::SIGKILL);
                }
                if target != KillTarget::Zklock {
                    below.guard.signal(libc::SIGKILL);
                }
            }
        }
        live.fault = Some((fault, target));
        tracing::info!(
            event = "fault",
            class = fault.as_str(),
            kills = target.map(KillTarget::as_str),
            run,
            "{} of run {run}",
            fault.as_str()
        );
        self.records.faults.push(FaultRecord {
            fault,
            target,
            run,
            at_us,
            resumed_us: None,
            timeout_ms: timeout.as_millis() as u64,
            last_sent_us: None,
        });
        self.schedule.pop_front();
        if fault == Fault::Pause {
            // Past the session's expiry, which the server may round up to
            // its next tick (at most half the timeout).
            self.timer(timeout * 3 / 2, Timer::Resume(run));
        }
        self.round.phase = Phase::Aftermath(Hit {
            run,
            fault,
            at_us,
            undone: fault == Fault::Kill,
            forced: false,
        });
    }

    /// The session timeout `run`'s holder was granted (verify's own, until
    /// the proxy has seen it).
    fn holder_timeout(&self, run: u64) -> Duration {
        self.proxy.granted(run).map_or(self.timeout, |granted| {
            Duration::from_millis(granted.timeout_ms)
        })
    }

    /// Continues a paused run: zklock first, so that it finds its loss
    /// before its command can run on far.
    fn resume(&mut self, run: u64) {
        if let Some(live) = self.live.get(&run) {
            live.holder.zklock.signal(libc::SIGCONT);
            if let Some(below) = &live.below {
                below.guard.signal(libc::SIGCONT);
                below.section.signal(libc::SIGCONT);
            }
        }
        if let Some(fault) = self.records.faults.iter_mut().find(|f| f.run == run) {
            fault.resumed_us.get_or_insert(sys::monotonic_us());
        }
        if let Phase::Aftermath(hit) = &mut self.round.phase
            && hit.run == run
        {
            hit.undone = true;
        }
    }

    /// Moves the round on; false once the run is over.
    async fn advance(&mut self) -> Result<bool> {
        let now = sys::monotonic_us();
        let time_up = now.saturating_sub(self.started_us) >= self.plan.duration.as_micros() as u64;
        match self.round.phase {
            Phase::Aftermath(hit) => self.round.phase = self.aftermath(now, hit),
            Phase::Draining {
                deadline_us,
                forced,
            } => {
                let left = self
                    .live
                    .values()
                    .any(|live| live.round == self.round.number);
                if !left {
                    if time_up {
                        return Ok(false);
                    }
                    self.start_round().await?;
                } else if now >= deadline_us && !forced {
                    self.force_drain();
                }
            }
            // A fault that found no victim in the time is not injected.
            Phase::LeadIn | Phase::Seeking | Phase::Aimed(_) if time_up => {
                self.round.phase = self.draining(now);
            }
            Phase::LeadIn | Phase::Seeking | Phase::Aimed(_) => {}
        }
        Ok(true)
    }

    /// The fault's aftermath: undoes a cut once the holder is gone and its
    /// session certainly expired, and closes the round once the lock has
    /// passed on (or could have); the phase it leaves.
    fn aftermath(&mut self, now: u64, mut hit: Hit) -> Phase {
        let timeout = self.holder_timeout(hit.run);
        let us = |duration: Duration| duration.as_micros() as u64;
        let victim_gone = !self.live.contains_key(&hit.run);
        if hit.fault == Fault::Cut
            && !hit.undone
            && victim_gone
            && now >= hit.at_us + us(timeout * 3 / 2)
        {
            self.proxy.drop_connections(hit.run);
            hit.undone = true;
        }
        let victim_writes = self
            .section_of
            .get(&hit.run)
            .is_some_and(|&index| self.records.sections[index].writes);
        let passed_on = self
            .records
            .sections
            .iter()
            .rev()
            .take_while(|section| section.start_us >= hit.at_us)
            .any(|section| section.run != hit.run && (victim_writes || section.writes));
        let waited = now >= hit.at_us + us(2 * timeout + self.kill_after + Duration::from_secs(2));
        if victim_gone && hit.undone && (passed_on || waited) {
            return self.draining(now);
        }
        let late = now >= hit.at_us + us(3 * timeout + self.kill_after + Duration::from_secs(10));
        if late && !hit.forced {
            self.records.stuck.push(format!(
                "after the {} of run {}, its zklock had not ended {} later",
                hit.fault.as_str(),
                hit.run,
                shown_ms(((now - hit.at_us) / 1000) as i64)
            ));
            self.shut_down(hit.run);
            hit.forced = true;
        }
        Phase::Aftermath(hit)
    }

    /// The round closes: no contender starts again.
    fn draining(&mut self, now: u64) -> Phase {
        self.round.open = false;
        let bound = self.timeout * 2
            + self.kill_after
            + Duration::from_secs(1) * self.plan.contenders as u32
            + Duration::from_secs(10);
        Phase::Draining {
            deadline_us: now + bound.as_micros() as u64,
            forced: false,
        }
    }

    /// The round did not drain in time: whoever is left is stuck.
    fn force_drain(&mut self) {
        let stuck: Vec<u64> = self
            .live
            .iter()
            .filter(|(_, live)| live.round == self.round.number)
            .map(|(run, _)| *run)
            .collect();
        for run in stuck {
            let holds = self.section_of.contains_key(&run);
            self.records.stuck.push(format!(
                "run {run} was still {} when its round should have drained",
                if holds { "holding" } else { "waiting" }
            ));
            self.shut_down(run);
        }
        if let Phase::Draining { forced, .. } = &mut self.round.phase {
            *forced = true;
        }
    }

    /// Ends `run`'s holder as verify ends every holder when it stops:
    /// continued, healed, its section told to end, zklock asked to let go.
    fn shut_down(&mut self, run: u64) {
        let Some(live) = self.live.get_mut(&run) else {
            return;
        };
        live.shut_down = true;
        self.proxy.heal(run);
        let processes = std::iter::once(&live.holder.zklock).chain(
            live.below
                .iter()
                .flat_map(|below| [&below.guard, &below.section]),
        );
        for process in processes {
            process.signal(libc::SIGCONT);
        }
        live.holder.end_section();
        live.holder.zklock.signal(libc::SIGTERM);
    }

    /// Ends the run: every holder ended (killed if it will not end), what
    /// verify made removed, what is left named, and the checks.
    async fn finish(mut self) -> Outcome {
        let runs: Vec<u64> = self.live.keys().copied().collect();
        for run in runs {
            self.shut_down(run);
        }
        let grace = self.kill_after + self.timeout + Duration::from_secs(5);
        let deadline = tokio::time::Instant::now() + grace;
        while !self.live.is_empty() {
            match tokio::time::timeout_at(deadline, self.reaper.next()).await {
                Ok(reaped) => {
                    self.read_log();
                    self.reaped(reaped);
                }
                Err(_) => break,
            }
        }
        for (run, live) in &self.live {
            self.records.stuck.push(format!(
                "run {run} had not ended {} after verify asked it to; it was killed",
                humantime::format_duration(grace)
            ));
            live.holder.zklock.signal(libc::SIGKILL);
            if let Some(below) = &live.below {
                below.guard.signal(libc::SIGKILL);
                below.section.signal(libc::SIGKILL);
            }
        }
        let left = self.lingering(Duration::from_secs(2)).await;
        family::kill_and_reap(&left);
        self.records.processes_left = left.iter().map(family::Pidfd::pid).collect();
        let setting = self.setting();
        // Killed holders' sessions expire one timeout on; their nodes go
        // then. Beside a stranger's node, nothing is waited for.
        let stranger = self
            .cut_short
            .as_deref()
            .is_some_and(|why| why.contains("did not make"));
        let within = if stranger {
            Duration::ZERO
        } else {
            self.timeout + Duration::from_secs(5)
        };
        self.records.nodes_left = self.tree.remove_within(within).await;
        Outcome {
            verdict: checks::verdict(&setting, &self.records),
            signal: self.signal,
        }
    }

    /// verify's children still there `within` from now, the ended reaped
    /// meanwhile: a holder's guard and section die a moment after it.
    async fn lingering(&mut self, within: Duration) -> Vec<family::Pidfd> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let left = family::children_left();
            if left.is_empty() || tokio::time::Instant::now() >= deadline {
                return left;
            }
            let wait = deadline.min(tokio::time::Instant::now() + Duration::from_millis(50));
            if let Ok(reaped) = tokio::time::timeout_at(wait, self.reaper.next()).await {
                self.read_log();
                self.reaped(reaped);
            }
        }
    }

    fn setting(&self) -> Setting {
        let now_us = sys::monotonic_us();
        Setting {
            path: self.plan.path.clone(),
            mode: self.plan.mode,
            contenders: self.plan.contenders,
            faults: self.plan.faults.clone(),
            duration_ms: self.plan.duration.as_millis() as u64,
            ran_ms: now_us.saturating_sub(self.started_us) / 1000,
            session_timeout_ms: self.timeout.as_millis() as u64,
            kill_after_ms: self.kill_after.as_millis() as u64,
            rounds: self.round.number,
            refused_connections: self.proxy.refused(),
            cut_short: self.cut_short.clone(),
            wall_offset_ms: crate::clock::now_ms() - (now_us / 1000) as i64,
        }
    }
}

/// The name of one of the signals [`Signals`] catches.
fn signal_name(signal: i32) -> String {
    match signal {
        libc::SIGINT => "SIGINT".to_owned(),
        libc::SIGTERM => "SIGTERM".to_owned(),
        libc::SIGHUP => "SIGHUP".to_owned(),
        libc::SIGQUIT => "SIGQUIT".to_owned(),
        other => format!("signal {other}"),
    }
}

/// Resolves at `at_us` on the monotonic clock; never without one.
async fn sleep_until_us(at_us: Option<u64>) {
    match at_us {
        Some(at_us) => {
            let wait = at_us.saturating_sub(sys::monotonic_us());
            tokio::time::sleep(Duration::from_micros(wait)).await;
        }
        None => std::future::pending().await,
    }
}

/// The options every holder takes before its subcommand: its settings over
/// the secrets pipe, the proxy's ports for the servers (with the chroot),
/// and verify's own connection options.
fn holder_global_args(connect: &ConnectOptions, proxy: &Proxy) -> Vec<String> {
    let servers: Vec<String> = proxy.addresses.iter().map(ToString::to_string).collect();
    let hosts = servers.join(",") + connect.hosts.chroot().unwrap_or("");
    let mut args = family::secrets_option().to_vec();
    args.extend([
        // Errors as JSON, whose cause verify reads.
        "-o".to_owned(),
        "json".to_owned(),
        "--hosts".to_owned(),
        hosts,
        "--session-timeout".to_owned(),
        format!("{}ms", connect.session_timeout.as_millis()),
        "--connect-timeout".to_owned(),
        format!("{}ms", connect.connect_timeout.as_millis()),
        "--retries".to_owned(),
        connect.retry.retries.to_string(),
    ]);
    for acl in connect.acl.as_values() {
        args.extend(["--acl".to_owned(), acl]);
    }
    args
}

/// The causes of exit 3 that say ZooKeeper could not be reached or the
/// session was lost before the lock came: what a stall looks like.
const UNREACHABLE: [&str; 7] = [
    "session_lost",
    "timed_out",
    "no_quorum",
    "connection_refused",
    "connection_dropped",
    "connection_lost",
    "unreachable",
];

/// The cause of the JSON error a holder wrote last (holders run with
/// `-o json`), if it wrote one.
fn error_cause(stderr: &str) -> Option<String> {
    let last = stderr.lines().rev().find(|line| line.starts_with('{'))?;
    let error: serde_json::Value = serde_json::from_str(last).ok()?;
    Some(error.get("cause")?.as_str()?.to_owned())
}

/// The end of what a holder wrote to stderr, read without waiting.
fn read_tail(stderr: &std::fs::File) -> String {
    use std::io::Read;
    const KEEP: usize = 1024;
    let mut tail = Vec::new();
    let mut chunk = [0u8; 4096];
    while sys::wait_readable_within([std::os::fd::AsRawFd::as_raw_fd(stderr)], 0)[0] {
        match (&*stderr).read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(read) => {
                tail.extend_from_slice(&chunk[..read]);
                let excess = tail.len().saturating_sub(KEEP);
                tail.drain(..excess);
            }
        }
    }
    String::from_utf8_lossy(&tail).into_owned()
}

/// The sections' log: the read end of the pipe every section writes its
/// lines to, cut into lines as they come.
struct LogReader {
    pipe: tokio::net::unix::pipe::Receiver,
    partial: Vec<u8>,
    /// The current line is longer than any section writes: dropped up to
    /// its newline.
    overlong: bool,
}

impl LogReader {
    fn new(pipe: OwnedFd) -> Result<LogReader> {
        Ok(LogReader {
            pipe: tokio::net::unix::pipe::Receiver::from_owned_fd(pipe)
                .context("cannot read the sections' log")?,
            partial: Vec::new(),
            overlong: false,
        })
    }

    /// Resolves when there is something to read.
    async fn readable(&self) {
        let _ = self.pipe.readable().await;
    }

    /// Every whole line there is now.
    fn drain(&mut self) -> Vec<Line> {
        let mut lines = Vec::new();
        let mut chunk = [0u8; 16 * 1024];
        while let Ok(read) = self.pipe.try_read(&mut chunk) {
            if read == 0 {
                break;
            }
            for &byte in &chunk[..read] {
                if byte == b'\n' {
                    if !self.overlong {
                        lines.extend(
                            std::str::from_utf8(&self.partial)
                                .ok()
                                .and_then(Line::parse),
                        );
                    }
                    self.partial.clear();
                    self.overlong = false;
                } else if self.partial.len() < section::MAX_LINE {
                    self.partial.push(byte);
                } else {
                    self.overlong = true;
                }
            }
        }
        lines
    }
}
