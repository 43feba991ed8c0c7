//! Wait-for cycles read from a tree: the graph of the contended locks under
//! a path, the cycles of it that still stand at a second reading, and the
//! look a waiting zklock takes for a certain one through its own wait.
//! `deadlocks` prints them, `ls -o prometheus` and the exporter count them,
//! and `lock` gives up rather than wait for ever in one; all of them read
//! the same graph the same way.

use std::time::Duration;

use anyhow::Result;

use super::waitfor::{Cycle, Doubt, GraphBuilder, WaitGraph};
use super::{Depth, Runs, WalkProgress};
use crate::zk::Session;

/// How many wait-for cycles stand among the locks, by whether each is
/// certain (every wait proven) or only possible.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CycleCounts {
    pub certain: usize,
    pub possible: usize,
}

/// The first look again, without a wake-up, of a waiter that checks for
/// cycles: a cycle that a waiter which does not check closes wakes no one.
const FIRST_RECHECK: Duration = Duration::from_secs(1);

/// The longest pause between such looks: each one walks the tree.
const LAST_RECHECK: Duration = Duration::from_secs(16);

/// The wait-for graph of the contended locks under `path`, read in one
/// walk; only the contended locks' contenders are kept. `progress` hears
/// how far the walk has come.
pub(crate) async fn wait_graph(
    session: &Session,
    path: &str,
    progress: impl FnMut(&WalkProgress),
) -> Result<(WalkProgress, WaitGraph)> {
    let mut graph = GraphBuilder::default();
    let walked = super::walk(session, path, Depth::Tree, Runs::Skip, progress, |lock| {
        graph.add(&lock);
        Ok(())
    })
    .await?;
    Ok((walked, graph.finish()))
}

/// How many cycles of `graph` (read under `path`) still stand at a second
/// reading, certain and possible: what the metrics say of deadlocks.
pub(crate) async fn count_cycles(
    session: &Session,
    path: &str,
    graph: &WaitGraph,
) -> Result<CycleCounts> {
    let cycles = confirmed(session, path, graph, graph.cycles()).await?;
    let certain = cycles.iter().filter(|cycle| cycle.certain()).count();
    Ok(CycleCounts {
        certain,
        possible: cycles.len() - certain,
    })
}

/// The cycles still there at a second reading after a `sync`: a cycle one
/// of whose nodes is gone is gone too; one whose nodes changed is at most
/// possible. Only the cycles' nodes are read again, each once however many
/// cycles and edges it is on, and all of them in a few pipelined batches.
pub(crate) async fn confirmed(
    session: &Session,
    path: &str,
    graph: &WaitGraph,
    mut cycles: Vec<Cycle>,
) -> Result<Vec<Cycle>> {
    if cycles.is_empty() {
        return Ok(cycles);
    }
    let nodes_of = |cycle: &Cycle| -> Vec<usize> { cycle.nodes().collect() };
    let mut nodes: Vec<usize> = cycles.iter().flat_map(nodes_of).collect();
    nodes.sort_unstable();
    nodes.dedup();
    let paths = nodes
        .iter()
        .map(|&v| graph.contenders[v].path.clone())
        .collect();
    session.sync(path).await?;
    let stats = super::read_stats(session, paths).await?;
    // Every node of a cycle is in `nodes`, and `stats` has one reading each.
    let now = |v: usize| {
        let stat = nodes.binary_search(&v).ok().and_then(|at| stats.get(at))?;
        stat.as_ref().map(|stat| (stat.czxid, stat.mzxid))
    };
    cycles.retain_mut(|cycle| {
        let mut gone = false;
        for v in nodes_of(cycle) {
            match now(v) {
                None => gone = true,
                Some(zxids) if zxids != graph.contenders[v].zxids => cycle.doubt(Doubt::Changed),
                Some(_) => {}
            }
        }
        !gone
    });
    Ok(cycles)
}

/// Waits until a certain cycle runs through our session's wait and we are
/// the one of it to give up, looking each time `woke` says we wait (once
/// our node is made, and on each wake-up) and, between wake-ups, at
/// growing intervals: a `sync`, a reading of the locks under `under`, and
/// a second reading of the cycle's nodes. Returns the node whose release
/// would break the cycle (its youngest contender).
///
/// Of the waiters of a certain cycle whose owner records say they look
/// (as ours does), the youngest by creation gives up; the others wait on,
/// and go on once it has gone. All of them read the same cycle, so they
/// agree on who that is, and exactly one gives up. A waiter that does not
/// look is never the one expected to; that it closed the cycle is found at
/// the next look.
pub(crate) async fn certain_cycle(
    session: &Session,
    under: &str,
    woke: &tokio::sync::Notify,
) -> String {
    let mut pause = FIRST_RECHECK;
    loop {
        tokio::select! {
            () = woke.notified() => pause = FIRST_RECHECK,
            () = tokio::time::sleep(pause) => pause = (pause * 2).min(LAST_RECHECK),
        }
        // A look that fails leaves the wait as it was: the check must never
        // be what makes a lock fail.
        match ours_to_break(session, under).await {
            Ok(Some(break_with)) => return break_with,
            Ok(None) => {}
            Err(err) => tracing::warn!("could not look for a wait-for cycle: {err:#}"),
        }
    }
}

/// The node whose release breaks a certain cycle in which our session's
/// waiter is the one to give up, if one stands now.
async fn ours_to_break(session: &Session, under: &str) -> Result<Option<String>> {
    session.sync(under).await?;
    let (_, graph) = wait_graph(session, under, |_| {}).await?;
    let certain = |cycle: &Cycle| cycle.certain() && gives_up(&graph, cycle) == Some(session.id());
    let cycles: Vec<Cycle> = graph.cycles().into_iter().filter(certain).collect();
    let confirmed = confirmed(session, under, &graph, cycles).await?;
    let cycle = confirmed.iter().find(|cycle| cycle.certain());
    Ok(cycle.map(|cycle| graph.contenders[cycle.youngest].path.clone()))
}

/// The session of the waiter of `cycle` that gives up: the youngest by
/// creation (the zxid orders every write of the ensemble) of those whose
/// owner record says they look for cycles.
fn gives_up(graph: &WaitGraph, cycle: &Cycle) -> Option<i64> {
    cycle
        .contenders
        .iter()
        .map(|&v| &graph.contenders[v])
        .filter(|vertex| !vertex.holding && vertex.checks_cycles())
        .max_by_key(|vertex| vertex.zxids.0)
        .map(|vertex| vertex.session)
}
