use std::{
    env, fs,
    path::{Path, PathBuf},
    process::Command,
};

const APPLE_FRAMEWORKS: &str =
    "-F/Library/Developer/CommandLineTools/SDKs/MacOSX.sdk/System/Library/Frameworks";

#[derive(Clone, Copy)]
enum Gssapi {
    Mit,
    Heimdal,
    Apple,
}

/// The library is not linked: lib.rs opens it on the first call into it
/// (see `lazy_functions`), under the name given here.
fn emit_library_name(imp: &Gssapi) {
    let name = match imp {
        Gssapi::Mit => "libgssapi_krb5.so.2",
        Gssapi::Heimdal => "libgssapi.so.3",
        Gssapi::Apple => "/System/Library/Frameworks/GSS.framework/GSS",
    };
    println!("cargo:rustc-env=LIBGSSAPI_SYS_LIBRARY={name}");
}

/// Install prefixes from `LIBGSSAPI_PREFIX` (colon-separated). Each prefix
/// contributes `<prefix>/include` to bindgen and `<prefix>/lib` to the
/// linker and the library search below.
fn user_prefixes() -> Vec<PathBuf> {
    match env::var("LIBGSSAPI_PREFIX") {
        Err(_) => Vec::new(),
        Ok(s) => s
            .split(':')
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .collect(),
    }
}

fn krb5_config_prefix() -> Option<PathBuf> {
    Command::new("krb5-config")
        .arg("gssapi")
        .arg("--prefix")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| PathBuf::from(s.trim()))
        .filter(|p| !p.as_os_str().is_empty())
}

/// Non-recursive check for a `lib<stem>.so*` in `dir`. `stem` is matched
/// exactly so that `libgssapi` does not also match `libgssapi_krb5` (the
/// remainder after the stem must begin with `.so`).
fn dir_has_lib(dir: &Path, stem: &str) -> bool {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(_) => return false,
    };
    entries.flatten().any(|entry| {
        match entry.file_name().to_string_lossy().strip_prefix(stem) {
            Some(rest) => rest.starts_with(".so"),
            None => false,
        }
    })
}

fn builder_from_pkgconfig(lib: pkg_config::Library) -> bindgen::Builder {
    bindgen::Builder::default().clang_args(
        lib.include_paths
            .iter()
            .map(|path| format!("-I{}", path.to_string_lossy())),
    )
}

/// Builder for the cases where pkg-config didn't supply include paths
/// (library search, cross compile, or a forced impl with no `.pc`). Adds
/// `<prefix>/include` for each `LIBGSSAPI_PREFIX` entry, forwards Nix's
/// cflags so headers in the Nix store are found, and the macOS framework
/// search path for the Apple GSS framework.
fn searched_builder(imp: &Gssapi) -> bindgen::Builder {
    let builder = bindgen::Builder::default();
    match imp {
        Gssapi::Mit | Gssapi::Heimdal => {
            let builder = user_prefixes().iter().fold(builder, |b, p| {
                b.clang_arg(format!("-I{}", p.join("include").display()))
            });
            match env::var("NIX_CFLAGS_COMPILE") {
                Err(_) => builder,
                Ok(flags) => builder.clang_args(flags.split(" ")),
            }
        }
        Gssapi::Apple => builder.clang_arg(APPLE_FRAMEWORKS),
    }
}

fn try_pkgconfig() -> Result<(Gssapi, bindgen::Builder), pkg_config::Error> {
    match probe_headers("mit-krb5-gssapi") {
        Ok(lib) => Ok((Gssapi::Mit, builder_from_pkgconfig(lib))),
        Err(_) => match probe_headers("heimdal-gssapi") {
            Ok(lib) => Ok((Gssapi::Heimdal, builder_from_pkgconfig(lib))),
            Err(lib) => Err(lib),
        },
    }
}

/// `LIBGSSAPI_IMPL` forces the implementation, overriding autodetection.
/// Useful on machines that have both MIT and Heimdal installed, where the
/// probe order would otherwise decide for you.
fn forced_impl() -> Option<Gssapi> {
    let val = env::var("LIBGSSAPI_IMPL").ok()?;
    match val.trim().to_ascii_lowercase().as_str() {
        "" => None,
        "mit" => Some(Gssapi::Mit),
        "heimdal" => Some(Gssapi::Heimdal),
        "apple" => Some(Gssapi::Apple),
        other => panic!(
            "LIBGSSAPI_IMPL must be one of \"mit\", \"heimdal\", \"apple\"; got {:?}",
            other
        ),
    }
}

