//! Probe (issue 29, the browser's prefill): what an f32 GEMM on the shader cores could
//! reach if the weight were f32 in memory already (dequantized once per matmul into a
//! scratch), instead of matmul_tiled.wgsl dequantizing every weight value once per 64
//! activation rows while staging. WebGPU has no matrix units, so this is the browser's
//! ceiling for prefill matmuls.
//! Times, on Qwen2.5-1.5B's prefill shapes (512 activation rows):
//!   - `deq_q4k_f32`: Q4_K → f32 rows (the scratch's cost, once per matmul);
//!   - GEMM variants: an output tile of TM activation rows × TN weight rows per workgroup
//!     of 16 × 16 invocations (each a (TM/16) × (TN/16) block), TK values a step staged in
//!     workgroup memory (16 KiB, WebGPU's guaranteed limit; 32 KiB for `tk16 .. db`), with or without the
//!     next step's loads issued before this step's products (`pf`); dot products split
//!     into spans (`sK`) where tiles are few, as the engine's kernels do; variants 12 on
//!     stage the 128 × 128 tile from operands tiled beforehand (`blk`) and/or into two
//!     tile copies with one barrier a step (`db`) (bench/results/f32-staging-h200.md).
//!
//! `VARIANT=i,j` runs only those; `CHECKED=1` compiles with wgpu's bounds checks, as a
//! browser does; `PRINT=1 VARIANT=i` prints variant i's WGSL (for pipeline_stats).
//!
//! Each GEMM is checked against f64 sums on sampled outputs.
//! `cargo run --release -p kindling-gpu --example f32_gemm_probe`
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

/// A GEMM variant (see the module comment).
#[derive(Clone, Copy, Debug)]
struct Shape {
    tm: usize,
    tn: usize,
    tk: usize,
    prefetch: bool,
    /// Both operands laid out in tiles beforehand (`block`): a step's tile is one run of
    /// vec4s in workgroup memory's order, so staging is one straight copy.
    blocked: bool,
    /// Two tiles of workgroup memory a step: the next step is stored into the other one
    /// while this one is read, one barrier a step instead of two.
    double: bool,
}

impl Shape {
    fn name(&self) -> String {
        let (rm, rn) = (self.tm / 16, self.tn / 16);
        format!(
            "{}x{} ({rm}x{rn}) tk{}{}{}{}",
            self.tm,
            self.tn,
            self.tk,
            if self.prefetch { " pf" } else { "" },
            if self.blocked { " blk" } else { "" },
            if self.double { " db" } else { "" }
        )
    }
}

