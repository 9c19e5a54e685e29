// Terminal-safe text, in a module of its own that imports nothing: the `alerts` and `runs` tables
// use it without loading the template engine and the HTML sanitizer (escape.ts).

// Escape sequences: CSI (`ESC [` or C1 0x9b, parameters, one final byte); OSC, DCS, SOS, PM and APC
// strings up to BEL or ST; and the two-byte escapes (`ESC c`, `ESC 7`). An unterminated string loses
// only its introducer, so its text stays visible.
const ESCAPE_SEQUENCE =
  /(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?|(?:\x1b[\]PX^_]|[\x90\x98\x9d-\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)|\x1b[\x20-\x2f]*[\x30-\x7e]?/g;
const LINE_BREAK_OR_TAB = /\r\n|[\t\n\v\f\r\u2028\u2029]/g;
const CONTROL = /[\x00-\x1f\x7f-\x9f]/g;

/**
 * Text from the API made safe for a terminal line: escape sequences (colours, cursor moves, window
 * titles, hyperlinks) and C0/C1 control characters removed; line breaks and tabs become spaces.
 */
export function stripControl(text: string): string {
  return text.replace(ESCAPE_SEQUENCE, '').replace(LINE_BREAK_OR_TAB, ' ').replace(CONTROL, '');
}
