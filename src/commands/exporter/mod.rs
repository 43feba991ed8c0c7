//! `zklock exporter [PATH] --listen ADDR`: a long-running process that
//! serves the metrics of the locks under PATH over HTTP for Prometheus.
//!
//! Four tasks share one [`State`]: the live watch ([`LockWatch`]) feeds it
//! each change as it comes; the session survey refreshes it on an interval
//! (no watch reports who is connected); once a second the figures are
//! rendered into the documents a scrape is served; and the HTTP server
//! hands those out. The exporter only reads: it never writes to ZooKeeper,
//! so any number can watch the same tree. A connection loss or an expired
//! session is the watch's to recover from (it reads everything again); a
//! watch that fails for good is started again, with backoff, and the last
//! known figures are served meanwhile, `zklock_exporter_connected` 0 and
//! `zklock_exporter_last_update_seconds` standing still.

mod http;
mod state;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};

use crate::clock;
use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::run::Signals;
use crate::watch::LockWatch;
use crate::zk::sessions::{self, Ask};

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
    /// How often the ensemble is asked who is connected.
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
    let state = Arc::new(Mutex::new(State::new(args.max_locks)));
    let published = Arc::new(Mutex::new(Published::default()));
    publish(&state, &published);
    // Never writes, so a server in read-only mode (a minority cut off from
    // its quorum) may serve it too.
    let mut connect = globals.connect.clone();
    connect.read_only = true;
    let follow = async {
        let mut backoff = Duration::from_secs(1);
        loop {
            let started = LockWatch::start(connect.clone(), globals.admin_port, args.path.clone());
            let (mut watch, first) = tokio::select! {
                started = started => match started {
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
                _ = signals.next() => return,
            };
            backoff = Duration::from_secs(1);
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
            let survey =
                sessions::survey(&connect.hosts, globals.admin_port, Ask::Connections).await;
            lock(&state).set_survey(survey);
            tokio::time::sleep(args.survey_interval).await;
        }
    };
    let render = async {
        let mut ticks = tokio::time::interval(RENDER_INTERVAL);
        loop {
            ticks.tick().await;
            publish(&state, &published);
        }
    };
    tokio::select! {
        () = follow => {}
        () = http::serve(listener, Arc::clone(&published)) => {}
        () = survey => {}
        () = render => {}
    }
    Ok(ExitStatus::Success)
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
