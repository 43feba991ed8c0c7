//! The fencing log: every holder appends `start <fence> <ms> <who>` when its
//! critical section begins and `end <fence> <ms> <who> [signal]` when it ends,
//! to one file, in the order things happen (O_APPEND writes of one line are
//! atomic). The checker reads it back in file order and proves what a lock
//! must guarantee: no two exclusive holders overlap, and the fences (the
//! holders' node czxids) grow strictly in grant order.
//!
//! zklock holders run [`FenceLog::command`]; Curator and kazoo peers write
//! the same lines with `--log FILE`. A holder that was SIGKILLed cannot write
//! its `end`: the test appends one with [`FenceLog::record_end`] once it has
//! seen the process dead.
//!
//! [`Stage`] is the set-up the scenarios around a lock share: a test's
//! chroot, the fencing log, the lock and its directory, fenced holders and
//! queued waiters, and the closing checks.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::client::Zk;
use super::proxy::FaultProxy;
use super::{Running, Scratch, TestEnv, Zklock, wait_for, wait_until};

/// A critical section's beginning or end, as logged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// 1-based line number in the log.
    pub line: usize,
    pub start: bool,
    pub fence: i64,
    /// Wall-clock milliseconds when the line was written (for reports and
    /// coarse timing; the order of lines is what counts).
    pub ms: u64,
    pub who: String,
    /// Anything after `who`: e.g. `signal` when the command was stopped by
    /// one, `killed` for an end the test recorded.
    pub note: String,
}

/// One critical section, as the fencing log tells it: a `start` and its
/// `end`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    pub fence: i64,
    pub who: String,
    pub start: Entry,
    pub end: Entry,
}

impl Section {
    /// How the section ended (`""`, `signal`, `killed`, ...).
    pub fn end_note(&self) -> &str {
        &self.end.note
    }
}

/// Two sections that overlapped: `stale` was still in its section when `newer`
/// (with the larger fence) began.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overlap {
    pub stale: String,
    pub newer: String,
}

/// The current wall clock in milliseconds since the epoch, as `date +%s%3N`.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_millis() as u64
}

/// The fencing log file of one test.
#[derive(Clone, Debug)]
pub struct FenceLog {
    path: PathBuf,
}

/// The critical section zklock runs: `sh -c SCRIPT fence LOG WHO BODY`. It
/// logs `start`, prints `held <pid> <fence> <session> <node>` on stdout, runs
/// BODY (shell code), logs `end`. On TERM, INT or HUP it logs `end ...
/// signal` and exits 42, so a test can tell that the command got the signal.
const SCRIPT: &str = r#"
log=$1; who=$2; body=$3
started=
trap '[ -n "$started" ] && echo "end $ZKLOCK_FENCE $(date +%s%3N) $who signal" >> "$log"; exit 42' TERM INT HUP
echo "start $ZKLOCK_FENCE $(date +%s%3N) $who" >> "$log"
started=1
echo "held $$ $ZKLOCK_FENCE $ZKLOCK_SESSION $ZKLOCK_NODE"
eval "$body"
echo "end $ZKLOCK_FENCE $(date +%s%3N) $who" >> "$log"
"#;

/// The fenced command of [`FenceLog::command`] running under the lock, as
/// it introduced itself on stdout once zklock held: its pid, and the fence,
/// session and node zklock handed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FencedCommand {
    /// The command's pid (the shell).
    pub pid: i32,
    pub fence: i64,
    /// `0x...`
    pub session: String,
    pub node: String,
}

impl FencedCommand {
    /// Parses the `held ...` line; panics on anything else.
    pub fn parse(line: &str) -> FencedCommand {
        let fields: Vec<&str> = line.split(' ').collect();
        match fields.as_slice() {
            ["held", pid, fence, session, node] => FencedCommand {
                pid: pid.parse().expect("pid"),
                fence: fence.parse().expect("fence"),
                session: (*session).to_owned(),
                node: (*node).to_owned(),
            },
            _ => panic!("expected `held <pid> <fence> <session> <node>`, got {line:?}"),
        }
    }
}

