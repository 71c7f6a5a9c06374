//! The `Backend` trait: the ops a forward pass is made of, executed by the CPU or
//! recorded by the GPU.
//!
//! The contract is shaped by the GPU, the backend we care most about:
//! - **Ops record, reads execute.** Every op may be deferred. Nothing is observable
//!   until `read_rows` or `argmax_rows`, which are `async` because a browser can only
//!   read a GPU buffer back by yielding to its event loop. A backend is free to put all
//!   ops between two reads into one command submission; a decode step is one batch of
//!   ops and one read of a token id.
//! - **Handles, not data.** Weights, activations and KV caches are opaque handles the
//!   backend allocates up front; no op allocates, so nothing is created per token.
//! - **Weights arrive in pieces.** `write_weight` takes any byte range of a tensor's
//!   GGUF data in increasing order, as a network stream delivers it; the backend
//!   copies it to its final home (a GPU buffer) at once, so the host never holds the
//!   whole model.
//! - **A batch is a run of positions.** `begin_batch` uploads the token ids and first
//!   position of the next `n` rows; ops act on the first `min(n, capacity)` rows of
//!   their activations (capacity fixed at allocation), so an activation of capacity 1
//!   holds one row, e.g. the last position's hidden state when only its logits are
//!   wanted. Prefill is one batch of a whole prompt chunk. An encoder may pack several
//!   inputs into one batch (`begin_packed_batch`): each restarts at position 0 and
//!   attends only to its own rows, so no op between the two begins needs to know.
//! - **Op order is part of the contract.** The GPU backend fuses by holding one op back
//!   and recognising the op that follows (crates/gpu/src/fusion.rs), so the forward
//!   pass (`forward/decoder.rs`, `forward/blocks.rs`) emits these sequences, and a
//!   change to it keeps them:
//!   - `rms_norm(x → h)` of whole rows, then the decode matmuls reading `h`: the norm
//!     is taken into them (below 16,384 weight rows: not a vocabulary);
//!   - `matmul(h → q)`, `matmul(h → k)`, `matmul(h → v)` over one input with weights of
//!     one width (q and k of one type; v may differ): one decode dispatch, and in a
//!     batch (cooperative matrices, or integer dot products where each weight takes
//!     them) one matmul and one dispatch routing its sums;
//!   - `matmul(h → gate)`, `matmul(h → up)` (one type), then
//!     `gated_activation(gate, up → act)`: one decode dispatch (with the norm above);
//!   - `rope_qk(q, k, v)` then `attention(q, k, v, ..)` over the same activations: the
//!     KV store joins the q/k preparation, and in decode all of it joins the attention;
//!   - `matmul(z → y)` then `add(x, y)`: the residual add joins the matmul; where a
//!     batch matmul splits its dot products, an `rms_norm(x → h)` of whole rows right
//!     after joins the dispatch summing its spans (prefill's norms after o and down);
//!   - `rms_norm(y → t)` then `add(x, t)` (Gemma's post-norms): one dispatch.
//!
//! Any other op between them only costs the fusion, never correctness. tests/
//! gpu_fusion.rs pins the dispatches per token and per prefill of every architecture.

use kindling_gguf::GgmlType;

use crate::config::{Activation, RopeConfig};
use crate::error::Result;

/// What a weight tensor is, as the backend needs to allocate and use it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WeightSpec {
    pub name: String,
    pub ty: GgmlType,
    /// Values per row (GGUF `ne0`): the dot-product length of a matmul.
    pub cols: usize,
    /// Rows (product of the other dims): the output width of a matmul.
    pub rows: usize,
    /// Size of the tensor's GGUF data in bytes.
    pub n_bytes: u64,
}

/// Shape of one layer's KV cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KvSpec {
    /// Positions it can hold.
    pub capacity: usize,
    /// Width of one position's key (and value) row: kv_heads × head_dim.
    pub width: usize,
}

