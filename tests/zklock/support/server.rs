//! Real ZooKeeper servers for the tests: standalone, shared, and ensembles.
//!
//! Every Java process is started by a small `sh` supervisor whose stdin is a
//! pipe held by the test process. The supervisor starts and kills Java on
//! request, and when its stdin reaches EOF (the server value was dropped, or
//! the test process ended in any way, even SIGKILL) it kills Java and removes
//! the server's directory. So a crashed or killed test leaves nothing running
//! and nothing on disk, even for the shared server, which lives in a static
//! that Rust never drops.

use std::collections::BTreeMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use super::proxy::{FaultProxy, Mode};
use super::{ZOOKEEPER_JAR, free_ports, process_alive, require_zookeeper, test_name, unique};

/// How long a server may take to start serving.
const START_TIMEOUT: Duration = Duration::from_secs(20);
/// How long an ensemble may take to elect a leader and serve on every member.
const ENSEMBLE_TIMEOUT: Duration = Duration::from_secs(30);
/// How often a server's start is retried after it died at once (a port taken
/// between choosing it and binding it).
const START_ATTEMPTS: usize = 4;

/// The supervisor: `sh -c SUPERVISOR zk-supervisor DIR CFG JAVA-COMMAND...`.
/// Commands on stdin, one per line, each acknowledged on stdout:
/// `start` → `started PID`; `kill` → `stopped` (SIGKILL, then reap).
/// EOF on stdin: kill Java, remove DIR, exit.
const SUPERVISOR: &str = r#"
dir=$1; cfg=$2; shift 2
pid=
finish() {
  if [ -n "$pid" ]; then kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi
  rm -rf "$dir"
}
trap 'finish; exit 1' HUP INT TERM
while read -r cmd; do
  case $cmd in
    start)
      "$@" "$cfg" </dev/null >>"$dir/server.log" 2>&1 &
      pid=$!
      echo "started $pid" ;;
    kill)
      if [ -n "$pid" ]; then kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=; fi
      echo stopped ;;
    *)
      echo "unknown command $cmd" ;;
  esac
done
finish
"#;

/// Extra settings for a server or ensemble.
#[derive(Clone, Debug, Default)]
pub struct ZkOptions {
    /// Extra `zoo.cfg` lines (`key=value`), after the defaults (later wins).
    pub config: Vec<String>,
    /// Extra JVM flags (`-Dkey=value`).
    pub jvm_flags: Vec<String>,
    /// Extra jars on the server's classpath.
    pub classpath: Vec<String>,
    /// The release to run; Debian's when `None`.
    pub release: Option<Release>,
    /// In an ensemble: this member observes, and does not vote.
    pub observer: bool,
    /// In an ensemble: this member's server lines name each member's
    /// client address (`;127.0.0.1:PORT`), as a dynamic configuration
    /// does, so that `/zookeeper/config` carries them.
    pub client_addresses: bool,
    /// Serves the AdminServer on a port of its own ([`ZkServer::admin_port`]).
    pub admin: bool,
}

/// What ZooKeeper's AdminServer needs on the classpath: Jetty 9 and the
/// servlet API (Debian's libjetty9-java and libservlet-api-java).
const ADMIN_SERVER_JARS: &[&str] = &[
    "/usr/share/java/servlet-api.jar",
    "/usr/share/java/jetty9-server.jar",
    "/usr/share/java/jetty9-servlet.jar",
    "/usr/share/java/jetty9-http.jar",
    "/usr/share/java/jetty9-io.jar",
    "/usr/share/java/jetty9-util.jar",
    "/usr/share/java/jetty9-security.jar",
    "/usr/share/java/jetty9-util-ajax.jar",
];

impl ZkOptions {
    /// Adds a `zoo.cfg` line, e.g. `"maxSessionTimeout=5000"`.
    pub fn config(mut self, line: impl Into<String>) -> Self {
        self.config.push(line.into());
        self
    }

    /// Adds a JVM flag, e.g. `"-Dzookeeper.foo=bar"`.
    pub fn jvm_flag(mut self, flag: impl Into<String>) -> Self {
        self.jvm_flags.push(flag.into());
        self
    }

