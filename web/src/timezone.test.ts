import { describe, expect, it } from 'vitest';
import { browserTimeZone, zoneToSave } from './timezone';

describe('browserTimeZone', () => {
  it.each([
    ['Europe/Berlin', 'Europe/Berlin'],
    ['America/Argentina/Buenos_Aires', 'America/Argentina/Buenos_Aires'],
    ['Etc/GMT+5', 'Etc/GMT+5'],
    ['UTC', 'UTC'],
    ['', undefined],
    ['Local', undefined],
    ['Europe/Berlin ', undefined],
    ['../etc/passwd', undefined],
    ['x'.repeat(65), undefined],
    [undefined, undefined],
  ])('%j gives %j', (given, want) => {
    expect(browserTimeZone(() => given)).toBe(want);
  });

  it('is undefined when Intl throws', () => {
    expect(
      browserTimeZone(() => {
        throw new RangeError('no Intl');
      }),
    ).toBeUndefined();
  });

  it("reads this runtime's zone by default", () => {
    const zone = browserTimeZone();
    expect(zone).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
  });
});

describe('zoneToSave', () => {
  it.each([
    [undefined, 'Europe/Berlin', 'Europe/Berlin'],
    ['Europe/Berlin', 'Europe/Berlin', undefined],
    ['Europe/Berlin', 'Asia/Tokyo', 'Asia/Tokyo'],
    ['Europe/Berlin', undefined, undefined],
    [undefined, undefined, undefined],
  ])('saved %j, browser %j: %j', (saved, browser, want) => {
    expect(zoneToSave(saved, browser)).toBe(want);
  });
});
