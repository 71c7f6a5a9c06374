// matmul_tiled over integer dot products: the batch (prefill) matmul for weight types with
// 32-value units (shaders/quant_int/: unit(), struct Unit in unit.wgsl), which the host
// takes instead of shaders/matmul_tiled.wgsl where the device has no cooperative
// matrices and integer dot products are on (ShaderFeatures::int_batch). Same entry point,
// bindings, parameters and grid as the f32 kernel: a TM × TN tile (activation rows ×
// weight rows) per workgroup of 16 × 16 invocations, each holding 4 × 4 outputs.
//
// Why: browsers (WebGPU) have no cooperative matrices, and the f32 kernel multiplies one
// pair of values an instruction after dequantizing every weight value; dot4I8Packed
// multiplies four pairs of signed bytes an instruction, and the weight's quants are such
// bytes already (the unit snippets only unpack them).
//
// Each step stages 64 values of every row of both operands in workgroup memory: for the
// weight, units 2s and 2s + 1 of each row (the runs 4s..4s+3 in every type, unit.wgsl) as
// packed quants and their factors; for the activations, the same four runs of 16 values
// as quantize_runs (shaders/quantize_runs.wgsl, a dispatch before this one) left them: a
// scale per run (max |x| / qx_max) and QD signed-byte digits per value, high to low. It
// quantizes each run once, where every tile across the weight used to quantize it again.
// A run's products are summed exactly in i32 per digit; the digits' sums meet in f32
// (with three digits they can pass 2^31), then the unit's and the run's factors turn
// them into f32 sums.
// QD (tuning.rs INT_BATCH_DIGITS) trades accuracy for speed: three digits keep a value
// within 6e-8 of its run's largest (the f32 accuracy class of the kernel tests), one is
// llama.cpp's 8-bit activations at a third of the dot products.
//
// Params: MatmulParams (not gated: that is the cooperative-matrix kernel's). Split as
// matmul_tiled.wgsl is: p.splits spans of p.k_span values (a multiple of the 64 of a
// step), the spans' sums into out2 for matmul_split_sum. Over several weights (p.multi,
// as matmul_coop.wgsl's), every tile's sums go to out2 and matmul_split_sum_multi routes
// them.
// Prepended by the host: QD, TM and TN, the weight type's unit snippet.
@group(0) @binding(0) var<uniform> p: Params;
// Binding 1 holds the activations x: [n, x_stride] f32, read here as quantize_runs
// (shaders/quantize_runs.wgsl) left them in qx.
// w: [rows, row_words] one weight part, read through unit().
@group(0) @binding(2) var<storage, read> w: array<WEIGHT_WORD>;
// out: [n, out_stride] f32; res: [n, res_stride], res += out where p.res_add == 1.
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<storage, read_write> res: array<f32>;
// out2: [splits, n, rows] the spans' partial sums (p.splits > 1).
@group(0) @binding(6) var<storage, read_write> out2: array<f32>;
// qx: [n, k / 16, QD + 1] vec4s, x's runs quantized: QD digit vectors, then (scale, Σx)
// as f32 bits.
@group(0) @binding(5) var<storage, read> qx: array<vec4<u32>>;
// Over several weights side by side (p.multi, in the MULTI variant: a layer's q, k and
// v): the second (w's type, read through unit_2) and the third (its own type, rows of
// p.row_words3, unit_3); elsewhere the weight part again.
@group(0) @binding(9) var<storage, read> w2: array<WEIGHT_WORD_2>;
@group(0) @binding(7) var<storage, read> w3: array<WEIGHT_WORD_3>;

// Unit u of the weight row that gives output column c: of w, or over several weights of
// the one whose column it is (multi_row, matmul_out.wgsl).
fn unit_of(c: u32, u: u32) -> Unit {
    if (MULTI && p.multi != 0u) {
        let at = multi_row(c);
        if (at.x == 1u) {
            return unit_2(at.y, u);
        }
        if (at.x == 2u) {
            return unit_3(at.y, u);
        }
        return unit(at.y, u);
    }
    return unit(c, u);
}

// Runs of 16 values per step: two units of every weight row.
const RUNS: u32 = 4u;

