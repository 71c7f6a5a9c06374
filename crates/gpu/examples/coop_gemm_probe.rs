//! Probe (issue 29, native prefill): what the cooperative-matrix batch matmul could reach
//! if both operands were f16 in memory already: the activations converted once, the
//! weight dequantized once per batch into an f16 scratch (llama.cpp's dequantize-then-GEMM
//! route), instead of matmul_coop.wgsl converting activations once per 128 weight rows
//! and dequantizing every weight value once per 128 activation rows while staging.
//! Times, on Qwen2.5-1.5B's prefill shapes (512 activation rows):
//!   - `deq_q4k`: Q4_K → f16 rows (the scratch's cost, once per matmul);
//!   - `staged …`: f16 tiles copied into workgroup memory (one or two buffers: `x2`)
//!     first, held as vec4<f16>s (two 8-byte stores per 8 values) or, `f16s`, as scalar
//!     f16s (eight 2-byte stores: matmul_coop.wgsl's way);
//!   - `prefetch …`: one buffer, the next step loaded into registers before this step's
//!     multiplies (`xf32`: the activations read as f32 and converted on the way);
//!   - `split4`: the dot products split into four spans, each workgroup writing partial
//!     sums (the adding pass untimed).
//!
//! What it found on an H200, and what came of it in the real kernels:
//! bench/results/coop-staging-h200.md (staging; its `direct` variants, each subgroup
//! loading its pieces from memory, were 1.6–2.6x slower and have left the probe) and
//! bench/results/coop-panels-h200.md (prefetching: shaders/matmul_wide_coop.wgsl).
//!
//! Each GEMM is checked against f64 sums of the same f16 inputs on sampled outputs.
//! Needs an adapter with EXPERIMENTAL_COOPERATIVE_MATRIX (the lent NVIDIA GPU); elsewhere
//! it checks the dequantization kernel and validates the GEMM sources only.
//! `cargo run --release -p kindling-gpu --example coop_gemm_probe`
mod probe_util;
use probe_util::{clear, deq_q4k_source, group, pipeline, q4k, read_back, time, trusted, vulkan_adapter};

use kindling_gguf::GgmlType;
use kindling_testdata::Rng;

const M: usize = 512;
const Q4K_BYTES: usize = 144;

/// (name, weight rows, k) of the matmuls timed.
const SHAPES: [(&str, usize, usize); 4] = [
    ("gate 8960x1536", 8960, 1536),
    ("down 1536x8960", 1536, 8960),
    ("q 1536x1536", 1536, 1536),
    ("k 256x1536", 256, 1536),
];

#[derive(Clone, Copy, Debug)]
enum Kind {
    /// Tiles staged through workgroup memory, CK values a step, one or two buffers.
    Staged { ck: usize, double: bool, scalar: bool },
    /// One buffer, the next step's chunks loaded into registers before this step's
    /// multiplies and stored after them (the loads in flight behind the matrix work);
    /// `a_f32`: the activations read as f32 and converted while loading (as the engine
    /// holds them), not from an f16 copy.
    Prefetched { ck: usize, a_f32: bool },
}

/// A GEMM variant: a grid of SGM × SGN subgroups, each holding FM × FN 16 × 16
/// accumulators, so a workgroup's output tile is (16·FM·SGM) × (16·FN·SGN).
#[derive(Clone, Copy, Debug)]
struct Shape {
    kind: Kind,
    /// Workgroups along the dot products (grid z), each writing its partial sums to an
    /// output of its own (the engine's split-K, whose adding pass is not timed here).
    splits: usize,
    sgm: usize,
    sgn: usize,
    fm: usize,
    fn_: usize,
}

impl Shape {
    fn tile(&self) -> (usize, usize) {
        (16 * self.fm * self.sgm, 16 * self.fn_ * self.sgn)
    }
    fn name(&self) -> String {
        let split = if self.splits > 1 { format!(" split{}", self.splits) } else { String::new() };
        format!("{}{split}", self.kind_name())
    }
    fn kind_name(&self) -> String {
        let (tm, tn) = self.tile();
        match self.kind {
            Kind::Prefetched { ck, a_f32 } => format!(
                "prefetch{} {tm}x{tn} ck{ck} ({}x{} per sg)",
                if a_f32 { " xf32" } else { "" },
                16 * self.fm,
                16 * self.fn_
            ),
            Kind::Staged { ck, double, scalar } => format!(
                "staged{}{} {tm}x{tn} ck{ck} ({}x{} per sg)",
                if double { " x2" } else { "" },
                if scalar { " f16s" } else { "" },
                16 * self.fm,
                16 * self.fn_
            ),
        }
    }
}

