//! A blocking ZooKeeper client for arranging and inspecting nodes in tests,
//! built on `zookeeper-client` with a runtime of its own.
//!
//! The runtime is a current-thread tokio runtime driven by a background
//! thread, so the session keeps pinging the server between calls; each call
//! blocks the test thread on a [`tokio::runtime::Handle`].

use std::future::Future;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::runtime::Handle;
use tokio::sync::oneshot;
use zookeeper_client as zkc;

/// The session timeout of helper clients unless told otherwise.
pub const DEFAULT_SESSION_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a helper waits to connect.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long closing a session may take before the helper gives up on it.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(2);

/// A background thread that drives one current-thread runtime.
struct Driver {
    handle: Handle,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Driver {
    fn new() -> Driver {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("build a tokio runtime for the test client");
        let handle = runtime.handle().clone();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("zk-test-client".into())
            .spawn(move || {
                runtime.block_on(async {
                    let _ = stopped.await;
                });
            })
            .expect("spawn the test client's runtime thread");
        Driver {
            handle,
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A blocking ZooKeeper client. Its methods panic with the path and error on
/// failure, except the `try_` ones. Dropping it closes the session (its
/// ephemeral nodes go at once); [`Zk::abandon`] drops it without closing, as
/// a crashed process would.
pub struct Zk {
    // Declared before `driver`: dropped while the runtime still runs.
    client: Option<zkc::Client>,
    hosts: String,
    driver: Driver,
}

impl Zk {
    /// Connects to `hosts` (`host:port[,...][/chroot]`) with a 10 s session.
    pub fn connect(hosts: &str) -> Zk {
        Zk::connect_with(hosts, |connector| connector)
    }

    /// Connects after `configure` has adjusted the connector (session
    /// timeout, auth, read-only, ...). The session timeout is 10 s unless
    /// `configure` sets another.
    pub fn connect_with(
        hosts: &str,
        configure: impl FnOnce(zkc::Connector) -> zkc::Connector,
    ) -> Zk {
        Zk::try_connect_with(hosts, configure)
            .unwrap_or_else(|e| panic!("test client cannot connect to {hosts}: {e}"))
    }

    /// [`Zk::connect_with`], returning the error instead of panicking.
    pub fn try_connect_with(
        hosts: &str,
        configure: impl FnOnce(zkc::Connector) -> zkc::Connector,
    ) -> Result<Zk, zkc::Error> {
        let driver = Driver::new();
        let connector =
            configure(zkc::Client::connector().with_session_timeout(DEFAULT_SESSION_TIMEOUT));
        let client = driver.handle.block_on(async {
            tokio::time::timeout(CONNECT_TIMEOUT, connector.connect(hosts))
                .await
                .unwrap_or(Err(zkc::Error::Timeout))
        })?;
        Ok(Zk {
            client: Some(client),
            hosts: hosts.to_owned(),
            driver,
        })
    }

    /// This client's session, rooted at `chroot` (absolute, below this
    /// client's root): paths are then relative to it.
    pub fn chroot(mut self, chroot: &str) -> Zk {
        let client = self.client.take().expect("client present until dropped");
        let client = client
            .chroot(chroot.to_owned())
            .unwrap_or_else(|_| panic!("bad chroot {chroot:?}"));
        self.client = Some(client);
        self.hosts = format!("{}{chroot}", self.hosts);
        self
    }

    /// The underlying async client, for anything not wrapped here.
    pub fn client(&self) -> &zkc::Client {
        self.client.as_ref().expect("client present until dropped")
    }

    /// Runs a future on this client's runtime and waits for it, e.g.
    /// `zk.block_on(zk.client().list_ephemerals("/"))`.
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.driver.handle.block_on(future)
    }

    /// The session id.
    pub fn session_id(&self) -> i64 {
        self.client().session_id().0
    }

    /// The session id as ZooKeeper's tools print it (`0x...`).
    pub fn session_hex(&self) -> String {
        format!("0x{:x}", self.session_id())
    }

    /// Creates a persistent node open to anyone; returns its stat.
    pub fn create(&self, path: &str, data: &[u8]) -> zkc::Stat {
        self.create_with(
            path,
            data,
            &zkc::CreateMode::Persistent.with_acls(zkc::Acls::anyone_all()),
        )
        .0
    }

    /// Creates a node with the given options; returns its stat and full path
    /// (with the sequence number of a sequential node).
    pub fn create_with(
        &self,
        path: &str,
        data: &[u8],
        options: &zkc::CreateOptions<'_>,
    ) -> (zkc::Stat, String) {
        self.try_create_with(path, data, options)
            .unwrap_or_else(|e| panic!("create {path}: {e}"))
    }

    /// [`Zk::create_with`], returning the error instead of panicking.
    pub fn try_create_with(
        &self,
        path: &str,
        data: &[u8],
        options: &zkc::CreateOptions<'_>,
    ) -> Result<(zkc::Stat, String), zkc::Error> {
        let (stat, sequence) = self.block_on(self.client().create(path, data, options))?;
        let full = if sequence.into_i64() >= 0 {
            format!("{path}{sequence}")
        } else {
            path.to_owned()
        };
        Ok((stat, full))
    }

    /// Creates an ephemeral sequential node `PREFIX<seq>` (a contender, say)
    /// open to anyone; returns its full path.
    pub fn create_ephemeral_sequential(&self, prefix: &str, data: &[u8]) -> String {
        self.create_with(
            prefix,
            data,
            &zkc::CreateMode::EphemeralSequential.with_acls(zkc::Acls::anyone_all()),
        )
        .1
    }

    /// Creates an ephemeral node open to anyone.
    pub fn create_ephemeral(&self, path: &str, data: &[u8]) -> zkc::Stat {
        self.create_with(
            path,
            data,
            &zkc::CreateMode::Ephemeral.with_acls(zkc::Acls::anyone_all()),
        )
        .0
    }

    /// Creates `path` and any missing ancestors as persistent nodes (`mkdir -p`).
    pub fn mkdir_p(&self, path: &str) {
        let options = zkc::CreateMode::Persistent.with_acls(zkc::Acls::anyone_all());
        self.block_on(self.client().mkdir(path, &options))
            .unwrap_or_else(|e| panic!("mkdir -p {path}: {e}"));
    }

    /// Reads a node's data and stat.
    pub fn get(&self, path: &str) -> (Vec<u8>, zkc::Stat) {
        self.try_get(path)
            .unwrap_or_else(|e| panic!("get {path}: {e}"))
    }

    /// [`Zk::get`], returning the error instead of panicking.
    pub fn try_get(&self, path: &str) -> Result<(Vec<u8>, zkc::Stat), zkc::Error> {
        self.block_on(self.client().get_data(path))
    }

    /// The node's stat, or `None` when it does not exist.
    pub fn exists(&self, path: &str) -> Option<zkc::Stat> {
        self.block_on(self.client().check_stat(path))
            .unwrap_or_else(|e| panic!("exists {path}: {e}"))
    }

    /// The node's children, sorted by name.
    pub fn children(&self, path: &str) -> Vec<String> {
        let mut children = self
            .block_on(self.client().list_children(path))
            .unwrap_or_else(|e| panic!("list {path}: {e}"));
        children.sort();
        children
    }

    /// The node's children, sorted by name; none when the node does not
    /// exist (an empty lock directory is a container node, which the server
    /// deletes soon after its last child goes).
    pub fn children_if_any(&self, path: &str) -> Vec<String> {
        match self.block_on(self.client().list_children(path)) {
            Ok(mut children) => {
                children.sort();
                children
            }
            Err(zkc::Error::NoNode) => Vec::new(),
            Err(e) => panic!("list {path}: {e}"),
        }
    }

    /// Sets a node's data (any version); returns the new stat.
    pub fn set(&self, path: &str, data: &[u8]) -> zkc::Stat {
        self.block_on(self.client().set_data(path, data, None))
            .unwrap_or_else(|e| panic!("set {path}: {e}"))
    }

    /// Deletes a node (any version).
    pub fn delete(&self, path: &str) {
        self.try_delete(path)
            .unwrap_or_else(|e| panic!("delete {path}: {e}"));
    }

    /// [`Zk::delete`], returning the error instead of panicking.
    pub fn try_delete(&self, path: &str) -> Result<(), zkc::Error> {
        self.block_on(self.client().delete(path, None))
    }

    /// Replaces a node's ACL (any ACL version).
    pub fn set_acl(&self, path: &str, acl: &[zkc::Acl]) -> zkc::Stat {
        self.block_on(self.client().set_acl(path, acl, None))
            .unwrap_or_else(|e| panic!("set ACL of {path}: {e}"))
    }

    /// A node's ACL.
    pub fn get_acl(&self, path: &str) -> Vec<zkc::Acl> {
        self.block_on(self.client().get_acl(path))
            .unwrap_or_else(|e| panic!("get ACL of {path}: {e}"))
            .0
    }

    /// Adds an authentication (e.g. `("digest", "alice:secret")`) to the session.
    pub fn add_auth(&self, scheme: &str, credential: &str) {
        self.block_on(self.client().auth(scheme, credential.as_bytes()))
            .unwrap_or_else(|e| panic!("auth {scheme}: {e}"));
    }

    /// Closes the session and waits (up to its timeout) until the server has
    /// dropped it.
    pub fn close(mut self) {
        self.close_session();
    }

    /// Drops the client without closing its session, as a crashed process
    /// would: the server keeps the session (and its ephemeral nodes) until it
    /// times out.
    pub fn abandon(mut self) {
        if let Some(client) = self.client.take() {
            // Stop the runtime first so that dropping the client cannot
            // send a close request.
            let Driver { stop, thread, .. } = &mut self.driver;
            if let Some(stop) = stop.take() {
                let _ = stop.send(());
            }
            if let Some(thread) = thread.take() {
                let _ = thread.join();
            }
            std::mem::forget(client);
        }
    }

    fn close_session(&mut self) {
        let Some(client) = self.client.take() else {
            return;
        };
        let mut state = client.state_watcher();
        let connected = matches!(
            state.peek_state(),
            zkc::SessionState::SyncConnected | zkc::SessionState::ConnectedReadOnly
        );
        drop(client);
        if !connected {
            // No server to tell: it will expire the session on its own.
            return;
        }
        self.driver.handle.block_on(async {
            let closed = async {
                let mut current = state.state();
                while !current.is_terminated() {
                    current = state.changed().await;
                }
            };
            let _ = tokio::time::timeout(CLOSE_TIMEOUT, closed).await;
        });
    }
}

impl Drop for Zk {
    fn drop(&mut self) {
        self.close_session();
    }
}