    /// An observer of its ensemble ([`ZkOptions::observer`]).
    pub fn observer(mut self) -> Self {
        self.observer = true;
        self.config("peerType=observer")
    }

    /// Server lines with client addresses ([`ZkOptions::client_addresses`]).
    pub fn client_addresses(mut self) -> Self {
        self.client_addresses = true;
        self
    }

    /// Runs `release` instead of Debian's server.
    pub fn release(mut self, release: &Release) -> Self {
        self.release = Some(release.clone());
        self
    }

    /// Adds a jar to the server's classpath.
    pub fn jar(mut self, jar: impl Into<String>) -> Self {
        self.classpath.push(jar.into());
        self
    }

    /// Serves the AdminServer (HTTP commands such as `connections`) on
    /// 127.0.0.1, on a port the harness chooses with the server's others
    /// ([`ZkServer::admin_port`]).
    pub fn admin_server(mut self) -> Self {
        let missing: Vec<&str> = ADMIN_SERVER_JARS
            .iter()
            .copied()
            .filter(|jar| !Path::new(jar).is_file())
            .collect();
        assert!(
            missing.is_empty(),
            "the AdminServer needs Jetty: run scripts/setup (missing {missing:?})"
        );
        self.classpath
            .extend(ADMIN_SERVER_JARS.iter().map(|jar| jar.to_string()));
        self.admin = true;
        self
    }

    /// Allows only the four-letter words the harness itself uses (`conf`,
    /// `srvr`, `mntr`, `ruok`): `cons` and `wchc` are refused, as on a
    /// server with the default whitelist (`srvr`; zklock sends none of the
    /// other three).
    pub fn harness_words_only(self) -> Self {
        self.four_letter_words(&[])
    }

    /// Allows the four-letter words the harness uses and `words` besides
    /// (`cons`, `wchc`), and no other.
    pub fn four_letter_words(self, words: &[&str]) -> Self {
        let mut allowed = vec!["conf", "srvr", "mntr", "ruok"];
        allowed.extend_from_slice(words);
        self.config(format!("4lw.commands.whitelist={}", allowed.join(",")))
    }

    /// Makes `super` with `password` ZooKeeper's super user, whom no ACL
    /// refuses (`--auth digest:super:PASSWORD`).
    pub fn super_user(self, password: &str) -> Self {
        let digest = super::digest::digest_id("super", password);
        self.jvm_flag(format!(
            "-Dzookeeper.DigestAuthenticationProvider.superDigest={digest}"
        ))
    }

    /// Lets a member that lost its quorum serve read-only clients
    /// (`-Dreadonlymode.enabled=true`), for `--read-only` tests.
    ///
    /// With local sessions enabled too: a read-only server can only make
    /// local sessions, and without `localSessionsEnabled` it turns every
    /// session request down with a bare NOTREADONLY reply header where the
    /// client expects a ConnectResponse, which no client can connect with.
    /// (Sessions still become global when they make an ephemeral node.)
    pub fn read_only_mode(self) -> Self {
        self.jvm_flag("-Dreadonlymode.enabled=true")
            .config("localSessionsEnabled=true")
            .config("localSessionsUpgradingEnabled=true")
    }
}

/// One supervised Java process.
struct Supervisor {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    /// The Java pid while it was started and not yet killed.
    java: Option<i32>,
}

