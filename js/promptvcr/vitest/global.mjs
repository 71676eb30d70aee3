// vitest's globalSetup: the run's server lives in vitest's main process, and the workers it
// starts inherit $PROMPTVCR_URL and the base-URL variables. Its teardown prints the run's
// report on stderr, whatever --reporter the run was given.
import owner from "../lib/owner.cjs";

let server = null;

export async function setup() {
  server = await owner.own();
}

export async function teardown() {
  await owner.finish(server);
  server = null;
}