const HEADER: &str = "enable f16;
enable wgpu_cooperative_matrix;
struct P { m: u32, n: u32, k: u32, pad: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
";

/// The WGSL of one variant (entry point `gemm`): the activations [m][k] (xv, f16, or xf,
/// f32), the weight wv [n][k], out [m][n] (times the splits).
fn gemm_source(s: &Shape) -> String {
    let (tm, tn) = s.tile();
    let invocations = 32 * s.sgm * s.sgn;
    let mut w = String::from(HEADER);
    let (ld_a, ld_b, a_base, b_base, per) = match s.kind {
        Kind::Staged { ck, double, scalar } => {
            let ld = ck + 8;
            let bufs = if double { 2 } else { 1 };
            w += "@group(0) @binding(4) var<storage, read> xv: array<vec4<f16>>;\n";
            w += "@group(0) @binding(5) var<storage, read> wv: array<vec4<f16>>;\n";
            // The tiles are arrays of vec4<f16>, so that 8 values are staged with two
            // 8-byte stores; the matrix loads read them as f16s (strides and offsets in
            // vec4s). NVIDIA's compiler rejects matrix loads from u32 elements (NVVM
            // compilation failed); vectors of the matrix's own type are what llama.cpp uses.
            let tiles = if scalar {
                // The control: scalar f16 tiles, 8 stores a chunk (matmul_coop.wgsl today).
                ("f16", 1)
            } else {
                ("vec4<f16>", 4)
            };
            w += &format!("var<workgroup> ah: array<{}, {}>;\n", tiles.0, bufs * tm * ld / tiles.1);
            w += &format!("var<workgroup> bh: array<{}, {}>;\n", tiles.0, bufs * tn * ld / tiles.1);
            // Vector `v` into tile `t` at vec4 index `at`.
            let put = |t: &str, v: &str, at: &str| {
                if scalar {
                    (0..4).map(|i| format!("{t}[4u * ({at}) + {i}u] = {v}[{i}]; ")).collect::<String>()
                } else {
                    format!("{t}[{at}] = {v};")
                }
            };
            // One loop per tile: tile `t` (ah or bh) from `src` (xv or wv), rows from `base`.
            let stage_loop = |t: &str, src: &str, base: &str, rows: usize| {
                let (p0, p1) = (put(t, &format!("{src}[src]"), "at"), put(t, &format!("{src}[src + 1u]"), "at + 1u"));
                format!(
                    "    for (var t = lid; t < {chunks}u; t += {invocations}u) {{
        let r = t / {cpr}u;
        let c = t % {cpr}u;
        let at = buf * {size}u + r * {ld4}u + 2u * c;
        let src = (({base} + r) * p.k + k0) / 4u + 2u * c;
        {p0}
        {p1}
    }}
",
                    chunks = rows * ck / 8,
                    cpr = ck / 8,
                    size = rows * ld / 4,
                    ld4 = ld / 4,
                )
            };
            w += "fn stage(m0: u32, n0: u32, k0: u32, buf: u32, lid: u32) {\n";
            w += &stage_loop("ah", "xv", "m0", tm);
            w += &stage_loop("bh", "wv", "n0", tn);
            w += "}\n";
            ((ld / tiles.1).to_string(), (ld / tiles.1).to_string(), "ah", "bh", tiles.1)
        }
        Kind::Prefetched { ck, a_f32 } => {
            let ld4 = (ck + 8) / 4;
            if a_f32 {
                w += "@group(0) @binding(6) var<storage, read> xf: array<vec4<f32>>;\n";
            } else {
                w += "@group(0) @binding(4) var<storage, read> xv: array<vec4<f16>>;\n";
            }
            w += "@group(0) @binding(5) var<storage, read> wv: array<vec4<f16>>;\n";
            w += &format!("var<workgroup> ah: array<vec4<f16>, {}>;\n", tm * ld4);
            w += &format!("var<workgroup> bh: array<vec4<f16>, {}>;\n", tn * ld4);
            (ld4.to_string(), ld4.to_string(), "ah", "bh", 4)
        }
    };
    w += &format!(
        "@compute @workgroup_size({invocations})
fn gemm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
    let sg = lid / 32u;
    let m0 = wid.y * {tm}u;
    let n0 = wid.x * {tn}u;
    let wm = (sg / {sgn}u) * {pm}u;
    let wn = (sg % {sgn}u) * {pn}u;
    // The output's stride as a let: naga's SPIR-V writer needs a matrix load's or store's
    // stride emitted before it (a uniform's field read in place panics it).
    let ldo = p.n;
    // This workgroup's span of the dot products and its partial sums' output.
    let ks = wid.z * (p.k / {splits}u);
    let ke = ks + p.k / {splits}u;
    let ob = wid.z * p.m * p.n;
",
        splits = s.splits,
        sgn = s.sgn,
        pm = 16 * s.fm,
        pn = 16 * s.fn_
    );
    for i in 0..s.fm {
        for j in 0..s.fn_ {
            w += &format!("    var c{i}{j} = coop_mat16x16<f32, C>();\n");
        }
    }
    // The multiplies of one 16-value slice `kk` of the step (row/column bases given).
    let mults = |a_row: &dyn Fn(usize) -> String, b_row: &dyn Fn(usize) -> String, kk: &str| {
        let mut m = String::new();
        for i in 0..s.fm {
            // Indices as lets too (naga's SPIR-V writer: see `ldo`).
            m += &format!(
                "        let ia{i} = ({}) * {ld_a} + {kk};\n        let a{i} = coopLoadT<coop_mat16x16<f16, A>>(&{a_base}[ia{i}], {ld_a});\n",
                a_row(i)
            );
        }
        for j in 0..s.fn_ {
            m += &format!(
                "        let ib{j} = ({}) * {ld_b} + {kk};\n        let b{j} = coopLoad<coop_mat16x16<f16, B>>(&{b_base}[ib{j}], {ld_b});\n",
                b_row(j)
            );
        }
        for i in 0..s.fm {
            for j in 0..s.fn_ {
                m += &format!("        c{i}{j} = coopMultiplyAdd(a{i}, b{j}, c{i}{j});\n");
            }
        }
        m
    };
    match s.kind {
        Kind::Staged { ck, double: false, .. } => {
            w += &format!("    for (var k0 = ks; k0 < ke; k0 += {ck}u) {{\n        stage(m0, n0, k0, 0u, lid);\n        workgroupBarrier();\n");
            w += &format!("        for (var kk = 0u; kk < {ck}u; kk += 16u) {{\n");
            w += &mults(&|i| format!("wm + {}u", 16 * i), &|j| format!("wn + {}u", 16 * j), &format!("kk / {per}u"));
            w += "        }\n        workgroupBarrier();\n    }\n";
        }
        Kind::Staged { ck, double: true, .. } => {
            // Step s computes from buffer s % 2 while staging step s + 1 into the other:
            // one barrier a step.
            let (a_size, b_size) = (tm * (ck + 8), tn * (ck + 8));
            w += "    stage(m0, n0, ks, 0u, lid);\n    workgroupBarrier();\n";
            w += &format!(
                "    for (var k0 = ks; k0 < ke; k0 += {ck}u) {{\n        let buf = ((k0 - ks) / {ck}u) % 2u;\n"
            );
            w += &format!("        if (k0 + {ck}u < ke) {{ stage(m0, n0, k0 + {ck}u, 1u - buf, lid); }}\n");
            w += &format!("        for (var kk = 0u; kk < {ck}u; kk += 16u) {{\n");
            w += &mults(
                &|i| format!("buf * {}u + ({}u + wm + {}u)", a_size / (ck + 8), 0, 16 * i),
                &|j| format!("buf * {}u + (wn + {}u)", b_size / (ck + 8), 16 * j),
                &format!("kk / {per}u"),
            );
            w += "        }\n        workgroupBarrier();\n    }\n";
        }
        Kind::Prefetched { ck, a_f32 } => w += &prefetched_loop(s, ck, a_f32, &mults),
    }
    for i in 0..s.fm {
        for j in 0..s.fn_ {
            w += &format!(
                "    let io{i}{j} = ob + (m0 + wm + {}u) * ldo + n0 + wn + {}u;\n    coopStoreT(c{i}{j}, &out[io{i}{j}], ldo);\n",
                16 * i,
                16 * j
            );
        }
    }
    w += "}\n";
    w
}

