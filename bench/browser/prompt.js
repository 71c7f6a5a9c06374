// The benchmark prompts: windows of a fixed English text, each exactly N tokens long
// in the model's own vocabulary (BOS included where the model adds one). Kindling gets
// the ids (tokenized by its tokenizer, which is tested against llama.cpp's); wllama only
// takes text, so it gets the same text and tokenizes it itself, and the page checks that
// its prompt_n is the same count.
//
// Both engines keep the previous request in their KV cache and reuse a shared prefix, so
// every repetition starts at a different word: apart from a BOS token, no prompt is
// already cached (the page measures what is and counts only evaluated tokens).

export const TEXT = `The old lighthouse stood at the end of a narrow spit of rock, and for most of
the year nobody went near it. In winter the waves came over the path and left it slick
with weed; in summer the gulls nested along the railings and screamed at anyone who
tried to pass. The keeper had retired long ago, and the lamp was run now by a small
machine that switched itself on at dusk and off again at dawn. Still, the village kept
the door painted green, and every spring someone climbed the spiral stairs to wash the
salt from the great glass lens. Children were told that the lighthouse remembered every
ship it had ever guided home, and that on clear nights you could hear it counting them.
Most of them stopped believing this by the age of ten. A few never did, and they were
the ones who grew up to become fishermen, or sailors, or the kind of people who stand
on a cliff in a storm just to watch the light turn. When the council proposed to sell
the building to a hotel company, the whole village came to the meeting, and the
argument lasted until well after midnight. In the end they voted to keep it, though
nobody could say exactly why, except that a coast without its light would feel like a
house with one window bricked up.`;

/** Words between the starts of consecutive prompts. */
const STRIDE = 5;

/**
 * `count` prompts of exactly `n` tokens: `{ text, ids }`, where `tokenize(text)` gives
 * the ids with special tokens added as the model asks. Prompt `r` starts near word
 * `r * STRIDE` (a start whose words cannot make exactly n tokens moves one word on).
 */
export function makePrompts(tokenize, count, n) {
  const base = TEXT.split(/\s+/);
  // Enough words for every window, the text repeated where it runs out.
  const words = [];
  while (words.length < count * STRIDE + 4 * n + 64) words.push(...base);
  const prompts = [];
  let start = 0;
  for (let r = 0; r < count; r++) {
    start = Math.max(start, r * STRIDE);
    let found = null;
    for (let tries = 0; !found && tries < 20; tries++, start++) found = windowAt(words, start, n, tokenize);
    if (!found) throw new Error(`no window of the text makes exactly ${n} tokens`);
    prompts.push(found);
  }
  return prompts;
}

/** The words from `start` that tokenize to exactly n tokens, or null. */
function windowAt(words, start, n, tokenize) {
  for (let k = 1; start + k <= words.length; k++) {
    const text = words.slice(start, start + k).join(' ');
    const ids = tokenize(text);
    if (ids.length === n) return { text, ids };
    if (ids.length > n) return null;
  }
  return null;
}

/** Length of the common prefix of two id lists: what a KV cache could reuse. */
export function commonPrefix(a, b) {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}
