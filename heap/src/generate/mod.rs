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
//!
//! With a garbage fraction `g`, `round(g * objects)` objects are garbage:
//! `runtime` interleaves them with the live objects; every other shape
//! appends them after its live part as a random graph of 2-slot objects that
//! live objects never reference.

mod runtime;
mod shapes;

use std::fmt;
use std::str::FromStr;

use rand::SeedableRng;
use rand_pcg::Pcg64;
use thiserror::Error;

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
}

impl Shape {
    /// Every shape, in declaration order.
    pub const ALL: &'static [Shape] = &[
        Shape::Random,
        Shape::PowerLaw,
        Shape::BinaryTree,
        Shape::List,
        Shape::Wide,
        Shape::BigArray,
        Shape::Dag,
        Shape::Runtime,
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
#[error("unknown heap shape `{given}`; expected one of: random, power-law, binary-tree, list, wide, big-array, dag, runtime")]
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
    /// the shape's default (0.2 for `runtime`, 0 otherwise).
    pub garbage: Option<f64>,
    /// Reference slots per object for `random` and `power-law`.
    pub degree: u32,
    /// `dag`: the maximum branch B.
    pub branch: u32,
    /// `dag`: the maximum depth D; `None` picks the smallest depth whose
    /// expected size reaches the object count.
    pub depth: Option<u32>,
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
        }
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
        self.garbage.unwrap_or(if self.shape == Shape::Runtime {
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
    /// The number of objects reachable from the roots, where the shape knows
    /// it by construction.
    pub reachable: Option<u64>,
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

/// Generates a heap into `sink`.
pub fn generate<S: HeapSink>(
    config: &GenConfig,
    sink: &mut S,
) -> Result<GenInfo, GenError<S::Error>> {
    config.check().map_err(GenError::Config)?;
    let mut rng = Pcg64::seed_from_u64(config.seed);
    let fraction = config.garbage_fraction();
    let garbage = ((config.objects as f64) * fraction).round() as u64;
    if config.shape == Shape::Runtime {
        return Ok(runtime::generate(config.objects, fraction, &mut rng, sink)?);
    }
    let live = (config.objects - garbage.min(config.objects - 1)).max(1);
    let garbage = config.objects - live;
    let extra_words = garbage * shapes::GARBAGE_WORDS;
    let mut info = match config.shape {
        Shape::Random => shapes::random(live, config.degree, extra_words, &mut rng, sink)?,
        Shape::PowerLaw => shapes::power_law(live, config.degree, extra_words, &mut rng, sink)?,
        Shape::BinaryTree => shapes::binary_tree(live, extra_words, sink)?,
        Shape::List => shapes::list(live, extra_words, sink)?,
        Shape::Wide => shapes::wide(live, extra_words, sink)?,
        Shape::BigArray => shapes::big_array(live, extra_words, sink)?,
        Shape::Dag => shapes::dag(
            live,
            config.branch,
            config.depth,
            extra_words,
            &mut rng,
            sink,
        )?,
        Shape::Runtime => unreachable!("handled above"),
    };
    shapes::garbage(garbage, &mut rng, sink)?;
    info.shape = config.shape;
    info.objects += garbage;
    info.garbage = garbage;
    info.arena_words += garbage * shapes::GARBAGE_WORDS;
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
