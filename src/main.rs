//! The zklock binary: parse, build the runtime, run, map the error to an
//! exit code.

use std::process::ExitCode;

use anyhow::{Context, Result};
use zklock::Invocation;
use zklock::cli::Cli;
use zklock::exit::{self, ExitStatus};

fn main() -> ExitCode {
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
            let status = exit::status_for(&err);
            let cause = exit::cause_for(&err);
            zklock::output::print_error(format, &format!("{err:#}"), status.code(), cause);
            status
        }
    };
    ExitCode::from(status.code())
}

/// Runs the invocation on a single-threaded runtime.
fn run(invocation: Invocation) -> Result<ExitStatus> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(invocation.run())
}
