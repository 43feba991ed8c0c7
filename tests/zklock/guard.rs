//! The guard process of `lock -- COMMAND` is forked when zklock starts, and
//! waits for the lock with it: whichever way zklock ends before the lock is
//! ours (killed, giving up, the command not starting), no guard stays behind
//! and no command runs; the command, started behind it, gets the signal
//! state zklock itself started with; and the guard's memory keeps no copy
//! of a secret, however it was given.

use crate::support;

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::Duration;

use support::secured::sasl_server;
use support::{Running, Scratch, TestEnv, Zklock, process_alive, unique, wait_for, wait_until};

const WAIT: Duration = Duration::from_secs(20);

/// The variable that tells this test's guards from those of other tests: a
/// guard is a fork of zklock, so /proc shows zklock's environment for it.
const MARK: &str = "GUARD_TEST_MARK";

/// A mark of `what`, unique to this run of the test.
fn mark(what: &str) -> String {
    format!("{what}-{}-{}", std::process::id(), unique())
}

/// `zklock ARGS...` with `mark` in its environment.
fn marked(env: &TestEnv, mark: &str, args: &[&str]) -> Zklock {
    env.zklock(args).env(MARK, mark)
}

/// The guard processes that carry `mark`, alive (zombies do not count).
fn guards_marked(mark: &str) -> Vec<i32> {
    let needle = format!("{MARK}={mark}\0");
    std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            comm.trim() == "zklock-guard"
                && String::from_utf8_lossy(&environ).contains(&needle)
                && process_alive(*pid)
        })
        .collect()
}

/// The guard `zklock` forked at start-up, once it is there.
fn guard_of(zklock: &Running) -> i32 {
    let children = format!("/proc/{0}/task/{0}/children", zklock.pid());
    wait_for(WAIT, "zklock's guard process", || {
        std::fs::read_to_string(&children)
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|pid| pid.parse::<i32>().ok())
            .find(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/comm"))
                    .is_ok_and(|comm| comm.trim() == "zklock-guard")
            })
    })
}

/// A holder of `/locks/{lock}` until it is told to let go.
fn holder(env: &TestEnv, lock: &str) -> Running {
    let mut holder = env.zklock(["lock", lock]).spawn();
    holder.next_line(WAIT);
    holder
}

fn release(mut holder: Running) {
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
}

fn contenders(env: &TestEnv, lock: &str) -> usize {
    env.zk().children_if_any(&format!("/locks/{lock}")).len()
}

/// A command that leaves `marker` behind if it ever runs.
fn touching(marker: &Path) -> Vec<String> {
    vec!["touch".into(), marker.display().to_string()]
}

#[test]
fn zklock_killed_while_it_waits_leaves_no_guard_and_the_command_never_runs() {
    let env = TestEnv::new();
    let dir = Scratch::new();
    let marker = dir.file("ran");
    let holder = holder(&env, "killed");
    let mut args = vec!["lock", "killed", "--session-timeout", "3s", "--"];
    let command = touching(&marker);
    args.extend(command.iter().map(String::as_str));
    let killed = mark("killed");
    let mut waiter = marked(&env, &killed, &args).spawn();
    let guard = guard_of(&waiter);
    wait_until(WAIT, "the waiter in the queue", || {
        contenders(&env, "killed") == 2
    });
    waiter.kill();
    wait_until(WAIT, "the guard ends with zklock", || !process_alive(guard));
    // The waiter's node goes with its session; then the lock is free, and
    // nothing was left to run the command.
    wait_until(WAIT, "the waiter's session to expire", || {
        contenders(&env, "killed") == 1
    });
    release(holder);
    assert!(!marker.exists(), "the command ran after zklock was killed");
    assert!(guards_marked(&killed).is_empty());
}