/// Parameters of one attention op.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttentionParams {
    pub head_count: usize,
    pub head_count_kv: usize,
    pub head_dim: usize,
    /// Multiplies q·k before the softmax.
    pub scale: f32,
    /// Attend only to the last `w` positions (incl. the current one).
    pub sliding_window: Option<usize>,
    /// Soft-cap the scaled scores, `cap * tanh(s / cap)`, before the softmax (Gemma 2).
    pub softcap: Option<f32>,
    /// Decoders: row r attends to positions `..=start_pos + r`. Encoders (`false`):
    /// every row of the batch attends to every position `0..start_pos + rows` written
    /// for this batch, so an encoder runs a whole input as one batch. In a packed batch
    /// (`Backend::begin_packed_batch`) both are confined to the row's own sequence.
    pub causal: bool,
}

/// The preparation of a batch's queries, keys and values for attention
/// (`Backend::rope_qk`).
#[derive(Clone, Copy, Debug)]
pub struct QkRope<'a, W> {
    /// Projection biases of q, k and v, added first (Qwen2).
    pub bias: Option<&'a [W; 3]>,
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    pub rope: &'a RopeConfig,
    /// `n_rot / 2` f32 dividing the pair frequencies (Llama 3 style scaling).
    pub freq_factors: Option<&'a W>,
    /// Per-head RMS norms of q and k (weights `[head_dim]`) applied before the
    /// rotation, with their epsilon (Gemma 3).
    pub norm: Option<(&'a W, &'a W, f32)>,
}

/// Work counters a backend may keep, for benchmarks and for tests that check how a
/// token's work is submitted (all zero when the backend keeps none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Command submissions to the device.
    pub submits: u64,
    /// Kernel dispatches recorded.
    pub dispatches: u64,
    /// Bytes read back from the device to the host.
    pub bytes_read: u64,
    /// Microseconds spent in reads waiting for the device to finish (natively; the
    /// rest of a step's time is the host recording and submitting its work).
    pub wait_us: u64,
}

/// Device time of one kernel over a profiled stretch (`Backend::take_profile`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelTime {
    /// The kernel, with what tells its uses apart (weight type, workgroups).
    pub kernel: String,
    pub dispatches: u64,
    /// Nanoseconds on the device, summed over the dispatches.
    pub ns: f64,
}

/// Most chained greedy steps submitted whose token has not been read. Three keep the
/// device busy while the host records the next step, even where a read's result only
/// arrives when the host's event loop comes round again (a browser): with one step
/// ahead, the host waits for each token before it records the one after next.
pub const CHAINED_STEPS: usize = 3;

/// A compute backend. See the module docs for the execution model.
#[allow(async_fn_in_trait)] // backends run on one thread (wasm); no Send bound wanted
pub trait Backend {
    /// A weight tensor in its GGUF type (quantized weights stay quantized).
    type Weight;
    /// An f32 activation matrix `[rows ≤ capacity, cols]`, row-major.
    type Activation: Copy;
    /// One layer's key and value cache.
    type KvCache;

    /// Human-readable name ("cpu", "NVIDIA H200 (Vulkan)").
    fn name(&self) -> String;

    /// Work counted since the backend was created.
    fn counters(&self) -> Counters {
        Counters::default()
    }

    /// Device time per kernel since the last call, where the backend was opened to
    /// profile and can (the GPU backend with timestamp queries); None otherwise.
    fn take_profile(&mut self) -> Option<Vec<KernelTime>> {
        None
    }

    // ---- loading ----------------------------------------------------------------

    /// Reserves storage for a weight. Fails cleanly (no panic) when it does not fit.
    fn alloc_weight(&mut self, spec: &WeightSpec) -> Result<Self::Weight>;
    /// Copies `bytes` of the tensor's GGUF data starting at byte `offset` of the tensor.
    /// Called with increasing, non-overlapping ranges that end up covering the tensor.
    fn write_weight(&mut self, weight: &mut Self::Weight, offset: u64, bytes: &[u8]) -> Result<()>;
    /// The last byte of the tensor has been written.
    fn finish_weight(&mut self, _weight: &mut Self::Weight) -> Result<()> {
        Ok(())
    }

