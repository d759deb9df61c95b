//! The NUMA topology: the online nodes and each node's CPUs, read from
//! sysfs once per process (it does not change while iomark runs).

use std::sync::OnceLock;

use crate::job::value::parse_index_list;

const NODES: &str = "/sys/devices/system/node";

/// Online nodes and their CPUs.
#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    /// Node 0 alone where sysfs says nothing.
    pub nodes: Vec<usize>,
    /// (node, its CPUs), for the nodes whose CPU list could be read.
    pub cpus: Vec<(usize, Vec<usize>)>,
}

impl Topology {
    fn read() -> Topology {
        let nodes = std::fs::read_to_string(format!("{NODES}/online"))
            .ok()
            .and_then(|s| parse_index_list(s.trim(), "node").ok())
            .unwrap_or_else(|| vec![0]);
        let cpus = nodes
            .iter()
            .filter_map(|n| {
                let s = std::fs::read_to_string(format!("{NODES}/node{n}/cpulist")).ok()?;
                Some((*n, parse_index_list(s.trim(), "CPU").ok()?))
            })
            .collect();
        Topology { nodes, cpus }
    }

    /// The CPUs of `node` (none when unknown).
    pub fn cpus_of(&self, node: usize) -> &[usize] {
        self.cpus
            .iter()
            .find(|(n, _)| *n == node)
            .map(|(_, c)| c.as_slice())
            .unwrap_or(&[])
    }
}

/// This machine's topology.
pub fn topology() -> &'static Topology {
    static T: OnceLock<Topology> = OnceLock::new();
    T.get_or_init(Topology::read)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_machine_has_a_node_with_cpus() {
        let t = topology();
        assert!(!t.nodes.is_empty());
        let n = t.nodes[0];
        // Without sysfs NUMA information there is node 0 and no CPU list.
        if t.cpus.is_empty() {
            assert_eq!(t.nodes, vec![0]);
        } else {
            assert!(!t.cpus_of(n).is_empty(), "{t:?}");
        }
        assert!(t.cpus_of(usize::MAX).is_empty());
    }
}
