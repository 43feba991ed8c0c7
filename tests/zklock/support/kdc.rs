//! A real MIT Kerberos KDC in a temp dir on a free port, with principals and
//! keytabs for `zookeeper/localhost` and the client `alice`, and the shared
//! ZooKeeper server that authenticates its clients through it (JAAS
//! `Krb5LoginModule`, SASL enforced). Started once per test binary.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};

use super::secured::{require_tool, scratch_dir};
use super::{ZkOptions, ZkServer, free_ports, wait_until};

pub const REALM: &str = "ZKLOCK.TEST";

/// The KDC, its files, and the ZooKeeper server that trusts it.
pub struct Kerberos {
    pub dir: PathBuf,
    pub server: ZkServer,
    /// The KDC runs while this pipe is open: it closes when the test
    /// binary ends, however it ends, and the KDC is then killed.
    _kdc: Mutex<(Child, ChildStdin)>,
}

impl Kerberos {
    /// `KRB5_CONFIG` for every Kerberos client of this realm.
    pub fn krb5_conf(&self) -> PathBuf {
        self.dir.join("krb5.conf")
    }

    /// A fresh ticket cache holding alice's ticket (`kinit -kt`).
    pub fn kinit_alice(&self, cache: &str) -> PathBuf {
        let cache = self.dir.join(cache);
        run(Command::new("kinit")
            .args(["-kt", &self.dir.join("alice.keytab").display().to_string()])
            .arg(format!("alice@{REALM}"))
            .env("KRB5_CONFIG", self.krb5_conf())
            .env("KRB5CCNAME", format!("FILE:{}", cache.display())));
        cache
    }
}

fn run(command: &mut Command) {
    let out = command.output().expect("run a Kerberos tool");
    assert!(
        out.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub fn kerberos() -> &'static Kerberos {
    static KERBEROS: OnceLock<Kerberos> = OnceLock::new();
    KERBEROS.get_or_init(start)
}

fn start() -> Kerberos {
    for (tool, package) in [
        ("krb5kdc", "krb5-kdc"),
        ("kdb5_util", "krb5-kdc"),
        ("kadmin.local", "krb5-admin-server"),
        ("kinit", "krb5-user"),
    ] {
        require_tool(tool, package);
    }
    let dir = scratch_dir().join("kdc");
    std::fs::create_dir_all(&dir).expect("KDC dir");
    let port = free_ports(1)[0];
    write_configs(&dir, port);
    let env = |command: &mut Command| {
        command
            .env("KRB5_CONFIG", dir.join("krb5.conf"))
            .env("KRB5_KDC_PROFILE", dir.join("kdc.conf"));
    };
    let mut create = Command::new("kdb5_util");
    create.args(["create", "-s", "-r", REALM, "-P", "master-pw"]);
    env(&mut create);
    run(&mut create);
    for (principal, keytab) in [
        ("zookeeper/localhost", "zookeeper.keytab"),
        ("alice", "alice.keytab"),
    ] {
        let mut admin = Command::new("kadmin.local");
        admin.args([
            "-r",
            REALM,
            "-q",
            &format!("addprinc -randkey {principal}@{REALM}"),
        ]);
        env(&mut admin);
        run(&mut admin);
        let mut add = Command::new("kadmin.local");
        add.args([
            "-r",
            REALM,
            "-q",
            &format!(
                "ktadd -k {} {principal}@{REALM}",
                dir.join(keytab).display()
            ),
        ]);
        env(&mut add);
        run(&mut add);
    }
    let mut kdc = Command::new("sh");
    kdc.args(["-c", "krb5kdc -n & pid=$!; read _; kill $pid"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    env(&mut kdc);
    let mut child = kdc.spawn().expect("start krb5kdc");
    let stdin = child.stdin.take().expect("KDC pipe");
    wait_until(
        std::time::Duration::from_secs(20),
        "the KDC to listen",
        || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok(),
    );
    let server = ZkServer::with_options(&server_options(&dir));
    Kerberos {
        dir,
        server,
        _kdc: Mutex::new((child, stdin)),
    }
}

fn write_configs(dir: &Path, port: u16) {
    let d = dir.display();
    std::fs::write(
        dir.join("krb5.conf"),
        format!(
            "[libdefaults]\n default_realm = {REALM}\n dns_lookup_kdc = false\n \
             dns_lookup_realm = false\n rdns = false\n udp_preference_limit = 1\n\n\
             [realms]\n {REALM} = {{\n  kdc = 127.0.0.1:{port}\n }}\n"
        ),
    )
    .expect("krb5.conf");
    std::fs::write(
        dir.join("kdc.conf"),
        format!(
            "[kdcdefaults]\n kdc_ports = {port}\n kdc_tcp_ports = {port}\n\n\
             [realms]\n {REALM} = {{\n  database_name = {d}/principal\n  \
             key_stash_file = {d}/stash\n  acl_file = {d}/kadm5.acl\n  kdc_ports = {port}\n  \
             kdc_tcp_ports = {port}\n }}\n\n[logging]\n kdc = FILE:{d}/kdc.log\n"
        ),
    )
    .expect("kdc.conf");
    std::fs::write(dir.join("kadm5.acl"), "").expect("kadm5.acl");
}

fn server_options(dir: &Path) -> ZkOptions {
    let jaas = dir.join("jaas.conf");
    std::fs::write(
        &jaas,
        format!(
            "Server {{\n  com.sun.security.auth.module.Krb5LoginModule required\n  \
             useKeyTab=true\n  keyTab=\"{}\"\n  storeKey=true\n  useTicketCache=false\n  \
             principal=\"zookeeper/localhost@{REALM}\";\n}};\n",
            dir.join("zookeeper.keytab").display()
        ),
    )
    .expect("JAAS file");
    ZkOptions::default()
        .jvm_flag(format!(
            "-Djava.security.auth.login.config={}",
            jaas.display()
        ))
        .jvm_flag(format!(
            "-Djava.security.krb5.conf={}",
            dir.join("krb5.conf").display()
        ))
        .config("authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider")
        .config("enforce.auth.enabled=true")
        .config("enforce.auth.schemes=sasl")
}