/// The multiplies of one 16-value slice of a step (gemm_source's `mults`): the A and B
/// pieces' row bases, then the slice's offset.
type Mults<'a> = dyn Fn(&dyn Fn(usize) -> String, &dyn Fn(usize) -> String, &str) -> String + 'a;

/// The main loop of a `Prefetched` variant: each invocation's chunks of the next step
/// (two vec4<f16>s per 8 values) are loaded into registers before this step's
/// multiplies and stored into the (single) tiles after them, between two barriers.
fn prefetched_loop(s: &Shape, ck: usize, a_f32: bool, mults: &Mults<'_>) -> String {
    let (tm, tn) = s.tile();
    let invocations = 32 * s.sgm * s.sgn;
    let (cpr, ld4) = (ck / 8, (ck + 8) / 4);
    assert!((tm * cpr).is_multiple_of(invocations) && (tn * cpr).is_multiple_of(invocations), "{}", s.name());
    let tiles = [("a", "ah", "m0", tm * cpr / invocations), ("b", "bh", "n0", tn * cpr / invocations)];
    let mut decls = String::new();
    let (mut loads, mut stores) = (String::new(), String::new());
    for (r, tile, base, count) in tiles {
        for i in 0..count {
            decls += &format!("    var r{r}{i}0: vec4<f16>;\n    var r{r}{i}1: vec4<f16>;\n");
            let pick = format!("let t = lid + {}u; let row = t / {cpr}u; let c = t % {cpr}u;", i * invocations);
            let load = match (r, a_f32) {
                ("a", true) => format!("r{r}{i}0 = vec4<f16>(xf[src]); r{r}{i}1 = vec4<f16>(xf[src + 1u]);"),
                ("a", false) => format!("r{r}{i}0 = xv[src]; r{r}{i}1 = xv[src + 1u];"),
                _ => format!("r{r}{i}0 = wv[src]; r{r}{i}1 = wv[src + 1u];"),
            };
            loads += &format!("        {{ {pick} let src = (({base} + row) * p.k + kx) / 4u + 2u * c; {load} }}\n");
            stores +=
                &format!("        {{ {pick} let at = row * {ld4}u + 2u * c; {tile}[at] = r{r}{i}0; {tile}[at + 1u] = r{r}{i}1; }}\n");
        }
    }
    let mut w = decls;
    w += &format!("    {{\n        let kx = ks;\n{loads}{stores}    }}\n    workgroupBarrier();\n");
    w += &format!("    for (var k0 = ks; k0 < ke; k0 += {ck}u) {{\n        let kx = k0 + {ck}u;\n");
    w += &format!("        if (kx < ke) {{\n{loads}        }}\n");
    w += &format!("        for (var kk = 0u; kk < {ck}u; kk += 16u) {{\n");
    w += &mults(&|i| format!("wm + {}u", 16 * i), &|j| format!("wn + {}u", 16 * j), "kk / 4u");
    w += "        }\n        workgroupBarrier();\n";
    w += &format!("        if (kx < ke) {{\n{stores}        }}\n        workgroupBarrier();\n    }}\n");
    w
}

