#![allow(non_upper_case_globals)]
#![allow(non_camel_case_types)]
#![allow(non_snake_case)]

//! The GSSAPI bindings, with the library opened on first use instead of
//! linked: a program that never calls into GSSAPI never loads it (nor the
//! Kerberos libraries it pulls in), and starts faster. The build script
//! turns each declared function into one that calls the library's symbol
//! through [`Symbol`]. [`load`] opens the library early, to report a
//! missing one clearly.

use std::ffi::{c_void, CStr};
use std::sync::OnceLock;

include!(concat!(env!("OUT_DIR"), "/bindings.rs"));

/// The library's file name, as the dynamic loader finds it.
pub const LIBRARY: &str = env!("LIBGSSAPI_SYS_LIBRARY");

/// Opens the GSSAPI library unless it is open; the loader's error when it
/// cannot be opened. Every function of this crate does this itself; calling
/// it first only gives a clear error before any GSSAPI call fails.
pub fn load() -> Result<(), &'static str> {
    library().map(|_| ())
}

struct Handle(*mut c_void);

// The handle is only ever passed to dlsym, which may be called from any
// thread.
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

fn library() -> Result<&'static Handle, &'static str> {
    static OPENED: OnceLock<Result<Handle, String>> = OnceLock::new();
    OPENED
        .get_or_init(|| {
            let name = std::ffi::CString::new(LIBRARY).expect("no NUL in the library name");
            // SAFETY: dlopen with a valid C string; dlerror right after on the
            // same thread.
            unsafe {
                let handle = libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
                if handle.is_null() {
                    let why = libc::dlerror();
                    let why = if why.is_null() {
                        "unknown error".into()
                    } else {
                        CStr::from_ptr(why).to_string_lossy()
                    };
                    Err(format!("cannot load the GSSAPI library {LIBRARY}: {why}"))
                } else {
                    Ok(Handle(handle))
                }
            }
        })
        .as_ref()
        .map_err(String::as_str)
}

/// The address of one of the library's functions, looked up once.
pub struct Symbol {
    name: &'static [u8],
    address: OnceLock<Option<usize>>,
}

impl Symbol {
    /// `name` ends with a NUL.
    pub const fn new(name: &'static [u8]) -> Symbol {
        Symbol { name, address: OnceLock::new() }
    }

    /// `None` when the library cannot be opened or lacks the symbol.
    pub fn address(&self) -> Option<usize> {
        *self.address.get_or_init(|| {
            let library = library().ok()?;
            // SAFETY: a NUL-terminated name and a handle from dlopen.
            let address = unsafe { libc::dlsym(library.0, self.name.as_ptr().cast()) };
            (!address.is_null()).then_some(address as usize)
        })
    }
}

/// What a GSSAPI call answers when the library or the function is missing.
fn unavailable() -> OM_uint32 {
    _GSS_S_UNAVAILABLE
}
