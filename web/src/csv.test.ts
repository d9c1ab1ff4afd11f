import { describe, expect, it } from 'vitest';
import type { Send } from './campaigns';
import { type Cell, csvCell, csvFileName, encodeCsv, sendsCsv } from './csv';

describe('csvCell', () => {
  const cases: [string, Cell, string][] = [
    ['plain text', 'hello', 'hello'],
    ['empty', '', ''],
    ['null', null, ''],
    ['undefined', undefined, ''],
    ['a comma', 'a,b', '"a,b"'],
    ['quotes doubled', 'say "hi"', '"say ""hi"""'],
    ['a lone quote', '"', '""""'],
    ['LF', 'line1\nline2', '"line1\nline2"'],
    ['CRLF', 'line1\r\nline2', '"line1\r\nline2"'],
    ['spaces kept, unquoted', '  a b  ', '  a b  '],
    ['unicode', 'Grüße, 日本', '"Grüße, 日本"'],
    ['formula =', '=1+2', "'=1+2"],
    ['formula +', '+1', "'+1"],
    ['formula -', '-1', "'-1"],
    ['formula @', '@SUM(A1)', "'@SUM(A1)"],
    ['formula after a tab', '\t=1', "'\t=1"],
    ['formula after a CR, quoted', '\r=1', "\"'\r=1\""],
    ['formula with a comma and quotes', '=HYPERLINK("http://x","y")', '"\'=HYPERLINK(""http://x"",""y"")"'],
    ['= inside is text', 'a=b', 'a=b'],
    ['an address', 'a+b@example.com', 'a+b@example.com'],
    ['a number', 42, '42'],
    ['a negative number is no formula', -5, '-5'],
    ['a fraction', 1.5, '1.5'],
    ['NaN', Number.NaN, ''],
    ['Infinity', Number.POSITIVE_INFINITY, ''],
  ];
  for (const [name, v, want] of cases) it(name, () => expect(csvCell(v)).toBe(want));
});

describe('encodeCsv', () => {
  const cases: [string, Cell[][], string][] = [
    ['no rows', [], ''],
    ['one row', [['a', 1]], 'a,1\r\n'],
    ['rows end with CRLF, empty cells kept', [['a', null, 'c'], ['', '', '']], 'a,,c\r\n,,\r\n'],
    ['a newline inside a cell stays in its record', [['x\ny', 'z'], ['w']], '"x\ny",z\r\nw\r\n'],
  ];
  for (const [name, rows, want] of cases) it(name, () => expect(encodeCsv(rows)).toBe(want));
});

describe('sendsCsv', () => {
  it('writes a header and one row per send, late seconds for sent ones only', () => {
    const sends: Send[] = [
      { id: 'c1-1', index: 0, email: 'a@example.com', subject: 'Hi, you', state: 'Finished', sendAt: '2030-01-01T12:00:00Z', local: '2030-01-01T13:00:00', sentAt: '2030-01-01T12:01:05Z', attempt: 1 },
      { id: 'c1-2', index: 1, email: '=cmd@example.com', subject: 'Hi', state: 'Failed', sendAt: '2030-01-01T12:01:00Z', local: '2030-01-01T13:01:00', error: 'bounce: "no such user"' },
      { id: 'c1-3', index: 2, email: 'b@example.com', subject: 'Hi', state: 'Suppressed', sendAt: '2030-01-01T12:02:00Z', local: '2030-01-01T13:02:00', reason: 'suppressed: unsubscribed' },
    ];
    expect(sendsCsv(sends, 'Europe/Berlin').split('\r\n')).toEqual([
      'index,email,subject,state,planned_utc,planned_local (Europe/Berlin),sent_utc,late_seconds,attempt,error,reason',
      '0,a@example.com,"Hi, you",Finished,2030-01-01T12:00:00Z,2030-01-01T13:00:00,2030-01-01T12:01:05Z,65,1,,',
      '1,\'=cmd@example.com,Hi,Failed,2030-01-01T12:01:00Z,2030-01-01T13:01:00,,,,"bounce: ""no such user""",',
      '2,b@example.com,Hi,Suppressed,2030-01-01T12:02:00Z,2030-01-01T13:02:00,,,,,suppressed: unsubscribed',
      '',
    ]);
  });

  const names: [string, string][] = [
    ['c1', 'campaign-c1-sends.csv'],
    ['a/b..c', 'campaign-a_b__c-sends.csv'],
  ];
  for (const [id, want] of names) it(`file name for ${id}`, () => expect(csvFileName(id)).toBe(want));
});
