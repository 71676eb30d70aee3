"use strict";
// jest's globalSetup: the run's server lives in jest's main process; the workers it starts
// (and the in-band test environments) inherit $PROMPTVCR_URL and the base-URL variables.
const owner = require("../lib/owner.cjs");

module.exports = async function promptvcrGlobalSetup() {
  globalThis.__promptvcrServer = await owner.own();
};