#[test]
fn a_zklock_that_gives_up_leaves_no_guard_and_no_node() {
    let env = TestEnv::new();
    let dir = Scratch::new();
    let marker = dir.file("ran");
    let command = touching(&marker);
    let with_command = |mark: &str, options: &[&str]| {
        let mut args = vec!["lock", "given-up"];
        args.extend_from_slice(options);
        args.push("--");
        args.extend(command.iter().map(String::as_str));
        marked(&env, mark, &args)
    };
    let holder = holder(&env, "given-up");
    let [no_wait, timeout, signal, cannot_start] =
        ["no-wait", "timeout", "signal", "cannot-start"].map(mark);

    with_command(&no_wait, &["-n"]).run().assert_code(1);
    with_command(&timeout, &["--timeout", "300ms"])
        .run()
        .assert_code(1);
    let mut interrupted = with_command(&signal, &[]).spawn();
    guard_of(&interrupted);
    wait_until(WAIT, "the waiter in the queue", || {
        contenders(&env, "given-up") == 2
    });
    interrupted.signal(libc::SIGTERM);
    interrupted.wait(WAIT).assert_code(128 + libc::SIGTERM);
    release(holder);

    // Acquired, but the command cannot start.
    marked(
        &env,
        &cannot_start,
        &["lock", "given-up", "--", "/nonexistent/command"],
    )
    .run()
    .assert_code(127);

    for mark in [no_wait, timeout, signal, cannot_start] {
        wait_until(WAIT, &format!("no guard left after {mark}"), || {
            guards_marked(&mark).is_empty()
        });
    }
    assert_eq!(contenders(&env, "given-up"), 0, "nodes left behind");
    assert!(!marker.exists(), "a command ran without the lock");
}

/// The signals set in a /proc/PID/status mask line such as `SigBlk:`.
fn signals_in(status: &str, field: &str) -> Vec<i32> {
    let line = status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .unwrap_or_else(|| panic!("no {field} in {status:?}"));
    let mask = u64::from_str_radix(line.trim(), 16).expect("a hex mask");
    (1..=64).filter(|n| mask & (1 << (n - 1)) != 0).collect()
}

#[test]
fn the_command_starts_with_the_signal_state_zklock_started_with() {
    let env = TestEnv::new();
    let zklock = env.zklock([
        "lock",
        "signals",
        "--",
        "grep",
        "-E",
        "^Sig(Blk|Ign):",
        "/proc/self/status",
    ]);
    let mut command = zklock.command();
    // SAFETY: signal and sigprocmask are async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGUSR1, libc::SIG_IGN);
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            let mut usr2: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut usr2);
            libc::sigaddset(&mut usr2, libc::SIGUSR2);
            libc::sigprocmask(libc::SIG_BLOCK, &usr2, std::ptr::null_mut());
            Ok(())
        });
    }
    // What zklock inherits: this thread's mask and this process's ignored
    // signals, with the changes made above (std resets SIGPIPE, which the
    // Rust runtime ignores, for every child).
    let own = std::fs::read_to_string("/proc/thread-self/status").expect("our own status");
    let mut blocked = signals_in(&own, "SigBlk:");
    blocked.push(libc::SIGUSR2);
    let mut ignored = signals_in(&own, "SigIgn:");
    ignored.extend([libc::SIGUSR1, libc::SIGINT]);
    let run = Running::start(command, zklock.cmdline(), None).wait(WAIT);
    run.assert_success();
    // The command inherits that too, SIGINT ignored as zklock was started
    // with it (as under flock(1)), except SIGCHLD and SIGPIPE, which take
    // their default action: zklock's runtime handles and ignores them.
    let defaults = [libc::SIGCHLD, libc::SIGPIPE];
    ignored.retain(|signal| !defaults.contains(signal));
    for expected in [&mut blocked, &mut ignored] {
        expected.sort();
        expected.dedup();
    }
    assert_eq!(
        signals_in(&run.stdout, "SigBlk:"),
        blocked,
        "{}",
        run.stdout
    );
    assert_eq!(
        signals_in(&run.stdout, "SigIgn:"),
        ignored,
        "{}",
        run.stdout
    );
}

/// Where `needle` occurs in the readable memory of process `pid` (read
/// through /proc/PID/mem along its maps, as root may), by region name.
fn memory_holding(pid: i32, needle: &[u8]) -> Vec<String> {
    use std::os::unix::fs::FileExt;
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).expect("the guard's maps");
    let mem = std::fs::File::open(format!("/proc/{pid}/mem")).expect("the guard's memory (root)");
    let mut found = Vec::new();
    for line in maps.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (Some(range), Some(perms)) = (fields.first(), fields.get(1)) else {
            continue;
        };
        let Some((lo, hi)) = range.split_once('-') else {
            continue;
        };
        let lo = u64::from_str_radix(lo, 16).expect("a map's start");
        let hi = u64::from_str_radix(hi, 16).expect("a map's end");
        if !perms.starts_with('r') {
            continue;
        }
        let mut bytes = vec![0; (hi - lo) as usize];
        // Some special mappings ([vvar]) cannot be read: nothing of ours is
        // there.
        if mem.read_exact_at(&mut bytes, lo).is_err() {
            continue;
        }
        if bytes.windows(needle.len()).any(|window| window == needle) {
            found.push(fields.get(5).unwrap_or(&"anonymous").to_string());
        }
    }
    found
}

