//! `zklock exporter [PATH] --listen ADDR`: a long-running process that
//! serves the metrics of the locks under PATH over HTTP for Prometheus.
//!
//! Five tasks share one [`State`]: the live watch ([`LockWatch`]) feeds it
//! each change as it comes; the session survey and the wait-for cycle
//! search refresh it on one interval (no watch reports who is connected,
//! and a cycle needs every lock read at once and read again after a
//! `sync`, as `deadlocks` does); once a second the figures are
//! rendered into the documents a scrape is served; and the HTTP server
//! hands those out. The exporter only reads: it never writes to ZooKeeper,
//! so any number can watch the same tree. A connection loss or an expired
//! session is the watch's to recover from (it reads everything again); a
//! watch that fails for good is started again, with backoff, and the last
//! known figures are served meanwhile, `zklock_exporter_connected` 0 and
//! `zklock_exporter_last_update_seconds` standing still. Whoever can reach
//! the port is served within bounds ([`crate::serve`]), so no client can
//! starve the scrapes or the watch.

mod http;
mod state;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};

use crate::clock;
use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::model::cycles::{self, CycleCounts, wait_graph};
use crate::model::is_absent;
use crate::run::Signals;
use crate::serve::{self, Limits};
use crate::watch::LockWatch;
use crate::zk::sessions::Ask;
use crate::zk::{self, ConnectOptions};

use http::Published;
use state::State;

/// What `exporter` was asked for.
#[derive(Clone, Debug)]
pub struct ExporterArgs {
    /// The path whose locks are exported.
    pub path: String,
    /// The address to serve HTTP on.
    pub listen: SocketAddr,
    /// The most locks with series of their own.
    pub max_locks: usize,
    /// How often the ensemble is asked who is connected, and the locks
    /// searched for wait-for cycles.
    pub survey_interval: Duration,
}

/// How often the figures are rendered for scrapes.
const RENDER_INTERVAL: Duration = Duration::from_secs(1);

/// The longest wait before starting a failed watch again.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Serves the metrics until SIGTERM or SIGINT, then closes the session and
/// exits 0.
pub(crate) async fn run(globals: &Globals, args: ExporterArgs) -> Result<ExitStatus> {
    let mut signals = Signals::catch()?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    globals.printer.note(&format!(
        "serving the locks under {} at http://{}/metrics",
        args.path, args.listen
    ));
    let limits = Limits::for_this_process();
    if limits.connections < serve::MAX_CONNECTIONS {
        globals.printer.note(&format!(
            "the descriptor limit (ulimit -n) allows {} HTTP connections at once",
            limits.connections
        ));
    }
    let state = Arc::new(Mutex::new(State::new(args.max_locks)));
    let published = Arc::new(Mutex::new(Published::default()));
    publish(&state, &published);
    // Never writes, so a server in read-only mode (a minority cut off from
    // its quorum) may serve it too.
    let mut connect = globals.connect.clone();
    connect.read_only = true;
    // Who is asked who is connected: the members as each new watch's
    // session reads them; nobody before the first.
    let (members, mut surveyor) = tokio::sync::watch::channel(None);
    let follow = async {
        let mut backoff = Duration::from_secs(1);
        loop {
            let started =
                LockWatch::start(connect.clone(), &globals.admin_ports, args.path.clone());
            tokio::pin!(started);
            let (mut watch, first) = tokio::select! {
                started = &mut started => match started {
                    Ok(started) => started,
                    Err(err) => {
                        globals.printer.note(&format!("cannot watch {}: {err:#}", args.path));
                        tokio::select! {
                            () = tokio::time::sleep(backoff) => {}
                            _ = signals.next() => return,
                        }
                        backoff = (backoff * 2).min(MAX_BACKOFF);
                        continue;
                    }
                },
                _ = signals.next() => {
                    if let Some((watch, _)) = finish_briefly(started).await {
                        watch.close().await;
                    }
                    return;
                }
            };
            backoff = Duration::from_secs(1);
            members.send_replace(Some(watch.surveyor().clone()));
            lock(&state).restart(&watch, &first, clock::now_ms());
            // The changed locks are copied out of the watch at most once per
            // rendering, not after every change.
            let mut due = tokio::time::Instant::now() + RENDER_INTERVAL;
            loop {
                let events = tokio::select! {
                    events = watch.next_before(Some(due)) => events,
                    _ = signals.next() => {
                        watch.close().await;
                        return;
                    }
                };
                match events {
                    Ok(Some(events)) => lock(&state).apply(&events),
                    Ok(None) => {}
                    Err(err) => {
                        globals
                            .printer
                            .note(&format!("watch of {} ended: {err:#}", args.path));
                        lock(&state).lost();
                        watch.close().await;
                        break;
                    }
                }
                if tokio::time::Instant::now() >= due {
                    due = tokio::time::Instant::now() + RENDER_INTERVAL;
                    lock(&state).refresh(&watch, clock::now_ms());
                }
            }
        }
    };
    let survey = async {
        loop {
            let asked = surveyor.borrow_and_update().clone();
            let Some(asked) = asked else {
                // The first survey as soon as the first watch knows whom to
                // ask, not an interval later.
                if surveyor.changed().await.is_err() {
                    return;
                }
                continue;
            };
            let survey = asked.survey(Ask::Connections).await;
            lock(&state).set_survey(survey);
            tokio::time::sleep(args.survey_interval).await;
        }
    };
    // The search is not dropped mid-way as the others are: its session is
    // closed, not left for the server to expire.
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let search = async {
        loop {
            match count_cycles(&connect, &args.path, stopping.clone()).await {
                Ok(Some(counts)) => lock(&state).set_cycles(counts),
                Ok(None) => return,
                // The last count found stays served, as the other figures
                // stay through a quorum loss.
                Err(err) => globals.printer.note(&format!(
                    "cannot search {} for deadlocks: {err:#}",
                    args.path
                )),
            }
            tokio::select! {
                () = tokio::time::sleep(args.survey_interval) => {}
                () = stopped(stopping.clone()) => return,
            }
        }
    };
    let render = async {
        let mut ticks = tokio::time::interval(RENDER_INTERVAL);
        loop {
            ticks.tick().await;
            publish(&state, &published);
        }
    };
    let serve = async {
        tokio::select! {
            () = follow => {}
            () = http::serve(listener, limits, Arc::clone(&published)) => {}
            () = survey => {}
            () = render => {}
        }
        // Nobody may be listening any more: the search may be between rounds.
        let _ = stop.send(true);
    };
    tokio::join!(serve, search);
    Ok(ExitStatus::Success)
}

