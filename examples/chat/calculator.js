// The chat demo's calculator tool: its OpenAI tool definition, and the arithmetic it
// does when the model calls it. The expression comes from the model, so it is parsed
// here (numbers, + - * /, parentheses, unary minus), never handed to eval or Function.

/** The tool as `chat.completions.create({ tools: [CALCULATOR] })` takes it. */
export const CALCULATOR = {
  type: 'function',
  function: {
    name: 'calculate',
    description: 'Evaluate an arithmetic expression and return its value. Use it for any calculation.',
    parameters: {
      type: 'object',
      properties: { expression: { type: 'string', description: 'an arithmetic expression such as 12*(3+4)' } },
      required: ['expression'],
    },
  },
};

/**
 * The value of `expression`: numbers (12, 3.5, .5, 1e3), + - * / with the usual
 * precedence, parentheses, unary minus and plus; spaces anywhere; × and ÷ read as * and /.
 * Throws an Error saying what is wrong (an unexpected character, a missing parenthesis,
 * division by zero).
 */
export function evaluate(expression) {
  const source = String(expression).replace(/×/g, '*').replace(/÷/g, '/');
  let at = 0;
  const skip = () => {
    while (at < source.length && /\s/.test(source[at])) at++;
  };
  const peek = () => (skip(), source[at]);
  const fail = (what) => {
    throw new Error(at < source.length ? `${what} at “${source.slice(at, at + 12)}”` : `${what} at the end`);
  };

  // expression := term (('+' | '-') term)*
  const sum = () => {
    let value = product();
    for (let op = peek(); op === '+' || op === '-'; op = peek()) {
      at++;
      const right = product();
      value = op === '+' ? value + right : value - right;
    }
    return value;
  };
  // term := factor (('*' | '/') factor)*
  const product = () => {
    let value = factor();
    for (let op = peek(); op === '*' || op === '/'; op = peek()) {
      at++;
      const right = factor();
      if (op === '/' && right === 0) throw new Error('division by zero');
      value = op === '*' ? value * right : value / right;
    }
    return value;
  };
  // factor := ('-' | '+') factor | number | '(' expression ')'
  const factor = () => {
    const c = peek();
    if (c === '-' || c === '+') {
      at++;
      const value = factor();
      return c === '-' ? -value : value;
    }
    if (c === '(') {
      at++;
      const value = sum();
      if (peek() !== ')') fail('expected “)”');
      at++;
      return value;
    }
    const number = /^(\d+\.?\d*|\.\d+)(e[+-]?\d+)?/i.exec(source.slice(at));
    if (!number) fail(c === undefined ? 'expected a number' : 'expected a number or “(”');
    at += number[0].length;
    return Number(number[0]);
  };

  if (peek() === undefined) throw new Error('the expression is empty');
  const value = sum();
  if (peek() !== undefined) throw new Error(`unexpected “${source.slice(at, at + 12)}”`);
  if (!Number.isFinite(value)) throw new Error('the result is too large');
  return value;
}

/** `value` as the tool's result text: without floating-point noise (0.1+0.2 is 0.3). */
export const formatNumber = (value) => String(Number(value.toPrecision(12)));
