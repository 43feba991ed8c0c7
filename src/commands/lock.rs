//! `zklock lock|rlock|wlock LOCK [-- COMMAND...]` and `zklock sem LOCK
//! --max-leases N [-- COMMAND...]`: take a lock or a semaphore's lease, run a
//! command under it or hold it until a signal, and let it go. Only the wait
//! differs between the two; holding and letting go are the same.

use std::cell::Cell;
use std::io::IsTerminal;
use std::time::Duration;

use anyhow::Result;
use tokio::time::Instant;

use crate::config::Globals;
use crate::exit::{self, ExitStatus};
use crate::lock::hold::{self, Loss};
use crate::lock::nesting;
use crate::lock::{
    AcquireError, ContenderKind, Contention, Dialect, Held, LeaseContention, LockQueue, LockSpec,
    Outcome, Owner, Patience, SemaphoreSpec, Waiting,
};
use crate::model::{self, Lock};
use crate::output::{self, Format, Printer, Spinner};
use crate::run::detach::{self, Grant, HolderWord, Reporter};
use crate::run::{self, CommandSpec, Ending, Signals};
use crate::usage::UsageError;
use crate::zk::monitor::{LeaderEvidence, Timing};
use crate::zk::{self, NodeWatch, Session};

use super::{deadlocks, stat};

/// What `lock`, `rlock`, `wlock` and `sem` were asked for.
#[derive(Clone, Debug)]
pub struct LockArgs {
    /// The lock directory, or the semaphore node.
    pub path: String,
    pub kind: ContenderKind,
    /// `sem`: hold one of at most this many leases of the semaphore at
    /// `path`, rather than the lock.
    pub max_leases: Option<u32>,
    pub dialect: Dialect,
    pub no_wait: bool,
    pub timeout: Option<Duration>,
    /// The exit code when the lock is not acquired (`-E`).
    pub conflict_exit_code: u8,
    pub data: Option<String>,
    /// Record the command's whole command line in the owner record, not
    /// only its program name.
    pub record_command: bool,
    /// What to do once the lock is ours.
    pub holding: Holding,
}

/// What zklock does with a lock once it holds it.
#[derive(Clone, Debug)]
pub enum Holding {
    /// Run a command under it, then release.
    Command(LockedCommand),
    /// Print the token, hold until a signal, release.
    UntilSignal,
    /// Start a background holder, print the token it reports, exit.
    Detach(Detached),
    /// Be that background holder, reporting on a descriptor.
    DetachedHolder { report_fd: i32, until: Detached },
    /// Make a persistent node the server removes after this long, print the
    /// token, exit.
    Ttl(Duration),
}

/// The command of `lock LOCK -- COMMAND...`.
#[derive(Clone, Debug)]
pub struct LockedCommand {
    pub argv: Vec<String>,
    pub shell: bool,
    pub kill_signal: i32,
    /// `None`: derived from the granted session timeout.
    pub kill_after: Option<Duration>,
}

/// When a detached holder lets go, besides `zklock release TOKEN`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Detached {
    /// After this long.
    pub lease: Option<Duration>,
    /// When this process ends.
    pub while_pid: Option<i32>,
}

/// Acquires the lock, then does what `args.holding` says. Every path that
/// gives up deletes our contender node.
pub(crate) async fn run(globals: &Globals, args: LockArgs) -> Result<ExitStatus> {
    let mut signals = Signals::catch()?;
    match args.holding {
        Holding::Detach(until) => detach(globals, until, &mut signals).await,
        Holding::DetachedHolder { report_fd, .. } => {
            let reporter = Reporter::from_fd(report_fd)?;
            let result = lock_and_hold(globals, &args, &mut signals, Some(reporter)).await;
            if let Err(err) = &result {
                tracing::warn!("detached holder: {err:#}");
            }
            result
        }
        _ => lock_and_hold(globals, &args, &mut signals, None).await,
    }
}

/// The foreground of `--detach`: start the holder, print its token.
async fn detach(globals: &Globals, until: Detached, signals: &mut Signals) -> Result<ExitStatus> {
    if let Some(pid) = until.while_pid
        && !detach::process_exists(pid)
    {
        return Err(UsageError::new(format!("--while-pid {pid}: no such process")).into());
    }
    let (word, interrupted) = detach::spawn_holder(signals, &globals.connect.secured).await?;
    match (word, interrupted) {
        (_, Some(signal)) => Ok(ExitStatus::Interrupted(signal)),
        (HolderWord::Held(grant), None) => {
            print_grant(&globals.printer, &grant)?;
            Ok(ExitStatus::Success)
        }
        (HolderWord::Failed(code, message), None) => {
            if !message.is_empty() {
                eprintln!("zklock: {}", output::inert(&message));
            }
            Ok(ExitStatus::Child(code))
        }
    }
}

