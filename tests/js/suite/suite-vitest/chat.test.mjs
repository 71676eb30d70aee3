import { describe, expect, test } from "vitest";
import calls from "../shared/calls.cjs";
import { useCassette } from "promptvcr";

describe("openai", () => {
  test("chat", async () => expect(await calls.openaiChat("hello openai from vitest")).toMatch(/hello openai from vitest$/));
  test("stream", async () => expect(await calls.openaiStream("stream from vitest")).toMatch(/stream from vitest$/));
});
test("anthropic", async () => expect(await calls.anthropicMessage("hello claude from vitest")).toMatch(/hello claude from vitest$/));
test("anthropic stream", async () => expect(await calls.anthropicStream("stream claude from vitest")).toMatch(/stream claude from vitest$/));
test("gemini stream", async () => expect(await calls.geminiStream("stream gemini from vitest")).toMatch(/stream gemini from vitest$/));
test("gemini", async () => expect(await calls.gemini("hello gemini from vitest")).toMatch(/hello gemini from vitest$/));
test("vercel ai sdk", async () => expect(await calls.vercel("vercel from vitest")).toMatch(/vercel from vitest \| .*vercel from vitest streamed$/));
test("plain fetch", async () => expect(await calls.plainFetch("fetch from vitest")).toMatch(/fetch from vitest$/));
test("swallowed", async () => expect(await calls.swallowed("swallow from vitest")).toMatch(/swallow from vitest$/));
test("realtime", async () => {
  const seen = await calls.realtime("Be brief.");
  expect(seen[0]).toBe("session.created");
  expect(seen.at(-1)).toBe("response.done");
});
test("a shared cassette", async () => {
  await useCassette("suite-vitest/cassettes/shared.yaml", async () => {
    expect(await calls.openaiChat("shared greeting")).toMatch(/shared greeting$/);
  });
  expect(await calls.openaiChat("after the shared one")).toMatch(/after the shared one$/); // its own again
});
