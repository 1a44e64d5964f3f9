//! The inline layout of a type as data: what the hand-written types'
//! table states and the model-layout estimate (`crate::layout`) computes.

/// Size, alignment and free niches (`0` = `Option` of it needs a tag) of a
/// type's inline representation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// `size_of`, in bytes.
    pub size: u64,
    /// `align_of`, in bytes.
    pub align: u64,
    /// Invalid bit patterns left for an enclosing `Option`'s `None`.
    pub niches: u128,
}

/// `String`, `Vec<T>`: capacities above `isize::MAX` are niches.
pub const VEC: Layout = Layout::new(24, 8, 1 << 63);
/// `BTreeMap<K, V>`: its root pointer's only niche is taken by its own
/// `Option`, so `Option<BTreeMap>` needs a tag.
pub const BTREE_MAP: Layout = Layout::new(24, 8, 0);
/// `serde_json::Value` (without `preserve_order`): six variants, a tag byte.
pub const JSON_VALUE: Layout = Layout::new(32, 8, 250);

impl Layout {
    /// A layout of `size` bytes aligned to `align` with `niches` free
    /// invalid bit patterns.
    pub const fn new(size: u64, align: u64, niches: u128) -> Self {
        Self {
            size,
            align,
            niches,
        }
    }

    /// The layout of `Option<Self>`.
    pub fn option(self) -> Self {
        match self.niches {
            0 => Self::new(self.size + self.align, self.align, 254),
            n => Self::new(self.size, self.align, n - 1),
        }
    }

    /// `Box<T>` of a sized `T`.
    pub const BOX: Self = Self::new(8, 8, 1);
}
