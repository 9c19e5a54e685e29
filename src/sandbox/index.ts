export { startSandbox, DEFAULT_START } from './server.ts';
export { runSandboxCommand, CLI_SPEED } from './main.ts';
export type { Fault, Sandbox, SandboxOptions, SandboxRequest, SandboxWorld } from './types.ts';
