//! Running the `zklock` binary from tests, and the per-test environment.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;

use super::client::Zk;
use super::server::{ZkEnsemble, ZkServer, shared_server};
use super::{free_ports, test_name, unique, wait_for};

/// The zklock binary under test.
pub const ZKLOCK: &str = env!("CARGO_BIN_EXE_zklock");

/// How long [`Zklock::run`] lets a command run before it fails the test.
pub const DEFAULT_RUN_TIMEOUT: Duration = Duration::from_secs(60);

/// Environment variables zklock reads; cleared for every command so the
/// developer's shell cannot leak into a test.
const CLEARED_ENV: &[&str] = &[
    "ZKLOCK_HOSTS",
    "ZK_HOSTS",
    "ZKLOCK_AUTH",
    "ZKLOCK_ROOT",
    "NO_COLOR",
];

/// One test's corner of a ZooKeeper server: a unique chroot
/// (`/t-<n>-<test name>`), zklock commands aimed at it, and a [`Zk`] client
/// rooted at it.
pub struct TestEnv {
    servers: String,
    chroot: String,
    zk: Zk,
}

impl TestEnv {
    /// A fresh chroot on the binary's [`shared_server`].
    pub fn new() -> TestEnv {
        TestEnv::on(&shared_server().connect_string())
    }

    /// A fresh chroot on a dedicated server.
    pub fn with_server(server: &ZkServer) -> TestEnv {
        TestEnv::on(&server.connect_string())
    }

    /// A fresh chroot on an ensemble (the connect string lists every member).
    pub fn with_ensemble(ensemble: &ZkEnsemble) -> TestEnv {
        TestEnv::on(&ensemble.connect_string())
    }

    /// A fresh chroot on the servers of `servers` (`host:port[,...]`, no chroot).
    pub fn on(servers: &str) -> TestEnv {
        let chroot = format!("/t-{}-{}", unique(), test_name());
        let root = Zk::connect(servers);
        root.create(&chroot, b"");
        TestEnv {
            servers: servers.to_owned(),
            zk: root.chroot(&chroot),
            chroot,
        }
    }

    /// The connect string with this test's chroot: `127.0.0.1:PORT/t-...`.
    pub fn hosts(&self) -> String {
        format!("{}{}", self.servers, self.chroot)
    }

    /// The connect string without chroot.
    pub fn servers(&self) -> &str {
        &self.servers
    }

    /// This test's chroot (`/t-...`).
    pub fn chroot(&self) -> &str {
        &self.chroot
    }

    /// A client whose paths are relative to this test's chroot.
    pub fn zk(&self) -> &Zk {
        &self.zk
    }

    /// Another session in this test's chroot (another "process").
    pub fn connect(&self) -> Zk {
        Zk::connect(&self.hosts())
    }

    /// `zklock -H <hosts with chroot> ARGS...`.
    pub fn zklock<I, S>(&self, args: I) -> Zklock
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Zklock::new(args).hosts(self.hosts())
    }
}

/// A zklock command line to run: `zklock [-H HOSTS] ARGS...` with the
/// environment cleared of zklock's variables.
#[derive(Clone, Debug)]
pub struct Zklock {
    args: Vec<OsString>,
    hosts: Option<String>,
    env: Vec<(OsString, Option<OsString>)>,
    stdin: Option<Vec<u8>>,
    timeout: Duration,
}

