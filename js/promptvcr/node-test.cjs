"use strict";
// node's test runner: `node --require promptvcr/node-test --test` (or `--import`).
//
// node's test runner process loads `--require` (node 20 does not load `--import` there): it
// owns the run's server, started before it starts a process per test file, and prints the
// run's report on its own stderr as it ends, whatever `--test-reporter` was given. Each test
// file's process (it loads the flag too) gives each test its own cassette. Loaded only in the
// test files' processes (`--import` on node 20), each file's process owns a server of its own;
// `node --require promptvcr/node-test file.test.js` runs one file with its own server.
const path = require("node:path");
const owner = require("./lib/owner.cjs");
const session = require("./lib/session.cjs");

const isolated = (flag) => /^--(experimental-)?test-isolation=none$/.test(flag);
const testFileProcess = Boolean(process.env.NODE_TEST_CONTEXT);
const runnerProcess = !testFileProcess && process.execArgv.some((flag) => flag === "--test" || flag.startsWith("--test="));
const runsTests = !runnerProcess || process.execArgv.some(isolated);

function usageRecord() {
  const record = process.env.PROMPTVCR_USAGE_RECORD;
  if (!record || !testFileProcess) return record;
  // a server per test file: a record per file, beside the one named (give them all to prune)
  const stem = path.relative(process.cwd(), path.resolve(process.argv[1] || "")).replace(/[^A-Za-z0-9_.-]+/g, "-");
  return record.replace(/(\.json)?$/, `.${stem}.json`);
}

const server = owner.ownSync({ usageRecord: usageRecord() });
if (server) {
  process.once("beforeExit", () => owner.finish(server, { failed: Boolean(process.exitCode) }));
}

// node reports a test's first error only: an afterEach's error is dropped when the test's own
// code failed. So each test function is wrapped: when it fails after a miss, its error gets
// the fields that differ (once), and its stop stays quiet; when it passed (the code swallowed
// the SDK's error), the stop's error says them.
const failedBodies = new WeakSet();

function withMisses(error) {
  const misses = session.takeMisses();
  if (!misses.length || error === null || typeof error !== "object" || typeof error.message !== "string") return;
  const before = error.message;
  error.message = `${before}\n${misses.join("\n")}`;
  if (typeof error.stack === "string" && error.stack.includes(before)) error.stack = error.stack.replace(before, error.message);
}

function wrapped(fn) {
  if (typeof fn !== "function" || fn.length >= 2) return fn; // (t, done) callbacks kept as written
  return async function promptvcrTest(t, ...rest) {
    try {
      return await fn.call(this, t, ...rest);
    } catch (error) {
      failedBodies.add(t);
      withMisses(error);
      throw error;
    }
  };
}

function patch(nodeTest, name) {
  const original = nodeTest[name];
  if (typeof original !== "function" || original.promptvcr) return;
  const replacement = function (...args) {
    const last = args.length - 1;
    if (last >= 0 && typeof args[last] === "function") args[last] = wrapped(args[last]);
    return original.apply(this, args);
  };
  for (const key of Object.keys(original)) replacement[key] = original[key]; // test.skip, test.only, ...
  replacement.promptvcr = true;
  nodeTest[name] = replacement;
}

if (runsTests) {
  const nodeTest = require("node:test");
  for (const name of ["test", "it"]) patch(nodeTest, name);
  require("node:module").syncBuiltinESMExports(); // `import { test } from "node:test"` sees them too
  session.wrapFetch();
  nodeTest.beforeEach(async (t) => {
    const names = t.fullName ? t.fullName.split(" > ") : [t.name];
    await session.begin(path.resolve(process.argv[1] || "test"), names);
  });
  nodeTest.afterEach(async (t) => {
    const failed = failedBodies.has(t);
    await session.end({ passed: !failed, quiet: failed });
  });
}
