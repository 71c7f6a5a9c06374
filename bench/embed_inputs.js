// Texts of an exact token count for the embedding benchmarks (bench/dawn_embed.mjs, the
// browser bench), spelled the same way as bench/embed_server.py spells them for
// llama-server, so every engine embeds the same texts: input i is WORDS[(7 i + j) mod W]
// for j < T − framing, joined by spaces, where framing is what the tokenizer adds to any
// text ([CLS] and [SEP] for BERT) and WORDS keeps only the candidates that are one token
// each (all of them for nomic-embed-text's uncased WordPiece vocabulary). Each text is
// checked to tokenize to exactly T tokens. No Node or DOM dependencies: the page imports
// it from the static server, Node from the file.

export const CANDIDATE_WORDS = ['hello', 'world', 'house', 'water', 'green', 'music', 'river', 'stone', 'light', 'paper', 'table', 'cloud'];

/**
 * `count` texts of exactly `tokens` tokens each under `tokenize(text) → ids` (special
 * tokens added as the model adds them). Throws when no candidate word is one token or a
 * text comes out at another length.
 */
export function embedTexts(tokenize, count, tokens) {
  const framing = tokenize('').length;
  const words = CANDIDATE_WORDS.filter((w) => tokenize(w).length === framing + 1);
  if (words.length === 0) throw new Error(`none of ${CANDIDATE_WORDS.join(' ')} is a single token here`);
  const body = tokens - framing;
  if (body < 1) throw new Error(`${tokens} tokens leave no room for text after the ${framing} special token(s)`);
  const texts = [];
  for (let i = 0; i < count; i++) {
    const parts = Array.from({ length: body }, (_, j) => words[(7 * i + j) % words.length]);
    const text = parts.join(' ');
    const n = tokenize(text).length;
    if (n !== tokens) throw new Error(`input ${i} tokenizes to ${n} tokens, not ${tokens}`);
    texts.push(text);
  }
  return texts;
}

/** `"32x16 4x2000"` → `[{ inputs: 32, inputTokens: 16 }, { inputs: 4, inputTokens: 2000 }]`. */
export function parseBatches(spec) {
  return spec
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((b) => {
      const m = /^(\d+)x(\d+)$/.exec(b);
      if (!m) throw new Error(`batch '${b}': expected INPUTSxTOKENS, e.g. 32x16`);
      return { inputs: Number(m[1]), inputTokens: Number(m[2]) };
    });
}

/** Times `embed(texts) → { usage }` once to warm up and `reps` times; the median. */
export async function timeEmbeddings(embed, texts, tokens, reps) {
  const runs = [];
  for (let rep = 0; rep <= reps; rep++) {
    const t = performance.now();
    const r = await embed(texts);
    const s = (performance.now() - t) / 1e3;
    const want = texts.length * tokens;
    if (r.usage?.prompt_tokens !== want) throw new Error(`usage.prompt_tokens ${r.usage?.prompt_tokens}, wanted ${want}`);
    if (r.data?.length !== texts.length) throw new Error(`${r.data?.length} vectors for ${texts.length} inputs`);
    if (rep > 0) runs.push(s); // rep 0 warms up: pipelines, the encoder's session
  }
  const seconds = [...runs].sort((a, b) => a - b)[Math.floor(runs.length / 2)];
  return {
    inputs: texts.length,
    input_tokens: tokens,
    tokens: texts.length * tokens,
    seconds,
    runs_s: runs,
    inputs_per_s: texts.length / seconds,
    tokens_per_s: (texts.length * tokens) / seconds,
  };
}
