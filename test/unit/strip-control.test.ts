import { describe, expect, it } from 'vitest';
import { stripControl } from '../../src/render/index.ts';

describe('stripControl', () => {
  it.each([
    ['plain text, unicode and punctuation', 'Fed decision — December: +12.3 pp ✓', 'Fed decision — December: +12.3 pp ✓'],
    ['SGR colours', 'Fed \x1b[1;31mRED\x1b[0m rate', 'Fed RED rate'],
    ['cursor movement and screen clearing', 'a\x1b[2J\x1b[H\x1b[10;5Hb\x1b[?25l', 'ab'],
    ['8-bit CSI', 'a\x9b2Jb\x9b31m', 'ab'],
    ['OSC window title ended by BEL', 'x\x1b]0;pwned\x07y', 'xy'],
    ['OSC 8 hyperlink ended by ST', '\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\', 'click'],
    ['OSC 52 clipboard write', 'a\x1b]52;c;ZWNobyBoaQ==\x07b', 'ab'],
    ['8-bit OSC ended by 8-bit ST', 'a\x9d0;title\x9cb', 'ab'],
    ['DCS and APC strings', 'a\x1bPq#0\x1b\\b\x1b_payload\x1b\\c', 'abc'],
    ['two-character escapes (RIS, keypad, charset)', 'a\x1bcb\x1b=c\x1b(Bd', 'abcd'],
    ['an unterminated OSC loses its opener only', 'a\x1b]0;title', 'a0;title'],
    ['a lone ESC at the end', 'abc\x1b', 'abc'],
    ['tabs and line breaks become spaces', 'one\ttwo\nthree\r\nfour\vfive\fsix', 'one two three four five six'],
    ['other C0, DEL and C1 removed', 'a\x00b\x07c\x08d\x7fe\x85f\x9fg', 'abcdefg'],
  ])('%s', (_, input, expected) => {
    expect(stripControl(input)).toBe(expected);
  });

  it('leaves no control character in any input', () => {
    const all = Array.from({ length: 0xa0 }, (_, i) => String.fromCharCode(i)).join('');
    expect(stripControl(`${all}${all}`)).toMatch(/^[^\x00-\x1f\x7f-\x9f]*$/);
  });
});
