//! Links the zklock binary as a position-dependent executable on Linux.
//!
//! A position-independent one is relocated by the dynamic loader at every
//! start: some ten thousand relative relocations, which write (and so
//! copy) every page of pointers the binary holds, a third of `zklock
//! --version`'s page faults. zklock starts once per lock taken, so that
//! start-up is paid on every lock. Its libraries, stack and heap are still
//! placed at random addresses.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
