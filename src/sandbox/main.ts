// `edgewatch sandbox`: serves the simulated API alone, its clock running fast.
import { startSandbox } from './server.ts';
import type { Sandbox } from './types.ts';

/** As the built-in sandbox of `npm start`: a few alerts a minute with the example rules. */
export const CLI_SPEED = 2;

export async function runSandboxCommand(options: { port?: number; apiKey?: string; speed?: number }): Promise<Sandbox> {
  const sandbox = await startSandbox({ port: options.port ?? 0, apiKey: options.apiKey, speed: options.speed ?? CLI_SPEED });
  process.stdout.write(`edgewatch sandbox listening on ${sandbox.url}\n`);
  return sandbox;
}