// The weight tile: run r of local row c at [r * TN + c] (16 quants as packed bytes) and
// its unit's factors (a, b). Row c is read by invocation c % 16, so a quarter-warp's
// reads are 16 consecutive vec4s.
var<workgroup> wq: array<vec4<u32>, RUNS * TN>;
var<workgroup> wf: array<vec2<f32>, RUNS * TN>;
// The activation tile: digit d of run r of local row m at [(d * RUNS + r) * TM + m],
// and the run's (scale, Σ x) at [r * TM + m].
var<workgroup> xq: array<vec4<u32>, QD * RUNS * TM>;
var<workgroup> xd: array<vec2<f32>, RUNS * TM>;

// Σ over 16 values of the signed bytes of q times those of v.
fn dot16(q: vec4<u32>, v: vec4<u32>) -> i32 {
    return dot4I8Packed(q.x, v.x) + dot4I8Packed(q.y, v.y) + dot4I8Packed(q.z, v.z) + dot4I8Packed(q.w, v.w);
}

// Σ over 16 values of the four weight runs q (four weight rows) times one digit vector.
fn dot16x4(q: array<vec4<u32>, 4>, v: vec4<u32>) -> vec4<i32> {
    return vec4<i32>(dot16(q[0], v), dot16(q[1], v), dot16(q[2], v), dot16(q[3], v));
}

// Four weight rows' runs q · an activation run's QD digit vectors, in units of the run's
// scale: each digit's sums are exact in i32 (|sum| ≤ 16 · 128 · 128 = 2^18), the lower
// two also together (2^26); the high one meets them in f32. Plain int-to-float
// conversions, as matvec_int.wgsl's: an exponent trick that skipped them (v + 1.5 · 2^23
// read as a float, less 1.5 · 2^23) lost the third digit's accuracy on NVIDIA's Vulkan
// driver (the kernel tests on an H200: 1.2e-5 of Σ|w·x| against lavapipe's 5e-7).
fn run_dots(q: array<vec4<u32>, 4>, x0: vec4<u32>, x1: vec4<u32>, x2: vec4<u32>) -> vec4<f32> {
    let d0 = dot16x4(q, x0);
    if (QD == 1u) {
        return vec4<f32>(d0);
    }
    let d1 = dot16x4(q, x1);
    if (QD == 2u) {
        return vec4<f32>(256 * d0 + d1);
    }
    return 65536.0 * vec4<f32>(d0) + vec4<f32>(256 * d1 + dot16x4(q, x2));
}

// Stages step s: invocations 0..127 unpack one weight unit each (row l / 2, unit
// 2s + l % 2), 128..255 copy two quantized activation runs each (row (l - 128) / 2, runs
// 2 ((l - 128) % 2) and the next). Past the rows or the row's end: zeros.
fn stage(s: u32, lid: u32, m0: u32, n0: u32) {
    if (lid < 128u) {
        let c = lid >> 1u;
        let u = 2u * s + (lid & 1u);
        var t = Unit(vec4<u32>(), vec4<u32>(), vec2<u32>(4u * s + 2u * (lid & 1u), 4u * s + 2u * (lid & 1u) + 1u),
                     vec2<f32>(), vec2<f32>());
        if (n0 + c < p.rows && u < p.k / 32u) {
            t = unit_of(n0 + c, u);
        }
        let r0 = t.r.x - 4u * s;
        let r1 = t.r.y - 4u * s;
        wq[r0 * TN + c] = t.q0;
        wf[r0 * TN + c] = vec2<f32>(t.a.x, t.b.x);
        wq[r1 * TN + c] = t.q1;
        wf[r1 * TN + c] = vec2<f32>(t.a.y, t.b.y);
    } else {
        let l = lid - 128u;
        let m = l >> 1u;
        let row = m0 + m;
        for (var h = 0u; h < 2u; h++) {
            let r = 2u * (l & 1u) + h;
            let run = 4u * s + r;
            // Past the rows or the row's end, all-zero digit words and scale: a zero run.
            let live = row < p.n && run < p.k / 16u;
            let at = (row * (p.k / 16u) + run) * (QD + 1u);
            var st = vec4<u32>();
            for (var k = 0u; k < QD; k++) {
                var d = vec4<u32>();
                if (live) {
                    d = qx[at + k];
                }
                xq[(k * RUNS + r) * TM + m] = d;
            }
            if (live) {
                st = qx[at + QD];
            }
            xd[r * TM + m] = bitcast<vec2<f32>>(st.xy);
        }
    }
}

