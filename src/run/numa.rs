//! NUMA placement (`numa_cpu_nodes`, `numa_mem_policy`): the nodes this
//! machine has, their CPUs (as `host::numa` found them), and the calling
//! thread's memory policy.

use crate::host::numa::topology;
use crate::job::spec::{MemPolicy, MemPolicyMode, Nodes};

/// The machine's online NUMA nodes (node 0 where sysfs says nothing).
pub fn online_nodes() -> Vec<usize> {
    topology().nodes.clone()
}

/// The nodes a list names on this machine.
pub fn resolve(nodes: &Nodes) -> Vec<usize> {
    match nodes {
        Nodes::All => online_nodes(),
        Nodes::List(v) => v.clone(),
    }
}

/// A job names a NUMA node this machine does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "NUMA node {node} does not exist (this machine has node{} {})",
    if online.len() == 1 { "" } else { "s" },
    online.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(",")
)]
pub struct MissingNode {
    pub node: usize,
    /// The nodes it has.
    pub online: Vec<usize>,
}

/// Fails naming the first of `nodes` this machine does not have.
pub fn check_nodes(nodes: &[usize]) -> Result<(), MissingNode> {
    let online = online_nodes();
    match nodes.iter().find(|n| !online.contains(n)) {
        None => Ok(()),
        Some(&node) => Err(MissingNode { node, online }),
    }
}

/// The CPUs of `nodes`.
pub fn node_cpus(nodes: &[usize]) -> Vec<usize> {
    let t = topology();
    let mut cpus: Vec<usize> = nodes
        .iter()
        .flat_map(|n| t.cpus_of(*n).iter().copied())
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

/// Sets the calling thread's memory policy (set_mempolicy(2)).
pub fn set_mem_policy(p: &MemPolicy) -> std::io::Result<()> {
    const BITS: usize = 64;
    let mut mask = vec![0 as libc::c_ulong; 4096 / BITS];
    let nodes = resolve(&p.nodes);
    for &n in &nodes {
        mask[n / BITS] |= 1 << (n % BITS);
    }
    let mode = match p.mode {
        MemPolicyMode::Default => 0,
        MemPolicyMode::Prefer => 1,
        MemPolicyMode::Bind => 2,
        MemPolicyMode::Interleave => 3,
        MemPolicyMode::Local => 4,
    };
    let (ptr, maxnode) = if nodes.is_empty() {
        (std::ptr::null(), 0)
    } else {
        (mask.as_ptr(), mask.len() * BITS)
    };
    // SAFETY: the mask outlives the call; maxnode counts its bits.
    #[cfg(target_os = "linux")]
    if unsafe { libc::syscall(libc::SYS_set_mempolicy, mode, ptr, maxnode) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // Refused before the run elsewhere (`engine::platform`).
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (mode, ptr, maxnode);
        Err(crate::sys::from_errno(libc::EINVAL))
    }
    #[cfg(target_os = "linux")]
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::value::parse_index_list;

    #[test]
    fn lists_and_nodes() {
        assert_eq!(parse_index_list("0-2,5", "CPU"), Ok(vec![0, 1, 2, 5]));
        assert!(parse_index_list("3-1", "CPU").is_err());
        use crate::job::value::parse_nodes;
        assert_eq!(resolve(&parse_nodes("all").unwrap()), online_nodes());
        assert_eq!(parse_nodes("4095").unwrap(), Nodes::List(vec![4095]));
        assert!(check_nodes(&[4095])
            .unwrap_err()
            .to_string()
            .contains("does not exist"));
        assert!(check_nodes(&online_nodes()).is_ok());
        assert!(parse_nodes("x")
            .unwrap_err()
            .message
            .contains("not a NUMA node number"));
        assert!(!node_cpus(&online_nodes()).is_empty());
    }
}
