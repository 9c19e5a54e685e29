// POST /responses of api/agent-conversations.md (at the service root, beside /predictions): a
// research agent's answer, text with numbered markers ([1], [2]) and the citation list, whole or
// as the documented stream of events. An event the question names (by ticker or by name) is
// explained from its latest snapshot.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { iso, latest, takeaway, type SimEvent } from './events.ts';
import { jsonBody, refuse, type Reply, type ServerSentEvent } from './params.ts';
import type { SimWorld } from './world.ts';

export const AGENTS = ['svc-agent', 'svc-sec-agent'] as const;

const ResponsesBody = z.object({
  model: z.string().min(1),
  input: z.string().min(1),
  instructions: z.string().optional(),
  stream: z.boolean().optional(),
});

export interface Citation {
  order: number;
  name: string;
  url: string;
}

interface Answer {
  text: string;
  citations: Citation[];
}

/** The event a question names: the longest ticker it contains, else an event name it contains. */
function namedEvent(world: SimWorld, question: string): SimEvent | undefined {
  const text = question.toLowerCase();
  const events = world.allEvents();
  const byTicker = events.filter((ev) => text.includes(ev.ticker.toLowerCase())).sort((a, b) => b.ticker.length - a.ticker.length)[0];
  return byTicker ?? events.find((ev) => text.includes(ev.name.toLowerCase()));
}

function answer(world: SimWorld, model: string, question: string): Answer {
  const ev = namedEvent(world, question);
  if (!ev) {
    return {
      text: 'No analyzed event matches the question [1]. Model edges are refreshed with every analysis run and read as a calibrated view on the price [2].',
      citations: [
        { order: 1, name: 'Coverage index, current run, p. 1', url: 'https://research.example.com/coverage' },
        { order: 2, name: 'Methodology: model probability and edge, p. 3', url: 'https://research.example.com/methodology' },
      ],
    };
  }
  const s = latest(ev);
  const day = iso(s.captured_at).slice(0, 10);
  const edge = s.edge_pp === null ? 'no model edge' : `an edge of ${s.edge_pp > 0 ? '+' : ''}${s.edge_pp} pp`;
  const estimate = s.model_probability === null ? 'no model estimate' : `a model estimate of ${s.model_probability}%`;
  const first: Citation = model === 'svc-sec-agent'
    ? { order: 1, name: `Form 10-Q filing on ${ev.series.theme}, ${day}, p. 14`, url: `https://filings.example.com/${ev.series.series.toLowerCase()}/10-q.pdf` }
    // A signed link, as the service gives: it carries its expiry.
    : { order: 1, name: `${ev.name} research report, ${day}, p. 2`, url: `https://research.example.com/reports/${ev.venue}/${encodeURIComponent(ev.ticker)}?expires=${Math.floor(world.now / 1000) + 3600}` };
  return {
    text: `${ev.name}: the market prices ${ev.series.outcomes[0]} at ${s.market_probability}% against ${estimate}, ${edge} at confidence ${s.confidence_score}/10 [1]. ${takeaway(ev, s)} [2]`,
    citations: [first, { order: 2, name: `${ev.name}: latest coverage, ${day}, p. 1`, url: `https://news.example.com/${ev.slug}` }],
  };
}

/** The text in increments of a few words, as a model streams it. */
function increments(text: string): string[] {
  const words = text.match(/\S+\s*/g) ?? [text];
  const parts: string[] = [];
  for (let i = 0; i < words.length; i += 3) parts.push(words.slice(i, i + 3).join(''));
  return parts;
}

export function agentResponse(world: SimWorld, body: string): Reply {
  const request = jsonBody('detail', body, ResponsesBody);
  if (!(AGENTS as readonly string[]).includes(request.model)) refuse('detail', 404, `Unknown model ${request.model}: use one of ${AGENTS.join(', ')}`);
  const { text, citations } = answer(world, request.model, request.input);
  const id = `resp_${randomUUID().replaceAll('-', '')}`;
  const itemId = `msg_${randomUUID().replaceAll('-', '')}`;
  const part = { type: 'output_text', text, annotations: citations };
  const message = { type: 'message', id: itemId, status: 'completed', role: 'assistant', content: [part] };
  const response = (status: string, output: unknown[]) => ({
    id,
    object: 'response',
    created_at: Math.floor(world.now / 1000),
    model: request.model,
    status,
    instructions: request.instructions ?? null,
    output,
  });
  if (!request.stream) return { status: 200, body: response('completed', [message]) };

  const at = { item_id: itemId, output_index: 0, content_index: 0 };
  const events: Array<Record<string, unknown>> = [
    { type: 'response.created', response: response('in_progress', []) },
    { type: 'response.in_progress', response: response('in_progress', []) },
    { type: 'response.output_item.added', output_index: 0, item: { ...message, status: 'in_progress', content: [] } },
    { type: 'response.content_part.added', ...at, part: { ...part, text: '', annotations: [] } },
    ...increments(text).map((delta) => ({ type: 'response.output_text.delta', ...at, delta })),
    { type: 'response.output_text.done', ...at, text },
    { type: 'response.content_part.done', ...at, part },
    { type: 'response.output_item.done', output_index: 0, item: message },
    { type: 'response.completed', response: { ...response('completed', [message]), citations } },
  ];
  const stream: ServerSentEvent[] = events.map((event, sequence_number) => ({ event: event.type as string, data: { ...event, sequence_number } }));
  return { status: 200, body: null, events: stream };
}
