"use strict";
// What jest does not hand a hook, read from jest-circus's own state (its private
// JEST_STATE_SYMBOL global, the one place this package relies on a runner's internals): the
// running test, with its describe blocks and the errors it raised so far. null when absent
// (another runner, or a jest that keeps it elsewhere): names then come from expect.getState(),
// and a failed test's usage is told as passed (see setup.cjs).
function runningTest() {
  const symbol = Object.getOwnPropertySymbols(globalThis).find((s) => s.description === "JEST_STATE_SYMBOL");
  return (symbol && globalThis[symbol] && globalThis[symbol].currentlyRunningTest) || null;
}

module.exports = { runningTest };
