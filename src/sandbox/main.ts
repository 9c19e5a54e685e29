// `edgewatch sandbox`: serves the simulated API alone, its clock running fast.
import { startSandbox } from './server.ts';
import type { Sandbox } from './types.ts';

export const CLI_SPEED = 6;

export async function runSandboxCommand(options: { port?: number; apiKey?: string; speed?: number }): Promise<Sandbox> {
  const sandbox = await startSandbox({ port: options.port ?? 0, apiKey: options.apiKey, speed: options.speed ?? CLI_SPEED });
  process.stdout.write(`edgewatch sandbox listening on ${sandbox.url}\n`);
  return sandbox;
}
