// Kindling's chat API against the `openai` npm package's own types: Kindling's requests
// are OpenAI requests, its results are OpenAI results, and a request written (and
// type-checked) for the OpenAI SDK goes to Kindling's create unchanged. Never run; only
// type-checked (tests/pages/types/check.mjs).

import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParams,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionFunctionTool,
  ChatCompletionMessage,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
  ChatCompletionNamedToolChoice,
  ChatCompletionTool,
  ChatCompletionToolChoiceOption,
  ChatCompletionToolMessageParam,
} from 'openai/resources/chat/completions';
import type { ResponseFormatJSONObject, ResponseFormatJSONSchema } from 'openai/resources/shared';
import type * as K from 'kindling';
import type { Model } from 'kindling';
import type { WorkerModel } from 'kindling/worker';

export async function openaiShapes(model: Model, inWorker: WorkerModel): Promise<string> {
  // Kindling's request pieces are OpenAI's.
  const tools: K.ChatCompletionTool[] = [
    {
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'The weather in a city',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        strict: true,
      },
    },
  ];
  const openaiTools: ChatCompletionTool[] = tools;
  const choice: K.ChatCompletionToolChoice = { type: 'function', function: { name: 'get_weather' } };
  const openaiChoice: ChatCompletionToolChoiceOption = choice;
  const choices: ChatCompletionToolChoiceOption[] = (['none', 'auto', 'required'] as K.ChatCompletionToolChoice[]);
  const format: K.ResponseFormat = {
    type: 'json_schema',
    json_schema: { name: 'city', schema: { type: 'object', properties: { name: { type: 'string' } } }, strict: true },
  };
  const openaiFormat: ResponseFormatJSONSchema | ResponseFormatJSONObject | { type: 'text' } = format;
  const messages: K.ChatCompletionMessageParam[] = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
  ];
  const openaiMessages: ChatCompletionMessageParam[] = messages;

  // A whole Kindling request is an OpenAI request (with the model OpenAI requires).
  const request = {
    messages, tools, tool_choice: 'auto', parallel_tool_calls: false, max_completion_tokens: 64, temperature: 0, seed: 1, stop: ['\n\n'],
    top_k: 40, min_p: 0.05, repetition_penalty: 1.1, response_format: { type: 'text' }, chat_template: null,
  } satisfies K.ChatCompletionRequest;
  // Typed as the whole request, `stream` unknown: either result, as OpenAI's create has it.
  const either: K.ChatCompletion | AsyncIterable<K.ChatCompletionChunk> = await model.chat.completions.create(request as K.ChatCompletionRequest);
  const asOpenAI: ChatCompletionCreateParamsNonStreaming = { ...request, model: 'kindling', stream: false };
  const asOpenAIStream: ChatCompletionCreateParamsStreaming = { ...request, model: 'kindling', stream: true };

  // Kindling's results are OpenAI's.
  const reply: K.ChatCompletion = await model.chat.completions.create(request);
  const openaiReply: ChatCompletion = reply;
  const message: ChatCompletionMessage = reply.choices[0].message;
  const calls: ChatCompletionMessageToolCall[] | undefined = reply.choices[0].message.tool_calls;
  const functionCall: ChatCompletionMessageFunctionToolCall | undefined = reply.choices[0].message.tool_calls?.[0];
  for await (const chunk of await model.chat.completions.create({ ...request, stream: true })) {
    const openaiChunk: ChatCompletionChunk = chunk;
    const call = openaiChunk.choices[0].delta.tool_calls?.[0];
    if (call) openaiChunk.choices[0].delta.content = `${call.index} ${call.function?.name}(${call.function?.arguments})`;
  }
  const workerReply: ChatCompletion = await inWorker.chat.completions.create(request);

  // The round trip: the reply's message and a tool message go back as they are.
  const next: K.ChatCompletionMessageParam[] = [...messages, reply.choices[0].message];
  for (const call of reply.choices[0].message.tool_calls ?? []) {
    const result: ChatCompletionToolMessageParam = { role: 'tool', tool_call_id: call.id, content: JSON.stringify({ celsius: 21 }) };
    next.push(result);
  }
  await model.chat.completions.create({ messages: next, tools });

  // A request written for the OpenAI SDK, checked by its types, goes to Kindling unchanged
  // (text content, function tools; Kindling takes no images, audio, files or custom tools).
  const fromOpenAI = {
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"celsius":21}' },
    ],
    tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
    parallel_tool_calls: true,
    max_tokens: null,
    max_completion_tokens: 128,
    temperature: 0.2,
    top_p: 0.9,
    seed: 7,
    stop: null,
    stream: false,
  } satisfies ChatCompletionCreateParamsNonStreaming;
  const done: ChatCompletion = await model.chat.completions.create(fromOpenAI);
  const json = {
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'A city as JSON' }] }],
    response_format: { type: 'json_schema', json_schema: { name: 'city', schema: { type: 'object' }, strict: true } },
  } satisfies ChatCompletionCreateParams;
  const jsonReply: ChatCompletion = await model.chat.completions.create(json);
  const streamed = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], stream: true } satisfies ChatCompletionCreateParamsStreaming;
  for await (const chunk of await model.chat.completions.create(streamed)) jsonReply.choices[0].message.content += chunk.choices[0].delta.content ?? '';
  // OpenAI's own typed pieces, passed as they are.
  const fnTools: ChatCompletionFunctionTool[] = [{ type: 'function', function: { name: 'add', parameters: { type: 'object' } } }];
  const named: ChatCompletionNamedToolChoice = { type: 'function', function: { name: 'add' } };
  const schemaFormat: ResponseFormatJSONSchema = { type: 'json_schema', json_schema: { name: 'sum', schema: { type: 'integer' } } };
  const toolMessage: ChatCompletionToolMessageParam = { role: 'tool', tool_call_id: 'call_1', content: '4' };
  await model.chat.completions.create({ messages: [{ role: 'user', content: '2+2?' }, toolMessage], tools: fnTools, tool_choice: named });
  await model.chat.completions.create({ messages: [{ role: 'user', content: '2+2?' }], response_format: schemaFormat });
  // OpenAI's whole message and tool unions are wider than what Kindling takes (images,
  // audio, files, refusal parts, developer/function roles, custom tools): not assignable.
  // @ts-expect-error
  const wide: K.ChatCompletionMessageParam[] = openaiMessages;
  // @ts-expect-error
  const wideTools: K.ChatCompletionTool[] = openaiTools;

  return [
    asOpenAI.model, asOpenAIStream.model, openaiReply.id, message.content, calls?.length, functionCall?.function.name,
    workerReply.id, 'id' in either, done.choices[0].finish_reason, openaiChoice, choices, openaiFormat.type, wide.length, wideTools.length,
  ].join(' ');
}