    // ---- working memory (allocated once, outside the token loop) -----------------

    fn alloc_activation(&mut self, capacity: usize, cols: usize) -> Result<Self::Activation>;
    fn alloc_kv_cache(&mut self, spec: KvSpec) -> Result<Self::KvCache>;

    // ---- ops --------------------------------------------------------------------

    /// Starts a batch: the next ops act on `tokens.len()` rows holding positions
    /// `start_pos..start_pos + tokens.len()`. A backend that uploads the ids through
    /// its queue submits the ops recorded for the previous batch first.
    fn begin_batch(&mut self, tokens: &[u32], start_pos: usize) -> Result<()>;
    /// Starts a batch of several independent sequences packed row after row (an
    /// encoder's inputs in one forward pass): `lens` are their lengths in order, summing
    /// to `tokens.len()`. Each sequence's positions restart at 0 (RoPE, learned
    /// positions); the keys and values go to cache rows `0..tokens.len()` in batch
    /// order; `attention` confines each row to its own sequence's rows (all of them when
    /// not causal, up to itself when causal). One sequence is `begin_batch(tokens, 0)`.
    /// `packed_spans` checks `lens` and gives each row its sequence's rows.
    fn begin_packed_batch(&mut self, tokens: &[u32], lens: &[usize]) -> Result<()>;
    /// `out[r] = scale * table[tokens[r]]` (rows dequantized from the table's type).
    fn embed(&mut self, table: &Self::Weight, scale: f32, out: Self::Activation);
    /// RMS norm over consecutive groups of `group` columns (a whole row when
    /// `group == cols`; one head when normalising q/k per head), times `weight[group]`.
    /// `out` may be `x` (in place).
    fn rms_norm(&mut self, x: Self::Activation, weight: &Self::Weight, group: usize, eps: f32, out: Self::Activation);
    /// `out[r] = W · x[r]` for a weight of `rows × cols`: out has `rows` columns.
    fn matmul(&mut self, x: Self::Activation, weight: &Self::Weight, out: Self::Activation);
    /// [`Backend::matmul`] of one input by several weights that read it (a layer's q, k
    /// and v; its gate and up); the outputs are distinct, and none is `x`. Each output is
    /// what `matmul` gives it alone: a backend may run them as one job (the CPU does in
    /// decode, one fork and join instead of three).
    fn matmuls(&mut self, x: Self::Activation, jobs: &[(&Self::Weight, Self::Activation)]) {
        for &(w, out) in jobs {
            self.matmul(x, w, out);
        }
    }
    /// Rotates `heads` heads of `head_dim` in place by each row's position.
    /// `freq_factors` (`n_rot / 2` f32) divide the pair frequencies when given.
    fn rope(
        &mut self,
        x: Self::Activation,
        heads: usize,
        head_dim: usize,
        rope: &RopeConfig,
        freq_factors: Option<&Self::Weight>,
    );
    /// `x[r] += bias` for every row (`bias` is one row of x's width).
    fn add_bias(&mut self, x: Self::Activation, bias: &Self::Weight);
    /// Optional q/k/v biases, optional per-head RMS norm of q and k, then RoPE of q and
    /// k, in place: what every forward pass does between the projections and
    /// `attention`. The default records the separate ops; a backend may do it in one
    /// pass (the GPU also stores k and v into the cache in that pass when `attention`
    /// follows), or inside the `attention` that follows over the same q, k and v (the
    /// GPU in decode), which then leaves them as they were: read q, k and v after
    /// `rope_qk` only where no such attention follows.
    fn rope_qk(&mut self, q: Self::Activation, k: Self::Activation, v: Self::Activation, p: &QkRope<'_, Self::Weight>) {
        if let Some([bq, bk, bv]) = p.bias {
            self.add_bias(q, bq);
            self.add_bias(k, bk);
            self.add_bias(v, bv);
        }
        if let Some((qn, kn, eps)) = p.norm {
            self.rms_norm(q, qn, p.head_dim, eps, q);
            self.rms_norm(k, kn, p.head_dim, eps, k);
        }
        self.rope(q, p.heads, p.head_dim, p.rope, p.freq_factors);
        self.rope(k, p.kv_heads, p.head_dim, p.rope, p.freq_factors);
    }
    /// Stores k and v rows at the batch positions, then for every row computes causal
    /// (and optionally windowed) grouped-query attention of q over the cache, or not
    /// causal (`AttentionParams::causal`); in a packed batch only over the row's own
    /// sequence.
    fn attention(
        &mut self,
        q: Self::Activation,
        k: Self::Activation,
        v: Self::Activation,
        cache: &mut Self::KvCache,
        params: &AttentionParams,
        out: Self::Activation,
    );
    /// `out = act(gate) * up`, elementwise.
    fn gated_activation(
        &mut self,
        gate: Self::Activation,
        up: Self::Activation,
        act: Activation,
        out: Self::Activation,
    );
    /// `x += y`, elementwise.
    fn add(&mut self, x: Self::Activation, y: Self::Activation);
    /// Copies row `src_row` of the batch in `src` to row 0 of `dst` (used to compute
    /// logits for the last position only, with a `dst` of capacity 1).
    fn select_row(&mut self, src: Self::Activation, src_row: usize, dst: Self::Activation);
    /// `x = cap * tanh(x / cap)` elementwise.
    fn softcap(&mut self, x: Self::Activation, cap: f32);

