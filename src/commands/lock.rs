//! `zklock lock|rlock|wlock LOCK [-- COMMAND...]` and `zklock sem LOCK
//! --max-leases N [-- COMMAND...]`: take a lock or a semaphore's lease, run a
//! command under it or hold it until a signal, and let it go. Only the wait
//! differs between the two; holding and letting go are the same.

use std::io::IsTerminal;
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::time::Instant;

use crate::config::Globals;
use crate::exit::{self, ExitStatus};
use crate::lock::end::{EndHow, Ender};
use crate::lock::nesting;
use crate::lock::{
    self, AcquireError, Acquisition, ContenderKind, Dialect, Held, HeldLock, Hold, LockQueue,
    LockSpec, Loss, Outcome, Owner, Patience, QueueChange, Waiting,
};
use crate::model::{self, Lock};
use crate::output::{self, Format, Printer, Spinner};
use crate::run::detach::{self, Grant, HolderWord, Reporter};
use crate::run::guard::Standby;
use crate::run::{self, CommandSpec, Ending, Signals};
use crate::usage::UsageError;
use crate::zk::monitor::{LeaderEvidence, Timing};
use crate::zk::{self, Session};

use super::{deadlocks, stat};

/// What `lock`, `rlock`, `wlock` and `sem` were asked for.
#[derive(Clone, Debug)]
pub struct LockArgs {
    /// The lock directory, or the semaphore node; with several locks, the
    /// first in their canonical order.
    pub path: String,
    /// `lock A B -- COMMAND`: the locks after `path`, in canonical order
    /// (sorted by path, duplicates removed), all taken in that order in one
    /// session before the command runs.
    pub others: Vec<String>,
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
    /// `--max-hold`: stop the command once it has run this long.
    pub max_hold: Option<Duration>,
    /// `--preserve-status`: after `--max-hold`, exit with the command's own
    /// status rather than 124.
    pub preserve_status: bool,
}

/// When a detached holder lets go, besides `zklock release TOKEN`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Detached {
    /// After this long.
    pub lease: Option<Duration>,
    /// When this process ends.
    pub while_pid: Option<i32>,
}

/// Acquires the lock, then does what `args.holding` says, and lets the
/// lock go. Every path that gives up deletes our contender node.
///
/// The line of values: the holding asked for becomes a [`Then`] (with the
/// guard for a command), [`take`] turns the session and the queue into a
/// [`HeldLock`] or [`NotHeld`], [`Then::hold`] holds it until the command's
/// end, a signal or the loss, and the held lock releases itself.
pub(crate) async fn run(
    globals: &Globals,
    args: LockArgs,
    guard: Option<Standby>,
) -> Result<ExitStatus> {
    let mut signals = Signals::catch()?;
    let then = match &args.holding {
        Holding::Detach(until) => return detach(globals, *until, &mut signals).await,
        Holding::Command(command) => Then::Run {
            command: command.clone(),
            guard: guard.context("no guard process was started for the command")?,
        },
        Holding::UntilSignal => Then::WaitForSignal,
        Holding::DetachedHolder { report_fd, until } => Then::Report {
            reporter: Reporter::from_fd(*report_fd)?,
            until: *until,
        },
        Holding::Ttl(_) => Then::Leave,
    };
    let lock = match take(globals, &args, then.command_group(), &mut signals).await {
        Ok(lock) => lock,
        Err(not_held) => return then.gave_up(not_held),
    };
    tracing::info!(
        "acquired {} (fence {})",
        lock.held().node,
        lock.held().fence
    );
    then.hold(globals, lock, &mut signals).await
}

/// What is done with the lock once it is ours.
enum Then {
    /// Run the command behind its guard, then release.
    Run {
        command: LockedCommand,
        guard: Standby,
    },
    /// Print the token, hold until a signal, release.
    WaitForSignal,
    /// As the detached holder: report the grant to the foreground, hold
    /// until a signal, the lease's end or the end of the process we are
    /// tied to, release.
    Report { reporter: Reporter, until: Detached },
    /// Print the grant and leave the node (one with a time to live) to the
    /// server.
    Leave,
}

impl Then {
    /// The process group the command will run in (the guard's), which the
    /// owner record names so that a zklock the command starts can prove it
    /// is nested in this hold.
    fn command_group(&self) -> Option<libc::pid_t> {
        match self {
            Then::Run { guard, .. } => Some(guard.pid()),
            _ => None,
        }
    }