/// Connects, acquires, holds as `args.holding` says, and releases. A
/// detached holder reports its outcome through `reporter`.
async fn lock_and_hold(
    globals: &Globals,
    args: &LockArgs,
    signals: &mut Signals,
    reporter: Option<Reporter>,
) -> Result<ExitStatus> {
    let acquired = async {
        let connect_sent = Instant::now();
        let recorded = args
            .command()
            .map(|c| Owner::recorded_command(&c.argv, c.shell, args.record_command));
        // The owner record (the password database, the host name) is built
        // while the connection is being made, not before or after it.
        let (session, owner) = tokio::join!(biased; connect_writable(globals), async {
            Owner::of_this_process(recorded, args.data.clone())
                .in_group(run::guard::group())
                .with_deadline(args.timeout.filter(|_| !args.no_wait))
        });
        let session = session?;
        let owner = owner.nested_in(nesting::proven(&session).await);
        let asked = args.kind.mode();
        let upgrade = args
            .max_leases
            .is_none()
            .then(|| nesting::upgrade(&args.path, asked, &owner.nested_in));
        if let Some(hold) = upgrade.flatten() {
            session.close().await;
            let message = format!(
                "waiting would deadlock: this process runs under the read hold {hold}, and a \
                 write lock of the same lock is never granted while that hold lasts"
            );
            globals.printer.note(&message);
            let status = ExitStatus::WouldDeadlock;
            return Ok(Err(GaveUp { status, message }));
        }
        let kill_after = match args.command().map(|c| kill_after_for(&session, c)) {
            Some(Err(err)) => {
                session.close().await;
                return Err(err.into());
            }
            Some(Ok(kill_after)) => kill_after,
            None => Duration::ZERO,
        };
        let evidence = LeaderEvidence::track(&session, connect_sent);
        let running = (kill_after, &globals.printer, &mut *signals);
        if let Some(status) = reenter(&session, &evidence, args, &owner.nested_in, running).await? {
            close(session, evidence).await;
            return Ok(Err(GaveUp {
                status,
                message: String::new(),
            }));
        }
        let acquisition = Acquisition::new(&session, args, owner.to_bytes());
        let cycles =
            (!owner.nested_in.is_empty()).then(|| stat::chains_under(&globals.root, &args.path));
        match acquire(
            &session,
            acquisition,
            (args, cycles),
            &globals.printer,
            signals,
        )
        .await
        {
            Ok(Ok((held, kept_watch))) => Ok(Ok((session, held, kept_watch, evidence, kill_after))),
            Ok(Err(status)) => {
                close(session, evidence).await;
                Ok(Err(status))
            }
            Err(err) => {
                close(session, evidence).await;
                Err(err)
            }
        }
    };
    let ((session, held, kept_watch, evidence, kill_after), reporter) =
        match (acquired.await, reporter) {
            (Ok(Ok(acquired)), reporter) => (acquired, reporter),
            (Ok(Err(GaveUp { status, message })), reporter) => {
                if let Some(reporter) = reporter {
                    reporter.failed(status.code(), &message);
                }
                return Ok(status);
            }
            (Err(err), reporter) => {
                if let Some(reporter) = reporter {
                    reporter.failed(exit::status_for(&err).code(), &format!("{err:#}"));
                }
                return Err(err);
            }
        };
    tracing::info!("acquired {} (fence {})", held.node, held.fence);
    let hold = Hold {
        session: &session,
        held: &held,
        evidence: &evidence,
        kept_watch: Cell::new(kept_watch),
    };
    if let Holding::Ttl(_) = args.holding {
        let printed = print_grant(&globals.printer, &grant_of(&session, &held));
        close(session, evidence).await;
        printed?;
        return Ok(ExitStatus::Success);
    }
    let status = hold_as_asked(globals, args, &hold, kill_after, signals, reporter).await;
    evidence.stop();
    hold::release(session, &held).await?;
    status
}

