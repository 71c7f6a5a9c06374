// Ranking documents against a query by cosine similarity.

/**
 * The dot product of two vectors of the same length. The package's embeddings are
 * L2-normalised (length 1), so this is their cosine similarity.
 */
export function dot(a, b) {
  if (a.length !== b.length) throw new Error(`vectors of different lengths: ${a.length} and ${b.length}`);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i] * b[i];
  return sum;
}

/** `docs` ([{ text, vector, ... }]) each with its `score` against `query`, best first (ties keep the documents' order). */
export function rank(query, docs) {
  return docs
    .map((doc, order) => ({ ...doc, order, score: dot(query, doc.vector) }))
    .sort((a, b) => b.score - a.score || a.order - b.order);
}
