//! Interim oracle test on a tiny adjacency heap (replaced by the heap
//! crate's generators and oracle once they land).

use std::ops::Range;

use stealmark_heap::{ObjRef, ObjectModel, SlotKind};
use stealmark_marker::sequential::SequentialMarker;
use stealmark_marker::{
    BalancePolicy, DequeKind, Marker, MarkerConfig, StealAmount, VictimSelection,
};

struct Adj {
    edges: Vec<Vec<(usize, SlotKind)>>,
}

fn r(i: usize) -> ObjRef {
    ObjRef::from_word((i + 1) * 8).unwrap()
}

impl ObjectModel for Adj {
    fn mark_index_bound(&self) -> usize {
        self.edges.len()
    }
    fn mark_index(&self, o: ObjRef) -> usize {
        o.word() / 8 - 1
    }
    fn size_bytes(&self, o: ObjRef) -> usize {
        8 * (1 + self.slot_count(o))
    }
    fn slot_count(&self, o: ObjRef) -> usize {
        self.edges[self.mark_index(o)].len()
    }
    fn scan_slots<V: FnMut(ObjRef, SlotKind)>(&self, o: ObjRef, s: Range<usize>, mut v: V) {
        let e = &self.edges[self.mark_index(o)];
        let s = s.start.min(e.len())..s.end.min(e.len());
        for &(t, k) in &e[s] {
            v(r(t), k);
        }
    }
    fn prefetch(&self, _: ObjRef) {}
}

fn random_heap(n: usize, seed: u64) -> Adj {
    let mut x = seed | 1;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut edges = Vec::with_capacity(n);
    for i in 0..n {
        let deg = if i == 7 { 5000 } else { (next() % 4) as usize };
        let mut e = Vec::new();
        for _ in 0..deg {
            let kind = if next() % 16 == 0 {
                SlotKind::Weak
            } else {
                SlotKind::Strong
            };
            e.push(((next() % n as u64) as usize, kind));
        }
        edges.push(e);
    }
    edges[0].push((7, SlotKind::Strong));
    Adj { edges }
}

#[test]
fn engine_equals_sequential_marker() {
    let heap = random_heap(20_000, 42);
    let roots = [r(0), r(1), r(2), r(3)];
    let expect: Vec<usize> = SequentialMarker::new(8)
        .mark(&heap, &roots)
        .iter_set()
        .collect();
    for deque in [DequeKind::ChaseLev, DequeKind::Locked, DequeKind::Crossbeam] {
        for workers in [1, 2, 3, 8, 16] {
            for policy in BalancePolicy::ALL {
                for steal in StealAmount::ALL {
                    let mut c = MarkerConfig::with_workers(workers);
                    c.deque = deque;
                    c.policy = *policy;
                    c.steal = *steal;
                    c.victim = VictimSelection::BestOf2;
                    let mut m = Marker::new(c).unwrap();
                    for _ in 0..3 {
                        let got: Vec<usize> = m.mark(&heap, &roots).bitmap.iter_set().collect();
                        assert_eq!(
                            got.len(),
                            expect.len(),
                            "{deque} {workers} {policy} {steal}"
                        );
                        assert_eq!(got, expect);
                    }
                }
            }
        }
    }
}
