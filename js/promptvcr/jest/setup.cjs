"use strict";
// jest's setupFilesAfterEnv: each test starts its own cassette, named after its file and its
// full name, and its stop fails the test that missed, with the fields that differ.
const session = require("../lib/session.cjs");
const { runningTest } = require("./compat.cjs");

session.wrapFetch();

// jest-circus keeps the running test, with the errors it raised so far, in its state; a hook
// reads it to tell serve's usage record whether the test failed, and to name its cassette by
// its describe blocks too, as under vitest (`block.test`).
function testFailed() {
  const running = runningTest();
  return Boolean(running && running.errors && running.errors.length);
}

function names(fallback) {
  const running = runningTest();
  if (!running) return [fallback];
  const chain = [running.name];
  for (let block = running.parent; block && block.parent; block = block.parent) chain.unshift(block.name);
  return chain;
}

beforeEach(async () => {
  const { testPath, currentTestName } = expect.getState();
  await session.begin(testPath, names(currentTestName));
});

afterEach(async () => {
  await session.end({ passed: !testFailed() });
});
