// Probe kernels for the decode gate/up matvec over Q4_K (crates/gpu/examples/gated_probe.rs):
// out[r] = silu(gate[r] · xn) * (up[r] · xn), xn = rmsnorm(x) * nw, one activation row.
// The weights are bound as vec4<u32>: a Q4_K block is 9 vec4s (header: d|dmin and the
// 12 scale bytes; then 8 units of 16 quant bytes). Unit j of a block holds 32 values:
// its low nibbles are 16 values of group 2(j/2), its high nibbles the same 16 places of
// group 2(j/2)+1.

struct P {
    k: u32,
    rows: u32,
    row_vec4: u32,
    units: u32,
    eps: f32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> nw: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> wg: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read> wu: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;

const LANES: u32 = 16u;
const ROWS: u32 = 16u;
const UPL: u32 = 3u;

// f32 path: xn staged as [8][units] vec4s (word i of a unit's low run, then of its high
// run), so the lanes of a row read consecutive vec4s.
var<workgroup> xs: array<vec4<f32>, 512>;
// i8 path: each run of 16 values as 16 int8s, [2][units]; per run (scale, sum).
var<workgroup> xq: array<vec4<u32>, 128>;
var<workgroup> xd: array<vec2<f32>, 128>;
var<workgroup> red: array<f32, 256>;

fn scale_min(h: vec4<u32>, g: u32) -> vec2<f32> {
    let j = g & 3u;
    let lo = (h.y >> (8u * j)) & 0xffu;
    let mid = (h.z >> (8u * j)) & 0xffu;
    let hi = (h.w >> (8u * j)) & 0xffu;
    let first = vec2<u32>(lo & 63u, mid & 63u);
    let last = vec2<u32>((hi & 15u) | ((lo >> 6u) << 4u), (hi >> 4u) | ((mid >> 6u) << 4u));
    let s = select(last, first, g < 4u);
    return bitcast<vec2<f32>>(s | vec2<u32>(0x4B000000u)) - vec2<f32>(8388608.0);
}

fn u2f(q: vec4<u32>) -> vec4<f32> {
    return bitcast<vec4<f32>>(q | vec4<u32>(0x4B000000u)) - vec4<f32>(8388608.0);
}

fn nib_lo(w: u32) -> vec4<f32> {
    return u2f(vec4<u32>(w, w >> 8u, w >> 16u, w >> 24u) & vec4<u32>(0xfu));
}

fn nib_hi(w: u32) -> vec4<f32> {
    return u2f(vec4<u32>(w >> 4u, w >> 12u, w >> 20u, w >> 28u) & vec4<u32>(0xfu));
}

// Sum of squares of x, reduced over the workgroup (every invocation gets it).
fn wg_total(lid: u32, ss: f32) -> f32 {
    let s = subgroupAdd(ss);
    if (lid % SG == 0u) {
        red[lid / SG] = s;
    }
    workgroupBarrier();
    var t = 0.0;
    for (var j = 0u; j < 256u / SG; j++) {
        t += red[j];
    }
    workgroupBarrier();
    return t;
}

fn stage_f32(lid: u32) -> f32 {
    var ss = 0.0;
    for (var v = lid; v < p.k / 4u; v += 256u) {
        let xv = x[v];
        ss += dot(xv, xv);
        let blk = v >> 6u;
        let rr = v & 63u;
        let c = rr >> 4u;
        let r2 = rr & 15u;
        let hi = r2 >> 3u;
        let h = (r2 >> 2u) & 1u;
        let i = r2 & 3u;
        xs[(i + 4u * hi) * p.units + 8u * blk + 2u * c + h] = xv * nw[v];
    }
    return ss;
}

// (gate, up) of unit u from both weights' header and quant vec4s, f32 products.
fn pair_f32(hg: vec4<u32>, qg: vec4<u32>, hu: vec4<u32>, qu: vec4<u32>, u: u32) -> vec2<f32> {
    var gl = vec4<f32>(0.0);
    var gh = vec4<f32>(0.0);
    var ul = vec4<f32>(0.0);
    var uh = vec4<f32>(0.0);
    var xl = vec4<f32>(0.0);
    var xh = vec4<f32>(0.0);
    for (var i = 0u; i < 4u; i++) {
        let a = xs[i * p.units + u];
        let b = xs[(i + 4u) * p.units + u];
        gl += nib_lo(qg[i]) * a;
        gh += nib_hi(qg[i]) * b;
        ul += nib_lo(qu[i]) * a;
        uh += nib_hi(qu[i]) * b;
        xl += a;
        xh += b;
    }
    let one = vec4<f32>(1.0);
    let sx = vec2<f32>(dot(xl, one), dot(xh, one));
    let g = 2u * ((u & 7u) >> 1u);
    return vec2<f32>(unit_sum(hg, g, vec2<f32>(dot(gl, one), dot(gh, one)), sx),
                     unit_sum(hu, g, vec2<f32>(dot(ul, one), dot(uh, one)), sx));
}

// d·(s0·qx.x + s1·qx.y) − dmin·(m0·sx.x + m1·sx.y) for groups g, g + 1.
fn unit_sum(h: vec4<u32>, g: u32, qx: vec2<f32>, sx: vec2<f32>) -> f32 {
    let dm = unpack2x16float(h.x);
    let s0 = scale_min(h, g);
    let s1 = scale_min(h, g + 1u);
    return dm.x * (s0.x * qx.x + s1.x * qx.y) - dm.y * (s0.y * sx.x + s1.y * sx.y);
}

fn finish(lid: u32, row: u32, a0: f32, c0: f32, scale: f32) {
    var a = a0;
    var c = c0;
    for (var m = 1u; m < min(SG, LANES); m <<= 1u) {
        a += subgroupShuffleXor(a, m);
        c += subgroupShuffleXor(c, m);
    }
    if (SG < LANES) {
        // Subgroups smaller than a row (a software adapter): their sums through memory.
        red[lid] = a;
        workgroupBarrier();
        var t = 0.0;
        for (var j = 0u; j < LANES; j += SG) {
            t += red[lid + j];
        }
        workgroupBarrier();
        red[lid] = c;
        workgroupBarrier();
        var t2 = 0.0;
        for (var j = 0u; j < LANES; j += SG) {
            t2 += red[lid + j];
        }
        a = t;
        c = t2;
    }
    if (lid % LANES == 0u && row < p.rows) {
        let g = a * scale;
        out[row] = g / (1.0 + exp(-g)) * (c * scale);
    }
}

// Loads first (before the norm's staging and barrier), f32 products.
@compute @workgroup_size(256)
fn wide_f32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let lane = lid % LANES;
    let row = wid.x * ROWS + lid / LANES;
    let base = min(row, p.rows - 1u) * p.row_vec4;
    var hg: array<vec4<u32>, UPL>;
    var qg: array<vec4<u32>, UPL>;
    var hu: array<vec4<u32>, UPL>;
    var qu: array<vec4<u32>, UPL>;
    for (var t = 0u; t < UPL; t++) {
        let u = lane + t * LANES;
        let at = base + (u >> 3u) * 9u;
        hg[t] = wg[at];
        qg[t] = wg[at + 1u + (u & 7u)];
        hu[t] = wu[at];
        qu[t] = wu[at + 1u + (u & 7u)];
    }
    let ss = stage_f32(lid);
    let scale = 1.0 / sqrt(wg_total(lid, ss) / f32(p.k) + p.eps);
    var a = 0.0;
    var c = 0.0;
    for (var t = 0u; t < UPL; t++) {
        let r = pair_f32(hg[t], qg[t], hu[t], qu[t], lane + t * LANES);
        a += r.x;
        c += r.y;
    }
    finish(lid, row, a, c, scale);
}

