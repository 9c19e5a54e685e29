// The bench's rule set: 100 rules mixing every trigger type over every source, all notifying one
// webhook channel aimed at the bench's local receiver.

type Trigger = Record<string, unknown>;
interface RuleSpec {
  trigger: Trigger;
  filter?: Record<string, unknown>;
}

const EVENT_RULES = (i: number): RuleSpec[] => [
  { trigger: { type: 'crosses', field: 'edge_pp', above: 6 + (i % 10), abs: true, rearm: 2 } },
  { trigger: { type: 'crosses', field: 'market_probability', below: 5 + (i % 20) } },
  { trigger: { type: 'moves', field: 'edge_pp', by: 3 + (i % 6), direction: ['any', 'up', 'down'][i % 3] } },
  { trigger: { type: 'moves', field: 'market_probability', by: 2 + (i % 5) }, filter: { series_category: 'politics' } },
  { trigger: { type: 'flips', field: 'eligible' } },
  { trigger: { type: 'changes', field: 'eligibility_status' } },
  { trigger: { type: 'drops', field: 'confidence_score', by: 1 + (i % 3) } },
  { trigger: { type: 'rises', field: 'confidence_score', by: 1 + (i % 3), to_at_least: 5 }, filter: { confidence_score: { gte: 3 } } },
  { trigger: { type: 'appears', field: 'eligibility_reason' } },
  { trigger: { type: 'new' } },
  { trigger: { type: 'crosses', field: 'abs_edge_pp', above: 12 + (i % 8), rearm: 1 }, filter: { confidence_score: { gte: 5 } } },
];

const KPI_RULES = (i: number): RuleSpec[] => [
  { trigger: { type: 'crosses', field: 'edge_pp', above: 5 + (i % 10), abs: true, rearm: 1 } },
  { trigger: { type: 'crosses', field: 'market_probability', above: 80 + (i % 15) } },
  { trigger: { type: 'moves', field: 'market_probability', by: 2 + (i % 6), direction: ['any', 'up', 'down'][i % 3] } },
  { trigger: { type: 'moves', field: 'model_probability', by: 3 + (i % 4) }, filter: { liquidity_tier: ['high', 'medium'] } },
  { trigger: { type: 'flips', field: 'near_settled', to: true } },
  { trigger: { type: 'changes', field: 'signal' } },
  { trigger: { type: 'drops', field: 'liquidity_tier' } },
  { trigger: { type: 'rises', field: 'liquidity_tier' } },
  { trigger: { type: 'appears', field: 'actual' } },
  { trigger: { type: 'new' } },
  { trigger: { type: 'changes', field: 'status', to: ['settled'] } },
];

const REPORT_RULES: RuleSpec[] = [
  { trigger: { type: 'drops', field: 'trust_label', to_at_most: 'Caution' } },
  { trigger: { type: 'rises', field: 'trust_label' }, filter: { series_category: 'politics' } },
  { trigger: { type: 'moves', field: 'trust_score', by: 5 } },
  { trigger: { type: 'crosses', field: 'trust_score', below: 50 } },
  { trigger: { type: 'changes', field: 'run_id' } },
  { trigger: { type: 'new' } },
  { trigger: { type: 'appears', field: 'title' } },
  { trigger: { type: 'flips', field: 'eligible' } },
];

const RUN_RULES: RuleSpec[] = [
  { trigger: { type: 'changes', field: 'status', to: ['completed', 'failed'] } },
  { trigger: { type: 'changes', field: 'status' } },
  { trigger: { type: 'appears', field: 'title' } },
  { trigger: { type: 'new' } },
];

function yamlValue(value: unknown): string {
  return JSON.stringify(value); // JSON is YAML (flow style)
}

/** 44 events, 44 kpis, 8 reports and 4 runs rules; every trigger type appears on events and kpis. */
export function benchRulesYaml(webhookUrl: string): { yaml: string; count: number } {
  const specs: Array<{ name: string; source: string } & RuleSpec> = [];
  for (let round = 0; specs.filter((s) => s.source === 'events').length < 44; round++) {
    for (const spec of EVENT_RULES(round)) if (specs.filter((s) => s.source === 'events').length < 44) specs.push({ name: '', source: 'events', ...spec });
  }
  for (let round = 0; specs.filter((s) => s.source === 'kpis').length < 44; round++) {
    for (const spec of KPI_RULES(round)) if (specs.filter((s) => s.source === 'kpis').length < 44) specs.push({ name: '', source: 'kpis', ...spec });
  }
  for (const spec of REPORT_RULES) specs.push({ name: '', source: 'reports', ...spec });
  for (const spec of RUN_RULES) specs.push({ name: '', source: 'runs', ...spec });

  const lines = ['channels:', '  hook:', '    type: webhook', `    url: ${yamlValue(webhookUrl)}`, '', 'rules:'];
  specs.forEach((spec, i) => {
    lines.push(`  - name: bench-${spec.source}-${String(spec.trigger.type)}-${i}`);
    lines.push(`    source: ${spec.source}`);
    lines.push(`    trigger: ${yamlValue(spec.trigger)}`);
    if (spec.filter) lines.push(`    filter: ${yamlValue(spec.filter)}`);
    lines.push('    notify: [hook]');
  });
  return { yaml: `${lines.join('\n')}\n`, count: specs.length };
}