impl Supervisor {
    fn spawn(dir: &Path, cfg: &Path, java: &[String]) -> Supervisor {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(SUPERVISOR)
            .arg("zk-supervisor")
            .arg(dir)
            .arg(cfg)
            .args(java)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            // Its own process group: a Ctrl-C on the terminal kills the test
            // process, whose death then closes our stdin and cleans up.
            .process_group(0)
            .spawn()
            .expect("spawn the ZooKeeper supervisor (sh)");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("supervisor stdout"));
        Supervisor {
            child,
            stdin,
            stdout,
            java: None,
        }
    }

    fn request(&mut self, command: &str) -> String {
        let stdin = self.stdin.as_mut().expect("supervisor already shut down");
        writeln!(stdin, "{command}")
            .and_then(|()| stdin.flush())
            .unwrap_or_else(|e| panic!("ZooKeeper supervisor is gone ({command}): {e}"));
        let mut reply = String::new();
        match self.stdout.read_line(&mut reply) {
            Ok(n) if n > 0 => reply.trim().to_owned(),
            other => panic!("ZooKeeper supervisor did not answer {command:?}: {other:?}"),
        }
    }

    /// Starts Java (killing a previous one first) and returns its pid.
    fn launch(&mut self) -> i32 {
        if self.java.is_some() {
            self.kill();
        }
        let reply = self.request("start");
        let pid = reply
            .strip_prefix("started ")
            .and_then(|pid| pid.parse().ok())
            .unwrap_or_else(|| panic!("unexpected supervisor reply {reply:?}"));
        self.java = Some(pid);
        pid
    }

    /// SIGKILLs Java and waits until it is reaped.
    fn kill(&mut self) {
        let reply = self.request("kill");
        assert_eq!(reply, "stopped", "unexpected supervisor reply");
        self.java = None;
    }

    /// Closes stdin: the supervisor kills Java, removes the directory, exits.
    fn shutdown(&mut self) {
        self.stdin.take();
        self.java = None;
        let _ = self.child.wait();
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn signal(pid: i32, signal: i32) {
    // SAFETY: kill(2) has no memory-safety preconditions.
    unsafe {
        libc::kill(pid, signal);
    }
}

/// The Java command line that runs a ZooKeeper server (the supervisor appends
/// the zoo.cfg path).
fn java_command(dir: &Path, options: &ZkOptions) -> Vec<String> {
    let mut command = vec![
        "java".to_owned(),
        "-Xmx256m".to_owned(),
        "-XX:+UseSerialGC".to_owned(),
        "-XX:-UsePerfData".to_owned(),
        format!("-Dzookeeper.log.dir={}", dir.display()),
        // Empty containers and expired TTL nodes go within 0.5 s, not 60 s.
        "-Dznode.container.checkIntervalMs=500".to_owned(),
    ];
    let mut classpath = match &options.release {
        None => debian_classpath(&mut command),
        Some(release) => release.classpath(&mut command),
    };
    command.extend(options.jvm_flags.iter().cloned());
    for jar in &options.classpath {
        classpath.push(':');
        classpath.push_str(jar);
    }
    command.extend([
        "-cp".to_owned(),
        classpath,
        "org.apache.zookeeper.server.quorum.QuorumPeerMain".to_owned(),
    ]);
    command
}

/// Debian's server and its logging setup; adds the logging flags to
/// `command`.
fn debian_classpath(command: &mut Vec<String>) -> String {
    let mut classpath = format!("/etc/zookeeper/conf:{ZOOKEEPER_JAR}");
    // Without an SLF4J binding ZooKeeper logs nothing; with slf4j-simple its
    // warnings and errors land in server.log, which failures quote.
    let simple = "/usr/share/java/slf4j-simple.jar";
    if Path::new(simple).is_file() {
        classpath.push(':');
        classpath.push_str(simple);
        command.push("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn".to_owned());
        command.push("-Dorg.slf4j.simpleLogger.showDateTime=true".to_owned());
    }
    classpath
}

/// The server lines scripts/versions fetches, oldest first.
pub const LINES: [&str; 6] = ["3.4", "3.5", "3.6", "3.7", "3.8", "3.9"];

/// Where scripts/versions keeps what it fetched: `$ZKLOCK_VERSIONS`, else
/// `$XDG_CACHE_HOME/zklock/versions`, else `~/.cache/zklock/versions`.
pub fn versions_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("ZKLOCK_VERSIONS") {
        return PathBuf::from(dir);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache")
        });
    cache.join("zklock/versions")
}

/// The exact version scripts/versions fetched for `piece` (`zookeeper-3.5`,
/// `curator`, `kazoo`, `go-zookeeper`) and its directory; panics naming the
/// command that fetches it.
pub fn fetched(piece: &str) -> (String, PathBuf) {
    let dir = versions_dir().join(piece);
    match std::fs::read_to_string(dir.join("version")) {
        Ok(version) => (version.trim().to_owned(), dir),
        Err(e) => panic!(
            "{piece} has not been fetched ({}: {e}): run scripts/setup (or scripts/versions)",
            dir.display()
        ),
    }
}