    // ---- encoder ops (`forward/encoder.rs`) ---------------------------------------

    /// Whether the backend implements the encoder ops below (`layer_norm`,
    /// `add_position_embedding`, `activation`, and `AttentionParams::causal == false`).
    /// Their defaults record nothing, so that a backend builds before it has them;
    /// `Model::embed` refuses a backend that says `false` rather than run them.
    fn supports_encoders(&self) -> bool {
        false
    }
    /// Per row: out = (x - mean) / sqrt(var + eps) * weight + bias over the whole row (`weight`, `bias`: `cols` f32). `out` may be `x`.
    fn layer_norm(
        &mut self,
        _x: Self::Activation,
        _weight: &Self::Weight,
        _bias: &Self::Weight,
        _eps: f32,
        _out: Self::Activation,
    ) {
    }
    /// `x[r] += table[start_pos + r]` for each row r of the batch (learned absolute positions; `start_pos` from begin_batch).
    fn add_position_embedding(&mut self, _x: Self::Activation, _table: &Self::Weight) {}
    /// In place, element-wise (non-gated FFN: BERT's GELU).
    fn activation(&mut self, _x: Self::Activation, _act: Activation) {}

    // ---- reads: run everything recorded so far, then read back -------------------

    /// The first `rows` rows of `x`, row-major.
    async fn read_rows(&mut self, x: Self::Activation, rows: usize) -> Result<Vec<f32>>;
    /// The index of the largest value in each of the first `rows` rows (lowest index
    /// on ties): a greedy step reads back 4 bytes.
    async fn argmax_rows(&mut self, x: Self::Activation, rows: usize) -> Result<Vec<u32>>;
    // ---- greedy decoding, the next step recorded while the device runs this one ----

    /// Whether the backend supports `submit_chained` / `begin_chained_batch` /
    /// `finish_chained`: a greedy decode step whose token stays on the device, so the
    /// next steps are recorded and submitted before this one's token is read back (up
    /// to `CHAINED_STEPS` submitted and not read).
    fn can_chain(&self) -> bool {
        false
    }
    /// Runs everything recorded, leaving the argmax of row 0 of `x` where the next
    /// `begin_chained_batch` reads its token, and starts reading it back.
    async fn submit_chained(&mut self, _x: Self::Activation) -> Result<()> {
        Err(crate::ModelError::backend("this backend does not chain decode steps"))
    }
    /// Starts a one-row batch at `start_pos` whose token is the one the last
    /// `submit_chained` left on the device.
    fn begin_chained_batch(&mut self, _start_pos: usize) -> Result<()> {
        Err(crate::ModelError::backend("this backend does not chain decode steps"))
    }
    /// The token of the oldest `submit_chained` (or `submit_masked_chained`) not read yet.
    async fn finish_chained(&mut self) -> Result<u32> {
        Err(crate::ModelError::backend("this backend does not chain decode steps"))
    }