/// Q4_K rows → f16, one invocation per 8 values (one 16-byte store, consecutive
/// invocations writing consecutive chunks).
fn deq_q4k_f16() -> String {
    deq_q4k_source(
        "vec4<u32>",
        "wq[i] = vec4<u32>(pack2x16float(lo.xy), pack2x16float(lo.zw), pack2x16float(hi.xy), pack2x16float(hi.zw));",
    )
}

fn main() {
    let adapter = vulkan_adapter();
    let coop_features = wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX | wgpu::Features::SHADER_F16;
    let coop = adapter.features().contains(coop_features);
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_features: if coop { coop_features } else { wgpu::Features::empty() },
        required_limits: adapter.limits(),
        // SAFETY: a probe; the experimental feature is what it measures.
        experimental_features: if coop {
            unsafe { wgpu::ExperimentalFeatures::enabled() }
        } else {
            wgpu::ExperimentalFeatures::disabled()
        },
        ..Default::default()
    }))
    .expect("device");
    device.on_uncaptured_error(std::sync::Arc::new(|e: wgpu::Error| panic!("{e:?}")));

    let one = |kind, sgm, sgn, fm, fn_| Shape { kind, splits: 1, sgm, sgn, fm, fn_ };
    let pre = |ck, a_f32| Kind::Prefetched { ck, a_f32 };
    let split4 = |s: Shape| Shape { splits: 4, ..s };
    let variants = [
        // The best of the last call (bench/results/coop-staging-h200.md), the reference.
        one(Kind::Staged { ck: 64, double: false, scalar: false }, 2, 4, 4, 2),
        one(pre(64, false), 2, 4, 4, 2),
        one(pre(64, true), 2, 4, 4, 2),
        one(pre(64, false), 4, 2, 2, 4),
        one(pre(64, false), 2, 2, 4, 4),
        one(pre(32, false), 4, 4, 2, 2),
        one(pre(32, false), 2, 4, 4, 4),
        one(pre(32, true), 2, 4, 4, 4),
        split4(one(Kind::Staged { ck: 64, double: false, scalar: false }, 2, 4, 4, 2)),
        split4(one(pre(64, false), 2, 4, 4, 2)),
        split4(one(pre(32, false), 2, 4, 4, 4)),
    ];
    if !coop {
        println!("no cooperative matrices here: validating the GEMM sources only");
        for s in &variants {
            validate(&gemm_source(s), &s.name());
        }
    }

    let mut rng = Rng(11);
    let storage = |label: &str, bytes: &[u8], extra| probe_util::storage(&device, &queue, label, bytes, extra);
    let uniform = |words: [u32; 4]| {
        let b = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("params"),
            size: 16,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        queue.write_buffer(&b, 0, bytemuck::cast_slice(&words));
        b
    };

    // The dequantization kernel, checked against kindling_gguf, then timed on gate's shape.
    {
        let (rows, k) = (8960, 1536);
        let q = q4k(&mut rng, rows, k);
        let w = storage("q4k", &q, wgpu::BufferUsages::empty());
        let wq = storage("wq", &vec![0u8; rows * k * 2], wgpu::BufferUsages::COPY_SRC);
        let params = uniform([0, rows as u32, k as u32, 0]);
        let module = trusted(&device, &deq_q4k_f16(), "deq");
        let pipe = pipeline(&device, &module, "deq_q4k");
        let bg = group(&device, &pipe.get_bind_group_layout(0), &[(0, &params), (1, &w), (2, &wq)]);
        let invocations = rows * k / 8;
        let groups = (invocations.div_ceil(256) as u32).min(65535);
        let gy = (invocations.div_ceil(256) as u32).div_ceil(groups);
        let t = time(&device, &queue, &pipe, &bg, (groups, gy, 1), 20);
        let got = read_back(&device, &queue, &wq, rows * k * 2);
        let got: &[u16] = bytemuck::cast_slice(&got);
        let mut want = vec![0f32; k];
        let mut err = 0f32;
        for r in (0..rows).step_by(97) {
            kindling_gguf::dequantize(
                GgmlType::Q4K,
                &q[r * k / 256 * Q4K_BYTES..(r + 1) * k / 256 * Q4K_BYTES],
                &mut want,
            )
            .expect("dequantize");
            for (c, v) in want.iter().enumerate() {
                err = err.max((f16_value(got[r * k + c]) - v).abs() / v.abs().max(1e-3));
            }
        }
        let bytes = (rows * k / 256 * Q4K_BYTES + rows * k * 2) as f64;
        println!(
            "deq_q4k 8960x1536: {t:7.1} µs ({:.0} GB/s moved), max relative error {err:.1e} (f16: 4.9e-4)",
            bytes / t / 1e3
        );
        assert!(err < 1e-3, "dequantization disagrees with kindling_gguf");
    }
    if !coop {
        return;
    }

    for (label, n, k) in SHAPES {
        let xs: Vec<u16> = (0..M * k).map(|_| f16_bits((rng.next_u64() % 2001) as f32 / 1000.0 - 1.0)).collect();
        let ws: Vec<u16> = (0..n * k).map(|_| f16_bits((rng.next_u64() % 2001) as f32 / 1000.0 - 1.0)).collect();
        let x = storage("xh", bytemuck::cast_slice(&xs), wgpu::BufferUsages::empty());
        let xf32: Vec<f32> = xs.iter().map(|&h| f16_value(h)).collect();
        let xf = storage("xf", bytemuck::cast_slice(&xf32), wgpu::BufferUsages::empty());
        let most_splits = variants.iter().map(|s| s.splits).max().unwrap_or(1);
        let w = storage("wh", bytemuck::cast_slice(&ws), wgpu::BufferUsages::empty());
        let out = storage("out", &vec![0u8; most_splits * M * n * 4], wgpu::BufferUsages::COPY_SRC);
        let params = uniform([M as u32, n as u32, k as u32, 0]);
        let flops = 2.0 * (M * n * k) as f64;
        for s in &variants {
            let (tm, tn) = s.tile();
            let step = match s.kind {
                Kind::Staged { ck, .. } | Kind::Prefetched { ck, .. } => ck,
            };
            if !n.is_multiple_of(tn) || !M.is_multiple_of(tm) || !k.is_multiple_of(s.splits * step) {
                println!("{label:<16} {:<40} skipped: tile does not divide the shape", s.name());
                continue;
            }
            let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
            let module = trusted(&device, &gemm_source(s), &s.name());
            let pipe = pipeline(&device, &module, "gemm");
            if let Some(e) = pollster::block_on(scope.pop()) {
                println!(
                    "{label:<16} {:<40} does not compile here: {}",
                    s.name(),
                    e.to_string().lines().last().unwrap_or("")
                );
                continue;
            }
            // The staged kernels read the operands as vec4s only (bindings 4 and 5).
            let bufs = match s.kind {
                Kind::Staged { .. } | Kind::Prefetched { a_f32: false, .. } => {
                    vec![(0, &params), (3, &out), (4, &x), (5, &w)]
                }
                Kind::Prefetched { a_f32: true, .. } => vec![(0, &params), (3, &out), (5, &w), (6, &xf)],
            };
            let bg = group(&device, &pipe.get_bind_group_layout(0), &bufs);
            clear(&device, &queue, &out);
            let t = time(&device, &queue, &pipe, &bg, ((n / tn) as u32, (M / tm) as u32, s.splits as u32), 20);
            let parts: Vec<f32> =
                bytemuck::cast_slice(&read_back(&device, &queue, &out, s.splits * M * n * 4)).to_vec();
            let got: Vec<f32> = (0..M * n).map(|i| (0..s.splits).map(|z| parts[z * M * n + i]).sum()).collect();
            let mut err = 0f64;
            for i in 0..256 {
                let (r, c) = ((i * 7919) % M, (i * 104_729) % n);
                let want: f64 = (0..k).map(|e| f16_value(xs[r * k + e]) as f64 * f16_value(ws[c * k + e]) as f64).sum();
                err = err.max((got[r * n + c] as f64 - want).abs());
            }
            println!("{label:<16} {:<40} {t:8.1} µs  {:6.1} TFLOP/s  max |Δ| {err:.1e}", s.name(), flops / t / 1e6);
        }
    }
}