impl Zklock {
    /// `zklock ARGS...` without `-H`.
    pub fn new<I, S>(args: I) -> Zklock
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Zklock {
            args: args.into_iter().map(|a| a.as_ref().to_owned()).collect(),
            hosts: None,
            env: Vec::new(),
            stdin: None,
            timeout: DEFAULT_RUN_TIMEOUT,
        }
    }

    /// Passes `-H HOSTS` (first, before the other arguments).
    pub fn hosts(mut self, hosts: impl Into<String>) -> Zklock {
        self.hosts = Some(hosts.into());
        self
    }

    /// Leaves `-H` out (to test the environment fallbacks).
    pub fn no_hosts(mut self) -> Zklock {
        self.hosts = None;
        self
    }

    /// Appends an argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Zklock {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Appends arguments.
    pub fn args<I, S>(mut self, args: I) -> Zklock
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Sets an environment variable (after the zklock variables were cleared).
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Zklock {
        self.env
            .push((key.as_ref().to_owned(), Some(value.as_ref().to_owned())));
        self
    }

    /// `-v` logging as JSON lines, whose `event` fields tests may wait for
    /// (see [`Running::log_events`]); the `-v` itself is the caller's.
    pub fn json_log(self) -> Zklock {
        self.env("ZKLOCK_LOG_FORMAT", "json")
    }

    /// Fails the test when [`Zklock::run`] takes longer (default 60 s).
    pub fn timeout(mut self, timeout: Duration) -> Zklock {
        self.timeout = timeout;
        self
    }

    /// The full argument list after the program name.
    pub fn argv(&self) -> Vec<OsString> {
        let mut argv = Vec::new();
        if let Some(hosts) = &self.hosts {
            argv.push("-H".into());
            argv.push(hosts.into());
        }
        argv.extend(self.args.iter().cloned());
        argv
    }

    /// The command line, for messages.
    pub fn cmdline(&self) -> String {
        let mut line = String::from("zklock");
        for arg in self.argv() {
            let arg = arg.to_string_lossy();
            if !arg.is_empty()
                && arg
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:,=@%+".contains(c))
            {
                line += &format!(" {arg}");
            } else {
                line += &format!(" '{}'", arg.replace('\'', "'\\''"));
            }
        }
        line
    }

    /// The `std::process::Command` this stands for (stdio not set).
    pub fn command(&self) -> Command {
        self.through(&[])
    }

    /// [`Zklock::command`], with zklock's command line given to `wrapper`
    /// as its last arguments (`nohup`, `sh -c '...; exec "$@"' sh`).
    pub fn through(&self, wrapper: &[&str]) -> Command {
        let mut command = match wrapper.split_first() {
            Some((program, args)) => {
                let mut command = Command::new(program);
                command.args(args).arg(ZKLOCK);
                command
            }
            None => Command::new(ZKLOCK),
        };
        command.args(self.argv());
        for key in CLEARED_ENV {
            command.env_remove(key);
        }
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("ZKLOCK_") {
                command.env_remove(key);
            }
        }
        for (key, value) in &self.env {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        command
    }

    /// Runs to completion (failing the test after the timeout) and returns
    /// the exit status and output.
    pub fn run(&self) -> Run {
        self.spawn().wait(self.timeout)
    }

    /// Runs to completion with its output thrown away, and returns its exit
    /// code and its peak resident memory in bytes, as the kernel counted it
    /// when it ended (`ru_maxrss`): exact, where sampling its status could
    /// miss the peak. A small Python starts it and reads its usage: a
    /// process counts the memory of the one that started it until it
    /// execs, and this test process is large.
    pub fn run_for_peak_memory(&self) -> (Option<i32>, u64) {
        const MEASURE: &str = "import resource, subprocess, sys\n\
            quiet = subprocess.DEVNULL\n\
            run = subprocess.run(sys.argv[1:], stdin=quiet, stdout=quiet, stderr=quiet)\n\
            print(run.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n";
        let out = self
            .through(&["/usr/bin/python3", "-c", MEASURE])
            .output()
            .unwrap_or_else(|e| panic!("start {}: {e}", self.cmdline()));
        let said = String::from_utf8_lossy(&out.stdout);
        let (code, kib) = said
            .trim()
            .split_once(' ')
            .unwrap_or_else(|| panic!("measuring {}: {said:?}", self.cmdline()));
        let kib: u64 = kib.parse().expect("ru_maxrss in KiB");
        (code.parse().ok().filter(|code| *code >= 0), kib * 1024)
    }

    /// Starts the command and returns at once; its output is collected in
    /// the background. Dropping the [`Running`] kills it.
    pub fn spawn(&self) -> Running {
        Running::start(self.command(), self.cmdline(), self.stdin.clone())
    }
}

