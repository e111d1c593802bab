//! Seeded synthetic heap generators.
//!
//! Every generator draws from a [`rand_pcg::Pcg64`] seeded with
//! [`GenConfig::seed`] and only ever asks it for `u64` ranges, Bernoulli
//! trials and `f64` draws in `[0, 1)` (53 bits of one `u64`, scaled exactly);
//! the only other floating-point work is `+`, `*`, `/` and `round`, which IEEE
//! 754 defines bit for bit (no `ln`, `exp` or `powf`, whose results vary by
//! math library). So a configuration produces the same heap, byte for byte,
//! on every platform. Generators emit into any [`HeapSink`]: [`generate_heap`] builds
//! in memory, and the same call with a [`crate::SnapshotWriter`] streams to a
//! file. They allocate a few bytes of bookkeeping per object at most, never
//! a heap object each.
//!
//! | shape | graph | reachable known |
//! |---|---|---|
//! | `random` | every object has `degree` slots to uniformly random objects; 8 random roots | no |
//! | `power-law` | preferential attachment: slots 0 and 1 form a breadth-first binary-tree backbone from the root, the other `degree - 2` point to older objects chosen half uniformly, half in proportion to in-degree | yes |
//! | `binary-tree` | complete binary tree in breadth-first order | yes |
//! | `list` | one chain, head first | yes |
//! | `wide` | one root with a slot to each of the other objects (leaves) | yes |
//! | `big-array` | a root holding an array of at least 2²⁰ slots, whose elements point to element objects, each pointing to a leaf | yes |
//! | `dag` | the Chase-Lev benchmark DAG: a node of depth `d` has Binomial(B, 1 - d/D) children (at most B, B(1 - d/D) expected), laid out breadth first; as in the paper's benchmark every node is spawned by one parent, so the graph is a tree | yes |
//! | `runtime` | size classes, arrays, strings, hash entries, parent pointers (cycles), weak references, interleaved garbage | yes |
//! | `weak` | a runtime-like heap with weak, soft and phantom references, WeakMap-like ephemeron tables (5% of the objects are their values) with key → value chains, and finalizable objects (reachable, reachable only from other finalizable objects, dead); interleaved garbage | yes, as the whole contract marks it |
//! | `ephemeron-chain` | a root holding one ephemeron table and the first key of a chain through it: the value of each entry is the key of the next, entries in reverse order; objects the size of `list`'s | yes |
//!
//! With a garbage fraction `g`, `round(g * objects)` objects are garbage:
//! `runtime` and `weak` interleave them with the live objects; every other
//! shape but `ephemeron-chain` (which has none) appends them after its live
//! part as a random graph of 2-slot objects that live objects never
//! reference.
//!
//! Every shape emits the compressed layout when the heap fits in it (32 GiB
//! of arena), else the wide one, unless [`GenConfig::layout`] says which.
//! [`GenConfig::all_strong`] turns every soft, weak, phantom and ephemeron
//! slot of `weak` and `ephemeron-chain` strong (their types plain) and
//! registers no finalizable objects: the identical graph without reference
//! processing, the baseline of the reference-processing benchmark.

mod runtime;
mod shapes;
mod weak;

use std::fmt;
use std::str::FromStr;

use rand::SeedableRng;
use rand_pcg::Pcg64;
use thiserror::Error;

use crate::arena::{ArenaFormat, ArenaLayout};
use crate::builder::{Heap, HeapBuilder};
use crate::error::BuildError;
use crate::sink::HeapSink;

/// A heap shape, by its command-line name.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Shape {
    /// `random`: uniform out-degree, uniformly random targets.
    Random,
    /// `power-law`: preferential attachment.
    PowerLaw,
    /// `binary-tree`: a complete binary tree.
    BinaryTree,
    /// `list`: one long chain, the worst case for parallel marking.
    List,
    /// `wide`: one root fanning out to all other objects.
    Wide,
    /// `big-array`: an object with at least 2²⁰ reference slots.
    BigArray,
    /// `dag`: the Chase-Lev benchmark DAG with branch B and depth D.
    Dag,
    /// `runtime`: a mix like a managed runtime's heap.
    Runtime,
    /// `weak`: a runtime-like heap with every slot kind of the runtime
    /// contract and finalizable objects.
    Weak,
    /// `ephemeron-chain`: one ephemeron table holding a chain as long as
    /// the heap.
    EphemeronChain,
}

