// node's test runner: `node --import promptvcr/node-test --test`.
//
// The process that runs the tests of a file gives each test its own cassette. The run's
// server is owned by the runner's main process where node loads `--import` there; where it
// does not (node 20 runs each file in a child that loads it, the main process does not), by
// each file's process, which then prints its own report. `node --import promptvcr/node-test
// file.test.js` runs one file with its own server.
import path from "node:path";
import owner from "./lib/owner.cjs";
import session from "./lib/session.cjs";

const child = Boolean(process.env.NODE_TEST_CONTEXT);
const runner = !child && process.execArgv.some((flag) => flag === "--test" || flag.startsWith("--test="));
const testFile = process.argv[1] ? path.resolve(process.argv[1]) : "";

function usageRecord() {
  const record = process.env.PROMPTVCR_USAGE_RECORD;
  if (!record || runner || !child) return record;
  // one server per file: one record per file, beside the one named (pass them all to prune)
  const stem = path.relative(process.cwd(), testFile).replace(/[^A-Za-z0-9_.-]+/g, "-");
  return record.replace(/(\.json)?$/, `.${stem}.json`);
}

const server = await owner.own({ usageRecord: usageRecord() });
if (server) {
  process.once("beforeExit", async () => {
    await owner.finish(server, { failed: Boolean(process.exitCode) });
  });
  server.detach();
}

if (!runner) {
  const { afterEach, beforeEach } = await import("node:test");
  session.wrapFetch();
  beforeEach(async (t) => {
    const names = t.fullName ? t.fullName.split(" > ") : [t.name];
    await session.begin(testFile, names);
  });
  afterEach(async () => {
    await session.end();
  });
}