#[test]
fn the_guard_keeps_no_copy_of_the_credentials_it_was_forked_with() {
    let env = TestEnv::new();
    let dir = Scratch::new();
    // Unique to this run, so no other process's memory, nor this test's
    // binary, can hold it.
    let secret = format!(
        "guard-secret-{}-{}-of-this-run",
        std::process::id(),
        unique()
    );
    let credentials = dir.file("auth");
    std::fs::write(&credentials, format!("digest:alice:{secret}\n")).expect("the auth file");
    let holder = holder(&env, "secrets");
    let mut waiter = env
        .zklock(["--auth-file", credentials.to_str().expect("a UTF-8 path")])
        .args(["lock", "secrets", "--", "true"])
        .spawn();
    let guard = guard_of(&waiter);
    // In the queue, zklock has connected with the credentials: the guard,
    // forked before, dropped its copy of them before it began to wait.
    wait_until(WAIT, "the waiter in the queue", || {
        contenders(&env, "secrets") == 2
    });
    // A freed block's first bytes are the allocator's: look for the
    // secret's tail, which a copy left behind would still hold.
    let tail = &secret.as_bytes()[10..];
    assert_eq!(memory_holding(guard, tail), Vec::<String>::new());
    // zklock itself keeps them, to authenticate again on a reconnect: the
    // search finds what is there.
    assert!(
        !memory_holding(waiter.pid() as i32, tail).is_empty(),
        "zklock holds the credentials it connected with"
    );
    release(holder);
    waiter.wait(WAIT).assert_success();
}

/// Runs `zklock` (a lock's command line without its command) with a
/// command that waits, and returns which of `secrets` its guard's memory
/// holds, with the regions that hold each. zklock's own memory must hold
/// every one: it authenticates again on a new connection, and the search
/// would otherwise prove nothing.
fn secrets_in_the_guard(zklock: Zklock, secrets: &[&str]) -> Vec<(String, Vec<String>)> {
    let dir = Scratch::new();
    let ready = dir.file("ready");
    let ready = ready.to_str().expect("a UTF-8 path");
    let mut holder = zklock
        .args(["--", "sh", "-c"])
        .arg(format!(
            "echo $PPID > {ready}.tmp && mv {ready}.tmp {ready} && exec sleep 600"
        ))
        .spawn();
    // The command runs: the guard dropped the settings long before.
    let guard = wait_for(WAIT, "the command to start", || {
        std::fs::read_to_string(ready)
            .ok()
            .and_then(|pid| pid.trim().parse::<i32>().ok())
    });
    assert_eq!(
        guard,
        guard_of(&holder),
        "the command is not the guard's child"
    );
    for secret in secrets {
        assert!(
            !memory_holding(holder.pid() as i32, secret.as_bytes()).is_empty(),
            "zklock holds no {secret:?}: the search is blind"
        );
    }
    let kept = secrets
        .iter()
        .map(|secret| (secret.to_string(), memory_holding(guard, secret.as_bytes())))
        .filter(|(_, regions)| !regions.is_empty())
        .collect();
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT);
    kept
}

#[test]
fn the_guard_keeps_no_copy_of_any_secret_while_the_command_runs() {
    let dir = Scratch::new();
    let given = mark("given");
    let filed = mark("filed");
    let from_env = mark("environ");
    // Comments first, so that the secret sits far from the bytes the
    // allocator writes into a freed block, in a block too large to be
    // handed out again at once: a copy left unwiped would show.
    let auth_file = dir.file("auth");
    let comments = "# carol, for the guard test\n".repeat(300);
    std::fs::write(&auth_file, format!("{comments}digest:carol:{filed}\n")).expect("auth file");
    let password_file = dir.file("password");
    std::fs::write(&password_file, "alice-pw\n").expect("the password file");
    let sasl = |args: &[&str]| {
        Zklock::new(args)
            .args(["--sasl", "digest-md5", "--sasl-user", "alice"])
            .arg("--sasl-password-file")
            .arg(&password_file)
            .args(["lock", &mark("guard-memory")])
            .hosts(sasl_server().address())
    };
    let flags = sasl(&["--auth", &format!("digest:dave:{given}")])
        .arg("--auth-file")
        .arg(&auth_file);
    let mut kept = secrets_in_the_guard(flags, &[&given, &filed, "alice-pw"]);
    let variable = sasl(&[]).env("ZKLOCK_AUTH", format!("digest:erin:{from_env}"));
    kept.extend(secrets_in_the_guard(variable, &[&from_env]));
    assert!(kept.is_empty(), "the guard keeps secrets: {kept:#?}");
}
