//! The floor of `zklock --version`: the smallest Rust program that prints
//! the same line, built with zklock's release profile. What it costs over
//! `/bin/true` is what any Rust program costs to start on this machine
//! (the loader, libgcc_s, the standard library's set-up); what zklock costs
//! over it is zklock's own.
//!
//! Usage: `startup_floor`

fn main() {
    println!("zklock {}", env!("CARGO_PKG_VERSION"));
}
