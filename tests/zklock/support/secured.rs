//! Secured servers, each started once per test binary and shared by the
//! tests that need it: a ZooKeeper with a TLS port that wants client
//! certificates, and one that enforces SASL DIGEST-MD5. The certificates
//! are made here with openssl, in the server's temp dir.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::{ZkOptions, ZkServer, free_ports};

/// This test binary's directory for certificates, keytabs, JAAS and
/// password files. A shell started with it removes it once the test binary
/// has ended, however it ended (its stdin, our pipe, then closes).
pub fn scratch_dir() -> &'static Path {
    type Cleaner = std::sync::Mutex<std::process::Child>;
    static DIR: OnceLock<(PathBuf, Cleaner)> = OnceLock::new();
    let (dir, _) = DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("zklock-test-{}-secured", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create the scratch dir");
        // The cleaner's stdin stays open in the child handle until this
        // process ends.
        let cleaner = Command::new("sh")
            .args(["-c", "read _; rm -rf \"$0\""])
            .arg(&dir)
            .stdin(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("start the scratch dir's cleaner");
        (dir, std::sync::Mutex::new(cleaner))
    });
    dir
}

/// Fails the test, naming the package to install, when `tool` is missing.
pub fn require_tool(tool: &str, package: &str) {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|out| out.status.success());
    assert!(
        found,
        "{tool} is not installed: run scripts/setup (or: apt-get install {package})"
    );
}

/// The certificates of the TLS tests.
pub struct Certs {
    pub dir: PathBuf,
}

impl Certs {
    /// The CA that signed the server's and alice's certificates.
    pub fn ca(&self) -> String {
        self.path("ca.pem")
    }
    /// A CA that signed nothing the server shows.
    pub fn rogue_ca(&self) -> String {
        self.path("rogue-ca.pem")
    }
    /// alice's client certificate and key, signed by [`Certs::ca`].
    pub fn alice(&self) -> (String, String) {
        (self.path("alice.pem"), self.path("alice.key"))
    }
    /// The flags that give zklock alice's certificate and key.
    pub fn alice_flags(&self) -> [String; 4] {
        let (cert, key) = self.alice();
        ["--tls-cert".into(), cert, "--tls-key".into(), key]
    }
    /// The subject of alice's certificate, as ZooKeeper's x509 scheme names it.
    pub const ALICE_DN: &str = "CN=alice,O=zklock-test";

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// Makes a CA, a rogue CA, a server certificate valid for the name
    /// `localhost` only (not for 127.0.0.1), and a client certificate.
    fn make(dir: &Path) -> Certs {
        require_tool("openssl", "openssl");
        std::fs::create_dir_all(dir).expect("certificate dir");
        let sh = |script: &str| {
            let out = Command::new("sh")
                .args(["-ec", script])
                .current_dir(dir)
                .output()
                .expect("run openssl");
            assert!(
                out.status.success(),
                "openssl failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let ca = |name: &str| {
            format!(
                "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN={name} \
                 -keyout {name}.key -out {name}.pem"
            )
        };
        sh(&ca("ca"));
        sh(&ca("rogue-ca"));
        let signed = |name: &str, subject: &str, ext: &str| {
            format!(
                "openssl req -newkey rsa:2048 -nodes -subj '{subject}' -keyout {name}.key -out {name}.csr
                 printf '{ext}\\n' > {name}.ext
                 openssl x509 -req -in {name}.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
                   -extfile {name}.ext -out {name}.pem"
            )
        };
        sh(&signed(
            "server",
            "/CN=localhost",
            "subjectAltName=DNS:localhost\\nextendedKeyUsage=serverAuth,clientAuth",
        ));
        sh(&signed(
            "alice",
            "/O=zklock-test/CN=alice",
            "extendedKeyUsage=clientAuth",
        ));
        // ZooKeeper's PEM key store: the key and the certificate in one file.
        sh("cat server.key server.pem > server-store.pem");
        Certs {
            dir: dir.to_owned(),
        }
    }
}

/// Debian's netty jars, which ZooKeeper's Netty connection factory needs.
fn netty_jars() -> Vec<String> {
    [
        "netty-buffer",
        "netty-codec",
        "netty-common",
        "netty-handler",
        "netty-resolver",
        "netty-transport",
        "netty-transport-native-epoll",
        "netty-transport-native-unix-common",
    ]
    .iter()
    .map(|name| {
        let jar = format!("/usr/share/java/{name}.jar");
        assert!(
            Path::new(&jar).is_file(),
            "{jar} is missing: run scripts/setup (or: apt-get install libnetty-java)"
        );
        jar
    })
    .collect()
}

/// The shared TLS server: its plain port serves the harness's own client,
/// its TLS port ([`TlsServer::port`]) wants a client certificate signed by
/// [`Certs::ca`].
pub struct TlsServer {
    pub server: ZkServer,
    pub port: u16,
    pub certs: Certs,
}

pub fn tls_server() -> &'static TlsServer {
    static SERVER: OnceLock<TlsServer> = OnceLock::new();
    SERVER.get_or_init(|| {
        let options = netty_jars()
            .into_iter()
            .fold(ZkOptions::default(), ZkOptions::jar);
        TlsServer::start(options, "tls")
    })
}