/// The WGSL of one variant (entry point `gemm`): x is [m][k], w [n][k], out
/// [split][m][n]; split s sums values s·k_span .. (s+1)·k_span. Blocked variants take x
/// and w as `block` lays them out.
fn gemm_source(s: &Shape) -> String {
    let (tm, tn, tk) = (s.tm, s.tn, s.tk);
    let (rm4, rn4) = (tm / 64, tn / 64); // vec4s of a block's rows / columns
    let (vx, vw) = (tk * tm / 4, tk * tn / 4); // vec4s of each tile a step
    let copies = if s.double { 2 } else { 1 };
    let mut w = format!(
        "struct P {{ m: u32, n: u32, k: u32, k_span: u32 }}
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> w: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4<f32>>;
var<workgroup> xs: array<vec4<f32>, {xs}>;
var<workgroup> ws: array<vec4<f32>, {wsz}>;
@compute @workgroup_size(16, 16)
fn gemm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid3: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {{
    let n0 = wid.x * {tn}u;
    let m0 = wid.y * {tm}u;
    let kb = wid.z * p.k_span;
    let ke = min(p.k, kb + p.k_span);
    let tx = lid3.x;
    let ty = lid3.y;
",
        xs = vx * copies,
        wsz = vw * copies,
    );
    if s.blocked {
        // Steps a row holds: where each tile's steps start in the blocked operands.
        w += &format!("    let steps = p.k / {tk}u;\n");
    }
    for i in 0..rm4 * 4 {
        for j in 0..rn4 {
            w += &format!("    var acc{i}_{j} = vec4<f32>(0.0);\n");
        }
    }
    // Blocked: unit `u` of this invocation is one vec4 (b{u}); otherwise 4 rows × 4
    // values, held in b{u}_0..3 and transposed when stored.
    let (ux, uw) = if s.blocked { (vx, vw) } else { (tm * tk / 16, tn * tk / 16) };
    let per = (ux + uw).div_ceil(256);
    for u in 0..per {
        if s.blocked {
            w += &format!("    var b{u} = vec4<f32>(0.0);\n");
        } else {
            for r in 0..4 {
                w += &format!("    var b{u}_{r} = vec4<f32>(0.0);\n");
            }
        }
    }
    let load = |k0: &str| {
        let mut l = String::new();
        for u in 0..per {
            let (off, uxw, tm4, tn4) = (256 * u, ux + uw, tm / 4, tn / 4);
            l += &if s.blocked {
                format!(
                    "        {{
            let v = lid + {off}u;
            let step = {k0} / {tk}u;
            if (v < {ux}u) {{
                b{u} = x[(wid.y * steps + step) * {ux}u + v];
            }} else if (v < {uxw}u) {{
                b{u} = w[(wid.x * steps + step) * {uw}u + v - {ux}u];
            }}
        }}
"
                )
            } else {
                format!(
                    "        {{
            let v = lid + {off}u;
            if (v < {ux}u) {{
                let r = m0 + 4u * (v % {tm4}u);
                let e = ({k0} + 4u * (v / {tm4}u)) / 4u;
                b{u}_0 = x[(r * p.k) / 4u + e];
                b{u}_1 = x[((r + 1u) * p.k) / 4u + e];
                b{u}_2 = x[((r + 2u) * p.k) / 4u + e];
                b{u}_3 = x[((r + 3u) * p.k) / 4u + e];
            }} else if (v < {uxw}u) {{
                let t = v - {ux}u;
                let r = n0 + 4u * (t % {tn4}u);
                let e = ({k0} + 4u * (t / {tn4}u)) / 4u;
                b{u}_0 = w[(r * p.k) / 4u + e];
                b{u}_1 = w[((r + 1u) * p.k) / 4u + e];
                b{u}_2 = w[((r + 2u) * p.k) / 4u + e];
                b{u}_3 = w[((r + 3u) * p.k) / 4u + e];
            }}
        }}
"
                )
            };
        }
        l
    };
    // Stores into the tile copy at `buf` (an expression, 0 or 1).
    let store = |buf: &str| {
        let mut st = String::new();
        for u in 0..per {
            let (off, uxw, tm4, tn4) = (256 * u, ux + uw, tm / 4, tn / 4);
            st += &if s.blocked {
                format!(
                    "        {{
            let v = lid + {off}u;
            if (v < {ux}u) {{
                xs[({buf}) * {vx}u + v] = b{u};
            }} else if (v < {uxw}u) {{
                ws[({buf}) * {vw}u + v - {ux}u] = b{u};
            }}
        }}
"
                )
            } else {
                format!(
                    "        {{
            let v = lid + {off}u;
            let t0 = vec4<f32>(b{u}_0.x, b{u}_1.x, b{u}_2.x, b{u}_3.x);
            let t1 = vec4<f32>(b{u}_0.y, b{u}_1.y, b{u}_2.y, b{u}_3.y);
            let t2 = vec4<f32>(b{u}_0.z, b{u}_1.z, b{u}_2.z, b{u}_3.z);
            let t3 = vec4<f32>(b{u}_0.w, b{u}_1.w, b{u}_2.w, b{u}_3.w);
            if (v < {ux}u) {{
                let at = ({buf}) * {vx}u + 4u * (v / {tm4}u) * {tm4}u + v % {tm4}u;
                xs[at] = t0; xs[at + {tm4}u] = t1; xs[at + {tm8}u] = t2; xs[at + {tm12}u] = t3;
            }} else if (v < {uxw}u) {{
                let t = v - {ux}u;
                let at = ({buf}) * {vw}u + 4u * (t / {tn4}u) * {tn4}u + t % {tn4}u;
                ws[at] = t0; ws[at + {tn4}u] = t1; ws[at + {tn8}u] = t2; ws[at + {tn12}u] = t3;
            }}
        }}