// The same with each unit's loads after the staging, one unit a step.
@compute @workgroup_size(256)
fn wide_f32_late(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let lane = lid % LANES;
    let row = wid.x * ROWS + lid / LANES;
    let base = min(row, p.rows - 1u) * p.row_vec4;
    let ss = stage_f32(lid);
    let scale = 1.0 / sqrt(wg_total(lid, ss) / f32(p.k) + p.eps);
    var a = 0.0;
    var c = 0.0;
    for (var u = lane; u < p.units; u += LANES) {
        let at = base + (u >> 3u) * 9u;
        let r = pair_f32(wg[at], wg[at + 1u + (u & 7u)], wu[at], wu[at + 1u + (u & 7u)], u);
        a += r.x;
        c += r.y;
    }
    finish(lid, row, a, c, scale);
}

// i8 path: run rr (0..2·units) of 16 values quantized to int8 by the first 2·units
// invocations.
fn stage_i8(lid: u32) -> f32 {
    var ss = 0.0;
    if (lid < 2u * p.units) {
        let hi = lid / p.units;
        let u = lid % p.units;
        let j = u & 7u;
        let v0 = (256u * (u >> 3u) + 64u * (j >> 1u) + 32u * hi + 16u * (j & 1u)) / 4u;
        var vs: array<vec4<f32>, 4>;
        var amax = 0.0;
        var sum = 0.0;
        for (var i = 0u; i < 4u; i++) {
            let xv = x[v0 + i];
            ss += dot(xv, xv);
            let v = xv * nw[v0 + i];
            vs[i] = v;
            let av = abs(v);
            amax = max(amax, max(max(av.x, av.y), max(av.z, av.w)));
            sum += dot(v, vec4<f32>(1.0));
        }
        let d = amax / 127.0;
        let inv = select(0.0, 1.0 / d, d > 0.0);
        var q: vec4<u32>;
        for (var i = 0u; i < 4u; i++) {
            q[i] = pack4xI8(vec4<i32>(round(vs[i] * inv)));
        }
        xq[lid] = q;
        xd[lid] = vec2<f32>(d, sum);
    }
    return ss;
}