impl Shape {
    /// Every shape, in declaration order. `weak` and `ephemeron-chain` have
    /// every slot kind of the runtime contract and finalizable objects; check
    /// a marker on them against [`oracle`](crate::oracle()) with the heap's
    /// [`finalizable`](crate::HeapGraph::finalizable) objects.
    pub const ALL: &'static [Shape] = &[
        Shape::Random,
        Shape::PowerLaw,
        Shape::BinaryTree,
        Shape::List,
        Shape::Wide,
        Shape::BigArray,
        Shape::Dag,
        Shape::Runtime,
        Shape::Weak,
        Shape::EphemeronChain,
    ];

    /// The command-line name.
    pub const fn name(self) -> &'static str {
        match self {
            Shape::Random => "random",
            Shape::PowerLaw => "power-law",
            Shape::BinaryTree => "binary-tree",
            Shape::List => "list",
            Shape::Wide => "wide",
            Shape::BigArray => "big-array",
            Shape::Dag => "dag",
            Shape::Runtime => "runtime",
            Shape::Weak => "weak",
            Shape::EphemeronChain => "ephemeron-chain",
        }
    }
}

impl serde::Serialize for Shape {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A shape name that is not one of [`Shape::ALL`].
#[derive(Clone, PartialEq, Eq, Debug, Error)]
#[error("unknown heap shape `{given}`; expected one of: random, power-law, binary-tree, list, wide, big-array, dag, runtime, weak, ephemeron-chain")]
pub struct UnknownShape {
    /// The name given.
    pub given: String,
}

impl FromStr for Shape {
    type Err = UnknownShape;

    fn from_str(s: &str) -> Result<Shape, UnknownShape> {
        Shape::ALL
            .iter()
            .copied()
            .find(|shape| shape.name() == s)
            .ok_or_else(|| UnknownShape {
                given: s.to_owned(),
            })
    }
}

/// What to generate. Build with [`GenConfig::new`] and the setters.
#[derive(Clone, PartialEq, Debug)]
pub struct GenConfig {
    /// The shape.
    pub shape: Shape,
    /// Objects in the heap, garbage included (for `dag`, an upper bound:
    /// the DAG may die out earlier).
    pub objects: u64,
    /// The random seed.
    pub seed: u64,
    /// The fraction of objects that are garbage, in `[0, 1)`; `None` means
    /// the shape's default (0.2 for `runtime` and `weak`, 0 otherwise;
    /// `ephemeron-chain` has none).
    pub garbage: Option<f64>,
    /// Reference slots per object for `random` and `power-law`.
    pub degree: u32,
    /// `dag`: the maximum branch B.
    pub branch: u32,
    /// `dag`: the maximum depth D; `None` picks the smallest depth whose
    /// expected size reaches the object count.
    pub depth: Option<u32>,
    /// The arena layout; `None` (the default) means compressed when the
    /// heap fits in it (2³² words, 32 GiB), else wide.
    pub layout: Option<ArenaLayout>,
    /// `weak` and `ephemeron-chain`: every soft, weak, phantom and ephemeron
    /// slot strong (plain types) and no finalizable objects, for the same
    /// graph without reference processing.
    pub all_strong: bool,
}

impl GenConfig {
    /// The default seed.
    pub const DEFAULT_SEED: u64 = 0x5eed;

    /// A configuration with default parameters: seed
    /// [`GenConfig::DEFAULT_SEED`], the shape's garbage fraction, degree 4,
    /// branch 13 and automatic depth (the paper's B = 13).
    pub fn new(shape: Shape, objects: u64) -> GenConfig {
        GenConfig {
            shape,
            objects,
            seed: Self::DEFAULT_SEED,
            garbage: None,
            degree: 4,
            branch: 13,
            depth: None,
            layout: None,
            all_strong: false,
        }
    }

