"use strict";
// Code under test that swallows an API error: the miss must still fail the test.
const { test } = require("node:test");
const OpenAI = require("openai");
const { SERVER, withCassette } = require(process.env.PROMPTVCR_RECIPE);

test("a miss the code swallows", () =>
  withCassette(process.env.PROMPTVCR_SWALLOWED, {}, async (headers) => {
    const client = new OpenAI({ apiKey: "sk-replay", baseURL: `${SERVER}/openai/v1`, defaultHeaders: headers, maxRetries: 0 });
    try {
      await client.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "never recorded" }] });
    } catch {
      // the application logs and goes on
    }
  }));
