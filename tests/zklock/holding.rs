//! While zklock holds a lock: signals keep the meaning they had when zklock
//! started (an ignored signal stays ignored, for zklock and its command),
//! job control cannot stop zklock, a release after a loss deletes only our
//! own node, and a detached holder keeps none of its caller's descriptors.

use crate::support;
use crate::terminal::on_terminal_through;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use support::{Running, Scratch, TestEnv, Zklock, wait_for, wait_until};

const WAIT: Duration = Duration::from_secs(20);

/// A command that writes its pid to `$0`, then waits for the file `$1`
/// and exits 7. Signals it ignores leave it waiting.
const WAITS_FOR_GO: &str = "echo $$ > \"$0\"; while [ ! -e \"$1\" ]; do sleep 0.05; done; exit 7";

/// `zklock lock LOCK -- sh -c WAITS_FOR_GO PIDFILE GO`.
fn waiting_command(env: &TestEnv, lock: &str, scratch: &Scratch) -> Zklock {
    let (pid, go) = (scratch.file("command.pid"), scratch.file("go"));
    env.zklock(["lock", lock, "--", "sh", "-c", WAITS_FOR_GO])
        .arg(pid)
        .arg(go)
}

/// The pid a process wrote into `file`, once it has.
fn pid_in(file: &Path) -> i32 {
    wait_for(WAIT, "a pid file", || {
        std::fs::read_to_string(file).ok()?.trim().parse().ok()
    })
}

/// zklock (pid `zklock`) and its command were started with `ignored`
/// ignored: each keeps them ignored, and none of them ends the command.
/// Then the command ends by itself with 7, and so does zklock.
fn assert_ignored_throughout(
    mut running: Running,
    zklock: i32,
    scratch: &Scratch,
    ignored: &[i32],
) {
    let command = pid_in(&scratch.file("command.pid"));
    for signal in ignored {
        assert!(
            support::ignores(zklock, *signal),
            "zklock does not ignore signal {signal}"
        );
        // SAFETY: kill has no memory-safety preconditions.
        unsafe {
            libc::kill(zklock, *signal);
            libc::kill(command, *signal);
        }
    }
    std::fs::write(scratch.file("go"), "").expect("write the go file");
    running.wait(WAIT).assert_code(7);
}

#[test]
fn nohup_keeps_the_hangup_ignored_for_zklock_and_its_command() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let zklock = waiting_command(&env, "nohup", &scratch);
    let running = Running::start(zklock.through(&["nohup"]), zklock.cmdline(), None);
    let pid = running.pid() as i32;
    assert_ignored_throughout(running, pid, &scratch, &[libc::SIGHUP]);
}

#[test]
fn a_hangup_trapped_away_stays_ignored() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let zklock = waiting_command(&env, "trapped", &scratch);
    let wrapper = ["sh", "-c", "trap '' HUP; exec \"$@\"", "sh"];
    let running = Running::start(zklock.through(&wrapper), zklock.cmdline(), None);
    let pid = running.pid() as i32;
    assert_ignored_throughout(running, pid, &scratch, &[libc::SIGHUP]);
}

#[test]
fn a_background_job_of_a_script_keeps_ctrl_c_and_ctrl_backslash_ignored() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let zklock = waiting_command(&env, "background", &scratch);
    // A non-interactive shell starts `&` jobs with SIGINT and SIGQUIT
    // ignored; it exits with zklock's code.
    let pid_file = scratch.file("zklock.pid");
    let script = format!("\"$@\" & echo $! > '{}'; wait $!", pid_file.display());
    let wrapper = ["sh", "-c", script.as_str(), "sh"];
    let running = Running::start(zklock.through(&wrapper), zklock.cmdline(), None);
    let pid = pid_in(&pid_file);
    assert_ignored_throughout(running, pid, &scratch, &[libc::SIGINT, libc::SIGQUIT]);
}

