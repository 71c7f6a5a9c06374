// Small assertions shared by the page tests.

/** Throws `message` unless `ok`. */
export const check = (ok, message) => {
  if (!ok) throw new Error(message);
};

/** The trimmed text of the first element matching `selector`. */
export const text = (page, selector) => page.textContent(selector).then((t) => t.trim());

/** The model every page test loads (small: it loads in seconds on the CPU path). */
export const MODEL_NAME = 'SmolLM2-135M-Instruct.Q4_1.gguf';