impl FenceLog {
    /// A new, empty log in `scratch`.
    pub fn new(scratch: &Scratch) -> FenceLog {
        FenceLog::at(scratch.file("fence.log"))
    }

    /// A log at `path` (created empty).
    pub fn at(path: PathBuf) -> FenceLog {
        std::fs::write(&path, "").unwrap_or_else(|e| panic!("create {}: {e}", path.display()));
        FenceLog { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The command line (after `--`) of a zklock holder labelled `who` that
    /// logs its section around `body` (shell code, e.g. `sleep 0.2`, or
    /// [`wait_for_file`]).
    pub fn command(&self, who: &str, body: &str) -> Vec<String> {
        vec![
            "sh".into(),
            "-c".into(),
            SCRIPT.into(),
            "fence".into(),
            self.path.display().to_string(),
            who.into(),
            body.into(),
        ]
    }

    /// Appends an `end` the holder could not write itself (it was
    /// SIGKILLed): call it only once the holder is seen dead.
    pub fn record_end(&self, fence: i64, who: &str) {
        self.append(&format!("end {fence} {} {who} killed", now_ms()));
    }

    /// Appends a raw line.
    pub fn append(&self, line: &str) {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.path)
            .unwrap_or_else(|e| panic!("open {}: {e}", self.path.display()));
        file.write_all(format!("{line}\n").as_bytes())
            .expect("append to the fencing log");
    }

    /// The log's text.
    pub fn text(&self) -> String {
        std::fs::read_to_string(&self.path)
            .unwrap_or_else(|e| panic!("read {}: {e}", self.path.display()))
    }

    /// The entries, in file order.
    pub fn entries(&self) -> Vec<Entry> {
        parse(&self.text()).unwrap_or_else(|e| panic!("{e}\n{}", self.text()))
    }

    /// The `start` entries of `who`.
    pub fn starts_of(&self, who: &str) -> Vec<Entry> {
        self.entries()
            .into_iter()
            .filter(|e| e.start && e.who == who)
            .collect()
    }

    /// Waits until `who` has logged a start, and returns it.
    pub fn wait_for_start(&self, who: &str, timeout: Duration) -> Entry {
        wait_for(timeout, &format!("{who} logs its start"), || {
            self.starts_of(who).into_iter().next()
        })
    }

    /// For a semaphore, whose holders overlap by design: the most sections
    /// open at once, and how many sections there were. Fails unless every
    /// section that started ended, and each ended once.
    pub fn assert_concurrency(&self) -> (usize, usize) {
        let text = self.text();
        let mut open: Vec<(i64, String)> = Vec::new();
        let (mut most, mut sections) = (0, 0);
        for entry in self.entries() {
            let key = (entry.fence, entry.who.clone());
            if entry.start {
                assert!(
                    !open.contains(&key),
                    "line {}: started twice\n{text}",
                    entry.line
                );
                open.push(key);
                sections += 1;
                most = most.max(open.len());
            } else {
                let at = open.iter().position(|k| *k == key);
                let at = at.unwrap_or_else(|| panic!("line {}: ends nothing\n{text}", entry.line));
                open.remove(at);
            }
        }
        assert!(open.is_empty(), "sections never ended: {open:?}\n{text}");
        (most, sections)
    }

    /// Checks that no two holders overlapped and that fences grew strictly
    /// in grant order, and that every section ended; returns the sections in
    /// grant order, or what is wrong.
    pub fn check_exclusive(&self) -> Result<Vec<Section>, String> {
        walk(&self.entries(), true).map(|(sections, _)| sections)
    }

    /// [`FenceLog::check_exclusive`], failing the test with the log.
    #[track_caller]
    pub fn assert_exclusive(&self) -> Vec<Section> {
        self.check_exclusive()
            .unwrap_or_else(|e| panic!("fencing log: {e}\n{}", self.text()))
    }

    /// The read-write property: fences grow in grant order, every section
    /// ends, and sections overlap only when both are of `readers` (the
    /// shared holders); a writer's section overlaps none. Returns the sections
    /// in grant order.
    #[track_caller]
    pub fn assert_shared_only_among(&self, readers: &[&str]) -> Vec<Section> {
        let (sections, overlaps) = self.assert_fenced();
        let reader = |described: &str| readers.contains(&described.split(' ').next().unwrap_or(""));
        for overlap in &overlaps {
            assert!(
                reader(&overlap.stale) && reader(&overlap.newer),
                "a writer shared: {} was in its section when {} began\n{self}",
                overlap.stale,
                overlap.newer
            );
        }
        sections
    }

    /// The weaker property a fencing token gives when a holder could not be
    /// stopped in time (a paused process): fences still grow strictly in
    /// grant order, every section ends, and every overlap is an older fence
    /// still running while a newer one holds, which a downstream system that
    /// refuses smaller fences rejects. Returns the sections and the overlaps.
    #[track_caller]
    pub fn assert_fenced(&self) -> (Vec<Section>, Vec<Overlap>) {
        check(&self.entries()).unwrap_or_else(|e| panic!("fencing log: {e}\n{}", self.text()))
    }
}

impl fmt::Display for FenceLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

/// Shell code that waits until `path` exists (polling every 20 ms): a body
/// that holds until the test says so.
pub fn wait_for_file(path: &Path) -> String {
    format!("while [ ! -e '{}' ]; do sleep 0.02; done", path.display())
}

/// Shell code that runs until stopped by a signal.
pub const FOREVER: &str = "while :; do sleep 0.05; done";

/// Parses log lines: `start|end <fence> <ms> <who> [note...]`.
pub fn parse(text: &str) -> Result<Vec<Entry>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, line)| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let bad = || format!("fencing log line {}: bad line {line:?}", i + 1);
            if fields.len() < 3 {
                return Err(bad());
            }
            let start = match fields[0] {
                "start" => true,
                "end" => false,
                _ => return Err(bad()),
            };
            Ok(Entry {
                line: i + 1,
                start,
                fence: fields[1].parse().map_err(|_| bad())?,
                ms: fields[2].parse().map_err(|_| bad())?,
                who: fields.get(3).copied().unwrap_or("?").to_owned(),
                note: fields.get(4..).map(|n| n.join(" ")).unwrap_or_default(),
            })
        })
        .collect()
}