/// The wait-for cycles under `path` now, on a session of its own: the
/// watch's session is the watch's, and a search's `sync` and reads must
/// not stand in its way. A path that does not exist has no cycle. `None`
/// when the exporter stops first; the session is closed either way.
async fn count_cycles(
    connect: &ConnectOptions,
    path: &str,
    stopping: tokio::sync::watch::Receiver<bool>,
) -> Result<Option<CycleCounts>> {
    let connecting = zk::connect(connect);
    tokio::pin!(connecting);
    let session = tokio::select! {
        session = &mut connecting => session?,
        () = stopped(stopping.clone()) => {
            if let Some(session) = finish_briefly(connecting).await {
                session.close().await;
            }
            return Ok(None);
        }
    };
    let counted = async {
        let graph = match wait_graph(&session, path, |_| {}).await {
            Err(err) if is_absent(&err, path) => Default::default(),
            read => read?.1,
        };
        cycles::count_cycles(&session, path, &graph).await
    };
    let counted = tokio::select! {
        counted = counted => counted.map(Some),
        () = stopped(stopping) => Ok(None),
    };
    session.close().await;
    counted
}

/// What a start cut short by a stop made, if it finishes within a moment:
/// a handshake under way may already have a session on the server, which
/// is closed rather than left to expire.
async fn finish_briefly<T, E>(start: impl Future<Output = Result<T, E>>) -> Option<T> {
    let moment = Duration::from_secs(1);
    tokio::time::timeout(moment, start).await.ok()?.ok()
}

/// Resolves once the exporter stops (or whoever would say so is gone).
async fn stopped(mut stopping: tokio::sync::watch::Receiver<bool>) {
    let _ = stopping.wait_for(|stopped| *stopped).await;
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

/// Renders the figures as they stand into the documents scrapes are served.
fn publish(state: &Mutex<State>, published: &Mutex<Published>) {
    let families = lock(state).families(clock::now_ms());
    let (text, open_metrics) = state::render(&families);
    *published.lock().unwrap_or_else(|p| p.into_inner()) = Published {
        text: text.into(),
        open_metrics: open_metrics.into(),
    };
}
