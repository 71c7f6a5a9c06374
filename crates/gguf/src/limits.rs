//! Caps on what a header may declare, checked before anything is allocated.

/// Upper bounds on the counts and lengths a GGUF header may declare. Values past a limit
/// are rejected with an error naming the limit, before any allocation. The defaults are
/// far above what real models use (a 262,144-token vocabulary, a few thousand tensors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most tensors in the tensor table.
    pub max_tensors: u64,
    /// Most metadata key/value pairs.
    pub max_kv: u64,
    /// Longest string (keys, values, tensor names), in bytes.
    pub max_string_len: u64,
    /// Most elements in one metadata array.
    pub max_array_len: u64,
    /// Most dimensions of a tensor (ggml's `GGML_MAX_DIMS` is 4).
    pub max_dims: u32,
    /// Deepest nesting of arrays (an array of scalars has depth 1).
    pub max_array_depth: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_tensors: 65_536,
            max_kv: 65_536,
            max_string_len: 64 << 20,
            max_array_len: 64 << 20,
            max_dims: 4,
            max_array_depth: 4,
        }
    }
}