/// Holds the acquired lock as `args.holding` says, until it is time to
/// release. An error (the command cannot run, stdout is closed) is returned
/// for the caller to release the lock all the same.
async fn hold_as_asked(
    globals: &Globals,
    args: &LockArgs,
    hold: &Hold<'_>,
    kill_after: Duration,
    signals: &mut Signals,
    reporter: Option<Reporter>,
) -> Result<ExitStatus> {
    let held = hold.held;
    Ok(match &args.holding {
        Holding::Command(command) => {
            run_command(hold, command, kill_after, &globals.printer, signals).await?
        }
        Holding::UntilSignal => {
            globals.printer.line(&held.node)?;
            run::ignore_ctrl_z();
            hint_how_to_release(&globals.printer, &held.lock);
            hold_until(hold, &globals.printer, signals, Detached::default()).await
        }
        Holding::DetachedHolder { until, .. } => {
            if let Some(reporter) = reporter {
                reporter.held(&grant_of(hold.session, held));
            }
            hold_until(hold, &globals.printer, signals, *until).await
        }
        Holding::Ttl(_) | Holding::Detach(_) => {
            unreachable!("neither --ttl nor the foreground of --detach holds a lock")
        }
    })
}

/// What a held lock is, for whoever releases or fences with it.
fn grant_of(session: &Session, held: &Held) -> Grant {
    Grant {
        token: held.node.clone(),
        lock: held.lock.clone(),
        fence: held.fence,
        session: zk::format_session(session.id()),
    }
}

/// The token on a line of its own, or with `-o json` the whole grant.
fn print_grant(printer: &Printer, grant: &Grant) -> Result<()> {
    match printer.format {
        Format::Json => printer.line(&serde_json::to_string(grant)?),
        Format::Table => printer.line(&grant.token),
    }
}

/// At a terminal, says how the hold ends: nothing else shows that zklock is
/// waiting for a signal rather than stuck.
fn hint_how_to_release(printer: &Printer, lock: &str) {
    if std::io::stderr().is_terminal() {
        printer.note(&format!(
            "holding {lock}; Ctrl-C to release (or `zklock release TOKEN` from elsewhere)"
        ));
    }
}

/// Closes `session` once its heartbeat has stopped: the session ends only
/// when no part of zklock uses its client any more.
async fn close(session: Session, evidence: LeaderEvidence) {
    evidence.stop();
    session.close().await;
}

/// Re-entry: when an enclosing hold of ours holds this lock now in a mode
/// that covers the request ([`nesting::reentry`]), runs the command at once
/// under that hold, with no node of its own, and stops it if that hold
/// ends; the hold is its owner's to release, never ours. `None` when there
/// is no such hold or no command.
async fn reenter(
    session: &Session,
    evidence: &LeaderEvidence,
    args: &LockArgs,
    holds: &[String],
    (kill_after, printer, signals): (Duration, &Printer, &mut Signals),
) -> Result<Option<ExitStatus>> {
    let Some(command) = args.command() else {
        return Ok(None);
    };
    if holds.is_empty() || args.max_leases.is_some() {
        return Ok(None);
    }
    let queue = LockQueue::from_children(session.children(&args.path).await.unwrap_or_default());
    let Some(node) = nesting::reentry(&args.path, args.kind.mode(), holds, &queue) else {
        return Ok(None);
    };
    let Some(stat) = session.stat(node).await? else {
        return Ok(None);
    };
    tracing::info!("re-entering {} under the enclosing hold {node}", args.path);
    let held = Held {
        lock: args.path.clone(),
        node: node.to_owned(),
        fence: stat.czxid,
    };
    let hold = Hold {
        session,
        held: &held,
        evidence,
        kept_watch: Cell::new(None),
    };
    run_command(&hold, command, kill_after, printer, signals)
        .await
        .map(Some)
}

/// A lock being held: its session, its node, and what shows that the leader
/// still keeps the session.
struct Hold<'a> {
    session: &'a Session,
    held: &'a Held,
    evidence: &'a LeaderEvidence,
    /// The watch set on our node while we waited, for the first watch of
    /// the hold to go on with.
    kept_watch: Cell<Option<NodeWatch>>,
}

impl Hold<'_> {
    /// Resolves when the lock is lost, `margin` before the leader could
    /// expire the session.
    async fn lost(&self, margin: Duration) -> Loss {
        let kept = self.kept_watch.take();
        hold::lost(self.session, self.held, kept, self.evidence, margin).await
    }
}

