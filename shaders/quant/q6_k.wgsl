// Q6_K, 256 values, repacked from 210 to 212 bytes (53 words; 2 bytes padding at the end):
//   words 0..31   ql[128]: value 128h + 32s + l takes the nibble (s >> 1) of ql[64h + 32(s & 1) + l]
//   words 32..47  qh[64]: its high 2 bits are (qh[32h + l] >> 2s) & 3
//   words 48..51  scales[16] i8, one per 16 values
//   word 52       d (f16, low half)
// y = (d * scale_g) * (q - 32),  g = value / 16
const BLOCK_ELEMS: u32 = 256u;
const BLOCK_WORDS: u32 = 53u;

fn dq4(b: u32, i: u32) -> vec4<f32> {
    let e = 4u * i;
    let h = e >> 7u;
    let s = (e >> 5u) & 3u;
    let l = e & 31u;
    let lo = bytes4(w[b + ((64u * h + 32u * (s & 1u) + l) >> 2u)] >> (4u * (s >> 1u))) & vec4<u32>(0xfu);
    let hi = bytes4(w[b + 32u + ((32u * h + l) >> 2u)] >> (2u * s)) & vec4<u32>(3u);
    let q = vec4<i32>(lo | (hi << vec4<u32>(4u))) - vec4<i32>(32);
    let g = e >> 4u;
    let sc = bitcast<i32>(byte_of(w[b + 48u + (g >> 2u)], g & 3u) << 24u) >> 24u;
    let d = unpack2x16float(w[b + 52u]).x;
    return (d * f32(sc)) * vec4<f32>(q);
}

// Values 8i..8i+7 (within one 16-value scale group: one scale for all eight).
fn dq8(b: u32, i: u32) -> mat2x4<f32> {
    let e = 8u * i;
    let h = e >> 7u;
    let s = (e >> 5u) & 3u;
    let l = e & 31u;
    let lo = b + ((64u * h + 32u * (s & 1u) + l) >> 2u);
    let hi = b + 32u + ((32u * h + l) >> 2u);
    let g = e >> 4u;
    let sc = bitcast<i32>(byte_of(w[b + 48u + (g >> 2u)], g & 3u) << 24u) >> 24u;
    let d = unpack2x16float(w[b + 52u]).x * f32(sc);
    return mat2x4<f32>(d * q6x4(w[lo], w[hi], s), d * q6x4(w[lo + 1u], w[hi + 1u], s));
}

// Four values minus 32 from a ql word (nibble s / 2) and a qh word (bit pair s), as
// f32 (u2f with the 32 taken off in the same subtraction).
fn q6x4(lo: u32, hi: u32, s: u32) -> vec4<f32> {
    let q = (bytes4(lo >> (4u * (s >> 1u))) & vec4<u32>(0xfu)) | ((bytes4(hi >> (2u * s)) & vec4<u32>(3u)) << vec4<u32>(4u));
    return bitcast<vec4<f32>>(q | vec4<u32>(0x4B000000u)) - vec4<f32>(8388640.0);
}
