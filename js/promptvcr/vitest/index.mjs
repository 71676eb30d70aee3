// The vitest plugin: `plugins: [promptvcr()]` adds promptvcr's globalSetup (the run's server)
// and setupFiles (a cassette per test) to the test config.
import { fileURLToPath } from "node:url";

const here = (name) => fileURLToPath(new URL(name, import.meta.url));

export function promptvcr() {
  return {
    name: "promptvcr",
    config() {
      return { test: { globalSetup: [here("./global.mjs")], setupFiles: [here("./setup.mjs")] } };
    },
  };
}

export default promptvcr;
