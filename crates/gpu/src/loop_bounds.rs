//! The browser's form of a kernel's loops. Chrome's WGSL compiler (Tint) gives every loop
//! it cannot see bounded a 64-bit iteration counter of its own, tested and decremented on
//! each iteration, so that a shader cannot hang the GPU. It sees a loop bounded only when
//! it counts up by one to a constant (`for (var i = 0u; i < 4u; i++)`), so every loop
//! stepping by a stride (`u += p.lanes`, `s >>= 1u`) or counting to a run-time value
//! (`g < hd4`) pays it. Rewritten here, decode's loops take 5.2% off a Qwen2.5-1.5B token's
//! GPU time through Dawn on an H200, 12.6% off its gate/up matvec
//! (bench/results/loop-bounds-h200.md). Natively wgpu adds no counters (its loop bounding
//! is off, `GpuOptions::checked_shaders`), and the same loops rewritten by hand cost Gemma
//! 3's decode 3% there, so only the browser build takes the rewritten form.
//!
//! Which loops: those marked `// bounded in browsers` on their `for` line (MARK), the
//! hot ones where the rewrite measured faster through Dawn. Rewriting every strided loop
//! measured slower in places (the f32 GEMM's step loop +1.2%: Tint's and the driver's
//! code for a register-bound kernel moves either way), and a loop with constant bounds
//! is better written to count by one (`for (var j = 1u; j < WG / 16u; j++)`), which Tint
//! leaves alone and the driver can unroll.
//!
//! `bound_loops` rewrites each marked `for (init; cond; step) { body }` as
//! `{ init; for (var bounded_loop_N = 0u; bounded_loop_N < BOUNDED_LOOP_CAP;
//! bounded_loop_N++) { if (!(cond)) { break; } { body } step; } }`: the same
//! iterations, ended by the same condition, inside a loop Tint sees bounded. The cap is
//! u32's largest value; no kernel loop comes near it, since every count is a tensor size
//! the host validated. The kernels never `continue` (which would skip the step here):
//! `bound_loops` refuses a module that does.

/// The name of the bound the rewritten loops count to (declared once at the module's end).
const CAP: &str = "BOUNDED_LOOP_CAP";

/// The comment that marks a loop for the rewrite, on its `for` line.
const MARK: &str = "// bounded in browsers";

/// `src` (a whole assembled module) with every loop marked by MARK rewritten as the
/// module's docs say, comments dropped. Panics on a `continue` (a kernel source bug,
/// caught by the kernel tests) or a marked loop it cannot read.
pub fn bound_loops(src: &str) -> String {
    let lines = src.lines().map(|l| {
        let code = l.split("//").next().unwrap_or("");
        if l.contains(MARK) {
            assert!(code.contains("for ("), "bound_loops: {MARK} on a line without a loop: {l}");
            code.replacen("for (", "for_bounded (", 1)
        } else {
            code.to_string()
        }
    });
    let mut s = lines.collect::<Vec<_>>().join("\n");
    assert!(!has_word(&s, "continue"), "bound_loops: a kernel uses `continue`, which the rewritten loops would break");
    let mut n = 0;
    while let Some(at) = s.find("for_bounded (") {
        let (end, replacement) =
            rewrite_at(&s, at, n).expect("bound_loops: a marked loop is not `for (init; cond; step) { .. }`");
        s.replace_range(at..end, &replacement);
        n += 1;
    }
    if n > 0 {
        s.push_str(&format!("\nconst {CAP}: u32 = 0xffffffffu;\n"));
    }
    s
}