/// Select a forced impl. Prefer that impl's pkg-config (for include paths
/// and the link directives it emits); fall back to emitting the link line
/// ourselves with a bare/prefix/Nix/framework builder when pkg-config can't
/// be used (cross compile, or no `.pc` for the chosen impl).
fn select_forced(imp: Gssapi, cross_compile: bool) -> (Gssapi, bindgen::Builder) {
    let pc = match imp {
        Gssapi::Mit => Some("mit-krb5-gssapi"),
        Gssapi::Heimdal => Some("heimdal-gssapi"),
        Gssapi::Apple => None,
    };
    if !cross_compile {
        if let Some(pc) = pc {
            if let Ok(lib) = probe_headers(pc) {
                return (imp, builder_from_pkgconfig(lib));
            }
        }
    }
    (imp, searched_builder(&imp))
}

/// Autodetect MIT vs Heimdal by looking for the library, when pkg-config is
/// unavailable. Searches `<prefix>/lib` for each `LIBGSSAPI_PREFIX` entry,
/// the `krb5-config --prefix` lib dir, `LD_LIBRARY_PATH`, and the usual
/// system lib dirs (non-recursively). When a match is found its directory
/// is added to the linker search path.
fn which() -> Gssapi {
    let target_os = env::var("CARGO_CFG_TARGET_OS").unwrap();
    let target_family = env::var("CARGO_CFG_TARGET_FAMILY").unwrap();

    if target_os == "macos" {
        return Gssapi::Apple;
    } else if target_os == "windows" {
        panic!("use SSPI on windows")
    } else if target_family != "unix" {
        panic!("libgssapi isn't ported to this platform yet")
    }

    let mut lib_dirs: Vec<PathBuf> = Vec::new();
    for p in user_prefixes() {
        lib_dirs.push(p.join("lib"));
    }
    if let Some(p) = krb5_config_prefix() {
        lib_dirs.push(p.join("lib"));
    }
    if let Ok(ldpath) = env::var("LD_LIBRARY_PATH") {
        lib_dirs.extend(ldpath.split(':').filter(|d| !d.is_empty()).map(PathBuf::from));
    }
    lib_dirs.extend(["/lib", "/lib64", "/usr/lib", "/usr/lib64"].map(PathBuf::from));

    for dir in &lib_dirs {
        if dir_has_lib(dir, "libgssapi_krb5") {
            return Gssapi::Mit;
        }
        if dir_has_lib(dir, "libgssapi") {
            return Gssapi::Heimdal;
        }
    }
    panic!(
        "no MIT or Heimdal gssapi library found. Set LIBGSSAPI_IMPL (\"mit\" or \
         \"heimdal\") to pick an implementation, and/or LIBGSSAPI_PREFIX to the \
         install prefix(es) to search, colon-separated - headers are expected \
         under <prefix>/include and libraries under <prefix>/lib."
    );
}

fn main() {
    // Emitting any rerun-if instruction disables Cargo's default
    // whole-package change detection, so we must name every input here.
    println!("cargo:rerun-if-env-changed=LIBGSSAPI_IMPL");
    println!("cargo:rerun-if-env-changed=LIBGSSAPI_PREFIX");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/consts.h");
    println!("cargo:rerun-if-changed=src/wrapper_mit.h");
    println!("cargo:rerun-if-changed=src/wrapper_heimdal.h");
    println!("cargo:rerun-if-changed=src/wrapper_apple.h");

    let cross_compile = env::var("HOST").unwrap() != env::var("TARGET").unwrap();

    let (imp, builder) = match forced_impl() {
        Some(imp) => select_forced(imp, cross_compile),
        None => match (cross_compile, try_pkgconfig()) {
            (false, Ok((imp, builder))) => (imp, builder),
            _ => {
                let imp = which();
                (imp, searched_builder(&imp))
            }
        },
    };
    let bindings = builder
        .allowlist_type("(OM_.+|gss_.+)")
        .allowlist_var("_?GSS_.+|gss_.+")
        .allowlist_function("gss_.*")
        .header(match imp {
            Gssapi::Mit => "src/wrapper_mit.h",
            Gssapi::Heimdal => "src/wrapper_heimdal.h",
            Gssapi::Apple => "src/wrapper_apple.h",
        })
        .generate()
        .expect("failed to generate gssapi bindings");
    emit_library_name(&imp);
    let out_path = PathBuf::from(env::var("OUT_DIR").unwrap());
    fs::write(out_path.join("bindings.rs"), lazy_functions(&bindings.to_string()))
        .expect("failed to write bindings")
}

