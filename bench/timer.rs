//! A timer for bench/run that adds nothing measurable: it starts each
//! command itself (posix_spawn, through the standard library), waits for it
//! with wait4, and reads the clock just before and just after, so no shell,
//! `date` or `time` process is counted. With several commands it runs them
//! in turn, one run of each per round, so a slow phase of a shared machine
//! falls on all of them alike.
//!
//! Usage: `timer [--warmup W] [--out FILE] [--ok-exit N] RUNS COMMAND...
//! [::: COMMAND...]...`
//!
//! `--warmup W` runs W rounds first and throws their times away. A command's
//! stdout goes to /dev/null, or with `--out FILE` to FILE (rewritten each
//! run, so it holds the last run's output); stderr is inherited. A command
//! that fails stops the timer (exit 1); `--ok-exit N` counts exit code N as
//! success too, for a command whose answer is its code (`zklock
//! deadlocks` exits 1 when it finds a cycle). Prints one line per command, in the
//! order given: `<median s> <min s> <max s> <largest peak RSS in KB>`.
//! A command starts in the timer's own memory (vfork) until it execs, so
//! its peak RSS is never reported below the timer's, about 2 MB.

use std::fs::File;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitCode, ExitStatus, Stdio};
use std::time::Instant;

/// What one run cost.
struct Run {
    seconds: f64,
    max_rss_kb: i64,
}

struct Options {
    warmup: usize,
    out: Option<String>,
    /// An exit code other than 0 that is no failure.
    ok_exit: Option<i32>,
    runs: usize,
    commands: Vec<Vec<String>>,
}

fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1).collect()) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("timer: {message}");
            eprintln!(
                "usage: timer [--warmup W] [--out FILE] [--ok-exit N] RUNS COMMAND... [::: COMMAND...]..."
            );
            return ExitCode::from(2);
        }
    };
    match measure(&options) {
        Ok(results) => {
            for runs in results {
                print_summary(&runs);
            }
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("timer: {message}");
            ExitCode::from(1)
        }
    }
}

fn parse(mut args: Vec<String>) -> Result<Options, String> {
    let mut warmup = 0;
    let mut out = None;
    let mut ok_exit = None;
    loop {
        match args.first().map(String::as_str) {
            Some("--warmup") if args.len() > 1 => {
                warmup = args[1].parse().map_err(|_| "--warmup takes a number")?;
                args.drain(..2);
            }
            Some("--out") if args.len() > 1 => {
                out = Some(args[1].clone());
                args.drain(..2);
            }
            Some("--ok-exit") if args.len() > 1 => {
                ok_exit = Some(args[1].parse().map_err(|_| "--ok-exit takes a number")?);
                args.drain(..2);
            }
            _ => break,
        }
    }
    let runs = args
        .first()
        .and_then(|n| n.parse().ok())
        .filter(|&n: &usize| n > 0)
        .ok_or("RUNS must be a positive number")?;
    let commands: Vec<Vec<String>> = args[1..]
        .split(|arg| arg == ":::")
        .map(<[String]>::to_vec)
        .collect();
    if commands.iter().any(Vec::is_empty) {
        return Err("an empty COMMAND".into());
    }
    Ok(Options {
        warmup,
        out,
        ok_exit,
        runs,
        commands,
    })
}

/// Runs every command once per round; returns each command's timed runs.
fn measure(options: &Options) -> Result<Vec<Vec<Run>>, String> {
    let mut results: Vec<Vec<Run>> = options.commands.iter().map(|_| Vec::new()).collect();
    for round in 0..options.warmup + options.runs {
        for (command, runs) in options.commands.iter().zip(&mut results) {
            let run = run_once(command, options)?;
            if round >= options.warmup {
                runs.push(run);
            }
        }
    }
    Ok(results)
}

fn run_once(command: &[String], options: &Options) -> Result<Run, String> {
    let stdout = match options.out.as_deref() {
        Some(path) => Stdio::from(File::create(path).map_err(|e| format!("{path}: {e}"))?),
        None => Stdio::null(),
    };
    let start = Instant::now();
    let child = Command::new(&command[0])
        .args(&command[1..])
        .stdout(stdout)
        .spawn()
        .map_err(|e| format!("start {}: {e}", command[0]))?;
    let (status, usage) = wait4(child.id() as libc::pid_t)?;
    let seconds = start.elapsed().as_secs_f64();
    let ok_exit = options.ok_exit.is_some() && status.code() == options.ok_exit;
    if !status.success() && !ok_exit {
        return Err(format!("{} failed ({status})", command.join(" ")));
    }
    Ok(Run {
        seconds,
        max_rss_kb: usage.ru_maxrss,
    })
}

/// Waits for the child `pid`, returning its status and resource usage.
fn wait4(pid: libc::pid_t) -> Result<(ExitStatus, libc::rusage), String> {
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: status and usage are valid for writing.
        let got = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if got == pid {
            return Ok((ExitStatus::from_raw(status), usage));
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("wait4: {error}"));
        }
    }
}

fn print_summary(runs: &[Run]) {
    let mut seconds: Vec<f64> = runs.iter().map(|run| run.seconds).collect();
    seconds.sort_by(f64::total_cmp);
    let middle = seconds.len() / 2;
    let median = if seconds.len() % 2 == 1 {
        seconds[middle]
    } else {
        (seconds[middle - 1] + seconds[middle]) / 2.0
    };
    let max_rss = runs.iter().map(|run| run.max_rss_kb).max().unwrap_or(0);
    println!(
        "{median:.6} {:.6} {:.6} {max_rss}",
        seconds[0],
        seconds[seconds.len() - 1]
    );
}
