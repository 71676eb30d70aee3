"use strict";
// jest's globalTeardown: stop the run's server and print its report on stderr, whatever
// reporters the run was given.
const owner = require("../lib/owner.cjs");

module.exports = async function promptvcrGlobalTeardown() {
  await owner.finish(globalThis.__promptvcrServer);
  globalThis.__promptvcrServer = null;
};
