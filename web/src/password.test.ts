import { describe, expect, it } from 'vitest';
import { passwordOk, passwordRules } from './password';

// The same cases as internal/tooling/devserver TestCheckPasswordPolicy.
describe('password rules', () => {
  const cases: [string, boolean, string[]][] = [
    ['Password-one1', true, []],
    ['Correct horse 1', true, []],
    ['Kuchen für Zoë 1', true, []],
    ['password', false, ['length', 'upper', 'digit', 'symbol']],
    ['PASSWORD-ONE1', false, ['lower']],
    ['Password-one', false, ['digit']],
    ['Passwordone1', false, ['symbol']],
    [' Password-one1', false, ['edges']],
    ['Password one1 ', false, ['edges']],
    ['Aa1!'.repeat(65), false, ['length']],
  ];
  for (const [pw, ok, missing] of cases) {
    it(`${JSON.stringify(pw.slice(0, 20))}: ${ok ? 'accepted' : `misses ${missing.join(', ')}`}`, () => {
      expect(passwordOk(pw)).toBe(ok);
      expect(passwordRules(pw).filter((r) => !r.met).map((r) => r.id)).toEqual(missing);
    });
  }
  it('an empty password meets only the edge rule', () => {
    expect(passwordRules('').filter((r) => r.met).map((r) => r.id)).toEqual(['edges']);
  });
});
