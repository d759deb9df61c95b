//! Who talks to whom: sets of ranks, the host of every rank, and the
//! tree the ranks meet along.
//!
//! Until the ranks know their hosts they meet along a k-ary tree of rank
//! numbers ([`Tree::by_rank`]). Once they do, along a tree of hosts
//! ([`Tree::by_host`]): the ranks of a host hang below its first rank
//! (its leader), and the leaders form a k-ary tree below rank 0. So the
//! results of one host are merged on that host first, and each rank
//! hears from at most its host's ranks and k leaders.
//!
//! A rank that is lost (silent past the timeout) is skipped: its children
//! hang below its nearest live ancestor ([`Tree::live_parent`],
//! [`Tree::live_children`]).

use serde::{Deserialize, Serialize};

/// Leaders (or ranks) below each one.
pub const FAN_OUT: u32 = 8;

/// A set of ranks: sorted, disjoint, non-adjacent `[start, end)` ranges.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankSet(Vec<(u32, u32)>);

impl RankSet {
    pub fn one(r: u32) -> RankSet {
        RankSet(vec![(r, r + 1)])
    }

    /// `[start, end)`.
    pub fn range(start: u32, end: u32) -> RankSet {
        if start >= end {
            RankSet::default()
        } else {
            RankSet(vec![(start, end)])
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> u32 {
        self.0.iter().map(|(a, b)| b - a).sum()
    }

    pub fn contains(&self, r: u32) -> bool {
        let i = self.0.partition_point(|&(_, end)| end <= r);
        self.0.get(i).is_some_and(|&(start, _)| start <= r)
    }

    pub fn first(&self) -> Option<u32> {
        self.0.first().map(|&(a, _)| a)
    }

    pub fn add(&mut self, r: u32) {
        self.union(&RankSet::one(r));
    }

    /// Adds every rank of `o`.
    pub fn union(&mut self, o: &RankSet) {
        if o.0.is_empty() {
            return;
        }
        let mut all: Vec<(u32, u32)> = self.0.iter().chain(&o.0).copied().collect();
        all.sort_unstable();
        let mut out: Vec<(u32, u32)> = Vec::with_capacity(all.len());
        for (a, b) in all {
            match out.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => out.push((a, b)),
            }
        }
        self.0 = out;
    }

    /// The ranks of `self` not in `o`.
    pub fn minus(&self, o: &RankSet) -> RankSet {
        let mut out = Vec::new();
        for &(a, b) in &self.0 {
            let mut start = a;
            for &(c, d) in &o.0 {
                if d <= start || c >= b {
                    continue;
                }
                if c > start {
                    out.push((start, c));
                }
                start = start.max(d);
            }
            if start < b {
                out.push((start, b));
            }
        }
        RankSet(out)
    }

    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().flat_map(|&(a, b)| a..b)
    }