impl Running {
    /// Starts any command with stdout and stderr captured in the background
    /// (stdin gets `stdin`, or /dev/null). `cmdline` names it in messages.
    pub fn start(mut command: Command, cmdline: String, stdin: Option<Vec<u8>>) -> Running {
        command.stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        Running::started(command, cmdline, stdin)
    }

    /// Starts a command whose stdin the caller has set (a terminal, say),
    /// with stdout and stderr captured in the background.
    pub fn start_with_stdin(command: Command, cmdline: String) -> Running {
        Running::started(command, cmdline, None)
    }

    fn started(mut command: Command, cmdline: String, stdin: Option<Vec<u8>>) -> Running {
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let started = Instant::now();
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {cmdline}: {e}"));
        if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
            std::thread::spawn(move || {
                let _ = pipe.write_all(&bytes);
            });
        }
        let stdout = Capture::start(child.stdout.take().expect("piped stdout"));
        let stderr = Capture::start(child.stderr.take().expect("piped stderr"));
        Running {
            child,
            cmdline,
            started,
            stdout,
            stderr,
            lines_read: 0,
            finished: None,
        }
    }
}

/// Output collected from a pipe by a background thread.
#[derive(Clone)]
struct Capture {
    bytes: Arc<Mutex<Vec<u8>>>,
    closed: Arc<AtomicBool>,
}

impl Capture {
    fn start(mut pipe: impl Read + Send + 'static) -> Capture {
        let capture = Capture {
            bytes: Arc::default(),
            closed: Arc::default(),
        };
        let writer = capture.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match pipe.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => writer
                        .bytes
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .extend_from_slice(&buf[..n]),
                }
            }
            writer.closed.store(true, Ordering::SeqCst);
        });
        capture
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes.lock().unwrap_or_else(|p| p.into_inner())).into_owned()
    }

    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }
}

/// A zklock process started by [`Zklock::spawn`]. Dropping it SIGKILLs the
/// process if it still runs.
pub struct Running {
    child: Child,
    cmdline: String,
    started: Instant,
    stdout: Capture,
    stderr: Capture,
    lines_read: usize,
    finished: Option<Run>,
}

impl Running {
    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Stdout so far.
    pub fn stdout(&self) -> String {
        self.stdout.text()
    }

