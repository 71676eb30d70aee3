/** The vitest plugin: `plugins: [promptvcr()]` in vitest.config. */
export declare function promptvcr(): { name: string; config(): { test: { globalSetup: string[]; setupFiles: string[] } } };
export default promptvcr;