    /// Sets the arena layout (`None`: compressed when the heap fits).
    pub fn layout(mut self, layout: Option<ArenaLayout>) -> GenConfig {
        self.layout = layout;
        self
    }

    /// Makes every non-strong slot strong and registers no finalizable
    /// objects (`weak`, `ephemeron-chain`).
    pub fn all_strong(mut self, all_strong: bool) -> GenConfig {
        self.all_strong = all_strong;
        self
    }

    /// Sets the seed.
    pub fn seed(mut self, seed: u64) -> GenConfig {
        self.seed = seed;
        self
    }

    /// Sets the garbage fraction.
    pub fn garbage(mut self, fraction: f64) -> GenConfig {
        self.garbage = Some(fraction);
        self
    }

    /// Sets the out-degree of `random` and `power-law`.
    pub fn degree(mut self, degree: u32) -> GenConfig {
        self.degree = degree;
        self
    }

    /// Sets the `dag` branch B and depth D.
    pub fn dag(mut self, branch: u32, depth: u32) -> GenConfig {
        self.branch = branch;
        self.depth = Some(depth);
        self
    }

    /// The garbage fraction in effect.
    pub fn garbage_fraction(&self) -> f64 {
        self.garbage
            .unwrap_or(if matches!(self.shape, Shape::Runtime | Shape::Weak) {
                0.2
            } else {
                0.0
            })
    }

    fn check(&self) -> Result<(), String> {
        let g = self.garbage_fraction();
        if !(0.0..1.0).contains(&g) {
            return Err(format!("garbage fraction {g} is not in [0, 1)"));
        }
        if self.objects == 0 {
            return Err("a heap needs at least one object".into());
        }
        if self.objects > u64::from(u32::MAX) {
            return Err(format!(
                "{} objects is more than the generators support (2^32 - 1)",
                self.objects
            ));
        }
        if self.shape == Shape::BigArray && self.objects < 2 {
            return Err("big-array needs at least 2 objects".into());
        }
        if self.shape == Shape::Weak && self.objects < weak::MIN_OBJECTS {
            return Err(format!("weak needs at least {} objects", weak::MIN_OBJECTS));
        }
        if self.shape == Shape::EphemeronChain {
            if !(3..=weak::CHAIN_MAX_OBJECTS).contains(&self.objects) {
                return Err(format!(
                    "ephemeron-chain needs 3 to {} objects",
                    weak::CHAIN_MAX_OBJECTS
                ));
            }
            if g > 0.0 {
                return Err("ephemeron-chain has no garbage (give --garbage 0 or none)".into());
            }
        }
        if self.all_strong && !matches!(self.shape, Shape::Weak | Shape::EphemeronChain) {
            return Err(format!(
                "all-strong only applies to weak and ephemeron-chain, not {}",
                self.shape
            ));
        }
        if matches!(self.shape, Shape::Random | Shape::PowerLaw)
            && !(1..=1024).contains(&self.degree)
        {
            return Err(format!("degree {} is not in 1..=1024", self.degree));
        }
        if self.shape == Shape::Dag {
            if !(1..=64).contains(&self.branch) {
                return Err(format!("dag branch {} is not in 1..=64", self.branch));
            }
            if let Some(d) = self.depth {
                if !(1..=1000).contains(&d) {
                    return Err(format!("dag depth {d} is not in 1..=1000"));
                }
            }
        }
        Ok(())
    }
}

/// What a generator produced (serialises with these field names).
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize)]
pub struct GenInfo {
    /// The shape.
    pub shape: Shape,
    /// Objects emitted, garbage included.
    pub objects: u64,
    /// Garbage objects emitted (unreachable by construction).
    pub garbage: u64,
    /// Roots emitted.
    pub roots: u64,
    /// Arena size in words.
    pub arena_words: u64,
    /// The number of objects reachable from the roots (and, for `weak`,
    /// from the finalizable objects, soft references cleared: what
    /// [`oracle`](crate::oracle()) marks), where the shape knows it by
    /// construction.
    pub reachable: Option<u64>,
    /// The arena layout emitted.
    pub layout: ArenaLayout,
    /// Finalizable entries registered.
    pub finalizable: u64,
}

