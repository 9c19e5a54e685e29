import { describe, expect, it } from 'vitest';
import { redact } from '../../src/core/redact.ts';

const KEY = 'sk/live+SECRET=key&42';
const b64 = (text: string) => Buffer.from(text).toString('base64');
const b64url = (text: string) => Buffer.from(text).toString('base64url');

describe('redact', () => {
  it.each([
    ['as is', `Bearer ${KEY}`],
    ['URL-encoded', `token=${encodeURIComponent(KEY)}&x=1`],
    ['base64 at offset 0', b64(KEY)],
    ['base64 at offset 1', b64(`x${KEY}`)],
    ['base64 at offset 2', b64(`xy${KEY}.`)],
    ['base64 of the header', b64(`Bearer ${KEY}`)],
    ['base64url', b64url(`ab${KEY}`)],
  ])('removes the key %s', (_form, text) => {
    const out = redact(`before ${text} after`, [KEY]);
    expect(out).toContain('[redacted]');
    expect(out.startsWith('before ')).toBe(true);
    // No 6-character run of any encoding of the key is left.
    for (const encoded of [KEY, encodeURIComponent(KEY), b64(KEY).slice(0, -4), b64(`x${KEY}`).slice(4, -4), b64(`xy${KEY}`).slice(4, -4)]) {
      for (let i = 0; i + 6 <= encoded.length; i++) expect(out).not.toContain(encoded.slice(i, i + 6));
    }
  });

  it('removes every secret given, skips undefined and too short ones, and leaves other text alone', () => {
    expect(redact('token xoxb-1-abc and pass hunter2', ['xoxb-1-abc', undefined, 'hunter2'])).toBe('token [redacted] and pass [redacted]');
    expect(redact('a ab abc', ['ab'])).toBe('a ab abc');
    expect(redact('nothing secret here', [KEY])).toBe('nothing secret here');
  });
});