    /// Holds `lock` as asked, then lets it go. An error on the way (the
    /// command cannot run, stdout is closed) comes back after the release.
    async fn hold(
        self,
        globals: &Globals,
        lock: HeldLock,
        signals: &mut Signals,
    ) -> Result<ExitStatus> {
        // From here on a stopped zklock would let the lock lapse unseen.
        run::stay_out_of_job_control();
        let printer = &globals.printer;
        let status = match self {
            Then::Leave => {
                let printed = print_grant(printer, &grant_of(&lock));
                lock.leave().await;
                return printed.map(|()| ExitStatus::Success);
            }
            Then::Run { command, guard } => {
                run_command(&lock, &command, guard, printer, signals).await
            }
            Then::WaitForSignal => hold_at_terminal(&lock, printer, signals).await,
            Then::Report { reporter, until } => {
                reporter.held(&grant_of(&lock));
                Ok(hold_until(&lock, printer, signals, until).await)
            }
        };
        let how = match status {
            Ok(ExitStatus::MaxHold(_)) => EndHow::MaxHold,
            _ => EndHow::Released,
        };
        lock.release(how).await?;
        status
    }

    /// Zklock did not get the lock: the detached holder says so to the
    /// foreground, which prints the message and exits with the status.
    fn gave_up(self, not_held: NotHeld) -> Result<ExitStatus> {
        if let Then::Report { reporter, .. } = self {
            let (code, cause, message) = not_held.report();
            reporter.failed(code, cause, &message);
        }
        not_held.into_status()
    }
}

/// Why the lock is not ours.
enum NotHeld {
    /// Zklock gave up waiting (conflict, timeout, signal): the exit status,
    /// and the message people see (empty when there is nothing to say, as
    /// after a signal). Our nodes are deleted.
    GaveUp { status: ExitStatus, message: String },
    /// The wait failed (no connection, no permission, ...).
    Failed(anyhow::Error),
}

impl NotHeld {
    /// The exit code, the cause and the message, as the detached holder
    /// reports them.
    fn report(&self) -> (u8, &'static str, String) {
        match self {
            NotHeld::GaveUp { status, message } => {
                (status.code(), exit::NOT_ACQUIRED, message.clone())
            }
            NotHeld::Failed(err) => (
                exit::status_of_error(err).code(),
                exit::cause_for(err),
                format!("{err:#}"),
            ),
        }
    }

    fn into_status(self) -> Result<ExitStatus> {
        match self {
            NotHeld::GaveUp { status, .. } => Ok(status),
            NotHeld::Failed(err) => Err(err),
        }
    }
}

/// A failure on the way to the lock.
fn failed(err: impl Into<anyhow::Error>) -> NotHeld {
    NotHeld::Failed(err.into())
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
        (HolderWord::Failed(code, cause, message), None) => {
            if !message.is_empty() {
                output::print_error(globals.printer.format, &message, code, &cause);
            }
            Ok(ExitStatus::Child(code))
        }
    }
}

/// Connects, and waits in the queues `args` name, one lock after the other
/// in their canonical order, until every lock is ours; on every other path
/// the nodes made so far are deleted and the session closed. `-n` and `-w`
/// cover the whole set: one patience for every wait.
///
/// A zklock nested in an enclosing hold of ours (proven from its ancestry)
/// may not queue at all: an upgrade that can never be granted gives up at
/// once, and a request that hold covers re-enters it. `command_group` is
/// the process group the command will run in, for the owner record.
async fn take(
    globals: &Globals,
    args: &LockArgs,
    command_group: Option<libc::pid_t>,
    signals: &mut Signals,
) -> Result<HeldLock, NotHeld> {
    let connect_sent = Instant::now();
    let recorded = args
        .command()
        .map(|c| Owner::recorded_command(&c.argv, c.shell, args.record_command));
    // The owner record (the password database, the host name) and the
    // hints of enclosing holds (our ancestors' environments) are read while
    // the server answers the handshake, not before or after it. The yield
    // lets the runtime see the socket connected (it polls its sockets
    // before it resumes a task that yielded) and the connect, polled first,
    // send the handshake; a near server has the connection up at once, and
    // the record made before the handshake was sent would be in its way.
    let (session, (owner, hints)) = tokio::join!(biased; connect_writable(globals), async {
        tokio::task::yield_now().await;
        let owner = Owner::of_this_process(recorded, args.data.clone())
            .in_group(command_group)
            .with_deadline(args.timeout.filter(|_| !args.no_wait));
        (owner, nesting::hints())
    });
    let session = session.map_err(failed)?;
    let owner = owner.nested_in(nesting::proven(&session, hints).await);
    if let Some(hold) = args
        .each()
        .find_map(|one| upgrade_under(&one, &owner.nested_in))
    {
        session.close().await;
        let message = format!(
            "waiting would deadlock: this process runs under the read hold {hold}, and a \
             write lock of the same lock is never granted while that hold lasts"
        );
        globals.printer.note(&message);
        let status = ExitStatus::WouldDeadlock;
        return Err(NotHeld::GaveUp { status, message });
    }
    // Checked before the queue is entered: the command's run reads it again.
    if let Some(Err(err)) = args.command().map(|c| kill_after_for(&session, c)) {
        session.close().await;
        return Err(failed(err));
    }
    let evidence = LeaderEvidence::track(&session, connect_sent);
    let patience = Patience::new(args.no_wait, args.timeout);
    let ender = Ender::of_owner(&owner);
    let mut holds = Vec::new();
    for one in args.each() {
        match take_one(globals, &session, (&one, &owner, patience), signals).await {
            Ok(hold) => holds.push(hold),
            Err(not_held) => {
                lock::give_up(session, evidence, holds, ender).await;
                return Err(not_held);
            }
        }
    }
    let mut holds = holds.into_iter();
    let Some(first) = holds.next() else {
        lock::give_up(session, evidence, Vec::new(), ender).await;
        return Err(failed(anyhow::anyhow!("no lock was named")));
    };
    Ok(HeldLock::new(
        session,
        evidence,
        first,
        holds.collect(),
        ender,
    ))
}