/// The rewritten form of the `for` statement at `at` (its end, the replacement).
fn rewrite_at(s: &str, at: usize, n: usize) -> Option<(usize, String)> {
    let open = at + s[at..].find('(')?;
    let close = matching(s, open, b'(', b')')?;
    let parts: Vec<&str> = s[open + 1..close].split(';').map(str::trim).collect();
    let [init, cond, step] = parts[..] else { return None };
    let brace = close + 1 + s[close + 1..].find(|c: char| !c.is_whitespace())?;
    if s.as_bytes()[brace] != b'{' {
        return None;
    }
    let end = matching(s, brace, b'{', b'}')?;
    let body = &s[brace + 1..end];
    let v = format!("bounded_loop_{n}");
    let test = if cond.is_empty() { String::new() } else { format!("if (!({cond})) {{ break; }} ") };
    let init = if init.is_empty() { String::new() } else { format!("{init}; ") };
    let out = format!("{{ {init}for (var {v} = 0u; {v} < {CAP}; {v}++) {{ {test}{{{body}}} {step}; }} }}");
    Some((end + 1, out))
}

/// The index of the bracket closing the one at `open`.
fn matching(s: &str, open: usize, l: u8, r: u8) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &b) in s.as_bytes().iter().enumerate().skip(open) {
        if b == l {
            depth += 1;
        } else if b == r {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

fn has_word(s: &str, w: &str) -> bool {
    s.match_indices(w).any(|(i, _)| {
        let before = s[..i].chars().next_back();
        let after = s[i + w.len()..].chars().next();
        let ident = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        !ident(before) && !ident(after)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn squash(s: &str) -> String {
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn marked_loops_become_bounded_and_the_others_stay() {
        let src = "fn f() {\n  for (var u = lane; u < p.k / 32u; u += p.lanes) { // bounded in browsers: units\n    a += g(u);\n  }\n  \
                   for (var i = 0u; i < n; i += 2u) { b += i; } // a comment\n  for (; i + 3u < n; i += 4u) { // bounded in browsers\n c += h(i); }\n}";
        let out = squash(&bound_loops(src));
        assert_eq!(
            out,
            squash(
                "fn f() { { var u = lane; for (var bounded_loop_0 = 0u; bounded_loop_0 < BOUNDED_LOOP_CAP; \
                 bounded_loop_0++) { if (!(u < p.k / 32u)) { break; } { a += g(u); } u += p.lanes; } } \
                 for (var i = 0u; i < n; i += 2u) { b += i; } \
                 { for (var bounded_loop_1 = 0u; bounded_loop_1 < BOUNDED_LOOP_CAP; bounded_loop_1++) \
                 { if (!(i + 3u < n)) { break; } { c += h(i); } i += 4u; } } } \
                 const BOUNDED_LOOP_CAP: u32 = 0xffffffffu;"
            )
        );
    }

    #[test]
    fn nested_marked_loops_and_a_loop_without_a_condition() {
        let src = "for (var s = W / 2u; s > 0u; s >>= 1u) { // bounded in browsers\n for (var j = lid; j < n; j += W) { // bounded in browsers\n x(j, s); } }\n\
                   for (var k0 = b; ; k0 += 16u) { // bounded in browsers\n if (k0 >= e) { break; } }";
        let out = squash(&bound_loops(src));
        assert!(out.contains("if (!(s > 0u)) { break; }") && out.contains("s >>= 1u; }"), "{out}");
        assert!(out.contains("if (!(j < n)) { break; } { x(j, s); } j += W;"), "{out}");
        assert!(out.contains("bounded_loop_2++) { { if (k0 >= e) { break; } } k0 += 16u; }"), "{out}");
        assert_eq!(out.matches("const BOUNDED_LOOP_CAP").count(), 1);
    }

    #[test]
    fn a_module_without_marked_loops_is_unchanged_but_for_comments() {
        assert_eq!(
            bound_loops("fn f() { for (var i = 0u; i < n; i += 4u) { } } // x"),
            "fn f() { for (var i = 0u; i < n; i += 4u) { } } "
        );
    }

    #[test]
    #[should_panic(expected = "continue")]
    fn continue_is_refused() {
        bound_loops("for (var i = 0u; i < n; i += 2u) { // bounded in browsers\n if (i == 2u) { continue; } }");
    }
}
