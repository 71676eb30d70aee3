"use strict";
// Per-test cassettes from `promptvcr serve`, for node's test runner (or any JavaScript runner).
//
//   await withCassette("cassettes/chat.yaml", {}, async (headers) => { ...SDK calls... });
//
// starts the cassette (a fresh playback: answers are never used up by an earlier test), runs
// the test with `headers` (give them to the SDK client: they name the cassette, so test files
// running in parallel never share one), stops it, and fails the test when a request missed,
// even if the code under test swallowed the provider-shaped 404 the miss was answered with.

const SERVER = process.env.PROMPTVCR_URL ?? "http://127.0.0.1:8787";

async function admin(action, body) {
  const answer = await fetch(`${SERVER}/_promptvcr/${action}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const data = await answer.json();
  if (!answer.ok) throw new Error(data.error);
  return data;
}

function describe(report) {
  const lines = [`promptvcr: cassette ${report.path} (${report.mode}) failed this test:`];
  for (const miss of report.misses) lines.push(miss.message);
  for (const error of report.errors) lines.push(error);
  for (const cut of report.cut_short) lines.push(`cut short: ${cut}`);
  return lines.join("\n");
}

async function withCassette(cassette, options, body) {
  const started = await admin("start", { cassette, ...options });
  let failure = null;
  try {
    await body(started.header);
  } catch (error) {
    failure = error;
  }
  // `passed` tells the run's usage record (--usage-record) that a failed test may need all of it.
  const report = await admin("stop", { cassette: started.cassette, passed: failure === null });
  if (failure) {
    if (!report.ok) failure.message += `\n${describe(report)}`;
    throw failure;
  }
  if (!report.ok) throw new Error(describe(report));
  return report;
}

module.exports = { SERVER, admin, withCassette };
