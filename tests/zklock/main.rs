//! zklock's integration suite: one test binary, so that every test shares
//! the harness's ZooKeeper server (each in a chroot of its own) and the
//! harness is compiled once. Each module is one area of the command line.
//!
//! Run one area with `cargo test --test zklock reap::`.

// A test binary has no public interface: `pub` in its modules only shares
// the harness between them.
#![allow(unreachable_pub)]

mod support;

/// The suite starts every zklock, shell and terminal with the default
/// dispositions of the signals zklock handles. A signal ignored when the
/// suite was launched (by `nohup`, or by a shell without job control,
/// which ignores SIGINT and SIGQUIT in what it starts with `&`) would stay
/// ignored in everything the suite starts, and zklock rightly keeps an
/// ignored signal ignored: the signal tests would then hang. Run before
/// any test, as the binary is loaded.
#[used]
#[unsafe(link_section = ".init_array")]
static DEFAULT_SIGNAL_DISPOSITIONS: extern "C" fn() = default_signal_dispositions;

extern "C" fn default_signal_dispositions() {
    for signal in [libc::SIGHUP, libc::SIGINT, libc::SIGQUIT, libc::SIGTERM] {
        // SAFETY: `signal` with SIG_DFL only sets a disposition; the test
        // binary has no other thread yet and no handler of its own here.
        unsafe { libc::signal(signal, libc::SIG_DFL) };
    }
}

mod cli_basics;
mod completions;
mod contrib;
mod deadlocks;
mod docs;
mod elections;
mod ends;
mod errors;
mod faults;
mod generated;
mod guard;
mod guarded;
mod harness;
mod help;
mod history;
mod holding;
mod hostile;
mod inspect;
mod interop;
mod labels;
mod layers;
mod liveness;
mod lockdelay;
mod locks;
mod log;
mod modes;
mod monitoring;
mod nesting;
mod once;
mod output;
mod profiles;
mod promises;
mod prompts;
mod reap;
mod release;
mod sandbox;
mod secured;
mod semaphores;
mod serving;
mod sessions;
mod several;
mod soak;
mod survey;
mod tables;
mod terminal;
mod top_actions;
mod unreachable;
mod verify;
mod versions;
mod watch;
