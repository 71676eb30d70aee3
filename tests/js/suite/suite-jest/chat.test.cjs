const calls = require("../shared/calls.cjs");

describe("openai", () => {
  test("chat", async () => expect(await calls.openaiChat("hello openai from jest")).toMatch(/hello openai from jest$/));
  test("stream", async () => expect(await calls.openaiStream("stream from jest")).toMatch(/stream from jest$/));
});
test("anthropic", async () => expect(await calls.anthropicMessage("hello claude from jest")).toMatch(/hello claude from jest$/));
test("gemini", async () => expect(await calls.gemini("hello gemini from jest")).toMatch(/hello gemini from jest$/));
test("vercel ai sdk", async () => expect(await calls.vercel("vercel from jest")).toMatch(/vercel from jest \| .*vercel from jest streamed$/));
test("swallowed", async () => expect(await calls.swallowed("swallow from jest")).toMatch(/swallow from jest$/));