/// The `--kill-after` of `command` on `session`: as given, or a share of the
/// granted session timeout. A usage error when it leaves no room to stop the
/// command before the leader could expire the session.
fn kill_after_for(session: &Session, command: &LockedCommand) -> Result<Duration, UsageError> {
    let timing = Timing::for_session(session.session_timeout());
    let kill_after = command
        .kill_after
        .unwrap_or_else(|| timing.default_kill_after());
    if timing.ride_through(kill_after).is_none() {
        return Err(UsageError::new(format!(
            "the server granted a session timeout of {} and --kill-after is {}: the command \
             could not be stopped in time before the server may expire the session; lower \
             --kill-after (it may be at most about half the session timeout)",
            humantime::format_duration(timing.session_timeout),
            humantime::format_duration(kill_after)
        )));
    }
    Ok(kill_after)
}

impl LockArgs {
    /// True when a command is to run under the lock, behind the guard.
    pub(crate) fn runs_a_command(&self) -> bool {
        self.command().is_some()
    }

    fn command(&self) -> Option<&LockedCommand> {
        match &self.holding {
            Holding::Command(command) => Some(command),
            _ => None,
        }
    }

    fn ttl(&self) -> Option<Duration> {
        match self.holding {
            Holding::Ttl(ttl) => Some(ttl),
            _ => None,
        }
    }
}

/// Opens a session for taking a lock: never on a read-only server.
async fn connect_writable(globals: &Globals) -> Result<Session> {
    let mut options = globals.connect.clone();
    options.read_only = false;
    let session = zk::connect(&options).await?;
    if session.is_read_only() {
        session.close().await;
        return Err(
            zk::Error::ReadOnly("refusing to lock on a read-only ZooKeeper server".into()).into(),
        );
    }
    Ok(session)
}

/// Why zklock gave up waiting: the exit status, and the message people see
/// (empty when there is nothing to say, as after a signal).
struct GaveUp {
    status: ExitStatus,
    message: String,
}

/// How the wait for the lock ended.
enum Wait {
    Done(Result<Outcome, AcquireError>),
    Signal(i32),
    /// A certain cycle runs through our wait; the release that breaks it.
    Cycle(String),
}

