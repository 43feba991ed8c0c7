//! `zklock lock|rlock|wlock LOCK [-- COMMAND...]` and `zklock sem LOCK
//! --max-leases N [-- COMMAND...]`: take a lock or a semaphore's lease, run a
//! command under it or hold it until a signal, and let it go. Only the wait
//! differs between the two; holding and letting go are the same.

use std::io::IsTerminal;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::config::Globals;
use crate::exit::{self, ExitStatus};
use crate::lock::delay::Delayed;
use crate::lock::end::{EndHow, Ender, Ran};
use crate::lock::nesting;
use crate::lock::once::{OncePer, Window};
use crate::lock::{
    self, ContenderKind, Detachment, Dialect, Event, Held, HeldLock, Loss, NotTaken, Owner,
    Reentry, Request, Waiting,
};
use crate::model::{self, Lock};
use crate::output::{self, Format, LinePart, Printer, Spinner};
use crate::run::detach::{self, Grant, HolderWord, Reporter};
use crate::run::guard::Standby;
use crate::run::{self, CommandSpec, Ending, Signals};
use crate::usage::UsageError;
use crate::zk;

use super::release_command;

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
    /// `--lock-delay`: after a hold that ended uncleanly, wait this long
    /// from its end before the lock is handed over.
    pub lock_delay: Option<Duration>,
    /// What to do once the lock is ours.
    pub holding: Holding,
    /// `--once-per`: run the command only when no run counted within the
    /// window.
    pub once_per: Option<OncePer>,
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
    let run = match args.once_per {
        None => None,
        Some(once) => match within_window(globals, &args, &lock, once).await {
            Ok(Some(run)) => Some(run),
            Ok(None) => {
                lock.release(EndHow::Released).await?;
                return Ok(ExitStatus::NotAcquired(args.conflict_exit_code));
            }
            Err(err) => {
                lock.release(EndHow::Released).await?;
                return Err(err.into());
            }
        },
    };
    then.hold(globals, lock, &mut signals, run).await
}

/// Under `--once-per`, the run the command starts now, or `None` when the
/// window is closed (said why, as a lock found taken is).
async fn within_window(
    globals: &Globals,
    args: &LockArgs,
    lock: &HeldLock,
    once: OncePer,
) -> Result<Option<Ran>, lock::AcquireError> {
    let dir = &lock.held().lock;
    match lock::once::open(lock, once, &Ender::of_this_process()).await? {
        Window::Open {
            run, disbelieved, ..
        } => {
            if let Some(future) = disbelieved {
                say_not_believed(&globals.printer, dir, &future, &run);
            }
            Ok(Some(run))
        }
        Window::Closed {
            last,
            opens_at_ms,
            now_ms,
        } => {
            let window = (once.per, opens_at_ms, now_ms);
            say_ran_recently(&globals.printer, args, dir, &last, window);
            Ok(None)
        }
    }
}

/// Says that the command ran within the window `per`: how long ago (on the
/// server's clock, which read `now_ms`), by whom, and when the window opens
/// again. That is what every host but one finds each time a fleet's cron
/// line fires, and the exit code tells it: off a terminal it goes only to
/// the `-v` log (and to stderr with `-o json`, whose reader asked for the
/// document), so that cron mails nobody.
fn say_ran_recently(
    printer: &Printer,
    args: &LockArgs,
    lock: &str,
    last: &Ran,
    (per, opens_at_ms, now_ms): (Duration, i64, i64),
) {
    let status = ExitStatus::NotAcquired(args.conflict_exit_code);
    // A run recorded ahead of the server's clock (a leader's that lags the
    // last one's) is believed up to the window's length ahead.
    let ran = match from_now(last.at_ms, now_ms) {
        ahead if last.at_ms > now_ms => format!("{ahead} (ahead of the server's clock)"),
        ago => ago,
    };
    let message = format!(
        "{lock} ran {ran} by {}; its --once-per {} window opens {}",
        last.by.summary(),
        humantime::format_duration(per),
        from_now(opens_at_ms, now_ms),
    );
    tracing::info!(
        event = "ran_recently",
        lock,
        ran_at_ms = last.at_ms,
        window_opens_at_ms = opens_at_ms,
        "{}",
        output::inert(&message)
    );
    let details = serde_json::json!({
        "ran_at_ms": last.at_ms,
        "ran_by": last.by,
        "window_opens_at_ms": opens_at_ms,
    });
    match printer.format {
        Format::Json => output::print_error_with(
            Format::Json,
            &message,
            status.code(),
            exit::RAN_RECENTLY,
            details,
        ),
        Format::Table if std::io::stderr().is_terminal() => printer.note(&message),
        Format::Table => {}
    }
}