    /// `3`, `0-3, 7` (for messages).
    pub fn text(&self) -> String {
        self.0
            .iter()
            .map(|&(a, b)| {
                if b == a + 1 {
                    a.to_string()
                } else {
                    format!("{a}-{}", b - 1)
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Every rank's host: the distinct host names in the order of their
/// first rank, and the ranks of each.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hosts {
    pub names: Vec<String>,
    pub ranks: Vec<RankSet>,
    /// The host of each rank (an index into `names`), built on demand.
    #[serde(skip)]
    of_rank: Vec<u32>,
}

impl Hosts {
    /// From (host name, ranks) pairs, in any order and possibly naming a
    /// host several times.
    pub fn of(pairs: Vec<(String, RankSet)>) -> Hosts {
        let mut names: Vec<String> = Vec::new();
        let mut ranks: Vec<RankSet> = Vec::new();
        for (n, set) in pairs {
            match names.iter().position(|x| *x == n) {
                Some(i) => ranks[i].union(&set),
                None => {
                    names.push(n);
                    ranks.push(set);
                }
            }
        }
        let mut order: Vec<usize> = (0..names.len()).collect();
        order.sort_by_key(|&i| ranks[i].first().unwrap_or(u32::MAX));
        let mut h = Hosts {
            names: order.iter().map(|&i| names[i].clone()).collect(),
            ranks: order.iter().map(|&i| ranks[i].clone()).collect(),
            of_rank: Vec::new(),
        };
        h.index();
        h
    }

    /// Builds the rank → host index (after decoding).
    pub fn index(&mut self) {
        let n = self.ranks.iter().map(RankSet::len).sum::<u32>() as usize;
        let mut of = vec![0u32; n];
        for (h, set) in self.ranks.iter().enumerate() {
            for r in set.iter() {
                if let Some(x) = of.get_mut(r as usize) {
                    *x = h as u32;
                }
            }
        }
        self.of_rank = of;
    }

    /// Number of ranks.
    pub fn size(&self) -> u32 {
        self.of_rank.len() as u32
    }

    /// The host (index) of rank `r`.
    pub fn host_of(&self, r: u32) -> usize {
        self.of_rank.get(r as usize).copied().unwrap_or(0) as usize
    }

    pub fn name_of(&self, r: u32) -> &str {
        self.names
            .get(self.host_of(r))
            .map(String::as_str)
            .unwrap_or("?")
    }

    /// The first rank of host `h` (its leader).
    pub fn leader(&self, h: usize) -> u32 {
        self.ranks.get(h).and_then(RankSet::first).unwrap_or(0)
    }

    /// Each rank's host name, in rank order.
    pub fn per_rank(&self) -> Vec<String> {
        (0..self.size())
            .map(|r| self.name_of(r).to_string())
            .collect()
    }
}

const NONE: u32 = u32::MAX;

/// See the module documentation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tree {
    parent: Vec<u32>,
    children: Vec<Vec<u32>>,
}

impl Tree {
    /// A k-ary tree of rank numbers below rank 0.
    pub fn by_rank(size: u32) -> Tree {
        let parent = (0..size)
            .map(|r| if r == 0 { NONE } else { (r - 1) / FAN_OUT })
            .collect();
        Tree::of_parents(parent)
    }

    /// The ranks of each host below its first rank; the first ranks in a
    /// k-ary tree below rank 0 (in the order of `hosts`).
    pub fn by_host(hosts: &Hosts) -> Tree {
        let size = hosts.size();
        let mut parent = vec![NONE; size as usize];
        for (h, set) in hosts.ranks.iter().enumerate() {
            let leader = hosts.leader(h);
            for r in set.iter().filter(|&r| r != leader) {
                parent[r as usize] = leader;
            }
            if h > 0 {
                parent[leader as usize] = hosts.leader((h - 1) / FAN_OUT as usize);
            }
        }
        Tree::of_parents(parent)
    }

    fn of_parents(parent: Vec<u32>) -> Tree {
        let mut children = vec![Vec::new(); parent.len()];
        for (r, &p) in parent.iter().enumerate() {
            if p != NONE {
                children[p as usize].push(r as u32);
            }
        }
        Tree { parent, children }
    }

    pub fn size(&self) -> u32 {
        self.parent.len() as u32
    }

    pub fn parent(&self, r: u32) -> Option<u32> {
        self.parent.get(r as usize).copied().filter(|&p| p != NONE)
    }

    pub fn children(&self, r: u32) -> &[u32] {
        self.children.get(r as usize).map_or(&[], Vec::as_slice)
    }

    /// How many hops below rank 0.
    pub fn depth(&self, r: u32) -> u32 {
        let mut d = 0;
        let mut x = r;
        while let Some(p) = self.parent(x) {
            d += 1;
            x = p;
        }
        d
    }

    /// The nearest ancestor of `r` not in `dead`.
    pub fn live_parent(&self, r: u32, dead: &RankSet) -> Option<u32> {
        let mut x = self.parent(r)?;
        while dead.contains(x) {
            x = self.parent(x)?;
        }
        Some(x)
    }

    /// The ranks whose live parent is `r`: its children, a dead one
    /// replaced by its own live children.
    pub fn live_children(&self, r: u32, dead: &RankSet) -> Vec<u32> {
        let mut out = Vec::new();
        let mut todo: Vec<u32> = self.children(r).iter().rev().copied().collect();
        while let Some(c) = todo.pop() {
            if dead.contains(c) {
                todo.extend(self.children(c).iter().rev());
            } else {
                out.push(c);
            }
        }
        out
    }

    /// `r` and every rank below it.
    pub fn subtree(&self, r: u32) -> RankSet {
        let mut set = RankSet::default();
        let mut todo = vec![r];
        while let Some(x) = todo.pop() {
            set.add(x);
            todo.extend(self.children(x));
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_sets_merge_ranges() {
        let mut s = RankSet::one(3);
        s.union(&RankSet::range(0, 3));
        s.add(7);
        s.add(5);
        assert_eq!(s.text(), "0-3, 5, 7");
        assert_eq!(s.len(), 6);
        assert!(s.contains(5) && !s.contains(4) && !s.contains(8));
        s.add(4);
        s.add(6);
        assert_eq!(s, RankSet::range(0, 8));
        assert_eq!(
            RankSet::range(0, 10)
                .minus(&RankSet::range(2, 4))
                .minus(&RankSet::one(9))
                .text(),
            "0-1, 4-8"
        );
    }

    fn hosts(per_host: u32, n: u32) -> Hosts {
        Hosts::of(
            (0..n)
                .map(|h| {
                    (
                        format!("h{h}"),
                        RankSet::range(h * per_host, (h + 1) * per_host),
                    )
                })
                .collect(),
        )
    }

    #[test]
    fn a_hosts_ranks_hang_below_its_first_and_hosts_below_rank_0() {
        let h = hosts(4, 20);
        let t = Tree::by_host(&h);
        assert_eq!(t.parent(0), None);
        assert_eq!(t.children(0)[..3], [1, 2, 3]);
        // Hosts 1..=8 below host 0's leader, 9..=16 below host 1's.
        assert_eq!(&t.children(0)[3..], &[4, 8, 12, 16, 20, 24, 28, 32]);
        assert_eq!(t.parent(36), Some(4));
        assert_eq!(t.parent(38), Some(36));
        assert_eq!(t.depth(38), 3);
        // Every rank but 0 has one parent; all ranks are below 0.
        assert_eq!(t.subtree(0), RankSet::range(0, 80));
        // Host 1's leader lost: its ranks and child hosts hang below 0.
        let dead = RankSet::one(4);
        assert_eq!(t.live_parent(5, &dead), Some(0));
        assert_eq!(t.live_parent(36, &dead), Some(0));
        let c = t.live_children(0, &dead);
        assert!(c.contains(&5) && c.contains(&36) && !c.contains(&4));
    }

    #[test]
    fn hosts_are_ordered_by_their_first_rank_whatever_the_input() {
        let h = Hosts::of(vec![
            ("b".into(), RankSet::one(1)),
            ("a".into(), RankSet::one(2)),
            ("b".into(), RankSet::one(0)),
            ("a".into(), RankSet::one(3)),
        ]);
        assert_eq!(h.names, ["b", "a"]);
        assert_eq!(h.per_rank(), ["b", "b", "a", "a"]);
        assert_eq!((h.leader(1), h.host_of(3)), (2, 1));
        let t = Tree::by_rank(20);
        assert_eq!(t.children(0), (1..=8).collect::<Vec<_>>());
        assert_eq!(t.parent(9), Some(1));
    }
}
