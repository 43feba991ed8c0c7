//! `zklock top [PATH]`: a live full-screen view of the locks under PATH,
//! kept current from the live watch: holders, waiters, the oldest hold and
//! wait, the holder's owner and host, and whether its session is connected
//! (with how long it has been gone across the surveys top has made); sorted
//! by contention or by hold age, filtered by name, one lock opened to its
//! queue.
//!
//! From the view, the lock or contender chosen can be released, revoked or
//! reaped, each confirmed in the view first ([`act`]); the global
//! `--read-only` (inspection only) turns that off, for watching a cluster
//! one must not touch.
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
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, TableState};

use unicode_width::UnicodeWidthStr;

use crate::clock;
use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::model::chains::chain;
use crate::model::waitfor::{GraphBuilder, WaitGraph};
use crate::model::{Contender, Lock};
use crate::names;
use crate::output::{self, Column, Fitted, inert};
use crate::run::Signals;
use crate::usage::UsageError;
use crate::watch::{LockWatch, Stale};
use crate::zk::sessions::{Absences, Ask, Survey};

use super::{
    CHAIN_INDENT, CONTENDER_COLUMNS, chain_lines, client_host, contender_connected, contender_row,
};

mod act;

use act::{ACTION_KEYS, Act, Answer, Confirm};

/// What `top` was asked for.
#[derive(Clone, Debug)]
pub struct TopArgs {
    /// The path whose locks are shown.
    pub path: String,
}

/// How often the view is drawn again (ages grow without any change).
const REDRAW: Duration = Duration::from_secs(1);

/// How often the ensemble is asked who is connected, for the HOST and
/// CONNECTED columns.
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
    /// How long each shown session has been gone, across the surveys.
    absences: Absences,
    sort: SortBy,
    filter: String,
    /// Typing a filter after `/`.
    filtering: bool,
    table: TableState,
    /// The lock opened with Enter.
    opened: Option<String>,
    /// The contender chosen in the opened lock's queue.
    queue: TableState,
    read_only: bool,
    /// The action being confirmed.
    confirm: Option<Confirm>,
    /// What the last action did, or why it could not be: shown until the
    /// next key.
    said: Vec<String>,
    color: bool,
    connected: bool,
}

