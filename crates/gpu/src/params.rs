//! Per-op parameters: one `#[repr(C)]` struct per kernel family, written into the
//! per-submission parameter blob and read by the kernel as `var<uniform> p: Params`.
//! The WGSL `struct Params` is generated from the Rust definition (see `params!`), so
//! the two cannot drift apart. Fields are 4-byte scalars only (`u32`, `f32`), laid
//! out in order with no padding in either language.

/// Defines a parameter struct and its WGSL twin (`Self::WGSL`).
macro_rules! params {
    ($(#[$meta:meta])* $name:ident { $($(#[$fmeta:meta])* $field:ident: $ty:ident,)* }) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
        pub struct $name {
            $($(#[$fmeta])* pub $field: $ty,)*
        }

        impl $name {
            /// `struct Params { .. }` in WGSL, field for field.
            pub const WGSL: &'static str =
                concat!("struct Params {\n", $("    ", stringify!($field), ": ", stringify!($ty), ",\n",)* "}\n");
        }
    };
}

params!(
    /// `embed.wgsl`.
    EmbedParams {
        /// Batch rows.
        n: u32,
        /// Values per table row.
        cols: u32,
        /// u32 words per stored table row.
        row_words: u32,
        /// First table row held by this part, and how many it holds.
        row0: u32,
        part_rows: u32,
        /// Rows of the whole table (ids at or past it give zero rows).
        total_rows: u32,
        /// Row stride of the output.
        out_stride: u32,
        scale: f32,
        /// add_positions: the table row of batch row 0 (the batch's first position).
        start: u32,
        /// add_positions: 1 in a packed batch, each row's table row being its position
        /// within its sequence (the `spans` binding); `start` is then unused.
        packed: u32,
    }
);

params!(
    /// `rms_norm.wgsl` (its layer norms too).
    NormParams {
        n: u32,
        /// Row stride (and width) of x and out.
        cols: u32,
        /// Values normalised together (divides `cols`).
        group: u32,
        eps: f32,
    }
);

params!(
    /// `matmul.wgsl` (both entry points).
    MatmulParams {
        /// Activation rows.
        n: u32,
        /// Values per row (the dot-product length).
        k: u32,
        /// Weight rows in this part.
        rows: u32,
        /// u32 words per stored weight row.
        row_words: u32,
        x_stride: u32,
        out_stride: u32,
        /// Output column of the part's first row.
        out_offset: u32,
        /// 1: also add the result into `res` (a residual stream; the matmul and the
        /// following residual add in one dispatch), 0: `res` is a dummy.
        res_add: u32,
        res_stride: u32,
        /// matvec_gated: 0 SiLU, 1 GELU-tanh of the first weight's result, times the
        /// second's.
        act: u32,
        /// matvec_multi: rows of the second and third weights (`rows` is the first's),
        /// and u32 words per stored row of the third (it may be of another type: v
        /// beside q and k).
        rows2: u32,
        rows3: u32,
        row_words3: u32,
        /// Decode matvecs: invocations per weight row (a power of two, 4..=256; see
        /// `tuning::matvec_lanes`).
        lanes: u32,
        /// `*_normed`: the input norm's epsilon.
        eps: f32,
        /// matmul_tiled: its values split into `splits` spans of
        /// `k_span` (a multiple of its step), one workgroup per (span, tile), the tiles'
        /// partial sums in `out2` for matmul_split_sum; `m_tiles` tiles of activation
        /// rows per span. 1, k, the tiles: no split.
        splits: u32,
        k_span: u32,
        m_tiles: u32,
        /// matmul_tiled on cooperative matrices, 1: a feed-forward's gate (w) and up
        /// (w2) at once, each tile half gate rows, half the same up rows, written as
        /// act(gate) * up (`act`) into `rows` columns; never split. dequant_rows and
        /// matmul_wide (wide.rs) lay out and read a panel of both the same way (their
        /// `rows` the panel's rows, `rows2` the gate rows).
        gated: u32,
        /// matvec_gated over integer dot products: > 0 where it also writes its output
        /// quantized (the runs of shaders/matvec_int.wgsl's staging) for the matvec
        /// after it: the runs of the whole output row.
        qx_runs: u32,
        /// dequant_rows: the first weight row of the panel it writes.
        w_row0: u32,
        /// matmul_tiled on cooperative matrices, 1: the matmuls of two or three weights
        /// over one input at once (a layer's q, k and v projections): w, then w2 (rows2
        /// rows, of w's type), then w3 (rows3 rows, of the key's ty3), side by side as
        /// `rows` output columns in all. Every tile's sums go to out2 as a split's spans
        /// do (also unsplit), and matmul_split_sum_multi writes each column into its
        /// weight's output.
        multi: u32,
        /// matvec_merged: the attention's splits per head and its head_dim, whose split
        /// scratch (`SPLIT_HEAD + head_dim` values a split, shaders/attention.wgsl) is the
        /// input, merged as attn_combine would into the row the matvec reads.
        merge_splits: u32,
        merge_head_dim: u32,
    }
);

params!(
    /// `rope.wgsl`.
    RopeParams {
        /// Rows in this dispatch (the table holds as many).
        n: u32,
        /// First row of x this dispatch rotates.
        row0: u32,
        /// Row stride of x.
        cols: u32,
        heads: u32,
        head_dim: u32,
        /// n_rot / 2.
        half: u32,
        /// 1: neox pairs (i, i + half); 0: adjacent pairs.
        neox: u32,
        /// qk_rope: heads and row stride of k (x2).
        heads2: u32,
        cols2: u32,
        /// qk_rope: 1: RMS-normalise each head first (weights qn / kn), with eps.
        norm: u32,
        eps: f32,
        /// qk_rope: 1: store k and v rows into the cache at position start + row.
        store: u32,
        start: u32,
        /// Cache row width and v's row stride.
        width: u32,
        v_stride: u32,
        /// qk_rope: 1: add the q/k/v projection biases first (qn / kn hold the q and k
        /// biases then, vb the v bias; v is updated in place).
        bias: u32,
    }
);

params!(
    /// `attention.wgsl` (both entry points).
    AttnParams {
        n: u32,
        /// Position of the first row.
        start: u32,
        /// Cache row width: kv_heads × head_dim.
        width: u32,
        /// Row stride of q and out: heads × head_dim.
        q_cols: u32,
        heads: u32,
        kv_heads: u32,
        head_dim: u32,
        /// Sliding window (0: none).
        window: u32,
        scale: f32,
        k_stride: u32,
        v_stride: u32,
        /// Workgroups per (row, head) (> 1: partial results combined by attn_combine).
        splits: u32,
        /// Soft cap of the scaled scores (0: none).
        softcap: f32,
        /// attention_rope (decode, the q/k preparation taken in; as RopeParams): n_rot
        /// / 2, neox pairs (1) or adjacent (0), the per-head norm (1, with eps), the
        /// q/k/v biases (1).
        half: u32,
        neox: u32,
        norm: u32,
        eps: f32,
        bias: u32,
        /// 1: every row attends to every position `0..start + n` (encoders); 0: causal.
        non_causal: u32,
        /// 1: a packed batch of several sequences (`spans`): each row attends only within
        /// its own sequence's rows (attention, attention_tiled; never attention_rope).
        packed: u32,
    }
);

params!(
    /// `elementwise.wgsl`.
    EwParams {
        /// Values to process.
        len: u32,
        /// Row width (select_row).
        cols: u32,
        src_row: u32,
        /// gated, activation: 0 SiLU, 1 GELU-tanh.
        act: u32,
        cap: f32,
    }
);

params!(
    /// `argmax.wgsl`.
    ArgmaxParams {
        n: u32,
        cols: u32,
    }
);

params!(
    /// `quantize_runs.wgsl`.
    QuantParams {
        /// Rows.
        n: u32,
        /// Values per row quantized (a multiple of 16).
        k: u32,
        /// Row stride of x (a multiple of 4).
        x_stride: u32,
        /// Signed-byte digits per value (1 to 3).
        digits: u32,
    }
);

params!(
    /// `top_k.wgsl`.
    TopKParams {
        n: u32,
        cols: u32,
        /// Candidates per row.
        k: u32,
        /// Values per chunk of the first pass, and chunks per row.
        chunk: u32,
        chunks: u32,
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wgsl_struct_lists_the_fields_in_order() {
        assert_eq!(ArgmaxParams::WGSL, "struct Params {\n    n: u32,\n    cols: u32,\n}\n");
        assert_eq!(std::mem::size_of::<AttnParams>(), 20 * 4);
    }
}