/// One ZooKeeper release from Maven Central (fetched by scripts/versions),
/// to run instead of Debian's.
#[derive(Clone, Debug)]
pub struct Release {
    /// The server line, e.g. `3.5`.
    pub line: &'static str,
    /// The exact release, e.g. `3.5.10`.
    pub version: String,
    lib: PathBuf,
}

impl Release {
    /// The newest release of `line` that scripts/versions fetched.
    pub fn of(line: &'static str) -> Release {
        let (version, dir) = fetched(&format!("zookeeper-{line}"));
        Release {
            line,
            version,
            lib: dir.join("lib"),
        }
    }

    /// Its jars, and the flag that points its logging backend (log4j up to
    /// 3.7, Logback from 3.8) at a warnings-only setup; adds the flags to
    /// `command`.
    fn classpath(&self, command: &mut Vec<String>) -> String {
        let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/versions");
        command.push(format!(
            "-Dlog4j.configuration=file:{}",
            config.join("log4j.properties").display()
        ));
        command.push(format!(
            "-Dlogback.configurationFile={}",
            config.join("logback.xml").display()
        ));
        format!("{}/*", self.lib.display())
    }
}

/// The classpath of the jars of `release` (Debian's when `None`) with
/// what ZooKeeper's own tools (`TxnLogToolkit`) need besides the server.
pub fn tools_classpath(release: Option<&Release>) -> String {
    let jars = match release {
        Some(release) => format!("{}/*", release.lib.display()),
        None => [
            ZOOKEEPER_JAR,
            "/usr/share/java/zookeeper-jute.jar",
            "/usr/share/java/slf4j-api.jar",
        ]
        .join(":"),
    };
    let cli = "/usr/share/java/commons-cli.jar";
    assert!(
        Path::new(cli).is_file(),
        "TxnLogToolkit needs commons-cli: run scripts/setup (or: apt-get install libcommons-cli-java)"
    );
    format!("{jars}:{cli}")
}

impl std::fmt::Display for Release {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ZooKeeper {}", self.version)
    }
}

/// A fresh directory under the system temp dir.
fn make_dir(label: &str) -> PathBuf {
    loop {
        let dir = std::env::temp_dir().join(format!(
            "zklock-test-{}-{}-{label}",
            std::process::id(),
            unique()
        ));
        match std::fs::create_dir(&dir) {
            Ok(()) => return dir,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => panic!("create {}: {e}", dir.display()),
        }
    }
}

/// Why a start did not lead to a serving server.
enum StartError {
    /// Java exited (most likely a port taken meanwhile).
    Died,
    /// It did not serve in time.
    Timeout,
}

/// A real ZooKeeper server on 127.0.0.1: standalone, or one member of a
/// [`ZkEnsemble`]. Dropping it kills Java and removes its directory.
pub struct ZkServer {
    port: u16,
    /// Its AdminServer's port, when it serves one.
    admin_port: Option<u16>,
    dir: PathBuf,
    myid: Option<u32>,
    /// What runs: a fetched release, or Debian's when `None`.
    release: Option<Release>,
    supervisor: Mutex<Supervisor>,
}

impl ZkServer {
    /// Starts a dedicated standalone server (for fault tests) and waits until
    /// it serves. tickTime 200 ms, sessions of 400 ms to 60 s, TTL nodes on,
    /// every four-letter word allowed.
    pub fn new() -> ZkServer {
        ZkServer::with_options(&ZkOptions::default())
    }

    /// [`ZkServer::new`] with extra settings.
    pub fn with_options(options: &ZkOptions) -> ZkServer {
        ZkServer::start_standalone(&test_name(), options)
    }

