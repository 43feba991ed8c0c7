//! Secured connections: TLS to the server (`secureClientPort`) and SASL
//! authentication, in the client library's terms.
//!
//! Secrets (passwords, private keys, auth credentials) are held in
//! [`Secret`], whose `Debug` and `Display` never show the value, so that no
//! log line or error message can carry one by accident.

use std::fmt;

use zookeeper_client as zkc;

/// A value that must never be shown: a password, a credential, a key.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The value itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// Wiped as it goes: a process that keeps a copy of zklock's memory (the
/// guard, forked before the lock) keeps no secret it dropped.
impl Drop for Secret {
    fn drop(&mut self) {
        let mut bytes = std::mem::take(&mut self.0).into_bytes();
        bytes.fill(0);
        std::hint::black_box(&bytes);
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<secret>")
    }
}

/// TLS settings, with the PEM files already read.
#[derive(Clone, Debug)]
pub struct TlsConfig {
    /// Every host without a `tcp://` prefix speaks TLS (`--tls`); otherwise
    /// only `tcp+tls://` hosts do.
    pub every_host: bool,
    /// The trusted CA certificates (PEM).
    pub ca: String,
    /// The client certificate and its private key (PEM), for mutual TLS.
    pub identity: Option<(String, Secret)>,
    pub verify_hostname: bool,
}

impl TlsConfig {
    /// The client library's TLS options; a PEM file that does not parse is
    /// named in the error.
    pub(super) fn options(&self) -> Result<zkc::TlsOptions, String> {
        let mut options = zkc::TlsOptions::new()
            .with_pem_ca(&self.ca)
            .map_err(|e| format!("the TLS CA certificates do not parse: {e}"))?;
        if let Some((cert, key)) = &self.identity {
            options = options.with_pem_identity(cert, key.expose()).map_err(|_| {
                "the TLS client certificate or key does not parse (PEM expected)".to_owned()
            })?;
        }
        if !self.verify_hostname {
            // SAFETY: not memory safety: the operator asked to accept any
            // name in the server's certificate with --tls-no-verify-hostname.
            options = unsafe { options.with_no_hostname_verification() };
        }
        Ok(options)
    }
}

/// A SASL mechanism and what it needs.
#[derive(Clone, Debug)]
pub enum SaslConfig {
    DigestMd5 {
        user: String,
        password: Secret,
    },
    Gssapi {
        service: String,
        host: Option<String>,
    },
}

impl SaslConfig {
    /// The mechanism's name, as SASL spells it, for messages.
    pub fn mechanism(&self) -> &'static str {
        match self {
            SaslConfig::DigestMd5 { .. } => "DIGEST-MD5",
            SaslConfig::Gssapi { .. } => "GSSAPI",
        }
    }

    /// The client library's SASL options.
    pub(super) fn options(&self) -> Result<zkc::SaslOptions, String> {
        match self {
            SaslConfig::DigestMd5 { user, password } => {
                Ok(zkc::SaslOptions::digest_md5(user.clone(), password.expose().to_owned()).into())
            }
            #[cfg(feature = "kerberos")]
            SaslConfig::Gssapi { service, host } => {
                // The library is opened on first use; opening it here turns
                // a missing one into this error instead of a failed exchange.
                libgssapi_sys::load()
                    .map_err(|why| format!("{why} (Debian: apt-get install libgssapi-krb5-2)"))?;
                let options = zkc::SaslOptions::gssapi().with_username(service.clone());
                Ok(match host {
                    Some(host) => options.with_hostname(host.clone()),
                    None => options,
                }
                .into())
            }
            #[cfg(not(feature = "kerberos"))]
            SaslConfig::Gssapi { .. } => Err("this zklock was built without GSSAPI (Kerberos) \
                 support: build it with `cargo build --features kerberos`"
                .to_owned()),
        }
    }
}

/// Why a TLS handshake with `host:port` fails, found by trying one with the
/// same certificates: the client library only reports that no server could
/// be reached. `None` when the handshake succeeds or the server cannot be
/// reached at all.
pub(super) fn diagnose_handshake(
    tls: &TlsConfig,
    host: &str,
    port: u16,
    timeout: std::time::Duration,
) -> Option<String> {
    use std::net::ToSocketAddrs;
    let config = probe_config(tls).ok()?;
    let name = rustls::pki_types::ServerName::try_from(host.to_owned()).ok()?;
    let mut connection = rustls::ClientConnection::new(std::sync::Arc::new(config), name).ok()?;
    let address = (host, port).to_socket_addrs().ok()?.next()?;
    let mut socket = std::net::TcpStream::connect_timeout(&address, timeout).ok()?;
    socket.set_read_timeout(Some(timeout)).ok()?;
    socket.set_write_timeout(Some(timeout)).ok()?;
    // A server that requires a client certificate says so only after the
    // client's side of a TLS 1.3 handshake is done: send a byte and read.
    let outcome = (|| {
        while connection.is_handshaking() {
            connection.complete_io(&mut socket)?;
        }
        std::io::Write::write_all(&mut connection.writer(), &[0, 0, 0, 0])?;
        connection.complete_io(&mut socket)?;
        connection.complete_io(&mut socket)
    })();
    let err = outcome.err()?;
    let tls_error = err.get_ref()?.downcast_ref::<rustls::Error>()?;
    explain(tls_error, tls, host)
}