/// Walks the entries in order: fences strictly growing at every start, every
/// end closing an open section of the same fence, nothing left open. Returns
/// the sections in grant order and every overlap seen.
pub fn check(entries: &[Entry]) -> Result<(Vec<Section>, Vec<Overlap>), String> {
    walk(entries, false)
}

/// [`check`]; with `exclusive`, the first overlap is an error too, reported
/// in file order with the other errors.
fn walk(entries: &[Entry], exclusive: bool) -> Result<(Vec<Section>, Vec<Overlap>), String> {
    let mut open: Vec<Entry> = Vec::new();
    let mut sections: Vec<Section> = Vec::new();
    let mut overlaps = Vec::new();
    let mut last: Option<&Entry> = None;
    let describe = |e: &Entry| format!("{} (fence {}, line {})", e.who, e.fence, e.line);
    for entry in entries {
        if entry.start {
            if let Some(last) = last
                && entry.fence <= last.fence
            {
                return Err(format!(
                    "fence did not grow: {} started after {}",
                    describe(entry),
                    describe(last)
                ));
            }
            if exclusive && let Some(stale) = open.first() {
                return Err(format!(
                    "{} was still in its section when {} started",
                    describe(stale),
                    describe(entry)
                ));
            }
            for stale in &open {
                overlaps.push(Overlap {
                    stale: describe(stale),
                    newer: describe(entry),
                });
            }
            open.push(entry.clone());
            last = Some(entry);
        } else {
            let Some(i) = open.iter().position(|s| s.fence == entry.fence) else {
                return Err(format!(
                    "{} ended a section that was not open",
                    describe(entry)
                ));
            };
            let start = open.remove(i);
            sections.push(Section {
                fence: start.fence,
                who: start.who.clone(),
                start,
                end: entry.clone(),
            });
        }
    }
    if let Some(unended) = open.first() {
        return Err(format!("{} never ended", describe(unended)));
    }
    sections.sort_by_key(|h| h.start.line);
    Ok((sections, overlaps))
}