/// What zklock queues for: a lock, with its contender node, or a lease of a
/// semaphore, with its lease and internal mutex nodes.
enum Acquisition<'s> {
    Lock(Contention<'s>),
    /// Boxed: a lease's contention carries two nodes' worth of state.
    Lease(Box<LeaseContention<'s>>),
}

impl<'s> Acquisition<'s> {
    /// The acquisition `args` ask for; `data` goes into each node we make.
    fn new(session: &'s Session, args: &LockArgs, data: Vec<u8>) -> Acquisition<'s> {
        match args.max_leases {
            Some(max_leases) => Acquisition::Lease(Box::new(LeaseContention::new(
                session,
                SemaphoreSpec {
                    path: args.path.clone(),
                    dialect: args.dialect,
                    max_leases,
                    data,
                },
            ))),
            None => Acquisition::Lock(Contention::new(
                session,
                LockSpec {
                    path: args.path.clone(),
                    kind: args.kind,
                    dialect: args.dialect,
                    data,
                    ttl: args.ttl(),
                },
            )),
        }
    }

    /// Waits as `patience` allows, keeping `spinner` (when there is one)
    /// told who holds and how many wait.
    async fn acquire(
        &mut self,
        session: &Session,
        args: &LockArgs,
        patience: Patience,
        spinner: Option<&Spinner>,
        woke: &tokio::sync::Notify,
    ) -> Result<Outcome, AcquireError> {
        let path = args.path.as_str();
        match self {
            Acquisition::Lock(contention) => {
                let update = |waiting: &Waiting| {
                    woke.notify_one();
                    if let Some(spinner) = spinner {
                        spinner.set(describe_wait(path, waiting));
                    }
                };
                contention
                    .acquire(patience, spinner.is_some(), update)
                    .await
            }
            Acquisition::Lease(contention) => {
                // The lease holders and the queue are the model's to read,
                // once per change, and only for a spinner.
                let max_leases = contention.max_leases();
                let changed = tokio::sync::Notify::new();
                let acquire = contention.acquire(patience, || {
                    changed.notify_one();
                    woke.notify_one();
                });
                let refresh = async {
                    while let Some(spinner) = spinner {
                        changed.notified().await;
                        if let Ok(Some(lock)) = model::read_lock(session, path).await {
                            spinner.set(describe_lease_wait(&lock, max_leases));
                        }
                    }
                    std::future::pending().await
                };
                tokio::select! {
                    outcome = acquire => outcome,
                    never = refresh => never,
                }
            }
        }
    }

    /// The watch a lock's wait left on our node (see
    /// [`Contention::take_own_watch`]); a lease has none to hand on.
    fn take_own_watch(&mut self) -> Option<NodeWatch> {
        match self {
            Acquisition::Lock(contention) => contention.take_own_watch(),
            Acquisition::Lease(_) => None,
        }
    }

    /// Deletes every node we made on the way.
    async fn abandon(&mut self) -> Result<(), zk::Error> {
        match self {
            Acquisition::Lock(contention) => contention.abandon().await,
            Acquisition::Lease(contention) => contention.abandon().await,
        }
    }
}

/// Waits for the lock. The inner `Err` is the exit status when we gave up
/// (conflict, timeout, signal); our nodes are deleted on each such path.
///
/// A nested zklock also watches for a certain cycle under `cycles` each time
/// it finds it must wait, and gives up with exit 7 when one runs through it.
async fn acquire(
    session: &Session,
    mut contention: Acquisition<'_>,
    (args, cycles): (&LockArgs, Option<&str>),
    printer: &Printer,
    signals: &mut Signals,
) -> Result<Result<(Held, Option<NodeWatch>), GaveUp>> {
    let spinner = printer.spinner(&format!("waiting for {}", args.path));
    let patience = Patience::new(args.no_wait, args.timeout);
    let woke = tokio::sync::Notify::new();
    let wait = tokio::select! {
        outcome = contention.acquire(session, args, patience, spinner.as_ref(), &woke) => Wait::Done(outcome),
        signal = signals.next() => Wait::Signal(signal),
        cycle = deadlocks::certain_cycle(session, cycles, &woke) => Wait::Cycle(cycle),
    };
    if let Some(spinner) = spinner {
        spinner.finish();
    }
    match wait {
        Wait::Done(Ok(Outcome::Acquired(held))) => Ok(Ok((held, contention.take_own_watch()))),
        Wait::Done(Ok(Outcome::NotAcquired)) => {
            let holders = who_holds(session, &args.path).await;
            contention.abandon().await?;
            let message = not_acquired(args, &holders);
            printer.note(&message);
            Ok(Err(GaveUp {
                status: ExitStatus::NotAcquired(args.conflict_exit_code),
                message,
            }))
        }
        Wait::Done(Err(err)) => {
            if let Err(cleanup) = contention.abandon().await {
                tracing::warn!("could not remove our node: {cleanup}");
            }
            let lost_session = err.failure() == zk::Failure::Unreachable;
            let err = anyhow::Error::from(err);
            Err(if lost_session {
                err.context(format!(
                    "the session was lost before {} was acquired",
                    args.path
                ))
            } else {
                err
            })
        }
        Wait::Cycle(cycle) => {
            contention.abandon().await?;
            let message = format!(
                "waiting for {} would deadlock: a certain wait-for cycle runs through this \
                 wait (it would be broken by: {})",
                args.path, cycle
            );
            printer.note(&message);
            let status = ExitStatus::WouldDeadlock;
            Ok(Err(GaveUp { status, message }))
        }
        Wait::Signal(signal) => {
            contention.abandon().await?;
            Ok(Err(GaveUp {
                status: ExitStatus::Interrupted(signal),
                message: String::new(),
            }))
        }
    }
}

/// Why the lock is not ours, for people (and the logs of scripts): which
/// wait ended, and who holds the lock (every lease, for a semaphore).
fn not_acquired(args: &LockArgs, holders: &[String]) -> String {
    let held_by = match holders {
        [] => "another contender".to_owned(),
        holders => holders.join(", "),
    };
    let what = match args.max_leases {
        Some(max) => format!("all {max} leases of {} are taken", args.path),
        None => format!("{} is held", args.path),
    };
    match args.timeout {
        Some(timeout) if !args.no_wait => format!(
            "timed out after {} waiting for {}: {what}, by {held_by}",
            humantime::format_duration(timeout),
            args.path
        ),
        _ => format!("{what} by {held_by}"),
    }
}

/// Who holds the lock at `path` now, each as [`describe_holder`] says it;
/// none when that cannot be read (the message then names no one).
async fn who_holds(session: &Session, path: &str) -> Vec<String> {
    match model::read_lock(session, path).await {
        Ok(Some(lock)) => lock.holders.iter().map(describe_contender).collect(),
        _ => Vec::new(),
    }
}

fn describe_contender(holder: &model::Contender) -> String {
    describe_holder(
        holder.dialect,
        &holder.data,
        holder.session(),
        holder.stat.ctime,
    )
}

/// A holder for people: its owner text, its dialect and since when it holds.
fn describe_holder(dialect: Dialect, data: &[u8], session: i64, ctime_ms: i64) -> String {
    let owner = model::owner_text(dialect, data, session);
    let since = output::format_time_ms(ctime_ms);
    format!("{owner} ({dialect}) since {since}")
}

/// The spinner's line: who holds the lock, since when, and our place.
fn describe_wait(lock: &str, waiting: &Waiting) -> String {
    let holder = &waiting.holder;
    let who = match &waiting.holder_data {
        Some((data, stat)) => {
            describe_holder(holder.dialect, data, stat.ephemeral_owner, stat.ctime)
        }
        None => holder.name.clone(),
    };
    format!("waiting for {lock}: held by {who}, {} ahead", waiting.ahead)
}

/// The spinner's line for a semaphore: how many leases are taken and by
/// whom, and how many acquirers wait (us among them).
fn describe_lease_wait(semaphore: &Lock, max_leases: u32) -> String {
    let holders: Vec<String> = semaphore.holders.iter().map(describe_contender).collect();
    format!(
        "waiting for {}: {} of {max_leases} leases taken, by {}; {} waiting",
        semaphore.path,
        holders.len(),
        holders.join(", "),
        semaphore.waiters.len()
    )
}

/// Holds the lock until a signal, the lease's end, or the end of the process
/// it is tied to (each a normal release, exit 0), or until the lock is lost
/// (exit 4).
async fn hold_until(
    hold: &Hold<'_>,
    printer: &Printer,
    signals: &mut Signals,
    until: Detached,
) -> ExitStatus {
    let lease = async {
        match until.lease {
            Some(lease) => tokio::time::sleep(lease).await,
            None => std::future::pending().await,
        }
    };
    let tied = async {
        match until.while_pid {
            Some(pid) => detach::process_exit(pid).await,
            None => std::future::pending().await,
        }
    };
    let held = hold.held;
    tokio::select! {
        signal = signals.next() => tracing::info!("signal {signal}: releasing {}", held.node),
        () = lease => tracing::info!("lease over: releasing {}", held.node),
        () = tied => tracing::info!("the process we were tied to ended: releasing {}", held.node),
        loss = hold.lost(Duration::ZERO) => return report_loss(printer, held, &loss, false),
    }
    ExitStatus::Success
}

/// With a command: run it under the lock; stop it if the lock is lost.
async fn run_command(
    hold: &Hold<'_>,
    command: &LockedCommand,
    kill_after: Duration,
    printer: &Printer,
    signals: &mut Signals,
) -> Result<ExitStatus> {
    let (session, held) = (hold.session, hold.held);
    let spec = CommandSpec {
        argv: command.argv.clone(),
        shell: command.shell,
        env: vec![
            ("ZKLOCK_LOCK".into(), held.lock.clone()),
            ("ZKLOCK_NODE".into(), held.node.clone()),
            ("ZKLOCK_FENCE".into(), held.fence.to_string()),
            ("ZKLOCK_SESSION".into(), zk::format_session(session.id())),
            (nesting::HELD.into(), nesting::held_for_command(&held.node)),
        ],
        kill_signal: command.kill_signal,
        kill_after,
    };
    Ok(
        match run::supervise(&spec, signals, hold.lost(kill_after)).await? {
            Ending::Exited(code) => ExitStatus::Child(code),
            Ending::Stopped(loss) => report_loss(printer, held, &loss, true),
            Ending::GuardDied(code) => {
                printer.note(&format!(
                    "the guard process of the command died (exit code {code}); the command's \
                     processes were stopped before {} was released",
                    held.lock
                ));
                ExitStatus::Other
            }
        },
    )
}

fn report_loss(printer: &Printer, held: &Held, loss: &Loss, stopped: bool) -> ExitStatus {
    let tail = if stopped {
        "; the command was stopped"
    } else {
        ""
    };
    printer.note(&format!("lock {} lost: {loss}{tail}", held.lock));
    ExitStatus::LockLost
}
