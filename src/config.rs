//! Plain configuration that the commands receive, free of clap.

use crate::output::Printer;
use crate::zk::ConnectOptions;
use crate::zk::sessions::AdminPorts;

/// The global options, checked and converted.
#[derive(Clone, Debug)]
pub struct Globals {
    pub connect: ConnectOptions,
    pub root: String,
    /// Where each member's AdminServer listens, for who is connected.
    pub admin_ports: AdminPorts,
    pub printer: Printer,
    pub verbosity: u8,
}