/// Fails the test unless, within `grace`, every child of `dir` is an
/// ephemeral node of a session in `alive` (the sessions the test knows to be
/// alive): no node of a dead session (a process that ended, or was killed
/// and whose session has had `grace` to expire) is left. Returns the
/// children.
#[track_caller]
pub fn assert_no_dead_nodes(zk: &Zk, dir: &str, alive: &[i64], grace: Duration) -> Vec<String> {
    let start = std::time::Instant::now();
    loop {
        let mut dead = Vec::new();
        let children = zk.children_if_any(dir);
        for child in &children {
            let path = format!("{dir}/{child}");
            if let Some(stat) = zk.exists(&path)
                && !alive.contains(&stat.ephemeral_owner)
            {
                dead.push(format!("{child} (owner 0x{:x})", stat.ephemeral_owner));
            }
        }
        if dead.is_empty() {
            return children;
        }
        if start.elapsed() >= grace {
            panic!(
                "nodes of dead sessions left in {dir} after {grace:?}: {dead:?} \
                 (alive: {:?})",
                alive.iter().map(|s| format!("0x{s:x}")).collect::<Vec<_>>()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How long a fenced contender may take to hold, or to join the queue.
pub const WAIT: Duration = Duration::from_secs(20);

/// One scenario around one lock: a test's chroot, a scratch directory with
/// the fencing log every section writes to, the lock's name and directory,
/// and a `done` file that ends the sections waiting for it
/// ([`Stage::until_done`], [`Stage::finish`]).
pub struct Stage {
    env: TestEnv,
    scratch: Scratch,
    log: FenceLog,
    lock: String,
    dir: String,
}

impl Stage {
    /// A stage for lock `lock` (directory `/locks/LOCK`) in `env`.
    pub fn new(env: TestEnv, lock: &str) -> Stage {
        let scratch = Scratch::new();
        let log = FenceLog::new(&scratch);
        Stage {
            env,
            scratch,
            log,
            lock: lock.to_owned(),
            dir: format!("/locks/{lock}"),
        }
    }

    /// A stage for `lock` in a chroot of its own on the shared server.
    pub fn on_shared_server(lock: &str) -> Stage {
        Stage::new(TestEnv::new(), lock)
    }

    /// A stage for `lock` on the shared server with a fault proxy in front
    /// of it, and the connect string (with the stage's chroot) through the
    /// proxy.
    pub fn behind_a_proxy(lock: &str) -> (Stage, FaultProxy, String) {
        let stage = Stage::on_shared_server(lock);
        let proxy = FaultProxy::start(&super::shared_server().address());
        let through_proxy = proxy.hosts(stage.env());
        (stage, proxy, through_proxy)
    }

    pub fn env(&self) -> &TestEnv {
        &self.env
    }

    /// The test's client, rooted at its chroot.
    pub fn zk(&self) -> &Zk {
        self.env.zk()
    }

    /// The connect string straight to the servers, with the chroot.
    pub fn hosts(&self) -> String {
        self.env.hosts()
    }

    pub fn log(&self) -> &FenceLog {
        &self.log
    }

    /// The lock's name, as given to `zklock lock`.
    pub fn lock(&self) -> &str {
        &self.lock
    }

    /// The lock's directory in the chroot.
    pub fn dir(&self) -> &str {
        &self.dir
    }

    /// The path of `name` in the scratch directory.
    pub fn file(&self, name: &str) -> PathBuf {
        self.scratch.file(name)
    }

    /// A section body that runs until [`Stage::finish`].
    pub fn until_done(&self) -> String {
        wait_for_file(&self.file("done"))
    }

    /// Creates the `done` file: the sections running [`Stage::until_done`]
    /// end.
    pub fn finish(&self) {
        touch(&self.file("done"));
    }

    /// `zklock -H HOSTS -v lock LOCK OPTIONS... -- <fenced section of WHO
    /// running BODY>`, logging JSON events.
    pub fn fenced(&self, hosts: &str, options: &[&str], who: &str, body: &str) -> Zklock {
        Zklock::new(["-v", "lock", &self.lock])
            .json_log()
            .hosts(hosts)
            .args(options)
            .arg("--")
            .args(self.log.command(who, body))
    }

    /// Starts the contender labelled `holder` through `hosts`, and returns
    /// it once its command holds the lock.
    pub fn holder(&self, hosts: &str, options: &[&str], body: &str) -> (Running, FencedCommand) {
        holder(self.fenced(hosts, options, "holder", body))
    }

    /// Starts a contender that must wait, and returns it once its node is
    /// the `n`th in the lock's directory.
    pub fn queued(&self, n: usize, zklock: Zklock) -> Running {
        let mut running = zklock.spawn();
        wait_until(WAIT, &format!("{n} contenders in {}", self.dir), || {
            if let Some(run) = running.try_wait() {
                panic!("a waiter ended early: {run:?}");
            }
            self.zk().children_if_any(&self.dir).len() == n
        });
        running
    }

    /// The contender labelled `waiter`, second in the queue behind the
    /// holder, straight to the servers with default options; its section
    /// does nothing.
    pub fn waiter(&self) -> Running {
        self.waiter_with(&[])
    }

    /// [`Stage::waiter`] with `options`.
    pub fn waiter_with(&self, options: &[&str]) -> Running {
        self.waiter_through(&self.hosts(), options)
    }

    /// [`Stage::waiter`] through `hosts`, with `options`.
    pub fn waiter_through(&self, hosts: &str, options: &[&str]) -> Running {
        self.queued(2, self.fenced(hosts, options, "waiter", "true"))
    }

    /// Fails unless `held`'s node is still there and still the one it was
    /// granted (the same czxid): the holder kept the lock through a fault.
    #[track_caller]
    pub fn assert_keeps_its_node(&self, fenced: &FencedCommand) {
        assert_eq!(
            self.zk().exists(&fenced.node).map(|s| s.czxid),
            Some(fenced.fence),
            "the holder keeps its node"
        );
    }

    /// Fails unless the log shows exclusive sections granted to `order`, in
    /// that order; returns the sections.
    #[track_caller]
    pub fn assert_granted(&self, order: &[&str]) -> Vec<Section> {
        let sections = self.log.assert_exclusive();
        assert_eq!(grant_order(&sections), order, "{}", self.log);
        sections
    }

    /// The closing check of a scenario whose processes have all ended: no
    /// node of theirs is left in the lock's directory.
    #[track_caller]
    pub fn assert_no_dead_nodes(&self) -> Vec<String> {
        self.assert_no_dead_nodes_within(Duration::ZERO)
    }

    /// [`assert_no_dead_nodes`] in the lock's directory, with no session
    /// alive, allowing `grace` for sessions of killed processes to expire.
    #[track_caller]
    pub fn assert_no_dead_nodes_within(&self, grace: Duration) -> Vec<String> {
        assert_no_dead_nodes(self.zk(), &self.dir, &[], grace)
    }
}

/// Starts `zklock` and returns it once its fenced command holds the lock.
pub fn holder(zklock: Zklock) -> (Running, FencedCommand) {
    let mut running = zklock.spawn();
    let fenced = FencedCommand::parse(&running.next_line(WAIT));
    (running, fenced)
}

/// Who held, in grant order.
pub fn grant_order(sections: &[Section]) -> Vec<&str> {
    sections.iter().map(|h| h.who.as_str()).collect()
}

/// Creates an empty file at `path`: a body waiting for it
/// ([`wait_for_file`]) ends.
pub fn touch(path: &Path) {
    std::fs::write(path, "").expect("touch");
}