/// Takes the one lock `args` name on `session` as `owner`: re-enters an
/// enclosing hold that covers it, or waits in its queue as `patience`
/// allows. Our node is deleted on every path that gives up.
async fn take_one(
    globals: &Globals,
    session: &Session,
    (args, owner, patience): (&LockArgs, &Owner, Patience),
    signals: &mut Signals,
) -> Result<Hold, NotHeld> {
    if let Some(held) = enclosing_hold(session, args, &owner.nested_in)
        .await
        .map_err(failed)?
    {
        tracing::info!(
            "re-entering {} under the enclosing hold {}",
            args.path,
            held.node
        );
        return Ok(Hold::reentered(held));
    }
    let spec = LockSpec {
        path: args.path.clone(),
        kind: args.kind,
        dialect: args.dialect,
        data: owner.to_bytes(),
        ttl: args.ttl(),
        ender: Ender::of_owner(owner),
    };
    // Only a nested zklock can close a cycle that it could prove certain;
    // a free lock costs no extra round trip.
    let cycles =
        (!owner.nested_in.is_empty()).then(|| stat::chains_under(&globals.root, &args.path));
    let mut acquisition = Acquisition::new(session, spec, args.max_leases);
    let waited = wait(
        session,
        &mut acquisition,
        (args, patience, cycles),
        &globals.printer,
        signals,
    )
    .await;
    let kept_watch = acquisition.take_own_watch();
    waited.map(|held| Hold::ours(held, kept_watch))
}

/// The read hold of ours that a write request of the same lock sits under
/// (an upgrade, never granted while that hold lasts), if any.
fn upgrade_under<'a>(args: &LockArgs, holds: &'a [String]) -> Option<&'a str> {
    if args.max_leases.is_some() {
        return None;
    }
    nesting::upgrade(&args.path, args.kind.mode(), holds)
}

/// Re-entry: the enclosing hold of ours that holds this lock now in a mode
/// that covers the request ([`nesting::reentry`]), or a lease of this
/// semaphore granted to an enclosing hold ([`enclosing_lease`]), for the
/// command to run under at once, with no node of its own; stopped if that
/// hold ends, and never released by us. `None` when there is no such hold
/// or no command.
async fn enclosing_hold(
    session: &Session,
    args: &LockArgs,
    holds: &[String],
) -> Result<Option<Held>, zk::Error> {
    if args.command().is_none() || holds.is_empty() {
        return Ok(None);
    }
    let node = match args.max_leases {
        Some(_) => enclosing_lease(session, &args.path, holds).await,
        None => {
            let children = session.children(&args.path).await.unwrap_or_default();
            let queue = LockQueue::from_children(children);
            nesting::reentry(&args.path, args.kind.mode(), holds, &queue).map(str::to_owned)
        }
    };
    let Some(node) = node else {
        return Ok(None);
    };
    Ok(session.stat(&node).await?.map(|stat| Held {
        lock: args.path.clone(),
        fence: stat.czxid,
        node,
    }))
}

/// The lease of the semaphore at `path` that an enclosing hold of ours
/// holds now, granted (not one still pending): a lease covers a lease of
/// the same semaphore, as an exclusive hold covers an exclusive request.
async fn enclosing_lease(session: &Session, path: &str, holds: &[String]) -> Option<String> {
    let semaphore = model::read_lock(session, path).await.ok()??;
    semaphore
        .holders
        .into_iter()
        .map(|lease| lease.path)
        .find(|lease| holds.contains(lease))
}

