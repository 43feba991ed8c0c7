//! The zklock binary: parse, build the runtime, run, map the error to an
//! exit code.

use std::process::ExitCode;

use zklock::cli::Cli;
use zklock::exit;

fn main() -> ExitCode {
    let cli = Cli::from_env();
    let format = cli.output_format();
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
        // Whoever read our output has seen enough (`zklock dump | head`):
        // not an error, as for any Unix filter.
        Err(err) if exit::is_closed_pipe(&err) => exit::ExitStatus::Success,
        Err(err) => {
            let status = exit::status_for(&err);
            zklock::output::print_error(format, &format!("{err:#}"), status.code());
            status
        }
    };
    ExitCode::from(status.code())
}