fn unit_i8(h: vec4<u32>, q: vec4<u32>, u: u32, lo: vec4<u32>, hi: vec4<u32>, dl: vec2<f32>, dh: vec2<f32>) -> f32 {
    var il = 0;
    var ih = 0;
    for (var i = 0u; i < 4u; i++) {
        il += dot4I8Packed(q[i] & 0x0f0f0f0fu, lo[i]);
        ih += dot4I8Packed((q[i] >> 4u) & 0x0f0f0f0fu, hi[i]);
    }
    let g = 2u * ((u & 7u) >> 1u);
    return unit_sum(h, g, vec2<f32>(dl.x * f32(il), dh.x * f32(ih)), vec2<f32>(dl.y, dh.y));
}

// Loads first, int8 dot products against the quantized input.
@compute @workgroup_size(256)
fn wide_i8(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let lane = lid % LANES;
    let row = wid.x * ROWS + lid / LANES;
    let base = min(row, p.rows - 1u) * p.row_vec4;
    var hg: array<vec4<u32>, UPL>;
    var qg: array<vec4<u32>, UPL>;
    var hu: array<vec4<u32>, UPL>;
    var qu: array<vec4<u32>, UPL>;
    for (var t = 0u; t < UPL; t++) {
        let u = lane + t * LANES;
        let at = base + (u >> 3u) * 9u;
        hg[t] = wg[at];
        qg[t] = wg[at + 1u + (u & 7u)];
        hu[t] = wu[at];
        qu[t] = wu[at + 1u + (u & 7u)];
    }
    let ss = stage_i8(lid);
    let scale = 1.0 / sqrt(wg_total(lid, ss) / f32(p.k) + p.eps);
    var a = 0.0;
    var c = 0.0;
    for (var t = 0u; t < UPL; t++) {
        let u = lane + t * LANES;
        let lo = xq[u];
        let hi = xq[p.units + u];
        let dl = xd[u];
        let dh = xd[p.units + u];
        a += unit_i8(hg[t], qg[t], u, lo, hi, dl, dh);
        c += unit_i8(hu[t], qu[t], u, lo, hi, dl, dh);
    }
    finish(lid, row, a, c, scale);
}

// Bare cost: the same grid and bindings, no work.
@compute @workgroup_size(256)
fn noop(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    if (p.k == 0xffffffffu) {
        out[lid] = x[0].x + nw[0].x + f32(wg[0].x + wu[0].x);
    }
}

