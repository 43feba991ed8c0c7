//! ZooKeeper `digest` ACL ids: `user:base64(sha1("user:password"))`, as
//! `DigestAuthenticationProvider.generateDigest` computes them.

use zookeeper_client as zkc;

/// The digest id of `user` with `password`: `user:BASE64(SHA1(user:password))`.
pub fn digest_id(user: &str, password: &str) -> String {
    use base64::Engine;
    use sha1::Digest;
    let hash = sha1::Sha1::digest(format!("{user}:{password}").as_bytes());
    let encoded = base64::engine::general_purpose::STANDARD.encode(hash);
    format!("{user}:{encoded}")
}

/// An ACL entry granting `permission` to `user` authenticated with
/// `password` (`--auth digest:user:password`).
pub fn digest_acl(user: &str, password: &str, permission: zkc::Permission) -> zkc::Acl {
    zkc::Acl::new(
        permission,
        zkc::AuthId::new("digest", &digest_id(user, password)),
    )
}