fn probe_config(tls: &TlsConfig) -> Result<rustls::ClientConfig, String> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_pemfile::certs(&mut tls.ca.as_bytes()) {
        roots
            .add(cert.map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    }
    let builder = rustls::ClientConfig::builder().with_root_certificates(roots);
    match &tls.identity {
        None => Ok(builder.with_no_client_auth()),
        Some((cert, key)) => {
            let chain = rustls_pemfile::certs(&mut cert.as_bytes())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            let key = rustls_pemfile::private_key(&mut key.expose().as_bytes())
                .map_err(|e| e.to_string())?
                .ok_or("no key")?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| e.to_string())
        }
    }
}

fn explain(err: &rustls::Error, tls: &TlsConfig, host: &str) -> Option<String> {
    use rustls::{AlertDescription as Alert, CertificateError as Cert, Error as E};
    let why = match err {
        E::InvalidCertificate(Cert::UnknownIssuer | Cert::BadSignature) => {
            "the server's certificate is not signed by a trusted CA (--tls-ca)".to_owned()
        }
        E::InvalidCertificate(Cert::NotValidForName | Cert::NotValidForNameContext { .. }) => {
            if !tls.verify_hostname {
                return None;
            }
            format!(
                "the server's certificate is not valid for the name {host:?} \
                 (connect by a name it holds, or --tls-no-verify-hostname)"
            )
        }
        E::InvalidCertificate(Cert::Expired | Cert::ExpiredContext { .. }) => {
            "the server's certificate has expired".to_owned()
        }
        E::InvalidCertificate(other) => format!("the server's certificate is refused: {other:?}"),
        E::AlertReceived(
            Alert::CertificateRequired | Alert::HandshakeFailure | Alert::BadCertificate,
        ) if tls.identity.is_none() => {
            "the server requires a client certificate (--tls-cert and --tls-key)".to_owned()
        }
        E::AlertReceived(alert) => {
            format!(
                "the server refused the handshake ({alert:?}); is the client certificate one it trusts?"
            )
        }
        other => format!("TLS handshake failed: {other}"),
    };
    Some(why)
}

/// The secured-connection settings: credentials, TLS and SASL. A detached
/// holder receives them from its parent over a private pipe
/// ([`Secured::to_handover`]), never in its argv or environment.
#[derive(Clone, Debug, Default)]
pub struct Secured {
    pub auth: Vec<super::Auth>,
    pub tls: Option<TlsConfig>,
    pub sasl: Option<SaslConfig>,
}

/// [`Secured`] in plain fields, for the pipe.
#[derive(serde::Serialize, serde::Deserialize)]
struct Handover {
    auth: Vec<(String, String)>,
    tls: Option<TlsHandover>,
    sasl: Option<SaslHandover>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct TlsHandover {
    every_host: bool,
    ca: String,
    identity: Option<(String, String)>,
    verify_hostname: bool,
}

#[derive(serde::Serialize, serde::Deserialize)]
enum SaslHandover {
    DigestMd5 {
        user: String,
        password: String,
    },
    Gssapi {
        service: String,
        host: Option<String>,
    },
}

impl Secured {
    /// The settings as one line of text for the holder's pipe.
    pub fn to_handover(&self) -> String {
        let handover = Handover {
            auth: self
                .auth
                .iter()
                .map(|a| (a.scheme.clone(), a.credential.expose().to_owned()))
                .collect(),
            tls: self.tls.as_ref().map(|tls| TlsHandover {
                every_host: tls.every_host,
                ca: tls.ca.clone(),
                identity: tls
                    .identity
                    .as_ref()
                    .map(|(cert, key)| (cert.clone(), key.expose().to_owned())),
                verify_hostname: tls.verify_hostname,
            }),
            sasl: self.sasl.as_ref().map(|sasl| match sasl {
                SaslConfig::DigestMd5 { user, password } => SaslHandover::DigestMd5 {
                    user: user.clone(),
                    password: password.expose().to_owned(),
                },
                SaslConfig::Gssapi { service, host } => SaslHandover::Gssapi {
                    service: service.clone(),
                    host: host.clone(),
                },
            }),
        };
        serde_json::to_string(&handover).expect("plain strings always serialise")
    }

    /// Reads what [`Secured::to_handover`] wrote.
    pub fn from_handover(text: &str) -> Option<Secured> {
        let handover: Handover = serde_json::from_str(text).ok()?;
        Some(Secured {
            auth: handover
                .auth
                .into_iter()
                .map(|(scheme, credential)| super::Auth {
                    scheme,
                    credential: Secret::new(credential),
                })
                .collect(),
            tls: handover.tls.map(|tls| TlsConfig {
                every_host: tls.every_host,
                ca: tls.ca,
                identity: tls.identity.map(|(cert, key)| (cert, Secret::new(key))),
                verify_hostname: tls.verify_hostname,
            }),
            sasl: handover.sasl.map(|sasl| match sasl {
                SaslHandover::DigestMd5 { user, password } => SaslConfig::DigestMd5 {
                    user,
                    password: Secret::new(password),
                },
                SaslHandover::Gssapi { service, host } => SaslConfig::Gssapi { service, host },
            }),
        })
    }
}