",
                    tm8 = tm / 2,
                    tm12 = 3 * tm / 4,
                    tn8 = tn / 2,
                    tn12 = 3 * tn / 4,
                )
            };
        }
        st
    };
    // The products of the tile copy at `buf`.
    let compute = |buf: &str| {
        let mut c = format!(
            "        let bx = ({buf}) * {vx}u;\n        let bw = ({buf}) * {vw}u;\n        for (var kk = 0u; kk < {tk}u; kk++) {{\n"
        );
        for i in 0..rm4 {
            c += &format!("            let a{i} = xs[bx + kk * {}u + ty + {}u];\n", tm / 4, 16 * i);
        }
        for j in 0..rn4 {
            c += &format!("            let c{j} = ws[bw + kk * {}u + tx + {}u];\n", tn / 4, 16 * j);
        }
        for i in 0..rm4 {
            for (n, comp) in ["x", "y", "z", "w"].iter().enumerate() {
                for j in 0..rn4 {
                    c += &format!("            acc{}_{j} += a{i}.{comp} * c{j};\n", 4 * i + n);
                }
            }
        }
        c + "        }\n"
    };
    if s.double {
        w += &load("kb");
        w += &store("0u");
        w += "    workgroupBarrier();\n    var cur = 0u;\n";
        w += &format!("    for (var k0 = kb; k0 < ke; k0 += {tk}u) {{\n");
        w += &format!("        let more = k0 + {tk}u < ke;\n        if (more) {{\n");
        w += &load(&format!("(k0 + {tk}u)"));
        w += "        }\n";
        w += &compute("cur");
        w += "        if (more) {\n";
        w += &store("1u - cur");
        w += "        }\n        workgroupBarrier();\n        cur = 1u - cur;\n    }\n";
    } else if s.prefetch {
        w += &load("kb");
        w += &format!("    for (var k0 = kb; k0 < ke; k0 += {tk}u) {{\n");
        w += &store("0u");
        w += "        workgroupBarrier();\n";
        w += &format!("        if (k0 + {tk}u < ke) {{\n");
        w += &load(&format!("(k0 + {tk}u)"));
        w += "        }\n";
        w += &compute("0u");
        w += "        workgroupBarrier();\n    }\n";
    } else {
        w += &format!("    for (var k0 = kb; k0 < ke; k0 += {tk}u) {{\n");
        w += &load("k0");
        w += &store("0u");
        w += "        workgroupBarrier();\n";
        w += &compute("0u");
        w += "        workgroupBarrier();\n    }\n";
    }
    for i in 0..rm4 {
        for c in 0..4 {
            for j in 0..rn4 {
                w += &format!(
                    "    out[((wid.z * p.m + m0 + 4u * (ty + {ti}u) + {c}u) * p.n + n0 + 4u * (tx + {tj}u)) / 4u] = acc{a}_{j};\n",
                    ti = 16 * i,
                    tj = 16 * j,
                    a = 4 * i + c
                );
            }
        }
    }
    w += "}\n";
    w
}

/// `v` ([rows][k]) laid out for the blocked variants: tiles of `t` rows × `tk` values,
/// row tiles outermost, each tile as [tk][t] (value kk of row r at kk·t + r), which is
/// workgroup memory's order.
fn block(v: &[f32], rows: usize, k: usize, t: usize, tk: usize) -> Vec<f32> {
    let mut out = vec![0f32; rows * k];
    for r in 0..rows {
        for e in 0..k {
            out[((r / t) * (k / tk) + e / tk) * tk * t + (e % tk) * t + r % t] = v[r * k + e];
        }
    }
    out
}

