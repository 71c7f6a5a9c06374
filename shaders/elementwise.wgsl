// Elementwise kernels over the first `len` values of row-major activations; one
// invocation per value (select_row: per column). Params: EwParams.

// Params: len (values), cols (row width; add: y's length, which repeats along x),
// src_row (select_row), act (gated, activation: 0 SiLU, 1 GELU-tanh), cap (softcap); mask_logits: len
// (the row's values), cols (ids the mask covers; ids past them are not allowed).
@group(0) @binding(0) var<uniform> p: Params;
// x: [len] updated in place (add, softcap, activation).
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
// y: [cols] (add; cols = len for an elementwise add, one row for a bias).
@group(0) @binding(2) var<storage, read> y: array<f32>;
// gate, up: [len] (gated).
@group(0) @binding(3) var<storage, read> gate: array<f32>;
@group(0) @binding(4) var<storage, read> up: array<f32>;
// out: [len] (gated) / [cols] row 0 of the destination (select_row).
@group(0) @binding(5) var<storage, read_write> out: array<f32>;
// src: [rows, cols] (select_row).
@group(0) @binding(6) var<storage, read> src: array<f32>;
// mask: the allowed ids, bit id % 32 of word id / 32 (mask_logits; llguidance's layout).
@group(0) @binding(7) var<storage, read> mask: array<u32>;

fn index(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return wg_linear(wid, nwg) * ITEMS_WG + lid;
}

@compute @workgroup_size(ITEMS_WG)
fn add(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
       @builtin(local_invocation_index) lid: u32) {
    let i = index(wid, nwg, lid);
    if (i < p.len) {
        x[i] = x[i] + y[i % p.cols];
    }
}

@compute @workgroup_size(ITEMS_WG)
fn gated(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
    let i = index(wid, nwg, lid);
    if (i >= p.len) {
        return;
    }
    out[i] = gated_act(gate[i], up[i], p.act);
}

// A non-gated feed-forward's activation, in place (BERT's GELU): act(x) as `gated`
// computes it, times 1.
@compute @workgroup_size(ITEMS_WG)
fn activation(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) lid: u32) {
    let i = index(wid, nwg, lid);
    if (i < p.len) {
        x[i] = gated_act(x[i], 1.0, p.act);
    }
}

@compute @workgroup_size(ITEMS_WG)
fn softcap(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) lid: u32) {
    let i = index(wid, nwg, lid);
    if (i < p.len) {
        x[i] = p.cap * tanh_safe(x[i] / p.cap);
    }
}

@compute @workgroup_size(ITEMS_WG)
fn select_row(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) lid: u32) {
    let c = index(wid, nwg, lid);
    if (c < p.cols) {
        out[c] = src[p.src_row * p.cols + c];
    }
}

// Constrained decoding: every value of a logit row whose id the mask does not allow
// becomes the lowest finite f32, so the argmax recorded after it picks an allowed token
// (the vocabulary argmax ranks -inf and NaN as that value too). Not -inf: WGSL has no
// infinite constants (Tint rejects the module) and lets implementations assume none.
@compute @workgroup_size(ITEMS_WG)
fn mask_logits(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) lid: u32) {
    let i = index(wid, nwg, lid);
    if (i >= p.len) {
        return;
    }
    let allowed = i < p.cols && ((mask[i / 32u] >> (i % 32u)) & 1u) != 0u;
    if (!allowed) {
        x[i] = -0x1.fffffep+127f;
    }
}