/// What a key asks of the view.
enum Next {
    Stay,
    Quit,
    /// Do the action confirmed.
    Act(Confirm),
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
        &globals.admin_ports,
        args.path.clone(),
    )
    .await?;
    let surveyor = watch.surveyor().clone();
    let locks = RefCell::new(Locks::new());
    let mut stale = Stale::default();
    stale.note(&first);
    watch.update_copy(&mut locks.borrow_mut(), &mut stale, clock::now_ms());
    let connected = watch.connected();
    let mut view = View {
        path: args.path.clone(),
        survey: None,
        absences: Absences::default(),
        sort: SortBy::Contention,
        filter: String::new(),
        filtering: false,
        table: TableState::default().with_selected(Some(0)),
        opened: None,
        queue: TableState::default().with_selected(Some(0)),
        read_only: globals.connect.read_only,
        confirm: None,
        said: Vec::new(),
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
                    Some(Ok(Event::Key(key))) => {
                        let next = view.on_key(key, &locks.borrow());
                        match next {
                            Next::Stay => {}
                            Next::Quit => return Ok(ExitStatus::Success),
                            Next::Act(confirm) => {
                                view.said = vec![confirm.working()];
                                screen.draw(&mut view, &locks.borrow())?;
                                tokio::select! {
                                    said = act::perform(globals, confirm) => view.said = said,
                                    signal = signals.next() => return Ok(ExitStatus::DiesOf(signal)),
                                }
                            }
                        }
                    }
                    Some(Err(err)) => return Err(anyhow::Error::from(err)),
                    _ => {}
                },
                _ = redraw.tick() => {}
                _ = survey_due.tick() => {
                    let survey = surveyor.survey(Ask::Connections).await;
                    view.take_survey(survey, &locks.borrow());
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
    /// Acts on a key.
    fn on_key(&mut self, key: KeyEvent, locks: &Locks) -> Next {
        if key.kind == KeyEventKind::Release {
            return Next::Stay;
        }
        let ctrl_c =
            key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl_c {
            return Next::Quit;
        }
        self.said.clear();
        if let Some(confirm) = &mut self.confirm {
            match confirm.on_key(key) {
                Answer::Open => {}
                Answer::Cancel => {
                    self.confirm = None;
                    self.said = vec!["cancelled: nothing was done".to_owned()];
                }
                Answer::Yes => return self.confirm.take().map_or(Next::Stay, Next::Act),
            }
            return Next::Stay;
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
            return Next::Stay;
        }
        if let Some(act) = Act::of_key(key.code) {
            self.open_confirm(act, locks);
            return Next::Stay;
        }
        match key.code {
            KeyCode::Char('q') => return Next::Quit,
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
            KeyCode::Down | KeyCode::Char('j') if self.opened.is_some() => self.queue.select_next(),
            KeyCode::Up | KeyCode::Char('k') if self.opened.is_some() => {
                self.queue.select_previous();
            }
            KeyCode::Down | KeyCode::Char('j') => self.table.select_next(),
            KeyCode::Up | KeyCode::Char('k') => self.table.select_previous(),
            KeyCode::Enter => {
                self.opened = self.selected(locks).map(|lock| lock.path.clone());
                self.queue.select(Some(0));
            }
            _ => {}
        }
        Next::Stay
    }

    /// The lock chosen: the one opened, else the one selected in the list.
    fn selected<'l>(&self, locks: &'l Locks) -> Option<&'l Lock> {
        match &self.opened {
            Some(path) => locks.get(path),
            None => {
                let shown = self.shown(locks, clock::now_ms());
                shown.get(self.table.selected().unwrap_or(0)).copied()
            }
        }
    }

    /// Opens the confirmation of `act` on the lock chosen (in an opened
    /// lock, on the contender chosen in its queue), or says why not.
    fn open_confirm(&mut self, act: Act, locks: &Locks) {
        if self.read_only {
            self.said = vec!["--read-only: no release, revoke or reap from here".to_owned()];
            return;
        }
        let Some(lock) = self.selected(locks) else {
            self.said = vec!["no lock is chosen".to_owned()];
            return;
        };
        let chosen = self
            .opened
            .as_ref()
            .map(|_| self.queue.selected().unwrap_or(0));
        let now = clock::now_ms();
        match Confirm::open(act, lock, chosen, self.survey.as_ref(), now) {
            Ok(confirm) => self.confirm = Some(confirm),
            Err(why) => self.said = vec![why],
        }
    }

    /// Takes in a new survey, counting the absences of the sessions of
    /// `locks`.
    fn take_survey(&mut self, survey: Survey, locks: &Locks) {
        let sessions = locks
            .values()
            .flat_map(Lock::contenders)
            .map(Contender::session);
        self.absences.record(&survey, sessions);
        self.survey = Some(survey);
    }

    /// `contender` with its client as the last survey saw it, and how long
    /// its session has been gone.
    fn seen(&self, contender: &Contender) -> Contender {
        let mut contender = contender.clone();
        if let Some(survey) = &self.survey {
            contender.attach_client(survey);
            self.absences
                .annotate(contender.session(), &mut contender.client);
        }
        contender
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

/// The columns of the list of locks; HELD, CONNECTED, OWNER and HOST are
/// of the oldest holder. A row too wide for the screen gives up HOST, then
/// WAITED, then OWNER (after cutting it), then HELD, then CONNECTED; the
/// lock and its counts stay, and a lock wider than the screen wraps.
const LOCK_COLUMNS: &[Column] = &[
    Column::whole("LOCK"),
    Column::whole("HOLD"),
    Column::whole("WAIT"),
    Column::whole("HELD").goes(4),
    Column::whole("CONNECTED").goes(5),
    Column::whole("WAITED").goes(2),
    Column::text("OWNER").goes(3),
    Column::whole("HOST").goes(1),
];

fn render(frame: &mut ratatui::Frame<'_>, view: &mut View, locks: &Locks) {
    let now = clock::now_ms();
    let width = usize::from(frame.area().width);
    let heading = format!(
        "zklock top  {}  {}  sort: {}{}{}",
        names::shown(&view.path),
        output::counted(locks.len(), "lock", "locks"),
        view.sort.as_str(),
        if view.filter.is_empty() {
            String::new()
        } else {
            format!("  filter: {}", view.filter)
        },
        if view.connected { "" } else { "  DISCONNECTED" },
    );
    let heading = fitted_lines(&heading, width, 2);
    let keys = fitted_lines(&keys(view), width, 2);
    let panel = panel(view, width);
    let [head, body, under, foot] = Layout::vertical([
        Constraint::Length(height(heading.len())),
        Constraint::Min(1),
        Constraint::Length(height(panel.len())),
        Constraint::Length(height(keys.len())),
    ])
    .areas(frame.area());
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let heading_style = if view.color {
        bold.fg(Color::Cyan)
    } else {
        bold
    };
    frame.render_widget(Paragraph::new(heading).style(heading_style), head);
    frame.render_widget(Paragraph::new(panel).style(heading_style), under);
    frame.render_widget(Paragraph::new(keys), foot);
    match view.opened.as_ref().and_then(|path| locks.get(path)) {
        Some(lock) => render_queue(frame, body, lock, (view, locks), now),
        None => render_locks(frame, body, view, locks, now),
    }
}

/// The line of keys: what the keys do now.
fn keys(view: &View) -> String {
    let actions = if view.read_only {
        String::new()
    } else {
        format!("  {ACTION_KEYS}")
    };
    match &view.confirm {
        Some(confirm) => confirm.keys().to_owned(),
        None if view.filtering => "type a filter, Enter: done".to_owned(),
        None if view.opened.is_some() => format!("Esc: back  Up/Down: choose{actions}  q: quit"),
        None => format!("s: sort  /: filter  Enter: open{actions}  q: quit"),
    }
}

/// The lines under the table: the confirmation open, or what the last
/// action did; made safe and wrapped, a node's path never cut.
fn panel(view: &View, width: usize) -> Vec<Line<'static>> {
    let lines = match &view.confirm {
        Some(confirm) => confirm.lines(),
        None => view.said.clone(),
    };
    lines
        .iter()
        .flat_map(|line| fitted_lines(line, width, 6))
        .collect()
}