/// A generator failure: a bad configuration, or the sink failed.
#[derive(Debug, Error)]
pub enum GenError<E: std::error::Error + 'static> {
    /// The configuration is out of range.
    #[error("invalid generator configuration: {0}")]
    Config(String),
    /// The sink reported an error.
    #[error(transparent)]
    Sink(#[from] E),
}

/// A generated in-memory heap and what the generator knows about it.
#[derive(Debug)]
pub struct Generated {
    /// The heap.
    pub heap: Heap,
    /// What was generated.
    pub info: GenInfo,
}

/// Picks the layout for a heap whose arena takes `words(layout)` words: the
/// configured one, or compressed when the heap fits in it, else wide; tells
/// the sink.
fn setup<S: HeapSink>(
    sink: &mut S,
    pref: Option<ArenaLayout>,
    words: impl Fn(ArenaLayout) -> u64,
) -> Result<ArenaLayout, GenError<S::Error>> {
    let layout = pref.unwrap_or(
        if ArenaFormat::COMPRESSED.fits(words(ArenaLayout::Compressed)) {
            ArenaLayout::Compressed
        } else {
            ArenaLayout::Wide
        },
    );
    let needed = words(layout);
    if !ArenaFormat::new(layout).fits(needed) {
        return Err(GenError::Config(format!(
            "the heap needs {needed} arena words, more than the {layout} layout holds"
        )));
    }
    sink.set_format(ArenaFormat::new(layout))?;
    Ok(layout)
}

/// Generates a heap into `sink`.
pub fn generate<S: HeapSink>(
    config: &GenConfig,
    sink: &mut S,
) -> Result<GenInfo, GenError<S::Error>> {
    config.check().map_err(GenError::Config)?;
    let mut rng = Pcg64::seed_from_u64(config.seed);
    let fraction = config.garbage_fraction();
    let garbage = ((config.objects as f64) * fraction).round() as u64;
    let pref = config.layout;
    match config.shape {
        Shape::Runtime => return runtime::generate(config.objects, fraction, pref, &mut rng, sink),
        Shape::Weak => return weak::generate(config, fraction, &mut rng, sink),
        Shape::EphemeronChain => return weak::chain(config, sink),
        _ => {}
    }
    let live = (config.objects - garbage.min(config.objects - 1)).max(1);
    let garbage = config.objects - live;
    let g = shapes::Gen {
        live,
        garbage,
        pref,
        rng: &mut rng,
        sink: &mut *sink,
    };
    let mut info = match config.shape {
        Shape::Random => shapes::random(g, config.degree)?,
        Shape::PowerLaw => shapes::power_law(g, config.degree)?,
        Shape::BinaryTree => shapes::binary_tree(g)?,
        Shape::List => shapes::list(g)?,
        Shape::Wide => shapes::wide(g)?,
        Shape::BigArray => shapes::big_array(g)?,
        Shape::Dag => shapes::dag(g, config.branch, config.depth)?,
        Shape::Runtime | Shape::Weak | Shape::EphemeronChain => unreachable!("handled above"),
    };
    shapes::garbage(garbage, &mut rng, sink)?;
    info.shape = config.shape;
    info.objects += garbage;
    info.garbage = garbage;
    info.arena_words += shapes::garbage_words(garbage, info.layout);
    Ok(info)
}

/// Generates a heap in memory.
///
/// ```
/// use stealmark_heap::{generate_heap, GenConfig, HeapGraph, Shape};
///
/// let g = generate_heap(&GenConfig::new(Shape::Wide, 1000)).unwrap();
/// assert_eq!(g.heap.view().object_count(), 1000);
/// assert_eq!(g.info.reachable, Some(1000));
/// assert_eq!(g.heap.roots().len(), 1);
/// ```
pub fn generate_heap(config: &GenConfig) -> Result<Generated, GenError<BuildError>> {
    let mut builder = HeapBuilder::new();
    let info = generate(config, &mut builder)?;
    let heap = builder.finish()?;
    Ok(Generated { heap, info })
}
