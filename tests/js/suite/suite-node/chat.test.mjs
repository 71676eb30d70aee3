import assert from "node:assert/strict";
import { describe, test } from "node:test";
import calls from "../shared/calls.cjs";

describe("openai", () => {
  test("chat", async () => assert.match(await calls.openaiChat("hello openai from node"), /hello openai from node$/));
  test("stream", async () => assert.match(await calls.openaiStream("stream from node"), /stream from node$/));
});
test("anthropic", async () => assert.match(await calls.anthropicMessage("hello claude from node"), /hello claude from node$/));
test("vercel ai sdk", async () => assert.match(await calls.vercel("vercel from node"), /vercel from node \| .*vercel from node streamed$/));
test("swallowed", async () => assert.match(await calls.swallowed("swallow from node"), /swallow from node$/));
test("subtests", async (t) => {
  await t.test("inner", async () => assert.match(await calls.openaiChat("inner from node"), /inner from node$/));
  assert.match(await calls.openaiChat("outer from node"), /outer from node$/); // its own cassette again
});
