//! A byte trie of bound sequences, answering the two questions the matcher asks.

/// Index of a binding in the matcher's binding list.
pub(super) type BindingId = u32;

/// The result of walking some bytes from the root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Walk {
    /// The longest bound sequence that is a prefix of the bytes: its length and binding.
    pub(super) longest: Option<(usize, BindingId)>,
    /// Whether all the bytes are a proper prefix of a longer bound sequence, so that more
    /// bytes could still complete something longer.
    pub(super) open: bool,
}

#[derive(Clone, Debug, Default)]
struct Node {
    binding: Option<BindingId>,
    /// Sorted by byte. Binding sets are small, so a sorted vector beats a 256-entry table
    /// per node in memory and is as fast to search.
    children: Vec<(u8, u32)>,
}

#[derive(Clone, Debug)]
pub(super) struct Trie {
    nodes: Vec<Node>,
}

impl Trie {
    pub(super) fn new() -> Trie {
        Trie {
            nodes: vec![Node::default()],
        }
    }

    /// Adds a non-empty sequence; returns the binding already there if it is a duplicate.
    pub(super) fn insert(&mut self, sequence: &[u8], id: BindingId) -> Result<(), BindingId> {
        let mut node = 0;
        for &byte in sequence {
            node = self
                .child(node, byte)
                .unwrap_or_else(|| self.add_child(node, byte));
        }
        match self.nodes[node].binding {
            Some(existing) => Err(existing),
            None => {
                self.nodes[node].binding = Some(id);
                Ok(())
            }
        }
    }

    /// Follows `bytes` from the root as far as the trie goes.
    pub(super) fn walk(&self, bytes: &[u8]) -> Walk {
        let mut node = 0;
        let mut longest = None;
        for (depth, &byte) in bytes.iter().enumerate() {
            let Some(next) = self.child(node, byte) else {
                return Walk {
                    longest,
                    open: false,
                };
            };
            node = next;
            if let Some(id) = self.nodes[node].binding {
                longest = Some((depth + 1, id));
            }
        }
        Walk {
            longest,
            open: !self.nodes[node].children.is_empty(),
        }
    }

    fn child(&self, node: usize, byte: u8) -> Option<usize> {
        let children = &self.nodes[node].children;
        children
            .binary_search_by_key(&byte, |&(b, _)| b)
            .ok()
            .map(|at| children[at].1 as usize)
    }

    fn add_child(&mut self, node: usize, byte: u8) -> usize {
        let id = self.nodes.len();
        self.nodes.push(Node::default());
        let children = &mut self.nodes[node].children;
        let at = children.partition_point(|&(b, _)| b < byte);
        children.insert(at, (byte, id as u32));
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trie(sequences: &[&[u8]]) -> Trie {
        let mut trie = Trie::new();
        for (id, s) in sequences.iter().enumerate() {
            trie.insert(s, id as BindingId).unwrap();
        }
        trie
    }

    #[test]
    fn walk_reports_longest_match_and_openness() {
        let t = trie(&[b"\x1b", b"\x1bc", b"\x1b[A"]);
        let walk = |bytes: &[u8]| {
            let w = t.walk(bytes);
            (w.longest, w.open)
        };
        assert_eq!(walk(b"\x1b"), (Some((1, 0)), true));
        assert_eq!(walk(b"\x1bc"), (Some((2, 1)), false));
        assert_eq!(walk(b"\x1bcx"), (Some((2, 1)), false));
        assert_eq!(walk(b"\x1b["), (Some((1, 0)), true));
        assert_eq!(walk(b"\x1b[B"), (Some((1, 0)), false));
        assert_eq!(walk(b"\x1b[A"), (Some((3, 2)), false));
        assert_eq!(walk(b"x"), (None, false));
    }

    #[test]
    fn insert_reports_duplicates() {
        let mut t = trie(&[b"ab", b"a"]);
        assert_eq!(t.insert(b"ab", 2), Err(0));
        assert_eq!(t.insert(b"a", 3), Err(1));
        assert_eq!(t.insert(b"abc", 4), Ok(()));
    }
}