    fn start_standalone(label: &str, options: &ZkOptions) -> ZkServer {
        require_zookeeper();
        let dir = make_dir(label);
        std::fs::create_dir(dir.join("data")).expect("create the data dir");
        let cfg = dir.join("zoo.cfg");
        let supervisor = Supervisor::spawn(&dir, &cfg, &java_command(&dir, options));
        let mut server = ZkServer {
            port: 0,
            admin_port: None,
            dir,
            myid: None,
            release: options.release.clone(),
            supervisor: Mutex::new(supervisor),
        };
        for attempt in 1..=START_ATTEMPTS {
            let ports = free_ports(2);
            server.port = ports[0];
            server.admin_port = options.admin.then_some(ports[1]);
            let mut config = base_config(&server.data_dir(), server.port, server.admin_port);
            config.extend(options.config.iter().cloned());
            write_config(&cfg, &config);
            server.launch();
            match server.wait_serving(START_TIMEOUT) {
                Ok(()) => return server,
                Err(StartError::Died) if attempt < START_ATTEMPTS => {
                    server.lock().kill();
                    continue;
                }
                Err(_) => server.fail("did not start"),
            }
        }
        unreachable!()
    }

    /// The client port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The AdminServer's port; panics unless the server was started with
    /// [`ZkOptions::admin_server`].
    pub fn admin_port(&self) -> u16 {
        self.admin_port
            .unwrap_or_else(|| panic!("{} serves no AdminServer", self.address()))
    }

    /// `127.0.0.1:PORT`.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The connect string of this server alone, without chroot.
    pub fn connect_string(&self) -> String {
        self.address()
    }

    /// The data directory.
    pub fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// The Java pid, while started.
    pub fn pid(&self) -> Option<i32> {
        self.lock().java
    }

    /// True while Java runs (a frozen server counts as running).
    pub fn is_running(&self) -> bool {
        self.pid().is_some_and(process_alive)
    }

    /// SIGKILLs the server, as a crash would, and waits until it is gone.
    pub fn kill(&self) {
        self.lock().kill();
    }