/// `text` made safe and wrapped to `width`, lines after the first indented
/// by `indent`: a path in it is never cut.
fn fitted_lines(text: &str, width: usize, indent: usize) -> Vec<Line<'static>> {
    output::hanging(&inert(text), width, indent)
        .into_iter()
        .map(Line::from)
        .collect()
}

/// A count of lines as a height on the screen.
fn height(lines: usize) -> u16 {
    u16::try_from(lines).unwrap_or(u16::MAX)
}

/// `rows` of `columns` fitted to the width of `area` and drawn there: the
/// header in bold, then the rows from the first the view scrolled to, the
/// row `state` selects (if any) reversed and kept on the screen.
fn render_table(
    frame: &mut ratatui::Frame<'_>,
    area: Rect,
    (columns, rows): (&[Column], Vec<Vec<String>>),
    state: Option<&mut TableState>,
) {
    let fitted = Fitted::new(columns, rows, usize::from(area.width));
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let mut lines: Vec<Line<'static>> = fitted
        .header
        .iter()
        .map(|line| Line::styled(line.clone(), bold))
        .collect();
    let room = usize::from(area.height).saturating_sub(lines.len());
    let (first, selected) = match state {
        Some(state) => scroll(state, &fitted.rows, room),
        None => (0, None),
    };
    let reversed = Style::default().add_modifier(Modifier::REVERSED);
    for (n, row) in fitted.rows.into_iter().enumerate().skip(first) {
        if Some(n) == selected {
            // Reversed across the whole width, as a selection bar.
            let bar = |line: String| {
                let pad = usize::from(area.width).saturating_sub(line.width());
                Line::styled(line + &" ".repeat(pad), reversed)
            };
            lines.extend(row.into_iter().map(bar));
        } else {
            lines.extend(row.into_iter().map(Line::from));
        }
    }
    frame.render_widget(Paragraph::new(lines), area);
}