fn f16_value(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = ((h >> 10) & 0x1f) as i32;
    let m = (h & 0x3ff) as f32;
    sign * if e == 0 { m * 2f32.powi(-24) } else { (1.0 + m / 1024.0) * 2f32.powi(e - 15) }
}

/// Round to nearest f16 bits, for values well inside f16's normal range or zero.
fn f16_bits(v: f32) -> u16 {
    if v == 0.0 {
        return 0;
    }
    let sign = if v < 0.0 { 0x8000u16 } else { 0 };
    let a = v.abs();
    let e = a.log2().floor() as i32;
    let mut m = ((a / 2f32.powi(e) - 1.0) * 1024.0).round() as i32;
    let mut e = e;
    if m == 1024 {
        m = 0;
        e += 1;
    }
    if e < -14 {
        return sign; // subnormal: flushed (the inputs here are ≥ 1e-3)
    }
    sign | (((e + 15) as u16) << 10) | m as u16
}

fn validate(src: &str, label: &str) {
    let module =
        wgpu::naga::front::wgsl::parse_str(src).unwrap_or_else(|e| panic!("{label}: {}", e.emit_to_string(src)));
    let info = wgpu::naga::valid::Validator::new(
        wgpu::naga::valid::ValidationFlags::all(),
        wgpu::naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .unwrap_or_else(|e| panic!("{label}: {}", e.emit_to_string(src)));
    // The SPIR-V writer as wgpu runs it for trusted modules (no bounds checks): it has
    // panicked on sources the validator took.
    let options = wgpu::naga::back::spv::Options {
        bounds_check_policies: wgpu::naga::proc::BoundsCheckPolicies::default(),
        ..Default::default()
    };
    wgpu::naga::back::spv::write_vec(&module, &info, &options, None).unwrap_or_else(|e| panic!("{label}: {e}"));
    println!("{label}: valid");
}
