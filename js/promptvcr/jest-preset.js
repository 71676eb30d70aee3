"use strict";
// `preset: "promptvcr"` in a jest config: the run's server, and a cassette per test.
module.exports = {
  globalSetup: require.resolve("./jest/global-setup.cjs"),
  globalTeardown: require.resolve("./jest/global-teardown.cjs"),
  setupFilesAfterEnv: [require.resolve("./jest/setup.cjs")],
};
