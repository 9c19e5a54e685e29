// Text from the API is data: these functions make it inert for each medium.
import sanitizeHtml from 'sanitize-html';
import { stripControl } from './control.ts';

// Slack has no escape for its formatting characters. A zero-width space after `*`, `_` or `~` keeps
// it from opening a span (followed by a space) or closing one (not followed by a boundary), whichever
// way Slack counts that space; a backtick, which needs no boundary, becomes a look-alike (U+02CB).
const SLACK_EMPHASIS = /[*_~]/g;

/**
 * API text inert in Slack mrkdwn: `&`, `<`, `>` as entities (`<!channel>` pings nobody), formatting
 * characters neutralized, and on one line, so it cannot end a quote or start a block of its own.
 */
export function escapeSlack(text: string): string {
  return stripControl(text)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(SLACK_EMPHASIS, '$&\u200b')
    .replace(/`/g, '\u02cb');
}

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const RICH_TEXT: sanitizeHtml.IOptions = {
  allowedTags: ['p', 'br', 'b', 'strong', 'i', 'em', 'u', 's', 'code', 'ul', 'ol', 'li', 'blockquote', 'a', 'span', 'sup', 'sub'],
  allowedAttributes: { a: ['href', 'title'] },
  allowedSchemes: ['http', 'https'],
  allowedSchemesAppliedToAttributes: ['href'],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  nonTextTags: ['script', 'style', 'textarea', 'option', 'noscript', 'iframe', 'object', 'embed', 'template'],
  transformTags: {
    a: sanitizeHtml.simpleTransform('a', { rel: 'noopener noreferrer nofollow', target: '_blank' }),
  },
};
// The transform adds rel/target after filtering, so allow exactly those too.
RICH_TEXT.allowedAttributes = { a: ['href', 'title', 'rel', 'target'] };

/** Allow-list sanitizer for HTML-bearing API fields going into an email. */
export function sanitizeRichText(html: string): string {
  return sanitizeHtml(html, RICH_TEXT);
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'", nbsp: ' ' };

/** HTML to plain text (tags dropped, script/style content removed, entities decoded). */
export function htmlToText(html: string): string {
  const stripped = sanitizeHtml(html.replace(/<\/(p|li|div|h\d)>|<br\s*\/?>/gi, '$& '), {
    allowedTags: [],
    allowedAttributes: {},
    nonTextTags: RICH_TEXT.nonTextTags ?? [],
  });
  return stripped
    .replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_, name: string) => ENTITIES[name] ?? '')
    .replace(/\s+/g, ' ')
    .trim();
}
