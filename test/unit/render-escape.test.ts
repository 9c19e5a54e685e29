import { describe, expect, it } from 'vitest';
import { stripControl } from '../../src/render/index.ts';

describe('stripControl: API text on one terminal line', () => {
  it.each([
    ['plain text is unchanged', 'Fed decision — December 25 ✓', 'Fed decision — December 25 ✓'],
    ['colours (CSI SGR)', '\x1b[31mred\x1b[0m text', 'red text'],
    ['cursor moves and erasing', 'a\x1b[2J\x1b[1;1Hb\x1b[K', 'ab'],
    ['a private-mode CSI', '\x1b[?25lhidden cursor', 'hidden cursor'],
    ['the C1 CSI byte', '\x9b31mred', 'red'],
    ['a window title (OSC ended by BEL)', '\x1b]0;pwned\x07title', 'title'],
    ['a hyperlink (OSC 8 ended by ST)', '\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\', 'click'],
    ['a DCS string', '\x1bPq#0;2;0;0;0\x1b\\after', 'after'],
    ['an unterminated OSC keeps its text visible', '\x1b]0;still shown', '0;still shown'],
    ['two-byte escapes (reset, save cursor)', '\x1bcreset\x1b7saved', 'resetsaved'],
    ['line breaks and tabs become spaces', 'a\nb\r\nc\td\re', 'a b c d e'],
    ['other C0 controls (NUL, BEL, backspace) go', 'a\x00b\x07c\x08d', 'abcd'],
    ['DEL and C1 controls go', 'a\x7fb\x85c\x9dd', 'abcd'],
    ['a lone ESC at the end goes', 'end\x1b', 'end'],
  ])('%s', (_what, input, expected) => {
    expect(stripControl(input)).toBe(expected);
  });
});
