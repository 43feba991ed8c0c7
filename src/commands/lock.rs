//! `zklock lock|rlock|wlock LOCK [-- COMMAND...]`: take a lock, run a command
//! under it or hold it until a signal, and let it go.

use std::time::Duration;

use anyhow::Result;

use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::lock::hold::{self, Loss};
use crate::lock::{Contention, Dialect, Held, Kind, LockSpec, Outcome, Owner, Patience, Waiting};
use crate::output::{self, Printer};
use crate::run::{self, CommandSpec, Ending, Signals};
use crate::zk::{self, Session};

/// What `lock`, `rlock` and `wlock` were asked for.
#[derive(Clone, Debug)]
pub struct LockArgs {
    /// The lock directory.
    pub path: String,
    pub kind: Kind,
    pub dialect: Dialect,
    pub no_wait: bool,
    pub timeout: Option<Duration>,
    /// The exit code when the lock is not acquired (`-E`).
    pub conflict_exit_code: u8,
    pub data: Option<String>,
    /// The command to run under the lock; empty to hold until a signal.
    pub command: Vec<String>,
    pub shell: bool,
    pub kill_signal: i32,
    pub kill_after: Duration,
}

/// Acquires the lock, then runs the command or holds until a signal, then
/// releases. Every path that gives up deletes our contender node.
pub async fn run(globals: &Globals, args: LockArgs) -> Result<ExitStatus> {
    let mut signals = Signals::catch()?;
    let session = connect_writable(globals).await?;
    let owner = Owner::of_this_process(
        (!args.command.is_empty()).then(|| args.command.clone()),
        args.data.clone(),
    );
    let spec = LockSpec {
        path: args.path.clone(),
        kind: args.kind,
        dialect: args.dialect,
        data: owner.to_bytes(),
    };
    let held = match acquire(&session, spec, &args, &globals.printer, &mut signals).await {
        Ok(Ok(held)) => held,
        Ok(Err(status)) => {
            session.close().await;
            return Ok(status);
        }
        Err(err) => {
            session.close().await;
            return Err(err);
        }
    };
    tracing::info!("acquired {} (fence {})", held.node, held.fence);
    let status = if args.command.is_empty() {
        hold_until_signal(&session, &held, &globals.printer, &mut signals).await?
    } else {
        run_command(&session, &held, &args, &globals.printer, &mut signals).await?
    };
    hold::release(session, &held).await?;
    Ok(status)
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
    Done(Result<Outcome, crate::lock::AcquireError>),
    Signal(i32),
}

/// Waits for the lock. The inner `Err` is the exit status when we gave up
/// (conflict, timeout, signal); our node is deleted on each such path.
async fn acquire(
    session: &Session,
    spec: LockSpec,
    args: &LockArgs,
    printer: &Printer,
    signals: &mut Signals,
) -> Result<Result<Held, ExitStatus>> {
    let mut contention = Contention::new(session, spec);
    let spinner = printer.spinner(&format!("waiting for {}", args.path));
    let patience = Patience::new(args.no_wait, args.timeout);
    let update = |waiting: &Waiting| {
        if let Some(spinner) = &spinner {
            spinner.set(describe_wait(&args.path, waiting));
        }
    };
    let wait = tokio::select! {
        outcome = contention.acquire(patience, spinner.is_some(), update) => Wait::Done(outcome),
        signal = signals.next() => Wait::Signal(signal),
    };
    if let Some(spinner) = spinner {
        spinner.finish();
    }
    match wait {
        Wait::Done(Ok(Outcome::Acquired(held))) => Ok(Ok(held)),
        Wait::Done(Ok(Outcome::NotAcquired)) => {
            contention.abandon().await?;
            printer.note(&match args.timeout {
                Some(timeout) if !args.no_wait => format!(
                    "timed out after {} waiting for {}",
                    humantime::format_duration(timeout),
                    args.path
                ),
                _ => format!("{} is held by another contender", args.path),
            });
            Ok(Err(ExitStatus::NotAcquired(args.conflict_exit_code)))
        }
        Wait::Done(Err(err)) => {
            if let Err(cleanup) = contention.abandon().await {
                tracing::warn!("could not remove our node: {cleanup}");
            }
            Err(err.into())
        }
        Wait::Signal(signal) => {
            contention.abandon().await?;
            Ok(Err(ExitStatus::Interrupted(signal)))
        }
    }
}

/// The spinner's line: who holds the lock, since when, and our place.
fn describe_wait(lock: &str, waiting: &Waiting) -> String {
    let holder = &waiting.holder;
    let who = match &waiting.holder_data {
        Some((data, stat)) => {
            let owner = match Owner::parse(data) {
                Some(owner) => match &owner.data {
                    Some(text) => format!("{} {text:?}", owner.summary()),
                    None => owner.summary(),
                },
                None => output::data_text(data)
                    .unwrap_or_else(|| zk::format_session(stat.ephemeral_owner)),
            };
            let since = output::format_time_ms(stat.ctime);
            format!("{owner} ({}) since {}", holder.dialect, &since[11..19])
        }
        None => holder.name.clone(),
    };
    format!("waiting for {lock}: held by {who}, {} ahead", waiting.ahead)
}

/// Without a command: print the token, hold until a signal or until the lock
/// is lost.
async fn hold_until_signal(
    session: &Session,
    held: &Held,
    printer: &Printer,
    signals: &mut Signals,
) -> Result<ExitStatus> {
    printer.line(&held.node)?;
    tokio::select! {
        signal = signals.next() => {
            tracing::info!("signal {signal}: releasing {}", held.node);
            Ok(ExitStatus::Success)
        }
        loss = hold::lost(session, held) => Ok(report_loss(printer, held, &loss, false)),
    }
}

/// With a command: run it under the lock; stop it if the lock is lost.
async fn run_command(
    session: &Session,
    held: &Held,
    args: &LockArgs,
    printer: &Printer,
    signals: &mut Signals,
) -> Result<ExitStatus> {
    let spec = CommandSpec {
        argv: args.command.clone(),
        shell: args.shell,
        env: vec![
            ("ZKLOCK_LOCK".into(), held.lock.clone()),
            ("ZKLOCK_NODE".into(), held.node.clone()),
            ("ZKLOCK_FENCE".into(), held.fence.to_string()),
            ("ZKLOCK_SESSION".into(), zk::format_session(session.id())),
        ],
        kill_signal: args.kill_signal,
        kill_after: args.kill_after,
    };
    Ok(
        match run::supervise(&spec, signals, hold::lost(session, held)).await? {
            Ending::Exited(code) => ExitStatus::Child(code),
            Ending::Stopped(loss) => report_loss(printer, held, &loss, true),
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
