// A child process that runs one poll of every source, for crash tests: the parent kills it at
// random points. Arguments come from the environment: CHILD_API_URL, CHILD_DB, CHILD_RULES, and
// CHILD_NOW (the poll's clock, ISO; a fixed default).
import { CREDENTIAL_VARIABLES } from '../../src/config.ts';
import { createApiClient } from '../../src/api/index.ts';
import { loadRules } from '../../src/rules/index.ts';
import { pollSources } from '../../src/service/cycle.ts';
import { openStore } from '../../src/store/index.ts';

const store = await openStore(process.env.CHILD_DB!);
const api = createApiClient({ baseUrl: process.env.CHILD_API_URL!, apiKey: 'child', retries: 0 });
const ruleSet = await loadRules(process.env.CHILD_RULES!, { env: {}, credentials: CREDENTIAL_VARIABLES, templates: new Set(), transports: { slack: false, email: false } });
process.stdout.write('ready\n');
const report = await pollSources({ store, api, rules: ruleSet.rules, now: () => new Date(process.env.CHILD_NOW ?? '2026-11-21T00:00:00Z'), reportsBudget: 50 });
await api.close();
await store.close();
process.stdout.write(`done ${report.alerts.length} ${report.failures.length}\n`);