/// Q4_K rows → f32, one invocation per 8 values (two 16-byte stores).
fn deq_q4k_f32() -> String {
    deq_q4k_source("vec4<f32>", "wq[2u * i] = lo;\n    wq[2u * i + 1u] = hi;")
}

/// Spans a `tiles`-tile GEMM's dot products split into: the engine's rule for the
/// shader-core kernels (tuning::SPLIT_K_SHADER: enough for `target` workgroups, spans
/// of at least 256 values, at most 8), spans a multiple of `tk`.
fn splits(tiles: usize, k: usize, target: usize) -> usize {
    if tiles >= target {
        return 1;
    }
    target.div_ceil(tiles).min(k / 256).clamp(1, 8)
}

fn main() {
    let adapter = vulkan_adapter();
    let (device, queue) = pollster::block_on(
        adapter.request_device(&wgpu::DeviceDescriptor { required_limits: adapter.limits(), ..Default::default() }),
    )
    .expect("device");
    device.on_uncaptured_error(std::sync::Arc::new(|e: wgpu::Error| panic!("{e:?}")));

    let mut variants = Vec::new();
    for (tm, tn, tk) in [(64, 64, 32), (64, 64, 16), (128, 64, 16), (64, 128, 16), (128, 128, 8), (128, 128, 16)] {
        for prefetch in [false, true] {
            variants.push(Shape { tm, tn, tk, prefetch, blocked: false, double: false });
        }
    }
    // The staging variants of the 128 × 128 tile (12 on): one barrier a step, blocked
    // operands, both; and 16 values a step (32 KiB of workgroup memory when doubled).
    for (tk, blocked, double) in
        [(8, false, true), (8, true, false), (8, true, true), (16, true, false), (16, true, true), (16, false, true)]
    {
        variants.push(Shape { tm: 128, tn: 128, tk, prefetch: true, blocked, double });
    }
    // VARIANT=i,j,..: only those variants; REPS=1: one timed dispatch (a check on a slow
    // adapter); CHECKED=1: modules with wgpu's bounds checks, as a browser compiles them.
    let only: Option<Vec<usize>> = std::env::var("VARIANT")
        .ok()
        .map(|v| v.split(',').map(|i| i.trim().parse().expect("VARIANT: indices")).collect());
    if std::env::var_os("PRINT").is_some() {
        let i = only.as_ref().and_then(|o| o.first().copied()).expect("PRINT needs VARIANT");
        println!("{}", gemm_source(&variants[i]));
        return;
    }
    let checked = std::env::var_os("CHECKED").is_some();
    let reps: usize = std::env::var("REPS").map_or(20, |v| v.parse().expect("REPS: a count"));

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
        let wq = storage("wq", &vec![0u8; rows * k * 4], wgpu::BufferUsages::COPY_SRC);
        let params = uniform([0, rows as u32, k as u32, 0]);
        let module = trusted(&device, &deq_q4k_f32(), "deq");
        let pipe = pipeline(&device, &module, "deq_q4k");
        let bg = group(&device, &pipe.get_bind_group_layout(0), &[(0, &params), (1, &w), (2, &wq)]);
        let invocations = rows * k / 8;
        let groups = (invocations.div_ceil(256) as u32).min(65535);
        let gy = (invocations.div_ceil(256) as u32).div_ceil(groups);
        let t = time(&device, &queue, &pipe, &bg, (groups, gy, 1), 20);
        let got = read_back(&device, &queue, &wq, rows * k * 4);
        let got: &[f32] = bytemuck::cast_slice(&got);
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
                err = err.max((got[r * k + c] - v).abs() / v.abs().max(1e-3));
            }
        }
        let bytes = (rows * k / 256 * Q4K_BYTES + rows * k * 4) as f64;
        println!("deq_q4k_f32 8960x1536: {t:7.1} µs ({:.0} GB/s moved), max relative error {err:.1e}", bytes / t / 1e3);
        assert!(err < 1e-6, "dequantization disagrees with kindling_gguf");
    }

    for (label, n, k) in SHAPES {
        let xs: Vec<f32> = (0..M * k).map(|_| (rng.next_u64() % 2001) as f32 / 1000.0 - 1.0).collect();
        let wv: Vec<f32> = (0..n * k).map(|_| (rng.next_u64() % 2001) as f32 / 1000.0 - 1.0).collect();
        let x = storage("x", bytemuck::cast_slice(&xs), wgpu::BufferUsages::empty());
        let w = storage("w", bytemuck::cast_slice(&wv), wgpu::BufferUsages::empty());
        // Room for 8 spans' sums, or as many as a 128 MiB binding holds.
        let max_splits = (128 << 20) / (M * n * 4);
        let out = storage("out", &vec![0u8; max_splits.min(8) * M * n * 4], wgpu::BufferUsages::COPY_SRC);
        let flops = 2.0 * (M * n * k) as f64;
        // The blocked layouts, by (tile rows of x, of w, values a step).
        let mut layouts: Vec<((usize, usize, usize), wgpu::Buffer, wgpu::Buffer)> = Vec::new();
        for (vi, s) in variants.iter().enumerate() {
            if only.as_ref().is_some_and(|o| !o.contains(&vi)) {
                continue;
            }
            if !n.is_multiple_of(s.tn) || !M.is_multiple_of(s.tm) {
                println!("{label:<16} {:<28} skipped: tile does not divide the shape", s.name());
                continue;
            }
            let module = if checked {
                device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(&s.name()),
                    source: wgpu::ShaderSource::Wgsl(gemm_source(s).into()),
                })
            } else {
                trusted(&device, &gemm_source(s), &s.name())
            };
            let pipe = pipeline(&device, &module, "gemm");
            let key = (s.tm, s.tn, s.tk);
            if s.blocked && !layouts.iter().any(|l| l.0 == key) {
                let bx =
                    storage("xb", bytemuck::cast_slice(&block(&xs, M, k, s.tm, s.tk)), wgpu::BufferUsages::empty());
                let bw =
                    storage("wb", bytemuck::cast_slice(&block(&wv, n, k, s.tn, s.tk)), wgpu::BufferUsages::empty());
                layouts.push((key, bx, bw));
            }
            let (xb, wb) = match layouts.iter().find(|l| s.blocked && l.0 == key) {
                Some((_, bx, bw)) => (bx, bw),
                None => (&x, &w),
            };
            let tiles = (n / s.tn) * (M / s.tm);
            let mut seen = Vec::new();
            for target in [0, 264, 1024] {
                let sp = splits(tiles, k, target);
                if seen.contains(&sp) {
                    continue;
                }
                seen.push(sp);
                let span = k.div_ceil(sp).next_multiple_of(64);
                let sp = k.div_ceil(span);
                if sp > max_splits {
                    continue;
                }
                let params = uniform([M as u32, n as u32, k as u32, span as u32]);
                let bg = group(&device, &pipe.get_bind_group_layout(0), &[(0, &params), (1, xb), (2, wb), (3, &out)]);
                clear(&device, &queue, &out);
                let t = time(&device, &queue, &pipe, &bg, ((n / s.tn) as u32, (M / s.tm) as u32, sp as u32), reps);
                let got: Vec<f32> = bytemuck::cast_slice(&read_back(&device, &queue, &out, sp * M * n * 4)).to_vec();
                let mut err = 0f64;
                for i in 0..256 {
                    let (r, c) = ((i * 7919) % M, (i * 104_729) % n);
                    let want: f64 = (0..k).map(|e| xs[r * k + e] as f64 * wv[c * k + e] as f64).sum();
                    let have: f64 = (0..sp).map(|p| got[(p * M + r) * n + c] as f64).sum();
                    err = err.max((have - want).abs() / want.abs().max(1.0));
                }
                println!(
                    "{label:<16} {:<28} s{sp} ({:>4} wg) {t:8.1} µs  {:6.1} TFLOP/s  rel err {err:.1e}",
                    s.name(),
                    tiles * sp,
                    flops / t / 1e6
                );
                assert!(err < 1e-4, "{label} {}: wrong sums", s.name());
            }
        }
    }
}
