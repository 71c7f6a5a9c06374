// Structured output through the npm package on the CPU backend, on the page and in a
// WorkerModel: generate() under a jsonSchema (object and JSON text), chat with OpenAI's
// response_format (json_schema and json_object), a regex; each output parses and has
// the schema's shape, and a bad or unsupported schema rejects with InvalidRequestError
// before any token. Run by structured_output.rs.

const SMOLLM2 = '.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf';

const SCHEMA = {
  type: 'object',
  properties: {
    animal: { enum: ['cat', 'dog', 'bird'] },
    legs: { type: 'integer', minimum: 0, maximum: 8 },
    names: { type: 'array', items: { type: 'string', maxLength: 12 }, minItems: 1, maxItems: 2 },
  },
  required: ['animal', 'legs', 'names'],
  additionalProperties: false,
};

/** Whether `v` has SCHEMA's shape (the test's own check, independent of the engine). */
function fitsSchema(v) {
  return v && typeof v === 'object' && !Array.isArray(v) &&
    Object.keys(v).every((k) => ['animal', 'legs', 'names'].includes(k)) &&
    ['cat', 'dog', 'bird'].includes(v.animal) &&
    Number.isInteger(v.legs) && v.legs >= 0 && v.legs <= 8 &&
    Array.isArray(v.names) && v.names.length >= 1 && v.names.length <= 2 &&
    v.names.every((n) => typeof n === 'string' && [...n].length <= 12);
}

export async function runStructuredOutputTests(base) {
  const log = [];
  const failures = [];
  const check = (ok, what) => {
    if (!ok) failures.push(what);
  };
  const url = (p) => `${base}/${p}`;
  const { Model, InvalidRequestError } = await import(url('www/index.js'));
  const { WorkerModel } = await import(url('www/worker-model.js'));
  const greedy = { maxTokens: 64, temperature: 0 };
  const parsed = (what, text) => {
    try {
      return JSON.parse(text);
    } catch (e) {
      failures.push(`${what}: does not parse (${e.message}): ${JSON.stringify(text)}`);
      return null;
    }
  };
  const expectInvalid = async (promise, what) => {
    try {
      await promise;
      failures.push(`${what}: resolved, expected InvalidRequestError`);
    } catch (e) {
      if (e instanceof InvalidRequestError && e.name === 'InvalidRequestError') log.push(`${what}: ${e.name}: ${e.message}`);
      else failures.push(`${what}: got ${e?.name}: ${e?.message}, expected InvalidRequestError`);
    }
  };

  for (const [where, load] of [['page', (u) => Model.load(u, { backend: 'cpu' })], ['worker', (u) => WorkerModel.load(u, { backend: 'cpu' })]]) {
    const model = await load(url(SMOLLM2));
    // generate() takes plain text (chat goes through chat.completions below).
    const chatPrompt = 'A pet, described as JSON: ';

    // generate() with a schema object, streamed; and complete() with its JSON text.
    let text = '';
    const t0 = performance.now();
    for await (const piece of model.generate(chatPrompt, { ...greedy, jsonSchema: SCHEMA })) text += piece.text;
    log.push(`${where} generate jsonSchema (${(performance.now() - t0).toFixed(0)} ms): ${text}`);
    const v = parsed(`${where} generate`, text);
    check(v === null || fitsSchema(v), `${where} generate: ${text} does not fit the schema`);
    const done = await model.complete(chatPrompt, { ...greedy, jsonSchema: JSON.stringify(SCHEMA) });
    check(done.text === text, `${where} complete with the schema as text: ${done.text} vs ${text}`);
    check(done.finishReason === 'stop', `${where} complete: finishReason ${done.finishReason}`);

    // chat.completions.create with OpenAI's response_format.
    const messages = [{ role: 'user', content: 'Describe a dog as JSON.' }];
    const reply = await model.chat.completions.create({
      messages, max_tokens: 64, temperature: 0,
      response_format: { type: 'json_schema', json_schema: { name: 'pet', schema: SCHEMA, strict: true } },
    });
    const content = reply.choices[0].message.content;
    log.push(`${where} chat json_schema: ${content} (${reply.choices[0].finish_reason})`);
    const c = parsed(`${where} chat json_schema`, content);
    check(c === null || fitsSchema(c), `${where} chat: ${content} does not fit the schema`);
    check(reply.choices[0].finish_reason === 'stop', `${where} chat finish_reason ${reply.choices[0].finish_reason}`);
    const object = await model.chat.completions.create({ messages, max_tokens: 64, temperature: 0, response_format: { type: 'json_object' } });
    const o = object.choices[0].message.content;
    if (object.choices[0].finish_reason === 'stop') {
      const ov = parsed(`${where} chat json_object`, o);
      check(ov === null || (typeof ov === 'object' && !Array.isArray(ov)), `${where} json_object: ${o} is not an object`);
    } else {
      log.push(`${where} chat json_object cut at max_tokens: ${o}`);
    }
    const plain = await model.chat.completions.create({ messages, max_tokens: 8, temperature: 0, response_format: { type: 'text' } });
    const free = await model.chat.completions.create({ messages, max_tokens: 8, temperature: 0 });
    check(plain.choices[0].message.content === free.choices[0].message.content, `${where}: response_format text changes the reply`);

    // A regex.
    const time = await model.complete(chatPrompt, { ...greedy, regex: '[0-2][0-9]:[0-5][0-9]' });
    check(/^[0-2][0-9]:[0-5][0-9]$/.test(time.text), `${where} regex: ${JSON.stringify(time.text)}`);

    // Bad requests reject before any token, with InvalidRequestError.
    await expectInvalid(model.complete('x', { jsonSchema: { type: 'object', properties: 5 } }), `${where} invalid schema`);
    await expectInvalid(model.complete('x', { jsonSchema: { type: 'object', not: { required: ['a'] } } }), `${where} unsupported keyword`);
    await expectInvalid(model.complete('x', { jsonSchema: '{ nope' }), `${where} schema text not JSON`);
    await expectInvalid(model.complete('x', { regex: '(open' }), `${where} invalid regex`);
    await expectInvalid(model.complete('x', { regex: 'a', grammar: 'start: "a"' }), `${where} two constraints`);
    await expectInvalid(
      model.chat.completions.create({ messages, response_format: { type: 'xml' } }),
      `${where} unknown response_format`,
    );
    // The model still works after the rejections.
    const after = await model.complete(chatPrompt, { ...greedy, jsonSchema: SCHEMA });
    check(after.text === text, `${where}: after the rejections ${after.text} vs ${text}`);
    await model.dispose();
  }
  return { log, failures };
}
