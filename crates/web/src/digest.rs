//! `Sha256`: an incremental SHA-256 for the JS download path (www/download.js), which
//! hashes a model while it streams (the network, or the persistent cache) to check
//! `integrity` and to detect a corrupted cache entry. WebCrypto's `digest()` takes the
//! whole input at once, which a streamed model never is.

use sha2::Digest;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
pub struct Sha256(sha2::Sha256);

#[wasm_bindgen]
impl Sha256 {
    #[wasm_bindgen(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Sha256 {
        Sha256(sha2::Sha256::new())
    }

    /// Adds the next bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The 32-byte digest of everything added; the hasher starts over afterwards.
    pub fn digest(&mut self) -> Vec<u8> {
        self.0.finalize_reset().to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::Sha256;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn known_digests_in_pieces() {
        let mut h = Sha256::new();
        assert_eq!(hex(&h.digest()), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        for piece in [&b"a"[..], b"b", b"", b"c"] {
            h.update(piece);
        }
        assert_eq!(hex(&h.digest()), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
