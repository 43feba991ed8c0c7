//! `zklock top [PATH]`: a live full-screen view of the locks under PATH,
//! kept current from the live watch: holders, waiters, the oldest hold and
//! wait, the holder's owner and host; sorted by contention or by hold age,
//! filtered by name, one lock opened to its queue.
//!
//! The terminal is put back whichever way top ends that it can see: `q`,
//! Ctrl-C (a key in raw mode), a watch that fails, an error in drawing, even
//! a panic, since the [`Screen`] that changed it restores it when dropped;
//! and every signal that would end it and can be caught, after which it
//! dies of that signal, the screen restored (a signal's default action
//! would end it with the terminal raw, on the alternate screen).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{IsTerminal, Stdout};
use std::time::Duration;

use anyhow::Result;
use crossterm::event::{Event, EventStream, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use crossterm::terminal::{self, EnterAlternateScreen, LeaveAlternateScreen};
use futures::StreamExt;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Paragraph, Row, Table, TableState};

use crate::clock;
use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::model::waitfor::{GraphBuilder, WaitGraph};
use crate::model::{Contender, Lock};
use crate::output::{self, inert};
use crate::run::Signals;
use crate::usage::UsageError;
use crate::watch::{LockWatch, Stale};
use crate::zk;
use crate::zk::sessions::{self, Ask, Survey};

use super::ls::client_host;
use super::stat;

/// What `top` was asked for.
#[derive(Clone, Debug)]
pub struct TopArgs {
    /// The path whose locks are shown.
    pub path: String,
}

/// How often the view is drawn again (ages grow without any change).
const REDRAW: Duration = Duration::from_secs(1);

/// How often the ensemble is asked who is connected, for the HOST column.
const SURVEY_INTERVAL: Duration = Duration::from_secs(10);

/// The order of the lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SortBy {
    /// Most waiters first, then most holders.
    Contention,
    /// Longest held first.
    HoldAge,
}

impl SortBy {
    fn as_str(self) -> &'static str {
        match self {
            SortBy::Contention => "contention",
            SortBy::HoldAge => "hold age",
        }
    }
}

/// What the person sees and has chosen.
struct View {
    path: String,
    survey: Option<Survey>,
    sort: SortBy,
    filter: String,
    /// Typing a filter after `/`.
    filtering: bool,
    table: TableState,
    /// The lock opened with Enter.
    opened: Option<String>,
    color: bool,
    connected: bool,
}

/// The locks under the path as the watch last showed them, by path.
type Locks = BTreeMap<String, Lock>;

/// Shows the locks under the path until `q`, Ctrl-C or a signal.
pub(crate) async fn run(globals: &Globals, args: TopArgs) -> Result<ExitStatus> {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err(UsageError::new(
            "top needs a terminal; for a script, use `zklock ls` (a listing) or `zklock watch` \
             (a stream of changes)",
        )
        .into());
    }
    let mut signals = Signals::catch_every_ending()?;
    let (mut watch, first) = LockWatch::start(
        globals.connect.clone(),
        globals.admin_port,
        args.path.clone(),
    )
    .await?;
    let locks = RefCell::new(Locks::new());
    let mut stale = Stale::default();
    stale.note(&first);
    watch.update_copy(&mut locks.borrow_mut(), &mut stale, clock::now_ms());
    let connected = watch.connected();
    let mut view = View {
        path: args.path.clone(),
        survey: None,
        sort: SortBy::Contention,
        filter: String::new(),
        filtering: false,
        table: TableState::default().with_selected(Some(0)),
        opened: None,
        color: globals.printer.color,
        connected: true,
    };
    let mut screen = Screen::open()?;
    // The watch goes on by itself beside the view, so a key never cuts a
    // reading short.
    let follow = async {
        loop {
            match watch.next().await {
                Ok(events) => {
                    stale.note(&events);
                    watch.update_copy(&mut locks.borrow_mut(), &mut stale, clock::now_ms());
                }
                Err(err) => return Err::<ExitStatus, _>(err),
            }
        }
    };
    let show = async {
        let mut keys = EventStream::new();
        let mut redraw = tokio::time::interval(REDRAW);
        let mut survey_due = tokio::time::interval(SURVEY_INTERVAL);
        loop {
            view.connected = connected.load(std::sync::atomic::Ordering::Relaxed);
            screen.draw(&mut view, &locks.borrow())?;
            tokio::select! {
                key = keys.next() => match key {
                    Some(Ok(Event::Key(key))) if view.on_key(key, &locks.borrow()) => {
                        return Ok(ExitStatus::Success);
                    }
                    Some(Err(err)) => return Err(anyhow::Error::from(err)),
                    _ => {}
                },
                _ = redraw.tick() => {}
                _ = survey_due.tick() => {
                    let hosts = &globals.connect.hosts;
                    view.survey = Some(sessions::survey(hosts, globals.admin_port, Ask::Connections).await);
                }
                signal = signals.next() => return Ok(ExitStatus::DiesOf(signal)),
            }
        }
    };
    let ended = tokio::select! {
        failed = follow => failed,
        ended = show => ended,
    };
    drop(screen);
    watch.close().await;
    ended
}