    /// Stops the server with SIGTERM and waits until it is gone (SIGKILL
    /// after 10 s).
    pub fn stop(&self) {
        let mut supervisor = self.lock();
        if let Some(pid) = supervisor.java {
            signal(pid, libc::SIGCONT);
            signal(pid, libc::SIGTERM);
            let deadline = Instant::now() + Duration::from_secs(10);
            while process_alive(pid) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        supervisor.kill();
    }

    /// Starts the server again on the same port and data dir and waits until
    /// it serves (for an ensemble member: until it has rejoined a quorum).
    pub fn start(&self) {
        self.launch();
        if self.wait_serving(START_TIMEOUT).is_err() {
            self.fail("did not start again");
        }
    }

    /// Starts Java without waiting for it to serve (a lone ensemble member
    /// never will).
    pub fn launch(&self) {
        self.lock().launch();
    }

    /// Kills the server (SIGKILL) and starts it again on the same port and
    /// data dir; returns when it serves.
    pub fn restart(&self) {
        self.kill();
        self.start();
    }

    /// Stops the server process (SIGSTOP): it keeps its port but answers
    /// nothing, like a hung machine.
    pub fn freeze(&self) {
        if let Some(pid) = self.pid() {
            signal(pid, libc::SIGSTOP);
        }
    }

    /// Resumes a frozen server (SIGCONT).
    pub fn thaw(&self) {
        if let Some(pid) = self.pid() {
            signal(pid, libc::SIGCONT);
        }
    }

    /// Sends a four-letter word (`ruok`, `srvr`, `mntr`, `cons`, `dump`, ...)
    /// and returns the answer; panics if the server does not answer.
    pub fn four_letter(&self, word: &str) -> String {
        self.try_four_letter(word)
            .unwrap_or_else(|e| panic!("four-letter word {word:?} to {}: {e}", self.address()))
    }

    /// [`ZkServer::four_letter`], returning the I/O error instead.
    pub fn try_four_letter(&self, word: &str) -> io::Result<String> {
        four_letter(self.port, word)
    }

    /// The `mntr` counters (`zk_znode_count`, `zk_ephemerals_count`, ...).
    pub fn mntr(&self) -> BTreeMap<String, String> {
        self.four_letter("mntr")
            .lines()
            .filter_map(|line| line.split_once('\t'))
            .map(|(k, v)| (k.to_owned(), v.trim().to_owned()))
            .collect()
    }

    /// The `Mode:` that `srvr` reports (`standalone`, `leader`, `follower`,
    /// `read-only`), or `None` when the server does not serve.
    pub fn mode(&self) -> Option<String> {
        let srvr = self.try_four_letter("srvr").ok()?;
        srvr.lines()
            .find_map(|line| line.strip_prefix("Mode: "))
            .map(|mode| mode.trim().to_owned())
    }

    /// True when this very server (not another process on its port) serves
    /// requests.
    pub fn is_serving(&self) -> bool {
        let expected = format!("dataDir={}", self.data_dir().display());
        self.try_four_letter("conf")
            .is_ok_and(|conf| conf.lines().any(|line| line.starts_with(&expected)))
    }

    /// The server's log so far (warnings and errors).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    fn wait_serving(&self, timeout: Duration) -> Result<(), StartError> {
        let start = Instant::now();
        loop {
            if self.is_serving() {
                return Ok(());
            }
            if !self.is_running() {
                return Err(StartError::Died);
            }
            if start.elapsed() > timeout {
                return Err(StartError::Timeout);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn fail(&self, what: &str) -> ! {
        let log = self.log();
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        panic!(
            "{} at {} ({}) {what}; running: {}; last log lines:\n{}",
            self.describe(),
            self.address(),
            self.dir.display(),
            self.is_running(),
            tail.join("\n")
        );
    }

    /// "ZooKeeper 3.5.10", or Debian's, for messages.
    pub fn describe(&self) -> String {
        self.release
            .as_ref()
            .map_or_else(|| "ZooKeeper (Debian's)".to_owned(), Release::to_string)
    }

    fn lock(&self) -> MutexGuard<'_, Supervisor> {
        self.supervisor
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Drop for ZkServer {
    fn drop(&mut self) {
        // Closing the supervisor's stdin kills Java and removes the dir.
        self.lock().shutdown();
    }
}

fn base_config(data_dir: &Path, port: u16, admin_port: Option<u16>) -> Vec<String> {
    let mut config = vec![
        "tickTime=200".to_owned(),
        format!("dataDir={}", data_dir.display()),
        format!("clientPort={port}"),
        "clientPortAddress=127.0.0.1".to_owned(),
        "extendedTypesEnabled=true".to_owned(),
        "4lw.commands.whitelist=*".to_owned(),
        "minSessionTimeout=400".to_owned(),
        "maxSessionTimeout=60000".to_owned(),
    ];
    match admin_port {
        Some(admin_port) => config.extend([
            "admin.enableServer=true".to_owned(),
            format!("admin.serverPort={admin_port}"),
            "admin.serverAddress=127.0.0.1".to_owned(),
        ]),
        None => config.push("admin.enableServer=false".to_owned()),
    }
    config
}

fn write_config(path: &Path, lines: &[String]) {
    std::fs::write(path, lines.join("\n") + "\n")
        .unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// Sends a four-letter word to 127.0.0.1:`port` and reads the whole answer.
pub fn four_letter(port: u16, word: &str) -> io::Result<String> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(1))?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    stream.set_write_timeout(Some(Duration::from_secs(2)))?;
    stream.write_all(word.as_bytes())?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    Ok(answer)
}

/// The server shared by every test of this test binary, started on first
/// use. It is never dropped; its supervisor kills it and removes its data
/// when the test process ends, however it ends. Tests on it must stay inside
/// their own chroot ([`super::TestEnv`]) and must not stop or restart it.
pub fn shared_server() -> &'static ZkServer {
    static SHARED: OnceLock<ZkServer> = OnceLock::new();
    SHARED.get_or_init(|| ZkServer::start_standalone("shared", &ZkOptions::default()))
}

/// The server of `release`'s line shared by the version tests, started on
/// first use and kept, like [`shared_server`], until the test process ends.
pub fn release_server(release: &Release) -> &'static ZkServer {
    static SERVERS: [OnceLock<ZkServer>; LINES.len()] = [const { OnceLock::new() }; LINES.len()];
    let slot = LINES
        .iter()
        .position(|&line| line == release.line)
        .unwrap_or_else(|| panic!("no server line {}", release.line));
    SERVERS[slot].get_or_init(|| {
        ZkServer::start_standalone(
            &format!("shared-{}", release.version),
            &ZkOptions::default().release(release),
        )
    })
}

/// A ZooKeeper ensemble on loopback ports; dropping it kills every member and
/// removes their directories.
pub struct ZkEnsemble {
    servers: Vec<ZkServer>,
    /// With [`ZkEnsemble::start_partitionable`]: the proxies through which
    /// each member reaches each other member's peer ports.
    links: Vec<PeerLink>,
}

/// How member `from` reaches member `to`'s quorum and election ports.
struct PeerLink {
    from: usize,
    to: usize,
    quorum: FaultProxy,
    election: FaultProxy,
}

impl PeerLink {
    fn set_mode(&self, mode: Mode) {
        self.quorum.set_mode(mode.clone());
        self.election.set_mode(mode);
    }
}

impl ZkEnsemble {
    /// Starts an ensemble of `n` servers and waits until every member serves
    /// and one of them leads.
    pub fn start(n: usize) -> ZkEnsemble {
        ZkEnsemble::start_with(n, &ZkOptions::default())
    }