/// What a held lock is, for whoever releases or fences with it.
fn grant_of(lock: &HeldLock) -> Grant {
    let held = lock.held();
    Grant {
        token: held.node.clone(),
        lock: held.lock.clone(),
        fence: held.fence,
        session: zk::format_session(lock.session().id()),
    }
}

/// The token on a line of its own, or with `-o json` the whole grant.
fn print_grant(printer: &Printer, grant: &Grant) -> Result<()> {
    match printer.format {
        Format::Json => printer.json_line(grant),
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

    /// Each lock asked for, in canonical order, as if it alone were.
    fn each(&self) -> impl Iterator<Item = LockArgs> + '_ {
        std::iter::once(&self.path)
            .chain(&self.others)
            .map(|path| LockArgs {
                path: path.clone(),
                others: Vec::new(),
                ..self.clone()
            })
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

/// How the wait for the lock ended.
enum Wait {
    Done(Result<Outcome, AcquireError>),
    Signal(i32),
    /// A certain cycle runs through our wait; the release that breaks it.
    Cycle(String),
}

/// Waits for the lock, or a signal, keeping a spinner (at a terminal) told
/// who holds and how many wait. Our nodes are deleted on every path that
/// gives up.
///
/// With `cycles` (a nested zklock), each time the queue ahead changes it
/// also looks for a certain wait-for cycle under that path running through
/// our wait, and gives up with exit 7 when there is one.
async fn wait(
    session: &Session,
    acquisition: &mut Acquisition<'_>,
    (args, patience, cycles): (&LockArgs, Patience, Option<&str>),
    printer: &Printer,
    signals: &mut Signals,
) -> Result<Held, NotHeld> {
    run::refuse_ctrl_z();
    let spinner = printer.spinner(&format!("waiting for {}", args.path), args.timeout);
    let woke = tokio::sync::Notify::new();
    let wait = tokio::select! {
        outcome = queue(session, acquisition, args, patience, (spinner.as_ref(), &woke)) => Wait::Done(outcome),
        signal = signals.next() => Wait::Signal(signal),
        cycle = deadlocks::certain_cycle(session, cycles, &woke) => Wait::Cycle(cycle),
    };
    if let Some(spinner) = spinner {
        spinner.finish();
    }
    match wait {
        Wait::Done(Ok(Outcome::Acquired(held))) => Ok(held),
        Wait::Done(Ok(Outcome::NotAcquired)) => {
            let holders = who_holds(session, &args.path).await;
            acquisition.abandon().await.map_err(failed)?;
            let message = not_acquired(args, &holders);
            printer.note(&message);
            Err(NotHeld::GaveUp {
                status: ExitStatus::NotAcquired(args.conflict_exit_code),
                message,
            })
        }
        Wait::Done(Err(err)) => {
            if let Err(cleanup) = acquisition.abandon().await {
                tracing::warn!("could not remove our node: {cleanup}");
            }
            let lost_session = err.failure() == zk::Failure::Unreachable;
            let err = anyhow::Error::from(err);
            Err(failed(if lost_session {
                err.context(format!(
                    "the session was lost before {} was acquired",
                    args.path
                ))
            } else {
                err
            }))
        }
        Wait::Cycle(cycle) => {
            acquisition.abandon().await.map_err(failed)?;
            let message = format!(
                "waiting for {} would deadlock: a certain wait-for cycle runs through this \
                 wait (it would be broken by: {cycle})",
                args.path
            );
            printer.note(&message);
            Err(NotHeld::GaveUp {
                status: ExitStatus::WouldDeadlock,
                message,
            })
        }
        Wait::Signal(signal) => {
            acquisition.abandon().await.map_err(failed)?;
            Err(NotHeld::GaveUp {
                status: ExitStatus::Interrupted(signal),
                message: String::new(),
            })
        }
    }
}

/// Queues as `patience` allows, keeping `spinner` (when there is one) told
/// who holds and how many wait, and telling `woke` of every change ahead.
async fn queue(
    session: &Session,
    acquisition: &mut Acquisition<'_>,
    args: &LockArgs,
    patience: Patience,
    (spinner, woke): (Option<&Spinner>, &tokio::sync::Notify),
) -> Result<Outcome, AcquireError> {
    let path = args.path.as_str();
    // A semaphore's holders and queue are the model's to read, once per
    // change, and only for a spinner.
    let leases_changed = tokio::sync::Notify::new();
    let on_change = |change: QueueChange<'_>| {
        woke.notify_one();
        match (change, spinner) {
            (QueueChange::Lock(waiting), Some(spinner)) => {
                spinner.set(describe_wait(path, waiting));
            }
            (QueueChange::Semaphore, Some(_)) => leases_changed.notify_one(),
            (_, None) => {}
        }
    };
    let acquire = acquisition.acquire(patience, spinner.is_some(), on_change);
    let refresh = async {
        while let (Some(spinner), Some(max_leases)) = (spinner, args.max_leases) {
            leases_changed.notified().await;
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
            "timed out after {} waiting for {}: {what} by {held_by}",
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
    let since = output::format_local_ms(ctime_ms);
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

/// Prints the token and holds until a signal (at a terminal, saying so).
async fn hold_at_terminal(
    lock: &HeldLock,
    printer: &Printer,
    signals: &mut Signals,
) -> Result<ExitStatus> {
    printer.line(&lock.held().node)?;
    hint_how_to_release(printer, &lock.held().lock);
    Ok(hold_until(lock, printer, signals, Detached::default()).await)
}

/// Holds the lock until a signal, the lease's end, or the end of the process
/// it is tied to (each a normal release, exit 0), or until the lock is lost
/// (exit 4).
async fn hold_until(
    lock: &HeldLock,
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
    let node = &lock.held().node;
    tokio::select! {
        signal = signals.next() => tracing::info!("signal {signal}: releasing {node}"),
        () = lease => tracing::info!("lease over: releasing {node}"),
        () = tied => tracing::info!("the process we were tied to ended: releasing {node}"),
        (held, loss) = lock.lost(Duration::ZERO) => return report_loss(printer, held, &loss, false),
    }
    ExitStatus::Success
}

/// Runs the command under the lock, behind `guard`; stops it if the lock
/// is lost.
async fn run_command(
    lock: &HeldLock,
    command: &LockedCommand,
    guard: Standby,
    printer: &Printer,
    signals: &mut Signals,
) -> Result<ExitStatus> {
    let held = lock.held();
    let kill_after = kill_after_for(lock.session(), command)?;
    let spec = CommandSpec {
        argv: command.argv.clone(),
        shell: command.shell,
        env: command_environment(lock),
        kill_signal: command.kill_signal,
        kill_after,
        max_hold: command.max_hold,
    };
    Ok(
        match run::supervise(guard, &spec, signals, lock.lost(kill_after)).await? {
            Ending::Exited(code) => ExitStatus::Child(code),
            Ending::Stopped((lost, loss)) => report_loss(printer, lost, &loss, true),
            Ending::OutOfTime(code) => report_max_hold(printer, held, command, code),
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

/// What the command finds in its environment: the first lock (in
/// canonical order) in the single-lock variables, every lock in the
/// plural ones (newline-separated, in that order), and the holds a zklock
/// it starts is nested in.
fn command_environment(lock: &HeldLock) -> Vec<(String, String)> {
    let held = lock.held();
    let every =
        |field: fn(&Held) -> String| lock.all_held().map(field).collect::<Vec<_>>().join("\n");
    let nodes: Vec<&str> = lock.all_held().map(|held| held.node.as_str()).collect();
    vec![
        ("ZKLOCK_LOCK".into(), held.lock.clone()),
        ("ZKLOCK_NODE".into(), held.node.clone()),
        ("ZKLOCK_FENCE".into(), held.fence.to_string()),
        ("ZKLOCK_LOCKS".into(), every(|held| held.lock.clone())),
        ("ZKLOCK_NODES".into(), every(|held| held.node.clone())),
        ("ZKLOCK_FENCES".into(), every(|held| held.fence.to_string())),
        (
            "ZKLOCK_SESSION".into(),
            zk::format_session(lock.session().id()),
        ),
        (nesting::HELD.into(), nesting::held_for_command(&nodes)),
    ]
}

/// The command ran its `--max-hold` out and was stopped: 124, or its own
/// status (`code`) under `--preserve-status`.
fn report_max_hold(
    printer: &Printer,
    held: &Held,
    command: &LockedCommand,
    code: u8,
) -> ExitStatus {
    let status = ExitStatus::MaxHold(command.preserve_status.then_some(code));
    let max_hold = command.max_hold.unwrap_or_default();
    let message = format!(
        "the command ran its --max-hold of {} under {} and was stopped (its status: {code})",
        humantime::format_duration(max_hold),
        held.lock
    );
    output::print_error(printer.format, &message, status.code(), exit::MAX_HOLD);
    status
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