// Run slot r of local activation row m · the four weight runs q (rows c, c + 16, ...),
// with their factors (fa, fb): four f32 sums.
fn row_runs(r: u32, m: u32, q: array<vec4<u32>, 4>, fa: vec4<f32>, fb: vec4<f32>) -> vec4<f32> {
    let at = r * TM + m;
    let x0 = xq[at];
    let x1 = xq[min(1u, QD - 1u) * RUNS * TM + at];
    let x2 = xq[min(2u, QD - 1u) * RUNS * TM + at];
    let sd = xd[at];
    return fa * sd.x * run_dots(q, x0, x1, x2) + fb * sd.y;
}

@compute @workgroup_size(16, 16)
fn matmul_tiled(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid3: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let n0 = wid.x * TN;
    let m0 = (wid.y % p.m_tiles) * TM;
    let split = wid.y / p.m_tiles;
    let tx = lid3.x;
    let ty = lid3.y;
    // acc[I]: activation row m0 + ty + 16 I, weight rows (output columns) n0 + tx + 16 J
    // in component J (indexed by constants only, so it stays in registers).
    var acc: array<vec4<f32>, 4>;
    let steps = (min(p.k, (split + 1u) * p.k_span) + 63u) / 64u;
    for (var s = split * p.k_span / 64u; s < steps; s++) {
        stage(s, lid, m0, n0);
        workgroupBarrier();
        // The step's RUNS = 4 run slots written out where STEP_WRITTEN_OUT (the wasm
        // build; tuning.rs says why), else a loop.
        if (STEP_WRITTEN_OUT == 1u) {
            run_products(0u, tx, ty, &acc);
            run_products(1u, tx, ty, &acc);
            run_products(2u, tx, ty, &acc);
            run_products(3u, tx, ty, &acc);
        } else {
            for (var r = 0u; r < RUNS; r++) {
                run_products(r, tx, ty, &acc);
            }
        }
        workgroupBarrier();
    }
    store4(m0 + ty, n0 + tx, acc[0], split);
    store4(m0 + ty + 16u, n0 + tx, acc[1], split);
    store4(m0 + ty + 32u, n0 + tx, acc[2], split);
    store4(m0 + ty + 48u, n0 + tx, acc[3], split);
}

// Run slot r of the step: acc (as matmul_tiled's) += each of this invocation's four
// activation rows' run r · the four weight rows' runs r.
fn run_products(r: u32, tx: u32, ty: u32, acc: ptr<function, array<vec4<f32>, 4>>) {
    let c = r * TN + tx;
    let q = array<vec4<u32>, 4>(wq[c], wq[c + 16u], wq[c + 32u], wq[c + 48u]);
    let f0 = wf[c];
    let f1 = wf[c + 16u];
    let f2 = wf[c + 32u];
    let f3 = wf[c + 48u];
    let fa = vec4<f32>(f0.x, f1.x, f2.x, f3.x);
    let fb = vec4<f32>(f0.y, f1.y, f2.y, f3.y);
    (*acc)[0] += row_runs(r, ty, q, fa, fb);
    (*acc)[1] += row_runs(r, ty + 16u, q, fa, fb);
    (*acc)[2] += row_runs(r, ty + 32u, q, fa, fb);
    (*acc)[3] += row_runs(r, ty + 48u, q, fa, fb);
}

// out[r, c + 16 J] = v[J], within the batch and this part's rows (split: span `split`'s
// partial sums, out2[split][r][c + 16 J]).
// The components are named, never v[j] in a loop (matmul_tiled.wgsl's store4 says why).
fn store4(r: u32, c: u32, v: vec4<f32>, split: u32) {
    if (r >= p.n) {
        return;
    }
    store1(r, c, v.x, split);
    store1(r, c + 16u, v.y, split);
    store1(r, c + 32u, v.z, split);
    store1(r, c + 48u, v.w, split);
}
