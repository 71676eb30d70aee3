"use strict";
// Where a test's cassette lives: `<test file's folder>/cassettes/<file name>/<test name>.yaml`,
// the layout promptvcr's pytest plugin uses (promptvcr/pytest_plugin/naming.py), so a reviewer
// finds a recording beside the test that made it, and the names stay safe on every file system.

const crypto = require("node:crypto");
const path = require("node:path");

const MAX_NAME_LENGTH = 100;
const UNSAFE = /[^A-Za-z0-9_.,+=@[\]()-]+/g;
const DIGEST_LENGTH = 10;

// `describe > test` turned into a file name: each run of unsafe characters becomes `-`; a name
// over the cap keeps a digest of the whole, so two long names sharing a prefix stay two files.
function cassetteFileName(names) {
  const full = names.join("."); // as pytest's: an empty name too (a digest of the whole depends on it)
  let name = full.replace(UNSAFE, "-").replace(/^[.-]+|[.-]+$/g, "") || "test";
  if (name.length > MAX_NAME_LENGTH) {
    const digest = crypto.createHash("sha256").update(full, "utf8").digest("hex").slice(0, DIGEST_LENGTH);
    name = `${name.slice(0, MAX_NAME_LENGTH - DIGEST_LENGTH - 1)}-${digest}`;
  }
  return name;
}

// The folder of a test file's cassettes: `$PROMPTVCR_CASSETTE_DIR/<file>` when set (relative to
// the working directory), else `cassettes/<file>` beside the test file. `<file>` is the file's
// name without its last extension (`chat.test.ts` -> `chat.test`), as pytest's is its module.
function cassetteFolder(testFile, env = process.env) {
  const file = path.resolve(testFile);
  const stem = path.basename(file, path.extname(file));
  const base = env.PROMPTVCR_CASSETTE_DIR ? path.resolve(env.PROMPTVCR_CASSETTE_DIR) : path.join(path.dirname(file), "cassettes");
  return path.join(base, stem);
}

function cassettePath(testFile, names, env = process.env) {
  return path.join(cassetteFolder(testFile, env), `${cassetteFileName(names)}.yaml`);
}

module.exports = { MAX_NAME_LENGTH, cassetteFileName, cassetteFolder, cassettePath };
