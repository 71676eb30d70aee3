"use strict";
// The recipe: node's own test runner, each test with its own cassette, the openai and
// @anthropic-ai/sdk packages pointed at `promptvcr serve` by their base URL.
//
//   promptvcr serve --record-mode record &    # once, to record (PROMPTVCR_URL: where it listens)
//   node --test examples/node/
//   promptvcr serve &                         # replay: no network, no API key
//   node --test examples/node/
const { test } = require("node:test");
const assert = require("node:assert/strict");
const path = require("node:path");
const OpenAI = require("openai");
const Anthropic = require("@anthropic-ai/sdk");
const { SERVER, withCassette } = require("./promptvcr");

const CASSETTES = process.env.PROMPTVCR_CASSETTES ?? path.join(__dirname, "cassettes");
const cassette = (name) => path.join(CASSETTES, `${name}.yaml`);

const openai = (headers, options = {}) =>
  new OpenAI({ apiKey: process.env.OPENAI_API_KEY ?? "sk-replay", baseURL: `${SERVER}/openai/v1`, defaultHeaders: headers, ...options });
const anthropic = (headers) =>
  new Anthropic({ apiKey: process.env.ANTHROPIC_API_KEY ?? "sk-ant-replay", baseURL: `${SERVER}/anthropic`, defaultHeaders: headers });

test("openai: a chat completion", () =>
  withCassette(cassette("openai-chat"), {}, async (headers) => {
    const answer = await openai(headers).chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "hello from node" }],
    });
    assert.match(answer.choices[0].message.content, /hello from node$/);
  }));

test("openai: a streamed chat completion", () =>
  withCassette(cassette("openai-stream"), {}, async (headers) => {
    const stream = await openai(headers).chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "stream from node" }],
      stream: true,
    });
    const pieces = [];
    for await (const chunk of stream) if (chunk.choices.length) pieces.push(chunk.choices[0].delta.content ?? "");
    assert.ok(pieces.length > 2, "several events");
    assert.match(pieces.join(""), /stream from node$/);
  }));

test("anthropic: a message", () =>
  withCassette(cassette("anthropic-message"), {}, async (headers) => {
    const message = await anthropic(headers).messages.create({
      model: "claude-sonnet-4-5",
      max_tokens: 64,
      messages: [{ role: "user", content: "hello from node" }],
    });
    assert.match(message.content[0].text, /hello from node$/);
  }));

// A rate limit, then the answer to the SDK's retry: kept while recording ("on_record_error":
// "keep"), so the replay gives the same 429 first and the test covers the retry.
test("openai: rate limited, then answered", () =>
  withCassette(cassette("rate-limited"), { on_record_error: "keep" }, async (headers) => {
    const answer = await openai(headers, { maxRetries: 2 }).chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "FLAKY 429 then fine" }],
    });
    assert.match(answer.choices[0].message.content, /FLAKY 429 then fine$/);
  }));
