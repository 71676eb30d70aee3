// vitest's setupFiles: each test starts its own cassette, named after its file and its name,
// and its stop fails the test that missed, with the fields that differ.
import { afterEach, beforeEach } from "vitest";
import session from "../lib/session.cjs";

session.wrapFetch();

function names(task) {
  const chain = [task.name];
  for (let suite = task.suite; suite && suite !== task.file && !suite.filepath; suite = suite.suite) chain.unshift(suite.name);
  return chain;
}

beforeEach(async (context) => {
  await session.begin(context.task.file.filepath, names(context.task));
});

afterEach(async (context) => {
  await session.end({ passed: context.task.result?.state !== "fail" });
});