/// pkg-config's include paths for `name`, without its link directives.
fn probe_headers(name: &str) -> Result<pkg_config::Library, pkg_config::Error> {
    pkg_config::Config::new().cargo_metadata(false).probe(name)
}

/// Rewrites bindgen's output so that nothing links against the library:
/// each declared function becomes a Rust function of the same name and
/// signature that looks its symbol up in the library, opened on first use,
/// and calls it (`crate::Symbol`). Everything else (types, constants, the
/// declared statics, which nothing may use) stays as bindgen wrote it.
fn lazy_functions(bindings: &str) -> String {
    const BLOCK: &str = "extern \"C\" {";
    let mut out = String::new();
    let mut rest = bindings;
    while let Some(at) = rest.find(BLOCK) {
        let start = if rest[..at].ends_with("unsafe ") { at - "unsafe ".len() } else { at };
        let body_at = at + BLOCK.len();
        let end = body_at + rest[body_at..].find("\n}").expect("an extern block ends") + 2;
        out.push_str(&rest[..start]);
        match rest[body_at..end - 2].split_once("pub fn ") {
            Some((_, declaration)) => out.push_str(&lazy_function(declaration)),
            None => out.push_str(&rest[start..end]),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// `name(arg: Type, ...) -> Ret;` as a function that calls the symbol
/// `name` of the library, or fails as GSSAPI fails when it is missing.
fn lazy_function(declaration: &str) -> String {
    let (name, signature) = declaration.split_once('(').expect("a function has parameters");
    let close = signature.rfind(')').expect("a parameter list ends");
    let (parameters, ret) = (&signature[..close], &signature[close + 1..]);
    let ret = ret.trim().trim_end_matches(';').trim().trim_start_matches("->").trim();
    let ret = if ret.is_empty() { "()" } else { ret };
    let parameters: Vec<(&str, &str)> = split_top_level(parameters)
        .into_iter()
        .map(|p| p.split_once(':').map(|(n, t)| (n.trim(), t.trim())).expect("a parameter is `name: Type`"))
        .collect();
    let list = |f: &dyn Fn(&(&str, &str)) -> String| parameters.iter().map(f).collect::<Vec<_>>().join(", ");
    let declared = list(&|(n, t)| format!("{n}: {t}"));
    let types = list(&|(_, t)| t.to_string());
    let names = list(&|(n, _)| n.to_string());
    let missing = if ret == "OM_uint32" {
        "crate::unavailable()".to_string()
    } else {
        format!("panic!(\"{name}: {{}}\", crate::library().err().unwrap_or(\"no such symbol\"))")
    };
    format!(
        "pub unsafe fn {name}({declared}) -> {ret} {{\n\
         \x20   static SYMBOL: crate::Symbol = crate::Symbol::new(b\"{name}\\0\");\n\
         \x20   match SYMBOL.address() {{\n\
         \x20       Some(address) => {{\n\
         \x20           let function: unsafe extern \"C\" fn({types}) -> {ret} = ::std::mem::transmute(address);\n\
         \x20           function({names})\n\
         \x20       }}\n\
         \x20       None => {missing},\n\
         \x20   }}\n\
         }}"
    )
}

/// `text` split at the commas outside brackets, without empty pieces.
fn split_top_level(text: &str) -> Vec<&str> {
    let (mut pieces, mut depth, mut from, mut previous) = (Vec::new(), 0i32, 0, ' ');
    for (i, c) in text.char_indices() {
        let arrow = previous == '-';
        previous = c;
        match c {
            '(' | '<' | '[' => depth += 1,
            '>' if arrow => {}
            ')' | '>' | ']' => depth -= 1,
            ',' if depth == 0 => {
                pieces.push(&text[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    pieces.push(&text[from..]);
    pieces.into_iter().map(str::trim).filter(|p| !p.is_empty()).collect()
}
