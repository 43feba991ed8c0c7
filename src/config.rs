//! Plain configuration that the commands receive, free of clap.

use crate::output::Printer;
use crate::zk::ConnectOptions;

/// The global options, checked and converted.
#[derive(Clone, Debug)]
pub struct Globals {
    pub connect: ConnectOptions,
    pub root: String,
    /// Where each member's AdminServer listens, for session diagnosis.
    pub admin_port: u16,
    pub printer: Printer,
    pub verbosity: u8,
}