impl TlsServer {
    /// A server with `options` (a release's own jars bring Netty; Debian's
    /// server needs Debian's) and a TLS port as [`tls_server`]'s, its
    /// certificates in the scratch dir's `certs` subdirectory.
    pub fn start(options: ZkOptions, certs: &str) -> TlsServer {
        let certs = Certs::make(&scratch_dir().join(certs));
        let port = free_ports(1)[0];
        let options = options
            .config("serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory")
            .config(format!("secureClientPort={port}"))
            .config("secureClientPortAddress=127.0.0.1")
            .config(format!(
                "ssl.keyStore.location={}",
                certs.path("server-store.pem")
            ))
            .config("ssl.keyStore.type=PEM")
            .config(format!("ssl.trustStore.location={}", certs.ca()))
            .config("ssl.trustStore.type=PEM")
            .config("ssl.clientAuth=need")
            .config(
                "authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider",
            );
        TlsServer {
            server: ZkServer::with_options(&options),
            port,
            certs,
        }
    }
}

/// The shared SASL server: it enforces SASL, and knows alice (password
/// `alice-pw`) and bob (`bob-pw`) through DIGEST-MD5.
pub fn sasl_server() -> &'static ZkServer {
    static SERVER: OnceLock<ZkServer> = OnceLock::new();
    SERVER.get_or_init(|| {
        ZkServer::with_options(
            &digest_sasl(ZkOptions::default())
                .config("enforce.auth.enabled=true")
                .config("enforce.auth.schemes=sasl"),
        )
    })
}

/// `options` with SASL DIGEST-MD5 known to the server: alice (password
/// `alice-pw`) and bob (`bob-pw`). Enforcing it is left to the caller
/// (3.7 and later can).
pub fn digest_sasl(options: ZkOptions) -> ZkOptions {
    let jaas = scratch_dir().join("digest-jaas.conf");
    write_in_place(
        &jaas,
        "Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n  \
         user_alice=\"alice-pw\"\n  user_bob=\"bob-pw\";\n};\n",
    );
    options
        .jvm_flag(format!(
            "-Djava.security.auth.login.config={}",
            jaas.display()
        ))
        .config("authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider")
}

/// A file `name` holding `text`, for password and auth files, in this test
/// binary's own temp dir (one name, one file: written again, not added).
pub fn secret_file(name: &str, text: &str) -> String {
    let dir = scratch_dir().join("secrets");
    std::fs::create_dir_all(&dir).expect("secrets dir");
    let path = dir.join(name);
    write_in_place(&path, text);
    path.display().to_string()
}

/// Writes `text` to `path` under a name of its own and renames it into
/// place. Tests running side by side write the same files, and a reader
/// must never see one truncated: an empty password, or a JAAS file
/// without its users.
fn write_in_place(path: &Path, text: &str) {
    let mut draft = path.as_os_str().to_owned();
    draft.push(format!(".{}.draft", crate::support::unique()));
    std::fs::write(&draft, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    std::fs::rename(&draft, path).unwrap_or_else(|e| panic!("rename to {}: {e}", path.display()));
}
