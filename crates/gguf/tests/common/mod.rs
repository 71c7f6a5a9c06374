//! Helpers shared by the integration tests: the reference script's output format.
#![allow(dead_code)]

use kindling_gguf::GgmlType;

/// One record of `tests/scripts/dequant_ref.py`: raw bytes of some type and PyPI gguf's
/// dequantization of them.
pub struct Record {
    pub name: String,
    pub ty: GgmlType,
    pub raw: Vec<u8>,
    pub values: Vec<f32>,
}

struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> &'a [u8] {
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        s
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take(4).try_into().unwrap())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take(8).try_into().unwrap())
    }
}

/// Parses the script's binary output; returns the records and whatever text follows the
/// end marker (the header description in `--model` mode).
pub fn parse_records(out: &[u8]) -> (Vec<Record>, String) {
    assert_eq!(&out[..4], b"KDQ1", "reference output must start with KDQ1");
    let mut c = Cursor { b: out, at: 4 };
    let mut records = Vec::new();
    loop {
        let n = c.u32();
        if n == u32::MAX {
            break;
        }
        let name = String::from_utf8(c.take(n as usize).to_vec()).unwrap();
        let id = c.u32();
        let ty = GgmlType::from_id(id).unwrap_or_else(|e| panic!("record {name}: type id {id} ({e})"));
        let nb = c.u64() as usize;
        let raw = c.take(nb).to_vec();
        let nv = c.u64() as usize;
        let values = c.take(nv * 4).chunks_exact(4).map(|x| f32::from_le_bytes(x.try_into().unwrap())).collect();
        records.push(Record { name, ty, raw, values });
    }
    let rest = String::from_utf8(out[c.at..].to_vec()).unwrap();
    (records, rest)
}

/// Compares our values with the reference bit for bit; returns a description of the
/// first mismatch. (+0.0 and -0.0 differ here: the sign must match too.)
pub fn first_mismatch(ours: &[f32], reference: &[f32]) -> Option<String> {
    if ours.len() != reference.len() {
        return Some(format!("length {} vs reference {}", ours.len(), reference.len()));
    }
    let bad = ours.iter().zip(reference).position(|(a, b)| a.to_bits() != b.to_bits())?;
    let n = ours.iter().zip(reference).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
    Some(format!(
        "{n} of {} values differ; first at {bad}: ours {:e} ({:#010x}), reference {:e} ({:#010x})",
        ours.len(),
        ours[bad],
        ours[bad].to_bits(),
        reference[bad],
        reference[bad].to_bits()
    ))
}

/// zlib's CRC-32 (the reference script checksums arrays with `zlib.crc32`).
pub fn crc32(data: &[u8]) -> u32 {
    let mut table = [0u32; 256];
    for (i, t) in table.iter_mut().enumerate() {
        let mut c = i as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
        }
        *t = c;
    }
    let mut crc = !0u32;
    for &b in data {
        crc = table[((crc ^ b as u32) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}