#[test]
fn stty_tostop_and_a_log_line_do_not_stop_zklock_while_its_command_has_the_terminal() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let started = scratch.file("started");
    // `-v` logs that the command is being stopped, from zklock's background
    // group, while the command's group owns the terminal: under `stty
    // tostop` that write would stop zklock, and with it the lock's end.
    let zklock = env
        .zklock(["-v", "lock", "tostop", "--", "sh", "-c"])
        .arg("touch \"$0\"; exec sleep 60")
        .arg(&started);
    let zk = env.connect();
    let deleter = std::thread::spawn(move || {
        wait_until(WAIT, "the command to start", || started.exists());
        let node = format!("/locks/tostop/{}", zk.children("/locks/tostop")[0]);
        zk.delete(&node);
    });
    // A shell with job control starts zklock as a job of its own, in the
    // terminal's foreground (the kernel stops only a group whose parent
    // shell is in the same session).
    let run = on_terminal_through(
        &["sh", "-c", "set -m; stty tostop && \"$@\"", "sh"],
        &zklock,
        &[],
    );
    deleter.join().expect("the node was deleted");
    // The lock was lost and the command stopped: exit 4, not a hang.
    run.assert_code(4);
}

#[test]
fn a_release_after_the_lock_was_lost_leaves_a_new_node_of_the_same_name_alone() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    let (started, go) = (scratch.file("started"), scratch.file("go"));
    // The command takes its time to stop, so that the name is another's
    // before zklock releases.
    let script = "touch \"$0\"; trap 'while [ ! -e \"$1\" ]; do sleep 0.05; done; exit 0' TERM; \
                  while :; do sleep 0.05; done";
    let zklock = env
        .zklock(["lock", "reborn", "--", "sh", "-c", script])
        .arg(&started)
        .arg(&go);
    let mut running = zklock.spawn();
    wait_until(WAIT, "the command to start", || started.exists());
    let node = format!("/locks/reborn/{}", env.zk().children("/locks/reborn")[0]);
    // As when a directory is deleted and made again, and its sequence
    // numbers start over: another node has our node's name.
    env.zk().delete(&node);
    let another = env.connect();
    another.create_ephemeral(&node, b"another's");
    std::fs::write(&go, "").expect("write the go file");
    running.wait(WAIT).assert_code(4);
    assert!(
        env.zk().exists(&node).is_some(),
        "the release deleted another's node {node}"
    );
}

#[test]
fn a_detached_holder_keeps_none_of_its_callers_descriptors() {
    let env = TestEnv::new();
    // As a CI runner hands its steps a descriptor and waits for its EOF:
    // the command substitution waits until every holder of fd 5 is gone.
    let script = format!(
        "tok=$({} -H {} lock fds --detach 5>&1) && echo \"$tok\"",
        support::cmd::ZKLOCK,
        env.hosts()
    );
    let mut shell = Command::new("sh");
    shell.args(["-c", &script]);
    let run = Running::start(shell, "tok=$(zklock lock fds --detach 5>&1)".into(), None).wait(WAIT);
    run.assert_success();
    let token = run.stdout.trim().to_owned();
    assert!(env.zk().exists(&token).is_some(), "not held: {token}");
    env.zklock(["release", &token]).run().assert_success();
}

#[test]
fn a_command_killed_by_sigquit_makes_zklock_die_of_it_without_a_core() {
    let env = TestEnv::new();
    let scratch = Scratch::new();
    // Cores allowed and written where zklock runs: zklock itself must turn
    // them off before it dies of the signal (its memory may hold
    // credentials). The command's own core is the command's business.
    let mut command = env
        .zklock(["lock", "quit", "--", "sh", "-c", "kill -QUIT $$"])
        .through(&["sh", "-c", "ulimit -c unlimited && exec \"$@\"", "sh"]);
    command.current_dir(scratch.file(""));
    let run = Running::start(command, "zklock lock quit -- ...".into(), None).wait(WAIT);
    run.assert_died_of(libc::SIGQUIT);
    assert!(env.zk().children_if_any("/locks/quit").is_empty());
}
