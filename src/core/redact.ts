// The one redaction of secrets (API key, tokens, SMTP credentials) from text that may be logged,
// stored or sent. A hostile server can echo a secret back in any form, so its URL-encoded and
// base64 copies are removed too.

const MIN_SECRET_LENGTH = 3;

/**
 * The base64 characters that depend only on the secret's bytes, for each of the three byte
 * offsets the secret can have inside a longer encoded text (the groups it shares with its
 * neighbours differ with them, so they are left out).
 */
function base64Cores(secret: string): string[] {
  const cores: string[] = [];
  const bytes = Buffer.from(secret);
  for (const offset of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const start = offset === 0 ? 0 : 4;
    const end = (offset + bytes.length) % 3 === 0 ? encoded.length : encoded.length - 4;
    const core = encoded.slice(start, end);
    if (core.length >= 4) cores.push(core, core.replaceAll('+', '-').replaceAll('/', '_'));
  }
  return cores;
}

/** Every form of a secret that is removed from text: as is, URL-encoded, base64 and base64url. */
function secretForms(secret: string): string[] {
  const forms = new Set([secret, encodeURIComponent(secret), ...base64Cores(secret)]);
  // Longest first, so a form that contains another is removed whole.
  return [...forms].sort((a, b) => b.length - a.length);
}

/** Replaces every form of every secret in a text with `[redacted]`. */
export function redact(text: string, secrets: ReadonlyArray<string | undefined>): string {
  let out = text;
  for (const secret of secrets) {
    if (secret === undefined || secret.length < MIN_SECRET_LENGTH) continue;
    for (const form of secretForms(secret)) out = out.split(form).join('[redacted]');
  }
  return out;
}
