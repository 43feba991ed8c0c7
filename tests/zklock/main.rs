//! zklock's integration suite: one test binary, so that every test shares
//! the harness's ZooKeeper server (each in a chroot of its own) and the
//! harness is compiled once. Each module is one area of the command line.
//!
//! Run one area with `cargo test --test zklock reap::`.

// A test binary has no public interface: `pub` in its modules only shares
// the harness between them.
#![allow(unreachable_pub)]

mod support;

mod cli_basics;
mod completions;
mod deadlocks;
mod docs;
mod elections;
mod errors;
mod faults;
mod generated;
mod guard;
mod guarded;
mod harness;
mod help;
mod holding;
mod hostile;
mod inspect;
mod interop;
mod layers;
mod locks;
mod log;
mod modes;
mod monitoring;
mod nesting;
mod output;
mod profiles;
mod promises;
mod prompts;
mod reap;
mod release;
mod sandbox;
mod secured;
mod semaphores;
mod sessions;
mod several;
mod soak;
mod tables;
mod terminal;
mod unreachable;
mod versions;
mod watch;