/// The first row to draw and the row selected, kept within the rows and
/// on a screen of `room` lines: the selection moves the view no more than
/// it must.
fn scroll(state: &mut TableState, rows: &[Vec<String>], room: usize) -> (usize, Option<usize>) {
    let Some(last) = rows.len().checked_sub(1) else {
        return (0, None);
    };
    let selected = state.selected().unwrap_or(0).min(last);
    state.select(Some(selected));
    let mut first = state.offset().min(selected);
    let height = |first: usize| rows[first..=selected].iter().map(Vec::len).sum::<usize>();
    while first < selected && height(first) > room {
        first += 1;
    }
    *state.offset_mut() = first;
    (first, Some(selected))
}

fn render_locks(
    frame: &mut ratatui::Frame<'_>,
    area: Rect,
    view: &mut View,
    locks: &Locks,
    now: i64,
) {
    let rows: Vec<Vec<String>> = view
        .shown(locks, now)
        .into_iter()
        .map(|lock| {
            let oldest = lock
                .holders
                .iter()
                .max_by_key(|c| now - c.stat.ctime)
                .map(|c| view.seen(c));
            vec![
                names::shown(&lock.path).into_owned(),
                lock.holders.len().to_string(),
                lock.waiters.len().to_string(),
                age_text(oldest_age(&lock.holders, now)),
                oldest.as_ref().map_or("-".to_owned(), contender_connected),
                age_text(oldest_age(&lock.waiters, now)),
                oldest
                    .as_ref()
                    .map_or("-".to_owned(), Contender::owner_text),
                oldest.as_ref().map_or("-".to_owned(), client_host),
            ]
        })
        .collect();
    render_table(frame, area, (LOCK_COLUMNS, rows), Some(&mut view.table));
}

/// One lock's queue, as `stat` shows it: a row per contender named by its
/// sequence number, the one `chosen` reversed; and above it the chain beyond it: where its holder's
/// owner waits, on whom, to the root blocker, among the locks under the
/// path top follows. The chain comes first so that a long queue cannot
/// push it off the screen.
fn render_queue(
    frame: &mut ratatui::Frame<'_>,
    area: Rect,
    lock: &Lock,
    (view, locks): (&mut View, &Locks),
    now: i64,
) {
    let width = usize::from(area.width);
    let title = format!(
        "{}  {}  {}",
        names::shown(&lock.path),
        lock.kind.as_str(),
        lock.dialect
    );
    let mut lines = fitted_lines(&title, width, 2);
    let hops = chain(&wait_graph(locks, now), &lock.path);
    if !hops.is_empty() {
        for line in chain_lines(&hops) {
            lines.extend(fitted_lines(&line, width, CHAIN_INDENT));
        }
        lines.push(Line::default());
    }
    let [above, queue] =
        Layout::vertical([Constraint::Length(height(lines.len())), Constraint::Min(0)]).areas(area);
    frame.render_widget(Paragraph::new(lines), above);
    let rows: Vec<Vec<String>> = lock
        .standings()
        .map(|(contender, holds)| {
            let mut contender = view.seen(contender);
            contender.age_ms = now - contender.stat.ctime;
            contender_row(&lock.path, &contender, holds).to_vec()
        })
        .collect();
    render_table(
        frame,
        queue,
        (CONTENDER_COLUMNS, rows),
        Some(&mut view.queue),
    );
}