/// The moment `at_ms` said from `now_ms` (both on the server's clock), to
/// the second: "3m 12s ago", "in 52m 48s".
fn from_now(at_ms: i64, now_ms: i64) -> String {
    let seconds = |ms: i64| Duration::from_secs(ms.unsigned_abs() / 1000);
    match at_ms.checked_sub(now_ms) {
        Some(ahead) if ahead >= 0 => {
            format!("in {}", humantime::format_duration(seconds(ahead)))
        }
        Some(behind) => format!("{} ago", humantime::format_duration(seconds(behind))),
        None => format!("at {}", output::format_local_ms(at_ms)),
    }
}

/// Says that the run the directory recorded, `future`, starts more than
/// the window ahead of the server's clock (`run` starts now), so it was not
/// believed and the command runs: a forged record, or a leader's clock that
/// jumped. Not an outcome anyone expects, so it is said wherever stderr
/// goes, as well as in the `-v` log.
fn say_not_believed(printer: &Printer, lock: &str, future: &Ran, run: &Ran) {
    let message = format!(
        "{lock} records a --once-per run at {} by {}, more than the window ({}) ahead of the \
         server's clock ({}): not believed (a forged record, or a leader's clock that jumped); \
         the command runs",
        output::format_local_ms(future.at_ms),
        future.by.summary(),
        humantime::format_duration(Duration::from_millis(run.per_ms)),
        output::format_local_ms(run.at_ms),
    );
    tracing::warn!(
        event = "future_run_ignored",
        lock,
        ran_at_ms = future.at_ms,
        server_now_ms = run.at_ms,
        "{}",
        output::inert(&message)
    );
    printer.note(&message);
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
    /// Under `--once-per`, `run` is the run starting now, counted once it
    /// succeeds.
    async fn hold(
        self,
        globals: &Globals,
        lock: HeldLock,
        signals: &mut Signals,
        run: Option<Ran>,
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
        if matches!(status, Ok(ExitStatus::Child(0))) && run.is_some() {
            lock.keep_last_run(run);
        }
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
    /// its cause, and the message people see (empty when there is nothing
    /// to say, as after a signal). Our nodes are deleted.
    GaveUp {
        status: ExitStatus,
        cause: &'static str,
        message: String,
    },
    /// The wait failed (no connection, no permission, ...).
    Failed(anyhow::Error),
}

impl NotHeld {
    /// The exit code, the cause and the message, as the detached holder
    /// reports them.
    fn report(&self) -> (u8, &'static str, String) {
        match self {
            NotHeld::GaveUp {
                status,
                cause,
                message,
            } => (status.code(), cause, message.clone()),
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

/// The foreground of `--detach`: start the holder, print its token.
async fn detach(globals: &Globals, until: Detached, signals: &mut Signals) -> Result<ExitStatus> {
    if let Some(pid) = until.while_pid
        && !detach::process_exists(pid)
    {
        return Err(UsageError::new(format!("--while-pid {pid}: no such process")).into());
    }
    let (word, interrupted) = detach::spawn_holder(signals, &globals.connect.secured).await?;
    match (word, interrupted) {
        (_, Some(signal)) => Ok(ExitStatus::on_signal(signal)),
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

/// Takes the locks `args` name ([`lock::take()`]), showing the wait as a
/// spinner at a terminal, and says why not when they are not ours.
/// `command_group` is the process group the command will run in, for the
/// owner record.
async fn take(
    globals: &Globals,
    args: &LockArgs,
    command_group: Option<libc::pid_t>,
    signals: &mut Signals,
) -> Result<HeldLock, NotHeld> {
    let request = args.request(globals, command_group);
    let spinner = std::cell::RefCell::new(None);
    let shown = |event: Event<'_>| show(&globals.printer, args, &spinner, event);
    let taken = lock::take(&globals.connect, &request, &shown, signals).await;
    taken.map_err(|not_taken| not_held(&globals.printer, args, not_taken))
}

/// Shows how the taking goes: a spinner for each wait, told who holds and
/// how many wait.
fn show(
    printer: &Printer,
    args: &LockArgs,
    spinner: &std::cell::RefCell<Option<Spinner>>,
    event: Event<'_>,
) {
    let mut spinner = spinner.borrow_mut();
    match (event, spinner.as_ref()) {
        (Event::Queued(lock), _) => {
            *spinner = printer.spinner(&format!("waiting for {lock}"), args.timeout);
        }
        (Event::Waiting(lock, waiting), Some(line)) => line.set_parts(describe_wait(lock, waiting)),
        (Event::Leases(semaphore, max_leases), Some(line)) => {
            line.set_parts(describe_lease_wait(semaphore, max_leases));
        }
        (Event::Delaying(delayed), _) => {
            let message = format!(
                "lock-delay: {}; holding it {} before going on",
                delayed.why(),
                humantime::format_duration(delayed.left)
            );
            *spinner = printer.spinner(&message, Some(delayed.left));
        }
        (Event::Waited, _) => *spinner = None,
        (Event::Reentered(held), _) => tracing::info!(
            "re-entering {} under the enclosing hold {}",
            held.lock,
            held.node
        ),
        (Event::Waiting(..) | Event::Leases(..), None) => {}
    }
}

/// Why the locks are not ours, for people: the exit status and the message
/// (printed as a note, and handed to the foreground by a detached holder).
fn not_held(printer: &Printer, args: &LockArgs, not_taken: NotTaken) -> NotHeld {
    let (status, message) = match not_taken {
        NotTaken::Failed(err) => return NotHeld::Failed(err),
        NotTaken::Delayed(delayed) => {
            let status = ExitStatus::NotAcquired(args.conflict_exit_code);
            let message = lock_delay_pending(args, &delayed);
            let details = serde_json::json!({
                "lock": delayed.lock,
                "left_ms": u64::try_from(delayed.left.as_millis()).unwrap_or(u64::MAX),
                "last_end": if delayed.unknown { "unknown" } else { "unclean" },
            });
            match printer.format {
                Format::Json => output::print_error_with(
                    Format::Json,
                    &message,
                    status.code(),
                    exit::LOCK_DELAY,
                    details,
                ),
                Format::Table => printer.note(&message),
            }
            return NotHeld::GaveUp {
                status,
                cause: exit::LOCK_DELAY,
                message,
            };
        }
        NotTaken::Lost { held, loss } => {
            let status = report_loss(printer, &held, &loss, false);
            return NotHeld::GaveUp {
                status,
                cause: "other",
                message: format!("lock {} lost: {loss}", held.lock),
            };
        }
        NotTaken::Interrupted(signal) => (ExitStatus::on_signal(signal), String::new()),
        NotTaken::Conflict { lock, holders } => (
            ExitStatus::NotAcquired(args.conflict_exit_code),
            not_acquired(args, &lock, &holders),
        ),
        NotTaken::Upgrade { hold } => (
            ExitStatus::WouldDeadlock,
            format!(
                "waiting would deadlock: this process runs under the read hold {hold}, and a \
                 write lock of the same lock is never granted while that hold lasts"
            ),
        ),
        NotTaken::Unguarded { lock, hold } => (
            ExitStatus::WouldDeadlock,
            format!(
                "cannot take {lock} under the enclosing hold {hold}: this process descends from \
                 that hold's command but left its process group (setsid, setpgid: job control, \
                 `bash -m`, `script`, `timeout` without --foreground, sudo with use_pty) or runs \
                 as another user, so the hold could end while it runs, and waiting would \
                 deadlock on its own ancestor; keep it in the command's process group \
                 (`timeout --foreground`, sudo without use_pty), or take the lock inside the \
                 privileged command"
            ),
        ),
        NotTaken::Cycle { lock, break_with } => (
            ExitStatus::WouldDeadlock,
            format!(
                "waiting for {lock} would deadlock: a certain wait-for cycle runs through this \
                 wait (it would be broken by: {})",
                release_command(&break_with)
            ),
        ),
    };
    if !message.is_empty() {
        say_why_not(printer, &message, status, exit::NOT_ACQUIRED);
    }
    NotHeld::GaveUp {
        status,
        cause: exit::NOT_ACQUIRED,
        message,
    }
}

/// Why a lock that was free is not ours: `-n` or `-w` leaves no time for
/// the lock-delay an earlier hold's unclean or unknown end asks for.
fn lock_delay_pending(args: &LockArgs, delayed: &Delayed) -> String {
    let why = delayed.why();
    let left = humantime::format_duration(delayed.left);
    match args.timeout {
        Some(timeout) if !args.no_wait => format!(
            "{why}, and its --lock-delay ({left} more) would outlast the --timeout of {}",
            humantime::format_duration(timeout)
        ),
        _ => format!("{why}: {left} of its --lock-delay is left"),
    }
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

    /// What [`lock::take()`] is asked for: the locks in canonical order; a
    /// command re-enters an enclosing hold that covers it, and runs in
    /// `command_group`.
    fn request(&self, globals: &Globals, command_group: Option<libc::pid_t>) -> Request {
        let reentry = match (self.command(), command_group) {
            (Some(command), Some(group)) => Reentry::Run {
                group,
                kill_after: command.kill_after,
            },
            _ => Reentry::Queue,
        };
        let recorded = self
            .command()
            .map(|c| Owner::recorded_command(&c.argv, c.shell, self.record_command));
        Request {
            locks: std::iter::once(&self.path)
                .chain(&self.others)
                .cloned()
                .collect(),
            kind: self.kind,
            max_leases: self.max_leases,
            dialect: self.dialect,
            no_wait: self.no_wait,
            timeout: self.timeout,
            recorded: (recorded, self.data.clone()),
            reentry,
            detached: match self.holding {
                Holding::DetachedHolder { until, .. } => {
                    Some(Detachment::of_this_holder(until.lease, until.while_pid))
                }
                _ => None,
            },
            ttl: match self.holding {
                Holding::Ttl(ttl) => Some(ttl),
                _ => None,
            },
            root: globals.root.clone(),
            details: globals.printer.shows_live_line(),
            keeps_last_run: self.once_per.is_some(),
            lock_delay: self.lock_delay,
        }
    }
}

/// Says why zklock gave up on the lock: a note for people, or with `-o
/// json` the JSON error document on stderr that a script reads its cause
/// from, as the detached holder reports it.
fn say_why_not(printer: &Printer, message: &str, status: ExitStatus, cause: &str) {
    match printer.format {
        Format::Json => output::print_error(Format::Json, message, status.code(), cause),
        Format::Table => printer.note(message),
    }
}

/// Why the lock at `lock` is not ours, for people (and the logs of
/// scripts): which wait ended, and who holds the lock (every lease, for a
/// semaphore).
fn not_acquired(args: &LockArgs, lock: &str, holders: &[model::Contender]) -> String {
    let held_by = match holders {
        [] => "another contender".to_owned(),
        holders => holders
            .iter()
            .map(describe_contender)
            .collect::<Vec<_>>()
            .join(", "),
    };
    let what = match args.max_leases {
        Some(1) => format!("the one lease of {lock} is taken"),
        Some(max) => format!("all {max} leases of {lock} are taken"),
        None => format!("{lock} is held"),
    };
    match args.timeout {
        Some(timeout) if !args.no_wait => format!(
            "timed out after {} waiting for {lock}: {what} by {held_by}",
            humantime::format_duration(timeout),
        ),
        _ => format!("{what} by {held_by}"),
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

/// The spinner's line, most useful first (a narrow terminal leaves out
/// the last parts whole): who holds the lock and for how long, the lock,
/// our place, the holder's library.
fn describe_wait(lock: &str, waiting: &Waiting) -> Vec<LinePart> {
    let holder = &waiting.holder;
    let held_by = match &waiting.holder_data {
        Some((data, stat)) => {
            let owner = model::owner_text(holder.dialect, data, stat.ephemeral_owner);
            LinePart::aged(format!("held by {owner}"), stat.ctime)
        }
        None => LinePart::text(format!("held by {}", holder.name)),
    };
    vec![
        held_by,
        LinePart::text(format!("waiting for {lock}")),
        LinePart::text(format!("{} ahead", waiting.ahead)),
        LinePart::text(holder.dialect.to_string()),
    ]
}

/// The spinner's line for a semaphore, most useful first: how many leases
/// are taken, how many acquirers wait (us among them), the semaphore, and
/// by whom.
fn describe_lease_wait(semaphore: &Lock, max_leases: u32) -> Vec<LinePart> {
    let holders: Vec<String> = semaphore.holders.iter().map(describe_contender).collect();
    vec![
        LinePart::text(format!(
            "{} of {}",
            holders.len(),
            output::counted(max_leases, "lease taken", "leases taken"),
        )),
        LinePart::text(format!("{} waiting", semaphore.waiters.len())),
        LinePart::text(format!("waiting for {}", semaphore.path)),
        LinePart::text(format!("by {}", holders.join(", "))),
    ]
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
    let kill_after = lock::kill_after_for(lock.session(), command.kill_after)?;
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
            Ending::Exited(status) => ExitStatus::of_command(status),
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
        (
            "ZKLOCK_LOCK_DELAYED".into(),
            lock.delayed().as_millis().to_string(),
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