impl View {
    /// Acts on a key; true when it asks to quit.
    fn on_key(&mut self, key: KeyEvent, locks: &Locks) -> bool {
        if key.kind == KeyEventKind::Release {
            return false;
        }
        let ctrl_c =
            key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl_c {
            return true;
        }
        if self.filtering {
            match key.code {
                KeyCode::Enter | KeyCode::Esc => self.filtering = false,
                KeyCode::Backspace => {
                    self.filter.pop();
                }
                KeyCode::Char(c) => self.filter.push(c),
                _ => {}
            }
            self.table.select(Some(0));
            return false;
        }
        match key.code {
            KeyCode::Char('q') => return true,
            KeyCode::Char('s') => {
                self.sort = match self.sort {
                    SortBy::Contention => SortBy::HoldAge,
                    SortBy::HoldAge => SortBy::Contention,
                }
            }
            KeyCode::Char('/') => {
                self.filtering = true;
                self.filter.clear();
            }
            KeyCode::Esc if self.opened.is_some() => self.opened = None,
            KeyCode::Esc => self.filter.clear(),
            KeyCode::Down | KeyCode::Char('j') => self.table.select_next(),
            KeyCode::Up | KeyCode::Char('k') => self.table.select_previous(),
            KeyCode::Enter => {
                let shown = self.shown(locks, clock::now_ms());
                let selected = self.table.selected().unwrap_or(0);
                self.opened = shown.get(selected).map(|lock| lock.path.clone());
            }
            _ => {}
        }
        false
    }

    /// The locks that pass the filter, in the chosen order.
    fn shown<'l>(&self, locks: &'l Locks, now_ms: i64) -> Vec<&'l Lock> {
        let mut shown: Vec<&Lock> = locks
            .values()
            .filter(|lock| lock.path.contains(&self.filter))
            .collect();
        match self.sort {
            SortBy::Contention => shown.sort_by_key(|lock| {
                (
                    std::cmp::Reverse(lock.waiters.len()),
                    std::cmp::Reverse(lock.holders.len()),
                )
            }),
            SortBy::HoldAge => shown.sort_by_key(|lock| {
                std::cmp::Reverse(oldest_age(&lock.holders, now_ms).unwrap_or(-1))
            }),
        }
        shown
    }
}

/// The age of the oldest of `contenders` at `now_ms`.
fn oldest_age(contenders: &[Contender], now_ms: i64) -> Option<i64> {
    contenders.iter().map(|c| now_ms - c.stat.ctime).max()
}

/// The wait-for graph of the locks, each contender's age counted to
/// `now_ms`: the watch's copy of a lock has the ages of when it last
/// changed, and a chain's ages must grow like the rest of the view. Only
/// the contended locks are copied, the only ones a graph keeps.
fn wait_graph(locks: &Locks, now_ms: i64) -> WaitGraph {
    let mut graph = GraphBuilder::default();
    for lock in locks.values().filter(|lock| !lock.waiters.is_empty()) {
        let mut lock = lock.clone();
        for contender in lock.holders.iter_mut().chain(&mut lock.waiters) {
            contender.age_ms = now_ms.saturating_sub(contender.stat.ctime);
        }
        graph.add(&lock);
    }
    graph.finish()
}

fn age_text(age: Option<i64>) -> String {
    age.map_or("-".to_owned(), output::format_age_ms)
}

/// The terminal in raw mode on the alternate screen, for as long as it
/// lives; dropping it puts the terminal back as it was.
struct Screen {
    terminal: Terminal<CrosstermBackend<Stdout>>,
}

impl Screen {
    fn open() -> Result<Screen> {
        terminal::enable_raw_mode()?;
        // From here on, the guard exists before anything else can fail.
        let restore = Restore;
        crossterm::execute!(std::io::stdout(), EnterAlternateScreen)?;
        let terminal = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
        std::mem::forget(restore);
        Ok(Screen { terminal })
    }