    // ---- constrained greedy decoding, the mask computed while the device runs ------

    /// Whether the backend supports `submit_masked_chained` and `submit_recorded`.
    fn can_chain_masked(&self) -> bool {
        false
    }
    /// Like `submit_chained`, with the argmax taken over the ids `mask` allows (bit
    /// `id % 32` of word `id / 32`, `TokenMask::words`; ids past it are not allowed), and
    /// in its own submission: what was recorded since the last submission (the next
    /// step, recorded before this mask was known, whose token is this argmax) is
    /// submitted right after it. So the host records step t+1 and computes step t's mask
    /// while the device runs step t's forward pass, and the device goes on to step t+1
    /// without waiting for the host.
    async fn submit_masked_chained(&mut self, _x: Self::Activation, _mask: &[u32]) -> Result<()> {
        Err(crate::ModelError::backend("this backend does not chain masked decode steps"))
    }
    /// Runs what was recorded without reading anything back (a backend that computes as
    /// it records has nothing to do).
    fn submit_recorded(&mut self) -> Result<()> {
        Ok(())
    }
    /// Drops what was recorded since the last submission, unrun: a masked step recorded
    /// ahead that the generation, now ended, no longer needs.
    fn discard_recorded(&mut self) {}

    /// The `k` largest values of each of the first `rows` rows with their indices,
    /// largest first (lowest index on ties; NaN and -inf rank as, and may be returned as,
    /// the lowest finite value; fewer when a row is shorter): a
    /// sampling step reads back its candidates, not the vocabulary. The default reads
    /// the rows and selects on the host.
    async fn top_k_rows(&mut self, x: Self::Activation, rows: usize, k: usize) -> Result<Vec<Vec<(u32, f32)>>> {
        let data = self.read_rows(x, rows).await?;
        let cols = data.len().checked_div(rows).unwrap_or(0);
        Ok(data.chunks_exact(cols.max(1)).map(|row| top_k(row, k)).collect())
    }
}

/// The rows `[first, end)` of each row's sequence in a packed batch of sequences of
/// `lens` rows (`Backend::begin_packed_batch`), one pair per row; an error unless the
/// lengths are non-zero and sum to `rows`.
pub fn packed_spans(lens: &[usize], rows: usize) -> Result<Vec<[u32; 2]>> {
    if lens.contains(&0) || lens.iter().sum::<usize>() != rows || u32::try_from(rows).is_err() {
        return Err(crate::ModelError::backend(format!(
            "a packed batch of {rows} rows cannot hold sequences of {lens:?} rows (each at least one, summing to the rows)"
        )));
    }
    let mut spans = Vec::with_capacity(rows);
    let mut first = 0;
    for &len in lens {
        spans.extend(std::iter::repeat_n([first as u32, (first + len) as u32], len));
        first += len;
    }
    Ok(spans)
}

/// The `k` largest values of `row` with their indices in `Backend::top_k_rows` order.
pub fn top_k(row: &[f32], k: usize) -> Vec<(u32, f32)> {
    let key = |v: f32| if v.is_nan() || v == f32::NEG_INFINITY { f32::MIN } else { v };
    let mut all: Vec<(u32, f32)> = row.iter().enumerate().map(|(i, &v)| (i as u32, v)).collect();
    let order = |a: &(u32, f32), b: &(u32, f32)| key(b.1).total_cmp(&key(a.1)).then(a.0.cmp(&b.0));
    let k = k.min(all.len());
    if k == 0 {
        return Vec::new();
    }
    all.select_nth_unstable_by(k - 1, order);
    all.truncate(k);
    all.sort_by(order);
    all
}
