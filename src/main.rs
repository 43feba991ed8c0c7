//! The zklock binary: parse, build the runtime, run, map the error to an
//! exit code.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use zklock::Invocation;
use zklock::cli::Cli;
use zklock::exit::{self, ExitStatus};

fn main() -> ExitCode {
    zklock::output::escape_panics();
    if asks_for_version_only() {
        // The parser, its help texts and the profile are not needed to say
        // which zklock this is: clap's answer, without building clap.
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "zklock {}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    parse_and_run()
}

/// Everything but `--version`. Kept out of `main`: with the runtime and the
/// whole command inlined, its stack frame is tens of KiB, and a frame that
/// large has every page of it touched on entry.
#[inline(never)]
fn parse_and_run() -> ExitCode {
    let cli = Cli::from_env();
    let format = cli.output_format();
    // The checks, and the fork of a guard process, come before the runtime
    // exists: the fork is cheapest, and safe, while zklock is one thread.
    let status = match Invocation::new(cli).and_then(run) {
        Ok(status) => status,
        // Whoever read our output has seen enough (`zklock dump | head`):
        // not an error, as for any Unix filter.
        Err(err) if exit::is_closed_pipe(&err) => ExitStatus::Success,
        Err(err) => {
            let status = exit::status_of_error(&err);
            let cause = exit::cause_for(&err);
            zklock::output::print_error(format, &format!("{err:#}"), status.code(), cause);
            status
        }
    };
    exit::end(status)
}

/// True for `zklock --version` or `zklock -V` and nothing else.
fn asks_for_version_only() -> bool {
    // Counted before any is copied: a copy of a secret argument would be
    // freed unwiped.
    let mut args = std::env::args_os();
    args.len() == 2
        && args
            .nth(1)
            .is_some_and(|arg| arg == "--version" || arg == "-V")
}

/// Runs the invocation on a single-threaded runtime.
fn run(invocation: Invocation) -> Result<ExitStatus> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(invocation.run())
}
