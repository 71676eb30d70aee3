import { defineConfig } from "vitest/config";
import promptvcr from "promptvcr/vitest";

export default defineConfig({ plugins: [promptvcr()], test: { include: ["suite-vitest/**/*.test.mjs"] } });