    fn draw(&mut self, view: &mut View, locks: &Locks) -> Result<()> {
        self.terminal.draw(|frame| render(frame, view, locks))?;
        Ok(())
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = self.terminal.show_cursor();
        drop(Restore);
    }
}

/// Leaves the alternate screen and raw mode when dropped.
struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = crossterm::execute!(std::io::stdout(), LeaveAlternateScreen);
        let _ = terminal::disable_raw_mode();
    }
}

fn render(frame: &mut ratatui::Frame<'_>, view: &mut View, locks: &Locks) {
    let now = clock::now_ms();
    let [head, body, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    let heading = format!(
        "zklock top  {}  {} locks  sort: {}{}{}",
        view.path,
        locks.len(),
        view.sort.as_str(),
        if view.filter.is_empty() {
            String::new()
        } else {
            format!("  filter: {}", view.filter)
        },
        if view.connected { "" } else { "  DISCONNECTED" },
    );
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let heading_style = if view.color {
        bold.fg(Color::Cyan)
    } else {
        bold
    };
    frame.render_widget(
        Paragraph::new(inert(&heading).into_owned()).style(heading_style),
        head,
    );
    let keys = if view.filtering {
        "type a filter, Enter: done".to_owned()
    } else if view.opened.is_some() {
        "Esc: back  q: quit".to_owned()
    } else {
        "s: sort  /: filter  Enter: open  q: quit".to_owned()
    };
    frame.render_widget(Paragraph::new(keys), foot);
    match view.opened.as_ref().and_then(|path| locks.get(path)) {
        Some(lock) => render_queue(frame, body, lock, locks, now),
        None => render_locks(frame, body, view, locks, now),
    }
}

fn render_locks(
    frame: &mut ratatui::Frame<'_>,
    area: ratatui::layout::Rect,
    view: &mut View,
    locks: &Locks,
    now: i64,
) {
    let rows: Vec<Row<'_>> = view
        .shown(locks, now)
        .into_iter()
        .map(|lock| {
            let oldest = lock.holders.iter().max_by_key(|c| now - c.stat.ctime);
            Row::new([
                Cell::from(inert(&lock.path).into_owned()),
                Cell::from(lock.holders.len().to_string()),
                Cell::from(lock.waiters.len().to_string()),
                Cell::from(age_text(oldest_age(&lock.holders, now))),
                Cell::from(age_text(oldest_age(&lock.waiters, now))),
                Cell::from(oldest.map_or("-".to_owned(), |c| inert(&c.owner_text()).into_owned())),
                Cell::from(oldest.map_or("-".to_owned(), |c| {
                    let mut c = c.clone();
                    if let Some(survey) = &view.survey {
                        c.attach_client(survey);
                    }
                    client_host(&c)
                })),
            ])
        })
        .collect();
    let widths = [
        Constraint::Fill(2),
        Constraint::Length(4),
        Constraint::Length(4),
        Constraint::Length(8),
        Constraint::Length(8),
        Constraint::Fill(1),
        Constraint::Length(15),
    ];
    let header = Row::new(["LOCK", "HOLD", "WAIT", "HELD", "WAITED", "OWNER", "HOST"])
        .style(Style::default().add_modifier(Modifier::BOLD));
    let table = Table::new(rows, widths)
        .header(header)
        .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED));
    frame.render_stateful_widget(table, area, &mut view.table);
}

/// One lock's queue, and above it the chain beyond it (as `stat` shows
/// it): where its holder's owner waits, on whom, to the root blocker,
/// among the locks under the path top follows. The chain comes first so
/// that a long queue cannot push it off the screen.
fn render_queue(
    frame: &mut ratatui::Frame<'_>,
    area: ratatui::layout::Rect,
    lock: &Lock,
    locks: &Locks,
    now: i64,
) {
    let mut lines = vec![Line::from(format!(
        "{}  {}  {}",
        inert(&lock.path),
        lock.kind.as_str(),
        lock.dialect
    ))];
    let hops = stat::chain(&wait_graph(locks, now), &lock.path);
    if !hops.is_empty() {
        let chain = stat::chain_lines(&hops);
        lines.extend(
            chain
                .iter()
                .map(|line| Line::from(inert(line).into_owned())),
        );
        lines.push(Line::default());
    }
    for (contender, holds) in lock.standings() {
        let standing = if holds { "holding" } else { "waiting" };
        lines.push(Line::from(format!(
            "{standing:<8} {}  {}  session {}  {}",
            inert(&contender.name),
            output::format_age_ms(now - contender.stat.ctime),
            zk::format_session(contender.session()),
            inert(&contender.owner_text()),
        )));
    }
    frame.render_widget(Paragraph::new(lines), area);
}