// i16 path: each run of 16 values quantized to 16 bits (scale amax / 32639) and split
// into two signed 8-bit digits, x16 = 256·hi + lo; the dot products take both digits
// through dot4I8Packed, so the products are exact integers and the input keeps ~15 bits.
var<workgroup> xq_hi: array<vec4<u32>, 128>;
var<workgroup> xq_lo: array<vec4<u32>, 128>;

fn stage_i16(lid: u32) -> f32 {
    var ss = 0.0;
    if (lid < 2u * p.units) {
        let hi = lid / p.units;
        let u = lid % p.units;
        let j = u & 7u;
        let v0 = (256u * (u >> 3u) + 64u * (j >> 1u) + 32u * hi + 16u * (j & 1u)) / 4u;
        var vs: array<vec4<f32>, 4>;
        var amax = 0.0;
        var sum = 0.0;
        for (var i = 0u; i < 4u; i++) {
            let xv = x[v0 + i];
            ss += dot(xv, xv);
            let v = xv * nw[v0 + i];
            vs[i] = v;
            let av = abs(v);
            amax = max(amax, max(max(av.x, av.y), max(av.z, av.w)));
            sum += dot(v, vec4<f32>(1.0));
        }
        let d = amax / 32639.0;
        let inv = select(0.0, 1.0 / d, d > 0.0);
        var qh: vec4<u32>;
        var ql: vec4<u32>;
        for (var i = 0u; i < 4u; i++) {
            let q = vec4<i32>(round(vs[i] * inv));
            let h = (q + vec4<i32>(128)) >> vec4<u32>(8u);
            qh[i] = pack4xI8(h);
            ql[i] = pack4xI8(q - h * 256);
        }
        xq_hi[lid] = qh;
        xq_lo[lid] = ql;
        xd[lid] = vec2<f32>(d, sum);
    }
    return ss;
}

fn unit_i16(h: vec4<u32>, q: vec4<u32>, u: u32, lo_h: vec4<u32>, lo_l: vec4<u32>, hi_h: vec4<u32>, hi_l: vec4<u32>,
            dl: vec2<f32>, dh: vec2<f32>) -> f32 {
    var il = 0;
    var ih = 0;
    for (var i = 0u; i < 4u; i++) {
        let a = q[i] & 0x0f0f0f0fu;
        let b = (q[i] >> 4u) & 0x0f0f0f0fu;
        il += 256 * dot4I8Packed(a, lo_h[i]) + dot4I8Packed(a, lo_l[i]);
        ih += 256 * dot4I8Packed(b, hi_h[i]) + dot4I8Packed(b, hi_l[i]);
    }
    let g = 2u * ((u & 7u) >> 1u);
    return unit_sum(h, g, vec2<f32>(dl.x * f32(il), dh.x * f32(ih)), vec2<f32>(dl.y, dh.y));
}

@compute @workgroup_size(256)
fn wide_i16(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let lane = lid % LANES;
    let row = wid.x * ROWS + lid / LANES;
    let base = min(row, p.rows - 1u) * p.row_vec4;
    var hg: array<vec4<u32>, UPL>;
    var qg: array<vec4<u32>, UPL>;
    var hu: array<vec4<u32>, UPL>;
    var qu: array<vec4<u32>, UPL>;
    for (var t = 0u; t < UPL; t++) {
        let u = lane + t * LANES;
        let at = base + (u >> 3u) * 9u;
        hg[t] = wg[at];
        qg[t] = wg[at + 1u + (u & 7u)];
        hu[t] = wu[at];
        qu[t] = wu[at + 1u + (u & 7u)];
    }
    let ss = stage_i16(lid);
    let scale = 1.0 / sqrt(wg_total(lid, ss) / f32(p.k) + p.eps);
    var a = 0.0;
    var c = 0.0;
    for (var t = 0u; t < UPL; t++) {
        let u = lane + t * LANES;
        let lh = xq_hi[u];
        let ll = xq_lo[u];
        let hh = xq_hi[p.units + u];
        let hl = xq_lo[p.units + u];
        let dl = xd[u];
        let dh = xd[p.units + u];
        a += unit_i16(hg[t], qg[t], u, lh, ll, hh, hl, dl, dh);
        c += unit_i16(hu[t], qu[t], u, lh, ll, hh, hl, dl, dh);
    }
    finish(lid, row, a, c, scale);
}