    /// [`ZkEnsemble::start`] with extra settings for every member.
    pub fn start_with(n: usize, options: &ZkOptions) -> ZkEnsemble {
        ZkEnsemble::start_members(&vec![options.clone(); n], false)
    }

    /// An ensemble with one member per entry of `members`, each running its
    /// own settings (and so its own release): a rolling upgrade caught
    /// midway.
    pub fn start_members_with(members: &[ZkOptions]) -> ZkEnsemble {
        ZkEnsemble::start_members(members, false)
    }

    /// [`ZkEnsemble::start_with`], but each member reaches every other
    /// member's peer ports through a proxy of its own, so that a test can
    /// cut two members apart ([`ZkEnsemble::partition`]) while both keep
    /// serving their clients.
    pub fn start_partitionable(n: usize, options: &ZkOptions) -> ZkEnsemble {
        ZkEnsemble::start_members(&vec![options.clone(); n], true)
    }

    fn start_members(members: &[ZkOptions], partitionable: bool) -> ZkEnsemble {
        require_zookeeper();
        let n = members.len();
        assert!(n >= 1, "an ensemble needs at least one server");
        let label = test_name();
        for attempt in 1..=START_ATTEMPTS {
            let ports = free_ports(4 * n);
            let peer_ports = |i: usize| (ports[4 * i + 1], ports[4 * i + 2]);
            let admin_port = |i: usize| members[i].admin.then_some(ports[4 * i + 3]);
            let links: Vec<PeerLink> = (0..n)
                .flat_map(|from| {
                    (0..n)
                        .filter(move |&to| to != from)
                        .map(move |to| (from, to))
                })
                .filter(|_| partitionable)
                .map(|(from, to)| {
                    let (quorum, election) = peer_ports(to);
                    PeerLink {
                        from,
                        to,
                        quorum: FaultProxy::start(&format!("127.0.0.1:{quorum}")),
                        election: FaultProxy::start(&format!("127.0.0.1:{election}")),
                    }
                })
                .collect();
            // The peer list as member `from` sees it: its own ports, and the
            // other members' (or the proxies in front of them).
            let peers = |from: usize| -> Vec<String> {
                (0..n)
                    .map(|to| {
                        let (quorum, election) = links
                            .iter()
                            .find(|l| l.from == from && l.to == to)
                            .map_or(peer_ports(to), |l| (l.quorum.port(), l.election.port()));
                        let role = if members[to].observer {
                            ":observer"
                        } else if members[from].client_addresses {
                            ":participant"
                        } else {
                            ""
                        };
                        let client = if members[from].client_addresses {
                            format!(";127.0.0.1:{}", ports[4 * to])
                        } else {
                            String::new()
                        };
                        format!(
                            "server.{}=127.0.0.1:{quorum}:{election}{role}{client}",
                            to + 1
                        )
                    })
                    .collect()
            };
            let servers: Vec<ZkServer> = (0..n)
                .map(|i| {
                    let myid = i as u32 + 1;
                    let dir = make_dir(&format!("{label}-m{myid}"));
                    let data = dir.join("data");
                    std::fs::create_dir(&data).expect("create the data dir");
                    std::fs::write(data.join("myid"), format!("{myid}\n")).expect("write myid");
                    let mut config = base_config(&data, ports[4 * i], admin_port(i));
                    config.extend([
                        "initLimit=50".to_owned(),
                        "syncLimit=10".to_owned(),
                        "cnxTimeout=1000".to_owned(),
                    ]);
                    config.extend(peers(i));
                    config.extend(members[i].config.iter().cloned());
                    let cfg = dir.join("zoo.cfg");
                    write_config(&cfg, &config);
                    let supervisor =
                        Supervisor::spawn(&dir, &cfg, &java_command(&dir, &members[i]));
                    ZkServer {
                        port: ports[4 * i],
                        admin_port: admin_port(i),
                        dir,
                        myid: Some(myid),
                        release: members[i].release.clone(),
                        supervisor: Mutex::new(supervisor),
                    }
                })
                .collect();
            for server in &servers {
                server.launch();
            }
            let ensemble = ZkEnsemble { servers, links };
            let start = Instant::now();
            loop {
                if ensemble.servers.iter().any(|s| !s.is_running()) {
                    if attempt < START_ATTEMPTS {
                        break; // a port was taken meanwhile: retry on new ports
                    }
                    ensemble.fail("lost a member while starting");
                }
                if ensemble.servers.iter().all(ZkServer::is_serving)
                    && ensemble.leader_now().is_some()
                {
                    return ensemble;
                }
                if start.elapsed() > ENSEMBLE_TIMEOUT {
                    ensemble.fail("did not form a quorum in time");
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        unreachable!()
    }

    /// The connect string of every member, without chroot.
    pub fn connect_string(&self) -> String {
        self.servers
            .iter()
            .map(ZkServer::address)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Member `i` (0-based).
    pub fn server(&self, i: usize) -> &ZkServer {
        &self.servers[i]
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        self.servers.len()
    }

    /// The index of the member that leads now, if one does.
    pub fn leader_now(&self) -> Option<usize> {
        self.servers
            .iter()
            .position(|s| s.mode().as_deref() == Some("leader"))
    }

    /// Waits (up to 30 s) until a running member leads and every running
    /// member serves; returns the leader's index.
    pub fn leader(&self) -> usize {
        let start = Instant::now();
        loop {
            let running: Vec<&ZkServer> = self.servers.iter().filter(|s| s.is_running()).collect();
            if let Some(leader) = self.leader_now()
                && running.iter().all(|s| s.is_serving())
            {
                return leader;
            }
            if start.elapsed() > ENSEMBLE_TIMEOUT {
                self.fail("has no leader");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Cuts members `a` and `b` apart: the bytes between them are held, both
    /// ways, and no connection is reset (a hung network, not a refused one).
    /// Needs [`ZkEnsemble::start_partitionable`].
    pub fn partition(&self, a: usize, b: usize) {
        self.set_links(a, b, Mode::Freeze);
    }

    /// Undoes [`ZkEnsemble::partition`]: the held bytes flow on.
    pub fn heal(&self, a: usize, b: usize) {
        self.set_links(a, b, Mode::Pass);
    }

    fn set_links(&self, a: usize, b: usize, mode: Mode) {
        let between: Vec<&PeerLink> = self
            .links
            .iter()
            .filter(|l| (l.from, l.to) == (a, b) || (l.from, l.to) == (b, a))
            .collect();
        assert_eq!(
            between.len(),
            2,
            "members {a} and {b} are not partitionable"
        );
        for link in between {
            link.set_mode(mode.clone());
        }
    }

    /// The indexes of the running members that do not lead.
    pub fn followers(&self) -> Vec<usize> {
        let leader = self.leader();
        (0..self.servers.len())
            .filter(|&i| i != leader && self.servers[i].is_running())
            .collect()
    }

    fn fail(&self, what: &str) -> ! {
        let mut report = String::new();
        for server in &self.servers {
            let log = server.log();
            let tail: Vec<&str> = log.lines().rev().take(15).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            report += &format!(
                "\n--- member {}, {} ({}), running: {}, mode: {:?}\n{}",
                server.myid.unwrap_or(0),
                server.describe(),
                server.address(),
                server.is_running(),
                server.mode(),
                tail.join("\n")
            );
        }
        panic!("ZooKeeper ensemble {what}{report}");
    }
}
