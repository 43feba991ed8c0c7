//! The zklock binary: parse, build the runtime, run, map the error to an
//! exit code.

use std::process::ExitCode;

use clap::Parser;
use zklock::cli::Cli;
use zklock::exit;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("zklock: cannot start the async runtime: {err}");
            return ExitCode::from(exit::ExitStatus::Other.code());
        }
    };
    let status = match runtime.block_on(zklock::run(cli)) {
        Ok(status) => status,
        Err(err) => {
            eprintln!("zklock: {err:#}");
            exit::status_for(&err)
        }
    };
    ExitCode::from(status.code())
}