    /// Stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.text()
    }

    /// The `-v` log events named `event` so far, from a zklock started with
    /// [`Zklock::json_log`]: the declared interface of its log, not the
    /// wording of its messages. Lines that are not JSON (zklock's own error
    /// and loss reports) are passed over.
    pub fn log_events(&self, event: &str) -> Vec<serde_json::Value> {
        self.stderr()
            .lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter(|line| line["event"] == event)
            .collect()
    }

    /// Waits for the next complete stdout line not returned before (e.g. the
    /// token `zklock lock` prints) and returns it without the newline. Panics
    /// on timeout, or when the process ends without printing one.
    pub fn next_line(&mut self, timeout: Duration) -> String {
        let what = format!(
            "`{}` prints stdout line {}",
            self.cmdline,
            self.lines_read + 1
        );
        let skip = self.lines_read;
        let line = wait_for(timeout, &what, || {
            let text = self.stdout.text();
            let complete: Vec<&str> = text
                .split_inclusive('\n')
                .filter(|l| l.ends_with('\n'))
                .collect();
            if let Some(line) = complete.get(skip) {
                return Some(line.trim_end_matches('\n').to_owned());
            }
            if self.stdout.is_closed() {
                panic!(
                    "`{}` closed stdout without printing line {}\nstdout:\n{}\nstderr:\n{}",
                    self.cmdline,
                    skip + 1,
                    text,
                    self.stderr.text()
                );
            }
            None
        });
        self.lines_read += 1;
        line
    }

    /// Waits until stdout satisfies `condition`; panics with `what` and the
    /// output on timeout.
    pub fn wait_for_stdout(&self, timeout: Duration, what: &str, condition: impl Fn(&str) -> bool) {
        self.wait_for_output(timeout, what, || condition(&self.stdout.text()));
    }

    /// Waits until stderr satisfies `condition`; panics with `what` and the
    /// output on timeout.
    pub fn wait_for_stderr(&self, timeout: Duration, what: &str, condition: impl Fn(&str) -> bool) {
        self.wait_for_output(timeout, what, || condition(&self.stderr.text()));
    }

    fn wait_for_output(&self, timeout: Duration, what: &str, mut condition: impl FnMut() -> bool) {
        let start = Instant::now();
        while !condition() {
            if start.elapsed() > timeout {
                panic!(
                    "timed out after {timeout:?} waiting until {what} (`{}`)\nstdout:\n{}\nstderr:\n{}",
                    self.cmdline,
                    self.stdout.text(),
                    self.stderr.text()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Sends a signal (e.g. `libc::SIGTERM`) to the process.
    pub fn signal(&self, signal: i32) {
        if self.finished.is_none() {
            // SAFETY: kill(2) has no memory-safety preconditions.
            unsafe {
                libc::kill(self.child.id() as i32, signal);
            }
        }
    }

    /// The result if the process has ended, without waiting.
    pub fn try_wait(&mut self) -> Option<Run> {
        if self.finished.is_none() {
            let status = self
                .child
                .try_wait()
                .unwrap_or_else(|e| panic!("wait for `{}`: {e}", self.cmdline))?;
            self.finish(status);
        }
        self.finished.clone()
    }

    /// True while the process runs.
    pub fn is_running(&mut self) -> bool {
        self.try_wait().is_none()
    }

    /// Waits for the process to end; on timeout kills it and fails the test
    /// with its output so far.
    pub fn wait(&mut self, timeout: Duration) -> Run {
        let start = Instant::now();
        loop {
            if let Some(run) = self.try_wait() {
                return run;
            }
            if start.elapsed() > timeout {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "`{}` did not finish within {timeout:?}; killed it\nstdout:\n{}\nstderr:\n{}",
                    self.cmdline,
                    self.stdout.text(),
                    self.stderr.text()
                );
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// SIGKILLs the process and returns its result.
    pub fn kill(&mut self) -> Run {
        if self.finished.is_none() {
            let _ = self.child.kill();
        }
        self.wait(Duration::from_secs(10))
    }

    fn finish(&mut self, status: ExitStatus) {
        let elapsed = self.started.elapsed();
        // The pipes close when the process ends, unless a grandchild it left
        // behind holds them: then take what is there after a short grace.
        let grace = Instant::now();
        while !(self.stdout.is_closed() && self.stderr.is_closed())
            && grace.elapsed() < Duration::from_secs(2)
        {
            std::thread::sleep(Duration::from_millis(2));
        }
        use std::os::unix::process::ExitStatusExt;
        self.finished = Some(Run {
            cmdline: self.cmdline.clone(),
            status,
            code: status.code(),
            signal: status.signal(),
            stdout: self.stdout.text(),
            stderr: self.stderr.text(),
            elapsed,
        });
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.finished.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// How a zklock command ended, and what it printed.
#[derive(Clone)]
pub struct Run {
    pub cmdline: String,
    pub status: ExitStatus,
    /// The exit code, `None` when killed by a signal.
    pub code: Option<i32>,
    /// The signal that killed it, if one did.
    pub signal: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// From spawn to exit.
    pub elapsed: Duration,
}

impl Run {
    /// Fails the test (showing the output) unless the exit code is `code`.
    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Run {
        if self.code != Some(code) {
            panic!("expected exit code {code}, got {self:?}");
        }
        self
    }

    /// Fails the test unless the process died of `signal` (not an exit
    /// code, even 128+n) and left no core dump.
    #[track_caller]
    pub fn assert_died_of(&self, signal: i32) -> &Run {
        use std::os::unix::process::ExitStatusExt;
        if self.signal != Some(signal) || self.status.core_dumped() {
            panic!("expected death by signal {signal} without a core, got {self:?}");
        }
        self
    }

    /// Fails the test unless the run took a time within `range`.
    #[track_caller]
    pub fn assert_took(&self, range: std::ops::Range<Duration>) -> &Run {
        if !range.contains(&self.elapsed) {
            panic!("expected a run of {range:?}, got {self:?}");
        }
        self
    }

    /// [`Run::assert_code`]`(0)`.
    #[track_caller]
    pub fn assert_success(&self) -> &Run {
        self.assert_code(0)
    }

    /// Fails the test unless stdout contains `needle`.
    #[track_caller]
    pub fn assert_stdout_contains(&self, needle: &str) -> &Run {
        if !self.stdout.contains(needle) {
            panic!("expected stdout to contain {needle:?}, got {self:?}");
        }
        self
    }

    /// Fails the test unless stderr contains `needle`.
    #[track_caller]
    pub fn assert_stderr_contains(&self, needle: &str) -> &Run {
        if !self.stderr.contains(needle) {
            panic!("expected stderr to contain {needle:?}, got {self:?}");
        }
        self
    }

    /// Fails the test unless it took less than `limit`.
    #[track_caller]
    pub fn assert_faster_than(&self, limit: Duration) -> &Run {
        if self.elapsed >= limit {
            panic!("expected it to end within {limit:?}, got {self:?}");
        }
        self
    }

    /// Stdout parsed as JSON into `T`; fails the test with the output when
    /// it does not parse.
    #[track_caller]
    pub fn json<T: DeserializeOwned>(&self) -> T {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not a {}: {e}\n{self:?}",
                std::any::type_name::<T>()
            )
        })
    }

    /// Stdout as JSON Lines, each parsed into `T`.
    #[track_caller]
    pub fn json_lines<T: DeserializeOwned>(&self) -> Vec<T> {
        self.stdout
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| {
                serde_json::from_str(line).unwrap_or_else(|e| {
                    panic!(
                        "line {line:?} is not a {}: {e}\n{self:?}",
                        std::any::type_name::<T>()
                    )
                })
            })
            .collect()
    }

    /// Stdout's lines.
    pub fn stdout_lines(&self) -> Vec<&str> {
        self.stdout.lines().collect()
    }
}

impl fmt::Debug for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let how = match (self.code, self.signal) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(signal)) => format!("killed by signal {signal}"),
            (None, None) => format!("{}", self.status),
        };
        write!(
            f,
            "`{}`: {how} after {:?}\n--- stdout:\n{}\n--- stderr:\n{}\n---",
            self.cmdline, self.elapsed, self.stdout, self.stderr
        )
    }
}

/// A loopback port that accepts TCP connections (into the kernel's backlog)
/// but never answers: a server that hangs, unlike a closed port which
/// refuses at once. Lives until dropped.
pub struct Blackhole {
    listener: TcpListener,
}

impl Blackhole {
    pub fn new() -> Blackhole {
        Blackhole {
            listener: TcpListener::bind("127.0.0.1:0").expect("bind a blackhole port"),
        }
    }

    pub fn port(&self) -> u16 {
        self.listener.local_addr().expect("local address").port()
    }

    /// `127.0.0.1:PORT`.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port())
    }
}

/// A loopback port nobody listens on (it was free a moment ago):
/// connections to it are refused.
pub fn dead_port() -> u16 {
    free_ports(1)[0]
}
